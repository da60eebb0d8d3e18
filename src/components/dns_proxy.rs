//! Mirrors the chart's templates: standalone-dns-proxy/ (the DNS proxy that runs beside the
//! agent on every node: its ConfigMap and DaemonSet), with the chart's check of its settings.

use crate::components::common::namespaced_workload;
use serde_json::Value;

use super::common::metadata_pod;
use super::common::{self, labels, metadata, put, with_chart_label};
use super::Ctx;
use crate::changes::Change;
use crate::error::RenderError;
use crate::tmpl::{bare, quoted, to_int64, truthy, with};

const NAME: &str = "standalone-dns-proxy";
const CONFIG: &str = "standalone-dns-proxy-config";

pub fn render(ctx: &Ctx) -> Result<Vec<Value>, RenderError> {
    if !ctx.plan.has(Change::StandaloneDnsProxy) || !ctx.on("standaloneDnsProxy.enabled") {
        return Ok(Vec::new());
    }
    check_proxy_port(ctx)?;
    let configmap = config_map(ctx);
    let daemon_set = daemon_set(ctx, &configmap)?;
    Ok(vec![configmap, daemon_set])
}

/// The proxy listens where the agent sends DNS, so the chart insists on a fixed port.
fn check_proxy_port(ctx: &Ctx) -> Result<(), RenderError> {
    let port = ctx.v("dnsProxy.proxyPort");
    if !truthy(port) || to_int64(port) == 0 {
        return Err(ctx.invalid(
            "dnsProxy.proxyPort",
            "standaloneDnsProxy needs dnsProxy.proxyPort set to a port other than 0 (such as 10094): the standalone proxy and the agent share the DNS proxy settings",
        ));
    }
    Ok(())
}

fn config_map(ctx: &Ctx) -> Value {
    let data: serde_json::Map<String, Value> = [
        ("enable-l7-proxy", "l7Proxy"),
        ("debug", "standaloneDnsProxy.debug"),
        ("enable-standalone-dns-proxy", "standaloneDnsProxy.enabled"),
        ("enable-ipv4", "ipv4.enabled"),
        ("enable-ipv6", "ipv6.enabled"),
        (
            "standalone-dns-proxy-server-port",
            "standaloneDnsProxy.serverPort",
        ),
        ("tofqdns-proxy-port", "dnsProxy.proxyPort"),
        (
            "tofqdns-enable-dns-compression",
            "dnsProxy.enableDnsCompression",
        ),
    ]
    .iter()
    .map(|(key, path)| ((*key).to_string(), quoted(ctx.v(path))))
    .collect();
    tree!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": metadata(
            CONFIG,
            Some(&ctx.namespace()),
            common::common_labels(ctx),
            with(ctx.v("standaloneDnsProxy.annotations")),
        ),
        "data": data,
    })
}

fn daemon_set(ctx: &Ctx, configmap: &Value) -> Result<Value, RenderError> {
    let common_labels = ctx.v("commonLabels");
    let mut pod_annotations = serde_json::Map::new();
    if ctx.on("standaloneDnsProxy.rollOutPods") {
        pod_annotations.insert(
            "cilium.io/standalone-dns-proxy-configmap-checksum".into(),
            Value::from(crate::output::sha256_hex(configmap)),
        );
    }
    pod_annotations.insert(
        "container.apparmor.security.beta.kubernetes.io/standalone-dns-proxy".into(),
        Value::from("unconfined"),
    );
    let pod_labels = labels(
        &with_chart_label(
            ctx,
            &[
                ("k8s-app", NAME),
                ("name", NAME),
                ("app.kubernetes.io/name", NAME),
                ("app.kubernetes.io/part-of", "cilium"),
            ],
        ),
        &[common_labels],
    );
    let mut spec = tree!({
        "selector": {"matchLabels": {"k8s-app": NAME}},
        "template": {
            "metadata": metadata_pod(pod_labels, Some(Value::Object(pod_annotations))),
            "spec": pod_spec(ctx)?,
        },
    });
    put(
        &mut spec,
        "updateStrategy",
        with(ctx.v("standaloneDnsProxy.updateStrategy")),
    );
    // Before 1.20 the proxy's was fixed at 5.
    if !ctx.plan.has(Change::MinReadySecondsFromValues) {
        put(&mut spec, "minReadySeconds", Some(tree!(5)));
    }
    crate::components::common::min_ready_seconds_from(
        ctx,
        &mut spec,
        "standaloneDnsProxy.minReadySeconds",
    );
    let own_labels = with_chart_label(
        ctx,
        &[
            ("k8s-app", NAME),
            ("app.kubernetes.io/part-of", "cilium"),
            ("app.kubernetes.io/name", NAME),
            ("name", NAME),
        ],
    );
    Ok(namespaced_workload(
        ctx,
        "DaemonSet",
        NAME,
        &own_labels,
        ctx.v("standaloneDnsProxy.annotations"),
        spec,
    ))
}

/// The chart always tolerates every taint, then writes the user's list indented under that
/// entry, where Helm's output no longer parses as YAML; such a list is refused here (it adds
/// nothing: every taint is tolerated already).
fn tolerations(ctx: &Ctx) -> Result<Value, RenderError> {
    if truthy(ctx.v("standaloneDnsProxy.tolerations")) {
        return Err(ctx.invalid(
            "standaloneDnsProxy.tolerations",
            "the chart writes these inside its own toleration of every taint, which makes the manifest invalid YAML; the proxy tolerates every taint already, so leave the list empty",
        ));
    }
    Ok(tree!([{"operator": "Exists"}]))
}

fn pod_spec(ctx: &Ctx) -> Result<Value, RenderError> {
    let mut spec = tree!({
        "hostNetwork": true,
        "automountServiceAccountToken": bare(ctx.v("standaloneDnsProxy.automountServiceAccountToken")),
        "tolerations": tolerations(ctx)?,
        "containers": [{
            "name": NAME,
            "image": common::image(ctx.v("standaloneDnsProxy.image")),
            "args": ["--config-dir=/tmp/standalone-dns-proxy/config-map"],
            "imagePullPolicy": bare(ctx.v("standaloneDnsProxy.image.pullPolicy")),
            "volumeMounts": [
                {"mountPath": "/tmp/standalone-dns-proxy/config-map", "name": "standalone-dns-proxy-config-path", "readOnly": true},
                {"mountPath": "/var/run/standalone-dns-proxy", "name": "runtime-dir"},
            ],
            "securityContext": {"capabilities": {"add": ["NET_ADMIN", "NET_RAW"], "drop": ["ALL"]}},
        }],
        "volumes": [
            {"configMap": {"defaultMode": 420, "name": CONFIG}, "name": "standalone-dns-proxy-config-path"},
            {"emptyDir": {}, "name": "runtime-dir"},
        ],
    });
    if ctx.plan.has(Change::EnvoyDnsProxyHostUsers) && ctx.plan.kube.user_namespaces_by_default() {
        put(&mut spec, "hostUsers", Some(Value::Bool(true)));
    }
    put(
        &mut spec,
        "nodeSelector",
        with(ctx.v("standaloneDnsProxy.nodeSelector")),
    );
    Ok(spec)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::components::common::tests::with_release;

    fn rendered(version: &str, values: &str) -> Result<Vec<Value>, RenderError> {
        with_release(version, values, "1.35.0", render)
    }

    #[test]
    fn the_proxy_needs_the_agents_dns_proxy_port() {
        let on = "standaloneDnsProxy: {enabled: true}";
        assert!(rendered("1.19.0", on).is_err());
        let with_port = "standaloneDnsProxy: {enabled: true}\ndnsProxy: {proxyPort: 10094}";
        assert_eq!(rendered("1.19.0", with_port).map(|o| o.len()).ok(), Some(2));
        assert!(rendered("1.18.12", with_port).is_ok_and(|o| o.is_empty()));
    }

    #[test]
    fn min_ready_seconds_is_fixed_before_1_20() {
        let values =
            "standaloneDnsProxy: {enabled: true, minReadySeconds: 0}\ndnsProxy: {proxyPort: 1}";
        let ds = |v: &str| rendered(v, values).unwrap().remove(1);
        assert_eq!(ds("1.19.6")["spec"]["minReadySeconds"], 5);
        assert!(ds("1.20.0")["spec"].get("minReadySeconds").is_none());
    }
}
