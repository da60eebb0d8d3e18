//! Mirrors the chart's templates: cilium-operator/

use crate::changes::Change;
use serde_json::{Map, Value};

use super::common::{
    self, dashboard_configmaps, host_path_mounts, labels, list_items, merged, metadata,
    priority_class_name, put, put_with, service_monitor, topology_spread, Dashboards, MonitorSpec,
};
use super::Ctx;
use crate::error::RenderError;
use crate::tmpl::{
    b64enc, bare, has_duration, path_dir, print, quote, quoted, to_int64, truthy, with,
};

const SELECTOR: &[(&str, &str)] = &[("io.cilium/app", "operator"), ("name", "cilium-operator")];

/// How the operator and Envoy word a non-map entry of `extraHostPathMounts`.
pub(super) const HOST_PATH_NOT_A_MAP: &str = "every entry must be a mapping";

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
        out.extend(secret_roles(ctx)?);
    }
    if ctx.on("operator.podDisruptionBudget.enabled") {
        out.push(common::pod_disruption_budget(
            ctx,
            "cilium-operator",
            ctx.v("operator.podDisruptionBudget"),
            SELECTOR,
            &[
                ("io.cilium/app", "operator"),
                ("name", "cilium-operator"),
                ("app.kubernetes.io/name", "cilium-operator"),
                ("app.kubernetes.io/part-of", "cilium"),
            ],
            ctx.v("operator.annotations"),
        ));
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
// Helpers shared with the Envoy module.

/// The ServiceAccount `serviceAccounts.<account>`, annotated with the component's annotations
/// and then the account's own, to which `extra` is added in place (so it wins over a user key of
/// the same name).
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
            own = tree!({ k: v });
        }
    }
    common::service_account(ctx, account, merged(&[component_annotations, &own]))
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
        Some(tree!({
            "rollingUpdate": {
                "maxSurge": bare(&strategy_v["rollingUpdate"]["maxSurge"]),
                "maxUnavailable": "100%",
            },
            "type": "RollingUpdate",
        }))
    } else {
        with(strategy_v)
    };

    let mut pod_annotations = Map::new();
    if ctx.on("operator.rollOutPods") {
        pod_annotations.insert(
            "cilium.io/cilium-configmap-checksum".into(),
            Value::String(super::config::cilium_config_checksum(ctx)?),
        );
    }
    if ctx.on("operator.prometheus.enabled")
        && !ctx.on("operator.prometheus.serviceMonitor.enabled")
    {
        pod_annotations.insert(
            "prometheus.io/port".into(),
            quoted(ctx.v("operator.prometheus.port")),
        );
        pod_annotations.insert("prometheus.io/scrape".into(), Value::from("true"));
    }
    let pod_annotations = merged(&[
        &Value::Object(pod_annotations),
        ctx.v("operator.podAnnotations"),
    ]);

    let cloud = cloud(ctx);
    let mut args = vec![
        Value::from("--config-dir=/tmp/cilium/config-map"),
        Value::from("--debug=$(CILIUM_DEBUG)"),
    ];
    args.extend(list_items(ctx, "operator.extraArgs")?);

    let mut env = vec![
        tree!({"name": "K8S_NODE_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "spec.nodeName"}}}),
        tree!({"name": "CILIUM_K8S_NAMESPACE", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}}),
    ];
    if clustermesh_sync(ctx) {
        env.push(
            tree!({"name": "CILIUM_CLUSTERMESH_CONFIG", "value": "/var/lib/cilium/clustermesh/"}),
        );
    }
    env.push(tree!({"name": "CILIUM_DEBUG", "valueFrom": {"configMapKeyRef": {"key": "debug", "name": "cilium-config", "optional": true}}}));
    let secret_env = |name: &str, secret: &str, optional: bool| {
        let mut r = tree!({"name": secret, "key": name});
        if optional {
            put(&mut r, "optional", Some(Value::Bool(true)));
        }
        tree!({"name": name, "valueFrom": {"secretKeyRef": r}})
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
        env.push(secret_env("AZURE_CLIENT_ID", "cilium-azure", false));
        env.push(secret_env("AZURE_CLIENT_SECRET", "cilium-azure", false));
    }
    env.extend(list_items(ctx, "operator.extraEnv")?);

    let host_network = ctx.on("operator.hostNetwork");
    let probe = |initial: f64, period: f64, failure: Option<f64>| {
        let mut get = tree!({"path": "/healthz", "port": 9234, "scheme": "HTTP"});
        if host_network {
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
    };

    let mut mounts = vec![
        tree!({"name": "cilium-config-path", "mountPath": "/tmp/cilium/config-map", "readOnly": true}),
    ];
    let mut volumes =
        vec![tree!({"name": "cilium-config-path", "configMap": {"name": "cilium-config"}})];
    if ctx.on("etcd.enabled") {
        mounts.push(tree!({"name": "etcd-config-path", "mountPath": "/var/lib/etcd-config", "readOnly": true}));
        volumes.push(tree!({"name": "etcd-config-path", "configMap": {
            "name": "cilium-config", "defaultMode": 256,
            "items": [{"key": "etcd-config", "path": "etcd.config"}]}}));
        if ctx.on("etcd.ssl") {
            mounts.push(tree!({"name": "etcd-secrets", "mountPath": "/var/lib/etcd-secrets", "readOnly": true}));
            volumes.push(tree!({"name": "etcd-secrets", "secret": {
                "secretName": "cilium-etcd-secrets", "defaultMode": 256, "optional": true}}));
        }
    }
    if clustermesh_sync(ctx) {
        mounts.push(tree!({"name": "clustermesh-secrets", "mountPath": "/var/lib/cilium/clustermesh", "readOnly": true}));
    }
    if ctx.on("kubeConfigPath") {
        mounts.push(tree!({"name": "kube-config", "mountPath": bare(ctx.v("kubeConfigPath")), "readOnly": true}));
        volumes.push(tree!({"name": "kube-config", "hostPath": {"path": bare(ctx.v("kubeConfigPath")), "type": "FileOrCreate"}}));
    }
    let spire = ctx.on("authentication.mutual.spire.enabled");
    let spire_dir = bare(&Value::from(path_dir(&quote(
        ctx.v("authentication.mutual.spire.agentSocketPath"),
    ))));
    if spire {
        mounts
            .push(tree!({"name": "spire-agent-socket", "mountPath": &spire_dir, "readOnly": true}));
    }
    let (extra_mounts, extra_volumes) =
        host_path_mounts(ctx, "operator.extraHostPathMounts", HOST_PATH_NOT_A_MAP)?;
    mounts.extend(extra_mounts);
    mounts.extend(list_items(ctx, "operator.extraVolumeMounts")?);
    volumes.extend(extra_volumes);
    if spire {
        volumes.push(tree!({"name": "spire-agent-socket", "hostPath": {"path": spire_dir, "type": "DirectoryOrCreate"}}));
    }
    volumes.extend(list_items(ctx, "operator.extraVolumes")?);
    if clustermesh_sync(ctx) {
        volumes.push(clustermesh_volume(ctx));
    }

    let mut container = tree!({
        "name": "cilium-operator",
        "image": operator_image(ctx),
        "imagePullPolicy": bare(ctx.v("operator.image.pullPolicy")),
        "command": tree!([format!("cilium-operator-{cloud}")]),
        "args": args,
        "env": env,
        "livenessProbe": probe(60.0, 10.0, None),
        "readinessProbe": probe(0.0, 5.0, Some(5.0)),
        "volumeMounts": mounts,
        "terminationMessagePolicy": "FallbackToLogsOnError",
    });
    if ctx.on("operator.prometheus.enabled") {
        let port = bare(ctx.v("operator.prometheus.port"));
        let mut p = tree!({"name": "prometheus", "containerPort": &port, "protocol": "TCP"});
        if host_network {
            put(&mut p, "hostPort", Some(port));
        }
        put(&mut container, "ports", Some(tree!([p])));
    }
    put_with(
        &mut container,
        ctx,
        &[
            ("resources", "operator.resources"),
            ("securityContext", "operator.securityContext"),
        ],
    );

    let mut spec = tree!({
        "containers": vec![container],
        "hostNetwork": bare(ctx.v("operator.hostNetwork")),
        "restartPolicy": "Always",
        "priorityClassName": priority_class_name(ctx, ctx.v("operator.priorityClassName"), "system-cluster-critical"),
        "serviceAccountName": quote(ctx.v("serviceAccounts.operator.name")),
        "automountServiceAccountToken": bare(ctx.v("serviceAccounts.operator.automount")),
        "volumes": volumes,
    });
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
                        aliases.push(tree!({
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
    let mut tolerations = list_items(ctx, "operator.tolerations")?;
    let taint = ctx.v("agentNotReadyTaintKey");
    if !taint.is_null() {
        if tolerations.is_empty() {
            return Err(ctx.invalid(
                "operator.tolerations",
                "an empty list makes the chart write the agent-not-ready toleration (agentNotReadyTaintKey) outside any list, which is invalid YAML; keep at least one toleration, or set agentNotReadyTaintKey: null",
            ));
        }
        tolerations.push(tree!({"key": bare(taint), "operator": "Exists"}));
    }
    if !tolerations.is_empty() {
        put(&mut spec, "tolerations", Some(Value::Array(tolerations)));
    }

    let mut deploy_spec = tree!({
        "replicas": bare(replicas),
        "selector": tree!({"matchLabels": labels(SELECTOR, &[])}),
        "template": tree!({
            "metadata": metadata_pod(
                labels(&own_labels, &[common_labels, ctx.v("operator.podLabels")]),
                pod_annotations,
            ),
            "spec": spec,
        }),
    });
    put(&mut deploy_spec, "strategy", strategy);

    Ok(tree!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": metadata(
            "cilium-operator",
            Some(&ns),
            Some(labels(&own_labels, &[common_labels])),
            with(ctx.v("operator.annotations")),
        ),
        "spec": deploy_spec,
    }))
}

/// Pod template metadata: labels always, annotations when any.
pub(super) fn metadata_pod(labels: Value, annotations: Option<Value>) -> Value {
    let mut m = tree!({"labels": labels});
    put(&mut m, "annotations", annotations);
    m
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
    tree!({"apiGroups": groups, "resources": resources, "verbs": verbs})
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
    rules.push(tree!({"apiGroups": [""], "resources": ["configmaps"], "resourceNames": ["cilium-config"], "verbs": ["patch"]}));
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
    if eps_sync && ctx.plan.has(Change::OperatorFinalizers) {
        rules.push(rule(&[""], &["services/finalizers"], &["update"]));
    }
    rules.push(rule(&[""], &["services/status"], &["update", "patch"]));
    let mut ns_res = vec!["namespaces"];
    if ingress || gateway || ctx.on("bgpControlPlane.enabled") || common::secret_sync_enabled(ctx)?
    {
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
    rules.push(tree!({"apiGroups": ["apiextensions.k8s.io"], "resources": ["customresourcedefinitions"], "verbs": ["update"], "resourceNames": crds}));
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
        if ctx.plan.has(Change::OperatorFinalizers) {
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
    Ok(tree!({
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": metadata("cilium-operator", None, Some(part_of_labels(ctx)), with(ctx.v("operator.annotations"))),
        "rules": rules,
    }))
}

fn subject(ctx: &Ctx) -> Value {
    tree!([{
        "kind": "ServiceAccount",
        "name": quote(ctx.v("serviceAccounts.operator.name")),
        "namespace": ctx.namespace(),
    }])
}

fn cluster_role_binding(ctx: &Ctx) -> Value {
    tree!({
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": metadata("cilium-operator", None, Some(part_of_labels(ctx)), with(ctx.v("operator.annotations"))),
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cilium-operator"},
        "subjects": subject(ctx),
    })
}

/// Roles (and their bindings) that let the operator write synced TLS secrets into the
/// secrets namespaces of Ingress, Gateway API and TLS interception.
fn secret_roles(ctx: &Ctx) -> Result<Vec<Value>, RenderError> {
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
            common::secret_sync_enabled(ctx)?,
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
            with(ctx.v("operator.annotations")),
        );
        out.push(tree!({
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "Role",
            "metadata": &meta,
            "rules": [rule(&[""], &["secrets"], &["create", "delete", "update", "patch"])],
        }));
        out.push(tree!({
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": meta,
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name},
            "subjects": subject(ctx),
        }));
    }
    Ok(out)
}

fn azure_secret(ctx: &Ctx) -> Value {
    let enc = |path: &str| {
        let v = ctx.v(path);
        let text = if truthy(v) { print(v) } else { String::new() };
        b64enc(text.as_bytes())
    };
    tree!({
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": metadata("cilium-azure", Some(&ctx.namespace()), common::common_labels(ctx), with(ctx.v("operator.annotations"))),
        "type": "Opaque",
        "data": {
            "AZURE_CLIENT_ID": enc("azure.clientID"),
            "AZURE_CLIENT_SECRET": enc("azure.clientSecret"),
        },
    })
}

fn service(ctx: &Ctx) -> Value {
    tree!({
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
            with(ctx.v("operator.annotations")),
        ),
        "spec": {
            "clusterIP": "None",
            "type": "ClusterIP",
            "ports": [{"name": "metrics", "port": 9963, "protocol": "TCP", "targetPort": "prometheus"}],
            "selector": labels(SELECTOR, &[]),
        },
    })
}

fn dashboards(ctx: &Ctx) -> Result<Vec<Value>, RenderError> {
    if !ctx.on("operator.dashboards.enabled") {
        return Ok(Vec::new());
    }
    dashboard_configmaps(
        ctx,
        &Dashboards {
            dir: "files/cilium-operator/dashboards/",
            known_file: "cilium-operator-dashboard.json",
            enabled: "operator.dashboards.enabled",
            alternative: "false (or import the dashboard into Grafana yourself)",
            values: "operator.dashboards",
            app_labels: &[
                ("k8s-app", "cilium"),
                ("app.kubernetes.io/name", "cilium-operator"),
                ("app.kubernetes.io/part-of", "cilium"),
            ],
            annotations: &[
                ctx.v("operator.dashboards.annotations"),
                ctx.v("operator.annotations"),
            ],
        },
    )
}
