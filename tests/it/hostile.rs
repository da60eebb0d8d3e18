//! Input as an attacker with push access writes it (the plugin runs inside Argo CD's shared
//! repo-server): every case is refused with a clear error, a non-zero exit and nothing on stdout,
//! in well under a second and 100 MB. Each was measured at gigabytes (or an abort) before the
//! bounds of `limits.rs`.

use crate::support::charts;
use crate::support::harness;

pub fn tests() -> Vec<harness::Trial> {
    harness::group(
        file!(),
        vec![
            harness::test(
                "set_list_indexes_cannot_allocate_gigabytes",
                set_list_indexes_cannot_allocate_gigabytes,
            ),
            harness::test(
                "set_paths_cannot_overflow_the_stack",
                set_paths_cannot_overflow_the_stack,
            ),
            harness::test(
                "a_measured_childs_peak_is_its_own",
                a_measured_childs_peak_is_its_own,
            ),
            harness::test("malformed_set_is_refused", malformed_set_is_refused),
            harness::test("alias_bombs_are_refused", alias_bombs_are_refused),
            harness::test(
                "devices_and_huge_files_are_refused_before_reading",
                devices_and_huge_files_are_refused_before_reading,
            ),
            harness::test(
                "out_of_range_numbers_are_text_as_helm_reads_them",
                out_of_range_numbers_are_text_as_helm_reads_them,
            ),
            harness::test(
                "an_unsupported_kubernetes_version_is_refused",
                an_unsupported_kubernetes_version_is_refused,
            )
            .shared("charts"),
            harness::test(
                "one_file_listed_thousands_of_times_is_refused",
                one_file_listed_thousands_of_times_is_refused,
            ),
            harness::test(
                "settings_nested_deep_with_long_keys_are_refused",
                settings_nested_deep_with_long_keys_are_refused,
            ),
            harness::test(
                "links_out_of_the_repository_are_refused_for_every_file",
                links_out_of_the_repository_are_refused_for_every_file,
            ),
            harness::test(
                "lock_never_writes_through_a_planted_link",
                lock_never_writes_through_a_planted_link,
            )
            .shared("charts"),
            harness::test(
                "parallel_locks_do_not_collide",
                parallel_locks_do_not_collide,
            )
            .shared("charts"),
            harness::test(
                "malformed_files_are_pointed_at_by_line_and_column",
                malformed_files_are_pointed_at_by_line_and_column,
            ),
        ],
    )
}

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::support::scratch;
use scratch::Scratch;

use crate::support::child;
use child::{run, Outcome};

fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_cilium-cmp"))
}

fn render(args: &[&str]) -> Command {
    let mut c = child::command(bin());
    c.arg("render")
        .args(["--cilium-version", "1.18.12"])
        .args(args)
        .env_clear()
        .env("CILIUM_CMP_CHART_DIR", charts::dir());
    c
}

/// Refused cleanly: exit 1, nothing on stdout, a message holding `needle`, cheaply.
fn assert_refused(o: &Outcome, needle: &str) {
    assert_eq!(
        o.code,
        Some(1),
        "exit code (signal {:?}); stderr: {}",
        o.signal,
        o.stderr
    );
    assert!(o.stdout.is_empty(), "nothing on stdout");
    assert!(
        o.stderr.contains(needle),
        "stderr should mention {needle:?}: {}",
        o.stderr
    );
    assert!(
        o.elapsed < Duration::from_secs(1),
        "took {:?}: {}",
        o.elapsed,
        o.stderr
    );
    assert!(o.peak_kib < 100 * 1024, "peak {} KiB", o.peak_kib);
    assert!(o.stderr.len() < 4000, "bounded message: {}", o.stderr.len());
}

/// Every bound of these tests is on a peak the spawner reports: a child of this big process,
/// started directly, reports this process's peak (the control, which shows the kernel still
/// does), and the same small program through the spawner reports its own few MB.
fn a_measured_childs_peak_is_its_own() {
    const HELD: usize = 128 << 20;
    // Touched, so the pages are resident and this process's peak is at least HELD.
    let held = std::hint::black_box(vec![1u8; HELD]);
    let direct = Command::new("true").spawn().expect("true starts");
    let pid = direct.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: all-zero is a valid rusage (integers only).
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: waits for our own child, whose pid we hold, with valid out-pointers.
    assert_eq!(unsafe { libc::wait4(pid, &mut status, 0, &mut usage) }, pid);
    drop(direct);
    assert!(
        usage.ru_maxrss >= (HELD >> 10) as i64,
        "a direct child reported {} KiB: the kernel no longer charges the parent's peak, and \
         support/child.rs's spawner may go",
        usage.ru_maxrss
    );
    let o = run(child::command("true"));
    drop(held);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert!(o.peak_kib < 16 << 10, "true's peak: {} KiB", o.peak_kib);
    let o = run(child::command("false"));
    assert_eq!((o.code, o.signal), (Some(1), None));
    let mut killed = child::command("sh");
    killed.args(["-c", "kill -TERM $$"]);
    let o = run(killed);
    assert_eq!((o.code, o.signal), (None, Some(libc::SIGTERM)));
}

fn set_list_indexes_cannot_allocate_gigabytes() {
    let many: Vec<String> = (0..300).map(|i| format!("x{i}[65536]=1")).collect();
    assert_refused(&run(render(&["--set", &many.join(",")])), "too large");
    let many: Vec<String> = (0..800).map(|i| format!("x{i}[1023]=1")).collect();
    assert_refused(&run(render(&["--set", &many.join(",")])), "in total");
}

fn set_paths_cannot_overflow_the_stack() {
    let deep = format!("{}=1", vec!["a"; 40_000].join("."));
    assert_refused(&run(render(&["--set", &deep])), "at most 64");
}

fn malformed_set_is_refused() {
    assert_refused(&run(render(&["--set", "x[0=1"])), "not closed");
    assert_refused(
        &run(render(&["--set", "extraArgs={a,b"])),
        "must end with '}'",
    );
}

fn alias_bombs_are_refused() {
    let s = Scratch::new("anchors");
    let mut laughs = String::from("a: &a [x, x, x, x, x, x, x, x, x, x]\n");
    for (prev, name) in ["a", "b", "c", "d", "e", "f", "g", "h"]
        .iter()
        .zip(["b", "c", "d", "e", "f", "g", "h", "i"])
    {
        let refs = vec![format!("*{prev}"); 10].join(", ");
        laughs.push_str(&format!("{name}: &{name} [{refs}]\n"));
    }
    let f = s.write("laughs.yaml", &laughs);
    assert_refused(
        &run(render(&["-f", f.to_str().unwrap()])),
        "aliases (*name)",
    );

    let mut big = format!("big: &big \"{}\"\nlist:\n", "x".repeat(100_000));
    // Within the file-size bound, yet ~1 GB once expanded.
    big.push_str(&"  - *big\n".repeat(10_000));
    let f = s.write("big.yaml", &big);
    assert_refused(
        &run(render(&["-f", f.to_str().unwrap()])),
        "aliases (*name)",
    );

    let f = s.write("key.yaml", "a: &a {x: 1}\n? *a\n: 1\n");
    assert_refused(&run(render(&["-f", f.to_str().unwrap()])), "mapping key");
}

fn devices_and_huge_files_are_refused_before_reading() {
    assert_refused(&run(render(&["-f", "/dev/zero"])), "not a regular file");
    let s = Scratch::new("huge");
    let f = s.write("huge.yaml", &"# padding\n".repeat(300_000));
    assert_refused(&run(render(&["-f", f.to_str().unwrap()])), "limited to");
}

fn out_of_range_numbers_are_text_as_helm_reads_them() {
    let s = Scratch::new("numbers");
    let f = s.write("v.yaml", "operator:\n  replicas: 1e400\n");
    // Helm keeps "1e400" a string, which the chart's schema then refuses.
    assert_refused(
        &run(render(&["-f", f.to_str().unwrap()])),
        "operator.replicas",
    );
}

fn an_unsupported_kubernetes_version_is_refused() {
    assert_refused(
        &run(render(&["--kube-version", "1.16"])),
        "requires Kubernetes 1.21",
    );
}

/// An application folder `repo/app` with the given settings, for `generate` and `lock`.
fn folder(settings: &str) -> Scratch {
    let s = Scratch::new("repo");
    s.write("app/cilium-cmp.yaml", settings);
    s.write("app/values.yaml", "cni:\n  iptablesRemoveAWSRules: false\n");
    s
}

fn generate(app: &Path) -> Command {
    let mut c = child::command(bin());
    c.arg("generate")
        .current_dir(app)
        .env_clear()
        .env("ARGOCD_APP_NAMESPACE", "kube-system")
        .env("ARGOCD_APP_SOURCE_PATH", "app")
        .env("KUBE_VERSION", "1.35.0")
        .env("KUBE_API_VERSIONS", "v1")
        .env("ARGOCD_APP_PARAMETERS", "null")
        .env("CILIUM_CMP_CHART_DIR", charts::dir());
    c
}

fn one_file_listed_thousands_of_times_is_refused() {
    let mut settings = String::from("ciliumVersion: \"1.18.12\"\nvaluesFiles:\n");
    settings.push_str(&"  - values.yaml\n".repeat(4000));
    let s = folder(&settings);
    assert_refused(&run(generate(&s.0.join("app"))), "at most 64");
}

fn settings_nested_deep_with_long_keys_are_refused() {
    let key = "k".repeat(200);
    let mut text = String::from("ciliumVersion: \"1.18.12\"\n");
    for depth in 0..100 {
        text.push_str(&format!("{}{key}{depth}:\n", "  ".repeat(depth)));
    }
    text.push_str(&format!("{}leaf: 1\n", "  ".repeat(100)));
    let s = folder(&text);
    assert_refused(&run(generate(&s.0.join("app"))), "nested too deeply");
}

fn links_out_of_the_repository_are_refused_for_every_file() {
    let outside = Scratch::new("outside");
    let secret = outside.write("secret.yaml", "password: hunter2\n");
    for (name, target) in [
        ("cilium-cmp.yaml", secret.as_path()),
        ("cilium-cmp.yaml", Path::new("/dev/zero")),
        ("cilium-cmp.lock", secret.as_path()),
        ("values.yaml", Path::new("/dev/zero")),
    ] {
        let s = folder("ciliumVersion: \"1.18.12\"\n");
        let link = s.0.join("app").join(name);
        std::fs::remove_file(&link).ok();
        std::os::unix::fs::symlink(target, &link).unwrap();
        let o = run(generate(&s.0.join("app")));
        assert_refused(&o, "outside");
        assert!(!o.stderr.contains("hunter2"), "{}", o.stderr);
    }
}

fn lock_never_writes_through_a_planted_link() {
    let outside = Scratch::new("target");
    let victim = outside.write("victim", "untouched\n");
    let s = folder("ciliumVersion: \"1.18.12\"\n");
    let app = s.0.join("app");
    // The temporary names of earlier versions, and any this process could pick, planted as links.
    for name in [".cilium-cmp.lock.tmp".to_string()]
        .into_iter()
        .chain((0..3).map(|i| format!(".cilium-cmp.lock.{}.{i}.tmp", std::process::id())))
    {
        std::os::unix::fs::symlink(&victim, app.join(name)).unwrap();
    }
    let mut lock = child::command(bin());
    lock.arg("lock")
        .arg(&app)
        .args(["--repo-root", s.0.to_str().unwrap()])
        .args(["--namespace", "kube-system", "--kube-version", "1.35.0"])
        .env_clear()
        .env("CILIUM_CMP_CHART_DIR", charts::dir());
    let o = run(lock);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "untouched\n");
    let meta = std::fs::symlink_metadata(app.join("cilium-cmp.lock")).unwrap();
    assert!(meta.file_type().is_file());
}

fn parallel_locks_do_not_collide() {
    let s = folder("ciliumVersion: \"1.18.12\"\n");
    let app = s.0.join("app");
    let children: Vec<_> = (0..4)
        .map(|_| {
            Command::new(bin())
                .arg("lock")
                .arg(&app)
                .args(["--repo-root", s.0.to_str().unwrap()])
                .args(["--namespace", "kube-system", "--kube-version", "1.35.0"])
                .env_clear()
                .env("CILIUM_CMP_CHART_DIR", charts::dir())
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for c in children {
        let o = c.wait_with_output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let lock = std::fs::read_to_string(app.join("cilium-cmp.lock")).unwrap();
    assert!(lock.contains("sha256:"), "{lock}");
    let leftovers: Vec<_> = std::fs::read_dir(&app)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

/// Malformed values files are pointed at as `file:line:column: reason`, the form editors and
/// terminals turn into a link, before anything is rendered.
fn malformed_files_are_pointed_at_by_line_and_column() {
    let s = Scratch::new("malformed");
    let cases: [(&str, &[u8], &str); 8] = [
        ("flow.yaml", b"a: {b: 1\n", "flow.yaml:2:1: "),
        ("indent.yaml", b"a:\n  - b\n  c: d\n", "indent.yaml:3:3: "),
        (
            "dup.yaml",
            b"a: 1\nb:\n  c: 1\n  c: 2\n",
            // Helm keeps the second `c`; the first does nothing, and both lines are named.
            "dup.yaml line 3): written again at ",
        ),
        ("tab.yaml", b"a:\n\tb: 2\n", "tab.yaml:2:"),
        (
            "bytes.yaml",
            b"a: 1\nb: \"x\xff\"\n",
            "bytes.yaml:2:6: not UTF-8",
        ),
        (
            "list.yaml",
            b"# top\n- 1\n",
            "list.yaml:2:1: a values file must be a YAML mapping",
        ),
        (
            "scalar.yaml",
            b"just text\n",
            "scalar.yaml:1:1: a values file must be a YAML mapping",
        ),
        (
            "two.yaml",
            b"a: 1\n---\nb: 2\n",
            "two.yaml:3:1: a values file holds one YAML document",
        ),
    ];
    for (name, text, needle) in cases {
        let path = s.0.join(name);
        std::fs::write(&path, text).unwrap();
        let o = run(render(&["-f", path.to_str().unwrap()]));
        assert_refused(&o, needle);
    }
}
