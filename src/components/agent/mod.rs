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

    #[test]
    fn probe_host_needs_a_boolean() {
        let yaml = format!("{NO_AWS}ipv4: {{enabled: \"yes\"}}\n");
        assert!(matches!(
            agent("1.18.0", &yaml),
            Err(RenderError::Value { path, .. }) if path == "ipv4.enabled"
        ));
    }
}
