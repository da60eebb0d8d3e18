//! Two renders compared object by object with the comparison `adopt-check` uses
//! (`adopt::compare`), run in both directions: what the new render sets that the old one does not
//! hold (added or changed fields), and what the old render set that the new one drops. Argo CD
//! applies the new render over objects it applied from the old one, so a field the new render no
//! longer names is removed by that apply (server-side apply removes fields its manager no longer
//! sends; client-side apply removes fields the last-applied annotation named:
//! <https://kubernetes.io/docs/reference/using-api/server-side-apply/#field-management> and
//! <https://kubernetes.io/docs/tasks/manage-kubernetes-objects/declarative-config/#how-apply-calculates-differences-and-merges-changes>).

use std::collections::{BTreeMap, HashSet};
use std::hash::{BuildHasher, Hash, Hasher, RandomState};

use serde_json::Value;

use super::SideStream;
use crate::adopt::bounds;
use crate::adopt::compare::{self, Path, Step};
use crate::adopt::live::{self, Object, ObjectKey};
use crate::adopt::rules;
use crate::adopt::zero;

/// What happens to one object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Change {
    /// Only the new render has it: the sync creates it.
    Created,
    /// Only the old render has it: Argo CD prunes it (with pruning on; otherwise it stays,
    /// out of sync, until pruned by hand).
    Deleted,
    /// Both have it and some field differs.
    Changed,
}

impl Change {
    /// Its name in the reports (`change` in `--output json`).
    pub fn id(self) -> &'static str {
        match self {
            Change::Created => "created",
            Change::Deleted => "deleted",
            Change::Changed => "changed",
        }
    }
}

/// One field that differs: its value before (old render) and after (new render); None where a
/// side does not set it.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldChange {
    /// Where the field is in the object; past the recorded bound, a place whose last step is
    /// `Step::More`, counting the differences below it that are not listed.
    pub path: Path,
    /// The old render's value there.
    pub before: Option<Value>,
    /// The new render's value there.
    pub after: Option<Value>,
    /// In the workload's pod template (`rules::pod_template`).
    pub in_pod_template: bool,
    /// Metadata nothing running reads (`rules::is_inert`).
    pub inert: bool,
}

impl FieldChange {
    /// The change as one report line: `path: before → after`, or for the count of the changes
    /// past the recorded bound (a path ending in `Step::More`) the path alone, which says it.
    pub fn line(&self) -> String {
        let path = cilium_cmp_yaml::escape::message(&self.path.to_string());
        if matches!(self.path.0.last(), Some(Step::More(_))) {
            return path;
        }
        let (before, after) = super::short_pair(self.before.as_ref(), self.after.as_ref());
        format!("{path}: {before} → {after}")
    }
}

/// One object the two renders do not hold alike.
#[derive(Debug, Clone)]
pub struct ObjectDiff {
    /// Which object: group, kind, namespace and name.
    pub key: ObjectKey,
    /// Its `apiVersion` in the new render, or in the old one for a deleted object.
    pub api_version: String,
    /// Whether the sync creates, deletes or changes it.
    pub change: Change,
    /// The fields that differ, for a changed object; empty for a created or deleted one.
    pub fields: Vec<FieldChange>,
}

/// Both renders, by object, for the rules that look at more than one object (RBAC bindings,
/// which workload reads which ConfigMap).
#[derive(Debug, Clone, Default)]
pub struct Renders {
    /// The old render's objects.
    pub old: BTreeMap<ObjectKey, Object>,
    /// The new render's objects.
    pub new: BTreeMap<ObjectKey, Object>,
}

impl Renders {
    /// Reads both streams; the content-hash annotation is left out (it changes with any object,
    /// and nothing in the cluster reads it), and whole numbers are integers, as the API server
    /// prints them (`empty_strings::integers_as_integers`).
    pub fn read(old: &str, new: &str, namespace: &str) -> Result<Renders, String> {
        Renders::of_sides(
            SideStream::Text(old.to_string()),
            SideStream::Text(new.to_string()),
            namespace,
        )
    }

    /// `read`, for sides that may already be objects.
    pub fn of_sides(old: SideStream, new: SideStream, namespace: &str) -> Result<Renders, String> {
        let read = |label: &str, side: SideStream| -> Result<BTreeMap<ObjectKey, Object>, String> {
            let objects = match side {
                // A folder that does not exist on one side renders nothing there.
                SideStream::Text(text) if text.trim().is_empty() => Vec::new(),
                SideStream::Text(text) => {
                    live::objects_of(label, &text, namespace).map_err(|e| e.to_string())?
                }
                // Held to the list bounds when they were kept (`repo::render_inputs`).
                SideStream::Objects(docs) => live::objects_from_documents(label, docs, namespace)
                    .map_err(|e| e.to_string())?,
            };
            let mut out = BTreeMap::new();
            for mut o in objects {
                cilium_cmp_render::output::remove_content_hash(&mut o.value);
                super::empty_strings::integers_as_integers(&mut o.value);
                out.insert(o.key.clone(), o);
            }
            Ok(out)
        };
        Ok(Renders {
            old: read("the base render", old)?,
            new: read("the new render", new)?,
        })
    }
}

/// Every object that differs, in the new render's key order (created and changed), then the
/// deleted ones; plus how many objects are the same.
pub fn compare_objects(r: &Renders) -> (Vec<ObjectDiff>, usize) {
    let mut out = Vec::new();
    let mut same = 0;
    for (key, new) in &r.new {
        match r.old.get(key) {
            None => out.push(ObjectDiff {
                key: key.clone(),
                api_version: new.api_version.clone(),
                change: Change::Created,
                fields: Vec::new(),
            }),
            Some(old) => {
                let fields = field_changes(&key.group, &key.kind, &old.value, &new.value);
                if fields.is_empty() {
                    same += 1;
                } else {
                    out.push(ObjectDiff {
                        key: key.clone(),
                        api_version: new.api_version.clone(),
                        change: Change::Changed,
                        fields,
                    });
                }
            }
        }
    }
    for (key, old) in &r.old {
        if !r.new.contains_key(key) {
            out.push(ObjectDiff {
                key: key.clone(),
                api_version: old.api_version.clone(),
                change: Change::Deleted,
                fields: Vec::new(),
            });
        }
    }
    (out, same)
}

/// The fields of one object that differ between the renders: at most
/// `bounds::MAX_RECORDED_DIFFERENCES` of them, then one entry per place the rest are in, whose
/// path ends in `Step::More` with their count (`… 99,000 more differences, not listed`).
///
/// Linear in both objects: each tree is walked once per direction (`compare::each_difference`),
/// and a dropped field is checked against what the first direction already reported through
/// hashes of its path's prefixes, not by scanning that report.
///
/// An empty string that comes or goes where the API server keeps it (a ConfigMap entry, an
/// annotation, any field of a custom resource) is a change too (`empty_strings`).
pub fn field_changes(group: &str, kind: &str, old: &Value, new: &Value) -> Vec<FieldChange> {
    let template = rules::pod_template(kind);
    let mut out = Changes {
        kind,
        template,
        fields: Vec::new(),
        omitted: compare::Omitted::default(),
    };
    let hashing = PathHashing::new();
    // Paths of list items the first direction reports whole (an item only the old render has):
    // what the second direction finds below them is that same change.
    let mut items_reported: HashSet<u128> = HashSet::new();
    // Set or changed by the new render (and list items it drops, which the comparison reports).
    // A zero value of a plain typed field (`adopt::zero`) is never stored: its coming or going
    // is no change the cluster sees.
    let dropped_zero = |path: &[Step], v: Option<&Value>| {
        v.is_some_and(zero::is_zero)
            && zero::classify(group, kind, &Path(path.to_vec())) == Some(zero::Zero::Dropped)
    };
    compare::each_difference(new, old, &|_| false, &mut |d| {
        if d.live.is_none() && dropped_zero(d.path, d.render) {
            return;
        }
        if matches!(d.path.last(), Some(Step::Item(_) | Step::Index(_))) {
            items_reported.insert(hashing.of(d.path));
        }
        out.push(d.path, d.live, d.render);
    });
    // Dropped by the new render: what the old one set and the new one has nothing at. A list
    // item written twice (the chart repeats env vars) can give the same path twice: once is
    // enough.
    let mut dropped: HashSet<u128> = HashSet::new();
    compare::each_difference(old, new, &|_| false, &mut |d| {
        // A null in the new render sets nothing (the API server decodes it as absent): what the
        // old one set there is dropped, as when the field is missing.
        if d.live.is_some_and(|v| !v.is_null()) || dropped_zero(d.path, d.render) {
            return;
        }
        let prefixes = hashing.prefixes(d.path);
        if prefixes
            .iter()
            .any(|h| items_reported.contains(h) || dropped.contains(h))
        {
            return;
        }
        if d.path.iter().any(|s| matches!(s, Step::Item(_))) {
            if let Some(h) = prefixes.last() {
                dropped.insert(*h);
            }
        }
        out.push(d.path, d.render, None);
    });
    for (path, before, after) in super::empty_strings::kept_empty_strings(group, kind, old, new) {
        // The comparison may come to report these itself: once is enough.
        if !out.fields.iter().any(|f| f.path.0 == path) {
            out.push(&path, before.as_ref(), after.as_ref());
        }
    }
    out.finish()
}

struct Changes<'k> {
    kind: &'k str,
    template: Option<&'static [&'static str]>,
    fields: Vec<FieldChange>,
    omitted: compare::Omitted,
}

impl Changes<'_> {
    fn change(&self, path: Path, before: Option<Value>, after: Option<Value>) -> FieldChange {
        FieldChange {
            in_pod_template: self.template.is_some_and(|t| path.starts_with(t)),
            inert: rules::is_inert(self.kind, &path),
            path,
            before,
            after,
        }
    }

    fn push(&mut self, path: &[Step], before: Option<&Value>, after: Option<&Value>) {
        if self.fields.len() < bounds::MAX_RECORDED_DIFFERENCES {
            let c = self.change(Path(path.to_vec()), before.cloned(), after.cloned());
            self.fields.push(c);
        } else {
            self.omitted.count(path);
        }
    }

    fn finish(mut self) -> Vec<FieldChange> {
        let omitted = std::mem::take(&mut self.omitted);
        for (place, n) in &omitted.places {
            let mut path = place.clone();
            path.0.push(Step::More(*n));
            let c = self.change(path, None, None);
            self.fields.push(c);
        }
        if omitted.elsewhere > 0 {
            let c = self.change(Path(vec![Step::More(omitted.elsewhere)]), None, None);
            self.fields.push(c);
        }
        self.fields
    }
}

/// 128-bit hashes of paths under two keys chosen at random for the run, so that no input can be
/// written to collide with another path.
struct PathHashing(RandomState, RandomState);

impl PathHashing {
    fn new() -> Self {
        PathHashing(RandomState::new(), RandomState::new())
    }

    fn of(&self, path: &[Step]) -> u128 {
        self.prefixes(path).last().copied().unwrap_or_default()
    }

    /// The hash of every prefix of `path` (the shortest first), in one pass.
    fn prefixes(&self, path: &[Step]) -> Vec<u128> {
        let (mut a, mut b) = (self.0.build_hasher(), self.1.build_hasher());
        path.iter()
            .map(|step| {
                step.hash(&mut a);
                step.hash(&mut b);
                (u128::from(a.clone().finish()) << 64) | u128::from(b.clone().finish())
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn shown(c: &[FieldChange]) -> Vec<String> {
        c.iter()
            .map(|f| format!("{} {:?} -> {:?}", f.path, f.before, f.after))
            .collect()
    }

    #[test]
    fn fields_added_changed_and_dropped_are_all_seen() {
        let old = json!({"data": {"a": "1", "b": "2"}});
        let new = json!({"data": {"a": "9", "c": "3"}});
        let c = field_changes("", "ConfigMap", &old, &new);
        assert_eq!(
            shown(&c),
            [
                "data.a Some(String(\"1\")) -> Some(String(\"9\"))",
                "data.c None -> Some(String(\"3\"))",
                "data.b Some(String(\"2\")) -> None",
            ]
        );
        assert!(field_changes("", "ConfigMap", &old, &old).is_empty());
    }

    #[test]
    fn a_dropped_container_is_one_change_not_one_per_field() {
        let old = json!({"spec": {"template": {"spec": {"containers": [
            {"name": "a", "image": "x"}, {"name": "b", "image": "y", "args": ["--z"]}]}}}});
        let new =
            json!({"spec": {"template": {"spec": {"containers": [{"name": "a", "image": "x"}]}}}});
        let c = field_changes("apps", "DaemonSet", &old, &new);
        assert_eq!(c.len(), 1, "{:?}", shown(&c));
        assert_eq!(
            c[0].path.to_string(),
            "spec.template.spec.containers[\"b\"]"
        );
        assert!(c[0].in_pod_template);
        assert!(c[0].after.is_none());
    }

    #[test]
    fn a_map_the_new_render_leaves_null_is_dropped() {
        let old = json!({"spec": {"template": {"metadata": {"annotations": {"a": "1"}}}}});
        let new = json!({"spec": {"template": {"metadata": {"annotations": null}}}});
        let c = field_changes("apps", "Deployment", &old, &new);
        assert_eq!(c.len(), 1, "{:?}", shown(&c));
        assert!(c[0].in_pod_template && c[0].after.is_none());
    }

    #[test]
    fn metadata_of_inert_kinds_is_marked() {
        let c = field_changes(
            "",
            "ConfigMap",
            &json!({"metadata": {"labels": {"a": "1"}}}),
            &json!({"metadata": {"labels": {"a": "2"}}}),
        );
        assert!(c[0].inert && !c[0].in_pod_template);
    }
}
