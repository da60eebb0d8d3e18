//! A unified diff of two texts (the `diff -u` format `git apply` and `patch` read), for
//! changes shown instead of made (`fix-values --dry-run`, files it cannot edit by lines).
//!
//! Myers' algorithm (E. Myers, "An O(ND) Difference Algorithm and Its Variations", 1986): the
//! cost grows with the number of changed lines, which for an edit of a values file is a handful.

/// Lines of context around each change, as `diff -u` prints by default.
const CONTEXT: usize = 3;

/// Edits beyond this many make the diff give up on finding the shortest script: the two texts
/// are then shown as all removed and all added (still a correct patch).
const MAX_EDITS: usize = 1000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Keep,
    Remove,
    Add,
}

/// The diff of `old` into `new` with `a/NAME` and `b/NAME` headers; empty when they are equal.
pub fn unified(name: &str, old: &str, new: &str) -> String {
    if old == new {
        return String::new();
    }
    let a: Vec<&str> = old.split_inclusive('\n').collect();
    let b: Vec<&str> = new.split_inclusive('\n').collect();
    let ops = script(&a, &b);
    let mut out = format!("--- a/{name}\n+++ b/{name}\n");
    // Each op with the line numbers (0-based) it stands at in `a` and `b`.
    let mut at = Vec::with_capacity(ops.len());
    let (mut i, mut j) = (0, 0);
    for op in &ops {
        at.push((*op, i, j));
        match op {
            Op::Keep => {
                i += 1;
                j += 1;
            }
            Op::Remove => i += 1,
            Op::Add => j += 1,
        }
    }
    let changed: Vec<usize> = (0..at.len()).filter(|&k| at[k].0 != Op::Keep).collect();
    let mut k = 0;
    while k < changed.len() {
        // A hunk: changes whose context overlaps, with CONTEXT kept lines around them.
        let start = changed[k].saturating_sub(CONTEXT);
        let mut last = changed[k];
        while k + 1 < changed.len() && changed[k + 1] <= last + 2 * CONTEXT + 1 {
            k += 1;
            last = changed[k];
        }
        let end = (last + CONTEXT + 1).min(at.len());
        let hunk = &at[start..end];
        let count = |skip: Op| hunk.iter().filter(|h| h.0 != skip).count();
        let (old_len, new_len) = (count(Op::Add), count(Op::Remove));
        let old_start = if old_len == 0 {
            hunk[0].1
        } else {
            hunk[0].1 + 1
        };
        let new_start = if new_len == 0 {
            hunk[0].2
        } else {
            hunk[0].2 + 1
        };
        out.push_str(&format!(
            "@@ -{old_start},{old_len} +{new_start},{new_len} @@\n"
        ));
        for (op, i, j) in hunk {
            let (mark, line) = match op {
                Op::Keep => (' ', a[*i]),
                Op::Remove => ('-', a[*i]),
                Op::Add => ('+', b[*j]),
            };
            out.push(mark);
            out.push_str(line);
            if !line.ends_with('\n') {
                out.push_str("\n\\ No newline at end of file\n");
            }
        }
        k += 1;
    }
    out
}

/// The shortest edit script turning `a` into `b` (Myers' greedy forward search).
fn script(a: &[&str], b: &[&str]) -> Vec<Op> {
    let (n, m) = (a.len() as isize, b.len() as isize);
    let max = ((n + m) as usize).min(MAX_EDITS) as isize;
    let offset = max + 1;
    let mut v = vec![0isize; 2 * max as usize + 3];
    let mut trace: Vec<Vec<isize>> = Vec::new();
    let mut found = None;
    'outer: for d in 0..=max {
        trace.push(v.clone());
        let mut k = -d;
        while k <= d {
            let idx = (k + offset) as usize;
            let mut x = if k == -d || (k != d && v[idx - 1] < v[idx + 1]) {
                v[idx + 1]
            } else {
                v[idx - 1] + 1
            };
            let mut y = x - k;
            while x < n && y < m && a[x as usize] == b[y as usize] {
                x += 1;
                y += 1;
            }
            v[idx] = x;
            if x >= n && y >= m {
                found = Some(d);
                break 'outer;
            }
            k += 2;
        }
    }
    let Some(d_end) = found else {
        // Too many edits to search: everything removed, then everything added.
        let mut ops = vec![Op::Remove; a.len()];
        ops.extend(std::iter::repeat_n(Op::Add, b.len()));
        return ops;
    };
    // Walk back through the saved frontiers.
    let mut ops = Vec::new();
    let (mut x, mut y) = (n, m);
    for d in (1..=d_end).rev() {
        let v = &trace[d as usize];
        let k = x - y;
        let idx = (k + offset) as usize;
        let prev_k = if k == -d || (k != d && v[idx - 1] < v[idx + 1]) {
            k + 1
        } else {
            k - 1
        };
        let prev_x = v[(prev_k + offset) as usize];
        let prev_y = prev_x - prev_k;
        while x > prev_x && y > prev_y {
            ops.push(Op::Keep);
            x -= 1;
            y -= 1;
        }
        ops.push(if x == prev_x { Op::Add } else { Op::Remove });
        x = prev_x;
        y = prev_y;
    }
    while x > 0 && y > 0 {
        ops.push(Op::Keep);
        x -= 1;
        y -= 1;
    }
    ops.reverse();
    ops
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
            "--- a/f\n+++ b/f\n@@ -1,2 +1,1 @@\n a\n-b\n\\ No newline at end of file\n"
        );
        assert!(unified("f", "", "a\n").contains("@@ -0,0 +1,1 @@\n+a\n"));
    }
}

#[cfg(test)]
mod script_tests {
    use super::*;
    use proptest::prelude::*;

    fn replay(a: &[&str], b: &[&str], ops: &[Op]) -> (Vec<String>, Vec<String>) {
        let (mut i, mut j) = (0, 0);
        let (mut old, mut new) = (Vec::new(), Vec::new());
        for op in ops {
            match op {
                Op::Keep => {
                    assert_eq!(a[i], b[j]);
                    old.push(a[i].to_string());
                    new.push(b[j].to_string());
                    i += 1;
                    j += 1;
                }
                Op::Remove => {
                    old.push(a[i].to_string());
                    i += 1;
                }
                Op::Add => {
                    new.push(b[j].to_string());
                    j += 1;
                }
            }
        }
        (old, new)
    }

    proptest! {
        #[test]
        fn the_script_turns_one_into_the_other(
            a in proptest::collection::vec("[abc]", 0..12),
            b in proptest::collection::vec("[abc]", 0..12),
        ) {
            let a: Vec<&str> = a.iter().map(String::as_str).collect();
            let b: Vec<&str> = b.iter().map(String::as_str).collect();
            let ops = script(&a, &b);
            let (old, new) = replay(&a, &b, &ops);
            prop_assert_eq!(old, a.iter().map(|s| s.to_string()).collect::<Vec<_>>());
            prop_assert_eq!(new, b.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        }
    }
}
