//! One harness for every test file whose tests need `../shared` (references, charts, the Argo CD
//! emulator) or the tests' Python: such a test runs, or is reported as *ignored* with its reason,
//! or — under CI (any non-empty `CI`, e.g. `CI=1` or `CI=true`) — fails. Never does a test that
//! could not run show as passed.
//!
//! Rust's own test harness cannot mark a test ignored once it has started, so the one test binary
//! (`tests/it/main.rs`, `harness = false` in Cargo.toml) runs under libtest-mimic's, and a test
//! names what it needs where it is registered; the harness checks that before running it. The
//! pattern, for a test module `tests/it/x.rs`:
//!
//! ```text
//! // tests/it/main.rs
//! mod x;
//! // ... and `x::tests` in MODULES
//!
//! // tests/it/x.rs
//! use crate::support::harness;
//!
//! pub fn tests() -> Vec<harness::Trial> {
//!     harness::group(file!(), vec![
//!         harness::test("plain", plain),
//!         harness::test("with_helm", with_helm)
//!             .shared("tools/helm_ref.py")
//!             .python(),
//!     ])
//! }
//!
//! fn plain() { assert_eq!(1 + 1, 2) }
//!
//! fn with_helm() {
//!     let tools = harness::shared("tools/helm_ref.py"); // a PathBuf; present, or not run
//!     let python = harness::python();                    // the venv's python
//!     // ...
//! }
//! ```
//!
//! Every name is prefixed with its module (`x::plain`), so `cargo test --test it -- x::` runs one
//! file's tests and `cargo test --test it -- --exact x::plain` one test.
//!
//! A test is a plain `fn name()` that panics to fail, exactly like a `#[test]` body; only the
//! `#[test]` attribute goes and a line in `tests()`'s list comes. A `#[test]` left in such a file
//! (e.g. one merged in from a branch written before the file moved to this harness) would never
//! run: the harness reads its own file and fails a test named `x::every_test_is_registered` until
//! the function is listed. `harness::shared` and `harness::python` called without the matching
//! declaration panic (a failure, never a pass).

use super::python as venv;

use libtest_mimic::Arguments;
pub use libtest_mimic::Trial;
use std::path::{Path, PathBuf};

/// Whether this run is CI's: any non-empty `CI` (`CI=1`, `CI=true`, ...).
pub fn in_ci() -> bool {
    std::env::var_os("CI").is_some_and(|v| !v.is_empty())
}

/// One test and what it needs to run.
pub struct Test {
    name: String,
    body: fn(),
    shared: Vec<&'static str>,
    python: bool,
    /// Other needs: each says why the test cannot run here, or None.
    needs: Vec<fn() -> Option<String>>,
}

/// Registers `body` under `name` (use the function's own name, so `cargo test --test it -- x::NAME`
/// finds it as it did under Rust's harness).
pub fn test(name: &str, body: fn()) -> Test {
    Test {
        name: name.to_string(),
        body,
        shared: Vec::new(),
        python: false,
        needs: Vec::new(),
    }
}

impl Test {
    /// The test reads `../shared/REL` (a file or a folder).
    pub fn shared(mut self, rel: &'static str) -> Test {
        self.shared.push(rel);
        self
    }

    /// The test runs the tests' Python (tests/setup-python.sh).
    pub fn python(mut self) -> Test {
        self.python = true;
        self
    }

    /// The test needs what `why_not` checks (None: present; else why it is absent), e.g. a
    /// behaviour of the library that lands from another branch. Reported and failed in CI like
    /// any other unmet need, never passed.
    pub fn needs(mut self, why_not: fn() -> Option<String>) -> Test {
        self.needs.push(why_not);
        self
    }

    /// Why the test cannot run here, if it cannot.
    fn missing(&self) -> Option<String> {
        if let Some(why) = self.needs.iter().find_map(|f| f()) {
            return Some(why);
        }
        for rel in &self.shared {
            if !shared_path(rel).exists() {
                return Some(format!(
                    "needs ../shared/{rel}, absent here (a checkout without ../shared; CI has it)"
                ));
            }
        }
        if self.python {
            if let Err(why) = venv::python() {
                return Some(format!("needs the tests' Python: {why}"));
            }
        }
        None
    }
}

fn shared_path(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared")
        .join(rel)
}

/// `../shared/REL`, for a test registered with `.shared(REL)` (or a longer path below it).
pub fn shared(rel: &str) -> PathBuf {
    let p = shared_path(rel);
    assert!(
        p.exists(),
        "{} is absent: register the test with .shared(\"{rel}\") so the harness checks it first",
        p.display()
    );
    p
}

/// The tests' Python, for a test registered with `.python()`.
pub fn python() -> &'static Path {
    venv::python().unwrap_or_else(|why| {
        panic!("{why} (register the test with .python() so the harness checks it first)")
    })
}

/// The module a test file is (its file name without `.rs`), which prefixes its tests' names.
pub fn module_of(source: &str) -> &str {
    Path::new(source)
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or(source)
}

/// `name` as the one test binary lists it: `module::name`, the module being the file `source`
/// (pass `file!()`), so that names stay unique across files and one file's tests run alone.
pub fn named(source: &str, name: &str) -> String {
    format!("{}::{name}", module_of(source))
}

/// Whether this run leaves the test `name` (as `named` gives it) out: `--list`, or a filter.
/// Expensive setup (Helm references, repacked archives) is made only for the tests a run selects.
pub fn filtered_out(args: &Arguments, name: &str) -> bool {
    args.list || args.is_filtered_out(&Trial::test(name, || Ok(())))
}

/// The tests of the file `source` (pass `file!()`), each named `module::name`, with a test of
/// the registration itself; a test whose needs are unmet here is ignored with the reason (failed
/// under CI).
pub fn group(source: &str, tests: Vec<Test>) -> Vec<Trial> {
    let args = Arguments::from_args();
    let mut trials = vec![registration_check(source, &tests)];
    let mut unmet = Vec::new();
    for t in tests {
        let name = named(source, &t.name);
        // Needs are checked only for the tests this run selects (setting up Python is slow).
        let why = if filtered_out(&args, &name) {
            None
        } else {
            t.missing()
        };
        let body = t.body;
        trials.push(match why {
            None => Trial::test(name, move || {
                body();
                Ok(())
            }),
            Some(why) => {
                unmet.push(format!("{name}: {why}"));
                let ignored = !in_ci();
                Trial::test(name, move || Err(format!("cannot run: {why}").into()))
                    .with_ignored_flag(ignored)
            }
        });
    }
    for line in &unmet {
        // Straight to stderr, past any capture: a person running `cargo test` sees every test
        // that did not run, and why.
        let outcome = if in_ci() { "FAILS (CI)" } else { "IGNORED" };
        eprintln!("!!! {outcome} {line}");
    }
    trials
}

/// A test that fails while the file holds a `#[test]` function, which this harness would never
/// run, or lists a name twice.
fn registration_check(source: &str, tests: &[Test]) -> Trial {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join(source);
    let text = std::fs::read_to_string(&file);
    let mut names: Vec<String> = tests.iter().map(|t| t.name.clone()).collect();
    names.sort();
    let twice: Vec<String> = names
        .windows(2)
        .filter(|w| w[0] == w[1])
        .map(|w| w[0].clone())
        .collect();
    Trial::test(named(source, "every_test_is_registered"), move || {
        let text = text.map_err(|e| format!("{}: {e}", file.display()))?;
        let attribute = concat!("#[", "test]");
        let stray: Vec<usize> = text
            .lines()
            .enumerate()
            .filter(|(_, l)| l.trim() == attribute)
            .map(|(i, _)| i + 1)
            .collect();
        if !stray.is_empty() {
            return Err(format!(
                "{}: {attribute} on line(s) {stray:?}; this file runs under tests/it/support/harness.rs, \
                 which never runs such a function: drop the attribute and list it in tests()",
                file.display()
            )
            .into());
        }
        if !twice.is_empty() {
            return Err(format!("registered twice: {twice:?}").into());
        }
        Ok(())
    })
}
