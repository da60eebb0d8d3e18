//! The application folders of a checkout: every folder holding `cilium-cmp.yaml`, found the way
//! the fleet checks, the repository-wide diff and `lock --check` all need them. The search stays
//! inside the checkout (folders whose name starts with a dot, such as `.git`, are skipped, and so
//! is every name file systems open as `.git`, such as `git~1` on Windows: `folder::is_git_dir_name`;
//! links to folders are not followed; a settings file that is a link counts, as for Argo CD's
//! directory discovery, and reading it later refuses a link that leaves the repository or leads
//! into `.git`) and is bounded, so a hostile tree costs a fixed amount of time.

use std::path::{Path, PathBuf};

use super::folder::is_git_dir_name;
use super::SETTINGS_FILE;
use cilium_cmp_yaml::limits::io_reason;

/// The most application folders one search returns (each costs its values files' merge).
pub const MAX_FOLDERS: usize = 10_000;
/// The most directory entries one search visits, and how deep it goes: a repository of clusters
/// is far smaller.
pub const MAX_ENTRIES: usize = 1_000_000;
const MAX_DEPTH: usize = 32;

/// Why the search stopped: the path it was at and what went wrong.
#[derive(Debug, thiserror::Error)]
#[error("{path}: {message}")]
pub struct DiscoverError {
    /// The folder (or the root) at fault, as the file system names it.
    pub path: String,
    /// What went wrong there: it cannot be read, or the search passed a bound.
    pub message: String,
}

/// Every application folder under `root`, relative to it with `/` between names (`.` for the
/// root itself), sorted.
pub fn app_folders(root: &Path) -> Result<Vec<String>, DiscoverError> {
    let fail = |path: &Path, message: String| DiscoverError {
        path: path.display().to_string(),
        message,
    };
    let meta = std::fs::metadata(root).map_err(|e| fail(root, io_reason(&e)))?;
    if !meta.is_dir() {
        return Err(fail(root, "not a folder (give the repository root)".into()));
    }
    let mut found = Vec::new();
    let mut visited = 0usize;
    let mut stack: Vec<(PathBuf, Vec<String>)> = vec![(root.to_path_buf(), Vec::new())];
    while let Some((dir, rel)) = stack.pop() {
        let entries = std::fs::read_dir(&dir).map_err(|e| fail(&dir, io_reason(&e)))?;
        for entry in entries {
            let entry = entry.map_err(|e| fail(&dir, io_reason(&e)))?;
            visited += 1;
            if visited > MAX_ENTRIES {
                return Err(fail(
                    root,
                    format!("more than {MAX_ENTRIES} files and folders; name the folders to check"),
                ));
            }
            let name = entry.file_name().to_string_lossy().into_owned();
            let kind = entry
                .file_type()
                .map_err(|e| fail(&entry.path(), io_reason(&e)))?;
            if name == SETTINGS_FILE && !kind.is_dir() {
                found.push(if rel.is_empty() {
                    ".".to_string()
                } else {
                    rel.join("/")
                });
                if found.len() > MAX_FOLDERS {
                    return Err(fail(
                        root,
                        format!("more than {MAX_FOLDERS} application folders"),
                    ));
                }
            } else if kind.is_dir() && !name.starts_with('.') && !is_git_dir_name(&name) {
                if rel.len() >= MAX_DEPTH {
                    return Err(fail(
                        &dir,
                        format!(
                            "folders nest deeper than {MAX_DEPTH} levels below the repository root"
                        ),
                    ));
                }
                let mut r = rel.clone();
                r.push(name);
                stack.push((entry.path(), r));
            }
        }
    }
    found.sort();
    Ok(found)
}
