//! How long the engine takes: parsing the 1.20.0 archive's templates once, and one render of
//! its default values (with `hubble.tls.auto.method: cronJob`, the project's deterministic
//! default, since the chart's own `helm` method needs random certificates). Prints the
//! figures (`cargo bench --bench engine`); speed is read from figures, never asserted by a
//! timed test.

use std::path::Path;
use std::time::{Duration, Instant};

use cilium_cmp_render::chart::archive::ChartFiles;
use cilium_cmp_render::engine::helm::coalesce;
use cilium_cmp_render::engine::{ChartTemplates, RenderOptions};
use serde_json::json;

/// CPU time of this thread: on shared, loaded cores wall time says more about the neighbours.
fn cpu_now() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec into the pointer it is given.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

fn main() {
    let archive = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/charts/cilium-1.20.0.tgz");
    let Ok(files) = ChartFiles::open(&archive) else {
        eprintln!(
            "engine bench: {} is absent; nothing to measure",
            archive.display()
        );
        return;
    };
    let (t0, c0) = (Instant::now(), cpu_now());
    let chart = ChartTemplates::parse(&files).expect("the archive parses");
    let (parse, parse_cpu) = (t0.elapsed(), cpu_now() - c0);
    let values = coalesce(
        &chart.default_values,
        &json!({"hubble": {"tls": {"auto": {"method": "cronJob"}}}}),
    );
    let opts = RenderOptions {
        release_name: "cilium".into(),
        namespace: "kube-system".into(),
        kube_version: "1.35.0".into(),
        api_versions: Vec::new(),
    };
    let mut times = Vec::new();
    let mut cpu = Vec::new();
    let mut docs = 0;
    for _ in 0..15 {
        let (t, c) = (Instant::now(), cpu_now());
        let m = chart.render_here(&values, &opts).expect("renders");
        times.push(t.elapsed());
        cpu.push(cpu_now() - c);
        docs = m.len();
    }
    times.sort();
    cpu.sort();
    let median = times[times.len() / 2];
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    eprintln!(
        "engine speed: parse {:.2} ms wall / {:.2} ms CPU ({} templates); render median {:.2} ms wall / {:.2} ms CPU, min {:.2} / {:.2} ms ({docs} documents)",
        ms(parse),
        ms(parse_cpu),
        chart.template_names().len(),
        ms(median),
        ms(cpu[cpu.len() / 2]),
        ms(times[0]),
        ms(cpu[0]),
    );
    assert!(
        docs > 20,
        "a default render has dozens of documents, got {docs}"
    );
}
