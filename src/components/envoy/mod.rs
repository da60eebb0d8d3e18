//! Mirrors the chart's templates: cilium-envoy/ (the DaemonSet, the bootstrap ConfigMap, the
//! ServiceAccount, the metrics Service and ServiceMonitor, and the node-locality RBAC of 1.20).

mod bootstrap;
mod daemonset;

use crate::changes::Change;
use serde_json::{Map, Value};

use super::common::service_account_object;
use super::common::{
    self, labels, metadata, service_monitor, upgrade_compat_at_least, with_chart_label,
    MonitorSpec, ENVOY_XDS_ADS,
};
use super::Ctx;
use crate::error::RenderError;
use crate::tmpl::{bare, print, quoted, to_json, with};

pub fn render(ctx: &Ctx) -> Result<Vec<Value>, RenderError> {
    if !common::envoy_daemonset_enabled(ctx)? {
        return Ok(Vec::new());
    }
    let preflight = ctx.on("preflight.enabled");
    let mut out = Vec::new();
    let configmap = config_map(ctx)?;
    // 1.18.1 to 1.18.5 rendered the bootstrap ConfigMap during pre-flight checks too.
    let cm_despite_preflight = ctx.plan.has(Change::EnvoyConfigMapInPreflight)
        && !ctx.plan.has(Change::PreflightWithoutEnvoyBootstrap);
    if !preflight || cm_despite_preflight {
        out.push(configmap.clone());
    }
    if preflight {
        return Ok(out);
    }
    out.push(daemonset::daemon_set(ctx, &configmap)?);
    if ctx.on("serviceAccounts.envoy.create") {
        out.push(service_account_object(
            ctx,
            "envoy",
            ctx.v("envoy.annotations"),
            None,
        ));
    }
    if ctx.on("envoy.prometheus.enabled") {
        out.push(service(ctx));
        if ctx.on("envoy.prometheus.serviceMonitor.enabled") {
            out.push(monitor(ctx));
        }
    }
    if node_locality(ctx) {
        out.extend(node_locality_rbac(ctx));
    }
    Ok(out)
}

fn config_map(ctx: &Ctx) -> Result<Value, RenderError> {
    let mut text = to_json(&bootstrap::bootstrap(ctx)?);
    text.push('\n');
    Ok(tree!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": metadata(
            "cilium-envoy-config",
            Some(&ctx.namespace()),
            common::common_labels(ctx),
            with(ctx.v("envoy.annotations")),
        ),
        "data": {"bootstrap-config.json": text},
    }))
}

/// `envoy.nodeLocality.enabled`, which only 1.20 reads.
fn node_locality(ctx: &Ctx) -> bool {
    ctx.plan.has(Change::EnvoyNodeLocality) && ctx.on("envoy.nodeLocality.enabled")
}

/// What the chart's `envoyXdsMode` helper prints: `envoy.xdsMode` when set, else `ads` unless
/// `upgradeCompatibility` is below 1.20 (then nothing, and the agent keeps its split mode).
pub fn xds_mode(ctx: &Ctx) -> Result<String, RenderError> {
    let mode = ctx.v("envoy.xdsMode");
    if !mode.is_null() {
        return Ok(print(mode));
    }
    let (major, minor) = ENVOY_XDS_ADS.since;
    Ok(if upgrade_compat_at_least(ctx, major, minor)? {
        "ads".into()
    } else {
        String::new()
    })
}

/// Envoy takes listeners and clusters over one aggregated (ADS) stream.
fn xds_mode_is_ads(ctx: &Ctx) -> Result<bool, RenderError> {
    Ok(matches!(xds_mode(ctx)?.as_str(), "ads" | "strict-ads"))
}

/// The ClusterRole and its binding that let Envoy's init container read its Node's zone.
fn node_locality_rbac(ctx: &Ctx) -> Vec<Value> {
    const NAME: &str = "cilium-envoy-node-locality";
    let meta = || {
        metadata(
            NAME,
            None,
            Some(common::part_of_labels(ctx, &[])),
            with(ctx.v("annotations")),
        )
    };
    vec![
        tree!({
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": meta(),
            "rules": [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["get"]}],
        }),
        tree!({
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": meta(),
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": NAME},
            "subjects": [{"kind": "ServiceAccount", "name": "cilium-envoy", "namespace": ctx.namespace()}],
        }),
    ]
}

/// The chart's ServiceMonitor shape.
fn monitor(ctx: &Ctx) -> Value {
    service_monitor(
        ctx,
        MonitorSpec {
            name: "cilium-envoy",
            values: "envoy.prometheus.serviceMonitor",
            annotations: "envoy.annotations",
            selector: &[("k8s-app", "cilium-envoy")],
            port: "envoy-metrics",
            target_label: "k8s-app",
            job_label: false,
        },
    )
}

fn service(ctx: &Ctx) -> Value {
    let mut own = Map::new();
    if !ctx.on("envoy.prometheus.serviceMonitor.enabled") {
        own.insert("prometheus.io/scrape".into(), Value::from("true"));
        own.insert(
            "prometheus.io/port".into(),
            quoted(ctx.v("envoy.prometheus.port")),
        );
    }
    let annotations = common::merged(&[&Value::Object(own), ctx.v("envoy.annotations")]);
    let port = bare(ctx.v("envoy.prometheus.port"));
    let target = if ctx.plan.has(Change::EnvoyServiceTargetPortNumber) {
        port.clone()
    } else {
        Value::from("envoy-metrics")
    };
    tree!({
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": metadata(
            "cilium-envoy",
            Some(&ctx.namespace()),
            Some(labels(
                &with_chart_label(
                    ctx,
                    &[
                        ("k8s-app", "cilium-envoy"),
                        ("app.kubernetes.io/name", "cilium-envoy"),
                        ("app.kubernetes.io/part-of", "cilium"),
                        ("io.cilium/app", "proxy"),
                    ],
                ),
                &[ctx.v("commonLabels")],
            )),
            annotations,
        ),
        "spec": {
            "clusterIP": "None",
            "type": "ClusterIP",
            "selector": {"k8s-app": "cilium-envoy"},
            "ports": [{
                "name": "envoy-metrics",
                "port": port,
                "protocol": "TCP",
                "targetPort": target,
            }],
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::components::common::tests::with_release;

    fn with_ctx<T>(version: &str, values: &str, f: impl FnOnce(&Ctx) -> T) -> T {
        with_release(version, values, "1.35.0", f)
    }

    fn kinds(version: &str, values: &str) -> Vec<String> {
        with_ctx(version, values, |ctx| {
            render(ctx)
                .unwrap()
                .iter()
                .map(|o| o["kind"].as_str().unwrap_or_default().to_string())
                .collect()
        })
    }

    #[test]
    fn preflight_keeps_the_configmap_only_in_1_18_1_to_5() {
        let count = |v: &str| kinds(v, "preflight: {enabled: true}").len();
        assert_eq!(count("1.18.0"), 0);
        assert_eq!(count("1.18.3"), 1);
        assert_eq!(count("1.18.6"), 0);
    }

    #[test]
    fn node_locality_rbac_only_from_1_20() {
        let values = "envoy: {nodeLocality: {enabled: true}}";
        assert!(kinds("1.20.0", values).contains(&"ClusterRole".to_string()));
        assert!(!kinds("1.19.6", values).contains(&"ClusterRole".to_string()));
    }

    #[test]
    fn xds_mode_follows_values_then_compatibility() {
        let mode = |values: &str| with_ctx("1.20.0", values, |ctx| xds_mode(ctx).unwrap());
        assert_eq!(mode("{}"), "ads");
        assert_eq!(mode("upgradeCompatibility: '1.19'"), "");
        assert_eq!(mode("envoy: {xdsMode: strict-ads}"), "strict-ads");
        assert!(with_ctx("1.20.0", "upgradeCompatibility: x", |ctx| {
            xds_mode(ctx).is_err()
        }));
    }
}
