//! Release day: a Cilium release this binary does not list, rendered from its official archive.
//!
//! The engine evaluates any release's templates, so what such a release needs besides them are
//! the facts the policy layers read, which a listed release has compiled in (`data/VERSION/`):
//! its defaults, its values schema and the value paths its templates read. They are read from
//! the archive by the code `import-chart` runs (`import::facts`), so an unlisted release is
//! checked exactly as a listed one. A pre-release (`1.21.0-pre.1`) is read only when asked for
//! by its exact name, with a warning.
//!
//! Trust is the caller's: this module reads only an archive it is handed (`--chart-archive`, the
//! chart folder, the plugin's `CILIUM_CMP_CHART_DIR`, or one `chart fetch` checked against the
//! repository index or a `--sha256`).

use super::archive::ChartFiles;
use crate::versions::{self, CiliumVersion};

/// Why an archive is not read as the release asked for.
#[derive(Debug, thiserror::Error)]
pub enum UnlistedError {
    /// The archive's `Chart.yaml` gives another version than the one requested (a `v` prefix
    /// on the request is ignored).
    #[error("the chart archive {path} is Cilium {found}, but the requested version is {wanted}; supply cilium-{wanted}.tgz")]
    WrongVersion {
        /// The archive as it was opened.
        path: String,
        /// The version its `Chart.yaml` gives.
        found: String,
        /// The version requested.
        wanted: String,
    },
    /// The archive's version is not a release name, so its facts cannot be registered.
    #[error("the chart archive {path} is version {found}, which is not a Cilium release (X.Y.Z, or X.Y.Z-PRE for a pre-release)")]
    NotARelease {
        /// The archive as it was opened.
        path: String,
        /// The version its `Chart.yaml` gives.
        found: String,
    },
    /// The release is older than the oldest line this binary renders
    /// ([`versions::OLDEST_LINE`]).
    #[error(
        "the chart archive {path} is Cilium {found}; cilium-cmp renders Cilium 1.18.0 and later"
    )]
    TooOld {
        /// The archive as it was opened.
        path: String,
        /// The version its `Chart.yaml` gives.
        found: String,
    },
    /// The version cannot be read, or the facts a render needs (defaults, schema, value paths)
    /// cannot be imported from the archive.
    #[error("the chart archive {path} cannot be read as a Cilium chart: {message}")]
    Unreadable {
        /// The archive as it was opened.
        path: String,
        /// What failed.
        message: String,
    },
}

/// Reads `chart` as the release `requested`, which this binary does not list (or lists, when the
/// replay tests ask for a listed release to be read as if it were new).
pub fn open(chart: &ChartFiles, requested: &str) -> Result<CiliumVersion, Box<UnlistedError>> {
    let path = chart.path().to_string();
    let unreadable = |message: String| {
        Box::new(UnlistedError::Unreadable {
            path: path.clone(),
            message,
        })
    };
    let found = chart.version().map_err(|e| unreadable(e.to_string()))?;
    let wanted = requested.strip_prefix('v').unwrap_or(requested);
    if found != wanted {
        return Err(Box::new(UnlistedError::WrongVersion {
            path,
            found,
            wanted: wanted.to_string(),
        }));
    }
    let Some(name) = crate::release_name::release_name(&found) else {
        return Err(Box::new(UnlistedError::NotARelease { path, found }));
    };
    if (name.major, name.minor) < versions::OLDEST_LINE {
        return Err(Box::new(UnlistedError::TooOld { path, found }));
    }
    let facts = super::import::facts(chart).map_err(|e| unreadable(format!("{e:#}")))?;
    let mut key = String::new();
    for part in [&facts.version, &facts.values, &facts.schema, &facts.keys] {
        key.push_str(&super::store::sha256_hex(part.as_bytes()));
    }
    let release = versions::register_archive(&key, facts)
        .ok_or_else(|| unreadable("its version is not a release number".into()))?;
    if name.pre.is_some() {
        tracing::warn!(
            "Cilium {found} is a pre-release: rendered from {path} because it was asked for by name; do not run it in production"
        );
    } else {
        tracing::info!(
            "Cilium {found} is not a release this cilium-cmp lists; rendered from {path}, with its defaults and schema"
        );
    }
    Ok(release)
}
