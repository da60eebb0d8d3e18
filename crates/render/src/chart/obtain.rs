//! First use: the official chart archive a render needs, from the store or, for a release this
//! binary pins, downloaded once into it.
//!
//! Every render evaluates the templates of its release's archive, so a laptop's first
//! `cilium-cmp render` would otherwise stop at "no archive". A pinned release's archive can be
//! fetched without asking: its bytes are fixed by the pin, so the render is the same as with an
//! archive the user supplied. A release without a pin is never downloaded implicitly (which
//! bytes are right would then rest on a repository's index, a choice the user makes with
//! `chart fetch`). The Argo CD plugin never downloads (`Download::Never`): it renders from the
//! image's archives only, and `CILIUM_CMP_OFFLINE=1` makes every command behave so.

use std::path::Path;

use super::archive::ChartFiles;
use super::fetch::{self, FetchError, Transport};
use super::store::{self, StoreError};
use crate::release_name::release_name;

/// The variable naming another chart repository to download from (a mirror; the tests' local
/// server). Same rules as `chart fetch --repo`: https, or http to this machine only.
pub const REPO_VAR: &str = "CILIUM_CMP_CHART_REPO";
/// The variable that turns downloads off (`1`).
pub const OFFLINE_VAR: &str = "CILIUM_CMP_OFFLINE";

/// Whether `obtain` may download, and through which client (`fetch::Transport`: the
/// program's, since the library links none).
#[derive(Clone, Copy)]
pub enum Download<'a> {
    /// Only the store is read (the Argo CD plugin; `CILIUM_CMP_OFFLINE=1`).
    Never,
    /// A pinned release's archive is downloaded through this client when it is not stored.
    IfPinned(&'a dyn Transport),
}

/// Why `obtain` has no archive to return.
#[derive(Debug, thiserror::Error)]
pub enum ObtainError {
    /// The archive is not stored and was not downloaded: why, and the three ways to provide it.
    #[error("Cilium {version}'s chart archive {name} is needed and {why}. Three ways to provide it: run `cilium-cmp chart fetch {version}` once (it downloads and checks the archive into {dir}), pass --chart-archive FILE (the archive or an unpacked chart folder), or set {var} to a folder holding {name}", name = store::archive_name(version), var = store::CHART_DIR_VAR)]
    Unavailable {
        /// The release, as its name is printed.
        version: String,
        /// The store searched, as shown.
        dir: String,
        /// Why it was not downloaded: not pinned, downloads off, no folder, or the download's
        /// error.
        why: String,
    },
    /// The version asked for is not a release name, so no archive name can be made from it.
    #[error("{version} is not a Cilium release name such as 1.20.0 or 1.21.0-pre.1")]
    Name {
        /// The version as given, quoted.
        version: String,
    },
    /// The repository to download from is not one `chart fetch --repo` would take; `named`
    /// says where it came from (the variable).
    #[error("{named} {url}: {message}")]
    Repo {
        /// Where the address came from: the variable's name, or "the chart repository".
        named: String,
        /// The address, quoted.
        url: String,
        /// Why it is refused.
        message: String,
    },
    /// A stored file that cannot be used (not the pinned archive, unreadable).
    #[error(transparent)]
    Stored(#[from] StoreError),
}

/// The archive of `version`: stored in `dir` (default `store::default_dir`), checked against the
/// pin when pinned (`store::open_stored`); else, for a pinned release when `download` allows
/// and `CILIUM_CMP_OFFLINE` does not forbid, fetched from the official repository (or
/// `CILIUM_CMP_CHART_REPO`), checked, stored, and announced once on stderr.
pub fn obtain(
    version: &str,
    dir: Option<&Path>,
    download: Download<'_>,
) -> Result<ChartFiles, ObtainError> {
    let download = if offline() {
        Allowed::Offline
    } else {
        download.into()
    };
    let repo = match download {
        Allowed::Yes(_) => repository()?,
        _ => String::new(),
    };
    obtain_inner(version, dir, download, &repo)
}

/// `obtain` from the repository `repo` instead of the one the environment names (for a caller
/// with its own mirror, or a test with a local server); `CILIUM_CMP_OFFLINE` is not read.
pub fn obtain_from(
    version: &str,
    dir: Option<&Path>,
    download: Download<'_>,
    repo: &str,
) -> Result<ChartFiles, ObtainError> {
    fetch::check_repository(repo).map_err(|message| ObtainError::Repo {
        named: "the chart repository".into(),
        url: cilium_cmp_yaml::limits::quoted(repo),
        message,
    })?;
    obtain_inner(version, dir, download.into(), repo)
}

/// Whether this call may download, and if not, why (for the refusal).
#[derive(Clone, Copy)]
enum Allowed<'a> {
    Yes(&'a dyn Transport),
    Never,
    Offline,
}

impl<'a> From<Download<'a>> for Allowed<'a> {
    fn from(d: Download<'a>) -> Allowed<'a> {
        match d {
            Download::Never => Allowed::Never,
            Download::IfPinned(transport) => Allowed::Yes(transport),
        }
    }
}

fn obtain_inner(
    version: &str,
    dir: Option<&Path>,
    download: Allowed<'_>,
    repo: &str,
) -> Result<ChartFiles, ObtainError> {
    let name = release_name(version).ok_or_else(|| ObtainError::Name {
        version: cilium_cmp_yaml::limits::quoted(version),
    })?;
    let version = name.to_string();
    let dir = match dir {
        Some(d) => Some(d.to_path_buf()),
        None => store::default_dir(),
    };
    let shown = dir.as_ref().map_or_else(
        || "the chart folder (neither CILIUM_CMP_CHART_DIR nor HOME is set)".to_string(),
        |d| cilium_cmp_yaml::escape::text(&d.display().to_string()),
    );
    let unavailable = |why: String| ObtainError::Unavailable {
        version: version.clone(),
        dir: shown.clone(),
        why,
    };
    if let Some(d) = &dir {
        if let Some(chart) = store::open_stored(d, &version)? {
            return Ok(chart);
        }
    }
    let missing = format!("is not in {shown}");
    if super::pins::sha256_of(&version).is_none() {
        return Err(unavailable(format!(
            "{missing}; Cilium {version} is not a release this cilium-cmp pins, so it is never downloaded unasked (`chart fetch` checks it against the repository's index)"
        )));
    }
    let transport = match download {
        Allowed::Yes(transport) => transport,
        Allowed::Never => {
            return Err(unavailable(format!(
                "{missing}, and downloads are off here"
            )))
        }
        Allowed::Offline => {
            return Err(unavailable(format!(
                "{missing}, and downloads are off ({OFFLINE_VAR} is set)"
            )))
        }
    };
    let Some(dir) = dir else {
        return Err(unavailable(format!(
            "there is no folder to download it into ({} and HOME are unset)",
            store::CHART_DIR_VAR
        )));
    };
    let fetched = match fetch::fetch(&version, repo, Some(&dir), None, transport) {
        Ok(f) => f,
        // A tampered store is the user's to look at, not to be overwritten silently.
        Err(FetchError::Stored(e)) => return Err(e.into()),
        Err(e) => {
            return Err(unavailable(format!(
                "{missing}, and downloading it failed: {}",
                cilium_cmp_yaml::escape::message(&e.to_string())
            )))
        }
    };
    if fetched.downloaded {
        tracing::info!(
            "fetched {} (sha256 {}) into {shown}",
            name.archive_name(),
            fetched.sha256
        );
    }
    store::open_stored(&dir, &version)?
        .ok_or_else(|| unavailable(format!("{missing} after it was stored there")))
}

/// Whether `CILIUM_CMP_OFFLINE` forbids downloads: any value but empty, `0` or `false`.
fn offline() -> bool {
    std::env::var_os(OFFLINE_VAR).is_some_and(|v| !v.is_empty() && v != "0" && v != "false")
}

/// `CILIUM_CMP_CHART_REPO`, checked as `--repo` is, or the official repository.
fn repository() -> Result<String, ObtainError> {
    match std::env::var(REPO_VAR) {
        Ok(url) if !url.is_empty() => {
            fetch::check_repository(&url).map_err(|message| ObtainError::Repo {
                named: REPO_VAR.into(),
                url: cilium_cmp_yaml::limits::quoted(&url),
                message,
            })?;
            Ok(url)
        }
        Err(std::env::VarError::NotUnicode(_)) => Err(ObtainError::Repo {
            named: REPO_VAR.into(),
            url: "(not UTF-8)".into(),
            message: "not a URL".into(),
        }),
        _ => Ok(fetch::DEFAULT_REPO.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The client of calls that must be refused before any download: one that is asked fails
    /// the test.
    struct NoNetwork;

    impl Transport for NoNetwork {
        fn get(&self, request: &fetch::Request<'_>) -> Result<Vec<u8>, String> {
            panic!(
                "{} was asked for, but this call must not download",
                request.url
            )
        }
    }

    fn scratch(tag: &str) -> std::path::PathBuf {
        let dir =
            std::env::temp_dir().join(format!("cilium-cmp-obtain-{}-{tag}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    /// Neither an unpinned release nor `Download::Never` reaches the network; both name the
    /// three ways.
    #[test]
    fn refusals_name_the_three_ways() {
        let dir = scratch("refusals");
        for (version, download, says) in [
            (
                "1.20.99",
                Download::IfPinned(&NoNetwork),
                "never downloaded unasked",
            ),
            (
                "1.21.0-pre.1",
                Download::IfPinned(&NoNetwork),
                "never downloaded unasked",
            ),
            ("1.20.0", Download::Never, "downloads are off"),
        ] {
            let err = obtain(version, Some(&dir), download)
                .unwrap_err()
                .to_string();
            for part in [
                says,
                &format!("`cilium-cmp chart fetch {version}`"),
                "--chart-archive FILE",
                "CILIUM_CMP_CHART_DIR",
            ] {
                assert!(err.contains(part), "{err} lacks {part}");
            }
        }
        let err = obtain("1.20.0/../x", Some(&dir), Download::IfPinned(&NoNetwork)).unwrap_err();
        assert!(
            err.to_string().contains("not a Cilium release name"),
            "{err}"
        );
        assert!(!dir.exists(), "nothing is written");
    }

    #[test]
    fn a_stored_file_that_is_not_the_pinned_archive_is_not_replaced() {
        let dir = scratch("tampered");
        store::store(&dir, "cilium-1.20.0.tgz", b"not it").unwrap();
        let err = obtain("1.20.0", Some(&dir), Download::IfPinned(&NoNetwork))
            .unwrap_err()
            .to_string();
        assert!(err.contains("is not the official archive"), "{err}");
        assert_eq!(
            std::fs::read(dir.join("cilium-1.20.0.tgz")).unwrap(),
            b"not it"
        );
        std::fs::remove_dir_all(&dir).ok();
    }
}
