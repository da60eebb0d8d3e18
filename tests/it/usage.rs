//! The command line as a Helm and kubectl user types it: usage errors CI can tell from results,
//! Helm's flag names, one set of inputs read the same way by every command (the folder's
//! cilium-cmp.yaml, the repository root found from anywhere inside it), and help that fits.

use crate::support::charts;
use crate::support::git::git;
use crate::support::harness;
use crate::support::scratch;

use std::path::Path;
use std::process::{Command, Output};

use scratch::Scratch;

pub fn tests() -> Vec<harness::Trial> {
    harness::group(
        file!(),
        vec![
            harness::test(
                "every_command_exits_64_on_a_usage_error",
                every_command_exits_64_on_a_usage_error,
            ),
            harness::test(
                "helms_version_flag_points_to_cilium_version",
                helms_version_flag_points_to_cilium_version,
            ),
            harness::test(
                "a_release_line_without_its_patch_is_answered_with_the_release",
                a_release_line_without_its_patch_is_answered_with_the_release,
            ),
            harness::test(
                "template_renders_as_render_and_n_names_the_namespace",
                template_renders_as_render_and_n_names_the_namespace,
            )
            .shared("charts"),
            harness::test(
                "every_command_names_the_chart_archive_flag_alike",
                every_command_names_the_chart_archive_flag_alike,
            ),
            harness::test(
                "fix_values_takes_every_render_input",
                fix_values_takes_every_render_input,
            )
            .shared("charts"),
            harness::test(
                "the_folder_names_its_cluster_and_flags_override_it",
                the_folder_names_its_cluster_and_flags_override_it,
            )
            .shared("charts"),
            harness::test(
                "lock_without_a_folder_locks_every_folder_for_its_own_cluster",
                lock_without_a_folder_locks_every_folder_for_its_own_cluster,
            )
            .shared("charts"),
            harness::test(
                "diff_base_renders_each_side_for_the_folders_own_cluster",
                diff_base_renders_each_side_for_the_folders_own_cluster,
            )
            .shared("charts"),
            harness::test(
                "generate_says_when_argo_cds_cluster_differs_from_the_folders",
                generate_says_when_argo_cds_cluster_differs_from_the_folders,
            )
            .shared("charts"),
            harness::test(
                "bad_cluster_settings_are_refused_naming_the_key_and_line",
                bad_cluster_settings_are_refused_naming_the_key_and_line,
            ),
            harness::test(
                "folder_commands_find_the_repository_root_from_a_subfolder",
                folder_commands_find_the_repository_root_from_a_subfolder,
            )
            .shared("charts"),
            harness::test(
                "help_fits_100_columns_and_hides_the_maintainers_command",
                help_fits_100_columns_and_hides_the_maintainers_command,
            ),
            harness::test(
                "log_lines_start_with_their_level",
                log_lines_start_with_their_level,
            )
            .shared("charts"),
            harness::test(
                "the_talos_example_is_a_folder_talos_patch_renders",
                the_talos_example_is_a_folder_talos_patch_renders,
            )
            .shared("charts"),
            harness::test(
                "verify_checks_the_render_inside_a_talos_patch",
                verify_checks_the_render_inside_a_talos_patch,
            )
            .shared("charts"),
            harness::test(
                "completion_offers_the_supported_releases",
                completion_offers_the_supported_releases,
            ),
        ],
    )
}

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_cilium-cmp"));
    charts::give(&mut c);
    c
}

fn run(args: &[&str]) -> Output {
    bin().args(args).output().expect("runs")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn ok(o: &Output) -> String {
    assert!(o.status.success(), "failed: {}", stderr(o));
    stdout(o)
}

/// The subcommands `--help` lists (the `help` pseudo-command left out), read from the help
/// itself, so a command added later is covered without touching this test.
fn listed_commands() -> Vec<String> {
    let help = ok(&run(&["--help"]));
    let section = help
        .split("Commands:")
        .nth(1)
        .and_then(|s| s.split("Options:").next())
        .expect("a Commands: section");
    section
        .lines()
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(str::to_string)
        .collect()
}

fn every_command_exits_64_on_a_usage_error() {
    let mut commands: Vec<Vec<String>> = listed_commands().into_iter().map(|c| vec![c]).collect();
    assert!(commands.len() >= 15, "{commands:?}");
    // The nested and the hidden commands, and Helm's name for render.
    for extra in [&["chart", "fetch"][..], &["import-chart"], &["template"]] {
        commands.push(extra.iter().map(|s| s.to_string()).collect());
    }
    for cmd in &commands {
        let mut args: Vec<&str> = cmd.iter().map(String::as_str).collect();
        args.push("--no-such-flag");
        let o = run(&args);
        assert_eq!(o.status.code(), Some(64), "{args:?}: {}", stderr(&o));
        assert!(o.stdout.is_empty(), "{args:?} printed on stdout");
        assert!(
            stderr(&o).contains("'--no-such-flag'"),
            "{args:?}: {}",
            stderr(&o)
        );
    }
    // The typos of the issue: a misspelt value and a misspelt flag, in the commands whose 2 is a
    // result ("changes found"), and a missing subcommand.
    for (args, says) in [
        (&["diff", "--output", "markdwn"][..], "'markdown'"),
        (
            &[
                "fix-values",
                "--cilium-version",
                "1.20.0",
                "--dryrun",
                "v.yaml",
            ],
            "'--dry-run'",
        ),
        (
            &["diff", "--base", "main", "--dryrun"],
            "unexpected argument",
        ),
        (&["adopt-check", "--output", "yml"], "possible values"),
        (&["render"], "--cilium-version"),
        (&["chart"], "Usage"),
        (&["no-such-command"], "unrecognized subcommand"),
        // A namespace the API server would refuse, as the folder's setting is refused.
        (
            &["render", "--cilium-version", "1.20.0", "-n", "Kube_System"],
            "\"Kube_System\" is not a namespace name",
        ),
    ] {
        let o = run(args);
        assert_eq!(o.status.code(), Some(64), "{args:?}: {}", stderr(&o));
        assert!(o.stdout.is_empty(), "{args:?} printed on stdout");
        assert!(stderr(&o).contains(says), "{args:?}: {}", stderr(&o));
    }
    // Help and version are no errors.
    for args in [
        &["--help"][..],
        &["--version"],
        &["diff", "--help"],
        &["help", "lock"],
    ] {
        let o = run(args);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
        assert!(!o.stdout.is_empty(), "{args:?}");
    }
    // The exit-code tables say so.
    let top = ok(&run(&["--help"]));
    assert!(top.contains("64 a usage error"), "{top}");
    for cmd in ["diff", "fix-values", "adopt-check", "fleet-check"] {
        let help = ok(&run(&[cmd, "--help"]));
        assert!(help.contains("64"), "{cmd} --help names no 64:\n{help}");
    }
}

fn helms_version_flag_points_to_cilium_version() {
    for cmd in [
        "render",
        "template",
        "fix-values",
        "schema",
        "lock",
        "diff",
        "adopt-check",
    ] {
        let o = run(&[cmd, "--version", "1.20.0"]);
        assert_eq!(o.status.code(), Some(64), "{cmd}");
        let err = stderr(&o);
        assert!(err.contains("'--cilium-version'"), "{cmd}: {err}");
        assert!(!err.contains("'--kube-version'"), "{cmd}: {err}");
    }
    // A command without --cilium-version is not told to use it.
    let err = stderr(&run(&["verify", "--version"]));
    assert!(!err.contains("--cilium-version"), "{err}");
}

fn a_release_line_without_its_patch_is_answered_with_the_release() {
    let o = run(&["render", "--cilium-version", "1.20"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(o.stdout.is_empty());
    assert!(
        stderr(&o).contains("did you mean 1.20.0?"),
        "{}",
        stderr(&o)
    );
    let err = stderr(&run(&["render", "--cilium-version", "1.19"]));
    assert!(
        err.contains("did you mean 1.19.0 (the newest listed 1.19 is 1.19.6)?"),
        "{err}"
    );
    // No guess for a line no release of which is listed.
    let err = stderr(&run(&["render", "--cilium-version", "1.17"]));
    assert!(!err.contains("did you mean"), "{err}");
}

fn talos_values() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/talos/values.yaml")
}

fn template_renders_as_render_and_n_names_the_namespace() {
    let values = talos_values();
    let values = values.to_str().unwrap();
    let render = ok(&run(&[
        "render",
        "--cilium-version",
        "1.20.0",
        "-f",
        values,
    ]));
    let template = ok(&run(&[
        "template",
        "--cilium-version",
        "1.20.0",
        "-f",
        values,
    ]));
    assert_eq!(render, template);
    let short = ok(&run(&[
        "render",
        "--cilium-version",
        "1.20.0",
        "-f",
        values,
        "-n",
        "cilium",
    ]));
    let long = ok(&run(&[
        "render",
        "--cilium-version",
        "1.20.0",
        "-f",
        values,
        "--namespace",
        "cilium",
    ]));
    assert_eq!(short, long);
    assert!(short.contains("  namespace: cilium\n"));
    assert!(!short.contains("  namespace: kube-system\n"));
}

fn every_command_names_the_chart_archive_flag_alike() {
    for cmd in [
        "render",
        "render-folder",
        "lock",
        "talos-patch",
        "fix-values",
        "adopt-check",
        "diff",
        "schema",
    ] {
        let help = ok(&run(&[cmd, "--help"]));
        assert!(help.contains("--chart-archive <PATH>"), "{cmd}:\n{help}");
        assert!(
            !help.contains("--chart-dir"),
            "{cmd} shows the old name:\n{help}"
        );
    }
    // The old name still parses where it was (no usage error, exit 64).
    for args in [
        &[
            "lock",
            "--check",
            "--chart-dir",
            "/nonexistent",
            "/nonexistent",
        ][..],
        &["diff", "--chart-dir", "/nonexistent"],
    ] {
        let o = run(args);
        assert_ne!(o.status.code(), Some(64), "{args:?}: {}", stderr(&o));
    }
}

fn fix_values_takes_every_render_input() {
    // A ServiceMonitor needs the cluster to serve monitoring.coreos.com/v1: the check's render
    // fails without --api-versions, which fix-values refused as a flag before.
    let s = Scratch::new("fix-api");
    let file = s.write(
        "values.yaml",
        "prometheus:\n  enabled: true\n  serviceMonitor:\n    enabled: true\nhubbel:\n  enabled: true\n",
    );
    let file = file.to_str().unwrap();
    let base = ["fix-values", "--cilium-version", "1.20.0", "--dry-run"];
    let without = run(&[&base[..], &[file]].concat());
    assert_eq!(without.status.code(), Some(1), "{}", stderr(&without));
    assert!(stderr(&without).contains("monitoring.coreos.com/v1"));
    let with = run(&[
        &base[..],
        &[
            "--api-versions",
            "monitoring.coreos.com/v1",
            "-n",
            "cilium",
            "--kube-version",
            "1.33",
            "--set",
            "debug.enabled=true",
            "--set-string",
            "cluster.name=prod",
            file,
        ],
    ]
    .concat());
    assert_eq!(with.status.code(), Some(2), "{}", stderr(&with));
    assert!(stdout(&with).contains("-hubbel:"), "{}", stdout(&with));
}

/// A repository (a `.git` folder: nothing here runs git) with application folders.
fn repository(folders: &[(&str, &str)]) -> Scratch {
    let s = Scratch::new("repo");
    std::fs::create_dir(s.0.join(".git")).unwrap();
    let values = std::fs::read_to_string(talos_values()).unwrap();
    s.write("common/values.yaml", &values);
    for (dir, settings) in folders {
        s.write(&format!("{dir}/cilium-cmp.yaml"), settings);
        s.write(&format!("{dir}/values.yaml"), "debug:\n  enabled: false\n");
    }
    s
}

const FOLDER: &str = "ciliumVersion: \"1.20.0\"\nnamespace: cilium\nkubeVersion: \"1.33\"\napiVersions: [monitoring.coreos.com/v1]\nvaluesFiles: [../../common/values.yaml, values.yaml]\n";

fn folder_command(dir: &Path, args: &[&str]) -> Output {
    bin().current_dir(dir).args(args).output().expect("runs")
}

fn lock_hash(dir: &Path) -> String {
    let lock = std::fs::read_to_string(dir.join("cilium-cmp.lock")).expect("a lock");
    lock.lines()
        .find_map(|l| l.split("sha256:").nth(1))
        .map(|h| h.trim().to_string())
        .expect("a hash in the lock")
}

fn the_folder_names_its_cluster_and_flags_override_it() {
    let repo = repository(&[("clusters/eu", FOLDER)]);
    let root = &repo.0;
    // The folder's own cluster, without flags.
    let o = folder_command(root, &["render-folder", "clusters/eu"]);
    let from_folder = ok(&o);
    assert!(from_folder.contains("  namespace: cilium\n"));
    // The same render with every fact spelled out as flags.
    let spelled = ok(&folder_command(
        root,
        &[
            "render-folder",
            "clusters/eu",
            "-n",
            "cilium",
            "--kube-version",
            "1.33",
            "--api-versions",
            "monitoring.coreos.com/v1",
        ],
    ));
    assert_eq!(from_folder, spelled);
    // A flag overrides the folder's.
    let other_ns = ok(&folder_command(
        root,
        &["render-folder", "clusters/eu", "-n", "kube-system"],
    ));
    assert!(other_ns.contains("  namespace: kube-system\n"));
    assert!(!other_ns.contains("  namespace: cilium\n"));
    // The command that writes the lock leaves out what the folder says already.
    let o = folder_command(root, &["lock", "--check", "clusters/eu"]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(
        err.contains("cilium-cmp lock clusters/eu --cilium-version 1.20.0\n"),
        "{err}"
    );
    assert!(!err.contains("--api-versions ''"), "{err}");
    // Without settings or flags: Helm's defaults, as render; never an empty --api-versions.
    let bare = repository(&[(
        "clusters/us",
        "ciliumVersion: \"1.20.0\"\nvaluesFiles: [../../common/values.yaml]\n",
    )]);
    let o = folder_command(&bare.0, &["lock", "--check", "clusters/us"]);
    let err = stderr(&o);
    assert!(
        err.contains("--namespace kube-system --kube-version"),
        "{err}"
    );
    assert!(!err.contains("--api-versions"), "{err}");
}

fn lock_without_a_folder_locks_every_folder_for_its_own_cluster() {
    let older = FOLDER.replace("\"1.33\"", "\"1.32\"");
    let repo = repository(&[("clusters/eu", FOLDER), ("clusters/us", &older)]);
    let root = &repo.0;
    let o = folder_command(root, &["lock"]);
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("clusters/eu: written sha256:"), "{err}");
    assert!(err.contains("clusters/us: written sha256:"), "{err}");
    // Each lock is the one the folder's own lock command writes.
    for dir in ["clusters/eu", "clusters/us"] {
        let all = lock_hash(&root.join(dir));
        std::fs::remove_file(root.join(dir).join("cilium-cmp.lock")).unwrap();
        ok(&folder_command(root, &["lock", dir]));
        assert_eq!(all, lock_hash(&root.join(dir)), "{dir}");
    }
    // The two clusters' versions give two renders, and the gate passes for both.
    assert_ne!(
        lock_hash(&root.join("clusters/eu")),
        lock_hash(&root.join("clusters/us"))
    );
    let o = folder_command(root, &["lock", "--check"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = folder_command(root, &["lock"]);
    assert!(
        stderr(&o).contains("clusters/eu: unchanged"),
        "{}",
        stderr(&o)
    );
}

fn generate_says_when_argo_cds_cluster_differs_from_the_folders() {
    let repo = repository(&[("clusters/eu", FOLDER)]);
    let app = repo.0.join("clusters/eu");
    ok(&folder_command(&repo.0, &["lock", "clusters/eu"]));
    let generate = |kube: &str, apis: &str| {
        bin()
            .current_dir(&app)
            .args(["generate"])
            .env("ARGOCD_APP_SOURCE_PATH", "clusters/eu")
            .env("ARGOCD_APP_NAMESPACE", "cilium")
            .env("KUBE_VERSION", kube)
            .env("KUBE_API_VERSIONS", apis)
            .output()
            .expect("runs")
    };
    // Argo CD passes what the folder says (and more APIs): quiet.
    let o = generate("v1.33.0", "v1,apps/v1,monitoring.coreos.com/v1");
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stderr(&o), "");
    // Another Kubernetes version: said (whether or not the render, and so the lock, differs).
    let o = generate("1.34.1", "monitoring.coreos.com/v1");
    let err = stderr(&o);
    assert!(
        err.contains("warning: Argo CD's KUBE_VERSION 1.34.1 differs from kubeVersion 1.33 in clusters/eu/cilium-cmp.yaml"),
        "{err}"
    );
    // An API the folder lists and the cluster does not serve.
    let o = generate("1.33", "v1");
    let err = stderr(&o);
    assert!(
        err.contains("KUBE_API_VERSIONS lack monitoring.coreos.com/v1 of apiVersions in clusters/eu/cilium-cmp.yaml"),
        "{err}"
    );
    // Argo CD passes no version yet: the folder's serves.
    let o = generate("", "monitoring.coreos.com/v1");
    assert!(o.status.success(), "{}", stderr(&o));
}

fn bad_cluster_settings_are_refused_naming_the_key_and_line() {
    for (settings, says) in [
        (
            "namespace: Kube_System\n",
            "clusters/eu/cilium-cmp.yaml:2: namespace 'Kube_System' is not a namespace name",
        ),
        ("kubeVersion: 1.33\n", "kubeVersion must be a quoted string"),
        (
            "kubeVersion: \"one\"\n",
            "kubeVersion 'one' is not a Kubernetes version",
        ),
        (
            "apiVersions: monitoring.coreos.com/v1\n",
            "apiVersions must be a list",
        ),
        (
            "valuesFile: [values.yaml]\n",
            "unknown key 'valuesFile'; did you mean valuesFiles?",
        ),
    ] {
        let repo = repository(&[(
            "clusters/eu",
            &format!("ciliumVersion: \"1.20.0\"\n{settings}"),
        )]);
        let o = folder_command(&repo.0, &["render-folder", "clusters/eu"]);
        assert_eq!(o.status.code(), Some(1), "{settings}");
        assert!(o.stdout.is_empty(), "{settings}");
        let err = stderr(&o).replace('"', "'");
        assert!(err.contains(&says.replace('"', "'")), "{settings}: {err}");
    }
}

fn folder_commands_find_the_repository_root_from_a_subfolder() {
    let repo = repository(&[("clusters/eu", FOLDER)]);
    let sub = repo.0.join("clusters");
    let from_root = ok(&folder_command(&repo.0, &["render-folder", "clusters/eu"]));
    // From a subfolder, the folder's ../../common/values.yaml is inside the repository.
    let from_sub = ok(&folder_command(&sub, &["render-folder", "eu"]));
    assert_eq!(from_root, from_sub);
    let patch = folder_command(&sub, &["talos-patch", "eu"]);
    assert!(patch.status.success(), "{}", stderr(&patch));
    // Outside any work tree the current folder is the root, and the message names the flag.
    let loose = Scratch::new("loose");
    for (rel, text) in [
        ("common/values.yaml", "debug:\n  enabled: false\n"),
        ("clusters/eu/cilium-cmp.yaml", FOLDER),
        ("clusters/eu/values.yaml", "debug:\n  enabled: false\n"),
    ] {
        loose.write(rel, text);
    }
    let o = folder_command(&loose.0.join("clusters"), &["render-folder", "eu"]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(err.contains("outside"), "{err}");
    let o = folder_command(
        &loose.0.join("clusters"),
        &["render-folder", "eu", "--repo-root", ".."],
    );
    assert!(o.status.success(), "{}", stderr(&o));
}

fn help_fits_100_columns_and_hides_the_maintainers_command() {
    let mut pages = vec![vec!["--help".to_string()]];
    for c in listed_commands() {
        pages.push(vec![c.clone(), "--help".into()]);
        pages.push(vec![c, "-h".into()]);
    }
    pages.push(vec!["chart".into(), "fetch".into(), "--help".into()]);
    for page in &pages {
        let args: Vec<&str> = page.iter().map(String::as_str).collect();
        // Not a terminal, and a COLUMNS that asks for more: at most 100.
        let o = bin().args(&args).env("COLUMNS", "300").output().unwrap();
        let text = ok(&o);
        for line in text.lines() {
            assert!(
                line.chars().count() <= 100,
                "{args:?}: {} columns: {line}",
                line.len()
            );
        }
    }
    // Narrower when asked.
    let narrow = bin()
        .args(["fix-values", "--help"])
        .env("COLUMNS", "60")
        .output()
        .unwrap();
    // (clap does not wrap the usage line, a single command to copy.)
    let narrow = ok(&narrow);
    assert!(
        narrow
            .lines()
            .filter(|l| !l.starts_with("Usage:"))
            .all(|l| l.chars().count() <= 60),
        "{narrow}"
    );
    let top = ok(&run(&["--help"]));
    assert!(!top.contains("import-chart"), "{top}");
    assert!(top.contains("template"), "{top}");
}

fn log_lines_start_with_their_level() {
    let s = Scratch::new("log");
    let file = s.write("values.yaml", "hubbel:\n  enabled: true\n");
    let o = bin()
        .args([
            "render",
            "--cilium-version",
            "1.20.0",
            "--allow-unknown-keys",
            "-f",
        ])
        .arg(&file)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    let first = err.lines().next().unwrap_or_default();
    assert!(first.starts_with("warning: hubbel"), "{err}");
    assert!(!err.contains('\x1b'), "{err}");
    assert!(
        err.lines()
            .all(|l| !l.starts_with(' ') || l.starts_with("  ")),
        "{err}"
    );
}

fn the_talos_example_is_a_folder_talos_patch_renders() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let o = folder_command(root, &["talos-patch", "examples/talos"]);
    let patch = ok(&o);
    assert!(patch.contains("inlineManifests:"), "{patch}");
    // The same render as the flags the README's first command gives.
    let values = talos_values();
    let render = ok(&run(&[
        "render",
        "--cilium-version",
        "1.20.0",
        "-f",
        values.to_str().unwrap(),
    ]));
    let hash = render
        .lines()
        .find_map(|l| l.split("cilium-cmp.io/content-hash: ").nth(1))
        .expect("a stamped hash")
        .trim_matches(|c| c == '"' || c == '\'')
        .to_string();
    assert!(patch.contains(hash.trim_start_matches("sha256:")), "{hash}");
}

fn verify_checks_the_render_inside_a_talos_patch() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let patch = ok(&folder_command(root, &["talos-patch", "examples/talos"]));
    let s = Scratch::new("verify");
    let file = s.write("patch.yaml", &patch);
    let o = bin().arg("verify").arg(&file).output().unwrap();
    let out = ok(&o);
    assert!(
        out.starts_with("ok sha256:") && out.contains("(inline manifest cilium)"),
        "{out}"
    );
    // One value of the manifest changed: refused, naming the manifest and both hashes.
    let tampered = patch.replacen("namespace: kube-system", "namespace: kube-systen", 1);
    assert_ne!(tampered, patch);
    let file = s.write("tampered.yaml", &tampered);
    let o = bin().arg("verify").arg(&file).output().unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(o.stdout.is_empty());
    assert!(
        stderr(&o).contains("inline manifest cilium: content hash mismatch"),
        "{}",
        stderr(&o)
    );
}

fn completion_offers_the_supported_releases() {
    let versions = ok(&run(&["versions"]));
    let newest = versions.lines().last().expect("a release");
    for shell in ["bash", "zsh", "fish"] {
        let script = ok(&run(&["completions", shell]));
        assert!(
            script.contains(newest) && script.contains("1.18.0"),
            "{shell}"
        );
    }
    // Parsing still takes a release the binary does not list (it renders from its archive).
    let o = run(&["render", "--cilium-version", "1.99.0"]);
    assert_ne!(o.status.code(), Some(64), "{}", stderr(&o));
    assert!(!stderr(&o).contains("possible values"), "{}", stderr(&o));
}

fn diff_base_renders_each_side_for_the_folders_own_cluster() {
    let s = Scratch::new("diff-cluster");
    let values = std::fs::read_to_string(talos_values()).unwrap();
    s.write("common/values.yaml", &values);
    s.write("clusters/eu/values.yaml", "debug:\n  enabled: false\n");
    let older = FOLDER.replace("\"1.33\"", "\"1.32\"");
    s.write("clusters/eu/cilium-cmp.yaml", &older);
    git(&s.0, &["init", "-q"]);
    git(&s.0, &["add", "-A"]);
    git(&s.0, &["commit", "-qm", "1.32"]);
    // The cluster is upgraded: the folder says so, and the render changes with it.
    s.write("clusters/eu/cilium-cmp.yaml", FOLDER);
    let o = folder_command(
        &s.0,
        &["diff", "clusters/eu", "--base", "HEAD", "--output", "json"],
    );
    let code = o.status.code();
    assert!(
        code == Some(2) || code == Some(3),
        "{code:?}: {}",
        stderr(&o)
    );
    assert!(stdout(&o).contains("\"changed\""), "{}", stdout(&o));
    // The flag overrides both sides' folders: then nothing changes.
    let o = folder_command(
        &s.0,
        &[
            "diff",
            "clusters/eu",
            "--base",
            "HEAD",
            "--kube-version",
            "1.33",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
}
