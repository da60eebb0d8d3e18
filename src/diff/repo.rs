//! Application folders at two revisions: the work tree (read from disk, as the plugin reads its
//! checkout) and a git revision (read with `git_rev`, materialised in a private temporary folder
//! so the one folder code path, `argocd::plan`, renders both). A folder is rendered only when
//! one of its inputs changed: its settings file or any values file it names, wherever in the
//! repository.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::argocd::{self, FolderRequest, SETTINGS_FILE};
use crate::error::RenderError;
use crate::git_rev::Revision;
use crate::versions::CiliumVersion;

use super::{FolderState, Outcome, Section, Side};

/// Folders one repository may hold; discovery stops with an error beyond.
pub use crate::argocd::discover::MAX_FOLDERS;

/// The application folders under `top`, relative and `/`-separated, sorted.
pub fn folders_in_work_tree(top: &Path) -> Result<Vec<String>, String> {
    argocd::discover::app_folders(top).map_err(|e| e.to_string())
}

/// The application folders of a revision.
pub fn folders_at(rev: &Revision) -> Result<Vec<String>, String> {
    let mut out: Vec<String> = rev
        .files()
        .map_err(|e| e.to_string())?
        .into_iter()
        .filter_map(|p| {
            if p == SETTINGS_FILE {
                Some(".".to_string())
            } else {
                p.strip_suffix(&format!("/{SETTINGS_FILE}"))
                    .map(str::to_string)
            }
        })
        .filter(|p| !p.split('/').any(|c| c.starts_with('.')))
        .collect();
    out.sort();
    if out.len() > MAX_FOLDERS {
        return Err(format!(
            "more than {MAX_FOLDERS} application folders at {}",
            rev.name
        ));
    }
    Ok(out)
}

/// `a/b` joined with `../c/d.yaml` as a path inside the repository; None when it leaves it.
fn join_inside(folder: &str, rel: &str) -> Option<String> {
    let mut parts: Vec<&str> = Vec::new();
    let base = if folder == "." { "" } else { folder };
    for p in base.split('/').chain(rel.split('/')) {
        match p {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            other => parts.push(other),
        }
    }
    Some(parts.join("/"))
}

/// Reads files of one side: the work tree, or a revision.
pub enum Source<'a> {
    WorkTree(&'a Path),
    Git(&'a Revision),
}

impl Source<'_> {
    fn read(&self, paths: &[String]) -> Result<Vec<Option<String>>, String> {
        match self {
            Source::Git(rev) => rev.read(paths).map_err(|e| e.to_string()),
            Source::WorkTree(top) => paths
                .iter()
                .map(|p| {
                    let path = top.join(p);
                    if !path.is_file() {
                        return Ok(None);
                    }
                    // A link that leaves the repository is not read (the plan refuses it with
                    // the plugin's message); it only counts as a changed input.
                    let inside = path
                        .canonicalize()
                        .ok()
                        .zip(top.canonicalize().ok())
                        .is_some_and(|(real, top)| real.starts_with(top));
                    if !inside {
                        return Ok(Some(format!("\0outside the repository: {p}")));
                    }
                    crate::limits::read_text(&path, p)
                        .map(Some)
                        .map_err(|e| e.to_string())
                })
                .collect(),
        }
    }
}

/// A folder's inputs on one side: each file (repository path) and its text; None when the folder
/// does not exist there. A values file that leaves the repository is kept as a marker; the plan
/// refuses it with the plugin's message.
pub fn inputs(
    source: &Source,
    folder: &str,
) -> Result<Option<BTreeMap<String, Option<String>>>, String> {
    let settings_path = join_inside(folder, SETTINGS_FILE).unwrap_or_default();
    let Some(settings) = source
        .read(std::slice::from_ref(&settings_path))?
        .pop()
        .flatten()
    else {
        return Ok(None);
    };
    let mut out = BTreeMap::new();
    let listed = argocd::folder::parse_settings(&settings, &settings_path)
        .map(|s| s.values_files)
        .unwrap_or_default();
    out.insert(settings_path, Some(settings));
    let paths: Vec<String> = listed
        .iter()
        .filter_map(|rel| join_inside(folder, rel))
        .take(crate::limits::MAX_VALUES_FILES)
        .collect();
    for (p, text) in paths.iter().zip(source.read(&paths)?) {
        out.insert(p.clone(), text);
    }
    Ok(Some(out))
}

/// What every folder render shares: the flags of `diff` that Argo CD would pass.
#[derive(Debug, Clone)]
pub struct Target {
    pub namespace: String,
    pub kube_version: String,
    pub api_versions: Vec<String>,
    pub chart_dir: Option<PathBuf>,
    pub allow_unknown_keys: bool,
}

/// A private folder removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new() -> Result<Scratch, String> {
        static N: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "cilium-cmp-diff-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir(&dir)
            .map_err(|e| format!("cannot create a temporary folder {}: {e}", dir.display()))?;
        Ok(Scratch(dir))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A folder planned on one side: the generation (inputs resolved as the plugin resolves them).
struct Planned {
    generation: argocd::Generation,
    _scratch: Option<Scratch>,
}

fn plan(
    target: &Target,
    root: &Path,
    folder: &str,
    scratch: Option<Scratch>,
) -> Result<Planned, String> {
    let req = FolderRequest {
        app_dir: root.join(if folder == "." { "" } else { folder }),
        repo_root: root.to_path_buf(),
        namespace: target.namespace.clone(),
        kube_version: target.kube_version.clone(),
        api_versions: target.api_versions.clone(),
        overrides: Default::default(),
        chart_dir: target.chart_dir.clone(),
    };
    let env = req.env().map_err(|e| e.on_command_line().to_string())?;
    let mut generation =
        argocd::plan(&env, &req.app_dir).map_err(|e| e.on_command_line().to_string())?;
    generation.inputs.allow_unknown_keys |= target.allow_unknown_keys;
    Ok(Planned {
        generation,
        _scratch: scratch,
    })
}

/// Plans a folder at a revision: its inputs written into a private folder, then planned there.
fn plan_at(
    target: &Target,
    files: &BTreeMap<String, Option<String>>,
    folder: &str,
) -> Result<Planned, String> {
    let scratch = Scratch::new()?;
    std::fs::create_dir_all(scratch.0.join(if folder == "." { "" } else { folder }))
        .map_err(|e| format!("cannot write a temporary folder: {e}"))?;
    for (path, text) in files {
        if let Some(text) = text {
            let p = scratch.0.join(path);
            if let Some(parent) = p.parent() {
                std::fs::create_dir_all(parent)
                    .map_err(|e| format!("cannot write a temporary folder: {e}"))?;
            }
            std::fs::write(&p, text).map_err(|e| format!("cannot write a temporary file: {e}"))?;
        }
    }
    let root = scratch.0.clone();
    plan(target, &root, folder, Some(scratch))
}

/// Renders a planned folder.
fn render(p: &Planned, label: &str, upgrade: bool) -> Result<Side, String> {
    render_inputs(&p.generation.inputs, label, upgrade)
}

/// Renders inputs as one side of a diff. `upgrade`: the other side runs another release, so
/// values this release renamed or removed are reported by the upgrade rules (and the render
/// goes on without them) instead of refusing the render; any other unknown value still refuses.
pub fn render_inputs(inputs: &crate::Inputs, label: &str, upgrade: bool) -> Result<Side, String> {
    let version = crate::versions::parse(&inputs.cilium_version).map_err(|e| e.to_string())?;
    let renamed_only = |report: &crate::known_keys::Report| {
        report.values.iter().all(|u| {
            u.is_other_release() || matches!(u.reason, crate::known_keys::Reason::Removed { .. })
        })
    };
    let text = match crate::render(inputs) {
        Err(RenderError::UnknownValues { report, .. }) if upgrade && renamed_only(&report) => {
            let mut allowing = inputs.clone();
            allowing.allow_unknown_keys = true;
            crate::render(&allowing).map_err(|e| e.to_string())?
        }
        other => other.map_err(|e| e.to_string())?,
    };
    Ok(Side {
        label: label.to_string(),
        version,
        text,
    })
}

fn empty_side(label: &str, version: CiliumVersion) -> Side {
    Side {
        label: label.to_string(),
        version,
        text: String::new(),
    }
}

/// Diffs one folder between a revision and the work tree. `must_exist`: the single-folder form,
/// where a folder on one side only is an error rather than "added" or "removed".
pub fn diff_folder(
    target: &Target,
    base: &Revision,
    folder: &str,
    must_exist: bool,
) -> Result<Outcome, String> {
    let old_files = inputs(&Source::Git(base), folder)?;
    let new_files = inputs(&Source::WorkTree(&base.top), folder)?;
    let base_label = format!("base {}", base.name);
    let now_label = "work tree".to_string();
    match (&old_files, &new_files) {
        (None, None) => {
            return Err(format!(
                "{folder} is not an application folder ({SETTINGS_FILE} is missing) at {} nor in the work tree",
                base.name
            ))
        }
        (None, Some(_)) if must_exist => {
            return Err(format!(
                "{folder} does not exist at {} (no {SETTINGS_FILE} there): the folder is new in this change; `cilium-cmp diff --repo-root . --base {}` reports it as added",
                base.name, base.name
            ))
        }
        (Some(_), None) if must_exist => {
            return Err(format!(
                "{folder} has no {SETTINGS_FILE} in the work tree: the change removes the folder; `cilium-cmp diff --repo-root . --base {}` reports it as removed",
                base.name
            ))
        }
        (Some(a), Some(b)) if a == b && !must_exist => return Ok(Outcome::InputsUnchanged),
        _ => {}
    }
    let old = old_files
        .as_ref()
        .map(|files| plan_at(target, files, folder))
        .transpose()?;
    let new = new_files
        .as_ref()
        .map(|_| plan(target, &base.top, folder, None))
        .transpose()?;
    let version_of = |p: &Option<Planned>| {
        p.as_ref()
            .and_then(|p| crate::versions::parse(&p.generation.inputs.cilium_version).ok())
    };
    let (old_v, new_v) = (version_of(&old), version_of(&new));
    let upgrade = old_v.is_some() && new_v.is_some() && old_v != new_v;
    let old_side = match &old {
        Some(p) => render(p, &base_label, false).map_err(|e| format!("at {}: {e}", base.name))?,
        None => empty_side(&base_label, new_v.unwrap_or(crate::versions::newest())),
    };
    let new_side = match &new {
        Some(p) => render(p, &now_label, upgrade)?,
        None => empty_side(&now_label, old_side.version),
    };
    let values = match (&new, upgrade) {
        (Some(p), true) => Some(
            crate::render::resolve_values(&p.generation.inputs, new_v.unwrap_or(old_side.version))
                .map_err(|e| e.to_string())?,
        ),
        _ => None,
    };
    let state = match (&old, &new) {
        (None, _) => FolderState::Added,
        (_, None) => FolderState::Removed,
        _ => FolderState::Changed,
    };
    let diff = super::diff(&old_side, &new_side, &target.namespace, values.as_ref())?;
    Ok(Outcome::Compared {
        state,
        diff: Box::new(diff),
    })
}

/// Every folder of both sides, diffed where its inputs changed, in parallel.
pub fn diff_repository(target: &Target, base: &Revision) -> Result<Vec<Section>, String> {
    let mut folders = folders_at(base)?;
    folders.extend(folders_in_work_tree(&base.top)?);
    folders.sort();
    folders.dedup();
    let mut sections = crate::parallel::map(&folders, "diff", |folder| Section {
        name: folder.clone(),
        outcome: diff_folder(target, base, folder, false).unwrap_or_else(Outcome::Failed),
    });
    sections.push(Section {
        name: FLEET_SECTION.into(),
        outcome: fleet_findings(&base.top),
    });
    Ok(sections)
}

/// The name of the report's Cluster Mesh section.
pub const FLEET_SECTION: &str = "Cluster Mesh (fleet checks)";

/// The fleet checks over the work tree's folders (the state the change merges), one line per
/// finding naming the folders, files and lines involved.
pub fn fleet_findings(top: &Path) -> Outcome {
    let members = match crate::fleet::load_repo(top, None) {
        Ok(m) => m,
        Err(e) => return Outcome::Failed(format!("the fleet checks cannot read the folders: {e}")),
    };
    let report = crate::fleet::report(&members);
    Outcome::Fleet(
        report
            .findings
            .iter()
            .map(|f| {
                let places: Vec<String> = f
                    .places
                    .iter()
                    .map(|p| {
                        format!(
                            "{}: {} = {} (folder {})",
                            p.location(),
                            p.path,
                            p.value,
                            p.folder
                        )
                    })
                    .collect();
                format!("{}: {} [{}]", f.check.name(), f.message, places.join("; "))
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_paths_stay_inside_the_repository() {
        assert_eq!(
            join_inside("a/b", "../c/v.yaml").as_deref(),
            Some("a/c/v.yaml")
        );
        assert_eq!(join_inside(".", "v.yaml").as_deref(), Some("v.yaml"));
        assert_eq!(join_inside("a", "../../v.yaml"), None);
    }
}
