//! The render compared with a live object as a server-side apply by a new field manager sees it:
//! the render must be a subset of what runs. A field only the live object has (a default the API
//! server filled in, a label some tool added) is left in place by such an apply, so it is no
//! difference; a field the render sets to another value, or sets where the live object has none,
//! is one.
//!
//! Lists follow Kubernetes' merge rules: lists of containers, env vars, ports, volumes and the
//! like are matched item by item on their merge key (as the API's `x-kubernetes-list-map-keys`
//! say), each item again as a subset; every other list is replaced whole by an apply, so it must
//! match position by position and in length. A live list item the render lacks is reported: the
//! API server never adds items to those lists, so it came from an earlier configuration.

use std::fmt;

use serde_json::Value;

/// One step of a path: a map key, a list position, or a list item named by its merge key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    Key(String),
    Index(usize),
    Item(String),
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Path(pub Vec<Step>);

impl Path {
    fn with(&self, step: Step) -> Path {
        let mut p = self.0.clone();
        p.push(step);
        Path(p)
    }

    /// Whether the path starts with these map keys.
    pub fn starts_with(&self, keys: &[&str]) -> bool {
        self.0.len() >= keys.len()
            && self
                .0
                .iter()
                .zip(keys)
                .all(|(s, k)| matches!(s, Step::Key(x) if x == k))
    }

    /// The map key at a position, if that step is one.
    pub fn key_at(&self, i: usize) -> Option<&str> {
        match self.0.get(i) {
            Some(Step::Key(k)) => Some(k),
            _ => None,
        }
    }

    /// Whether the value here is a resource quantity (`quantity::is_quantity_field`).
    fn is_quantity(&self) -> bool {
        let keys: Vec<&str> = self
            .0
            .iter()
            .filter_map(|s| match s {
                Step::Key(k) => Some(k.as_str()),
                _ => None,
            })
            .collect();
        super::quantity::is_quantity_field(&keys)
    }

    pub fn last_key(&self) -> Option<&str> {
        self.0.len().checked_sub(1).and_then(|i| self.key_at(i))
    }
}

impl fmt::Display for Path {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, step) in self.0.iter().enumerate() {
            match step {
                Step::Key(k) if is_plain(k) => {
                    if i > 0 {
                        f.write_str(".")?;
                    }
                    f.write_str(k)?;
                }
                Step::Key(k) => write!(f, "[{}]", crate::limits::quoted(k))?,
                Step::Index(n) => write!(f, "[{n}]")?,
                Step::Item(name) => write!(f, "[{}]", crate::limits::quoted(name))?,
            }
        }
        Ok(())
    }
}

fn is_plain(key: &str) -> bool {
    !key.is_empty()
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// A field whose values differ: `render` is what the apply would set, `live` what runs now
/// (None: absent on that side).
#[derive(Debug, Clone, PartialEq)]
pub struct Difference {
    pub path: Path,
    pub render: Option<Value>,
    pub live: Option<Value>,
}

/// The merge keys server-side apply uses for the lists of a Cilium render (the API's
/// `x-kubernetes-list-map-keys`: k8s.io/api `core/v1/types.go` `+listMapKey` markers), by the
/// field that holds the list; every other list is atomic, replaced and owned whole. Service and
/// container ports share a field name and differ in their key field, so the item decides.
pub(crate) fn list_map_keys(field: &str, item: &Value) -> &'static [&'static str] {
    match field {
        "containers"
        | "initContainers"
        | "ephemeralContainers"
        | "env"
        | "volumes"
        | "imagePullSecrets"
        | "resourceClaims" => &["name"],
        "volumeMounts" => &["mountPath"],
        "volumeDevices" => &["devicePath"],
        "hostAliases" => &["ip"],
        "topologySpreadConstraints" => &["topologyKey", "whenUnsatisfiable"],
        "ports" if item.get("containerPort").is_some() => &["containerPort", "protocol"],
        "ports" if item.get("port").is_some() => &["port", "protocol"],
        _ => &[],
    }
}

/// Whether a render value is one the API server drops when it stores an object (an empty map
/// or list, an empty string, null), so its absence from the live object is no difference.
fn is_empty(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(m) => m.is_empty(),
        _ => false,
    }
}

/// Every difference of `render` against `live` as a subset, in render order.
pub fn differences(render: &Value, live: &Value) -> Vec<Difference> {
    let mut out = Vec::new();
    walk(render, Some(live), &Path::default(), &mut out);
    out
}

fn walk(render: &Value, live: Option<&Value>, path: &Path, out: &mut Vec<Difference>) {
    let differ = |out: &mut Vec<Difference>| {
        out.push(Difference {
            path: path.clone(),
            render: Some(render.clone()),
            live: live.cloned(),
        })
    };
    let Some(live) = live else {
        // A missing map is reported field by field, so each path says what it sets.
        if let Value::Object(r) = render {
            for (k, rv) in r {
                walk(rv, None, &path.with(Step::Key(k.clone())), out);
            }
        } else if !is_empty(render) {
            differ(out);
        }
        return;
    };
    if path.is_quantity() && super::quantity::same_amount(render, live) {
        return;
    }
    match (render, live) {
        (Value::Object(r), Value::Object(l)) => {
            for (k, rv) in r {
                walk(rv, l.get(k), &path.with(Step::Key(k.clone())), out);
            }
        }
        (Value::Array(r), Value::Array(l)) => {
            let field = path.last_key().unwrap_or("");
            match keyed(field, r, l) {
                Some(key) => keyed_lists(key, r, l, path, out),
                None => {
                    for (i, rv) in r.iter().enumerate() {
                        walk(rv, l.get(i), &path.with(Step::Index(i)), out);
                    }
                    for (i, lv) in l.iter().enumerate().skip(r.len()) {
                        out.push(Difference {
                            path: path.with(Step::Index(i)),
                            render: None,
                            live: Some(lv.clone()),
                        });
                    }
                }
            }
        }
        (Value::Number(a), Value::Number(b)) => {
            if a.as_f64() != b.as_f64() {
                differ(out);
            }
        }
        (r, l) if is_empty(r) && is_empty(l) => {}
        // A null in a manifest sets nothing: the API server decodes it as an absent field
        // (e.g. the chart's `annotations:` with nothing under it), whatever tools added there.
        (Value::Null, _) => {}
        (r, l) => {
            if r != l {
                differ(out);
            }
        }
    }
}

/// The merge key of these two lists, when the field merges by key and every item has it.
/// Items pair up by the first of the list's keys; items sharing it (a port open for TCP and
/// UDP) pair in order of appearance (`keyed_lists`).
fn keyed(field: &str, r: &[Value], l: &[Value]) -> Option<&'static str> {
    let first = r.first().or(l.first())?;
    let key = *list_map_keys(field, first).first()?;
    r.iter()
        .chain(l)
        .all(|item| item.get(key).is_some())
        .then_some(key)
}

fn item_name(item: &Value, key: &str) -> String {
    match item.get(key) {
        Some(Value::String(s)) => s.clone(),
        // Ports: the reader keeps numbers as floats, as Helm does; name them as written.
        Some(Value::Number(n)) => match n.as_f64() {
            Some(f) if f.fract() == 0.0 && f.abs() < 1e15 => format!("{}", f as i64),
            _ => n.to_string(),
        },
        Some(v) => v.to_string(),
        None => String::new(),
    }
}

/// Items pair up by merge key; a key written twice (the chart does that with env vars the user
/// repeats, and the API server accepts it) pairs the n-th item of each side with that key.
fn keyed_lists(key: &str, r: &[Value], l: &[Value], path: &Path, out: &mut Vec<Difference>) {
    let nth = |items: &[Value], v: &Value, n: usize| {
        items
            .iter()
            .filter(|i| i.get(key) == v.get(key))
            .nth(n)
            .cloned()
    };
    let occurrence = |items: &[Value], i: usize| {
        items[..i]
            .iter()
            .filter(|x| x.get(key) == items[i].get(key))
            .count()
    };
    for (i, rv) in r.iter().enumerate() {
        let live = nth(l, rv, occurrence(r, i));
        walk(
            rv,
            live.as_ref(),
            &path.with(Step::Item(item_name(rv, key))),
            out,
        );
    }
    for (i, lv) in l.iter().enumerate() {
        if nth(r, lv, occurrence(l, i)).is_none() {
            out.push(Difference {
                path: path.with(Step::Item(item_name(lv, key))),
                render: None,
                live: Some(lv.clone()),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn fields_only_live_has_are_no_difference() {
        let render =
            json!({"spec": {"containers": [{"name": "a", "image": "x"}], "hostNetwork": true}});
        let live = json!({"spec": {"containers": [{"name": "a", "image": "x", "imagePullPolicy": "IfNotPresent"}],
            "hostNetwork": true, "dnsPolicy": "ClusterFirst"}, "status": {}});
        assert!(differences(&render, &live).is_empty());
    }

    #[test]
    fn quantities_compare_by_amount() {
        let render = json!({"containers": [{"name": "a",
            "resources": {"limits": {"cpu": 0.5, "memory": "1024Mi"}, "requests": {"cpu": 1.0}}}]});
        let live = json!({"containers": [{"name": "a",
            "resources": {"limits": {"cpu": "500m", "memory": "1Gi"}, "requests": {"cpu": "1"}}}]});
        assert!(differences(&render, &live).is_empty());
        let live = json!({"containers": [{"name": "a",
            "resources": {"limits": {"cpu": "600m", "memory": "1Gi"}, "requests": {"cpu": "1"}}}]});
        let d: Vec<String> = differences(&render, &live)
            .iter()
            .map(|d| d.path.to_string())
            .collect();
        assert_eq!(d, ["containers[\"a\"].resources.limits.cpu"]);
    }

    #[test]
    fn containers_match_by_name_and_args_by_position() {
        let render =
            json!({"containers": [{"name": "b", "args": ["--x"]}, {"name": "a", "image": "1"}]});
        let live = json!({"containers": [{"name": "a", "image": "2"}, {"name": "b", "args": ["--x", "--y"]}]});
        let d: Vec<String> = differences(&render, &live)
            .iter()
            .map(|d| d.path.to_string())
            .collect();
        assert_eq!(d, ["containers[\"b\"].args[1]", "containers[\"a\"].image"]);
    }

    #[test]
    fn repeated_keys_pair_in_order() {
        let list = json!({"env": [{"name": "A", "value": "1"}, {"name": "A", "value": "2"}]});
        assert!(differences(&list, &list).is_empty());
        let swapped = json!({"env": [{"name": "A", "value": "2"}, {"name": "A", "value": "1"}]});
        assert_eq!(differences(&list, &swapped).len(), 2);
    }

    #[test]
    fn empty_render_values_match_absent_fields() {
        let render = json!({"resources": {}, "value": "", "list": []});
        assert!(differences(&render, &json!({})).is_empty());
        assert_eq!(differences(&json!({"a": 1}), &json!({"a": 1.0})), vec![]);
    }

    #[test]
    fn paths_quote_keys_with_dots() {
        let d = differences(
            &json!({"metadata": {"annotations": {"cilium.io/x": "1"}}}),
            &json!({"metadata": {"annotations": {"cilium.io/x": "2"}}}),
        );
        assert_eq!(
            d[0].path.to_string(),
            "metadata.annotations[\"cilium.io/x\"]"
        );
    }
}
