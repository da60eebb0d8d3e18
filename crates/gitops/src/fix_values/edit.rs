//! Edits of a values file by whole lines: a key goes with its block (the key's line and the
//! more-indented lines below it), a renamed key moves under its new name. Every other line
//! stays byte for byte, so comments, order, quoting and indentation survive.

use super::locate::{Entry, Layout};

/// The file's text as lines, each with its line ending.
struct Lines<'a> {
    lines: Vec<&'a str>,
    /// `\r\n` where the file uses it, for the lines this edit writes.
    eol: &'static str,
}

impl<'a> Lines<'a> {
    fn new(text: &'a str) -> Lines<'a> {
        Lines {
            lines: text.split_inclusive('\n').collect(),
            eol: if text.contains("\r\n") { "\r\n" } else { "\n" },
        }
    }

    /// The 1-based line `n` (empty past the end).
    fn get(&self, n: usize) -> &'a str {
        n.checked_sub(1)
            .and_then(|i| self.lines.get(i))
            .copied()
            .unwrap_or("")
    }

    /// The first and last line (1-based, inclusive) of an entry's block: its key's line, every
    /// following line indented deeper than the key, and the lines its value's text reaches.
    /// Comments and blank lines after the block's last line belong to what follows.
    fn block(&self, e: &Entry) -> (usize, usize) {
        let mut last = e.line.max(e.value_end);
        for n in e.line + 1..=self.lines.len() {
            let line = self.get(n);
            let body = line.trim_start_matches(' ');
            let rest = body.trim();
            if rest.is_empty() || rest.starts_with('#') {
                continue;
            }
            if line.len() - body.len() > e.column {
                last = last.max(n);
            } else if n > last {
                break;
            }
        }
        (e.line, last.min(self.lines.len().max(e.line)))
    }

    /// Whether the key starts its line (no list dash, `?` or document marker before it).
    fn key_starts_line(&self, e: &Entry) -> bool {
        let line = self.get(e.line);
        line.chars().take(e.column).all(|c| c == ' ') && line.chars().count() > e.column
    }
}

/// One key to remove, and the comment to leave in its place (for a likely typo).
pub struct Removal {
    pub keys: Vec<String>,
    pub comments: Vec<String>,
    /// The line of the occurrence to remove, for a key the file writes more than once.
    pub line: Option<usize>,
}

/// Removes the keys' blocks, writing each comment where its key was (at the key's indentation).
/// Fails, naming the key, where a key does not start its own line in block style.
pub fn remove(text: &str, layout: &Layout, removals: &[Removal]) -> Result<String, String> {
    let lines = Lines::new(text);
    // First line → (last line, column, comments).
    let mut by_first: std::collections::BTreeMap<usize, (usize, usize, Vec<&str>)> =
        Default::default();
    for r in removals {
        let e = match r.line {
            Some(line) => layout
                .earlier
                .get(&r.keys)
                .and_then(|all| all.iter().find(|e| e.line == line))
                .ok_or_else(|| format!("no key {} at line {line}", r.keys.join(".")))?,
            None => entry(layout, &r.keys)?,
        };
        if !lines.key_starts_line(e) {
            return Err(shares_line(&r.keys));
        }
        let (first, last) = lines.block(e);
        let slot = by_first
            .entry(first)
            .or_insert_with(|| (last, e.column, Vec::new()));
        slot.0 = slot.0.max(last);
        slot.2.extend(r.comments.iter().map(String::as_str));
    }
    // A block inside another one (never expected: removed keys are topmost) goes with it.
    let mut merged: Vec<(usize, usize, usize, Vec<&str>)> = Vec::new();
    for (first, (last, column, comments)) in by_first {
        match merged.last_mut() {
            Some(prev) if first <= prev.1 => {
                prev.1 = prev.1.max(last);
                prev.3.extend(comments);
            }
            _ => merged.push((first, last, column, comments)),
        }
    }
    let ranges = merged;
    let mut out = String::with_capacity(text.len());
    let mut next = ranges.iter().peekable();
    let mut n = 1;
    while n <= lines.lines.len() {
        if let Some((first, last, column, comments)) = next.peek().copied() {
            if *first == n {
                for c in comments {
                    out.push_str(&" ".repeat(*column));
                    out.push_str("# ");
                    out.push_str(c);
                    out.push_str(lines.eol);
                }
                n = last + 1;
                next.next();
                continue;
            }
        }
        out.push_str(lines.get(n));
        n += 1;
    }
    Ok(out)
}

/// Moves the value at `old` to `new` (a rename), keeping its text: its block is cut and written
/// under the new name, in the old place when the parent is the same, else at the end of the
/// deepest map of the new path the file already has (with the keys it lacks). Returns the new
/// text and whether `new` was already written (then the old value is only removed: the file's
/// own value for the new name wins, as it does in the newer release).
pub fn rename(
    text: &str,
    layout: &Layout,
    old: &[String],
    new: &[String],
) -> Result<(String, bool), String> {
    let lines = Lines::new(text);
    let e_old = entry(layout, old)?;
    if !lines.key_starts_line(e_old) {
        return Err(shares_line(old));
    }
    let (first, last) = lines.block(e_old);
    if layout.entries.contains_key(new) {
        let out = remove(
            text,
            layout,
            &[Removal {
                keys: old.to_vec(),
                comments: Vec::new(),
                line: None,
            }],
        )?;
        return Ok((out, true));
    }
    // The deepest map on the new path that the file has; it must take keys by lines.
    let mut have = 0;
    for i in (1..new.len()).rev() {
        if let Some(e) = layout.entries.get(&new[..i]) {
            if !e.block_map {
                return Err(format!(
                    "{} is not written as a block mapping (`key:` lines below it), so {} cannot be added to it by lines",
                    new[..i].join("."),
                    new.join(".")
                ));
            }
            have = i;
            break;
        }
    }
    let parent_column = |path: &[String]| layout.entries.get(path).map(|e| e.column);
    let step = match parent_column(&old[..old.len() - 1]) {
        Some(c) if old.len() > 1 && e_old.column > c => e_old.column - c,
        _ => 2,
    };
    let first_column = layout
        .entries
        .iter()
        .find(|(p, _)| p.len() == have + 1 && p[..have] == new[..have])
        .map(|(_, e)| e.column)
        .or_else(|| parent_column(&new[..have]).map(|c| c + step))
        .unwrap_or(0);
    let tail = &new[have..];
    let mut moved = String::new();
    for (t, key) in tail[..tail.len() - 1].iter().enumerate() {
        moved.push_str(&" ".repeat(first_column + t * step));
        moved.push_str(key);
        moved.push(':');
        moved.push_str(lines.eol);
    }
    let column = first_column + (tail.len() - 1) * step;
    let key_line = lines.get(e_old.line);
    let after_key = key_line
        .char_indices()
        .nth(e_old.key_end)
        .map_or("", |(b, _)| &key_line[b..]);
    moved.push_str(&" ".repeat(column));
    moved.push_str(&tail[tail.len() - 1]);
    moved.push_str(after_key);
    for n in first + 1..=last {
        moved.push_str(&reindent(lines.get(n), e_old.column, column));
    }
    if !moved.ends_with('\n') {
        moved.push_str(lines.eol);
    }
    let in_place = have == old.len() - 1 && new[..have] == old[..have];
    let insert_after = if in_place {
        first - 1
    } else if have == 0 {
        lines.lines.len()
    } else {
        let e = entry(layout, &new[..have])?;
        lines.block(e).1
    };
    let mut out = String::with_capacity(text.len() + moved.len());
    if insert_after == 0 {
        out.push_str(&moved);
    }
    for n in 1..=lines.lines.len() {
        if !(first..=last).contains(&n) {
            out.push_str(lines.get(n));
        }
        if n == insert_after {
            if !out.is_empty() && !out.ends_with('\n') {
                out.push_str(lines.eol);
            }
            out.push_str(&moved);
        }
    }
    Ok((out, false))
}

/// A line of a moved block, shifted from below `from` to below `to`.
fn reindent(line: &str, from: usize, to: usize) -> String {
    if to >= from {
        if line.trim().is_empty() {
            return line.to_string();
        }
        format!("{}{line}", " ".repeat(to - from))
    } else {
        let spaces = line.len() - line.trim_start_matches(' ').len();
        line[spaces.min(from - to)..].to_string()
    }
}

fn entry<'l>(layout: &'l Layout, keys: &[String]) -> Result<&'l Entry, String> {
    layout.entries.get(keys).ok_or_else(|| {
        format!(
            "{} is not written as a `key:` line of a block mapping",
            keys.join(".")
        )
    })
}

fn shares_line(keys: &[String]) -> String {
    format!(
        "{} shares its line with other content (a list item, `?` or a document marker)",
        keys.join(".")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fix_values::locate::layout;

    fn keys(p: &str) -> Vec<String> {
        p.split('.').map(str::to_string).collect()
    }

    fn removed(text: &str, paths: &[(&str, Option<&str>)]) -> String {
        let l = layout(text).unwrap();
        let r: Vec<Removal> = paths
            .iter()
            .map(|(p, c)| Removal {
                keys: keys(p),
                comments: c.iter().map(|c| c.to_string()).collect(),
                line: None,
            })
            .collect();
        remove(text, &l, &r).unwrap()
    }

    #[test]
    fn a_key_goes_with_its_block_and_nothing_else() {
        let text = "# top\na:\n  # about b\n  b:\n    c: 1\n\n    d: 2 # x\n  # about e\n  e: 'q'\nf: |\n  text\n# end\n";
        assert_eq!(
            removed(text, &[("a.b", None)]),
            "# top\na:\n  # about b\n  # about e\n  e: 'q'\nf: |\n  text\n# end\n"
        );
        assert_eq!(
            removed(text, &[("f", Some("removed f"))]),
            "# top\na:\n  # about b\n  b:\n    c: 1\n\n    d: 2 # x\n  # about e\n  e: 'q'\n# removed f\n# end\n"
        );
    }

    #[test]
    fn a_multi_line_scalar_goes_whole() {
        let text = "a: \"one\n  two\"\nb: 1\nc: >-\n  x\n\n  # not a comment\nd: 2\n";
        assert_eq!(
            removed(text, &[("a", None)]),
            "b: 1\nc: >-\n  x\n\n  # not a comment\nd: 2\n"
        );
        assert_eq!(
            removed(text, &[("c", None)]),
            "a: \"one\n  two\"\nb: 1\nd: 2\n"
        );
    }

    #[test]
    fn a_key_in_a_list_item_is_refused() {
        let text = "a:\n- b: 1\n  c: 2\n";
        let mut l = layout(text).unwrap();
        // Never recorded below a list; forced here to see the guard.
        l.entries.insert(
            keys("b"),
            Entry {
                line: 2,
                column: 2,
                key_end: 3,
                value_end: 2,
                block_map: false,
            },
        );
        let r = [Removal {
            keys: keys("b"),
            comments: Vec::new(),
            line: None,
        }];
        assert!(remove(text, &l, &r)
            .unwrap_err()
            .contains("shares its line"));
    }

    #[test]
    fn renames_move_the_value_text_under_the_new_name() {
        let text = "encryption:\n  enabled: true\n  strictMode:\n    enabled: true # on\n    cidr: \"10.0.0.0/8\"\nx: 1\n";
        let l = layout(text).unwrap();
        let (t, already) = rename(
            text,
            &l,
            &keys("encryption.strictMode.enabled"),
            &keys("encryption.strictMode.egress.enabled"),
        )
        .unwrap();
        assert!(!already);
        assert_eq!(t, "encryption:\n  enabled: true\n  strictMode:\n    egress:\n      enabled: true # on\n    cidr: \"10.0.0.0/8\"\nx: 1\n");
        let l = layout(&t).unwrap();
        let (t, _) = rename(
            &t,
            &l,
            &keys("encryption.strictMode.cidr"),
            &keys("encryption.strictMode.egress.cidr"),
        )
        .unwrap();
        assert_eq!(t, "encryption:\n  enabled: true\n  strictMode:\n    egress:\n      enabled: true # on\n      cidr: \"10.0.0.0/8\"\nx: 1\n");
    }

    #[test]
    fn a_rename_onto_a_written_value_only_removes_the_old_one() {
        let text = "clustermesh:\n  enableMCSAPISupport: true\n  mcsapi:\n    enabled: false\n";
        let l = layout(text).unwrap();
        let (t, already) = rename(
            text,
            &l,
            &keys("clustermesh.enableMCSAPISupport"),
            &keys("clustermesh.mcsapi.enabled"),
        )
        .unwrap();
        assert!(already);
        assert_eq!(t, "clustermesh:\n  mcsapi:\n    enabled: false\n");
        let text = "clustermesh:\n  enableMCSAPISupport: true\n  mcsapi: {}\n";
        let l = layout(text).unwrap();
        let e = rename(
            text,
            &l,
            &keys("clustermesh.enableMCSAPISupport"),
            &keys("clustermesh.mcsapi.enabled"),
        )
        .unwrap_err();
        assert!(e.contains("not written as a block mapping"), "{e}");
    }
}

#[cfg(test)]
mod line_ending_tests {
    use super::*;
    use crate::fix_values::locate::layout;

    /// A file with Windows line endings gets its new lines with them too.
    #[test]
    fn crlf_files_keep_crlf() {
        let text = "a:\r\n  b: 1\r\n  c: 2\r\nd: 3\r\n";
        let l = layout(text).unwrap();
        let r = [Removal {
            keys: vec!["a".into(), "b".into()],
            comments: vec!["gone".into()],
            line: None,
        }];
        assert_eq!(
            remove(text, &l, &r).unwrap(),
            "a:\r\n  # gone\r\n  c: 2\r\nd: 3\r\n"
        );
    }
}
