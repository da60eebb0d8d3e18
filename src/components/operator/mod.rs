//! Mirrors the chart's templates: cilium-operator/
//!
//! The Deployment lives in `deployment`, the ClusterRole, Roles and their bindings in `rbac`;
//! the small objects are here.

mod deployment;
mod rbac;

use crate::changes::Change;
use serde_json::Value;

use super::common::{
    self, dashboard_configmaps, labels, metadata, service_monitor, with_chart_label, Dashboards,
    MonitorSpec,
};
use super::Ctx;
use crate::error::RenderError;
use crate::tmpl::{b64enc, print, truthy, with};

const SELECTOR: &[(&str, &str)] = &[("io.cilium/app", "operator"), ("name", "cilium-operator")];

/// The labels of the Deployment, its pods, Service and PodDisruptionBudget.
const OWN_LABELS: &[(&str, &str)] = &[
    ("io.cilium/app", "operator"),
    ("name", "cilium-operator"),
    ("app.kubernetes.io/part-of", "cilium"),
    ("app.kubernetes.io/name", "cilium-operator"),
];

pub fn render(ctx: &Ctx) -> Result<Vec<Value>, RenderError> {
    let mut out = Vec::new();
    // The dashboards do not depend on `operator.enabled` in the chart.
    out.extend(dashboards(ctx)?);
    if !ctx.on("operator.enabled") {
        return Ok(out);
    }
    out.push(deployment::deployment(ctx)?);
    if ctx.on("serviceAccounts.operator.create") {
        out.push(service_account(ctx));
    }
    out.extend(rbac::render(ctx)?);
    if ctx.on("operator.podDisruptionBudget.enabled") {
        out.push(common::pod_disruption_budget(
            ctx,
            "cilium-operator",
            ctx.v("operator.podDisruptionBudget"),
            SELECTOR,
            &with_chart_label(ctx, OWN_LABELS),
            ctx.v("operator.annotations"),
        ));
    }
    if ctx.on("azure.enabled")
        && (ctx.on("azure.clientID") || !ctx.plan.has(Change::AzureCredentialsNeedClientId))
    {
        out.push(azure_secret(ctx));
    }
    let prom = ctx.on("operator.prometheus.enabled");
    let monitor = ctx.on("operator.prometheus.serviceMonitor.enabled");
    if prom && (monitor || ctx.on("operator.prometheus.metricsService")) {
        out.push(service(ctx));
    }
    if prom && monitor {
        out.push(service_monitor(
            ctx,
            MonitorSpec {
                name: "cilium-operator",
                values: "operator.prometheus.serviceMonitor",
                annotations: "operator.annotations",
                selector: SELECTOR,
                port: "metrics",
                target_label: "io.cilium/app",
                job_label: true,
            },
        ));
    }
    Ok(out)
}

// ---------------------------------------------------------------------------------------------
// Helpers shared with the Envoy module.

// ---------------------------------------------------------------------------------------------

/// Whether the operator runs the MCS-API controllers (the chart's one MCS-API switch).
fn mcsapi(ctx: &Ctx) -> bool {
    crate::components::clustermesh::mcs_api_enabled(ctx)
}

/// Whether the operator needs the clustermesh configuration (EndpointSlice sync or MCS-API).
fn clustermesh_sync(ctx: &Ctx) -> bool {
    ctx.on("clustermesh.enableEndpointSliceSynchronization") || mcsapi(ctx)
}

fn service_account(ctx: &Ctx) -> Value {
    // With ENI and an IAM role, the chart adds the EKS role annotation to the account's own
    // annotations (in place, so it wins over a user key of the same name).
    let extra = (ctx.on("eni.enabled") && ctx.on("eni.iamRole"))
        .then(|| ("eks.amazonaws.com/role-arn", ctx.v("eni.iamRole").clone()));
    common::service_account_object(ctx, "operator", ctx.v("operator.annotations"), extra)
}

fn azure_secret(ctx: &Ctx) -> Value {
    let enc = |path: &str| {
        let v = ctx.v(path);
        let text = if truthy(v) { print(v) } else { String::new() };
        b64enc(text.as_bytes())
    };
    tree!({
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": metadata("cilium-azure", Some(&ctx.namespace()), common::common_labels(ctx), with(ctx.v("operator.annotations"))),
        "type": "Opaque",
        "data": {
            "AZURE_CLIENT_ID": enc("azure.clientID"),
            "AZURE_CLIENT_SECRET": enc("azure.clientSecret"),
        },
    })
}

fn service(ctx: &Ctx) -> Value {
    tree!({
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": metadata(
            "cilium-operator",
            Some(&ctx.namespace()),
            Some(labels(&with_chart_label(ctx, OWN_LABELS), &[ctx.v("commonLabels")])),
            with(ctx.v("operator.annotations")),
        ),
        "spec": {
            "clusterIP": "None",
            "type": "ClusterIP",
            "ports": [{"name": "metrics", "port": 9963, "protocol": "TCP", "targetPort": "prometheus"}],
            "selector": labels(SELECTOR, &[]),
        },
    })
}

fn dashboards(ctx: &Ctx) -> Result<Vec<Value>, RenderError> {
    if !ctx.on("operator.dashboards.enabled") {
        return Ok(Vec::new());
    }
    dashboard_configmaps(
        ctx,
        &Dashboards {
            dir: "files/cilium-operator/dashboards/",
            known_file: "cilium-operator-dashboard.json",
            enabled: "operator.dashboards.enabled",
            alternative: "false (or import the dashboard into Grafana yourself)",
            values: "operator.dashboards",
            app_labels: &[
                ("k8s-app", "cilium"),
                ("app.kubernetes.io/name", "cilium-operator"),
                ("app.kubernetes.io/part-of", "cilium"),
            ],
            annotations: &[
                ctx.v("operator.dashboards.annotations"),
                ctx.v("operator.annotations"),
            ],
        },
    )
}
