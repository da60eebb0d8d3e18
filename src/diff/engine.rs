//! Two renders compared object by object with the comparison `adopt-check` uses
//! (`adopt::compare`), run in both directions: what the new render sets that the old one does not
//! hold (added or changed fields), and what the old render set that the new one drops. Argo CD
//! applies the new render over objects it applied from the old one, so a field the new render no
//! longer names is removed by that apply (server-side apply removes fields its manager no longer
//! sends; client-side apply removes fields the last-applied annotation named:
//! https://kubernetes.io/docs/reference/using-api/server-side-apply/#field-management and
//! https://kubernetes.io/docs/tasks/manage-kubernetes-objects/declarative-config/#how-apply-calculates-differences-and-merges-changes).

use std::collections::BTreeMap;

use serde_json::Value;

use crate::adopt::compare::{self, Path, Step};
use crate::adopt::live::{self, Object, ObjectKey};
use crate::adopt::rules;

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
    pub path: Path,
    pub before: Option<Value>,
    pub after: Option<Value>,
    /// In the workload's pod template (`rules::pod_template`).
    pub in_pod_template: bool,
    /// Metadata nothing running reads (`rules::is_inert`).
    pub inert: bool,
}

#[derive(Debug, Clone)]
pub struct ObjectDiff {
    pub key: ObjectKey,
    pub api_version: String,
    pub change: Change,
    pub fields: Vec<FieldChange>,
}

/// Both renders, by object, for the rules that look at more than one object (RBAC bindings,
/// which workload reads which ConfigMap).
#[derive(Debug, Clone, Default)]
pub struct Renders {
    pub old: BTreeMap<ObjectKey, Object>,
    pub new: BTreeMap<ObjectKey, Object>,
}

impl Renders {
    /// Reads both streams; the content-hash annotation is left out (it changes with any object,
    /// and nothing in the cluster reads it).
    pub fn read(old: &str, new: &str, namespace: &str) -> Result<Renders, String> {
        let read = |label: &str, text: &str| -> Result<BTreeMap<ObjectKey, Object>, String> {
            let mut out = BTreeMap::new();
            // A folder that does not exist on one side renders nothing there.
            if text.trim().is_empty() {
                return Ok(out);
            }
            for mut o in live::objects_of(label, text, namespace).map_err(|e| e.to_string())? {
                crate::output::remove_content_hash(&mut o.value);
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
                let fields = field_changes(&key.kind, &old.value, &new.value);
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

/// The fields of one object that differ between the renders.
pub fn field_changes(kind: &str, old: &Value, new: &Value) -> Vec<FieldChange> {
    // Set or changed by the new render (and list items it drops, which the comparison reports).
    let mut changes: Vec<(Path, Option<Value>, Option<Value>)> = compare::differences(new, old)
        .into_iter()
        .map(|d| (d.path, d.live, d.render))
        .collect();
    // Dropped by the new render: what the old one set and the new one has nothing at.
    for d in compare::differences(old, new) {
        if d.live.is_some() {
            continue;
        }
        if changes
            .iter()
            .any(|(p, _, _)| is_prefix(&p.0, &d.path.0) || is_prefix(&d.path.0, &p.0))
        {
            continue;
        }
        changes.push((d.path, d.render, None));
    }
    let template = rules::pod_template(kind);
    changes
        .into_iter()
        .map(|(path, before, after)| FieldChange {
            in_pod_template: template.is_some_and(|t| path.starts_with(t)),
            inert: rules::is_inert(kind, &path),
            path,
            before,
            after,
        })
        .collect()
}

fn is_prefix(short: &[Step], long: &[Step]) -> bool {
    short.len() <= long.len() && short.iter().zip(long).all(|(a, b)| a == b)
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
        let c = field_changes("ConfigMap", &old, &new);
        assert_eq!(
            shown(&c),
            [
                "data.a Some(String(\"1\")) -> Some(String(\"9\"))",
                "data.c None -> Some(String(\"3\"))",
                "data.b Some(String(\"2\")) -> None",
            ]
        );
        assert!(field_changes("ConfigMap", &old, &old).is_empty());
    }

    #[test]
    fn a_dropped_container_is_one_change_not_one_per_field() {
        let old = json!({"spec": {"template": {"spec": {"containers": [
            {"name": "a", "image": "x"}, {"name": "b", "image": "y", "args": ["--z"]}]}}}});
        let new =
            json!({"spec": {"template": {"spec": {"containers": [{"name": "a", "image": "x"}]}}}});
        let c = field_changes("DaemonSet", &old, &new);
        assert_eq!(c.len(), 1, "{:?}", shown(&c));
        assert_eq!(
            c[0].path.to_string(),
            "spec.template.spec.containers[\"b\"]"
        );
        assert!(c[0].in_pod_template);
        assert!(c[0].after.is_none());
    }

    #[test]
    fn metadata_of_inert_kinds_is_marked() {
        let c = field_changes(
            "ConfigMap",
            &json!({"metadata": {"labels": {"a": "1"}}}),
            &json!({"metadata": {"labels": {"a": "2"}}}),
        );
        assert!(c[0].inert && !c[0].in_pod_template);
    }
}
