//! `diff`: each consequence on 1.18, 1.19 and 1.20 from renders of the shared scenarios (the
//! parity suite proves those renders equal to Helm's), an upgrade of the shipped examples from
//! 1.19.6 to 1.20.0, git revisions in a repository made by the test, and `lock --check` over
//! every folder. Bad input exits 1 with nothing on stdout.

#[path = "support/harness.rs"]
mod harness;
#[path = "support/scenario.rs"]
mod scenario;
#[path = "support/scratch.rs"]
mod scratch;

fn main() -> std::process::ExitCode {
    harness::run(
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
                "a_values_file_linking_outside_the_repository_is_refused_at_the_base_too",
                a_values_file_linking_outside_the_repository_is_refused_at_the_base_too,
            )
            .shared("charts"),
        ],
    )
}

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use cilium_cmp::diff::consequences::Kind;
use cilium_cmp::diff::{self, Diff, Side, Status};
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

fn scenario_side(name: &str, version: &str, test: &str) -> Side {
    let file = harness::shared("cilium-reference/scenarios").join(format!("{name}.yaml"));
    let dir = charts(test);
    let (mut inputs, _) = scenario::inputs_from_file(&file, version).expect("scenario reads");
    inputs.chart = Some(
        cilium_cmp::chart::ChartFiles::open(&dir.join(format!("cilium-{version}.tgz")))
            .expect("archive opens"),
    );
    let text = cilium_cmp::render(&inputs).expect("the scenario renders");
    Side {
        label: name.into(),
        version: cilium_cmp::versions::parse(version).unwrap(),
        text,
    }
}

fn scenario_diff(old: &str, new: &str, version: &str, test: &str) -> Diff {
    let o = scenario_side(old, version, test);
    let n = scenario_side(new, version, test);
    diff::diff(&o, &n, "kube-system", None).expect("both renders read back")
}

fn subjects(d: &Diff, kind: Kind) -> Vec<String> {
    d.of_kind(kind).map(|c| c.subject.clone()).collect()
}

fn a_render_against_itself_is_no_change() {
    for v in VERSIONS {
        let s = scenario_side("default-cronjob", v, "a_render_against_itself_is_no_change");
        let d = diff::diff(&s, &s, "kube-system", None).unwrap();
        assert!(d.objects.is_empty() && d.consequences.is_empty(), "{v}");
        assert_eq!(d.status(), Status::Same);
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
            .find(|c| c.subject == "DaemonSet kube-system/cilium, container cilium-agent")
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

fn git(dir: &Path, args: &[&str]) {
    let o = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .expect("git runs");
    assert!(
        o.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
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
    assert!(md.contains("| `cilium` | changed (consequences) |"), "{md}");
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
