//! The command line as users and Argo CD run it: same bytes everywhere, nothing on stdout on error.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_cilium-cmp"))
}

fn example() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/talos/values.yaml")
}

fn render_in(dir: &Path, envs: &[(&str, &str)], clear_env: bool) -> Output {
    let mut c = bin();
    if clear_env {
        c.env_clear();
    }
    c.current_dir(dir)
        .args(["render", "--cilium-version", "1.18.12", "-f"])
        .arg(example())
        .envs(envs.iter().copied())
        .output()
        .expect("runs")
}

#[test]
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

#[test]
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

#[test]
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

#[test]
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

#[test]
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
#[test]
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
