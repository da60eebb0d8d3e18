//! Values written for another Cilium release. Helm ignores a value its chart does not know, so a
//! value renamed or removed between minors (or one that arrived in a later one) silently stops
//! doing anything. This check refuses such a value instead, naming where it was written, the
//! releases that know it and, where the chart renamed it, the new name.
//!
//! A user's value is refused when its path is absent from the requested release's defaults, no
//! template of that release reads it (`data/VERSION/template-keys.json`: some values work without
//! being listed in values.yaml), and another supported release lists it in its defaults. Keys
//! below a free-form map (annotations, labels, node selectors, extra config, any map whose
//! default is `{}`) are the user's own and never refused.

use serde_json::{Map, Value};

use crate::values::Values;
use crate::versions::{self, CiliumVersion};

/// One value that the requested release does not know and another one does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OtherReleaseValue {
    /// The dotted path as the user wrote it.
    pub path: String,
    /// Where it was written (file and line, or `--set`).
    pub origin: String,
    /// The supported releases whose defaults list it, as `1.18` (every supported patch of that
    /// minor) or `1.19.2–1.19.6`.
    pub known_in: String,
    /// What to write instead, where the chart renamed or replaced it.
    pub hint: Option<&'static str>,
}

impl std::fmt::Display for OtherReleaseValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "  {} (set in {}): exists only in Cilium {}",
            self.path, self.origin, self.known_in
        )?;
        if let Some(h) = self.hint {
            write!(f, "; {h}")?;
        }
        Ok(())
    }
}

/// Values renamed or removed between minors, with what the newer chart offers instead (from the
/// charts' values.yaml): (path, first release without it, hint).
const RENAMED: &[(&str, &str, &str)] = &[
    ("customCalls", "1.19.0", "removed in 1.19 (no replacement)"),
    ("nodePort.enabled", "1.19.0", "removed in 1.19: the NodePort service implementation follows kubeProxyReplacement"),
    ("svcSourceRangeCheck", "1.19.0", "removed in 1.19 (service source ranges are always checked)"),
    ("l2podAnnouncements.interface", "1.19.5", "1.19.5 replaced it by l2podAnnouncements.interfacePattern (a regular expression)"),
    ("clustermesh.enableMCSAPISupport", "1.20.0", "1.20 renamed it to clustermesh.mcsapi.enabled"),
    ("encryption.strictMode.enabled", "1.20.0", "1.20 renamed it to encryption.strictMode.egress.enabled"),
    ("encryption.strictMode.cidr", "1.20.0", "1.20 renamed it to encryption.strictMode.egress.cidr"),
    ("encryption.strictMode.allowRemoteNodeIdentities", "1.20.0", "1.20 renamed it to encryption.strictMode.egress.allowRemoteNodeIdentities"),
    ("encryption.ipsec.encryptedOverlay", "1.20.0", "removed in 1.20 (no replacement)"),
    ("hubble.redact.kafka", "1.20.0", "removed in 1.20 (Kafka API key redaction is gone)"),
    ("preflight.tofqdnsPreCache", "1.20.0", "removed in 1.20; the agent's DNS cache preload file is dnsProxy.preCache"),
    ("hubble.ui.backend.livenessProbe", "1.20.0", "removed in 1.20: the backend's probes are always on"),
    ("hubble.ui.backend.readinessProbe", "1.20.0", "removed in 1.20: the backend's probes are always on"),
    ("clustermesh.apiserver.tls.server", "1.20.0", "removed in 1.20: clustermesh-apiserver certificates are no longer provided by values; use clustermesh.apiserver.tls.auto"),
    ("clustermesh.apiserver.tls.admin", "1.20.0", "removed in 1.20: clustermesh-apiserver certificates are no longer provided by values; use clustermesh.apiserver.tls.auto"),
    ("clustermesh.apiserver.tls.remote", "1.20.0", "removed in 1.20: clustermesh-apiserver certificates are no longer provided by values; use clustermesh.apiserver.tls.auto"),
    ("clustermesh.apiserver.tls.enableSecrets", "1.20.0", "removed in 1.20: clustermesh-apiserver certificates are no longer provided by values; use clustermesh.apiserver.tls.auto"),
];

/// Every value the user wrote that `version` does not know and another supported release does.
/// Empty for the usual values file; the other releases' defaults are read only when a path is
/// unknown to the requested one.
pub fn check(values: &Values, version: CiliumVersion) -> Vec<OtherReleaseValue> {
    let Value::Object(user) = values.user() else {
        return Vec::new();
    };
    let defaults = versions::defaults_indexed(version).map(|(tree, _)| tree);
    let mut found = Vec::new();
    let mut path = Vec::new();
    walk(user, defaults, version, &mut path, &mut found);
    found
        .into_iter()
        .map(|(keys, known_in)| {
            let dotted = keys.join(".");
            OtherReleaseValue {
                origin: values.describe_origin(&dotted),
                hint: hint(&dotted, version),
                path: dotted,
                known_in,
            }
        })
        .collect()
}

/// A map whose keys are the user's own (names of annotations, labels, selectors, config keys).
fn is_free_form(key: &str, default: Option<&Value>) -> bool {
    let lower = key.to_ascii_lowercase();
    lower.ends_with("annotations")
        || lower.ends_with("labels")
        || lower.ends_with("selector")
        || lower == "extraconfig"
        || matches!(default, Some(Value::Object(m)) if m.is_empty())
}

fn walk(
    user: &Map<String, Value>,
    defaults: Option<&Value>,
    version: CiliumVersion,
    path: &mut Vec<String>,
    found: &mut Vec<(Vec<String>, String)>,
) {
    for (key, value) in user {
        if value.is_null() {
            continue; // removing a default is never a misplaced value
        }
        path.push(key.clone());
        let default = defaults.and_then(|d| d.get(key));
        match default {
            Some(d) => {
                if let (Value::Object(m), Value::Object(_)) = (value, d) {
                    if !is_free_form(key, Some(d)) {
                        walk(m, Some(d), version, path, found);
                    }
                }
            }
            None => absent_from_defaults(value, version, path, found),
        }
        path.pop();
    }
}

/// A user path the requested release's defaults do not list.
fn absent_from_defaults(
    value: &Value,
    version: CiliumVersion,
    path: &mut Vec<String>,
    found: &mut Vec<(Vec<String>, String)>,
) {
    let dotted = path.join(".");
    match template_reads(&dotted, version) {
        Read::Whole => return,
        Read::Below => {
            if let Value::Object(m) = value {
                if !is_free_form(path.last().map_or("", String::as_str), None) {
                    walk(m, None, version, path, found);
                }
            }
            return;
        }
        Read::Not => {}
    }
    // Most such paths are typos or keys of no release; the releases whose defaults' text does
    // not even hold the last key are passed over without being parsed.
    let last = path.last().map_or(String::new(), |k| {
        serde_json::to_string(k).unwrap_or_default() + ":"
    });
    let requested = version.to_string();
    let known: Vec<&'static str> = versions::supported()
        .filter(|v| *v != requested)
        .filter(|v| versions::defaults_text(v).is_some_and(|t| t.contains(&last)))
        .filter(|v| {
            versions::parse(v)
                .ok()
                .and_then(versions::defaults_indexed)
                .is_some_and(|(tree, _)| lists(tree, path))
        })
        .collect();
    if !known.is_empty() {
        found.push((path.clone(), describe_releases(&known)));
    }
}

enum Read {
    /// A template reads this path or a map above it.
    Whole,
    /// A template reads a path below this one.
    Below,
    Not,
}

fn template_reads(dotted: &str, version: CiliumVersion) -> Read {
    let keys = versions::template_keys(version);
    // Sorted: the paths at or below `dotted` start at its position.
    let at = keys.partition_point(|k| k.as_str() < dotted);
    if keys.get(at).is_some_and(|k| k == dotted) {
        return Read::Whole;
    }
    let mut prefix = dotted;
    while let Some((parent, _)) = prefix.rsplit_once('.') {
        if keys.binary_search_by(|k| k.as_str().cmp(parent)).is_ok() {
            return Read::Whole;
        }
        prefix = parent;
    }
    let below = format!("{dotted}.");
    let at = keys.partition_point(|k| k.as_str() < below.as_str());
    if keys.get(at).is_some_and(|k| k.starts_with(&below)) {
        Read::Below
    } else {
        Read::Not
    }
}

fn lists(tree: &Value, path: &[String]) -> bool {
    let mut node = tree;
    for key in path {
        match node.get(key) {
            Some(child) => node = child,
            None => return false,
        }
    }
    true
}

/// `1.18, 1.19.2–1.19.6`: a minor alone where every supported patch of it is listed.
fn describe_releases(releases: &[&str]) -> String {
    let minor_of = |v: &str| {
        v.rsplit_once('.')
            .map_or(v.to_string(), |(m, _)| m.to_string())
    };
    let mut minors: Vec<String> = releases.iter().map(|v| minor_of(v)).collect();
    minors.dedup();
    minors
        .iter()
        .map(|minor| {
            let all: Vec<&str> = versions::supported()
                .filter(|v| minor_of(v) == *minor)
                .collect();
            let have: Vec<&str> = all
                .iter()
                .copied()
                .filter(|v| releases.contains(v))
                .collect();
            match (have.first(), have.last()) {
                _ if have.len() == all.len() => minor.clone(),
                (Some(a), Some(b)) if a == b => a.to_string(),
                (Some(a), Some(b)) => format!("{a}–{b}"),
                _ => minor.clone(),
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The rename hint for `dotted` (or a map above it), where the requested release is past it.
fn hint(dotted: &str, version: CiliumVersion) -> Option<&'static str> {
    RENAMED.iter().find_map(|(path, gone_in, hint)| {
        let applies = dotted == *path || dotted.starts_with(&format!("{path}."));
        let past = versions::parse(gone_in).is_ok_and(|gone| version >= gone);
        (applies && past).then_some(*hint)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::values::Layer;

    fn check_yaml(version: &str, text: &str) -> Vec<OtherReleaseValue> {
        let v = versions::parse(version).unwrap();
        let layer = Layer::from_yaml("values.yaml", text).unwrap();
        let values = Values::resolve(versions::defaults(v), vec![layer]);
        check(&values, v)
    }

    #[test]
    fn a_value_removed_in_a_later_minor_names_the_minors_file_line_and_new_name() {
        let found = check_yaml(
            "1.20.0",
            "cni:\n  iptablesRemoveAWSRules: false\nclustermesh:\n  enableMCSAPISupport: true\n",
        );
        assert_eq!(found.len(), 1, "{found:?}");
        let f = &found[0];
        assert_eq!(f.path, "clustermesh.enableMCSAPISupport");
        assert_eq!(f.origin, "values.yaml line 4");
        assert_eq!(f.known_in, "1.18, 1.19");
        assert_eq!(
            f.hint,
            Some("1.20 renamed it to clustermesh.mcsapi.enabled")
        );
    }

    #[test]
    fn every_violation_is_reported_at_once() {
        let found = check_yaml(
            "1.19.6",
            "customCalls:\n  enabled: true\nnodePort:\n  enabled: true\nsvcSourceRangeCheck: false\nl2podAnnouncements:\n  interface: eth1\n",
        );
        let paths: Vec<&str> = found.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "customCalls",
                "l2podAnnouncements.interface",
                "nodePort.enabled",
                "svcSourceRangeCheck"
            ]
        );
        let known: Vec<&str> = found.iter().map(|f| f.known_in.as_str()).collect();
        assert_eq!(known, ["1.18", "1.18, 1.19.0–1.19.4", "1.18", "1.18"]);
        assert!(found[1].hint.unwrap().contains("interfacePattern"));
        // Before 1.19.5 the value exists, so nothing is said about it.
        assert_eq!(
            check_yaml("1.19.4", "l2podAnnouncements:\n  interface: eth1\n"),
            vec![]
        );
    }

    #[test]
    fn a_value_of_a_newer_minor_names_it_and_has_no_rename_hint() {
        let found = check_yaml("1.18.12", "clustermesh:\n  mcsapi:\n    enabled: true\n");
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].path, "clustermesh.mcsapi");
        assert_eq!(found[0].known_in, "1.19, 1.20");
        assert_eq!(found[0].hint, None);
    }

    #[test]
    fn template_read_free_form_and_unknown_everywhere_values_pass() {
        let text = "kubeProxyReplacement: true\nloadBalancer:\n  mode: dsr\ndevices: [eth0]\ntls:\n  caBundle:\n    content: x\n\
                    annotations:\n  customCalls: x\nextraConfig:\n  nodePort: x\npodAnnotations:\n  svcSourceRangeCheck: y\n\
                    operator:\n  nodeSelector:\n    customCalls: z\nnoSuchValueAnywhere: 1\nclustermesh:\n  enableMCSAPISupport: null\n";
        for v in versions::supported() {
            assert_eq!(check_yaml(v, text), vec![], "{v}");
        }
    }

    #[test]
    fn releases_are_described_by_minor_or_range() {
        assert_eq!(
            describe_releases(&["1.19.2", "1.19.3", "1.19.4", "1.19.5", "1.19.6", "1.20.0"]),
            "1.19.2–1.19.6, 1.20"
        );
        assert_eq!(describe_releases(&["1.18.5"]), "1.18.5");
    }
}
