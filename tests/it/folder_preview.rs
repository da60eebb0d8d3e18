//! Previewing an application folder writes nothing: `render-folder` prints the bytes the plugin
//! generates and says how they stand against the lock; `lock --check` fails on a missing or
//! stale lock; `lock` changes the lock only after a successful render. The example folder of
//! docs/application-folder.md is built as written and rendered with the page's commands.

use crate::support::charts;
use crate::support::harness;

pub fn tests() -> Vec<harness::Trial> {
    harness::group(
        file!(),
        vec![
            harness::test(
                "render_folder_prints_exactly_what_generate_prints",
                render_folder_prints_exactly_what_generate_prints,
            )
            .shared("charts"),
            harness::test(
                "preview_and_check_write_nothing",
                preview_and_check_write_nothing,
            )
            .shared("charts"),
            harness::test(
                "lock_check_fails_on_a_missing_or_stale_lock",
                lock_check_fails_on_a_missing_or_stale_lock,
            )
            .shared("charts"),
            harness::test(
                "a_lock_without_object_digests_still_checks_by_hash",
                a_lock_without_object_digests_still_checks_by_hash,
            )
            .shared("charts"),
            harness::test(
                "a_failing_render_leaves_the_lock_byte_identical",
                a_failing_render_leaves_the_lock_byte_identical,
            )
            .shared("charts"),
            harness::test(
                "a_failing_write_leaves_the_lock_byte_identical",
                a_failing_write_leaves_the_lock_byte_identical,
            )
            .shared("charts"),
            harness::test(
                "the_documented_example_folder_renders_as_written",
                the_documented_example_folder_renders_as_written,
            )
            .shared("charts"),
            harness::test(
                "excluded_objects_are_named_and_the_render_is_unchanged",
                excluded_objects_are_named_and_the_render_is_unchanged,
            )
            .shared("charts"),
        ],
    )
}

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::support::scratch;
use scratch::Scratch;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_cilium-cmp"))
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

const NS: &[&str] = &["--namespace", "kube-system", "--kube-version", "1.35.0"];
const API: &str = "monitoring.coreos.com/v1,v1";

/// A repository holding the shipped Argo CD example as `apps/cilium` and `apps/common`.
fn example_repo() -> Scratch {
    let s = Scratch::new("preview");
    for (from, to) in [
        (
            "examples/argocd/cilium/cilium-cmp.yaml",
            "apps/cilium/cilium-cmp.yaml",
        ),
        (
            "examples/argocd/cilium/values.yaml",
            "apps/cilium/values.yaml",
        ),
        (
            "examples/argocd/common/values.yaml",
            "apps/common/values.yaml",
        ),
    ] {
        s.write(to, &std::fs::read_to_string(root().join(from)).unwrap());
    }
    s
}

/// Runs a folder command (`render-folder`, `lock`, ...) from the repository root.
fn folder_cmd(repo: &Path, args: &[&str]) -> Output {
    Command::new(bin())
        .args(args)
        .args(NS)
        .args(["--api-versions", API])
        .current_dir(repo)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("CILIUM_CMP_CHART_DIR", charts::dir())
        .output()
        .expect("runs")
}

/// The plugin's `generate`, run the Argo CD way: in the folder, inputs in the environment.
fn generate(repo: &Path, app_rel: &str) -> Output {
    Command::new(bin())
        .arg("generate")
        .current_dir(repo.join(app_rel))
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("ARGOCD_APP_NAME", "cilium")
        .env("ARGOCD_APP_NAMESPACE", "kube-system")
        .env("ARGOCD_APP_SOURCE_PATH", app_rel)
        .env("KUBE_VERSION", "1.35.0")
        .env("KUBE_API_VERSIONS", API)
        .env("CILIUM_CMP_CHART_DIR", charts::dir())
        .output()
        .expect("runs")
}

fn assert_is_render(o: &Output, what: &str) {
    assert!(o.status.success(), "{what}: {}", stderr(o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("\nkind: DaemonSet\n")
            && text.contains("cilium-cmp.io/content-hash: sha256:"),
        "{what} printed no render"
    );
}

fn lock_path(repo: &Path) -> PathBuf {
    repo.join("apps/cilium/cilium-cmp.lock")
}

/// Every file below the folder with its bytes: what "writes nothing" is checked against.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let bytes = std::fs::read(&p).unwrap();
                out.push((p, bytes));
            }
        }
    }
    out.sort();
    out
}

fn render_folder_prints_exactly_what_generate_prints() {
    let repo = example_repo();
    let preview = folder_cmd(&repo.0, &["render-folder", "apps/cilium"]);
    assert_is_render(&preview, "render-folder");
    assert!(
        stderr(&preview).contains("apps/cilium/cilium-cmp.lock: no lock yet"),
        "{}",
        stderr(&preview)
    );
    let generated = generate(&repo.0, "apps/cilium");
    assert_is_render(&generated, "generate");
    assert!(
        generated.stdout == preview.stdout,
        "render-folder and generate differ"
    );

    // With a fresh lock, generate passes and still prints the same bytes.
    let lock = folder_cmd(&repo.0, &["lock", "apps/cilium"]);
    assert!(lock.status.success(), "{}", stderr(&lock));
    let again = folder_cmd(&repo.0, &["render-folder", "apps/cilium"]);
    assert!(again.stdout == preview.stdout);
    assert!(
        stderr(&again).contains("the render matches the lock"),
        "{}",
        stderr(&again)
    );
    assert!(generate(&repo.0, "apps/cilium").stdout == preview.stdout);
}

fn preview_and_check_write_nothing() {
    let repo = example_repo();
    let before = snapshot(&repo.0);
    for args in [
        &["render-folder", "apps/cilium"][..],
        &["lock", "--check", "apps/cilium"],
    ] {
        folder_cmd(&repo.0, args);
        assert!(snapshot(&repo.0) == before, "{args:?} wrote something");
    }
    // The same with a lock, fresh and then stale.
    assert!(folder_cmd(&repo.0, &["lock", "apps/cilium"])
        .status
        .success());
    let locked = snapshot(&repo.0);
    std::fs::write(
        repo.0.join("apps/cilium/values.yaml"),
        "operator:\n  replicas: 2\n",
    )
    .unwrap();
    let edited = snapshot(&repo.0);
    assert!(locked != edited);
    for args in [
        &["render-folder", "apps/cilium"][..],
        &["lock", "--check", "apps/cilium"],
    ] {
        folder_cmd(&repo.0, args);
        assert!(snapshot(&repo.0) == edited, "{args:?} wrote something");
    }
}

fn lock_check_fails_on_a_missing_or_stale_lock() {
    let repo = example_repo();
    let missing = folder_cmd(&repo.0, &["lock", "--check", "apps/cilium"]);
    assert!(!missing.status.success());
    assert!(missing.stdout.is_empty());
    let e = stderr(&missing);
    assert!(
        e.starts_with("error: apps/cilium/cilium-cmp.lock does not exist")
            && e.contains("cilium-cmp lock apps/cilium "),
        "{e}"
    );
    assert!(!lock_path(&repo.0).exists());

    let lock = folder_cmd(&repo.0, &["lock", "apps/cilium"]);
    assert!(lock.status.success(), "{}", stderr(&lock));
    assert!(lock.stdout.is_empty(), "lock prints no render");
    assert!(
        stderr(&lock).contains("written; commit it"),
        "{}",
        stderr(&lock)
    );

    let fresh = folder_cmd(&repo.0, &["lock", "--check", "apps/cilium"]);
    assert!(fresh.status.success(), "{}", stderr(&fresh));
    assert!(fresh.stdout.is_empty());
    assert!(stderr(&fresh).contains("matches the lock"));

    // One value changed: the check fails and names the changed object and both hashes.
    let values = repo.0.join("apps/cilium/values.yaml");
    let text = std::fs::read_to_string(&values)
        .unwrap()
        .replace("replicas: 1", "replicas: 2");
    std::fs::write(&values, text).unwrap();
    let stale = folder_cmd(&repo.0, &["lock", "--check", "apps/cilium"]);
    assert!(!stale.status.success());
    assert!(stale.stdout.is_empty());
    let e = stderr(&stale);
    assert!(e.starts_with("error: the lock is stale"), "{e}");
    assert!(
        e.contains("locked:   sha256:") && e.contains("rendered: sha256:"),
        "{e}"
    );
    assert!(
        e.contains("  changed (1):\n    Deployment/kube-system/cilium-operator\n"),
        "{e}"
    );
    assert!(e.contains("cilium-cmp render-folder apps/cilium "), "{e}");

    // render-folder on the stale lock: the render, and the same summary, exit 0.
    let preview = folder_cmd(&repo.0, &["render-folder", "apps/cilium"]);
    assert_is_render(&preview, "render-folder");
    assert!(stderr(&preview).contains("Deployment/kube-system/cilium-operator"));

    // After `lock`, the check passes again; a second `lock` leaves the file alone.
    assert!(folder_cmd(&repo.0, &["lock", "apps/cilium"])
        .status
        .success());
    assert!(folder_cmd(&repo.0, &["lock", "--check", "apps/cilium"])
        .status
        .success());
    let unchanged = folder_cmd(&repo.0, &["lock", "apps/cilium"]);
    assert!(
        stderr(&unchanged).contains("cilium-cmp.lock: unchanged"),
        "{}",
        stderr(&unchanged)
    );
}

fn a_lock_without_object_digests_still_checks_by_hash() {
    let repo = example_repo();
    assert!(folder_cmd(&repo.0, &["lock", "apps/cilium"])
        .status
        .success());
    let full = std::fs::read_to_string(lock_path(&repo.0)).unwrap();
    let hash_line = full
        .lines()
        .find(|l| l.starts_with("contentHash: "))
        .unwrap();
    std::fs::write(lock_path(&repo.0), format!("{hash_line}\n")).unwrap();
    let check = folder_cmd(&repo.0, &["lock", "--check", "apps/cilium"]);
    assert!(check.status.success(), "{}", stderr(&check));
    assert!(generate(&repo.0, "apps/cilium").status.success());
    let values = repo.0.join("apps/cilium/values.yaml");
    std::fs::write(&values, "operator:\n  replicas: 3\n").unwrap();
    let stale = folder_cmd(&repo.0, &["lock", "--check", "apps/cilium"]);
    assert!(!stale.status.success());
    assert!(
        stderr(&stale).contains("records no object digests"),
        "{}",
        stderr(&stale)
    );
    // `lock` then records them.
    assert!(folder_cmd(&repo.0, &["lock", "apps/cilium"])
        .status
        .success());
    assert!(std::fs::read_to_string(lock_path(&repo.0))
        .unwrap()
        .contains("\nobjects:\n  ClusterRole/cilium: "));
}

fn a_failing_render_leaves_the_lock_byte_identical() {
    let repo = example_repo();
    assert!(folder_cmd(&repo.0, &["lock", "apps/cilium"])
        .status
        .success());
    let before = std::fs::read(lock_path(&repo.0)).unwrap();
    let values = repo.0.join("apps/cilium/values.yaml");
    for (broken, expect) in [
        (
            "operator:\n  replicas: 2\nhubble:\n  relay:\n    enabeld: true\n",
            "enabeld",
        ),
        ("operator: [\n", "values.yaml"),
        ("hubble:\n  tls:\n    auto:\n      method: helm\n", "helm"),
    ] {
        std::fs::write(&values, broken).unwrap();
        let o = folder_cmd(&repo.0, &["lock", "apps/cilium"]);
        assert!(!o.status.success(), "{broken:?} must fail");
        assert!(o.stdout.is_empty());
        assert!(stderr(&o).contains(expect), "{}", stderr(&o));
        assert_eq!(
            std::fs::read(lock_path(&repo.0)).unwrap(),
            before,
            "{broken:?}"
        );
    }
    let leftovers: Vec<_> = std::fs::read_dir(repo.0.join("apps/cilium"))
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

/// A write that fails half-way (here: the file-size limit is zero, so the first byte written is
/// refused, even for root) leaves the old lock and no temporary file.
fn a_failing_write_leaves_the_lock_byte_identical() {
    use std::os::unix::process::CommandExt;
    let repo = example_repo();
    assert!(folder_cmd(&repo.0, &["lock", "apps/cilium"])
        .status
        .success());
    let before = std::fs::read(lock_path(&repo.0)).unwrap();
    std::fs::write(
        repo.0.join("apps/cilium/values.yaml"),
        "operator:\n  replicas: 2\n",
    )
    .unwrap();
    let mut cmd = Command::new(bin());
    cmd.args(["lock", "apps/cilium"])
        .args(NS)
        .args(["--api-versions", API])
        .current_dir(&repo.0)
        .env_clear()
        .env("CILIUM_CMP_CHART_DIR", charts::dir());
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            let zero = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            if libc::setrlimit(libc::RLIMIT_FSIZE, &zero) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let o = cmd.output().expect("runs");
    assert!(!o.status.success(), "the write must fail");
    assert!(o.stdout.is_empty());
    assert!(
        stderr(&o).contains("cannot write apps/cilium/cilium-cmp.lock"),
        "{}",
        stderr(&o)
    );
    assert_eq!(std::fs::read(lock_path(&repo.0)).unwrap(), before);
    let leftovers: Vec<_> = std::fs::read_dir(repo.0.join("apps/cilium"))
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

/// The application-folder page (docs/application-folder.md), taken as written: its tree and its
/// `cilium-cmp.yaml` are built in a scratch repository and rendered with the page's commands.
fn the_documented_example_folder_renders_as_written() {
    let page = std::fs::read_to_string(root().join("docs/application-folder.md")).unwrap();
    let section = &page[page.find("# The application folder").expect("its title")..];
    let blocks: Vec<&str> = section
        .split("```")
        .skip(1)
        .step_by(2)
        .map(|b| b.split_once('\n').map_or("", |(_, body)| body))
        .collect();
    let tree = blocks
        .iter()
        .find(|b| b.contains("├──"))
        .expect("the folder tree");
    let settings = blocks
        .iter()
        .find(|b| b.starts_with("# cilium-cmp.yaml\n"))
        .expect("the settings file");

    let repo = Scratch::new("readme");
    let mut dir = String::new();
    let mut files = Vec::new();
    for line in tree.lines() {
        let entry = line.split('#').next().unwrap().trim();
        let entry = entry.trim_start_matches(['├', '└', '─', '│', ' ']);
        if entry.is_empty() {
            continue;
        }
        if let Some(d) = entry.strip_suffix('/') {
            dir = d.to_string();
        } else if line.starts_with(['├', '└']) {
            files.push(format!("{dir}/{entry}"));
        } else {
            files.push(entry.to_string());
        }
    }
    let app = "clusters/prod/cilium";
    assert_eq!(dir, app, "the tree's application folder");
    let mut shared = None;
    for f in &files {
        match f.rsplit('/').next().unwrap() {
            "cilium-cmp.yaml" => {
                repo.write(f, settings);
            }
            "cilium-cmp.lock" => {}
            "values.yaml" if f.starts_with(&format!("{app}/")) => {
                repo.write(f, "operator:\n  replicas: 1\n");
            }
            // The shared file: the Talos-ready common values, recognisable in the render.
            "values.yaml" => {
                shared = Some(f.clone());
                repo.write(
                    f,
                    &std::fs::read_to_string(root().join("examples/argocd/common/values.yaml"))
                        .unwrap(),
                );
            }
            other => panic!("unexpected file in the documented tree: {other}"),
        }
    }
    assert_eq!(shared.as_deref(), Some("clusters/common/values.yaml"));

    // The page's commands (without the pipe into kubectl).
    let preview = folder_cmd(&repo.0, &["render-folder", app]);
    assert_is_render(&preview, "render-folder of the documented folder");
    let text = String::from_utf8_lossy(&preview.stdout);
    assert!(
        text.contains("KUBERNETES_SERVICE_PORT\n              value: \"7445\""),
        "the shared values are merged"
    );
    assert!(!folder_cmd(&repo.0, &["lock", "--check", app])
        .status
        .success());
    assert!(folder_cmd(&repo.0, &["lock", app]).status.success());
    assert!(folder_cmd(&repo.0, &["lock", "--check", app])
        .status
        .success());
    assert!(generate(&repo.0, app).stdout == preview.stdout);
}

/// Objects Argo CD's default resource.exclusions skip are named on stderr by render-folder and
/// lock, with the effect and the argocd-cm fix; the render on stdout is the same with or without
/// exclusions (an argocd-cm without any names nothing).
fn excluded_objects_are_named_and_the_render_is_unchanged() {
    let repo = example_repo();
    let ingress = [
        "--set",
        "ingressController.enabled=true",
        "--set",
        "kubeProxyReplacement=true",
    ];
    let run = |cmd: &str, extra: &[&str]| {
        let mut args = vec![cmd, "apps/cilium"];
        args.extend_from_slice(&ingress);
        args.extend_from_slice(extra);
        folder_cmd(&repo.0, &args)
    };
    let defaults = run("render-folder", &[]);
    assert!(defaults.status.success(), "{}", stderr(&defaults));
    let e = stderr(&defaults);
    assert!(
        e.contains("EndpointSlice kube-system/cilium-ingress")
            && e.contains("no backends")
            && e.contains("fix: argocd-cm resource.exclusions"),
        "{e}"
    );
    let cm = repo.write("argocd-cm.yaml", "data:\n  resource.exclusions: '[]'\n");
    let none = run("render-folder", &["--argocd-cm", cm.to_str().unwrap()]);
    assert!(none.status.success(), "{}", stderr(&none));
    assert!(
        !stderr(&none).contains("cilium-ingress"),
        "{}",
        stderr(&none)
    );
    assert_eq!(defaults.stdout, none.stdout, "the render must not change");
    let lock = run("lock", &[]);
    assert!(lock.status.success(), "{}", stderr(&lock));
    assert!(stderr(&lock).contains("EndpointSlice kube-system/cilium-ingress"));
}
