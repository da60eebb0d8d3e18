//! The application folders of a repository's working tree, each read as the plugin reads it.

use std::path::{Path, PathBuf};

use crate::argocd::{
    self, folder, FolderRequest, GenerateError, Generation, Overrides, Repo, SETTINGS_FILE,
};
use crate::error::RenderError;

use super::FleetMember;

/// The most application folders one run reads (each costs its values files' merge).
pub const MAX_FOLDERS: usize = 10_000;
/// The most directory entries the search visits, and how deep it goes: a repository of
/// clusters is far smaller, and a hostile tree must not cost unbounded time.
pub const MAX_ENTRIES: usize = 1_000_000;
pub const MAX_DEPTH: usize = 32;

#[derive(Debug, thiserror::Error)]
pub enum FleetError {
    #[error(transparent)]
    Folder(#[from] GenerateError),
    #[error("{folder}: {error}")]
    Values {
        folder: String,
        error: Box<RenderError>,
    },
    #[error("{path}: {message}")]
    Search { path: String, message: String },
}

/// Every application folder (a folder holding `cilium-cmp.yaml`) under `root`, sorted. Folders
/// whose name starts with a dot (`.git`) are skipped and links to folders are not followed, so
/// the search stays inside the checkout.
pub fn find_folders(root: &Path) -> Result<Vec<PathBuf>, FleetError> {
    let fail = |path: &Path, message: String| FleetError::Search {
        path: path.display().to_string(),
        message,
    };
    let meta = std::fs::metadata(root).map_err(|e| fail(root, folder::io_reason(&e)))?;
    if !meta.is_dir() {
        return Err(fail(root, "not a folder (give the repository root)".into()));
    }
    let mut found = Vec::new();
    let mut visited = 0usize;
    let mut stack = vec![(root.to_path_buf(), 0usize)];
    while let Some((dir, depth)) = stack.pop() {
        let entries = std::fs::read_dir(&dir).map_err(|e| fail(&dir, folder::io_reason(&e)))?;
        let mut subdirs = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|e| fail(&dir, folder::io_reason(&e)))?;
            visited += 1;
            if visited > MAX_ENTRIES {
                return Err(fail(
                    root,
                    format!("more than {MAX_ENTRIES} files and folders; give the folders to check"),
                ));
            }
            let name = entry.file_name();
            let kind = entry
                .file_type()
                .map_err(|e| fail(&entry.path(), folder::io_reason(&e)))?;
            // A settings file that is a link counts, as for Argo CD's discovery; reading it
            // later refuses a link that leaves the repository.
            if name == SETTINGS_FILE && !kind.is_dir() {
                found.push(dir.clone());
                if found.len() > MAX_FOLDERS {
                    return Err(fail(
                        root,
                        format!("more than {MAX_FOLDERS} application folders"),
                    ));
                }
            } else if kind.is_dir() && !name.to_string_lossy().starts_with('.') {
                subdirs.push(entry.path());
            }
        }
        if !subdirs.is_empty() && depth + 1 > MAX_DEPTH {
            return Err(fail(
                &dir,
                format!("folders nest deeper than {MAX_DEPTH} levels below the repository root"),
            ));
        }
        stack.extend(subdirs.into_iter().map(|d| (d, depth + 1)));
    }
    found.sort();
    Ok(found)
}

/// Reads one application folder's settings and merged values exactly as the plugin does
/// (`argocd::plan`), without rendering. The fleet checks read values only, so the cluster facts
/// Argo CD would pass are placeholders; `fallback_version` serves folders whose settings name no
/// Cilium version (their Applications pass it as a parameter).
pub fn load_member(
    root: &Path,
    app_dir: &Path,
    fallback_version: Option<&str>,
) -> Result<FleetMember, FleetError> {
    let mut req = FolderRequest {
        app_dir: app_dir.to_path_buf(),
        repo_root: root.to_path_buf(),
        namespace: crate::render::DEFAULT_NAMESPACE.into(),
        kube_version: crate::render::DEFAULT_KUBE_VERSION.into(),
        api_versions: Vec::new(),
        overrides: Overrides::default(),
        chart_dir: None,
    };
    let env = req.env()?;
    let repo = Repo::locate(
        app_dir,
        env.get("ARGOCD_APP_SOURCE_PATH").map(String::as_str),
    )?;
    let settings = folder::read_settings(&repo)?;
    let env = if settings.cilium_version.is_none() && fallback_version.is_some() {
        req.overrides.cilium_version = fallback_version.map(str::to_string);
        req.env()?
    } else {
        env
    };
    member_of(&argocd::plan(&env, app_dir)?)
}

/// The member a planned folder makes (`argocd::plan`, in the working tree or in a folder holding
/// another revision's files): its settings' `clusterMesh` and its values merged as the render
/// merges them.
pub fn member_of(generation: &Generation) -> Result<FleetMember, FleetError> {
    let repo = &generation.repo;
    let settings = folder::read_settings(repo)?;
    let values_error = |error: RenderError| FleetError::Values {
        folder: repo.app_rel.clone(),
        error: Box::new(error),
    };
    // The release as the render reads it (a release newer than the listed ones comes from its
    // chart archive).
    let cilium = crate::render::release_of(&generation.inputs).map_err(values_error)?;
    let values = crate::render::resolve_values(&generation.inputs, cilium).map_err(values_error)?;
    Ok(FleetMember {
        folder: repo.app_rel.clone(),
        settings_file: repo.shown(&repo.app_dir.join(SETTINGS_FILE)),
        cilium_version: cilium,
        values,
        mesh: settings.cluster_mesh,
    })
}

/// Every application folder under `root`, loaded.
pub fn load_repo(
    root: &Path,
    fallback_version: Option<&str>,
) -> Result<Vec<FleetMember>, FleetError> {
    find_folders(root)?
        .iter()
        .map(|dir| load_member(root, dir, fallback_version))
        .collect()
}
