//! Values change together: every value path follows Helm when changed alone (the parity
//! scenarios), but real values files change dozens at once. This differential test renders random
//! combinations of the chart's own value paths, layered over a scenario's values, with real Helm
//! and with the renderer, and compares them by the parity rules (`support/helm_compare.rs`).
//!
//! - Releases: the newest patch of each supported minor line.
//! - A combination: a scenario (shared or the project's own) as the base, then 4 to 40 paths
//!   drawn from the release's defaults (`data/VERSION/values.json`), each set to a realistic
//!   value of its kind: a boolean flipped; an enum to another of its values (the values
//!   schema's `enum`, else `CURATED` in `support/combination.rs`); a number to a nearby one; an
//!   empty map of labels, annotations or a node selector filled; a list emptied or given a
//!   typical item; a null default sometimes written out as null (as copies of values.yaml do). Paths with no realistic change of their kind (free text, nulls without a
//!   curated value) are skipped.
//! - Seeded and reproducible: `CILIUM_CMP_COMBINATIONS_SEED` (default 18) and
//!   `CILIUM_CMP_COMBINATIONS` (per minor, default 300; the longer run uses e.g. 2000). Case
//!   `VERSION/NNNN` depends only on the seed, the release, NNNN and the scenario files (the
//!   bases), so a failing case runs alone
//!   with `cargo test --test it -- --exact combinations::VERSION/NNNN` (same seed), and its
//!   scenario file, printed on failure, renders with `cilium-cmp render` and with
//!   `../shared/tools/helm_ref.py`.
//!
//! Excluded by rule, never by value (each is a deliberate difference the parity suite states):
//! - `*.tls.auto.method` is never `helm`, and is set to `cronJob` where the base leaves Helm's
//!   default `helm`: that method mints random keys on every render (no two renders, not even two
//!   of Helm's, agree), and the renderer refuses it by design.
//! - `k8sServiceHost` is never `auto` (Helm's `lookup` of the cluster; refused by design).
//! - Refusals the renderer makes by design (values of other releases, what the cluster would
//!   refuse) are rendered again without the refusal and compared (`helm_compare::check`).
//! - Where Helm prints a stream that is not YAML (a template wrote broken text, which no cluster
//!   accepts), the renderer must refuse the values, naming one (`RenderError::Value`).
//!
//! Helm renders run once, in two Python processes, cached under `target/tmp/combinations/` by the
//! case's text; without `../shared` or Python the cases are ignored with the reason (failed
//! under CI), as in the parity suite.

use crate::support::combination;
use crate::support::harness;
use crate::support::helm_compare;
use crate::support::python;
use crate::support::scenario;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use cilium_cmp_render::chart::ChartFiles;
use combination::{bases, make_case, newest_patches, Case, Release};
use helm_compare::{Reference, Tally};
use libtest_mimic::{Arguments, Trial};

const DEFAULT_SEED: u64 = 18;
const DEFAULT_PER_MINOR: usize = 300;

static TALLY: Tally = Tally::new();

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn in_ci() -> bool {
    std::env::var_os("CI").is_some_and(|v| !v.is_empty())
}

fn env_number<T: std::str::FromStr>(name: &str, default: T) -> T {
    match std::env::var(name) {
        Ok(s) => s
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("{name}={s:?} is not a whole number")),
        Err(_) => default,
    }
}

// ---------------------------------------------------------------------------------------------

struct Setup {
    tools: PathBuf,
    charts: PathBuf,
    cache: PathBuf,
    seed: u64,
    per_minor: usize,
    archives: HashMap<&'static str, ChartFiles>,
}

impl Setup {
    fn archive(&self, version: &str) -> PathBuf {
        self.charts.join(format!("cilium-{version}.tgz"))
    }

    fn base(&self, case: &Case) -> PathBuf {
        let key = helm_compare::cache_key(
            &self.tools,
            &format!("cilium-{}.tgz", case.version),
            &case.text,
        );
        self.cache.join(format!("{}-{key}", case.version))
    }

    fn scenario_file(&self, case: &Case) -> PathBuf {
        let mut p = self.base(case).into_os_string();
        p.push(".scenario.yaml");
        PathBuf::from(p)
    }
}

fn check(setup: &Setup, case: &Case, reference: &Reference) -> Result<(), String> {
    let file = setup.scenario_file(case);
    let (mut inputs, _) = scenario::inputs_from_file(&file, case.version)
        .ok_or_else(|| format!("{}: does not read", file.display()))?;
    inputs.chart = setup.archives.get(case.version).cloned();
    // Any refusal of what the cluster would refuse later is by design here: random values
    // reach such combinations often, and the render without that refusal is still compared.
    helm_compare::check(inputs, reference, &|_| true, &TALLY).map_err(|e| {
        format!(
            "{e}\n\n  seed {} ({} cases per minor); {}\n  the case: {}\n  again alone: CILIUM_CMP_COMBINATIONS_SEED={} CILIUM_CMP_COMBINATIONS={} cargo test --test it -- --exact combinations::{}",
            setup.seed,
            setup.per_minor,
            case.drawn,
            file.display(),
            setup.seed,
            setup.per_minor,
            case.name
        )
    })
}

fn unavailable(name: String, why: String) -> Trial {
    Trial::test(name, move || Err(why.clone().into())).with_ignored_flag(!in_ci())
}

/// One test per drawn combination, named `combinations::VERSION/NNNN`; Helm's outcome for the
/// selected ones is made (or read from the cache) before they run.
pub fn tests() -> Vec<Trial> {
    let args = Arguments::from_args();
    let seed = env_number("CILIUM_CMP_COMBINATIONS_SEED", DEFAULT_SEED);
    let per_minor = env_number("CILIUM_CMP_COMBINATIONS", DEFAULT_PER_MINOR);
    let tools = root().join("../shared/tools");
    let setup_charts = std::env::var_os("CILIUM_CMP_CHART_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("../shared/charts"));
    let bases = bases();
    let releases: Vec<Release> = newest_patches().into_iter().map(Release::load).collect();
    let cases: Vec<Case> = releases
        .iter()
        .flat_map(|r| (0..per_minor).map(|i| make_case(seed, r, &bases, i)))
        .collect();

    let mut why_not = None;
    if !tools.join("helm_ref.py").is_file() {
        why_not = Some(
            "needs ../shared/tools/helm_ref.py (a checkout without ../shared; CI has it)"
                .to_string(),
        );
    }
    let selected: Vec<&Case> = cases
        .iter()
        .filter(|c| !harness::filtered_out(&args, &harness::named(file!(), &c.name)))
        .collect();
    let mut archives = HashMap::new();
    if why_not.is_none() && !selected.is_empty() {
        for r in &releases {
            let p = setup_charts.join(format!("cilium-{}.tgz", r.version));
            match ChartFiles::open(&p) {
                Ok(files) => {
                    archives.insert(r.version, files);
                }
                Err(e) => why_not = Some(format!("needs the chart archive {}: {e}", p.display())),
            }
        }
    }
    let setup = Arc::new(Setup {
        tools,
        charts: setup_charts,
        cache: Path::new(env!("CARGO_TARGET_TMPDIR")).join("combinations"),
        seed,
        per_minor,
        archives,
    });

    // Helm's outcome for every selected case: cached, or rendered now.
    let mut references: HashMap<String, Reference> = HashMap::new();
    if why_not.is_none() && !selected.is_empty() {
        let _ = std::fs::create_dir_all(&setup.cache);
        let mut jobs = Vec::new();
        for c in &selected {
            let base = setup.base(c);
            if let Some(r) = helm_compare::cached(&base) {
                references.insert(c.name.clone(), r);
                continue;
            }
            let file = setup.scenario_file(c);
            if let Err(e) = std::fs::write(&file, &c.text) {
                why_not = Some(format!("{}: {e}", file.display()));
                break;
            }
            jobs.push((setup.archive(c.version), file, base));
        }
        if why_not.is_none() && !jobs.is_empty() {
            eprintln!(
                "combinations: rendering {} cases with real Helm (once; cached in {})",
                jobs.len(),
                setup.cache.display()
            );
            let done = python::python().map_err(str::to_string).and_then(|py| {
                helm_compare::render_with_helm(py, &setup.tools, &setup.cache, &jobs, 2)
            });
            if let Err(e) = done {
                why_not = Some(e);
            }
        }
        for c in &selected {
            // The scenario file stays beside the reference, for a person reproducing a case.
            let file = setup.scenario_file(c);
            if !file.is_file() {
                let _ = std::fs::write(&file, &c.text);
            }
            if let Some(r) = helm_compare::cached(&setup.base(c)) {
                references.insert(c.name.clone(), r);
            }
        }
    }
    if let Some(why) = &why_not {
        let outcome = if in_ci() { "FAIL (CI)" } else { "are ignored" };
        eprintln!(
            "\n!!! COMBINATIONS: {} cases {outcome}: {why}\n",
            selected.len()
        );
    }

    cases
        .into_iter()
        .map(|case| {
            let name = harness::named(file!(), &case.name);
            if let Some(why) = &why_not {
                return unavailable(name, why.clone());
            }
            match references.get(&case.name).cloned() {
                None if args.list => Trial::test(name, || Ok(())),
                None => unavailable(name, "Helm wrote no reference".to_string()),
                Some(reference) => {
                    let setup = setup.clone();
                    Trial::test(name, move || Ok(check(&setup, &case, &reference)?))
                }
            }
        })
        .collect()
}

/// How the combinations that ran were checked, once the run is over (nothing when none ran).
pub fn summary() {
    if !TALLY.any() {
        return;
    }
    let seed = env_number("CILIUM_CMP_COMBINATIONS_SEED", DEFAULT_SEED);
    let per_minor = env_number("CILIUM_CMP_COMBINATIONS", DEFAULT_PER_MINOR);
    eprintln!(
        "combinations: seed {seed}, {per_minor} per minor ({}): {}",
        newest_patches().join(", "),
        TALLY.summary()
    );
}
