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

pub(super) fn all(ctx: &Ctx, a: &Agent) -> Result<Vec<Value>, RenderError> {
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
