//! Where the official chart archives live on a machine, so that after `cilium-cmp chart fetch
//! VERSION` every command that needs a file bundled in the chart finds it without a flag.
//!
//! One folder serves both storing and looking up: `$CILIUM_CMP_CHART_DIR` when set (the sidecar
//! image sets it), else the image's `/opt/cilium-cmp/charts` where that folder exists, else the
//! user's cache (`$XDG_CACHE_HOME/cilium-cmp/charts`, or `~/.cache/cilium-cmp/charts`), which a
//! laptop has and may write.

use std::io::Read;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::archive::ChartFiles;
use super::pins;
use cilium_cmp_yaml::limits::MAX_DOWNLOAD_BYTES;

/// Where the sidecar image puts the official chart archives.
pub const DEFAULT_CHART_DIR: &str = "/opt/cilium-cmp/charts";
/// The variable naming another folder of chart archives.
pub const CHART_DIR_VAR: &str = "CILIUM_CMP_CHART_DIR";

/// A stored archive that cannot be used: unreadable, too large, or for a pinned release not
/// the pinned bytes (a store that looks tampered with is reported, never overwritten).
#[derive(Debug, thiserror::Error)]
#[error("{path}: {message}")]
pub struct StoreError {
    /// The stored file.
    pub path: String,
    /// What is wrong with it, and for a wrong archive how to replace it.
    pub message: String,
}

/// The archive's file name for a release (`cilium-1.20.0.tgz`).
pub fn archive_name(version: &str) -> String {
    format!("cilium-{version}.tgz")
}

/// The folder archives are stored in and looked up from when no flag names one; None only when
/// neither the variable, the image's folder nor a home folder exists.
pub fn default_dir() -> Option<PathBuf> {
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    if let Some(dir) = var(CHART_DIR_VAR) {
        return Some(PathBuf::from(dir));
    }
    if Path::new(DEFAULT_CHART_DIR).is_dir() {
        return Some(PathBuf::from(DEFAULT_CHART_DIR));
    }
    // The XDG base directory rules ignore a relative XDG_CACHE_HOME.
    let cache = var("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| var("HOME").map(|home| Path::new(&home).join(".cache")))?;
    Some(cache.join("cilium-cmp").join("charts"))
}

/// The sha256 (lowercase hex) of bytes.
pub fn sha256_hex(bytes: &[u8]) -> String {
    pins::hex(&Sha256::digest(bytes))
}

/// Reads a stored archive of at most `MAX_DOWNLOAD_BYTES`; None when there is no such file.
pub fn read_stored(path: &Path) -> Result<Option<Vec<u8>>, StoreError> {
    let fail = |message: String| StoreError {
        path: path.display().to_string(),
        message,
    };
    let (file, meta) = match cilium_cmp_yaml::limits::open_regular(path) {
        Ok(found) => found,
        Err(e) if e.is_not_found() => return Ok(None),
        Err(e) => return Err(fail(e.to_string())),
    };
    // Sized once: growing the buffer as it fills copied it four times over, about 140 of a
    // render's page faults.
    let mut bytes = Vec::with_capacity(meta.len().min(MAX_DOWNLOAD_BYTES) as usize + 1);
    file.take(MAX_DOWNLOAD_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| fail(format!("cannot be read: {e}")))?;
    if bytes.len() as u64 > MAX_DOWNLOAD_BYTES {
        return Err(fail(format!(
            "is larger than {MAX_DOWNLOAD_BYTES} bytes; the official archives are about 210 KB"
        )));
    }
    Ok(Some(bytes))
}

/// The stored archive of `version` in `dir`; None when it is not there. A supported release's
/// is checked against its pin before use, so a render that finds it by default is the same on
/// every machine. A release this binary does not list has no pin: its archive is used because
/// the user placed it there (or fetched it naming its digest, `chart fetch --sha256`), and a
/// render reads it only as the twin of a listed release (`chart::twin`).
pub fn open_stored(dir: &Path, version: &str) -> Result<Option<ChartFiles>, StoreError> {
    let path = dir.join(archive_name(version));
    let Some(bytes) = read_stored(&path)? else {
        return Ok(None);
    };
    let fail = |message: String| StoreError {
        path: path.display().to_string(),
        message,
    };
    let digest: [u8; 32] = Sha256::digest(&bytes).into();
    if let Some(pinned) = pins::sha256_of(version) {
        let got = pins::hex(&digest);
        if got != pinned {
            return Err(fail(format!(
                "is not the official archive of Cilium {version} (sha256 {got}, pinned {pinned}); delete it and run `cilium-cmp chart fetch {version}`"
            )));
        }
    }
    ChartFiles::from_tgz_bytes_digested(&path.display().to_string(), &bytes, digest)
        .map(Some)
        .map_err(|e| fail(e.to_string()))
}

/// Writes `bytes` as `dir/name` whole or not at all: into a new temporary file in `dir` (created
/// exclusively, so never an existing file or a planted link), flushed to disk, then renamed over
/// the name. Makes `dir` if needed. The store is the program's own folder, so nothing forces a
/// write there: a link, a hard-linked or a read-only archive in it is refused (`replace_file`).
pub fn store(dir: &Path, name: &str, bytes: &[u8]) -> std::io::Result<PathBuf> {
    std::fs::create_dir_all(dir)?;
    let target = dir.join(name);
    crate::replace_file::replace(&target, bytes, crate::replace_file::Force::Never)?;
    Ok(target)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(tag: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("cilium-cmp-store-{}-{tag}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn store_writes_whole_files_and_leaves_no_temporary_file() {
        let dir = scratch("store").join("made/on/demand");
        let path = store(&dir, "x.tgz", b"first").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"first");
        store(&dir, "x.tgz", b"second").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"second");
        let names: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("x.tgz")]);
        std::fs::remove_dir_all(scratch("store")).ok();
    }

    #[test]
    fn a_stored_file_that_is_not_the_pinned_archive_is_refused() {
        let dir = scratch("pins");
        assert!(open_stored(&dir, "1.20.0").unwrap().is_none());
        store(&dir, &archive_name("1.20.0"), b"not the archive").unwrap();
        let err = open_stored(&dir, "1.20.0").unwrap_err().to_string();
        assert!(
            err.contains("is not the official archive of Cilium 1.20.0"),
            "{err}"
        );
        assert!(err.contains("cilium-cmp chart fetch 1.20.0"), "{err}");
        std::fs::remove_dir_all(&dir).ok();
    }
}
