//! A child process run to its end with what it cost: exit code or signal, output, wall time and
//! peak resident set. The same measurement as every test of hostile input makes (one copy, for
//! `hostile`, `untrusted_repo` and `untrusted_size`).
//!
//! Linux starts a child's peak resident set at its parent's: fork copies the high-water mark
//! with the memory, and exec folds the old memory's mark into the process's `maxrss`
//! (fs/exec.c, `exec_mmap`; posix_spawn's vfork hands over the parent's own memory). A child of
//! this test binary, which holds chart archives and Helm's references, would report hundreds of
//! MB it never used. So the measured command is started by a spawner: this binary executed
//! afresh, which `main` turns into [`spawner`] before building any test list. Its resident set
//! is a few MB, so the command it starts is charged its own peak; the spawner reaps it with
//! `wait4` and writes the status and peak to a report file this process reads.

use std::ffi::OsString;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

/// Set to the report file's path, the variable that makes this binary a spawner.
pub const SPAWNER: &str = "CILIUM_CMP_IT_SPAWNER_REPORT";

pub struct Outcome {
    /// The exit code; None when a signal ended the child.
    pub code: Option<i32>,
    /// The signal that ended the child.
    pub signal: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    pub elapsed: Duration,
    pub peak_kib: i64,
}

impl Outcome {
    pub fn peak_mb(&self) -> i64 {
        self.peak_kib / 1024
    }
}

fn this_binary() -> PathBuf {
    std::env::current_exe().expect("the test binary's path")
}

/// A command running `program`, to be configured as usual (arguments, environment, folder) and
/// handed to [`run`]. Its environment and folder are the spawner's, which passes them on.
pub fn command(program: impl AsRef<Path>) -> Command {
    let mut c = Command::new(this_binary());
    c.arg(program.as_ref());
    c
}

/// Runs a [`command`] to its end, its output piped.
pub fn run(mut cmd: Command) -> Outcome {
    assert_eq!(
        Path::new(cmd.get_program()),
        this_binary(),
        "a measured command is made by child::command"
    );
    let report = tempfile::NamedTempFile::new().expect("a report file");
    // Set last, so that an `env_clear` of the caller's keeps it.
    cmd.env(SPAWNER, report.path());
    let started = Instant::now();
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the spawner starts");
    let mut out = child.stdout.take().expect("stdout piped");
    let mut err = child.stderr.take().expect("stderr piped");
    let reader = std::thread::spawn(move || {
        let mut s = Vec::new();
        err.read_to_end(&mut s).ok();
        s
    });
    let mut stdout = Vec::new();
    out.read_to_end(&mut stdout).ok();
    let stderr = reader.join().unwrap();
    let spawner = child.wait().expect("the spawner is reaped");
    let elapsed = started.elapsed();
    let stderr = String::from_utf8_lossy(&stderr).into_owned();
    let text = std::fs::read_to_string(report.path()).unwrap_or_default();
    let (status, peak_kib) = parse_report(&text)
        .unwrap_or_else(|| panic!("the spawner ({spawner}) reported {text:?}; stderr: {stderr}"));
    Outcome {
        code: libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status)),
        signal: libc::WIFSIGNALED(status).then(|| libc::WTERMSIG(status)),
        stdout: String::from_utf8_lossy(&stdout).into_owned(),
        stderr,
        elapsed,
        peak_kib,
    }
}

/// `status STATUS peak PEAK_KIB`, as the spawner writes it once its command has ended.
fn parse_report(text: &str) -> Option<(i32, i64)> {
    let mut words = text.split_whitespace();
    let (Some("status"), Some(status), Some("peak"), Some(peak), None) = (
        words.next(),
        words.next(),
        words.next(),
        words.next(),
        words.next(),
    ) else {
        return None;
    };
    Some((status.parse().ok()?, peak.parse().ok()?))
}

/// The spawner's whole life, `main`'s when [`SPAWNER`] names a report file: runs its arguments
/// as a command with its own standard streams, environment and folder, and exits as it did.
// The child is reaped by wait4, which std's `wait` cannot see: std's does not report rusage.
#[allow(clippy::zombie_processes)]
pub fn spawner(report: OsString) -> ExitCode {
    let mut args = std::env::args_os().skip(1);
    let Some(program) = args.next() else {
        eprintln!("spawner: no command to run");
        return ExitCode::from(127);
    };
    let child = match Command::new(&program)
        .args(args)
        .env_remove(SPAWNER)
        .spawn()
    {
        Ok(child) => child,
        Err(e) => {
            eprintln!("spawner: {}: {e}", Path::new(&program).display());
            return ExitCode::from(127);
        }
    };
    let mut status = 0;
    // SAFETY: all-zero is a valid rusage (integers only).
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = child.id() as libc::pid_t;
    // SAFETY: waits for our own child, whose pid we hold, with valid out-pointers.
    let reaped = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    if reaped != pid {
        eprintln!("spawner: wait4: {}", std::io::Error::last_os_error());
        return ExitCode::from(127);
    }
    let line = format!("status {status} peak {}\n", usage.ru_maxrss);
    if let Err(e) = std::fs::write(&report, line) {
        eprintln!("spawner: {}: {e}", Path::new(&report).display());
        return ExitCode::from(127);
    }
    if libc::WIFEXITED(status) {
        return ExitCode::from(libc::WEXITSTATUS(status) as u8);
    }
    // Ended by a signal: end by the same one, so the spawner's own status reads like the child's.
    let signal = libc::WTERMSIG(status);
    // SAFETY: restores the default action and raises the signal on this process only.
    unsafe {
        libc::signal(signal, libc::SIG_DFL);
        libc::raise(signal);
    }
    ExitCode::from(128 + signal as u8)
}
