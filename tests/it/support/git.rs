//! git, as the tests run it to build repositories: in a folder, with an identity of its own (a
//! test machine may have none), failing the test when git fails.

use std::path::Path;
use std::process::Command;

/// Runs `git ARGS` in `dir`; its standard output, as printed (a file `git show` prints is
/// compared byte for byte).
pub fn git(dir: &Path, args: &[&str]) -> String {
    let o = Command::new("git")
        .current_dir(dir)
        .args(["-c", "user.email=test@example.com", "-c", "user.name=test"])
        .args(args)
        .output()
        .expect("git runs");
    assert!(
        o.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}
