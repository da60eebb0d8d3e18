//! Every values path a component reads by name (`ctx.v("hubble.relay.enabled")` and the like)
//! exists in the chart defaults or among the paths the templates read
//! (`data/VERSION/template-keys.json`) of every release whose render runs the reading code: the
//! releases where the `ctx.plan.has(Change::X)` gates around the read hold (its `if` blocks,
//! `&&`/`||` chains, early returns, and the gates at every call of its function). A misspelt
//! path would read null on every release and render the chart's "unset" branch silently; a path
//! read where its release lacks it would render, with `--allow-unknown-keys`, a value Helm
//! ignores. Also: those data files are what `import-chart` makes of the official archives.

#[path = "support/gate_scan.rs"]
mod gate_scan;
#[path = "support/harness.rs"]
mod harness;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use gate_scan::{defines, function_gates, predicates, read_paths, scan, Found, Gate, Item};
use serde_json::Value;

fn main() -> std::process::ExitCode {
    harness::run(
        file!(),
        vec![
            harness::test(
                "every_path_a_component_reads_exists_in_some_release",
                every_path_a_component_reads_exists_in_some_release,
            ),
            harness::test(
                "every_path_exists_in_the_releases_that_read_it",
                every_path_exists_in_the_releases_that_read_it,
            ),
            harness::test(
                "the_gate_scan_sees_ifs_chains_and_early_returns",
                the_gate_scan_sees_ifs_chains_and_early_returns,
            ),
            harness::test(
                "the_scan_finds_literal_paths_only",
                the_scan_finds_literal_paths_only,
            ),
            harness::test(
                "data_is_what_import_chart_makes_of_each_archive",
                data_is_what_import_chart_makes_of_each_archive,
            )
            .shared("charts"),
        ],
    )
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

fn collect(node: &Value, prefix: &str, out: &mut BTreeSet<String>) {
    if let Value::Object(m) = node {
        for (k, v) in m {
            let p = if prefix.is_empty() {
                k.clone()
            } else {
                format!("{prefix}.{k}")
            };
            collect(v, &p, out);
            out.insert(p);
        }
    }
}

/// The paths templates read, and the maps above each: reading `a.b.c` walks through `a.b`, and
/// a component checks that map the way the chart's template fails on it.
fn with_parents<'a>(keys: impl IntoIterator<Item = &'a String>) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for key in keys {
        let mut end = key.len();
        loop {
            out.insert(key[..end].to_string());
            match key[..end].rfind('.') {
                Some(dot) => end = dot,
                None => break,
            }
        }
    }
    out
}

/// Every path any supported release's defaults hold or templates read.
fn known_paths() -> BTreeSet<String> {
    let mut known = BTreeSet::new();
    for v in cilium_cmp::versions::supported() {
        let version = cilium_cmp::versions::parse(v).unwrap();
        collect(&cilium_cmp::versions::defaults(version), "", &mut known);
        known.extend(with_parents(cilium_cmp::versions::template_keys(version)));
    }
    known
}

fn every_path_a_component_reads_exists_in_some_release() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let known = known_paths();
    let mut files = Vec::new();
    rust_files(&root.join("src/components"), &mut files);
    files.sort();
    let (mut checked, mut unknown) = (0, Vec::new());
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        for (line, path) in read_paths(&text) {
            checked += 1;
            if !known.contains(&path) {
                let shown = file.strip_prefix(root).unwrap_or(file).display();
                unknown.push(format!("{shown}:{line}: {path}"));
            }
        }
    }
    assert!(
        checked > 500,
        "only {checked} paths found: is the scan still right?"
    );
    assert!(
        unknown.is_empty(),
        "values paths no supported release has:\n  {}",
        unknown.join("\n  ")
    );
}

fn the_scan_finds_literal_paths_only() {
    let text = r#"if ctx.on("hubble.relay.enabled") { ctx.v("a.b_c").x; ctx.text(&format!("{p}.x")); s.on("not a path") }"#;
    let found: Vec<String> = read_paths(text).into_iter().map(|(_, p)| p).collect();
    assert_eq!(found, ["a.b_c", "hubble.relay.enabled"]);
}

/// The data files are what `import-chart` makes of the official archives today (so a change to
/// the importer is followed by regenerating them). Checked where the archives are at hand.
fn data_is_what_import_chart_makes_of_each_archive() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let charts = std::env::var_os("CILIUM_CMP_CHART_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("../shared/charts"));
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("import-check");
    let mut compared = 0;
    for v in cilium_cmp::versions::supported() {
        let archive = charts.join(format!("cilium-{v}.tgz"));
        if !archive.is_file() {
            continue;
        }
        assert_eq!(
            cilium_cmp::chart::import::import(&archive, &out).unwrap(),
            v
        );
        for file in cilium_cmp::chart::import::DATA_FILES {
            let made = std::fs::read(out.join(v).join(file)).unwrap();
            let kept = std::fs::read(root.join("data").join(v).join(file)).unwrap();
            assert!(made == kept, "data/{v}/{file} differs from what import-chart makes: run `cilium-cmp import-chart {}`", archive.display());
        }
        compared += 1;
    }
    let all = cilium_cmp::versions::supported().count();
    assert_eq!(
        compared,
        all,
        "every release's archive is compared ({})",
        charts.display()
    );
}

/// Every path one release's defaults hold or templates read.
fn known_in(version: &str) -> BTreeSet<String> {
    let v = cilium_cmp::versions::parse(version).unwrap();
    let mut known = BTreeSet::new();
    collect(&cilium_cmp::versions::defaults(v), "", &mut known);
    known.extend(with_parents(cilium_cmp::versions::template_keys(v)));
    known
}

/// Whether a change holds for a release, by the change's name.
fn holds(change: &str, version: &str) -> bool {
    let set = cilium_cmp::changes::ChangeSet::of(cilium_cmp::versions::parse(version).unwrap());
    let entry = cilium_cmp::changes::TABLE
        .iter()
        .find(|e| format!("{:?}", e.change) == change)
        .unwrap_or_else(|| panic!("Change::{change} is not in src/changes.rs"));
    set.has(entry.change)
}

/// Reads the scan cannot see gated, each with the gate the code puts on what is read and why:
/// (path, gate, why); a gate is `Change` or `!Change`. Keep it short: a read the scan can see
/// under its gate needs no line here.
const GATED_ELSEWHERE: &[(&str, &str, &str)] = &[
    (
        "tmpVolume",
        "AgentTmpVolume",
        "agent/daemonset.rs reads it before the `if` that uses it only under the gate",
    ),
    (
        "clustermesh.enableMCSAPISupport",
        "!McsApiLegacyFlagRetired",
        "config/features.rs reads the legacy switch first; from McsApiLegacyFlagRetired on only \
         `mcsapi.enabled` is used",
    ),
    (
        "preflight.tofqdnsPreCache",
        "!PreflightWithoutFqdnPrecache",
        "preflight.rs reads it before the `if` that uses it only under the gate",
    ),
    (
        "clustermesh.mcsapi.installCRDs",
        "OperatorUpdatesMcsapiCrds",
        "operator/rbac.rs hands it to common/crds.rs `listed`, which uses it only for \
         `Listed::McsapiCrds(OperatorUpdatesMcsapiCrds)` entries",
    ),
];

/// Each path a component reads exists in every release whose render runs the reading code:
/// the releases where the gates around the read hold (`ctx.plan.has(Change::X)` in its `if`
/// blocks, `&&` chains and early returns, and at every call of the function it is in). A path
/// read outside any gate is read by every release, so every release must have it; otherwise a
/// value of another release would be rendered (with `--allow-unknown-keys`) where Helm ignores
/// it.
fn every_path_exists_in_the_releases_that_read_it() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let releases: Vec<&str> = cilium_cmp::versions::supported().collect();
    let known: BTreeMap<&str, BTreeSet<String>> =
        releases.iter().map(|v| (*v, known_in(v))).collect();
    let mut files = Vec::new();
    rust_files(&root.join("src/components"), &mut files);
    files.sort();
    let texts: Vec<String> = files
        .iter()
        .map(|f| std::fs::read_to_string(f).unwrap())
        .collect();
    let functions: BTreeSet<String> = texts
        .iter()
        .flat_map(|t| t.lines().filter_map(|l| defines(l.trim_start())))
        .collect();
    let gate_predicates = predicates(&texts);
    let scans: Vec<Vec<Found>> = files
        .iter()
        .zip(&texts)
        .map(|(f, t)| scan(&f.display().to_string(), t, &functions, &gate_predicates))
        .collect();
    let private: BTreeSet<String> = files
        .iter()
        .zip(&texts)
        .flat_map(|(f, t)| {
            t.lines()
                .filter(|l| l.trim_start().starts_with("fn "))
                // A module's `mod.rs` shares its private functions with its files.
                .filter(|_| f.file_name().is_some_and(|n| n != "mod.rs"))
                .filter_map(|l| defines(l.trim_start()))
                .map(move |name| format!("{}#{name}", f.display()))
        })
        .collect();
    let by_function = function_gates(&scans, &private);
    let (mut checked, mut gated, mut wrong) = (0, 0, Vec::new());
    for (file, found) in files.iter().zip(&scans) {
        let shown = file
            .strip_prefix(root)
            .unwrap_or(file)
            .display()
            .to_string();
        for f in found {
            let Item::Read(path) = &f.item else { continue };
            let (line, path) = (f.line, path.clone());
            let mut gates = f.gates.clone();
            gates.extend(by_function.get(&f.function).cloned().unwrap_or_default());
            for (elsewhere, change, _) in GATED_ELSEWHERE {
                if path == *elsewhere {
                    gates.push(Gate {
                        change: change.trim_start_matches('!').to_string(),
                        holds: !change.starts_with('!'),
                    });
                }
            }
            checked += 1;
            gated += usize::from(!gates.is_empty());
            let reading: Vec<&str> = releases
                .iter()
                .copied()
                .filter(|v| gates.iter().all(|g| holds(&g.change, v) == g.holds))
                .collect();
            let missing: Vec<&str> = reading
                .iter()
                .copied()
                .filter(|v| !known[v].contains(&path))
                .collect();
            if !missing.is_empty() {
                let under = if gates.is_empty() {
                    "no gate the scan sees".to_string()
                } else {
                    gates
                        .iter()
                        .map(|g| format!("{}{}", if g.holds { "" } else { "!" }, g.change))
                        .collect::<Vec<_>>()
                        .join(" && ")
                };
                wrong.push(format!(
                    "{shown}:{line}: {path} (read under {under}) is absent from {}",
                    missing.join(", ")
                ));
            }
        }
    }
    eprintln!("value_paths: {checked} reads, {gated} of them under a gate the scan sees");
    assert!(
        checked > 500,
        "only {checked} reads found: is the scan still right?"
    );
    assert!(
        wrong.is_empty(),
        "{} reads of a path absent from releases that run the reading code (gate it with \
         ctx.plan.has(Change::..) where it is read, or list the gate in GATED_ELSEWHERE):\n  {}",
        wrong.len(),
        wrong.join("\n  ")
    );
}

/// The gate scan on the shapes the components use: an `if` on a gate, its `else`, `&&` on one
/// line and across lines, an early return, a name bound to a gate, and `||` (which gates nothing
/// on its right side but the negation).
fn the_gate_scan_sees_ifs_chains_and_early_returns() {
    let text = r#"
fn a(ctx: &Ctx) {
    ctx.v("p.ungated");
    if ctx.plan.has(Change::A) {
        ctx.v("p.a");
    } else {
        ctx.v("p.not_a");
    }
    let b = ctx.plan.has(Change::B)
        && ctx.on("p.b_chain");
    if ctx.on("x") || ctx.plan.has(Change::C) {
        ctx.v("p.either");
    }
    let on = ctx.plan.has(Change::D);
    if on && ctx.on("p.d_alias") {}
    if !ctx.plan.has(Change::E) {
        return;
    }
    ctx.v("p.after_e");
}
fn helper(ctx: &Ctx) {
    ctx.v("p.helper");
}
fn caller(ctx: &Ctx) {
    if ctx.plan.has(Change::F) {
        helper(ctx);
    }
}
"#;
    let functions: BTreeSet<String> = ["helper".to_string()].into();
    let found = vec![scan("f.rs", text, &functions, &BTreeMap::new())];
    let by_function = function_gates(&found, &BTreeSet::new());
    let found = &found[0];
    let gates_of = |path: &str| -> Vec<String> {
        let f = found
            .iter()
            .find(|f| f.item == Item::Read(path.to_string()))
            .unwrap_or_else(|| panic!("{path} not found"));
        let mut g: Vec<Gate> = f.gates.clone();
        g.extend(by_function.get(&f.function).cloned().unwrap_or_default());
        g.iter()
            .map(|g| format!("{}{}", if g.holds { "" } else { "!" }, g.change))
            .collect()
    };
    assert_eq!(gates_of("p.ungated"), Vec::<String>::new());
    assert_eq!(gates_of("p.a"), ["A"]);
    assert_eq!(gates_of("p.not_a"), ["!A"]);
    assert_eq!(gates_of("p.b_chain"), ["B"]);
    assert_eq!(gates_of("p.either"), Vec::<String>::new());
    assert_eq!(gates_of("p.d_alias"), ["D"]);
    assert_eq!(gates_of("p.after_e"), ["E"]);
    assert_eq!(gates_of("p.helper"), ["F"]);
}
