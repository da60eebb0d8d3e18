//! The external kvstore: the etcd client configuration (from `cilium-config`) and its TLS
//! Secret, which the agent, the operator and the pre-flight check mount alike when
//! `etcd.enabled` is on.

use serde_json::Value;

use super::containers::mount_ro;
use crate::components::Ctx;

/// Kubernetes reads the chart's octal `0400` file mode as this decimal number.
const MODE_0400: u64 = 256;

/// The etcd client volumes: the configuration and, with `etcd.ssl`, the client Secret.
pub fn etcd_client_volumes(ctx: &Ctx) -> Vec<Value> {
    let mut v = Vec::new();
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
    v
}

/// The read-only mounts of `etcd_client_volumes`, where Cilium's binaries look for them.
pub fn etcd_client_mounts(ctx: &Ctx) -> Vec<Value> {
    let mut m = Vec::new();
    if ctx.on("etcd.enabled") {
        m.push(mount_ro("etcd-config-path", "/var/lib/etcd-config"));
        if ctx.on("etcd.ssl") {
            m.push(mount_ro("etcd-secrets", "/var/lib/etcd-secrets"));
        }
    }
    m
}

#[cfg(test)]
mod tests {
    use super::super::tests::with_ctx;
    use super::*;

    #[test]
    fn secrets_only_with_tls() {
        let names = |values: &str| {
            with_ctx(values, "1.35.0", |ctx| {
                let v = etcd_client_volumes(ctx);
                let m = etcd_client_mounts(ctx);
                assert_eq!(v.len(), m.len());
                v.iter().map(|v| v["name"].clone()).collect::<Vec<_>>()
            })
        };
        assert!(names("{}").is_empty());
        assert_eq!(names("etcd: {enabled: true}"), ["etcd-config-path"]);
        assert_eq!(
            names("etcd: {enabled: true, ssl: true}"),
            ["etcd-config-path", "etcd-secrets"]
        );
    }
}
