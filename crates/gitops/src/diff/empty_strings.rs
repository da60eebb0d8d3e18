//! Empty strings the API server keeps, and numbers as the API server prints them.
//!
//! `adopt::compare` counts an empty string in a render as no field at all, which is right for a
//! typed field: a Go `string` with `omitempty` cannot hold "" apart from "unset", so the server
//! stores nothing there (k8s.io/api `core/v1/types.go`, e.g. `Container.WorkingDir string
//! json:"workingDir,omitempty"`). It is wrong where the field is a map of strings: ConfigMap
//! `data map[string]string`, `binaryData map[string][]byte`, Secret `data`/`stringData`,
//! ObjectMeta `labels`/`annotations map[string]string` and PodSpec `nodeSelector` keep every
//! entry, "" included (Go's `omitempty` omits an empty map, never an empty value inside one:
//! <https://pkg.go.dev/encoding/json#Marshal>). A custom resource is stored as the JSON it was sent
//! (<https://kubernetes.io/docs/concepts/extend-kubernetes/api-extension/custom-resources/>), so
//! every "" of one is kept too. A key that comes or goes with the value "" is then a change Argo
//! CD shows and the sync writes (`devices: ""` in cilium-config, which Cilium 1.20 renders).
//!
//! The comparison itself belongs to `adopt`; this module adds, for `diff`, the entries it leaves
//! out, and nothing it already reports.

use serde_json::Value;

use crate::adopt::compare::Step;

/// API groups served by the Kubernetes API server itself (typed objects); anything else a Cilium
/// render holds is a custom resource. From https://kubernetes.io/docs/reference/generated/kubernetes-api/.
const BUILT_IN_GROUPS: &[&str] = &[
    "",
    "apps",
    "batch",
    "policy",
    "autoscaling",
    "rbac.authorization.k8s.io",
    "networking.k8s.io",
    "admissionregistration.k8s.io",
    "apiextensions.k8s.io",
    "apiregistration.k8s.io",
    "scheduling.k8s.io",
    "coordination.k8s.io",
    "storage.k8s.io",
    "certificates.k8s.io",
    "discovery.k8s.io",
    "node.k8s.io",
    "resource.k8s.io",
    "flowcontrol.apiserver.k8s.io",
];

/// Whether objects of this API group are typed ones the API server itself serves.
pub(crate) fn is_built_in(group: &str) -> bool {
    BUILT_IN_GROUPS.contains(&group)
}

/// Whether the map at `path` of a built-in object is a map of strings, whose "" entries are kept.
fn keeps_empty_entries(kind: &str, path: &[Step]) -> bool {
    let keys: Vec<&str> = path
        .iter()
        .map(|s| match s {
            Step::Key(k) => k.as_str(),
            _ => "*",
        })
        .collect();
    match keys.as_slice() {
        ["data" | "binaryData"] if kind == "ConfigMap" => true,
        ["data" | "stringData"] if kind == "Secret" => true,
        [.., "metadata", "labels" | "annotations"] => true,
        [.., "spec", "nodeSelector"] => true,
        _ => false,
    }
}

/// Every place one side holds "" where the other has nothing (None for the side without it), in
/// the maps that keep "" (`keeps_empty_entries`) and, for a custom resource, anywhere maps and
/// lists of plain values reach. Lists of objects (containers, keyed by name) are not walked:
/// no Cilium render puts a kept "" inside one.
pub fn kept_empty_strings(
    group: &str,
    kind: &str,
    old: &Value,
    new: &Value,
) -> Vec<(Vec<Step>, Option<Value>, Option<Value>)> {
    let mut out = Vec::new();
    let everywhere = !is_built_in(group);
    walk(
        kind,
        everywhere,
        Some(old),
        Some(new),
        &mut Vec::new(),
        &mut out,
    );
    out
}

fn walk(
    kind: &str,
    everywhere: bool,
    old: Option<&Value>,
    new: Option<&Value>,
    path: &mut Vec<Step>,
    out: &mut Vec<(Vec<Step>, Option<Value>, Option<Value>)>,
) {
    let empty = |v: Option<&Value>| matches!(v, Some(Value::String(s)) if s.is_empty());
    let absent = |v: Option<&Value>| matches!(v, None | Some(Value::Null));
    match (old, new) {
        (Some(Value::Object(a)), Some(Value::Object(b))) => {
            let keeps = everywhere || keeps_empty_entries(kind, path);
            let keys: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
            for k in keys {
                path.push(Step::Key(k.clone()));
                let (x, y) = (a.get(k), b.get(k));
                if keeps && ((empty(x) && absent(y)) || (absent(x) && empty(y))) {
                    out.push((path.clone(), x.cloned(), y.cloned()));
                } else {
                    walk(kind, everywhere, x, y, path, out);
                }
                path.pop();
            }
        }
        // One side has the map and the other none: its "" entries come or go with it.
        (Some(Value::Object(m)), None) | (None, Some(Value::Object(m))) => {
            let keeps = everywhere || keeps_empty_entries(kind, path);
            for (k, v) in m {
                path.push(Step::Key(k.clone()));
                if keeps && empty(Some(v)) {
                    let v = Some(v.clone());
                    let (x, y) = if old.is_some() { (v, None) } else { (None, v) };
                    out.push((path.clone(), x, y));
                } else if v.is_object() {
                    let (x, y) = if old.is_some() {
                        (Some(v), None)
                    } else {
                        (None, Some(v))
                    };
                    walk(kind, everywhere, x, y, path, out);
                }
                path.pop();
            }
        }
        // A list of plain values keeps each item, "" included, wherever the object keeps what
        // it is sent (a custom resource).
        (Some(Value::Array(a)), Some(Value::Array(b))) if everywhere => {
            let scalars = |l: &[Value]| l.iter().all(|v| !v.is_object() && !v.is_array());
            if scalars(a) && scalars(b) {
                for i in 0..a.len().max(b.len()) {
                    let (x, y) = (a.get(i), b.get(i));
                    if (empty(x) && y.is_none()) || (x.is_none() && empty(y)) {
                        path.push(Step::Index(i));
                        out.push((path.clone(), x.cloned(), y.cloned()));
                        path.pop();
                    }
                }
            }
        }
        _ => {}
    }
}

/// Integers as the API server prints them (`adopt::zero::integers_as_integers`).
pub use crate::adopt::zero::integers_as_integers;

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_empty_config_entry_is_a_value_and_an_empty_typed_field_is_not() {
        let old = json!({"data": {"a": "1"}, "spec": {"workingDir": "x"}});
        let new = json!({"data": {"a": "1", "devices": ""}, "metadata": {"annotations": {"n": ""}},
            "spec": {"workingDir": "x", "hostname": ""}});
        let found = kept_empty_strings("", "ConfigMap", &old, &new);
        let paths: Vec<String> = found
            .iter()
            .map(|(p, _, _)| crate::adopt::compare::Path(p.clone()).to_string())
            .collect();
        assert_eq!(paths, ["data.devices", "metadata.annotations.n"]);
        assert_eq!(found[0].1, None);
        assert_eq!(found[0].2, Some(json!("")));
        // The other way round, the entry goes.
        let gone = kept_empty_strings("", "ConfigMap", &new, &old);
        assert_eq!(gone[0].1, Some(json!("")));
        assert!(kept_empty_strings("", "ConfigMap", &new, &new).is_empty());
    }

    #[test]
    fn a_custom_resource_keeps_every_empty_string() {
        let old = json!({"spec": {"a": "x"}});
        let new = json!({"spec": {"a": "x", "b": ""}});
        assert_eq!(
            kept_empty_strings("cilium.io", "CiliumX", &old, &new).len(),
            1
        );
        assert!(kept_empty_strings("apps", "Deployment", &old, &new).is_empty());
    }

    #[test]
    fn whole_numbers_print_without_a_fraction() {
        let mut v = json!({"replicas": 2.0, "ratio": 0.5, "list": [6.0]});
        integers_as_integers(&mut v);
        assert_eq!(v.to_string(), r#"{"list":[6],"ratio":0.5,"replicas":2}"#);
    }
}
