//! The official Cilium chart archive a user supplies: the only source of the files bundled in the
//! chart that this project may not copy (shell scripts, Grafana dashboards), and the source the
//! import step reads a new release's facts from.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use sha2::{Digest, Sha256};

use super::shared::SharedBytes;

/// Why a chart archive (or unpacked chart folder) cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ChartError {
    /// The archive or folder cannot be read, is too large, is not a gzipped tar, has no
    /// `Chart.yaml`, or its `Chart.yaml` is not YAML.
    #[error("cannot read the chart archive {path}: {message}")]
    Unreadable {
        /// The archive as the caller named it.
        path: String,
        /// What went wrong.
        message: String,
    },
    /// The chart's `Chart.yaml` gives another version than the one asked for
    /// ([`ChartFiles::check_version`]).
    #[error("the chart archive {path} is Cilium {found}, but --cilium-version is {wanted}; supply cilium-{wanted}.tgz")]
    WrongVersion {
        /// The archive as the caller named it.
        path: String,
        /// The version its `Chart.yaml` gives.
        found: String,
        /// The version asked for.
        wanted: String,
    },
    /// A file the caller needs is not in the chart ([`ChartFiles::text`]).
    #[error("the chart archive {path} has no file {file}")]
    Missing {
        /// The archive as the caller named it.
        path: String,
        /// The missing file's path inside the chart.
        file: String,
    },
}

/// The files of one chart, keyed by their path inside the chart (`files/agent/x.bash`).
#[derive(Debug, Clone)]
pub struct ChartFiles {
    path: String,
    /// Shared, so that renders of many folders in one process reuse one unpacked archive.
    files: Arc<BTreeMap<String, SharedBytes>>,
    /// The sha256 of the archive's bytes; None for an unpacked chart folder.
    digest: Option<[u8; 32]>,
    /// The parsed templates an earlier process compiled from this archive (`compiled`), for
    /// the engine to read instead of parsing.
    parsed: Option<SharedBytes>,
    version: Arc<OnceLock<String>>,
}

use cilium_cmp_yaml::limits::{MAX_ARCHIVE_BYTES, MAX_ARCHIVE_ENTRIES};

/// A reader that fails, with a message naming the bound, past `left` bytes: the decompressed
/// stream of an archive is cut there, so a small archive cannot unpack into gigabytes.
struct Bounded<R> {
    inner: R,
    left: u64,
}

impl<R: Read> Read for Bounded<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.left == 0 {
            // One byte more tells a stream that ends exactly at the bound from a longer one.
            let mut probe = [0u8; 1];
            return match self.inner.read(&mut probe)? {
                0 => Ok(0),
                _ => Err(std::io::Error::other(too_large())),
            };
        }
        let max = buf.len().min(self.left.min(usize::MAX as u64) as usize);
        let n = self.inner.read(&mut buf[..max])?;
        self.left -= n as u64;
        Ok(n)
    }
}

/// The most a tar header's size may reserve before its bytes are read: the largest file of an
/// official archive is well below it.
const MAX_ENTRY_PRESIZE: u64 = 4 << 20;

fn too_large() -> String {
    format!(
        "it unpacks to more than {MAX_ARCHIVE_BYTES} bytes or {MAX_ARCHIVE_ENTRIES} files; the official Cilium chart archives unpack to about 3 MB"
    )
}

impl ChartFiles {
    /// Opens a `.tgz` archive or an unpacked chart folder.
    pub fn open(path: &Path) -> Result<ChartFiles, ChartError> {
        let shown = path.display().to_string();
        let fail = |m: String| ChartError::Unreadable {
            path: shown.clone(),
            message: m,
        };
        if path.is_dir() {
            let files = read_dir(path, path).map_err(|e| fail(e.to_string()))?;
            return ChartFiles::checked(shown, files);
        }
        let (file, meta) =
            cilium_cmp_yaml::limits::open_regular(path).map_err(|e| fail(e.to_string()))?;
        let mut bytes = Vec::with_capacity(meta.len().min(MAX_ARCHIVE_BYTES) as usize + 1);
        file.take(MAX_ARCHIVE_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| fail(e.to_string()))?;
        if bytes.len() as u64 > MAX_ARCHIVE_BYTES {
            return Err(fail(too_large()));
        }
        ChartFiles::from_tgz_bytes(&shown, &bytes)
    }

    /// `open`, once per path and process: commands that render many folders (`diff` of a
    /// repository, `lock --check` of every folder) would otherwise unpack the same archive for
    /// each folder, which costs several times a render. Archives are not expected to change
    /// while one command runs.
    pub fn open_cached(path: &Path) -> Result<ChartFiles, ChartError> {
        static CACHE: OnceLock<Mutex<BTreeMap<PathBuf, ChartFiles>>> = OnceLock::new();
        let cache = CACHE.get_or_init(Default::default);
        if let Some(c) = cache.lock().ok().and_then(|m| m.get(path).cloned()) {
            return Ok(c);
        }
        let opened = ChartFiles::open(path)?;
        if let Ok(mut m) = cache.lock() {
            m.insert(path.to_path_buf(), opened.clone());
        }
        Ok(opened)
    }

    /// Reads a `.tgz` archive already in memory (one checked against its pinned sha256);
    /// `shown` names it in errors.
    /// An archive compiled by an earlier process (`compiled`) is read from its compiled form.
    pub fn from_tgz_bytes(shown: &str, bytes: &[u8]) -> Result<ChartFiles, ChartError> {
        Self::from_tgz_bytes_digested(shown, bytes, Sha256::digest(bytes).into())
    }

    /// `from_tgz_bytes` of bytes whose sha256 the caller has taken already (to check a pin), so
    /// a render does not hash its archive twice.
    pub fn from_tgz_bytes_digested(
        shown: &str,
        bytes: &[u8],
        digest: [u8; 32],
    ) -> Result<ChartFiles, ChartError> {
        if let Some((files, parsed)) = super::compiled::load(&digest) {
            if let Ok(mut chart) = ChartFiles::checked(shown.to_string(), files) {
                chart.digest = Some(digest);
                chart.parsed = Some(parsed);
                return Ok(chart);
            }
        }
        let files = read_tgz(bytes).map_err(|message| ChartError::Unreadable {
            path: shown.to_string(),
            message,
        })?;
        let mut chart = ChartFiles::checked(shown.to_string(), files)?;
        chart.digest = Some(digest);
        Ok(chart)
    }

    /// The sha256 of the archive's bytes; None for an unpacked chart folder.
    pub fn digest(&self) -> Option<&[u8; 32]> {
        self.digest.as_ref()
    }

    /// The templates section of the compiled chart this was read from, if it was.
    pub fn parsed(&self) -> Option<&SharedBytes> {
        self.parsed.as_ref()
    }

    /// A chart whose files were read elsewhere (a compiled chart, `crate::compiled_chart`);
    /// `shown` names it in errors.
    pub fn from_files(
        shown: &str,
        files: BTreeMap<String, Vec<u8>>,
    ) -> Result<ChartFiles, ChartError> {
        let files = files.into_iter().map(|(f, b)| (f, b.into())).collect();
        ChartFiles::checked(shown.to_string(), files)
    }

    /// Every file of the chart, keyed by its path inside it.
    pub fn files(&self) -> &BTreeMap<String, SharedBytes> {
        &self.files
    }

    fn checked(
        path: String,
        files: BTreeMap<String, SharedBytes>,
    ) -> Result<ChartFiles, ChartError> {
        if !files.contains_key("Chart.yaml") {
            return Err(ChartError::Unreadable {
                path,
                message: "no Chart.yaml: not a Helm chart".into(),
            });
        }
        Ok(ChartFiles {
            path,
            files: Arc::new(files),
            digest: None,
            parsed: None,
            version: Arc::default(),
        })
    }

    /// The chart's version, from Chart.yaml (read once).
    pub fn version(&self) -> Result<String, ChartError> {
        if let Some(v) = self.version.get() {
            return Ok(v.clone());
        }
        let v = self.read_version()?;
        let _ = self.version.set(v.clone());
        Ok(v)
    }

    fn read_version(&self) -> Result<String, ChartError> {
        let text = self.text("Chart.yaml")?;
        let doc =
            cilium_cmp_yaml::yaml::parse_values(&text).map_err(|e| ChartError::Unreadable {
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
        Ok(match std::str::from_utf8(data) {
            Ok(text) => text.to_string(),
            Err(_) => String::from_utf8_lossy(data).into_owned(),
        })
    }

    /// A bundled file's bytes; None when there is no such file.
    pub fn bytes(&self, file: &str) -> Option<&[u8]> {
        self.files.get(file).map(|b| &b[..])
    }

    /// Paths of the bundled files below `folder`, sorted (as Helm's `.Files.Glob` returns them).
    pub fn list(&self, folder: &str) -> Vec<&str> {
        self.files
            .keys()
            .filter(|k| k.starts_with(folder))
            .map(String::as_str)
            .collect()
    }

    /// The archive or folder as it was named when opened, for messages.
    pub fn path(&self) -> &str {
        &self.path
    }
}

/// The files of a gzipped tar archive, within the bounds of `limits`.
fn read_tgz(source: impl Read) -> Result<BTreeMap<String, SharedBytes>, String> {
    let gz = flate2::read::GzDecoder::new(source.take(MAX_ARCHIVE_BYTES));
    let mut archive = tar::Archive::new(Bounded {
        inner: gz,
        left: MAX_ARCHIVE_BYTES,
    });
    let mut files = BTreeMap::new();
    let entries = archive
        .entries()
        .map_err(|e| format!("not a gzipped tar archive ({e})"))?;
    for (count, entry) in entries.enumerate() {
        if count >= MAX_ARCHIVE_ENTRIES {
            return Err(too_large());
        }
        let mut entry = entry.map_err(|e| format!("not a gzipped tar archive ({e})"))?;
        if !entry.header().entry_type().is_file() {
            continue;
        }
        let name = entry
            .path()
            .map_err(|e| e.to_string())?
            .to_string_lossy()
            .into_owned();
        // Chart archives hold one top folder (`cilium/`); paths are kept below it.
        let inner = match name.split_once('/') {
            Some((_, rest)) => rest.to_string(),
            None => name,
        };
        // Sized from the header (bounded: a header may claim anything), so the buffer is
        // neither grown nor cleared more than once.
        let mut data = Vec::with_capacity(entry.size().min(MAX_ENTRY_PRESIZE) as usize);
        entry.read_to_end(&mut data).map_err(|e| e.to_string())?;
        files.insert(inner, data.into());
    }
    Ok(files)
}

/// An unpacked chart folder, within the same bounds as an archive; links are not followed.
fn read_dir(root: &Path, dir: &Path) -> std::io::Result<BTreeMap<String, SharedBytes>> {
    let mut out = BTreeMap::new();
    let mut stack: Vec<PathBuf> = vec![dir.to_path_buf()];
    let mut bytes = 0u64;
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d)? {
            let entry = entry?;
            let kind = entry.file_type()?;
            let p = entry.path();
            if kind.is_dir() {
                stack.push(p);
            } else if kind.is_file() {
                bytes += entry.metadata()?.len();
                if bytes > MAX_ARCHIVE_BYTES || out.len() >= MAX_ARCHIVE_ENTRIES {
                    return Err(std::io::Error::other(too_large()));
                }
                if let Ok(rel) = p.strip_prefix(root) {
                    let mut data = Vec::new();
                    cilium_cmp_yaml::limits::open_regular(&p)?
                        .0
                        .read_to_end(&mut data)?;
                    out.insert(rel.to_string_lossy().replace('\\', "/"), data.into());
                }
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn archive_with(entries: &[(&str, u64)]) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("cilium-cmp-chart-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(format!("{}.tgz", entries.len()));
        let gz = flate2::write::GzEncoder::new(
            std::fs::File::create(&path).unwrap(),
            flate2::Compression::fast(),
        );
        let mut tar = tar::Builder::new(gz);
        for (name, size) in entries {
            let mut header = tar::Header::new_gnu();
            header.set_size(*size);
            header.set_mode(0o644);
            header.set_cksum();
            tar.append_data(&mut header, name, std::io::repeat(0).take(*size))
                .unwrap();
        }
        tar.into_inner().unwrap().finish().unwrap();
        path
    }

    #[test]
    fn an_archive_that_unpacks_too_large_is_refused_quickly() {
        let started = std::time::Instant::now();
        let path = archive_with(&[
            ("cilium/Chart.yaml", 10),
            ("cilium/big", MAX_ARCHIVE_BYTES + 10),
        ]);
        let err = ChartFiles::open(&path).unwrap_err().to_string();
        assert!(err.contains("unpacks to more than"), "{err}");
        assert!(started.elapsed().as_secs() < 10);
        std::fs::remove_file(path).ok();
    }

    #[test]
    fn an_archive_of_too_many_files_is_refused() {
        let names: Vec<String> = (0..=MAX_ARCHIVE_ENTRIES)
            .map(|i| format!("cilium/f{i}"))
            .collect();
        let entries: Vec<(&str, u64)> = names.iter().map(|n| (n.as_str(), 0)).collect();
        let path = archive_with(&entries);
        let err = ChartFiles::open(&path).unwrap_err().to_string();
        assert!(err.contains("unpacks to more than"), "{err}");
        std::fs::remove_file(path).ok();
    }
}
