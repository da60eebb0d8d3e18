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

pub(super) fn all(ctx: &Ctx, a: &Agent) -> Result<Vec<Value>, RenderError> {
    let dir_or_create = Some("DirectoryOrCreate");
    let mut v = vec![
        config_volume(ctx, a)?,
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
    if ctx.on("etcd.enabled") {
        v.push(tree!({
            "name": "etcd-config-path",
            "configMap": {
                "name": "cilium-config",
                "defaultMode": MODE_0400,
                "items": [{"key": "etcd-config", "path": "etcd.config"}],
            },
        }));
        if ctx.on("etcd.ssl") {
            v.push(tree!({
                "name": "etcd-secrets",
                "secret": {"secretName": "cilium-etcd-secrets", "defaultMode": MODE_0400, "optional": true},
            }));
        }
    }
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
    v.push(tree!({
        "name": "clustermesh-secrets",
        "projected": {"defaultMode": MODE_0400, "sources": sources},
    }));
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
        v.push(tree!({
            "name": "hubble-tls",
            "projected": {"defaultMode": MODE_0400, "sources": sources},
        }));
    }
    if hubble_metrics_tls(ctx, a) {
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
        v.push(tree!({
            "name": "hubble-metrics-tls",
            "projected": {"defaultMode": MODE_0400, "sources": sources},
        }));
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
