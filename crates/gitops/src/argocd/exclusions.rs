//! Argo CD's resource exclusions: which rendered objects Argo CD never watches, so never applies,
//! never shows and never prunes, and what to change in `argocd-cm` so it manages them.
//!
//! Argo CD filters every group and kind through `resource.exclusions` and `resource.inclusions`
//! of its `argocd-cm` ConfigMap, after a list of core exclusions compiled into it
//! (argoproj/argo-cd `util/settings/resources_filter.go`: `coreExcludedResources`,
//! `IsExcludedResource`; `util/settings/filtered_resource.go`: `Match` — each of `apiGroups` and
//! `clusters` is a list of globs, `kinds` a list of names or `*`, and an empty list matches
//! everything; an excluded object is excluded whatever the inclusions say; when inclusions name the
//! cluster, what they do not include is excluded).
//!
//! Since Argo CD 3.0 the `argocd-cm` of the install manifests carries default exclusions
//! (argoproj/argo-cd `manifests/base/config/argocd-cm.yaml`; the 2.14→3.0 upgrade notes,
//! <https://argo-cd.readthedocs.io/en/stable/operator-manual/upgrading/2.14-3.0/>). They are data
//! of that ConfigMap, not of the code: an `argocd-cm` written without them (a Helm install with its
//! own `configs.cm`, an older install upgraded in place) has only the core list. Cilium's render
//! holds `Endpoints` (1.18) or `EndpointSlice` objects (1.19, 1.20) for `cilium-ingress` when the
//! ingress controller is on: the default exclusions skip them and the ingress Service has no
//! backends (argoproj/argo-cd#24030).

use serde_json::Value;

/// One filter entry of `resource.exclusions` / `resource.inclusions`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Rule {
    api_groups: Vec<String>,
    kinds: Vec<String>,
    clusters: Vec<String>,
}

impl Rule {
    fn new(groups: &[&str], kinds: &[&str]) -> Rule {
        Rule {
            api_groups: groups.iter().map(|s| s.to_string()).collect(),
            kinds: kinds.iter().map(|s| s.to_string()).collect(),
            clusters: Vec::new(),
        }
    }

    /// Whether the rule covers the group and kind (clusters aside).
    fn covers(&self, group: &str, kind: &str) -> bool {
        (self.api_groups.is_empty() || self.api_groups.iter().any(|g| glob(g, group)))
            && (self.kinds.is_empty() || self.kinds.iter().any(|k| k == "*" || k == kind))
    }

    /// The rule as it is written in `argocd-cm`, on one line.
    fn shown(&self) -> String {
        let list = |v: &[String]| {
            format!(
                "[{}]",
                v.iter()
                    .map(|s| format!("{s:?}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        let mut s = format!(
            "{{apiGroups: {}, kinds: {}",
            list(&self.api_groups),
            list(&self.kinds)
        );
        if !self.clusters.is_empty() {
            s.push_str(&format!(", clusters: {}", list(&self.clusters)));
        }
        s.push('}');
        s
    }
}

/// Where the filter came from.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Source {
    /// Argo CD 3.0 or later with the `argocd-cm` of its install manifests.
    Defaults,
    /// The user's `argocd-cm` (file shown).
    ArgocdCm(String),
}

/// Argo CD's filter of resources.
#[derive(Debug, Clone)]
pub struct Filter {
    exclusions: Vec<Rule>,
    inclusions: Vec<Rule>,
    source: Source,
}

/// The exclusions compiled into Argo CD, applied before `argocd-cm`'s (`coreExcludedResources`;
/// `Lease` joined this list in the 3.x line, and is in the 3.0 default `argocd-cm` as well).
fn core_exclusions() -> Vec<Rule> {
    vec![
        Rule::new(&["events.k8s.io", "metrics.k8s.io"], &[]),
        Rule::new(&[""], &["Event"]),
        Rule::new(&["coordination.k8s.io"], &["Lease"]),
    ]
}

/// The `resource.exclusions` of the `argocd-cm` in Argo CD's install manifests, from 3.0 on
/// (`manifests/base/config/argocd-cm.yaml`).
fn default_exclusions() -> Vec<Rule> {
    vec![
        Rule::new(&["", "discovery.k8s.io"], &["Endpoints", "EndpointSlice"]),
        Rule::new(&["apiregistration.k8s.io"], &["APIService"]),
        Rule::new(&["coordination.k8s.io"], &["Lease"]),
        Rule::new(
            &["authentication.k8s.io", "authorization.k8s.io"],
            &[
                "SelfSubjectReview",
                "TokenReview",
                "LocalSubjectAccessReview",
                "SelfSubjectAccessReview",
                "SelfSubjectRulesReview",
                "SubjectAccessReview",
            ],
        ),
        Rule::new(&["certificates.k8s.io"], &["CertificateSigningRequest"]),
        Rule::new(&["cert-manager.io"], &["CertificateRequest"]),
        Rule::new(
            &["cilium.io"],
            &["CiliumIdentity", "CiliumEndpoint", "CiliumEndpointSlice"],
        ),
        Rule::new(
            &["kyverno.io", "reports.kyverno.io", "wgpolicyk8s.io"],
            &[
                "PolicyReport",
                "ClusterPolicyReport",
                "EphemeralReport",
                "ClusterEphemeralReport",
                "AdmissionReport",
                "ClusterAdmissionReport",
                "BackgroundScanReport",
                "ClusterBackgroundScanReport",
                "UpdateRequest",
            ],
        ),
    ]
}

/// The first Argo CD release whose install manifests carry `default_exclusions` in `argocd-cm`.
pub const DEFAULTS_SINCE: (u32, u32) = (3, 0);

/// The filter of an Argo CD release (`v3.1.8`, `2.14`) installed from its manifests with its
/// `argocd-cm` untouched: the defaults from [`DEFAULTS_SINCE`] on, only the core list before.
pub fn for_release(version: &str) -> Result<Filter, String> {
    let v = version.trim().trim_start_matches('v');
    let mut parts = v.split('.').map(|p| p.parse::<u32>());
    let (Some(Ok(major)), Some(Ok(minor))) = (parts.next(), parts.next()) else {
        return Err(format!(
            "Argo CD version {} is not MAJOR.MINOR[.PATCH] (e.g. 3.1.8)",
            cilium_cmp_yaml::limits::quoted(version)
        ));
    };
    Ok(if (major, minor) >= DEFAULTS_SINCE {
        Filter::argocd_defaults()
    } else {
        Filter {
            exclusions: Vec::new(),
            inclusions: Vec::new(),
            source: Source::ArgocdCm(format!(
                "Argo CD {v}'s own argocd-cm (no default exclusions)"
            )),
        }
    })
}

/// Why an object is excluded.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Reason {
    /// An exclusion rule covers it (core or `argocd-cm`).
    Excluded { rule: Rule, core: bool },
    /// Inclusions are set for the cluster and none covers it.
    NotIncluded,
}

/// A verdict for one group and kind.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Verdict {
    reason: Reason,
    /// Cluster globs the verdict depends on (empty: every cluster).
    clusters: Vec<String>,
}

impl Filter {
    /// Argo CD 3.0 or later as installed: the core list and the default `argocd-cm`.
    pub fn argocd_defaults() -> Filter {
        Filter {
            exclusions: default_exclusions(),
            inclusions: Vec::new(),
            source: Source::Defaults,
        }
    }

    /// The filter of a user's `argocd-cm` (the ConfigMap as YAML, or only its `data`), `shown`
    /// naming the file in errors.
    pub fn from_argocd_cm(text: &str, shown: &str) -> Result<Filter, String> {
        let doc = cilium_cmp_yaml::yaml::parse_value(text).map_err(|e| format!("{shown}: {e}"))?;
        let data = match doc.get("data") {
            Some(d) => d,
            None if doc.get("kind").is_none() => &doc,
            None => &Value::Null,
        };
        let rules = |key: &str| -> Result<Vec<Rule>, String> {
            match data.get(key) {
                None | Some(Value::Null) => Ok(Vec::new()),
                Some(Value::String(s)) => {
                    let list = cilium_cmp_yaml::yaml::parse_value(s)
                        .map_err(|e| format!("{shown}: data[{key:?}]: {e}"))?;
                    parse_rules(&list).map_err(|e| format!("{shown}: data[{key:?}]: {e}"))
                }
                Some(_) => Err(format!(
                    "{shown}: data[{key:?}] must be a string holding a YAML list (as in argocd-cm)"
                )),
            }
        };
        Ok(Filter {
            exclusions: rules("resource.exclusions")?,
            inclusions: rules("resource.inclusions")?,
            source: Source::ArgocdCm(shown.to_string()),
        })
    }

    /// Whether Argo CD excludes objects of this group and kind, and why.
    fn verdict(&self, group: &str, kind: &str) -> Option<Verdict> {
        let core = core_exclusions();
        let hit = core
            .iter()
            .map(|r| (r, true))
            .chain(self.exclusions.iter().map(|r| (r, false)))
            .find(|(r, _)| r.covers(group, kind));
        if let Some((rule, core)) = hit {
            return Some(Verdict {
                clusters: rule.clusters.clone(),
                reason: Reason::Excluded {
                    rule: rule.clone(),
                    core,
                },
            });
        }
        if self.inclusions.is_empty()
            || self
                .inclusions
                .iter()
                .any(|r| r.covers(group, kind) && r.clusters.is_empty())
        {
            return None;
        }
        let clusters: Vec<String> = self
            .inclusions
            .iter()
            .flat_map(|r| r.clusters.iter().cloned())
            .collect();
        Some(Verdict {
            reason: Reason::NotIncluded,
            clusters,
        })
    }
}

fn parse_rules(list: &Value) -> Result<Vec<Rule>, String> {
    let Some(items) = list.as_array() else {
        return Err("is not a list of {apiGroups, kinds, clusters} entries".into());
    };
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let strings = |key: &str| -> Result<Vec<String>, String> {
                match item.get(key) {
                    None | Some(Value::Null) => Ok(Vec::new()),
                    Some(Value::Array(a)) => a
                        .iter()
                        .map(|v| match v {
                            Value::String(s) if s.len() <= 253 => Ok(s.clone()),
                            _ => Err(format!(
                                "entry {}: {key} must be a list of strings (at most 253 characters each)",
                                i + 1
                            )),
                        })
                        .collect(),
                    Some(_) => Err(format!("entry {}: {key} must be a list", i + 1)),
                }
            };
            if !item.is_object() {
                return Err(format!("entry {} is not a map", i + 1));
            }
            Ok(Rule {
                api_groups: strings("apiGroups")?,
                kinds: strings("kinds")?,
                clusters: strings("clusters")?,
            })
        })
        .collect()
}

/// Glob matching as Argo CD's `util/glob` (github.com/gobwas/glob without separators): `*` any
/// run, `?` one character, `[abc]`/`[a-z]`/`[!a]` a class, `{a,b}` alternatives; anything else
/// literal. Alternatives expand to at most `MAX_ALTERNATIVES` plain patterns, each matched in
/// O(pattern × text) steps, so no pattern costs more than a fixed amount.
pub fn glob(pattern: &str, text: &str) -> bool {
    let t: Vec<char> = text.chars().collect();
    expand(pattern)
        .iter()
        .any(|p| plain_glob(&p.chars().collect::<Vec<_>>(), &t))
}

/// Brace alternatives expanded beyond this many are matched literally.
const MAX_ALTERNATIVES: usize = 64;

fn expand(pattern: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut rest = pattern;
    while let Some(open) = rest.find('{') {
        let Some(close) = rest[open..].find('}').map(|c| c + open) else {
            break;
        };
        let alts: Vec<&str> = rest[open + 1..close].split(',').collect();
        if out.len() * alts.len() > MAX_ALTERNATIVES {
            return vec![pattern.replace(['{', '}'], "")];
        }
        let head = &rest[..open];
        out = out
            .iter()
            .flat_map(|o| alts.iter().map(move |a| format!("{o}{head}{a}")))
            .collect();
        rest = &rest[close + 1..];
    }
    out.into_iter().map(|o| o + rest).collect()
}

/// One pattern step.
enum Token {
    Any,
    One,
    Class(Vec<(char, char)>, bool),
    Char(char),
}

fn tokens(p: &[char]) -> Vec<Token> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < p.len() {
        match p[i] {
            '*' => out.push(Token::Any),
            '?' => out.push(Token::One),
            '[' => {
                if let Some(len) = p[i..].iter().position(|c| *c == ']').filter(|l| *l > 1) {
                    let mut class = &p[i + 1..i + len];
                    let negate = class.first() == Some(&'!');
                    if negate {
                        class = &class[1..];
                    }
                    let mut ranges = Vec::new();
                    let mut j = 0;
                    while j < class.len() {
                        if j + 2 < class.len() && class[j + 1] == '-' {
                            ranges.push((class[j], class[j + 2]));
                            j += 3;
                        } else {
                            ranges.push((class[j], class[j]));
                            j += 1;
                        }
                    }
                    out.push(Token::Class(ranges, negate));
                    i += len + 1;
                    continue;
                }
                out.push(Token::Char('['));
            }
            c => out.push(Token::Char(c)),
        }
        i += 1;
    }
    out
}

/// Matching without alternatives, by dynamic programming over (pattern step, text position).
fn plain_glob(p: &[char], t: &[char]) -> bool {
    let toks = tokens(p);
    // reach[j]: the tokens so far can consume exactly t[..j].
    let mut reach = vec![false; t.len() + 1];
    reach[0] = true;
    for tok in &toks {
        let mut next = vec![false; t.len() + 1];
        for j in 0..=t.len() {
            if !reach[j] {
                continue;
            }
            match tok {
                Token::Any => {
                    for n in next.iter_mut().skip(j) {
                        *n = true;
                    }
                    break;
                }
                Token::One => {
                    if j < t.len() {
                        next[j + 1] = true;
                    }
                }
                Token::Class(ranges, negate) => {
                    if j < t.len() {
                        let hit = ranges.iter().any(|(a, b)| *a <= t[j] && t[j] <= *b);
                        if hit != *negate {
                            next[j + 1] = true;
                        }
                    }
                }
                Token::Char(c) => {
                    if j < t.len() && t[j] == *c {
                        next[j + 1] = true;
                    }
                }
            }
        }
        reach = next;
    }
    reach[t.len()]
}

/// A rendered object Argo CD would not manage, with what that means and the fix.
#[derive(Debug, Clone)]
pub struct Excluded {
    /// `Kind namespace/name`.
    pub object: String,
    /// Why, and on which clusters.
    verdict: Verdict,
    /// What happens in the cluster because Argo CD skips it.
    pub effect: String,
    /// The narrowest `argocd-cm` change that lets Argo CD manage it.
    pub fix: String,
}

/// One object of a render: its API group, kind, namespace and name.
struct Named<'a> {
    group: &'a str,
    kind: &'a str,
    namespace: Option<&'a str>,
    name: &'a str,
}

/// Every object of `objects` the filter excludes.
fn excluded(filter: &Filter, objects: &[Named]) -> Vec<Excluded> {
    objects
        .iter()
        .filter_map(|o| {
            let verdict = filter.verdict(o.group, o.kind)?;
            let object = match o.namespace {
                Some(ns) => format!("{} {ns}/{}", o.kind, o.name),
                None => format!("{} {}", o.kind, o.name),
            };
            let fix = fix(&verdict, o.group, o.kind);
            Some(Excluded {
                object,
                effect: effect(o.kind, o.name),
                fix,
                verdict,
            })
        })
        .collect()
}

/// What skipping the object does to a running Cilium.
fn effect(kind: &str, name: &str) -> String {
    match (kind, name) {
        ("Endpoints" | "EndpointSlice", "cilium-ingress") => {
            "the cilium-ingress Service (selector-less) gets no endpoints: Cilium's shared \
             ingress has no backends and its traffic goes nowhere (argoproj/argo-cd#24030)"
                .into()
        }
        ("Endpoints" | "EndpointSlice", _) => format!(
            "the Service {name} gets no endpoints from the render: it has no backends unless \
             something else creates them"
        ),
        _ => "Argo CD never creates, updates, shows or prunes it: a sync leaves it as it is \
              (absent on a new cluster)"
            .into(),
    }
}

/// The narrowest `argocd-cm` change: exclusions filter by group, kind and cluster only, so the
/// narrowest is taking this kind (not the other kinds of the same entry) out of the entry that
/// matches it, optionally for this cluster only by splitting the entry with `clusters`.
fn fix(verdict: &Verdict, group: &str, kind: &str) -> String {
    match &verdict.reason {
        Reason::Excluded { rule, core: true } => format!(
            "{} is compiled into Argo CD ({}): no argocd-cm setting lets Argo CD manage {kind}; \
             create it outside Argo CD",
            rule.shown(),
            "util/settings/resources_filter.go"
        ),
        Reason::Excluded { rule, core: false } => {
            let rest: Vec<String> = rule.kinds.iter().filter(|k| *k != kind).cloned().collect();
            let narrowed = if rule.kinds.is_empty() || rest.is_empty() {
                "delete that entry".to_string()
            } else {
                format!(
                    "change it to {}",
                    Rule {
                        api_groups: rule.api_groups.clone(),
                        kinds: rest,
                        clusters: rule.clusters.clone(),
                    }
                    .shown()
                )
            };
            format!(
                "argocd-cm resource.exclusions holds {}; {narrowed} (Argo CD then watches every \
                 {kind} of group {group:?} on the cluster, the load the entry avoided; add \
                 `clusters:` globs to a copy of the entry to keep the exclusion on other clusters)",
                rule.shown(),
                group = group
            )
        }
        Reason::NotIncluded => format!(
            "argocd-cm resource.inclusions does not include it; add {}",
            Rule {
                api_groups: vec![group.to_string()],
                kinds: vec![kind.to_string()],
                clusters: verdict.clusters.clone(),
            }
            .shown()
        ),
    }
}

/// Whether the recommended Application's `ignoreDifferences` entry for `CiliumIdentity` is
/// needed: only when Argo CD watches CiliumIdentity objects (before 3.0, or an `argocd-cm` without
/// the default exclusions), since an excluded kind is never compared.
pub fn identity_ignore_needed(filter: &Filter) -> bool {
    filter.verdict("cilium.io", "CiliumIdentity").is_none()
}

/// The lines a command prints on stderr for the excluded objects of a render.
pub fn report(filter: &Filter, found: &[Excluded]) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    if found.is_empty() {
        return out;
    }
    let source = match &filter.source {
        Source::Defaults => "Argo CD 3.0 or later with its default argocd-cm resource.exclusions (pass --argocd-cm FILE to check yours)".to_string(),
        Source::ArgocdCm(f) => format!("the argocd-cm in {f}"),
    };
    let _ = writeln!(
        out,
        "warning: {} rendered object(s) are excluded by {source}; Argo CD will not apply them:",
        found.len()
    );
    for e in found {
        let when = if e.verdict.clusters.is_empty() {
            String::new()
        } else {
            format!(" (on clusters matching {})", e.verdict.clusters.join(", "))
        };
        let _ = writeln!(out, "  {}{when}: {}", e.object, e.effect);
        let _ = writeln!(out, "    fix: {}", e.fix);
    }
    out
}

/// The excluded objects of a render stream (a cilium-cmp render), for the front ends.
pub fn excluded_in_stream(filter: &Filter, text: &str) -> Result<Vec<Excluded>, String> {
    let docs = cilium_cmp_yaml::yaml::parse_stream_values(text).map_err(|e| e.to_string())?;
    let keys: Vec<(String, String, Option<String>, String)> = docs
        .iter()
        .filter_map(|d| {
            let api = d.get("apiVersion")?.as_str()?;
            let group = api.rsplit_once('/').map(|(g, _)| g).unwrap_or("");
            Some((
                group.to_string(),
                d.get("kind")?.as_str()?.to_string(),
                d.pointer("/metadata/namespace")
                    .and_then(Value::as_str)
                    .map(String::from),
                d.pointer("/metadata/name")?.as_str()?.to_string(),
            ))
        })
        .collect();
    let named: Vec<Named> = keys
        .iter()
        .map(|(g, k, ns, n)| Named {
            group: g,
            kind: k,
            namespace: ns.as_deref(),
            name: n,
        })
        .collect();
    Ok(excluded(filter, &named))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_exclude_the_ingress_endpoints_and_cilium_identities() {
        let f = Filter::argocd_defaults();
        assert!(f.verdict("", "Endpoints").is_some());
        assert!(f.verdict("discovery.k8s.io", "EndpointSlice").is_some());
        assert!(f.verdict("", "Service").is_none());
        assert!(f.verdict("apps", "DaemonSet").is_none());
        assert!(!identity_ignore_needed(&f));
        let found = excluded(
            &f,
            &[Named {
                group: "discovery.k8s.io",
                kind: "EndpointSlice",
                namespace: Some("kube-system"),
                name: "cilium-ingress",
            }],
        );
        assert_eq!(found.len(), 1);
        assert!(found[0].effect.contains("no backends"));
        assert!(
            found[0].fix.contains(r#"kinds: ["Endpoints"]"#),
            "{}",
            found[0].fix
        );
    }

    #[test]
    fn a_users_argocd_cm_with_globs_and_inclusions() {
        let cm = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: argocd-cm}\ndata:\n  resource.exclusions: |\n    - apiGroups: ['*.k8s.io']\n      kinds: ['*']\n      clusters: ['https://prod-*']\n";
        let f = Filter::from_argocd_cm(cm, "argocd-cm.yaml").unwrap();
        let v = f.verdict("discovery.k8s.io", "EndpointSlice").unwrap();
        assert_eq!(v.clusters, ["https://prod-*"]);
        assert!(f.verdict("", "Endpoints").is_none());
        assert!(identity_ignore_needed(&f), "no default exclusions");
        let cm =
            "data:\n  resource.inclusions: |\n    - apiGroups: ['', apps]\n      kinds: ['*']\n";
        let f = Filter::from_argocd_cm(cm, "cm").unwrap();
        assert!(f.verdict("apps", "DaemonSet").is_none());
        assert_eq!(
            f.verdict("cilium.io", "CiliumLoadBalancerIPPool")
                .unwrap()
                .reason,
            Reason::NotIncluded
        );
        assert!(
            Filter::from_argocd_cm("data:\n  resource.exclusions: '{a: 1}'\n", "cm")
                .unwrap_err()
                .contains("list")
        );
    }

    #[test]
    fn releases_before_3_0_have_only_the_core_list() {
        assert!(identity_ignore_needed(&for_release("v2.14.11").unwrap()));
        assert!(!identity_ignore_needed(&for_release("3.0.0").unwrap()));
        assert!(for_release("3.1.8")
            .unwrap()
            .verdict("", "Endpoints")
            .is_some());
        assert!(for_release("three").is_err());
    }

    #[test]
    fn globs_follow_gobwas() {
        assert!(glob("*", ""));
        assert!(glob("*.k8s.io", "discovery.k8s.io"));
        assert!(!glob("*.k8s.io", "cilium.io"));
        assert!(glob("{apps,batch}", "batch"));
        assert!(glob("c?lium.[a-z]o", "cilium.io"));
        assert!(!glob("[!c]ilium", "cilium"));
        assert!(glob("", ""));
        // Hostile patterns stay cheap.
        let stars = "a*".repeat(120) + "b";
        assert!(!glob(&stars, &"a".repeat(250)));
        assert!(!glob(&"{a,b}".repeat(40), "ab"));
    }
}
