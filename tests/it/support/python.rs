//! The tests' Python: a venv under `target/` with the packages the tests' helpers import, made by
//! `tests/setup-python.sh` on first use (so `cargo test` needs no setup step of its own).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The venv's python, or why there is none. Made once per test process.
pub fn python() -> Result<&'static Path, &'static str> {
    static PYTHON: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    PYTHON
        .get_or_init(setup)
        .as_ref()
        .map(PathBuf::as_path)
        .map_err(String::as_str)
}

fn setup() -> Result<PathBuf, String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("python");
    let o = Command::new("bash")
        .arg(root.join("tests/setup-python.sh"))
        .arg(&dir)
        .output()
        .map_err(|e| format!("cannot run tests/setup-python.sh: {e}"))?;
    let stderr = String::from_utf8_lossy(&o.stderr);
    if !o.status.success() {
        let last = stderr.trim().lines().last().unwrap_or("").to_string();
        return Err(format!(
            "the tests' Python environment could not be set up (tests/setup-python.sh): {last}"
        ));
    }
    eprint!("{stderr}");
    let path = PathBuf::from(String::from_utf8_lossy(&o.stdout).trim());
    if path.is_file() {
        Ok(path)
    } else {
        Err(format!(
            "tests/setup-python.sh named no python: {}",
            path.display()
        ))
    }
}
