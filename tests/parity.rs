//! Parity with real Helm over the reference scenarios in `../shared/cilium-reference` (skipped when
//! that folder is absent). Same rules as the referee `parity.py`: objects matched by apiVersion,
//! kind, namespace and name; nulls count as absent; `*-checksum` annotations must be 64 hex digits;
//! certgen Job name hashes are 10 hex digits; our content-hash annotation is ignored.
//!
//! Scenarios that need the chart archive are compared when `CILIUM_CMP_CHART_DIR` holds
//! `cilium-VERSION.tgz`, and must be refused naming the value otherwise.

#[path = "support/scenario.rs"]
mod scenario;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use cilium_cmp::chart::ChartFiles;
use serde_json::Value;

/// Scenarios still known to differ, as "VERSION/NAME". The test fails when one of them starts
/// matching (remove it here) and when any other scenario differs. This list only shrinks.
const KNOWN_DIFFERENT: &[&str] = &[];

fn reference_dir() -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/cilium-reference");
    p.is_dir().then_some(p)
}

fn strip_nulls(v: &mut Value) {
    match v {
        Value::Object(m) => {
            m.retain(|_, v| !v.is_null());
            m.values_mut().for_each(strip_nulls);
        }
        Value::Array(a) => a.iter_mut().for_each(strip_nulls),
        _ => {}
    }
}

fn is_hex(s: &str, n: usize) -> bool {
    s.len() == n
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

fn key_of(o: &mut Value) -> String {
    let kind = o["kind"].as_str().unwrap_or("").to_string();
    let mut name = o["metadata"]["name"].as_str().unwrap_or("").to_string();
    if kind == "Job" {
        if let Some((prefix, hash)) = name.rsplit_once('-') {
            if prefix.ends_with("-generate-certs") && is_hex(hash, 10) {
                name = format!("{prefix}-<hash>");
                o["metadata"]["name"] = Value::String(name.clone());
            }
        }
    }
    format!(
        "{}/{}/{}/{}",
        o["apiVersion"].as_str().unwrap_or(""),
        kind,
        o["metadata"]["namespace"].as_str().unwrap_or(""),
        name
    )
}

fn objects(text: &str, candidate: bool) -> BTreeMap<String, Value> {
    let mut out = BTreeMap::new();
    for doc in cilium_cmp::yaml::parse_stream(text).expect("stream parses") {
        let mut o = doc.value;
        strip_nulls(&mut o);
        if candidate {
            if let Some(Value::Object(ann)) = o.pointer_mut("/metadata/annotations") {
                ann.remove("cilium-cmp.io/content-hash");
                if ann.is_empty() {
                    o["metadata"].as_object_mut().unwrap().remove("annotations");
                }
            }
        }
        let k = key_of(&mut o);
        assert!(out.insert(k.clone(), o).is_none(), "duplicate object {k}");
    }
    out
}

fn diff(r: &Value, c: &Value, path: &str, out: &mut Vec<String>) {
    match (r, c) {
        (Value::Object(a), Value::Object(b)) => {
            for k in a.keys().chain(b.keys().filter(|k| !a.contains_key(*k))) {
                let p = format!("{path}.{k}");
                match (a.get(k), b.get(k)) {
                    (Some(_), None) => out.push(format!("{p}: missing")),
                    (None, Some(x)) => out.push(format!("{p}: unexpected {x}")),
                    (Some(x), Some(y)) => {
                        if k.ends_with("-checksum") && path.ends_with(".annotations") {
                            if !y.as_str().is_some_and(|s| is_hex(s, 64)) {
                                out.push(format!("{p}: not a sha256 checksum: {y}"));
                            }
                        } else {
                            diff(x, y, &p, out);
                        }
                    }
                    (None, None) => {}
                }
            }
        }
        (Value::Array(a), Value::Array(b)) => {
            if a.len() != b.len() {
                out.push(format!(
                    "{path}: list of {} in the reference, {} here",
                    a.len(),
                    b.len()
                ));
            }
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                diff(x, y, &format!("{path}[{i}]"), out);
            }
        }
        (x, y) if x == y => {}
        (x, y) => {
            let show = |v: &Value| {
                let s = v.to_string();
                if s.len() > 160 {
                    format!(
                        "{}…",
                        &s[..s.char_indices().nth(160).map(|(i, _)| i).unwrap_or(s.len())]
                    )
                } else {
                    s
                }
            };
            out.push(format!("{path}: reference {} / here {}", show(x), show(y)))
        }
    }
}

/// Compares one scenario; returns a description of every difference (empty when identical).
fn compare_scenario(
    reference: &Path,
    version: &str,
    name: &str,
    charts: Option<&Path>,
) -> Vec<String> {
    let (mut inputs, needs_archive) =
        scenario::inputs(reference, name, version).expect("scenario reads");
    let archive = charts
        .map(|d| d.join(format!("cilium-{version}.tgz")))
        .filter(|p| p.exists());
    if let Some(a) = &archive {
        inputs.chart = Some(ChartFiles::open(a).unwrap());
    }
    let result = cilium_cmp::render(&inputs);
    if needs_archive && archive.is_none() {
        return match result {
            Err(e) if e.to_string().contains("cni.iptablesRemoveAWSRules") => vec![],
            Err(e) => vec![format!("refused, but without naming cni.iptablesRemoveAWSRules: {e}")],
            Ok(_) => vec!["rendered without the chart archive; must be refused naming cni.iptablesRemoveAWSRules".into()],
        };
    }
    let ref_path = reference
        .join("rendered")
        .join(version)
        .join(format!("{name}.yaml"));
    let out = match (result, ref_path.exists()) {
        (Ok(out), true) => out,
        (Err(_), false) => return vec![],
        (Ok(_), false) => return vec!["Helm refuses these values, the renderer did not".into()],
        (Err(e), true) => return vec![format!("render failed: {e}")],
    };
    let r = objects(&std::fs::read_to_string(ref_path).unwrap(), false);
    let c = objects(&out, true);
    let mut diffs = Vec::new();
    for k in r.keys().filter(|k| !c.contains_key(*k)) {
        diffs.push(format!("missing object {k}"));
    }
    for k in c.keys().filter(|k| !r.contains_key(*k)) {
        diffs.push(format!("extra object {k}"));
    }
    for (k, ro) in &r {
        if let Some(co) = c.get(k) {
            let mut d = Vec::new();
            diff(ro, co, "", &mut d);
            diffs.extend(d.into_iter().map(|x| format!("{k} {x}")));
        }
    }
    diffs
}

#[test]
fn renders_match_helm_for_every_reference_scenario() {
    let Some(reference) = reference_dir() else {
        eprintln!("../shared/cilium-reference is absent: parity not checked");
        return;
    };
    let charts = std::env::var_os("CILIUM_CMP_CHART_DIR").map(PathBuf::from);
    let supported: Vec<&str> = cilium_cmp::versions::supported().collect();
    let mut failures = Vec::new();
    let mut stale = Vec::new();
    let (mut checked, mut identical) = (0, 0);
    let mut versions: Vec<String> = std::fs::read_dir(reference.join("rendered"))
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
        .filter(|v| supported.contains(&v.as_str()))
        .collect();
    versions.sort();
    let mut names: Vec<String> = std::fs::read_dir(reference.join("scenarios"))
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
        .filter_map(|n| n.strip_suffix(".yaml").map(String::from))
        .collect();
    names.sort();
    for v in &versions {
        for n in &names {
            let id = format!("{v}/{n}");
            let diffs = compare_scenario(&reference, v, n, charts.as_deref());
            checked += 1;
            let known = KNOWN_DIFFERENT.contains(&id.as_str());
            match (diffs.is_empty(), known) {
                (true, true) => stale.push(id),
                (true, false) => identical += 1,
                (false, true) => {}
                (false, false) => failures.push(format!(
                    "{id}: {} differences, first:\n    {}",
                    diffs.len(),
                    diffs
                        .iter()
                        .take(8)
                        .cloned()
                        .collect::<Vec<_>>()
                        .join("\n    ")
                )),
            }
        }
    }
    eprintln!(
        "parity: {identical}/{checked} identical, {} known to differ",
        KNOWN_DIFFERENT.len()
    );
    assert!(
        stale.is_empty(),
        "now identical, remove from KNOWN_DIFFERENT: {stale:?}"
    );
    assert!(
        failures.is_empty(),
        "scenarios differ from Helm:\n{}",
        failures.join("\n")
    );
}
