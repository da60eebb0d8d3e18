//! Render speed and footprint. Prints, per reference scenario, the median in-process render time,
//! for talos-ichor-noaws the whole-process wall time and peak RSS of the release binary, and how
//! many times faster that whole process is than real Helm's in-process render of the same values.
//! Every render evaluates the release's official archive (`../shared/charts`, or
//! `CILIUM_CMP_CHART_DIR`). Targets (issue 24): the whole process at least 5x faster than Helm's
//! in-process render of the same values, peak RSS at most 32 MB.
//! The whole process is measured as Argo CD starts it once an earlier run has compiled the
//! archive (`chart::compiled`), and, as a release's first use on a machine, without.
//! Run: `cargo bench` (the newest release; CILIUM_CMP_BENCH_VERSION=1.18.12 for another).

// The binary's allocator, so that the figures are the binary's.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[path = "../tests/it/support/scenario.rs"]
mod scenario;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use cilium_cmp_render::chart::ChartFiles;
use cilium_cmp_render::render::Inputs;

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
    let (mut inputs, _) = scenario::inputs(reference, name, version)?;
    let archive = charts?.join(format!("cilium-{version}.tgz"));
    inputs.chart = Some(ChartFiles::open(&archive).ok()?);
    Some(inputs)
}

/// Runs the binary once, reading its output as a caller would, and returns the wall time and
/// the peak resident set in KiB that `wait4` reports for it. The kernel counts in that peak the
/// memory of the process the child was spawned from (it starts as a copy, or a borrower, of
/// it), so this is only the binary's own figure when called from a small process: see
/// `measure_in_fresh_process`.
// The child is reaped by wait4 below, which std's `wait` cannot see.
#[allow(clippy::zombie_processes)]
fn run_measured(bin: &Path, args: &[std::ffi::OsString]) -> (Duration, i64) {
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

/// Rounds the measurements are spread over: each round renders every scenario a few times and
/// runs the binary a few times, so a burst of load from elsewhere on the machine lands on a
/// little of everything rather than on all the samples of one scenario.
const ROUNDS: usize = 10;
const RENDERS_PER_ROUND: usize = 20;
const RUNS_PER_ROUND: usize = 5;

/// The argument that makes this program measure one run of the binary and print the figures.
const MEASURE_CHILD: &str = "--measure-child";

/// `run_measured` in a fresh copy of this program, which holds none of the scenarios and chart
/// archives loaded here, so the peak resident set is the binary's own.
/// `compiled` is the binary's folder of compiled charts (`chart::compiled`), or `off`.
fn measure_in_fresh_process(
    bin: &Path,
    args: &[std::ffi::OsString],
    compiled: &std::ffi::OsStr,
) -> Option<(Duration, i64)> {
    let out = Command::new(std::env::current_exe().ok()?)
        .env(cilium_cmp_render::chart::compiled::DIR_VAR, compiled)
        .arg(MEASURE_CHILD)
        .arg(bin)
        .args(args)
        .output()
        .ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    let mut figures = text.split_whitespace().map(|f| f.parse::<u64>().ok());
    let nanos = figures.next()??;
    let rss = figures.next()??;
    Some((Duration::from_nanos(nanos), rss as i64))
}

fn main() {
    let argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if argv.get(1).is_some_and(|a| a == MEASURE_CHILD) && argv.len() > 2 {
        let (wall, rss) = run_measured(Path::new(&argv[2]), &argv[3..]);
        println!("{} {rss}", wall.as_nanos());
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let reference = root.join("../shared/cilium-reference");
    // The newest supported release unless CILIUM_CMP_BENCH_VERSION names another.
    let newest = cilium_cmp_render::versions::supported()
        .last()
        .unwrap_or_default();
    let version_env = std::env::var("CILIUM_CMP_BENCH_VERSION").ok();
    let version = version_env.as_deref().unwrap_or(newest);
    let charts = Some(
        std::env::var_os("CILIUM_CMP_CHART_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| root.join("../shared/charts")),
    );
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

    // (name, inputs, samples), or (name, why skipped).
    let mut measured = Vec::new();
    let mut skipped = Vec::new();
    for name in &names {
        match scenario_inputs(&reference, name, version, charts.as_deref()) {
            None => skipped.push((
                name.clone(),
                format!("skipped (needs CILIUM_CMP_CHART_DIR with cilium-{version}.tgz)"),
            )),
            Some(inputs) if cilium_cmp_render::render::render(&inputs).is_err() => {
                skipped.push((name.clone(), "skipped (render refused)".to_string()))
            }
            Some(inputs) => measured.push((name.clone(), inputs, Vec::new())),
        }
    }

    let whole = whole_process_setup(root, &reference, version, charts.as_deref());
    // Each run as Argo CD starts it once the archive has been compiled by an earlier run (every
    // run but a release's first on a machine), and, as first use, with compiled charts off.
    let compiled_dir =
        std::env::temp_dir().join(format!("cilium-cmp-bench-compiled-{}", std::process::id()));
    let warm = compiled_dir.as_os_str();
    let cold = std::ffi::OsStr::new("off");
    let mut runs: Vec<(Duration, i64)> = Vec::new();
    let mut first_use: Vec<(Duration, i64)> = Vec::new();
    if let Some((bin, args)) = &whole {
        for _ in 0..5 {
            measure_in_fresh_process(bin, args, warm);
        }
    }
    for _ in 0..ROUNDS {
        for (_, inputs, samples) in measured.iter_mut() {
            for _ in 0..RENDERS_PER_ROUND {
                let t = Instant::now();
                let out = cilium_cmp_render::render::render(inputs);
                let e = t.elapsed();
                std::hint::black_box(out.ok());
                samples.push(e);
            }
        }
        if let Some((bin, args)) = &whole {
            runs.extend(
                (0..RUNS_PER_ROUND).filter_map(|_| measure_in_fresh_process(bin, args, warm)),
            );
            first_use.extend(
                (0..RUNS_PER_ROUND / 2).filter_map(|_| measure_in_fresh_process(bin, args, cold)),
            );
        }
    }

    println!(
        "in-process render, Cilium {version}, median of {} renders ({ROUNDS} rounds):",
        ROUNDS * RENDERS_PER_ROUND
    );
    let mut rows: Vec<(String, String)> = skipped;
    let mut worst = Duration::ZERO;
    let mut talos = None;
    for (name, _, samples) in measured {
        let m = median(samples);
        worst = worst.max(m);
        if name == "talos-ichor-noaws" {
            talos = Some(m);
        }
        rows.push((name, format!("{:>8.3} ms", m.as_secs_f64() * 1e3)));
    }
    rows.sort();
    for (name, figure) in rows {
        println!("  {name:<40} {figure}");
    }
    println!("  worst median: {:.3} ms", worst.as_secs_f64() * 1e3);

    if let Some(dir) = whole.as_ref().and_then(|(bin, _)| bin.parent()) {
        let _ = std::fs::remove_dir_all(dir);
    }
    let _ = std::fs::remove_dir_all(&compiled_dir);
    if runs.is_empty() {
        println!("release binary not available: whole-process figures skipped");
        return;
    }
    let n = runs.len();
    let m = median(runs.iter().map(|r| r.0).collect());
    let rss = runs.iter().map(|r| r.1).max().unwrap_or(0);
    println!(
        "whole process, talos-ichor-noaws: median wall {:.2} ms over {n} runs",
        m.as_secs_f64() * 1e3
    );
    println!(
        "whole process, talos-ichor-noaws: peak RSS {:.1} MB (target ≤ 32 MB)",
        rss as f64 / 1024.0
    );
    if !first_use.is_empty() {
        println!(
            "  first use (archive unpacked and parsed, compiled charts off): median wall {:.2} ms, peak RSS {:.1} MB over {} runs",
            median(first_use.iter().map(|r| r.0).collect()).as_secs_f64() * 1e3,
            first_use.iter().map(|r| r.1).max().unwrap_or(0) as f64 / 1024.0,
            first_use.len()
        );
    }
    match helm_in_process(root, &reference, version, charts.as_deref()) {
        Some(helm) => {
            println!(
                "Helm in-process render of the same values: median {:.2} ms; the whole cilium-cmp process is {:.1}x faster (target ≥ 5x)",
                helm.as_secs_f64() * 1e3,
                helm.as_secs_f64() / m.as_secs_f64()
            );
            if let Some(t) = talos {
                println!(
                    "  and cilium-cmp's in-process render (templates parsed once) is {:.1}x faster",
                    helm.as_secs_f64() / t.as_secs_f64()
                );
            }
        }
        None => println!(
            "Helm comparison skipped (needs python3, helm-python-sdk and CILIUM_CMP_CHART_DIR)"
        ),
    }
}

/// The median time real Helm (the v4 SDK through helm-python-sdk, in the tests' Python
/// environment) takes to render talos-ichor-noaws in-process, chart already loaded: what Argo
/// CD's repo-server pays per render, without its process and chart-loading overhead.
fn helm_in_process(
    root: &Path,
    reference: &Path,
    version: &str,
    charts: Option<&Path>,
) -> Option<Duration> {
    let archive = charts?.join(format!("cilium-{version}.tgz"));
    let python = Command::new("bash")
        .arg(root.join("tests/setup-python.sh"))
        .output()
        .ok()
        .filter(|o| o.status.success())?;
    let python = String::from_utf8(python.stdout).ok()?.trim().to_string();
    let script = r#"
import json, sys, time, yaml
import helm_python as helm
from helm_python import _native
archive, scenario = sys.argv[1], sys.argv[2]
values = yaml.safe_load(open(scenario))["values"]
values = json.loads(_native.call_string("helm_values_from_yaml", yaml.safe_dump(values)))
opts = json.dumps({"name": "cilium", "namespace": "kube-system", "kube_version": "1.35.0",
                   "api_versions": [], "is_install": True})
with helm.Chart.load(archive) as chart:
    raw = chart._raw()
    times = []
    for _ in range(30):
        t = time.perf_counter()
        _native.call_string("helm_render", raw, json.dumps(values), opts)
        times.append(time.perf_counter() - t)
times.sort()
print(times[len(times) // 2])
"#;
    let out = Command::new(python)
        .args(["-c", script])
        .arg(&archive)
        .arg(reference.join("scenarios/talos-ichor-noaws.yaml"))
        .output()
        .ok()
        .filter(|o| o.status.success())?;
    let secs: f64 = String::from_utf8(out.stdout).ok()?.trim().parse().ok()?;
    Some(Duration::from_secs_f64(secs))
}

/// Builds the release binary and writes talos-ichor-noaws's values to a file; the binary and
/// its arguments, or None when it cannot be built.
fn whole_process_setup(
    root: &Path,
    reference: &Path,
    version: &str,
    charts: Option<&Path>,
) -> Option<(PathBuf, Vec<std::ffi::OsString>)> {
    let archive = charts?.join(format!("cilium-{version}.tgz"));
    let status = Command::new(env!("CARGO"))
        .args(["build", "--release", "-q"])
        .current_dir(root)
        .status();
    // Beside this benchmark's own executable (`target/release/deps/render-…`), so that a
    // `CARGO_TARGET_DIR` elsewhere is followed as cargo followed it.
    let built = std::env::current_exe()
        .ok()?
        .parent()?
        .parent()?
        .join("cilium-cmp");
    if !status.is_ok_and(|s| s.success()) || !built.exists() {
        return None;
    }
    // Measured as installed: a copy, as `cargo install`, a container image or a package puts
    // it. The file the linker has just written is paged in in small pieces and starts about
    // 0.15 ms slower on this machine, which no installed binary does.
    let installed = std::env::temp_dir().join(format!("cilium-cmp-bench-{}", std::process::id()));
    std::fs::create_dir_all(&installed).ok()?;
    let bin = installed.join("cilium-cmp");
    std::fs::copy(&built, &bin).ok()?;
    let values = std::env::temp_dir().join("cilium-cmp-bench-talos-ichor-noaws.yaml");
    let (inputs, _) = scenario::inputs(reference, "talos-ichor-noaws", version)?;
    std::fs::write(&values, &inputs.values_files[0].1).ok()?;
    let args = vec![
        "render".into(),
        "--cilium-version".into(),
        version.into(),
        "-f".into(),
        values.into_os_string(),
        "--chart-archive".into(),
        archive.into_os_string(),
    ];
    Some((bin, args))
}
