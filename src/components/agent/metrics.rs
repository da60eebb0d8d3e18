//! How the agent is observed: its headless metrics Service, the Prometheus Operator
//! ServiceMonitor, and the Grafana dashboard ConfigMaps read from the chart archive.

use serde_json::{json, Map, Value};

use super::{agent_on, bare_at};
use crate::components::common::{
    envoy_daemonset_enabled, labels, merged, metadata, scrape_endpoint,
};
use crate::components::Ctx;
use crate::error::RenderError;
use crate::tmpl::{bare, quote, quoted, truthy, with};

const DASHBOARDS: &str = "files/cilium-agent/dashboards/";

pub fn render(ctx: &Ctx) -> Result<Vec<Value>, RenderError> {
    let mut out = Vec::new();
    if agent_on(ctx) && ctx.on("prometheus.enabled") {
        out.extend(service(ctx));
        if ctx.on("prometheus.serviceMonitor.enabled") {
            out.push(service_monitor(ctx));
        }
    }
    if ctx.on("dashboards.enabled") {
        out.extend(dashboards(ctx)?);
    }
    Ok(out)
}

fn agent_labels(ctx: &Ctx) -> Value {
    labels(
        &[
            ("k8s-app", "cilium"),
            ("app.kubernetes.io/name", "cilium-agent"),
            ("app.kubernetes.io/part-of", "cilium"),
        ],
        &[ctx.v("commonLabels")],
    )
}

fn port(name: &str, port: Value, target: &str) -> Value {
    json!({"name": name, "port": port, "protocol": "TCP", "targetPort": target})
}

fn service(ctx: &Ctx) -> Option<Value> {
    let envoy_ds = envoy_daemonset_enabled(ctx);
    let (annotations, ports) =
        if ctx.on("prometheus.serviceMonitor.enabled") || ctx.on("prometheus.metricsService") {
            let mut ports = vec![port(
                "metrics",
                bare_at(ctx, "prometheus.port"),
                "prometheus",
            )];
            if !envoy_ds {
                ports.push(port(
                    "envoy-metrics",
                    bare_at(ctx, "envoy.prometheus.port"),
                    "envoy-metrics",
                ));
            }
            (with(ctx.v("annotations")), ports)
        } else if ctx.on("envoy.prometheus.enabled") && !envoy_ds {
            // Only Envoy's metrics, scraped through annotations.
            let annotations = json!({
                "prometheus.io/scrape": "true",
                "prometheus.io/port": quoted(ctx.v("envoy.prometheus.port")),
            });
            let ports = vec![port(
                "envoy-metrics",
                bare_at(ctx, "envoy.prometheus.port"),
                "envoy-metrics",
            )];
            (Some(annotations), ports)
        } else {
            return None;
        };
    Some(json!({
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": metadata("cilium-agent", Some(&ctx.namespace()), Some(agent_labels(ctx)), annotations),
        "spec": {
            "clusterIP": "None",
            "type": "ClusterIP",
            "selector": {"k8s-app": "cilium"},
            "ports": ports,
        },
    }))
}

/// `| default (include "cilium.namespace" .)`, printed bare.
fn namespace_or_own(ctx: &Ctx, path: &str) -> String {
    let v = ctx.v(path);
    if truthy(v) {
        quote(&bare(v))
    } else {
        ctx.namespace()
    }
}

fn endpoint(ctx: &Ctx, port: &str, prefix: &str, scrape_timeout: bool) -> Value {
    scrape_endpoint(ctx.v(prefix), port, true, scrape_timeout)
}

fn service_monitor(ctx: &Ctx) -> Value {
    let mut fixed = vec![("app.kubernetes.io/part-of", "cilium")];
    // 1.18.2 added the name label, which the ServiceMonitor's own selector also uses.
    if ctx.plan.cilium.at_least(1, 18, 2) {
        fixed.push(("app.kubernetes.io/name", "cilium-agent"));
    }
    let sm_labels = labels(
        &fixed,
        &[
            ctx.v("commonLabels"),
            ctx.v("prometheus.serviceMonitor.labels"),
        ],
    );
    let annotations = merged(&[
        ctx.v("annotations"),
        ctx.v("prometheus.serviceMonitor.annotations"),
    ]);
    let mut endpoints = vec![endpoint(ctx, "metrics", "prometheus.serviceMonitor", false)];
    // Envoy embedded in the agent is scraped through the agent's Service.
    if !envoy_daemonset_enabled(ctx)
        && !ctx.on("preflight.enabled")
        && ctx.on("envoy.prometheus.enabled")
        && ctx.on("envoy.prometheus.serviceMonitor.enabled")
        && ctx.on("envoy.enabled")
    {
        endpoints.push(endpoint(
            ctx,
            "envoy-metrics",
            "envoy.prometheus.serviceMonitor",
            true,
        ));
    }
    let mut spec = json!({
        "selector": {"matchLabels": {"app.kubernetes.io/name": "cilium-agent"}},
        "namespaceSelector": {"matchNames": [ctx.namespace()]},
        "endpoints": endpoints,
        "targetLabels": ["k8s-app"],
    });
    let job = ctx.v("prometheus.serviceMonitor.jobLabel");
    if truthy(job) {
        spec["jobLabel"] = quoted(job);
    }
    json!({
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "ServiceMonitor",
        "metadata": metadata(
            "cilium-agent",
            Some(&namespace_or_own(ctx, "prometheus.serviceMonitor.namespace")),
            Some(sm_labels),
            annotations,
        ),
        "spec": spec,
    })
}

/// One ConfigMap per Grafana dashboard JSON file the chart bundles for the agent.
fn dashboards(ctx: &Ctx) -> Result<Vec<Value>, RenderError> {
    let files: Vec<String> = match ctx.chart {
        // Without the archive, `bundled` explains what is missing and how to avoid it.
        None => {
            ctx.bundled(
                "dashboards.enabled",
                &format!("{DASHBOARDS}cilium-dashboard.json"),
                "false",
            )?;
            Vec::new()
        }
        Some(chart) => chart
            .list(DASHBOARDS)
            .into_iter()
            .filter(|p| {
                p.strip_prefix(DASHBOARDS)
                    .is_some_and(|rest| !rest.contains('/') && rest.ends_with(".json"))
            })
            .map(str::to_string)
            .collect(),
    };
    let mut out = Vec::new();
    for path in files {
        let text = ctx.bundled("dashboards.enabled", &path, "false")?;
        let stem = path
            .strip_prefix(DASHBOARDS)
            .and_then(|f| f.strip_suffix(".json"))
            .unwrap_or_default();
        let name: String = stem.chars().take(63).collect();
        let name = name.trim_end_matches('-').to_string();
        let mut l = agent_labels(ctx);
        let label = ctx.v("dashboards.label");
        if truthy(label) {
            let value = ctx.v("dashboards.labelValue");
            let value = if truthy(value) {
                quote(value)
            } else {
                "1".to_string()
            };
            l[quote(label)] = Value::String(value);
        }
        let annotations = merged(&[ctx.v("dashboards.annotations"), ctx.v("annotations")]);
        let mut data = Map::new();
        data.insert(format!("{stem}.json"), Value::String(text));
        out.push(json!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": metadata(
                &name,
                Some(&namespace_or_own(ctx, "dashboards.namespace")),
                Some(l),
                annotations,
            ),
            "data": data,
        }));
    }
    Ok(out)
}
