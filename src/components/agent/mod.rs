//! Mirrors the chart's templates: cilium-agent/
//!
//! The agent's DaemonSet (`daemonset`), its RBAC objects and ServiceAccount (`rbac`), and its
//! metrics Service, ServiceMonitor and Grafana dashboards (`metrics`).

use serde_json::Value;

use super::Ctx;
use crate::error::RenderError;
use crate::tmpl::{self, bare};

mod daemonset;
mod metrics;
pub(crate) mod rbac;

pub fn render(ctx: &Ctx) -> Result<Vec<Value>, RenderError> {
    let mut out = Vec::new();
    out.extend(daemonset::render(ctx)?);
    out.extend(rbac::render(ctx)?);
    out.extend(metrics::render(ctx)?);
    Ok(out)
}

/// Nearly every agent object exists only when the agent is on and the preflight check is off
/// (preflight installs its own copies of some of them).
fn agent_on(ctx: &Ctx) -> bool {
    ctx.on("agent") && !ctx.on("preflight.enabled")
}

/// A value the chart prints without quotes after a key: absent prints nothing (null), the rest
/// is re-typed by YAML.
fn bare_at(ctx: &Ctx, path: &str) -> Value {
    bare(ctx.v(path))
}

/// A string value (the agent builds many).
fn s(text: &str) -> Value {
    Value::String(text.to_string())
}

/// Go templates' `eq VALUE "text"` on a value; Helm fails on a value that is neither nil nor
/// a string, and so does this, naming it.
fn eq_text(ctx: &Ctx, path: &str, text: &str) -> Result<bool, RenderError> {
    tmpl::eq_text(ctx.v(path), text).ok_or_else(|| {
        ctx.invalid(
            path,
            format!("must be a string (the chart compares it with {text:?})"),
        )
    })
}

/// Sprig's `ternary` on a value, which Helm refuses unless it is true or false.
fn ternary_bool(ctx: &Ctx, path: &str) -> Result<bool, RenderError> {
    tmpl::ternary_bool(ctx.v(path)).ok_or_else(|| ctx.invalid(path, "must be true or false"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::components::common::tests::with_release;

    /// Renders the agent's objects for one release and values file, without a chart archive.
    fn agent(version: &str, yaml: &str) -> Result<Vec<Value>, RenderError> {
        with_release(version, yaml, "1.35.0", render)
    }

    fn find<'a>(objects: &'a [Value], kind: &str, name: &str) -> Option<&'a Value> {
        objects
            .iter()
            .find(|o| o["kind"] == kind && o["metadata"]["name"] == name)
    }

    const NO_AWS: &str = "cni: {iptablesRemoveAWSRules: false}\n";

    #[test]
    fn aws_cleanup_needs_the_chart_archive() {
        match agent("1.18.12", "{}") {
            Err(RenderError::NeedsChartArchive { path, .. }) => {
                assert_eq!(path, "cni.iptablesRemoveAWSRules")
            }
            other => panic!("expected a refusal, got {other:?}"),
        }
        // With AWS's own CNI chained, the clean-up hook is left out, so no archive is needed.
        let objects = agent("1.18.12", "cni: {chainingMode: aws-cni}").expect("renders");
        let ds = find(&objects, "DaemonSet", "cilium").expect("DaemonSet");
        let agent = &ds["spec"]["template"]["spec"]["containers"][0];
        assert!(agent["lifecycle"]["postStart"].is_null());
        assert!(!agent["lifecycle"]["preStop"].is_null());
    }

    #[test]
    fn secrets_rule_moved_in_1_18_5() {
        let yaml = format!("{NO_AWS}tls: {{readSecretsOnlyFromSecretsNamespace: false}}\n");
        let rules = |v: &str| {
            let objects = agent(v, &yaml).expect("renders");
            find(&objects, "ClusterRole", "cilium").expect("ClusterRole")["rules"].clone()
        };
        let old = rules("1.18.4");
        assert!(old.as_array().is_some_and(|r| r
            .iter()
            .any(|r| r["resources"] == serde_json::json!(["secrets"]))));
        let new = rules("1.18.5");
        assert!(new[2]["resources"]
            .as_array()
            .is_some_and(|r| r.contains(&s("secrets"))));
        assert!(new.as_array().is_some_and(|r| r
            .iter()
            .all(|r| r["resources"] != serde_json::json!(["secrets"]))));
    }

    #[test]
    fn tls_interception_role_follows_the_agent_from_1_18_7() {
        let yaml = format!("{NO_AWS}agent: false\n");
        let before = agent("1.18.6", &yaml).expect("renders");
        assert!(find(&before, "Role", "cilium-tlsinterception-secrets").is_some());
        let after = agent("1.18.7", &yaml).expect("renders");
        assert!(after.is_empty());
    }

    fn daemonset(version: &str, yaml: &str) -> Value {
        let objects = agent(version, &format!("{NO_AWS}{yaml}")).expect("renders");
        find(&objects, "DaemonSet", "cilium")
            .expect("DaemonSet")
            .clone()
    }

    #[test]
    fn probes_name_the_health_port_from_1_19() {
        let probe_port = |v: &str| {
            daemonset(v, "")["spec"]["template"]["spec"]["containers"][0]["readinessProbe"]
                ["httpGet"]["port"]
                .clone()
        };
        assert_eq!(probe_port("1.18.12"), serde_json::json!(9879.0));
        assert_eq!(probe_port("1.19.0"), s("health"));
    }

    #[test]
    fn a_single_config_map_source_replaces_the_config_init_container() {
        let ds = daemonset("1.19.6", "daemon: {configSources: \"config-map:mine\"}\n");
        let spec = &ds["spec"]["template"]["spec"];
        assert!(spec["initContainers"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["name"] != "config"));
        assert_eq!(spec["volumes"][0]["configMap"]["name"], s("mine"));
        // Two sources still need the init container to merge them.
        let ds = daemonset(
            "1.19.6",
            "daemon: {configSources: \"config-map:a,config-map:b\"}\n",
        );
        assert_eq!(
            ds["spec"]["template"]["spec"]["initContainers"][0]["name"],
            s("config")
        );
    }

    #[test]
    fn bgp_v1_rbac_follows_each_release() {
        let listed = |v: &str| {
            let objects = agent(v, NO_AWS).expect("renders");
            let role = find(&objects, "ClusterRole", "cilium").expect("ClusterRole");
            role["rules"].as_array().unwrap().iter().any(|r| {
                r["resources"]
                    .as_array()
                    .is_some_and(|l| l.contains(&s("ciliumbgppeeringpolicies")))
            })
        };
        assert!(listed("1.18.12"));
        assert!(!listed("1.19.0"));
        assert!(!listed("1.19.3"));
        assert!(listed("1.19.4"));
        assert!(!listed("1.20.0"));
    }

    #[test]
    fn init_scripts_switch_to_bash_in_1_19_3() {
        let shell = |v: &str| {
            daemonset(v, "")["spec"]["template"]["spec"]["initContainers"]
                .as_array()
                .unwrap()
                .iter()
                .find(|c| c["name"] == "mount-cgroup")
                .expect("mount-cgroup")["command"][0]
                .clone()
        };
        assert_eq!(shell("1.19.2"), s("sh"));
        assert_eq!(shell("1.19.3"), s("bash"));
    }

    #[test]
    fn host_aliases_skip_disabled_clusters_from_1_19() {
        let yaml = "clustermesh: {config: {enabled: true, clusters: {b: {ips: [10.0.0.2]}, a: {ips: [10.0.0.1], enabled: false}}}}\n";
        let aliases = &daemonset("1.19.0", yaml)["spec"]["template"]["spec"]["hostAliases"];
        assert_eq!(aliases.as_array().map(Vec::len), Some(1));
        assert_eq!(aliases[0]["hostnames"][0], s("b.mesh.cilium.io"));
    }

    #[test]
    fn probe_host_needs_a_boolean() {
        let yaml = format!("{NO_AWS}ipv4: {{enabled: \"yes\"}}\n");
        assert!(matches!(
            agent("1.18.0", &yaml),
            Err(RenderError::Value { path, .. }) if path == "ipv4.enabled"
        ));
    }
}
