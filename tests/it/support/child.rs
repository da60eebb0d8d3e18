//! A child process run to its end with what it cost: exit code or signal, output, wall time and
//! peak resident set (from `wait4`, which std's `wait` does not report). The same measurement as
//! every test of hostile input makes (one copy, for `hostile`, `untrusted_repo` and `untrusted_size`).

use std::io::Read;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

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

/// Runs `cmd` to its end, its output piped.
pub fn run(mut cmd: Command) -> Outcome {
    let started = Instant::now();
    let child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the command starts");
    finish(child, started)
}

/// Reads a started child's piped output and reaps it with `wait4`.
// The child is reaped by wait4 below, which std's `wait` cannot see.
#[allow(clippy::zombie_processes)]
pub fn finish(mut child: Child, started: Instant) -> Outcome {
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
    let mut status = 0;
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = child.id() as libc::pid_t;
    // SAFETY: waits for our own child, whose pid we hold, with valid out-pointers.
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(r, pid);
    Outcome {
        code: libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status)),
        signal: libc::WIFSIGNALED(status).then(|| libc::WTERMSIG(status)),
        stdout: String::from_utf8_lossy(&stdout).into_owned(),
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
        elapsed: started.elapsed(),
        peak_kib: usage.ru_maxrss,
    }
}
