//! `fix-values`: edits values files so that they render without `--allow-unknown-keys`, and
//! render exactly what the opt-out renders for them as they were.
//!
//! Each value the release does not know (`known_keys`) does nothing in a render, so removing it
//! changes nothing; the command proves that for every run by rendering both and comparing the
//! bytes before it writes. A value renamed by the release (`known_keys::moves`) can be moved
//! under its new name instead (`apply_renames`): the render then changes by design, and the
//! change is reported. Edits go by whole lines (`edit`), so the rest of a file stays as written;
//! a file that cannot be edited so (anchors, merge keys, several documents, keys inside flow
//! mappings) is left alone and its change is shown as a patch.

mod edit;
pub mod locate;

use serde_json::{Map, Value};

use cilium_cmp_render::error::RenderError;
use cilium_cmp_render::known_keys::{self, Reason, UnknownValue};
use cilium_cmp_render::render::Inputs;
use cilium_cmp_render::values::{Layer, Values};
use cilium_cmp_render::versions::{self, CiliumVersion};

use edit::Removal;

/// What `fix` did to one file.
#[derive(Debug, Clone)]
pub struct FileFix {
    /// The file as the user named it (and as messages show it).
    pub name: String,
    /// Its text as read, before any edit.
    pub original: String,
    /// The new text; None when the file needs no change or cannot be edited by lines.
    pub edited: Option<String>,
    /// Each removed value: its path, where it was and why (the check's own words).
    pub removed: Vec<Removed>,
    /// Each renamed value: (old path, new path, whether the new one was already written).
    pub moved: Vec<(String, String, bool)>,
    /// Why the file was left as it was, and the change as a patch (a unified diff of the whole
    /// file rewritten, which drops its comments).
    pub refused: Option<Refused>,
}

/// A value `fix` removes because the release does not know it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Removed {
    /// Its dotted path in the values (`hubble.relay.foo`).
    pub path: String,
    /// The check's line for it (`PATH (set in FILE line N): why`); None beyond the explained ones.
    pub explanation: Option<String>,
    /// The known values it most likely meant, when it looks like a typo of one.
    pub likely_meant: Vec<String>,
    /// The release's new name for it, which `apply_renames` would have moved it to.
    pub renamed_to: Option<String>,
}

/// Why a file is left as it was, with the change it would have needed.
#[derive(Debug, Clone)]
pub struct Refused {
    /// Why, in words for the user: what keeps the file from being edited line by line (an
    /// anchor, a merge key, several documents, a key inside a flow mapping or a list item), or
    /// a value to settle first.
    pub reason: String,
    /// The change as a unified diff of the file rewritten whole, for the user to apply by
    /// hand; None when there is no change to show until the user has acted.
    pub patch: Option<String>,
    /// The entry that keeps the file as it was, when the check knows where it is.
    pub span: Option<cilium_cmp_yaml::diagnostic::Span>,
}

impl FileFix {
    /// Whether `fix` has a new text for the file (the caller writes it).
    pub fn changed(&self) -> bool {
        self.edited.is_some()
    }
}

/// The outcome for all files.
#[derive(Debug, Clone)]
pub struct Fix {
    /// Each file given, in the order given.
    pub files: Vec<FileFix>,
    /// With renames: what changes in the render, one line per changed field.
    pub render_changes: Vec<String>,
}

impl Fix {
    /// Whether any file was left alone: the caller then writes none of them, so that the files
    /// are fixed together or not at all.
    pub fn refused(&self) -> bool {
        self.files.iter().any(|f| f.refused.is_some())
    }
}

/// Why `fix` gives no fix at all.
#[derive(Debug, thiserror::Error)]
pub enum FixError {
    /// The files do not render even with the opt-out: nothing to compare against.
    #[error(transparent)]
    Render(#[from] RenderError),
    /// The edited files render differently from the originals: a bug of this command, caught
    /// before anything was written.
    #[error("the edited values would render differently from the original ones ({0}); nothing was written. Please report this with the values files")]
    RenderChanged(String),
    /// Some files cannot be edited safely (each is named above the message): nothing was
    /// written.
    #[error("{message}")]
    Refused {
        /// What to do now.
        message: String,
        /// The entries that keep files as they were, where known (one per file at most).
        spans: Vec<cilium_cmp_yaml::diagnostic::Span>,
    },
}

/// Fixes `files` (name, text), rendered in that order with the other inputs of `base` (its
/// values files are replaced). Writes nothing: the caller writes `edited` texts, and only when
/// no file was refused.
pub fn fix(
    base: &Inputs,
    files: &[(String, String)],
    apply_renames: bool,
) -> Result<Fix, FixError> {
    let version = cilium_cmp_render::render::release_of(base)?;
    let mut before = base.clone();
    before.values_files = files.to_vec();
    before.allow_unknown_keys = true;
    // The reference first: it also reports bad input (syntax, schema) with its position.
    // Its warnings about the unknown values would repeat this command's own report.
    let rendered_before =
        tracing::subscriber::with_default(tracing::subscriber::NoSubscriber::default(), || {
            cilium_cmp_render::render::render(&before)
        })?;
    let mut out = Vec::new();
    for (name, text) in files {
        out.push(fix_file(name, text, version, apply_renames)?);
    }
    let mut fix = Fix {
        files: out,
        render_changes: Vec::new(),
    };
    if fix.refused() || !fix.files.iter().any(FileFix::changed) {
        return Ok(fix);
    }
    let mut after = base.clone();
    after.allow_unknown_keys = false;
    after.values_files = fix
        .files
        .iter()
        .map(|f| {
            (
                f.name.clone(),
                f.edited.clone().unwrap_or_else(|| f.original.clone()),
            )
        })
        .collect();
    let rendered_after = cilium_cmp_render::render::render(&after)
        .map_err(|e| FixError::RenderChanged(e.to_string()))?;
    let renamed = fix.files.iter().any(|f| f.moved.iter().any(|m| !m.2));
    if rendered_after != rendered_before {
        if !renamed {
            let changes = render_changes(&rendered_before, &rendered_after, &base.namespace);
            return Err(FixError::RenderChanged(changes.join("; ")));
        }
        fix.render_changes = render_changes(&rendered_before, &rendered_after, &base.namespace);
    }
    Ok(fix)
}

/// A value a release does not know: its path as keys, and the check's explanation (None beyond
/// the check's bound of explained ones).
pub type Unknown = (Vec<String>, Option<UnknownValue>);

/// The values of one file that `version` does not know: the check's explained ones, then the
/// paths of those beyond its bound.
pub fn unknown_in_file(
    name: &str,
    text: &str,
    version: CiliumVersion,
) -> Result<Vec<Unknown>, RenderError> {
    let layer = Layer::from_yaml(name, text)?;
    let values = match versions::defaults_indexed(version) {
        Some((tree, index)) => Values::resolve_indexed(tree, index, vec![layer]),
        None => Values::resolve(versions::defaults(version), vec![layer]),
    };
    let report = known_keys::check(&values, version);
    let mut found: Vec<Unknown> = report
        .values
        .into_iter()
        .map(|u| (u.keys.clone(), Some(u)))
        .collect();
    found.extend(report.unlisted.into_iter().map(|k| (k, None)));
    Ok(found)
}

/// `text` with the values `version` does not read removed by lines (comments and the rest kept
/// as written), when it can be edited so; None otherwise (for `import-application`).
pub fn without_dead_values(name: &str, text: &str, version: CiliumVersion) -> Option<String> {
    let f = fix_file(name, text, version, false).ok()?;
    match (f.refused, f.edited) {
        (None, Some(edited)) => Some(edited),
        (None, None) => Some(text.to_string()),
        _ => None,
    }
}

fn fix_file(
    name: &str,
    text: &str,
    version: CiliumVersion,
    apply_renames: bool,
) -> Result<FileFix, FixError> {
    let mut f = FileFix {
        name: name.to_string(),
        original: text.to_string(),
        edited: None,
        removed: Vec::new(),
        moved: Vec::new(),
        refused: None,
    };
    let unknown = unknown_in_file(name, text, version)?;
    if unknown.is_empty() {
        return Ok(f);
    }
    let original = cilium_cmp_yaml::yaml::read::parse_value_as_helm(text)
        .map(|(v, _)| v)
        .map_err(|e| {
            RenderError::from(cilium_cmp_render::values::ValuesError::Parse {
                span: Box::new(e.span_in(name, text)),
                message: e.message().to_string(),
            })
        })?;
    let mut expected = original.clone();
    let mut removals = Vec::new();
    let mut repeated = Vec::new();
    let mut moves = Vec::new();
    for (keys, explained) in &unknown {
        if let Some(u) = explained {
            if u.reason == Reason::Umbrella {
                f.refused = Some(Refused {
                    reason: format!("{u}; then run fix-values again"),
                    patch: None,
                    span: u.span.clone(),
                });
                return Ok(f);
            }
        }
        if let Some(UnknownValue {
            reason: Reason::Repeated { line, .. },
            ..
        }) = explained
        {
            // The occurrence Helm ignores goes; the values read stay the same.
            if keys.is_empty() {
                f.refused = Some(Refused {
                    reason: format!(
                        "{}; cilium-cmp does not edit keys inside list items by lines",
                        explained
                            .as_ref()
                            .map(ToString::to_string)
                            .unwrap_or_default()
                    ),
                    patch: None,
                    span: explained.as_ref().and_then(|u| u.span.clone()),
                });
                return Ok(f);
            }
            repeated.push(Removal {
                keys: keys.clone(),
                comments: Vec::new(),
                line: Some(*line),
            });
            f.removed.push(Removed {
                path: keys.join("."),
                explanation: explained.as_ref().map(ToString::to_string),
                likely_meant: Vec::new(),
                renamed_to: None,
            });
            continue;
        }
        let renamed_to = known_keys::moved_to(keys, version);
        if let Some(new) = renamed_to.clone().filter(|_| apply_renames) {
            moves.push((keys.clone(), new));
            continue;
        }
        let likely_meant = explained.as_ref().map(likely_meant).unwrap_or_default();
        let comments = if likely_meant.is_empty() {
            Vec::new()
        } else {
            vec![typo_comment(keys, version, &likely_meant)]
        };
        removals.push(Removal {
            keys: keys.clone(),
            comments,
            line: None,
        });
        f.removed.push(Removed {
            path: keys.join("."),
            explanation: explained.as_ref().map(ToString::to_string),
            likely_meant,
            renamed_to: renamed_to.map(|k| k.join(".")),
        });
        remove_path(&mut expected, keys);
    }
    for (old, new) in &moves {
        let value = take_path(&mut expected, old);
        let already = has_path(&expected, new);
        if !already {
            if let Some(v) = value {
                set_path(&mut expected, new, v);
            }
        }
        f.moved.push((old.join("."), new.join("."), already));
    }
    match edit_by_lines(text, &removals, &repeated, &moves) {
        Ok(edited) => {
            let reread = cilium_cmp_yaml::yaml::read::parse_value_as_helm(&edited)
                .ok()
                .filter(|(_, dups)| dups.is_empty())
                .map(|(v, _)| v);
            let reread = reread.map(|v| {
                if v.is_null() {
                    Value::Object(Map::new())
                } else {
                    v
                }
            });
            if reread.as_ref() == Some(&expected) {
                f.edited = Some(edited);
            } else {
                f.refused = Some(refusal(
                    name,
                    text,
                    &expected,
                    "an edit by lines would not give the intended values".into(),
                ));
            }
        }
        Err(why) => f.refused = Some(refusal(name, text, &expected, why)),
    }
    Ok(f)
}

/// The edit: dead keys out (a map whose written keys are all dead goes with them), then each
/// rename, one at a time on the text so far.
/// `repeated`: earlier occurrences of repeated keys, removed as they are (a map is never widened
/// over them: its other occurrence stays).
fn edit_by_lines(
    text: &str,
    removals: &[Removal],
    repeated: &[Removal],
    moves: &[(Vec<String>, Vec<String>)],
) -> Result<String, String> {
    let layout = locate::layout(text).ok_or("the file does not parse")?;
    if let Some(why) = &layout.obstacle {
        return Err(format!(
            "cilium-cmp does not edit this file by lines: {why}"
        ));
    }
    let mut removals = widen_to_emptied_maps(&layout, removals, moves);
    removals.extend(repeated.iter().map(|r| Removal {
        keys: r.keys.clone(),
        comments: Vec::new(),
        line: r.line,
    }));
    let mut text = if removals.is_empty() {
        text.to_string()
    } else {
        edit::remove(text, &layout, &removals)?
    };
    // In the file's order, so that moved keys keep theirs.
    let mut moves: Vec<&(Vec<String>, Vec<String>)> = moves.iter().collect();
    moves.sort_by_key(|(old, _)| layout.entries.get(old).map(|e| e.line));
    for (old, new) in moves {
        let layout = locate::layout(&text).ok_or("the edited file does not parse")?;
        text = edit::rename(&text, &layout, old, new)?.0;
    }
    Ok(text)
}

/// Where every key a map was written with is removed, the map goes too: a key left with nothing
/// below it would read as null, which removes the chart's default there.
fn widen_to_emptied_maps(
    layout: &locate::Layout,
    removals: &[Removal],
    moves: &[(Vec<String>, Vec<String>)],
) -> Vec<Removal> {
    use std::collections::{BTreeMap, BTreeSet};
    let moved: BTreeSet<&Vec<String>> = moves.iter().map(|(old, _)| old).collect();
    let mut out: BTreeMap<Vec<String>, Vec<String>> = BTreeMap::new();
    for r in removals {
        out.entry(r.keys.clone())
            .or_default()
            .extend(r.comments.iter().cloned());
    }
    // Deepest maps first, one level per round (each round is one pass over the keys).
    loop {
        let mut parents: Vec<Vec<String>> = out
            .keys()
            .filter(|k| k.len() > 1)
            .map(|k| k[..k.len() - 1].to_vec())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        parents.sort_by_key(|p| std::cmp::Reverse(p.len()));
        let mut widened = false;
        for parent in parents {
            if !layout.entries.get(&parent).is_some_and(|e| e.block_map) {
                continue;
            }
            // The keys below `parent` are contiguous in the layout's order.
            let mut children = layout
                .entries
                .range(parent.clone()..)
                .map(|(p, _)| p)
                .take_while(|p| p.starts_with(&parent))
                .filter(|p| p.len() == parent.len() + 1)
                .peekable();
            if children.peek().is_none() {
                continue;
            }
            let children: Vec<&Vec<String>> = children.collect();
            if !children
                .iter()
                .all(|c| out.contains_key(*c) && !moved.contains(c))
            {
                continue;
            }
            // The map's comments are its dead keys' ones, at the map's place.
            let mut comments = Vec::new();
            for c in children {
                comments.extend(out.remove(c).unwrap_or_default());
            }
            out.insert(parent, comments);
            widened = true;
        }
        if !widened {
            return out
                .into_iter()
                .map(|(keys, comments)| Removal {
                    keys,
                    comments,
                    line: None,
                })
                .collect();
        }
    }
}

/// The check's lines, each likely typo followed by a line saying so (for `import-application`).
pub fn describe_unknown(report: &known_keys::Report) -> Vec<String> {
    let mut lines = Vec::new();
    for u in &report.values {
        lines.push(u.to_string());
        let meant = likely_meant(u);
        if !meant.is_empty() {
            lines.push(format!(
                "  LIKELY A TYPO of {}: the setting {} meant never applied under Helm either, and it is not applied now",
                meant.join(" or "),
                u.path
            ));
        }
    }
    if report.more > 0 {
        lines.push(format!(
            "and {} more values the chart does not know",
            report.more
        ));
    }
    lines
}

/// The values a removed one most likely meant (a typo, or a key written with dots).
fn likely_meant(u: &UnknownValue) -> Vec<String> {
    match &u.reason {
        Reason::Unknown { suggestions } => suggestions.clone(),
        Reason::DottedKey { nested } => vec![nested.clone()],
        _ => Vec::new(),
    }
}

/// The one-line comment left where a likely typo was, for the pull request's reader.
fn typo_comment(keys: &[String], version: CiliumVersion, meant: &[String]) -> String {
    let path = cilium_cmp_yaml::limits::quoted(&keys.join("."));
    let path = path.trim_matches('"');
    format!(
        "cilium-cmp fix-values: removed {path}, unknown to Cilium {version} (it never applied); did you mean {}?",
        meant.join(" or ")
    )
}

fn refusal(name: &str, text: &str, expected: &Value, reason: String) -> Refused {
    let rewritten = if expected.as_object().is_some_and(Map::is_empty) {
        "{}\n".to_string()
    } else {
        cilium_cmp_yaml::yaml::write::to_string(expected)
    };
    Refused {
        reason,
        patch: Some(crate::unified_diff::unified(name, text, &rewritten)),
        span: None,
    }
}

fn remove_path(root: &mut Value, keys: &[String]) {
    take_path(root, keys);
}

/// Takes the value at `keys` out, and any map above it that held nothing else.
pub fn take_path(root: &mut Value, keys: &[String]) -> Option<Value> {
    let (last, parents) = keys.split_last()?;
    let Value::Object(map) = root else {
        return None;
    };
    if parents.is_empty() {
        return map.remove(last);
    }
    let child = map.get_mut(&parents[0])?;
    let taken = take_path(child, &keys[1..]);
    if taken.is_some() && child.as_object().is_some_and(Map::is_empty) {
        map.remove(&parents[0]);
    }
    taken
}

fn has_path(root: &Value, keys: &[String]) -> bool {
    let mut node = root;
    for k in keys {
        match node.get(k) {
            Some(v) => node = v,
            None => return false,
        }
    }
    true
}

fn set_path(root: &mut Value, keys: &[String], value: Value) {
    let mut node = root;
    for (i, k) in keys.iter().enumerate() {
        let Value::Object(map) = node else { return };
        if i + 1 == keys.len() {
            map.insert(k.clone(), value);
            return;
        }
        node = map
            .entry(k.clone())
            .or_insert_with(|| Value::Object(Map::new()));
    }
}

/// How two renders differ, one line per object or field: what `--apply-renames` reports. The
/// comparison is `diff`'s (`diff::engine`): cilium-cmp's own content-hash annotation is left
/// out, lists are matched item by item (a changed argument is named, not `[...]`), whole
/// numbers print as the API server prints them.
pub fn render_changes(before: &str, after: &str, namespace: &str) -> Vec<String> {
    const SHOWN: usize = 40;
    let renders = match crate::diff::engine::Renders::read(before, after, namespace) {
        Ok(r) => r,
        // Both are renders of this run; one that does not read back is said, not hidden.
        Err(e) => return vec![format!("the renders cannot be compared: {e}")],
    };
    let (objects, _) = crate::diff::engine::compare_objects(&renders);
    let mut lines = Vec::new();
    for o in &objects {
        match o.change {
            crate::diff::engine::Change::Created => lines.push(format!("{}: added", o.key)),
            crate::diff::engine::Change::Deleted => lines.push(format!("{}: removed", o.key)),
            crate::diff::engine::Change::Changed => {
                lines.extend(o.fields.iter().map(|f| format!("{}: {}", o.key, f.line())))
            }
        }
    }
    if lines.len() > SHOWN {
        let more = lines.len() - SHOWN;
        lines.truncate(SHOWN);
        lines.push(format!("and {more} more changes"));
    }
    lines
}

/// The line editor against random block-style files: comments everywhere, odd quoting, block
/// scalars, flow values and lists. Whatever keys are removed, the edited text reads back as the
/// original values without them (and without the maps they emptied).
#[cfg(test)]
mod edit_properties {
    use super::*;
    use proptest::prelude::*;

    #[derive(Debug, Clone)]
    enum Node {
        Scalar(&'static str),
        Map(Vec<(usize, Node)>),
    }

    const KEYS: &[&str] = &["a", "'b c'", "\"d.e\"", "f", "gg", "'h'"];
    const SCALARS: &[&str] = &[
        "1",
        "'x: y' # trailing",
        "\"two\n    lines\"",
        "|\n  block\n\n  # not a comment\n",
        "{x: 1, y: [2]}",
        "[1,\n  2]",
        "\n  - 1\n  - k: v\n    l: w\n",
        "null",
        "{}",
    ];

    fn node() -> impl Strategy<Value = Node> {
        let leaf = (0..SCALARS.len()).prop_map(|i| Node::Scalar(SCALARS[i]));
        leaf.prop_recursive(3, 24, 4, |inner| {
            proptest::collection::btree_map(0..KEYS.len(), inner, 1..4)
                .prop_map(|m| Node::Map(m.into_iter().collect()))
        })
    }

    /// Writes a map at `indent`, a comment before some keys (`seed` picks which).
    fn write(entries: &[(usize, Node)], indent: usize, seed: &mut u32, out: &mut String) {
        let pad = " ".repeat(indent);
        for (k, v) in entries {
            *seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            match *seed % 4 {
                0 => out.push_str(&format!("{pad}# about {}\n", KEYS[*k])),
                1 => out.push_str("# at column 0\n"),
                _ => {}
            }
            out.push_str(&format!("{pad}{}:", KEYS[*k]));
            match v {
                Node::Scalar(s) => {
                    // A block scalar or list goes below the key, indented under it.
                    let text = s.replace('\n', &format!("\n{pad}"));
                    let text = text.trim_end_matches(' ');
                    out.push(' ');
                    out.push_str(text.trim_start_matches(' '));
                    if !text.ends_with('\n') {
                        out.push('\n');
                    }
                }
                Node::Map(m) => {
                    out.push('\n');
                    write(m, indent + 2, seed, out);
                }
            }
        }
    }

    fn paths(entries: &[(usize, Node)], prefix: &[String], out: &mut Vec<Vec<String>>) {
        for (k, v) in entries {
            let mut p = prefix.to_vec();
            p.push(KEYS[*k].trim_matches(|c| c == '\'' || c == '"').to_string());
            out.push(p.clone());
            if let Node::Map(m) = v {
                paths(m, &p, out);
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]
        #[test]
        fn removed_keys_go_and_everything_else_stays(
            root in proptest::collection::btree_map(0..KEYS.len(), node(), 1..5),
            seed in any::<u32>(),
            picks in proptest::collection::vec(any::<prop::sample::Index>(), 1..4),
        ) {
            let root: Vec<(usize, Node)> = root.into_iter().collect();
            let mut text = String::new();
            let mut s = seed;
            write(&root, 0, &mut s, &mut text);
            let original = cilium_cmp_yaml::yaml::parse_value(&text);
            prop_assume!(original.is_ok());
            let original = original.unwrap();
            let mut all = Vec::new();
            paths(&root, &[], &mut all);
            // Topmost picks only (a removed key's children go with it).
            let mut chosen: Vec<Vec<String>> = picks.iter().map(|i| all[i.index(all.len())].clone()).collect();
            chosen.sort();
            chosen.dedup();
            let chosen: Vec<Vec<String>> = chosen
                .iter()
                .filter(|p| !chosen.iter().any(|q| q.len() < p.len() && p.starts_with(q)))
                .cloned()
                .collect();
            let mut expected = original.clone();
            for p in &chosen {
                take_path(&mut expected, p);
            }
            let removals: Vec<Removal> = chosen
                .iter()
                .map(|p| Removal { keys: p.clone(), comments: vec!["gone".into()], line: None })
                .collect();
            let edited = edit_by_lines(&text, &removals, &[], &[]).unwrap();
            let reread = cilium_cmp_yaml::yaml::parse_value(&edited).unwrap();
            let reread = if reread.is_null() { Value::Object(Map::new()) } else { reread };
            prop_assert_eq!(&reread, &expected, "\n{}\n---\n{}", text, edited);
            // Every comment line of the original that was outside the removed blocks is kept.
            prop_assert!(edited.contains("# gone"));
        }

        /// Any text, any of its keys: an error or an edit, never a panic.
        #[test]
        fn any_text_is_edited_or_refused_without_panicking(
            text in "[ab:\\- #'\"|>{}\\[\\],&*!\n\r\t]{0,120}",
            picks in proptest::collection::vec(any::<prop::sample::Index>(), 0..3),
        ) {
            let Some(layout) = locate::layout(&text) else {
                return Ok(());
            };
            let keys: Vec<&Vec<String>> = layout.entries.keys().collect();
            if keys.is_empty() {
                return Ok(());
            }
            let removals: Vec<Removal> = picks
                .iter()
                .map(|i| Removal { keys: keys[i.index(keys.len())].clone(), comments: vec!["x".into()], line: None })
                .collect();
            let _ = edit_by_lines(&text, &removals, &[], &[]);
            let old = keys[0].clone();
            let _ = edit::rename(&text, &layout, &old, &[old[0].clone(), "new".into(), "k".into()]);
        }
    }
}
