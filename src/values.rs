//! Helm's values: the chart's defaults for one Cilium version, the user's files and `--set`
//! flags merged over them with Helm's rules, and where each user value was written.
//!
//! Merge rules (the only place they live): maps merge deeply, anything else replaces, a later
//! file wins over an earlier one, `--set` wins over files, and a null removes a default.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::yaml;

/// Where a user value came from, for error messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    pub source: String,
    pub line: Option<usize>,
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.line {
            Some(l) => write!(f, "{} line {}", self.source, l),
            None => f.write_str(&self.source),
        }
    }
}

/// One input layer, as the user wrote it: a values file or the `--set` flags.
#[derive(Debug, Clone)]
pub struct Layer {
    pub source: String,
    pub value: Value,
    pub lines: BTreeMap<String, usize>,
}

#[derive(Debug, thiserror::Error)]
pub enum ValuesError {
    #[error("{file}: {message}")]
    Parse { file: String, message: String },
    #[error("--set {expr:?}: {message}")]
    Set { expr: String, message: String },
}

impl Layer {
    /// Parses a values file's text; `source` names it in errors.
    pub fn from_yaml(source: &str, text: &str) -> Result<Layer, ValuesError> {
        let doc = yaml::parse_values(text).map_err(|e| ValuesError::Parse {
            file: source.to_string(),
            message: e.to_string(),
        })?;
        match doc.value {
            Value::Object(_) => Ok(Layer {
                source: source.to_string(),
                value: doc.value,
                lines: doc.lines,
            }),
            Value::Null => Ok(Layer {
                source: source.to_string(),
                value: Value::Object(Map::new()),
                lines: BTreeMap::new(),
            }),
            _ => Err(ValuesError::Parse {
                file: source.to_string(),
                message: "a values file must be a YAML mapping at its top level".into(),
            }),
        }
    }

    /// Builds the layer of all `--set PATH=VALUE` expressions, applied in order.
    pub fn from_set(exprs: &[String]) -> Result<Layer, ValuesError> {
        let mut root = Value::Object(Map::new());
        for expr in exprs {
            crate::setexpr::apply(&mut root, expr).map_err(|message| ValuesError::Set {
                expr: expr.clone(),
                message,
            })?;
        }
        Ok(Layer {
            source: "--set".into(),
            value: root,
            lines: BTreeMap::new(),
        })
    }
}

/// The resolved values a renderer reads: defaults with every layer merged in.
#[derive(Debug, Clone)]
pub struct Values {
    root: Value,
    /// Only what the user wrote, all layers merged (nulls kept): what the schema check reads.
    user: Value,
    origins: BTreeMap<String, Origin>,
}

static NULL: Value = Value::Null;

impl Values {
    /// Merges user layers (in order) over the chart's defaults.
    pub fn resolve(defaults: Value, layers: &[Layer]) -> Values {
        let mut user = Value::Object(Map::new());
        let mut origins = BTreeMap::new();
        for layer in layers {
            merge_user(&mut user, &layer.value);
            record_origins(&layer.value, "", layer, &mut origins);
        }
        let mut root = defaults;
        if !root.is_object() {
            root = Value::Object(Map::new());
        }
        coalesce(&mut root, user.clone());
        Values {
            root,
            user,
            origins,
        }
    }

    /// The whole tree.
    pub fn root(&self) -> &Value {
        &self.root
    }

    /// The user's values alone, every layer merged.
    pub fn user(&self) -> &Value {
        &self.user
    }

    /// Mutable access, for the few defaults this renderer deliberately changes (see `plan`).
    pub fn root_mut(&mut self) -> &mut Value {
        &mut self.root
    }

    /// The value at a dotted path (`hubble.relay.enabled`), or null when absent, as Helm's
    /// `.Values.a.b` gives nil.
    pub fn get(&self, path: &str) -> &Value {
        lookup(&self.root, path)
    }

    /// Go-template truth of the value at `path`.
    pub fn on(&self, path: &str) -> bool {
        crate::tmpl::truthy(self.get(path))
    }

    /// The value at `path` as a template prints it (empty for null).
    pub fn text(&self, path: &str) -> String {
        crate::tmpl::quote(self.get(path))
    }

    /// True when the user wrote this path in a file or `--set`.
    pub fn user_set(&self, path: &str) -> bool {
        self.origin(path).is_some()
    }

    /// Where the user wrote `path`, if they did.
    pub fn origin(&self, path: &str) -> Option<&Origin> {
        self.origins.get(path)
    }

    /// Describes where `path` comes from: the user's file and line, or the chart's default.
    pub fn describe_origin(&self, path: &str) -> String {
        match self.origin(path) {
            Some(o) => o.to_string(),
            None => "the chart's default".into(),
        }
    }
}

/// Looks up a dotted path in a tree; keys themselves may not contain dots.
pub fn lookup<'a>(root: &'a Value, path: &str) -> &'a Value {
    let mut node = root;
    for key in path.split('.') {
        match node {
            Value::Object(m) => match m.get(key) {
                Some(v) => node = v,
                None => return &NULL,
            },
            _ => return &NULL,
        }
    }
    node
}

/// Merges one user layer over the previous ones: maps merge deeply, the rest replaces; nulls
/// are kept so they can remove chart defaults later.
fn merge_user(dst: &mut Value, src: &Value) {
    match (dst, src) {
        (Value::Object(d), Value::Object(s)) => {
            for (k, v) in s {
                match d.get_mut(k) {
                    Some(existing @ Value::Object(_)) if v.is_object() => merge_user(existing, v),
                    _ => {
                        d.insert(k.clone(), v.clone());
                    }
                }
            }
        }
        (dst, src) => *dst = src.clone(),
    }
}

/// Helm's coalescing of user values over chart defaults: a user null deletes the default.
fn coalesce(dst: &mut Value, user: Value) {
    let (Value::Object(d), Value::Object(u)) = (&mut *dst, user) else {
        unreachable!("coalesce is only called on two maps")
    };
    for (k, v) in u {
        if v.is_null() {
            d.remove(&k);
            continue;
        }
        match d.get_mut(&k) {
            Some(existing @ Value::Object(_)) if v.is_object() => coalesce(existing, v),
            _ => {
                d.insert(k, strip_nulls(v));
            }
        }
    }
}

/// Nulls inside a user map that has no default counterpart vanish, as Helm drops them.
fn strip_nulls(v: Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.into_iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k, strip_nulls(v)))
                .collect(),
        ),
        other => other,
    }
}

fn record_origins(v: &Value, prefix: &str, layer: &Layer, out: &mut BTreeMap<String, Origin>) {
    if let Value::Object(m) = v {
        for (k, child) in m {
            let path = if prefix.is_empty() {
                k.clone()
            } else {
                format!("{prefix}.{k}")
            };
            out.insert(
                path.clone(),
                Origin {
                    source: layer.source.clone(),
                    line: layer.lines.get(&path).copied(),
                },
            );
            record_origins(child, &path, layer, out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn helm_merge_rules() {
        let defaults = json!({"a": {"b": 1, "c": 2, "l": [1, 2]}, "d": "x", "e": {"f": 1}});
        let l1 = Layer::from_yaml("one.yaml", "a:\n  b: 5\n  l: [9]\nd: null\n").unwrap();
        let l2 = Layer::from_yaml("two.yaml", "a:\n  c: 7\ne: {g: 2}\n").unwrap();
        let v = Values::resolve(defaults, &[l1, l2]);
        assert_eq!(v.get("a"), &json!({"b": 5.0, "c": 7.0, "l": [9.0]}));
        assert_eq!(v.get("d"), &Value::Null);
        assert_eq!(v.get("e"), &json!({"f": 1, "g": 2.0}));
        assert_eq!(v.origin("a.c").unwrap().to_string(), "two.yaml line 2");
        assert_eq!(v.describe_origin("e.g"), "two.yaml line 3");
        assert_eq!(v.describe_origin("e.f"), "the chart's default");
        assert_eq!(v.describe_origin("zzz"), "the chart's default");
    }
}
