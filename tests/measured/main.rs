//! The tests that measure the peak memory of the binary they run (`support/child.rs`, from
//! `wait4`), in a test binary of their own. Linux charges a child the peak resident set of the
//! process it was spawned from until its exec (fs/exec.c, `exec_mmap` keeps the old memory's
//! high-water mark in the child's `maxrss`), so a child of the one integration binary, which
//! holds chart archives and Helm's references, would report hundreds of MB it never used. These
//! modules live with the others in `tests/it/` (same harness, same names) and run from here,
//! a process small enough that a child's peak is its own.

#[path = "../it/support/mod.rs"]
#[allow(dead_code)] // these modules use part of the support
mod support;

#[path = "../it/hostile.rs"]
mod hostile;
#[path = "../it/untrusted_repo.rs"]
mod untrusted_repo;
#[path = "../it/untrusted_size.rs"]
mod untrusted_size;

use std::process::ExitCode;

use libtest_mimic::Arguments;

/// A module's `tests()`: its tests, named `module::name`.
type Module = fn() -> Vec<libtest_mimic::Trial>;

/// The modules of `tests/it/` that run here; `tests/it/main.rs` lists them as measured.
const MODULES: &[(&str, Module)] = &[
    ("hostile", hostile::tests),
    ("untrusted_repo", untrusted_repo::tests),
    ("untrusted_size", untrusted_size::tests),
];

fn main() -> ExitCode {
    let args = Arguments::from_args();
    let trials = MODULES.iter().flat_map(|(_, tests)| tests()).collect();
    libtest_mimic::run(&args, trials).exit_code()
}
