//! The binary's front end since `main` became a dispatcher: every command returns its status
//! instead of calling `std::process::exit`, so the destructors that remove temporary folders run
//! on every path (a result status, a failure midway); and nothing it writes to stderr panics
//! when stderr is closed or its reader has gone.

use std::os::fd::{FromRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::support::git::git;
use crate::support::harness;
use crate::support::scratch;
use scratch::Scratch;

pub fn tests() -> Vec<harness::Trial> {
    harness::group(
        file!(),
        vec![
            harness::test(
                "diff_base_leaves_no_temporary_folder_on_any_path",
                diff_base_leaves_no_temporary_folder_on_any_path,
            )
            .shared("charts"),
            harness::test("a_closed_stderr_is_no_panic", a_closed_stderr_is_no_panic),
            harness::test(
                "a_stderr_whose_reader_went_away_is_no_panic",
                a_stderr_whose_reader_went_away_is_no_panic,
            )
            .shared("charts"),
            harness::test(
                "a_bad_release_is_bad_input_in_every_command_that_takes_one",
                a_bad_release_is_bad_input_in_every_command_that_takes_one,
            ),
        ],
    )
}

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_cilium-cmp"));
    c.env_remove("CILIUM_CMP_CHART_DIR")
        .env("HOME", "/nonexistent")
        .env("CILIUM_CMP_OFFLINE", "1");
    c
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The shipped Argo CD example as a one-commit git repository.
fn example_repo() -> Scratch {
    let s = Scratch::new("thin-main-repo");
    for f in [
        "cilium/cilium-cmp.yaml",
        "cilium/values.yaml",
        "common/values.yaml",
    ] {
        let text = std::fs::read_to_string(root().join("examples/argocd").join(f)).unwrap();
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

/// What is left in a folder (names), sorted.
fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// `diff --base` checks the base revision out into private temporary folders; they must be gone
/// when the command ends, whether it ends with a result status (2: changes) or fails midway,
/// after the base side rendered and before the work tree's did.
fn diff_base_leaves_no_temporary_folder_on_any_path() {
    let repo = example_repo();
    let values = repo.0.join("cilium/values.yaml");
    let original = std::fs::read_to_string(&values).unwrap();
    let run = |args: &[&str]| -> (Option<i32>, Vec<String>, String) {
        // A temporary folder of its own, so what is left is this run's alone.
        let tmp = Scratch::new("thin-main-tmp");
        let o = bin()
            .current_dir(&repo.0)
            .env("TMPDIR", &tmp.0)
            .env("CILIUM_CMP_CHART_DIR", harness::shared("charts"))
            .arg("diff")
            .args(args)
            .output()
            .unwrap();
        (
            o.status.code(),
            entries(&tmp.0),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };

    // A change: the status is diff's result, 2 or 3, no longer set by exiting on the spot.
    std::fs::write(&values, original.replace("replicas: 1", "replicas: 3")).unwrap();
    assert_ne!(std::fs::read_to_string(&values).unwrap(), original);
    let (code, left, err) = run(&["cilium", "--base", "HEAD"]);
    assert!(matches!(code, Some(2 | 3)), "{code:?}: {err}");
    assert!(left.is_empty(), "left behind after a diff: {left:?}");
    // Every folder of the repository: the same.
    let (code, left, err) = run(&["--base", "HEAD"]);
    assert!(matches!(code, Some(2 | 3)), "{code:?}: {err}");
    assert!(
        left.is_empty(),
        "left behind after a repository diff: {left:?}"
    );

    // The work tree's values are refused (a key the chart does not know), after the base's
    // render was made in the temporary folders.
    std::fs::write(&values, format!("{original}\nnoSuchKeyAnywhere: 1\n")).unwrap();
    let (code, left, err) = run(&["cilium", "--base", "HEAD"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("noSuchKeyAnywhere"), "{err}");
    assert!(left.is_empty(), "left behind after a failure: {left:?}");
}

/// Commands that write to stderr, on success and on failure, each with the status it must keep.
fn stderr_writers() -> Vec<(Vec<&'static str>, i32)> {
    vec![
        // The error line `main` prints.
        (vec!["render", "--cilium-version", "1.2.3"], 1),
        (vec!["verify", "/nonexistent/render.yaml"], 1),
        // A usage error, printed by clap.
        (vec!["render", "--no-such-flag"], 64),
    ]
}

fn assert_no_panic(o: &Output, args: &[&str], code: i32) {
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains("panicked"), "{args:?}: {err}");
    assert_eq!(o.status.code(), Some(code), "{args:?}: {err}");
}

/// `2>&-`: the program starts with no file descriptor 2 at all.
fn a_closed_stderr_is_no_panic() {
    for (args, code) in stderr_writers() {
        let o = Command::new("sh")
            .arg("-c")
            .arg("exec \"$0\" \"$@\" 2>&-")
            .arg(env!("CARGO_BIN_EXE_cilium-cmp"))
            .args(&args)
            .env_remove("CILIUM_CMP_CHART_DIR")
            .env("CILIUM_CMP_OFFLINE", "1")
            .output()
            .unwrap();
        assert_no_panic(&o, &args, code);
    }
}

/// stderr a pipe whose reader has closed its end: every write fails with EPIPE (SIGPIPE is
/// ignored by Rust programs), where `eprintln!` panics.
fn a_stderr_whose_reader_went_away_is_no_panic() {
    let s = Scratch::new("thin-main-epipe");
    // Lines for people on stderr besides errors: fix-values' report of what it would remove
    // (status 2: a change) and render-folder's summary of the render against the lock (0).
    let values = s.write(
        "values.yaml",
        "cni:\n  iptablesRemoveAWSRules: false\nnoSuchKeyAnywhere: 1\n",
    );
    let app = root().join("examples/talos");
    let mut cases = stderr_writers();
    let values = values.to_str().unwrap().to_string();
    let values: &'static str = Box::leak(values.into_boxed_str());
    cases.push((
        vec![
            "fix-values",
            "--cilium-version",
            "1.20.0",
            "--dry-run",
            values,
        ],
        2,
    ));
    let app: &'static str = Box::leak(app.to_str().unwrap().to_string().into_boxed_str());
    cases.push((vec!["render-folder", app], 0));
    for (args, code) in cases {
        let (read, write) = pipe();
        drop(read);
        let o = bin()
            .env("CILIUM_CMP_CHART_DIR", harness::shared("charts"))
            .args(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::from(write))
            .output()
            .unwrap();
        // stderr is not captured here: a panic shows as status 101.
        assert_eq!(o.status.code(), Some(code), "{args:?}");
    }
}

/// A pipe's two ends.
fn pipe() -> (OwnedFd, OwnedFd) {
    let mut fds = [0; 2];
    // SAFETY: pipe(2) fills both descriptors on success; each is owned once, by one OwnedFd.
    let r = unsafe { libc::pipe(fds.as_mut_ptr()) };
    assert_eq!(r, 0, "pipe(2)");
    unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) }
}

/// `--cilium-version` is read once by the command line's parser, and a bad one is still bad
/// input (status 1, as the exit-status table says), with the releases there are, in every
/// command that takes it; never a usage error (64), and nothing on stdout.
fn a_bad_release_is_bad_input_in_every_command_that_takes_one() {
    let s = Scratch::new("thin-main-release");
    s.write("values.yaml", "cni: {}\n");
    let commands: [&[&str]; 6] = [
        &["render"],
        &["schema"],
        &["fix-values", "values.yaml"],
        &["diff"],
        &["fleet-check"],
        &["render-folder", "app"],
    ];
    for cmd in commands {
        let o = bin()
            .current_dir(&s.0)
            .args(cmd)
            .args(["--cilium-version", "1.20"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{cmd:?}: {err}");
        assert!(o.stdout.is_empty(), "{cmd:?}");
        assert!(err.contains("did you mean 1.20.0?"), "{cmd:?}: {err}");
        assert!(err.contains("1.19.6"), "{cmd:?}: {err}");
    }
}
