//! The agent pod's init containers, in the order the chart runs them: assembling the
//! configuration, mounting cgroup2 and bpffs, fixing sysctls, waiting for node-init, cleaning
//! old state, waiting for kube-proxy, installing the CNI binaries.

use serde_json::{Map, Value};

use super::{node_init_bootstrap, Agent};
use crate::changes::Change;
use crate::components::agent::{bare_at, s};
use crate::components::common::{field_env, list_items, mount, mount_ro};
use crate::components::Ctx;
use crate::error::RenderError;
use crate::tmpl::{go_quote, path_base, print, quote, truthy, with};

fn config_env(name: &str, key: &str) -> Value {
    tree!({"name": name, "valueFrom": {"configMapKeyRef": {"name": "cilium-config", "key": key, "optional": true}}})
}

/// The init containers in the order the chart lists them, each where its values ask for it,
/// followed by the user's `extraInitContainers`.
pub(super) fn all(ctx: &Ctx, a: &Agent) -> Result<Vec<Value>, RenderError> {
    let init = Init::new(ctx, a);
    let mut out = Vec::new();
    if a.config_map_source.is_none() {
        out.push(config_container(ctx, a, &init.resources)?);
    }
    if ctx.on("cgroup.autoMount.enabled") {
        out.push(mount_cgroup(ctx, &init));
    }
    if ctx.on("sysctlfix.enabled") {
        out.push(apply_sysctl_overwrites(ctx, &init));
    }
    // Only a privileged container can mount bpffs with bidirectional propagation.
    if ctx.on("bpf.autoMount.enabled") && !a.privileged {
        out.push(mount_bpf_fs(&init));
    }
    if node_init_bootstrap(ctx) {
        out.push(wait_for_node_init(ctx, &init));
    }
    out.push(clean_cilium_state(ctx, &init)?);
    if wait_for_kube_proxy(ctx) {
        out.push(wait_for_kube_proxy_container(ctx, &init)?);
    }
    if ctx.on("cni.install") {
        out.push(install_cni_binaries(ctx, &init));
    }
    out.extend(list_items(ctx, "extraInitContainers")?);
    Ok(out)
}

/// What the init containers share: the agent's image and security settings, `initResources`
/// and the shell their scripts run in.
struct Init<'a> {
    agent: &'a Agent,
    resources: Option<Value>,
    shell: &'static str,
}

impl<'a> Init<'a> {
    fn new(ctx: &Ctx, agent: &'a Agent) -> Self {
        Init {
            agent,
            resources: with(ctx.v("initResources")),
            // The scripts were written for sh until 1.19.3 made them bash scripts.
            shell: if ctx.plan.has(Change::AgentInitScriptsBash) {
                "bash"
            } else {
                "sh"
            },
        }
    }

    /// A container on the agent image with the given resources (none when unset).
    fn container(&self, name: &str, resources: &Option<Value>) -> Map<String, Value> {
        let mut c = self.agent.container(name);
        if let Some(r) = resources {
            c.insert("resources".into(), r.clone());
        }
        c
    }
}

/// The mounts of the containers that copy a tool to the host and run it in the host's
/// namespaces.
fn host_tool_mounts() -> Value {
    tree!([
        {"name": "hostproc", "mountPath": "/hostproc"},
        {"name": "cni-path", "mountPath": "/hostbin"},
    ])
}

/// `mount-cgroup`: mounts the cgroup2 filesystem on the host at `cgroup.hostRoot`.
fn mount_cgroup(ctx: &Ctx, init: &Init) -> Value {
    let mut resources = with(ctx.v("cgroup.autoMount.resources"));
    if resources.is_none() && ctx.plan.has(Change::AgentMountCgroupInitResources) {
        resources = init.resources.clone();
    }
    let mut c = init.container("mount-cgroup", &resources);
    c.insert(
        "env".into(),
        tree!([
            {"name": "CGROUP_ROOT", "value": bare_at(ctx, "cgroup.hostRoot")},
            {"name": "BIN_PATH", "value": bare_at(ctx, "cni.binPath")},
        ]),
    );
    c.insert(
        "command".into(),
        tree!([init.shell, "-ec", "cp /usr/bin/cilium-mount /hostbin/cilium-mount;\nnsenter --cgroup=/hostproc/1/ns/cgroup --mount=/hostproc/1/ns/mnt \"${BIN_PATH}/cilium-mount\" $CGROUP_ROOT;\nrm /hostbin/cilium-mount\n"]),
    );
    c.insert("volumeMounts".into(), host_tool_mounts());
    c.insert("terminationMessagePolicy".into(), fallback());
    c.insert(
        "securityContext".into(),
        init.agent.security_context(ctx, "mountCgroup"),
    );
    Value::Object(c)
}

/// `apply-sysctl-overwrites`: sets the host sysctls Cilium needs.
fn apply_sysctl_overwrites(ctx: &Ctx, init: &Init) -> Value {
    let mut c = init.container("apply-sysctl-overwrites", &init.resources);
    c.insert(
        "env".into(),
        tree!([{"name": "BIN_PATH", "value": bare_at(ctx, "cni.binPath")}]),
    );
    c.insert(
        "command".into(),
        tree!([init.shell, "-ec", "cp /usr/bin/cilium-sysctlfix /hostbin/cilium-sysctlfix;\nnsenter --mount=/hostproc/1/ns/mnt \"${BIN_PATH}/cilium-sysctlfix\";\nrm /hostbin/cilium-sysctlfix\n"]),
    );
    c.insert("volumeMounts".into(), host_tool_mounts());
    c.insert("terminationMessagePolicy".into(), fallback());
    c.insert(
        "securityContext".into(),
        init.agent.security_context(ctx, "applySysctlOverwrites"),
    );
    Value::Object(c)
}

/// `mount-bpf-fs`: mounts bpffs at /sys/fs/bpf unless it is mounted already.
fn mount_bpf_fs(init: &Init) -> Value {
    let mut c = init.container("mount-bpf-fs", &init.resources);
    c.insert(
        "args".into(),
        tree!(["mount | grep \"/sys/fs/bpf type bpf\" || mount -t bpf bpf /sys/fs/bpf"]),
    );
    c.insert("command".into(), tree!(["/bin/bash", "-c", "--"]));
    c.insert("terminationMessagePolicy".into(), fallback());
    c.insert("securityContext".into(), tree!({"privileged": true}));
    c.insert(
        "volumeMounts".into(),
        tree!([{"name": "bpf-maps", "mountPath": "/sys/fs/bpf", "mountPropagation": "Bidirectional"}]),
    );
    Value::Object(c)
}

/// `wait-for-node-init`: waits until node-init has written its bootstrap file.
fn wait_for_node_init(ctx: &Ctx, init: &Init) -> Value {
    let mut c = init.container("wait-for-node-init", &init.resources);
    let file = format!(
        "/tmp/cilium-bootstrap.d/{}",
        path_base(&ctx.text("nodeinit.bootstrapFile"))
    );
    c.insert(
        "command".into(),
        tree!([init.shell, "-c", format!("until test -s {}; do\n  echo \"Waiting on node-init to run...\";\n  sleep 1;\ndone\n", go_quote(&file))]),
    );
    c.insert("terminationMessagePolicy".into(), fallback());
    c.insert(
        "volumeMounts".into(),
        tree!([{"name": "cilium-bootstrap-file-dir", "mountPath": "/tmp/cilium-bootstrap.d"}]),
    );
    Value::Object(c)
}

/// `clean-cilium-state`: removes the state of a previous agent when the configuration asks.
fn clean_cilium_state(ctx: &Ctx, init: &Init) -> Result<Value, RenderError> {
    let mut c = init.agent.container("clean-cilium-state");
    c.insert("command".into(), tree!(["/init-container.sh"]));
    let mut env = vec![
        config_env("CILIUM_ALL_STATE", "clean-cilium-state"),
        config_env("CILIUM_BPF_STATE", "clean-cilium-bpf-state"),
        config_env("WRITE_CNI_CONF_WHEN_READY", "write-cni-conf-when-ready"),
    ];
    env.extend(init.agent.api_server_env.iter().cloned());
    env.extend(list_items(ctx, "extraEnv")?);
    c.insert("env".into(), Value::Array(env));
    c.insert("terminationMessagePolicy".into(), fallback());
    c.insert(
        "securityContext".into(),
        init.agent.security_context(ctx, "cleanCiliumState"),
    );
    let mut mounts = vec![
        mount("bpf-maps", "/sys/fs/bpf"),
        tree!({"name": "cilium-cgroup", "mountPath": bare_at(ctx, "cgroup.hostRoot"), "mountPropagation": "HostToContainer"}),
        mount("cilium-run", "/var/run/cilium"),
    ];
    mounts.extend(list_items(ctx, "extraVolumeMounts")?);
    c.insert("volumeMounts".into(), Value::Array(mounts));
    if let Some(r) = &init.resources {
        c.insert("resources".into(), r.clone());
    }
    Ok(Value::Object(c))
}

/// `wait-for-kube-proxy`: runs the chart's script that waits for kube-proxy's rules.
fn wait_for_kube_proxy_container(ctx: &Ctx, init: &Init) -> Result<Value, RenderError> {
    let mut c = init.container("wait-for-kube-proxy", &init.resources);
    c.insert("securityContext".into(), tree!({"privileged": true}));
    c.insert(
        "command".into(),
        tree!(["bash", "-c", kube_proxy_wait_script(ctx)?]),
    );
    c.insert("terminationMessagePolicy".into(), fallback());
    Ok(Value::Object(c))
}

/// `install-cni-binaries`: copies the CNI plugin to the host's `cni.binPath`.
fn install_cni_binaries(ctx: &Ctx, init: &Init) -> Value {
    let mut c = init.container("install-cni-binaries", &with(ctx.v("cni.resources")));
    c.insert("command".into(), tree!(["/install-plugin.sh"]));
    let mut sc = Map::new();
    if init.agent.privileged {
        sc.insert("privileged".into(), Value::Bool(true));
    } else if let Some(se) = with(ctx.v("securityContext.seLinuxOptions")) {
        sc.insert("seLinuxOptions".into(), se);
    }
    sc.insert("capabilities".into(), tree!({"drop": ["ALL"]}));
    c.insert("securityContext".into(), Value::Object(sc));
    c.insert("terminationMessagePolicy".into(), fallback());
    c.insert(
        "volumeMounts".into(),
        tree!([{"name": "cni-path", "mountPath": "/host/opt/cni/bin"}]),
    );
    Value::Object(c)
}

fn fallback() -> Value {
    s("FallbackToLogsOnError")
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
        // `hasKey`: a null the user wrote is kept, and prints as nothing.
        if ctx.values.present("k8s.apiServerURLs") {
            let urls = ctx.v("k8s.apiServerURLs");
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

#[cfg(test)]
mod tests {
    use super::super::test_support::{names, with_agent};
    use super::*;
    use crate::error::RenderError;
    use serde_json::json;

    fn init(version: &str, values: &str) -> Result<Vec<Value>, RenderError> {
        with_agent(version, values, all)
    }

    #[test]
    fn defaults_in_the_chart_order() {
        let c = init("1.18.12", "extraInitContainers: [{name: mine}]").expect("renders");
        assert_eq!(
            names(&c),
            [
                "config",
                "mount-cgroup",
                "apply-sysctl-overwrites",
                "mount-bpf-fs",
                "clean-cilium-state",
                "install-cni-binaries",
                "mine",
            ]
        );
    }

    #[test]
    fn privileged_agents_mount_bpffs_themselves() {
        let c = init("1.18.12", "securityContext: {privileged: true}").expect("renders");
        assert!(!names(&c).contains(&"mount-bpf-fs"));
        let install = c.iter().find(|c| c["name"] == "install-cni-binaries");
        assert_eq!(
            install.expect("install")["securityContext"],
            json!({"privileged": true, "capabilities": {"drop": ["ALL"]}})
        );
    }

    #[test]
    fn mount_cgroup_takes_init_resources_from_1_19() {
        let values = "initResources: {limits: {cpu: 1}}";
        let resources =
            |version: &str| init(version, values).expect("renders")[1]["resources"].clone();
        assert!(resources("1.18.12").is_null());
        assert_eq!(resources("1.19.0"), json!({"limits": {"cpu": 1.0}}));
    }

    #[test]
    fn node_init_bootstrap_file_is_awaited() {
        let values = "nodeinit: {enabled: true, bootstrapFile: /tmp/x/boot}";
        let c = init("1.18.12", values).expect("renders");
        let wait = c.iter().find(|c| c["name"] == "wait-for-node-init");
        let command = &wait.expect("wait-for-node-init")["command"];
        assert_eq!(command[0], "sh");
        assert!(command[2]
            .as_str()
            .is_some_and(|s| s.contains("/tmp/cilium-bootstrap.d/boot")));
    }

    #[test]
    fn kube_proxy_wait_needs_the_chart_archive() {
        let e = init("1.18.12", "waitForKubeProxy: true");
        assert!(
            matches!(e, Err(RenderError::NeedsChartArchive { path, .. }) if path == "waitForKubeProxy")
        );
        // Nothing to wait for where Cilium replaces kube-proxy.
        let c = init(
            "1.18.12",
            "waitForKubeProxy: true\nkubeProxyReplacement: true",
        )
        .expect("renders");
        assert!(!names(&c).contains(&"wait-for-kube-proxy"));
    }

    #[test]
    fn block_literal_is_read_as_yaml_does() {
        let text = "- name: a\n  command:\n  - |\n    one\n      two\n\n  - next\n";
        assert_eq!(
            literal_after(text, "name: a").as_deref(),
            Some("one\n  two\n")
        );
        assert_eq!(literal_after(text, "name: b"), None);
        assert_eq!(
            literal_after("- name: a\n  - |\n    {{ x }}\n", "name: a"),
            None
        );
    }
}
