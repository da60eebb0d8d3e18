//! Generates the list of compiled-in releases from `sidecar/charts.sha256`, the one list of
//! supported releases: the sidecar image's build downloads and checks exactly those archives,
//! and `crates/render/src/versions.rs` includes the generated list, so adding a release is one line there (and
//! its `data/<version>/` files from `cilium-cmp import-chart`).

use std::fmt::Write as _;

const PINS: &str = "../../sidecar/charts.sha256";

fn main() {
    println!("cargo:rerun-if-changed={PINS}");
    println!("cargo:rerun-if-changed=build.rs");
    let text = std::fs::read_to_string(PINS)
        .unwrap_or_else(|e| panic!("{PINS}: cannot read the list of supported releases: {e}"));
    let mut releases = Vec::new();
    for (number, line) in text.lines().enumerate() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        releases.push(version_of(line).unwrap_or_else(|| {
            panic!(
                "{PINS}:{}: expected `SHA256  cilium-1.M.P.tgz` (sha256sum's format), got {line:?}",
                number + 1
            )
        }));
    }
    let mut out = String::new();
    writeln!(
        out,
        "static RELEASES: [ReleaseData; {}] = [{}];",
        releases.len(),
        releases
            .iter()
            .map(|v| format!("release!(\"{v}\")"))
            .collect::<Vec<_>>()
            .join(", ")
    )
    .unwrap();
    let dir = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR for build scripts");
    std::fs::write(format!("{dir}/releases.rs"), out).expect("OUT_DIR is writable");
    engine_build();
}

/// Names the build of the template engine for the compiled charts it caches
/// (`crates/render/src/engine/compiled.rs`): a hash of the program's source and locked dependencies, so a
/// cached parse is never read by a build that could parse or read a chart differently.
fn engine_build() {
    println!("cargo:rerun-if-changed=src");
    println!("cargo:rerun-if-changed=../yaml/src");
    println!("cargo:rerun-if-changed=../../Cargo.lock");
    let mut paths = vec![std::path::PathBuf::from("../../Cargo.lock")];
    // The render crate's sources and the YAML layer's, which read the charts too.
    let mut dirs = vec![
        std::path::PathBuf::from("src"),
        std::path::PathBuf::from("../yaml/src"),
    ];
    while let Some(d) = dirs.pop() {
        for entry in std::fs::read_dir(&d).expect("the sources are readable") {
            let path = entry.expect("the sources are readable").path();
            if path.is_dir() {
                dirs.push(path);
            } else {
                paths.push(path);
            }
        }
    }
    paths.sort();
    // FNV-1a, 64 bits, over each path and its bytes: not a defence (the cache is the user's
    // own), only a name that changes with the source.
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut feed = |bytes: &[u8]| {
        for b in bytes {
            hash ^= u64::from(*b);
            hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
        }
    };
    feed(env!("CARGO_PKG_VERSION").as_bytes());
    for p in &paths {
        feed(p.to_string_lossy().as_bytes());
        feed(&std::fs::read(p).unwrap_or_default());
    }
    println!("cargo:rustc-env=CILIUM_CMP_ENGINE_BUILD={hash:016x}");
}

/// The version of a `SHA256  cilium-1.M.P.tgz` line, when the line has that shape.
fn version_of(line: &str) -> Option<&str> {
    let (sum, file) = line.split_once("  ")?;
    let version = file.strip_prefix("cilium-")?.strip_suffix(".tgz")?;
    let numbers: Vec<&str> = version.split('.').collect();
    let well_formed = sum.len() == 64
        && sum.bytes().all(|b| b.is_ascii_hexdigit())
        && numbers.len() == 3
        && numbers
            .iter()
            .all(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    well_formed.then_some(version)
}
