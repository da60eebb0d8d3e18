//! Mirrors the chart's templates: cilium-agent/
//!
//! The agent's DaemonSet (`daemonset`), its RBAC objects and ServiceAccount (`rbac`), and its
//! metrics Service, ServiceMonitor and Grafana dashboards (`metrics`).

use serde_json::{Map, Value};

use super::Ctx;
use crate::error::RenderError;
use crate::tmpl::{bare, print, truthy};

mod daemonset;
mod metrics;
mod rbac;

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

/// A value printed bare into YAML (`key: {{ .Values.x }}`): absent prints nothing (null), the
/// rest is re-typed by YAML.
fn bare_at(ctx: &Ctx, path: &str) -> Value {
    bare(ctx.v(path))
}

/// A value printed inside a larger text; Helm erases the `<no value>` a nil would print.
fn text_of(v: &Value) -> String {
    if v.is_null() {
        String::new()
    } else {
        print(v)
    }
}

/// `| quote`: always a string.
fn quoted(v: &Value) -> Value {
    Value::String(text_of(v))
}

fn s(text: &str) -> Value {
    Value::String(text.to_string())
}

/// A map value inserted with `toYaml` under `with`: only when non-empty.
fn with_value(ctx: &Ctx, path: &str) -> Option<Value> {
    let v = ctx.v(path);
    truthy(v).then(|| v.clone())
}

/// Items that the chart splices with `toYaml` into a YAML list: the value must itself be a list
/// (anything else would not produce a list in Helm's output either).
fn list_items(ctx: &Ctx, path: &str) -> Result<Vec<Value>, RenderError> {
    match ctx.v(path) {
        v if !truthy(v) => Ok(Vec::new()),
        Value::Array(a) => Ok(a.clone()),
        _ => Err(ctx.invalid(path, "must be a list")),
    }
}

/// Labels: fixed pairs first, then maps merged over them in order (later keys win, as the
/// last of duplicate YAML keys does).
fn labels(fixed: &[(&str, &str)], maps: &[&Value]) -> Value {
    let mut m = Map::new();
    for (k, v) in fixed {
        m.insert((*k).to_string(), s(v));
    }
    for extra in maps {
        if let Value::Object(e) = extra {
            for (k, v) in e {
                m.insert(k.clone(), v.clone());
            }
        }
    }
    Value::Object(m)
}

/// Go templates' `eq VALUE "text"`: nil never equals, a string compares, and any other kind is
/// an error in Helm ("incompatible types for comparison").
fn eq_text(ctx: &Ctx, path: &str, text: &str) -> Result<bool, RenderError> {
    match ctx.v(path) {
        Value::Null => Ok(false),
        Value::String(v) => Ok(v == text),
        _ => Err(ctx.invalid(
            path,
            format!("must be a string (the chart compares it with {text:?})"),
        )),
    }
}

/// Sprig's `ternary` needs a real boolean; Helm fails on anything else.
fn ternary_bool(ctx: &Ctx, path: &str) -> Result<bool, RenderError> {
    match ctx.v(path) {
        Value::Bool(b) => Ok(*b),
        _ => Err(ctx.invalid(path, "must be true or false")),
    }
}

/// Go's `path.Clean`.
fn go_path_clean(p: &str) -> String {
    if p.is_empty() {
        return ".".into();
    }
    let rooted = p.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for part in p.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if parts.last().is_some_and(|l| *l != "..") {
                    parts.pop();
                } else if !rooted {
                    parts.push("..");
                }
            }
            other => parts.push(other),
        }
    }
    let joined = parts.join("/");
    match (rooted, joined.is_empty()) {
        (true, _) => format!("/{joined}"),
        (false, true) => ".".into(),
        (false, false) => joined,
    }
}

/// Go's `path.Dir` (Sprig's `dir`).
fn go_path_dir(p: &str) -> String {
    let head = match p.rfind('/') {
        Some(i) => &p[..=i],
        None => "",
    };
    go_path_clean(head)
}

/// Go's `path.Base` (Sprig's `base`).
fn go_path_base(p: &str) -> String {
    if p.is_empty() {
        return ".".into();
    }
    let trimmed = p.trim_end_matches('/');
    if trimmed.is_empty() {
        return "/".into();
    }
    match trimmed.rfind('/') {
        Some(i) => trimmed[i + 1..].to_string(),
        None => trimmed.to_string(),
    }
}

/// Go's `%q` of a string (Sprig's `quote`), as it appears inside a script's text.
fn go_quote(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\u{b}' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{KubeVersion, Plan};
    use crate::values::{Layer, Values};

    /// Renders the agent's objects for one release and values file, without a chart archive.
    fn agent(version: &str, yaml: &str) -> Result<Vec<Value>, RenderError> {
        let cilium = crate::versions::parse(version).expect("supported version");
        let layer = Layer::from_yaml("test.yaml", yaml).expect("valid YAML");
        let values = Values::resolve(crate::versions::defaults(cilium), &[layer]);
        let plan = Plan {
            cilium,
            release_namespace: "kube-system".into(),
            kube: KubeVersion::parse("1.35.0").expect("valid"),
            api_versions: Default::default(),
        };
        render(&Ctx {
            values: &values,
            plan: &plan,
            chart: None,
        })
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

    #[test]
    fn go_paths() {
        assert_eq!(
            go_path_dir("/run/spire/sockets/admin.sock"),
            "/run/spire/sockets"
        );
        assert_eq!(go_path_dir("admin.sock"), ".");
        assert_eq!(go_path_dir("/a//b/../c/"), "/a/c");
        assert_eq!(go_path_dir("/x"), "/");
        assert_eq!(
            go_path_base("/tmp/cilium-bootstrap.d/cilium-bootstrap-time"),
            "cilium-bootstrap-time"
        );
        assert_eq!(go_path_base("/a/b/"), "b");
        assert_eq!(go_path_base(""), ".");
        assert_eq!(go_path_base("///"), "/");
    }

    #[test]
    fn go_quoting() {
        assert_eq!(go_quote("a\"b\\c"), "\"a\\\"b\\\\c\"");
    }
}
