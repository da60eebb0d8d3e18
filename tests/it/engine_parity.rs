//! Parity of the template engine with Helm 4: every scenario of
//! `../shared/cilium-reference/scenarios/` and every release with references there is rendered
//! from the official chart archive by `cilium_cmp_render::engine` and compared with Helm's render by
//! `../shared/tools/parity.py --exact-hashes` (checksum annotations and certgen Job names
//! included). A scenario whose values lead to a function this engine never evaluates (random
//! certificates) must be refused with that function named; it is counted apart.
//!
//! `ENGINE_PARITY_OUT=DIR` keeps each candidate stream as DIR/VERSION/SCENARIO.yaml.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use cilium_cmp_render::chart::archive::ChartFiles;
use cilium_cmp_render::engine::helm::{coalesce, to_stream, EngineError};
use cilium_cmp_render::engine::{ChartTemplates, ErrorKind, RenderOptions};
use libtest_mimic::{Failed, Trial};

// The tests' Python (PyYAML for parity.py), made under target/ as for every other Helm check.
use crate::support::harness;
use crate::support::python;

static IDENTICAL: AtomicUsize = AtomicUsize::new(0);
static REFUSED: AtomicUsize = AtomicUsize::new(0);
static TOTAL: AtomicUsize = AtomicUsize::new(0);

fn shared() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared")
}

type Parsed = Arc<Mutex<Option<Arc<ChartTemplates>>>>;

/// One test per release with references and scenario (`engine_parity::VERSION/SCENARIO`), the
/// refusal of the chart's defaults, and one render-only test per release without references.
pub fn tests() -> Vec<Trial> {
    let root = shared();
    let scen_dir = root.join("cilium-reference/scenarios");
    let rendered = root.join("cilium-reference/rendered");
    let mut trials = Vec::new();
    let (Ok(scens), Ok(versions)) = (std::fs::read_dir(&scen_dir), std::fs::read_dir(&rendered))
    else {
        // As every test that needs ../shared (tests/it/support/harness.rs): ignored with the reason,
        // a failure under CI, never a pass.
        let why =
            "../shared/cilium-reference is absent: the engine's parity with Helm is not checked";
        let ci = std::env::var_os("CI").is_some_and(|v| !v.is_empty());
        eprintln!(
            "!!! {} engine_parity: {why}",
            if ci { "FAILS (CI)" } else { "IGNORED" }
        );
        let trial = Trial::test(harness::named(file!(), "engine_parity"), move || {
            Err(why.into())
        })
        .with_ignored_flag(!ci);
        return vec![trial];
    };
    let mut scenarios: Vec<PathBuf> = scens
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .collect();
    scenarios.sort();
    let mut versions: Vec<String> = versions
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    versions.sort();
    for v in versions {
        let parsed: Parsed = Arc::new(Mutex::new(None));
        let once = Arc::new(OnceLock::<Result<Arc<ChartTemplates>, String>>::new());
        for s in &scenarios {
            let name = s.file_stem().unwrap().to_string_lossy().into_owned();
            let reference = rendered.join(&v).join(format!("{name}.yaml"));
            if !reference.exists() {
                continue;
            }
            let (v2, s2, once2, _p) = (v.clone(), s.clone(), once.clone(), parsed.clone());
            trials.push(Trial::test(
                harness::named(file!(), &format!("{v}/{name}")),
                move || {
                    let chart = once2
                        .get_or_init(|| {
                            let files =
                                ChartFiles::open(&shared().join(format!("charts/cilium-{v2}.tgz")))
                                    .map_err(|e| e.to_string())?;
                            ChartTemplates::parse(&files)
                                .map(Arc::new)
                                .map_err(|e| e.to_string())
                        })
                        .clone()?;
                    run(&chart, &v2, &s2, &reference).map_err(Failed::from)
                },
            ));
        }
    }
    // The chart's own defaults: `hubble.tls.auto.method: helm` mints certificates, which the
    // engine refuses, naming the function and the template line that reached it.
    trials.push(Trial::test(
        harness::named(file!(), "refusal/1.20.0/chart-defaults"),
        || refusal_of_chart_defaults().map_err(Failed::from),
    ));
    // Releases without references: every scenario renders (or the chart itself fails it with
    // `fail`/`required`, as Helm would); an engine error is a failure.
    if let Ok(charts) = std::fs::read_dir(root.join("charts")) {
        let mut archives: Vec<PathBuf> = charts
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "tgz"))
            .collect();
        archives.sort();
        for a in archives {
            let v = a
                .file_stem()
                .unwrap()
                .to_string_lossy()
                .trim_start_matches("cilium-")
                .to_string();
            if rendered.join(&v).exists() {
                continue;
            }
            let scenarios = scenarios.clone();
            trials.push(Trial::test(
                harness::named(file!(), &format!("render-only/{v}")),
                move || render_only(&a, &scenarios).map_err(Failed::from),
            ));
        }
    }
    trials
}

/// How many renders were identical to Helm's, once the run is over (nothing when none ran).
pub fn summary() {
    let total = TOTAL.load(Ordering::SeqCst);
    if total > 0 {
        eprintln!(
            "engine parity: {}/{} identical with --exact-hashes, {} refused as non-deterministic",
            IDENTICAL.load(Ordering::SeqCst),
            total,
            REFUSED.load(Ordering::SeqCst)
        );
    }
}

fn refusal_of_chart_defaults() -> Result<(), String> {
    let files =
        ChartFiles::open(&shared().join("charts/cilium-1.20.0.tgz")).map_err(|e| e.to_string())?;
    let chart = ChartTemplates::parse(&files).map_err(|e| e.to_string())?;
    let values = coalesce(&chart.default_values, &serde_json::json!({}));
    let opts = RenderOptions {
        release_name: "cilium".into(),
        namespace: "kube-system".into(),
        kube_version: "1.35.0".into(),
        api_versions: Vec::new(),
    };
    match chart.render(&values, &opts) {
        Err(EngineError::Template(e)) => match &e.kind {
            ErrorKind::NonDeterministic { function }
                if ["lookup", "genCA", "genSignedCert"].contains(&function.as_str())
                    && e.line > 0 =>
            {
                eprintln!("chart defaults refused as expected: {e}");
                Ok(())
            }
            _ => Err(format!(
                "expected a refusal of a certificate function, got {e}"
            )),
        },
        Err(e) => Err(format!("expected a refusal, got {e}")),
        Ok(m) => Err(format!(
            "rendered {} documents with random certificates",
            m.len()
        )),
    }
}

/// Scenario file → (coalesced values, options).
fn scenario_inputs(
    chart: &ChartTemplates,
    scenario: &Path,
) -> Result<(serde_json::Value, RenderOptions), String> {
    let text = std::fs::read_to_string(scenario).map_err(|e| e.to_string())?;
    let doc = cilium_cmp_yaml::yaml::read::parse_value(&text).map_err(|e| e.to_string())?;
    let kube = match doc.get("kubeVersion") {
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => "1.35.0".into(),
    };
    let apis: Vec<String> = doc
        .get("apiVersions")
        .and_then(|a| a.as_array())
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default();
    let namespace = doc
        .get("namespace")
        .and_then(|n| n.as_str())
        .unwrap_or("kube-system")
        .to_string();
    let user = doc
        .get("values")
        .cloned()
        .unwrap_or(serde_json::Value::Null);
    let values = coalesce(&chart.default_values, &user);
    Ok((
        values,
        RenderOptions {
            release_name: "cilium".into(),
            namespace,
            kube_version: kube,
            api_versions: apis,
        },
    ))
}

fn render_only(archive: &Path, scenarios: &[PathBuf]) -> Result<(), String> {
    let files = ChartFiles::open(archive).map_err(|e| e.to_string())?;
    let chart = ChartTemplates::parse(&files).map_err(|e| e.to_string())?;
    let mut problems = Vec::new();
    for s in scenarios {
        let (values, opts) = scenario_inputs(&chart, s)?;
        match chart.render(&values, &opts) {
            Ok(m) if !m.is_empty() => {
                if let Err(e) = cilium_cmp_render::engine::helm::objects(&m) {
                    problems.push(format!("{}: {e}", s.display()));
                }
            }
            Ok(_) => problems.push(format!("{}: no documents", s.display())),
            Err(EngineError::Template(e)) if e.kind == ErrorKind::Fail => {}
            Err(e) => problems.push(format!("{}: {e}", s.display())),
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n"))
    }
}

fn run(
    chart: &ChartTemplates,
    version: &str,
    scenario: &Path,
    reference: &Path,
) -> Result<(), String> {
    TOTAL.fetch_add(1, Ordering::SeqCst);
    let (values, opts) = scenario_inputs(chart, scenario)?;
    let manifests = match chart.render(&values, &opts) {
        Ok(m) => m,
        Err(EngineError::Template(e)) if matches!(e.kind, ErrorKind::NonDeterministic { .. }) => {
            REFUSED.fetch_add(1, Ordering::SeqCst);
            eprintln!("{version}/{}: refused: {e}", scenario.display());
            // The refusal must name the function and where the chart reached it.
            if !e.message.contains("not evaluated")
                || e.line == 0
                || !e.file.contains("/templates/")
            {
                return Err(format!("a refusal without its function or place: {e}"));
            }
            return Ok(());
        }
        Err(e) => return Err(format!("render failed: {e}")),
    };
    let stream = to_stream(&manifests);
    let dir = match std::env::var_os("ENGINE_PARITY_OUT") {
        Some(d) => PathBuf::from(d).join(version),
        None => std::env::temp_dir()
            .join(format!("engine-parity-{}", std::process::id()))
            .join(version),
    };
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let cand = dir.join(scenario.file_name().unwrap());
    std::fs::write(&cand, &stream).map_err(|e| e.to_string())?;
    let out = Command::new(python::python()?)
        .arg(shared().join("tools/parity.py"))
        .arg("--exact-hashes")
        .arg(reference)
        .arg(&cand)
        .output()
        .map_err(|e| format!("cannot run the tests' python: {e}"))?;
    if std::env::var_os("ENGINE_PARITY_OUT").is_none() {
        let _ = std::fs::remove_file(&cand);
    }
    if out.status.success() {
        IDENTICAL.fetch_add(1, Ordering::SeqCst);
        Ok(())
    } else {
        let mut msg = String::from_utf8_lossy(&out.stdout).into_owned();
        msg.push_str(&String::from_utf8_lossy(&out.stderr));
        msg.truncate(4000);
        Err(format!("differs from Helm's render:\n{msg}"))
    }
}
