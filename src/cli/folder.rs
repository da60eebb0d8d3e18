//! The commands on one application folder as the plugin renders it: `generate` (the plugin's
//! own command), `render-folder`, `lock` of one folder, `talos-patch`.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Context;

use cilium_cmp_gitops::argocd::{self, GenerateError};
use cilium_cmp_gitops::refusal::LockError;
use cilium_cmp_render::replace_file::Force;

use super::args::{ArgocdSettingsArgs, FolderArgs};
use super::inputs::{argocd_env, folder_request};
use super::io::{self as cli_io, say, say_part, write_stdout};

/// `generate`: the render of the current folder for what Argo CD passed in the environment.
pub fn generate() -> anyhow::Result<ExitCode> {
    let env = argocd_env()?;
    let dir = std::env::current_dir().context("cannot read the current directory")?;
    let r = argocd::generate(&env, &dir);
    // Said before the render or its error: a lock mismatch is often this difference.
    let differs = match &r {
        Ok(r) => r.generation.cluster_differs.clone(),
        Err(_) => argocd::plan(&env, &dir)
            .map(|g| g.cluster_differs)
            .unwrap_or_default(),
    };
    for d in differs {
        tracing::warn!(
            "{}; rendering for what Argo CD passed (update the folder's cilium-cmp.yaml, or the Application, so they agree)",
            cilium_cmp_yaml::escape::message(&d)
        );
    }
    write_stdout(&r?.text)?;
    Ok(ExitCode::SUCCESS)
}

/// `render-folder`: the plugin's render on stdout, whether it matches the lock on stderr.
pub fn render_folder(a: &FolderArgs, argocd: &ArgocdSettingsArgs) -> anyhow::Result<ExitCode> {
    let req = folder_request(a);
    let p = argocd::preview::preview(&req.env()?, &a.app_dir, a.allow_unknown_keys)
        .map_err(GenerateError::on_command_line)?;
    say_part(&p.summary());
    let filter = super::adopt::argocd_filter(argocd.argocd_cm.as_deref())?;
    super::adopt::print_exclusions(&filter, &p.rendered.text)?;
    write_stdout(&p.rendered.text)?;
    Ok(ExitCode::SUCCESS)
}

/// `lock FOLDER`: writes the folder's lock, or with `--check` fails when it is missing or stale.
pub fn lock(
    folder: &FolderArgs,
    argocd: &ArgocdSettingsArgs,
    check: bool,
    force: bool,
) -> anyhow::Result<ExitCode> {
    let req = folder_request(folder);
    let p = argocd::preview::preview(&req.env()?, &folder.app_dir, folder.allow_unknown_keys)
        .map_err(GenerateError::on_command_line)?;
    let filter = super::adopt::argocd_filter(argocd.argocd_cm.as_deref())?;
    super::adopt::print_exclusions(&filter, &p.rendered.text)?;
    if check {
        return match p.state() {
            argocd::LockState::Fresh => {
                say_part(&p.summary());
                Ok(ExitCode::SUCCESS)
            }
            argocd::LockState::Missing => Err(LockError::Missing(format!(
                "{} does not exist: the folder has no lock to check; write it with\n  {}\nand commit it",
                cilium_cmp_yaml::escape::text(&p.lock_shown),
                argocd::reproduce_command(&p.rendered.generation)
            )).into()),
            argocd::LockState::Stale { .. } => Err(LockError::Stale(format!(
                "the lock is stale (nothing was written):\n{}preview with\n  {}\nthen update the lock with\n  {}",
                p.summary(),
                argocd::preview_command(&p.rendered.generation),
                argocd::reproduce_command(&p.rendered.generation)
            )).into()),
        };
    }
    let summary = p.summary();
    let lock = cilium_cmp_yaml::escape::text(&p.lock_shown);
    if p.write_lock(Force::flag(force))? {
        say(&format!("{summary}{lock}: written; commit it"));
    } else {
        say(&format!("{summary}{lock}: unchanged"));
    }
    Ok(ExitCode::SUCCESS)
}

/// `talos-patch`: the folder's render as a Talos machine-config patch.
pub fn talos_patch(
    folder: &FolderArgs,
    name: &str,
    output: Option<&Path>,
    force: bool,
) -> anyhow::Result<ExitCode> {
    let req = folder_request(folder);
    let r = argocd::generate_allowing(&req.env()?, &folder.app_dir, folder.allow_unknown_keys)
        .map_err(GenerateError::on_command_line)?;
    let patch = cilium_cmp_render::talos::inline_manifest_patch(name, &r.text, &r.hash);
    match output {
        Some(path) => cli_io::write_file(path, &patch, Force::flag(force))?,
        None => write_stdout(&patch)?,
    }
    Ok(ExitCode::SUCCESS)
}
