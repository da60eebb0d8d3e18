//! The diff as a pull-request comment: a summary table first, then per folder the consequences
//! and one collapsed `<details>` block per object.

use std::fmt::Write;

use super::consequences::Kind;
use super::engine::Change;
use super::report_text::reading_order;
use super::{Outcome, Section};
use cilium_cmp_yaml::escape;

/// Characters of the comment after which objects' details are only counted: GitHub refuses a
/// comment body over 65,536 characters, and the summary and consequences come first.
const DETAILS_BUDGET: usize = 40_000;
/// Characters after which whole folders are only counted (the table has them all).
const SECTIONS_BUDGET: usize = 55_000;

/// The report as a pull-request comment. Repository-derived strings go through the one Markdown
/// escaper: names as code spans (`escape::md_code`), in the table with their pipes escaped
/// (`escape::md_cell`), in the `<summary>` HTML as `<code>` (`escape::md_html`), messages in
/// fenced blocks (`escape::md_fenced`); consequences keep the program's own Markdown and show
/// their names as code spans (`Prose::markdown`). No link, image, mention, issue reference,
/// HTML, heading or table break can come from the repository, and, since the comment may be
/// printed to a CI log as well, the whole comment passes `escape::lines` last.
pub fn render(sections: &[Section]) -> String {
    let mut s = String::from("### cilium-cmp diff\n\n");
    s.push_str("| Folder | State | Created | Deleted | Changed | Restarts | Pruned | Permissions removed | Renamed values |\n");
    s.push_str("|---|---|---:|---:|---:|---:|---:|---:|---:|\n");
    for section in sections {
        let name = escape::md_cell(&section.name);
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
                    "| {name} | {} | {} | {} | {} | {} | {} | {} | {} |",
                    super::state_cell(*state, diff),
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
    let mut folders_left_out = 0;
    for section in sections {
        let name = escape::md_code(&section.name);
        match &section.outcome {
            Outcome::InputsUnchanged => {}
            Outcome::Compared { .. } if s.len() > SECTIONS_BUDGET => folders_left_out += 1,
            Outcome::Fleet(findings) => {
                if !findings.is_empty() {
                    let _ = writeln!(s, "\n#### {name}\n");
                    for f in findings {
                        let _ = writeln!(s, "- {}", escape::md_code(f));
                    }
                }
            }
            Outcome::Failed(e) => {
                // The other folders are compared above and below; this one says why it is not,
                // and that the run fails for it (exit status 1, docs/review.md).
                let _ = write!(
                    s,
                    "\n#### {name}: cannot be compared\n\n**This folder does not render, so what the change does to it is not known; the run exits 1 until it renders.**\n\n{}",
                    escape::md_fenced("text", e)
                );
            }
            Outcome::Compared { state, diff } => {
                // No line starts with a name: a code span opened by three backticks there would
                // read as a code fence to a lax parser.
                let _ = writeln!(
                    s,
                    "\n#### {name} ({})\n\nFrom {} (Cilium {}) → {} (Cilium {}); {} objects unchanged\n",
                    super::state_label(*state, diff),
                    escape::md_code(&diff.from),
                    diff.from_version,
                    escape::md_code(&diff.to),
                    diff.to_version,
                    diff.unchanged
                );
                let mut consequences_left_out = 0;
                for kind in reading_order() {
                    let list: Vec<_> = diff.of_kind(*kind).collect();
                    if list.is_empty() {
                        continue;
                    }
                    if s.len() > SECTIONS_BUDGET {
                        consequences_left_out += list.len();
                        continue;
                    }
                    let _ = writeln!(s, "**{}**\n", kind.title());
                    for c in list {
                        if s.len() > SECTIONS_BUDGET {
                            consequences_left_out += 1;
                            continue;
                        }
                        let _ = writeln!(
                            s,
                            "- {}: {}<br>_why_: {}",
                            escape::md_code(&c.subject),
                            c.what.markdown(),
                            c.why.markdown()
                        );
                    }
                    s.push('\n');
                }
                if consequences_left_out > 0 {
                    let _ = writeln!(
                        s,
                        "{consequences_left_out} more consequences are left out to keep the comment within GitHub's size limit (`--output text` lists them).\n"
                    );
                }
                let mut left_out = 0;
                for o in &diff.objects {
                    if s.len() > DETAILS_BUDGET {
                        left_out += 1;
                        continue;
                    }
                    let _ = writeln!(
                        s,
                        "<details><summary>{} {} ({} fields)</summary>\n",
                        o.change.id(),
                        escape::md_html(&o.key.to_string()),
                        o.fields.len()
                    );
                    let mut block = String::new();
                    if o.fields.is_empty() {
                        block.push_str(match o.change {
                            Change::Created => "created by the sync",
                            Change::Deleted => "pruned by the sync",
                            Change::Changed => "",
                        });
                    }
                    for f in &o.fields {
                        let _ = writeln!(block, "{}", f.line());
                    }
                    s.push_str(&escape::md_fenced("text", &block));
                    s.push_str("\n</details>\n");
                }
                if left_out > 0 {
                    let _ = writeln!(
                        s,
                        "\n{left_out} more objects differ; they are left out to keep the comment within GitHub's size limit (`--output text` or `--output json` lists them all)."
                    );
                }
            }
        }
    }
    if folders_left_out > 0 {
        let _ = writeln!(
            s,
            "\nThe consequences of {folders_left_out} more folders are left out to keep the comment within GitHub's size limit; the table above counts them, `--output text` lists them."
        );
    }
    escape::lines(&s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adopt::live::ObjectKey;
    use crate::diff::engine::{FieldChange, ObjectDiff};
    use crate::diff::{Diff, FolderState};

    fn big_diff() -> Diff {
        let v = cilium_cmp_render::versions::parse("1.20.0").unwrap();
        let objects = (0..500)
            .map(|i| ObjectDiff {
                key: ObjectKey {
                    group: String::new(),
                    kind: "ConfigMap".into(),
                    namespace: Some("kube-system".into()),
                    name: format!("c{i}"),
                },
                api_version: "v1".into(),
                change: Change::Changed,
                fields: (0..20)
                    .map(|j| FieldChange {
                        path: crate::adopt::compare::Path(vec![crate::adopt::compare::Step::Key(
                            format!("field{j}"),
                        )]),
                        before: Some(serde_json::Value::String("x".repeat(100))),
                        after: None,
                        in_pod_template: false,
                        inert: false,
                    })
                    .collect(),
            })
            .collect();
        Diff {
            from: "a".into(),
            to: "b".into(),
            from_version: v,
            to_version: v,
            objects,
            unchanged: 0,
            consequences: (0..200)
                .map(|i| crate::diff::consequences::Consequence {
                    kind: Kind::Rolls,
                    subject: format!("DaemonSet kube-system/d{i}"),
                    what: "y".repeat(150).into(),
                    why: "z".repeat(100).into(),
                })
                .collect(),
        }
    }

    #[test]
    fn the_state_cell_does_not_repeat_itself() {
        let mut changes = big_diff();
        changes.consequences.clear();
        let mut same = changes.clone();
        same.objects.clear();
        let row = |state, diff: &Diff| {
            let text = render(&[Section {
                name: "f".into(),
                outcome: Outcome::Compared {
                    state,
                    diff: Box::new(diff.clone()),
                },
            }]);
            text.lines()
                .find(|l| l.starts_with("| `f` |"))
                .unwrap()
                .split(" | ")
                .nth(1)
                .unwrap()
                .to_string()
        };
        assert_eq!(row(FolderState::Changed, &changes), "changed");
        assert_eq!(
            row(FolderState::Changed, &big_diff()),
            "changed, with consequences"
        );
        assert_eq!(
            row(FolderState::Changed, &same),
            "inputs differ, same render"
        );
        assert_eq!(row(FolderState::Added, &changes), "added");
    }

    #[test]
    fn a_huge_diff_stays_within_a_pull_request_comment() {
        let sections: Vec<Section> = (0..50)
            .map(|i| Section {
                name: format!("clusters/c{i}"),
                outcome: Outcome::Compared {
                    state: FolderState::Changed,
                    diff: Box::new(big_diff()),
                },
            })
            .chain([Section {
                name: "Cluster Mesh (fleet checks)".into(),
                outcome: Outcome::Fleet(vec!["duplicate-cluster-id: x".into()]),
            }])
            .collect();
        let text = render(&sections);
        assert!(text.len() < 65_536, "{}", text.len());
        assert!(
            text.contains("| `clusters/c49` |"),
            "every folder is in the table"
        );
        assert!(
            text.contains("- `duplicate-cluster-id: x`"),
            "fleet findings always shown"
        );
        assert!(text.contains("more folders are left out"));
        assert!(text.contains("more consequences are left out"));
    }
}
