//! The diff for people on a terminal.

use std::fmt::Write;

use super::consequences::Kind;
use super::engine::Change;
use super::{short, Diff, Outcome, Section};

const KINDS: [Kind; 13] = [
    Kind::RenamedValue,
    Kind::CrdOrder,
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

pub fn render(sections: &[Section]) -> String {
    let mut s = String::new();
    for section in sections {
        match &section.outcome {
            Outcome::InputsUnchanged => {
                let _ = writeln!(s, "== {}: no input changed", section.name);
            }
            Outcome::Failed(e) => {
                let _ = writeln!(s, "== {}: cannot be compared\n  {e}", section.name);
            }
            Outcome::Fleet(findings) => {
                let _ = writeln!(s, "== {}: {} finding(s)", section.name, findings.len());
                for f in findings {
                    let _ = writeln!(s, "  {f}");
                }
            }
            Outcome::Compared { state, diff } => {
                let _ = writeln!(
                    s,
                    "== {} ({}): {} (Cilium {}) → {} (Cilium {})",
                    section.name,
                    state.id(),
                    diff.from,
                    diff.from_version,
                    diff.to,
                    diff.to_version
                );
                one(&mut s, diff);
            }
        }
        s.push('\n');
    }
    s
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
            let _ = writeln!(s, "  {}: {}\n    why: {}", c.subject, c.what, c.why);
        }
    }
    if !d.objects.is_empty() {
        let _ = writeln!(s, "\nObjects:");
    }
    for o in &d.objects {
        let _ = writeln!(s, "  {} {}", o.change.id(), o.key);
        for f in &o.fields {
            let _ = writeln!(
                s,
                "    {}: {} → {}",
                f.path,
                short(f.before.as_ref()),
                short(f.after.as_ref())
            );
        }
    }
}
