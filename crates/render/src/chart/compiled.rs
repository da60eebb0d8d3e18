//! Compiled charts: a chart archive's files, unpacked, and its templates, parsed, in one file of
//! the user's cache, written by the first process that reads the archive and read by every later
//! one. A render Argo CD starts is a process of its own; without this it would spend about two
//! thirds of its time unpacking the archive and parsing its templates (ARCHITECTURE.md,
//! "Performance").
//!
//! A compiled chart is a cache, never a source. It is found by the sha256 of the archive bytes
//! it was made from, and it names the build that wrote it (`BUILD`, a hash of the program's
//! source that build.rs makes), so a file from another archive or another build is never read; a
//! damaged one (its CRC-32 does not match) is ignored and written again. Files are replaced whole (a new file renamed over
//! the name), so a reader never sees half of one. The folder is the user's own cache, as the
//! chart store is: whoever may write there may also change the user's programs, so nothing here
//! defends against that.
//!
//! Where: `$CILIUM_CMP_COMPILED_DIR` when set (`off` turns compiled charts off), else
//! `$XDG_CACHE_HOME/cilium-cmp/compiled`, else `~/.cache/cilium-cmp/compiled` (in the sidecar
//! image `HOME` is `/tmp`, the repo-server's writable volume).

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use super::shared::SharedBytes;

const MAGIC: &[u8; 8] = b"ccmpchrt";

/// The build that writes and reads compiled charts (see the module's documentation).
pub const BUILD: &str = env!("CILIUM_CMP_ENGINE_BUILD");

/// The variable naming the folder of compiled charts, or `off`.
pub const DIR_VAR: &str = "CILIUM_CMP_COMPILED_DIR";

/// The largest compiled chart read: an archive unpacks to at most `MAX_ARCHIVE_BYTES`, and its
/// compiled form holds those files, their templates' text once more and the parsed trees.
const MAX_COMPILED_BYTES: u64 = 4 * cilium_cmp_yaml::limits::MAX_ARCHIVE_BYTES;

/// The folder of compiled charts; None when they are turned off or there is no cache folder.
pub fn dir() -> Option<PathBuf> {
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    if let Some(d) = var(DIR_VAR) {
        return (d != "off").then(|| PathBuf::from(d));
    }
    // The XDG base directory rules ignore a relative XDG_CACHE_HOME.
    let cache = var("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| var("HOME").map(|home| Path::new(&home).join(".cache")))?;
    Some(cache.join("cilium-cmp").join("compiled"))
}

fn hex(digest: &[u8; 32]) -> String {
    super::pins::hex(digest)
}

fn file_name(digest: &[u8; 32]) -> String {
    format!("{}-{BUILD}.bin", hex(digest))
}

/// A compiled chart as read: the archive's files, and the templates section, all slices of the
/// one mapped file (`shared`).
pub type Loaded = (BTreeMap<String, SharedBytes>, SharedBytes);

/// The files and the templates section (`engine::compiled`) compiled from the archive whose
/// sha256 is `digest`; None when there is none, or it is another build's or damaged.
pub fn load(digest: &[u8; 32]) -> Option<Loaded> {
    let path = dir()?.join(file_name(digest));
    let (file, meta) = cilium_cmp_yaml::limits::open_regular(&path).ok()?;
    if meta.len() > MAX_COMPILED_BYTES {
        return None;
    }
    // Mapped, not read: files are replaced whole, never written in place (see `write`).
    let blob = SharedBytes::map_written_once(&file).ok()?;
    decode(&blob, digest)
}

/// Writes the compiled chart of the archive whose sha256 is `digest`, and removes what other
/// builds compiled from it. A cache: what fails is left out, silently but for a debug line.
pub fn store(digest: &[u8; 32], files: &BTreeMap<String, SharedBytes>, templates: &[u8]) {
    let Some(dir) = dir() else { return };
    if let Err(e) = write(&dir, digest, files, templates) {
        tracing::debug!("compiled chart not written to {}: {e}", dir.display());
    }
}

fn write(
    dir: &Path,
    digest: &[u8; 32],
    files: &BTreeMap<String, SharedBytes>,
    templates: &[u8],
) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let name = file_name(digest);
    let temp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    // Written through a buffer, not built whole first: a first use holds the archive's files
    // and their trees already, and a third copy of them would raise its peak memory.
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&temp)
        .and_then(|f| {
            let mut out = std::io::BufWriter::with_capacity(1 << 16, f);
            write_compiled(&mut out, digest, files, templates)?;
            out.flush()
        });
    // No fsync: a file cut short by a crash is refused when read, and written again.
    let renamed = written.and_then(|()| std::fs::rename(&temp, dir.join(&name)));
    if renamed.is_err() {
        let _ = std::fs::remove_file(&temp);
        return renamed;
    }
    // Another build's compiled form of this archive is never read again; beyond `KEPT`
    // compiled charts (tests and release days make new archives), the oldest go.
    let stale = format!("{}-", hex(digest));
    let mut kept = Vec::new();
    for entry in std::fs::read_dir(dir)?.flatten() {
        let other = entry.file_name().to_string_lossy().into_owned();
        if other.starts_with('.') && other.ends_with(".tmp") {
            // A writer killed between create and rename leaves its temporary file; one being
            // written now is younger than a minute (writing takes milliseconds).
            let age = entry
                .metadata()
                .and_then(|m| m.modified())
                .ok()
                .and_then(|m| m.elapsed().ok());
            if age.is_some_and(|a| a > ABANDONED_AFTER) {
                let _ = std::fs::remove_file(entry.path());
            }
            continue;
        }
        if !other.ends_with(".bin") || other == name {
            continue;
        }
        if other.starts_with(&stale) {
            let _ = std::fs::remove_file(entry.path());
        } else if let Ok(modified) = entry.metadata().and_then(|m| m.modified()) {
            kept.push((modified, entry.path()));
        }
    }
    if kept.len() >= KEPT {
        kept.sort();
        for (_, old) in &kept[..kept.len() + 1 - KEPT] {
            let _ = std::fs::remove_file(old);
        }
    }
    Ok(())
}

/// How many compiled charts the folder keeps: every supported release's, with room for more.
const KEPT: usize = 64;

/// A temporary file older than this was left by a writer that died before renaming it.
const ABANDONED_AFTER: std::time::Duration = std::time::Duration::from_secs(600);

/// The compiled chart's bytes (what `write` writes; for the tests).
#[cfg(test)]
fn encode(digest: &[u8; 32], files: &BTreeMap<String, SharedBytes>, templates: &[u8]) -> Vec<u8> {
    let mut out = std::io::Cursor::new(Vec::new());
    write_compiled(&mut out, digest, files, templates).expect("a Vec takes every write");
    out.into_inner()
}

/// Writes a compiled chart to `out`: the header, a CRC-32 of what follows it, the files and the
/// templates section. The CRC is taken while writing and put in its place at the end.
fn write_compiled<W: Write + std::io::Seek>(
    out: &mut W,
    digest: &[u8; 32],
    files: &BTreeMap<String, SharedBytes>,
    templates: &[u8],
) -> std::io::Result<()> {
    out.write_all(MAGIC)?;
    put(out, BUILD.as_bytes())?;
    out.write_all(digest)?;
    let crc_at = out.stream_position()?;
    out.write_all(&[0; 4])?;
    let mut body = Checked {
        out: &mut *out,
        crc: crc32fast::Hasher::new(),
    };
    body.write_all(&(files.len() as u64).to_le_bytes())?;
    for (name, bytes) in files {
        put(&mut body, name.as_bytes())?;
        put(&mut body, bytes)?;
    }
    put(&mut body, templates)?;
    let crc = body.crc.finalize();
    out.seek(std::io::SeekFrom::Start(crc_at))?;
    out.write_all(&crc.to_le_bytes())?;
    out.seek(std::io::SeekFrom::End(0))?;
    Ok(())
}

/// A writer that keeps the CRC-32 of what passes through it.
struct Checked<'a, W: Write> {
    out: &'a mut W,
    crc: crc32fast::Hasher,
}

impl<W: Write> Write for Checked<'_, W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.out.write(buf)?;
        self.crc.update(&buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

fn put(out: &mut impl Write, bytes: &[u8]) -> std::io::Result<()> {
    out.write_all(&(bytes.len() as u64).to_le_bytes())?;
    out.write_all(bytes)
}

fn decode(blob: &SharedBytes, digest: &[u8; 32]) -> Option<Loaded> {
    let mut c = Cursor { blob, at: 0 };
    if c.take(MAGIC.len())? != MAGIC || c.sized()? != BUILD.as_bytes() || c.take(32)? != digest {
        return None;
    }
    // A changed byte that would still read as some chart (a letter of a bundled script) is
    // caught here: such a file is refused, not rendered from.
    let crc = u32::from_le_bytes(c.take(4)?.try_into().ok()?);
    if crc32fast::hash(blob.get(c.at..)?) != crc {
        return None;
    }
    let count = c.u64()?;
    if count > cilium_cmp_yaml::limits::MAX_ARCHIVE_ENTRIES as u64 {
        return None;
    }
    let mut files = BTreeMap::new();
    for _ in 0..count {
        let name = std::str::from_utf8(c.sized()?).ok()?.to_string();
        files.insert(name, c.sized_shared()?);
    }
    let templates = c.sized_shared()?;
    (c.at == blob.len()).then_some((files, templates))
}

/// Reads a blob front to back; every read is checked against what is left.
struct Cursor<'a> {
    blob: &'a SharedBytes,
    at: usize,
}

impl<'a> Cursor<'a> {
    fn range(&mut self, n: usize) -> Option<std::ops::Range<usize>> {
        let to = self.at.checked_add(n).filter(|&to| to <= self.blob.len())?;
        let range = self.at..to;
        self.at = to;
        Some(range)
    }
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let range = self.range(n)?;
        let blob: &'a [u8] = self.blob;
        blob.get(range)
    }
    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
    fn sized(&mut self) -> Option<&'a [u8]> {
        let n = usize::try_from(self.u64()?).ok()?;
        self.take(n)
    }
    /// A sized part as a slice of the blob, sharing its bytes.
    fn sized_shared(&mut self) -> Option<SharedBytes> {
        let n = usize::try_from(self.u64()?).ok()?;
        let range = self.range(n)?;
        self.blob.slice(range)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> ([u8; 32], BTreeMap<String, SharedBytes>, SharedBytes) {
        let mut files = BTreeMap::new();
        files.insert("Chart.yaml".to_string(), b"name: x\n".to_vec().into());
        files.insert("files/a.sh".to_string(), vec![0, 1, 2].into());
        ([7u8; 32], files, b"section".to_vec().into())
    }

    fn decode(blob: &[u8], digest: &[u8; 32]) -> Option<Loaded> {
        super::decode(&SharedBytes::from(blob), digest)
    }

    #[test]
    fn reads_back_what_it_wrote() {
        let (digest, files, templates) = sample();
        let blob = encode(&digest, &files, &templates);
        assert_eq!(decode(&blob, &digest), Some((files, templates)));
    }

    #[test]
    fn another_archive_or_a_damaged_file_is_not_read() {
        let (digest, files, templates) = sample();
        let blob = encode(&digest, &files, &templates);
        assert_eq!(decode(&blob, &[8u8; 32]), None);
        for cut in 0..blob.len() {
            assert_eq!(decode(&blob[..cut], &digest), None, "cut at {cut}");
        }
        for i in 0..blob.len() {
            let mut changed = blob.clone();
            changed[i] ^= 0x20;
            assert_eq!(decode(&changed, &digest), None, "byte {i} changed");
        }
        let mut longer = blob.clone();
        longer.push(0);
        assert_eq!(decode(&longer, &digest), None);
        // A length far beyond the file is refused, not reserved.
        let mut huge = blob.clone();
        let at = MAGIC.len();
        huge[at..at + 8].copy_from_slice(&u64::MAX.to_le_bytes());
        assert_eq!(decode(&huge, &digest), None);
    }
}
