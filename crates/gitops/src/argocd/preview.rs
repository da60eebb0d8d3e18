//! Looking at an application folder's render before anything is written: the render itself, and
//! how it stands against the folder's lock (which hash, which objects were added, removed or
//! changed). The preview (`render-folder`) and the CI check (`lock --check`) write nothing; only
//! `lock` writes, and only after the render succeeded.

use std::collections::BTreeMap;
use std::path::Path;

use super::folder::{self, LockFile, OBJECT_DIGEST_DIGITS};
use super::{GenerateError, Rendered, LOCK_FILE};
use cilium_cmp_render::output::{Keep, ObjectDigest};

/// A folder's render with what its lock says about it.
#[derive(Debug, Clone)]
pub struct Preview {
    /// The render, as `generate` would print it.
    pub rendered: Rendered,
    /// The render's object digests, as `lock` would record them.
    pub objects: BTreeMap<String, String>,
    /// The folder's lock as it is now.
    pub lock: Option<LockFile>,
    /// The lock's path relative to the repository root, for messages.
    pub lock_shown: String,
}

/// How a render stands against the folder's lock.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LockState {
    /// The folder holds no lock.
    Missing,
    /// The lock holds the render's content hash.
    Fresh,
    /// The lock holds another hash; `changes` is None when the lock records no object digests.
    Stale {
        /// Which objects differ from the lock's digests.
        changes: Option<Changes>,
    },
}

/// Objects by `Kind/namespace/name`, compared by digest.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Changes {
    /// Only in the render.
    pub added: Vec<String>,
    /// Only in the lock.
    pub removed: Vec<String>,
    /// In both, with another digest.
    pub changed: Vec<String>,
}

impl Changes {
    /// From the lock's digests `old` to the render's `new`, each list in key order.
    fn between(old: &BTreeMap<String, String>, new: &BTreeMap<String, String>) -> Changes {
        let mut c = Changes::default();
        for (k, d) in new {
            match old.get(k) {
                None => c.added.push(k.clone()),
                Some(o) if o != d => c.changed.push(k.clone()),
                Some(_) => {}
            }
        }
        c.removed = old
            .keys()
            .filter(|k| !new.contains_key(*k))
            .cloned()
            .collect();
        c
    }

    /// Whether no object differs.
    fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty() && self.changed.is_empty()
    }
}

/// Renders the folder exactly as `generate` does (without refusing a stale lock) and reads its
/// lock. Writes nothing.
pub fn preview(
    env: &BTreeMap<String, String>,
    app_dir: &Path,
    allow_unknown_keys: bool,
) -> Result<Preview, GenerateError> {
    let rendered = super::render_folder_with(env, app_dir, allow_unknown_keys, Keep::Digests)?;
    let objects = digest_map(&rendered.objects);
    let repo = &rendered.generation.repo;
    let lock = folder::read_lock_file(repo)?;
    let lock_shown = repo.shown(&repo.app_dir.join(LOCK_FILE));
    Ok(Preview {
        rendered,
        objects,
        lock,
        lock_shown,
    })
}

/// The lock's digests of a render's objects, keyed `Kind/namespace/name` (`Kind/name` when
/// cluster scoped), each the object's sha256 cut to `OBJECT_DIGEST_DIGITS` digits.
pub fn digest_map(objects: &[ObjectDigest]) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for o in objects {
        let key = if o.namespace.is_empty() {
            format!("{}/{}", o.kind, o.name)
        } else {
            format!("{}/{}/{}", o.kind, o.namespace, o.name)
        };
        let digest = format!(
            "sha256:{}",
            &o.sha256[..OBJECT_DIGEST_DIGITS.min(o.sha256.len())]
        );
        // Two objects of one kind and name would be refused by Kubernetes; keep both visible.
        let mut unique = key.clone();
        let mut n = 1;
        while out.contains_key(&unique) {
            n += 1;
            unique = format!("{key}#{n}");
        }
        out.insert(unique, digest);
    }
    out
}

impl Preview {
    /// The render's content hash (`sha256:HEX`), what `lock` records.
    pub fn hash(&self) -> &str {
        &self.rendered.hash
    }

    /// How the render stands against the lock.
    pub fn state(&self) -> LockState {
        match &self.lock {
            None => LockState::Missing,
            Some(l) if l.hash == self.rendered.hash => LockState::Fresh,
            Some(l) => LockState::Stale {
                changes: l
                    .objects
                    .as_ref()
                    .map(|old| Changes::between(old, &self.objects)),
            },
        }
    }

    /// What the render means for the lock, for a person (stderr), one fact per line.
    pub fn summary(&self) -> String {
        // The lock's path and the object names it records are the repository's.
        let lock = &cilium_cmp_yaml::escape::text(&self.lock_shown);
        let new = self.hash();
        let Some(old) = &self.lock else {
            return format!(
                "{lock}: no lock yet; the render is {new} ({} objects)\n",
                self.objects.len()
            );
        };
        if old.hash == new {
            return format!("{lock}: the render matches the lock ({new})\n");
        }
        let mut s = format!(
            "{lock}: the render differs from the lock\n  locked:   {}\n  rendered: {new}\n",
            old.hash
        );
        match old.objects.as_ref().map(|o| Changes::between(o, &self.objects)) {
            None => s.push_str(
                "  the lock records no object digests (written by an older cilium-cmp), so which objects changed is not known; `cilium-cmp lock` records them\n",
            ),
            Some(c) if c.is_empty() => s.push_str("  no object differs from the lock's digests\n"),
            Some(c) => {
                for (what, list) in [("added", &c.added), ("removed", &c.removed), ("changed", &c.changed)] {
                    if !list.is_empty() {
                        s.push_str(&format!("  {what} ({}):\n", list.len()));
                        for k in list {
                            s.push_str(&format!("    {}\n", cilium_cmp_yaml::escape::text(k)));
                        }
                    }
                }
            }
        }
        s
    }

    /// Writes the lock for this render, unless it already holds exactly that; returns whether it
    /// wrote. The file is written aside and renamed (see `write_aside`), so a failed write leaves
    /// the old lock as it was; `force` as `replace_file` takes it (`lock --force`).
    pub fn write_lock(
        &self,
        force: cilium_cmp_render::replace_file::Force,
    ) -> Result<bool, GenerateError> {
        let up_to_date = self.lock.as_ref().is_some_and(|l| {
            l.hash == self.rendered.hash && l.objects.as_ref() == Some(&self.objects)
        });
        if up_to_date {
            return Ok(false);
        }
        let repo = &self.rendered.generation.repo;
        let text = folder::lock_text(self.hash(), &self.objects);
        super::write_aside(
            &repo.app_dir.join(LOCK_FILE),
            &self.lock_shown,
            &text,
            force,
        )?;
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(entries: &[(&str, &str)]) -> BTreeMap<String, String> {
        entries
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn changes_are_split_into_added_removed_and_changed() {
        let old = map(&[("A/x", "1"), ("B/x", "2"), ("C/x", "3")]);
        let new = map(&[("B/x", "2"), ("C/x", "4"), ("D/x", "5")]);
        let c = Changes::between(&old, &new);
        assert_eq!(c.added, ["D/x"]);
        assert_eq!(c.removed, ["A/x"]);
        assert_eq!(c.changed, ["C/x"]);
        assert!(Changes::between(&old, &old).is_empty());
    }

    fn digests(data: &str, stale_stamp: &str) -> BTreeMap<String, String> {
        let objects = vec![
            serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {
                "annotations": {cilium_cmp_render::output::CONTENT_HASH_ANNOTATION: stale_stamp},
                "name": "cilium-config", "namespace": "kube-system"}, "data": {"a": data}}),
            serde_json::json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                "metadata": {"name": "cilium"}}),
        ];
        let stream = cilium_cmp_render::output::finish(objects, Keep::Digests).unwrap();
        digest_map(&stream.digests)
    }

    #[test]
    fn object_digests_ignore_the_content_hash_and_name_each_object() {
        let da = digests("b", "sha256:0");
        assert_eq!(
            da.keys().collect::<Vec<_>>(),
            ["ClusterRole/cilium", "ConfigMap/kube-system/cilium-config"]
        );
        assert!(da
            .values()
            .all(|d| d.len() == "sha256:".len() + OBJECT_DIGEST_DIGITS));
        assert_eq!(da, digests("b", "sha256:1"));
        let c = digests("c", "sha256:0");
        assert_eq!(
            Changes::between(&da, &c).changed,
            ["ConfigMap/kube-system/cilium-config"]
        );
    }

    #[test]
    fn two_objects_of_one_name_are_both_kept() {
        let o = |sha: &str| ObjectDigest {
            kind: "ConfigMap".into(),
            namespace: String::new(),
            name: "x".into(),
            sha256: sha.into(),
        };
        let m = digest_map(&[o("aaaaaaaaaaaaaaaaaaaa"), o("bbbbbbbbbbbbbbbbbbbb")]);
        assert_eq!(m["ConfigMap/x"], "sha256:aaaaaaaaaaaaaaaa");
        assert_eq!(m["ConfigMap/x#2"], "sha256:bbbbbbbbbbbbbbbb");
    }
}
