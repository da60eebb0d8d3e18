//! The `cilium` DaemonSet: the agent container (plus the optional monitor sidecar), the init
//! containers that prepare each node, and the host volumes they share.

use crate::changes::Change;
use serde_json::{Map, Value};

use super::{agent_on, bare_at, eq_text, s, ternary_bool};
use crate::components::common::{
    self, envoy_daemonset_enabled, image, k8s_service_env, labels, list_items, metadata,
    priority_class_name, upgrade_compat_at_least, with_chart_label,
};
use crate::components::Ctx;
use crate::error::RenderError;
use crate::tmpl::{bare, go_quote, path_base, path_dir, print, quote, quoted, truthy, with};

/// Kubernetes reads the chart's octal `0400` file mode as this decimal number.
const MODE_0400: u64 = 256;

const AWS_SCRIPT: &str = "files/agent/poststart-eni.bash";

pub fn render(ctx: &Ctx) -> Result<Vec<Value>, RenderError> {
    if !agent_on(ctx) {
        return Ok(Vec::new());
    }
    let namespace = ctx.namespace();
    if ctx.on("keepDeprecatedLabels") && ctx.on("gke.enabled") && namespace == "kube-system" {
        return Err(ctx.invalid(
            "keepDeprecatedLabels",
            "GKE removes a DaemonSet labelled kubernetes.io/cluster-service in kube-system; install Cilium in another namespace or set keepDeprecatedLabels: false",
        ));
    }
    let a = Agent::new(ctx)?;

    let mut ds_labels = labels(
        &with_chart_label(
            ctx,
            &[
                ("k8s-app", "cilium"),
                ("app.kubernetes.io/part-of", "cilium"),
                ("app.kubernetes.io/name", "cilium-agent"),
            ],
        ),
        &[ctx.v("commonLabels")],
    );
    let mut selector = tree!({"k8s-app": "cilium"});
    if ctx.on("keepDeprecatedLabels") {
        ds_labels["kubernetes.io/cluster-service"] = s("true");
        selector["kubernetes.io/cluster-service"] = s("true");
    }

    let mut spec = tree!({
        "selector": {"matchLabels": selector},
        "template": {
            "metadata": {"annotations": pod_annotations(ctx)?, "labels": pod_labels(ctx)},
            "spec": pod_spec(ctx, &a)?,
        },
    });
    common::put(&mut spec, "updateStrategy", with(ctx.v("updateStrategy")));
    if ctx.plan.has(Change::AgentPodSpec120) && ctx.on("minReadySeconds") {
        common::put(
            &mut spec,
            "minReadySeconds",
            Some(bare_at(ctx, "minReadySeconds")),
        );
    }
    let name = quote(&bare_at(ctx, "name"));
    Ok(vec![tree!({
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": metadata(
            &name,
            Some(&namespace),
            Some(ds_labels),
            with(ctx.v("annotations")),
        ),
        "spec": spec,
    })])
}

/// What several containers share, computed once.
struct Agent {
    image: Value,
    pull_policy: Value,
    privileged: bool,
    envoy_ds: bool,
    hubble_metrics: bool,
    api_server_env: Vec<Value>,
    /// The ConfigMap the agent reads its configuration from directly, when
    /// `daemon.configSources` names exactly one; otherwise the `config` init container
    /// assembles it into the `tmp` volume.
    config_map_source: Option<Value>,
}

impl Agent {
    fn new(ctx: &Ctx) -> Result<Agent, RenderError> {
        Ok(Agent {
            image: s(&image(ctx.v("image"))),
            pull_policy: bare_at(ctx, "image.pullPolicy"),
            privileged: ctx.on("securityContext.privileged"),
            envoy_ds: envoy_daemonset_enabled(ctx)?,
            hubble_metrics: ctx.on("hubble.metrics.enabled")
                || ctx.on("hubble.metrics.dynamic.enabled"),
            api_server_env: k8s_service_env(ctx)?,
            config_map_source: config_map_source(ctx)?,
        })
    }

    /// A container's first fields: name, the agent image and its pull policy.
    fn container(&self, name: &str) -> Map<String, Value> {
        let mut c = Map::new();
        c.insert("name".into(), s(name));
        c.insert("image".into(), self.image.clone());
        c.insert("imagePullPolicy".into(), self.pull_policy.clone());
        c
    }

    /// Privileged mode, or SELinux options and the given capabilities on top of dropping all.
    fn security_context(&self, ctx: &Ctx, capabilities: &str) -> Value {
        if self.privileged {
            return tree!({"privileged": true});
        }
        let mut caps = Map::new();
        if let Some(add) = with(ctx.v(&format!("securityContext.capabilities.{capabilities}"))) {
            caps.insert("add".into(), add);
        }
        caps.insert("drop".into(), tree!(["ALL"]));
        let mut sc = Map::new();
        if let Some(se) = with(ctx.v("securityContext.seLinuxOptions")) {
            sc.insert("seLinuxOptions".into(), se);
        }
        sc.insert("capabilities".into(), Value::Object(caps));
        Value::Object(sc)
    }
}

/// The ConfigMap name when `daemon.configSources` is `config-map:NAME` and nothing else (the
/// chart's `^config-map:[^,]+$`), printed bare as the chart does.
fn config_map_source(ctx: &Ctx) -> Result<Option<Value>, RenderError> {
    if !ctx.plan.has(Change::AgentConfigMapSource) {
        return Ok(None);
    }
    let name = match ctx.v("daemon.configSources") {
        Value::Null => return Ok(None),
        Value::String(text) => text.strip_prefix("config-map:"),
        _ => {
            return Err(ctx.invalid(
                "daemon.configSources",
                "must be a string (the chart matches it against a pattern)",
            ))
        }
    };
    Ok(name
        .filter(|n| !n.is_empty() && !n.contains(','))
        .map(|n| bare(&s(n))))
}

fn field_env(name: &str, field: &str) -> Value {
    tree!({"name": name, "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": field}}})
}

fn config_env(name: &str, key: &str) -> Value {
    tree!({"name": name, "valueFrom": {"configMapKeyRef": {"name": "cilium-config", "key": key, "optional": true}}})
}

fn pod_annotations(ctx: &Ctx) -> Result<Value, RenderError> {
    let mut m = Map::new();
    if ctx.on("prometheus.enabled") && !ctx.on("prometheus.serviceMonitor.enabled") {
        m.insert(
            "prometheus.io/port".into(),
            quoted(ctx.v("prometheus.port")),
        );
        m.insert("prometheus.io/scrape".into(), s("true"));
    }
    if ctx.on("rollOutCiliumPods") {
        m.insert(
            "cilium.io/cilium-configmap-checksum".into(),
            Value::String(super::super::config::cilium_config_checksum(ctx)?),
        );
    }
    // Before Kubernetes 1.30 AppArmor is set through annotations (the pod field came later).
    if !ctx.on("securityContext.privileged") && !ctx.plan.kube.app_armor_profile_field() {
        let mut containers = vec!["cilium-agent", "clean-cilium-state"];
        if ctx.on("cgroup.autoMount.enabled") {
            containers.extend(["mount-cgroup", "apply-sysctl-overwrites"]);
        }
        for c in containers {
            m.insert(
                format!("container.apparmor.security.beta.kubernetes.io/{c}"),
                s("unconfined"),
            );
        }
    }
    if let Value::Object(extra) = ctx.v("podAnnotations") {
        for (k, v) in extra {
            m.insert(k.clone(), v.clone());
        }
    }
    m.insert(
        "kubectl.kubernetes.io/default-container".into(),
        s("cilium-agent"),
    );
    Ok(Value::Object(m))
}

fn pod_labels(ctx: &Ctx) -> Value {
    let mut l = labels(
        &with_chart_label(
            ctx,
            &[
                ("k8s-app", "cilium"),
                ("app.kubernetes.io/name", "cilium-agent"),
                ("app.kubernetes.io/part-of", "cilium"),
            ],
        ),
        &[ctx.v("commonLabels")],
    );
    if ctx.on("keepDeprecatedLabels") {
        l["kubernetes.io/cluster-service"] = s("true");
    }
    if let Value::Object(extra) = ctx.v("podLabels") {
        for (k, v) in extra {
            l[k.as_str()] = v.clone();
        }
    }
    l
}

fn pod_spec(ctx: &Ctx, a: &Agent) -> Result<Value, RenderError> {
    let mut spec = Map::new();
    if let Some(p) = with(ctx.v("imagePullSecrets")) {
        spec.insert("imagePullSecrets".into(), p);
    }
    let mut psc = ctx.v("podSecurityContext").clone();
    // Kubernetes before 1.30 has no appArmorProfile field.
    if !ctx.plan.kube.app_armor_profile_field() {
        if let Value::Object(m) = &mut psc {
            m.remove("appArmorProfile");
        }
    }
    if truthy(&psc) {
        spec.insert("securityContext".into(), psc);
    }

    let mut containers = vec![agent_container(ctx, a)?];
    if ctx.on("monitor.enabled") {
        containers.push(monitor_container(ctx, a)?);
    }
    containers.extend(list_items(ctx, "extraContainers")?);
    spec.insert("containers".into(), Value::Array(containers));
    spec.insert(
        "initContainers".into(),
        Value::Array(init_containers(ctx, a)?),
    );

    spec.insert("restartPolicy".into(), s("Always"));
    if let Some(pc) = priority_class_name(ctx, ctx.v("priorityClassName"), "system-node-critical") {
        spec.insert("priorityClassName".into(), pc);
    }
    spec.insert(
        "serviceAccountName".into(),
        quoted(ctx.v("serviceAccounts.cilium.name")),
    );
    spec.insert(
        "automountServiceAccountToken".into(),
        bare_at(ctx, "serviceAccounts.cilium.automount"),
    );
    spec.insert(
        "terminationGracePeriodSeconds".into(),
        bare_at(ctx, "terminationGracePeriodSeconds"),
    );
    spec.insert("hostNetwork".into(), Value::Bool(true));
    // Kubernetes 1.33 turned user namespaces on by default; a host-network agent needs the
    // host's.
    if ctx.plan.has(Change::AgentPodSpec120) && ctx.plan.kube.user_namespaces_by_default() {
        spec.insert("hostUsers".into(), Value::Bool(true));
    }
    if ctx.on("dnsPolicy") {
        spec.insert("dnsPolicy".into(), bare_at(ctx, "dnsPolicy"));
    }
    if eq_text(ctx, "scheduling.mode", "anti-affinity")? {
        if let Some(aff) = with(ctx.v("affinity")) {
            spec.insert("affinity".into(), aff);
        }
    }
    for key in ["nodeSelector", "tolerations"] {
        if let Some(v) = with(ctx.v(key)) {
            spec.insert(key.into(), v);
        }
    }
    let aliases_opted_out =
        ctx.plan.has(Change::AgentPodSpec120) && ctx.on("clustermesh.disableKubernetesHostAliases");
    if ctx.on("clustermesh.config.enabled")
        && !(ctx.on("clustermesh.useAPIServer")
            && ctx.on("clustermesh.apiserver.kvstoremesh.enabled"))
        && !aliases_opted_out
    {
        let aliases = common::mesh_host_aliases(ctx)?;
        if !aliases.is_empty() {
            spec.insert("hostAliases".into(), Value::Array(aliases));
        }
    }
    spec.insert("volumes".into(), Value::Array(volumes(ctx, a)?));
    Ok(Value::Object(spec))
}

/// The agent's health endpoint on loopback, as the probes reach it.
fn health_get(ctx: &Ctx, require_k8s: bool) -> Result<Value, RenderError> {
    let host = if ternary_bool(ctx, "ipv4.enabled")? {
        "127.0.0.1"
    } else {
        "::1"
    };
    let mut headers = vec![tree!({"name": "brief", "value": "true"})];
    if require_k8s {
        headers.push(tree!({
            "name": "require-k8s-connectivity",
            "value": quoted(ctx.v("livenessProbe.requireK8sConnectivity")),
        }));
    }
    Ok(tree!({
        "host": host,
        "path": "/healthz",
        "port": if ctx.plan.has(Change::AgentHealthPortNamed) {
            s("health")
        } else {
            bare_at(ctx, "healthPort")
        },
        "scheme": "HTTP",
        "httpHeaders": headers,
    }))
}

fn port(name: &str, number: Value) -> Value {
    tree!({"name": name, "containerPort": number.clone(), "hostPort": number, "protocol": "TCP"})
}

fn mount(name: &str, path: Value) -> Value {
    tree!({"name": name, "mountPath": path})
}

fn mount_ro(name: &str, path: Value) -> Value {
    tree!({"name": name, "mountPath": path, "readOnly": true})
}

fn agent_container(ctx: &Ctx, a: &Agent) -> Result<Value, RenderError> {
    let mut c = a.container("cilium-agent");
    if ctx.on("sleepAfterInit") {
        c.insert("command".into(), tree!(["/bin/bash", "-c", "--"]));
        c.insert(
            "args".into(),
            tree!(["while true; do\n  sleep 30;\ndone\n"]),
        );
        c.insert(
            "livenessProbe".into(),
            tree!({"exec": {"command": ["true"]}}),
        );
        c.insert(
            "readinessProbe".into(),
            tree!({"exec": {"command": ["true"]}}),
        );
    } else {
        c.insert("command".into(), tree!(["cilium-agent"]));
        let mut args = vec![s("--config-dir=/tmp/cilium/config-map")];
        args.extend(list_items(ctx, "extraArgs")?);
        c.insert("args".into(), Value::Array(args));
        c.insert(
            "startupProbe".into(),
            tree!({
                "httpGet": health_get(ctx, false)?,
                "failureThreshold": bare_at(ctx, "startupProbe.failureThreshold"),
                "periodSeconds": bare_at(ctx, "startupProbe.periodSeconds"),
                "successThreshold": 1,
                "initialDelaySeconds": 5,
            }),
        );
        // Agents first installed before Cilium 1.8 keep probing through the CLI.
        let cli_probes = ctx.on("keepDeprecatedProbes") || !upgrade_compat_at_least(ctx, 1, 8)?;
        let cli = tree!({"command": ["cilium", "status", "--brief"]});
        let mut liveness = Map::new();
        let mut readiness = Map::new();
        if cli_probes {
            liveness.insert("exec".into(), cli.clone());
            readiness.insert("exec".into(), cli);
        } else {
            liveness.insert("httpGet".into(), health_get(ctx, true)?);
            readiness.insert("httpGet".into(), health_get(ctx, false)?);
        }
        for (probe, key) in [
            (&mut liveness, "livenessProbe"),
            (&mut readiness, "readinessProbe"),
        ] {
            probe.insert(
                "periodSeconds".into(),
                bare_at(ctx, &format!("{key}.periodSeconds")),
            );
            probe.insert("successThreshold".into(), tree!(1));
            probe.insert(
                "failureThreshold".into(),
                bare_at(ctx, &format!("{key}.failureThreshold")),
            );
            probe.insert("timeoutSeconds".into(), tree!(5));
        }
        c.insert("livenessProbe".into(), Value::Object(liveness));
        c.insert("readinessProbe".into(), Value::Object(readiness));
    }

    let mut env = vec![
        field_env("K8S_NODE_NAME", "spec.nodeName"),
        field_env("CILIUM_K8S_NAMESPACE", "metadata.namespace"),
        tree!({"name": "CILIUM_CLUSTERMESH_CONFIG", "value": "/var/lib/cilium/clustermesh/"}),
        tree!({"name": "GOMEMLIMIT", "valueFrom": {"resourceFieldRef": {"resource": "limits.memory", "divisor": "1"}}}),
    ];
    env.extend(a.api_server_env.iter().cloned());
    if ctx.on("k8sClientExponentialBackoff.enabled") {
        env.push(tree!({
            "name": "KUBE_CLIENT_BACKOFF_BASE",
            "value": quoted(ctx.v("k8sClientExponentialBackoff.backoffBaseSeconds")),
        }));
        env.push(tree!({
            "name": "KUBE_CLIENT_BACKOFF_DURATION",
            "value": quoted(ctx.v("k8sClientExponentialBackoff.backoffMaxDurationSeconds")),
        }));
    }
    env.extend(list_items(ctx, "extraEnv")?);
    c.insert("env".into(), Value::Array(env));

    if ctx.on("cni.install") {
        let mut lifecycle = Map::new();
        if ctx.on("cni.iptablesRemoveAWSRules") && !eq_text(ctx, "cni.chainingMode", "aws-cni")? {
            lifecycle.insert(
                "postStart".into(),
                tree!({"exec": {"command": ["bash", "-c", aws_cleanup_script(ctx)?]}}),
            );
        }
        lifecycle.insert(
            "preStop".into(),
            tree!({"exec": {"command": ["/cni-uninstall.sh"]}}),
        );
        c.insert("lifecycle".into(), Value::Object(lifecycle));
    }
    if let Some(r) = with(ctx.v("resources")) {
        c.insert("resources".into(), r);
    }
    if let Some(ports) = agent_ports(ctx, a) {
        c.insert("ports".into(), Value::Array(ports));
    }
    c.insert(
        "securityContext".into(),
        a.security_context(ctx, "ciliumAgent"),
    );
    c.insert(
        "terminationMessagePolicy".into(),
        s("FallbackToLogsOnError"),
    );
    c.insert("volumeMounts".into(), Value::Array(agent_mounts(ctx, a)?));
    Ok(Value::Object(c))
}

/// The agent container's ports. From 1.19 the health port is always declared (the probes
/// name it) and Hubble's peer port follows Hubble itself; before, the list existed only with
/// metrics and always began with the peer port.
fn agent_ports(ctx: &Ctx, a: &Agent) -> Option<Vec<Value>> {
    let mut ports = Vec::new();
    if ctx.plan.has(Change::AgentHealthPortNamed) {
        ports.push(port("health", bare_at(ctx, "healthPort")));
        if ctx.on("hubble.enabled") {
            ports.push(port(
                "peer-service",
                bare_at(ctx, "hubble.peerService.targetPort"),
            ));
        }
    } else if ctx.on("prometheus.enabled") || a.hubble_metrics {
        ports.push(port(
            "peer-service",
            bare_at(ctx, "hubble.peerService.targetPort"),
        ));
    } else {
        return None;
    }
    if ctx.on("prometheus.enabled") {
        ports.push(port("prometheus", bare_at(ctx, "prometheus.port")));
        if ctx.on("envoy.prometheus.enabled") && !a.envoy_ds {
            ports.push(port("envoy-metrics", bare_at(ctx, "envoy.prometheus.port")));
        }
        if ctx.on("envoy.debug.admin.enabled") && ctx.on("envoy.debug.admin.port") && !a.envoy_ds {
            ports.push(port("envoy-admin", bare_at(ctx, "envoy.debug.admin.port")));
        }
    }
    if a.hubble_metrics {
        ports.push(port("hubble-metrics", bare_at(ctx, "hubble.metrics.port")));
    }
    Some(ports)
}

/// The bundled AWS iptables clean-up script, as the chart embeds it in a YAML block: the text
/// itself, ending in exactly one newline.
fn aws_cleanup_script(ctx: &Ctx) -> Result<String, RenderError> {
    let text = ctx.bundled("cni.iptablesRemoveAWSRules", AWS_SCRIPT, "false")?;
    // The chart runs the file through `tpl`; the releases supported here ship it without
    // template actions, so it is used as is. A file that has them is refused, not guessed at.
    if text.contains("{{") {
        return Err(ctx.invalid(
            "cni.iptablesRemoveAWSRules",
            format!("the chart's {AWS_SCRIPT} contains template actions, which this renderer does not evaluate; set cni.iptablesRemoveAWSRules: false"),
        ));
    }
    let body = text.trim_end_matches(['\n', ' ']);
    Ok(if body.is_empty() {
        String::new()
    } else {
        format!("{body}\n")
    })
}

fn agent_mounts(ctx: &Ctx, a: &Agent) -> Result<Vec<Value>, RenderError> {
    let mut m = Vec::new();
    if ctx.on("authentication.mutual.spire.enabled") {
        m.push(tree!({
            "name": "spire-agent-socket",
            "mountPath": spire_socket_dir(ctx),
            "readOnly": false,
        }));
    }
    if a.envoy_ds {
        m.push(tree!({"name": "envoy-sockets", "mountPath": "/var/run/cilium/envoy/sockets", "readOnly": false}));
    }
    if !a.privileged {
        m.push(mount("host-proc-sys-net", s("/host/proc/sys/net")));
        m.push(mount("host-proc-sys-kernel", s("/host/proc/sys/kernel")));
    }
    m.push(tree!({
        "name": "bpf-maps",
        "mountPath": "/sys/fs/bpf",
        "mountPropagation": if a.privileged { "Bidirectional" } else { "HostToContainer" },
    }));
    if !ctx.text("cgroup.hostRoot").contains("/run/cilium/cgroupv2") {
        m.push(mount("cilium-cgroup", bare_at(ctx, "cgroup.hostRoot")));
    }
    m.push(mount("cilium-run", s("/var/run/cilium")));
    m.push(tree!({"name": "cilium-netns", "mountPath": "/var/run/cilium/netns", "mountPropagation": "HostToContainer"}));
    m.push(mount(
        "etc-cni-netd",
        bare_at(ctx, "cni.hostConfDirMountPath"),
    ));
    if ctx.on("etcd.enabled") {
        m.push(mount_ro("etcd-config-path", s("/var/lib/etcd-config")));
        if ctx.on("etcd.ssl") {
            m.push(mount_ro("etcd-secrets", s("/var/lib/etcd-secrets")));
        }
    }
    m.push(mount_ro(
        "clustermesh-secrets",
        s("/var/lib/cilium/clustermesh"),
    ));
    if ctx.on("ipMasqAgent.enabled") {
        m.push(mount_ro("ip-masq-agent", s("/etc/config")));
    }
    if ctx.on("cni.configMap") {
        m.push(mount_ro(
            "cni-configuration",
            bare_at(ctx, "cni.confFileMountPath"),
        ));
    }
    m.push(mount_ro("lib-modules", s("/lib/modules")));
    m.push(mount("xtables-lock", s("/run/xtables.lock")));
    if ipsec(ctx)? {
        m.push(mount(
            "cilium-ipsec-secrets",
            bare_at(ctx, "encryption.ipsec.mountPath"),
        ));
    }
    if ztunnel(ctx)? {
        m.push(mount("cilium-ztunnel-secrets", s("/etc/ztunnel")));
    }
    if ctx.on("kubeConfigPath") {
        m.push(mount_ro("kube-config", bare_at(ctx, "kubeConfigPath")));
    }
    if hubble_metrics_tls(ctx, a) {
        m.push(mount_ro(
            "hubble-metrics-tls",
            s("/var/lib/cilium/tls/hubble-metrics"),
        ));
    }
    if hubble_tls(ctx) {
        m.push(mount_ro("hubble-tls", s("/var/lib/cilium/tls/hubble")));
    }
    match &a.config_map_source {
        None => m.push(mount("tmp", s("/tmp"))),
        Some(_) => m.push(mount_ro("cilium-config-path", s("/tmp/cilium/config-map"))),
    }
    m.extend(host_path_mounts(ctx)?.0);
    if ctx.on("hubble.metrics.dynamic.enabled") {
        m.push(mount_ro(
            "hubble-dynamic-metrics-config",
            s("/dynamic-metrics-config"),
        ));
    }
    if ctx.on("hubble.export.dynamic.enabled") {
        m.push(mount_ro("hubble-flowlog-config", s("/flowlog-config")));
    }
    m.extend(list_items(ctx, "extraVolumeMounts")?);
    Ok(m)
}

fn spire_socket_dir(ctx: &Ctx) -> Value {
    bare(&s(&path_dir(
        &ctx.text("authentication.mutual.spire.adminSocketPath"),
    )))
}

fn ipsec(ctx: &Ctx) -> Result<bool, RenderError> {
    Ok(ctx.on("encryption.enabled") && eq_text(ctx, "encryption.type", "ipsec")?)
}

fn ztunnel(ctx: &Ctx) -> Result<bool, RenderError> {
    Ok(ctx.plan.has(Change::ZtunnelEncryption)
        && ctx.on("encryption.enabled")
        && eq_text(ctx, "encryption.type", "ztunnel")?)
}

fn hubble_metrics_tls(ctx: &Ctx, a: &Agent) -> bool {
    ctx.on("hubble.enabled") && a.hubble_metrics && ctx.on("hubble.metrics.tls.enabled")
}

/// Hubble's server TLS is mounted only when Hubble listens on the network.
fn hubble_tls(ctx: &Ctx) -> bool {
    ctx.on("hubble.enabled")
        && ctx.on("hubble.tls.enabled")
        // The key's presence, read without building the merged `hubble` map: its default is a
        // string, so it is absent exactly when it reads as null.
        && !ctx.v("hubble.listenAddress").is_null()
}

/// `extraHostPathMounts` as volume mounts and volumes (each entry a map; anything else cannot be
/// read by the chart).
fn host_path_mounts(ctx: &Ctx) -> Result<(Vec<Value>, Vec<Value>), RenderError> {
    common::host_path_mounts(
        ctx,
        "extraHostPathMounts",
        "each entry must be a map (name, mountPath, hostPath, ...)",
    )
}

fn monitor_container(ctx: &Ctx, a: &Agent) -> Result<Value, RenderError> {
    let mut c = a.container("cilium-monitor");
    c.insert("command".into(), tree!(["/bin/bash", "-c", "--"]));
    let mut script = String::from(
        "for i in {1..5}; do \\\n  [ -S /var/run/cilium/monitor1_2.sock ] && break || sleep 10;\\\n  done; \\\ncilium-dbg monitor",
    );
    if let Value::Array(types) = ctx.v("monitor.eventTypes") {
        for t in types {
            script.push_str(" --type=");
            script.push_str(&quote(t));
        }
    }
    c.insert("args".into(), tree!([script]));
    c.insert(
        "terminationMessagePolicy".into(),
        s("FallbackToLogsOnError"),
    );
    let mut mounts = vec![mount("cilium-run", s("/var/run/cilium"))];
    mounts.extend(list_items(ctx, "extraVolumeMounts")?);
    c.insert("volumeMounts".into(), Value::Array(mounts));
    if let Some(r) = with(ctx.v("monitor.resources")) {
        c.insert("resources".into(), r);
    }
    Ok(Value::Object(c))
}

fn init_containers(ctx: &Ctx, a: &Agent) -> Result<Vec<Value>, RenderError> {
    let init_resources = with(ctx.v("initResources"));
    let with_resources = |c: &mut Map<String, Value>, r: &Option<Value>| {
        if let Some(r) = r {
            c.insert("resources".into(), r.clone());
        }
    };
    let fallback = s("FallbackToLogsOnError");
    let mut out = Vec::new();

    if a.config_map_source.is_none() {
        out.push(config_container(ctx, a, &init_resources)?);
    }
    // The scripts below were written for sh until 1.19.3 made them bash scripts.
    let shell = if ctx.plan.has(Change::AgentInitScriptsBash) {
        "bash"
    } else {
        "sh"
    };

    let host_tool_mounts = tree!([
        {"name": "hostproc", "mountPath": "/hostproc"},
        {"name": "cni-path", "mountPath": "/hostbin"},
    ]);

    if ctx.on("cgroup.autoMount.enabled") {
        let mut c = a.container("mount-cgroup");
        c.insert(
            "env".into(),
            tree!([
                {"name": "CGROUP_ROOT", "value": bare_at(ctx, "cgroup.hostRoot")},
                {"name": "BIN_PATH", "value": bare_at(ctx, "cni.binPath")},
            ]),
        );
        let mut resources = with(ctx.v("cgroup.autoMount.resources"));
        if resources.is_none() && ctx.plan.has(Change::AgentMountCgroupInitResources) {
            resources = init_resources.clone();
        }
        with_resources(&mut c, &resources);
        c.insert(
            "command".into(),
            tree!([shell, "-ec", "cp /usr/bin/cilium-mount /hostbin/cilium-mount;\nnsenter --cgroup=/hostproc/1/ns/cgroup --mount=/hostproc/1/ns/mnt \"${BIN_PATH}/cilium-mount\" $CGROUP_ROOT;\nrm /hostbin/cilium-mount\n"]),
        );
        c.insert("volumeMounts".into(), host_tool_mounts.clone());
        c.insert("terminationMessagePolicy".into(), fallback.clone());
        c.insert(
            "securityContext".into(),
            a.security_context(ctx, "mountCgroup"),
        );
        out.push(Value::Object(c));
    }

    if ctx.on("sysctlfix.enabled") {
        let mut c = a.container("apply-sysctl-overwrites");
        with_resources(&mut c, &init_resources);
        c.insert(
            "env".into(),
            tree!([{"name": "BIN_PATH", "value": bare_at(ctx, "cni.binPath")}]),
        );
        c.insert(
            "command".into(),
            tree!([shell, "-ec", "cp /usr/bin/cilium-sysctlfix /hostbin/cilium-sysctlfix;\nnsenter --mount=/hostproc/1/ns/mnt \"${BIN_PATH}/cilium-sysctlfix\";\nrm /hostbin/cilium-sysctlfix\n"]),
        );
        c.insert("volumeMounts".into(), host_tool_mounts);
        c.insert("terminationMessagePolicy".into(), fallback.clone());
        c.insert(
            "securityContext".into(),
            a.security_context(ctx, "applySysctlOverwrites"),
        );
        out.push(Value::Object(c));
    }

    // Only a privileged container can mount bpffs with bidirectional propagation.
    if ctx.on("bpf.autoMount.enabled") && !a.privileged {
        let mut c = a.container("mount-bpf-fs");
        with_resources(&mut c, &init_resources);
        c.insert(
            "args".into(),
            tree!(["mount | grep \"/sys/fs/bpf type bpf\" || mount -t bpf bpf /sys/fs/bpf"]),
        );
        c.insert("command".into(), tree!(["/bin/bash", "-c", "--"]));
        c.insert("terminationMessagePolicy".into(), fallback.clone());
        c.insert("securityContext".into(), tree!({"privileged": true}));
        c.insert(
            "volumeMounts".into(),
            tree!([{"name": "bpf-maps", "mountPath": "/sys/fs/bpf", "mountPropagation": "Bidirectional"}]),
        );
        out.push(Value::Object(c));
    }

    if node_init_bootstrap(ctx) {
        let mut c = a.container("wait-for-node-init");
        with_resources(&mut c, &init_resources);
        let file = format!(
            "/tmp/cilium-bootstrap.d/{}",
            path_base(&ctx.text("nodeinit.bootstrapFile"))
        );
        c.insert(
            "command".into(),
            tree!([shell, "-c", format!("until test -s {}; do\n  echo \"Waiting on node-init to run...\";\n  sleep 1;\ndone\n", go_quote(&file))]),
        );
        c.insert("terminationMessagePolicy".into(), fallback.clone());
        c.insert(
            "volumeMounts".into(),
            tree!([{"name": "cilium-bootstrap-file-dir", "mountPath": "/tmp/cilium-bootstrap.d"}]),
        );
        out.push(Value::Object(c));
    }

    let mut c = a.container("clean-cilium-state");
    c.insert("command".into(), tree!(["/init-container.sh"]));
    let mut env = vec![
        config_env("CILIUM_ALL_STATE", "clean-cilium-state"),
        config_env("CILIUM_BPF_STATE", "clean-cilium-bpf-state"),
        config_env("WRITE_CNI_CONF_WHEN_READY", "write-cni-conf-when-ready"),
    ];
    env.extend(a.api_server_env.iter().cloned());
    env.extend(list_items(ctx, "extraEnv")?);
    c.insert("env".into(), Value::Array(env));
    c.insert("terminationMessagePolicy".into(), fallback.clone());
    c.insert(
        "securityContext".into(),
        a.security_context(ctx, "cleanCiliumState"),
    );
    let mut mounts = vec![
        mount("bpf-maps", s("/sys/fs/bpf")),
        tree!({"name": "cilium-cgroup", "mountPath": bare_at(ctx, "cgroup.hostRoot"), "mountPropagation": "HostToContainer"}),
        mount("cilium-run", s("/var/run/cilium")),
    ];
    mounts.extend(list_items(ctx, "extraVolumeMounts")?);
    c.insert("volumeMounts".into(), Value::Array(mounts));
    with_resources(&mut c, &init_resources);
    out.push(Value::Object(c));

    if wait_for_kube_proxy(ctx) {
        let mut c = a.container("wait-for-kube-proxy");
        with_resources(&mut c, &init_resources);
        c.insert("securityContext".into(), tree!({"privileged": true}));
        c.insert(
            "command".into(),
            tree!(["bash", "-c", kube_proxy_wait_script(ctx)?]),
        );
        c.insert("terminationMessagePolicy".into(), fallback.clone());
        out.push(Value::Object(c));
    }

    if ctx.on("cni.install") {
        let mut c = a.container("install-cni-binaries");
        c.insert("command".into(), tree!(["/install-plugin.sh"]));
        with_resources(&mut c, &with(ctx.v("cni.resources")));
        let mut sc = Map::new();
        if a.privileged {
            sc.insert("privileged".into(), Value::Bool(true));
        } else if let Some(se) = with(ctx.v("securityContext.seLinuxOptions")) {
            sc.insert("seLinuxOptions".into(), se);
        }
        sc.insert("capabilities".into(), tree!({"drop": ["ALL"]}));
        c.insert("securityContext".into(), Value::Object(sc));
        c.insert("terminationMessagePolicy".into(), fallback);
        c.insert(
            "volumeMounts".into(),
            tree!([{"name": "cni-path", "mountPath": "/host/opt/cni/bin"}]),
        );
        out.push(Value::Object(c));
    }
    out.extend(list_items(ctx, "extraInitContainers")?);
    Ok(out)
}

/// `config`: assembles the agent's configuration into /tmp for the agent to read.
fn config_container(
    ctx: &Ctx,
    a: &Agent,
    init_resources: &Option<Value>,
) -> Result<Value, RenderError> {
    let mut c = a.container("config");
    if let Some(r) = init_resources {
        c.insert("resources".into(), r.clone());
    }
    let mut command = vec![s("cilium-dbg"), s("build-config")];
    for (path, flag) in [
        ("daemon.configSources", "--source"),
        ("daemon.allowedConfigOverrides", "--allow-config-keys"),
        ("daemon.blockedConfigOverrides", "--deny-config-keys"),
    ] {
        let v = ctx.v(path);
        if !v.is_null() {
            command.push(s(&format!("{flag}={}", print(v))));
        }
    }
    if ctx.on("kubeConfigPath") {
        command.push(s(&format!(
            "--k8s-kubeconfig-path={}",
            ctx.text("kubeConfigPath")
        )));
    }
    if ctx.plan.has(Change::AgentApiServerUrls) {
        if let Some(urls) = ctx
            .v("k8s")
            .as_object()
            .and_then(|k| k.get("apiServerURLs"))
            .filter(|urls| !urls.is_null())
        {
            command.push(s(&format!("--k8s-api-server-urls={}", quote(urls))));
        }
    }
    c.insert("command".into(), Value::Array(command));
    let mut env = vec![
        field_env("K8S_NODE_NAME", "spec.nodeName"),
        field_env("CILIUM_K8S_NAMESPACE", "metadata.namespace"),
    ];
    env.extend(a.api_server_env.iter().cloned());
    env.extend(list_items(ctx, "extraEnv")?);
    c.insert("env".into(), Value::Array(env));
    let mut mounts = vec![mount("tmp", s("/tmp"))];
    if ctx.on("kubeConfigPath") {
        mounts.push(mount_ro("kube-config", bare_at(ctx, "kubeConfigPath")));
    }
    mounts.extend(list_items(ctx, "extraVolumeMounts")?);
    c.insert("volumeMounts".into(), Value::Array(mounts));
    c.insert(
        "terminationMessagePolicy".into(),
        s("FallbackToLogsOnError"),
    );
    if ctx.plan.has(Change::AgentConfigInitSecurityContext) {
        let sc = if a.privileged {
            tree!({"privileged": true})
        } else {
            tree!({"capabilities": {"add": ["NET_ADMIN"], "drop": ["ALL"]}})
        };
        c.insert("securityContext".into(), sc);
    }
    Ok(Value::Object(c))
}

fn node_init_bootstrap(ctx: &Ctx) -> bool {
    ctx.on("nodeinit.enabled") && ctx.on("nodeinit.bootstrapFile")
}

/// Waiting for kube-proxy makes sense only when Cilium does not replace it.
fn wait_for_kube_proxy(ctx: &Ctx) -> bool {
    if !ctx.on("waitForKubeProxy") {
        return false;
    }
    let kpr = ctx.v("kubeProxyReplacement");
    let kpr = if truthy(kpr) {
        print(kpr)
    } else {
        "false".to_string()
    };
    kpr != "strict" && kpr != "true"
}

/// The chart's agent template, which holds the kube-proxy wait script inline.
const AGENT_TEMPLATE: &str = "templates/cilium-agent/daemonset.yaml";

/// The shell script of the `wait-for-kube-proxy` init container. It is the chart's own text, so
/// it is read from the official archive (the script block below the container's `command:`),
/// never carried in this repository.
fn kube_proxy_wait_script(ctx: &Ctx) -> Result<String, RenderError> {
    let template = ctx.bundled("waitForKubeProxy", AGENT_TEMPLATE, "false")?;
    literal_after(&template, "- name: wait-for-kube-proxy").ok_or_else(|| {
        ctx.invalid(
            "waitForKubeProxy",
            format!("the chart archive's {AGENT_TEMPLATE} has no wait-for-kube-proxy script where this renderer expects it; set waitForKubeProxy: false"),
        )
    })
}

/// The first `- |` block literal after the line containing `marker`, as YAML reads it (clip
/// chomping: one final newline). None when absent or when it holds template actions.
fn literal_after(text: &str, marker: &str) -> Option<String> {
    let mut lines = text.lines().skip_while(|l| !l.contains(marker));
    lines.next()?;
    let start = lines.by_ref().find(|l| l.trim() == "- |")?;
    let parent = start.len() - start.trim_start().len();
    let mut body: Vec<&str> = Vec::new();
    for l in lines {
        let indent = l.len() - l.trim_start().len();
        if !l.trim().is_empty() && indent <= parent {
            break;
        }
        body.push(l);
    }
    while body.last().is_some_and(|l| l.trim().is_empty()) {
        body.pop();
    }
    let first = body.first()?;
    let cut = first.len() - first.trim_start().len();
    let mut out = String::new();
    for l in body {
        out.push_str(l.get(cut..).unwrap_or(""));
        out.push('\n');
    }
    (!out.contains("{{")).then_some(out)
}

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

fn volumes(ctx: &Ctx, a: &Agent) -> Result<Vec<Value>, RenderError> {
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
