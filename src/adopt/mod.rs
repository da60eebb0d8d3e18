//! `adopt-check`: before a running Cilium is handed to a cilium-cmp Application, what the first
//! sync would change, restart, create and prune, found offline from the render and dumps of the
//! live objects.
//!
//! - `live` reads the dumps and names every object;
//! - `compare` diffs the render against a live object as a server-side apply sees it;
//! - `rules` says what each difference means for what runs, and which ones the move from Helm
//!   brings by design;
//! - `report` prints the result for people and as JSON.

pub mod compare;
pub mod live;
pub mod quantity;
pub mod report;
pub mod rules;
pub mod startup;

use std::collections::{BTreeMap, BTreeSet};

use compare::Difference;
use live::{Object, ObjectKey};

#[derive(Debug, thiserror::Error)]
pub enum AdoptError {
    #[error("{file}: {message}")]
    Live { file: String, message: String },
    #[error("{0}")]
    Input(String),
}

/// What the first sync does to one object, from nothing to the most disruptive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Class {
    /// The same object, up to what the cluster and the applying tools write into it.
    Identical,
    /// The render is a subset of the live object: it differs only in fields the API server
    /// defaulted or tools added, which an apply leaves in place.
    ToolingOnly,
    /// Differs only in metadata nothing running reads (see `rules::is_inert`).
    NoRuntimeEffect,
    /// Differs outside any pod template.
    Changed,
    /// Differs in a pod template: the workload's pods restart.
    RestartsPods,
    /// Only in the render.
    Created,
    /// Only live, and it belongs to the release.
    Pruned,
    /// Only live, and nothing says it belongs to the release: the switch leaves it alone.
    NotInRelease,
}

impl Class {
    pub const ALL: [Class; 8] = [
        Class::Identical,
        Class::ToolingOnly,
        Class::NoRuntimeEffect,
        Class::RestartsPods,
        Class::Changed,
        Class::Created,
        Class::Pruned,
        Class::NotInRelease,
    ];

    /// The name in `--output json`.
    pub fn id(self) -> &'static str {
        match self {
            Class::Identical => "identical",
            Class::ToolingOnly => "tooling-only",
            Class::NoRuntimeEffect => "no-runtime-effect",
            Class::RestartsPods => "restarts-pods",
            Class::Changed => "changed",
            Class::Created => "created",
            Class::Pruned => "pruned",
            Class::NotInRelease => "not-in-release",
        }
    }
}

/// A difference and what it means.
#[derive(Debug, Clone)]
pub struct Finding {
    pub difference: Difference,
    /// In the workload's pod template.
    pub restarts: bool,
    /// Why the move from Helm brings it, when it does by design.
    pub expected: Option<String>,
}

#[derive(Debug, Clone)]
pub struct ObjectReport {
    pub key: ObjectKey,
    pub api_version: String,
    pub class: Class,
    pub findings: Vec<Finding>,
    /// Paths only the live object has (defaults, tooling), for `ToolingOnly`; bounded.
    pub live_only: Vec<String>,
    /// Why a live-only object is pruned or left alone.
    pub notes: Vec<String>,
    /// For an object only one side has: why the move from Helm brings that by design.
    pub expected: Option<String>,
    /// For a changed ConfigMap: the workloads that read it only at start, and when they see it.
    pub read_at_start: Vec<startup::Reader>,
}

#[derive(Debug, Clone)]
pub struct Report {
    pub objects: Vec<ObjectReport>,
    pub rendered: usize,
    pub live: usize,
    pub live_sources: Vec<String>,
    pub namespace: String,
}

impl Report {
    pub fn count(&self, class: Class) -> usize {
        self.objects.iter().filter(|o| o.class == class).count()
    }

    /// Whether the switch would restart pods or prune objects (exit status 3).
    pub fn disruptive(&self) -> bool {
        self.count(Class::RestartsPods) + self.count(Class::Pruned) > 0
    }
}

/// Paths listed per object for what only the live side has; the rest is counted.
const MAX_LIVE_ONLY_PATHS: usize = 20;

/// Compares a render (a cilium-cmp stream) with live dumps `(shown name, text)`.
pub fn check(
    render_text: &str,
    dumps: &[(String, String)],
    namespace: &str,
    release: &str,
) -> Result<Report, AdoptError> {
    let rendered = live::objects_of("the render", render_text, namespace)?;
    let mut live_objects = Vec::new();
    for (shown, text) in dumps {
        live_objects.extend(live::objects_of(shown, text, namespace)?);
    }
    let rendered_count = rendered.len();
    let live_count = live_objects.len();
    let render_namespaces: BTreeSet<&str> = rendered
        .iter()
        .filter_map(|o| o.key.namespace.as_deref())
        .chain([namespace])
        .collect();
    for o in &live_objects {
        if let Some(ns) = o.key.namespace.as_deref() {
            if !render_namespaces.contains(ns) {
                return Err(AdoptError::Live {
                    file: o.source.clone(),
                    message: format!(
                        "{} is in namespace {}, but the release namespace is {} and the render has \
                         nothing in {0}: dump only the release namespace (kubectl get -n {}), or \
                         pass the release's namespace with --namespace",
                        crate::limits::quoted(&o.key.to_string()),
                        crate::limits::quoted(ns),
                        crate::limits::quoted(namespace),
                        namespace
                    ),
                });
            }
        }
    }
    // An object dumped twice (a manifest export and a cluster read): what the cluster returned
    // is what runs.
    let mut live: BTreeMap<ObjectKey, Object> = BTreeMap::new();
    for mut o in live_objects {
        if let Some(old) = live.get_mut(&o.key) {
            if old.from_cluster() && !o.from_cluster() {
                old.in_manifest = o.in_manifest.take();
                continue;
            }
            o.in_manifest = o.in_manifest.or(old.in_manifest.take());
        }
        live.insert(o.key.clone(), o);
    }
    let mut objects = Vec::new();
    let mut render_keys = BTreeSet::new();
    for r in &rendered {
        render_keys.insert(r.key.clone());
        let mut report = match live.get(&r.key) {
            Some(l) => compare_pair(r, l),
            None => {
                let mut o = alone(r, Class::Created, None);
                o.expected = rules::expected_alone(r, true);
                o
            }
        };
        if r.key.kind == "ConfigMap" && report.class == Class::Changed {
            report.read_at_start = startup::readers(&r.key, &rendered);
        }
        objects.push(report);
    }
    for (key, l) in &live {
        if render_keys.contains(key) {
            continue;
        }
        let report = if let Some(owner) = rules::owner(&l.value) {
            alone(
                l,
                Class::NotInRelease,
                Some(format!(
                    "made by its controller {owner}; an apply never prunes it"
                )),
            )
        } else {
            match rules::release_marker(l, release, namespace) {
                Some(why) => {
                    let mut r = alone(l, Class::Pruned, Some(why));
                    r.expected = rules::expected_alone(l, false);
                    r
                }
                None => alone(
                    l,
                    Class::NotInRelease,
                    Some("nothing marks it as the release's (no Helm release annotation, Argo CD tracking or chart label); the switch leaves it alone".into()),
                ),
            }
        };
        objects.push(report);
    }
    objects.sort_by(|a, b| a.class.cmp(&b.class).then_with(|| a.key.cmp(&b.key)));
    Ok(Report {
        objects,
        rendered: rendered_count,
        live: live_count,
        live_sources: dumps.iter().map(|(s, _)| s.clone()).collect(),
        namespace: namespace.to_string(),
    })
}

fn alone(o: &Object, class: Class, note: Option<String>) -> ObjectReport {
    ObjectReport {
        key: o.key.clone(),
        api_version: o.api_version.clone(),
        class,
        findings: Vec::new(),
        live_only: Vec::new(),
        notes: note.into_iter().collect(),
        expected: None,
        read_at_start: Vec::new(),
    }
}

fn compare_pair(r: &Object, l: &Object) -> ObjectReport {
    let kind = r.key.kind.as_str();
    let render = secret_as_stored(kind, &r.value);
    let findings: Vec<Finding> = compare::differences(&render, &l.value)
        .into_iter()
        .map(|d| Finding {
            restarts: rules::pod_template(kind).is_some_and(|t| d.path.starts_with(t)),
            expected: rules::expected_difference(kind, &d.path),
            difference: d,
        })
        .collect();
    let mut live_only = Vec::new();
    let class = if findings.is_empty() {
        let stripped = rules::without_tooling(&l.value, &render);
        let extra = compare::differences(&stripped, &render);
        if extra.is_empty() {
            Class::Identical
        } else {
            live_only = extra
                .iter()
                .take(MAX_LIVE_ONLY_PATHS)
                .map(|d| d.path.to_string())
                .collect();
            if extra.len() > MAX_LIVE_ONLY_PATHS {
                live_only.push(format!("… {} more", extra.len() - MAX_LIVE_ONLY_PATHS));
            }
            Class::ToolingOnly
        }
    } else if findings.iter().any(|f| f.restarts) {
        Class::RestartsPods
    } else if findings
        .iter()
        .all(|f| rules::is_inert(kind, &f.difference.path))
    {
        Class::NoRuntimeEffect
    } else {
        Class::Changed
    };
    ObjectReport {
        key: r.key.clone(),
        api_version: r.api_version.clone(),
        class,
        findings,
        live_only,
        notes: Vec::new(),
        expected: None,
        read_at_start: Vec::new(),
    }
}

/// The API server stores a Secret's `stringData` base64-encoded under `data`; compare the render
/// in that form.
fn secret_as_stored(kind: &str, v: &serde_json::Value) -> serde_json::Value {
    let mut v = v.clone();
    if kind != "Secret" {
        return v;
    }
    let Some(map) = v.as_object_mut() else {
        return v;
    };
    if let Some(serde_json::Value::Object(plain)) = map.remove("stringData") {
        let data = map
            .entry("data")
            .or_insert_with(|| serde_json::Value::Object(Default::default()));
        if let Some(data) = data.as_object_mut() {
            for (k, s) in plain {
                let text = match s {
                    serde_json::Value::String(s) => s,
                    other => other.to_string(),
                };
                data.insert(
                    k,
                    serde_json::Value::String(crate::tmpl::b64enc(text.as_bytes())),
                );
            }
        }
    }
    v
}
