//! Mirrors the chart's templates: cilium-operator/

use serde_json::{json, Map, Value};

use super::common::{self, merged, metadata, put};
use super::Ctx;
use crate::error::RenderError;
use crate::tmpl::{bare, print, quote, truthy};

const SELECTOR: &[(&str, &str)] = &[("io.cilium/app", "operator"), ("name", "cilium-operator")];

pub fn render(ctx: &Ctx) -> Result<Vec<Value>, RenderError> {
    let mut out = Vec::new();
    // The dashboards do not depend on `operator.enabled` in the chart.
    out.extend(dashboards(ctx)?);
    if !ctx.on("operator.enabled") {
        return Ok(out);
    }
    let sa_create = ctx.on("serviceAccounts.operator.create");
    out.push(deployment(ctx)?);
    if sa_create {
        out.push(service_account(ctx));
        if ctx.on("rbac.create") {
            out.push(cluster_role(ctx)?);
            out.push(cluster_role_binding(ctx));
        }
        out.extend(secret_roles(ctx));
    }
    if ctx.on("operator.podDisruptionBudget.enabled") {
        out.push(pod_disruption_budget(ctx));
    }
    if ctx.on("azure.enabled") {
        out.push(azure_secret(ctx));
    }
    let prom = ctx.on("operator.prometheus.enabled");
    let monitor = ctx.on("operator.prometheus.serviceMonitor.enabled");
    if prom && (monitor || ctx.on("operator.prometheus.metricsService")) {
        out.push(service(ctx));
    }
    if prom && monitor {
        out.push(service_monitor(
            ctx,
            MonitorSpec {
                name: "cilium-operator",
                values: "operator.prometheus.serviceMonitor",
                annotations: "operator.annotations",
                selector: SELECTOR,
                port: "metrics",
                target_label: "io.cilium/app",
                job_label: true,
            },
        ));
    }
    Ok(out)
}

// ---------------------------------------------------------------------------------------------
// Helpers shared with the Envoy module (candidates for common.rs).

/// A value inserted with `toYaml` under a `with`: present only when truthy.
pub(super) fn opt(v: &Value) -> Option<Value> {
    truthy(v).then(|| v.clone())
}

pub(super) fn string(s: impl Into<String>) -> Value {
    Value::String(s.into())
}

/// A fixed label set followed by `toYaml` blocks of user maps (later keys win).
pub(super) fn labels(fixed: &[(&str, &str)], extra: &[&Value]) -> Value {
    let base: Map<String, Value> = fixed
        .iter()
        .map(|(k, v)| (k.to_string(), string(*v)))
        .collect();
    let base = Value::Object(base);
    let mut all = vec![&base];
    all.extend_from_slice(extra);
    merged(&all).unwrap_or_else(|| json!({}))
}

/// The items of a list value spliced into a chart list with `toYaml`; anything but a list (or
/// an empty value) would break the chart's YAML, so it is refused.
pub(super) fn items(ctx: &Ctx, path: &str) -> Result<Vec<Value>, RenderError> {
    match ctx.v(path) {
        Value::Array(a) => Ok(a.clone()),
        v if !truthy(v) => Ok(Vec::new()),
        _ => Err(ctx.invalid(path, "must be a list")),
    }
}

/// `KUBERNETES_SERVICE_HOST`/`PORT` variables, from `k8sServiceHostRef` and `k8sServiceHost`.
pub(super) fn k8s_service_env(ctx: &Ctx) -> Result<Vec<Value>, RenderError> {
    let mut env = Vec::new();
    if ctx.on("k8sServiceHostRef.name") && ctx.on("k8sServiceHostRef.key") {
        env.push(json!({
            "name": "KUBERNETES_SERVICE_HOST",
            "valueFrom": {"configMapKeyRef": {
                "name": bare(ctx.v("k8sServiceHostRef.name")),
                "key": bare(ctx.v("k8sServiceHostRef.key")),
            }},
        }));
        env.push(
            json!({"name": "KUBERNETES_SERVICE_PORT", "value": common::k8s_service_port(ctx)?}),
        );
    }
    if ctx.on("k8sServiceHost") {
        env.push(
            json!({"name": "KUBERNETES_SERVICE_HOST", "value": common::k8s_service_host(ctx)?}),
        );
        env.push(
            json!({"name": "KUBERNETES_SERVICE_PORT", "value": common::k8s_service_port(ctx)?}),
        );
    }
    Ok(env)
}

/// The volume mounts and the volumes of an `extraHostPathMounts` list.
pub(super) fn host_path_mounts(
    ctx: &Ctx,
    path: &str,
) -> Result<(Vec<Value>, Vec<Value>), RenderError> {
    let mut mounts = Vec::new();
    let mut volumes = Vec::new();
    for m in items(ctx, path)? {
        if !m.is_object() {
            return Err(ctx.invalid(path, "every entry must be a mapping"));
        }
        let mut mount = json!({
            "name": bare(&m["name"]),
            "mountPath": bare(&m["mountPath"]),
            "readOnly": bare(&m["readOnly"]),
        });
        if truthy(&m["mountPropagation"]) {
            put(
                &mut mount,
                "mountPropagation",
                Some(bare(&m["mountPropagation"])),
            );
        }
        mounts.push(mount);
        let mut host = json!({"path": bare(&m["hostPath"])});
        if truthy(&m["hostPathType"]) {
            put(&mut host, "type", Some(bare(&m["hostPathType"])));
        }
        volumes.push(json!({"name": bare(&m["name"]), "hostPath": host}));
    }
    Ok((mounts, volumes))
}

/// `priorityClassName` as the chart prints it (absent when empty).
pub(super) fn priority_class(ctx: &Ctx, own: &str, critical: &str) -> Value {
    match common::priority_class(ctx, ctx.v(own), critical) {
        Some(p) => bare(&Value::String(p)),
        None => Value::Null,
    }
}

/// A ServiceAccount whose annotations are the component's, then the account's own.
pub(super) fn service_account_object(
    ctx: &Ctx,
    account: &str,
    component_annotations: &Value,
    extra: Option<(&str, Value)>,
) -> Value {
    let mut own = ctx
        .v(&format!("serviceAccounts.{account}.annotations"))
        .clone();
    if let Some((k, v)) = extra {
        if let Value::Object(m) = &mut own {
            m.insert(k.to_string(), v);
        } else if own.is_null() {
            own = json!({ k: v });
        }
    }
    let annotations = merged(&[component_annotations, &own]);
    json!({
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": metadata(
            &quote(ctx.v(&format!("serviceAccounts.{account}.name"))),
            Some(&ctx.namespace()),
            common::common_labels(ctx),
            annotations,
        ),
    })
}

pub(super) struct MonitorSpec<'a> {
    pub name: &'a str,
    /// Path of the `serviceMonitor` values block.
    pub values: &'a str,
    /// Path of the component's annotations.
    pub annotations: &'a str,
    pub selector: &'a [(&'a str, &'a str)],
    pub port: &'a str,
    pub target_label: &'a str,
    pub job_label: bool,
}

/// A Prometheus Operator ServiceMonitor for a component's metrics Service.
pub(super) fn service_monitor(ctx: &Ctx, s: MonitorSpec) -> Value {
    let v = |k: &str| ctx.v(&format!("{}.{k}", s.values));
    let ns_value = v("namespace");
    let namespace = if truthy(ns_value) {
        print(ns_value)
    } else {
        ctx.namespace()
    };
    let common_labels = ctx.v("commonLabels");
    let meta_labels = labels(
        &[
            ("app.kubernetes.io/part-of", "cilium"),
            ("app.kubernetes.io/name", s.name),
        ],
        &[common_labels, v("labels")],
    );
    let annotations = merged(&[ctx.v(s.annotations), v("annotations")]);
    let mut endpoint = json!({
        "port": s.port,
        "interval": quote(v("interval")),
        "honorLabels": true,
        "path": "/metrics",
    });
    if truthy(v("scrapeTimeout")) {
        put(
            &mut endpoint,
            "scrapeTimeout",
            Some(string(quote(v("scrapeTimeout")))),
        );
    }
    put(&mut endpoint, "relabelings", opt(v("relabelings")));
    put(
        &mut endpoint,
        "metricRelabelings",
        opt(v("metricRelabelings")),
    );
    let mut spec = json!({
        "selector": {"matchLabels": labels(s.selector, &[])},
        "namespaceSelector": {"matchNames": [ctx.namespace()]},
        "endpoints": [endpoint],
        "targetLabels": [s.target_label],
    });
    if s.job_label && truthy(v("jobLabel")) {
        put(&mut spec, "jobLabel", Some(string(quote(v("jobLabel")))));
    }
    json!({
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "ServiceMonitor",
        "metadata": metadata(s.name, Some(&namespace), Some(meta_labels), annotations),
        "spec": spec,
    })
}

/// `ternary "127.0.0.1" "::1" .Values.ipv4.enabled`: the loopback address probes use.
pub(super) fn loopback(ctx: &Ctx) -> &'static str {
    if ctx.on("ipv4.enabled") {
        "127.0.0.1"
    } else {
        "::1"
    }
}

// ---------------------------------------------------------------------------------------------

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

fn clustermesh_sync(ctx: &Ctx) -> bool {
    ctx.on("clustermesh.enableEndpointSliceSynchronization")
        || ctx.on("clustermesh.enableMCSAPISupport")
}

/// Go's `path.Dir`.
fn go_dir(p: &str) -> String {
    let cleaned = match p.rfind('/') {
        Some(i) => &p[..=i],
        None => "",
    };
    go_clean(cleaned)
}

/// Go's `path.Clean`.
fn go_clean(p: &str) -> String {
    if p.is_empty() {
        return ".".into();
    }
    let rooted = p.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for seg in p.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                if parts.last().is_some_and(|l| *l != "..") {
                    parts.pop();
                } else if !rooted {
                    parts.push("..");
                }
            }
            s => parts.push(s),
        }
    }
    let joined = parts.join("/");
    match (rooted, joined.is_empty()) {
        (true, _) => format!("/{joined}"),
        (false, true) => ".".into(),
        (false, false) => joined,
    }
}

fn deployment(ctx: &Ctx) -> Result<Value, RenderError> {
    let ns = ctx.namespace();
    let common_labels = ctx.v("commonLabels");
    let own_labels = [
        ("io.cilium/app", "operator"),
        ("name", "cilium-operator"),
        ("app.kubernetes.io/part-of", "cilium"),
        ("app.kubernetes.io/name", "cilium-operator"),
    ];

    let replicas = ctx.v("operator.replicas");
    let strategy_v = ctx.v("operator.updateStrategy");
    let strategy = if print(replicas) == "1" && strategy_v["type"].as_str() == Some("RollingUpdate")
    {
        Some(json!({
            "rollingUpdate": {
                "maxSurge": bare(&strategy_v["rollingUpdate"]["maxSurge"]),
                "maxUnavailable": "100%",
            },
            "type": "RollingUpdate",
        }))
    } else {
        opt(strategy_v)
    };

    let mut pod_annotations = Map::new();
    if ctx.on("operator.rollOutPods") {
        let cm = super::config::cilium_config(ctx)?.unwrap_or(Value::Null);
        pod_annotations.insert(
            "cilium.io/cilium-configmap-checksum".into(),
            string(crate::output::sha256_hex(&cm)),
        );
    }
    if ctx.on("operator.prometheus.enabled")
        && !ctx.on("operator.prometheus.serviceMonitor.enabled")
    {
        pod_annotations.insert(
            "prometheus.io/port".into(),
            string(quote(ctx.v("operator.prometheus.port"))),
        );
        pod_annotations.insert("prometheus.io/scrape".into(), string("true"));
    }
    let pod_annotations = merged(&[
        &Value::Object(pod_annotations),
        ctx.v("operator.podAnnotations"),
    ]);

    let cloud = cloud(ctx);
    let mut args = vec![
        string("--config-dir=/tmp/cilium/config-map"),
        string("--debug=$(CILIUM_DEBUG)"),
    ];
    args.extend(items(ctx, "operator.extraArgs")?);

    let mut env = vec![
        json!({"name": "K8S_NODE_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "spec.nodeName"}}}),
        json!({"name": "CILIUM_K8S_NAMESPACE", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}}),
    ];
    if clustermesh_sync(ctx) {
        env.push(
            json!({"name": "CILIUM_CLUSTERMESH_CONFIG", "value": "/var/lib/cilium/clustermesh/"}),
        );
    }
    env.push(json!({"name": "CILIUM_DEBUG", "valueFrom": {"configMapKeyRef": {"key": "debug", "name": "cilium-config", "optional": true}}}));
    let secret_env = |name: &str, secret: &str, optional: bool| {
        let mut r = json!({"name": secret, "key": name});
        if optional {
            put(&mut r, "optional", Some(Value::Bool(true)));
        }
        json!({"name": name, "valueFrom": {"secretKeyRef": r}})
    };
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
    env.extend(k8s_service_env(ctx)?);
    if ctx.on("azure.enabled") {
        for (var, path) in [
            ("AZURE_SUBSCRIPTION_ID", "azure.subscriptionID"),
            ("AZURE_TENANT_ID", "azure.tenantID"),
            ("AZURE_RESOURCE_GROUP", "azure.resourceGroup"),
        ] {
            if ctx.on(path) {
                env.push(json!({"name": var, "value": bare(ctx.v(path))}));
            }
        }
        env.push(secret_env("AZURE_CLIENT_ID", "cilium-azure", false));
        env.push(secret_env("AZURE_CLIENT_SECRET", "cilium-azure", false));
    }
    env.extend(items(ctx, "operator.extraEnv")?);

    let host_network = ctx.on("operator.hostNetwork");
    let probe = |initial: f64, period: f64, failure: Option<f64>| {
        let mut get = json!({"path": "/healthz", "port": 9234, "scheme": "HTTP"});
        if host_network {
            put(&mut get, "host", Some(string(loopback(ctx))));
        }
        let mut p = json!({
            "httpGet": get,
            "initialDelaySeconds": initial,
            "periodSeconds": period,
            "timeoutSeconds": 3,
        });
        if let Some(f) = failure {
            put(&mut p, "failureThreshold", Some(json!(f)));
        }
        p
    };

    let mut mounts = vec![
        json!({"name": "cilium-config-path", "mountPath": "/tmp/cilium/config-map", "readOnly": true}),
    ];
    let mut volumes =
        vec![json!({"name": "cilium-config-path", "configMap": {"name": "cilium-config"}})];
    if ctx.on("etcd.enabled") {
        mounts.push(json!({"name": "etcd-config-path", "mountPath": "/var/lib/etcd-config", "readOnly": true}));
        volumes.push(json!({"name": "etcd-config-path", "configMap": {
            "name": "cilium-config", "defaultMode": 256,
            "items": [{"key": "etcd-config", "path": "etcd.config"}]}}));
        if ctx.on("etcd.ssl") {
            mounts.push(json!({"name": "etcd-secrets", "mountPath": "/var/lib/etcd-secrets", "readOnly": true}));
            volumes.push(json!({"name": "etcd-secrets", "secret": {
                "secretName": "cilium-etcd-secrets", "defaultMode": 256, "optional": true}}));
        }
    }
    if clustermesh_sync(ctx) {
        mounts.push(json!({"name": "clustermesh-secrets", "mountPath": "/var/lib/cilium/clustermesh", "readOnly": true}));
    }
    if ctx.on("kubeConfigPath") {
        mounts.push(json!({"name": "kube-config", "mountPath": bare(ctx.v("kubeConfigPath")), "readOnly": true}));
        volumes.push(json!({"name": "kube-config", "hostPath": {"path": bare(ctx.v("kubeConfigPath")), "type": "FileOrCreate"}}));
    }
    let spire = ctx.on("authentication.mutual.spire.enabled");
    let spire_dir = bare(&string(go_dir(&quote(
        ctx.v("authentication.mutual.spire.agentSocketPath"),
    ))));
    if spire {
        mounts
            .push(json!({"name": "spire-agent-socket", "mountPath": spire_dir, "readOnly": true}));
    }
    let (extra_mounts, extra_volumes) = host_path_mounts(ctx, "operator.extraHostPathMounts")?;
    mounts.extend(extra_mounts);
    mounts.extend(items(ctx, "operator.extraVolumeMounts")?);
    volumes.extend(extra_volumes);
    if spire {
        volumes.push(json!({"name": "spire-agent-socket", "hostPath": {"path": spire_dir, "type": "DirectoryOrCreate"}}));
    }
    volumes.extend(items(ctx, "operator.extraVolumes")?);
    if clustermesh_sync(ctx) {
        volumes.push(clustermesh_volume(ctx));
    }

    let mut container = json!({
        "name": "cilium-operator",
        "image": operator_image(ctx),
        "imagePullPolicy": bare(ctx.v("operator.image.pullPolicy")),
        "command": [format!("cilium-operator-{cloud}")],
        "args": args,
        "env": env,
        "livenessProbe": probe(60.0, 10.0, None),
        "readinessProbe": probe(0.0, 5.0, Some(5.0)),
        "volumeMounts": mounts,
        "terminationMessagePolicy": "FallbackToLogsOnError",
    });
    if ctx.on("operator.prometheus.enabled") {
        let port = bare(ctx.v("operator.prometheus.port"));
        let mut p = json!({"name": "prometheus", "containerPort": port, "protocol": "TCP"});
        if host_network {
            put(&mut p, "hostPort", Some(port));
        }
        put(&mut container, "ports", Some(json!([p])));
    }
    put(
        &mut container,
        "resources",
        opt(ctx.v("operator.resources")),
    );
    put(
        &mut container,
        "securityContext",
        opt(ctx.v("operator.securityContext")),
    );

    let mut spec = json!({
        "containers": [container],
        "hostNetwork": bare(ctx.v("operator.hostNetwork")),
        "restartPolicy": "Always",
        "priorityClassName": priority_class(ctx, "operator.priorityClassName", "system-cluster-critical"),
        "serviceAccountName": quote(ctx.v("serviceAccounts.operator.name")),
        "automountServiceAccountToken": bare(ctx.v("serviceAccounts.operator.automount")),
        "volumes": volumes,
    });
    put(
        &mut spec,
        "imagePullSecrets",
        opt(ctx.v("imagePullSecrets")),
    );
    put(
        &mut spec,
        "securityContext",
        opt(ctx.v("operator.podSecurityContext")),
    );
    if ctx.on("operator.dnsPolicy") {
        put(
            &mut spec,
            "dnsPolicy",
            Some(bare(ctx.v("operator.dnsPolicy"))),
        );
    }
    put(&mut spec, "affinity", opt(ctx.v("operator.affinity")));
    if let Some(tsc) = opt(ctx.v("operator.topologySpreadConstraints")) {
        let Value::Array(list) = tsc else {
            return Err(ctx.invalid("operator.topologySpreadConstraints", "must be a list"));
        };
        let mut out = Vec::new();
        for mut c in list {
            if !truthy(&c["labelSelector"]) {
                put(
                    &mut c,
                    "labelSelector",
                    Some(json!({"matchLabels": labels(SELECTOR, &[])})),
                );
            }
            out.push(c);
        }
        put(
            &mut spec,
            "topologySpreadConstraints",
            Some(Value::Array(out)),
        );
    }
    put(
        &mut spec,
        "nodeSelector",
        opt(ctx.v("operator.nodeSelector")),
    );
    if clustermesh_sync(ctx)
        && ctx.on("clustermesh.config.enabled")
        && !(ctx.on("clustermesh.useAPIServer")
            && ctx.on("clustermesh.apiserver.kvstoremesh.enabled"))
    {
        let domain = quote(ctx.v("clustermesh.config.domain"));
        let mut aliases = Vec::new();
        if let Value::Array(clusters) = ctx.v("clustermesh.config.clusters") {
            for c in clusters {
                if let Value::Array(ips) = &c["ips"] {
                    for ip in ips {
                        aliases.push(json!({
                            "ip": bare(ip),
                            "hostnames": [format!("{}.{domain}", quote(&c["name"]))],
                        }));
                    }
                }
            }
        }
        if !aliases.is_empty() {
            put(&mut spec, "hostAliases", Some(Value::Array(aliases)));
        }
    }
    let mut tolerations = items(ctx, "operator.tolerations")?;
    let taint = ctx.v("agentNotReadyTaintKey");
    if !taint.is_null() {
        if tolerations.is_empty() {
            return Err(ctx.invalid(
                "operator.tolerations",
                "an empty list makes the chart write the agent-not-ready toleration (agentNotReadyTaintKey) outside any list, which is invalid YAML; keep at least one toleration, or set agentNotReadyTaintKey: null",
            ));
        }
        tolerations.push(json!({"key": bare(taint), "operator": "Exists"}));
    }
    if !tolerations.is_empty() {
        put(&mut spec, "tolerations", Some(Value::Array(tolerations)));
    }

    let mut deploy_spec = json!({
        "replicas": bare(replicas),
        "selector": {"matchLabels": labels(SELECTOR, &[])},
        "template": {
            "metadata": metadata_pod(
                labels(&own_labels, &[common_labels, ctx.v("operator.podLabels")]),
                pod_annotations,
            ),
            "spec": spec,
        },
    });
    put(&mut deploy_spec, "strategy", strategy);

    Ok(json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": metadata(
            "cilium-operator",
            Some(&ns),
            Some(labels(&own_labels, &[common_labels])),
            opt(ctx.v("operator.annotations")),
        ),
        "spec": deploy_spec,
    }))
}

/// Pod template metadata: labels always, annotations when any.
pub(super) fn metadata_pod(labels: Value, annotations: Option<Value>) -> Value {
    let mut m = json!({"labels": labels});
    put(&mut m, "annotations", annotations);
    m
}

/// The projected volume with the clustermesh secrets and client certificates.
fn clustermesh_volume(ctx: &Ctx) -> Value {
    let ca_bundle = ctx.on("tls.caBundle.enabled");
    let ca_source = |path: &str| {
        let kind = if ctx.on("tls.caBundle.useSecret") {
            "secret"
        } else {
            "configMap"
        };
        json!({ kind: {
            "name": bare(ctx.v("tls.caBundle.name")),
            "optional": true,
            "items": [{"key": bare(ctx.v("tls.caBundle.key")), "path": path}],
        }})
    };
    let cert = |secret: &str, prefix: &str| {
        let mut items = vec![
            json!({"key": "tls.key", "path": format!("{prefix}-etcd-client.key")}),
            json!({"key": "tls.crt", "path": format!("{prefix}-etcd-client.crt")}),
        ];
        if !ca_bundle {
            items.push(json!({"key": "ca.crt", "path": format!("{prefix}-etcd-client-ca.crt")}));
        }
        json!({"secret": {"name": secret, "optional": true, "items": items}})
    };
    let mut sources = vec![
        json!({"secret": {"name": "cilium-clustermesh", "optional": true}}),
        cert("clustermesh-apiserver-remote-cert", "common"),
    ];
    if ca_bundle {
        sources.push(ca_source("common-etcd-client-ca.crt"));
    }
    sources.push(cert("clustermesh-apiserver-local-cert", "local"));
    if ca_bundle {
        sources.push(ca_source("local-etcd-client-ca.crt"));
    }
    json!({"name": "clustermesh-secrets", "projected": {"defaultMode": 256, "sources": sources}})
}

fn service_account(ctx: &Ctx) -> Value {
    // With ENI and an IAM role, the chart adds the EKS role annotation to the account's own
    // annotations (in place, so it wins over a user key of the same name).
    let extra = (ctx.on("eni.enabled") && ctx.on("eni.iamRole"))
        .then(|| ("eks.amazonaws.com/role-arn", ctx.v("eni.iamRole").clone()));
    service_account_object(ctx, "operator", ctx.v("operator.annotations"), extra)
}

fn part_of_labels(ctx: &Ctx) -> Value {
    labels(
        &[("app.kubernetes.io/part-of", "cilium")],
        &[ctx.v("commonLabels")],
    )
}

fn rule(groups: &[&str], resources: &[&str], verbs: &[&str]) -> Value {
    json!({"apiGroups": groups, "resources": resources, "verbs": verbs})
}

/// `hasDuration`: the value, as text, is a Go duration other than zero (Sprig's `dateModify`
/// leaves the time unchanged otherwise).
fn has_duration(v: &Value) -> bool {
    go_parse_duration(&print(v)).is_some_and(|d| d != 0)
}

/// Go's `time.ParseDuration`, in nanoseconds; None where Go reports an error.
fn go_parse_duration(s: &str) -> Option<i128> {
    let (neg, mut rest) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    if rest == "0" {
        return Some(0);
    }
    if rest.is_empty() {
        return None;
    }
    let mut total: i128 = 0;
    while !rest.is_empty() {
        let b = rest.as_bytes()[0];
        if !(b == b'.' || b.is_ascii_digit()) {
            return None;
        }
        let int_len = rest.bytes().take_while(u8::is_ascii_digit).count();
        let int_part = &rest[..int_len];
        rest = &rest[int_len..];
        let mut frac_part = "";
        if rest.starts_with('.') {
            rest = &rest[1..];
            let n = rest.bytes().take_while(u8::is_ascii_digit).count();
            frac_part = &rest[..n];
            rest = &rest[n..];
        }
        if int_part.is_empty() && frac_part.is_empty() {
            return None;
        }
        let unit_len = rest
            .char_indices()
            .find(|(_, c)| *c == '.' || c.is_ascii_digit())
            .map(|(i, _)| i)
            .unwrap_or(rest.len());
        let unit = &rest[..unit_len];
        rest = &rest[unit_len..];
        let scale: i128 = match unit {
            "ns" => 1,
            "us" | "\u{b5}s" | "\u{3bc}s" => 1_000,
            "ms" => 1_000_000,
            "s" => 1_000_000_000,
            "m" => 60_000_000_000,
            "h" => 3_600_000_000_000,
            _ => return None,
        };
        let int_value: i128 = if int_part.is_empty() {
            0
        } else {
            int_part
                .parse()
                .ok()
                .filter(|v: &i128| *v <= i64::MAX as i128)?
        };
        let mut v = int_value.checked_mul(scale)?;
        if !frac_part.is_empty() {
            // Go keeps at most the digits that fit; nanosecond precision is plenty here.
            let digits: String = frac_part.chars().take(30).collect();
            let f: i128 = digits.parse().ok()?;
            let denom = 10i128.checked_pow(digits.len() as u32)?;
            v += (f as f64 * (scale as f64 / denom as f64)) as i128;
        }
        total = total.checked_add(v)?;
        if total > i64::MAX as i128 {
            return None;
        }
    }
    Some(if neg { -total } else { total })
}

/// Sprig's `int64` of a value: numbers truncate, numeric text parses, anything else is 0.
pub(super) fn to_int64(v: &Value) -> i64 {
    match v {
        Value::Number(n) => n
            .as_i64()
            .unwrap_or_else(|| n.as_f64().map(|f| f as i64).unwrap_or(0)),
        Value::String(s) => {
            let t = s.trim_end_matches('0');
            let t = if s.contains('.') {
                t.strip_suffix('.').unwrap_or(s)
            } else {
                s
            };
            t.parse().unwrap_or(0)
        }
        Value::Bool(b) => i64::from(*b),
        _ => 0,
    }
}

fn cluster_role(ctx: &Ctx) -> Result<Value, RenderError> {
    let ingress = ctx.on("ingressController.enabled");
    let gateway = ctx.on("gatewayAPI.enabled");
    let eps_sync = ctx.on("clustermesh.enableEndpointSliceSynchronization");
    let mcs = ctx.on("clustermesh.enableMCSAPISupport");
    let remove_taints = ctx.on("operator.removeNodeTaints");
    let node_status = ctx.on("operator.setNodeNetworkStatus");

    let mut rules = Vec::new();
    let mut pod_verbs = vec!["get", "list", "watch"];
    let disable_ep = ctx.v("disableEndpointCRD");
    if !disable_ep.is_null()
        && !truthy(disable_ep)
        && ctx.on("operator.unmanagedPodWatcher.restart")
        && to_int64(ctx.v("operator.unmanagedPodWatcher.intervalSeconds")) != 0
    {
        pod_verbs.push("delete");
    }
    rules.push(rule(&[""], &["pods"], &pod_verbs));
    rules.push(json!({"apiGroups": [""], "resources": ["configmaps"], "resourceNames": ["cilium-config"], "verbs": ["patch"]}));
    if remove_taints || node_status || has_duration(ctx.v("operator.endpointGCInterval")) {
        rules.push(rule(&[""], &["nodes"], &["list", "watch"]));
    }
    if remove_taints || node_status {
        let mut res = Vec::new();
        if remove_taints {
            res.push("nodes");
        }
        if node_status {
            res.push("nodes/status");
        }
        rules.push(rule(&[""], &res, &["patch"]));
    }
    let mut eps_verbs = Vec::new();
    if eps_sync || mcs {
        eps_verbs.extend(["create", "update", "delete", "deletecollection"]);
    }
    eps_verbs.extend(["get", "list", "watch"]);
    rules.push(rule(&["discovery.k8s.io"], &["endpointslices"], &eps_verbs));
    if eps_sync && ctx.plan.cilium.at_least(1, 18, 7) {
        rules.push(rule(&[""], &["services/finalizers"], &["update"]));
    }
    rules.push(rule(&[""], &["services/status"], &["update", "patch"]));
    let mut ns_res = vec!["namespaces"];
    if ingress || gateway || ctx.on("bgpControlPlane.enabled") || common::secret_sync_enabled(ctx) {
        ns_res.push("secrets");
    }
    rules.push(rule(&[""], &ns_res, &["get", "list", "watch"]));
    let mut svc_verbs = vec!["get", "list", "watch"];
    if ingress || gateway {
        svc_verbs.extend(["create", "update", "delete", "patch"]);
    }
    rules.push(rule(&[""], &["services", "endpoints"], &svc_verbs));
    if eps_sync {
        rules.push(rule(&[""], &["events"], &["patch", "create"]));
    }
    rules.push(rule(
        &["cilium.io"],
        &["ciliumnetworkpolicies", "ciliumclusterwidenetworkpolicies"],
        &[
            "create",
            "update",
            "deletecollection",
            "patch",
            "get",
            "list",
            "watch",
        ],
    ));
    rules.push(rule(
        &["cilium.io"],
        &[
            "ciliumnetworkpolicies/status",
            "ciliumclusterwidenetworkpolicies/status",
        ],
        &["patch", "update"],
    ));
    rules.push(rule(
        &["cilium.io"],
        &["ciliumendpoints", "ciliumidentities"],
        &["delete", "list", "watch"],
    ));
    let mut id_verbs = vec!["update"];
    if matches!(
        ctx.v("identityManagementMode").as_str(),
        Some("operator" | "both")
    ) {
        id_verbs.push("create");
    }
    rules.push(rule(&["cilium.io"], &["ciliumidentities"], &id_verbs));
    let mut node_verbs = vec!["create", "update", "get", "list", "watch"];
    if has_duration(ctx.v("operator.nodeGCInterval")) {
        node_verbs.push("delete");
    }
    rules.push(rule(&["cilium.io"], &["ciliumnodes"], &node_verbs));
    rules.push(rule(&["cilium.io"], &["ciliumnodes/status"], &["update"]));
    rules.push(rule(
        &["cilium.io"],
        &[
            "ciliumendpointslices",
            "ciliumenvoyconfigs",
            "ciliumbgppeerconfigs",
            "ciliumbgpadvertisements",
            "ciliumbgpnodeconfigs",
        ],
        &[
            "create", "update", "get", "list", "watch", "delete", "patch",
        ],
    ));
    rules.push(rule(
        &["cilium.io"],
        &[
            "ciliumbgpclusterconfigs/status",
            "ciliumbgppeerconfigs/status",
        ],
        &["update"],
    ));
    rules.push(rule(
        &["apiextensions.k8s.io"],
        &["customresourcedefinitions"],
        &["create", "get", "list", "watch"],
    ));
    let crds: Vec<String> = [
        "ciliumloadbalancerippools",
        "ciliumbgppeeringpolicies",
        "ciliumbgpclusterconfigs",
        "ciliumbgppeerconfigs",
        "ciliumbgpadvertisements",
        "ciliumbgpnodeconfigs",
        "ciliumbgpnodeconfigoverrides",
        "ciliumclusterwideenvoyconfigs",
        "ciliumclusterwidenetworkpolicies",
        "ciliumegressgatewaypolicies",
        "ciliumendpoints",
        "ciliumendpointslices",
        "ciliumenvoyconfigs",
        "ciliumidentities",
        "ciliumlocalredirectpolicies",
        "ciliumnetworkpolicies",
        "ciliumnodes",
        "ciliumnodeconfigs",
        "ciliumcidrgroups",
        "ciliuml2announcementpolicies",
        "ciliumpodippools",
        "ciliumgatewayclassconfigs",
    ]
    .iter()
    .map(|c| format!("{c}.cilium.io"))
    .collect();
    rules.push(json!({"apiGroups": ["apiextensions.k8s.io"], "resources": ["customresourcedefinitions"], "verbs": ["update"], "resourceNames": crds}));
    rules.push(rule(
        &["cilium.io"],
        &[
            "ciliumloadbalancerippools",
            "ciliumpodippools",
            "ciliumbgppeeringpolicies",
            "ciliumbgpclusterconfigs",
            "ciliumbgpnodeconfigoverrides",
            "ciliumbgppeerconfigs",
        ],
        &["get", "list", "watch"],
    ));
    rules.push(rule(&["cilium.io"], &["ciliumpodippools"], &["create"]));
    rules.push(rule(
        &["cilium.io"],
        &["ciliumloadbalancerippools/status"],
        &["patch"],
    ));
    rules.push(rule(
        &["coordination.k8s.io"],
        &["leases"],
        &["create", "get", "update"],
    ));
    if ingress {
        rules.push(rule(
            &["networking.k8s.io"],
            &["ingresses", "ingressclasses"],
            &["get", "list", "watch"],
        ));
        let mut res = vec!["ingresses/status"];
        if ctx.plan.cilium.at_least(1, 18, 7) {
            res.push("ingresses/finalizers");
        }
        rules.push(rule(&["networking.k8s.io"], &res, &["update"]));
    }
    if gateway {
        let g = &["gateway.networking.k8s.io"];
        rules.push(rule(
            g,
            &[
                "gatewayclasses",
                "gateways",
                "tlsroutes",
                "httproutes",
                "grpcroutes",
                "referencegrants",
                "referencepolicies",
            ],
            &["get", "list", "watch"],
        ));
        rules.push(rule(g, &["gatewayclasses"], &["patch"]));
        rules.push(rule(
            g,
            &[
                "gatewayclasses/status",
                "gateways/status",
                "httproutes/status",
                "grpcroutes/status",
                "tlsroutes/status",
            ],
            &["update", "patch"],
        ));
        rules.push(rule(
            &["cilium.io"],
            &["ciliumgatewayclassconfigs"],
            &["get", "list", "watch"],
        ));
        rules.push(rule(
            &["cilium.io"],
            &["ciliumgatewayclassconfigs/status"],
            &["update", "patch"],
        ));
    }
    let mc = &["multicluster.x-k8s.io"];
    if gateway || mcs {
        let mut verbs = vec!["get", "list", "watch"];
        if mcs {
            verbs.extend(["create", "update", "patch", "delete"]);
        }
        rules.push(rule(mc, &["serviceimports"], &verbs));
    }
    if mcs {
        rules.push(rule(mc, &["serviceimports/status"], &["update", "patch"]));
        rules.push(rule(mc, &["serviceexports"], &["get", "list", "watch"]));
        rules.push(rule(mc, &["serviceexports/status"], &["update", "patch"]));
        rules.push(rule(
            &[""],
            &["services"],
            &["create", "update", "patch", "delete"],
        ));
    }
    Ok(json!({
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": metadata("cilium-operator", None, Some(part_of_labels(ctx)), opt(ctx.v("operator.annotations"))),
        "rules": rules,
    }))
}

fn subject(ctx: &Ctx) -> Value {
    json!([{
        "kind": "ServiceAccount",
        "name": quote(ctx.v("serviceAccounts.operator.name")),
        "namespace": ctx.namespace(),
    }])
}

fn cluster_role_binding(ctx: &Ctx) -> Value {
    json!({
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": metadata("cilium-operator", None, Some(part_of_labels(ctx)), opt(ctx.v("operator.annotations"))),
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cilium-operator"},
        "subjects": subject(ctx),
    })
}

/// Roles (and their bindings) that let the operator write synced TLS secrets into the
/// secrets namespaces of Ingress, Gateway API and TLS interception.
fn secret_roles(ctx: &Ctx) -> Vec<Value> {
    let mut out = Vec::new();
    let wanted = [
        (
            "cilium-operator-ingress-secrets",
            ctx.on("ingressController.enabled")
                && ctx.on("ingressController.secretsNamespace.sync"),
            "ingressController.secretsNamespace.name",
        ),
        (
            "cilium-operator-gateway-secrets",
            ctx.on("gatewayAPI.enabled") && ctx.on("gatewayAPI.secretsNamespace.sync"),
            "gatewayAPI.secretsNamespace.name",
        ),
        (
            "cilium-operator-tlsinterception-secrets",
            common::secret_sync_enabled(ctx),
            "tls.secretsNamespace.name",
        ),
    ];
    for (name, on, ns_path) in wanted {
        if !on || !ctx.on(ns_path) {
            continue;
        }
        let ns = quote(ctx.v(ns_path));
        let meta = metadata(
            name,
            Some(&ns),
            Some(part_of_labels(ctx)),
            opt(ctx.v("operator.annotations")),
        );
        out.push(json!({
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "Role",
            "metadata": meta,
            "rules": [rule(&[""], &["secrets"], &["create", "delete", "update", "patch"])],
        }));
        out.push(json!({
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": meta,
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name},
            "subjects": subject(ctx),
        }));
    }
    out
}

fn pod_disruption_budget(ctx: &Ctx) -> Value {
    let pdb = ctx.v("operator.podDisruptionBudget");
    let mut spec = json!({"selector": {"matchLabels": labels(SELECTOR, &[])}});
    if truthy(&pdb["maxUnavailable"]) {
        put(
            &mut spec,
            "maxUnavailable",
            Some(bare(&pdb["maxUnavailable"])),
        );
    }
    if truthy(&pdb["minAvailable"]) {
        put(&mut spec, "minAvailable", Some(bare(&pdb["minAvailable"])));
    }
    if ctx.plan.kube.at_least(1, 27) && truthy(&pdb["unhealthyPodEvictionPolicy"]) {
        put(
            &mut spec,
            "unhealthyPodEvictionPolicy",
            Some(bare(&pdb["unhealthyPodEvictionPolicy"])),
        );
    }
    json!({
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": metadata(
            "cilium-operator",
            Some(&ctx.namespace()),
            Some(labels(
                &[
                    ("io.cilium/app", "operator"),
                    ("name", "cilium-operator"),
                    ("app.kubernetes.io/name", "cilium-operator"),
                    ("app.kubernetes.io/part-of", "cilium"),
                ],
                &[ctx.v("commonLabels")],
            )),
            opt(ctx.v("operator.annotations")),
        ),
        "spec": spec,
    })
}

/// Standard base64 with padding (Sprig's `b64enc`).
fn base64(data: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(A[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

fn azure_secret(ctx: &Ctx) -> Value {
    let enc = |path: &str| {
        let v = ctx.v(path);
        let text = if truthy(v) { print(v) } else { String::new() };
        base64(text.as_bytes())
    };
    json!({
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": metadata("cilium-azure", Some(&ctx.namespace()), common::common_labels(ctx), opt(ctx.v("operator.annotations"))),
        "type": "Opaque",
        "data": {
            "AZURE_CLIENT_ID": enc("azure.clientID"),
            "AZURE_CLIENT_SECRET": enc("azure.clientSecret"),
        },
    })
}

fn service(ctx: &Ctx) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": metadata(
            "cilium-operator",
            Some(&ctx.namespace()),
            Some(labels(
                &[
                    ("io.cilium/app", "operator"),
                    ("name", "cilium-operator"),
                    ("app.kubernetes.io/part-of", "cilium"),
                    ("app.kubernetes.io/name", "cilium-operator"),
                ],
                &[ctx.v("commonLabels")],
            )),
            opt(ctx.v("operator.annotations")),
        ),
        "spec": {
            "clusterIP": "None",
            "type": "ClusterIP",
            "ports": [{"name": "metrics", "port": 9963, "protocol": "TCP", "targetPort": "prometheus"}],
            "selector": labels(SELECTOR, &[]),
        },
    })
}

const DASHBOARD_DIR: &str = "files/cilium-operator/dashboards/";

/// One ConfigMap per bundled Grafana dashboard (read from the chart archive, never copied).
fn dashboards(ctx: &Ctx) -> Result<Vec<Value>, RenderError> {
    if !ctx.on("operator.dashboards.enabled") {
        return Ok(Vec::new());
    }
    let files: Vec<String> = match ctx.chart {
        Some(chart) => chart
            .list(DASHBOARD_DIR)
            .into_iter()
            .filter(|p| {
                p.strip_prefix(DASHBOARD_DIR)
                    .is_some_and(|rest| !rest.contains('/') && rest.ends_with(".json"))
            })
            .map(str::to_string)
            .collect(),
        // Without an archive, ask for the one file every 1.18 chart has, to get the error that
        // names the value and the remedy.
        None => vec![format!("{DASHBOARD_DIR}cilium-operator-dashboard.json")],
    };
    let d = ctx.v("operator.dashboards");
    let namespace = if truthy(&d["namespace"]) {
        print(&d["namespace"])
    } else {
        ctx.namespace()
    };
    let mut out = Vec::new();
    for path in files {
        let text = ctx.bundled(
            "operator.dashboards.enabled",
            &path,
            "false (or import the dashboard into Grafana yourself)",
        )?;
        let file = path.rsplit('/').next().unwrap_or(&path);
        let stem = file.strip_suffix(".json").unwrap_or(file);
        let name: String = stem.chars().take(63).collect();
        let name = name.strip_suffix('-').unwrap_or(&name).to_string();
        let mut extra = Map::new();
        if truthy(&d["label"]) {
            let value = if truthy(&d["labelValue"]) {
                print(&d["labelValue"])
            } else {
                "1".into()
            };
            extra.insert(print(&bare(&d["label"])), string(value));
        }
        let lbl = labels(
            &[
                ("k8s-app", "cilium"),
                ("app.kubernetes.io/name", "cilium-operator"),
                ("app.kubernetes.io/part-of", "cilium"),
            ],
            &[ctx.v("commonLabels"), &Value::Object(extra)],
        );
        let annotations = merged(&[&d["annotations"], ctx.v("operator.annotations")]);
        let mut data = Map::new();
        data.insert(format!("{stem}.json"), string(text));
        out.push(json!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": metadata(&name, Some(&namespace), Some(lbl), annotations),
            "data": data,
        }));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_follow_go() {
        assert_eq!(go_parse_duration("5m0s"), Some(300_000_000_000));
        assert_eq!(go_parse_duration("1.5h"), Some(5_400_000_000_000));
        assert_eq!(go_parse_duration("0"), Some(0));
        assert_eq!(go_parse_duration("300"), None);
        assert_eq!(go_parse_duration(""), None);
        assert!(has_duration(&json!("15m")));
        assert!(!has_duration(&json!("0s")));
        assert!(!has_duration(&Value::Null));
    }

    #[test]
    fn base64_pads() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"a"), "YQ==");
        assert_eq!(base64(b"ab"), "YWI=");
        assert_eq!(base64(b"abc"), "YWJj");
    }

    #[test]
    fn dir_like_go() {
        assert_eq!(
            go_dir("/run/spire/sockets/agent/agent.sock"),
            "/run/spire/sockets/agent"
        );
        assert_eq!(go_dir("agent.sock"), ".");
        assert_eq!(go_dir("/x"), "/");
    }

    #[test]
    fn int64_like_sprig() {
        assert_eq!(to_int64(&json!(15.0)), 15);
        assert_eq!(to_int64(&json!("15")), 15);
        assert_eq!(to_int64(&json!("0")), 0);
        assert_eq!(to_int64(&json!("x")), 0);
    }
}
