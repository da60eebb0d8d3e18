//! Bytes read once and shared by reference count: a chart's files, and the templates section of
//! a compiled chart, are slices of the one buffer they were read into, or of the compiled chart's
//! file mapped into memory. A render started by Argo CD reads a compiled chart of about 2.4 MB;
//! copying it out file by file cost more page faults than the render itself (ARCHITECTURE.md,
//! "Performance"), and a mapped file costs only the pages that are read.

use std::fmt;
use std::fs::File;
use std::ops::{Deref, Range};
use std::sync::Arc;

/// An immutable slice of a shared buffer; cloning it copies no bytes.
#[derive(Clone)]
pub struct SharedBytes {
    buffer: Arc<Buffer>,
    range: Range<usize>,
}

enum Buffer {
    Owned(Vec<u8>),
    Mapped(memmap2::Mmap),
}

impl Buffer {
    fn bytes(&self) -> &[u8] {
        match self {
            Buffer::Owned(v) => v,
            Buffer::Mapped(m) => m,
        }
    }
}

impl SharedBytes {
    /// The whole of `file`, mapped read-only.
    ///
    /// Only for files this program writes and never changes afterwards: a compiled chart is
    /// written whole to a new name and renamed into place (`chart::compiled`), so the file a map
    /// was made of keeps its bytes while the map lives, even when a newer one replaces its name.
    pub(crate) fn map_written_once(file: &File) -> std::io::Result<SharedBytes> {
        // SAFETY: the map is read-only, and what it maps is never written again (above). Whoever
        // may truncate or rewrite files in the user's cache may also change the user's programs,
        // which is outside what this program defends against (`chart::compiled`).
        #[allow(unsafe_code)]
        let map = unsafe { memmap2::MmapOptions::new().populate().map(file)? };
        let len = map.len();
        Ok(SharedBytes {
            buffer: Arc::new(Buffer::Mapped(map)),
            range: 0..len,
        })
    }

    /// The part of these bytes at `range` (relative to them); None when it lies outside.
    pub fn slice(&self, range: Range<usize>) -> Option<SharedBytes> {
        let start = self.range.start.checked_add(range.start)?;
        let end = self.range.start.checked_add(range.end)?;
        (start <= end && end <= self.range.end).then(|| SharedBytes {
            buffer: self.buffer.clone(),
            range: start..end,
        })
    }
}

impl From<Vec<u8>> for SharedBytes {
    fn from(bytes: Vec<u8>) -> SharedBytes {
        let len = bytes.len();
        SharedBytes {
            buffer: Arc::new(Buffer::Owned(bytes)),
            range: 0..len,
        }
    }
}

impl From<&[u8]> for SharedBytes {
    fn from(bytes: &[u8]) -> SharedBytes {
        SharedBytes::from(bytes.to_vec())
    }
}

impl Deref for SharedBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.buffer.bytes()[self.range.clone()]
    }
}

impl AsRef<[u8]> for SharedBytes {
    fn as_ref(&self) -> &[u8] {
        self
    }
}

impl PartialEq for SharedBytes {
    fn eq(&self, other: &SharedBytes) -> bool {
        **self == **other
    }
}

impl Eq for SharedBytes {}

impl fmt::Debug for SharedBytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SharedBytes({} bytes)", self.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slices_share_the_buffer_and_stay_inside_it() {
        let all = SharedBytes::from(b"hello, world".to_vec());
        let world = all.slice(7..12).unwrap();
        assert_eq!(&*world, b"world");
        assert_eq!(&*world.slice(1..3).unwrap(), b"or");
        assert!(world.slice(3..6).is_none());
        assert!(world.slice(Range { start: 4, end: 2 }).is_none());
        assert!(all.slice(usize::MAX..usize::MAX).is_none());
    }

    #[test]
    fn a_mapped_file_reads_as_its_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("blob");
        std::fs::write(&path, b"mapped bytes").unwrap();
        let mapped = SharedBytes::map_written_once(&File::open(&path).unwrap()).unwrap();
        assert_eq!(&*mapped, b"mapped bytes");
        assert_eq!(&*mapped.slice(7..12).unwrap(), b"bytes");
    }
}
