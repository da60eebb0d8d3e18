//! Files the program writes keep their owner's intent, and files it reads never hang it.
//!
//! `fix-values`, `lock` and `-o` replace a file whole (a new file renamed over it): each case
//! here is an attack or an accident a plain rename gets wrong (a secret's 0600 mode lost, a
//! read-only file replaced, a hard link split, a planted symbolic link replaced by a copy of the
//! file outside it points to), checked for the refusal, for the files left exactly as they were,
//! and for what `--force` documents. Every user-named input that is a FIFO with no writer must be
//! refused within seconds instead of blocking forever; each child runs under a deadline and is
//! killed past it, so a regression fails the test rather than hanging the suite.

use crate::support::charts;
use crate::support::harness;

pub fn tests() -> Vec<harness::Trial> {
    harness::group(
        file!(),
        vec![
            harness::test(
                "fix_values_keeps_a_secret_files_mode_and_owner",
                fix_values_keeps_a_secret_files_mode_and_owner,
            )
            .shared("charts"),
            harness::test(
                "fix_values_refuses_a_read_only_file_and_force_keeps_it_read_only",
                fix_values_refuses_a_read_only_file_and_force_keeps_it_read_only,
            )
            .shared("charts"),
            harness::test(
                "fix_values_refuses_a_hard_link_and_force_splits_it",
                fix_values_refuses_a_hard_link_and_force_splits_it,
            )
            .shared("charts"),
            harness::test(
                "fix_values_refuses_a_link_out_of_the_folder_and_force_replaces_only_the_link",
                fix_values_refuses_a_link_out_of_the_folder_and_force_replaces_only_the_link,
            )
            .shared("charts"),
            harness::test(
                "fix_values_writes_no_file_when_one_of_several_is_refused",
                fix_values_writes_no_file_when_one_of_several_is_refused,
            )
            .shared("charts"),
            harness::test(
                "lock_keeps_its_mode_and_refuses_read_only_and_hard_linked_locks",
                lock_keeps_its_mode_and_refuses_read_only_and_hard_linked_locks,
            )
            .shared("charts"),
            harness::test(
                "lock_refuses_a_symbolic_link_and_force_replaces_only_the_link",
                lock_refuses_a_symbolic_link_and_force_replaces_only_the_link,
            )
            .shared("charts"),
            harness::test(
                "an_output_file_keeps_its_mode_and_refuses_links_and_read_only_files",
                an_output_file_keeps_its_mode_and_refuses_links_and_read_only_files,
            )
            .shared("charts"),
            harness::test(
                "force_is_refused_where_nothing_is_written",
                force_is_refused_where_nothing_is_written,
            ),
            harness::test(
                "a_fifo_as_any_input_is_refused_within_seconds",
                a_fifo_as_any_input_is_refused_within_seconds,
            )
            .shared("charts"),
            harness::test(
                "standard_input_that_is_a_directory_is_refused_and_a_pipe_is_read",
                standard_input_that_is_a_directory_is_refused_and_a_pipe_is_read,
            )
            .shared("charts"),
            harness::test(
                "import_application_refuses_a_dangling_link_where_it_would_write_and_keeps_it",
                import_application_refuses_a_dangling_link_where_it_would_write_and_keeps_it,
            ),
        ],
    )
}

use std::os::unix::fs::{symlink, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::scratch;
use scratch::Scratch;

/// Values that render without the chart archive (no AWS clean-up), plus one dead value that
/// `fix-values` removes.
const VALUES: &str = "\
cni:
  iptablesRemoveAWSRules: false
# a value the chart has not had for years
externalIPs:
  enabled: true
operator:
  replicas: 1
";
const FIXED: &str = "\
cni:
  iptablesRemoveAWSRules: false
# a value the chart has not had for years
operator:
  replicas: 1
";
const FOLDER_NS: &[&str] = &["--namespace", "kube-system", "--kube-version", "1.35.0"];
const DEADLINE: Duration = Duration::from_secs(5);

struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

/// Runs the binary in `dir` with stdout and stderr to files (no pipe can fill up), killing it
/// past `DEADLINE`: a hang is a failure that names the command.
fn run_in(dir: &Path, args: &[&str], stdin: Stdio) -> Run {
    let out = tempfile(dir, "stdout");
    let err = tempfile(dir, "stderr");
    let mut child = Command::new(env!("CARGO_BIN_EXE_cilium-cmp"))
        .args(args)
        .current_dir(dir)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("CILIUM_CMP_CHART_DIR", charts::dir())
        .stdin(stdin)
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .expect("runs");
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > DEADLINE {
            child.kill().ok();
            child.wait().ok();
            panic!(
                "cilium-cmp {} did not end within {DEADLINE:?}",
                args.join(" ")
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let read = |p: &Path| {
        let text = std::fs::read_to_string(p).unwrap();
        std::fs::remove_file(p).unwrap();
        text
    };
    Run {
        code: status.code(),
        stdout: read(&out),
        stderr: read(&err),
    }
}

fn tempfile(dir: &Path, what: &str) -> PathBuf {
    std::env::temp_dir().join(format!(
        "cilium-cmp-untrusted-{}-{}-{what}",
        std::process::id(),
        dir.file_name().unwrap().to_string_lossy()
    ))
}

fn run(dir: &Path, args: &[&str]) -> Run {
    run_in(dir, args, Stdio::null())
}

/// Refused: exit 1, nothing on stdout, every needle in the message.
fn assert_refused(r: &Run, needles: &[&str]) {
    assert_eq!(r.code, Some(1), "exit status; stderr: {}", r.stderr);
    assert!(r.stdout.is_empty(), "nothing on stdout: {}", r.stdout);
    for n in needles {
        assert!(
            r.stderr.contains(n),
            "stderr should name {n:?}: {}",
            r.stderr
        );
    }
}

fn fix(dir: &Path, extra: &[&str]) -> Run {
    let mut args = vec!["fix-values", "--cilium-version", "1.20.0"];
    args.extend_from_slice(extra);
    run(dir, &args)
}

fn mode(p: &Path) -> u32 {
    std::fs::symlink_metadata(p).unwrap().mode() & 0o7777
}

fn chmod(p: &Path, bits: u32) {
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(bits)).unwrap();
}

fn is_link(p: &Path) -> bool {
    std::fs::symlink_metadata(p)
        .unwrap()
        .file_type()
        .is_symlink()
}

fn text(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap()
}

/// The names in `dir`: no temporary file may stay behind a refusal.
fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

fn mkfifo(p: &Path) {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(p.as_os_str().as_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0, "mkfifo");
}

/// Running as root, the test can give a file to another owner and see that it is kept.
fn is_root(s: &Scratch) -> bool {
    std::fs::metadata(&s.0).unwrap().uid() == 0
}

fn fix_values_keeps_a_secret_files_mode_and_owner() {
    let s = Scratch::new("fix-mode");
    let f = s.write("values.yaml", VALUES);
    chmod(&f, 0o600);
    let owner = if is_root(&s) {
        std::os::unix::fs::chown(&f, Some(4242), Some(4343)).unwrap();
        (4242, 4343)
    } else {
        let m = std::fs::metadata(&f).unwrap();
        (m.uid(), m.gid())
    };
    let r = fix(&s.0, &["values.yaml"]);
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    assert_eq!(text(&f), FIXED);
    assert_eq!(mode(&f), 0o600, "the 0600 mode is kept");
    let m = std::fs::metadata(&f).unwrap();
    assert_eq!((m.uid(), m.gid()), owner, "the owner is kept");
    assert_eq!(names(&s.0), ["values.yaml"]);
}

fn fix_values_refuses_a_read_only_file_and_force_keeps_it_read_only() {
    let s = Scratch::new("fix-ro");
    let f = s.write("values.yaml", VALUES);
    chmod(&f, 0o444);
    // Root may write any file; the mode still says the owner meant it not to change.
    let r = fix(&s.0, &["values.yaml"]);
    assert_refused(
        &r,
        &[
            "cannot write values.yaml",
            "read-only (mode 0444)",
            "--force",
        ],
    );
    assert_eq!(text(&f), VALUES);
    assert_eq!(names(&s.0), ["values.yaml"]);
    let r = fix(&s.0, &["--force", "values.yaml"]);
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    assert_eq!(text(&f), FIXED);
    assert_eq!(mode(&f), 0o444, "the new file is read-only too");
}

fn fix_values_refuses_a_hard_link_and_force_splits_it() {
    let s = Scratch::new("fix-hard");
    let f = s.write("values.yaml", VALUES);
    let other = s.0.join("shared.yaml");
    std::fs::hard_link(&f, &other).unwrap();
    let r = fix(&s.0, &["values.yaml"]);
    assert_refused(&r, &["cannot write values.yaml", "2 hard links", "--force"]);
    assert_eq!((text(&f), text(&other)), (VALUES.into(), VALUES.into()));
    assert_eq!(std::fs::metadata(&f).unwrap().nlink(), 2, "still one file");
    let r = fix(&s.0, &["--force", "values.yaml"]);
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    assert_eq!((text(&f), text(&other)), (FIXED.into(), VALUES.into()));
}

fn fix_values_refuses_a_link_out_of_the_folder_and_force_replaces_only_the_link() {
    let s = Scratch::new("fix-link");
    let outside = Scratch::new("fix-link-outside");
    let real = outside.write("values.yaml", VALUES);
    chmod(&real, 0o640);
    let link = s.0.join("values.yaml");
    symlink(&real, &link).unwrap();
    let r = fix(&s.0, &["values.yaml"]);
    assert_refused(
        &r,
        &[
            "cannot write values.yaml: it is a symbolic link to",
            real.to_str().unwrap(),
            "put a copy in place of the link",
            "name the file the link points to",
            "--force",
        ],
    );
    assert!(is_link(&link), "the link is still a link");
    assert_eq!(text(&real), VALUES, "the outside file is unchanged");
    assert_eq!(names(&s.0), ["values.yaml"]);
    // Forced: the link becomes a regular file with the fix (and the mode of the file it pointed
    // to); the file outside is never written.
    let r = fix(&s.0, &["--force", "values.yaml"]);
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    assert!(!is_link(&link));
    assert_eq!(text(&link), FIXED);
    assert_eq!(mode(&link), 0o640);
    assert_eq!(text(&real), VALUES, "the outside file is unchanged");
    assert_eq!(names(&outside.0), ["values.yaml"]);
}

fn fix_values_writes_no_file_when_one_of_several_is_refused() {
    let s = Scratch::new("fix-several");
    let first = s.write("a.yaml", VALUES);
    let second = s.write("b.yaml", "hubble:\n  enabeld: true\n");
    chmod(&second, 0o444);
    let r = fix(&s.0, &["a.yaml", "b.yaml"]);
    assert_refused(
        &r,
        &["cannot write b.yaml", "read-only", "no file was written"],
    );
    assert_eq!(
        text(&first),
        VALUES,
        "the writable file was not written either"
    );
    assert_eq!(names(&s.0), ["a.yaml", "b.yaml"]);
}

/// A repository with one application folder `apps/cilium` whose lock was written for replicas 1
/// and is stale now (replicas 2): `lock` has to write it. Returns the repository and the lock's
/// old text.
fn stale_lock_repo(tag: &str) -> (Scratch, String) {
    let s = Scratch::new(tag);
    s.write(
        "apps/cilium/cilium-cmp.yaml",
        "ciliumVersion: \"1.20.0\"\nvaluesFiles:\n  - values.yaml\n",
    );
    let values = s.write("apps/cilium/values.yaml", FIXED);
    let mut args = vec!["lock", "apps/cilium"];
    args.extend_from_slice(FOLDER_NS);
    let r = run(&s.0, &args);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    std::fs::write(&values, FIXED.replace("replicas: 1", "replicas: 2")).unwrap();
    let old = text(&s.0.join("apps/cilium/cilium-cmp.lock"));
    (s, old)
}

fn lock(repo: &Path, extra: &[&str]) -> Run {
    let mut args = vec!["lock", "apps/cilium"];
    args.extend_from_slice(FOLDER_NS);
    args.extend_from_slice(extra);
    run(repo, &args)
}

fn lock_keeps_its_mode_and_refuses_read_only_and_hard_linked_locks() {
    let (s, old) = stale_lock_repo("lock-mode");
    let path = s.0.join("apps/cilium/cilium-cmp.lock");
    chmod(&path, 0o600);
    let r = lock(&s.0, &[]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert_ne!(text(&path), old);
    assert_eq!(mode(&path), 0o600);

    let (s, old) = stale_lock_repo("lock-ro");
    let path = s.0.join("apps/cilium/cilium-cmp.lock");
    chmod(&path, 0o444);
    let r = lock(&s.0, &[]);
    assert_refused(
        &r,
        &[
            "cannot write apps/cilium/cilium-cmp.lock",
            "read-only",
            "--force",
        ],
    );
    assert_eq!(text(&path), old);
    assert_eq!(
        names(&s.0.join("apps/cilium")),
        ["cilium-cmp.lock", "cilium-cmp.yaml", "values.yaml"]
    );
    let r = lock(&s.0, &["--force"]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert_ne!(text(&path), old);
    assert_eq!(mode(&path), 0o444);

    let (s, old) = stale_lock_repo("lock-hard");
    let path = s.0.join("apps/cilium/cilium-cmp.lock");
    let other = s.0.join("other.lock");
    std::fs::hard_link(&path, &other).unwrap();
    assert_refused(&lock(&s.0, &[]), &["2 hard links", "--force"]);
    assert_eq!((text(&path), text(&other)), (old.clone(), old.clone()));
    assert_eq!(lock(&s.0, &["--force"]).code, Some(0));
    assert_ne!(text(&path), old);
    assert_eq!(text(&other), old, "the other name keeps the old lock");
}

fn lock_refuses_a_symbolic_link_and_force_replaces_only_the_link() {
    // A link inside the repository is read as the lock; writing through it is refused.
    let (s, old) = stale_lock_repo("lock-link");
    let path = s.0.join("apps/cilium/cilium-cmp.lock");
    let real = s.0.join("locks/cilium.lock");
    std::fs::create_dir_all(real.parent().unwrap()).unwrap();
    std::fs::rename(&path, &real).unwrap();
    symlink("../../locks/cilium.lock", &path).unwrap();
    assert_refused(
        &lock(&s.0, &[]),
        &["symbolic link to ../../locks/cilium.lock", "--force"],
    );
    assert!(is_link(&path));
    assert_eq!(text(&real), old);
    let r = lock(&s.0, &["--force"]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(!is_link(&path));
    assert_ne!(text(&path), old);
    assert_eq!(
        text(&real),
        old,
        "the file the link pointed to is unchanged"
    );

    // A link a pull request planted towards a file outside the repository: refused, with or
    // without --force, and the outside file is never written.
    let (s, _) = stale_lock_repo("lock-outside");
    let outside = Scratch::new("lock-outside-victim");
    let victim = outside.write("authorized_keys", "ssh-ed25519 AAAA me\n");
    let path = s.0.join("apps/cilium/cilium-cmp.lock");
    std::fs::remove_file(&path).unwrap();
    symlink(&victim, &path).unwrap();
    for extra in [&[][..], &["--force"][..]] {
        assert_refused(&lock(&s.0, extra), &["cilium-cmp.lock", "symbolic link"]);
        assert!(is_link(&path));
        assert_eq!(text(&victim), "ssh-ed25519 AAAA me\n");
    }
}

fn render_to(dir: &Path, extra: &[&str]) -> Run {
    let mut args = vec![
        "render",
        "--cilium-version",
        "1.20.0",
        "-f",
        "values.yaml",
        "-o",
        "out.yaml",
    ];
    args.extend_from_slice(extra);
    run(dir, &args)
}

fn an_output_file_keeps_its_mode_and_refuses_links_and_read_only_files() {
    let s = Scratch::new("output");
    s.write("values.yaml", FIXED);
    let out = s.write("out.yaml", "old");
    chmod(&out, 0o600);
    let r = render_to(&s.0, &[]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(r.stdout.is_empty());
    assert!(text(&out).contains("kind: DaemonSet"));
    assert_eq!(mode(&out), 0o600);
    let rendered = text(&out);

    chmod(&out, 0o444);
    std::fs::write(&out, "old").unwrap();
    assert_refused(
        &render_to(&s.0, &[]),
        &["cannot write out.yaml", "read-only", "--force"],
    );
    assert_eq!(text(&out), "old");
    assert_eq!(render_to(&s.0, &["--force"]).code, Some(0));
    assert_eq!((text(&out), mode(&out)), (rendered.clone(), 0o444));

    std::fs::remove_file(&out).unwrap();
    let other = s.write("other.yaml", "old");
    std::fs::hard_link(&other, &out).unwrap();
    assert_refused(&render_to(&s.0, &[]), &["2 hard links"]);
    assert_eq!((text(&out), text(&other)), ("old".into(), "old".into()));
    assert_eq!(render_to(&s.0, &["--force"]).code, Some(0));
    assert_eq!((text(&out), text(&other)), (rendered.clone(), "old".into()));

    std::fs::remove_file(&out).unwrap();
    let outside = Scratch::new("output-outside");
    let victim = outside.write("victim", "theirs");
    symlink(&victim, &out).unwrap();
    assert_refused(
        &render_to(&s.0, &[]),
        &["cannot write out.yaml: it is a symbolic link to", "--force"],
    );
    assert!(is_link(&out));
    assert_eq!(text(&victim), "theirs");
    assert_eq!(render_to(&s.0, &["--force"]).code, Some(0));
    assert!(!is_link(&out));
    assert_eq!(text(&out), rendered);
    assert_eq!(text(&victim), "theirs", "the outside file is never written");
    assert_eq!(names(&s.0), ["other.yaml", "out.yaml", "values.yaml"]);
}

fn force_is_refused_where_nothing_is_written() {
    let s = Scratch::new("force-flags");
    s.write("values.yaml", FIXED);
    for args in [
        &["render", "--cilium-version", "1.20.0", "--force"][..],
        &["lock", "--check", "--force", "apps/cilium"][..],
        &[
            "fix-values",
            "--cilium-version",
            "1.20.0",
            "--dry-run",
            "--force",
            "values.yaml",
        ][..],
    ] {
        let r = run(&s.0, args);
        assert_eq!(r.code, Some(64), "a usage error (EX_USAGE): {}", r.stderr);
        assert!(
            r.stdout.is_empty() && r.stderr.contains("--force"),
            "{}",
            r.stderr
        );
    }
}

fn a_fifo_as_any_input_is_refused_within_seconds() {
    let s = Scratch::new("fifo");
    s.write("values.yaml", FIXED);
    s.write(
        "apps/cilium/cilium-cmp.yaml",
        "ciliumVersion: \"1.20.0\"\nvaluesFiles:\n  - values.yaml\n",
    );
    s.write("apps/cilium/values.yaml", FIXED);
    s.write("apps/fifo-settings/values.yaml", FIXED);
    mkfifo(&s.0.join("apps/fifo-settings/cilium-cmp.yaml"));
    s.write(
        "apps/fifo-lock/cilium-cmp.yaml",
        "ciliumVersion: \"1.20.0\"\nvaluesFiles:\n  - values.yaml\n",
    );
    s.write("apps/fifo-lock/values.yaml", FIXED);
    mkfifo(&s.0.join("apps/fifo-lock/cilium-cmp.lock"));
    s.write(
        "apps/fifo-values/cilium-cmp.yaml",
        "ciliumVersion: \"1.20.0\"\nvaluesFiles:\n  - values.yaml\n",
    );
    mkfifo(&s.0.join("apps/fifo-values/values.yaml"));
    mkfifo(&s.0.join("fifo"));
    let render = |extra: &[&'static str]| {
        let mut v = vec!["render", "--cilium-version", "1.20.0"];
        v.extend_from_slice(extra);
        v
    };
    let folder = |cmd: &'static str, dir: &'static str| {
        let mut v = vec![cmd, dir];
        v.extend_from_slice(FOLDER_NS);
        v
    };
    let cases: Vec<(&str, Vec<&str>)> = vec![
        ("a values file", render(&["-f", "fifo"])),
        (
            "--set-file",
            render(&["-f", "values.yaml", "--set-file", "extraConfig.x=fifo"]),
        ),
        (
            "--chart-archive",
            render(&["-f", "values.yaml", "--chart-archive", "fifo"]),
        ),
        (
            "a live dump",
            vec![
                "adopt-check",
                "--cilium-version",
                "1.20.0",
                "-f",
                "values.yaml",
                "--live",
                "fifo",
            ],
        ),
        (
            "cilium-cmp.yaml",
            folder("render-folder", "apps/fifo-settings"),
        ),
        (
            "the lock (render-folder)",
            folder("render-folder", "apps/fifo-lock"),
        ),
        ("the lock (lock --check)", {
            let mut v = folder("lock", "apps/fifo-lock");
            v.push("--check");
            v
        }),
        ("a folder's values file", folder("lock", "apps/fifo-values")),
        ("--argocd-cm", {
            let mut v = folder("render-folder", "apps/cilium");
            v.extend(["--argocd-cm", "fifo"]);
            v
        }),
        (
            "fix-values",
            vec!["fix-values", "--cilium-version", "1.20.0", "fifo"],
        ),
        (
            "import-application",
            vec![
                "import-application",
                "fifo",
                "--to",
                "apps/new",
                "--repo-url",
                "https://git.example.com/x.git",
            ],
        ),
        ("verify", vec!["verify", "fifo"]),
    ];
    for (what, args) in cases {
        let r = run(&s.0, &args);
        assert_eq!(r.code, Some(1), "{what}: {}", r.stderr);
        assert!(r.stdout.is_empty(), "{what}: nothing on stdout");
        // A folder's values file meets the folder's own check first (argocd::folder), which
        // words it its way; every other input goes through limits::open_regular.
        let needle = if what == "a folder's values file" {
            "values.yaml is not a file"
        } else {
            "not a regular file (a FIFO"
        };
        assert!(r.stderr.contains(needle), "{what}: {}", r.stderr);
    }
}

fn standard_input_that_is_a_directory_is_refused_and_a_pipe_is_read() {
    let s = Scratch::new("stdin");
    let dir = std::fs::File::open(&s.0).unwrap();
    let r = run_in(
        &s.0,
        &["render", "--cilium-version", "1.20.0", "-f", "-"],
        Stdio::from(dir),
    );
    assert_refused(&r, &["<stdin>: is a directory"]);
    // A pipe is what `-` is for: the values arrive and render.
    let mut child = Command::new(env!("CARGO_BIN_EXE_cilium-cmp"))
        .env("CILIUM_CMP_CHART_DIR", charts::dir())
        .args(["render", "--cilium-version", "1.20.0", "-f", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(FIXED.as_bytes())
            .unwrap();
    }
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("kind: DaemonSet"));
}

fn import_application_refuses_a_dangling_link_where_it_would_write_and_keeps_it() {
    let s = Scratch::new("import-link");
    s.write("app.yaml", "kind: Application\n");
    std::fs::create_dir_all(s.0.join("apps/new")).unwrap();
    let link = s.0.join("apps/new/values.yaml");
    let outside = Scratch::new("import-link-outside");
    symlink(outside.0.join("planted.yaml"), &link).unwrap();
    let r = run(
        &s.0,
        &[
            "import-application",
            "app.yaml",
            "--to",
            "apps/new",
            "--repo-url",
            "https://git.example.com/x.git",
        ],
    );
    assert_refused(&r, &["apps/new/values.yaml exists already"]);
    assert!(is_link(&link), "the link is left as it was");
    assert_eq!(
        names(&outside.0),
        Vec::<String>::new(),
        "nothing written outside"
    );
}
