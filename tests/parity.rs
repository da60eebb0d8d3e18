//! Parity with real Helm: one test per supported release and scenario (`VERSION/NAME`, e.g.
//! `cargo test --test parity -- 1.19.6/preflight`). Scenarios are the shared ones in
//! `../shared/cilium-reference/scenarios/` and the project's own in `tests/scenarios/` (same format).
//!
//! The reference for a pair is the committed render in `../shared/cilium-reference/rendered/`
//! where one exists, else a render by real Helm (`helm-python-sdk`, through
//! `../shared/tools/helm_ref.py`) of the official archive `cilium-VERSION.tgz` from
//! `CILIUM_CMP_CHART_DIR` (default `../shared/charts`). Those are made in one Python process before
//! the tests run and kept under `target/` by a hash of archive name, scenario text and tool version.
//!
//! Same rules as the referee `parity.py`: objects matched by apiVersion, kind, namespace and name;
//! nulls count as absent; `*-checksum` annotations must be 64 hex digits; certgen Job name hashes are
//! 10 hex digits; our content-hash annotation is ignored. Where Helm refuses the values, the
//! renderer must refuse them too. A scenario that needs the chart archive is refused, naming the
//! value, when the archive is absent. One addition: where the values hold a value that only other
//! supported releases have, Helm ignores it and the renderer refuses it by design
//! (`known_keys`); that refusal passes, and the run ends with how many there were. Likewise a
//! refusal of what the cluster would refuse later (`admission.rs`), for the pairs listed in
//! `REFUSED_AS_CLUSTER_WOULD` only.
//!
//! Release day is replayed here too (`src/twin.rs`). `twin/VERSION/NAME`: each supported patch
//! release whose templates equal its predecessor's, rendered from its archive as if this binary
//! did not list it, against Helm's reference of that release. `repacked/VERSION/NAME`: an archive
//! made from the newest release of each minor as an unlisted one (`1.X.99`, new image tags, see
//! `support/repack.rs`), against Helm's render of that very archive.
//!
//! Without `../shared` or without a working Python, the pairs that cannot be checked are reported
//! on one line and ignored; with `CI=true` they fail instead.

#[path = "support/python.rs"]
mod python;
#[path = "support/repack.rs"]
mod repack;
#[path = "support/scenario.rs"]
mod scenario;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use cilium_cmp::chart::ChartFiles;
use cilium_cmp::RenderError;
use libtest_mimic::{Arguments, Failed, Trial};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// Pairs whose values hold a value of another release, which the renderer refuses by design.
static REFUSED_AS_OTHER_RELEASE: AtomicUsize = AtomicUsize::new(0);

/// Pairs Helm renders that the cluster would refuse later, which the renderer refuses by design
/// (`src/admission.rs`): (release prefix, scenario, what the refusal names, why). Every other
/// such refusal of a scenario is a false alarm and fails.
const REFUSED_AS_CLUSTER_WOULD: &[(&str, &str, &str, &str)] = &[(
    "1.18.",
    "ztunnel-default",
    "encryption.type (set in",
    "ztunnel encryption arrived in Cilium 1.19: the 1.18 chart turns no encryption on",
)];
static REFUSED_AS_CLUSTER_WOULD_COUNT: AtomicUsize = AtomicUsize::new(0);

/// What the references are rendered with; part of every cached reference's key.
const HELM_TOOL: &str = "helm-python-sdk==0.2.2";

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}

fn loud(msg: &str) {
    eprintln!("\n!!! PARITY: {msg}\n");
}

// ---------------------------------------------------------------------------------------------
// Comparison (the rules of ../shared/tools/parity.py)

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
    let docs = cilium_cmp::yaml::parse_stream(text).map_err(|e| format!("does not parse: {e}"))?;
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
fn stream_differences(reference: &str, rendered: &str) -> Result<Vec<String>, String> {
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

// ---------------------------------------------------------------------------------------------
// Scenarios, references and where they come from

struct Scenario {
    name: String,
    file: PathBuf,
    text: String,
    /// One of `../shared/cilium-reference/scenarios/` (whose committed renders apply to it).
    shared: bool,
    needs_archive: bool,
}

/// How a case's release is read.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A supported release, with its compiled-in facts.
    Listed,
    /// A supported release read from its archive as if unlisted (`twin.rs`).
    Twin,
    /// An archive made as an unlisted release (`support/repack.rs`), read as a twin.
    Repacked,
}

/// One test: a release and a scenario.
struct Case {
    version: &'static str,
    scenario: Arc<Scenario>,
    kind: Kind,
}

impl Case {
    fn name(&self) -> String {
        let prefix = match self.kind {
            Kind::Listed => "",
            Kind::Twin => "twin/",
            Kind::Repacked => "repacked/",
        };
        format!("{prefix}{}/{}", self.version, self.scenario.name)
    }
}

/// What real Helm made of a case's values.
#[derive(Clone)]
enum Reference {
    Rendered(PathBuf),
    Refused,
}

struct Setup {
    reference: PathBuf,
    charts: PathBuf,
    cache: PathBuf,
    /// Each release's archive, read once for all its tests.
    opened: HashMap<&'static str, OnceLock<Result<ChartFiles, String>>>,
    /// The archives made as unlisted releases, by version (`support/repack.rs`).
    repacked: HashMap<&'static str, PathBuf>,
}

impl Setup {
    fn chart_files(&self, version: &str) -> Option<Result<ChartFiles, String>> {
        let path = self.archive(version)?;
        let once = self.opened.get(version)?;
        Some(
            once.get_or_init(|| {
                ChartFiles::open(&path).map_err(|e| format!("{}: {e}", path.display()))
            })
            .clone(),
        )
    }

    fn archive(&self, version: &str) -> Option<PathBuf> {
        if let Some(p) = self.repacked.get(version) {
            return Some(p.clone());
        }
        let p = self.charts.join(format!("cilium-{version}.tgz"));
        p.is_file().then_some(p)
    }

    fn no_archive(&self) -> String {
        format!(
            "the chart archive cilium-VERSION.tgz is missing from {} (set CILIUM_CMP_CHART_DIR)",
            self.charts.display()
        )
    }

    /// The committed reference, for a shared scenario on a release that has committed renders.
    fn committed(&self, case: &Case) -> Option<Reference> {
        let dir = self.reference.join("rendered").join(case.version);
        if !case.scenario.shared || !dir.is_dir() || case.kind == Kind::Repacked {
            return None;
        }
        let file = dir.join(format!("{}.yaml", case.scenario.name));
        if file.is_file() {
            Some(Reference::Rendered(file))
        } else if file.with_extension("error").is_file() {
            Some(Reference::Refused)
        } else {
            None // a scenario newer than the committed renders: Helm renders it
        }
    }

    /// Where this case's Helm render is cached, without extension (`.yaml` or `.error` follows).
    fn cache_base(&self, case: &Case) -> PathBuf {
        let mut h = Sha256::new();
        // An official archive is known by its name (pinned), a made one by its bytes.
        let archive = match case.kind {
            Kind::Repacked => self
                .archive(case.version)
                .map(|p| Sha256::digest(read_or_empty(&p)).to_vec())
                .unwrap_or_default(),
            _ => format!("cilium-{}.tgz", case.version).into_bytes(),
        };
        for part in [
            HELM_TOOL.as_bytes(),
            &read_or_empty(&self.reference.join("../tools/helm_ref.py")),
            &read_or_empty(&root().join("tests/support/helm_render.py")),
            &archive,
            case.scenario.text.as_bytes(),
        ] {
            h.update((part.len() as u64).to_le_bytes());
            h.update(part);
        }
        let hex: String = h.finalize()[..12]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        self.cache
            .join(format!("{}-{}-{hex}", case.version, case.scenario.name))
    }

    fn cached(&self, case: &Case) -> Option<Reference> {
        let base = self.cache_base(case).into_os_string();
        let with = |ext: &str| {
            let mut p = base.clone();
            p.push(ext);
            PathBuf::from(p)
        };
        if with(".yaml").is_file() {
            Some(Reference::Rendered(with(".yaml")))
        } else if with(".error").is_file() {
            Some(Reference::Refused)
        } else {
            None
        }
    }
}

fn read_or_empty(p: &Path) -> Vec<u8> {
    std::fs::read(p).unwrap_or_default()
}

fn scenarios_in(dir: &Path, shared: bool) -> Vec<Scenario> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<Scenario> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .map(|file| {
            let text = std::fs::read_to_string(&file)
                .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
            let doc = cilium_cmp::yaml::parse_values(&text)
                .unwrap_or_else(|e| panic!("{}: {e}", file.display()))
                .value;
            Scenario {
                name: file.file_stem().unwrap().to_string_lossy().into_owned(),
                needs_archive: doc["needsChartArchive"] == Value::Bool(true),
                file,
                text,
                shared,
            }
        })
        .collect();
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

fn all_scenarios(reference: &Path) -> Vec<Arc<Scenario>> {
    let shared = scenarios_in(&reference.join("scenarios"), true);
    let own = scenarios_in(&root().join("tests/scenarios"), false);
    for s in &own {
        assert!(
            !shared.iter().any(|x| x.name == s.name),
            "tests/scenarios/{}.yaml has the name of a shared scenario; rename it",
            s.name
        );
    }
    shared.into_iter().chain(own).map(Arc::new).collect()
}

/// Renders the missing references with real Helm, in one Python process. Returns why not, when
/// it could not.
fn render_with_helm(setup: &Setup, cases: &[&Case]) -> Result<(), String> {
    let python = python::python()?;
    std::fs::create_dir_all(&setup.cache).map_err(|e| e.to_string())?;
    let jobs: Vec<Value> = cases
        .iter()
        .map(|c| {
            serde_json::json!({
                "chart": setup.archive(c.version).expect("checked by the caller"),
                "scenario": c.scenario.file,
                "out": setup.cache_base(c),
            })
        })
        .collect();
    let jobs_file = setup
        .cache
        .join(format!("jobs-{}.json", std::process::id()));
    std::fs::write(&jobs_file, serde_json::to_string(&jobs).unwrap()).map_err(|e| e.to_string())?;
    eprintln!(
        "parity: rendering {} references with real Helm (once; cached in {})",
        jobs.len(),
        setup.cache.display()
    );
    let status = Command::new(python)
        .arg(root().join("tests/support/helm_render.py"))
        .arg(setup.reference.join("../tools"))
        .arg(&jobs_file)
        .status();
    let _ = std::fs::remove_file(&jobs_file);
    match status {
        Ok(s) if s.success() => Ok(()),
        Ok(s) => Err(format!("rendering with Helm failed ({s}); see above")),
        Err(e) => Err(format!("cannot run {}: {e}", python.display())),
    }
}

/// Each case's reference, by test name, and why the others cannot be checked. Committed and
/// cached references are taken as they are; the rest are rendered with Helm first.
fn references_for(
    setup: &Setup,
    cases: &[&Case],
) -> (HashMap<String, Reference>, HashMap<String, String>) {
    let mut references = HashMap::new();
    let mut unavailable = HashMap::new();
    let mut to_render = Vec::new();
    for &case in cases {
        let archive = setup.archive(case.version);
        if case.kind != Kind::Listed && archive.is_none() {
            // Read from the archive or not at all.
            unavailable.insert(case.name(), setup.no_archive());
            continue;
        }
        if case.scenario.needs_archive && archive.is_none() {
            if in_ci() {
                unavailable.insert(case.name(), setup.no_archive());
            }
            continue; // checked as a refusal, no reference needed
        }
        if let Some(r) = setup.committed(case).or_else(|| setup.cached(case)) {
            references.insert(case.name(), r);
        } else if archive.is_none() {
            unavailable.insert(case.name(), setup.no_archive());
        } else {
            to_render.push(case);
        }
    }
    if to_render.is_empty() {
        return (references, unavailable);
    }
    let failure = render_with_helm(setup, &to_render).err();
    for c in to_render {
        match (setup.cached(c), &failure) {
            (Some(r), _) => {
                references.insert(c.name(), r);
            }
            (None, Some(why)) => {
                unavailable.insert(c.name(), why.clone());
            }
            (None, None) => {
                unavailable.insert(c.name(), "Helm wrote no reference".into());
            }
        }
    }
    (references, unavailable)
}

// ---------------------------------------------------------------------------------------------
// One test

fn check(setup: &Setup, case: &Case, reference: Option<Reference>) -> Result<(), Failed> {
    let (mut inputs, _) = scenario::inputs_from_file(&case.scenario.file, case.version)
        .ok_or("the scenario does not read")?;
    let archive = setup.chart_files(case.version).transpose()?;
    let has_archive = archive.is_some();
    inputs.chart = archive;
    if case.kind == Kind::Twin {
        inputs.read_as_twin = true;
    }
    let result = cilium_cmp::render(&inputs);
    if case.scenario.needs_archive && !has_archive {
        return match result {
            Err(e) if e.to_string().contains("cni.iptablesRemoveAWSRules") => Ok(()),
            Err(e) => Err(format!("refused, but without naming cni.iptablesRemoveAWSRules: {e}").into()),
            Ok(_) => Err("rendered without the chart archive; must be refused naming cni.iptablesRemoveAWSRules".into()),
        };
    }
    let reference = reference.ok_or("no reference")?;
    let (rendered, reference_file) = match (result, reference) {
        (Ok(out), Reference::Rendered(file)) => (out, file),
        (Err(_), Reference::Refused) => return Ok(()),
        (Ok(_), Reference::Refused) => {
            return Err("Helm refuses these values, the renderer did not".into())
        }
        // Helm ignores values its chart does not know; the renderer refuses, by design, those
        // that another supported release has (renamed, removed or not yet there). Any other
        // unknown value in a scenario is a false alarm of the check.
        (Err(RenderError::UnknownValues { report, .. }), Reference::Rendered(_))
            if report.more == 0 && report.values.iter().all(|v| v.is_other_release()) =>
        {
            REFUSED_AS_OTHER_RELEASE.fetch_add(1, Ordering::Relaxed);
            return Ok(());
        }
        (Err(RenderError::WouldBeRejected(why)), Reference::Rendered(_))
            if REFUSED_AS_CLUSTER_WOULD
                .iter()
                .any(|(release, scenario, needle, _)| {
                    case.version.starts_with(release)
                        && case.scenario.name == *scenario
                        && why.contains(needle)
                }) =>
        {
            REFUSED_AS_CLUSTER_WOULD_COUNT.fetch_add(1, Ordering::Relaxed);
            return Ok(());
        }
        (Err(e), Reference::Rendered(_)) => return Err(format!("render failed: {e}").into()),
    };
    let reference_text = std::fs::read_to_string(&reference_file).map_err(|e| e.to_string())?;
    let diffs = stream_differences(&reference_text, &rendered)?;
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
    )
    .into())
}

// ---------------------------------------------------------------------------------------------

fn main() -> ExitCode {
    let args = Arguments::from_args();
    let reference = root().join("../shared/cilium-reference");
    if !reference.is_dir() {
        let why = "../shared/cilium-reference is absent: parity with Helm is not checked";
        loud(why);
        let trial = Trial::test("parity", move || Err(why.into())).with_ignored_flag(!in_ci());
        return libtest_mimic::run(&args, vec![trial]).exit_code();
    }
    let charts = std::env::var_os("CILIUM_CMP_CHART_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("../shared/charts"));
    // The unlisted releases, made once per run from the official archives at hand.
    let made = Path::new(env!("CARGO_TARGET_TMPDIR")).join("release-day");
    let repacked: HashMap<&'static str, PathBuf> = repack::FROM
        .iter()
        .filter_map(|(from, to)| {
            let source = charts.join(format!("cilium-{from}.tgz"));
            source
                .is_file()
                .then(|| (*to, repack::repack(&source, from, to, &made, None)))
        })
        .collect();
    let setup = Setup {
        charts,
        cache: Path::new(env!("CARGO_TARGET_TMPDIR")).join("helm-references"),
        reference,
        opened: cilium_cmp::versions::supported()
            .chain(repack::FROM.iter().map(|(_, to)| *to))
            .map(|v| (v, OnceLock::new()))
            .collect(),
        repacked,
    };
    let scenarios = all_scenarios(&setup.reference);
    let twins: Vec<(&'static str, Kind)> = cilium_cmp::twin::replayable()
        .into_iter()
        .map(|(v, _)| (v, Kind::Twin))
        .chain(repack::FROM.iter().map(|(_, to)| (*to, Kind::Repacked)))
        .collect();
    let cases: Vec<Case> = cilium_cmp::versions::supported()
        .map(|v| (v, Kind::Listed))
        .chain(twins)
        .flat_map(|(version, kind)| {
            scenarios.iter().map(move |s| Case {
                version,
                scenario: s.clone(),
                kind,
            })
        })
        .collect();

    let (references, unavailable) = if args.list {
        Default::default()
    } else {
        let selected: Vec<&Case> = cases
            .iter()
            .filter(|c| !args.is_filtered_out(&Trial::test(c.name(), || Ok(()))))
            .collect();
        references_for(&setup, &selected)
    };
    report_unavailable(&unavailable);

    let setup = Arc::new(setup);
    let trials = cases
        .into_iter()
        .map(|case| {
            let name = case.name();
            if let Some(why) = unavailable.get(&name) {
                let why = why.clone();
                return Trial::test(name, move || Err(why.into())).with_ignored_flag(!in_ci());
            }
            let reference = references.get(&name).cloned();
            let setup = setup.clone();
            Trial::test(name, move || check(&setup, &case, reference))
        })
        .collect();
    let conclusion = libtest_mimic::run(&args, trials);
    let refused = REFUSED_AS_OTHER_RELEASE.load(Ordering::Relaxed);
    if refused > 0 {
        eprintln!("parity: {refused} of the passing pairs were refused for values that only other releases have (Helm ignores them)");
    }
    let refused = REFUSED_AS_CLUSTER_WOULD_COUNT.load(Ordering::Relaxed);
    if refused > 0 {
        eprintln!("parity: {refused} of the passing pairs were refused because the cluster would refuse what Helm renders (src/admission.rs; listed in tests/parity.rs)");
    }
    conclusion.exit_code()
}

/// One line per reason some selected cases cannot be checked.
fn report_unavailable(unavailable: &HashMap<String, String>) {
    let mut by_reason: BTreeMap<&str, usize> = BTreeMap::new();
    for why in unavailable.values() {
        *by_reason.entry(why).or_default() += 1;
    }
    let outcome = if in_ci() {
        "FAIL (CI=true)"
    } else {
        "are ignored"
    };
    for (why, n) in by_reason {
        loud(&format!("{n} release/scenario pairs {outcome}: {why}"));
    }
}
