//! Object metadata: names, labels (the chart's fixed pairs, `commonLabels`, the `helm.sh/chart` label) and annotations, and the small map helpers that build them.

use serde_json::{Map, Value};

use crate::changes::Change;
use crate::components::Ctx;
use crate::tmpl::{truthy, with};

/// `commonLabels` as an object's labels, or nothing when empty.
pub fn common_labels(ctx: &Ctx) -> Option<Value> {
    let l = ctx.v("commonLabels");
    truthy(l).then(|| l.clone())
}

/// Merges maps left to right (later keys win), as consecutive `toYaml` blocks do when their keys
/// differ; absent and empty maps are skipped. Returns None when the result is empty.
pub fn merged(maps: &[&Value]) -> Option<Value> {
    let mut out = Map::new();
    for m in maps {
        if let Value::Object(m) = m {
            for (k, v) in m {
                out.insert(k.clone(), v.clone());
            }
        }
    }
    (!out.is_empty()).then_some(Value::Object(out))
}

/// Inserts `key: value` into an object unless value is None.
pub fn put(obj: &mut Value, key: &str, value: Option<Value>) {
    if let (Value::Object(m), Some(v)) = (obj, value) {
        m.insert(key.to_string(), v);
    }
}

/// A run of the chart's `with VALUE` blocks that insert the value under a key: each
/// (key, value path) inserted only when the value is Go-template true.
pub fn put_with(obj: &mut Value, ctx: &Ctx, pairs: &[(&str, &str)]) {
    for (key, path) in pairs {
        put(obj, key, with(ctx.v(path)));
    }
}

/// Object metadata with name, optional namespace, and labels/annotations when non-empty.
pub fn metadata(
    name: &str,
    namespace: Option<&str>,
    labels: Option<Value>,
    annotations: Option<Value>,
) -> Value {
    let mut m = Map::new();
    m.insert("name".into(), Value::String(name.to_string()));
    if let Some(ns) = namespace {
        m.insert("namespace".into(), Value::String(ns.to_string()));
    }
    if let Some(l) = labels.filter(truthy) {
        m.insert("labels".into(), l);
    }
    if let Some(a) = annotations.filter(truthy) {
        m.insert("annotations".into(), a);
    }
    Value::Object(m)
}

/// A label map as the chart writes it: its fixed pairs, then each user map's `toYaml` block in
/// order (later keys win, as the last of duplicate YAML keys does; non-maps add nothing). Always
/// a map; `metadata` leaves an empty one out.
pub fn labels(fixed: &[(&str, &str)], maps: &[&Value]) -> Value {
    let mut m: Map<String, Value> = fixed
        .iter()
        .map(|(k, v)| ((*k).to_string(), Value::String((*v).to_string())))
        .collect();
    for extra in maps {
        if let Value::Object(e) = extra {
            for (k, v) in e {
                m.insert(k.clone(), v.clone());
            }
        }
    }
    Value::Object(m)
}

/// The labels a component's own objects carry in the chart: `k8s-app` and
/// `app.kubernetes.io/name` both the component's name, and part of cilium.
pub const fn app_labels(app: &'static str) -> [(&'static str, &'static str); 3] {
    [
        ("k8s-app", app),
        ("app.kubernetes.io/name", app),
        ("app.kubernetes.io/part-of", "cilium"),
    ]
}

/// `fixed` plus `helm.sh/chart` where the release writes it (from 1.20, on most objects; each
/// caller is an object whose template has the label).
pub fn with_chart_label<'a>(ctx: &'a Ctx, fixed: &[(&'a str, &'a str)]) -> Vec<(&'a str, &'a str)> {
    let mut out = fixed.to_vec();
    if ctx.plan.has(Change::HelmChartLabel) {
        out.push(("helm.sh/chart", ctx.plan.chart_label.as_str()));
    }
    out
}

/// The labels of node-init's and ztunnel's objects: `app` and `app.kubernetes.io/name` both the
/// component's name, part of cilium, and `helm.sh/chart` where the release writes it.
pub fn node_component_labels<'a>(ctx: &'a Ctx, name: &'a str) -> Vec<(&'a str, &'a str)> {
    with_chart_label(
        ctx,
        &[
            ("app", name),
            ("app.kubernetes.io/part-of", "cilium"),
            ("app.kubernetes.io/name", name),
        ],
    )
}

/// The label every object of the chart carries.
pub const PART_OF_CILIUM: (&str, &str) = ("app.kubernetes.io/part-of", "cilium");

/// The labels of the chart's objects that belong to Cilium as a whole rather than to one pod
/// (RBAC objects, namespaces, quotas): part of cilium, `helm.sh/chart` where the release writes
/// it, then `commonLabels`, then `extra`.
pub fn part_of_labels(ctx: &Ctx, extra: &[&Value]) -> Value {
    labels_with_common(ctx, &with_chart_label(ctx, &[PART_OF_CILIUM]), extra)
}

/// `labels` with `commonLabels` right after the fixed pairs and before `extra`, the order in
/// which most of the chart's objects write them.
pub fn labels_with_common(ctx: &Ctx, fixed: &[(&str, &str)], extra: &[&Value]) -> Value {
    let mut maps: Vec<&Value> = vec![ctx.v("commonLabels")];
    maps.extend_from_slice(extra);
    labels(fixed, &maps)
}

#[cfg(test)]
mod tests {
    use super::super::tests::with_ctx;
    use super::*;
    use serde_json::json;

    #[test]
    fn labels_merge_in_order() {
        let l = labels(
            &[("a", "1"), ("b", "2")],
            &[
                &json!({"b": "x", "c": "3"}),
                &Value::Null,
                &json!("s"),
                &json!({"c": "y"}),
            ],
        );
        assert_eq!(l, json!({"a": "1", "b": "x", "c": "y"}));
        assert_eq!(labels(&[], &[]), json!({}));
        with_ctx("commonLabels: {team: net, a: common}", "1.35.0", |ctx| {
            let l = labels_with_common(ctx, &[("a", "own")], &[&json!({"team": "user"})]);
            assert_eq!(l, json!({"a": "common", "team": "user"}));
        });
    }

    #[test]
    fn part_of_cilium_then_common_labels() {
        let values = "commonLabels: {team: net}";
        let l = with_ctx(values, "1.35.0", |ctx| {
            part_of_labels(ctx, &[&json!({"x": "y"})])
        });
        assert_eq!(
            l,
            json!({"app.kubernetes.io/part-of": "cilium", "team": "net", "x": "y"})
        );
        // From 1.20 the chart's own label joins it.
        let l = crate::components::common::tests::with_release("1.20.0", "{}", "1.35.0", |ctx| {
            part_of_labels(ctx, &[])
        });
        assert!(l["helm.sh/chart"]
            .as_str()
            .is_some_and(|c| c.starts_with("cilium-")));
    }
}
