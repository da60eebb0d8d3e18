//! The values a template sees, with Go's data model as Helm hands it to `text/template`:
//! `map[string]interface{}` (shared and mutable: Sprig's `set`/`unset` change a map in place, and
//! the chart relies on it, e.g. `unset .Values.podSecurityContext "appArmorProfile"` in one
//! template is seen by every later one), `[]interface{}`, `string`, `bool`, `int` (template
//! literals, `len`, Sprig's casts), `float64` (every number of a values file, since Helm reads
//! YAML through JSON) and nil. A few Helm objects with methods (`.Files`, `.Capabilities.APIVersions`,
//! Sprig's `semver` result) are `Obj`.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::Arc;

use serde_json::Value as Json;

use cilium_cmp_yaml::gofmt::go_g_float;

use crate::chart::shared::SharedBytes;

pub type Map = BTreeMap<String, Value>;

#[derive(Clone, Debug)]
pub enum Value {
    Nil,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(Arc<str>),
    List(Rc<Vec<Value>>),
    Map(Rc<RefCell<Map>>),
    Obj(Rc<Obj>),
}

/// Helm's objects with methods: what a field or method name on them yields.
#[derive(Debug)]
pub enum Obj {
    /// `.Files` (Helm's `files` type, `pkg/engine/files.go`): path → content.
    Files(Arc<BTreeMap<String, SharedBytes>>),
    /// `.Capabilities.APIVersions` (`VersionSet`, whose method is `Has`).
    ApiVersions(Vec<String>),
    /// A `*semver.Version` of Masterminds semver v3, as Sprig's `semver` returns it.
    Semver(super::semver::Version),
    /// `.Capabilities.KubeVersion`, Helm 4's `common.KubeVersion` struct
    /// (`pkg/chart/common/capabilities.go`): the fields `Version`, `Major`, `Minor`, the
    /// unexported normalised version its pointer method `String` returns, and the method
    /// `GitVersion` (the `Version`). An action printing the field prints `String()` (exec.go
    /// `printValue` takes the address of an addressable value whose pointer is a Stringer);
    /// `print`, `printf` and Sprig's functions get the struct value and print its fields.
    KubeVersion {
        version: String,
        normalized: String,
        major: String,
        minor: String,
    },
    /// A `time.Time` from Sprig's `now`, as nanoseconds after an instant that is never
    /// revealed: the chart only compares `now` with `now | dateModify D` (`hasDuration`,
    /// whether D is zero) and validates D (`validateDuration`), which is deterministic. Printing
    /// or encoding one marks the clock as leaked (`clock_leaked`), and the render is refused.
    Time(i128),
}

thread_local! {
    static CLOCK_LEAKED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether a `now` instant was printed or encoded since the last call (and clears it).
pub fn clock_leaked() -> bool {
    CLOCK_LEAKED.with(|c| c.replace(false))
}

fn mark_clock_leaked() {
    CLOCK_LEAKED.with(|c| c.set(true));
}

impl Value {
    pub fn str(s: &str) -> Value {
        Value::Str(Arc::from(s))
    }

    pub fn string(s: String) -> Value {
        Value::Str(Arc::from(s))
    }

    pub fn map(m: Map) -> Value {
        Value::Map(Rc::new(RefCell::new(m)))
    }

    pub fn list(l: Vec<Value>) -> Value {
        Value::List(Rc::new(l))
    }

    /// Go's truth (`text/template`'s `isTrue`, exec.go): false, 0, nil, and empty strings,
    /// lists and maps are false; everything else (a struct, a function) is true.
    pub fn truthy(&self) -> bool {
        match self {
            Value::Nil => false,
            Value::Bool(b) => *b,
            Value::Int(i) => *i != 0,
            Value::Float(f) => *f != 0.0,
            Value::Str(s) => !s.is_empty(),
            Value::List(l) => !l.is_empty(),
            Value::Map(m) => !m.borrow().is_empty(),
            Value::Obj(o) => match &**o {
                Obj::Files(f) => !f.is_empty(),
                Obj::ApiVersions(v) => !v.is_empty(),
                Obj::Semver(_) | Obj::Time(_) | Obj::KubeVersion { .. } => true,
            },
        }
    }

    /// The Go type name `printf "%T"` and Sprig's `typeOf` print.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Nil => "<nil>",
            Value::Bool(_) => "bool",
            Value::Int(_) => "int",
            Value::Float(_) => "float64",
            Value::Str(_) => "string",
            Value::List(_) => "[]interface {}",
            Value::Map(_) => "map[string]interface {}",
            Value::Obj(o) => match &**o {
                Obj::Files(_) => "engine.files",
                Obj::ApiVersions(_) => "common.VersionSet",
                Obj::Semver(_) => "*semver.Version",
                Obj::Time(_) => "time.Time",
                Obj::KubeVersion { .. } => "common.KubeVersion",
            },
        }
    }

    /// The reflect kind Sprig's `kindOf`/`kindIs` name.
    pub fn kind_name(&self) -> &'static str {
        match self {
            Value::Nil => "invalid",
            Value::Bool(_) => "bool",
            Value::Int(_) => "int",
            Value::Float(_) => "float64",
            Value::Str(_) => "string",
            Value::List(_) => "slice",
            Value::Map(_) => "map",
            Value::Obj(o) => match &**o {
                Obj::Files(_) => "map",
                Obj::ApiVersions(_) => "slice",
                Obj::Semver(_) => "ptr",
                Obj::Time(_) | Obj::KubeVersion { .. } => "struct",
            },
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    /// A template value from a JSON tree as Helm's values hold it: every number a float64.
    pub fn from_values_json(j: &Json) -> Value {
        Self::from_json_with(j, true)
    }

    /// A template value from JSON, numbers kept as JSON says: what `fromJson` decodes is
    /// float64 in Go too, so this is only for trees that were ints on the Go side.
    pub fn from_json_with(j: &Json, all_floats: bool) -> Value {
        match j {
            Json::Null => Value::Nil,
            Json::Bool(b) => Value::Bool(*b),
            Json::Number(n) => match n.as_i64() {
                Some(i) if !all_floats => Value::Int(i),
                _ => Value::Float(n.as_f64().unwrap_or(0.0)),
            },
            Json::String(s) => Value::str(s),
            Json::Array(a) => Value::list(
                a.iter()
                    .map(|v| Self::from_json_with(v, all_floats))
                    .collect(),
            ),
            Json::Object(m) => Value::map(
                m.iter()
                    .map(|(k, v)| (k.clone(), Self::from_json_with(v, all_floats)))
                    .collect(),
            ),
        }
    }

    /// The value as JSON for the YAML emitter and `toJson`: ints stay ints, floats stay floats
    /// (non-finite ones, which encoding/json refuses, are errors). `depth` bounds a tree that
    /// `set` made contain itself.
    pub fn to_json(&self, depth: usize) -> Result<Json, String> {
        if depth > MAX_VALUE_DEPTH {
            return Err(format!(
                "the value nests deeper than {MAX_VALUE_DEPTH} levels (a map that contains itself?)"
            ));
        }
        Ok(match self {
            Value::Nil => Json::Null,
            Value::Bool(b) => Json::Bool(*b),
            Value::Int(i) => Json::from(*i),
            Value::Float(f) => match serde_json::Number::from_f64(*f) {
                Some(n) => Json::Number(n),
                None => return Err(format!("json: unsupported value: {}", go_g_float(*f))),
            },
            Value::Str(s) => Json::String(s.to_string()),
            Value::List(l) => Json::Array(
                l.iter()
                    .map(|v| v.to_json(depth + 1))
                    .collect::<Result<_, _>>()?,
            ),
            Value::Map(m) => {
                let mut out = serde_json::Map::new();
                for (k, v) in m.borrow().iter() {
                    out.insert(k.clone(), v.to_json(depth + 1)?);
                }
                Json::Object(out)
            }
            Value::Obj(o) => match &**o {
                Obj::Files(f) => Json::Object(
                    f.iter()
                        .map(|(k, v)| (k.clone(), Json::String(String::from_utf8_lossy(v).into())))
                        .collect(),
                ),
                Obj::ApiVersions(v) => {
                    Json::Array(v.iter().map(|s| Json::String(s.clone())).collect())
                }
                Obj::Semver(v) => Json::String(v.original.clone()),
                // encoding/json writes the exported fields only.
                Obj::KubeVersion {
                    version,
                    major,
                    minor,
                    ..
                } => serde_json::json!({"Version": version, "Major": major, "Minor": minor}),
                Obj::Time(_) => {
                    mark_clock_leaked();
                    Json::Null
                }
            },
        })
    }

    /// A deep copy (Sprig's `deepCopy`, copystructure): maps and lists are new, so `set` on the
    /// copy leaves the original alone.
    pub fn deep_copy(&self, depth: usize) -> Result<Value, String> {
        if depth > MAX_VALUE_DEPTH {
            return Err(format!(
                "deepCopy: the value nests deeper than {MAX_VALUE_DEPTH} levels"
            ));
        }
        Ok(match self {
            Value::List(l) => Value::list(
                l.iter()
                    .map(|v| v.deep_copy(depth + 1))
                    .collect::<Result<_, _>>()?,
            ),
            Value::Map(m) => {
                let mut out = Map::new();
                for (k, v) in m.borrow().iter() {
                    out.insert(k.clone(), v.deep_copy(depth + 1)?);
                }
                Value::map(out)
            }
            other => other.clone(),
        })
    }
}

/// How deep a value may nest before conversions refuse it: far beyond any chart's values
/// (the values reader stops at `limits::MAX_DEPTH`), low enough for the stack.
pub const MAX_VALUE_DEPTH: usize = 200;

/// Go's `%v` of a float64 (strconv `'g'`, shortest): `cilium_cmp_yaml::gofmt::go_g_float`, which prints
/// zero as `0` whatever its sign, while Go keeps the sign of a negative zero (`-0.0` in a
/// values file or a template literal prints `-0`).
pub fn go_float(f: f64) -> String {
    if f == 0.0 && f.is_sign_negative() {
        return "-0".into();
    }
    go_g_float(f)
}

/// Go's `fmt` `%v` of a value (`fmt.Sprint` of one operand), as `{{ x }}`, `print` and
/// `toString` show it.
pub fn sprint(v: &Value) -> String {
    let mut out = String::new();
    write_v(&mut out, v, 0);
    out
}

fn write_v(out: &mut String, v: &Value, depth: usize) {
    if depth > MAX_VALUE_DEPTH {
        out.push_str("...");
        return;
    }
    match v {
        Value::Nil => out.push_str("<nil>"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Int(i) => out.push_str(&i.to_string()),
        Value::Float(f) => out.push_str(&go_float(*f)),
        Value::Str(s) => out.push_str(s),
        Value::List(l) => {
            out.push('[');
            for (i, x) in l.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                write_v(out, x, depth + 1);
            }
            out.push(']');
        }
        Value::Map(m) => {
            out.push_str("map[");
            for (i, (k, x)) in m.borrow().iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                out.push_str(k);
                out.push(':');
                write_v(out, x, depth + 1);
            }
            out.push(']');
        }
        Value::Obj(o) => match &**o {
            Obj::Files(f) => {
                out.push_str("map[");
                for (i, (k, b)) in f.iter().enumerate() {
                    if i > 0 {
                        out.push(' ');
                    }
                    out.push_str(k);
                    out.push_str(":[");
                    let bytes: Vec<String> = b.iter().map(|x| x.to_string()).collect();
                    out.push_str(&bytes.join(" "));
                    out.push(']');
                }
                out.push(']');
            }
            Obj::ApiVersions(v) => {
                out.push('[');
                out.push_str(&v.join(" "));
                out.push(']');
            }
            Obj::Semver(s) => out.push_str(&s.to_string()),
            // fmt's `%v` of a struct value: its fields in order, the unexported one included.
            Obj::KubeVersion {
                version,
                normalized,
                major,
                minor,
            } => {
                out.push_str(&format!("{{{version} {normalized} {major} {minor}}}"));
            }
            Obj::Time(_) => mark_clock_leaked(),
        },
    }
}

/// The engine coalesces the user's values over the chart's straight into its own values
/// (`merge::coalesce_as`), as Helm 4's `ToRenderValues` hands `text/template` the result.
impl crate::merge::Tree for Value {
    fn whole(v: &Json) -> Self {
        Value::from_values_json(v)
    }
    fn entries(m: Vec<(String, Self)>) -> Self {
        Value::map(m.into_iter().collect())
    }
}
