//! The operator's Deployment (cilium-operator/deployment.yaml).

use crate::components::common::mount_ro;
use crate::components::common::namespaced_workload;
use serde_json::{Map, Value};

use super::super::common::{
    self, host_path_mounts, labels, list_items, merged, priority_class_name, put, put_with,
    topology_spread, with_chart_label,
};
use super::super::Ctx;
use super::{clustermesh_sync, OWN_LABELS, SELECTOR};
use crate::changes::Change;
use crate::components::common::{loopback, metadata_pod, HOST_PATH_NOT_A_MAP};
use crate::error::RenderError;
use crate::tmpl::{bare, path_dir, print, quote, quoted, truthy, with};

/// The port the operator serves its health checks on.
const HEALTH_PORT: u16 = 9234;

/// `cilium.operator.cloud`: which operator binary and image flavour runs.
fn cloud(ctx: &Ctx) -> &'static str {
    if ctx.on("eni.enabled") {
        "aws"
    } else if ctx.on("azure.enabled") {
        "azure"
    } else if ctx.on("alibabacloud.enabled") {
        "alibabacloud"
    } else {
        "generic"
    }
}

/// `cilium.operator.image`: `REPOSITORY-CLOUD SUFFIX[:TAG][@CLOUD_DIGEST]` unless overridden.
fn operator_image(ctx: &Ctx) -> String {
    let img = ctx.v("operator.image");
    if truthy(&img["override"]) {
        return print(&img["override"]);
    }
    let cloud = cloud(ctx);
    let digest_key = format!("{cloud}Digest");
    let digest = if truthy(&img["useDigest"]) {
        format!("@{}", quote(&img[digest_key.as_str()]))
    } else {
        String::new()
    };
    let tag = if truthy(&img["tag"]) {
        format!(":{}", print(&img["tag"]))
    } else {
        String::new()
    };
    format!(
        "{}-{}{}{}{}",
        quote(&img["repository"]),
        cloud,
        quote(&img["suffix"]),
        tag,
        digest
    )
}

pub(super) fn deployment(ctx: &Ctx) -> Result<Value, RenderError> {
    let own_labels = with_chart_label(ctx, OWN_LABELS);
    let common_labels = ctx.v("commonLabels");
    let replicas = ctx.v("operator.replicas");
    let mut deploy_spec = tree!({
        "replicas": bare(replicas),
        "selector": tree!({"matchLabels": labels(SELECTOR, &[])}),
        "template": tree!({
            "metadata": metadata_pod(
                labels(&own_labels, &[common_labels, ctx.v("operator.podLabels")]),
                pod_annotations(ctx)?,
            ),
            "spec": pod_spec(ctx)?,
        }),
    });
    put(&mut deploy_spec, "strategy", strategy(ctx, replicas));

    Ok(namespaced_workload(
        ctx,
        "Deployment",
        "cilium-operator",
        &own_labels,
        ctx.v("operator.annotations"),
        deploy_spec,
    ))
}

/// A single replica rolls with `maxUnavailable: 100%`, so the update does not wait for a
/// second node; otherwise the strategy as given.
fn strategy(ctx: &Ctx, replicas: &Value) -> Option<Value> {
    let strategy = ctx.v("operator.updateStrategy");
    if print(replicas) == "1" && strategy["type"].as_str() == Some("RollingUpdate") {
        Some(tree!({
            "rollingUpdate": {
                "maxSurge": bare(&strategy["rollingUpdate"]["maxSurge"]),
                "maxUnavailable": "100%",
            },
            "type": "RollingUpdate",
        }))
    } else {
        with(strategy)
    }
}

fn pod_annotations(ctx: &Ctx) -> Result<Option<Value>, RenderError> {
    let mut own = Map::new();
    if ctx.on("operator.rollOutPods") {
        own.insert(
            "cilium.io/cilium-configmap-checksum".into(),
            Value::String(super::super::config::cilium_config_checksum(ctx)?),
        );
    }
    if ctx.on("operator.prometheus.enabled")
        && !ctx.on("operator.prometheus.serviceMonitor.enabled")
    {
        own.insert(
            "prometheus.io/port".into(),
            quoted(ctx.v("operator.prometheus.port")),
        );
        own.insert("prometheus.io/scrape".into(), Value::from("true"));
    }
    Ok(merged(&[
        &Value::Object(own),
        ctx.v("operator.podAnnotations"),
    ]))
}

fn pod_spec(ctx: &Ctx) -> Result<Value, RenderError> {
    let mut spec = tree!({
        "containers": vec![container(ctx)?],
        "hostNetwork": bare(ctx.v("operator.hostNetwork")),
        "restartPolicy": "Always",
        "priorityClassName": priority_class_name(ctx, ctx.v("operator.priorityClassName"), "system-cluster-critical"),
        "serviceAccountName": quote(ctx.v("serviceAccounts.operator.name")),
        "automountServiceAccountToken": bare(ctx.v("serviceAccounts.operator.automount")),
        "volumes": volumes(ctx)?,
    });
    if ctx.plan.has(Change::OperatorAndPreflightHostUsers)
        && ctx.plan.kube.user_namespaces_by_default()
    {
        put(
            &mut spec,
            "hostUsers",
            Some(bare(ctx.v("operator.hostUsers"))),
        );
    }
    put_with(
        &mut spec,
        ctx,
        &[
            ("imagePullSecrets", "imagePullSecrets"),
            ("securityContext", "operator.podSecurityContext"),
        ],
    );
    if ctx.on("operator.dnsPolicy") {
        put(
            &mut spec,
            "dnsPolicy",
            Some(bare(ctx.v("operator.dnsPolicy"))),
        );
    }
    put(&mut spec, "affinity", with(ctx.v("operator.affinity")));
    // Anything but a list is refused, as for the lists spliced into the pod spec.
    list_items(ctx, "operator.topologySpreadConstraints")?;
    put(
        &mut spec,
        "topologySpreadConstraints",
        topology_spread(ctx.v("operator.topologySpreadConstraints"), SELECTOR),
    );
    put(
        &mut spec,
        "nodeSelector",
        with(ctx.v("operator.nodeSelector")),
    );
    put(&mut spec, "hostAliases", host_aliases(ctx)?);
    put(&mut spec, "tolerations", tolerations(ctx)?);
    Ok(spec)
}

fn container(ctx: &Ctx) -> Result<Value, RenderError> {
    let mut args = vec![
        Value::from("--config-dir=/tmp/cilium/config-map"),
        Value::from("--debug=$(CILIUM_DEBUG)"),
    ];
    args.extend(list_items(ctx, "operator.extraArgs")?);
    let mut container = tree!({
        "name": "cilium-operator",
        "image": operator_image(ctx),
        "imagePullPolicy": bare(ctx.v("operator.image.pullPolicy")),
        "command": tree!([format!("cilium-operator-{}", cloud(ctx))]),
        "args": args,
        "env": env(ctx)?,
        "livenessProbe": probe(ctx, 60.0, 10.0, None),
        "readinessProbe": probe(ctx, 0.0, 5.0, Some(5.0)),
        "volumeMounts": volume_mounts(ctx)?,
        "terminationMessagePolicy": "FallbackToLogsOnError",
    });
    put(&mut container, "ports", ports(ctx));
    put_with(
        &mut container,
        ctx,
        &[
            ("resources", "operator.resources"),
            ("securityContext", "operator.securityContext"),
        ],
    );
    Ok(container)
}

fn secret_env(name: &str, secret: &str, optional: bool) -> Value {
    let mut r = tree!({"name": secret, "key": name});
    if optional {
        put(&mut r, "optional", Some(Value::Bool(true)));
    }
    tree!({"name": name, "valueFrom": {"secretKeyRef": r}})
}

fn env(ctx: &Ctx) -> Result<Vec<Value>, RenderError> {
    let mut env = vec![
        common::field_env("K8S_NODE_NAME", "spec.nodeName"),
        common::field_env("CILIUM_K8S_NAMESPACE", "metadata.namespace"),
    ];
    if clustermesh_sync(ctx) {
        env.push(
            tree!({"name": "CILIUM_CLUSTERMESH_CONFIG", "value": "/var/lib/cilium/clustermesh/"}),
        );
    }
    env.push(tree!({"name": "CILIUM_DEBUG", "valueFrom": {"configMapKeyRef": {"key": "debug", "name": "cilium-config", "optional": true}}}));
    if ctx.on("eni.enabled") && !ctx.on("eni.iamRole") {
        for k in [
            "AWS_ACCESS_KEY_ID",
            "AWS_SECRET_ACCESS_KEY",
            "AWS_DEFAULT_REGION",
        ] {
            env.push(secret_env(k, "cilium-aws", true));
        }
    }
    if ctx.on("alibabacloud.enabled") {
        for k in [
            "ALIBABA_CLOUD_ACCESS_KEY_ID",
            "ALIBABA_CLOUD_ACCESS_KEY_SECRET",
        ] {
            env.push(secret_env(k, "cilium-alibabacloud", true));
        }
    }
    env.extend(common::k8s_service_env(ctx)?);
    if ctx.on("azure.enabled") {
        for (var, path) in [
            ("AZURE_SUBSCRIPTION_ID", "azure.subscriptionID"),
            ("AZURE_TENANT_ID", "azure.tenantID"),
            ("AZURE_RESOURCE_GROUP", "azure.resourceGroup"),
        ] {
            if ctx.on(path) {
                env.push(tree!({"name": var, "value": bare(ctx.v(path))}));
            }
        }
        // The chart's Secret holds the credentials only when there is a client ID.
        if ctx.on("azure.clientID") || !ctx.plan.has(Change::AzureCredentialsNeedClientId) {
            env.push(secret_env("AZURE_CLIENT_ID", "cilium-azure", false));
            env.push(secret_env("AZURE_CLIENT_SECRET", "cilium-azure", false));
        }
    }
    env.extend(list_items(ctx, "operator.extraEnv")?);
    Ok(env)
}

/// The health port (from 1.19, named so the probes can refer to it) and the metrics port.
fn ports(ctx: &Ctx) -> Option<Value> {
    let host_network = ctx.on("operator.hostNetwork");
    let mut ports = Vec::new();
    if ctx.plan.has(Change::OperatorHealthPort) {
        let mut health = tree!({"name": "health", "containerPort": HEALTH_PORT});
        if host_network || !ctx.plan.has(Change::OperatorHealthHostPortWithHostNetwork) {
            put(&mut health, "hostPort", Some(tree!(HEALTH_PORT)));
        }
        ports.push(health);
    }
    if ctx.on("operator.prometheus.enabled") {
        let port = bare(ctx.v("operator.prometheus.port"));
        let mut p = tree!({"name": "prometheus", "containerPort": &port, "protocol": "TCP"});
        if host_network {
            put(&mut p, "hostPort", Some(port));
        }
        ports.push(p);
    }
    (!ports.is_empty()).then_some(Value::Array(ports))
}

fn probe(ctx: &Ctx, initial: f64, period: f64, failure: Option<f64>) -> Value {
    let port = if ctx.plan.has(Change::OperatorHealthPort) {
        tree!("health")
    } else {
        tree!(HEALTH_PORT)
    };
    let mut get = tree!({"path": "/healthz", "port": port, "scheme": "HTTP"});
    if ctx.on("operator.hostNetwork") {
        put(&mut get, "host", Some(Value::from(loopback(ctx))));
    }
    let mut p = tree!({
        "httpGet": get,
        "initialDelaySeconds": initial,
        "periodSeconds": period,
        "timeoutSeconds": 3,
    });
    if let Some(f) = failure {
        put(&mut p, "failureThreshold", Some(tree!(f)));
    }
    p
}

fn prometheus_tls(ctx: &Ctx) -> bool {
    ctx.plan.has(Change::OperatorPrometheusTls)
        && ctx.on("operator.prometheus.enabled")
        && ctx.on("operator.prometheus.tls.enabled")
}

fn spire_socket_dir(ctx: &Ctx) -> Value {
    bare(&Value::from(path_dir(&quote(
        ctx.v("authentication.mutual.spire.agentSocketPath"),
    ))))
}

fn volume_mounts(ctx: &Ctx) -> Result<Vec<Value>, RenderError> {
    let mut mounts = vec![mount_ro("cilium-config-path", "/tmp/cilium/config-map")];
    mounts.extend(common::etcd_client_mounts(ctx));
    if clustermesh_sync(ctx) {
        mounts.push(mount_ro(
            "clustermesh-secrets",
            "/var/lib/cilium/clustermesh",
        ));
    }
    if ctx.on("kubeConfigPath") {
        mounts.push(mount_ro("kube-config", bare(ctx.v("kubeConfigPath"))));
    }
    if ctx.on("authentication.mutual.spire.enabled") {
        mounts.push(mount_ro("spire-agent-socket", spire_socket_dir(ctx)));
    }
    if prometheus_tls(ctx) {
        mounts.push(mount_ro("prometheus-tls", "/var/lib/cilium/tls/prometheus"));
    }
    let (extra_mounts, _) =
        host_path_mounts(ctx, "operator.extraHostPathMounts", HOST_PATH_NOT_A_MAP)?;
    mounts.extend(extra_mounts);
    mounts.extend(list_items(ctx, "operator.extraVolumeMounts")?);
    Ok(mounts)
}

fn volumes(ctx: &Ctx) -> Result<Vec<Value>, RenderError> {
    let mut volumes =
        vec![tree!({"name": "cilium-config-path", "configMap": {"name": "cilium-config"}})];
    volumes.extend(common::etcd_client_volumes(ctx));
    if ctx.on("kubeConfigPath") {
        volumes.push(tree!({"name": "kube-config", "hostPath": {"path": bare(ctx.v("kubeConfigPath")), "type": "FileOrCreate"}}));
    }
    let (_, extra_volumes) =
        host_path_mounts(ctx, "operator.extraHostPathMounts", HOST_PATH_NOT_A_MAP)?;
    volumes.extend(extra_volumes);
    if ctx.on("authentication.mutual.spire.enabled") {
        volumes.push(tree!({"name": "spire-agent-socket", "hostPath": {"path": spire_socket_dir(ctx), "type": "DirectoryOrCreate"}}));
    }
    volumes.extend(list_items(ctx, "operator.extraVolumes")?);
    if clustermesh_sync(ctx) {
        volumes.push(clustermesh_volume(ctx));
    }
    if prometheus_tls(ctx) {
        volumes.push(prometheus_tls_volume(ctx));
    }
    Ok(volumes)
}

/// The projected volume with the clustermesh secrets and client certificates.
fn clustermesh_volume(ctx: &Ctx) -> Value {
    let cert = |secret: &str, prefix: &str| {
        let items = vec![
            tree!({"key": "tls.key", "path": format!("{prefix}-etcd-client.key")}),
            tree!({"key": "tls.crt", "path": format!("{prefix}-etcd-client.crt")}),
        ];
        common::cert_sources(
            ctx,
            secret,
            items,
            &format!("{prefix}-etcd-client-ca.crt"),
            true,
        )
    };
    let mut sources = vec![tree!({"secret": {"name": "cilium-clustermesh", "optional": true}})];
    sources.extend(cert("clustermesh-apiserver-remote-cert", "common"));
    sources.extend(cert("clustermesh-apiserver-local-cert", "local"));
    tree!({"name": "clustermesh-secrets", "projected": {"defaultMode": 256, "sources": sources}})
}

/// The metrics server's certificate (and, with mTLS, the client CA) from a user's Secret.
fn prometheus_tls_volume(ctx: &Ctx) -> Value {
    let mut items = vec![
        tree!({"key": "tls.crt", "path": "server.crt"}),
        tree!({"key": "tls.key", "path": "server.key"}),
    ];
    if ctx.on("operator.prometheus.tls.server.mtls.enabled") {
        items.push(tree!({"key": "ca.crt", "path": "client-ca.crt"}));
    }
    tree!({"name": "prometheus-tls", "projected": {"defaultMode": 256, "sources": [{"secret": {
        "name": bare(ctx.v("operator.prometheus.tls.server.existingSecret")),
        "optional": true,
        "items": items,
    }}]}})
}

/// Host names for the remote clusters' etcd, when the operator reaches them directly (not
/// through KVStoreMesh).
fn host_aliases(ctx: &Ctx) -> Result<Option<Value>, RenderError> {
    let wanted = clustermesh_sync(ctx)
        && ctx.on("clustermesh.config.enabled")
        && !(ctx.on("clustermesh.useAPIServer")
            && ctx.on("clustermesh.apiserver.kvstoremesh.enabled"))
        && !(ctx.plan.has(Change::OperatorHostAliasesCanBeDisabled)
            && ctx.on("clustermesh.disableKubernetesHostAliases"));
    if !wanted {
        return Ok(None);
    }
    let aliases = common::mesh_host_aliases(ctx)?;
    Ok((!aliases.is_empty()).then_some(Value::Array(aliases)))
}

/// The user's tolerations and, with `agentNotReadyTaintKey`, one for the agent's taint.
fn tolerations(ctx: &Ctx) -> Result<Option<Value>, RenderError> {
    let mut tolerations = list_items(ctx, "operator.tolerations")?;
    let taint = ctx.v("agentNotReadyTaintKey");
    if !taint.is_null() {
        if tolerations.is_empty() && !ctx.plan.has(Change::OperatorTaintTolerationAlone) {
            return Err(ctx.invalid(
                "operator.tolerations",
                "an empty list makes the chart write the agent-not-ready toleration (agentNotReadyTaintKey) outside any list, which is invalid YAML; keep at least one toleration, or set agentNotReadyTaintKey: null",
            ));
        }
        tolerations.push(tree!({"key": bare(taint), "operator": "Exists"}));
    }
    Ok((!tolerations.is_empty()).then_some(Value::Array(tolerations)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::components::common::tests::with_release;

    fn names(version: &str, values: &str) -> Vec<String> {
        with_release(version, values, "1.33.0", |ctx| {
            let clusters = crate::components::common::mesh_clusters(ctx).expect("valid clusters");
            clusters.iter().map(|c| quote(&c["name"])).collect()
        })
    }

    #[test]
    fn clusters_are_a_map_or_a_list_by_name_from_1_19() {
        let list =
            "clustermesh: {config: {clusters: [{name: b}, {name: a}, {name: c, enabled: false}]}}";
        assert_eq!(names("1.18.12", list), ["b", "a", "c"]);
        assert_eq!(names("1.19.0", list), ["a", "b"]);
        let map = "clustermesh: {config: {clusters: {z: {ips: [1.2.3.4]}, y: {enabled: false}}}}";
        assert_eq!(names("1.19.0", map), ["z"]);
    }
}
