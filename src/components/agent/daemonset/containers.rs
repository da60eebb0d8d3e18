//! The agent container (probes, ports, environment, the mounts of everything it reaches on
//! the node) and the optional `cilium-monitor` sidecar.

use serde_json::{Map, Value};

use super::{
    host_path_mounts, hubble_metrics_tls, hubble_tls, ipsec, spire_socket_dir, ztunnel, Agent,
};
use crate::changes::Change;
use crate::components::agent::{bare_at, eq_text, s, ternary_bool};
use crate::components::common::{
    etcd_client_mounts, field_env, host_tcp_port, list_items, mount, mount_ro,
    upgrade_compat_at_least,
};
use crate::components::Ctx;
use crate::error::RenderError;
use crate::tmpl::{quote, quoted, with};

/// The bundled script that removes AWS's iptables rules when the agent starts.
const AWS_SCRIPT: &str = "files/agent/poststart-eni.bash";

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

pub(super) fn agent(ctx: &Ctx, a: &Agent) -> Result<Value, RenderError> {
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
        probes(ctx, &mut c)?;
    }
    c.insert("env".into(), Value::Array(agent_env(ctx, a)?));
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

/// The startup, liveness and readiness probes of a running agent: its health endpoint, or the
/// CLI for agents first installed before Cilium 1.8.
fn probes(ctx: &Ctx, c: &mut Map<String, Value>) -> Result<(), RenderError> {
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
    Ok(())
}

/// The agent's environment: its node and namespace, the clustermesh configuration, the memory
/// limit for Go, the API server, the client backoff, then `extraEnv`.
fn agent_env(ctx: &Ctx, a: &Agent) -> Result<Vec<Value>, RenderError> {
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
    Ok(env)
}

/// The agent container's ports. From 1.19 the health port is always declared (the probes
/// name it) and Hubble's peer port follows Hubble itself; before, the list existed only with
/// metrics and always began with the peer port.
fn agent_ports(ctx: &Ctx, a: &Agent) -> Option<Vec<Value>> {
    let mut ports = Vec::new();
    if ctx.plan.has(Change::AgentHealthPortNamed) {
        ports.push(host_tcp_port("health", bare_at(ctx, "healthPort")));
        if ctx.on("hubble.enabled") {
            ports.push(host_tcp_port(
                "peer-service",
                bare_at(ctx, "hubble.peerService.targetPort"),
            ));
        }
    } else if ctx.on("prometheus.enabled") || a.hubble_metrics {
        ports.push(host_tcp_port(
            "peer-service",
            bare_at(ctx, "hubble.peerService.targetPort"),
        ));
    } else {
        return None;
    }
    if ctx.on("prometheus.enabled") {
        ports.push(host_tcp_port("prometheus", bare_at(ctx, "prometheus.port")));
        if ctx.on("envoy.prometheus.enabled") && !a.envoy_ds {
            ports.push(host_tcp_port(
                "envoy-metrics",
                bare_at(ctx, "envoy.prometheus.port"),
            ));
        }
        if ctx.on("envoy.debug.admin.enabled") && ctx.on("envoy.debug.admin.port") && !a.envoy_ds {
            ports.push(host_tcp_port(
                "envoy-admin",
                bare_at(ctx, "envoy.debug.admin.port"),
            ));
        }
    }
    if a.hubble_metrics {
        ports.push(host_tcp_port(
            "hubble-metrics",
            bare_at(ctx, "hubble.metrics.port"),
        ));
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
    m.extend(etcd_client_mounts(ctx));
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

pub(super) fn monitor(ctx: &Ctx, a: &Agent) -> Result<Value, RenderError> {
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

#[cfg(test)]
mod tests {
    use super::super::test_support::{names, with_agent};
    use super::*;
    use serde_json::json;

    const NO_AWS: &str = "cni: {iptablesRemoveAWSRules: false}\n";

    fn agent_container(version: &str, values: &str) -> Value {
        with_agent(version, &format!("{NO_AWS}{values}"), |ctx, a| {
            agent(ctx, a).expect("agent container")
        })
    }

    fn port_names(c: &Value) -> Vec<&str> {
        c["ports"].as_array().map(|p| names(p)).unwrap_or_default()
    }

    #[test]
    fn ports_follow_the_release() {
        assert!(agent_container("1.18.12", "").get("ports").is_none());
        assert_eq!(
            port_names(&agent_container("1.18.12", "prometheus: {enabled: true}")),
            ["peer-service", "prometheus"]
        );
        assert_eq!(
            port_names(&agent_container("1.19.0", "")),
            ["health", "peer-service"]
        );
        let c = agent_container("1.19.0", "prometheus: {enabled: true, port: 9962}");
        assert_eq!(
            c["ports"][2],
            json!({"name": "prometheus", "containerPort": 9962.0, "hostPort": 9962.0, "protocol": "TCP"})
        );
    }

    #[test]
    fn sleep_after_init_replaces_the_probes() {
        let c = agent_container("1.18.12", "sleepAfterInit: true");
        assert_eq!(c["livenessProbe"], json!({"exec": {"command": ["true"]}}));
        assert!(c.get("startupProbe").is_none());
        let c = agent_container("1.18.12", "");
        assert_eq!(c["startupProbe"]["httpGet"]["path"], "/healthz");
        assert_eq!(
            c["livenessProbe"]["httpGet"]["httpHeaders"][1]["name"],
            "require-k8s-connectivity"
        );
    }

    #[test]
    fn old_installs_probe_through_the_cli() {
        let c = agent_container("1.18.12", "upgradeCompatibility: \"1.7\"");
        assert_eq!(
            c["readinessProbe"]["exec"]["command"],
            json!(["cilium", "status", "--brief"])
        );
    }

    #[test]
    fn mounts_follow_privilege_and_cgroup_root() {
        let mounts = |values: &str| agent_container("1.18.12", values)["volumeMounts"].clone();
        let find = |m: &Value, name: &str| {
            m.as_array()
                .and_then(|m| m.iter().find(|v| v["name"] == name).cloned())
        };
        let m = mounts("");
        assert_eq!(
            find(&m, "bpf-maps").expect("bpf-maps")["mountPropagation"],
            "HostToContainer"
        );
        assert!(find(&m, "host-proc-sys-net").is_some());
        // The default cgroup root is Cilium's own mount, which the agent does not need to see.
        assert!(find(&m, "cilium-cgroup").is_none());
        let m = mounts("securityContext: {privileged: true}\ncgroup: {hostRoot: /sys/fs/cgroup}");
        assert_eq!(
            find(&m, "bpf-maps").expect("bpf-maps")["mountPropagation"],
            "Bidirectional"
        );
        assert!(find(&m, "host-proc-sys-net").is_none());
        assert_eq!(
            find(&m, "cilium-cgroup").expect("cgroup")["mountPath"],
            "/sys/fs/cgroup"
        );
    }

    #[test]
    fn monitor_lists_event_types() {
        let c = with_agent(
            "1.18.12",
            "monitor: {enabled: true, eventTypes: [drop, trace]}",
            |ctx, a| monitor(ctx, a).expect("monitor"),
        );
        assert!(c["args"][0]
            .as_str()
            .is_some_and(|s| s.ends_with("cilium-dbg monitor --type=drop --type=trace")));
        assert_eq!(
            names(c["volumeMounts"].as_array().expect("mounts")),
            ["cilium-run"]
        );
    }

    #[test]
    fn aws_cleanup_needs_the_bundled_script() {
        // The bundled script needs the chart archive; without one the agent is refused.
        let e = with_agent("1.18.12", "", agent);
        assert!(e.is_err_and(|e| e.to_string().contains("cni.iptablesRemoveAWSRules")));
    }
}
