//! The small pieces every container and workload is built from: environment variables read
//! from the pod's own fields, ports, volume mounts, and the DaemonSet/Deployment envelope.

use serde_json::Value;

use super::labels::{labels_with_common, metadata};
use crate::components::Ctx;
use crate::tmpl::with;

/// An environment variable from one of the pod's own fields (the downward API), with the
/// `apiVersion: v1` most of the chart's templates write.
pub fn field_env(name: &str, field: &str) -> Value {
    tree!({"name": name, "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": field}}})
}

/// `field_env` as the templates that leave out `apiVersion` write it (clustermesh-apiserver,
/// SPIRE). Kubernetes fills in `v1` either way, but parity compares the render.
pub fn field_env_without_api_version(name: &str, field: &str) -> Value {
    tree!({"name": name, "valueFrom": {"fieldRef": {"fieldPath": field}}})
}

/// A TCP container port.
pub fn tcp_port(name: &str, number: Value) -> Value {
    tree!({"name": name, "containerPort": number, "protocol": "TCP"})
}

/// A TCP container port opened on the node at the same number (host-network pods).
pub fn host_tcp_port(name: &str, number: Value) -> Value {
    tree!({"name": name, "containerPort": number.clone(), "hostPort": number, "protocol": "TCP"})
}

/// A writable volume mount.
pub fn mount(name: &str, path: impl Into<Value>) -> Value {
    tree!({"name": name, "mountPath": path.into()})
}

/// A read-only volume mount.
pub fn mount_ro(name: &str, path: impl Into<Value>) -> Value {
    tree!({"name": name, "mountPath": path.into(), "readOnly": true})
}

/// The envelope of a workload (`DaemonSet`, `Deployment`, ...): its kind, metadata and spec.
pub fn workload(kind: &str, metadata: Value, spec: Value) -> Value {
    tree!({"apiVersion": "apps/v1", "kind": kind, "metadata": metadata, "spec": spec})
}

/// The usual workload of a component in Cilium's namespace: named `name`, labelled with its
/// own labels followed by `commonLabels`, annotated with the value at `annotations` when set.
pub fn namespaced_workload(
    ctx: &Ctx,
    kind: &str,
    name: &str,
    own_labels: &[(&str, &str)],
    annotations: &Value,
    spec: Value,
) -> Value {
    let meta = metadata(
        name,
        Some(&ctx.namespace()),
        Some(labels_with_common(ctx, own_labels, &[])),
        with(annotations),
    );
    workload(kind, meta, spec)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn pieces() {
        assert_eq!(
            field_env("N", "spec.nodeName")["valueFrom"]["fieldRef"],
            json!({"apiVersion": "v1", "fieldPath": "spec.nodeName"})
        );
        assert!(
            field_env_without_api_version("N", "x")["valueFrom"]["fieldRef"]
                .get("apiVersion")
                .is_none()
        );
        assert_eq!(host_tcp_port("p", json!(1.0))["hostPort"], json!(1.0));
        assert!(tcp_port("p", json!(1.0)).get("hostPort").is_none());
        assert_eq!(mount("a", "/a"), json!({"name": "a", "mountPath": "/a"}));
        assert_eq!(mount_ro("a", "/a")["readOnly"], json!(true));
        let w = workload("DaemonSet", json!({"name": "x"}), json!({}));
        assert_eq!(w["apiVersion"], "apps/v1");
        assert_eq!(w["kind"], "DaemonSet");
    }
}
