//! The clustermesh-apiserver Deployment: etcd (with its init container), the apiserver that
//! mirrors CRD state into etcd, and KVStoreMesh that caches remote clusters.

use crate::changes::Change;
use serde_json::{Map, Value};

use super::{mesh_annotations, State, API, APP, APP_LABELS};
use crate::components::common::{
    self, field_env_without_api_version, image, labels_with_common, list_items, merged, metadata,
    mount, mount_ro, priority_class_name, put, tcp_port, with_chart_label, workload,
};
use crate::components::Ctx;
use crate::error::RenderError;
use crate::tmpl::{bare, quote, with};

/// The `defaultMode: 0400` of the chart's volumes (YAML reads the leading zero as octal).
const MODE_0400: u64 = 0o400;

fn p(key: &str) -> String {
    format!("{API}.{key}")
}

fn config_map_env(name: &str, key: &str, optional: bool) -> Value {
    let mut r = tree!({"name": "cilium-config", "key": key});
    if optional {
        put(&mut r, "optional", Some(Value::Bool(true)));
    }
    tree!({"name": name, "valueFrom": {"configMapKeyRef": r}})
}

/// The readiness probe on a named port, with the user's probe settings merged in.
fn readiness(port: &str, user: &Value) -> Value {
    let base = tree!({"httpGet": {"path": "/readyz", "port": port}});
    merged(&[&base, user]).unwrap_or(base)
}

fn set(c: &mut Map<String, Value>, key: &str, v: Option<Value>) {
    if let Some(v) = v {
        c.insert(key.to_string(), v);
    }
}

/// Where a container's own settings live (value paths), each inserted when set.
struct Settings {
    resources: String,
    security: String,
    lifecycle: Option<String>,
}

/// A container of the Pod on the apiserver image, with its settings from `settings`.
fn container(
    ctx: &Ctx,
    name: &str,
    command: &str,
    (img, pull): (&Value, &Value),
    (args, env, mounts): (Vec<Value>, Vec<Value>, Vec<Value>),
    settings: Settings,
) -> Map<String, Value> {
    let mut c = Map::new();
    c.insert("name".into(), tree!(name));
    c.insert("image".into(), img.clone());
    c.insert("imagePullPolicy".into(), pull.clone());
    c.insert("command".into(), tree!([command]));
    c.insert("args".into(), Value::Array(args));
    c.insert("env".into(), Value::Array(env));
    c.insert("volumeMounts".into(), Value::Array(mounts));
    c.insert(
        "terminationMessagePolicy".into(),
        tree!("FallbackToLogsOnError"),
    );
    set(&mut c, "resources", with(ctx.v(&settings.resources)));
    set(&mut c, "securityContext", with(ctx.v(&settings.security)));
    if let Some(l) = settings.lifecycle {
        set(&mut c, "lifecycle", with(ctx.v(&l)));
    }
    c
}

/// The flags with which the apiserver and KVStoreMesh serve metrics on the port at `port_path`.
fn metrics_args(ctx: &Ctx, port_path: &str) -> [Value; 2] {
    [
        Value::String(format!(
            "--prometheus-serve-addr=:{}",
            quote(ctx.v(port_path))
        )),
        tree!("--controller-group-metrics=all"),
    ]
}

/// The apiserver and KVStoreMesh containers: settings, readiness probe and health port from
/// their values block, plus the metrics port (name, value path) when metrics are on.
fn serving_container(
    ctx: &Ctx,
    (name, values): (&str, &str),
    (health, metrics): (&str, Option<(&str, &str)>),
    image: (&Value, &Value),
    io: (Vec<Value>, Vec<Value>, Vec<Value>),
) -> Value {
    let at = |key: &str| format!("{values}.{key}");
    let mut c = container(
        ctx,
        name,
        "/usr/bin/clustermesh-apiserver",
        image,
        io,
        Settings {
            resources: at("resources"),
            security: at("securityContext"),
            lifecycle: Some(at("lifecycle")),
        },
    );
    c.insert(
        "readinessProbe".into(),
        readiness(health, ctx.v(&at("readinessProbe"))),
    );
    let mut ports = vec![tcp_port(health, bare(ctx.v(&at("healthPort"))))];
    if let Some((name, path)) = metrics {
        ports.push(tcp_port(name, bare(ctx.v(path))));
    }
    c.insert("ports".into(), Value::Array(ports));
    Value::Object(c)
}

pub(super) fn render(ctx: &Ctx, s: &State) -> Result<Value, RenderError> {
    let sh = Shared::new(ctx)?;
    let mut init_containers = Vec::new();
    let mut containers = Vec::new();
    if s.internal {
        init_containers.push(etcd_init(ctx, &sh)?);
        containers.push(etcd(ctx, &sh)?);
    }
    if s.crd {
        containers.push(apiserver(ctx, &sh)?);
    }
    if s.kvstoremesh {
        containers.push(kvstoremesh(ctx, s, &sh)?);
    }
    let volumes = volumes(ctx, s, sh.legacy)?;
    let pod = pod_spec(ctx, s, init_containers, containers, volumes)?;

    let pod_annotations = merged(&[
        ctx.v(&p("podAnnotations")),
        &tree!({"kubectl.kubernetes.io/default-container": "apiserver"}),
    ]);
    let pod_labels = Some(labels_with_common(
        ctx,
        &with_chart_label(ctx, &APP_LABELS),
        &[ctx.v(&p("podLabels"))],
    ));
    let mut template_meta = Map::new();
    set(&mut template_meta, "annotations", pod_annotations);
    set(&mut template_meta, "labels", pod_labels);

    let mut spec = Map::new();
    spec.insert("replicas".into(), bare(ctx.v(&p("replicas"))));
    spec.insert("selector".into(), tree!({"matchLabels": {"k8s-app": APP}}));
    if s.external {
        // KVStoreMesh takes no lock on an external etcd, so two Pods must never overlap.
        spec.insert("strategy".into(), tree!({"type": "Recreate"}));
    } else {
        set(&mut spec, "strategy", with(ctx.v(&p("updateStrategy"))));
    }
    spec.insert(
        "template".into(),
        tree!({"metadata": template_meta, "spec": pod}),
    );

    let labels = Some(labels_with_common(
        ctx,
        &with_chart_label(ctx, &APP_LABELS),
        &[],
    ));
    let meta = metadata(APP, Some(&s.namespace), labels, mesh_annotations(ctx));
    Ok(workload("Deployment", meta, Value::Object(spec)))
}

/// What the Pod's containers share, read once.
struct Shared {
    image: Value,
    pull_policy: Value,
    debug: bool,
    /// `tls.authMode: legacy`: no per-cluster etcd users.
    legacy: bool,
    max_clusters: Value,
    extra_mounts: Vec<Value>,
    /// Before 1.18.5 etcd listened on the Pod's IP rather than everywhere.
    pod_ip_urls: bool,
}

impl Shared {
    fn new(ctx: &Ctx) -> Result<Shared, RenderError> {
        Ok(Shared {
            image: Value::String(image(ctx.v(&p("image")))),
            pull_policy: bare(ctx.v(&p("image.pullPolicy"))),
            debug: ctx.on("debug.enabled"),
            legacy: ctx.text(&p("tls.authMode")) == "legacy",
            max_clusters: ctx.v("clustermesh.maxConnectedClusters").clone(),
            extra_mounts: list_items(ctx, &p("extraVolumeMounts"))?,
            pod_ip_urls: !ctx.plan.has(Change::ClustermeshEtcdListensEverywhere),
        })
    }
}

/// `etcd-init`: prepares the data directory of the Pod's own etcd.
fn etcd_init(ctx: &Ctx, sh: &Shared) -> Result<Value, RenderError> {
    let mut args = vec![tree!("etcdinit")];
    if sh.debug {
        args.push(tree!("--debug"));
    }
    args.extend([
        tree!("--etcd-cluster-name=clustermesh-apiserver"),
        tree!("--etcd-initial-cluster-token=$(INITIAL_CLUSTER_TOKEN)"),
        tree!("--etcd-data-dir=/var/run/etcd"),
    ]);
    args.extend(list_items(ctx, &p("etcd.init.extraArgs"))?);
    let mut env = vec![
        config_map_env("CILIUM_CLUSTER_NAME", "cluster-name", false),
        field_env_without_api_version("INITIAL_CLUSTER_TOKEN", "metadata.uid"),
    ];
    env.extend(list_items(ctx, &p("etcd.init.extraEnv"))?);
    let mut mounts = vec![mount("etcd-data-dir", "/var/run/etcd")];
    mounts.extend(sh.extra_mounts.iter().cloned());
    let c = container(
        ctx,
        "etcd-init",
        "/usr/bin/clustermesh-apiserver",
        (&sh.image, &sh.pull_policy),
        (args, env, mounts),
        Settings {
            resources: p("etcd.init.resources"),
            security: p("etcd.securityContext"),
            lifecycle: None,
        },
    );
    Ok(Value::Object(c))
}

/// `etcd`: the Pod's own etcd, serving the clusters of the mesh over TLS.
fn etcd(ctx: &Ctx, sh: &Shared) -> Result<Value, RenderError> {
    let etcd_metrics = ctx.on(&p("metrics.etcd.enabled"));
    let mut args = vec![
        tree!("--data-dir=/var/run/etcd"),
        tree!("--name=clustermesh-apiserver"),
        tree!("--client-cert-auth"),
        tree!("--trusted-ca-file=/var/lib/etcd-secrets/ca.crt"),
        tree!("--cert-file=/var/lib/etcd-secrets/tls.crt"),
        tree!("--key-file=/var/lib/etcd-secrets/tls.key"),
    ];
    if sh.pod_ip_urls {
        args.push(tree!(
            "--listen-client-urls=https://127.0.0.1:2379,https://[$(HOSTNAME_IP)]:2379"
        ));
        args.push(tree!(
            "--advertise-client-urls=https://[$(HOSTNAME_IP)]:2379"
        ));
    } else {
        args.push(tree!("--listen-client-urls=https://0.0.0.0:2379"));
        args.push(tree!("--advertise-client-urls=https://localhost:2379"));
    }
    args.push(tree!("--initial-cluster-token=$(INITIAL_CLUSTER_TOKEN)"));
    args.push(tree!("--auto-compaction-retention=1"));
    if ctx.plan.has(Change::ClustermeshEtcdNoGrpcGateway) {
        args.push(tree!("--enable-grpc-gateway=false"));
    }
    if etcd_metrics {
        let host = if sh.pod_ip_urls {
            "[$(HOSTNAME_IP)]"
        } else {
            "0.0.0.0"
        };
        args.push(Value::String(format!(
            "--listen-metrics-urls=http://{host}:{}",
            quote(ctx.v(&p("metrics.etcd.port")))
        )));
        args.push(Value::String(format!(
            "--metrics={}",
            quote(ctx.v(&p("metrics.etcd.mode")))
        )));
    }
    let mut env = vec![tree!({"name": "ETCDCTL_API", "value": "3"})];
    if sh.pod_ip_urls {
        env.push(field_env_without_api_version("HOSTNAME_IP", "status.podIP"));
    }
    env.push(field_env_without_api_version(
        "INITIAL_CLUSTER_TOKEN",
        "metadata.uid",
    ));
    let mut ports = vec![tree!({"name": "etcd", "containerPort": 2379, "protocol": "TCP"})];
    if etcd_metrics {
        ports.push(tcp_port(
            "etcd-metrics",
            bare(ctx.v(&p("metrics.etcd.port"))),
        ));
    }
    let mut mounts = vec![
        mount_ro("etcd-server-secrets", "/var/lib/etcd-secrets"),
        mount("etcd-data-dir", "/var/run/etcd"),
    ];
    mounts.extend(sh.extra_mounts.iter().cloned());
    let mut c = container(
        ctx,
        "etcd",
        "/usr/bin/etcd",
        (&sh.image, &sh.pull_policy),
        (args, env, mounts),
        Settings {
            resources: p("etcd.resources"),
            security: p("etcd.securityContext"),
            lifecycle: Some(p("etcd.lifecycle")),
        },
    );
    c.insert("ports".into(), Value::Array(ports));
    Ok(Value::Object(c))
}

/// `apiserver`: mirrors the cluster's identities, endpoints and services from CRDs into etcd.
fn apiserver(ctx: &Ctx, sh: &Shared) -> Result<Value, RenderError> {
    let metrics = ctx.on(&p("metrics.enabled"));
    let qps = etcd_qps(ctx, &p("etcdQPS"), "20");
    let mut args = kvstore_client_args("clustermesh", sh.debug, &qps);
    args.push(tree!("--kvstore-opt=etcd.bootstrapQps=10000"));
    push_max_clusters(&mut args, &sh.max_clusters);
    push_health_port(&mut args, ctx.v(&p("healthPort")));
    if !sh.legacy {
        args.push(tree!("--cluster-users-enabled"));
        args.push(tree!(
            "--cluster-users-config-path=/var/lib/cilium/etcd-config/users.yaml"
        ));
    }
    if metrics {
        args.extend(metrics_args(ctx, &p("metrics.port")));
    }
    if super::mcs_api_enabled(ctx) {
        args.push(tree!("--clustermesh-enable-mcs-api"));
    }
    if ctx.on("ciliumEndpointSlice.enabled") {
        args.push(tree!("--enable-cilium-endpoint-slice"));
    }
    if ctx.plan.has(Change::ClustermeshDefaultGlobalNamespace) {
        args.push(Value::String(format!(
            "--clustermesh-default-global-namespace={}",
            quote(ctx.v("clustermesh.defaultGlobalNamespace"))
        )));
    }
    args.extend(list_items(ctx, &p("extraArgs"))?);
    let mut env = vec![
        config_map_env("CLUSTER_NAME", "cluster-name", false),
        config_map_env("CLUSTER_ID", "cluster-id", true),
        config_map_env(
            "ENABLE_K8S_ENDPOINT_SLICE",
            "enable-k8s-endpoint-slice",
            true,
        ),
    ];
    let extra_env = list_items(ctx, &p("extraEnv"))?;
    // Before 1.18.1 the chart placed these entries after the readiness probe, where they
    // break the Deployment's YAML, so Helm itself cannot render them.
    if !extra_env.is_empty() && !ctx.plan.has(Change::ClustermeshExtraEnvInPlace) {
        return Err(ctx.invalid(
            &p("extraEnv"),
            format!(
                "Cilium {}'s chart writes these entries where they make the Deployment invalid YAML (Helm fails too); leave it empty or use Cilium 1.18.1 or later",
                ctx.plan.cilium
            ),
        ));
    }
    env.extend(extra_env);
    let mut mounts = vec![mount_ro(
        "etcd-admin-client",
        "/var/lib/cilium/etcd-secrets",
    )];
    if !sh.legacy {
        mounts.push(mount_ro("etcd-users-config", "/var/lib/cilium/etcd-config"));
    }
    mounts.extend(sh.extra_mounts.iter().cloned());
    let metrics_port = p("metrics.port");
    Ok(serving_container(
        ctx,
        ("apiserver", API),
        (
            "apiserv-health",
            metrics.then_some(("apiserv-metrics", &*metrics_port)),
        ),
        (&sh.image, &sh.pull_policy),
        (args, env, mounts),
    ))
}

/// `kvstoremesh`: caches the remote clusters' state in the local etcd.
fn kvstoremesh(ctx: &Ctx, s: &State, sh: &Shared) -> Result<Value, RenderError> {
    let k = |key: &str| p(&format!("kvstoremesh.{key}"));
    let metrics = s.kvstoremesh_metrics(ctx);
    let qps = etcd_qps(ctx, &k("etcdQPS"), "100");
    let mut args = kvstore_client_args("kvstoremesh", sh.debug, &qps);
    if !s.external {
        args.push(tree!("--kvstore-opt=etcd.bootstrapQps=10000"));
    }
    args.push(tree!("--kvstore-opt=etcd.maxInflight=10"));
    args.push(tree!("--clustermesh-config=/var/lib/cilium/clustermesh"));
    push_max_clusters(&mut args, &sh.max_clusters);
    if ctx.plan.has(Change::ClustermeshCacheTtl) {
        args.push(Value::String(format!(
            "--clustermesh-cache-ttl={}",
            quote(ctx.v("clustermesh.cacheTTL"))
        )));
    }
    push_health_port(&mut args, ctx.v(&k("healthPort")));
    if metrics {
        args.extend(metrics_args(ctx, &p("metrics.kvstoremesh.port")));
    }
    args.push(Value::String(format!("--enable-heartbeat={}", !s.crd)));
    args.extend(list_items(ctx, &k("extraArgs"))?);
    let mut env = vec![
        config_map_env("CLUSTER_NAME", "cluster-name", false),
        config_map_env("CLUSTER_ID", "cluster-id", false),
    ];
    env.extend(list_items(ctx, &k("extraEnv"))?);
    let mut mounts = Vec::new();
    if s.internal {
        mounts.push(mount_ro(
            "etcd-admin-client",
            "/var/lib/cilium/etcd-secrets",
        ));
    }
    mounts.push(mount_ro(
        "kvstoremesh-secrets",
        "/var/lib/cilium/clustermesh",
    ));
    if s.external {
        mounts.push(mount_ro("etcd-config", "/var/lib/cilium"));
    }
    mounts.extend(list_items(ctx, &k("extraVolumeMounts"))?);
    let metrics_port = p("metrics.kvstoremesh.port");
    let values = p("kvstoremesh");
    Ok(serving_container(
        ctx,
        ("kvstoremesh", &values),
        (
            "kvmesh-health",
            metrics.then_some(("kvmesh-metrics", &*metrics_port)),
        ),
        (&sh.image, &sh.pull_policy),
        (args, env, mounts),
    ))
}

/// The Pod spec around the containers: scheduling, identity and host aliases.
fn pod_spec(
    ctx: &Ctx,
    s: &State,
    init_containers: Vec<Value>,
    containers: Vec<Value>,
    volumes: Vec<Value>,
) -> Result<Map<String, Value>, RenderError> {
    let mut pod = Map::new();
    set(
        &mut pod,
        "imagePullSecrets",
        with(ctx.v("imagePullSecrets")),
    );
    set(
        &mut pod,
        "securityContext",
        with(ctx.v(&p("podSecurityContext"))),
    );
    if s.internal {
        pod.insert("initContainers".into(), Value::Array(init_containers));
    }
    if !containers.is_empty() {
        pod.insert("containers".into(), Value::Array(containers));
    }
    if !volumes.is_empty() {
        pod.insert("volumes".into(), Value::Array(volumes));
    }
    pod.insert("restartPolicy".into(), tree!("Always"));
    set(
        &mut pod,
        "priorityClassName",
        priority_class_name(
            ctx,
            ctx.v(&p("priorityClassName")),
            "system-cluster-critical",
        ),
    );
    pod.insert(
        "serviceAccountName".into(),
        Value::String(ctx.text("serviceAccounts.clustermeshApiserver.name")),
    );
    pod.insert(
        "terminationGracePeriodSeconds".into(),
        bare(ctx.v(&p("terminationGracePeriodSeconds"))),
    );
    pod.insert(
        "automountServiceAccountToken".into(),
        bare(ctx.v("serviceAccounts.clustermeshApiserver.automount")),
    );
    set(&mut pod, "affinity", with(ctx.v(&p("affinity"))));
    set(
        &mut pod,
        "topologySpreadConstraints",
        common::topology_spread(ctx.v(&p("topologySpreadConstraints")), &[("k8s-app", APP)]),
    );
    set(&mut pod, "nodeSelector", with(ctx.v(&p("nodeSelector"))));
    set(&mut pod, "tolerations", with(ctx.v(&p("tolerations"))));
    // From 1.20 KVStoreMesh resolves these itself (see the etcd config), so they can be off.
    let aliases_off = ctx.plan.has(Change::ClustermeshConfigHostAliases)
        && ctx.on("clustermesh.disableKubernetesHostAliases");
    if ctx.on("clustermesh.config.enabled") && s.kvstoremesh && !aliases_off {
        set(&mut pod, "hostAliases", host_aliases(ctx)?);
    }

    Ok(pod)
}

/// A projected volume of one cert Secret (tls.crt/tls.key) plus its CA.
fn cert_volume(ctx: &Ctx, name: &str, secret: &str) -> Value {
    let items = vec![
        tree!({"key": "tls.crt", "path": "tls.crt"}),
        tree!({"key": "tls.key", "path": "tls.key"}),
    ];
    let sources = common::cert_sources(ctx, secret, items, "ca.crt", false);
    tree!({"name": name, "projected": {"defaultMode": MODE_0400, "sources": sources}})
}

fn volumes(ctx: &Ctx, s: &State, legacy: bool) -> Result<Vec<Value>, RenderError> {
    let mut v = Vec::new();
    if s.internal {
        v.push(cert_volume(
            ctx,
            "etcd-server-secrets",
            "clustermesh-apiserver-server-cert",
        ));
        v.push(cert_volume(
            ctx,
            "etcd-admin-client",
            "clustermesh-apiserver-admin-cert",
        ));
        if !legacy {
            v.push(tree!({
                "name": "etcd-users-config",
                "configMap": {"name": "clustermesh-remote-users", "defaultMode": MODE_0400},
            }));
        }
        let medium = if ctx.v(&p("etcd.storageMedium")).as_str() == Some("Memory") {
            "Memory"
        } else {
            ""
        };
        v.push(tree!({"name": "etcd-data-dir", "emptyDir": {"medium": medium}}));
    }
    if s.kvstoremesh {
        // The CA bundle option reached this volume in 1.18.5.
        let bundle = ctx.on("tls.caBundle.enabled") && ctx.plan.has(Change::KvstoremeshCaBundle);
        let mut items = vec![
            tree!({"key": "tls.key", "path": "common-etcd-client.key"}),
            tree!({"key": "tls.crt", "path": "common-etcd-client.crt"}),
        ];
        if !bundle {
            items.push(tree!({"key": "ca.crt", "path": "common-etcd-client-ca.crt"}));
        }
        let mut sources = vec![
            tree!({"secret": {"name": "cilium-kvstoremesh", "optional": true}}),
            tree!({"secret": {
                "name": "clustermesh-apiserver-remote-cert",
                "optional": true,
                "items": items,
            }}),
        ];
        if bundle {
            sources.push(common::ca_bundle_source(
                ctx,
                "common-etcd-client-ca.crt",
                true,
            ));
        }
        v.push(tree!({
            "name": "kvstoremesh-secrets",
            "projected": {"defaultMode": MODE_0400, "sources": sources},
        }));
        if s.external {
            v.push(tree!({
                "name": "etcd-config",
                "configMap": {
                    "name": "cilium-config",
                    "defaultMode": MODE_0400,
                    "items": [{"key": "etcd-config", "path": "etcd-config.yaml"}],
                },
            }));
        }
    }
    v.extend(list_items(ctx, &p("extraVolumes"))?);
    Ok(v)
}

/// Remote clusters given by IP resolve through host aliases under the mesh domain.
fn host_aliases(ctx: &Ctx) -> Result<Option<Value>, RenderError> {
    let out = common::mesh_host_aliases(ctx)?;
    Ok((!out.is_empty()).then_some(Value::Array(out)))
}

/// The leading arguments the apiserver and KVStoreMesh share: the command, `--debug`, the
/// cluster identity and the etcd client settings (with each one's own QPS).
fn kvstore_client_args(command: &str, debug: bool, qps: &str) -> Vec<Value> {
    let mut args = vec![tree!(command)];
    if debug {
        args.push(tree!("--debug"));
    }
    args.extend([
        tree!("--cluster-name=$(CLUSTER_NAME)"),
        tree!("--cluster-id=$(CLUSTER_ID)"),
        tree!("--kvstore-opt=etcd.config=/var/lib/cilium/etcd-config.yaml"),
        Value::String(format!("--kvstore-opt=etcd.qps={qps}")),
    ]);
    args
}

/// The etcd client QPS: fixed per container until 1.20, from a value since.
fn etcd_qps(ctx: &Ctx, path: &str, fixed: &str) -> String {
    if ctx.plan.has(Change::ClustermeshEtcdQpsValues) {
        quote(ctx.v(path))
    } else {
        fixed.to_string()
    }
}

/// `--max-connected-clusters`, when set.
fn push_max_clusters(args: &mut Vec<Value>, max_clusters: &Value) {
    if !max_clusters.is_null() {
        args.push(Value::String(format!(
            "--max-connected-clusters={}",
            quote(max_clusters)
        )));
    }
}

fn push_health_port(args: &mut Vec<Value>, health_port: &Value) {
    args.push(Value::String(format!(
        "--health-port={}",
        quote(health_port)
    )));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::components::common::tests::with_release;

    /// Runs `f` on the Pod's shared facts for one release and values file.
    fn with_shared<T>(
        version: &str,
        values: &str,
        f: impl FnOnce(&Ctx, &State, &Shared) -> T,
    ) -> T {
        with_release(version, values, "1.35.0", |ctx| {
            let state = State::new(ctx);
            let shared = Shared::new(ctx).expect("shared facts");
            f(ctx, &state, &shared)
        })
    }

    fn args(c: &Value) -> Vec<&str> {
        c["args"]
            .as_array()
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default()
    }

    #[test]
    fn etcd_listens_everywhere_from_1_18_5() {
        let etcd_args = |version: &str| {
            with_shared(version, "{}", |ctx, _, sh| {
                let c = etcd(ctx, sh).expect("etcd");
                (
                    args(&c).iter().map(|a| a.to_string()).collect::<Vec<_>>(),
                    c["env"].clone(),
                )
            })
        };
        let (old, old_env) = etcd_args("1.18.4");
        assert!(old.iter().any(|a| a.contains("$(HOSTNAME_IP)")));
        assert_eq!(old_env[1]["name"], "HOSTNAME_IP");
        let (new, new_env) = etcd_args("1.18.5");
        assert!(new.contains(&"--listen-client-urls=https://0.0.0.0:2379".to_string()));
        assert!(new_env
            .as_array()
            .is_some_and(|e| e.iter().all(|v| v["name"] != "HOSTNAME_IP")));
    }

    #[test]
    fn etcd_init_takes_extra_args_and_mounts() {
        let values = "clustermesh: {apiserver: {etcd: {init: {extraArgs: [--x]}}, extraVolumeMounts: [{name: e, mountPath: /e}]}}\ndebug: {enabled: true}";
        with_shared("1.19.6", values, |ctx, _, sh| {
            let c = etcd_init(ctx, sh).expect("etcd-init");
            assert_eq!(args(&c)[..2], ["etcdinit", "--debug"]);
            assert_eq!(args(&c).last(), Some(&"--x"));
            assert_eq!(c["volumeMounts"][1]["name"], "e");
        });
    }

    #[test]
    fn apiserver_extra_env_needs_1_18_1() {
        let values = "clustermesh: {apiserver: {extraEnv: [{name: A, value: b}]}}";
        let e = with_shared("1.18.0", values, |ctx, _, sh| apiserver(ctx, sh));
        assert!(e.is_err_and(|e| e.to_string().contains("clustermesh.apiserver.extraEnv")));
        let c = with_shared("1.18.1", values, |ctx, _, sh| apiserver(ctx, sh)).expect("renders");
        assert_eq!(c["env"][3]["name"], "A");
        assert_eq!(c["ports"][0]["name"], "apiserv-health");
    }

    #[test]
    fn kvstoremesh_without_a_heartbeat_beside_the_apiserver() {
        with_shared("1.19.6", "{}", |ctx, s, sh| {
            let c = kvstoremesh(ctx, s, sh).expect("kvstoremesh");
            assert!(args(&c).contains(&"--enable-heartbeat=false"));
            assert_eq!(c["volumeMounts"][0]["name"], "etcd-admin-client");
        });
    }
}
