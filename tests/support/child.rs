//! Runs the binary as a child and reads what it cost: wall time and peak resident set, the
//! latter from `wait4`'s `rusage` (the approach of `tests/hostile.rs`), for tests that bound
//! what hostile input may cost.

#![allow(dead_code)] // each test binary uses part of this module

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

pub struct Outcome {
    pub code: i32,
    pub stdout: Vec<u8>,
    pub stderr: String,
    pub elapsed: Duration,
    pub peak_kib: i64,
}

impl Outcome {
    pub fn peak_mb(&self) -> i64 {
        self.peak_kib / 1024
    }
}

/// Runs `cmd` to its end, stdout and stderr read in full, and reaps it with `wait4`.
// The child is reaped by wait4 below, which std's `wait` cannot see.
#[allow(clippy::zombie_processes)]
pub fn run(mut cmd: Command) -> Outcome {
    let started = Instant::now();
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    let mut out = child.stdout.take().expect("piped stdout");
    let mut err = child.stderr.take().expect("piped stderr");
    let reader = std::thread::spawn(move || {
        let mut s = Vec::new();
        err.read_to_end(&mut s).ok();
        String::from_utf8_lossy(&s).into_owned()
    });
    let mut stdout = Vec::new();
    out.read_to_end(&mut stdout).expect("stdout is read");
    let stderr = reader.join().expect("stderr is read");
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value of that plain C struct.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = child.id() as libc::pid_t;
    // SAFETY: waits for our own child, whose pid we hold, with valid out-pointers.
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(r, pid, "wait4 reaps the child");
    Outcome {
        code: if libc::WIFEXITED(status) {
            libc::WEXITSTATUS(status)
        } else {
            -1
        },
        stdout,
        stderr,
        elapsed: started.elapsed(),
        peak_kib: usage.ru_maxrss,
    }
}
