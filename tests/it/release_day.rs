//! Release day (`crates/render/src/chart/unlisted.rs`): a Cilium release this binary does not list renders from
//! its official archive, its own templates evaluated and its defaults, schema and known keys read
//! from it. The archives are made from the official ones (`support/repack.rs`), on all three
//! minor lines; Helm parity of such renders is checked by the parity suite (`unlisted/` and
//! `repacked/` trials).

use crate::support::harness;
use crate::support::refusal;
use crate::support::repack;
use crate::support::scratch;
use refusal::{assert_refused, stderr};

pub fn tests() -> Vec<harness::Trial> {
    harness::group(
        file!(),
        vec![
            harness::test(
                "an_archive_with_a_changed_template_renders_its_own_templates",
                an_archive_with_a_changed_template_renders_its_own_templates,
            )
            .shared("charts"),
            harness::test(
                "an_unlisted_release_takes_the_archives_facts",
                an_unlisted_release_takes_the_archives_facts,
            )
            .shared("charts"),
            harness::test(
                "a_pre_release_renders_only_by_its_name_with_a_warning",
                a_pre_release_renders_only_by_its_name_with_a_warning,
            )
            .shared("charts"),
            harness::test(
                "the_command_line_finds_an_unlisted_release_in_the_chart_folder",
                the_command_line_finds_an_unlisted_release_in_the_chart_folder,
            )
            .shared("charts"),
            harness::test(
                "the_plugin_renders_an_unlisted_release_from_its_chart_folder",
                the_plugin_renders_an_unlisted_release_from_its_chart_folder,
            )
            .shared("charts"),
        ],
    )
}

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use cilium_cmp_render::error::RenderError;
use cilium_cmp_render::render::render;
use cilium_cmp_render::render::Inputs;
use scratch::Scratch;

/// The official archive of `version` from `../shared/charts`; None (after a loud line, or a
/// failure under CI) where it is absent.
fn official(version: &str) -> PathBuf {
    harness::shared("charts").join(format!("cilium-{version}.tgz"))
}

fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_cilium-cmp"))
}

/// The binary with an empty environment but the chart folder.
fn cilium_cmp(charts: &Path, args: &[&str]) -> Output {
    Command::new(bin())
        .env_clear()
        .env("CILIUM_CMP_CHART_DIR", charts)
        .args(args)
        .output()
        .expect("runs")
}

const EDITED: &str = "templates/cilium-agent/daemonset.yaml";

fn an_archive_with_a_changed_template_renders_its_own_templates() {
    let dir = Scratch::new("edited");
    for (from, to) in repack::FROM {
        let source = official(from);
        let archive = repack::repack(&source, from, to, &dir.0, Some(EDITED));
        let mut inputs = Inputs::new(to.parse().unwrap());
        inputs.chart = Some(cilium_cmp_render::chart::ChartFiles::open(&archive).unwrap());
        let text = render(&inputs).unwrap_or_else(|e| panic!("{to}: {e}"));
        // The edit adds an object no listed release has: only the archive's own templates
        // can have rendered it.
        assert!(
            text.contains(&format!("name: {}", repack::EDIT_MARK)),
            "{to}"
        );
        // And the archive's own defaults: its image tags.
        assert!(text.contains(&format!("cilium:v{to}@")), "{to}");
    }
}

fn an_unlisted_release_takes_the_archives_facts() {
    let dir = Scratch::new("unlisted");
    for (from, to) in repack::FROM {
        let source = official(from);
        let archive = repack::repack(&source, from, to, &dir.0, None);
        let chart = cilium_cmp_render::chart::ChartFiles::open(&archive).unwrap();
        let release = cilium_cmp_render::chart::unlisted::open(&chart, to).unwrap();
        assert!(release.is_unlisted());
        assert_eq!(release.to_string(), to);
        // The archive's defaults (its image tags).
        let defaults = cilium_cmp_render::versions::defaults(release);
        assert_eq!(defaults["image"]["tag"], format!("v{to}"));
        // The same archive read twice is one release.
        assert_eq!(
            cilium_cmp_render::chart::unlisted::open(&chart, to).unwrap(),
            release
        );
        // A listed release read from its own archive renders exactly as compiled in.
        let listed = official(from);
        let mut inputs = Inputs::new(from.parse().unwrap());
        inputs.chart = Some(cilium_cmp_render::chart::ChartFiles::open(&listed).unwrap());
        let plain = render(&inputs).unwrap();
        inputs.cilium = cilium_cmp_render::versions::Release::FromArchive(
            cilium_cmp_render::release_name::release_name(from).unwrap(),
        );
        assert_eq!(render(&inputs).unwrap(), plain, "{from}");
        // An archive of another release than the one asked for is refused, naming both.
        let mut wrong = Inputs::new("1.20.98".parse().unwrap());
        wrong.chart = Some(chart.clone());
        match render(&wrong) {
            Err(RenderError::Unlisted(e)) => {
                let text = e.to_string();
                assert!(text.contains(to) && text.contains("1.20.98"), "{text}");
            }
            other => panic!("must be refused: {other:?}"),
        }
    }
}

fn a_pre_release_renders_only_by_its_name_with_a_warning() {
    let source = official("1.20.0");
    let charts = Scratch::new("pre");
    repack::repack(&source, "1.20.0", "1.21.0-pre.1", &charts.0, None);
    let o = cilium_cmp(&charts.0, &["render", "--cilium-version", "1.21.0-pre.1"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("is a pre-release"), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("helm.sh/chart: cilium-1.21.0-pre.1"));
    // Never chosen for a release number: 1.21.0 is not its pre-release.
    let o = cilium_cmp(&charts.0, &["render", "--cilium-version", "1.21.0"]);
    assert_refused(&o, &["has no cilium-1.21.0.tgz"]);
}

fn the_command_line_finds_an_unlisted_release_in_the_chart_folder() {
    let source = official("1.20.0");
    let charts = Scratch::new("folder");
    // No archive: the message names both ways forward and where it looked.
    let o = cilium_cmp(&charts.0, &["render", "--cilium-version", "1.20.99"]);
    assert_refused(
        &o,
        &[
            "--chart-archive cilium-1.20.99.tgz",
            "chart fetch 1.20.99",
            "has no cilium-1.20.99.tgz",
        ],
    );
    let archive = repack::repack(&source, "1.20.0", "1.20.99", &charts.0, None);
    let from_folder = cilium_cmp(&charts.0, &["render", "--cilium-version", "1.20.99"]);
    assert!(from_folder.status.success(), "{}", stderr(&from_folder));
    assert!(
        stderr(&from_folder).contains("not a release this cilium-cmp lists"),
        "{}",
        stderr(&from_folder)
    );
    let text = String::from_utf8_lossy(&from_folder.stdout);
    assert!(text.contains("helm.sh/chart: cilium-1.20.99"));
    assert!(text.contains("quay.io/cilium/cilium:v1.20.99@"));
    let named = cilium_cmp(
        &charts.0,
        &[
            "render",
            "--cilium-version",
            "1.20.99",
            "--chart-archive",
            archive.to_str().unwrap(),
        ],
    );
    assert!(named.status.success(), "{}", stderr(&named));
    assert_eq!(named.stdout, from_folder.stdout);
    // The editor schema of the new patch comes from the same archive.
    let schema = |version: &str| -> serde_json::Value {
        let o = cilium_cmp(&charts.0, &["schema", "--cilium-version", version]);
        assert!(o.status.success(), "{}", stderr(&o));
        serde_json::from_slice(&o.stdout).expect("JSON")
    };
    let (new, model) = (schema("1.20.99"), schema("1.20.0"));
    assert_eq!(new["title"], "Cilium 1.20.99 values (cilium-cmp)");
    assert_eq!(new["properties"], model["properties"]);
    let missing = cilium_cmp(&charts.0, &["schema", "--cilium-version", "1.20.98"]);
    assert_refused(&missing, &["has no cilium-1.20.98.tgz"]);
    // A version that is no release name never names a file.
    let o = cilium_cmp(&charts.0, &["render", "--cilium-version", "../1.20.99"]);
    assert_refused(&o, &["is not a Cilium release cilium-cmp renders"]);
}

fn the_plugin_renders_an_unlisted_release_from_its_chart_folder() {
    let source = official("1.19.6");
    let charts = Scratch::new("plugin-charts");
    let repo = Scratch::new("plugin-repo");
    repo.write(
        "apps/cilium/cilium-cmp.yaml",
        "ciliumVersion: \"1.19.99\"\n",
    );
    repo.write("apps/cilium/values.yaml", "{}\n");
    let env = [
        ("ARGOCD_APP_NAME", "cilium"),
        ("ARGOCD_APP_NAMESPACE", "kube-system"),
        ("ARGOCD_APP_SOURCE_PATH", "apps/cilium"),
        ("KUBE_VERSION", "1.35.0"),
        ("KUBE_API_VERSIONS", "v1"),
        ("CILIUM_CMP_CHART_DIR", charts.0.to_str().unwrap()),
    ];
    let generate = || {
        Command::new(bin())
            .arg("generate")
            .current_dir(repo.0.join("apps/cilium"))
            .env_clear()
            .envs(env)
            .output()
            .expect("runs")
    };
    let missing = generate();
    assert_refused(
        &missing,
        &["ciliumVersion in", "found no cilium-1.19.99.tgz"],
    );
    let archive = repack::repack(&source, "1.19.6", "1.19.99", &charts.0, None);
    let generated = generate();
    assert!(generated.status.success(), "{}", stderr(&generated));
    assert!(stderr(&generated).contains("not a release this cilium-cmp lists"));
    let rendered = cilium_cmp(
        &charts.0,
        &[
            "render",
            "--cilium-version",
            "1.19.99",
            "--chart-archive",
            archive.to_str().unwrap(),
            "--kube-version",
            "1.35.0",
            "--api-versions",
            "v1",
        ],
    );
    assert!(rendered.status.success(), "{}", stderr(&rendered));
    assert_eq!(generated.stdout, rendered.stdout);

    // The lock works as for any release: written, then fresh.
    let lock = |check: bool| {
        let mut args = vec!["lock"];
        if check {
            args.push("--check");
        }
        args.extend([
            "apps/cilium",
            "--namespace",
            "kube-system",
            "--kube-version",
            "1.35.0",
            "--api-versions",
            "v1",
            "--chart-dir",
            charts.0.to_str().unwrap(),
        ]);
        Command::new(bin())
            .args(args)
            .current_dir(&repo.0)
            .env_clear()
            .output()
            .expect("runs")
    };
    let written = lock(false);
    assert!(written.status.success(), "{}", stderr(&written));
    let hash = cilium_cmp_render::output::verify(&String::from_utf8_lossy(&generated.stdout))
        .unwrap()
        .1;
    let text = std::fs::read_to_string(repo.0.join("apps/cilium/cilium-cmp.lock")).unwrap();
    assert!(text.contains(&format!("sha256:{hash}")), "{text}");
    let checked = lock(true);
    assert!(checked.status.success(), "{}", stderr(&checked));
}
