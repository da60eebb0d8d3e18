//! The diff for scripts: `{"ciliumCmpDiff": 1, ...}`. The number is the shape's version; a
//! change that removes or renames a field raises it.

use serde_json::{json, Value};

use super::engine::Change;
use super::{exit_code, Outcome, Section};

const SHAPE_VERSION: u32 = 1;

/// The JSON document of a report, with a final newline.
pub fn render(sections: &[Section]) -> String {
    let folders: Vec<Value> = sections.iter().map(section).collect();
    let doc = json!({
        "ciliumCmpDiff": SHAPE_VERSION,
        "exitCode": exit_code(sections),
        "folders": folders,
    });
    // serde escapes what JSON requires; `escape::json` the rest a terminal or CI log reads.
    let mut text =
        cilium_cmp_yaml::escape::json(&serde_json::to_string_pretty(&doc).unwrap_or_default());
    text.push('\n');
    text
}

fn section(s: &Section) -> Value {
    match &s.outcome {
        Outcome::InputsUnchanged => json!({"folder": s.name, "state": "inputs-unchanged"}),
        Outcome::Failed(e) => json!({"folder": s.name, "state": "failed", "error": e}),
        Outcome::Fleet(findings) => {
            json!({"fleet": s.name, "state": "fleet-checks", "findings": findings})
        }
        Outcome::Compared { state, diff } => {
            let objects: Vec<Value> = diff
                .objects
                .iter()
                .map(|o| {
                    json!({
                        "change": o.change.id(),
                        "apiVersion": o.api_version,
                        "kind": o.key.kind,
                        "namespace": o.key.namespace,
                        "name": o.key.name,
                        "fields": o.fields.iter().map(|f| json!({
                            "path": f.path.to_string(),
                            "before": f.before,
                            "after": f.after,
                            "inPodTemplate": f.in_pod_template,
                        })).collect::<Vec<_>>(),
                    })
                })
                .collect();
            let consequences: Vec<Value> = diff
                .consequences
                .iter()
                .map(|c| {
                    json!({
                        "kind": c.kind.id(),
                        "disruptive": c.kind.disruptive(),
                        "subject": c.subject,
                        "what": c.what.as_str(),
                        "why": c.why.as_str(),
                    })
                })
                .collect();
            json!({
                "folder": s.name,
                "state": state.id(),
                "status": diff.status().id(),
                "from": {"label": diff.from, "ciliumVersion": diff.from_version.to_string()},
                "to": {"label": diff.to, "ciliumVersion": diff.to_version.to_string()},
                "summary": {
                    "created": diff.count(Change::Created),
                    "deleted": diff.count(Change::Deleted),
                    "changed": diff.count(Change::Changed),
                    "unchanged": diff.unchanged,
                },
                "consequences": consequences,
                "objects": objects,
            })
        }
    }
}
