//! What the components' pods and their companions share: priority classes, spliced user lists, host path mounts, topology spread, PodDisruptionBudgets and ServiceAccounts.

use serde_json::{Map, Value};

use super::labels::{common_labels, labels, labels_with_common, metadata, put};
use crate::components::Ctx;
use crate::error::RenderError;
use crate::tmpl::{bare, print, quote, range_items, truthy, with};

/// `cilium.priorityClass`: the component's own class, else the critical class when
/// `enableCriticalPriorityClass` is on.
pub fn priority_class(ctx: &Ctx, own: &Value, critical: &str) -> Option<String> {
    if truthy(own) {
        Some(print(own))
    } else if ctx.on("enableCriticalPriorityClass") && !critical.is_empty() {
        Some(critical.to_string())
    } else {
        None
    }
}

/// The items of a user list that the chart splices into one of its own lists with `toYaml`
/// (extra args, env, volumes, containers). Anything but a list would not produce list items
/// in Helm's output either, so it is refused; unset and empty values add nothing.
pub fn list_items(ctx: &Ctx, path: &str) -> Result<Vec<Value>, RenderError> {
    match ctx.v(path) {
        v if !truthy(v) => Ok(Vec::new()),
        Value::Array(a) => Ok(a.clone()),
        _ => Err(ctx.invalid(path, "must be a list")),
    }
}

/// `priorityClassName:` as a pod spec gets it: `priority_class` printed bare into the YAML,
/// and nothing when no class applies.
pub fn priority_class_name(ctx: &Ctx, own: &Value, critical: &str) -> Option<Value> {
    priority_class(ctx, own, critical).map(|c| bare(&Value::String(c)))
}

/// The ServiceAccount `serviceAccounts.<account>`: its `name`, Cilium's namespace,
/// `commonLabels`, and the given annotations (callers merge the component's and the account's
/// own maps in the order their template writes them, which differs between components).
pub fn service_account(ctx: &Ctx, account: &str, annotations: Option<Value>) -> Value {
    tree!({
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": metadata(
            &quote(ctx.v(&format!("serviceAccounts.{account}.name"))),
            Some(&ctx.namespace()),
            common_labels(ctx),
            annotations,
        ),
    })
}

/// The ServiceAccount `serviceAccounts.<account>` as the subject of a (Cluster)RoleBinding.
pub fn service_account_subject(ctx: &Ctx, account: &str) -> Value {
    tree!({
        "kind": "ServiceAccount",
        "name": quote(ctx.v(&format!("serviceAccounts.{account}.name"))),
        "namespace": ctx.namespace(),
    })
}

/// A component's PodDisruptionBudget, built from its `podDisruptionBudget` values `block`:
/// the budget fields only when set, and the eviction policy only where Kubernetes (1.27+)
/// knows the field. `own_labels` come before `commonLabels` in its metadata.
pub fn pod_disruption_budget(
    ctx: &Ctx,
    name: &str,
    block: &Value,
    selector: &[(&str, &str)],
    own_labels: &[(&str, &str)],
    annotations: &Value,
) -> Value {
    let mut spec = Map::new();
    for key in ["maxUnavailable", "minAvailable"] {
        if truthy(&block[key]) {
            spec.insert(key.into(), bare(&block[key]));
        }
    }
    let policy = &block["unhealthyPodEvictionPolicy"];
    if ctx.plan.kube.pdb_unhealthy_pod_eviction_policy() && truthy(policy) {
        spec.insert("unhealthyPodEvictionPolicy".into(), bare(policy));
    }
    spec.insert(
        "selector".into(),
        tree!({"matchLabels": labels(selector, &[])}),
    );
    tree!({
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": metadata(
            name,
            Some(&ctx.namespace()),
            Some(labels_with_common(ctx, own_labels, &[])),
            with(annotations),
        ),
        "spec": spec,
    })
}

/// `topologySpreadConstraints` as the chart writes them: each constraint as given, and one
/// without a label selector gets the component's own pods (`selector`) as its selector.
/// None when there are none.
pub fn topology_spread(constraints: &Value, selector: &[(&str, &str)]) -> Option<Value> {
    if !truthy(constraints) {
        return None;
    }
    let items = range_items(constraints)
        .into_iter()
        .map(|c| {
            let mut c = c.clone();
            if !truthy(&c["labelSelector"]) {
                put(
                    &mut c,
                    "labelSelector",
                    Some(tree!({"matchLabels": labels(selector, &[])})),
                );
            }
            c
        })
        .collect();
    Some(Value::Array(items))
}

/// The volume mounts and the hostPath volumes of an `extraHostPathMounts` list (`path`), in
/// the same order. Each entry must be a map; `not_a_map` says so in the component's words.
pub fn host_path_mounts(
    ctx: &Ctx,
    path: &str,
    not_a_map: &str,
) -> Result<(Vec<Value>, Vec<Value>), RenderError> {
    let entries = list_items(ctx, path)?;
    if entries.iter().any(|m| !m.is_object()) {
        return Err(ctx.invalid(path, not_a_map));
    }
    let mut mounts = Vec::new();
    let mut volumes = Vec::new();
    for m in entries {
        let mut mount = tree!({
            "name": bare(&m["name"]),
            "mountPath": bare(&m["mountPath"]),
            "readOnly": bare(&m["readOnly"]),
        });
        if truthy(&m["mountPropagation"]) {
            put(
                &mut mount,
                "mountPropagation",
                Some(bare(&m["mountPropagation"])),
            );
        }
        mounts.push(mount);
        let mut host = tree!({"path": bare(&m["hostPath"])});
        if truthy(&m["hostPathType"]) {
            put(&mut host, "type", Some(bare(&m["hostPathType"])));
        }
        volumes.push(tree!({"name": bare(&m["name"]), "hostPath": host}));
    }
    Ok((mounts, volumes))
}

/// From 1.20 (`MinReadySecondsFromValues`) a DaemonSet's `minReadySeconds` comes from the value
/// at `path` when it is set; the Envoy, ztunnel, DNS proxy and node-init templates share this rule.
pub fn min_ready_seconds_from(ctx: &Ctx, spec: &mut Value, path: &str) {
    if ctx
        .plan
        .has(crate::changes::Change::MinReadySecondsFromValues)
        && ctx.on(path)
    {
        put(spec, "minReadySeconds", Some(bare(ctx.v(path))));
    }
}

/// How the operator and Envoy word a non-map entry of `extraHostPathMounts`.
pub const HOST_PATH_NOT_A_MAP: &str = "every entry must be a mapping";

/// The ServiceAccount `serviceAccounts.<account>`, annotated with the component's annotations
/// and then the account's own, to which `extra` is added in place (so it wins over a user key of
/// the same name).
pub fn service_account_object(
    ctx: &Ctx,
    account: &str,
    component_annotations: &Value,
    extra: Option<(&str, Value)>,
) -> Value {
    let mut own = ctx
        .v(&format!("serviceAccounts.{account}.annotations"))
        .clone();
    if let Some((k, v)) = extra {
        if let Value::Object(m) = &mut own {
            m.insert(k.to_string(), v);
        } else if own.is_null() {
            own = tree!({ k: v });
        }
    }
    service_account(ctx, account, super::merged(&[component_annotations, &own]))
}

/// `ternary "127.0.0.1" "::1" .Values.ipv4.enabled`: the loopback address probes use.
pub fn loopback(ctx: &Ctx) -> &'static str {
    if ctx.on("ipv4.enabled") {
        "127.0.0.1"
    } else {
        "::1"
    }
}

/// Pod template metadata: labels always, annotations when any.
pub fn metadata_pod(labels: Value, annotations: Option<Value>) -> Value {
    let mut m = tree!({"labels": labels});
    put(&mut m, "annotations", annotations);
    m
}

#[cfg(test)]
mod tests {
    use super::super::tests::with_ctx;
    use super::*;
    use serde_json::json;

    #[test]
    fn spliced_lists() {
        with_ctx("extraArgs: [--a]\nextraEnv: {A: b}\n", "1.35.0", |ctx| {
            assert_eq!(list_items(ctx, "extraArgs").ok(), Some(vec![json!("--a")]));
            assert!(list_items(ctx, "extraVolumes").is_ok_and(|v| v.is_empty()));
            assert!(list_items(ctx, "extraEnv").is_err());
        });
    }

    #[test]
    fn pod_disruption_budgets() {
        let block = json!({"maxUnavailable": 1.0, "minAvailable": null, "unhealthyPodEvictionPolicy": "AlwaysAllow"});
        let pdb = |kube: &str| {
            with_ctx("{}", kube, |ctx| {
                pod_disruption_budget(
                    ctx,
                    "x",
                    &block,
                    &[("k8s-app", "x")],
                    &[("k8s-app", "x")],
                    &Value::Null,
                )
            })
        };
        let new = pdb("1.35.0");
        assert_eq!(new["spec"]["maxUnavailable"], json!(1.0));
        assert!(new["spec"].get("minAvailable").is_none());
        assert_eq!(new["spec"]["unhealthyPodEvictionPolicy"], "AlwaysAllow");
        assert_eq!(
            new["spec"]["selector"]["matchLabels"],
            json!({"k8s-app": "x"})
        );
        assert!(new["metadata"].get("annotations").is_none());
        assert!(pdb("1.26.0")["spec"]
            .get("unhealthyPodEvictionPolicy")
            .is_none());
    }

    #[test]
    fn spread_constraints_default_to_own_pods() {
        let c =
            json!([{"maxSkew": 1}, {"maxSkew": 2, "labelSelector": {"matchLabels": {"a": "b"}}}]);
        let out = topology_spread(&c, &[("k8s-app", "hubble-ui")]).unwrap_or_default();
        assert_eq!(
            out[0]["labelSelector"]["matchLabels"],
            json!({"k8s-app": "hubble-ui"})
        );
        assert_eq!(out[1]["labelSelector"]["matchLabels"]["a"], "b");
        assert!(topology_spread(&json!([]), &[("k8s-app", "x")]).is_none());
    }

    #[test]
    fn host_path_mounts_pair_up() {
        let values = "extraHostPathMounts: [{name: a, mountPath: /a, hostPath: /h, hostPathType: Directory}]\n";
        with_ctx(values, "1.35.0", |ctx| {
            let (m, v) = host_path_mounts(ctx, "extraHostPathMounts", "bad").unwrap_or_default();
            assert_eq!(m[0]["mountPath"], "/a");
            assert!(m[0].get("mountPropagation").is_none());
            assert_eq!(
                v[0],
                json!({"name": "a", "hostPath": {"path": "/h", "type": "Directory"}})
            );
        });
        with_ctx("extraHostPathMounts: [a]\n", "1.35.0", |ctx| {
            let e = host_path_mounts(ctx, "extraHostPathMounts", "entries must be maps");
            assert!(e.is_err_and(|e| e.to_string().contains("entries must be maps")));
        });
    }
}
