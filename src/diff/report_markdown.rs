//! The diff as a pull-request comment: a summary table first, then per folder the consequences
//! and one collapsed `<details>` block per object.

use std::fmt::Write;

use super::consequences::Kind;
use super::engine::Change;
use super::report_text::reading_order;
use super::{short, Outcome, Section};

/// Text from values and file names made safe for Markdown outside code blocks: no HTML, no table
/// cell breaks, one line.
fn md(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('|', "\\|")
        .replace(['\n', '\r'], " ")
}

pub fn render(sections: &[Section]) -> String {
    let mut s = String::from("### cilium-cmp diff\n\n");
    s.push_str("| Folder | State | Created | Deleted | Changed | Restarts | Pruned | Permissions removed | Renamed values |\n");
    s.push_str("|---|---|---:|---:|---:|---:|---:|---:|---:|\n");
    for section in sections {
        let name = md(&section.name);
        match &section.outcome {
            Outcome::InputsUnchanged => {
                let _ = writeln!(s, "| {name} | no input changed | | | | | | | |");
            }
            Outcome::Failed(_) => {
                let _ = writeln!(s, "| {name} | **cannot be compared** | | | | | | | |");
            }
            Outcome::Fleet(findings) if findings.is_empty() => {
                let _ = writeln!(s, "| {name} | no findings | | | | | | | |");
            }
            Outcome::Fleet(findings) => {
                let _ = writeln!(
                    s,
                    "| {name} | **{} finding(s)** | | | | | | | |",
                    findings.len()
                );
            }
            Outcome::Compared { state, diff } => {
                let restarts =
                    diff.of_kind(Kind::Rolls).count() + diff.of_kind(Kind::RunsAgain).count();
                let _ = writeln!(
                    s,
                    "| {name} | {} ({}) | {} | {} | {} | {} | {} | {} | {} |",
                    state.id(),
                    diff.status().id(),
                    diff.count(Change::Created),
                    diff.count(Change::Deleted),
                    diff.count(Change::Changed),
                    restarts,
                    diff.of_kind(Kind::Pruned).count(),
                    diff.of_kind(Kind::RbacRemoved).count(),
                    diff.of_kind(Kind::RenamedValue).count()
                );
            }
        }
    }
    for section in sections {
        let name = md(&section.name);
        match &section.outcome {
            Outcome::InputsUnchanged => {}
            Outcome::Fleet(findings) => {
                if !findings.is_empty() {
                    let _ = writeln!(s, "\n#### {name}\n");
                    for f in findings {
                        let _ = writeln!(s, "- {}", md(f));
                    }
                }
            }
            Outcome::Failed(e) => {
                let _ = writeln!(
                    s,
                    "\n#### {name}: cannot be compared\n\n```text\n{}\n```",
                    e.replace("```", "'''")
                );
            }
            Outcome::Compared { state, diff } => {
                let _ = writeln!(
                    s,
                    "\n#### {name} ({})\n\n{} (Cilium {}) → {} (Cilium {}); {} objects unchanged\n",
                    state.id(),
                    md(&diff.from),
                    diff.from_version,
                    md(&diff.to),
                    diff.to_version,
                    diff.unchanged
                );
                for kind in reading_order() {
                    let list: Vec<_> = diff.of_kind(*kind).collect();
                    if list.is_empty() {
                        continue;
                    }
                    let _ = writeln!(s, "**{}**\n", kind.title());
                    for c in list {
                        let _ = writeln!(
                            s,
                            "- `{}`: {}<br>_why_: {}",
                            md(&c.subject).replace('`', "'"),
                            md(&c.what),
                            md(&c.why)
                        );
                    }
                    s.push('\n');
                }
                for o in &diff.objects {
                    let _ = writeln!(
                        s,
                        "<details><summary>{} {} ({} fields)</summary>\n\n```text",
                        o.change.id(),
                        md(&o.key.to_string()),
                        o.fields.len()
                    );
                    if o.fields.is_empty() {
                        let _ = writeln!(
                            s,
                            "{}",
                            match o.change {
                                Change::Created => "created by the sync",
                                Change::Deleted => "pruned by the sync",
                                Change::Changed => "",
                            }
                        );
                    }
                    for f in &o.fields {
                        let _ = writeln!(
                            s,
                            "{}: {} → {}",
                            f.path.to_string().replace("```", "'''"),
                            short(f.before.as_ref()).replace("```", "'''"),
                            short(f.after.as_ref()).replace("```", "'''")
                        );
                    }
                    s.push_str("```\n\n</details>\n");
                }
            }
        }
    }
    s
}
