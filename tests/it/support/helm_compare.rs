//! Comparing the renderer with real Helm, shared by the parity suite (`tests/it/parity.rs`) and the
//! combination test (`tests/it/combinations.rs`): the referee's rules (`../shared/tools/parity.py`)
//! for two streams, and what counts as the same outcome when one of them refuses the values.
//!
//! Objects are matched by apiVersion, kind, namespace and name; nulls count as absent;
//! `*-checksum` annotations must be 64 hex digits; certgen Job name hashes are 10 hex digits; our
//! content-hash annotation is ignored. Where Helm refuses the values, the renderer must refuse
//! them for the same kind of reason (schema, a chart `fail`, the chart's Kubernetes version);
//! where Helm prints a stream that is not YAML (a template wrote broken text, which no cluster
//! accepts), the renderer must refuse the value that breaks it.
//! Two refusals are the renderer's by design and never let a case pass unchecked: values only
//! other supported releases have (`known_keys`; Helm ignores them) are rendered again with
//! unknown keys allowed, and renders the cluster would refuse later (`admission.rs`) again
//! without that refusal; either way the render is then compared with Helm's.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

use cilium_cmp_render::error::RenderError;
use cilium_cmp_render::render::Inputs;
use serde_json::Value;
use sha2::{Digest, Sha256};

/// What the references are rendered with; part of every cached reference's key.
pub const HELM_TOOL: &str = "helm-python-sdk==0.2.2";

/// What real Helm made of a case's values.
#[derive(Clone)]
pub enum Reference {
    Rendered(PathBuf),
    /// Helm refused the values; its error text.
    Refused(String),
}

/// How the cases that passed were checked, for the line a run ends with.
#[derive(Default)]
pub struct Tally {
    /// Renders compared with Helm's, object by object.
    pub compared: AtomicUsize,
    /// Of those, refused by default for values only other releases have.
    pub other_release: AtomicUsize,
    /// Of those, refused by default as the cluster would refuse them.
    pub cluster_would: AtomicUsize,
    /// Refused as Helm refuses, for the same kind of reason.
    pub refused_like_helm: AtomicUsize,
}

impl Tally {
    pub const fn new() -> Tally {
        Tally {
            compared: AtomicUsize::new(0),
            other_release: AtomicUsize::new(0),
            cluster_would: AtomicUsize::new(0),
            refused_like_helm: AtomicUsize::new(0),
        }
    }

    /// Whether any pair was counted (a run that selected none prints no summary).
    pub fn any(&self) -> bool {
        [&self.compared, &self.refused_like_helm]
            .iter()
            .any(|a| a.load(Ordering::Relaxed) > 0)
    }

    pub fn summary(&self) -> String {
        let n = |a: &AtomicUsize| a.load(Ordering::Relaxed);
        format!(
            "{} compared with Helm's render ({} of them refused by default for values only other releases have, compared with unknown keys allowed; {} refused by default as the cluster would, compared without that refusal); {} refused as Helm refuses, by kind, or where Helm's stream is no YAML",
            n(&self.compared),
            n(&self.other_release),
            n(&self.cluster_would),
            n(&self.refused_like_helm)
        )
    }
}

/// Renders `inputs` and checks the outcome against Helm's. `expected_admission` says whether a
/// refusal of what the cluster would refuse later (its text) is one the caller expects.
/// Renders as `cilium_cmp_render::render::render` does, and checks what `output::finish` takes while writing
/// against the stream read back: the stamped content hash is what `verify` computes, and each
/// object's digest (what a lock records) is that of the object read back. The folder commands
/// rely on both instead of reading their renders back.
fn render(inputs: &Inputs) -> Result<String, RenderError> {
    use cilium_cmp_render::output::{self, Keep, ObjectDigest};
    let stream = cilium_cmp_render::render::render_stream(inputs, Keep::Digests)?;
    let (stamped, computed) = output::verify(&stream.text).expect("the render reads back");
    assert_eq!(stamped, Some(computed), "the stamped hash is not verify's");
    assert_eq!(
        stream.hash, stamped,
        "the hash finish returns is not the one stamped"
    );
    let read: Vec<ObjectDigest> = cilium_cmp_yaml::yaml::parse_stream(&stream.text)
        .expect("the render reads back")
        .into_iter()
        .map(|d| {
            let mut o = d.value;
            output::remove_content_hash(&mut o);
            let s = |v: &serde_json::Value| v.as_str().unwrap_or("").to_string();
            ObjectDigest {
                kind: s(&o["kind"]),
                namespace: s(&o["metadata"]["namespace"]),
                name: s(&o["metadata"]["name"]),
                sha256: output::sha256_hex(&o),
            }
        })
        .collect();
    assert_eq!(
        stream.digests, read,
        "object digests taken while writing differ from the read-back"
    );
    Ok(stream.text)
}

pub fn check(
    mut inputs: Inputs,
    reference: &Reference,
    expected_admission: &dyn Fn(&str) -> bool,
    tally: &Tally,
) -> Result<(), String> {
    let result = render(&inputs);
    // Helm ignores values its chart does not know; the renderer refuses, by design, those that
    // another supported release has (renamed, removed or not yet there). That refusal is its
    // only difference: with unknown keys allowed (`--allow-unknown-keys`, a folder's
    // `allowUnknownKeys`) it must do what Helm does, checked below like any other case. Any
    // other unknown value is a false alarm of the check and fails.
    let result = match result {
        Err(RenderError::UnknownValues { report, .. })
            if report.more == 0 && report.values.iter().all(|v| v.is_other_release()) =>
        {
            tally.other_release.fetch_add(1, Ordering::Relaxed);
            inputs.allow_unknown_keys = true;
            render(&inputs)
        }
        other => other,
    };
    let (rendered, reference_file) = match (result, reference) {
        (Ok(out), Reference::Rendered(file)) => (out, file),
        (Err(e), Reference::Refused(helm)) => return same_refusal(&e, helm, tally),
        (Ok(_), Reference::Refused(helm)) => {
            return Err(format!(
                "Helm refuses these values, the renderer did not. Helm: {}",
                helm.trim()
            ))
        }
        // A refusal of what the cluster would refuse later is by design; without it the render
        // must be Helm's all the same.
        (Err(RenderError::WouldBeRejected(why)), Reference::Rendered(file))
            if expected_admission(&why.to_string()) =>
        {
            tally.cluster_would.fetch_add(1, Ordering::Relaxed);
            let out = cilium_cmp_render::render::testing::render_as_helm(&inputs).map_err(|e| {
                format!("refused as the cluster would; without that refusal, render failed: {e}")
            })?;
            (out, file)
        }
        // Helm prints text a template made, even when that text is no YAML at all; applying it
        // fails. The renderer refuses such values, naming the one that breaks the text.
        (
            Err(e @ (RenderError::Value { .. } | RenderError::NotYaml { .. })),
            Reference::Rendered(file),
        ) if objects(&std::fs::read_to_string(file).unwrap_or_default(), false).is_err() => {
            tally.refused_like_helm.fetch_add(1, Ordering::Relaxed);
            let _ = e;
            return Ok(());
        }
        (Err(e), Reference::Rendered(_)) => return Err(format!("render failed: {e}")),
    };
    let reference_text = std::fs::read_to_string(reference_file).map_err(|e| e.to_string())?;
    let diffs = stream_differences(&reference_text, &rendered)?;
    tally.compared.fetch_add(1, Ordering::Relaxed);
    if diffs.is_empty() {
        return Ok(());
    }
    Err(format!(
        "{} differences from Helm (reference {}), first:\n    {}",
        diffs.len(),
        reference_file.display(),
        diffs
            .iter()
            .take(12)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n    ")
    ))
}

/// Why Helm refuses values, by kind (from the text of Helm's error).
#[derive(Debug, PartialEq)]
pub enum Refusal {
    /// The values do not fit `values.schema.json`.
    Schema,
    /// A template's `fail` (Helm: "execution error at (cilium/templates/...)"), or a template
    /// that breaks on the values while it runs (`dig` through a null, a field of a non-map:
    /// "executing \"cilium/templates/...\" at <...>: error calling ..."): either way the chart
    /// refuses a value, which the renderer names (`RenderError::Value`).
    ChartFail,
    /// The chart's `kubeVersion` constraint excludes the cluster.
    KubeVersion,
}

pub fn helm_refusal(text: &str) -> Option<Refusal> {
    if text.contains("values don't meet the specifications of the schema") {
        Some(Refusal::Schema)
    } else if text.contains("execution error at (")
        || (text.contains("executing \"cilium/templates/")
            && [
                "error calling ",
                "nil pointer evaluating ",
                "can't evaluate field ",
            ]
            .iter()
            .any(|e| text.contains(e)))
    {
        Some(Refusal::ChartFail)
    } else if text.contains("requires kubeVersion") {
        Some(Refusal::KubeVersion)
    } else {
        None
    }
}

/// The kind of the renderer's refusal, where it matches one of Helm's: a value the chart `fail`s
/// on is a `RenderError::Value` naming it.
pub fn our_refusal(e: &RenderError) -> Option<Refusal> {
    match e {
        RenderError::Schema(_) => Some(Refusal::Schema),
        RenderError::Value { .. } => Some(Refusal::ChartFail),
        RenderError::Template(t)
            if matches!(
                t.kind,
                cilium_cmp_render::engine::ErrorKind::Fail
                    | cilium_cmp_render::engine::ErrorKind::Exec
            ) =>
        {
            Some(Refusal::ChartFail)
        }
        RenderError::KubeTooOld { .. } => Some(Refusal::KubeVersion),
        _ => None,
    }
}

/// Helm and the renderer refuse the values for the same kind of reason.
pub fn same_refusal(ours: &RenderError, helm: &str, tally: &Tally) -> Result<(), String> {
    let theirs = helm_refusal(helm).ok_or_else(|| {
        format!("Helm's refusal is of no known kind (extend helm_refusal): {helm}")
    })?;
    match our_refusal(ours) {
        Some(kind) if kind == theirs => {
            // A schema refusal names the same values: every path Helm's lists (`at '/a/b'`).
            if kind == Refusal::Schema {
                let text = ours.to_string();
                let ours_named: Vec<&str> =
                    ours.violations().iter().flat_map(|v| v.paths()).collect();
                // Helm names the value, or the mapping holding the values it refuses.
                let unnamed: Vec<String> = schema_paths(helm)
                    .into_iter()
                    .filter(|p| {
                        let under = format!("{p}.");
                        !ours_named
                            .iter()
                            .any(|o| *o == p.as_str() || o.starts_with(&under))
                    })
                    .collect();
                if !unnamed.is_empty() {
                    return Err(format!(
                        "both refuse by the schema, but the renderer does not name {unnamed:?}. Helm: {}\nrenderer: {text}",
                        helm.trim()
                    ));
                }
            }
            tally.refused_like_helm.fetch_add(1, Ordering::Relaxed);
            Ok(())
        }
        kind => Err(format!(
            "Helm refuses ({theirs:?}: {}), the renderer refuses as {kind:?}: {ours}",
            helm.trim()
        )),
    }
}

/// The values paths a schema refusal of Helm's names (`- at '/a/b': ...`), dotted; paths
/// through list items are left out (the two write indices differently).
fn schema_paths(helm: &str) -> Vec<String> {
    helm.lines()
        .filter_map(|l| l.trim_start().strip_prefix("- at '/"))
        .filter_map(|l| l.split_once('\'').map(|(p, _)| p))
        .filter(|p| !p.is_empty() && !p.split('/').any(|k| k.bytes().all(|b| b.is_ascii_digit())))
        .map(|p| p.replace('/', "."))
        .collect()
}

/// The key of a cached Helm render: the tool, the helper scripts, the archive and the case text.
pub fn cache_key(tools: &Path, archive_name: &str, text: &str) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut h = Sha256::new();
    for part in [
        HELM_TOOL.as_bytes(),
        &std::fs::read(tools.join("helm_ref.py")).unwrap_or_default(),
        &std::fs::read(root.join("tests/it/support/helm_render.py")).unwrap_or_default(),
        archive_name.as_bytes(),
        text.as_bytes(),
    ] {
        h.update((part.len() as u64).to_le_bytes());
        h.update(part);
    }
    h.finalize()[..12]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The cached Helm outcome at `base` (`base.yaml` or `base.error`), if there is one.
pub fn cached(base: &Path) -> Option<Reference> {
    let with = |ext: &str| {
        let mut p = base.as_os_str().to_owned();
        p.push(ext);
        PathBuf::from(p)
    };
    if with(".yaml").is_file() {
        Some(Reference::Rendered(with(".yaml")))
    } else if with(".error").is_file() {
        Some(Reference::Refused(
            std::fs::read_to_string(with(".error")).unwrap_or_default(),
        ))
    } else {
        None
    }
}

/// Renders with real Helm, for each job (archive, scenario file, output base), in `processes`
/// Python processes at once (each loads Helm once for all its jobs; `tests/it/support/helm_render.py`).
pub fn render_with_helm(
    python: &Path,
    tools: &Path,
    scratch: &Path,
    jobs: &[(PathBuf, PathBuf, PathBuf)],
    processes: usize,
) -> Result<(), String> {
    std::fs::create_dir_all(scratch).map_err(|e| e.to_string())?;
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let per = jobs.len().div_ceil(processes.max(1)).max(1);
    let mut children = Vec::new();
    for (i, chunk) in jobs.chunks(per).enumerate() {
        let list: Vec<Value> = chunk
            .iter()
            .map(|(chart, scenario, out)| {
                serde_json::json!({"chart": chart, "scenario": scenario, "out": out})
            })
            .collect();
        let file = scratch.join(format!("jobs-{}-{i}.json", std::process::id()));
        std::fs::write(&file, serde_json::to_string(&list).unwrap()).map_err(|e| e.to_string())?;
        let child = Command::new(python)
            .arg(root.join("tests/it/support/helm_render.py"))
            .arg(tools)
            .arg(&file)
            .spawn()
            .map_err(|e| format!("cannot run {}: {e}", python.display()))?;
        children.push((child, file));
    }
    let mut failure = None;
    for (mut child, file) in children {
        let status = child.wait().map_err(|e| e.to_string())?;
        let _ = std::fs::remove_file(&file);
        if !status.success() {
            failure = Some(format!("rendering with Helm failed ({status}); see above"));
        }
    }
    failure.map_or(Ok(()), Err)
}

// ---------------------------------------------------------------------------------------------
// The referee's rules for two streams

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

fn objects(text: &str, candidate: bool) -> Result<BTreeMap<String, Value>, String> {
    let mut out = BTreeMap::new();
    let docs =
        cilium_cmp_yaml::yaml::parse_stream(text).map_err(|e| format!("does not parse: {e}"))?;
    for doc in docs {
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
        if out.insert(k.clone(), o).is_some() {
            return Err(format!("duplicate object {k}"));
        }
    }
    Ok(out)
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

/// Every difference between a reference stream and the renderer's (empty when identical).
pub fn stream_differences(reference: &str, rendered: &str) -> Result<Vec<String>, String> {
    let r = objects(reference, false).map_err(|e| format!("reference {e}"))?;
    let c = objects(rendered, true).map_err(|e| format!("render {e}"))?;
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
    Ok(diffs)
}
