//! `diff`: each consequence on 1.18, 1.19 and 1.20 from renders of the shared scenarios (the
//! parity suite proves those renders equal to Helm's), an upgrade of the shipped examples from
//! 1.19.6 to 1.20.0, git revisions in a repository made by the test, and `lock --check` over
//! every folder. Bad input exits 1 with nothing on stdout.

use crate::support::git::git;
use crate::support::harness;
use crate::support::scenario;
use crate::support::scratch;

pub fn tests() -> Vec<harness::Trial> {
    harness::group(
        file!(),
        vec![
            harness::test(
                "a_render_against_itself_is_no_change",
                a_render_against_itself_is_no_change,
            )
            .shared("charts")
            .shared("cilium-reference/scenarios"),
            harness::test(
                "pods_roll_jobs_run_again_cronjobs_wait_and_config_is_read_at_start",
                pods_roll_jobs_run_again_cronjobs_wait_and_config_is_read_at_start,
            )
            .shared("charts")
            .shared("cilium-reference/scenarios"),
            harness::test(
                "a_component_turned_off_is_pruned",
                a_component_turned_off_is_pruned,
            )
            .shared("charts")
            .shared("cilium-reference/scenarios"),
            harness::test(
                "permissions_are_removed_and_added_per_service_account",
                permissions_are_removed_and_added_per_service_account,
            )
            .shared("charts")
            .shared("cilium-reference/scenarios"),
            harness::test("images_are_named_old_and_new", images_are_named_old_and_new)
                .shared("charts")
                .shared("cilium-reference/scenarios"),
            harness::test(
                "changes_without_consequences_exit_2_and_the_crd_hazard_is_named",
                changes_without_consequences_exit_2_and_the_crd_hazard_is_named,
            )
            .shared("charts"),
            harness::test(
                "the_examples_upgrade_from_1_19_6_to_1_20_0_names_renames_defaults_and_restarts",
                the_examples_upgrade_from_1_19_6_to_1_20_0_names_renames_defaults_and_restarts,
            )
            .shared("charts"),
            harness::test(
                "the_repository_form_finds_added_removed_and_unchanged_folders",
                the_repository_form_finds_added_removed_and_unchanged_folders,
            )
            .shared("charts"),
            harness::test(
                "bad_input_is_refused_with_exit_1_and_nothing_on_stdout",
                bad_input_is_refused_with_exit_1_and_nothing_on_stdout,
            )
            .shared("charts"),
            harness::test(
                "lock_check_without_a_folder_checks_every_folder",
                lock_check_without_a_folder_checks_every_folder,
            )
            .shared("charts"),
            harness::test(
                "a_broken_mesh_is_refused_by_the_repository_diff_and_the_lock_check",
                a_broken_mesh_is_refused_by_the_repository_diff_and_the_lock_check,
            )
            .shared("charts"),
            harness::test(
                "two_helm_renders_and_the_diff_agree_key_for_key",
                two_helm_renders_and_the_diff_agree_key_for_key,
            )
            .shared("cilium-reference/rendered")
            .python(),
            harness::test(
                "a_set_applies_to_the_new_side_and_identical_sides_are_refused",
                a_set_applies_to_the_new_side_and_identical_sides_are_refused,
            )
            .shared("charts"),
            harness::test(
                "an_empty_config_value_added_is_a_change",
                an_empty_config_value_added_is_a_change,
            )
            .shared("charts")
            .shared("cilium-reference/rendered"),
            harness::test(
                "a_folder_that_does_not_render_fails_the_run_and_the_others_are_reported",
                a_folder_that_does_not_render_fails_the_run_and_the_others_are_reported,
            )
            .shared("charts"),
            harness::test(
                "inputs_that_render_the_same_are_not_called_changed",
                inputs_that_render_the_same_are_not_called_changed,
            )
            .shared("charts"),
            harness::test(
                "renamed_values_are_those_the_old_release_knew",
                renamed_values_are_those_the_old_release_knew,
            )
            .shared("charts"),
            harness::test(
                "a_values_file_linking_outside_the_repository_is_refused_at_the_base_too",
                a_values_file_linking_outside_the_repository_is_refused_at_the_base_too,
            )
            .shared("charts"),
        ],
    )
}

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use cilium_cmp_gitops::diff::consequences::Kind;
use cilium_cmp_gitops::diff::{self, Diff, Side, SideStream, Status};
use scratch::Scratch;
use serde_json::Value;

const VERSIONS: [&str; 3] = ["1.18.12", "1.19.6", "1.20.0"];

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The chart archives folder (a test registered with `.shared("charts")`).
fn charts(_test: &str) -> PathBuf {
    harness::shared("charts")
}

/// A scenario's inputs with the release's archive.
fn scenario_inputs(name: &str, version: &str, test: &str) -> cilium_cmp_render::render::Inputs {
    let file = harness::shared("cilium-reference/scenarios").join(format!("{name}.yaml"));
    let dir = charts(test);
    let (mut inputs, _) = scenario::inputs_from_file(&file, version).expect("scenario reads");
    inputs.chart = Some(
        cilium_cmp_render::chart::ChartFiles::open(&dir.join(format!("cilium-{version}.tgz")))
            .expect("archive opens"),
    );
    inputs
}

fn scenario_side(name: &str, version: &str, test: &str) -> Side {
    let text = cilium_cmp_render::render::render(&scenario_inputs(name, version, test))
        .expect("the scenario renders");
    Side {
        label: name.into(),
        version: cilium_cmp_render::versions::parse(version).unwrap(),
        stream: SideStream::Text(text),
    }
}

/// The side `diff --base` makes of a render: the objects `output::finish` kept, never read back.
fn scenario_objects_side(name: &str, version: &str, test: &str) -> Side {
    let stream = cilium_cmp_render::render::render_stream(
        &scenario_inputs(name, version, test),
        cilium_cmp_render::output::Keep::Objects,
    )
    .expect("the scenario renders");
    Side {
        label: name.into(),
        version: cilium_cmp_render::versions::parse(version).unwrap(),
        stream: SideStream::Objects(stream.objects),
    }
}

fn scenario_diff(old: &str, new: &str, version: &str, test: &str) -> Diff {
    let o = scenario_side(old, version, test);
    let n = scenario_side(new, version, test);
    diff::diff(o, n, "kube-system", None).expect("both renders read back")
}

fn subjects(d: &Diff, kind: Kind) -> Vec<String> {
    d.of_kind(kind).map(|c| c.subject.clone()).collect()
}

fn a_render_against_itself_is_no_change() {
    for v in VERSIONS {
        let s = scenario_side("default-cronjob", v, "a_render_against_itself_is_no_change");
        let d = diff::diff(s.clone(), s, "kube-system", None).unwrap();
        assert!(d.objects.is_empty() && d.consequences.is_empty(), "{v}");
        assert_eq!(d.status(), Status::Same);
        // The stream read back and the objects the writer kept are one render.
        for name in ["default-cronjob", "talos-ichor-noaws"] {
            let text = scenario_side(name, v, "a_render_against_itself_is_no_change");
            let kept = scenario_objects_side(name, v, "a_render_against_itself_is_no_change");
            let d = diff::diff(text, kept, "kube-system", None).unwrap();
            assert!(
                d.objects.is_empty() && d.consequences.is_empty(),
                "{name} {v}"
            );
        }
    }
}

fn pods_roll_jobs_run_again_cronjobs_wait_and_config_is_read_at_start() {
    let test = "pods_roll_jobs_run_again_cronjobs_wait_and_config_is_read_at_start";
    for v in VERSIONS {
        let d = scenario_diff("default-cronjob", "debug-and-probes", v, test);
        let rolls: Vec<_> = d.of_kind(Kind::Rolls).collect();
        let agent = rolls
            .iter()
            .find(|c| c.subject == "DaemonSet kube-system/cilium")
            .unwrap_or_else(|| panic!("{v}: the agent rolls: {rolls:?}"));
        assert!(
            agent.what.contains("rolling update") && agent.what.contains("maxUnavailable 2"),
            "{v}: {}",
            agent.what
        );
        assert!(
            agent.why.contains("startupProbe")
                || agent.why.contains("livenessProbe")
                || agent.why.contains("spec.template"),
            "{v}: {}",
            agent.why
        );
        assert!(
            subjects(&d, Kind::RunsAgain)
                .iter()
                .any(|s| s.starts_with("Job kube-system/hubble-generate-certs")),
            "{v}"
        );
        assert_eq!(
            subjects(&d, Kind::NextRun),
            ["CronJob kube-system/hubble-generate-certs"],
            "{v}"
        );
        let start: Vec<_> = d.of_kind(Kind::ReadAtStart).collect();
        assert!(
            start.iter().any(|c| c
                .subject
                .starts_with("Deployment kube-system/cilium-operator")
                && c.what.contains("operator.rollOutPods")),
            "{v}: the operator reads the changed cilium-config only at start: {start:?}"
        );
        // The agent rolls anyway, so its configuration is not reported as waiting.
        assert!(
            !start
                .iter()
                .any(|c| c.subject.starts_with("DaemonSet kube-system/cilium ")),
            "{v}"
        );
        assert_eq!(d.status(), Status::Consequences);
    }
}

fn a_component_turned_off_is_pruned() {
    for v in VERSIONS {
        let d = scenario_diff(
            "hubble-full",
            "default-cronjob",
            v,
            "a_component_turned_off_is_pruned",
        );
        let pruned = subjects(&d, Kind::Pruned);
        assert!(
            pruned.contains(&"Deployment kube-system/hubble-relay".to_string()),
            "{v}: {pruned:?}"
        );
        // A ServiceAccount that goes away loses its permissions with nobody left to need them.
        assert!(!subjects(&d, Kind::RbacRemoved)
            .contains(&"ServiceAccount kube-system/hubble-relay".to_string()));
    }
}

fn permissions_are_removed_and_added_per_service_account() {
    let test = "permissions_are_removed_and_added_per_service_account";
    for v in VERSIONS {
        let d = scenario_diff("ingress-controller", "default-cronjob", v, test);
        let removed: Vec<_> = d.of_kind(Kind::RbacRemoved).collect();
        let op = removed
            .iter()
            .find(|c| c.subject == "ServiceAccount kube-system/cilium-operator")
            .unwrap_or_else(|| panic!("{v}: {removed:?}"));
        assert!(
            op.what.contains("networking.k8s.io/ingresses"),
            "{v}: {}",
            op.what
        );
        let back = scenario_diff("default-cronjob", "ingress-controller", v, test);
        assert!(
            subjects(&back, Kind::RbacAdded)
                .contains(&"ServiceAccount kube-system/cilium-operator".to_string()),
            "{v}"
        );
        assert!(subjects(&back, Kind::RbacRemoved).is_empty(), "{v}");
    }
}

fn images_are_named_old_and_new() {
    for v in VERSIONS {
        let d = scenario_diff(
            "default-cronjob",
            "registry-mirror",
            v,
            "images_are_named_old_and_new",
        );
        let agent = d
            .of_kind(Kind::Image)
            .find(|c| {
                // The init containers that run the agent's image share its line.
                c.subject
                    .starts_with("DaemonSet kube-system/cilium, container")
                    && c.subject.contains(" cilium-agent")
            })
            .unwrap_or_else(|| panic!("{v}: the agent's image changes"));
        let (before, after) = agent.what.split_once(" → ").expect("old → new");
        assert!(
            before.starts_with("quay.io/cilium/cilium:") && !after.starts_with("quay.io/"),
            "{v}: {}",
            agent.what
        );
    }
}

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_cilium-cmp"))
}

fn run(cmd: &mut Command) -> (i32, String, String) {
    let o: Output = cmd.output().expect("runs");
    (
        o.status.code().expect("exited"),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn json_of(stdout: &str) -> Value {
    let v: Value = serde_json::from_str(stdout).expect("json");
    assert_eq!(v["ciliumCmpDiff"], 1);
    v
}

fn consequence_ids(folder: &Value) -> Vec<String> {
    folder["consequences"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            format!(
                "{} {}",
                c["kind"].as_str().unwrap(),
                c["subject"].as_str().unwrap()
            )
        })
        .collect()
}

fn changes_without_consequences_exit_2_and_the_crd_hazard_is_named() {
    let dir = charts("changes_without_consequences");
    let bin = || {
        let mut c = bin();
        c.env("CILIUM_CMP_CHART_DIR", &dir);
        c
    };
    for v in VERSIONS {
        let (code, out, err) = run(bin().args([
            "diff",
            "--cilium-version",
            v,
            "--set",
            "operator.podDisruptionBudget.enabled=true",
            "--from-set",
            "operator.podDisruptionBudget.enabled=false",
            "--output",
            "json",
        ]));
        assert_eq!(code, 2, "{v}: {err}{out}");
        let folder = &json_of(&out)["folders"][0];
        assert_eq!(folder["summary"]["created"], 1, "{v}");
        assert_eq!(folder["objects"][0]["kind"], "PodDisruptionBudget");

        let (code, out, err) = run(bin().args([
            "diff",
            "--cilium-version",
            v,
            "--set",
            "envoyConfig.enabled=true",
            "--from-set",
            "envoyConfig.enabled=false",
            "--output",
            "json",
        ]));
        assert_eq!(code, 3, "{v}: {err}");
        let ids = consequence_ids(&json_of(&out)["folders"][0]);
        assert!(
            ids.contains(&"crd-order ConfigMap cilium-config".to_string()),
            "{v}: {ids:?}"
        );
        // With the operator rolled by its checksum, the hazard is gone.
        let (_, out, _) = run(bin().args([
            "diff",
            "--cilium-version",
            v,
            "--set",
            "envoyConfig.enabled=true",
            "--set",
            "operator.rollOutPods=true",
            "--from-set",
            "envoyConfig.enabled=false",
            "--from-set",
            "operator.rollOutPods=true",
            "--output",
            "json",
        ]));
        let ids = consequence_ids(&json_of(&out)["folders"][0]);
        assert!(
            !ids.iter().any(|i| i.starts_with("crd-order")),
            "{v}: {ids:?}"
        );
    }
}

/// The shipped examples as a git repository whose base commit runs `from`; the work tree then
/// moves the folder to `to`.
fn example_repo(from: &str, extra_values: &str) -> Scratch {
    let s = Scratch::new("diff-repo");
    for f in [
        "cilium/cilium-cmp.yaml",
        "cilium/values.yaml",
        "common/values.yaml",
    ] {
        let text = std::fs::read_to_string(root().join("examples/argocd").join(f)).unwrap();
        let text = if f == "cilium/cilium-cmp.yaml" {
            text.replace("\"1.20.0\"", &format!("\"{from}\""))
        } else if f == "cilium/values.yaml" {
            format!("{text}{extra_values}")
        } else {
            text
        };
        s.write(f, &text);
    }
    git(&s.0, &["init", "-q"]);
    git(&s.0, &["add", "-A"]);
    git(
        &s.0,
        &[
            "-c",
            "user.email=t@example.com",
            "-c",
            "user.name=t",
            "commit",
            "-qm",
            "base",
        ],
    );
    s
}

fn set_version(repo: &Path, folder: &str, version: &str) {
    let p = repo.join(folder).join("cilium-cmp.yaml");
    let text = std::fs::read_to_string(&p).unwrap();
    let mut out = String::new();
    for line in text.lines() {
        if line.starts_with("ciliumVersion:") {
            out.push_str(&format!("ciliumVersion: \"{version}\"\n"));
        } else {
            out.push_str(line);
            out.push('\n');
        }
    }
    std::fs::write(p, out).unwrap();
}

fn diff_in(repo: &Path, args: &[&str]) -> (i32, String, String) {
    let dir = charts("diff_in");
    run(bin()
        .current_dir(repo)
        .env("CILIUM_CMP_CHART_DIR", dir)
        .arg("diff")
        .args(args))
}

fn the_examples_upgrade_from_1_19_6_to_1_20_0_names_renames_defaults_and_restarts() {
    // A value 1.20 renamed, written for 1.19 (encryption.strictMode.enabled became
    // encryption.strictMode.egress.enabled).
    let repo = example_repo("1.19.6", "encryption:\n  strictMode:\n    enabled: false\n");
    set_version(&repo.0, "cilium", "1.20.0");
    let (code, out, err) = diff_in(&repo.0, &["cilium", "--base", "HEAD", "--output", "json"]);
    assert_eq!(code, 3, "{err}");
    let doc = json_of(&out);
    let folder = &doc["folders"][0];
    assert_eq!(folder["from"]["ciliumVersion"], "1.19.6");
    assert_eq!(folder["to"]["ciliumVersion"], "1.20.0");
    let ids = consequence_ids(folder);
    for expected in [
        "renamed-value encryption.strictMode.enabled",
        "default-changed clustermesh.apiserver.tls.auto.certValidityDuration",
        "upgrade-compatibility envoy.xdsMode",
        "rolls DaemonSet kube-system/cilium",
        "rolls DaemonSet kube-system/cilium-envoy",
        "rolls Deployment kube-system/cilium-operator",
        "rolls Deployment kube-system/hubble-relay",
        "crd-order DaemonSet cilium and Deployment cilium-operator",
        "rbac-removed ServiceAccount kube-system/cilium",
    ] {
        assert!(
            ids.iter().any(|i| i == expected),
            "missing {expected:?} in {ids:#?}"
        );
    }
    let renamed = folder["consequences"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["kind"] == "renamed-value")
        .unwrap();
    assert!(
        renamed["what"]
            .as_str()
            .unwrap()
            .contains("encryption.strictMode.egress.enabled"),
        "{renamed}"
    );
    let notes = serde_json::to_string(&folder["consequences"]).unwrap();
    assert!(
        notes.contains("https://docs.cilium.io/en/v1.20/operations/upgrade/"),
        "{notes}"
    );

    let (code, md, _) = diff_in(
        &repo.0,
        &["cilium", "--base", "HEAD", "--output", "markdown"],
    );
    assert_eq!(code, 3);
    assert!(md.starts_with("### cilium-cmp diff\n\n| Folder |"), "{md}");
    assert!(
        md.contains("| `cilium` | changed, with consequences |"),
        "{md}"
    );
    assert!(
        md.contains("<details><summary>changed <code>DaemonSet kube-system/cilium</code> ("),
        "{md}"
    );
}

fn the_repository_form_finds_added_removed_and_unchanged_folders() {
    let repo = example_repo("1.20.0", "");
    // A second folder sharing the common values, and one only the base has.
    repo.write(
        "other/cilium-cmp.yaml",
        "ciliumVersion: \"1.20.0\"\nvaluesFiles: [../common/values.yaml]\n",
    );
    repo.write(
        "gone/cilium-cmp.yaml",
        "ciliumVersion: \"1.20.0\"\nvaluesFiles: [../common/values.yaml]\n",
    );
    git(&repo.0, &["add", "-A"]);
    git(
        &repo.0,
        &[
            "-c",
            "user.email=t@example.com",
            "-c",
            "user.name=t",
            "commit",
            "-qm",
            "two",
        ],
    );
    // Nothing changed yet.
    let (code, out, err) = diff_in(&repo.0, &["--base", "HEAD", "--output", "json"]);
    assert_eq!(code, 0, "{err}");
    let states: Vec<String> = json_of(&out)["folders"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            format!(
                "{} {}",
                f["folder"].as_str().unwrap_or("-"),
                f["state"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(
        states,
        [
            "cilium inputs-unchanged",
            "gone inputs-unchanged",
            "other inputs-unchanged",
            "- fleet-checks"
        ]
    );
    // The shared values file changes (both folders use it), one folder goes, one comes.
    let common = repo.0.join("common/values.yaml");
    let text = std::fs::read_to_string(&common).unwrap();
    std::fs::write(
        &common,
        format!("{text}operator:\n  podDisruptionBudget:\n    enabled: true\n"),
    )
    .unwrap_or(());
    std::fs::remove_dir_all(repo.0.join("gone")).unwrap();
    repo.write(
        "new/cilium-cmp.yaml",
        "ciliumVersion: \"1.20.0\"\nvaluesFiles: [../common/values.yaml]\n",
    );
    let (code, out, err) = diff_in(&repo.0, &["--base", "HEAD", "--output", "json"]);
    assert_eq!(code, 3, "{err}");
    let doc = json_of(&out);
    let states: Vec<String> = doc["folders"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            format!(
                "{} {}",
                f["folder"].as_str().unwrap_or("-"),
                f["state"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(
        states,
        [
            "cilium changed",
            "gone removed",
            "new added",
            "other changed",
            "- fleet-checks"
        ]
    );
    let gone = &doc["folders"][1];
    assert!(consequence_ids(gone).contains(&"pruned DaemonSet kube-system/cilium".to_string()));
}

fn bad_input_is_refused_with_exit_1_and_nothing_on_stdout() {
    let repo = example_repo("1.20.0", "");
    let not_git = Scratch::new("not-git");
    not_git.write("cilium/cilium-cmp.yaml", "ciliumVersion: \"1.20.0\"\n");
    repo.write("fresh/cilium-cmp.yaml", "ciliumVersion: \"1.20.0\"\n");
    repo.write("fresh/values.yaml", "{}\n");
    let cases: [(&Path, Vec<&str>, &str); 6] = [
        (
            &repo.0,
            vec!["cilium", "--base", "no-such-branch"],
            "no such revision",
        ),
        (
            &repo.0,
            vec!["cilium", "--base=--upload-pack=x"],
            "no such revision",
        ),
        (
            &not_git.0,
            vec!["cilium", "--base", "HEAD"],
            "is not in a git work tree",
        ),
        (
            &repo.0,
            vec!["fresh", "--base", "HEAD"],
            "does not exist at HEAD",
        ),
        (&repo.0, vec!["cilium"], "needs --base"),
        (&repo.0, vec!["--cilium-version", "1.17.0"], "1.17.0"),
    ];
    for (dir, args, expected) in cases {
        let (code, out, err) = diff_in(dir, &args);
        assert_eq!(code, 1, "{args:?}: {err}");
        assert!(out.is_empty(), "{args:?}: {out}");
        assert!(err.contains(expected), "{args:?}: {err}");
    }
}

fn lock_check_without_a_folder_checks_every_folder() {
    let repo = example_repo("1.20.0", "");
    repo.write(
        "other/cilium-cmp.yaml",
        "ciliumVersion: \"1.20.0\"\nvaluesFiles: [../common/values.yaml]\n",
    );
    let lock = |args: &[&str]| {
        let dir = charts("lock");
        run(bin()
            .current_dir(&repo.0)
            .env("CILIUM_CMP_CHART_DIR", dir)
            .arg("lock")
            .args(args)
            .args(["--namespace", "kube-system", "--kube-version", "1.35.0"]))
    };
    let (code, _, err) = lock(&["cilium"]);
    assert_eq!(code, 0, "{err}");
    let (code, out, err) = lock(&["--check"]);
    assert_eq!(code, 1, "{err}");
    assert!(out.is_empty());
    assert!(
        err.contains("cilium: ok sha256:") && err.contains("other: no lock"),
        "{err}"
    );
    assert!(err.contains("1 of 2 application folders fail"), "{err}");
    let (code, _, err) = lock(&["other"]);
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = lock(&["--check"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("all 2 application folders match their locks"),
        "{err}"
    );
    // Without --check, every folder's lock is written (here: both are current already).
    let (code, _, err) = lock(&[]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("cilium: unchanged sha256:") && err.contains("other: unchanged sha256:"),
        "{err}"
    );
}

fn a_broken_mesh_is_refused_by_the_repository_diff_and_the_lock_check() {
    let dir = charts("a_broken_mesh_is_refused");
    let s = Scratch::new("fleet-repo");
    let fleet = root().join("examples/fleet");
    for f in [
        "common/values.yaml",
        "clusters/eu-1/cilium-cmp.yaml",
        "clusters/eu-1/values.yaml",
        "clusters/eu-2/cilium-cmp.yaml",
        "clusters/eu-2/values.yaml",
        "clusters/us-1/cilium-cmp.yaml",
        "clusters/us-1/values.yaml",
    ] {
        s.write(f, &std::fs::read_to_string(fleet.join(f)).unwrap());
    }
    git(&s.0, &["init", "-q"]);
    git(&s.0, &["add", "-A"]);
    git(
        &s.0,
        &[
            "-c",
            "user.email=t@example.com",
            "-c",
            "user.name=t",
            "commit",
            "-qm",
            "fleet",
        ],
    );
    let (code, out, err) = diff_in(&s.0, &["--base", "HEAD", "--output", "json"]);
    assert_eq!(code, 0, "the example fleet is a good mesh: {err}{out}");
    // eu-2 takes eu-1's cluster id.
    let eu2 = s.0.join("clusters/eu-2/values.yaml");
    let text = std::fs::read_to_string(&eu2)
        .unwrap()
        .replace("id: 2", "id: 1");
    std::fs::write(&eu2, text).unwrap();
    let (code, out, err) = diff_in(&s.0, &["--base", "HEAD", "--output", "json"]);
    assert_eq!(code, 3, "{err}");
    let doc = json_of(&out);
    let fleet = doc["folders"].as_array().unwrap().last().unwrap();
    let findings = serde_json::to_string(&fleet["findings"]).unwrap();
    assert!(
        findings.contains("duplicate-cluster-id")
            && findings.contains("clusters/eu-2/values.yaml:"),
        "{findings}"
    );
    let (code, md, _) = diff_in(&s.0, &["--base", "HEAD", "--output", "markdown"]);
    assert_eq!(code, 3);
    assert!(
        md.contains("| `Cluster Mesh (fleet checks)` | **1 finding(s)** |"),
        "{md}"
    );
    let (code, out, err) = run(bin()
        .current_dir(&s.0)
        .env("CILIUM_CMP_CHART_DIR", &dir)
        .args([
            "lock",
            "--check",
            "--namespace",
            "kube-system",
            "--kube-version",
            "1.35.0",
        ]));
    assert_eq!(code, 1);
    assert!(out.is_empty());
    assert!(
        err.contains("duplicate-cluster-id") && err.contains("1 Cluster Mesh finding(s)"),
        "{err}"
    );
}

fn a_values_file_linking_outside_the_repository_is_refused_at_the_base_too() {
    let repo = example_repo("1.20.0", "");
    let values = repo.0.join("cilium/values.yaml");
    std::fs::remove_file(&values).unwrap();
    std::os::unix::fs::symlink("/etc/hostname", &values).unwrap();
    git(&repo.0, &["add", "-A"]);
    git(
        &repo.0,
        &[
            "-c",
            "user.email=t@example.com",
            "-c",
            "user.name=t",
            "commit",
            "-qm",
            "link",
        ],
    );
    let (code, out, err) = diff_in(&repo.0, &["cilium", "--base", "HEAD"]);
    assert_eq!(code, 1, "{err}");
    assert!(out.is_empty());
    assert!(
        err.contains("cilium/values.yaml at HEAD: a symbolic link that leaves the repository"),
        "{err}"
    );
}

/// The reference renders of real Helm (`../shared/cilium-reference/rendered`), in pairs: every
/// scenario from one release to the next (1.18.12 → 1.19.6 → 1.20.0), and on each release the
/// default scenario edited into every other one. For each pair the tests' own differ
/// (`support/render_diff.py`, PyYAML, no cilium-cmp) says which objects are created and
/// deleted, which cilium-config keys change (an empty string is a value), which workloads roll,
/// which images change and which kinds of other projects (CRDs the cluster must have) are
/// created; `diff` of the same two streams must say exactly that.
fn two_helm_renders_and_the_diff_agree_key_for_key() {
    let rendered = harness::shared("cilium-reference/rendered");
    let scenarios = |v: &str| -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(rendered.join(v))
            .unwrap()
            .filter_map(|e| {
                let name = e.unwrap().file_name().into_string().unwrap();
                name.strip_suffix(".yaml").map(str::to_string)
            })
            .collect();
        names.sort();
        names
    };
    let mut pairs: Vec<(String, String, PathBuf, PathBuf)> = Vec::new();
    for (from, to) in [("1.18.12", "1.19.6"), ("1.19.6", "1.20.0")] {
        let later = scenarios(to);
        for name in scenarios(from).into_iter().filter(|n| later.contains(n)) {
            let (a, b) = (
                rendered.join(from).join(format!("{name}.yaml")),
                rendered.join(to).join(format!("{name}.yaml")),
            );
            pairs.push((from.into(), to.into(), a, b));
        }
    }
    for v in VERSIONS {
        let base = rendered.join(v).join("default-cronjob.yaml");
        for name in scenarios(v) {
            if name != "default-cronjob" {
                let other = rendered.join(v).join(format!("{name}.yaml"));
                pairs.push((v.into(), v.into(), base.clone(), other));
            }
        }
    }
    let scratch = Scratch::new("render-diff");
    let list: Vec<[&Path; 2]> = pairs
        .iter()
        .map(|(_, _, a, b)| [a.as_path(), b.as_path()])
        .collect();
    let jobs = scratch.write("pairs.json", &serde_json::to_string(&list).unwrap());
    let o = Command::new(harness::python())
        .arg(root().join("tests/it/support/render_diff.py"))
        .arg(&jobs)
        .output()
        .expect("python runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let expected: Vec<Value> = serde_json::from_slice(&o.stdout).expect("the differ's JSON");
    assert_eq!(expected.len(), pairs.len());
    let strings = |v: &Value| -> Vec<String> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|s| s.as_str().unwrap().to_string())
            .collect()
    };
    let mut empty_strings_seen = 0;
    let mut foreign_seen = 0;
    let mut gateway_seen = 0;
    for ((from, to, a, b), want) in pairs.iter().zip(&expected) {
        let case = format!("{} → {}", a.display(), b.display());
        let side = |v: &str, file: &Path| Side {
            label: file.display().to_string(),
            version: cilium_cmp_render::versions::parse(v).unwrap(),
            stream: SideStream::Text(std::fs::read_to_string(file).unwrap()),
        };
        let d = diff::diff(side(from, a), side(to, b), "kube-system", None)
            .unwrap_or_else(|e| panic!("{case}: {e}"));
        let of = |change: diff::engine::Change| -> Vec<String> {
            let mut v: Vec<String> = d
                .objects
                .iter()
                .filter(|o| o.change == change)
                .map(|o| o.key.to_string())
                .collect();
            v.sort();
            v
        };
        assert_eq!(
            of(diff::engine::Change::Created),
            strings(&want["created"]),
            "{case}: created"
        );
        assert_eq!(
            of(diff::engine::Change::Deleted),
            strings(&want["deleted"]),
            "{case}: deleted"
        );
        // cilium-config, key for key: None where a side has no such key.
        let mut config = std::collections::BTreeMap::new();
        for o in d
            .objects
            .iter()
            .filter(|o| o.key.kind == "ConfigMap" && o.key.name == "cilium-config")
        {
            for f in &o.fields {
                if let (Some("data"), Some(key), 2) =
                    (f.path.key_at(0), f.path.key_at(1), f.path.0.len())
                {
                    config.insert(key.to_string(), (f.before.clone(), f.after.clone()));
                }
            }
        }
        let want_config: std::collections::BTreeMap<String, (Option<Value>, Option<Value>)> = want
            ["config"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| {
                let side = |x: &Value| (!x.is_null()).then(|| x.clone());
                (k.clone(), (side(&v[0]), side(&v[1])))
            })
            .collect();
        empty_strings_seen += want_config
            .values()
            .filter(|(x, y)| {
                x.is_none() && y == &Some(Value::from(""))
                    || y.is_none() && x == &Some(Value::from(""))
            })
            .count();
        assert_eq!(config, want_config, "{case}: cilium-config");
        let mut rolls: Vec<String> = d
            .of_kind(Kind::Rolls)
            .map(|c| c.subject.clone())
            .filter(|s| {
                ["DaemonSet ", "Deployment ", "StatefulSet "]
                    .iter()
                    .any(|k| s.starts_with(k))
            })
            .collect();
        rolls.sort();
        assert_eq!(rolls, strings(&want["rolls"]), "{case}: rolls");
        let mut images: Vec<String> = d
            .of_kind(Kind::Image)
            .map(|c| format!("{}: {}", c.subject, c.what.as_str()))
            .collect();
        images.sort();
        assert_eq!(images, strings(&want["images"]), "{case}: images");
        // Kinds of other projects the render creates: each named as a CRD the cluster needs.
        let mut foreign: Vec<String> = d
            .of_kind(Kind::CrdPrerequisite)
            .map(|c| c.subject.clone())
            .filter(|s| !s.starts_with("Gateway API CRDs"))
            .collect();
        foreign.sort();
        assert_eq!(
            foreign,
            strings(&want["foreign"]),
            "{case}: CRD prerequisites"
        );
        foreign_seen += foreign.len();
        // Gateway API turned on (Helm's cilium-config says so): its CRDs are named, with the page
        // of the new release's documentation that says which version.
        let gateway = d
            .of_kind(Kind::CrdPrerequisite)
            .find(|c| c.subject.starts_with("Gateway API CRDs"));
        // Read from Helm's text: on when cilium-config says so. Named when it turns on, or moves to
        // another minor release (whose operator may expect another Gateway API version).
        let on = |file: &Path| {
            std::fs::read_to_string(file)
                .unwrap()
                .contains("\n  enable-gateway-api: \"true\"\n")
        };
        let minor = |v: &str| v.rsplit_once('.').unwrap().0.to_string();
        let named = on(b) && (!on(a) || minor(from) != minor(to));
        assert_eq!(gateway.is_some(), named, "{case}: Gateway API CRDs");
        if let Some(g) = gateway {
            let v = cilium_cmp_render::versions::parse(to).unwrap();
            let page = format!(
                "https://docs.cilium.io/en/v{}.{}/network/servicemesh/gateway-api/",
                v.major, v.minor
            );
            assert!(g.why.contains(&page), "{case}: {}", g.why);
            gateway_seen += 1;
        }
        let moves = !want["created"].as_array().unwrap().is_empty()
            || !want["deleted"].as_array().unwrap().is_empty()
            || !want["rolls"].as_array().unwrap().is_empty();
        if moves {
            assert_eq!(d.status(), Status::Consequences, "{case}");
        }
        if !want_config.is_empty() {
            assert_ne!(d.status(), Status::Same, "{case}");
        }
    }
    // The upgrades to 1.20 bring `devices: ""`: the empty strings were part of the check.
    assert!(empty_strings_seen > 0);
    // The ServiceMonitor scenario creates kinds of the Prometheus Operator.
    assert!(foreign_seen > 0);
    assert!(gateway_seen > 0);
}

/// `-f v.yaml --set debug.enabled=true`: the --set is the new side's, so the diff shows the flip
/// (the Helm references of `default-cronjob` and `debug-and-probes` differ in `debug` the same
/// way); a diff whose two sides have the same inputs is refused, never "nothing changes".
fn a_set_applies_to_the_new_side_and_identical_sides_are_refused() {
    let dir = charts("a_set_applies_to_the_new_side");
    let s = Scratch::new("set-side");
    s.write("v.yaml", "hubble:\n  enabled: true\n");
    s.write("same.yaml", "hubble:\n  enabled: true\n");
    let diff = |args: &[&str]| {
        let mut c = bin();
        c.env("CILIUM_CMP_CHART_DIR", &dir)
            .current_dir(&s.0)
            .arg("diff");
        run(c.args(args))
    };
    for v in VERSIONS {
        let (code, out, err) = diff(&[
            "--cilium-version",
            v,
            "-f",
            "v.yaml",
            "--set",
            "debug.enabled=true",
            "--output",
            "json",
        ]);
        assert!(code == 2 || code == 3, "{v}: {code} {err}");
        let j = json_of(&out);
        let folder = &j["folders"][0];
        let fields: Vec<String> = folder["objects"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|o| o["name"] == "cilium-config")
            .flat_map(|o| o["fields"].as_array().unwrap().iter())
            .map(|f| format!("{} {} {}", f["path"], f["before"], f["after"]))
            .collect();
        assert!(
            fields.contains(&"\"data.debug\" \"false\" \"true\"".to_string()),
            "{v}: {fields:?}"
        );
        assert!(
            folder["from"]["label"].as_str().unwrap() == "v.yaml",
            "{v}: {folder}"
        );
        // Both sides the same: refused, with how to say what the old side is.
        for args in [
            vec!["--cilium-version", v, "-f", "v.yaml"],
            vec![
                "--cilium-version",
                v,
                "-f",
                "v.yaml",
                "--from-values",
                "same.yaml",
            ],
            vec![
                "--cilium-version",
                v,
                "--set",
                "debug.enabled=true",
                "--from-set",
                "debug.enabled=true",
            ],
        ] {
            let (code, out, err) = diff(&args);
            assert_eq!(code, 1, "{args:?}: {out} {err}");
            assert!(out.is_empty(), "{args:?}: {out}");
            assert!(
                err.contains("same inputs") && err.contains("--from-values"),
                "{args:?}: {err}"
            );
        }
    }
}

/// `devices: ""` added to the values of 1.19.6 (whose default leaves the key out, as Helm's
/// reference of the default scenario shows) is a cilium-config key the sync writes: a change,
/// and the agents read it only at start.
fn an_empty_config_value_added_is_a_change() {
    let reference = std::fs::read_to_string(
        harness::shared("cilium-reference/rendered").join("1.19.6/default-cronjob.yaml"),
    )
    .unwrap();
    assert!(
        !reference.contains("\n  devices:"),
        "the premise: 1.19.6 leaves devices out"
    );
    let dir = charts("an_empty_config_value_added_is_a_change");
    let s = Scratch::new("empty-devices");
    s.write("old.yaml", "{}\n");
    s.write("new.yaml", "devices: \"\"\n");
    let (code, out, err) = run(bin()
        .env("CILIUM_CMP_CHART_DIR", &dir)
        .current_dir(&s.0)
        .args([
            "diff",
            "--cilium-version",
            "1.19.6",
            "-f",
            "new.yaml",
            "--from-values",
            "old.yaml",
        ]));
    assert_eq!(code, 2, "{out}{err}");
    assert!(out.contains("data.devices: (absent) → \"\""), "{out}");
    assert!(out.contains("the ConfigMap's key devices changes"), "{out}");
}

/// The repository form with one folder that does not render: the report is still written for
/// the others (a reviewer sees them), the failing folder has its row and a section saying so,
/// and the run exits 1 (docs/review.md).
fn a_folder_that_does_not_render_fails_the_run_and_the_others_are_reported() {
    let repo = example_repo("1.20.0", "");
    repo.write(
        "broken/cilium-cmp.yaml",
        "ciliumVersion: \"1.20.0\"\nvaluesFiles: [values.yaml]\n",
    );
    repo.write("broken/values.yaml", "{}\n");
    git(&repo.0, &["add", "-A"]);
    git(
        &repo.0,
        &[
            "-c",
            "user.email=t@example.com",
            "-c",
            "user.name=t",
            "commit",
            "-qm",
            "broken",
        ],
    );
    repo.write("broken/values.yaml", "noSuchValue: 1\n");
    set_version(&repo.0, "cilium", "1.19.6");
    let (code, out, err) = diff_in(&repo.0, &["--base", "HEAD", "--output", "markdown"]);
    assert_eq!(code, 1, "{err}");
    assert!(
        out.contains("| `broken` | **cannot be compared** |"),
        "{out}"
    );
    assert!(out.contains("#### `broken`: cannot be compared"), "{out}");
    assert!(out.contains("noSuchValue"), "{out}");
    assert!(out.contains("#### `cilium` (changed)"), "{out}");
}

/// A comment added to a values file changes the inputs and not the render: the folder is not
/// called "changed"; the folder against itself says its inputs are unchanged. Both exit 0.
fn inputs_that_render_the_same_are_not_called_changed() {
    let repo = example_repo("1.20.0", "");
    let (code, out, err) = diff_in(&repo.0, &["cilium", "--base", "HEAD"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("== cilium (inputs unchanged):"), "{out}");
    let values = repo.0.join("cilium/values.yaml");
    let text = std::fs::read_to_string(&values).unwrap();
    std::fs::write(&values, format!("{text}# reviewed\n")).unwrap();
    for args in [vec!["cilium", "--base", "HEAD"], vec!["--base", "HEAD"]] {
        let (code, out, err) = diff_in(&repo.0, &args);
        assert_eq!(code, 0, "{args:?}: {err}");
        assert!(
            out.contains("== cilium (inputs differ, same render):"),
            "{args:?}: {out}"
        );
        assert!(!out.contains("(changed)"), "{args:?}: {out}");
    }
}

/// `nodePort.enabled` and `externalIPs.enabled` are known to no 1.19 release: a patch upgrade
/// within 1.19 (with unknown keys allowed, so that both sides render) does not call them renamed;
/// the move from 1.18, which knew `nodePort.enabled`, does.
fn renamed_values_are_those_the_old_release_knew() {
    let dir = charts("renamed_values_are_those_the_old_release_knew");
    let renamed = |from: &str, to: &str| -> Vec<String> {
        let (code, out, err) = run(bin().env("CILIUM_CMP_CHART_DIR", &dir).args([
            "diff",
            "--from-version",
            from,
            "--cilium-version",
            to,
            "--set",
            "nodePort.enabled=true",
            "--from-set",
            "nodePort.enabled=true",
            "--set",
            "externalIPs.enabled=true",
            "--from-set",
            "externalIPs.enabled=true",
            "--allow-unknown-keys",
            "--output",
            "json",
        ]));
        assert!(code == 2 || code == 3, "{from} → {to}: {err}");
        consequence_ids(&json_of(&out)["folders"][0])
            .into_iter()
            .filter(|c| c.starts_with("renamed-value"))
            .collect()
    };
    assert_eq!(renamed("1.19.5", "1.19.6"), Vec::<String>::new());
    assert_eq!(
        renamed("1.18.12", "1.19.6"),
        ["renamed-value nodePort.enabled"]
    );
}
