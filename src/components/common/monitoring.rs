//! Prometheus Operator ServiceMonitors, their scrape endpoints, and the Grafana dashboard ConfigMaps.

use serde_json::{Map, Value};

use super::labels::{labels, labels_with_common, merged, metadata, put, with_chart_label};
use crate::changes::Change;
use crate::components::Ctx;
use crate::error::RenderError;
use crate::tmpl::{bare, print, quote, truthy, with};

/// What sets the chart's three Grafana dashboard ConfigMap templates (agent, operator,
/// Hubble) apart; the templates are otherwise the same.
pub struct Dashboards<'a> {
    /// The chart folder whose top-level `*.json` files become one ConfigMap each.
    pub dir: &'a str,
    /// A file every 1.18 chart has in `dir`, named in the error when there is no archive.
    pub known_file: &'a str,
    /// The value that turns the dashboards on, and what to set it to instead of giving the
    /// archive.
    pub enabled: &'a str,
    pub alternative: &'a str,
    /// The values block holding `namespace`, `label`, `labelValue` and `annotations`.
    pub values: &'a str,
    /// The ConfigMaps' own labels (`helm.sh/chart` is added where the release writes it, as
    /// all three templates do).
    pub app_labels: &'a [(&'a str, &'a str)],
    /// Annotation maps in the order the template writes them (later keys win).
    pub annotations: &'a [&'a Value],
}

/// One ConfigMap per dashboard the chart bundles, named after its file, the JSON text read
/// from the chart archive (never copied into this repository).
pub fn dashboard_configmaps(ctx: &Ctx, spec: &Dashboards) -> Result<Vec<Value>, RenderError> {
    let Some(chart) = ctx.chart else {
        // Without the archive, `bundled` explains what is missing and how to avoid it.
        ctx.bundled(
            spec.enabled,
            &format!("{}{}", spec.dir, spec.known_file),
            spec.alternative,
        )?;
        return Ok(Vec::new());
    };
    let d = ctx.v(spec.values);
    let ns = if truthy(&d["namespace"]) {
        quote(&bare(&d["namespace"]))
    } else {
        ctx.namespace()
    };
    let mut extra = Map::new();
    if truthy(&d["label"]) {
        let value = if truthy(&d["labelValue"]) {
            print(&d["labelValue"])
        } else {
            "1".into()
        };
        // The label name is printed bare as a YAML key, so YAML re-types it.
        extra.insert(print(&bare(&d["label"])), Value::from(value));
    }
    let labels = labels_with_common(
        ctx,
        &with_chart_label(ctx, spec.app_labels),
        &[&Value::Object(extra)],
    );
    let annotations = merged(spec.annotations);
    let mut out = Vec::new();
    for path in chart.list(spec.dir) {
        let Some(stem) = path
            .strip_prefix(spec.dir)
            .and_then(|f| f.strip_suffix(".json"))
        else {
            continue;
        };
        if stem.contains('/') {
            continue;
        }
        let text = ctx.bundled(spec.enabled, path, spec.alternative)?;
        let name: String = stem.chars().take(63).collect();
        let name = name.strip_suffix('-').unwrap_or(&name);
        out.push(tree!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": metadata(name, Some(&ns), Some(labels.clone()), annotations.clone()),
            "data": { format!("{stem}.json"): text },
        }));
    }
    Ok(out)
}

/// One scrape endpoint of a ServiceMonitor from its values `block`: the port, `interval`, the
/// `scrapeTimeout` where the template has one and it is set, `honorLabels` where the template
/// writes it, the metrics path, and the relabelings when set.
pub fn scrape_endpoint(
    block: &Value,
    port: &str,
    honor_labels: bool,
    scrape_timeout: bool,
) -> Value {
    let mut e = tree!({
        "port": port,
        "interval": quote(&block["interval"]),
        "path": "/metrics",
    });
    if scrape_timeout && truthy(&block["scrapeTimeout"]) {
        put(
            &mut e,
            "scrapeTimeout",
            Some(Value::String(quote(&block["scrapeTimeout"]))),
        );
    }
    if honor_labels {
        put(&mut e, "honorLabels", Some(Value::Bool(true)));
    }
    for key in ["relabelings", "metricRelabelings"] {
        put(&mut e, key, with(&block[key]));
    }
    e
}

/// What differs between the components' Prometheus Operator ServiceMonitors of one shape
/// (a single scrape endpoint on a metrics Service).
pub struct MonitorSpec<'a> {
    pub name: &'a str,
    /// Path of the `serviceMonitor` values block.
    pub values: &'a str,
    /// Path of the component's annotations.
    pub annotations: &'a str,
    pub selector: &'a [(&'a str, &'a str)],
    pub port: &'a str,
    pub target_label: &'a str,
    pub job_label: bool,
}

/// The chart's own labels on the agent, Hubble, Hubble Relay and clustermesh ServiceMonitors:
/// Cilium 1.18.2 added `app.kubernetes.io/name` to all four (and `part-of` to Relay's, which had
/// none before), so the change lives here once; `helm.sh/chart` as every ServiceMonitor has it.
pub fn monitor_labels<'a>(
    ctx: &'a Ctx,
    name: &'a str,
    part_of_before: bool,
) -> Vec<(&'a str, &'a str)> {
    let own: &[(&str, &str)] = if ctx.plan.has(Change::MonitorPartOfLabels) {
        &[
            ("app.kubernetes.io/part-of", "cilium"),
            ("app.kubernetes.io/name", name),
        ]
    } else if part_of_before {
        &[("app.kubernetes.io/part-of", "cilium")]
    } else {
        &[]
    };
    with_chart_label(ctx, own)
}

/// A ServiceMonitor for a component's metrics Service, in the `MonitorSpec` shape.
pub fn service_monitor(ctx: &Ctx, s: MonitorSpec) -> Value {
    let v = |k: &str| ctx.v(&format!("{}.{k}", s.values));
    let ns_value = v("namespace");
    let namespace = if truthy(ns_value) {
        print(ns_value)
    } else {
        ctx.namespace()
    };
    let meta_labels = labels_with_common(
        ctx,
        &with_chart_label(
            ctx,
            &[
                ("app.kubernetes.io/part-of", "cilium"),
                ("app.kubernetes.io/name", s.name),
            ],
        ),
        &[v("labels")],
    );
    let annotations = merged(&[ctx.v(s.annotations), v("annotations")]);
    let endpoint = scrape_endpoint(ctx.v(s.values), s.port, true, true);
    let mut spec = tree!({
        "selector": {"matchLabels": labels(s.selector, &[])},
        "namespaceSelector": {"matchNames": [ctx.namespace()]},
        "endpoints": [endpoint],
        "targetLabels": [s.target_label],
    });
    if s.job_label && truthy(v("jobLabel")) {
        put(
            &mut spec,
            "jobLabel",
            Some(crate::tmpl::quoted(v("jobLabel"))),
        );
    }
    tree!({
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "ServiceMonitor",
        "metadata": metadata(s.name, Some(&namespace), Some(meta_labels), annotations),
        "spec": spec,
    })
}

#[cfg(test)]
mod tests {
    use super::super::service_account;
    use super::super::tests::with_ctx;
    use super::*;
    use serde_json::json;

    #[test]
    fn service_accounts_and_monitors() {
        let values = "commonLabels: {t: net}\nserviceAccounts: {envoy: {name: my-envoy}}\nenvoy: {prometheus: {serviceMonitor: {namespace: mon, interval: 10s, jobLabel: j}}}\n";
        with_ctx(values, "1.35.0", |ctx| {
            let sa = service_account(ctx, "envoy", Some(json!({"a": "b"})));
            assert_eq!(sa["metadata"]["name"], "my-envoy");
            assert_eq!(sa["metadata"]["labels"], json!({"t": "net"}));
            let sm = service_monitor(
                ctx,
                MonitorSpec {
                    job_label: false,
                    name: "test",
                    port: "metrics",
                    selector: &[("app", "test")],
                    target_label: "app",
                    annotations: "envoy.annotations",
                    values: "envoy.prometheus.serviceMonitor",
                },
            );
            assert_eq!(sm["metadata"]["namespace"], "mon");
            assert_eq!(
                sm["spec"]["namespaceSelector"]["matchNames"],
                json!(["kube-system"])
            );
            assert_eq!(sm["spec"]["endpoints"][0]["interval"], "10s");
            assert!(sm["spec"].get("jobLabel").is_none());
        });
    }
}
