//! The `cilium` DaemonSet, split by part of the pod: the agent and monitor containers
//! (`containers`), the init containers that prepare each node (`init_containers`) and the
//! volumes they share (`volumes`). This file holds the DaemonSet and pod spec around them and
//! the facts several parts ask (which features are on).

use crate::changes::Change;
use serde_json::{Map, Value};

use super::{agent_on, bare_at, eq_text, s};
use crate::components::common::{
    self, envoy_daemonset_enabled, image, k8s_service_env, labels, list_items, metadata,
    priority_class_name, with_chart_label, workload,
};
use crate::components::Ctx;
use crate::error::RenderError;
use crate::tmpl::{bare, path_dir, quote, quoted, truthy, with};

mod containers;
mod init_containers;
mod volumes;

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
    let meta = metadata(
        &name,
        Some(&namespace),
        Some(ds_labels),
        with(ctx.v("annotations")),
    );
    Ok(vec![workload("DaemonSet", meta, spec)])
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
            Value::String(crate::components::config::cilium_config_checksum(ctx)?),
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

    let mut containers = vec![containers::agent(ctx, a)?];
    if ctx.on("monitor.enabled") {
        containers.push(containers::monitor(ctx, a)?);
    }
    containers.extend(list_items(ctx, "extraContainers")?);
    spec.insert("containers".into(), Value::Array(containers));
    spec.insert(
        "initContainers".into(),
        Value::Array(init_containers::all(ctx, a)?),
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
    spec.insert("volumes".into(), Value::Array(volumes::all(ctx, a)?));
    Ok(Value::Object(spec))
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

fn node_init_bootstrap(ctx: &Ctx) -> bool {
    ctx.on("nodeinit.enabled") && ctx.on("nodeinit.bootstrapFile")
}

#[cfg(test)]
mod test_support {
    use super::Agent;
    use crate::components::common::tests::with_release;
    use crate::components::Ctx;
    use serde_json::Value;

    /// Runs `f` on the agent's shared facts for one release and values file (Kubernetes 1.35).
    pub(super) fn with_agent<T>(
        version: &str,
        values: &str,
        f: impl FnOnce(&Ctx, &Agent) -> T,
    ) -> T {
        with_release(version, values, "1.35.0", |ctx| {
            let agent = Agent::new(ctx).expect("the agent's facts");
            f(ctx, &agent)
        })
    }

    /// The `name` of each entry of a list of containers, volumes or mounts.
    pub(super) fn names(items: &[Value]) -> Vec<&str> {
        items.iter().filter_map(|i| i["name"].as_str()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::test_support::with_agent;
    use super::*;
    use crate::components::common::tests::with_release;
    use serde_json::json;

    #[test]
    fn apparmor_is_annotated_only_before_kubernetes_1_30() {
        let annotations = |kube: &str, values: &str| {
            with_release("1.18.12", values, kube, |ctx| {
                pod_annotations(ctx).expect("annotations")
            })
        };
        let old = annotations("1.29.0", "{}");
        let key = "container.apparmor.security.beta.kubernetes.io/cilium-agent";
        assert_eq!(old[key], "unconfined");
        assert_eq!(
            old["container.apparmor.security.beta.kubernetes.io/mount-cgroup"],
            "unconfined"
        );
        assert!(annotations("1.30.0", "{}").get(key).is_none());
        assert!(annotations("1.29.0", "securityContext: {privileged: true}")
            .get(key)
            .is_none());
        assert_eq!(
            old["kubectl.kubernetes.io/default-container"],
            "cilium-agent"
        );
    }

    #[test]
    fn pod_security_context_drops_apparmor_before_kubernetes_1_30() {
        let values = "cni: {iptablesRemoveAWSRules: false}\npodSecurityContext: {appArmorProfile: {type: Unconfined}, fsGroup: 1}\n";
        let spec = |kube: &str| {
            with_release("1.18.12", values, kube, |ctx| {
                let agent = Agent::new(ctx).expect("facts");
                pod_spec(ctx, &agent).expect("pod spec")
            })
        };
        let old = spec("1.29.0");
        assert!(old["securityContext"].get("appArmorProfile").is_none());
        assert_eq!(old["securityContext"]["fsGroup"], json!(1.0));
        assert_eq!(
            spec("1.30.0")["securityContext"]["appArmorProfile"]["type"],
            "Unconfined"
        );
    }

    #[test]
    fn host_users_from_1_20_on_kubernetes_1_33() {
        let values = "cni: {iptablesRemoveAWSRules: false}\n";
        let host_users = |version: &str, kube: &str| {
            with_release(version, values, kube, |ctx| {
                let agent = Agent::new(ctx).expect("facts");
                pod_spec(ctx, &agent).expect("pod spec")["hostUsers"].clone()
            })
        };
        assert_eq!(host_users("1.20.0", "1.33.0"), json!(true));
        assert!(host_users("1.20.0", "1.32.0").is_null());
        assert!(host_users("1.19.6", "1.33.0").is_null());
    }

    #[test]
    fn gke_refuses_deprecated_labels_in_kube_system() {
        let values = "keepDeprecatedLabels: true\ngke: {enabled: true}\n";
        let e = with_release("1.18.12", values, "1.35.0", render);
        assert!(e.is_err_and(|e| e.to_string().contains("keepDeprecatedLabels")));
    }

    #[test]
    fn security_context_is_privileged_or_capabilities() {
        with_agent(
            "1.18.12",
            "securityContext: {capabilities: {mountCgroup: [SYS_ADMIN]}}",
            |ctx, a| {
                let sc = a.security_context(ctx, "mountCgroup");
                assert_eq!(sc["capabilities"]["add"], json!(["SYS_ADMIN"]));
                assert_eq!(sc["capabilities"]["drop"], json!(["ALL"]));
            },
        );
        with_agent(
            "1.18.12",
            "securityContext: {privileged: true}",
            |ctx, a| {
                assert_eq!(
                    a.security_context(ctx, "mountCgroup"),
                    json!({"privileged": true})
                );
            },
        );
    }

    #[test]
    fn config_sources_must_be_text() {
        let e = with_release("1.19.6", "daemon: {configSources: [a]}", "1.35.0", |ctx| {
            config_map_source(ctx)
        });
        assert!(e.is_err_and(|e| e.to_string().contains("daemon.configSources")));
    }
}
