//! Reading a render's documents back into objects, with a memory of the documents a process has
//! seen more than once.
//!
//! The commands over many folders (`lock --check`, `diff --base`, adopt-check's two renders)
//! render one chart again and again with values that differ in a few entries, so most rendered
//! documents are byte for byte the ones an earlier render printed: reading their YAML again was
//! the largest part of a folder's cost (about 11 of 31 million instructions, ARCHITECTURE.md).
//! A document's objects depend on its text alone, so a document already read is copied from
//! here instead. Only a text seen twice is kept (one render's documents are never kept, so a
//! single render, what the Argo CD plugin runs, pays one hash per document and no copies), and
//! what is kept is bounded, so memory stays bounded on any fleet.

use std::collections::hash_map::DefaultHasher;
use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};
use std::sync::Mutex;

use serde_json::Value as Json;

use super::helm::{EngineError, Manifest};

/// The most document text kept, in bytes: about five renders of the Cilium chart's largest
/// documents (the objects kept take about six times their text).
const MAX_KEPT_BYTES: usize = 1 << 20;
/// The most documents remembered as seen once, before that memory starts afresh.
const MAX_SEEN: usize = 1 << 16;

/// What one process has read of its renders' documents.
#[derive(Default)]
pub struct ReadBack {
    inner: Mutex<Memory>,
}

#[derive(Default)]
struct Memory {
    /// The hashes of the texts read once.
    seen: HashSet<u64>,
    /// The texts read at least twice, with their objects.
    kept: HashMap<Box<str>, Vec<Json>>,
    kept_bytes: usize,
}

impl ReadBack {
    /// The manifests as JSON objects, read with the project's YAML 1.1 reader; empty documents
    /// are skipped.
    pub fn objects(&self, manifests: &[Manifest]) -> Result<Vec<Json>, EngineError> {
        let mut out = Vec::new();
        for m in manifests {
            out.extend(self.document(m)?);
        }
        Ok(out)
    }

    fn document(&self, m: &Manifest) -> Result<Vec<Json>, EngineError> {
        let hash = {
            let mut h = DefaultHasher::new();
            m.text.hash(&mut h);
            h.finish()
        };
        // A poisoned lock only loses the memory: the document is read as if never seen.
        let seen_before = match self.inner.lock() {
            Ok(memory) => {
                if let Some(objects) = memory.kept.get(m.text.as_str()) {
                    return Ok(objects.clone());
                }
                memory.seen.contains(&hash)
            }
            Err(_) => false,
        };
        let objects = read(m)?;
        if let Ok(mut memory) = self.inner.lock() {
            memory.remember(hash, seen_before, &m.text, &objects);
        }
        Ok(objects)
    }
}

impl Memory {
    fn remember(&mut self, hash: u64, seen_before: bool, text: &str, objects: &[Json]) {
        if !seen_before {
            if self.seen.len() >= MAX_SEEN {
                self.seen.clear();
            }
            self.seen.insert(hash);
        } else if self.kept_bytes + text.len() <= MAX_KEPT_BYTES && !self.kept.contains_key(text) {
            self.kept_bytes += text.len();
            self.kept.insert(text.into(), objects.to_vec());
        }
    }
}

/// One document's objects (none for an empty or null one).
fn read(m: &Manifest) -> Result<Vec<Json>, EngineError> {
    let docs = cilium_cmp_yaml::yaml::read::parse_stream_values(&m.text).map_err(|e| {
        EngineError::Chart {
            path: m.source.clone(),
            message: format!(
                "the rendered document is not YAML: {}",
                e.in_file(&m.source)
            ),
        }
    })?;
    Ok(docs.into_iter().filter(|d| !d.is_null()).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest(text: &str) -> Manifest {
        Manifest {
            source: "cilium/templates/t.yaml".into(),
            text: text.into(),
        }
    }

    #[test]
    fn a_document_is_kept_only_from_its_second_reading_and_always_reads_the_same() {
        let r = ReadBack::default();
        let once = manifest("kind: A\nb: [1, 2]\n");
        let twice = r.objects(std::slice::from_ref(&once)).unwrap();
        assert!(r.inner.lock().unwrap().kept.is_empty());
        assert_eq!(r.objects(std::slice::from_ref(&once)).unwrap(), twice);
        assert_eq!(r.inner.lock().unwrap().kept.len(), 1);
        // The third reading is the copy, and equal to a fresh reading.
        assert_eq!(r.objects(&[once]).unwrap(), twice);
        assert_eq!(twice, read(&manifest("kind: A\nb: [1, 2]\n")).unwrap());
        assert_eq!(twice[0]["kind"], "A");
    }

    #[test]
    fn a_document_that_is_not_yaml_is_refused_every_time_and_never_kept() {
        let r = ReadBack::default();
        let bad = manifest("a: [\n");
        for _ in 0..3 {
            let e = r.objects(std::slice::from_ref(&bad)).unwrap_err();
            assert!(
                matches!(e, EngineError::Chart { ref path, .. } if path == "cilium/templates/t.yaml")
            );
        }
        assert!(r.inner.lock().unwrap().kept.is_empty());
    }

    #[test]
    fn what_is_kept_stays_within_its_bound() {
        let r = ReadBack::default();
        let big = "x".repeat(MAX_KEPT_BYTES / 3);
        for i in 0..5 {
            let m = manifest(&format!("kind: K{i}\nv: {big}\n"));
            r.objects(std::slice::from_ref(&m)).unwrap();
            r.objects(&[m]).unwrap();
        }
        let memory = r.inner.lock().unwrap();
        assert!(memory.kept_bytes <= MAX_KEPT_BYTES);
        assert_eq!(memory.kept.len(), 2);
    }
}
