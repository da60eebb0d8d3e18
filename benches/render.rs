//! Render speed and footprint. Prints, per reference scenario, the median in-process render time,
//! and for talos-ichor-noaws the whole-process wall time and peak RSS of the release binary.
//! Targets on a 2-core machine: ≤ 0.5 ms in-process, ≤ 3 ms whole process, ≤ 15 MB RSS.
//! Run: `cargo bench` (it builds the release binary first if needed).

// The binary's allocator, so that the figures are the binary's.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[path = "../tests/support/scenario.rs"]
mod scenario;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use cilium_cmp::chart::ChartFiles;
use cilium_cmp::render::Inputs;

fn median(mut xs: Vec<Duration>) -> Duration {
    xs.sort();
    xs[xs.len() / 2]
}

fn scenario_inputs(
    reference: &Path,
    name: &str,
    version: &str,
    charts: Option<&Path>,
) -> Option<Inputs> {
    let (mut inputs, needs_archive) = scenario::inputs(reference, name, version)?;
    if needs_archive {
        let archive = charts?.join(format!("cilium-{version}.tgz"));
        inputs.chart = Some(ChartFiles::open(&archive).ok()?);
    }
    Some(inputs)
}

/// Runs the binary once, reading its output as a caller would, and returns the wall time and
/// that process's own peak resident set in KiB. `wait4` reports the rusage of exactly the child
/// it reaps, so neither `cargo build` nor earlier runs are counted.
// The child is reaped by wait4 below, which std's `wait` cannot see.
#[allow(clippy::zombie_processes)]
fn run_measured(bin: &Path, args: &[&std::ffi::OsStr]) -> (Duration, i64) {
    use std::io::Read;
    let t = Instant::now();
    let mut child = Command::new(bin)
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("binary runs");
    let mut out = Vec::with_capacity(1 << 18);
    child
        .stdout
        .take()
        .expect("stdout is piped")
        .read_to_end(&mut out)
        .expect("stdout readable");
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: wait4 only writes into the two locals we pass; the child is ours and not yet reaped.
    let reaped = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    let elapsed = t.elapsed();
    assert_eq!(reaped, pid, "wait4 failed");
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "render failed"
    );
    assert!(!out.is_empty(), "empty render");
    (elapsed, usage.ru_maxrss)
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let reference = root.join("../shared/cilium-reference");
    let version = "1.18.12";
    let charts = std::env::var_os("CILIUM_CMP_CHART_DIR").map(PathBuf::from);
    if !reference.is_dir() {
        eprintln!("../shared/cilium-reference is absent: nothing to measure");
        return;
    }
    let mut names: Vec<String> = std::fs::read_dir(reference.join("scenarios"))
        .unwrap()
        .filter_map(|e| {
            e.ok()?
                .file_name()
                .to_string_lossy()
                .strip_suffix(".yaml")
                .map(String::from)
        })
        .collect();
    names.sort();
    println!("in-process render, Cilium {version}, median of 200 renders:");
    let mut all = Vec::new();
    for name in &names {
        let Some(inputs) = scenario_inputs(&reference, name, version, charts.as_deref()) else {
            println!("  {name:<40} skipped (needs CILIUM_CMP_CHART_DIR with cilium-{version}.tgz)");
            continue;
        };
        if cilium_cmp::render(&inputs).is_err() {
            println!("  {name:<40} skipped (render refused)");
            continue;
        }
        let times: Vec<Duration> = (0..200)
            .map(|_| {
                let t = Instant::now();
                let out = cilium_cmp::render(&inputs);
                let e = t.elapsed();
                std::hint::black_box(out.ok());
                e
            })
            .collect();
        let m = median(times);
        all.push(m);
        println!("  {name:<40} {:>8.3} ms", m.as_secs_f64() * 1e3);
    }
    if !all.is_empty() {
        println!(
            "  worst median: {:.3} ms (target ≤ 0.5 ms)",
            all.iter().max().unwrap().as_secs_f64() * 1e3
        );
    }

    let status = Command::new(env!("CARGO"))
        .args(["build", "--release", "-q"])
        .current_dir(root)
        .status();
    let bin = root.join("target/release/cilium-cmp");
    if !status.is_ok_and(|s| s.success()) || !bin.exists() {
        println!("release binary not available: whole-process figures skipped");
        return;
    }
    let values = std::env::temp_dir().join("cilium-cmp-bench-talos-ichor-noaws.yaml");
    let inputs =
        scenario_inputs(&reference, "talos-ichor-noaws", version, None).expect("scenario present");
    std::fs::write(&values, &inputs.values_files[0].1).unwrap();
    let args: Vec<&std::ffi::OsStr> = vec![
        "render".as_ref(),
        "--cilium-version".as_ref(),
        version.as_ref(),
        "-f".as_ref(),
        values.as_os_str(),
    ];
    for _ in 0..5 {
        run_measured(&bin, &args);
    }
    let runs: Vec<(Duration, i64)> = (0..50).map(|_| run_measured(&bin, &args)).collect();
    let m = median(runs.iter().map(|r| r.0).collect());
    let rss = runs.iter().map(|r| r.1).max().unwrap_or(0);
    println!(
        "whole process, talos-ichor-noaws: median wall {:.2} ms over 50 runs (target ≤ 3 ms)",
        m.as_secs_f64() * 1e3
    );
    println!(
        "whole process, talos-ichor-noaws: peak RSS {:.1} MB (target ≤ 15 MB)",
        rss as f64 / 1024.0
    );
}
