//! The official chart archives every render evaluates (`../shared/charts`, one per supported
//! release; CI has them), for the tests: opened once per process, and handed to the binary as
//! its chart folder. A test that uses them is registered with `.shared("charts")`
//! (`support/harness.rs`), so that without `../shared` it is reported as ignored, with the reason.

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::Command;
use std::sync::{Mutex, OnceLock};

use cilium_cmp_render::chart::ChartFiles;

/// `../shared/charts`.
pub fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/charts")
}

/// The official archive of a release, opened once per process.
pub fn archive(version: &str) -> ChartFiles {
    static OPENED: OnceLock<Mutex<HashMap<String, ChartFiles>>> = OnceLock::new();
    let mut opened = OPENED
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    opened
        .entry(version.to_string())
        .or_insert_with(|| {
            let path = dir().join(format!("cilium-{version}.tgz"));
            ChartFiles::open(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        })
        .clone()
}

/// `inputs` with the official archive of its release.
pub fn with_archive(
    mut inputs: cilium_cmp_render::render::Inputs,
) -> cilium_cmp_render::render::Inputs {
    inputs.chart = Some(archive(&inputs.cilium.to_string()));
    inputs
}

/// The binary's chart folder for `cmd`: the official archives (after any `env_clear`).
pub fn give(cmd: &mut Command) -> &mut Command {
    cmd.env("CILIUM_CMP_CHART_DIR", dir())
}
