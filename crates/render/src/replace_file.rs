//! Replacing a file whole or not at all: `fix-values`, the lock, `-o` outputs, stored chart
//! archives.
//!
//! The bytes go to a new temporary file beside the target, created exclusively (so it is never
//! an existing file, another run's file or a link a repository planted), flushed to disk, then
//! renamed over the target. A failure removes the temporary file and leaves the target as it was.
//!
//! What is guaranteed about the file that takes the target's place:
//!
//! - **It keeps the target's intent.** An existing file's permission bits (a 0600 values file
//!   holding keys stays 0600) and, where the system permits, its owner and group are given to the
//!   temporary file before any byte is written to it. The temporary file is created 0600, so the
//!   content is never readable by anyone the target did not let read it, not even for a moment.
//!   A new file gets 0666 less the umask, as any program's new file. The owner can only be given
//!   away by root (chown(2): "only a privileged process may change the owner of a file"), so a
//!   file another user owns becomes the writer's, with the same bits; that is the one intent not
//!   kept, and only a forced replace reaches it (such a file is one the user "cannot write"). Its
//!   group must be kept or nothing is written, since another group would open the group bits to
//!   other people.
//! - **What a rename would get wrong is refused** ([`Force::No`]): a symbolic link (the rename
//!   would put a copy in place of the link and leave the file it points to as it was), a file
//!   with other hard links (the rename splits it: the other names keep the old content), and a
//!   file the user may not write (read-only bits, or `access(2)` says no; root passes every
//!   `access` check, so the owner's write bit is checked too). Directories and special files
//!   (FIFOs, devices, sockets) are always refused.
//! - **Forcing replaces the name, never what it points to** ([`Force::Yes`]): a link becomes a
//!   regular file with the mode of the file it pointed to (whose content stays as it was), a hard
//!   link is split (this name gets the new file), a read-only file is replaced and the new one is
//!   read-only too. So even a forced write changes nothing but the one directory entry named: a
//!   link a pull request planted towards `~/.ssh/authorized_keys` cannot make the program write
//!   there. To update the file a link points to, name that file.
//! - **The target is checked twice**: before the temporary file is made and again right before
//!   the rename. Whatever is there then meets the same refusals (a link or a read-only file put
//!   there meanwhile is left alone, with an error); if it is another regular file than before (by
//!   device and inode: a concurrent run of the same command renamed its own over it), its bits
//!   and owner are the ones the new file takes, and the last run wins, as two `lock` runs of one
//!   folder must both succeed. What remains is the instant between that second check and
//!   `rename(2)`; a swap there can only make the rename replace the swapped-in entry, since a
//!   rename never writes through a link or into another file's inode, so the worst case is a lost
//!   link, never a write anywhere else.

use std::ffi::{OsStr, OsString};
use std::fs::{File, Metadata};
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;

use cilium_cmp_yaml::limits::shown;

/// The flag of every command that writes a user's file and may replace what `Force::No` refuses.
pub const FORCE_FLAG: &str = "--force";

/// What `replace` does with a target a plain replacement would get wrong (a symbolic link, a
/// file with other hard links, a file the user may not write).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Force {
    /// Refuse it, naming the command's `--force` (`FORCE_FLAG`).
    No,
    /// Replace the name whatever file or link it holds (see the module's documentation).
    Yes,
    /// Refuse it with no flag to offer: the program's own files (the chart archive store).
    Never,
}

impl Force {
    /// The command line's force flag as given.
    pub fn flag(given: bool) -> Force {
        if given {
            Force::Yes
        } else {
            Force::No
        }
    }
}

/// Why a file was not replaced; the target is as it was.
#[derive(Debug, thiserror::Error)]
pub enum ReplaceError {
    /// The target is something not replaced (or not without force); the text says what and how
    /// to proceed. It does not name the path: every caller does.
    #[error("{0}")]
    Refused(String),
    /// The system refused a step (no such folder, a full disk, ...).
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// For callers that report an `io::Error` (the chart store): the refusal's text is kept.
impl From<ReplaceError> for std::io::Error {
    fn from(e: ReplaceError) -> Self {
        match e {
            ReplaceError::Io(e) => e,
            ReplaceError::Refused(m) => std::io::Error::other(m),
        }
    }
}

/// Writes `bytes` as `path`, whole or not at all, keeping the target's mode and owner; refuses
/// links and files the user may not write unless `force` is `Force::Yes`.
pub fn replace(path: &Path, bytes: &[u8], force: Force) -> Result<(), ReplaceError> {
    replace_checked(path, bytes, force, || {})
}

/// Whether `replace` would accept `path` as its target now: for a command that writes several
/// files, so that a refusal comes before the first is written.
pub fn check(path: &Path, force: Force) -> Result<(), ReplaceError> {
    examine(path, force).map(|_| ())
}

/// `replace`, calling `before_rename` after the content is flushed (tests swap the target there).
fn replace_checked(
    path: &Path,
    bytes: &[u8],
    force: Force,
    before_rename: impl FnOnce(),
) -> Result<(), ReplaceError> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .ok_or_else(|| ReplaceError::Refused("it does not name a file".into()))?;
    let before = examine(path, force)?;
    // Dropped on any error below, the temporary file is removed (`NamedTempFile`'s drop). Its
    // error names the temporary file, a random name the user never asked for: the folder is
    // what the message names instead.
    let mut tmp = exclusive_temp(dir, name.as_bytes(), before.keep.is_some()).map_err(|e| {
        let reason = match e.kind() {
            std::io::ErrorKind::NotFound => "does not exist".to_string(),
            std::io::ErrorKind::NotADirectory => "is not a folder".to_string(),
            _ => format!(
                "cannot hold a new file ({})",
                cilium_cmp_yaml::limits::io_reason(&e)
            ),
        };
        ReplaceError::Refused(format!("its folder {} {reason}", dir.display()))
    })?;
    if let Some(keep) = &before.keep {
        keep_owner_and_mode(tmp.as_file(), keep)?;
    }
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    before_rename();
    // What is there now gets the same refusals; if it is another file than before (a
    // concurrent run of the same command renamed its own over it), the new file takes that
    // one's bits and owner instead, since that is the file the rename replaces.
    let now = examine(path, force)?;
    if now.identity != before.identity {
        if let Some(keep) = &now.keep {
            keep_owner_and_mode(tmp.as_file(), keep)?;
        }
    }
    // rename(2); a failed one gives the file back inside the error, dropped (removed) here.
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// The target as found: which file it is (device and inode of the entry itself; none when there
/// is none) and what the new file takes over from it.
struct Target {
    identity: Option<(u64, u64)>,
    keep: Option<Keep>,
}

/// The permission bits, owner and group the new file is given.
struct Keep {
    mode: u32,
    uid: u32,
    gid: u32,
}

impl Keep {
    fn of(meta: &Metadata) -> Keep {
        Keep {
            mode: meta.mode() & 0o7777,
            uid: meta.uid(),
            gid: meta.gid(),
        }
    }
}

/// Looks at the entry `path` names without following it, and refuses what `force` does not
/// allow replacing.
fn examine(path: &Path, force: Force) -> Result<Target, ReplaceError> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(Target {
                identity: None,
                keep: None,
            })
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotADirectory => {
            return Err(ReplaceError::Refused(
                "a folder of its path is a file, not a folder".into(),
            ))
        }
        Err(e) => return Err(e.into()),
    };
    let identity = Some((meta.dev(), meta.ino()));
    let kind = meta.file_type();
    // `what` is the fact and the user's own way on; a folder the program owns has no user to
    // take it, so there the one way on is to remove what is in the way.
    let refuse = |what: String, own_way: &str, forced: &str| {
        let how = match force {
            Force::Never => "; remove it and run the command again".to_string(),
            _ => format!(": {own_way}, or pass {FORCE_FLAG} to {forced}"),
        };
        Err(ReplaceError::Refused(format!("{what}{how}")))
    };
    if kind.is_symlink() {
        if force == Force::Yes {
            // The copy stands for the file the link pointed to, so it gets that file's bits.
            let keep = std::fs::metadata(path)
                .ok()
                .filter(Metadata::is_file)
                .map(|m| Keep::of(&m));
            return Ok(Target { identity, keep });
        }
        let to = std::fs::read_link(path)?;
        let to = shown(&to.to_string_lossy());
        return refuse(
            format!(
                "it is a symbolic link to {to}; cilium-cmp replaces a file whole (a new file \
                 renamed over the name), which would put a copy in place of the link and leave \
                 {to} as it was"
            ),
            "name the file the link points to instead",
            "replace the link with a regular file (the file it points to stays as it is)",
        );
    }
    if kind.is_dir() {
        return Err(ReplaceError::Refused(
            "it is a directory; name a file".into(),
        ));
    }
    if !kind.is_file() {
        return Err(ReplaceError::Refused(format!(
            "it is not a regular file ({}); cilium-cmp writes only regular files",
            cilium_cmp_yaml::limits::kind_of(&kind)
        )));
    }
    if force != Force::Yes {
        let links = meta.nlink();
        if links > 1 {
            return refuse(
                format!(
                    "it has {links} hard links (names of one file); replacing it would give \
                     this name a new file and leave the other {} with the old content",
                    if links == 2 { "name" } else { "names" }
                ),
                "change the file in place by other means",
                "replace this name only",
            );
        }
        let mode = meta.mode() & 0o7777;
        if mode & 0o200 == 0 {
            return refuse(
                format!("it is read-only (mode {mode:04o})"),
                "make it writable (chmod u+w) if it should change",
                "replace it anyway (the new file is read-only too)",
            );
        }
        if !may_write(path)? {
            return refuse(
                format!(
                    "you may not write it (owner uid {}, group gid {}, mode {mode:04o})",
                    meta.uid(),
                    meta.gid()
                ),
                "ask its owner to change it",
                "replace it anyway (the new file is then yours)",
            );
        }
    }
    Ok(Target {
        identity,
        keep: Some(Keep::of(&meta)),
    })
}

/// `access(2)` with `W_OK`: false when the user may not write the file (EACCES); an error for
/// anything else it reports (EROFS: the rename would fail too, so the system's reason is shown).
fn may_write(path: &Path) -> Result<bool, ReplaceError> {
    if path.as_os_str().as_bytes().contains(&0) {
        return Err(ReplaceError::Refused("its name holds a NUL byte".into()));
    }
    match rustix::fs::access(path, rustix::fs::Access::WRITE_OK) {
        Ok(()) => Ok(true),
        Err(rustix::io::Errno::ACCESS) => Ok(false),
        Err(e) => Err(std::io::Error::from(e).into()),
    }
}

/// Gives the temporary file the target's owner, group and permission bits, before any content.
/// The owner and group go first: chown(2) clears the set-user-ID and set-group-ID bits, which
/// the mode then restores where the target had them.
fn keep_owner_and_mode(file: &File, keep: &Keep) -> Result<(), ReplaceError> {
    let ours = file.metadata()?;
    let uid = (ours.uid() != keep.uid).then_some(keep.uid);
    let gid = (ours.gid() != keep.gid).then_some(keep.gid);
    if uid.is_some() || gid.is_some() {
        match std::os::unix::fs::fchown(file, uid, gid) {
            Ok(()) => {}
            // Only root may give a file away (chown(2)); the file becomes the writer's. The
            // group is another matter, tried alone below.
            Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied && ours.uid() != 0 => {
                if gid.is_some() {
                    std::os::unix::fs::fchown(file, None, gid).map_err(|e| {
                        ReplaceError::Refused(format!(
                            "its group (gid {}) cannot be kept ({e}): you are not a member of \
                             it, and another group would open the file's group permission to \
                             other people; nothing was written",
                            keep.gid
                        ))
                    })?;
                }
            }
            Err(e) => {
                return Err(ReplaceError::Refused(format!(
                    "its owner and group (uid {}, gid {}) cannot be kept ({e}); nothing was \
                     written",
                    keep.uid, keep.gid
                )))
            }
        }
    }
    file.set_permissions(std::fs::Permissions::from_mode(keep.mode))?;
    Ok(())
}

/// Bytes of the target's name used in a temporary file's name, which must stay within a file
/// system's name limit (255 bytes on Linux) with the prefix and suffix around it.
const NAME_BYTES_IN_TEMP: usize = 200;

/// A new file in `dir` named `.NAME.XXXXXX.tmp` (random letters, `tempfile`'s exclusive
/// creation, O_CREAT | O_EXCL: never an existing file or a planted link, retried on a clash):
/// mode 0600 when it is to take an existing file's bits (given later, before content), 0666
/// less the umask when it is a new file.
fn exclusive_temp(
    dir: &Path,
    name: &[u8],
    keeps: bool,
) -> std::io::Result<tempfile::NamedTempFile> {
    let name = &name[..name.len().min(NAME_BYTES_IN_TEMP)];
    let mut prefix = OsString::from(".");
    prefix.push(OsStr::from_bytes(name));
    prefix.push(".");
    tempfile::Builder::new()
        .prefix(&prefix)
        .suffix(".tmp")
        .permissions(std::fs::Permissions::from_mode(if keeps {
            0o600
        } else {
            0o666
        }))
        .tempfile_in(dir)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::ffi::OsStringExt;
    use std::os::unix::fs::symlink;
    use std::path::PathBuf;

    /// A scratch folder, removed with what is in it when dropped (`tempfile::TempDir`).
    struct Dir(PathBuf, #[allow(dead_code)] tempfile::TempDir);

    impl Dir {
        fn new(tag: &str) -> Dir {
            let dir = tempfile::Builder::new()
                .prefix(&format!("cilium-cmp-replace-{tag}-"))
                .tempdir()
                .unwrap();
            Dir(dir.path().to_path_buf(), dir)
        }

        fn file(&self, name: &str, text: &str, mode: u32) -> PathBuf {
            let p = self.0.join(name);
            std::fs::write(&p, text).unwrap();
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
            p
        }

        fn names(&self) -> Vec<String> {
            let mut names: Vec<String> = std::fs::read_dir(&self.0)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            names.sort();
            names
        }
    }

    fn mode(p: &Path) -> u32 {
        std::fs::symlink_metadata(p).unwrap().mode() & 0o7777
    }

    fn refusal(r: Result<(), ReplaceError>) -> String {
        match r {
            Err(ReplaceError::Refused(m)) => m,
            other => panic!("not refused: {other:?}"),
        }
    }

    #[test]
    fn replaces_whole_and_leaves_no_temporary_file() {
        let d = Dir::new("whole");
        let target = d.file("out.yaml", "old", 0o644);
        // A file another run left under a temporary name is left alone, not overwritten.
        let taken = d.0.join(".out.yaml.AbC123.tmp");
        std::fs::write(&taken, "theirs").unwrap();
        replace(&target, b"new", Force::No).unwrap();
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "new");
        assert_eq!(std::fs::read_to_string(&taken).unwrap(), "theirs");
        std::fs::remove_file(&taken).unwrap();
        assert_eq!(d.names(), ["out.yaml"], "only the target remains");
        // Into a folder that does not exist, or below a file: refused, naming the folder and
        // not the temporary file's random name.
        let missing = d.0.join("missing");
        assert_eq!(
            refusal(replace(&missing.join("out.yaml"), b"x", Force::No)),
            format!("its folder {} does not exist", missing.display())
        );
        assert_eq!(
            refusal(replace(&target.join("out.yaml"), b"x", Force::No)),
            "a folder of its path is a file, not a folder"
        );
        assert_eq!(d.names(), ["out.yaml"], "nothing written");
    }

    #[test]
    fn an_existing_files_mode_and_owner_are_kept_and_a_new_file_gets_the_umask() {
        let d = Dir::new("mode");
        for bits in [0o600, 0o640, 0o755, 0o2750] {
            let target = d.file("secret.yaml", "key: old", bits);
            replace(&target, b"key: new", Force::No).unwrap();
            assert_eq!(mode(&target), bits, "{bits:o}");
            assert_eq!(std::fs::read(&target).unwrap(), b"key: new");
        }
        // A new file gets what any new file gets here (0666 less the umask).
        let plain = d.0.join("plain");
        std::fs::write(&plain, "").unwrap();
        let new = d.0.join("new.yaml");
        replace(&new, b"x", Force::No).unwrap();
        assert_eq!(mode(&new), mode(&plain));
        // Root can give the file back to its owner: check it does (as another user the owner
        // stays the writer's, which the test cannot observe).
        let target = d.file("owned.yaml", "old", 0o600);
        if std::fs::metadata(&target).unwrap().uid() == 0 {
            std::os::unix::fs::chown(&target, Some(4242), Some(4343)).unwrap();
            replace(&target, b"new", Force::No).unwrap();
            let m = std::fs::metadata(&target).unwrap();
            assert_eq!((m.uid(), m.gid(), m.mode() & 0o7777), (4242, 4343, 0o600));
        }
    }

    #[test]
    fn the_temporary_file_has_the_targets_bits_before_its_content() {
        let d = Dir::new("early");
        // The one temporary file beside the target, while it is there.
        let tmp = |name: &str| {
            let found: Vec<String> = d
                .names()
                .into_iter()
                .filter(|n| n.starts_with(&format!(".{name}.")) && n.ends_with(".tmp"))
                .collect();
            assert_eq!(found.len(), 1, "{found:?}");
            d.0.join(&found[0])
        };
        let target = d.file("secret.yaml", "old", 0o600);
        replace_checked(&target, b"new", Force::No, || {
            // Flushed and not yet renamed: the bits were given before the content.
            let tmp = tmp("secret.yaml");
            assert_eq!(mode(&tmp), 0o600);
            assert_eq!(std::fs::read(&tmp).unwrap(), b"new");
        })
        .unwrap();
        let target = d.file("open.yaml", "old", 0o644);
        replace_checked(&target, b"new", Force::No, || {
            assert_eq!(mode(&tmp("open.yaml")), 0o644)
        })
        .unwrap();
        assert_eq!(d.names(), ["open.yaml", "secret.yaml"]);
    }

    #[test]
    fn a_symbolic_link_is_refused_and_forcing_replaces_only_the_link() {
        let d = Dir::new("link");
        let outside = Dir::new("link-outside");
        let real = outside.file("real.yaml", "outside", 0o600);
        let link = d.0.join("values.yaml");
        symlink(&real, &link).unwrap();
        let m = refusal(replace(&link, b"new", Force::No));
        assert!(
            m.contains("symbolic link to") && m.contains("real.yaml") && m.contains("--force"),
            "{m}"
        );
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read_to_string(&real).unwrap(), "outside");
        assert_eq!(d.names(), ["values.yaml"]);
        // The store's refusal offers no flag.
        let m = refusal(replace(&link, b"new", Force::Never));
        assert!(!m.contains("--force") && m.ends_with("remove it and run the command again"));
        // Forced: the link becomes a file with the bits of the file it pointed to, which stays.
        replace(&link, b"new", Force::Yes).unwrap();
        assert!(std::fs::symlink_metadata(&link).unwrap().is_file());
        assert_eq!(mode(&link), 0o600);
        assert_eq!(std::fs::read_to_string(&link).unwrap(), "new");
        assert_eq!(std::fs::read_to_string(&real).unwrap(), "outside");
        // A dangling link, which `exists()` does not see, is refused the same.
        let dangling = d.0.join("dangling.yaml");
        symlink(d.0.join("nowhere"), &dangling).unwrap();
        refusal(replace(&dangling, b"x", Force::No));
        assert!(!d.0.join("nowhere").exists());
    }

    #[test]
    fn a_hard_link_is_refused_and_forcing_splits_it() {
        let d = Dir::new("hard");
        let one = d.file("one.yaml", "shared", 0o644);
        let two = d.0.join("two.yaml");
        std::fs::hard_link(&one, &two).unwrap();
        let m = refusal(replace(&one, b"new", Force::No));
        assert!(m.contains("2 hard links") && m.contains("--force"), "{m}");
        for p in [&one, &two] {
            assert_eq!(std::fs::read_to_string(p).unwrap(), "shared");
        }
        assert_eq!(std::fs::metadata(&one).unwrap().nlink(), 2);
        replace(&one, b"new", Force::Yes).unwrap();
        assert_eq!(std::fs::read_to_string(&one).unwrap(), "new");
        assert_eq!(std::fs::read_to_string(&two).unwrap(), "shared");
        assert_eq!(d.names(), ["one.yaml", "two.yaml"]);
    }

    #[test]
    fn a_read_only_file_is_refused_even_for_root_and_forcing_keeps_it_read_only() {
        let d = Dir::new("ro");
        let target = d.file("values.yaml", "old", 0o444);
        let m = refusal(replace(&target, b"new", Force::No));
        assert!(m.contains("read-only (mode 0444)"), "{m}");
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "old");
        replace(&target, b"new", Force::Yes).unwrap();
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "new");
        assert_eq!(mode(&target), 0o444);
        assert_eq!(d.names(), ["values.yaml"]);
    }

    #[test]
    fn directories_and_fifos_are_refused_even_when_forced() {
        let d = Dir::new("special");
        let sub = d.0.join("sub");
        std::fs::create_dir(&sub).unwrap();
        let fifo = d.0.join("fifo");
        {
            use rustix::fs::{mknodat, FileType, Mode, CWD};
            mknodat(CWD, &fifo, FileType::Fifo, Mode::from_raw_mode(0o600), 0).unwrap();
        }
        for force in [Force::No, Force::Yes] {
            assert!(refusal(replace(&sub, b"x", force)).contains("directory"));
            assert!(refusal(replace(&fifo, b"x", force)).contains("not a regular file (a FIFO"));
        }
        assert_eq!(d.names(), ["fifo", "sub"]);
    }

    #[test]
    fn a_target_swapped_while_writing_meets_the_same_refusals() {
        let d = Dir::new("swap");
        let outside = Dir::new("swap-outside");
        let victim = outside.file("victim", "theirs", 0o644);
        let target = d.file("values.yaml", "old", 0o644);
        // A link planted between the first look and the rename is refused and stays.
        let m = refusal(replace_checked(&target, b"new", Force::No, || {
            std::fs::remove_file(&target).unwrap();
            symlink(&victim, &target).unwrap();
        }));
        assert!(m.contains("symbolic link"), "{m}");
        assert!(std::fs::symlink_metadata(&target)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "theirs");
        assert_eq!(d.names(), ["values.yaml"]);
        // A read-only file that appears where there was none is not replaced either.
        let new = d.0.join("new.yaml");
        refusal(replace_checked(&new, b"ours", Force::No, || {
            std::fs::write(&new, "theirs").unwrap();
            std::fs::set_permissions(&new, std::fs::Permissions::from_mode(0o444)).unwrap();
        }));
        assert_eq!(std::fs::read_to_string(&new).unwrap(), "theirs");
        // Another run's file renamed over the target meanwhile: replaced (the last run wins),
        // with that file's bits, since it is the one replaced.
        let target = d.file("lock", "old", 0o644);
        replace_checked(&target, b"ours", Force::No, || {
            let theirs = d.file("theirs", "theirs", 0o600);
            std::fs::rename(&theirs, &target).unwrap();
        })
        .unwrap();
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "ours");
        assert_eq!(mode(&target), 0o600);
        assert_eq!(d.names(), ["lock", "new.yaml", "values.yaml"]);
    }

    #[test]
    fn a_long_or_non_utf8_name_still_gets_a_temporary_file() {
        let d = Dir::new("names");
        let long = d.0.join("x".repeat(250));
        replace(&long, b"x", Force::No).unwrap();
        let odd = d.0.join(OsString::from_vec(b"caf\xe9.yaml".to_vec()));
        replace(&odd, b"x", Force::No).unwrap();
        assert_eq!(std::fs::read(&odd).unwrap(), b"x");
        assert_eq!(d.names().len(), 2);
    }
}
