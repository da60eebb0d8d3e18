//! The agent pod's volumes: the node's directories and files it works on, its configuration,
//! and the Secrets and ConfigMaps of etcd, clustermesh, IPsec, ztunnel and Hubble TLS.

use serde_json::{Map, Value};

use super::{
    host_path_mounts, hubble_metrics_tls, hubble_tls, ipsec, node_init_bootstrap, spire_socket_dir,
    ztunnel, Agent,
};
use crate::changes::Change;
use crate::components::agent::{bare_at, s, ternary_bool};
use crate::components::common::{self, list_items};
use crate::components::Ctx;
use crate::error::RenderError;
use crate::tmpl::{bare, path_dir, truthy};

/// Kubernetes reads the chart's octal `0400` file mode as this decimal number.
const MODE_0400: u64 = 256;

fn host_path(name: &str, path: Value, kind: Option<&str>) -> Value {
    let mut hp = Map::new();
    hp.insert("path".into(), path);
    if let Some(k) = kind {
        hp.insert("type".into(), s(k));
    }
    tree!({"name": name, "hostPath": hp})
}

/// A CA bundle (Secret or ConfigMap, per `tls.caBundle.useSecret`, which the chart passes to
/// `ternary` and so must be a boolean) projected as `path`.
fn ca_bundle_source(ctx: &Ctx, path: &str) -> Result<Value, RenderError> {
    ternary_bool(ctx, "tls.caBundle.useSecret")?;
    Ok(common::ca_bundle_source(ctx, path, true))
}

/// A client certificate Secret projected with its key pair and, without a CA bundle, its CA.
fn cert_sources(
    ctx: &Ctx,
    secret: &str,
    prefix: &str,
    ca_file: &str,
) -> Result<Vec<Value>, RenderError> {
    let items = vec![
        tree!({"key": "tls.key", "path": format!("{prefix}.key")}),
        tree!({"key": "tls.crt", "path": format!("{prefix}.crt")}),
    ];
    if ctx.on("tls.caBundle.enabled") {
        ternary_bool(ctx, "tls.caBundle.useSecret")?;
    }
    Ok(common::cert_sources(ctx, secret, items, ca_file, true))
}

fn server_cert_items() -> Vec<Value> {
    vec![
        tree!({"key": "tls.crt", "path": "server.crt"}),
        tree!({"key": "tls.key", "path": "server.key"}),
    ]
}

/// `existingSecret | default NAME`, printed bare.
fn secret_name(ctx: &Ctx, path: &str, default: &str) -> Value {
    let v = ctx.v(path);
    if truthy(v) {
        bare(v)
    } else {
        s(default)
    }
}

/// Where the agent's configuration comes from: the ConfigMap named in `daemon.configSources`,
/// or the `tmp` volume the `config` init container fills (`tmpVolume` from 1.19, else an
/// emptyDir).
fn config_volume(ctx: &Ctx, a: &Agent) -> Result<Value, RenderError> {
    if let Some(name) = &a.config_map_source {
        return Ok(tree!({"name": "cilium-config-path", "configMap": {"name": name.clone()}}));
    }
    let mut volume = tree!({"name": "tmp"});
    let custom = ctx.v("tmpVolume");
    if ctx.plan.has(Change::AgentTmpVolume) && truthy(custom) {
        let Value::Object(fields) = custom else {
            return Err(ctx.invalid(
                "tmpVolume",
                "must be a map (a volume source such as emptyDir)",
            ));
        };
        for (k, v) in fields {
            volume[k.as_str()] = v.clone();
        }
    } else {
        volume["emptyDir"] = tree!({});
    }
    Ok(volume)
}

/// The pod's volumes in the chart's order, then the user's host paths and `extraVolumes`.
pub(super) fn all(ctx: &Ctx, a: &Agent) -> Result<Vec<Value>, RenderError> {
    let mut v = vec![config_volume(ctx, a)?];
    v.extend(node_paths(ctx, a));
    v.extend(common::etcd_client_volumes(ctx));
    v.push(clustermesh_secrets(ctx)?);
    v.extend(feature_configs(ctx)?);
    if !a.privileged {
        v.push(host_path(
            "host-proc-sys-net",
            s("/proc/sys/net"),
            Some("Directory"),
        ));
        v.push(host_path(
            "host-proc-sys-kernel",
            s("/proc/sys/kernel"),
            Some("Directory"),
        ));
    }
    if hubble_tls(ctx) {
        v.push(hubble_tls_volume(ctx)?);
    }
    if hubble_metrics_tls(ctx, a) {
        v.push(hubble_metrics_tls_volume(ctx)?);
    }
    if ctx.on("hubble.metrics.dynamic.enabled") {
        v.push(tree!({
            "name": "hubble-dynamic-metrics-config",
            "configMap": {"name": bare_at(ctx, "hubble.metrics.dynamic.config.configMapName"), "optional": true},
        }));
    }
    if ctx.on("hubble.export.dynamic.enabled") {
        v.push(tree!({
            "name": "hubble-flowlog-config",
            "configMap": {"name": bare_at(ctx, "hubble.export.dynamic.config.configMapName"), "optional": true},
        }));
    }
    v.extend(host_path_mounts(ctx)?.1);
    v.extend(list_items(ctx, "extraVolumes")?);
    Ok(v)
}

/// The node's own directories and files the agent works on, as hostPath volumes.
fn node_paths(ctx: &Ctx, a: &Agent) -> Vec<Value> {
    let dir_or_create = Some("DirectoryOrCreate");
    let mut v = vec![
        host_path("cilium-run", bare_at(ctx, "daemon.runPath"), dir_or_create),
        host_path("cilium-netns", s("/var/run/netns"), dir_or_create),
        host_path("bpf-maps", s("/sys/fs/bpf"), dir_or_create),
    ];
    if ctx.on("cgroup.autoMount.enabled") || ctx.on("sysctlfix.enabled") {
        v.push(host_path("hostproc", s("/proc"), Some("Directory")));
    }
    v.push(host_path(
        "cilium-cgroup",
        bare_at(ctx, "cgroup.hostRoot"),
        dir_or_create,
    ));
    v.push(host_path(
        "cni-path",
        bare_at(ctx, "cni.binPath"),
        dir_or_create,
    ));
    v.push(host_path(
        "etc-cni-netd",
        bare_at(ctx, "cni.confPath"),
        dir_or_create,
    ));
    v.push(host_path("lib-modules", s("/lib/modules"), None));
    v.push(host_path(
        "xtables-lock",
        s("/run/xtables.lock"),
        Some("FileOrCreate"),
    ));
    if ctx.on("authentication.mutual.spire.enabled") {
        v.push(host_path(
            "spire-agent-socket",
            spire_socket_dir(ctx),
            dir_or_create,
        ));
    }
    if a.envoy_ds {
        v.push(host_path(
            "envoy-sockets",
            s(&format!("{}/envoy/sockets", ctx.text("daemon.runPath"))),
            dir_or_create,
        ));
    }
    if ctx.on("kubeConfigPath") {
        v.push(host_path(
            "kube-config",
            bare_at(ctx, "kubeConfigPath"),
            Some("FileOrCreate"),
        ));
    }
    if node_init_bootstrap(ctx) {
        v.push(host_path(
            "cilium-bootstrap-file-dir",
            s(&path_dir(&ctx.text("nodeinit.bootstrapFile"))),
            dir_or_create,
        ));
    }
    v
}

/// `clustermesh-secrets`: the remote clusters' etcd configurations and client certificates.
fn clustermesh_secrets(ctx: &Ctx) -> Result<Value, RenderError> {
    // Every entry of cilium-clustermesh becomes a file, so peers can change without restarts;
    // KVStoreMesh's certificate is mounted even when it is off, for the same reason.
    let mut sources = vec![tree!({"secret": {"name": "cilium-clustermesh", "optional": true}})];
    sources.extend(cert_sources(
        ctx,
        "clustermesh-apiserver-remote-cert",
        "common-etcd-client",
        "common-etcd-client-ca.crt",
    )?);
    sources.extend(cert_sources(
        ctx,
        "clustermesh-apiserver-local-cert",
        "local-etcd-client",
        "local-etcd-client-ca.crt",
    )?);
    Ok(tree!({
        "name": "clustermesh-secrets",
        "projected": {"defaultMode": MODE_0400, "sources": sources},
    }))
}

/// The ConfigMaps and Secrets of optional features: ip-masq-agent, IPsec and ztunnel keys,
/// and a CNI configuration given as a ConfigMap.
fn feature_configs(ctx: &Ctx) -> Result<Vec<Value>, RenderError> {
    let mut v = Vec::new();
    if ctx.on("ipMasqAgent") && ctx.on("ipMasqAgent.enabled") {
        v.push(tree!({
            "name": "ip-masq-agent",
            "configMap": {
                "name": "ip-masq-agent",
                "optional": true,
                "items": [{"key": "config", "path": "ip-masq-agent"}],
            },
        }));
    }
    if ipsec(ctx)? {
        v.push(tree!({
            "name": "cilium-ipsec-secrets",
            "secret": {"secretName": bare_at(ctx, "encryption.ipsec.secretName")},
        }));
    }
    if ztunnel(ctx)? {
        v.push(tree!({
            "name": "cilium-ztunnel-secrets",
            "secret": {"secretName": "cilium-ztunnel-secrets"},
        }));
    }
    if ctx.on("cni.configMap") {
        v.push(tree!({
            "name": "cni-configuration",
            "configMap": {"name": bare_at(ctx, "cni.configMap")},
        }));
    }
    Ok(v)
}

/// `hubble-tls`: the Hubble server's certificate and the CA its clients are checked against.
fn hubble_tls_volume(ctx: &Ctx) -> Result<Value, RenderError> {
    let mut items = server_cert_items();
    let bundle = ctx.on("tls.caBundle.enabled");
    if !bundle {
        items.push(tree!({"key": "ca.crt", "path": "client-ca.crt"}));
    }
    let mut sources = vec![tree!({"secret": {
        "name": secret_name(ctx, "hubble.tls.server.existingSecret", "hubble-server-certs"),
        "optional": true,
        "items": items,
    }})];
    if bundle {
        sources.push(ca_bundle_source(ctx, "client-ca.crt")?);
    }
    Ok(tree!({
        "name": "hubble-tls",
        "projected": {"defaultMode": MODE_0400, "sources": sources},
    }))
}

/// `hubble-metrics-tls`: the metrics server's certificate and, with mutual TLS, the client CA
/// (one the user names, the server's own CA, or the CA bundle).
fn hubble_metrics_tls_volume(ctx: &Ctx) -> Result<Value, RenderError> {
    let mut items = server_cert_items();
    let mut extra = None;
    if ctx.on("hubble.metrics.tls.server.mtls.enabled") {
        if ctx.on("hubble.metrics.tls.server.mtls.name") {
            // The client CA the user named.
            let kind = if ternary_bool(ctx, "hubble.metrics.tls.server.mtls.useSecret")? {
                "secret"
            } else {
                "configMap"
            };
            let mut src = Map::new();
            src.insert(
                kind.into(),
                tree!({
                    "name": bare_at(ctx, "hubble.metrics.tls.server.mtls.name"),
                    "optional": false,
                    "items": [{"key": bare_at(ctx, "hubble.metrics.tls.server.mtls.key"), "path": "client-ca.crt"}],
                }),
            );
            extra = Some(Value::Object(src));
        } else if !ctx.on("tls.caBundle.enabled") {
            // The server's own CA doubles as the client CA.
            items.push(tree!({"key": "ca.crt", "path": "client-ca.crt"}));
        } else {
            extra = Some(ca_bundle_source(ctx, "client-ca.crt")?);
        }
    }
    let mut sources = vec![tree!({"secret": {
        "name": secret_name(ctx, "hubble.metrics.tls.server.existingSecret", "hubble-metrics-server-certs"),
        "optional": true,
        "items": items,
    }})];
    sources.extend(extra);
    Ok(tree!({
        "name": "hubble-metrics-tls",
        "projected": {"defaultMode": MODE_0400, "sources": sources},
    }))
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{names, with_agent};
    use super::*;
    use serde_json::json;

    fn volumes(version: &str, values: &str) -> Vec<Value> {
        with_agent(version, values, |ctx, a| all(ctx, a).expect("volumes"))
    }

    fn find<'a>(volumes: &'a [Value], name: &str) -> Option<&'a Value> {
        volumes.iter().find(|v| v["name"] == name)
    }

    #[test]
    fn defaults_in_the_chart_order() {
        let v = volumes("1.18.12", "{}");
        assert_eq!(
            names(&v)[..5],
            ["tmp", "cilium-run", "cilium-netns", "bpf-maps", "hostproc"]
        );
        assert_eq!(v[0], json!({"name": "tmp", "emptyDir": {}}));
        let mesh = names(&v)
            .iter()
            .position(|n| *n == "clustermesh-secrets")
            .expect("always mounted");
        assert_eq!(
            names(&v)[mesh + 1..mesh + 3],
            ["host-proc-sys-net", "host-proc-sys-kernel"]
        );
        for absent in ["etcd-config-path", "cilium-ipsec-secrets", "kube-config"] {
            assert!(find(&v, absent).is_none(), "{absent}");
        }
        // Envoy runs in its own DaemonSet by default and shares its sockets with the agent.
        assert!(find(&v, "envoy-sockets").is_some());
        let v = volumes("1.18.12", "envoy: {enabled: false}");
        assert!(find(&v, "envoy-sockets").is_none());
    }

    #[test]
    fn privileged_agents_need_no_proc_sys_volumes() {
        let v = volumes("1.18.12", "securityContext: {privileged: true}");
        assert!(find(&v, "host-proc-sys-net").is_none());
        assert!(find(&v, "host-proc-sys-kernel").is_none());
    }

    #[test]
    fn etcd_secrets_only_with_tls() {
        let v = volumes("1.18.12", "etcd: {enabled: true}");
        assert!(find(&v, "etcd-config-path").is_some());
        assert!(find(&v, "etcd-secrets").is_none());
        let v = volumes("1.18.12", "etcd: {enabled: true, ssl: true}");
        assert_eq!(
            find(&v, "etcd-secrets").expect("etcd-secrets")["secret"]["defaultMode"],
            json!(MODE_0400)
        );
    }

    #[test]
    fn ipsec_keys_from_the_named_secret() {
        let v = volumes(
            "1.18.12",
            "encryption: {enabled: true, type: ipsec, ipsec: {secretName: keys}}",
        );
        assert_eq!(
            find(&v, "cilium-ipsec-secrets").expect("ipsec")["secret"]["secretName"],
            "keys"
        );
        let v = volumes("1.18.12", "encryption: {enabled: true, type: wireguard}");
        assert!(find(&v, "cilium-ipsec-secrets").is_none());
    }

    #[test]
    fn tmp_volume_is_configurable_from_1_19() {
        let values = "tmpVolume: {hostPath: {path: /x}}";
        assert_eq!(volumes("1.18.12", values)[0]["emptyDir"], json!({}));
        let v = volumes("1.19.6", values);
        assert_eq!(v[0], json!({"name": "tmp", "hostPath": {"path": "/x"}}));
        let e = with_agent("1.19.6", "tmpVolume: [x]", all);
        assert!(e.is_err_and(|e| e.to_string().contains("tmpVolume")));
    }

    #[test]
    fn hubble_metrics_client_ca_by_name() {
        let values = "hubble: {metrics: {enabled: [dns], tls: {enabled: true, server: {mtls: {enabled: true, name: ca, key: ca.crt, useSecret: true}}}}}";
        let v = volumes("1.18.12", values);
        let sources = &find(&v, "hubble-metrics-tls").expect("metrics TLS")["projected"]["sources"];
        assert_eq!(sources[0]["secret"]["name"], "hubble-metrics-server-certs");
        assert_eq!(sources[1]["secret"]["name"], "ca");
        assert_eq!(sources[1]["secret"]["items"][0]["path"], "client-ca.crt");
        // Without metrics there is nothing to serve.
        let v = volumes("1.18.12", "hubble: {metrics: {tls: {enabled: true}}}");
        assert!(find(&v, "hubble-metrics-tls").is_none());
    }

    #[test]
    fn user_volumes_come_last() {
        let values = "extraHostPathMounts: [{name: h, mountPath: /h, hostPath: /h}]\nextraVolumes: [{name: x, emptyDir: {}}]\n";
        let v = volumes("1.18.12", values);
        assert_eq!(names(&v)[v.len() - 2..], ["h", "x"]);
    }
}
