//! Mirrors the chart's templates: cilium-resource-quota.yaml, cilium-secrets-namespace.yaml, cilium-dynamic-metrics-configmap.yaml, cilium-flowlog-configmap.yaml
//!
//! Also validate.yaml: the chart's `fail` checks live in `validate` and run first.

mod validate;

use std::collections::BTreeMap;

use serde_json::Value;

use crate::changes::Change;

use super::common::{common_labels, metadata};
use super::Ctx;
use crate::error::RenderError;
use crate::tmpl::{bare, print, quote, truthy};

pub fn render(ctx: &Ctx) -> Result<Vec<Value>, RenderError> {
    validate::validate(ctx)?;
    let mut out = resource_quotas(ctx);
    out.extend(secrets_namespaces(ctx));
    if ctx.on("hubble.metrics.dynamic.enabled")
        && ctx.on("hubble.metrics.dynamic.config.createConfigMap")
    {
        out.push(dynamic_metrics(ctx)?);
    }
    if ctx.on("hubble.export.dynamic.enabled")
        && ctx.on("hubble.export.dynamic.config.createConfigMap")
    {
        out.push(flowlog(ctx)?);
    }
    Ok(out)
}

/// Pod quotas for the critical priority classes; GKE needs them outside kube-system.
fn resource_quotas(ctx: &Ctx) -> Vec<Value> {
    let ns = ctx.namespace();
    let gke_elsewhere = ns != "kube-system" && ctx.on("gke.enabled");
    if !(ctx.on("resourceQuotas.enabled") || gke_elsewhere) {
        return Vec::new();
    }
    let quota_spec = |pods: &Value, class: &str| {
        tree!({
            "hard": {"pods": quote(pods)},
            "scopeSelector": {"matchExpressions": [{
                "operator": "In", "scopeName": "PriorityClass", "values": [class],
            }]},
        })
    };
    let mut out = Vec::new();
    if ctx.on("agent") {
        out.push(tree!({
            "apiVersion": "v1",
            "kind": "ResourceQuota",
            "metadata": metadata("cilium-resource-quota", Some(&ns), None, None),
            "spec": quota_spec(ctx.v("resourceQuotas.cilium.hard.pods"), "system-node-critical"),
        }));
    }
    if ctx.on("operator.enabled") {
        let labels = Some(super::common::part_of_labels(ctx, &[]));
        out.push(tree!({
            "apiVersion": "v1",
            "kind": "ResourceQuota",
            "metadata": metadata("cilium-operator-resource-quota", Some(&ns), labels, None),
            "spec": quota_spec(ctx.v("resourceQuotas.operator.hard.pods"), "system-cluster-critical"),
        }));
    }
    out
}

/// The namespaces that hold TLS secrets for Ingress, Gateway API, Envoy config, BGP and the
/// agent, each created once however many features share it.
fn secrets_namespaces(ctx: &Ctx) -> Vec<Value> {
    let preflight = ctx.on("preflight.enabled");
    // The pre-flight check runs next to an existing installation, which already has them.
    if preflight && ctx.plan.has(Change::SecretsNamespacesSkippedInPreflight) {
        return Vec::new();
    }
    let mut names = BTreeMap::new();
    for feature in [
        "ingressController",
        "gatewayAPI",
        "envoyConfig",
        "bgpControlPlane",
    ] {
        let name = ctx.v(&format!("{feature}.secretsNamespace.name"));
        if ctx.on(&format!("{feature}.enabled"))
            && ctx.on(&format!("{feature}.secretsNamespace.create"))
            && truthy(name)
        {
            names.insert(print(name), ());
        }
    }
    let name = ctx.v("tls.secretsNamespace.name");
    if ctx.on("tls.secretsNamespace.create") && truthy(name) && !preflight {
        names.insert(print(name), ());
    }
    let own_labels = if ctx.plan.has(Change::SecretsNamespaceLabels) {
        ctx.v("secretsNamespaceLabels")
    } else {
        &Value::Null
    };
    let labels = Some(super::common::part_of_labels(ctx, &[own_labels]));
    let annotations = ctx.v("secretsNamespaceAnnotations");
    names
        .into_keys()
        .map(|name| {
            tree!({
                "apiVersion": "v1",
                "kind": "Namespace",
                "metadata": metadata(&name, None, labels.clone(), truthy(annotations).then(|| annotations.clone())),
            })
        })
        .collect()
}

/// `app.kubernetes.io/part-of` (and, from 1.20, `helm.sh/chart`), `commonLabels`, then `extra`.
/// Indents every line as the chart's `nindent` does inside a `|` block at `base` columns, and
/// returns what the block scalar then reads: the lines relative to `base`.
fn block_lines(text: &str, extra: usize) -> String {
    let pad = " ".repeat(extra);
    text.split('\n')
        .map(|l| format!("{pad}{l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn configmap(ctx: &Ctx, name_path: &str, key: &str, body: String) -> Value {
    let ns = ctx.namespace();
    let name = match bare(ctx.v(name_path)) {
        Value::String(s) => s,
        other => print(&other),
    };
    tree!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": metadata(&name, Some(&ns), common_labels(ctx), None),
        "data": {key: body},
    })
}

fn dynamic_metrics(ctx: &Ctx) -> Result<Value, RenderError> {
    let path = "hubble.metrics.dynamic.config.content";
    let content = ctx.v(path);
    // The chart's values schema accepts only a list here.
    if !matches!(content, Value::Array(_) | Value::Null) {
        return Err(ctx.invalid(path, "must be a list of metric definitions"));
    }
    let body = if truthy(content) {
        format!(
            "metrics:\n{}\n",
            block_lines(&crate::yaml::go_emit::to_yaml(content), 2)
        )
    } else {
        String::new()
    };
    Ok(configmap(
        ctx,
        "hubble.metrics.dynamic.config.configMapName",
        "dynamic-metrics.yaml",
        body,
    ))
}

/// Flow-log exporters; the file rotation settings from the pre-1.18 location still override
/// each exporter's own, as the chart does for seamless upgrades.
fn flowlog(ctx: &Ctx) -> Result<Value, RenderError> {
    let path = "hubble.export.dynamic.config.content";
    let export = ctx.v("hubble.export");
    let mut body = String::from("flowLogs:");
    let items: &[Value] = match ctx.v(path) {
        Value::Array(a) => a,
        Value::Null => &[],
        // The chart's values schema accepts only a list here.
        _ => return Err(ctx.invalid(path, "must be a list of flow log exporters")),
    };
    for item in items {
        let Value::Object(m) = item else {
            return Err(ctx.invalid(
                path,
                "every entry must be a map describing one flow log exporter",
            ));
        };
        let mut m = m.clone();
        for key in ["fileMaxSizeMb", "fileMaxBackups", "fileCompress"] {
            if let Some(v) = export.get(key) {
                m.insert(key.to_string(), v.clone());
            }
        }
        body.push('\n');
        body.push_str(&block_lines(
            &crate::yaml::go_emit::to_yaml(&Value::Array(vec![Value::Object(m)])),
            2,
        ));
    }
    body.push('\n');
    Ok(configmap(
        ctx,
        "hubble.export.dynamic.config.configMapName",
        "flowlogs.yaml",
        body,
    ))
}
