//! The cilium-envoy DaemonSet (the chart's `cilium-envoy/daemonset.yaml`).

use crate::components::common::mount_ro;
use crate::components::common::namespaced_workload;
use serde_json::{Map, Value};

use super::node_locality;
use crate::changes::Change;
use crate::components::common::{
    self, host_path_mounts, labels, list_items, priority_class_name, put, with_chart_label,
};
use crate::components::common::{loopback, metadata_pod, HOST_PATH_NOT_A_MAP};
use crate::components::Ctx;
use crate::error::RenderError;
use crate::tmpl::{bare, print, quote, to_int64, truthy, with};

/// Where the init container leaves the node's zone for Envoy to read.
const LOCALITY_DIR: &str = "/var/run/cilium/envoy-locality-config";
const LOCALITY_VOLUME: &str = "envoy-config-locality";

pub(super) fn daemon_set(ctx: &Ctx, configmap: &Value) -> Result<Value, RenderError> {
    let common_labels = ctx.v("commonLabels");
    let mut spec = pod_spec(ctx)?;
    let pod_labels = labels(
        &with_chart_label(
            ctx,
            &[
                ("k8s-app", "cilium-envoy"),
                ("name", "cilium-envoy"),
                ("app.kubernetes.io/name", "cilium-envoy"),
                ("app.kubernetes.io/part-of", "cilium"),
            ],
        ),
        &[common_labels, ctx.v("envoy.podLabels")],
    );
    if ctx.plan.has(Change::EnvoyDnsProxyHostUsers) && ctx.plan.kube.user_namespaces_by_default() {
        put(&mut spec, "hostUsers", Some(Value::Bool(true)));
    }

    let mut ds_spec = tree!({
        "selector": tree!({"matchLabels": {"k8s-app": "cilium-envoy"}}),
        "template": tree!({
            "metadata": metadata_pod(pod_labels, pod_annotations(ctx, configmap)),
            "spec": spec,
        }),
    });
    put(
        &mut ds_spec,
        "updateStrategy",
        with(ctx.v("envoy.updateStrategy")),
    );
    crate::components::common::min_ready_seconds_from(ctx, &mut ds_spec, "envoy.minReadySeconds");

    let own_labels = with_chart_label(
        ctx,
        &[
            ("k8s-app", "cilium-envoy"),
            ("app.kubernetes.io/part-of", "cilium"),
            ("app.kubernetes.io/name", "cilium-envoy"),
            ("name", "cilium-envoy"),
        ],
    );
    Ok(namespaced_workload(
        ctx,
        "DaemonSet",
        "cilium-envoy",
        &own_labels,
        ctx.v("envoy.annotations"),
        ds_spec,
    ))
}

fn old_kube(ctx: &Ctx) -> bool {
    !ctx.plan.kube.app_armor_profile_field()
}

fn pod_annotations(ctx: &Ctx, configmap: &Value) -> Option<Value> {
    let mut own = Map::new();
    if ctx.on("envoy.rollOutPods") && !ctx.on("envoy.bootstrapConfigMap") {
        own.insert(
            "cilium.io/cilium-envoy-configmap-checksum".into(),
            Value::from(crate::output::sha256_hex(configmap)),
        );
    }
    if !ctx.on("envoy.securityContext.privileged") && old_kube(ctx) {
        own.insert(
            "container.apparmor.security.beta.kubernetes.io/cilium-envoy".into(),
            Value::from("unconfined"),
        );
    }
    common::merged(&[&Value::Object(own), ctx.v("envoy.podAnnotations")])
}

fn pod_spec(ctx: &Ctx) -> Result<Value, RenderError> {
    // Kubernetes before 1.30 has no appArmorProfile field; the chart drops it there.
    let mut pod_security = ctx.v("envoy.podSecurityContext").clone();
    if old_kube(ctx) {
        if let Value::Object(m) = &mut pod_security {
            m.remove("appArmorProfile");
        }
    }
    let mut containers = vec![container(ctx)?];
    containers.extend(list_items(ctx, "envoy.extraContainers")?);

    let mut spec = tree!({
        "containers": containers,
        "restartPolicy": "Always",
        "priorityClassName": priority_class_name(ctx, ctx.v("envoy.priorityClassName"), "system-node-critical"),
        "serviceAccountName": quote(ctx.v("serviceAccounts.envoy.name")),
        "automountServiceAccountToken": bare(ctx.v("serviceAccounts.envoy.automount")),
        "terminationGracePeriodSeconds": bare(ctx.v("envoy.terminationGracePeriodSeconds")),
        "hostNetwork": true,
        "volumes": volumes(ctx)?,
    });
    put(
        &mut spec,
        "imagePullSecrets",
        with(ctx.v("imagePullSecrets")),
    );
    put(&mut spec, "securityContext", with(&pod_security));
    if node_locality(ctx) {
        put(
            &mut spec,
            "initContainers",
            Some(Value::Array(vec![locality_init_container(ctx)?])),
        );
    }
    if ctx.on("envoy.dnsPolicy") {
        put(&mut spec, "dnsPolicy", Some(bare(ctx.v("envoy.dnsPolicy"))));
    }
    put(&mut spec, "affinity", with(ctx.v("envoy.affinity")));
    put(&mut spec, "nodeSelector", with(ctx.v("envoy.nodeSelector")));
    put(&mut spec, "tolerations", with(ctx.v("envoy.tolerations")));
    Ok(spec)
}

/// The init container that reads the node's topology zone into a file Envoy is started with.
fn locality_init_container(ctx: &Ctx) -> Result<Value, RenderError> {
    let mut env = vec![common::field_env("K8S_NODE_NAME", "spec.nodeName")];
    env.extend(common::k8s_service_env(ctx)?);
    Ok(tree!({
        "name": "lookup-bootstrap-locality",
        "image": bare(&Value::String(common::image(ctx.v("image")))),
        "imagePullPolicy": bare(ctx.v("image.pullPolicy")),
        "command": ["/usr/bin/cilium-envoy-bootstrap-locality"],
        "args": [format!("--output={LOCALITY_DIR}/service-zone")],
        "env": env,
        "securityContext": {
            "runAsUser": 0,
            "allowPrivilegeEscalation": false,
            "capabilities": {"drop": ["ALL"]},
        },
        "volumeMounts": [{"name": LOCALITY_VOLUME, "mountPath": LOCALITY_DIR, "readOnly": false}],
    }))
}

fn args(ctx: &Ctx) -> Result<Vec<Value>, RenderError> {
    let mut args = Vec::new();
    if ctx.on("envoy.securityContext.capabilities.keepCapNetBindService") {
        args.push(Value::from("--keep-cap-net-bind-service"));
    }
    args.push(Value::from("--"));
    if node_locality(ctx) {
        args.push(Value::from("--service-zone"));
        args.push(Value::from(format!("@{LOCALITY_DIR}/service-zone")));
    }
    args.push(Value::from(
        "-c /var/run/cilium/envoy/bootstrap-config.json",
    ));
    args.push(Value::from(format!(
        "--base-id {}",
        to_int64(ctx.v("envoy.baseID"))
    )));
    let verbose = ctx.v("debug.verbose");
    let verbose_has = |word: &str| {
        ctx.on("debug.enabled") && truthy(verbose) && print(verbose).split(' ').any(|w| w == word)
    };
    let level = if verbose_has("envoy") {
        "trace".to_string()
    } else if verbose_has("flow") {
        "debug".to_string()
    } else if ctx.on("envoy.log.defaultLevel") {
        print(ctx.v("envoy.log.defaultLevel"))
    } else {
        "info".to_string()
    };
    args.push(Value::from(format!("--log-level {level}")));
    if ctx.on("envoy.log.path") {
        args.push(Value::from(format!(
            "--log-path {}",
            print(ctx.v("envoy.log.path"))
        )));
    }
    args.extend(list_items(ctx, "envoy.extraArgs")?);
    Ok(args)
}

/// One of the container's probes from its values block (`envoy.<kind>Probe`): thresholds and
/// period from the values; initial delay and timeout from 1.20 too. Before, the template fixed
/// them: the startup probe a delay (`fixed_delay`) and no timeout, the others a 5s timeout.
fn probe(ctx: &Ctx, kind: &str, fixed_delay: Option<u64>) -> Value {
    let v = |key: &str| bare(ctx.v(&format!("envoy.{kind}Probe.{key}")));
    let mut p = tree!({
        "httpGet": {
            "host": loopback(ctx),
            "path": "/healthz",
            "port": bare(ctx.v("envoy.healthPort")),
            "scheme": "HTTP",
        },
        "periodSeconds": v("periodSeconds"),
        "successThreshold": 1,
        "failureThreshold": v("failureThreshold"),
    });
    if ctx.plan.has(Change::EnvoyProbeTimings) {
        put(
            &mut p,
            "initialDelaySeconds",
            Some(v("initialDelaySeconds")),
        );
        put(&mut p, "timeoutSeconds", Some(v("timeoutSeconds")));
    } else {
        match fixed_delay {
            Some(delay) => put(&mut p, "initialDelaySeconds", Some(tree!(delay))),
            None => put(&mut p, "timeoutSeconds", Some(tree!(5))),
        }
    }
    p
}

fn container(ctx: &Ctx) -> Result<Value, RenderError> {
    let mut env = vec![
        common::field_env("K8S_NODE_NAME", "spec.nodeName"),
        common::field_env("CILIUM_K8S_NAMESPACE", "metadata.namespace"),
    ];
    env.extend(common::k8s_service_env(ctx)?);
    env.extend(list_items(ctx, "envoy.extraEnv")?);

    let security = if ctx.on("envoy.securityContext.privileged") {
        tree!({"privileged": true})
    } else {
        let mut caps = tree!({"drop": ["ALL"]});
        put(
            &mut caps,
            "add",
            with(ctx.v("envoy.securityContext.capabilities.envoy")),
        );
        let mut s = tree!({"capabilities": caps});
        put(
            &mut s,
            "seLinuxOptions",
            with(ctx.v("envoy.securityContext.seLinuxOptions")),
        );
        s
    };

    let mut container = tree!({
        "name": "cilium-envoy",
        "image": common::image(ctx.v("envoy.image")),
        "imagePullPolicy": bare(ctx.v("envoy.image.pullPolicy")),
        "command": tree!(["/usr/bin/cilium-envoy-starter"]),
        "args": args(ctx)?,
        "readinessProbe": probe(ctx, "readiness", None),
        "env": env,
        "securityContext": security,
        "terminationMessagePolicy": "FallbackToLogsOnError",
        "volumeMounts": volume_mounts(ctx)?,
    });
    if ctx.on("envoy.startupProbe.enabled") {
        put(
            &mut container,
            "startupProbe",
            Some(probe(ctx, "startup", Some(5))),
        );
    }
    if ctx.on("envoy.livenessProbe.enabled") {
        put(
            &mut container,
            "livenessProbe",
            Some(probe(ctx, "liveness", None)),
        );
    }
    put(&mut container, "resources", with(ctx.v("envoy.resources")));
    if ctx.on("envoy.prometheus.enabled") {
        put(&mut container, "ports", Some(Value::Array(ports(ctx))));
    }
    Ok(container)
}

fn ports(ctx: &Ctx) -> Vec<Value> {
    let mut ports = vec![common::host_tcp_port(
        "envoy-metrics",
        bare(ctx.v("envoy.prometheus.port")),
    )];
    if ctx.on("envoy.debug.admin.enabled") && ctx.on("envoy.debug.admin.port") {
        ports.push(common::host_tcp_port(
            "envoy-admin",
            bare(ctx.v("envoy.debug.admin.port")),
        ));
    }
    ports
}

fn volume_mounts(ctx: &Ctx) -> Result<Vec<Value>, RenderError> {
    let mut mounts = vec![
        tree!({"name": "envoy-sockets", "mountPath": "/var/run/cilium/envoy/sockets", "readOnly": false}),
        mount_ro("envoy-artifacts", "/var/run/cilium/envoy/artifacts"),
        mount_ro("envoy-config", "/var/run/cilium/envoy/"),
    ];
    if ctx.on("bpf.autoMount.enabled") {
        mounts.push(tree!({"name": "bpf-maps", "mountPath": "/sys/fs/bpf", "mountPropagation": "HostToContainer"}));
    }
    if node_locality(ctx) {
        mounts.push(mount_ro(LOCALITY_VOLUME, LOCALITY_DIR));
    }
    let (extra_mounts, _) =
        host_path_mounts(ctx, "envoy.extraHostPathMounts", HOST_PATH_NOT_A_MAP)?;
    mounts.extend(extra_mounts);
    mounts.extend(list_items(ctx, "envoy.extraVolumeMounts")?);
    Ok(mounts)
}

fn volumes(ctx: &Ctx) -> Result<Vec<Value>, RenderError> {
    let run_path = quote(ctx.v("daemon.runPath"));
    let cm_name = if ctx.on("envoy.bootstrapConfigMap") {
        print(ctx.v("envoy.bootstrapConfigMap"))
    } else {
        "cilium-envoy-config".to_string()
    };
    let mut volumes = vec![
        tree!({"name": "envoy-sockets", "hostPath": {"path": format!("{run_path}/envoy/sockets"), "type": "DirectoryOrCreate"}}),
        tree!({"name": "envoy-artifacts", "hostPath": {"path": format!("{run_path}/envoy/artifacts"), "type": "DirectoryOrCreate"}}),
        tree!({"name": "envoy-config", "configMap": {
            "name": cm_name,
            "defaultMode": 256,
            "items": [{"key": "bootstrap-config.json", "path": "bootstrap-config.json"}],
        }}),
    ];
    if ctx.on("bpf.autoMount.enabled") {
        volumes.push(tree!({"name": "bpf-maps", "hostPath": {"path": "/sys/fs/bpf", "type": "DirectoryOrCreate"}}));
    }
    if node_locality(ctx) {
        volumes.push(tree!({"name": LOCALITY_VOLUME, "emptyDir": {}}));
    }
    let (_, extra_volumes) =
        host_path_mounts(ctx, "envoy.extraHostPathMounts", HOST_PATH_NOT_A_MAP)?;
    volumes.extend(extra_volumes);
    volumes.extend(list_items(ctx, "envoy.extraVolumes")?);
    Ok(volumes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::components::common::tests::with_release;

    fn container_of(version: &str, values: &str) -> Value {
        with_release(version, values, "1.35.0", |ctx| container(ctx).unwrap())
    }

    #[test]
    fn probe_timings_come_from_values_in_1_20() {
        let values = "envoy: {livenessProbe: {initialDelaySeconds: 3, timeoutSeconds: 4}, startupProbe: {timeoutSeconds: 6}}";
        let old = container_of("1.19.6", values);
        assert_eq!(old["livenessProbe"]["timeoutSeconds"], 5);
        assert!(old["livenessProbe"].get("initialDelaySeconds").is_none());
        assert_eq!(old["startupProbe"]["initialDelaySeconds"], 5);
        assert!(old["startupProbe"].get("timeoutSeconds").is_none());
        let new = container_of("1.20.0", values);
        let number = |probe: &str, key: &str| new[probe][key].as_f64();
        assert_eq!(number("livenessProbe", "initialDelaySeconds"), Some(3.0));
        assert_eq!(number("livenessProbe", "timeoutSeconds"), Some(4.0));
        assert_eq!(number("startupProbe", "timeoutSeconds"), Some(6.0));
    }

    #[test]
    fn node_locality_passes_the_zone_file() {
        let c = container_of("1.20.0", "envoy: {nodeLocality: {enabled: true}}");
        assert_eq!(c["args"][1], "--service-zone");
        let c = container_of("1.19.6", "envoy: {nodeLocality: {enabled: true}}");
        assert_ne!(c["args"][1], "--service-zone");
    }
}
