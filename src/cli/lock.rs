//! `lock` with no folder: every application folder's lock written, as `lock --check` with no
//! folder checks them all (`diff::lock_check_all`).

use std::process::ExitCode;

use cilium_cmp_gitops::argocd;
use cilium_cmp_gitops::diff::repo;
use cilium_cmp_render::replace_file::Force;
use cilium_cmp_yaml::escape;

use super::args::FolderArgs;
use super::inputs::folder_request;
use super::io::say;

/// Renders every application folder under the repository root and writes the locks that
/// change, each only after its own render succeeded; one line per folder on stderr. A folder
/// that fails to render keeps its lock and makes the command fail, after the others were written.
pub fn lock_all(folder: &FolderArgs, force: Force) -> anyhow::Result<ExitCode> {
    let (root, folders) = application_folders(
        folder,
        ": name the repository with --repo-root, or the folder to lock",
    )?;
    let results = cilium_cmp_render::parallel::map(
        &folders,
        "lock",
        &super::progress::Shown::default(),
        |rel| {
            let shown = escape::text(rel);
            let args = for_folder(folder, &root, rel);
            let req = folder_request(&args);
            let written = req
                .env()
                .and_then(|env| {
                    argocd::preview::preview(&env, &args.app_dir, args.allow_unknown_keys)
                })
                .and_then(|p| Ok((p.write_lock(force)?, p.hash().to_string())));
            match written {
                Err(e) => (false, format!("{shown}: {}", e.on_command_line())),
                Ok((true, hash)) => (true, format!("{shown}: written {hash}; commit it")),
                Ok((false, hash)) => (true, format!("{shown}: unchanged {hash}")),
            }
        },
    );
    for (_, line) in &results {
        say(line);
    }
    let failed = results.iter().filter(|(ok, _)| !ok).count();
    if failed > 0 {
        return Err(cilium_cmp_gitops::refusal::LockError::FoldersFailed(format!(
            "{failed} of {} application folders could not be rendered; their locks were left as they were",
            results.len()
        )).into());
    }
    Ok(ExitCode::SUCCESS)
}

/// The repository root of `folder`'s flags and the application folders of its work tree (paths
/// relative to it); none is an error, ending with `hint`.
pub fn application_folders(
    folder: &FolderArgs,
    hint: &str,
) -> anyhow::Result<(std::path::PathBuf, Vec<String>)> {
    let root = super::inputs::real_repository_root(folder.repo_root.as_deref())?;
    let folders =
        repo::folders_in_work_tree(&root).map_err(cilium_cmp_gitops::refusal::LockError::Search)?;
    if folders.is_empty() {
        return Err(cilium_cmp_gitops::refusal::LockError::NoFolders(format!(
            "no application folder (holding cilium-cmp.yaml) under {}{hint}",
            root.display()
        ))
        .into());
    }
    Ok((root, folders))
}

/// `folder`'s flags for the application folder `rel` of the repository at `root`.
pub fn for_folder(folder: &FolderArgs, root: &std::path::Path, rel: &str) -> FolderArgs {
    let mut args = folder.clone();
    args.app_dir = root.join(if rel == "." { "" } else { rel });
    args.repo_root = Some(root.to_path_buf());
    args
}
