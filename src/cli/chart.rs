//! `chart fetch` (and the hidden `import-chart`): the library's `chart::fetch` with the repository's default and what it did
//! on stderr; the stored file's path on stdout (for scripts).

use std::path::Path;
use std::process::ExitCode;

use cilium_cmp_render::chart::fetch;
use cilium_cmp_render::chart::obtain::REPO_VAR;

use super::io::write_stdout;

pub fn fetch(
    version: &str,
    dir: Option<&Path>,
    repo: Option<String>,
    sha256: Option<&str>,
) -> anyhow::Result<ExitCode> {
    // The variable is the default of the flag, as for the first-use download (`chart::obtain`).
    let repo = repo
        .or_else(|| std::env::var(REPO_VAR).ok().filter(|r| !r.is_empty()))
        .unwrap_or_else(|| fetch::DEFAULT_REPO.to_string());
    let f = fetch::fetch(version, &repo, dir, sha256, &super::http::Ureq)?;
    let release = &f.release;
    if release.is_pre_release() {
        tracing::warn!(
            "Cilium {release} is a pre-release, not a release for production clusters; it was fetched because it was named exactly"
        );
    }
    // The index's address came from the user or the environment: escaped for the log.
    let which = cilium_cmp_yaml::escape::message(&f.against.to_string());
    if f.downloaded {
        tracing::info!("downloaded Cilium {release}'s chart archive; it matches {which}");
    } else {
        tracing::info!("Cilium {release}'s chart archive is already stored and matches {which}");
    }
    write_stdout(&format!("{}\n", f.path.display()))?;
    Ok(ExitCode::SUCCESS)
}

/// `import-chart ARCHIVE --data-dir DIR` (hidden, for release day): the archive's facts under
/// `data/`.
pub fn import(archive: &Path, data_dir: &Path) -> anyhow::Result<ExitCode> {
    let v = cilium_cmp_render::chart::import::import(archive, data_dir)?;
    tracing::info!("imported Cilium {v} into {}", data_dir.display());
    Ok(ExitCode::SUCCESS)
}
