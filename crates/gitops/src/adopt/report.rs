//! The result for people (a summary, then the details) and for scripts (`--output json`, whose
//! shape is documented in the README and versioned by its `adoptCheck` field).

use std::fmt::Write;

use serde_json::{json, Value};

use super::{zero, Class, Finding, ObjectReport, Report};
use cilium_cmp_yaml::escape;

/// Characters of one value shown in a difference; longer ones are cut with `…`.
const MAX_VALUE_CHARS: usize = 200;
/// Differences shown per object in the human report (JSON lists them all).
const MAX_SHOWN_DIFFERENCES: usize = 40;

fn title(class: Class) -> &'static str {
    match class {
        Class::Identical => "identical",
        Class::ToolingOnly => "differ only in what the cluster or tooling adds",
        Class::NoRuntimeEffect => "differ in metadata nothing running reads",
        Class::LeftBehind => "keep fields the render lacks (left behind)",
        Class::RestartsPods => "differ in a pod template: pods restart",
        Class::Changed => "differ elsewhere",
        Class::Created => "would be created",
        Class::Pruned => "would be pruned (Argo CD tracks them)",
        Class::Unmanaged => {
            "stay in the cluster, unmanaged (the old release's, untracked by Argo CD)"
        }
        Class::NotInRelease => "live, not the release's (left alone)",
    }
}

/// A value as shown: compact JSON, cut to `MAX_VALUE_CHARS`, with what serde leaves as itself
/// escaped (`escape::json`: a live value is anyone's text); Secret data never shown.
fn shown(value: Option<&Value>, secret: bool) -> Option<String> {
    let v = value?;
    if secret {
        let bytes = match v {
            Value::String(s) => s.len(),
            other => other.to_string().len(),
        };
        let digest = cilium_cmp_render::output::sha256_bytes(v.to_string().as_bytes());
        return Some(format!(
            "(secret data, {bytes} bytes, sha256 {}…)",
            &digest[..12.min(digest.len())]
        ));
    }
    let mut whole = v.clone();
    zero::integers_as_integers(&mut whole);
    let text = whole.to_string();
    Some(if text.chars().count() > MAX_VALUE_CHARS {
        let cut: String = text.chars().take(MAX_VALUE_CHARS).collect();
        format!("{}…", escape::json(&cut))
    } else {
        escape::json(&text)
    })
}

fn is_secret_value(o: &ObjectReport, f: &Finding) -> bool {
    o.key.kind == "Secret"
        && (f.difference.path.starts_with(&["data"])
            || f.difference.path.starts_with(&["stringData"]))
}

/// A field path: its display quotes keys that are not plain words through the text escaper.
fn path(p: &super::compare::Path) -> String {
    escape::message(&p.to_string())
}

/// Names joined for one line, each escaped.
fn names(list: &[String]) -> String {
    list.iter()
        .map(|n| escape::text(n))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The human report: counts per class, the restart and prune lines, then every object that is
/// not identical with its differences. What the dumps and the render hold (object names, keys,
/// values, managers) and the messages that quote them go through the one text escaper, and the
/// report through `escape::lines` last (several lines start with an object's name).
pub fn human(r: &Report) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "adopt-check: {} rendered objects against {} live ones ({}), release namespace {}",
        r.rendered,
        r.live,
        names(&r.live_sources),
        escape::text(&r.namespace)
    );
    for class in Class::ALL {
        let _ = writeln!(out, "  {:>4}  {}", r.count(class), title(class));
    }
    let restarts: Vec<&ObjectReport> = of(r, Class::RestartsPods);
    let _ = writeln!(out);
    if restarts.is_empty() {
        let _ = writeln!(out, "Restarts: none.");
    } else {
        let _ = writeln!(out, "Restarts:");
        for o in &restarts {
            let paths: Vec<String> = o
                .findings
                .iter()
                .filter(|f| f.restarts)
                .map(|f| path(&f.difference.path))
                .collect();
            let expected = o
                .findings
                .iter()
                .filter(|f| f.restarts)
                .all(|f| f.expected.is_some());
            let _ = writeln!(
                out,
                "  {}: {}{}",
                escape::text(&o.key.to_string()),
                super::rules::restart_effect(&o.key.kind),
                if expected {
                    " (an expected difference of the move, see below; the pods restart all the same)"
                } else {
                    ""
                }
            );
            for p in paths.iter().take(MAX_SHOWN_DIFFERENCES) {
                let _ = writeln!(out, "      {p}");
            }
            if paths.len() > MAX_SHOWN_DIFFERENCES {
                let _ = writeln!(out, "      … {} more", paths.len() - MAX_SHOWN_DIFFERENCES);
            }
        }
    }
    let pruned = of(r, Class::Pruned);
    if pruned.is_empty() {
        let _ = writeln!(out, "Prunes: none.");
    } else {
        let _ = writeln!(
            out,
            "Prunes (Argo CD tracks these: a sync with prune deletes them):"
        );
        for o in &pruned {
            let _ = writeln!(
                out,
                "  {}: {}{}",
                escape::text(&o.key.to_string()),
                escape::message(o.notes.first().map_or("", String::as_str)),
                if o.expected.is_some() {
                    " (expected difference of the move, see below)"
                } else {
                    ""
                }
            );
        }
    }
    let unmanaged = of(r, Class::Unmanaged);
    if !unmanaged.is_empty() {
        let _ = writeln!(
            out,
            "Stay unmanaged (the old release's, but Argo CD does not track them: no sync deletes them; not counted as prunes):"
        );
        for o in &unmanaged {
            let _ = writeln!(
                out,
                "  {}: {}",
                escape::text(&o.key.to_string()),
                escape::message(o.notes.first().map_or("", String::as_str)),
            );
        }
    }
    let behind: Vec<&ObjectReport> = r
        .objects
        .iter()
        .filter(|o| !o.left_behind.is_empty())
        .collect();
    if behind.is_empty() {
        let _ = writeln!(out, "Left behind: none.");
    } else {
        let _ = writeln!(
            out,
            "Left behind (only live, no default, and the sync does not remove them: they stay, and Argo CD shows no diff):"
        );
        for o in behind {
            for f in o.left_behind.iter().take(MAX_SHOWN_DIFFERENCES) {
                let _ = writeln!(
                    out,
                    "  {}: {} = {} (kept by {})",
                    escape::text(&o.key.to_string()),
                    path(&f.path),
                    shown(Some(&f.value), o.key.kind == "Secret").unwrap_or_default(),
                    names(&f.owners)
                );
                if let Some(fix) = &f.fix {
                    let _ = writeln!(out, "      fix: {}", escape::message(fix));
                }
            }
            if o.left_behind.len() > MAX_SHOWN_DIFFERENCES {
                let _ = writeln!(
                    out,
                    "  {}: … {} more",
                    escape::text(&o.key.to_string()),
                    o.left_behind.len() - MAX_SHOWN_DIFFERENCES
                );
            }
        }
    }
    let kept: Vec<&ObjectReport> = r.objects.iter().filter(|o| !o.kept.is_empty()).collect();
    if !kept.is_empty() {
        let _ = writeln!(
            out,
            "Kept by controllers (only live, owned by a controller running in the cluster: its state, which the sync keeps, as it must):"
        );
        for o in kept {
            for f in &o.kept {
                let _ = writeln!(
                    out,
                    "  {}: {} = {} (owned by {})",
                    escape::text(&o.key.to_string()),
                    path(&f.path),
                    shown(Some(&f.value), o.key.kind == "Secret").unwrap_or_default(),
                    names(&f.owners)
                );
            }
        }
    }
    if let Some(h) = &r.helm3 {
        let _ = writeln!(
            out,
            "Installed by Helm 3 ({}): Helm 3 keeps the chart's null defaults where Helm 4 (cilium-cmp, Argo CD 3.5) drops them (argoproj/argo-cd#29068); these nulls render differently, and the first sync changes what they rendered:",
            escape::message(&h.evidence)
        );
        for n in &h.nulls {
            let _ = writeln!(out, "  {}", escape::text(&n.value));
            for d in &n.differences {
                let _ = writeln!(out, "      {}", escape::message(&d.to_string()));
            }
        }
    }
    let waiting: Vec<(&ObjectReport, &super::startup::Reader)> = r
        .objects
        .iter()
        .flat_map(|o| o.read_at_start.iter().map(move |w| (o, w)))
        .filter(|(_, w)| w.takes_effect != super::startup::TakesEffect::RolledByChecksum)
        .collect();
    if !waiting.is_empty() {
        let _ = writeln!(
            out,
            "Read only at start (a changed ConfigMap that restarts nothing):"
        );
        for (o, w) in waiting {
            let _ = writeln!(out, "  {}", escape::message(&w.consequence(&o.key.name)));
        }
    }
    let _ = writeln!(out);
    let _ = writeln!(out, "Details:");
    let mut any = false;
    for o in &r.objects {
        if o.class == Class::Identical {
            continue;
        }
        any = true;
        let _ = writeln!(
            out,
            "{} [{}]",
            escape::text(&o.key.to_string()),
            o.class.id()
        );
        for n in &o.notes {
            let _ = writeln!(out, "  why: {}", escape::message(n));
        }
        if let Some(e) = &o.expected {
            let _ = writeln!(out, "  expected: {}", escape::message(e));
        }
        for w in &o.read_at_start {
            let _ = writeln!(
                out,
                "  read by: {}",
                escape::message(&w.consequence(&o.key.name))
            );
        }
        for f in o.findings.iter().take(MAX_SHOWN_DIFFERENCES) {
            let secret = is_secret_value(o, f);
            let _ = writeln!(out, "  {}", path(&f.difference.path));
            let _ = writeln!(
                out,
                "    render: {}",
                shown(f.difference.render.as_ref(), secret).unwrap_or_else(|| "(absent)".into())
            );
            let _ = writeln!(
                out,
                "    live:   {}",
                shown(f.difference.live.as_ref(), secret).unwrap_or_else(|| "(absent)".into())
            );
            if let Some(e) = &f.expected {
                let _ = writeln!(out, "    expected: {}", escape::message(e));
            }
            if let Some(m) = &f.removed_by {
                let _ = writeln!(out, "    removed by the first sync: {}", escape::message(m));
            }
        }
        if o.findings.len() > MAX_SHOWN_DIFFERENCES {
            let _ = writeln!(
                out,
                "  … {} more differences (--output json lists all)",
                o.findings.len() - MAX_SHOWN_DIFFERENCES
            );
        }
        for f in o.left_behind.iter().take(MAX_SHOWN_DIFFERENCES) {
            let _ = writeln!(out, "  {}", path(&f.path));
            let _ = writeln!(
                out,
                "    left behind: {} (kept by {})",
                shown(Some(&f.value), o.key.kind == "Secret").unwrap_or_default(),
                names(&f.owners)
            );
            if let Some(fix) = &f.fix {
                let _ = writeln!(out, "    fix: {}", escape::message(fix));
            }
        }
        for f in &o.kept {
            let _ = writeln!(out, "  {}", path(&f.path));
            let _ = writeln!(
                out,
                "    kept by a controller: {} (owned by {})",
                shown(Some(&f.value), o.key.kind == "Secret").unwrap_or_default(),
                names(&f.owners)
            );
        }
        if !o.live_only.is_empty() {
            // Paths as compare::Path shows them (escaped already).
            let only: Vec<String> = o.live_only.iter().map(|p| escape::message(p)).collect();
            let _ = writeln!(
                out,
                "  only live (defaults of the API server, tooling): {}",
                only.join(", ")
            );
        }
    }
    if !any {
        let _ = writeln!(out, "  every object is identical");
    }
    for w in &r.warnings {
        let _ = writeln!(out);
        let _ = writeln!(out, "Warning: {}", escape::message(w));
    }
    escape::lines(&out)
}

fn of(r: &Report, class: Class) -> Vec<&ObjectReport> {
    r.objects.iter().filter(|o| o.class == class).collect()
}

/// The JSON report. Shape (version 3; docs/adopt-check.md):
/// `{"adoptCheck": 3, "namespace", "disruptive": bool, "warnings": [..],
///   "helm3": null or {"evidence", "nulls": [{"value", "differences": [..]}]}, "counts": {CLASS: n},
///   "objects": [{"class", "apiVersion", "kind", "namespace" (null when cluster-scoped), "name",
///   "notes": [..], "expected": string or null, "liveOnly": [paths],
///   "leftBehind": [{"path", "value", "owners": [..], "fix": string or null}],
///   "keptByControllers": [{"path", "value", "owners": [..]}],
///   "readAtStart": [{"kind", "namespace", "name", "takesEffect", "rollValue", "consequence"}],
///   "differences": [{"path", "render", "live" (strings, or null when absent), "restarts": bool,
///   "expected": string or null, "removedBy": string or null}]}]}`.
/// Version 2 added the class `left-behind` and the fields `warnings`, `leftBehind`,
/// `readAtStart` and `removedBy`; version 3 the class `unmanaged` (prunes are only what Argo CD
/// tracks), `keptByControllers`, a left-behind field's `fix` and `helm3`.
pub fn json(r: &Report) -> String {
    let counts: serde_json::Map<String, Value> = Class::ALL
        .iter()
        .map(|c| (c.id().to_string(), json!(r.count(*c))))
        .collect();
    let objects: Vec<Value> = r
        .objects
        .iter()
        .map(|o| {
            let differences: Vec<Value> = o
                .findings
                .iter()
                .map(|f| {
                    let secret = is_secret_value(o, f);
                    json!({
                        "path": f.difference.path.to_string(),
                        "render": shown(f.difference.render.as_ref(), secret),
                        "live": shown(f.difference.live.as_ref(), secret),
                        "restarts": f.restarts,
                        "expected": f.expected,
                        "removedBy": f.removed_by,
                    })
                })
                .collect();
            json!({
                "class": o.class.id(),
                "apiVersion": o.api_version,
                "kind": o.key.kind,
                "namespace": o.key.namespace,
                "name": o.key.name,
                "notes": o.notes,
                "expected": o.expected,
                "liveOnly": o.live_only,
                "leftBehind": o.left_behind.iter().map(|f| json!({
                    "path": f.path.to_string(),
                    "value": shown(Some(&f.value), o.key.kind == "Secret"),
                    "owners": f.owners,
                    "fix": f.fix,
                })).collect::<Vec<_>>(),
                "keptByControllers": o.kept.iter().map(|f| json!({
                    "path": f.path.to_string(),
                    "value": shown(Some(&f.value), o.key.kind == "Secret"),
                    "owners": f.owners,
                })).collect::<Vec<_>>(),
                "readAtStart": o.read_at_start.iter().map(|w| json!({
                    "kind": w.workload.kind,
                    "namespace": w.workload.namespace,
                    "name": w.workload.name,
                    "takesEffect": match w.takes_effect {
                        super::startup::TakesEffect::RolledByChecksum => "rolled-by-checksum",
                        super::startup::TakesEffect::AtNextRestart => "at-next-restart",
                        super::startup::TakesEffect::Unknown => "unknown",
                    },
                    "rollValue": w.roll_value,
                    "consequence": w.consequence(&o.key.name),
                })).collect::<Vec<_>>(),
                "differences": differences,
            })
        })
        .collect();
    let mut doc = json!({
        "adoptCheck": 3,
        "namespace": r.namespace,
        "disruptive": r.disruptive(),
        "warnings": r.warnings,
        "helm3": r.helm3.as_ref().map(|h| json!({
            "evidence": h.evidence,
            "nulls": h.nulls.iter().map(|n| json!({
                "value": n.value,
                "differences": n.differences.iter().map(|d| d.to_string()).collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
        })),
        "counts": counts,
        "objects": objects,
    });
    // Values as the API server prints them: `replicas: 2`, not `2.0` (the YAML reader gives every
    // number as a float).
    zero::integers_as_integers(&mut doc);
    let mut text = escape::json(&serde_json::to_string_pretty(&doc).unwrap_or_default());
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_numbers_are_shown_as_the_api_server_prints_them() {
        // The YAML reader gives `replicas: 2` as the float 2.0.
        assert_eq!(shown(Some(&json!(2.0)), false).as_deref(), Some("2"));
        assert_eq!(
            shown(Some(&json!({"backoffLimit": 6.0, "ratio": 0.5})), false).as_deref(),
            Some(r#"{"backoffLimit":6,"ratio":0.5}"#)
        );
    }
}
