//! The command line as users and Argo CD run it: same bytes everywhere, nothing on stdout on error.

use crate::support::charts;
use crate::support::harness;

pub fn tests() -> Vec<harness::Trial> {
    harness::group(
        file!(),
        vec![
            harness::test(
                "same_bytes_in_any_directory_time_zone_locale_or_environment",
                same_bytes_in_any_directory_time_zone_locale_or_environment,
            )
            .shared("charts"),
            harness::test(
                "the_stamped_content_hash_verifies",
                the_stamped_content_hash_verifies,
            )
            .shared("charts"),
            harness::test(
                "errors_leave_stdout_empty_and_name_the_problem",
                errors_leave_stdout_empty_and_name_the_problem,
            )
            .shared("charts"),
            harness::test(
                "a_broken_values_file_is_reported_with_its_name_and_line",
                a_broken_values_file_is_reported_with_its_name_and_line,
            ),
            harness::test(
                "versions_lists_every_supported_release",
                versions_lists_every_supported_release,
            ),
            harness::test(
                "values_of_another_release_are_refused_naming_where_they_exist",
                values_of_another_release_are_refused_naming_where_they_exist,
            )
            .shared("charts"),
            harness::test(
                "set_string_keeps_a_number_a_string",
                set_string_keeps_a_number_a_string,
            )
            .shared("charts"),
            harness::test(
                "set_json_sets_lists_and_objects",
                set_json_sets_lists_and_objects,
            )
            .shared("charts"),
            harness::test(
                "set_file_reads_the_whole_file_as_a_string",
                set_file_reads_the_whole_file_as_a_string,
            )
            .shared("charts"),
            harness::test(
                "flags_apply_in_helms_order_whatever_their_order_on_the_command_line",
                flags_apply_in_helms_order_whatever_their_order_on_the_command_line,
            )
            .shared("charts"),
            harness::test(
                "values_from_stdin_render_as_the_file_does",
                values_from_stdin_render_as_the_file_does,
            )
            .shared("charts"),
            harness::test(
                "malformed_set_flags_are_refused_naming_the_flag",
                malformed_set_flags_are_refused_naming_the_flag,
            ),
            harness::test(
                "output_file_is_written_only_after_a_whole_render",
                output_file_is_written_only_after_a_whole_render,
            )
            .shared("charts"),
            harness::test("a_closed_pipe_ends_quietly", a_closed_pipe_ends_quietly)
                .shared("charts"),
            harness::test(
                "completions_are_printed_for_every_shell",
                completions_are_printed_for_every_shell,
            ),
            harness::test(
                "set_changes_one_item_of_a_list_from_a_values_file",
                set_changes_one_item_of_a_list_from_a_values_file,
            )
            .shared("charts"),
        ],
    )
}

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_cilium-cmp"));
    charts::give(&mut c);
    c
}

fn example() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/talos/values.yaml")
}

fn render_in(dir: &Path, envs: &[(&str, &str)], clear_env: bool) -> Output {
    let mut c = bin();
    if clear_env {
        c.env_clear();
        charts::give(&mut c);
    }
    c.current_dir(dir)
        .args(["render", "--cilium-version", "1.18.12", "-f"])
        .arg(example())
        .envs(envs.iter().copied())
        .output()
        .expect("runs")
}

fn same_bytes_in_any_directory_time_zone_locale_or_environment() {
    let tmp = std::env::temp_dir();
    let base = render_in(Path::new(env!("CARGO_MANIFEST_DIR")), &[], false);
    assert!(
        base.status.success(),
        "{}",
        String::from_utf8_lossy(&base.stderr)
    );
    assert!(!base.stdout.is_empty());
    let variants: Vec<Output> = vec![
        render_in(
            &tmp,
            &[
                ("TZ", "Pacific/Chatham"),
                ("LC_ALL", "tr_TR.UTF-8"),
                ("LANG", "tr_TR.UTF-8"),
            ],
            false,
        ),
        render_in(
            Path::new("/"),
            &[("TZ", "UTC"), ("HOME", "/nonexistent")],
            true,
        ),
        render_in(
            &tmp,
            &[
                ("KUBE_VERSION", "1.20"),
                ("ARGOCD_APP_NAMESPACE", "elsewhere"),
                ("HELM_NAMESPACE", "x"),
            ],
            false,
        ),
    ];
    for v in variants {
        assert!(v.status.success());
        assert_eq!(v.stdout, base.stdout, "output changed with the environment");
    }
}

fn the_stamped_content_hash_verifies() {
    let out = render_in(Path::new(env!("CARGO_MANIFEST_DIR")), &[], false);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("cilium-cmp.io/content-hash: sha256:"));
    let dir = std::env::temp_dir().join(format!("cilium-cmp-verify-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("out.yaml");
    std::fs::write(&f, &text).unwrap();
    let ok = bin().arg("verify").arg(&f).output().unwrap();
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    // Any change to an object breaks the hash.
    std::fs::write(&f, text.replacen("kube-system", "kube-systen", 1)).unwrap();
    let bad = bin().arg("verify").arg(&f).output().unwrap();
    assert!(!bad.status.success());
    std::fs::remove_dir_all(&dir).ok();
}

fn errors_leave_stdout_empty_and_name_the_problem() {
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["render", "--cilium-version", "1.2.3"], "1.18.12"),
        (
            vec![
                "render",
                "--cilium-version",
                "1.18.12",
                "-f",
                "/nonexistent/values.yaml",
            ],
            "/nonexistent/values.yaml",
        ),
        (
            vec![
                "render",
                "--cilium-version",
                "1.18.12",
                "--set",
                "hubble.tls.auto.method=helm",
            ],
            "cronJob",
        ),
        (
            vec!["render", "--cilium-version", "1.18.12", "--set", "novalue"],
            "PATH=VALUE",
        ),
        (
            vec![
                "render",
                "--cilium-version",
                "1.18.12",
                "--kube-version",
                "banana",
            ],
            "banana",
        ),
        (
            vec![
                "render",
                "--cilium-version",
                "1.18.12",
                "--set",
                "cni.iptablesRemoveAWSRules=false",
                "--set",
                "k8sServiceHost=auto",
            ],
            "k8sServiceHost",
        ),
    ];
    for (args, needle) in cases {
        let out = bin().args(&args).output().unwrap();
        assert!(!out.status.success(), "{args:?} succeeded");
        assert!(out.stdout.is_empty(), "{args:?} printed to stdout");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}

fn a_broken_values_file_is_reported_with_its_name_and_line() {
    let dir = std::env::temp_dir().join(format!("cilium-cmp-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("bad.yaml");
    std::fs::write(&f, "hubble:\n  relay: [unclosed\n").unwrap();
    let out = bin()
        .args(["render", "--cilium-version", "1.18.12", "-f"])
        .arg(&f)
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(out.stdout.is_empty());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bad.yaml:3:1: "), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}

fn versions_lists_every_supported_release() {
    let out = bin().arg("versions").output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    for v in ["1.18.0", "1.18.12", "1.19.0", "1.19.6", "1.20.0"] {
        assert!(lines.contains(&v), "{v} missing from {lines:?}");
    }
    assert_eq!(lines.len(), 13 + 7 + 1);
}

/// A value only other releases have is refused before anything else (here also a schema
/// violation), every such value at once, with its file and line, the releases that have it and
/// the new name where the chart renamed it.
fn values_of_another_release_are_refused_naming_where_they_exist() {
    let dir = std::env::temp_dir().join(format!("cilium-cmp-other-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("old.yaml");
    std::fs::write(
        &f,
        "cni:\n  iptablesRemoveAWSRules: false\nclustermesh:\n  enableMCSAPISupport: true\nencryption:\n  strictMode:\n    enabled: true\nhubble:\n  tls:\n    auto:\n      method: nonsense\n",
    )
    .unwrap();
    let out = bin()
        .args(["render", "--cilium-version", "1.20.0", "-f"])
        .arg(&f)
        .args(["--set", "customCalls.enabled=true"])
        .output()
        .unwrap();
    std::fs::remove_dir_all(&dir).ok();
    assert!(!out.status.success());
    assert!(out.stdout.is_empty());
    let err = String::from_utf8_lossy(&out.stderr);
    for needle in [
        "do not exist in Cilium 1.20.0",
        "clustermesh.enableMCSAPISupport (set in ",
        "old.yaml line 4): exists only in Cilium 1.18, 1.19; 1.20 renamed it to clustermesh.mcsapi.enabled",
        "encryption.strictMode.enabled (set in ",
        "old.yaml line 7): exists only in Cilium 1.18, 1.19; 1.20 renamed it to encryption.strictMode.egress.enabled",
        "customCalls (set in --set): exists only in Cilium 1.18; removed in 1.19",
        "cilium-cmp fix-values --cilium-version 1.20.0 ",
        "add --apply-renames to move the renamed ones",
    ] {
        assert!(err.contains(needle), "{needle:?} not in: {err}");
    }
    assert!(
        !err.contains("nonsense"),
        "checked before the schema: {err}"
    );
    // The same values without the stale keys render on 1.18.
    let ok = bin()
        .args(["render", "--cilium-version", "1.18.12"])
        .args([
            "--set",
            "cni.iptablesRemoveAWSRules=false,customCalls.enabled=true",
        ])
        .output()
        .unwrap();
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
}

// ---- Helm's input flags: -f -, --set-string, --set-json, --set-file, -o; completions; pipes ----

use crate::support::scratch;
use scratch::Scratch;

/// `render --cilium-version 1.18.12 -f <example> ARGS...`, with `stdin` on standard input.
fn render_with(args: &[&str], stdin: Option<&str>) -> Output {
    use std::io::Write;
    let mut c = bin();
    c.args(["render", "--cilium-version", "1.18.12", "-f"])
        .arg(example())
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .stdin(if stdin.is_some() {
            std::process::Stdio::piped()
        } else {
            std::process::Stdio::null()
        });
    let mut child = c.spawn().expect("runs");
    if let Some(text) = stdin {
        let mut pipe = child.stdin.take().expect("piped");
        // A render that refuses early may not read it all; that is not this test's concern.
        let _ = pipe.write_all(text.as_bytes());
    }
    child.wait_with_output().expect("runs")
}

fn ok_stdout(o: &Output) -> String {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8(o.stdout.clone()).expect("utf-8");
    assert!(out.contains("kind: DaemonSet"), "not a render: {out:.200}");
    out
}

/// A refusal: non-zero, nothing on stdout, stderr holding every one of `needles`.
fn refused(o: &Output, needles: &[&str]) {
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "accepted; stderr: {err}");
    assert!(o.stdout.is_empty(), "stdout not empty on error");
    for n in needles {
        assert!(err.contains(n), "stderr lacks {n:?}: {err}");
    }
}

fn set_string_keeps_a_number_a_string() {
    let out = ok_stdout(&render_with(&["--set-string", "cluster.name=123"], None));
    assert!(out.contains("cluster-name: \"123\""), "{out:.300}");
    // The same text through --set is an integer, which the chart's schema refuses.
    refused(
        &render_with(&["--set", "cluster.name=123"], None),
        &["cluster.name", "--set", "integer"],
    );
}

fn set_json_sets_lists_and_objects() {
    let out = ok_stdout(&render_with(
        &[
            "--set-json",
            r#"tolerations=[{"key":"cmp-json","operator":"Exists"}],extraConfig.cmp-json="a,b""#,
        ],
        None,
    ));
    assert!(
        out.contains("- key: cmp-json\n          operator: Exists"),
        "{out:.300}"
    );
    assert!(out.contains("cmp-json: a,b"));
    // One whole object is merged at the top, as Helm 4 does.
    let out = ok_stdout(&render_with(
        &["--set-json", r#"{"extraConfig":{"cmp-object":"x"}}"#],
        None,
    ));
    assert!(out.contains("cmp-object: x"));
}

fn set_file_reads_the_whole_file_as_a_string() {
    let s = Scratch::new("set-file");
    let f = s.write("custom.conf", "first line\nsecond, with a comma\n");
    let arg = format!("extraConfig.cmp-file={}", f.display());
    let out = ok_stdout(&render_with(&["--set-file", &arg], None));
    assert!(
        out.contains("cmp-file: |\n    first line\n    second, with a comma\n"),
        "{out:.300}"
    );
}

fn flags_apply_in_helms_order_whatever_their_order_on_the_command_line() {
    // Helm: values files, --set-json, --set, --set-string, --set-file.
    let s = Scratch::new("order");
    let f = s.write("name.txt", "from-file");
    let file_arg = format!("cluster.name={}", f.display());
    let out = ok_stdout(&render_with(
        &[
            "--set-file",
            &file_arg,
            "--set-string",
            "cluster.name=from-string",
            "--set",
            "cluster.name=from-set",
            "--set-json",
            r#"cluster.name="from-json""#,
        ],
        None,
    ));
    assert!(out.contains("cluster-name: from-file"));
    let out = ok_stdout(&render_with(
        &[
            "--set-string",
            "cluster.name=from-string",
            "--set",
            "cluster.name=from-set",
            "--set-json",
            r#"cluster.name="from-json""#,
        ],
        None,
    ));
    assert!(out.contains("cluster-name: from-string"));
    let out = ok_stdout(&render_with(
        &[
            "--set",
            "cluster.name=from-set",
            "--set-json",
            r#"cluster.name="from-json""#,
        ],
        None,
    ));
    assert!(out.contains("cluster-name: from-set"));
}

fn values_from_stdin_render_as_the_file_does() {
    let text = std::fs::read_to_string(example()).unwrap();
    let from_file = ok_stdout(&render_with(&[], None));
    let o = bin()
        .args(["render", "--cilium-version", "1.18.12", "-f", "-"])
        .stdin(std::fs::File::open(example()).unwrap())
        .output()
        .unwrap();
    assert_eq!(ok_stdout(&o), from_file);
    // Standard input is named <stdin> in errors, and read once only.
    refused(
        &render_with(&["-f", "-"], Some("a: [\n")),
        &["<stdin>:2:1: "],
    );
    refused(
        &render_with(&["-f", "-", "-f", "-"], Some(&text)),
        &["standard input", "once"],
    );
    refused(
        &render_with(&["-f", "-", "--set-file", "extraConfig.x=-"], Some(&text)),
        &["standard input", "once"],
    );
}

fn malformed_set_flags_are_refused_naming_the_flag() {
    refused(
        &render_with(&["--set-string", "cluster.name"], None),
        &["--set-string", "cluster.name", "PATH=VALUE"],
    );
    refused(
        &render_with(&["--set-json", "tolerations=[1,"], None),
        &["--set-json", "tolerations", "not JSON"],
    );
    refused(
        &render_with(&["--set-json", "{not json"], None),
        &["--set-json", "not JSON"],
    );
    refused(
        &render_with(&["--set-file", "extraConfig.x=/nonexistent/cmp.conf"], None),
        &["--set-file", "/nonexistent/cmp.conf", "cannot be read"],
    );
    refused(
        &render_with(&["--set-file", "extraConfig.x"], None),
        &["--set-file", "PATH=FILE"],
    );
    let deep = format!("a={}1{}", "[".repeat(100), "]".repeat(100));
    refused(
        &render_with(&["--set-json", &deep], None),
        &["--set-json", "nested"],
    );
}

fn output_file_is_written_only_after_a_whole_render() {
    let s = Scratch::new("output");
    let out = s.0.join("cilium.yaml");
    let stdout_render = ok_stdout(&render_with(&[], None));
    let o = render_with(&["-o", out.to_str().unwrap()], None);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(o.stdout.is_empty(), "-o must leave stdout empty");
    assert_eq!(std::fs::read_to_string(&out).unwrap(), stdout_render);
    // A failed render leaves the file as it was, and no temporary file beside it.
    std::fs::write(&out, "previous\n").unwrap();
    let o = render_with(
        &["--set", "nosuchvalue=1", "-o", out.to_str().unwrap()],
        None,
    );
    refused(&o, &["nosuchvalue"]);
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "previous\n");
    let names: Vec<_> = std::fs::read_dir(&s.0)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["cilium.yaml"]);
    // An unwritable place is an error naming it.
    let o = render_with(&["-o", "/nonexistent-dir/cilium.yaml"], None);
    refused(&o, &["/nonexistent-dir/cilium.yaml"]);
}

fn a_closed_pipe_ends_quietly() {
    for args in [
        vec![
            "render",
            "--cilium-version",
            "1.18.12",
            "-f",
            example().to_str().unwrap(),
        ],
        vec!["versions"],
        vec!["completions", "bash"],
    ] {
        let mut child = bin()
            .args(&args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // The reader goes away before anything is written, as `| head -0` would.
        drop(child.stdout.take());
        let o = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "{args:?}: {:?} {err}", o.status);
        assert!(!err.to_lowercase().contains("pipe"), "{args:?}: {err}");
    }
}

fn completions_are_printed_for_every_shell() {
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let o = bin().args(["completions", shell]).output().unwrap();
        assert!(o.status.success(), "{shell}");
        let script = String::from_utf8(o.stdout).unwrap();
        assert!(
            script.contains("cilium-cmp") && script.contains("set-json"),
            "{shell}: {script:.200}"
        );
    }
    refused(
        &bin().args(["completions", "tcsh"]).output().unwrap(),
        &["tcsh"],
    );
}

/// Helm applies `--set` to the values files' merged tree itself: an index changes one item of a
/// list a file wrote, and the file's other items stay (strvals' ParseInto over the files' map).
fn set_changes_one_item_of_a_list_from_a_values_file() {
    let from_file = "extraEnv:\n  - name: A\n    value: \"1\"\n  - name: B\n    value: \"2\"\n";
    let with_set = ok_stdout(&render_with(
        &["-f", "-", "--set", "extraEnv[1].value=3"],
        Some(from_file),
    ));
    let written_out = ok_stdout(&render_with(
        &["-f", "-"],
        Some("extraEnv:\n  - name: A\n    value: \"1\"\n  - name: B\n    value: 3\n"),
    ));
    assert!(with_set.contains("name: A"), "the file's first item stays");
    assert_eq!(with_set, written_out);
}
