//! What a test reads of a finished command: its standard error, and whether it refused.

use std::ffi::OsStr;
use std::process::{Command, Output};

use super::charts;
use super::scratch::Scratch;

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The command failed with nothing on standard output, and its error names every part of
/// `expect`.
pub fn assert_refused(o: &Output, expect: &[&str]) {
    let e = stderr(o);
    assert!(!o.status.success(), "must fail: {e}");
    assert!(o.stdout.is_empty(), "stdout must stay empty: {e}");
    assert!(e.starts_with("error: "), "{e}");
    for part in expect {
        assert!(e.contains(part), "{e:?} lacks {part:?}");
    }
}

/// Runs the binary in `dir` with `args` and `env` once per `--error-format`, human then JSON:
/// each run must fail with status 1 and print nothing on stdout. Returns the two standard
/// errors as `redacted` shows them, for snapshots.
pub fn both_forms<V: AsRef<OsStr>>(
    dir: &Scratch,
    args: &[&str],
    env: &[(&str, V)],
) -> (String, String) {
    let run = |format: &str| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_cilium-cmp"));
        charts::give(&mut c);
        c.current_dir(&dir.0)
            .args(args)
            .args(["--error-format", format])
            .env("NO_COLOR", "1");
        for (k, v) in env {
            c.env(k, v);
        }
        let o = c.output().unwrap();
        let err = String::from_utf8(o.stderr).unwrap();
        assert_eq!(o.status.code(), Some(1), "{err}");
        assert!(o.stdout.is_empty(), "stdout on error: {err}");
        redacted(dir, &err)
    };
    (run("human"), run("json"))
}

/// `text` without what differs between runs: the scratch folder's path (as given and as the
/// system resolves it), and content hashes (`sha256:` and 64 hex digits), which change with
/// every chart or render change.
pub fn redacted(dir: &Scratch, text: &str) -> String {
    let mut out = text.replace(&dir.0.display().to_string(), "[scratch]");
    if let Ok(real) = dir.0.canonicalize() {
        out = out.replace(&real.display().to_string(), "[scratch]");
    }
    let mut shown = String::new();
    let mut rest = out.as_str();
    while let Some(i) = rest.find("sha256:") {
        let (before, after) = rest.split_at(i + "sha256:".len());
        shown.push_str(before);
        let hex = after.bytes().take_while(u8::is_ascii_hexdigit).count();
        if hex == 64 {
            shown.push_str("[hash]");
            rest = &after[64..];
        } else {
            rest = after;
        }
    }
    shown.push_str(rest);
    shown
}
