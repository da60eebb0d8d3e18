//! Mirrors the chart's templates: cilium-preflight/

use crate::changes::Change;
use crate::components::common::{mount, mount_ro};
use serde_json::Value;

use super::agent::rbac::agent_rules;
use super::common::{
    self, common_labels, envoy_daemonset_enabled, image, k8s_service_env, labels, list_items,
    merged, metadata, priority_class_name, put, put_with, read_secrets_only_from_secrets_namespace,
    with_chart_label,
};
use super::Ctx;
use crate::error::RenderError;
use crate::tmpl::{bare, print, quote, truthy, with};

const CHECK: &str = "cilium-pre-flight-check";
const ROLE: &str = "cilium-pre-flight";

pub fn render(ctx: &Ctx) -> Result<Vec<Value>, RenderError> {
    if !ctx.on("preflight.enabled") {
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    if ctx.on("rbac.create") {
        out.push(cluster_role(ctx));
        if ctx.on("serviceAccounts.preflight.create") {
            out.push(cluster_role_binding(ctx));
        }
    }
    if ctx.on("serviceAccounts.preflight.create") {
        out.push(service_account(ctx));
    }
    out.push(daemonset(ctx)?);
    if ctx.on("preflight.validateCNPs") {
        out.push(deployment(ctx)?);
        if ctx.on("preflight.podDisruptionBudget.enabled") {
            out.push(pod_disruption_budget(ctx));
        }
    }
    Ok(out)
}

fn annotations(ctx: &Ctx) -> Option<Value> {
    with(ctx.v("preflight.annotations"))
}

/// An empty block under a key renders as null, which the comparison treats as absent.
fn non_empty(items: Vec<Value>) -> Option<Value> {
    (!items.is_empty()).then_some(Value::Array(items))
}

fn cluster_role(ctx: &Ctx) -> Value {
    // The agent's rules; the chart's pre-flight copy inverts the Secrets condition.
    let rules = agent_rules(ctx, read_secrets_only_from_secrets_namespace(ctx));
    tree!({
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": metadata(ROLE, None, Some(super::common::part_of_labels(ctx, &[])), annotations(ctx)),
        "rules": rules,
    })
}

fn cluster_role_binding(ctx: &Ctx) -> Value {
    tree!({
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": metadata(ROLE, None, Some(super::common::part_of_labels(ctx, &[])), annotations(ctx)),
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": ROLE},
        "subjects": [common::service_account_subject(ctx, "preflight")],
    })
}

fn service_account(ctx: &Ctx) -> Value {
    let annotations = merged(&[
        ctx.v("preflight.annotations"),
        ctx.v("serviceAccounts.preflight.annotations"),
    ]);
    common::service_account(ctx, "preflight", annotations)
}

fn probe(file: &str, delay: Value, period: Value) -> Value {
    tree!({"exec": {"command": ["cat", file]}, "initialDelaySeconds": delay, "periodSeconds": period})
}

fn pod_labels(ctx: &Ctx, app: &str) -> Value {
    let own = with_chart_label(
        ctx,
        &[
            ("app.kubernetes.io/part-of", "cilium"),
            ("k8s-app", app),
            ("app.kubernetes.io/name", CHECK),
            ("kubernetes.io/cluster-service", "true"),
        ],
    );
    labels(&own, &[ctx.v("commonLabels"), ctx.v("preflight.podLabels")])
}

/// From 1.20 the pre-flight pods share the host's user namespace, said explicitly where the
/// cluster knows the field.
fn put_host_users(spec: &mut Value, ctx: &Ctx) {
    if ctx.plan.has(Change::OperatorAndPreflightHostUsers)
        && ctx.plan.kube.user_namespaces_by_default()
    {
        put(spec, "hostUsers", Some(Value::Bool(true)));
    }
}

fn daemonset(ctx: &Ctx) -> Result<Value, RenderError> {
    let ns = ctx.namespace();
    let img = image(ctx.v("preflight.image"));
    let pull = bare(ctx.v("preflight.image.pullPolicy"));
    let extra_env = list_items(ctx, "preflight.extraEnv")?;
    let extra_mounts = list_items(ctx, "preflight.extraVolumeMounts")?;
    let extra_volumes = list_items(ctx, "preflight.extraVolumes")?;
    let five = tree!(5);

    let mut main = tree!({
        "name": CHECK,
        "image": &img,
        "imagePullPolicy": &pull,
        "command": ["/bin/sh"],
        "args": ["-c", "touch /tmp/ready; sleep 1h"],
        "livenessProbe": probe("/tmp/ready", five.clone(), five.clone()),
        "readinessProbe": probe("/tmp/ready", five.clone(), five.clone()),
        "terminationMessagePolicy": "FallbackToLogsOnError",
    });
    let mut env = vec![common::field_env("K8S_NODE_NAME", "spec.nodeName")];
    env.extend(extra_env.iter().cloned());
    put(&mut main, "env", Some(Value::Array(env)));
    let mut mounts = vec![mount("cilium-run", "/var/run/cilium")];
    mounts.extend(common::etcd_client_mounts(ctx));
    mounts.extend(extra_mounts.iter().cloned());
    put(&mut main, "volumeMounts", Some(Value::Array(mounts)));
    with_preflight_resources(&mut main, ctx);
    let mut containers = vec![main];

    let precache = ctx.v("preflight.tofqdnsPreCache");
    let precache_read = !ctx.plan.has(Change::PreflightWithoutFqdnPrecache);
    if precache_read && !matches!(precache, Value::Null | Value::String(_)) {
        return Err(ctx.invalid(
            "preflight.tofqdnsPreCache",
            "must be a string (a file path, or \"\" for none); the chart cannot compare other types",
        ));
    }
    let precache_wanted = !ctx.text("preflight.tofqdnsPreCache").is_empty() || precache.is_null();
    if precache_wanted && !ctx.plan.has(Change::PreflightWithoutFqdnPrecache) {
        let script = format!(
            "cilium-dbg preflight fqdn-poller --tofqdns-pre-cache {};\ntouch /tmp/ready-tofqdns-precache;\n",
            ctx.text("preflight.tofqdnsPreCache")
        );
        let mut c = tree!({
            "name": "cilium-pre-flight-fqdn-precache",
            "image": &img,
            "imagePullPolicy": &pull,
            "command": ["/bin/sh"],
            "args": ["-ec", script],
            "livenessProbe": probe("/tmp/read-tofqdns-precachey", five.clone(), five.clone()),
            "readinessProbe": probe("/tmp/read-tofqdns-precachey", five.clone(), five.clone()),
            "terminationMessagePolicy": "FallbackToLogsOnError",
        });
        put(&mut c, "env", non_empty(k8s_service_env(ctx)?));
        let mut mounts = vec![mount("cilium-run", "/var/run/cilium")];
        mounts.extend(common::etcd_client_mounts(ctx));
        mounts.extend(extra_mounts.iter().cloned());
        // The chart appends extraEnv here, inside the mount list.
        mounts.extend(extra_env.iter().cloned());
        put(&mut c, "volumeMounts", Some(Value::Array(mounts)));
        with_preflight_resources(&mut c, ctx);
        containers.push(c);
    }

    let envoy = envoy_daemonset_enabled(ctx)?;
    // Until 1.18.6 the envoy check container also mounted the bootstrap ConfigMap.
    let envoy_config = !ctx.plan.has(Change::PreflightWithoutEnvoyBootstrap);
    if envoy {
        let mut mounts = vec![
            tree!({"name": "envoy-sockets", "mountPath": "/var/run/cilium/envoy/sockets", "readOnly": false}),
            mount_ro("envoy-artifacts", "/var/run/cilium/envoy/artifacts"),
        ];
        if envoy_config {
            mounts.push(mount_ro("envoy-config", "/var/run/cilium/envoy/"));
        }
        let mut c = tree!({
            "name": "cilium-pre-flight-envoy",
            "image": image(ctx.v("preflight.envoy.image")),
            "imagePullPolicy": &pull,
            "command": ["/bin/sh"],
            "args": ["-c", "touch /tmp/ready; sleep 1h"],
            "livenessProbe": probe("/tmp/ready", five.clone(), five.clone()),
            "readinessProbe": probe("/tmp/ready", five.clone(), five.clone()),
            "volumeMounts": mounts,
            "terminationMessagePolicy": "FallbackToLogsOnError",
        });
        with_preflight_resources(&mut c, ctx);
        containers.push(c);
    }

    let mut volumes = vec![
        tree!({"name": "cilium-run", "hostPath": {"path": "/var/run/cilium", "type": "DirectoryOrCreate"}}),
        tree!({"name": "bpf-maps", "hostPath": {"path": "/sys/fs/bpf", "type": "DirectoryOrCreate"}}),
    ];
    volumes.extend(common::etcd_client_volumes(ctx));
    if envoy {
        let run = ctx.text("daemon.runPath");
        volumes.push(tree!({"name": "envoy-sockets", "hostPath": {
            "path": format!("{run}/envoy/sockets"), "type": "DirectoryOrCreate"}}));
        volumes.push(tree!({"name": "envoy-artifacts", "hostPath": {
            "path": format!("{run}/envoy/artifacts"), "type": "DirectoryOrCreate"}}));
        if envoy_config {
            let own = ctx.v("envoy.bootstrapConfigMap");
            let name = if truthy(own) {
                print(own)
            } else {
                "cilium-envoy-config".to_string()
            };
            volumes.push(tree!({"name": "envoy-config", "configMap": {"name": name,
                "defaultMode": 256,
                "items": [{"key": "bootstrap-config.json", "path": "bootstrap-config.json"}]}}));
        }
    }
    volumes.extend(extra_volumes.iter().cloned());

    let mut spec = tree!({
        "initContainers": [{
            "name": "clean-cilium-state",
            "image": &img,
            "imagePullPolicy": &pull,
            "command": ["/bin/echo"],
            "args": ["hello"],
            "terminationMessagePolicy": "FallbackToLogsOnError",
        }],
        "containers": containers,
        "hostNetwork": true,
        "dnsPolicy": "ClusterFirstWithHostNet",
        "restartPolicy": "Always",
        "serviceAccountName": quote(ctx.v("serviceAccounts.preflight.name")),
        "automountServiceAccountToken": bare(ctx.v("serviceAccounts.preflight.automount")),
        "terminationGracePeriodSeconds": bare(ctx.v("preflight.terminationGracePeriodSeconds")),
        "volumes": volumes,
    });
    put_host_users(&mut spec, ctx);
    put_with(
        &mut spec,
        ctx,
        &[
            ("affinity", "preflight.affinity"),
            ("imagePullSecrets", "imagePullSecrets"),
            ("securityContext", "preflight.podSecurityContext"),
        ],
    );
    put(
        &mut spec,
        "priorityClassName",
        priority_class_name(
            ctx,
            ctx.v("preflight.priorityClassName"),
            "system-node-critical",
        ),
    );
    put_with(
        &mut spec,
        ctx,
        &[
            ("nodeSelector", "preflight.nodeSelector"),
            ("tolerations", "preflight.tolerations"),
        ],
    );

    let pod_annotations = merged(&[
        &tree!({"kubectl.kubernetes.io/default-container": CHECK}),
        ctx.v("preflight.podAnnotations"),
    ]);
    let meta = metadata(CHECK, Some(&ns), common_labels(ctx), annotations(ctx));
    let spec = tree!({
        "selector": {"matchLabels": {"k8s-app": CHECK, "kubernetes.io/cluster-service": "true"}},
        "template": {
            "metadata": {"annotations": pod_annotations, "labels": pod_labels(ctx, CHECK)},
            "spec": spec,
        },
    });
    Ok(common::workload("DaemonSet", meta, spec))
}

fn deployment(ctx: &Ctx) -> Result<Value, RenderError> {
    let ns = ctx.namespace();
    let app = "cilium-pre-flight-check-deployment";
    let extra_env = list_items(ctx, "preflight.extraEnv")?;
    let mut c = tree!({
        "name": "cnp-validator",
        "image": image(ctx.v("preflight.image")),
        "imagePullPolicy": bare(ctx.v("preflight.image.pullPolicy")),
        "command": ["/bin/sh"],
        "args": ["-ec", "cilium-dbg preflight validate-cnp;\ntouch /tmp/ready-validate-cnp;\nsleep 1h;\n"],
        "readinessProbe": probe(
            "/tmp/ready-validate-cnp",
            bare(ctx.v("preflight.readinessProbe.initialDelaySeconds")),
            bare(ctx.v("preflight.readinessProbe.periodSeconds")),
        ),
        "terminationMessagePolicy": "FallbackToLogsOnError",
    });
    put(
        &mut c,
        "volumeMounts",
        with(ctx.v("preflight.extraVolumeMounts")),
    );
    let mut env = k8s_service_env(ctx)?;
    env.extend(extra_env.iter().cloned());
    put(&mut c, "env", non_empty(env));
    put(&mut c, "resources", with(ctx.v("preflight.resources")));

    let mut spec = tree!({
        "containers": [c],
        "hostNetwork": true,
        "restartPolicy": "Always",
        "serviceAccountName": quote(ctx.v("serviceAccounts.preflight.name")),
        "automountServiceAccountToken": bare(ctx.v("serviceAccounts.preflight.automount")),
        "terminationGracePeriodSeconds": bare(ctx.v("preflight.terminationGracePeriodSeconds")),
    });
    put_host_users(&mut spec, ctx);
    put_with(
        &mut spec,
        ctx,
        &[
            ("imagePullSecrets", "imagePullSecrets"),
            ("volumes", "preflight.extraVolumes"),
        ],
    );
    put(
        &mut spec,
        "priorityClassName",
        priority_class_name(
            ctx,
            ctx.v("preflight.priorityClassName"),
            "system-cluster-critical",
        ),
    );
    put_with(
        &mut spec,
        ctx,
        &[
            ("affinity", "preflight.affinity"),
            ("nodeSelector", "preflight.nodeSelector"),
            ("tolerations", "preflight.tolerations"),
        ],
    );

    let mut tmeta = tree!({"labels": pod_labels(ctx, app)});
    put(
        &mut tmeta,
        "annotations",
        with(ctx.v("preflight.podAnnotations")),
    );
    let labels = labels(
        &with_chart_label(
            ctx,
            &[
                ("app.kubernetes.io/part-of", "cilium"),
                ("app.kubernetes.io/name", CHECK),
            ],
        ),
        &[ctx.v("commonLabels")],
    );
    let meta = metadata(CHECK, Some(&ns), Some(labels), annotations(ctx));
    let spec = tree!({
        "selector": {"matchLabels": {"k8s-app": app, "kubernetes.io/cluster-service": "true"}},
        "template": {"metadata": tmeta, "spec": spec},
    });
    Ok(common::workload("Deployment", meta, spec))
}

/// The budget of the CNP validator's Deployment.
fn pod_disruption_budget(ctx: &Ctx) -> Value {
    let app = "cilium-pre-flight-check-deployment";
    common::pod_disruption_budget(
        ctx,
        CHECK,
        ctx.v("preflight.podDisruptionBudget"),
        &[("k8s-app", app), ("kubernetes.io/cluster-service", "true")],
        &with_chart_label(
            ctx,
            &[
                ("k8s-app", app),
                ("app.kubernetes.io/part-of", "cilium"),
                ("app.kubernetes.io/name", CHECK),
                ("kubernetes.io/cluster-service", "true"),
            ],
        ),
        ctx.v("preflight.annotations"),
    )
}

/// Every pre-flight container takes the same resources and security context.
fn with_preflight_resources(container: &mut Value, ctx: &Ctx) {
    put_with(
        container,
        ctx,
        &[
            ("resources", "preflight.resources"),
            ("securityContext", "preflight.securityContext"),
        ],
    );
}
