//! The diff for people on a terminal.

use std::fmt::Write;

use super::consequences::Kind;
use super::engine::Change;
use super::{Diff, Outcome, Section};
use cilium_cmp_yaml::escape;

const KINDS: [Kind; 14] = [
    Kind::RenamedValue,
    Kind::CrdOrder,
    Kind::CrdPrerequisite,
    Kind::Rolls,
    Kind::RunsAgain,
    Kind::Pruned,
    Kind::RbacRemoved,
    Kind::ReadAtStart,
    Kind::NextRun,
    Kind::Image,
    Kind::RbacAdded,
    Kind::DefaultChanged,
    Kind::UpgradeCompatibility,
    Kind::UpgradeNotes,
];

/// Consequence kinds in the order a reviewer should read them: what breaks first.
pub fn reading_order() -> &'static [Kind] {
    &KINDS
}

/// The report for a terminal or CI log. Every repository-derived string goes through the one
/// text escaper (`escape::text` for names, `Prose::text` for sentences with names in them,
/// `escape::message` and `escape::lines` for messages other modules composed), and the whole
/// report through `escape::lines` last: no control character is written, and no line can be a
/// GitHub Actions workflow command.
pub fn render(sections: &[Section]) -> String {
    let mut s = String::new();
    for section in sections {
        let name = escape::text(&section.name);
        match &section.outcome {
            Outcome::InputsUnchanged => {
                let _ = writeln!(s, "== {name}: no input changed");
            }
            Outcome::Failed(e) => {
                let _ = writeln!(
                    s,
                    "== {name}: cannot be compared (it does not render; the exit status is 1)"
                );
                for line in escape::lines(e).lines() {
                    let _ = writeln!(s, "  {line}");
                }
            }
            Outcome::Fleet(findings) => {
                let _ = writeln!(s, "== {name}: {} finding(s)", findings.len());
                for f in findings {
                    let _ = writeln!(s, "  {}", escape::message(f));
                }
            }
            Outcome::Compared { state, diff } => {
                let _ = writeln!(
                    s,
                    "== {name} ({}): {} (Cilium {}) → {} (Cilium {})",
                    super::state_label(*state, diff),
                    escape::text(&diff.from),
                    diff.from_version,
                    escape::text(&diff.to),
                    diff.to_version
                );
                one(&mut s, diff);
            }
        }
        s.push('\n');
    }
    escape::lines(&s)
}

fn one(s: &mut String, d: &Diff) {
    let _ = writeln!(
        s,
        "{} created, {} deleted, {} changed, {} unchanged",
        d.count(Change::Created),
        d.count(Change::Deleted),
        d.count(Change::Changed),
        d.unchanged
    );
    if d.objects.is_empty() && d.consequences.is_empty() {
        return;
    }
    for kind in reading_order() {
        let list: Vec<_> = d.of_kind(*kind).collect();
        if list.is_empty() {
            continue;
        }
        let _ = writeln!(s, "\n{}:", kind.title());
        for c in list {
            let _ = writeln!(
                s,
                "  {}: {}\n    why: {}",
                escape::text(&c.subject),
                c.what.text(),
                c.why.text()
            );
        }
    }
    if !d.objects.is_empty() {
        let _ = writeln!(s, "\nObjects:");
    }
    for o in &d.objects {
        let _ = writeln!(
            s,
            "  {} {}",
            o.change.id(),
            escape::text(&o.key.to_string())
        );
        for f in &o.fields {
            // A path shows its keys through `limits::quoted` (the same escaper) where they are
            // not plain words; values are shown as JSON by `short`.
            let _ = writeln!(s, "    {}", f.line());
        }
    }
}
