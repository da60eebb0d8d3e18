//! The official Cilium chart archive a user supplies: the only source of the files bundled in the
//! chart that this project may not copy (shell scripts, Grafana dashboards), and the source the
//! import step reads a new release's facts from.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum ChartError {
    #[error("cannot read the chart archive {path}: {message}")]
    Unreadable { path: String, message: String },
    #[error("the chart archive {path} is Cilium {found}, but --cilium-version is {wanted}; supply cilium-{wanted}.tgz")]
    WrongVersion {
        path: String,
        found: String,
        wanted: String,
    },
    #[error("the chart archive {path} has no file {file}")]
    Missing { path: String, file: String },
}

/// The files of one chart, keyed by their path inside the chart (`files/agent/x.bash`).
#[derive(Debug, Clone)]
pub struct ChartFiles {
    path: String,
    files: BTreeMap<String, Vec<u8>>,
}

/// Archives larger than this are refused rather than read into memory.
const MAX_ARCHIVE_BYTES: u64 = 64 * 1024 * 1024;

impl ChartFiles {
    /// Opens a `.tgz` archive or an unpacked chart folder.
    pub fn open(path: &Path) -> Result<ChartFiles, ChartError> {
        let shown = path.display().to_string();
        let fail = |m: String| ChartError::Unreadable {
            path: shown.clone(),
            message: m,
        };
        let files = if path.is_dir() {
            read_dir(path, path).map_err(|e| fail(e.to_string()))?
        } else {
            let file = std::fs::File::open(path).map_err(|e| fail(e.to_string()))?;
            let gz = flate2::read::GzDecoder::new(file.take(MAX_ARCHIVE_BYTES));
            let mut archive = tar::Archive::new(gz);
            let mut files = BTreeMap::new();
            let entries = archive
                .entries()
                .map_err(|e| fail(format!("not a gzipped tar archive ({e})")))?;
            for entry in entries {
                let mut entry =
                    entry.map_err(|e| fail(format!("not a gzipped tar archive ({e})")))?;
                if !entry.header().entry_type().is_file() {
                    continue;
                }
                let name = entry
                    .path()
                    .map_err(|e| fail(e.to_string()))?
                    .to_string_lossy()
                    .into_owned();
                // Chart archives hold one top folder (`cilium/`); paths are kept below it.
                let inner = match name.split_once('/') {
                    Some((_, rest)) => rest.to_string(),
                    None => name,
                };
                let mut data = Vec::new();
                entry
                    .read_to_end(&mut data)
                    .map_err(|e| fail(e.to_string()))?;
                files.insert(inner, data);
            }
            files
        };
        if !files.contains_key("Chart.yaml") {
            return Err(fail("no Chart.yaml: not a Helm chart".into()));
        }
        Ok(ChartFiles { path: shown, files })
    }

    /// The chart's version, from Chart.yaml.
    pub fn version(&self) -> Result<String, ChartError> {
        let text = self.text("Chart.yaml")?;
        let doc = crate::yaml::parse_values(&text).map_err(|e| ChartError::Unreadable {
            path: self.path.clone(),
            message: format!("Chart.yaml: {e}"),
        })?;
        Ok(crate::tmpl::print(&doc.value["version"]))
    }

    /// Refuses an archive of another Cilium version.
    pub fn check_version(&self, wanted: &str) -> Result<(), ChartError> {
        let found = self.version()?;
        if found != wanted {
            return Err(ChartError::WrongVersion {
                path: self.path.clone(),
                found,
                wanted: wanted.to_string(),
            });
        }
        Ok(())
    }

    /// A bundled file as text.
    pub fn text(&self, file: &str) -> Result<String, ChartError> {
        let data = self.files.get(file).ok_or_else(|| ChartError::Missing {
            path: self.path.clone(),
            file: file.to_string(),
        })?;
        Ok(String::from_utf8_lossy(data).into_owned())
    }

    /// Paths of the bundled files below `folder`, sorted (as Helm's `.Files.Glob` returns them).
    pub fn list(&self, folder: &str) -> Vec<&str> {
        self.files
            .keys()
            .filter(|k| k.starts_with(folder))
            .map(String::as_str)
            .collect()
    }

    pub fn path(&self) -> &str {
        &self.path
    }
}

fn read_dir(root: &Path, dir: &Path) -> std::io::Result<BTreeMap<String, Vec<u8>>> {
    let mut out = BTreeMap::new();
    let mut stack: Vec<PathBuf> = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d)? {
            let p = entry?.path();
            if p.is_dir() {
                stack.push(p);
            } else if let Ok(rel) = p.strip_prefix(root) {
                out.insert(rel.to_string_lossy().replace('\\', "/"), std::fs::read(&p)?);
            }
        }
    }
    Ok(out)
}
