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
