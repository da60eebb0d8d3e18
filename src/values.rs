//! Helm's values: the chart's defaults for one Cilium version, the user's files and `--set`
//! flags merged over them with Helm's rules, and where each user value was written.
//!
//! Merge rules (the only place they live): maps merge deeply, anything else replaces, a later
//! file wins over an earlier one, `--set` wins over files, and a null removes a default.

use crate::merge::{changed, coalesce, merge_user};
use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};

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
    /// The file's text (none for `--set`): lines are found in it again when an error or a
    /// check asks where a value was written, so a render does not record them.
    text: Option<String>,
    lines: OnceLock<BTreeMap<String, usize>>,
}

#[derive(Debug, thiserror::Error)]
pub enum ValuesError {
    /// `position` is `FILE:LINE:COLUMN`.
    #[error("{position}: {message}")]
    Parse { position: String, message: String },
    /// `expr` starts with the flag (`--set`, `--set-json`, ...).
    #[error("{expr}: {message}")]
    Set {
        expr: String,
        message: crate::setexpr::SetExprError,
    },
}

impl Layer {
    /// Parses a values file's text; `source` names it in errors.
    pub fn from_yaml(source: &str, text: &str) -> Result<Layer, ValuesError> {
        let value = yaml::parse_value(text).map_err(|e| ValuesError::Parse {
            position: e.position_in(source),
            message: e.message().to_string(),
        })?;
        match value {
            Value::Object(_) => Ok(Layer {
                source: source.to_string(),
                value,
                text: Some(text.to_string()),
                lines: OnceLock::new(),
            }),
            Value::Null => Ok(Layer {
                source: source.to_string(),
                value: Value::Object(Map::new()),
                text: None,
                lines: OnceLock::new(),
            }),
            _ => {
                // Read again, with positions, only to point at the offending document.
                let (line, column) = yaml::parse_values(text).map_or((1, 1), |doc| doc.start);
                Err(ValuesError::Parse {
                    position: format!("{source}:{line}:{column}"),
                    message:
                        "a values file must be a YAML mapping at its top level, `key: value` lines"
                            .into(),
                })
            }
        }
    }

    /// Builds the layer of all `--set PATH=VALUE` expressions, applied in order.
    pub fn from_set(exprs: &[String]) -> Result<Layer, ValuesError> {
        let mut root = Value::Object(Map::new());
        crate::setexpr::apply_all(&mut root, exprs).map_err(|(expr, message)| {
            ValuesError::Set {
                expr: format!("--set {}", crate::limits::quoted(&expr)),
                message,
            }
        })?;
        Ok(Layer {
            source: "--set".into(),
            value: root,
            text: None,
            lines: OnceLock::new(),
        })
    }

    /// The layer of every `--set`-like flag (`--set-json`, `--set`, `--set-string`,
    /// `--set-file`), applied in Helm's order into one tree, as Helm applies them; the layer over the values files `files`. Helm applies `--set` to the files'
    /// merged tree itself, so `--set l[1]=x` changes one item of a list a file wrote (and keeps
    /// the others); this layer holds what the flags changed in that tree, whole lists included,
    /// so that laying it over the files gives exactly Helm's tree.
    pub fn from_set_args_over(
        args: &crate::setexpr::SetArgs,
        files: &[Layer],
    ) -> Result<Layer, ValuesError> {
        let mut merged = Value::Object(Map::new());
        for layer in files {
            merge_user(&mut merged, &layer.value);
        }
        let mut root = merged.clone();
        args.apply(&mut root)
            .map_err(|(kind, expr, message)| ValuesError::Set {
                expr: format!("{} {}", kind.flag(), crate::limits::quoted(&expr)),
                message,
            })?;
        Ok(Layer {
            source: args.source_name(),
            value: changed(&merged, root),
            text: None,
            lines: OnceLock::new(),
        })
    }

    /// The line `path` was written on, when this layer is a file that holds it.
    pub fn line(&self, path: &str) -> Option<usize> {
        let text = self.text.as_deref()?;
        self.lines
            .get_or_init(|| {
                yaml::parse_values(text)
                    .map(|doc| doc.lines)
                    .unwrap_or_default()
            })
            .get(path)
            .copied()
    }
}

/// The resolved values the checks read: the chart's defaults with every layer coalesced over
/// them by Helm's rules (`merge::coalesce`, the engine's too), built once when first read.
#[derive(Debug, Clone)]
pub struct Values {
    /// The chart's defaults (always a map).
    defaults: Defaults,
    /// What lies over the defaults: the user's layers merged (nulls kept, to delete defaults),
    /// plus the few values this renderer sets itself (see `root_mut`). Always a map.
    overlay: Value,
    /// Only what the user wrote, all layers merged (nulls kept): what the schema check reads.
    user: Value,
    /// The layers as written, for `origin` (only errors and a few checks ask, so nothing is
    /// indexed ahead of them).
    layers: Vec<Layer>,
    /// `overlay` coalesced over `defaults`.
    resolved: OnceLock<Value>,
}

static NULL: Value = Value::Null;

#[derive(Debug, Clone)]
enum Defaults {
    Shared(Arc<Value>),
    /// A release's defaults, read once per process (`versions::defaults_static`).
    Static(&'static Value),
}

impl Defaults {
    fn tree(&self) -> &Value {
        match self {
            Defaults::Shared(t) => t,
            Defaults::Static(t) => t,
        }
    }
}

impl Values {
    /// Merges user layers (in order) over the chart's defaults.
    pub fn resolve(defaults: Value, layers: impl Into<Vec<Layer>>) -> Values {
        Values::over(Defaults::Shared(Arc::new(defaults)), layers)
    }

    /// As `resolve`, over defaults read once per process (never copied until resolved).
    pub fn resolve_static(defaults: &'static Value, layers: impl Into<Vec<Layer>>) -> Values {
        Values::over(Defaults::Static(defaults), layers)
    }

    fn over(defaults: Defaults, layers: impl Into<Vec<Layer>>) -> Values {
        let layers = layers.into();
        let mut user = Value::Object(Map::new());
        for layer in &layers {
            merge_user(&mut user, &layer.value);
        }
        Values {
            defaults,
            overlay: user.clone(),
            user,
            layers,
            resolved: OnceLock::new(),
        }
    }

    /// The whole resolved tree.
    pub fn root(&self) -> &Value {
        self.resolved
            .get_or_init(|| coalesce(self.defaults.tree(), &self.overlay))
    }

    /// Helm's `hasKey` on the parent map of `path`: whether the merged tree holds the key, even
    /// with a null value (a user's null on a value whose default is null or absent is kept, and
    /// the chart's `hasKey` tests then pass: `debug.verbose: ~` renders `debug-verbose: ""`).
    pub fn present(&self, path: &str) -> bool {
        let mut node = self.root();
        for key in path.split('.') {
            match node.get(key) {
                Some(c) => node = c,
                None => return false,
            }
        }
        true
    }

    /// What lies over the chart's defaults: the user's values, every layer merged with their
    /// nulls, and this renderer's own defaults (`determinism::apply_defaults`). What Helm
    /// coalesces over the chart's `values.yaml`.
    pub fn overlay(&self) -> &Value {
        &self.overlay
    }

    /// The user's values alone, every layer merged.
    pub fn user(&self) -> &Value {
        &self.user
    }

    /// Mutable access to what lies over the chart's defaults (the user's values and this
    /// renderer's own settings), for the few defaults this renderer deliberately changes (see
    /// `plan`): a value set here wins over the default as a user's value would, and a map set
    /// here merges with the default map.
    pub fn root_mut(&mut self) -> &mut Value {
        self.resolved = OnceLock::new();
        &mut self.overlay
    }

    /// The value at a dotted path (`hubble.relay.enabled`), or null when absent, as Helm's
    /// `.Values.a.b` gives nil.
    pub fn get(&self, path: &str) -> &Value {
        lookup(self.root(), path)
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
        self.layers.iter().any(|l| contains_path(&l.value, path))
    }

    /// Where the user wrote `path`, if they did.
    pub fn origin(&self, path: &str) -> Option<Origin> {
        let (layer, written) = self
            .layers
            .iter()
            .rev()
            .find_map(|l| Some((l, deciding_prefix(&l.value, path)?)))?;
        Some(Origin {
            source: layer.source.clone(),
            line: layer.line(&path[..written]),
        })
    }

    /// Where the user wrote item `index` of the list at `path`: as `origin`, with the item's own
    /// line when the deciding file wrote the list whole (else the line that decides it).
    pub fn origin_of_item(&self, path: &str, index: usize) -> Option<Origin> {
        let (layer, written) = self
            .layers
            .iter()
            .rev()
            .find_map(|l| Some((l, deciding_prefix(&l.value, path)?)))?;
        let line = if written == path.len() {
            layer
                .line(&format!("{path}[{index}]"))
                .or_else(|| layer.line(path))
        } else {
            layer.line(&path[..written])
        };
        Some(Origin {
            source: layer.source.clone(),
            line,
        })
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

/// Whether a map tree holds `path`, its keys joined with dots (keys that contain dots
/// themselves included, so every path written can be found).
/// How much of `path` (in bytes) a layer writes that decides the value at `path`: all of it,
/// or a shorter prefix whose value is no map (`cluster: null` decides `cluster.name`).
fn deciding_prefix(v: &Value, path: &str) -> Option<usize> {
    let Value::Object(m) = v else {
        return None;
    };
    m.iter().find_map(|(k, child)| {
        let rest = path.strip_prefix(k.as_str())?;
        if rest.is_empty() {
            return Some(k.len());
        }
        let rest = rest.strip_prefix('.')?;
        if !child.is_object() {
            return Some(k.len());
        }
        deciding_prefix(child, rest).map(|n| k.len() + 1 + n)
    })
}

fn contains_path(v: &Value, path: &str) -> bool {
    let Value::Object(m) = v else {
        return false;
    };
    m.iter()
        .any(|(k, child)| match path.strip_prefix(k.as_str()) {
            Some("") => true,
            Some(rest) => rest
                .strip_prefix('.')
                .is_some_and(|rest| contains_path(child, rest)),
            None => false,
        })
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

    /// The last layer that wrote a path names it, whatever it wrote (null too), and keys that
    /// hold dots are found as written.
    #[test]
    fn origins_name_the_last_layer_that_wrote_the_path() {
        let l1 = Layer::from_yaml("one.yaml", "a:\n  b: 5\n  c: 1\nx.y: {z: 1}\n").unwrap();
        let l2 = Layer::from_yaml("two.yaml", "a:\n  c: null\n").unwrap();
        let set = Layer::from_set(&["a.b=6".to_string()]).unwrap();
        let v = Values::resolve(json!({}), vec![l1, l2, set]);
        assert_eq!(v.describe_origin("a.b"), "--set");
        assert_eq!(v.describe_origin("a.c"), "two.yaml line 2");
        assert_eq!(v.describe_origin("a"), "--set");
        assert_eq!(v.describe_origin("x.y.z"), "one.yaml line 4");
        assert!(v.user_set("x.y"));
        assert!(!v.user_set("a.b.c") && !v.user_set("a.bb") && !v.user_set("x"));
        // A null (or any non-map) higher up decides everything beneath it.
        let l1 = Layer::from_yaml("one.yaml", "cluster:\n  name: x\n").unwrap();
        let set = Layer::from_set(&["cluster=null".to_string()]).unwrap();
        let v = Values::resolve(json!({}), vec![l1, set]);
        assert_eq!(v.describe_origin("cluster.name"), "--set");
    }

    #[test]
    fn list_items_are_found_on_their_own_lines() {
        let one = Layer::from_yaml("one.yaml", "l:\n  - a\n  - b\n").unwrap();
        let two = Layer::from_yaml("two.yaml", "m:\n  k: [x]\n").unwrap();
        let v = Values::resolve(serde_json::json!({}), vec![one, two]);
        assert_eq!(
            v.origin_of_item("l", 1).unwrap().to_string(),
            "one.yaml line 3"
        );
        assert_eq!(
            v.origin_of_item("m.k", 0).unwrap().to_string(),
            "two.yaml line 2"
        );
        // An index the file does not hold names the list.
        assert_eq!(
            v.origin_of_item("l", 5).unwrap().to_string(),
            "one.yaml line 1"
        );
        assert!(v.origin_of_item("z", 0).is_none());
    }

    #[test]
    fn top_keys_present_as_helms_has_key_sees_them() {
        let defaults = json!({"a": {"b": 1}, "d": "x", "n": null, "k": 1});
        let l1 = Layer::from_yaml("one.yaml", "d: null\nu: 1\nz: null\nk: 2\n").unwrap();
        let v = Values::resolve(defaults, &[l1]);
        // As Helm's `hasKey .Values key` sees them: a null default is dropped, a user's null on
        // a key the chart has removes it, a user's null on a key the chart lacks is kept.
        for (key, present) in [
            ("a", true),
            ("d", false),
            ("n", false),
            ("k", true),
            ("u", true),
            ("z", true),
            ("missing", false),
        ] {
            assert_eq!(v.present(key), present, "{key}");
        }
    }

    /// Checked against Helm 4 (the parity tools' `helm_ref.py`) with a chart whose values hold
    /// each case: which of the user's nulls `hasKey` still sees.
    #[test]
    fn nulls_kept_and_removed_as_helm_coalesces_them() {
        let defaults = json!({
            "topnil": null, "topval": 1,
            "m": {"a": 1, "nil": null, "sub": {"x": 1}},
            "scalar": 5, "empty": {},
        });
        let l1 = Layer::from_yaml(
            "one.yaml",
            "topnil: ~\ntopval: ~\nuseronly: ~\nm: {a: ~, nil: ~, new: ~, sub: ~, newmap: {q: ~}}\nscalar: {k: ~}\nempty: {z: ~}\n",
        )
        .unwrap();
        let v = Values::resolve(defaults, &[l1]);
        for (path, present) in [
            ("topnil", false),
            ("topval", false),
            ("useronly", true),
            ("m.a", false),
            ("m.nil", true),
            ("m.new", true),
            ("m.sub", false),
            ("m.newmap.q", true),
            ("scalar.k", true),
            ("empty.z", true),
        ] {
            assert_eq!(v.present(path), present, "{path}");
            assert!(v.get(path).is_null(), "{path}");
        }
        // A null default the user did not write is absent, even beside a value they did.
        let l2 = Layer::from_yaml("two.yaml", "m: {a: 2}\n").unwrap();
        let v = Values::resolve(json!({"m": {"a": 1, "nil": null}}), &[l2]);
        assert!(!v.present("m.nil") && v.present("m.a"));
    }

    #[test]
    fn a_value_set_over_the_defaults_wins_as_a_users_would() {
        let defaults = json!({"h": {"tls": {"auto": {"method": "helm", "on": true}}}});
        let mut v = Values::resolve(defaults, &[]);
        assert_eq!(v.get("h.tls.auto"), &json!({"method": "helm", "on": true}));
        crate::setexpr::apply(v.root_mut(), "h.tls.auto.method=cronJob").unwrap();
        assert_eq!(v.get("h.tls.auto.method"), "cronJob");
        assert_eq!(
            v.get("h.tls.auto"),
            &json!({"method": "cronJob", "on": true})
        );
        assert!(v.user().as_object().unwrap().is_empty());
    }
}
