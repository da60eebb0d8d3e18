//! Helpers the chart shares between components (its `_helpers.tpl`), in one place.

use serde_json::{Map, Value};

use super::Ctx;
use crate::error::RenderError;
use crate::tmpl::{print, truthy};

/// An image reference from an image block (`repository`, `tag`, `digest`, `useDigest`,
/// `override`): `override` wins, else `repository[:tag][@digest]`.
pub fn image(block: &Value) -> String {
    let over = &block["override"];
    if truthy(over) {
        return print(over);
    }
    let mut s = print_or_empty(&block["repository"]);
    let tag = &block["tag"];
    if truthy(tag) {
        s.push(':');
        s.push_str(&print(tag));
    }
    if truthy(&block["useDigest"]) {
        s.push('@');
        s.push_str(&print_or_empty(&block["digest"]));
    }
    s
}

fn print_or_empty(v: &Value) -> String {
    if v.is_null() {
        String::new()
    } else {
        print(v)
    }
}

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

/// What the chart's `envoyDaemonSetEnabled` helper prints: `false` without L7 proxying, else
/// `envoy.enabled` as written, else `true` (Cilium >= 1.16 behaviour, `upgradeCompatibility` aside).
pub fn envoy_daemonset_text(ctx: &Ctx) -> String {
    if !ctx.on("l7Proxy") {
        return "false".into();
    }
    let e = ctx.v("envoy.enabled");
    if !e.is_null() {
        return print(e);
    }
    upgrade_compat_at_least(ctx, 1, 16).to_string()
}

/// The standalone Envoy DaemonSet runs: the chart compares the helper's text with "true".
pub fn envoy_daemonset_enabled(ctx: &Ctx) -> bool {
    envoy_daemonset_text(ctx) == "true"
}

/// `semverCompare ">=X.Y" (default "X.Y" .Values.upgradeCompatibility)`.
pub fn upgrade_compat_at_least(ctx: &Ctx, major: u64, minor: u64) -> bool {
    let uc = ctx.v("upgradeCompatibility");
    if !truthy(uc) {
        return true;
    }
    let text = print(uc);
    let mut parts = text.trim_start_matches('v').split('.');
    let maj = parts
        .next()
        .and_then(|p| p.parse::<u64>().ok())
        .unwrap_or(0);
    let min = parts
        .next()
        .and_then(|p| {
            p.split(['-', '+'])
                .next()
                .and_then(|p| p.parse::<u64>().ok())
        })
        .unwrap_or(0);
    (maj, min) >= (major, minor)
}

/// `readSecretsOnlyFromSecretsNamespace`, defaulting from `tls.secretsBackend`.
pub fn read_secrets_only_from_secrets_namespace(ctx: &Ctx) -> bool {
    let own = ctx.v("tls.readSecretsOnlyFromSecretsNamespace");
    // The chart compares the helper's printed text with "true".
    if !own.is_null() {
        return print(own) == "true";
    }
    let backend = ctx.v("tls.secretsBackend");
    if !backend.is_null() {
        return print(backend) == "local";
    }
    true
}

/// `secretSyncEnabled`, defaulting on from Cilium 1.17 compatibility.
pub fn secret_sync_enabled(ctx: &Ctx) -> bool {
    let own = ctx.v("tls.secretSync.enabled");
    // The chart compares the helper's printed text with "true".
    if !own.is_null() {
        return print(own) == "true";
    }
    upgrade_compat_at_least(ctx, 1, 17)
}

/// `identityAllocationCRD`: identities are stored as CRDs in these modes.
pub fn identity_allocation_crd(ctx: &Ctx) -> bool {
    matches!(
        ctx.text("identityAllocationMode").as_str(),
        "crd" | "doublewrite-readkvstore" | "doublewrite-readcrd"
    )
}

/// `k8sServiceHost` / `k8sServicePort`: `auto` needs a `lookup` in a live cluster, which a
/// deterministic render cannot do, so it is refused.
pub fn k8s_service_host(ctx: &Ctx) -> Result<String, RenderError> {
    let host = ctx.text("k8sServiceHost");
    if host == "auto" {
        return Err(ctx.invalid(
            "k8sServiceHost",
            "\"auto\" makes the chart look the API server up in the live cluster (kube-public/cluster-info), which a deterministic render cannot do; write the API server's host name or address (and k8sServicePort) instead",
        ));
    }
    Ok(host)
}

/// The API server port as the chart prints it (see `k8s_service_host` for `auto`).
pub fn k8s_service_port(ctx: &Ctx) -> Result<String, RenderError> {
    k8s_service_host(ctx)?;
    Ok(ctx.text("k8sServicePort"))
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn image_references() {
        assert_eq!(
            image(
                &json!({"repository": "quay.io/cilium/cilium", "tag": "v1.18.0", "useDigest": true, "digest": "sha256:ab"})
            ),
            "quay.io/cilium/cilium:v1.18.0@sha256:ab"
        );
        assert_eq!(
            image(&json!({"repository": "r", "tag": "", "useDigest": false})),
            "r"
        );
        assert_eq!(
            image(&json!({"override": "x/y:z", "repository": "r"})),
            "x/y:z"
        );
    }
}
