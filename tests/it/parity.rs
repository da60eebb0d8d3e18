//! Parity with real Helm: one test per supported release and scenario (`VERSION/NAME`, e.g.
//! `cargo test --test it -- parity::1.19.6/preflight`). Scenarios are the shared ones in
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
//! renderer must refuse them too, for the same kind of reason (schema, a chart `fail`, the
//! chart's Kubernetes version). A scenario that needs the chart archive is refused, naming the
//! value, when the archive is absent. Two refusals are the renderer's by design, and neither
//! lets a pair pass unchecked: values that only other supported releases have (`known_keys`;
//! Helm ignores them) are rendered again with unknown keys allowed, and renders the cluster would
//! refuse later (`admission.rs`, the rules in `REFUSED_AS_CLUSTER_WOULD`) again without that
//! refusal; either way the render is then compared with Helm's. The run ends with the counts.
//!
//! Release day is replayed here too (`crates/render/src/chart/unlisted.rs`). `unlisted/VERSION/NAME`: the
//! newest supported release of each minor, its facts read from its archive as if this binary did
//! not list it, against Helm's reference of that release. `repacked/VERSION/NAME`: an archive
//! made from the newest release of each minor as an unlisted one (`1.X.99`, new image tags, see
//! `support/repack.rs`), against Helm's render of that very archive.
//!
//! Without `../shared` or without a working Python, the pairs that cannot be checked are reported
//! on one line and ignored; with `CI` set (any non-empty value) they fail instead.

use crate::support::harness;
use crate::support::helm_compare;
use crate::support::python;
use crate::support::repack;
use crate::support::scenario;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use cilium_cmp_render::chart::ChartFiles;
use cilium_cmp_render::error::RenderError;
use helm_compare::{Reference, Tally};
use libtest_mimic::{Arguments, Failed, Trial};
use serde_json::Value;
use sha2::Digest;

/// How the passing pairs were checked.
static TALLY: Tally = Tally::new();

/// Renders Helm makes that the cluster would refuse later, which the renderer refuses by design
/// (`crates/render/src/admission.rs`), as rules: (release prefix, what the refusal says, why). Every other such
/// refusal of a scenario is a false alarm and fails.
const REFUSED_AS_CLUSTER_WOULD: &[(&str, &str, &str)] = &[(
    "1.18.",
    "\"ztunnel\" is no encryption Cilium 1.18.",
    "ztunnel encryption arrived in Cilium 1.19: the 1.18 chart turns no encryption on",
)];
fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn in_ci() -> bool {
    std::env::var_os("CI").is_some_and(|v| !v.is_empty())
}

fn loud(msg: &str) {
    eprintln!("\n!!! PARITY: {msg}\n");
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
    /// A supported release read from its archive as if unlisted (`chart::unlisted`).
    Unlisted,
    /// An archive made as an unlisted release (`support/repack.rs`).
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
            Kind::Unlisted => "unlisted/",
            Kind::Repacked => "repacked/",
        };
        format!("{prefix}{}/{}", self.version, self.scenario.name)
    }
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
            Some(Reference::Refused(read_text(&file.with_extension("error"))))
        } else {
            None // a scenario newer than the committed renders: Helm renders it
        }
    }

    /// Where this case's Helm render is cached, without extension (`.yaml` or `.error` follows).
    fn cache_base(&self, case: &Case) -> PathBuf {
        // An official archive is known by its name (pinned), a made one by its bytes.
        let archive = match case.kind {
            Kind::Repacked => self
                .archive(case.version)
                .map(|p| {
                    sha2::Sha256::digest(std::fs::read(&p).unwrap_or_default())
                        .iter()
                        .map(|b| format!("{b:02x}"))
                        .collect()
                })
                .unwrap_or_default(),
            _ => format!("cilium-{}.tgz", case.version),
        };
        let key = helm_compare::cache_key(
            &self.reference.join("../tools"),
            &archive,
            &case.scenario.text,
        );
        self.cache
            .join(format!("{}-{}-{key}", case.version, case.scenario.name))
    }

    fn cached(&self, case: &Case) -> Option<Reference> {
        helm_compare::cached(&self.cache_base(case))
    }
}

fn read_text(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| format!("(unreadable {}: {e})", p.display()))
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
            let doc = cilium_cmp_yaml::yaml::parse_values(&text)
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

/// Renders the missing references with real Helm, two Python processes at a time. Returns why
/// not, when it could not.
fn render_with_helm(setup: &Setup, cases: &[&Case]) -> Result<(), String> {
    let python = python::python()?;
    let jobs: Vec<(PathBuf, PathBuf, PathBuf)> = cases
        .iter()
        .map(|c| {
            (
                setup.archive(c.version).expect("checked by the caller"),
                c.scenario.file.clone(),
                setup.cache_base(c),
            )
        })
        .collect();
    eprintln!(
        "parity: rendering {} references with real Helm (once; cached in {})",
        jobs.len(),
        setup.cache.display()
    );
    helm_compare::render_with_helm(
        python,
        &setup.reference.join("../tools"),
        &setup.cache,
        &jobs,
        2,
    )
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
    if case.kind == Kind::Unlisted {
        // The release's facts read from its archive, as a release this binary does not list.
        inputs.cilium = cilium_cmp_render::versions::Release::FromArchive(
            cilium_cmp_render::release_name::release_name(case.version)
                .ok_or("not a release name")?,
        );
    }
    if !has_archive {
        // Every render evaluates the archive's templates: without it, the refusal says so.
        return match cilium_cmp_render::render::render(&inputs) {
            Err(RenderError::NoChartArchive { .. }) => Ok(()),
            Err(e) => Err(format!("refused, but not for want of the archive: {e}").into()),
            Ok(_) => Err("rendered without the chart archive".into()),
        };
    }
    let reference = reference.ok_or("no reference")?;
    let expected_admission = |why: &str| {
        REFUSED_AS_CLUSTER_WOULD
            .iter()
            .any(|(release, needle, _)| case.version.starts_with(release) && why.contains(needle))
    };
    Ok(helm_compare::check(
        inputs,
        &reference,
        &expected_admission,
        &TALLY,
    )?)
}

// ---------------------------------------------------------------------------------------------

/// One test per release and scenario, named `parity::VERSION/SCENARIO`; the Helm references of
/// the selected ones are made before they run.
pub fn tests() -> Vec<Trial> {
    let args = Arguments::from_args();
    let reference = root().join("../shared/cilium-reference");
    if !reference.is_dir() {
        let why = "../shared/cilium-reference is absent: parity with Helm is not checked";
        loud(why);
        let trial = Trial::test(harness::named(file!(), "parity"), move || Err(why.into()))
            .with_ignored_flag(!in_ci());
        return vec![trial];
    }
    let charts = std::env::var_os("CILIUM_CMP_CHART_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("../shared/charts"));
    let scenarios = all_scenarios(&reference);
    let twins: Vec<(&'static str, Kind)> = repack::FROM
        .iter()
        .map(|(from, _)| (*from, Kind::Unlisted))
        .chain(repack::FROM.iter().map(|(_, to)| (*to, Kind::Repacked)))
        .collect();
    let cases: Vec<Case> = cilium_cmp_render::versions::supported()
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
    let selected: Vec<&Case> = cases
        .iter()
        .filter(|c| !harness::filtered_out(&args, &harness::named(file!(), &c.name())))
        .collect();
    // The unlisted releases, made once per run from the official archives at hand (only when
    // the run selects a pair of this file: one test of another file runs alone without them).
    let made = Path::new(env!("CARGO_TARGET_TMPDIR")).join("release-day");
    let repacked: HashMap<&'static str, PathBuf> = repack::FROM
        .iter()
        .filter(|_| !selected.is_empty())
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
        opened: cilium_cmp_render::versions::supported()
            .chain(repack::FROM.iter().map(|(_, to)| *to))
            .map(|v| (v, OnceLock::new()))
            .collect(),
        repacked,
    };
    let (references, unavailable) = if selected.is_empty() {
        Default::default()
    } else {
        references_for(&setup, &selected)
    };
    report_unavailable(&unavailable);

    let setup = Arc::new(setup);
    cases
        .into_iter()
        .map(|case| {
            let name = case.name();
            let trial_name = harness::named(file!(), &name);
            if let Some(why) = unavailable.get(&name) {
                let why = why.clone();
                return Trial::test(trial_name, move || Err(why.into()))
                    .with_ignored_flag(!in_ci());
            }
            let reference = references.get(&name).cloned();
            let setup = setup.clone();
            Trial::test(trial_name, move || check(&setup, &case, reference))
        })
        .collect()
}

/// How the pairs that ran were checked, once the run is over (nothing when none ran).
pub fn summary() {
    if TALLY.any() {
        eprintln!("parity: pairs {}", TALLY.summary());
    }
}

/// One line per reason some selected cases cannot be checked.
fn report_unavailable(unavailable: &HashMap<String, String>) {
    let mut by_reason: BTreeMap<&str, usize> = BTreeMap::new();
    for why in unavailable.values() {
        *by_reason.entry(why).or_default() += 1;
    }
    let outcome = if in_ci() {
        "FAIL (CI is set)"
    } else {
        "are ignored"
    };
    for (why, n) in by_reason {
        loud(&format!("{n} release/scenario pairs {outcome}: {why}"));
    }
}
