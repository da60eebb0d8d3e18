//! Replacing a file whole or not at all: the lock, `-o` outputs, stored chart archives.
//!
//! The bytes go to a new temporary file beside the target, created exclusively (so it is never
//! an existing file, another run's file or a link a repository planted), flushed to disk, then
//! renamed over the target (which replaces a link at the target instead of writing through it).
//! A failure removes the temporary file and leaves the target as it was.

use std::io::Write;
use std::path::{Path, PathBuf};

/// Writes `bytes` as `path`, whole or not at all.
pub fn replace(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .ok_or_else(|| std::io::Error::other("not a file name"))?
        .to_string_lossy();
    let (tmp, mut file) = exclusive_temp(dir, &name)?;
    let written = file
        .write_all(bytes)
        .and_then(|()| file.sync_all())
        .and_then(|()| std::fs::rename(&tmp, path));
    if let Err(e) = written {
        std::fs::remove_file(&tmp).ok();
        return Err(e);
    }
    Ok(())
}

/// A new file in `dir` named after `name`, this process and an attempt number.
fn exclusive_temp(dir: &Path, name: &str) -> std::io::Result<(PathBuf, std::fs::File)> {
    let mut attempt = 0u32;
    loop {
        let tmp = dir.join(format!(".{name}.{}.{attempt}.tmp", std::process::id()));
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
        {
            Ok(file) => return Ok((tmp, file)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && attempt < 100 => {
                attempt += 1
            }
            Err(e) => return Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_whole_and_leaves_no_temporary_file() {
        let dir = std::env::temp_dir().join(format!("cilium-cmp-replace-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let target = dir.join("out.yaml");
        std::fs::write(&target, "old").unwrap();
        // A file another run left under the first temporary name is skipped, not overwritten.
        let taken = dir.join(format!(".out.yaml.{}.0.tmp", std::process::id()));
        std::fs::write(&taken, "theirs").unwrap();
        replace(&target, b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "new");
        assert_eq!(std::fs::read_to_string(&taken).unwrap(), "theirs");
        std::fs::remove_file(&taken).unwrap();
        let left: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
        assert_eq!(left.len(), 1, "only the target remains");
        // Into a folder that does not exist: an error, nothing written.
        assert!(replace(&dir.join("missing/out.yaml"), b"x").is_err());
        std::fs::remove_dir_all(&dir).ok();
    }
}
