//! Files from `../shared` (the Argo CD emulator, schemas) that some tests need. A person who
//! clones the repository alone has no `../shared`: those tests then say so on one loud line and
//! skip; under CI (`CI=true`) a missing file is a failure, never a silent pass.

use std::path::PathBuf;

/// `../shared/REL` when it exists; otherwise None after the skip line, or a panic under CI.
pub fn shared_file(rel: &str, test: &str) -> Option<PathBuf> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../shared")
        .join(rel);
    if path.is_file() {
        return Some(path);
    }
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!(
            "{test}: missing {} (CI must have ../shared)",
            path.display()
        );
    }
    skipped(
        test,
        &format!("needs ../shared/{rel}, absent in a checkout without ../shared (CI runs it)"),
    );
    None
}

/// One line on the terminal saying a test skipped and why. Written to stderr directly, past the
/// test harness's capture (which shows a passing test's `eprintln!` to nobody), so a person
/// running `cargo test` in a checkout without `../shared` sees every skip.
pub fn skipped(test: &str, why: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "!!! SKIPPED {test}: {why}");
}
