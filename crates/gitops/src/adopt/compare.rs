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

use std::collections::HashMap;
use std::fmt;

use serde_json::Value;

/// One step of a path: a map key, a list position, or a list item named by its merge key; or,
/// last in a reported path, a count of differences below it that a bounded report leaves out
/// (`bounds::MAX_RECORDED_DIFFERENCES`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Step {
    /// A key of a map.
    Key(String),
    /// A position in a list that an apply replaces whole (compared position by position).
    Index(usize),
    /// An item of a list merged by key, named by its merge key's value (`name` of a container,
    /// `containerPort` of a port).
    Item(String),
    /// How many differences below the path so far were left out of a bounded report.
    More(usize),
}

/// Where a field is in an object, from its top: the steps in order. Shown the way people write
/// it (`spec.template.spec.containers["cilium-agent"].env`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Path(pub Vec<Step>);

impl Path {
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

    /// The last step's map key, if that step is one.
    pub(crate) fn last_key(&self) -> Option<&str> {
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
                Step::Key(k) => write!(f, "[{}]", cilium_cmp_yaml::limits::quoted(k))?,
                Step::Index(n) => write!(f, "[{n}]")?,
                Step::Item(name) => write!(f, "[{}]", cilium_cmp_yaml::limits::quoted(name))?,
                Step::More(n) => write!(
                    f,
                    "{}[… {} more differences, not listed]",
                    if i > 0 { "" } else { "(the object)" },
                    super::bounds::thousands(*n)
                )?,
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
    /// Where the field is.
    pub path: Path,
    /// The render's value; None when only the live object has the field.
    pub render: Option<Value>,
    /// The live object's value; None when only the render has the field.
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
/// An empty string of a free-form string map (ConfigMap data, labels, annotations) is kept:
/// `Walk::dropped` asks `zero::keeps_empty_string` first.
fn is_empty(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(m) => m.is_empty(),
        _ => false,
    }
}

/// A difference as the walk finds it, borrowed from both trees: the caller clones what it keeps.
#[derive(Debug, Clone, Copy)]
pub struct Seen<'a> {
    /// Where the field is.
    pub path: &'a [Step],
    /// The value of the first tree given to the walk (the render in `differences`); None when
    /// only the other has the field.
    pub render: Option<&'a Value>,
    /// The value of the second tree; None when only the first has the field.
    pub live: Option<&'a Value>,
}

impl Seen<'_> {
    fn to_owned(self) -> Difference {
        Difference {
            path: Path(self.path.to_vec()),
            render: self.render.cloned(),
            live: self.live.cloned(),
        }
    }
}

/// Every difference of `render` against `live` as a subset, in render order.
pub fn differences(render: &Value, live: &Value) -> Vec<Difference> {
    let mut out = Vec::new();
    each_difference(render, live, &|_| false, &mut |d| out.push(d.to_owned()));
    out
}

/// `differences`, handed to `visit` one at a time without copying either tree, so that a caller
/// keeps only what it reports. `skip` leaves out a map entry of the render side (and all below
/// it) as if it were absent; it sees the path to that entry.
///
/// Linear in the size of both trees: the path is one stack (cloned only by a caller that keeps a
/// difference), and keyed lists pair through an index of their merge keys.
pub fn each_difference(
    render: &Value,
    live: &Value,
    skip: &dyn Fn(&[Step]) -> bool,
    visit: &mut dyn FnMut(Seen<'_>),
) {
    let mut walk = Walk {
        path: Vec::new(),
        skip,
        visit,
    };
    walk.node(render, Some(live));
}

struct Walk<'s> {
    path: Vec<Step>,
    skip: &'s dyn Fn(&[Step]) -> bool,
    visit: &'s mut dyn FnMut(Seen<'_>),
}

impl Walk<'_> {
    fn emit(&mut self, render: Option<&Value>, live: Option<&Value>) {
        (self.visit)(Seen {
            path: &self.path,
            render,
            live,
        });
    }

    /// The entries of a render map, each against the live map's (None: the live side lacks the
    /// whole map).
    fn entries(
        &mut self,
        r: &serde_json::Map<String, Value>,
        l: Option<&serde_json::Map<String, Value>>,
    ) {
        for (k, rv) in r {
            self.path.push(Step::Key(k.clone()));
            if !(self.skip)(&self.path) {
                let lv = match l {
                    Some(l) => l.get(k),
                    None => None,
                };
                self.node(rv, lv);
            }
            self.path.pop();
        }
    }

    /// Whether every entry of a render map is skipped: the map is then as empty as one the
    /// caller had stripped of them.
    fn all_skipped(&mut self, render: &Value) -> bool {
        let Value::Object(r) = render else {
            return false;
        };
        r.keys().all(|k| {
            self.path.push(Step::Key(k.clone()));
            let skipped = (self.skip)(&self.path);
            self.path.pop();
            skipped
        })
    }

    /// Whether the API server drops `render` at the current path (`is_empty`), so that its
    /// absence live is no difference.
    fn dropped(&self, render: &Value) -> bool {
        is_empty(render)
            && !(matches!(render, Value::String(_)) && super::zero::keeps_empty_string(&self.path))
    }

    fn at(&mut self, step: Step, render: &Value, live: Option<&Value>) {
        self.path.push(step);
        self.node(render, live);
        self.path.pop();
    }

    fn only_live(&mut self, step: Step, live: &Value) {
        self.path.push(step);
        self.emit(None, Some(live));
        self.path.pop();
    }

    fn node(&mut self, render: &Value, live: Option<&Value>) {
        let Some(live) = live else {
            // A missing map is reported field by field, so each path says what it sets.
            if let Value::Object(r) = render {
                self.entries(r, None);
            } else if !self.dropped(render) {
                self.emit(Some(render), None);
            }
            return;
        };
        // Equal trees hold no difference, whatever the rules below say of their parts: one
        // comparison instead of a walk that spells every path (most objects of two renders of a
        // folder are equal, and so are most fields of a live object).
        if render == live {
            return;
        }
        // Quantities are scalars; `same_amount` holds for no other value.
        if matches!(render, Value::String(_) | Value::Number(_))
            && is_quantity(&self.path)
            && cilium_cmp_render::quantity::same_amount(render, live)
        {
            return;
        }
        match (render, live) {
            (Value::Object(r), Value::Object(l)) => self.entries(r, Some(l)),
            (Value::Array(r), Value::Array(l)) => {
                let field = match self.path.last() {
                    Some(Step::Key(k)) => k.as_str(),
                    _ => "",
                };
                match keyed(field, r, l) {
                    Some(key) => self.keyed_lists(key, r, l),
                    None => {
                        for (i, rv) in r.iter().enumerate() {
                            self.at(Step::Index(i), rv, l.get(i));
                        }
                        for (i, lv) in l.iter().enumerate().skip(r.len()) {
                            self.only_live(Step::Index(i), lv);
                        }
                    }
                }
            }
            (Value::Number(a), Value::Number(b)) => {
                if a.as_f64() != b.as_f64() {
                    self.emit(Some(render), Some(live));
                }
            }
            (r, l) if is_empty(l) && (is_empty(r) || self.all_skipped(r)) => {}
            // A null in a manifest sets nothing: the API server decodes it as an absent field
            // (e.g. the chart's `annotations:` with nothing under it), whatever tools added there.
            (Value::Null, _) => {}
            (r, l) => {
                if r != l {
                    self.emit(Some(render), Some(live));
                }
            }
        }
    }

    /// Items pair up by merge key; a key written twice (the chart does that with env vars the
    /// user repeats, and the API server accepts it) pairs the n-th item of each side with that
    /// key. One index of the live side's positions per key value, and a count of the keys seen
    /// so far on each side, make that linear.
    fn keyed_lists(&mut self, key: &str, r: &[Value], l: &[Value]) {
        let mut live_at: HashMap<KeyValue<'_>, Vec<usize>> = HashMap::new();
        for (j, lv) in l.iter().enumerate() {
            live_at
                .entry(KeyValue::of(lv.get(key)))
                .or_default()
                .push(j);
        }
        let mut render_seen: HashMap<KeyValue<'_>, usize> = HashMap::new();
        for rv in r {
            let k = KeyValue::of(rv.get(key));
            let n = render_seen.entry(k.clone()).or_insert(0);
            let live = live_at.get(&k).and_then(|at| at.get(*n)).map(|&j| &l[j]);
            *n += 1;
            self.at(Step::Item(item_name(rv, key)), rv, live);
        }
        let mut live_seen: HashMap<KeyValue<'_>, usize> = HashMap::new();
        for lv in l {
            let k = KeyValue::of(lv.get(key));
            let in_render = render_seen.get(&k).copied().unwrap_or(0);
            let n = live_seen.entry(k).or_insert(0);
            if *n >= in_render {
                self.only_live(Step::Item(item_name(lv, key)), lv);
            }
            *n += 1;
        }
    }
}

/// Whether the value at `path` is a resource quantity (`quantity::is_quantity_field`).
fn is_quantity(path: &[Step]) -> bool {
    let keys: Vec<&str> = path
        .iter()
        .filter_map(|s| match s {
            Step::Key(k) => Some(k.as_str()),
            _ => None,
        })
        .collect();
    cilium_cmp_render::quantity::is_quantity_field(&keys)
}

/// A merge key's value as an index key, equal exactly when the values are (`Value`'s `==`: a
/// string by its text, anything else by its JSON text, which tells `1` from `1.0` as `==` does).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum KeyValue<'a> {
    Absent,
    Text(&'a str),
    Json(String),
}

impl<'a> KeyValue<'a> {
    fn of(v: Option<&'a Value>) -> Self {
        match v {
            None => KeyValue::Absent,
            Some(Value::String(s)) => KeyValue::Text(s),
            Some(other) => KeyValue::Json(other.to_string()),
        }
    }
}

/// Differences past what a caller keeps (`bounds::MAX_RECORDED_DIFFERENCES`), counted by the
/// list (or map) they are in, so that a report can say "and 99,000 more differences in
/// spec.template.spec.containers[\"cilium-agent\"].env" without holding them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Omitted {
    /// The first few places, with their counts, in the order first seen.
    pub places: Vec<(Path, usize)>,
    /// Counted beyond those places.
    pub elsewhere: usize,
    /// Counted in all, in the named places and elsewhere.
    total: usize,
}

/// Places `Omitted` names; the rest are counted together.
const MAX_OMITTED_PLACES: usize = 8;

impl Omitted {
    /// Counts one more difference left out, at `path` (the place is its innermost list or map).
    pub fn count(&mut self, path: &[Step]) {
        self.total += 1;
        let place = place_of(path);
        if let Some(p) = self.places.iter_mut().find(|(p, _)| p.0 == place) {
            p.1 += 1;
        } else if self.places.len() < MAX_OMITTED_PLACES {
            self.places.push((Path(place.to_vec()), 1));
        } else {
            self.elsewhere += 1;
        }
    }

    /// Whether nothing was left out.
    pub(crate) fn is_empty(&self) -> bool {
        self.total == 0
    }

    /// One sentence per place, for a report.
    pub fn lines(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .places
            .iter()
            .map(|(p, n)| {
                let at = if p.0.is_empty() {
                    "at the object's top level".to_string()
                } else {
                    format!("in {p}")
                };
                format!(
                    "and {} more differences {at} (not listed: at most {} are kept per object)",
                    super::bounds::thousands(*n),
                    super::bounds::thousands(super::bounds::MAX_RECORDED_DIFFERENCES)
                )
            })
            .collect();
        if self.elsewhere > 0 {
            out.push(format!(
                "and {} more differences elsewhere (not listed)",
                super::bounds::thousands(self.elsewhere)
            ));
        }
        out
    }
}

/// Where a difference is, for counting: its innermost list, or its map when it is in none.
pub fn place_of(path: &[Step]) -> &[Step] {
    match path
        .iter()
        .rposition(|s| matches!(s, Step::Item(_) | Step::Index(_)))
    {
        Some(i) => &path[..i],
        None => &path[..path.len().saturating_sub(1)],
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
    fn empty_strings_of_config_maps_and_annotations_are_values() {
        let render = json!({"data": {"devices": ""},
            "metadata": {"annotations": {"a": ""}}, "spec": {"type": ""}});
        let paths: Vec<String> = differences(&render, &json!({}))
            .iter()
            .map(|d| d.path.to_string())
            .collect();
        assert_eq!(paths, ["data.devices", "metadata.annotations.a"]);
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
