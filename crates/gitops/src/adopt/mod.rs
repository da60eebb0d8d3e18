//! `adopt-check`: before a running Cilium is handed to a cilium-cmp Application, what the first
//! sync would change, restart, create and prune, found offline from the render and dumps of the
//! live objects.
//!
//! - `live` reads the dumps and names every object;
//! - `compare` diffs the render against a live object as a server-side apply sees it;
//! - `rules` says what each difference means for what runs, and which ones the move from Helm
//!   brings by design;
//! - `report` prints the result for people and as JSON.

pub mod bounds;
pub mod compare;
pub mod defaults;
pub mod error;
pub mod helm3;
pub mod live;
pub mod managers;
pub mod ownership;
pub mod report;
pub mod rules;
pub mod startup;
pub mod tracking;
pub mod zero;

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

use compare::Difference;
use live::{Object, ObjectKey};

/// Why `adopt-check` cannot compare: a live dump (or the render) it cannot read or take apart,
/// or more than its bounds allow.
#[derive(Debug, thiserror::Error)]
pub enum AdoptError {
    /// A dump that cannot be read (missing, too large, not UTF-8), holds no objects or something
    /// that is no Kubernetes object, has a malformed `metadata.managedFields`, or takes the dumps
    /// past their bounds (`bounds`): shown as `FILE: reason`.
    #[error("{file}: {message}")]
    Live {
        /// The dump as the user named it (`stdin` for `-`, `the render` for the render), with
        /// `:LINE:COLUMN` where text is not UTF-8.
        file: String,
        /// What is wrong, naming the object or document when one is at fault.
        message: String,
    },
    /// A live dump that is not YAML: shown as `FILE:LINE:COLUMN: reason`, the span where the
    /// reader stopped.
    #[error("{}:{}:{}: {message}", span.source, span.line, span.column)]
    LiveSyntax {
        /// Where the reader stopped, in the dump's text.
        span: Box<cilium_cmp_yaml::diagnostic::Span>,
        /// The YAML reader's reason.
        message: String,
    },
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
    /// The render is a subset of the live object, but the live object holds fields the render
    /// lacks that are no defaults and that the sync does not remove (another manager owns
    /// them): they stay, unseen by Argo CD's diff.
    LeftBehind,
    /// Differs outside any pod template.
    Changed,
    /// Differs in a pod template: the workload's pods restart.
    RestartsPods,
    /// Only in the render.
    Created,
    /// Only live, and Argo CD tracks it: a sync with prune deletes it.
    Pruned,
    /// Only live, the old release's (Helm's annotations, the chart's labels, a manifest export),
    /// but Argo CD does not track it: no sync deletes it, it stays in the cluster unmanaged.
    Unmanaged,
    /// Only live, and nothing says it belongs to the release: the switch leaves it alone.
    NotInRelease,
}

impl Class {
    /// Every class, in the order the reports count them.
    pub(crate) const ALL: [Class; 10] = [
        Class::Identical,
        Class::ToolingOnly,
        Class::NoRuntimeEffect,
        Class::LeftBehind,
        Class::RestartsPods,
        Class::Changed,
        Class::Created,
        Class::Pruned,
        Class::Unmanaged,
        Class::NotInRelease,
    ];

    /// The name in `--output json`.
    pub fn id(self) -> &'static str {
        match self {
            Class::Identical => "identical",
            Class::ToolingOnly => "tooling-only",
            Class::NoRuntimeEffect => "no-runtime-effect",
            Class::LeftBehind => "left-behind",
            Class::RestartsPods => "restarts-pods",
            Class::Changed => "changed",
            Class::Created => "created",
            Class::Pruned => "pruned",
            Class::Unmanaged => "unmanaged",
            Class::NotInRelease => "not-in-release",
        }
    }
}

/// A difference and what it means.
#[derive(Debug, Clone)]
pub struct Finding {
    /// The field and its two values.
    pub difference: Difference,
    /// In the workload's pod template.
    pub restarts: bool,
    /// Why the move from Helm brings it, when it does by design.
    pub expected: Option<String>,
    /// A field only the live object has that the first sync removes: the manager whose
    /// ownership Argo CD takes over and then drops (`removed_note`).
    pub removed_by: Option<String>,
}

/// What the first sync does to one object, and why.
#[derive(Debug, Clone)]
pub struct ObjectReport {
    /// The object.
    pub key: ObjectKey,
    /// Its `apiVersion`: the render's, or the live object's when only the live side has it.
    pub api_version: String,
    /// What the sync does to it.
    pub class: Class,
    /// The differences that decide the class, at most `bounds::MAX_RECORDED_DIFFERENCES` (the
    /// rest are counted in `notes`).
    pub findings: Vec<Finding>,
    /// Paths only the live object has (defaults, tooling), for `ToolingOnly`; bounded.
    pub live_only: Vec<String>,
    /// Why a live-only object is pruned or left alone.
    pub notes: Vec<String>,
    /// For an object only one side has: why the move from Helm brings that by design.
    pub expected: Option<String>,
    /// For a changed ConfigMap: the workloads that read it only at start, and when they see it.
    pub read_at_start: Vec<startup::Reader>,
    /// Fields only the live object has that no sync removes and that are no defaults.
    pub left_behind: Vec<LeftBehind>,
    /// Fields only the live object has that a running controller owns (`managers`): the
    /// cluster's own state, which the sync keeps, as it must.
    pub kept: Vec<LeftBehind>,
}

/// A field only the live object has, which stays after the sync although the render lacks it.
#[derive(Debug, Clone)]
pub struct LeftBehind {
    /// Where the field is.
    pub path: compare::Path,
    /// Its live value.
    pub value: serde_json::Value,
    /// Who keeps it there: the managers that own it, or why ownership is not known.
    pub owners: Vec<String>,
    /// How to have the first sync remove it, when Argo CD can (`managers::migration_fix`).
    pub fix: Option<String>,
}

/// What Argo CD's sync does that decides the fate of fields only the live object has.
#[derive(Debug, Clone, Default)]
pub struct SyncModel {
    /// The manager whose `Update` ownership Argo CD's client-side-apply migration moves to its
    /// own manager on a server-side apply sync (None: no migration, or not a server-side sync).
    pub migrated_manager: Option<String>,
    /// How Argo CD tells the objects it tracks, the only ones it prunes.
    pub tracking: tracking::Tracking,
    /// The Application being synced (`--argocd-application`), when known: an object another
    /// Application tracks is not this one's to prune.
    pub application: Option<String>,
}

/// Argo CD's field manager for its server-side applies (and the name its client-side syncs
/// write with): argoproj/argo-cd `common/common.go` `ArgoCDSSAManager`, passed by
/// argoproj/gitops-engine `pkg/sync/sync_context.go` `applyObject` for both kinds of apply.
pub const ARGOCD_MANAGER: &str = "argocd-controller";

/// The result of `check`: every object of the render and of the dumps, with what the first sync
/// does to it.
#[derive(Debug, Clone)]
pub struct Report {
    /// Ordered by class (as `Class` lists them), then by object.
    pub objects: Vec<ObjectReport>,
    /// Objects in the render.
    pub rendered: usize,
    /// Objects read from the dumps, one dumped twice counted twice.
    pub live: usize,
    /// The dumps, as the user named them.
    pub live_sources: Vec<String>,
    /// The release namespace, given to objects that name none.
    pub namespace: String,
    /// What the reader should know about the input (a dump without managedFields, ...).
    pub warnings: Vec<String>,
    /// The live release was rendered by Helm 3, and these nulls render differently under Helm 4
    /// (`helm3`; set by the caller that has the render's inputs).
    pub helm3: Option<helm3::Helm3Install>,
}

impl Report {
    /// Objects of that class.
    pub(crate) fn count(&self, class: Class) -> usize {
        self.objects.iter().filter(|o| o.class == class).count()
    }

    /// Whether the switch would restart pods, prune objects or leave fields behind (exit
    /// status 3), whatever the cause: a restart the move brings by design ("expected") restarts
    /// the pods all the same. Objects that stay unmanaged and fields a controller keeps are not
    /// counted: nothing happens to them.
    pub fn disruptive(&self) -> bool {
        self.count(Class::RestartsPods) + self.count(Class::Pruned) > 0
            || self.objects.iter().any(|o| !o.left_behind.is_empty())
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
    check_with(
        render_text,
        dumps,
        namespace,
        release,
        &SyncModel::default(),
    )
}

/// `check`, knowing what Argo CD's sync does (its client-side-apply migration).
pub fn check_with(
    render_text: &str,
    dumps: &[(String, String)],
    namespace: &str,
    release: &str,
    sync: &SyncModel,
) -> Result<Report, AdoptError> {
    let rendered = live::objects_of("the render", render_text, namespace)?;
    // One budget for all dumps: what they may build once parsed (`bounds`).
    let mut budget = bounds::Budget::default();
    let mut live_objects = Vec::new();
    for (shown, text) in dumps {
        live_objects.extend(live::objects_within(shown, text, namespace, &mut budget)?);
        if live_objects.len() > bounds::MAX_LIVE_OBJECTS {
            return Err(AdoptError::Live {
                file: shown.clone(),
                message: format!(
                    "the live dumps hold more than {} objects together; adopt-check compares at \
                     most that many (dump only the chart's kinds in the release namespace)",
                    bounds::thousands(bounds::MAX_LIVE_OBJECTS)
                ),
            });
        }
    }
    let rendered_count = rendered.len();
    let live_count = live_objects.len();
    // A dump of several namespaces (`kubectl get -A`) holds objects of other releases and of
    // nobody's: those outside the namespaces the render uses are judged only by what marks them
    // as this release's (Argo CD's tracking, Helm's release annotations), never refused.
    let render_namespaces: BTreeSet<String> = rendered
        .iter()
        .filter_map(|o| o.key.namespace.clone())
        .chain([namespace.to_string()])
        .collect();
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
    let certgen = rules::Certgen::of(&rendered);
    let mut objects = Vec::new();
    let mut render_keys = BTreeSet::new();
    let mut steps = bounds::MAX_OWNERSHIP_STEPS;
    for r in &rendered {
        render_keys.insert(r.key.clone());
        let mut report = match live.get(&r.key) {
            Some(l) => compare_pair(r, l, sync, &mut steps)?,
            None => {
                let mut o = alone(r, Class::Created, None);
                o.expected = rules::expected_alone(r, true, false, &certgen);
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
        let elsewhere = l
            .key
            .namespace
            .as_ref()
            .filter(|ns| !render_namespaces.contains(*ns));
        objects.push(live_only(
            l,
            elsewhere.map(String::as_str),
            release,
            namespace,
            sync,
            &certgen,
        ));
    }
    objects.sort_by(|a, b| a.class.cmp(&b.class).then_with(|| a.key.cmp(&b.key)));
    let mut warnings = Vec::new();
    let blind: Vec<String> = live
        .values()
        .filter(|o| {
            o.from_cluster()
                && render_keys.contains(&o.key)
                && o.value.pointer("/metadata/managedFields").is_none()
        })
        .map(|o| o.source.clone())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    if !blind.is_empty() {
        warnings.push(format!(
            "{} carries no metadata.managedFields (kubectl get -o yaml leaves them out unless \
             --show-managed-fields is given): who owns a field only the live object has is not \
             known, so such a field counts as left behind unless its value is the API server's \
             default. Dump again with kubectl get --show-managed-fields -o yaml",
            blind.join(", ")
        ));
    }
    Ok(Report {
        objects,
        rendered: rendered_count,
        live: live_count,
        live_sources: dumps.iter().map(|(s, _)| s.clone()).collect(),
        namespace: namespace.to_string(),
        warnings,
        helm3: None,
    })
}

/// What the first sync does to an object only the live side has: Argo CD prunes it only when it
/// tracks it (`tracking`); the old release's other objects stay in the cluster, unmanaged;
/// anything else is left alone. `elsewhere`: the object is in a namespace the render does not
/// use (a dump of several namespaces), where only Argo CD's tracking and Helm's release
/// annotations mark it as the release's.
fn live_only(
    l: &Object,
    elsewhere: Option<&str>,
    release: &str,
    namespace: &str,
    sync: &SyncModel,
    certgen: &rules::Certgen,
) -> ObjectReport {
    if let Some(owner) = rules::owner(&l.value) {
        return alone(
            l,
            Class::NotInRelease,
            Some(format!(
                "made by its controller {owner}; an apply never prunes it"
            )),
        );
    }
    if let Some((app, how)) = sync.tracking.tracked_by(l) {
        if sync.application.as_deref().is_some_and(|a| a != app) {
            return alone(
                l,
                Class::NotInRelease,
                Some(format!(
                    "Argo CD Application {app:?} tracks it ({how}), not the Application synced \
                         here: this sync leaves it alone"
                )),
            );
        }
        let mut r = alone(
            l,
            Class::Pruned,
            Some(format!(
                "Argo CD Application {app:?} tracks it ({how}): a sync with prune deletes it"
            )),
        );
        r.expected = rules::expected_alone(l, false, true, certgen);
        return r;
    }
    let marker = match elsewhere {
        None => rules::release_marker(l, release, namespace),
        Some(_) => rules::helm_release_marker(l, release, namespace),
    };
    match marker {
        Some(why) => {
            let mut r = alone(
                l,
                Class::Unmanaged,
                Some(format!(
                    "{why}, but Argo CD does not track it ({}): no sync deletes it, it stays in \
                     the cluster unmanaged; to delete it: {}{}",
                    sync.tracking.untracked(),
                    rules::delete_command(&l.key),
                    if l.from_cluster() {
                        ""
                    } else {
                        " (a manifest export shows Argo CD's tracking only when it is one of Argo \
                         CD's, such as argocd app manifests --source live; a cluster dump tells \
                         for sure)"
                    }
                )),
            );
            r.expected = rules::expected_alone(l, false, false, certgen);
            r
        }
        None => alone(
            l,
            Class::NotInRelease,
            Some(match elsewhere {
                Some(ns) => format!(
                    "in namespace {ns:?}, which the render does not use, and neither Argo CD's \
                         tracking nor Helm's release annotations mark it as the release's: left alone"
                ),
                None => "nothing marks it as the release's (no Helm release annotation, Argo CD \
                     tracking or chart label); the switch leaves it alone"
                    .into(),
            }),
        ),
    }
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
        left_behind: Vec::new(),
        kept: Vec::new(),
    }
}

/// The differences of one object that count for its class: all of them decide whether something
/// restarts or everything is inert; the first `MAX_RECORDED_DIFFERENCES` are kept, the rest
/// counted by the list they are in.
struct Recorded {
    findings: Vec<Finding>,
    omitted: compare::Omitted,
    any_restarts: bool,
    all_inert: bool,
}

impl Recorded {
    fn add(
        &mut self,
        at: &[compare::Step],
        restarts: bool,
        inert: bool,
        finding: impl FnOnce() -> Finding,
    ) {
        self.any_restarts |= restarts;
        self.all_inert &= inert;
        if self.findings.len() < bounds::MAX_RECORDED_DIFFERENCES {
            self.findings.push(finding());
        } else {
            self.omitted.count(at);
        }
    }
}

fn compare_pair(
    r: &Object,
    l: &Object,
    sync: &SyncModel,
    steps: &mut usize,
) -> Result<ObjectReport, AdoptError> {
    let kind = r.key.kind.as_str();
    let render = secret_as_stored(kind, &r.value);
    let template = rules::pod_template(kind);
    let in_template = |path: &[compare::Step]| template.is_some_and(|t| starts_with(path, t));
    let mut recorded = Recorded {
        findings: Vec::new(),
        omitted: compare::Omitted::default(),
        any_restarts: false,
        all_inert: true,
    };
    compare::each_difference(&render, &l.value, &|_| false, &mut |d| {
        // A keyed list item only the live object has is a field like any other: whether the
        // sync keeps it depends on who owns it (`fate`, below).
        if d.render.is_none() && matches!(d.path.last(), Some(compare::Step::Item(_))) {
            return;
        }
        let path = compare::Path(d.path.to_vec());
        // A `false` or `0` of a plain field is never stored (`zero`): its absence is no change.
        if d.live.is_none()
            && d.render.is_some_and(zero::is_zero)
            && zero::classify(&r.key.group, kind, &path) == Some(zero::Zero::Dropped)
        {
            return;
        }
        let restarts = in_template(d.path);
        recorded.add(d.path, restarts, rules::is_inert(kind, &path), || Finding {
            restarts,
            expected: rules::expected_difference(&path),
            difference: Difference {
                path: path.clone(),
                render: d.render.cloned(),
                live: d.live.cloned(),
            },
            removed_by: None,
        });
    });
    let entries = if l.from_cluster() {
        ownership::entries(&l.value).map_err(|message| AdoptError::Live {
            file: l.source.clone(),
            message: format!("{}: {message}", l.key),
        })?
    } else {
        None
    };
    let mut live_only = Vec::new();
    let mut left_behind = Vec::new();
    let mut kept = Vec::new();
    let mut left_behind_omitted = compare::Omitted::default();
    let mut harmless = 0usize;
    let mut failed: Option<String> = None;
    let items = defaults::ItemIndex::default();
    // What only the live object has, the cluster's and the tools' own fields set aside.
    let tooling = |path: &[compare::Step]| rules::is_tooling(path, &render);
    compare::each_difference(&l.value, &render, &tooling, &mut |d| {
        // Only what the live object has and the render lacks; a value both have and that
        // differs is already a finding.
        if failed.is_some()
            || d.live
                .is_some_and(|v| !matches!(v, serde_json::Value::Null))
        {
            return;
        }
        let Some(value) = d.render else {
            return;
        };
        let path = compare::Path(d.path.to_vec());
        let fate = match fate(
            kind,
            &path,
            value,
            l,
            entries.as_deref(),
            sync,
            &items,
            steps,
        ) {
            Ok(f) => f,
            Err(why) => {
                failed = Some(why);
                return;
            }
        };
        match fate {
            Fate::Stays => {
                harmless += 1;
                if live_only.len() < MAX_LIVE_ONLY_PATHS {
                    live_only.push(path.to_string());
                }
            }
            Fate::LeftBehind(owners, fix) => {
                if left_behind.len() < bounds::MAX_RECORDED_DIFFERENCES {
                    left_behind.push(LeftBehind {
                        path,
                        value: value.clone(),
                        owners,
                        fix,
                    });
                } else {
                    left_behind_omitted.count(d.path);
                }
            }
            Fate::Kept(owners) => {
                harmless += 1;
                if kept.len() < MAX_LIVE_ONLY_PATHS {
                    kept.push(LeftBehind {
                        path,
                        value: value.clone(),
                        owners,
                        fix: None,
                    });
                }
            }
            Fate::Removed(manager) => {
                let restarts = in_template(d.path);
                recorded.add(d.path, restarts, rules::is_inert(kind, &path), || Finding {
                    restarts,
                    expected: None,
                    difference: compare::Difference {
                        path: path.clone(),
                        render: None,
                        live: Some(value.clone()),
                    },
                    removed_by: Some(manager),
                });
            }
        }
    });
    if let Some(why) = failed {
        return Err(AdoptError::Live {
            file: l.source.clone(),
            message: format!("{}: {why}", l.key),
        });
    }
    if harmless > MAX_LIVE_ONLY_PATHS {
        live_only.push(format!("… {} more", harmless - MAX_LIVE_ONLY_PATHS));
    }
    let Recorded {
        findings,
        omitted,
        any_restarts,
        all_inert,
    } = recorded;
    let class = if findings.is_empty() && omitted.is_empty() {
        if !left_behind.is_empty() {
            Class::LeftBehind
        } else if harmless == 0 && kept.is_empty() {
            Class::Identical
        } else {
            Class::ToolingOnly
        }
    } else if any_restarts {
        Class::RestartsPods
    } else if all_inert {
        Class::NoRuntimeEffect
    } else {
        Class::Changed
    };
    let mut notes = omitted.lines();
    notes.extend(
        left_behind_omitted
            .lines()
            .into_iter()
            .map(|l| format!("{l}, left behind")),
    );
    Ok(ObjectReport {
        key: r.key.clone(),
        api_version: r.api_version.clone(),
        class,
        findings,
        live_only,
        notes,
        expected: None,
        read_at_start: Vec::new(),
        left_behind,
        kept,
    })
}

/// `compare::Path::starts_with` for a borrowed path.
fn starts_with(path: &[compare::Step], keys: &[&str]) -> bool {
    path.len() >= keys.len()
        && path
            .iter()
            .zip(keys)
            .all(|(s, k)| matches!(s, compare::Step::Key(x) if x == k))
}

/// What the first sync does with a field only the live object has.
enum Fate {
    /// It stays and is harmless: the API server filled it in (nobody owns it, or its value is
    /// the default the API server would fill in again).
    Stays,
    /// It stays and is no default: these owners keep it (or ownership is unknown); and how to
    /// have the sync take it over, when Argo CD can.
    LeftBehind(Vec<String>, Option<String>),
    /// It stays because a running controller owns it (`managers`): the cluster's own state.
    Kept(Vec<String>),
    /// The sync removes it: Argo CD's manager ends up its sole owner and does not apply it.
    Removed(String),
}

/// The fate of the live-only field `path` (value `value`) of `live`, from its owners
/// (`ownership`), the API server's defaults (`defaults`) and what Argo CD's sync takes over.
#[allow(clippy::too_many_arguments)]
fn fate<'a>(
    kind: &str,
    path: &compare::Path,
    value: &serde_json::Value,
    live: &'a Object,
    entries: Option<&[ownership::Entry]>,
    sync: &SyncModel,
    items: &defaults::ItemIndex<'a>,
    steps: &mut usize,
) -> Result<Fate, String> {
    if live.from_cluster() && defaults::assigned_by_server(kind, path) {
        return Ok(Fate::Stays);
    }
    // `kubectl rollout restart` stamps the pod template (kubernetes/kubectl
    // `pkg/polymorphichelpers/objectrestarter.go`); kept, it keeps the pods as they run.
    if rules::pod_template(kind).is_some_and(|t| {
        path.starts_with(t)
            && path.key_at(t.len()) == Some("metadata")
            && path.key_at(t.len() + 1) == Some("annotations")
            && path.key_at(t.len() + 2) == Some("kubectl.kubernetes.io/restartedAt")
    }) {
        return Ok(Fate::Stays);
    }
    if !live.from_cluster() {
        // An export of the release's manifest holds only what the old tool sent.
        return Ok(Fate::LeftBehind(
            vec![format!(
                "the old release ({} is a manifest export: it holds what the release wrote, no ownership)",
                live.source
            )],
            None,
        ));
    }
    let is_default = || {
        defaults::default_at_with(kind, path, &live.value, items).is_some_and(|d| {
            compare::differences(&d, value).is_empty() && compare::differences(value, &d).is_empty()
        })
    };
    let Some(entries) = entries else {
        return Ok(if is_default() {
            Fate::Stays
        } else {
            Fate::LeftBehind(
                vec![
                    "unknown: the dump has no managedFields (kubectl get --show-managed-fields)"
                        .into(),
                ],
                None,
            )
        });
    };
    let owners = ownership::owners(entries, path, value, steps)?;
    if owners.is_empty() || is_default() {
        return Ok(Fate::Stays);
    }
    let taken_over = |e: &ownership::Entry| {
        (e.manager == ARGOCD_MANAGER && e.operation == ownership::Operation::Apply)
            || (e.operation == ownership::Operation::Update
                && sync.migrated_manager.as_deref() == Some(e.manager.as_str()))
    };
    let staying: Vec<&ownership::Entry> =
        owners.iter().copied().filter(|e| !taken_over(e)).collect();
    let named = |e: &ownership::Entry| {
        format!(
            "{} ({})",
            e.manager,
            match e.operation {
                ownership::Operation::Apply => "Apply",
                ownership::Operation::Update => "Update",
            }
        )
    };
    if !staying.is_empty()
        && staying
            .iter()
            .all(|e| managers::role(&e.manager) == managers::Role::Controller)
    {
        return Ok(Fate::Kept(staying.iter().map(|e| named(e)).collect()));
    }
    if staying.is_empty() {
        let migrated = owners
            .iter()
            .find(|e| e.operation == ownership::Operation::Update)
            .map(|e| e.manager.clone());
        return Ok(Fate::Removed(match migrated {
            Some(m) => format!("migrated from manager {m}"),
            None => format!("owned only by {ARGOCD_MANAGER}, which no longer applies it"),
        }));
    }
    // Argo CD's migration takes over one manager's Update entry: name it when that is the only
    // deploy tool keeping the field.
    let tools: Vec<&&ownership::Entry> = staying
        .iter()
        .filter(|e| managers::role(&e.manager) == managers::Role::DeployTool)
        .collect();
    let fix = match tools.as_slice() {
        [e] if e.operation == ownership::Operation::Update => managers::migration_fix(&e.manager),
        _ => None,
    };
    Ok(Fate::LeftBehind(
        staying.iter().map(|e| named(e)).collect(),
        fix,
    ))
}

/// The API server stores a Secret's `stringData` base64-encoded under `data`; compare the render
/// in that form.
fn secret_as_stored<'a>(kind: &str, v: &'a serde_json::Value) -> Cow<'a, serde_json::Value> {
    if kind != "Secret" || v.get("stringData").is_none() {
        return Cow::Borrowed(v);
    }
    let mut v = v.clone();
    let Some(map) = v.as_object_mut() else {
        return Cow::Owned(v);
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
                    serde_json::Value::String(cilium_cmp_render::tmpl::b64enc(text.as_bytes())),
                );
            }
        }
    }
    Cow::Owned(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object(class: Class, expected: bool) -> ObjectReport {
        ObjectReport {
            key: ObjectKey {
                group: "apps".into(),
                kind: "DaemonSet".into(),
                namespace: Some("kube-system".into()),
                name: "cilium".into(),
            },
            api_version: "apps/v1".into(),
            class,
            findings: vec![Finding {
                difference: Difference {
                    path: compare::Path(vec![compare::Step::Key("spec".into())]),
                    render: Some(serde_json::json!(1)),
                    live: Some(serde_json::json!(2)),
                },
                restarts: class == Class::RestartsPods,
                expected: expected.then(|| "the move brings it".to_string()),
                removed_by: None,
            }],
            live_only: Vec::new(),
            notes: Vec::new(),
            expected: None,
            read_at_start: Vec::new(),
            left_behind: Vec::new(),
            kept: Vec::new(),
        }
    }

    fn report(objects: Vec<ObjectReport>) -> Report {
        Report {
            objects,
            rendered: 1,
            live: 1,
            live_sources: vec!["live.yaml".into()],
            namespace: "kube-system".into(),
            warnings: Vec::new(),
            helm3: None,
        }
    }

    /// Exit 3 means something restarts or is pruned, whatever the cause: a restart the move
    /// brings by design rolls the pods like any other. Objects that stay unmanaged do not count.
    #[test]
    fn an_expected_restart_is_disruptive_and_unmanaged_objects_are_not() {
        assert!(report(vec![object(Class::RestartsPods, true)]).disruptive());
        assert!(report(vec![object(Class::RestartsPods, false)]).disruptive());
        assert!(report(vec![object(Class::Pruned, true)]).disruptive());
        assert!(!report(vec![object(Class::Unmanaged, true)]).disruptive());
        assert!(!report(vec![object(Class::Changed, false)]).disruptive());
        let text = report::human(&report(vec![object(Class::RestartsPods, true)]));
        assert!(text.contains("the pods restart all the same"), "{text}");
    }
}
