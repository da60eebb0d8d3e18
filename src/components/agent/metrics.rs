//! How the agent is observed: its headless metrics Service, the Prometheus Operator
//! ServiceMonitor, and the Grafana dashboard ConfigMaps read from the chart archive.

use serde_json::Value;

use super::{agent_on, bare_at};
use crate::components::common::{
    dashboard_configmaps, envoy_daemonset_enabled, labels, merged, metadata, scrape_endpoint,
    with_chart_label, Dashboards,
};
use crate::components::Ctx;
use crate::error::RenderError;
use crate::tmpl::{bare, quote, quoted, truthy, with};

pub fn render(ctx: &Ctx) -> Result<Vec<Value>, RenderError> {
    let mut out = Vec::new();
    if agent_on(ctx) && ctx.on("prometheus.enabled") {
        out.extend(service(ctx)?);
        if ctx.on("prometheus.serviceMonitor.enabled") {
            out.push(service_monitor(ctx)?);
        }
    }
    if ctx.on("dashboards.enabled") {
        out.extend(dashboards(ctx)?);
    }
    Ok(out)
}

/// The agent's own labels as its Service and dashboards carry them.
const AGENT_LABELS: &[(&str, &str)] = &[
    ("k8s-app", "cilium"),
    ("app.kubernetes.io/name", "cilium-agent"),
    ("app.kubernetes.io/part-of", "cilium"),
];

fn agent_labels(ctx: &Ctx) -> Value {
    labels(
        &with_chart_label(ctx, AGENT_LABELS),
        &[ctx.v("commonLabels")],
    )
}

fn port(name: &str, port: Value, target: &str) -> Value {
    tree!({"name": name, "port": port, "protocol": "TCP", "targetPort": target})
}

fn service(ctx: &Ctx) -> Result<Option<Value>, RenderError> {
    let envoy_ds = envoy_daemonset_enabled(ctx)?;
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
            let annotations = tree!({
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
            return Ok(None);
        };
    Ok(Some(tree!({
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": metadata("cilium-agent", Some(&ctx.namespace()), Some(agent_labels(ctx)), annotations),
        "spec": {
            "clusterIP": "None",
            "type": "ClusterIP",
            "selector": {"k8s-app": "cilium"},
            "ports": ports,
        },
    })))
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

fn service_monitor(ctx: &Ctx) -> Result<Value, RenderError> {
    let fixed = super::super::common::monitor_labels(ctx, "cilium-agent", true);
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
    if !envoy_daemonset_enabled(ctx)?
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
    let mut spec = tree!({
        "selector": {"matchLabels": {"app.kubernetes.io/name": "cilium-agent"}},
        "namespaceSelector": {"matchNames": [ctx.namespace()]},
        "endpoints": endpoints,
        "targetLabels": ["k8s-app"],
    });
    let job = ctx.v("prometheus.serviceMonitor.jobLabel");
    if truthy(job) {
        spec["jobLabel"] = quoted(job);
    }
    Ok(tree!({
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "ServiceMonitor",
        "metadata": metadata(
            "cilium-agent",
            Some(&namespace_or_own(ctx, "prometheus.serviceMonitor.namespace")),
            Some(sm_labels),
            annotations,
        ),
        "spec": spec,
    }))
}

fn dashboards(ctx: &Ctx) -> Result<Vec<Value>, RenderError> {
    dashboard_configmaps(
        ctx,
        &Dashboards {
            dir: "files/cilium-agent/dashboards/",
            known_file: "cilium-dashboard.json",
            enabled: "dashboards.enabled",
            alternative: "false",
            values: "dashboards",
            app_labels: AGENT_LABELS,
            annotations: &[ctx.v("dashboards.annotations"), ctx.v("annotations")],
        },
    )
}
