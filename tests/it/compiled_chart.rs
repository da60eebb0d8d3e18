//! Compiled charts (`crates/render/src/chart/compiled.rs`): the first process that reads an archive leaves
//! its files and parsed templates in the cache, later processes read them instead of unpacking
//! and parsing. A cache must change nothing: every render is byte for byte the render without
//! it, and a compiled chart that is damaged or another build's is never read.

use crate::support::harness;
use crate::support::scratch;

use std::path::{Path, PathBuf};
use std::process::Output;

use scratch::Scratch;

pub fn tests() -> Vec<harness::Trial> {
    harness::group(
        file!(),
        vec![
            harness::test(
                "a_compiled_chart_renders_what_the_archive_renders",
                a_compiled_chart_renders_what_the_archive_renders,
            )
            .shared("charts"),
            harness::test(
                "a_damaged_compiled_chart_is_ignored_and_written_again",
                a_damaged_compiled_chart_is_ignored_and_written_again,
            )
            .shared("charts"),
            harness::test(
                "another_builds_compiled_chart_is_removed",
                another_builds_compiled_chart_is_removed,
            )
            .shared("charts"),
            harness::test(
                "the_plugin_reads_and_writes_compiled_charts_too",
                the_plugin_reads_and_writes_compiled_charts_too,
            )
            .shared("charts"),
        ],
    )
}

const VALUES: &str = "kubeProxyReplacement: true\nk8sServiceHost: 10.0.0.1\nk8sServicePort: 6443\n\
rollOutCiliumPods: true\noperator:\n  rollOutPods: true\nhubble:\n  relay:\n    enabled: true\n  \
tls:\n    auto:\n      method: cronJob\n";

/// `cilium-cmp render` of `version` with compiled charts in `compiled` (a folder, or `off`).
fn render(version: &str, values: &Path, compiled: &str) -> Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_cilium-cmp"))
        .env_clear()
        .env("CILIUM_CMP_COMPILED_DIR", compiled)
        .args(["render", "--cilium-version", version, "-f"])
        .arg(values)
        .arg("--chart-archive")
        .arg(harness::shared("charts").join(format!("cilium-{version}.tgz")))
        .output()
        .expect("the binary runs")
}

fn ok(out: Output) -> Vec<u8> {
    assert!(
        out.status.success(),
        "render failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!out.stdout.is_empty());
    out.stdout
}

/// The compiled charts in `dir`.
fn compiled_in(dir: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    found.retain(|p| p.extension().is_some_and(|e| e == "bin"));
    found.sort();
    found
}

fn a_compiled_chart_renders_what_the_archive_renders() {
    let scratch = Scratch::new("compiled");
    let values = scratch.write("values.yaml", VALUES);
    let dir = scratch.0.join("compiled");
    let dir_arg = dir.to_str().unwrap();
    // One release of each minor line.
    for version in ["1.18.0", "1.19.6", "1.20.0"] {
        let without = ok(render(version, &values, "off"));
        let before = compiled_in(&dir).len();
        let first = ok(render(version, &values, dir_arg));
        let after = compiled_in(&dir);
        assert_eq!(
            after.len(),
            before + 1,
            "{version}: one compiled chart written"
        );
        let second = ok(render(version, &values, dir_arg));
        assert_eq!(
            compiled_in(&dir),
            after,
            "{version}: read, not written again"
        );
        assert!(
            first == without,
            "{version}: first render differs from no compiled chart"
        );
        assert!(
            second == without,
            "{version}: compiled render differs from the archive's"
        );
    }
}

fn a_damaged_compiled_chart_is_ignored_and_written_again() {
    let scratch = Scratch::new("compiled-damaged");
    let values = scratch.write("values.yaml", VALUES);
    let dir = scratch.0.join("compiled");
    let dir_arg = dir.to_str().unwrap();
    let expected = ok(render("1.20.0", &values, dir_arg));
    let [blob] = compiled_in(&dir).try_into().expect("one compiled chart");
    let good = std::fs::read(&blob).unwrap();
    let mut flipped = good.clone();
    let middle = flipped.len() / 2;
    flipped[middle] ^= 0xff;
    let damages: Vec<(&str, Vec<u8>)> = vec![
        ("empty", Vec::new()),
        ("cut in half", good[..good.len() / 2].to_vec()),
        ("one byte short", good[..good.len() - 1].to_vec()),
        ("a byte changed", flipped),
        ("garbage", vec![0xa5; 4096]),
    ];
    for (what, bytes) in damages {
        std::fs::write(&blob, &bytes).unwrap();
        let out = ok(render("1.20.0", &values, dir_arg));
        assert!(out == expected, "{what}: the render changed");
        // Even a change that would still read as a chart (a letter of a bundled script) is
        // refused and written over.
        assert!(
            std::fs::read(&blob).unwrap() == good,
            "{what}: not written again"
        );
    }
}

fn another_builds_compiled_chart_is_removed() {
    let scratch = Scratch::new("compiled-stale");
    let values = scratch.write("values.yaml", VALUES);
    let dir = scratch.0.join("compiled");
    let dir_arg = dir.to_str().unwrap();
    ok(render("1.20.0", &values, dir_arg));
    let [blob] = compiled_in(&dir).try_into().expect("one compiled chart");
    let name = blob.file_name().unwrap().to_str().unwrap().to_string();
    let (digest, _) = name.split_once('-').unwrap();
    let stale = dir.join(format!("{digest}-0000000000000000.bin"));
    std::fs::write(&stale, b"another build").unwrap();
    // What a writer killed before its rename leaves, an hour ago, and one being written now.
    let abandoned = dir.join(format!(".{name}.4242.tmp"));
    let writing = dir.join(format!(".{name}.4343.tmp"));
    std::fs::write(&abandoned, b"cut short").unwrap();
    std::fs::write(&writing, b"being written").unwrap();
    let hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    std::fs::File::options()
        .write(true)
        .open(&abandoned)
        .and_then(|f| f.set_modified(hour_ago))
        .unwrap();
    std::fs::remove_file(&blob).unwrap();
    ok(render("1.20.0", &values, dir_arg));
    assert!(!stale.exists(), "another build's compiled chart is removed");
    assert!(
        !abandoned.exists(),
        "an abandoned temporary file is removed"
    );
    assert!(
        writing.exists(),
        "a temporary file being written is left alone"
    );
    assert_eq!(compiled_in(&dir), vec![blob]);
}

fn the_plugin_reads_and_writes_compiled_charts_too() {
    let scratch = Scratch::new("compiled-plugin");
    let dir = scratch.0.join("compiled");
    let app = scratch.0.join("repo/cilium");
    std::fs::create_dir_all(&app).unwrap();
    std::fs::write(app.join("values.yaml"), VALUES).unwrap();
    std::fs::write(app.join("cilium-cmp.yaml"), "ciliumVersion: \"1.20.0\"\n").unwrap();
    let generate = || {
        std::process::Command::new(env!("CARGO_BIN_EXE_cilium-cmp"))
            .env_clear()
            .env("CILIUM_CMP_COMPILED_DIR", &dir)
            .env("CILIUM_CMP_CHART_DIR", harness::shared("charts"))
            .env("PATH", "/usr/bin:/bin")
            .env("ARGOCD_APP_NAME", "cilium")
            .env("ARGOCD_APP_NAMESPACE", "kube-system")
            .env("ARGOCD_APP_SOURCE_PATH", "cilium")
            .env(
                "ARGOCD_APP_REVISION",
                "0123456789abcdef0123456789abcdef01234567",
            )
            .env("ARGOCD_APP_PARAMETERS", "null")
            .env("KUBE_VERSION", "1.35.0")
            .current_dir(&app)
            .arg("generate")
            .output()
            .expect("the binary runs")
    };
    let first = ok(generate());
    assert_eq!(
        compiled_in(&dir).len(),
        1,
        "the plugin compiled the archive"
    );
    assert!(
        ok(generate()) == first,
        "the plugin's compiled render differs"
    );
}
