//! Every values path a component reads by name (`ctx.v("hubble.relay.enabled")` and the like)
//! exists in some supported release: in its chart defaults, or among the paths its templates read
//! (`data/VERSION/template-keys.json`). A misspelt path would read null on every release and
//! render the chart's "unset" branch silently. Also: those data files are what `import-chart`
//! makes of the official archives.

#[path = "support/shared.rs"]
#[allow(dead_code)] // this binary uses only `skipped`
mod shared;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::Value;

/// The calls whose first argument is a values path.
const READERS: &[&str] = &[
    ".v(",
    ".on(",
    ".text(",
    ".invalid(",
    ".user_set(",
    ".origin(",
    ".describe_origin(",
];

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

/// The string literals passed first to a reader, with their line, that look like a path.
fn read_paths(text: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    for (n, line) in text.lines().enumerate() {
        for reader in READERS {
            let mut rest = line;
            while let Some(at) = rest.find(reader) {
                rest = &rest[at + reader.len()..];
                let Some(lit) = rest.strip_prefix('"') else {
                    continue;
                };
                let Some(end) = lit.find('"') else { continue };
                let path = &lit[..end];
                let looks_like_a_path = !path.is_empty()
                    && path.split('.').all(|k| {
                        !k.is_empty() && k.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
                    });
                if looks_like_a_path {
                    found.push((n + 1, path.to_string()));
                }
            }
        }
    }
    found
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

/// Every path any supported release's defaults hold or templates read.
fn known_paths() -> BTreeSet<String> {
    let mut known = BTreeSet::new();
    for v in cilium_cmp::versions::supported() {
        let version = cilium_cmp::versions::parse(v).unwrap();
        collect(&cilium_cmp::versions::defaults(version), "", &mut known);
        known.extend(cilium_cmp::versions::template_keys(version).iter().cloned());
    }
    known
}

#[test]
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

#[test]
fn the_scan_finds_literal_paths_only() {
    let text = r#"if ctx.on("hubble.relay.enabled") { ctx.v("a.b_c").x; ctx.text(&format!("{p}.x")); s.on("not a path") }"#;
    let found: Vec<String> = read_paths(text).into_iter().map(|(_, p)| p).collect();
    assert_eq!(found, ["a.b_c", "hubble.relay.enabled"]);
}

/// The data files are what `import-chart` makes of the official archives today (so a change to
/// the importer is followed by regenerating them). Checked where the archives are at hand.
#[test]
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
        assert_eq!(cilium_cmp::import::import(&archive, &out).unwrap(), v);
        for file in cilium_cmp::import::DATA_FILES {
            let made = std::fs::read(out.join(v).join(file)).unwrap();
            let kept = std::fs::read(root.join("data").join(v).join(file)).unwrap();
            assert!(made == kept, "data/{v}/{file} differs from what import-chart makes: run `cilium-cmp import-chart {}`", archive.display());
        }
        compared += 1;
    }
    let all = cilium_cmp::versions::supported().count();
    if compared < all {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "under CI every release's archive is at hand: {compared} of {all} in {}",
            charts.display()
        );
        shared::skipped(
            "data_is_what_import_chart_makes_of_each_archive",
            &format!("compared {compared} of {all} releases: their archives are in ../shared/charts (CI has them)"),
        );
    }
}
