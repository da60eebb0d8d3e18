//! A scratch folder for one test, removed on drop: a `tempfile::TempDir`, so that its name is
//! unpredictable and the folder is made with mode 0700 (`mkdtemp`), as the untrusted-repository
//! tests expect of anything the test harness itself makes in the shared temporary directory.

use std::path::{Path, PathBuf};

/// `.0` is the folder's path; the `TempDir` beside it removes the folder when dropped.
pub struct Scratch(
    pub PathBuf,
    #[expect(dead_code, reason = "held for its drop, which removes the folder")] tempfile::TempDir,
);

impl Scratch {
    pub fn new(tag: &str) -> Scratch {
        Scratch::inside(&std::env::temp_dir(), tag)
    }

    /// A scratch folder made inside `parent` (itself removed with `parent` too).
    pub fn inside(parent: &Path, tag: &str) -> Scratch {
        let dir = tempfile::Builder::new()
            .prefix(&format!("cilium-cmp-test-{tag}-"))
            .tempdir_in(parent)
            .expect("scratch dir");
        Scratch(dir.path().to_path_buf(), dir)
    }

    /// Writes `text` at `rel` below the folder (making its parents) and returns the path.
    pub fn write(&self, rel: &str, text: &str) -> PathBuf {
        let p = self.0.join(rel);
        std::fs::create_dir_all(p.parent().expect("a file below the folder")).unwrap();
        std::fs::write(&p, text).unwrap();
        p
    }
}
