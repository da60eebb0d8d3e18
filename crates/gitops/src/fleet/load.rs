//! The application folders of a repository's working tree, each read as the plugin reads it.

use std::path::{Path, PathBuf};

use crate::argocd::{
    self, folder, FolderRequest, GenerateError, Generation, Overrides, Repo, SETTINGS_FILE,
};
use cilium_cmp_render::error::RenderError;

use super::FleetMember;

/// Why the folders could not be read for the checks.
#[derive(Debug, thiserror::Error)]
pub enum FleetError {
    /// A folder cannot be read as the plugin reads it (its settings file, a values file, where
    /// it sits in the repository).
    #[error(transparent)]
    Folder(#[from] GenerateError),
    /// A folder's release cannot be told or its values cannot be merged.
    #[error("{folder}: {error}")]
    Values {
        /// The folder relative to the repository root.
        folder: String,
        /// The renderer's reason.
        error: Box<RenderError>,
    },
    /// The search for application folders stopped (`argocd::discover`): a folder that cannot
    /// be listed, or a tree past the search's bounds.
    #[error("{path}: {message}")]
    Search {
        /// Where the search was.
        path: String,
        /// What went wrong there.
        message: String,
    },
}

/// Every application folder under `root`, as paths below it, sorted.
pub fn find_folders(root: &Path) -> Result<Vec<PathBuf>, FleetError> {
    let found = argocd::discover::app_folders(root).map_err(|e| FleetError::Search {
        path: e.path,
        message: e.message,
    })?;
    Ok(found
        .iter()
        .map(|rel| {
            if rel == "." {
                root.to_path_buf()
            } else {
                root.join(rel)
            }
        })
        .collect())
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
        namespace: cilium_cmp_render::render::DEFAULT_NAMESPACE.into(),
        kube_version: cilium_cmp_render::render::DEFAULT_KUBE_VERSION.into(),
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
    let cilium = cilium_cmp_render::render::release_of(&generation.inputs).map_err(values_error)?;
    let values = cilium_cmp_render::render::resolve_values(&generation.inputs, cilium)
        .map_err(values_error)?;
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
