//! Mirrors the chart's templates: ztunnel/ (Istio's per-node L4 proxy, run by Cilium for
//! `encryption.type: ztunnel`: its DaemonSet, ServiceAccount and bootstrap-certificate Secret).

use crate::components::common::namespaced_workload;
use serde_json::Value;

use super::common::{
    self, labels, list_items, metadata, node_component_labels, priority_class_name, put,
    with_chart_label,
};
use super::common::{metadata_pod, service_account_object};
use super::Ctx;
use crate::changes::Change;
use crate::error::RenderError;
use crate::tmpl::{b64enc, bare, eq_text, quote, with};

const NAME: &str = "ztunnel-cilium";
const SECRET: &str = "cilium-ztunnel-secrets";
/// Where ztunnel reads the root certificate it trusts for xDS and the CA.
const ROOT_CERT: &str = "/etc/ztunnel/bootstrap-root.crt";

pub fn render(ctx: &Ctx) -> Result<Vec<Value>, RenderError> {
    if !ctx.plan.has(Change::Ztunnel) || !enabled(ctx)? {
        return Ok(Vec::new());
    }
    let mut out = vec![daemon_set(ctx)?];
    if ctx.on("encryption.ztunnel.secrets.bootstrapRootCert") {
        out.push(secret(ctx)?);
    }
    if ctx.on("serviceAccounts.ztunnel.create") {
        out.push(service_account_object(
            ctx,
            "ztunnel",
            ctx.v("encryption.ztunnel.annotations"),
            None,
        ));
    }
    Ok(out)
}

/// Encryption is on and its type is ztunnel; a type that is no string fails, as Helm's `eq`
/// does.
fn enabled(ctx: &Ctx) -> Result<bool, RenderError> {
    if !ctx.on("encryption.enabled") {
        return Ok(false);
    }
    eq_text(ctx.v("encryption.type"), "ztunnel").ok_or_else(|| {
        ctx.invalid(
            "encryption.type",
            "must be text: ipsec, wireguard or ztunnel",
        )
    })
}

fn secret(ctx: &Ctx) -> Result<Value, RenderError> {
    let Value::String(cert) = ctx.v("encryption.ztunnel.secrets.bootstrapRootCert") else {
        return Err(ctx.invalid(
            "encryption.ztunnel.secrets.bootstrapRootCert",
            "must be text (the chart base64-encodes it into the Secret)",
        ));
    };
    Ok(tree!({
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": metadata(
            SECRET,
            Some(&ctx.namespace()),
            Some(labels(
                &with_chart_label(
                    ctx,
                    &[
                        ("app.kubernetes.io/part-of", "cilium"),
                        ("app.kubernetes.io/name", NAME),
                    ],
                ),
                &[ctx.v("commonLabels")],
            )),
            with(ctx.v("encryption.ztunnel.annotations")),
        ),
        "type": "Opaque",
        "data": {"bootstrap-root.crt": bare(&Value::String(b64enc(cert.as_bytes())))},
    }))
}

fn own_labels<'a>(ctx: &'a Ctx) -> Vec<(&'a str, &'a str)> {
    node_component_labels(ctx, NAME)
}

fn daemon_set(ctx: &Ctx) -> Result<Value, RenderError> {
    let common_labels = ctx.v("commonLabels");
    let pod_annotations = common::merged(&[
        &tree!({"sidecar.istio.io/inject": "false"}),
        ctx.v("encryption.ztunnel.podAnnotations"),
    ]);
    let pod_labels = labels(
        &own_labels(ctx),
        &[common_labels, ctx.v("encryption.ztunnel.podLabels")],
    );
    let mut spec = tree!({
        "revisionHistoryLimit": 10,
        "selector": {"matchLabels": {"app": NAME}},
        "template": {
            "metadata": metadata_pod(pod_labels, pod_annotations),
            "spec": pod_spec(ctx)?,
        },
    });
    put(
        &mut spec,
        "updateStrategy",
        with(ctx.v("encryption.ztunnel.updateStrategy")),
    );
    crate::components::common::min_ready_seconds_from(
        ctx,
        &mut spec,
        "encryption.ztunnel.minReadySeconds",
    );
    Ok(namespaced_workload(
        ctx,
        "DaemonSet",
        NAME,
        &own_labels(ctx),
        ctx.v("encryption.ztunnel.annotations"),
        spec,
    ))
}

fn pod_spec(ctx: &Ctx) -> Result<Value, RenderError> {
    let mut volumes = vec![
        tree!({"name": "cilium-dir", "hostPath": {"path": "/var/run/cilium", "type": "DirectoryOrCreate"}}),
        tree!({"name": SECRET, "secret": {
            "secretName": SECRET,
            "defaultMode": 420,
            "items": [{"key": "bootstrap-root.crt", "path": "bootstrap-root.crt", "mode": 420}],
        }}),
    ];
    volumes.extend(list_items(ctx, "encryption.ztunnel.extraVolumes")?);
    let mut spec = tree!({
        "hostNetwork": true,
        "dnsPolicy": "ClusterFirst",
        "containers": [container(ctx)?],
        "priorityClassName": priority_class_name(ctx, ctx.v("encryption.ztunnel.priorityClassName"), "system-node-critical"),
        "restartPolicy": "Always",
        "terminationGracePeriodSeconds": bare(ctx.v("encryption.ztunnel.terminationGracePeriodSeconds")),
        "volumes": volumes,
    });
    if ctx.on("serviceAccounts.ztunnel.create") {
        put(
            &mut spec,
            "serviceAccountName",
            Some(Value::String(quote(ctx.v("serviceAccounts.ztunnel.name")))),
        );
        put(
            &mut spec,
            "automountServiceAccountToken",
            Some(bare(ctx.v("serviceAccounts.ztunnel.automount"))),
        );
    } else {
        put(
            &mut spec,
            "automountServiceAccountToken",
            Some(Value::Bool(false)),
        );
    }
    common::put_with(
        &mut spec,
        ctx,
        &[
            ("imagePullSecrets", "imagePullSecrets"),
            ("affinity", "encryption.ztunnel.affinity"),
            ("nodeSelector", "encryption.ztunnel.nodeSelector"),
            ("tolerations", "encryption.ztunnel.tolerations"),
        ],
    );
    Ok(spec)
}

fn container(ctx: &Ctx) -> Result<Value, RenderError> {
    let mut env = vec![
        tree!({"name": "XDS_ADDRESS", "value": "https://localhost:15012"}),
        tree!({"name": "XDS_ROOT_CA", "value": ROOT_CERT}),
        tree!({"name": "CA_ROOT_CA", "value": ROOT_CERT}),
        tree!({"name": "CA_ADDRESS", "value": quote(ctx.v("encryption.ztunnel.caAddress"))}),
        tree!({"name": "ISTIO_META_DNS_CAPTURE", "value": "false"}),
        tree!({"name": "INPOD_UDS", "value": "/var/run/cilium/ztunnel.sock"}),
        crate::components::common::field_env("NODE_NAME", "status.hostIP"),
        crate::components::common::field_env("INSTANCE_IP", "status.podIP"),
        tree!({"name": "ISTIO_META_ENABLE_HBONE", "value": "true"}),
    ];
    env.extend(list_items(ctx, "encryption.ztunnel.extraEnv")?);
    let mut mounts = vec![
        tree!({"mountPath": "/var/run/cilium", "name": "cilium-dir", "readOnly": false}),
        tree!({"mountPath": "/etc/ztunnel", "name": SECRET, "readOnly": true}),
    ];
    mounts.extend(list_items(ctx, "encryption.ztunnel.extraVolumeMounts")?);
    let probe = |key: &str| bare(ctx.v(&format!("encryption.ztunnel.readinessProbe.{key}")));
    let mut c = tree!({
        "name": "istio-proxy",
        "image": common::image(ctx.v("encryption.ztunnel.image")),
        "imagePullPolicy": bare(ctx.v("encryption.ztunnel.image.pullPolicy")),
        "args": ["proxy", "ztunnel"],
        "env": env,
        "readinessProbe": {
            "httpGet": {
                "path": "/healthz/ready",
                "port": bare(ctx.v("encryption.ztunnel.healthPort")),
                "host": "127.0.0.1",
                "scheme": "HTTP",
            },
            "initialDelaySeconds": probe("initialDelaySeconds"),
            "periodSeconds": probe("periodSeconds"),
            "failureThreshold": probe("failureThreshold"),
            "successThreshold": 1,
            "timeoutSeconds": 1,
        },
        "securityContext": {
            "allowPrivilegeEscalation": true,
            "capabilities": {"add": ["NET_ADMIN", "SYS_ADMIN", "NET_RAW"], "drop": ["ALL"]},
            "privileged": false,
            "readOnlyRootFilesystem": true,
            "runAsGroup": 1337,
            "runAsNonRoot": false,
            "runAsUser": 0,
        },
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "File",
        "volumeMounts": mounts,
    });
    put(
        &mut c,
        "resources",
        with(ctx.v("encryption.ztunnel.resources")),
    );
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::components::common::tests::with_release;

    fn kinds(version: &str, values: &str) -> Vec<String> {
        with_release(version, values, "1.35.0", |ctx| {
            render(ctx)
                .unwrap()
                .iter()
                .map(|o| o["kind"].as_str().unwrap_or_default().to_string())
                .collect()
        })
    }

    #[test]
    fn ztunnel_arrives_in_1_19_2() {
        let on = "encryption: {enabled: true, type: ztunnel}";
        assert!(kinds("1.19.1", on).is_empty());
        assert_eq!(kinds("1.19.2", on), ["DaemonSet", "ServiceAccount"]);
        assert!(kinds("1.19.2", "encryption: {enabled: false, type: ztunnel}").is_empty());
    }

    #[test]
    fn the_bootstrap_certificate_becomes_a_secret() {
        let values = "encryption: {enabled: true, type: ztunnel, ztunnel: {secrets: {bootstrapRootCert: abc}}}";
        let secret = with_release("1.20.0", values, "1.35.0", |ctx| secret(ctx).unwrap());
        assert_eq!(secret["data"]["bootstrap-root.crt"], "YWJj");
        assert_eq!(
            secret["metadata"]["labels"]["helm.sh/chart"],
            "cilium-1.20.0"
        );
    }
}
