//! `import-application`: an Argo CD Application of Cilium's Helm chart becomes an application
//! folder, and the new Application is printed. The folder is rendered as the plugin renders it
//! before the command succeeds; a folder that does not render is removed again.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::ExitCode;

use anyhow::Context;

use cilium_cmp_gitops::argocd::{self, GenerateError};
use cilium_cmp_render::chart::store;
use cilium_cmp_render::replace_file::Force;

use super::args::ImportApplicationArgs;
use super::io::{self as cli_io, write_stdout, Stdin, STDIN_NAME};
use cilium_cmp_yaml::escape;

pub fn run(a: ImportApplicationArgs) -> anyhow::Result<ExitCode> {
    use cilium_cmp_gitops::import_application;
    let ImportApplicationArgs {
        app,
        to,
        repo_url,
        path,
        target_revision,
        values_root,
        keep_unknown_keys,
    } = a;
    let shown = app.display().to_string();
    let (app_shown, app_text) = if cli_io::is_stdin(&shown) {
        (
            STDIN_NAME.to_string(),
            Stdin::default().read("the Application")?,
        )
    } else {
        let text = cilium_cmp_yaml::limits::read_text(&app, &shown)?;
        (shown, text)
    };
    let path = match path {
        Some(p) => p,
        None if to.is_relative() => {
            let p = to.to_string_lossy().replace('\\', "/");
            p.trim_start_matches("./").trim_end_matches('/').to_string()
        }
        None => {
            return Err(cilium_cmp_gitops::refusal::UsageError::Folder(format!(
            "--to {} is an absolute path: give the folder's path inside the repository with --path",
            to.display()
        ))
            .into())
        }
    };
    let settings_path = to.join(argocd::SETTINGS_FILE);
    let values_path = to.join(argocd::folder::DEFAULT_VALUES_FILE);
    for p in [&settings_path, &values_path] {
        // A dangling link too (`exists` follows links): the clean-up below would remove it.
        if std::fs::symlink_metadata(p).is_ok() {
            return Err(cilium_cmp_gitops::refusal::UsageError::Exists(format!(
                "{} exists already; import-application writes a new application folder: choose another --to",
                p.display()
            )).into());
        }
    }
    let req = import_application::ImportRequest {
        app_text,
        app_shown,
        ref_roots: import_application::ref_roots(&values_root)
            .map_err(cilium_cmp_gitops::refusal::UsageError::Folder)?,
        repo_url,
        target_revision,
        path: path.clone(),
        keep_unknown_keys,
    };
    let imported = import_application::import(&req)?;
    let created = !to.exists();
    std::fs::create_dir_all(&to).with_context(|| format!("cannot create {}", to.display()))?;
    // New files (checked above), so nothing is forced: a dangling link there is refused.
    let written = cli_io::write_file(&values_path, &imported.values, Force::Never)
        .and_then(|()| cli_io::write_file(&settings_path, &imported.settings, Force::Never))
        .and_then(|()| render_written(&to, &path, &imported));
    if let Err(e) = written {
        // Nothing of a folder that would fail its first sync stays behind.
        std::fs::remove_file(&settings_path).ok();
        std::fs::remove_file(&values_path).ok();
        if created {
            std::fs::remove_dir(&to).ok();
        }
        return Err(e.context("nothing was written"));
    }
    if !imported.unknown.is_empty() {
        let what = if keep_unknown_keys {
            "kept (allowUnknownKeys: true)"
        } else {
            "left out of values.yaml"
        };
        // The Application is the pull request's: what it names goes through the text escaper
        // (tracing's own escaping leaves line breaks and workflow commands).
        tracing::warn!(
            "values Cilium {} does not know, which did nothing under Helm either; {what}:",
            escape::text(&imported.cilium_version)
        );
        for line in &imported.unknown {
            cli_io::say(&format!("  {}", escape::message(line)));
        }
    }
    for w in &imported.warnings {
        tracing::warn!("{}", escape::message(w));
    }
    tracing::info!(
        "wrote {} and {} (Cilium {}), which render; review them, then write the lock with `cilium-cmp lock {} --namespace {} --kube-version ...`",
        settings_path.display(),
        values_path.display(),
        escape::text(&imported.cilium_version),
        to.display(),
        escape::text(&imported.namespace),
    );
    write_stdout(&imported.application)?;
    Ok(ExitCode::SUCCESS)
}

/// Renders the written folder as the plugin would for the new Application (its destination
/// namespace, the default Kubernetes version). Without a stored chart archive the objects that
/// embed a file bundled in the chart cannot be rendered here; the sidecar image has them, so
/// that alone is a warning.
fn render_written(
    to: &Path,
    path: &str,
    imported: &cilium_cmp_gitops::import_application::Imported,
) -> anyhow::Result<()> {
    let mut env = BTreeMap::new();
    env.insert("ARGOCD_APP_SOURCE_PATH".to_string(), path.to_string());
    env.insert("ARGOCD_APP_NAMESPACE".into(), imported.namespace.clone());
    env.insert(
        "KUBE_VERSION".into(),
        cilium_cmp_render::render::DEFAULT_KUBE_VERSION.into(),
    );
    if let Some(d) = store::default_dir() {
        env.insert(argocd::CHART_DIR_VAR.into(), d.display().to_string());
    }
    match argocd::render_folder(&env, to, false) {
        Ok(_) => Ok(()),
        Err(GenerateError::NeedsChartArchive { error, .. }) => {
            tracing::warn!(
                "the folder renders, but not every object could be checked here: {}; `cilium-cmp chart fetch {}` stores the archive",
                escape::message(&error.to_string()),
                escape::text(&imported.cilium_version)
            );
            Ok(())
        }
        Err(e) => Err(anyhow::Error::new(e.on_command_line()).context(format!(
            "the folder {} would not render in Argo CD",
            to.display()
        ))),
    }
}
