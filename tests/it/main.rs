//! The integration tests, in one binary (`cargo test --test it`): each former test file is a
//! module here, the support modules are compiled once (`support/`), and every test is named
//! `module::name`. `cargo test --test it -- diff::` runs one module's tests,
//! `cargo test --test it -- --exact diff::a_render_against_itself_is_no_change` one test, and
//! `cargo test --test it -- --list` names them all. Tests that need `../shared` or the tests'
//! Python run, or are ignored with the reason, or fail under CI (`support/harness.rs`).

mod support;

mod admission;
mod adopt_check;
mod adopt_ownership;
mod chart_fetch;
mod cli;
mod combinations;
mod compiled_chart;
mod diagnostics;
mod diff;
mod editor_schema;
mod engine_conformance;
mod engine_functions;
mod engine_limits;
mod engine_parity;
mod engine_semantics;
mod fix_values;
mod fleet;
mod folder_preview;
mod gitops;
mod hostile;
mod import_application;
mod install;
mod manifests;
mod parity;
mod plugin;
mod properties;
mod readme;
mod refusals;
mod release_day;
mod reports;
mod rust_version;
mod set_flags;
mod sidecar_image;
mod thin_main;
mod typos;
mod untrusted_files;
mod untrusted_output;
mod untrusted_repo;
mod untrusted_size;
mod usage;
mod value_paths;
mod yaml_round_trip;

use std::path::Path;
use std::process::ExitCode;

use libtest_mimic::{Arguments, Trial};

/// A module's `tests()`: its tests, named `module::name`.
type Module = fn() -> Vec<Trial>;

/// Every module's tests, in file order. A module left out of this list would compile and never
/// run: `every_module_is_listed` fails until it is here.
const MODULES: &[(&str, Module)] = &[
    ("admission", admission::tests),
    ("adopt_check", adopt_check::tests),
    ("adopt_ownership", adopt_ownership::tests),
    ("chart_fetch", chart_fetch::tests),
    ("cli", cli::tests),
    ("combinations", combinations::tests),
    ("compiled_chart", compiled_chart::tests),
    ("diagnostics", diagnostics::tests),
    ("diff", diff::tests),
    ("editor_schema", editor_schema::tests),
    ("engine_conformance", engine_conformance::tests),
    ("engine_functions", engine_functions::tests),
    ("engine_limits", engine_limits::tests),
    ("engine_parity", engine_parity::tests),
    ("engine_semantics", engine_semantics::tests),
    ("fix_values", fix_values::tests),
    ("fleet", fleet::tests),
    ("folder_preview", folder_preview::tests),
    ("gitops", gitops::tests),
    ("hostile", hostile::tests),
    ("import_application", import_application::tests),
    ("install", install::tests),
    ("manifests", manifests::tests),
    ("parity", parity::tests),
    ("plugin", plugin::tests),
    ("properties", properties::tests),
    ("readme", readme::tests),
    ("release_day", release_day::tests),
    ("refusals", refusals::tests),
    ("reports", reports::tests),
    ("rust_version", rust_version::tests),
    ("set_flags", set_flags::tests),
    ("sidecar_image", sidecar_image::tests),
    ("thin_main", thin_main::tests),
    ("typos", typos::tests),
    ("untrusted_files", untrusted_files::tests),
    ("untrusted_output", untrusted_output::tests),
    ("untrusted_repo", untrusted_repo::tests),
    ("untrusted_size", untrusted_size::tests),
    ("usage", usage::tests),
    ("value_paths", value_paths::tests),
    ("yaml_round_trip", yaml_round_trip::tests),
];

fn main() -> ExitCode {
    // Before anything else: as a spawner of a measured command, this process must stay a few MB
    // (support/child.rs says why).
    if let Some(report) = std::env::var_os(support::child::SPAWNER) {
        return support::child::spawner(report);
    }
    let args = Arguments::from_args();
    let mut trials = vec![Trial::test(
        "every_module_is_listed",
        every_module_is_listed,
    )];
    for (_, tests) in MODULES {
        trials.extend(tests());
    }
    let conclusion = libtest_mimic::run(&args, trials);
    // The suites that count what they checked say so once the run is over.
    parity::summary();
    engine_parity::summary();
    combinations::summary();
    conclusion.exit_code()
}

/// Each `tests/it/*.rs` file is in `MODULES`, and no test file is left in `tests/` itself or in
/// another folder of it, where Cargo would build it as a binary of its own: the tests are one.
fn every_module_is_listed() -> Result<(), libtest_mimic::Failed> {
    let tests = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let stems = |dir: &Path| -> Result<Vec<String>, String> {
        let mut out = Vec::new();
        for entry in std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))? {
            let path = entry.map_err(|e| e.to_string())?.path();
            if path.extension().is_some_and(|x| x == "rs") {
                out.push(path.file_stem().unwrap().to_string_lossy().into_owned());
            }
        }
        out.sort();
        Ok(out)
    };
    let listed: Vec<&str> = MODULES.iter().map(|(name, _)| *name).collect();
    let unlisted: Vec<String> = stems(&tests.join("it"))?
        .into_iter()
        .filter(|m| m != "main" && !listed.contains(&m.as_str()))
        .collect();
    if !unlisted.is_empty() {
        return Err(format!(
            "tests/it/{{{}}}.rs: not in MODULES of tests/it/main.rs, so never run: add `mod NAME;` \
             and `(\"NAME\", NAME::tests)`",
            unlisted.join(",")
        )
        .into());
    }
    // Cargo would build a `tests/DIR/main.rs` or another `[[test]]` as a binary of its own too.
    let manifest = std::fs::read_to_string(tests.with_file_name("Cargo.toml"))
        .map_err(|e| format!("Cargo.toml: {e}"))?;
    let declared = manifest.lines().filter(|l| l.trim() == "[[test]]").count();
    if declared != 1 {
        return Err(format!(
            "Cargo.toml declares {declared} [[test]] binaries; the tests are one, `it`"
        )
        .into());
    }
    for entry in std::fs::read_dir(&tests).map_err(|e| e.to_string())? {
        let dir = entry.map_err(|e| e.to_string())?.path();
        if dir.join("main.rs").exists() && !dir.ends_with("it") {
            return Err(format!(
                "{}: a second test binary; make its files modules of tests/it/",
                dir.display()
            )
            .into());
        }
    }
    let outside = stems(&tests)?;
    if !outside.is_empty() {
        return Err(format!(
            "tests/{{{}}}.rs: a test file outside tests/it/; move it there (`git mv`) as a module \
             of the one test binary, its `fn main` becoming `pub fn tests() -> Vec<harness::Trial>`",
            outside.join(",")
        )
        .into());
    }
    Ok(())
}
