//! A unified diff of two texts (the `diff -u` format `git apply` and `patch` read), for
//! changes shown instead of made (`fix-values --dry-run`, files it cannot edit by lines).
//!
//! The `similar` crate computes and prints it: Myers' algorithm (E. Myers, "An O(ND) Difference
//! Algorithm and Its Variations", 1986), whose cost grows with the number of changed lines, and
//! hunk headers as GNU diff writes them (a range of one line is written without its length,
//! `@@ -3 +3 @@`; GNU diffutils manual, "Detailed Description of Unified Format").

use std::time::Duration;

/// Lines of context around each change, as `diff -u` prints by default.
const CONTEXT: usize = 3;

/// How long the search for the shortest script may take. A values file is at most 1 MiB
/// (`limits::MAX_FILE_BYTES`), but one rewritten throughout could make Myers' search quadratic;
/// past this, `similar` gives the rest of the texts as removed and added, still a correct patch.
/// An edit of a real values file (a handful of lines) takes microseconds.
const SEARCH_TIME: Duration = Duration::from_secs(1);

/// The diff of `old` into `new` with `a/NAME` and `b/NAME` headers; empty when they are equal.
pub fn unified(name: &str, old: &str, new: &str) -> String {
    if old == new {
        return String::new();
    }
    similar::TextDiff::configure()
        .algorithm(similar::Algorithm::Myers)
        .timeout(SEARCH_TIME)
        .diff_lines(old, new)
        .unified_diff()
        .context_radius(CONTEXT)
        .header(&format!("a/{name}"), &format!("b/{name}"))
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_removed_line_is_one_hunk_with_context() {
        let old = "a\nb\nc\nd\ne\nf\ng\nh\n";
        let new = "a\nb\nc\nd\nf\ng\nh\n";
        assert_eq!(
            unified("v.yaml", old, new),
            "--- a/v.yaml\n+++ b/v.yaml\n@@ -2,7 +2,6 @@\n b\n c\n d\n-e\n f\n g\n h\n"
        );
        assert_eq!(unified("v.yaml", old, old), "");
    }

    #[test]
    fn distant_changes_are_separate_hunks() {
        let old: String = (0..20).map(|i| format!("l{i}\n")).collect();
        let new = old.replace("l1\n", "x\n").replace("l18\n", "");
        let d = unified("f", &old, &new);
        assert_eq!(d.matches("@@ -").count(), 2, "{d}");
        assert!(d.contains("-l1\n+x\n"), "{d}");
        assert!(d.contains("@@ -16,5 +16,4 @@"), "{d}");
    }

    #[test]
    fn a_missing_final_newline_is_marked() {
        let d = unified("f", "a\nb", "a\n");
        assert_eq!(
            d,
            "--- a/f\n+++ b/f\n@@ -1,2 +1 @@\n a\n-b\n\\ No newline at end of file\n"
        );
        assert!(unified("f", "", "a\n").contains("@@ -0,0 +1 @@\n+a\n"));
    }

    /// What users see must apply: `git apply` (which checks every hunk's counts and context
    /// strictly) turns the old text into the new one, for hunks of every shape.
    #[test]
    fn git_apply_turns_old_into_new() {
        let many: String = (0..40).map(|i| format!("k{i}: {i}\n")).collect();
        let cases: Vec<(String, String)> = vec![
            ("a\nb\nc\n".into(), "a\nB\nc\n".into()),
            ("".into(), "x: 1\n".into()),
            ("x: 1\n".into(), "".into()),
            ("a\nb".into(), "a\nb\n".into()),
            ("a\nb\n".into(), "a\nc".into()),
            (
                many.clone(),
                many.replace("k3: 3\n", "")
                    .replace("k30: 30\n", "k30: 31\nnew: 1\n"),
            ),
            (
                many.clone(),
                many.lines().rev().map(|l| format!("{l}\n")).collect(),
            ),
        ];
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("values.yaml");
        for (old, new) in cases {
            std::fs::write(&file, &old).unwrap();
            let patch = unified("values.yaml", &old, &new);
            let patch_file = dir.path().join("p.diff");
            std::fs::write(&patch_file, &patch).unwrap();
            let out = std::process::Command::new("git")
                .current_dir(dir.path())
                .arg("apply")
                .arg(&patch_file)
                .output()
                .expect("git runs");
            assert!(
                out.status.success(),
                "{patch}\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
            assert_eq!(std::fs::read_to_string(&file).unwrap(), new, "{patch}");
        }
    }
}
