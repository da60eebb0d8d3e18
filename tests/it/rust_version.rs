//! The `rust-version` Cargo.toml declares is one the whole tree builds with: no package among
//! the dependencies, build dependencies and dev-dependencies (as Cargo.lock pins them) declares
//! a higher one. Only one toolchain is installed where this project is built, so an older
//! compiler cannot be tried; the versions the packages declare are what can be checked, and a
//! `cargo update` that brings in a crate needing a newer compiler fails here, naming it.
//!
//! Cargo reads `package.rust-version` as the oldest compiler a package supports (The Cargo Book,
//! "The rust-version field"); `cargo metadata` reports it for every package of the resolve.

use std::process::Command;

use crate::support::harness;

pub fn tests() -> Vec<harness::Trial> {
    harness::group(
        file!(),
        vec![
            harness::test(
                "no_package_in_the_tree_needs_a_newer_compiler_than_declared",
                no_package_in_the_tree_needs_a_newer_compiler_than_declared,
            ),
            harness::test(
                "a_package_above_the_declared_version_is_named",
                a_package_above_the_declared_version_is_named,
            ),
        ],
    )
}

/// A `rust-version` value, `MAJOR.MINOR[.PATCH]` (a missing part is 0, as Cargo reads it).
fn version(text: &str) -> Result<(u64, u64, u64), String> {
    let mut parts = text.split('.').map(|p| p.parse::<u64>());
    let mut next = |required: bool| match parts.next() {
        Some(Ok(n)) => Ok(n),
        None if !required => Ok(0),
        _ => Err(format!("{text:?} is not MAJOR.MINOR[.PATCH]")),
    };
    let v = (next(true)?, next(true)?, next(false)?);
    match parts.next() {
        None => Ok(v),
        Some(_) => Err(format!("{text:?} has more than three parts")),
    }
}

/// Every package of the resolve that declares a rust-version above `ours`, as `name version
/// (rust-version X)`.
fn above(metadata: &serde_json::Value, ours: (u64, u64, u64)) -> Result<Vec<String>, String> {
    let in_tree: std::collections::BTreeSet<&str> = metadata["resolve"]["nodes"]
        .as_array()
        .ok_or("cargo metadata gave no resolve")?
        .iter()
        .filter_map(|n| n["id"].as_str())
        .collect();
    let mut out = Vec::new();
    for p in metadata["packages"].as_array().ok_or("no packages")? {
        let Some(declared) = p["rust_version"].as_str() else {
            continue;
        };
        if !in_tree.contains(p["id"].as_str().unwrap_or_default()) {
            continue;
        }
        if version(declared)? > ours {
            out.push(format!(
                "{} {} (rust-version {declared})",
                p["name"].as_str().unwrap_or("?"),
                p["version"].as_str().unwrap_or("?")
            ));
        }
    }
    Ok(out)
}

/// The tree for this machine's target, as the build resolves it (`--filter-platform`: the
/// packages of other systems are not downloaded here, and do not build here either).
fn metadata() -> serde_json::Value {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let host = Command::new(std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into()))
        .arg("-vV")
        .output()
        .expect("rustc runs");
    let host = String::from_utf8_lossy(&host.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("host: ").map(str::to_string))
        .expect("rustc -vV names the host");
    let out = Command::new(cargo)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["metadata", "--format-version", "1", "--locked", "--offline"])
        .args(["--filter-platform", &host])
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "cargo metadata: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("cargo metadata prints JSON")
}

fn no_package_in_the_tree_needs_a_newer_compiler_than_declared() {
    let m = metadata();
    let ours = m["packages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "cilium-cmp")
        .and_then(|p| p["rust_version"].as_str())
        .expect("Cargo.toml declares rust-version")
        .to_string();
    let ours = version(&ours).unwrap();
    let too_new = above(&m, ours).unwrap();
    assert!(
        too_new.is_empty(),
        "Cargo.toml declares rust-version {}.{}, but these packages need a newer compiler: {}; \
         raise rust-version or pin older releases of them",
        ours.0,
        ours.1,
        too_new.join(", ")
    );
}

/// The check itself catches a package above the declared version, from metadata shaped as
/// `cargo metadata` prints it (a package, its resolve node, and one outside the resolve).
fn a_package_above_the_declared_version_is_named() {
    let m: serde_json::Value = serde_json::json!({
        "packages": [
            {"id": "a 1.0.0", "name": "a", "version": "1.0.0", "rust_version": "1.88"},
            {"id": "b 2.0.0", "name": "b", "version": "2.0.0", "rust_version": "1.90.1"},
            {"id": "c 3.0.0", "name": "c", "version": "3.0.0", "rust_version": null},
            {"id": "d 4.0.0", "name": "d", "version": "4.0.0", "rust_version": "1.99"}
        ],
        "resolve": {"nodes": [{"id": "a 1.0.0"}, {"id": "b 2.0.0"}, {"id": "c 3.0.0"}]}
    });
    assert_eq!(
        above(&m, version("1.88").unwrap()).unwrap(),
        ["b 2.0.0 (rust-version 1.90.1)"]
    );
    assert!(above(&m, version("1.90.1").unwrap()).unwrap().is_empty());
    assert_eq!(version("1.85"), Ok((1, 85, 0)));
    assert!(version("1").is_err() && version("1.x").is_err() && version("1.2.3.4").is_err());
}
