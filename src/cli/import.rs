//! `import-application`: an Argo CD Application of Cilium's Helm chart becomes an application
//! folder, and the new Application is printed.

use std::path::PathBuf;

use anyhow::Context;

use cilium_cmp::argocd;

use super::io::{self as cli_io, write_stdout, Stdin, STDIN_NAME};

pub fn import_application(
    app: PathBuf,
    to: PathBuf,
    repo_url: String,
    path: Option<String>,
    target_revision: Option<String>,
    values_root: Vec<String>,
) -> anyhow::Result<()> {
    use cilium_cmp::argocd::from_helm;
    let shown = app.display().to_string();
    let (app_shown, app_text) = if cli_io::is_stdin(&shown) {
        (
            STDIN_NAME.to_string(),
            Stdin::default().read("the Application")?,
        )
    } else {
        let text = cilium_cmp::limits::read_text(&app, &shown)?;
        (shown, text)
    };
    let path = match path {
        Some(p) => p,
        None if to.is_relative() => {
            let p = to.to_string_lossy().replace('\\', "/");
            p.trim_start_matches("./").trim_end_matches('/').to_string()
        }
        None => anyhow::bail!(
            "--to {} is an absolute path: give the folder's path inside the repository with --path",
            to.display()
        ),
    };
    let settings_path = to.join(argocd::SETTINGS_FILE);
    let values_path = to.join(argocd::folder::DEFAULT_VALUES_FILE);
    for p in [&settings_path, &values_path] {
        if p.exists() {
            anyhow::bail!(
                "{} exists already; import-application writes a new application folder: choose another --to",
                p.display()
            );
        }
    }
    let req = from_helm::ImportRequest {
        app_text,
        app_shown,
        ref_roots: from_helm::ref_roots(&values_root).map_err(anyhow::Error::msg)?,
        repo_url,
        target_revision,
        path,
    };
    let imported = from_helm::import(&req)?;
    std::fs::create_dir_all(&to).with_context(|| format!("cannot create {}", to.display()))?;
    cli_io::write_file(&values_path, &imported.values)?;
    cli_io::write_file(&settings_path, &imported.settings)?;
    for w in &imported.warnings {
        tracing::warn!("{w}");
    }
    tracing::info!(
        "wrote {} and {} (Cilium {}); review them, then render with `cilium-cmp lock {} --namespace ... --kube-version ...`",
        settings_path.display(),
        values_path.display(),
        imported.cilium_version,
        to.display()
    );
    write_stdout(&imported.application)
}
