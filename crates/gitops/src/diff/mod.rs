//! `diff`: two renders of Cilium compared with the engine `adopt-check` uses (`adopt::compare`
//! and `adopt::rules`), and what the change does once Argo CD syncs it.
//!
//! - `engine` pairs the objects of both renders and lists the fields that differ (with
//!   `empty_strings`: the "" values the API server keeps, and integers printed as integers);
//! - `consequences` says what those differences do (rolls, Jobs, prunes, images, RBAC, CRD order);
//! - `upgrade` adds what a move between releases asks of the values;
//! - `prerequisites` names the CRDs of other projects the new render needs in the cluster;
//! - `report_text`, `report_markdown`, `report_json` print the result;
//! - `repo` finds every application folder of a repository at two revisions and diffs those
//!   whose inputs changed.

pub mod consequences;
pub mod empty_strings;
pub mod engine;
pub mod error;
pub mod prerequisites;
pub mod repo;
pub mod report_json;
pub mod report_markdown;
pub mod report_text;
pub mod upgrade;

use consequences::{Consequence, Kind};
use engine::{Change, ObjectDiff, Renders};

use cilium_cmp_render::values::Values;
use cilium_cmp_render::versions::CiliumVersion;

/// One side of a diff: a render and what it was made from.
#[derive(Debug, Clone)]
pub struct Side {
    /// Where it comes from, for people: `base origin/main`, `values old.yaml`, `Cilium 1.19.6`.
    pub label: String,
    /// The Cilium release it was rendered from. Two sides of different releases make the diff an
    /// upgrade, which adds the upgrade's consequences (`upgrade`, the CRD order).
    pub version: CiliumVersion,
    /// The render itself.
    pub stream: SideStream,
}

/// A side's render: a stream's text (a file, another tool's render), or the objects of one of
/// this run's renders, as `output::finish` kept them (`output::Keep::Objects`), which need not be
/// read back.
#[derive(Debug, Clone)]
pub enum SideStream {
    /// A stream's text; empty for a folder that does not exist on this side.
    Text(String),
    /// The render's objects as JSON trees, one per document; empty for a folder that does not
    /// exist on this side.
    Objects(Vec<serde_json::Value>),
}

/// Two renders compared.
#[derive(Debug, Clone)]
pub struct Diff {
    /// The old side's label (`Side::label`).
    pub from: String,
    /// The new side's label.
    pub to: String,
    /// The release the old side was rendered from.
    pub from_version: CiliumVersion,
    /// The release the new side was rendered from.
    pub to_version: CiliumVersion,
    /// Every object that differs: created and changed ones in the new render's order, then the
    /// deleted ones (`engine::compare_objects`).
    pub objects: Vec<ObjectDiff>,
    /// How many objects both renders hold with no field that differs.
    pub unchanged: usize,
    /// What syncing the new render does, ordered by kind (the order of `consequences::Kind`).
    pub consequences: Vec<Consequence>,
}

/// What a diff amounts to, and its exit status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Status {
    /// Nothing differs (exit 0).
    Same,
    /// Objects differ, and nothing restarts, is pruned, loses a permission or stops working
    /// (exit 2).
    Changes,
    /// Something restarts, is pruned, loses a permission, may hang, or a value stops working
    /// (exit 3).
    Consequences,
}

impl Status {
    /// The process's exit status for this outcome: 0, 2 or 3 (1 is for errors).
    pub fn exit_code(self) -> i32 {
        match self {
            Status::Same => 0,
            Status::Changes => 2,
            Status::Consequences => 3,
        }
    }

    /// Its name in `--output json` (`status`).
    pub fn id(self) -> &'static str {
        match self {
            Status::Same => "same",
            Status::Changes => "changes",
            Status::Consequences => "consequences",
        }
    }
}

impl Diff {
    /// What the diff amounts to: any disruptive consequence (`Kind::disruptive`) makes it
    /// `Consequences`, even with no object differing; otherwise `Changes` when an object differs,
    /// else `Same`.
    pub fn status(&self) -> Status {
        if self.consequences.iter().any(|c| c.kind.disruptive()) {
            Status::Consequences
        } else if self.objects.is_empty() {
            Status::Same
        } else {
            Status::Changes
        }
    }

    /// How many objects the sync creates, deletes or changes, as `change` says.
    pub fn count(&self, change: Change) -> usize {
        self.objects.iter().filter(|o| o.change == change).count()
    }

    /// The consequences of one kind, in report order.
    pub fn of_kind(&self, kind: Kind) -> impl Iterator<Item = &Consequence> {
        self.consequences.iter().filter(move |c| c.kind == kind)
    }
}

/// Compares two renders. `values` are the user's values resolved over the new release's
/// defaults; they are read for an upgrade only (sides of different releases).
pub fn diff(
    old: Side,
    new: Side,
    namespace: &str,
    values: Option<&Values>,
) -> Result<Diff, String> {
    let renders = Renders::of_sides(old.stream, new.stream, namespace)?;
    let (objects, unchanged) = engine::compare_objects(&renders);
    let mut consequences = consequences::of_objects(&objects, &renders);
    consequences.extend(prerequisites::of_renders(
        &objects,
        &renders,
        old.version,
        new.version,
        namespace,
    ));
    if old.version != new.version {
        consequences.extend(consequences::upgrade_order(&objects));
        if let Some(values) = values {
            consequences.extend(upgrade::consequences(old.version, new.version, values));
        }
    }
    consequences.sort_by_key(|c| c.kind);
    Ok(Diff {
        from: old.label,
        to: new.label,
        from_version: old.version,
        to_version: new.version,
        objects,
        unchanged,
        consequences,
    })
}

/// One application folder (or the single comparison of the flag forms) in a report.
#[derive(Debug, Clone)]
pub struct Section {
    /// The folder relative to the repository root, or a name for the flag forms.
    pub name: String,
    /// What came of it.
    pub outcome: Outcome,
}

/// What a report says of one section.
#[derive(Debug, Clone)]
pub enum Outcome {
    /// Compared (for an added or removed folder, against nothing).
    Compared {
        /// How the folder's inputs differ.
        state: FolderState,
        /// The two renders compared.
        diff: Box<Diff>,
    },
    /// No input of the folder changed: not rendered.
    InputsUnchanged,
    /// A side could not be rendered (bad input: exit 1).
    Failed(String),
    /// The Cluster Mesh checks of the whole repository (`fleet`) after the change: one line per
    /// finding with the places involved. Findings make the change one with consequences.
    Fleet(Vec<String>),
}

/// How a compared folder's inputs (its settings file and the values files it lists) differ
/// between the two sides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FolderState {
    /// The folder is on both sides and some input differs.
    Changed,
    /// Only the new side has the folder: compared against an empty render.
    Added,
    /// Only the old side has the folder: its render is compared against an empty one, so every
    /// object in it is deleted.
    Removed,
    /// The single-folder form with inputs byte-identical on both sides: rendered and compared
    /// all the same (which proves the render the same), never called "changed".
    Unchanged,
}

impl FolderState {
    /// Its name in `--output json` (`state`).
    pub fn id(self) -> &'static str {
        match self {
            FolderState::Changed => "changed",
            FolderState::Added => "added",
            FolderState::Removed => "removed",
            FolderState::Unchanged => "inputs-unchanged",
        }
    }
}

/// A compared folder's state for people: inputs that differ and render the same are not called
/// "changed" (a values file reformatted, a comment added), so a reader does not look for a
/// change that is not there.
pub fn state_label(state: FolderState, diff: &Diff) -> &'static str {
    match state {
        FolderState::Changed if diff.status() == Status::Same => "inputs differ, same render",
        FolderState::Unchanged => "inputs unchanged",
        other => other.id(),
    }
}

/// The State cell of the Markdown summary table: the state, and what the render's change
/// amounts to where the state does not say it already (never "changed (changes)").
pub fn state_cell(state: FolderState, diff: &Diff) -> String {
    let label = state_label(state, diff);
    match diff.status() {
        Status::Consequences => format!("{label}, with consequences"),
        Status::Same if state != FolderState::Changed && state != FolderState::Unchanged => {
            format!("{label}, same render")
        }
        _ => label.to_string(),
    }
}

/// The exit status of a whole report: 1 when a folder failed, else the worst status.
pub fn exit_code(sections: &[Section]) -> i32 {
    if sections
        .iter()
        .any(|s| matches!(s.outcome, Outcome::Failed(_)))
    {
        return 1;
    }
    sections
        .iter()
        .filter_map(|s| match &s.outcome {
            Outcome::Compared { diff, .. } => Some(diff.status()),
            Outcome::Fleet(findings) if !findings.is_empty() => Some(Status::Consequences),
            _ => None,
        })
        .max()
        .unwrap_or(Status::Same)
        .exit_code()
}

/// Characters of a value a one-line report shows.
const SHOWN: usize = 160;

/// A value shown in a one-line report, within bounds (a ConfigMap entry can be kilobytes): as
/// JSON, so its type shows (`"1"` is not `1`), with what serde leaves as itself escaped
/// (`escape::json`: nothing hidden, no workflow command).
pub fn short(v: Option<&serde_json::Value>) -> String {
    let text = match v {
        None => return "(absent)".into(),
        Some(serde_json::Value::String(s)) => serde_json::to_string(s).unwrap_or_default(),
        Some(other) => other.to_string(),
    };
    if text.chars().count() > SHOWN {
        let cut: String = text.chars().take(SHOWN).collect();
        format!(
            "{}… ({} characters)",
            cilium_cmp_yaml::escape::json(&cut),
            text.chars().count()
        )
    } else {
        cilium_cmp_yaml::escape::json(&text)
    }
}

/// A value's before and after, for one line. Two long strings are shown around where they
/// first differ, with what they share before it cut (a certgen configuration of kilobytes that
/// changes in its last line would otherwise show the same first characters twice).
pub fn short_pair(
    before: Option<&serde_json::Value>,
    after: Option<&serde_json::Value>,
) -> (String, String) {
    use serde_json::Value;
    let (Some(Value::String(a)), Some(Value::String(b))) = (before, after) else {
        return (short(before), short(after));
    };
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    if a.len() <= SHOWN && b.len() <= SHOWN {
        return (short(before), short(after));
    }
    let first = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    // Some context before the difference, so that a reader finds the place.
    const CONTEXT: usize = 40;
    let start = first.saturating_sub(CONTEXT);
    let window = |s: &[char]| -> String {
        let end = (start + SHOWN).min(s.len());
        let part: String = s[start.min(s.len())..end].iter().collect();
        let json = serde_json::to_string(&part).unwrap_or_default();
        // The quotes go: the ellipses say the text goes on.
        let inner = &json[1..json.len() - 1];
        format!(
            "{}{}{}",
            if start > 0 { "…" } else { "\"" },
            cilium_cmp_yaml::escape::json(inner),
            if end < s.len() { "…" } else { "\"" }
        )
    };
    let at = first + 1;
    (
        format!("{} ({} characters)", window(&a), a.len()),
        format!(
            "{} ({} characters, first difference at character {at})",
            window(&b),
            b.len()
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn long_strings_show_where_they_differ() {
        let a = format!("{}tail-one", "x".repeat(500));
        let b = format!("{}tail-two", "x".repeat(500));
        let (x, y) = short_pair(Some(&json!(a)), Some(&json!(b)));
        assert!(
            x.contains("tail-one") && y.contains("tail-two"),
            "{x} / {y}"
        );
        assert!(y.contains("first difference at character 506"), "{y}");
        assert!(x.starts_with('…'));
        let (x, _) = short_pair(Some(&json!("a")), Some(&json!(2)));
        assert_eq!(x, "\"a\"");
    }
}
