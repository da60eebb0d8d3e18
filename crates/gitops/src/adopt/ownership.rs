//! Who owns a field of a live object: `metadata.managedFields` read as server-side apply reads it.
//!
//! Each entry names a manager, its operation (`Apply` for server-side apply, `Update` for every
//! other write: Helm 3, `kubectl apply` client-side, `kubectl edit`, controllers) and the set of
//! fields it owns in the FieldsV1 encoding (sigs.k8s.io/structured-merge-diff `fieldpath/serialize.go`
//! and `serialize-pe.go`): `f:NAME` a map field, `k:{JSON}` a list item by its merge keys, `v:JSON`
//! an item of a set-like list, `i:N` a list position; `.` marks the node itself as owned (a map or
//! list item, besides its children); an empty node `{}` is an owned leaf, and a field whose list or
//! map is atomic is owned whole as a leaf.
//!
//! What a server-side apply by a new manager does with a field only the live object has follows
//! from its owners (<https://kubernetes.io/docs/reference/using-api/server-side-apply/>, "Field
//! management" and "Merge strategy"; kubernetes/kubernetes#99003): the apply removes a field only
//! when the applier was its sole owner and stops setting it, so a field some other manager owns
//! stays, whatever its value.
//!
//! Reading is bounded: the tree may be at most `limits::MAX_DEPTH` deep and hold at most
//! `MAX_NODES` nodes per entry, an object at most `bounds::MAX_MANAGED_FIELDS_ENTRIES` entries
//! and `bounds::MAX_MANAGED_FIELDS_NODES` nodes together; a malformed entry is an error naming it.
//! Looking a path up is linear in its length: each node indexes its children by what a path
//! step can name (`Probe`), so a list of 10,000 `k:` items is no scan per lookup, and every
//! lookup step is charged to the run's `bounds::MAX_OWNERSHIP_STEPS`.

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::bounds;
use super::compare::{Path, Step};
use cilium_cmp_yaml::limits;

/// Nodes one managedFields entry may hold.
pub const MAX_NODES: usize = 100_000;

const TOO_MANY: &str = "fieldsV1 holds more than";

/// How a manager wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    /// A server-side apply: a later apply by the same manager that leaves a field out removes
    /// it, when that manager is its sole owner.
    Apply,
    /// Every other write (Helm 3, client-side `kubectl apply`, `kubectl edit`, controllers).
    Update,
}

/// One element of a FieldsV1 path.
#[derive(Debug, Clone, PartialEq)]
enum Element {
    Field(String),
    Key(Map<String, Value>),
    Value(Value),
    Index(usize),
}

/// A set of fields, as a tree.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FieldSet {
    children: Vec<(Element, FieldSet)>,
    /// The positions in `children` each probe finds.
    index: HashMap<Probe, Vec<usize>>,
    /// `.`: the node itself is owned.
    itself: bool,
}

/// What a path step looks a child up by: a map field by name, a keyed item by the text of any
/// of its key values (as `names` reads them), a set item by value (as `same` compares), a
/// position.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Probe {
    Field(String),
    Name(String),
    Number(u64),
    Json(String),
    Index(usize),
}

/// The probe a set item `v:` is found by: numbers by their float value (`same`), anything else
/// by its JSON text, which is equal exactly when the values are.
fn value_probe(v: &Value) -> Probe {
    match v {
        Value::Number(n) => {
            let f = n.as_f64().unwrap_or(f64::NAN);
            // 0.0 and -0.0 are the same amount.
            Probe::Number(if f == 0.0 { 0 } else { f.to_bits() })
        }
        other => Probe::Json(other.to_string()),
    }
}

fn name_of(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => n.as_f64().map(|f| format!("{}", f as i64)),
        _ => None,
    }
}

impl FieldSet {
    fn is_leaf(&self) -> bool {
        self.children.is_empty()
    }

    fn add(&mut self, element: Element, child: FieldSet) {
        let at = self.children.len();
        let probes: Vec<Probe> = match &element {
            Element::Field(f) => vec![Probe::Field(f.clone())],
            Element::Key(keys) => keys.values().filter_map(name_of).map(Probe::Name).collect(),
            Element::Value(v) => vec![value_probe(v)],
            Element::Index(i) => vec![Probe::Index(*i)],
        };
        for p in probes {
            let at_probe = self.index.entry(p).or_default();
            if at_probe.last() != Some(&at) {
                at_probe.push(at);
            }
        }
        self.children.push((element, child));
    }

    fn found(&self, probe: &Probe) -> &[usize] {
        self.index.get(probe).map_or(&[], Vec::as_slice)
    }
}

/// One managedFields entry.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// The field manager's name (`helm`, `kubectl-client-side-apply`, `argocd-controller`);
    /// empty when the entry names none.
    pub manager: String,
    /// How it wrote.
    pub operation: Operation,
    /// `status`, `scale`, ... for writes to a subresource; empty for the object itself.
    pub subresource: String,
    /// The fields it owns (`fieldsV1`; empty when the entry has none).
    pub fields: FieldSet,
}

/// The object's managedFields, None when the dump has none (`kubectl get -o yaml` leaves them out
/// unless `--show-managed-fields` is given, kubectl ≥ 1.21).
pub fn entries(object: &Value) -> Result<Option<Vec<Entry>>, String> {
    let Some(list) = object.pointer("/metadata/managedFields") else {
        return Ok(None);
    };
    let Some(list) = list.as_array() else {
        return Err("metadata.managedFields is not a list".into());
    };
    if list.len() > bounds::MAX_MANAGED_FIELDS_ENTRIES {
        return Err(format!(
            "metadata.managedFields holds {} entries; at most {} are read (the API server keeps \
             at most 10 Update entries, merging older ones, and one per applier)",
            bounds::thousands(list.len()),
            bounds::MAX_MANAGED_FIELDS_ENTRIES
        ));
    }
    let mut object_budget = bounds::MAX_MANAGED_FIELDS_NODES;
    let mut out = Vec::new();
    for (i, e) in list.iter().enumerate() {
        let fail = |why: String| format!("metadata.managedFields[{i}]: {why}");
        let text = |k: &str| e.get(k).and_then(Value::as_str).unwrap_or("");
        let operation = match text("operation") {
            "Apply" => Operation::Apply,
            "Update" => Operation::Update,
            other => {
                return Err(fail(format!(
                    "operation {} is neither Apply nor Update",
                    limits::quoted(other)
                )))
            }
        };
        let fields = match e.get("fieldsV1") {
            None | Some(Value::Null) => FieldSet::default(),
            Some(v) => {
                let allowed = MAX_NODES.min(object_budget);
                let mut budget = allowed;
                let parsed = parse(v, 0, &mut budget).map_err(|why| {
                    fail(if why.starts_with(TOO_MANY) && allowed < MAX_NODES {
                        format!(
                            "the object's managedFields hold more than {} fields together",
                            bounds::thousands(bounds::MAX_MANAGED_FIELDS_NODES)
                        )
                    } else {
                        why
                    })
                })?;
                object_budget -= allowed - budget;
                parsed
            }
        };
        out.push(Entry {
            manager: text("manager").to_string(),
            operation,
            subresource: text("subresource").to_string(),
            fields,
        });
    }
    Ok(Some(out))
}

fn parse(v: &Value, depth: usize, budget: &mut usize) -> Result<FieldSet, String> {
    if depth > limits::MAX_DEPTH {
        return Err(format!("fieldsV1 nests deeper than {}", limits::MAX_DEPTH));
    }
    let Some(map) = v.as_object() else {
        return Err("fieldsV1 holds a value that is not a map".into());
    };
    let mut set = FieldSet::default();
    for (k, child) in map {
        if *budget == 0 {
            return Err(format!("{TOO_MANY} {MAX_NODES} fields"));
        }
        *budget -= 1;
        if k == "." {
            set.itself = true;
            continue;
        }
        let element = element(k).ok_or_else(|| {
            format!(
                "fieldsV1 key {} is not f:, k:, v:, i: or .",
                limits::quoted(k)
            )
        })?;
        // Each key value of a `k:` item is indexed: it costs as a node does.
        if let Element::Key(keys) = &element {
            *budget = budget
                .checked_sub(keys.len())
                .ok_or_else(|| format!("{TOO_MANY} {MAX_NODES} fields"))?;
        }
        let child = parse(child, depth + 1, budget)?;
        set.add(element, child);
    }
    Ok(set)
}

fn element(k: &str) -> Option<Element> {
    let (prefix, rest) = k.split_at_checked(2)?;
    match prefix {
        "f:" => Some(Element::Field(rest.to_string())),
        "k:" => match serde_json::from_str(rest).ok()? {
            Value::Object(m) => Some(Element::Key(m)),
            _ => None,
        },
        "v:" => serde_json::from_str(rest).ok().map(Element::Value),
        "i:" => rest.parse().ok().map(Element::Index),
        _ => None,
    }
}

/// Whether `set` holds `path` (or an atomic field above it, or something inside it). `value` is
/// the live value at `path`, for items of set-like lists, which are named by value. `steps` is
/// what the lookups may still take; `None` when they ran out.
pub fn holds(set: &FieldSet, path: &Path, value: &Value, steps: &mut usize) -> Option<bool> {
    holds_steps(set, &path.0, value, None, steps)
}

/// Structs the API marks `+structType=atomic` that a Cilium render holds (k8s.io/apimachinery
/// `pkg/apis/meta/v1/types.go` `LabelSelector`; k8s.io/api `core/v1/types.go`
/// `ObjectFieldSelector`, `ConfigMapKeySelector`, `SecretKeySelector`, `ResourceFieldSelector`,
/// `NodeSelector`): owning one owns all of it.
const ATOMIC_STRUCTS: &[&str] = &[
    "selector",
    "labelSelector",
    "namespaceSelector",
    "fieldRef",
    "configMapKeyRef",
    "secretKeyRef",
    "resourceFieldRef",
    "requiredDuringSchedulingIgnoredDuringExecution",
];

/// `field`: the map key that led to `set` (None at the root and under list items).
fn holds_steps(
    set: &FieldSet,
    steps: &[Step],
    value: &Value,
    field: Option<&str>,
    budget: &mut usize,
) -> Option<bool> {
    let Some((first, rest)) = steps.split_first() else {
        return Some(true);
    };
    if field.is_some() && set.is_leaf() {
        // A leaf with more path below it owns that path only when the value is atomic: a list
        // that is neither keyed nor a set (the path goes on by position) or an atomic struct.
        return Some(
            matches!(first, Step::Index(_)) || field.is_some_and(|f| ATOMIC_STRUCTS.contains(&f)),
        );
    }
    *budget = budget.checked_sub(1)?;
    let under = |probe: Probe, budget: &mut usize| -> Option<bool> {
        for &at in set.found(&probe) {
            let (e, child) = &set.children[at];
            *budget = budget.checked_sub(1)?;
            let hit = match (first, e) {
                (Step::Key(k), Element::Field(f)) => {
                    k == f && holds_steps(child, rest, value, Some(f.as_str()), budget)?
                }
                (Step::Item(name), Element::Key(keys)) => {
                    keys.values().any(|v| names(v, name))
                        && holds_steps(child, rest, value, None, budget)?
                }
                (Step::Index(_), Element::Value(v)) => rest.is_empty() && same(v, value),
                (Step::Index(i), Element::Index(j)) => {
                    i == j && holds_steps(child, rest, value, None, budget)?
                }
                _ => false,
            };
            if hit {
                return Some(true);
            }
        }
        Some(false)
    };
    match first {
        Step::Key(k) => under(Probe::Field(k.clone()), budget),
        Step::Item(name) => under(Probe::Name(name.clone()), budget),
        Step::Index(i) => {
            if rest.is_empty() && under(value_probe(value), budget)? {
                return Some(true);
            }
            under(Probe::Index(*i), budget)
        }
        Step::More(_) => Some(false),
    }
}

fn names(v: &Value, name: &str) -> bool {
    match v {
        Value::String(s) => s == name,
        Value::Number(n) => n.as_f64().is_some_and(|f| format!("{}", f as i64) == name),
        _ => false,
    }
}

fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        _ => a == b,
    }
}

/// The managers (on the object itself, not a subresource) whose set holds `path`; `Err` when the
/// lookups of the run took more than `bounds::MAX_OWNERSHIP_STEPS` (`steps` is what is left).
pub fn owners<'a>(
    entries: &'a [Entry],
    path: &Path,
    value: &Value,
    steps: &mut usize,
) -> Result<Vec<&'a Entry>, String> {
    let mut out = Vec::new();
    for e in entries.iter().filter(|e| e.subresource.is_empty()) {
        match holds(&e.fields, path, value, steps) {
            Some(true) => out.push(e),
            Some(false) => {}
            None => {
                return Err(format!(
                    "looking up who owns {path} took the ownership lookups of this run past {} \
                     steps (managedFields that name one list item very many times)",
                    bounds::thousands(bounds::MAX_OWNERSHIP_STEPS)
                ))
            }
        }
    }
    Ok(out)
}

/// The FieldsV1 set a manager owns after creating `object` with an Update: every field of the
/// (defaulted) object it sent, as the create handler computes it (see `defaults`). For tests that
/// build the managedFields of a realistic live dump.
pub fn fields_v1_of(object: &Value) -> Value {
    let mut out = Map::new();
    if let Value::Object(m) = object {
        for (k, v) in m {
            if k == "status" {
                continue;
            }
            out.insert(format!("f:{k}"), field_value(k, v, k == "metadata"));
        }
    }
    Value::Object(out)
}

fn field_value(name: &str, v: &Value, is_struct: bool) -> Value {
    match v {
        Value::Object(m) => {
            let mut out = Map::new();
            // Maps of arbitrary keys (labels, annotations, data) own themselves; struct fields
            // do not (structured-merge-diff marks `.` for map-typed and list-item nodes).
            if !is_struct
                && matches!(
                    name,
                    "labels"
                        | "annotations"
                        | "data"
                        | "matchLabels"
                        | "nodeSelector"
                        | "limits"
                        | "requests"
                )
            {
                out.insert(".".into(), Value::Object(Map::new()));
            }
            for (k, child) in m {
                let nested_struct = !matches!(name, "labels" | "annotations" | "data");
                out.insert(
                    format!("f:{k}"),
                    field_value(k, child, nested_struct && k == "metadata"),
                );
            }
            Value::Object(out)
        }
        Value::Array(items) => {
            let keys = items
                .first()
                .map(|i| super::compare::list_map_keys(name, i))
                .unwrap_or(&[]);
            if keys.is_empty() || !items.iter().all(Value::is_object) {
                return Value::Object(Map::new());
            }
            let mut out = Map::new();
            for item in items {
                let mut key = Map::new();
                for k in keys {
                    match item.get(*k) {
                        Some(Value::Number(n)) => {
                            let f = n.as_f64().unwrap_or(0.0);
                            key.insert((*k).into(), Value::from(f as i64));
                        }
                        Some(v) => {
                            key.insert((*k).into(), v.clone());
                        }
                        // The API server defaults `protocol` before the set is computed.
                        None if *k == "protocol" => {
                            key.insert((*k).into(), Value::from("TCP"));
                        }
                        None => {}
                    }
                }
                let mut node = match field_value("", item, true) {
                    Value::Object(m) => m,
                    _ => Map::new(),
                };
                node.insert(".".into(), Value::Object(Map::new()));
                let key_text = serde_json::to_string(&Value::Object(key)).unwrap_or_default();
                out.insert(format!("k:{key_text}"), Value::Object(node));
            }
            Value::Object(out)
        }
        _ => Value::Object(Map::new()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn p(steps: &[Step]) -> Path {
        Path(steps.to_vec())
    }

    fn key(k: &str) -> Step {
        Step::Key(k.into())
    }

    #[test]
    fn keyed_items_set_items_and_atomic_lists() {
        let object = json!({"metadata": {"managedFields": [
            {"manager": "helm", "operation": "Update", "fieldsV1": {
                "f:spec": {"f:template": {"f:spec": {"f:containers": {
                    "k:{\"name\":\"cilium-agent\"}": {".": {}, "f:args": {},
                        "f:ports": {"k:{\"containerPort\":4244,\"protocol\":\"TCP\"}": {".": {}, "f:hostPort": {}}},
                        "f:resources": {"f:limits": {".": {}, "f:memory": {}}}}}}}},
                "f:metadata": {"f:finalizers": {"v:\"x\"": {}}}}},
            {"manager": "argocd-controller", "operation": "Apply", "fieldsV1": {"f:spec": {"f:replicas": {}}}},
            {"manager": "kube-controller-manager", "operation": "Update", "subresource": "status",
             "fieldsV1": {"f:status": {"f:numberReady": {}}}}
        ]}});
        let e = entries(&object).unwrap().unwrap();
        let agent = [
            key("spec"),
            key("template"),
            key("spec"),
            key("containers"),
            Step::Item("cilium-agent".into()),
        ];
        let at = |rest: &[Step]| {
            let mut s = agent.to_vec();
            s.extend_from_slice(rest);
            owners(&e, &p(&s), &Value::Null, &mut 1000)
                .unwrap()
                .iter()
                .map(|e| e.manager.clone())
                .collect::<Vec<_>>()
        };
        assert_eq!(
            at(&[key("resources"), key("limits"), key("memory")]),
            ["helm"]
        );
        assert_eq!(at(&[key("args"), Step::Index(3)]), ["helm"], "atomic list");
        assert_eq!(
            at(&[key("ports"), Step::Item("4244".into()), key("hostPort")]),
            ["helm"]
        );
        assert!(at(&[key("resources"), key("limits"), key("cpu")]).is_empty());
        assert!(at(&[key("image")]).is_empty());
        let fin = p(&[key("metadata"), key("finalizers"), Step::Index(0)]);
        assert_eq!(owners(&e, &fin, &json!("x"), &mut 1000).unwrap().len(), 1);
        assert!(owners(&e, &fin, &json!("y"), &mut 1000).unwrap().is_empty());
        assert_eq!(
            owners(
                &e,
                &p(&[key("spec"), key("replicas")]),
                &Value::Null,
                &mut 1000
            )
            .unwrap()[0]
                .operation,
            Operation::Apply
        );
        assert!(owners(
            &e,
            &p(&[key("status"), key("numberReady")]),
            &Value::Null,
            &mut 1000
        )
        .unwrap()
        .is_empty());
    }

    #[test]
    fn no_managed_fields_is_none_and_bad_ones_are_named() {
        assert_eq!(entries(&json!({"metadata": {}})).unwrap(), None);
        let bad = json!({"metadata": {"managedFields": [{"manager": "x", "operation": "Update",
            "fieldsV1": {"q:odd": {}}}]}});
        let err = entries(&bad).unwrap_err();
        assert!(
            err.contains("managedFields[0]") && err.contains("q:odd"),
            "{err}"
        );
        let mut deep = json!({});
        for _ in 0..200 {
            deep = json!({"f:a": deep});
        }
        let bad = json!({"metadata": {"managedFields": [{"manager": "x", "operation": "Apply", "fieldsV1": deep}]}});
        assert!(entries(&bad).unwrap_err().contains("deeper"));
    }

    #[test]
    fn an_update_owns_every_field_it_sent() {
        let obj = json!({"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "cilium",
            "labels": {"k8s-app": "cilium"}},
            "spec": {"template": {"spec": {"containers": [{"name": "a", "args": ["--x"],
                "ports": [{"containerPort": 4244.0, "name": "h"}]}]}}}});
        let set = fields_v1_of(&obj);
        let e = entries(&json!({"metadata": {"managedFields": [
            {"manager": "helm", "operation": "Update", "fieldsV1": set}]}}))
        .unwrap()
        .unwrap();
        for path in [
            vec![key("metadata"), key("labels"), key("k8s-app")],
            vec![
                key("spec"),
                key("template"),
                key("spec"),
                key("containers"),
                Step::Item("a".into()),
                key("args"),
                Step::Index(0),
            ],
            vec![
                key("spec"),
                key("template"),
                key("spec"),
                key("containers"),
                Step::Item("a".into()),
                key("ports"),
                Step::Item("4244".into()),
                key("name"),
            ],
        ] {
            assert_eq!(
                owners(&e, &p(&path), &Value::Null, &mut 1000)
                    .unwrap()
                    .len(),
                1,
                "{path:?}"
            );
        }
    }
}
