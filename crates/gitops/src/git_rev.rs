//! Reading files of another revision of the repository for `diff --base`, with git's plumbing
//! only: `rev-parse` to resolve the revision, `ls-tree` to find the settings files and
//! `cat-file --batch` to read files. What is guaranteed, on a repository whose content (every
//! file a pull request can commit) is hostile:
//!
//! - **git never discovers a repository.** The top level is found once, by this module and not
//!   by git, from the folder the user names (`--repo-root`, else the current folder): the nearest
//!   of it and its parents holding `.git`. A folder is never taken for a bare repository however
//!   it looks (a committed `HEAD`, `config`, `objects/`, `refs/` is only content), and the folder
//!   of `diff FOLDER` is never where the search starts. Every git command runs with `GIT_DIR` and
//!   `GIT_WORK_TREE` pinned to that top level; with `GIT_DIR` set git does no discovery at all
//!   (`repo_discovery_find_dir` in git's setup.c returns at once), so no config file but the top
//!   level's own `.git/config` is ever read.
//! - **`.git` files.** A gitdir link (`gitdir: PATH`, what `git worktree add`, submodules and
//!   `clone --separate-git-dir` write) is accepted at the top level the search finds, because the
//!   user's own git made it there: git checks nothing out under a `.git` name (`verify_path` in
//!   git's read-cache.c). Its target must lie inside a git directory (a submodule's link leads
//!   into `.git/modules`, a worktree's into `.git/worktrees`) or outside every work tree holding
//!   the top level: a git directory among a work tree's files would be repository content. A `.git` (file or folder) inside the folder of
//!   `diff FOLDER`, or between it and the top level, makes it an embedded repository or a
//!   submodule, whose files the top level's revisions do not hold: refused with a message.
//! - **git runs no program and reads no file but the repository's.** The environment is cleared
//!   (`env_clear`: no `GIT_*` variable of the caller reaches git, e.g. `GIT_SSH_COMMAND`,
//!   `GIT_EXTERNAL_DIFF`, `GIT_CONFIG_PARAMETERS`, `GIT_ASKPASS`, `GIT_EXEC_PATH`, `GIT_TRACE*`);
//!   git is started by its absolute path found on the absolute entries of `PATH` only (an empty
//!   or relative entry would find a `git` committed to the repository), and gets that `PATH` and
//!   `LC_ALL=C` (stable messages) and nothing else: no `HOME`, so no `~/.gitconfig`. The system
//!   and global config files are not read (`GIT_CONFIG_NOSYSTEM`, `GIT_CONFIG_GLOBAL=/dev/null`,
//!   `GIT_ATTR_NOSYSTEM`); lazy fetches of a partial clone are off (`GIT_NO_LAZY_FETCH`, read by
//!   `fetch_objects` in git's promisor-remote.c before it starts `git fetch`); every transport
//!   is refused before it connects (`GIT_ALLOW_PROTOCOL` set empty: `is_transport_allowed` in
//!   transport.c consults it before any `protocol.*` config, and `git_connect` in connect.c
//!   checks it before it runs `remote.*.uploadpack`, `core.sshCommand` or `core.gitProxy`, and
//!   the helper transports before a remote helper starts), so no URL, credential helper,
//!   askpass or ssh command is ever reached. Command-line config (`-c`, the highest-priority
//!   scope, git-config(1) "SCOPES") also overrides whatever the top level's `.git/config` says:
//!   `core.fsmonitor` off (an empty value is false, `git_parse_maybe_bool_text` in parse.c; the
//!   word `false` would run a hook named `false` on git before 2.36), `core.hooksPath=/dev/null`,
//!   `credential.helper` emptied (an empty value resets the list, gitcredentials(7)),
//!   `core.askPass` emptied (prompt.c runs only a non-empty one), `protocol.allow=never` and each
//!   built-in `protocol.<name>.allow=never` (per-protocol keys win over `protocol.allow`,
//!   `get_protocol_config` in transport.c), `safe.bareRepository=explicit`, no replace objects
//!   (`--no-replace-objects`: the base is read as committed), no automatic gc or maintenance.
//!   `uploadpack.packObjectsHook` is honoured only in protected config (git-config(1)), which is
//!   now only this command line, and only by `upload-pack`, never run here;
//!   `core.alternateRefsCommand` only by fetch and receive-pack advertisements; `diff.external`,
//!   textconv and filter drivers only by porcelain and `cat-file --textconv/--filters`; pagers
//!   never (`--no-pager`). git's ownership check (`safe.directory`) is not made for an explicit
//!   `GIT_DIR` (setup.c); it is not needed, since no config of the repository can make these
//!   commands run anything.
//! - Every revision or path is passed after `--end-of-options` or on stdin, never where git reads
//!   options. The listing of a revision is streamed and stops at `MAX_TREE_FILES` entries (a tree
//!   of shared subtrees expands to millions of paths from a few kilobytes), keeping only the
//!   settings files; files are read by name with `cat-file --batch` within
//!   `limits::MAX_FILE_BYTES`, and a symbolic link that leaves the tree is refused as the plugin
//!   refuses it (`cat-file --follow-symlinks` resolves links inside the tree only:
//!   <https://git-scm.com/docs/git-cat-file#Documentation/git-cat-file.txt---follow-symlinks>).
//!   In a partial clone a file the base holds but the clone lacks is named in an error (the
//!   tree tells it from a file the base does not hold), never fetched and never taken for
//!   absent. A git process that is not needed any more is killed, never left running.
//!
//! Sources read: git(1) "ENVIRONMENT VARIABLES", git-config(1) (`safe.bareRepository`,
//! `protocol.allow`, `core.fsmonitor`, `core.hooksPath`, `uploadpack.packObjectsHook`),
//! gitrepository-layout(5) (gitdir links), git's setup.c, transport.c, connect.c,
//! promisor-remote.c, fsmonitor-settings.c, prompt.c and run-command.c.

use std::ffi::{OsStr, OsString};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Component, Path, PathBuf};
use std::process::{Child, Command, Stdio};

use cilium_cmp_yaml::limits;

#[derive(Debug, thiserror::Error)]
/// Why a git command gave no usable answer.
pub enum GitError {
    #[error("{0}")]
    /// What went wrong, git's own words included, ready to show.
    Message(String),
}

fn fail(message: impl Into<String>) -> GitError {
    GitError::Message(message.into())
}

/// Files listed from one revision (a monorepo is far below this; the work tree's discovery
/// visits at most as many entries).
pub const MAX_TREE_FILES: usize = 1_000_000;
/// The longest path `ls-tree` may print (Linux's PATH_MAX is 4096).
const MAX_PATH_BYTES: u64 = 4096;
/// What of git's stderr is kept for a message.
const MAX_STDERR_BYTES: u64 = 64 << 10;

/// The environment git runs with, besides `PATH`, `GIT_DIR`, `GIT_WORK_TREE` and
/// `GIT_CEILING_DIRECTORIES` (see the module docs for why each is there).
const GIT_ENV: &[(&str, &str)] = &[
    ("LC_ALL", "C"),
    ("GIT_CONFIG_NOSYSTEM", "1"),
    ("GIT_CONFIG_SYSTEM", "/dev/null"),
    ("GIT_CONFIG_GLOBAL", "/dev/null"),
    ("GIT_ATTR_NOSYSTEM", "1"),
    ("GIT_NO_LAZY_FETCH", "1"),
    ("GIT_ALLOW_PROTOCOL", ""),
    ("GIT_PROTOCOL_FROM_USER", "0"),
    ("GIT_TERMINAL_PROMPT", "0"),
    ("GIT_OPTIONAL_LOCKS", "0"),
    ("GIT_NO_REPLACE_OBJECTS", "1"),
];

/// Command-line config, which overrides the repository's `.git/config` (module docs).
const GIT_CONFIG: &[&str] = &[
    "safe.bareRepository=explicit",
    "core.fsmonitor=",
    "core.hooksPath=/dev/null",
    "core.askPass=",
    "core.useReplaceRefs=false",
    "core.attributesFile=/dev/null",
    "credential.helper=",
    "protocol.allow=never",
    "protocol.file.allow=never",
    "protocol.git.allow=never",
    "protocol.ssh.allow=never",
    "protocol.http.allow=never",
    "protocol.https.allow=never",
    "protocol.ext.allow=never",
    "gc.auto=0",
    "maintenance.auto=false",
];

/// A git work tree found without git, and how git is run on it.
#[derive(Debug, Clone)]
pub struct WorkTree {
    /// The work tree's top folder, canonical.
    pub top: PathBuf,
    /// `top/.git`: a git directory, or a gitdir link git follows itself.
    git_dir: PathBuf,
    /// git's absolute path.
    git: PathBuf,
    /// The absolute entries of the caller's `PATH`, git's `PATH`.
    path: OsString,
}

impl WorkTree {
    /// The work tree holding `start` (the folder the user named: `--repo-root` or the current
    /// folder): the nearest of `start` and its parents holding `.git`. Never git's discovery
    /// (module docs).
    pub fn find(start: &Path) -> Result<WorkTree, GitError> {
        let shown = start.display();
        let real = start
            .canonicalize()
            .map_err(|e| fail(format!("cannot open {shown}: {e}")))?;
        if !real.is_dir() {
            return Err(fail(format!("{shown} is not a folder")));
        }
        let mut dir = real.as_path();
        let top = loop {
            let dot_git = dir.join(".git");
            match std::fs::symlink_metadata(&dot_git) {
                Ok(_) => break dir.to_path_buf(),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(fail(format!("cannot open {}: {e}", dot_git.display()))),
            }
            dir = dir.parent().ok_or_else(|| {
                fail(format!(
                    "{} is not in a git work tree (neither it nor a folder above holds .git): --base reads the other revision with git; run it in a clone of the repository, or name the clone with --repo-root",
                    real.display()
                ))
            })?;
        };
        let git_dir = top.join(".git");
        check_git_dir(&top, &git_dir)?;
        let (git, path) = find_git()?;
        Ok(WorkTree {
            top,
            git_dir,
            git,
            path,
        })
    }

    /// `folder` (as the user typed it, relative to the current folder) relative to the top,
    /// `/`-separated, without requiring it to exist now (a folder the change removes exists only
    /// at the base); refused when it is outside the work tree, inside `.git`, or inside an
    /// embedded repository or submodule (a `.git` in it or between it and the top).
    pub fn folder_inside(&self, folder: &Path) -> Result<String, GitError> {
        let shown = folder.display();
        let (existing, tail) = nearest_existing(folder)?;
        let real = existing
            .canonicalize()
            .map_err(|e| fail(format!("cannot open {}: {e}", existing.display())))?;
        let full = tail.iter().fold(real, |p, name| p.join(name));
        let rel = full.strip_prefix(&self.top).map_err(|_| {
            fail(format!(
                "{shown} is outside the git work tree {} (found from --repo-root or the current folder); name the clone holding it with --repo-root",
                self.top.display()
            ))
        })?;
        let mut parts = Vec::new();
        for c in rel.components() {
            let Component::Normal(name) = c else {
                return Err(fail(format!("{shown}: not a folder name git can read")));
            };
            let Some(name) = name.to_str().filter(|n| !n.contains(['\n', '\0'])) else {
                return Err(fail(format!(
                    "{}: not a folder name git can read (not UTF-8 text)",
                    limits::quoted(&name.to_string_lossy())
                )));
            };
            parts.push(name.to_string());
        }
        let mut dir = self.top.clone();
        for (i, name) in parts.iter().enumerate() {
            let so_far = parts[..=i].join("/");
            if crate::argocd::folder::is_git_dir_name(name) {
                return Err(fail(format!(
                    "{so_far} is inside a .git folder: paths inside .git are never read"
                )));
            }
            dir.push(name);
            let dot_git = dir.join(".git");
            if let Ok(meta) = std::fs::symlink_metadata(&dot_git) {
                let what = if meta.is_dir() {
                    "an embedded repository"
                } else {
                    "a submodule or an embedded repository (a gitdir link)"
                };
                return Err(fail(format!(
                    "{} is inside {what}: {so_far}/.git exists; its files are not in the revisions of {}, and a .git inside the repository is its content, never handed to git",
                    parts.join("/"),
                    self.top.display()
                )));
            }
        }
        Ok(if parts.is_empty() {
            ".".into()
        } else {
            parts.join("/")
        })
    }

    /// A git command pinned to this work tree (module docs).
    fn command(&self) -> Command {
        let mut c = Command::new(&self.git);
        c.env_clear()
            .env("PATH", &self.path)
            .env("GIT_DIR", &self.git_dir)
            .env("GIT_WORK_TREE", &self.top);
        for (k, v) in GIT_ENV {
            c.env(k, v);
        }
        if let Some(parent) = self.top.parent() {
            c.env("GIT_CEILING_DIRECTORIES", parent);
        }
        c.current_dir(&self.top)
            .args(["--no-pager", "--no-replace-objects"]);
        for kv in GIT_CONFIG {
            c.arg("-c").arg(kv);
        }
        c.stdin(Stdio::null());
        c
    }
}

/// The existing folder `folder` starts with, and the names after it (which must be plain names).
fn nearest_existing(folder: &Path) -> Result<(PathBuf, Vec<OsString>), GitError> {
    let mut existing = folder.to_path_buf();
    let mut tail = Vec::new();
    while !existing.is_dir() {
        let last = existing.components().next_back();
        match (last, existing.parent()) {
            (Some(Component::Normal(name)), Some(parent)) => {
                tail.insert(0, name.to_os_string());
                existing = if parent.as_os_str().is_empty() {
                    PathBuf::from(".")
                } else {
                    parent.to_path_buf()
                };
            }
            _ => {
                return Err(fail(format!(
                    "cannot open {}: no such folder (name a folder that does not exist in the work tree without `..`)",
                    folder.display()
                )))
            }
        }
    }
    Ok((existing, tail))
}

/// `top/.git` is a folder, or a gitdir link whose target is a folder outside the work tree.
fn check_git_dir(top: &Path, git_dir: &Path) -> Result<(), GitError> {
    let shown = git_dir.display();
    let own = std::fs::symlink_metadata(git_dir)
        .map_err(|e| fail(format!("cannot open {shown}: {e}")))?;
    if own.is_dir() {
        // In its place: the work tree's own git directory.
        return Ok(());
    }
    let meta = std::fs::metadata(git_dir).map_err(|e| fail(format!("cannot open {shown}: {e}")))?;
    let real = if meta.is_dir() {
        // A symbolic link to a folder: checked as a gitdir link's target is.
        git_dir
            .canonicalize()
            .map_err(|e| fail(format!("cannot open {shown}: {e}")))?
    } else if meta.is_file() {
        gitdir_link_target(top, git_dir)?
    } else {
        return Err(fail(format!(
            "{shown} is neither a git folder nor a gitdir link"
        )));
    };
    // A submodule's link leads into its superproject's `.git/modules`, a worktree's into the
    // main repository's `.git/worktrees`: into a git directory (a path through `.git`), or, for
    // `clone --separate-git-dir`, anywhere outside every work tree; never among a work tree's
    // files, which are repository content.
    let in_git_dir = crate::argocd::folder::has_git_dir_name(&real);
    for dir in top.ancestors() {
        let holds_git = std::fs::symlink_metadata(dir.join(".git")).is_ok();
        if holds_git && real.starts_with(dir) && !in_git_dir {
            return Err(fail(format!(
                "{shown} leads to {}, inside the work tree {}: a git directory in a repository's content is never used",
                real.display(),
                dir.display()
            )));
        }
    }
    Ok(())
}

/// The folder a gitdir link names.
fn gitdir_link_target(top: &Path, git_dir: &Path) -> Result<PathBuf, GitError> {
    let shown = git_dir.display();
    // gitrepository-layout(5): "a text file containing `gitdir: <path>`", the path absolute or
    // relative to the file's folder.
    let mut text = String::new();
    std::fs::File::open(git_dir)
        .and_then(|f| f.take(4096).read_to_string(&mut text))
        .map_err(|e| fail(format!("cannot read {shown}: {e}")))?;
    let target = text
        .strip_prefix("gitdir: ")
        .map(|t| t.trim_end_matches(['\n', '\r']))
        .filter(|t| !t.is_empty() && !t.contains('\n'))
        .ok_or_else(|| {
            fail(format!(
                "{shown} is a file but not a gitdir link (`gitdir: PATH`, as `git worktree add` writes it)"
            ))
        })?;
    top.join(target)
        .canonicalize()
        .ok()
        .filter(|p| p.is_dir())
        .ok_or_else(|| {
            fail(format!(
                "{shown} links to {}, which is not a folder",
                limits::quoted(target)
            ))
        })
}

/// git's absolute path on the absolute entries of `PATH`, and those entries as git's `PATH`.
fn find_git() -> Result<(PathBuf, OsString), GitError> {
    let from_env =
        std::env::var_os("PATH").unwrap_or_else(|| "/usr/local/bin:/usr/bin:/bin".into());
    let dirs: Vec<PathBuf> = std::env::split_paths(&from_env)
        .filter(|d| d.is_absolute())
        .collect();
    let git = dirs
        .iter()
        .map(|d| d.join(if cfg!(windows) { "git.exe" } else { "git" }))
        .find(|p| is_executable(p))
        .ok_or_else(|| {
            fail("cannot find git on PATH (its absolute folders only); `diff --base` needs git")
        })?;
    let path = std::env::join_paths(&dirs).unwrap_or_else(|_| OsStr::new("/usr/bin:/bin").into());
    Ok((git, path))
}

#[cfg(unix)]
fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable(p: &Path) -> bool {
    p.is_file()
}

/// A running git, killed and reaped however the reading of it ends.
struct Running {
    child: Child,
    stderr: Option<std::thread::JoinHandle<String>>,
}

impl Running {
    fn start(mut c: Command, stdin: bool) -> Result<Running, GitError> {
        c.stdout(Stdio::piped()).stderr(Stdio::piped());
        if stdin {
            c.stdin(Stdio::piped());
        }
        let mut child = c
            .spawn()
            .map_err(|e| fail(format!("cannot run git ({e}); `diff --base` needs git")))?;
        let stderr = child.stderr.take().map(|mut err| {
            std::thread::spawn(move || {
                let mut kept = Vec::new();
                let _ = (&mut err).take(MAX_STDERR_BYTES).read_to_end(&mut kept);
                // The rest is drained so git never blocks on a full pipe.
                let _ = std::io::copy(&mut err, &mut std::io::sink());
                String::from_utf8_lossy(&kept).into_owned()
            })
        });
        Ok(Running { child, stderr })
    }

    /// Waits for git to end by itself: its exit code (None when killed) and its stderr.
    fn finish(mut self) -> (Option<i32>, String) {
        let status = self.child.wait().ok().and_then(|s| s.code());
        let err = self
            .stderr
            .take()
            .and_then(|h| h.join().ok())
            .unwrap_or_default();
        (status, err)
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        // Already reaped by `finish`, or stopped here: either way no git outlives the reading.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// git's complaint, for a message: its `fatal:`/`error:` lines (else its last line), escaped and
/// bounded.
fn git_says(stderr: &str) -> String {
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    let picked: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|l| l.starts_with("fatal:") || l.starts_with("error:"))
        .take(3)
        .collect();
    let picked = if picked.is_empty() {
        lines.last().copied().into_iter().collect()
    } else {
        picked
    };
    if picked.is_empty() {
        return "git said nothing".into();
    }
    picked
        .iter()
        .map(|l| limits::shown(l.trim()))
        .collect::<Vec<_>>()
        .join("; ")
}

/// A git work tree and a resolved commit of it.
#[derive(Debug, Clone)]
pub struct Revision {
    /// The work tree's top folder.
    pub top: PathBuf,
    /// As the user named it, for messages.
    pub name: String,
    /// The full commit id.
    pub commit: String,
    tree: WorkTree,
}

impl Revision {
    /// Resolves `rev` in the work tree.
    pub fn open(tree: &WorkTree, rev: &str) -> Result<Revision, GitError> {
        if rev.is_empty() || rev.len() > 256 || rev.contains(['\n', '\0']) {
            return Err(fail(format!(
                "--base {}: not a revision name",
                limits::quoted(rev)
            )));
        }
        let mut c = tree.command();
        c.args(["rev-parse", "--verify", "--quiet", "--end-of-options"])
            .arg(format!("{rev}^{{commit}}"));
        let mut run = Running::start(c, false)?;
        let mut out = String::new();
        if let Some(stdout) = run.child.stdout.take() {
            let _ = stdout.take(4096).read_to_string(&mut out);
        }
        let (code, err) = run.finish();
        let commit = out.trim();
        match code {
            Some(0) if !commit.is_empty() && commit.bytes().all(|b| b.is_ascii_hexdigit()) => {
                Ok(Revision {
                    top: tree.top.clone(),
                    name: rev.to_string(),
                    commit: commit.to_string(),
                    tree: tree.clone(),
                })
            }
            // `--verify --quiet`: 1 and nothing said for a name that resolves to no commit.
            Some(0 | 1) => Err(fail(format!(
                "--base {}: no such revision in {} (a branch, tag or commit; in CI fetch it first, e.g. `git fetch origin main` and --base origin/main)",
                limits::quoted(rev),
                tree.top.display()
            ))),
            _ => Err(fail(format!(
                "cannot read the git repository {} ({}): {}",
                tree.top.display(),
                tree.git_dir.display(),
                git_says(&err)
            ))),
        }
    }

    /// The work tree the revision is of.
    pub fn work_tree(&self) -> &WorkTree {
        &self.tree
    }

    /// The paths of the revision (`/`-separated, relative to the top) whose last name is
    /// `file_name` and that `keep` keeps, at most `max_found`, from a listing streamed from git
    /// and stopped at `MAX_TREE_FILES` entries: only what is kept is held in memory.
    pub fn files_named(
        &self,
        file_name: &str,
        keep: impl Fn(&str) -> bool,
        max_found: usize,
    ) -> Result<Vec<String>, GitError> {
        let mut c = self.tree.command();
        c.args([
            "ls-tree",
            "-r",
            "-z",
            "--name-only",
            "--full-tree",
            "--end-of-options",
        ])
        .arg(&self.commit);
        let mut run = Running::start(c, false)?;
        let stdout = run
            .child
            .stdout
            .take()
            .ok_or_else(|| fail("git has no stdout"))?;
        let mut out = BufReader::with_capacity(64 << 10, stdout);
        let suffix = format!("/{file_name}");
        let mut found = Vec::new();
        let mut entry = Vec::new();
        let mut listed = 0usize;
        loop {
            entry.clear();
            let n = out
                .by_ref()
                .take(MAX_PATH_BYTES + 1)
                .read_until(0, &mut entry)
                .map_err(|e| fail(format!("cannot list the files of {}: {e}", self.name)))?;
            if n == 0 {
                break;
            }
            if entry.last() == Some(&0) {
                entry.pop();
            } else if n as u64 > MAX_PATH_BYTES {
                return Err(fail(format!(
                    "{} holds a path longer than {MAX_PATH_BYTES} bytes",
                    self.name
                )));
            }
            listed += 1;
            if listed > MAX_TREE_FILES {
                // Dropping `run` kills git: the rest of the listing is never produced.
                return Err(fail(format!(
                    "{} holds more than {MAX_TREE_FILES} files (a tree of shared subtrees expands to that many paths from a few kilobytes); at most {MAX_TREE_FILES} are listed",
                    self.name
                )));
            }
            let Ok(path) = std::str::from_utf8(&entry) else {
                continue;
            };
            if (path == file_name || path.ends_with(&suffix)) && keep(path) {
                found.push(path.to_string());
                if found.len() > max_found {
                    return Err(fail(format!(
                        "{} holds more than {max_found} files named {file_name}",
                        self.name
                    )));
                }
            }
        }
        drop(out);
        let (code, err) = run.finish();
        if code != Some(0) {
            return Err(fail(format!(
                "cannot list the files of {}: {}",
                self.name,
                git_says(&err)
            )));
        }
        Ok(found)
    }

    /// The text of each path at the revision (None where it does not exist), each within
    /// `limits::MAX_FILE_BYTES`, in one `cat-file --batch` process.
    pub fn read(&self, paths: &[String]) -> Result<Vec<Option<String>>, GitError> {
        if paths.is_empty() {
            return Ok(Vec::new());
        }
        let mut requests = String::new();
        for p in paths {
            if p.contains(['\n', '\0']) {
                return Err(fail(format!(
                    "{}: not a path git can read",
                    limits::quoted(p)
                )));
            }
            requests.push_str(&format!("{}:{p}\n", self.commit));
        }
        let mut c = self.tree.command();
        c.args(["cat-file", "--batch", "--follow-symlinks"]);
        let mut run = Running::start(c, true)?;
        let mut stdin = run
            .child
            .stdin
            .take()
            .ok_or_else(|| fail("git has no stdin"))?;
        // Written from another thread: git answers while it reads, and both pipes are bounded.
        // When the reading stops early, git is killed and the write fails.
        std::thread::spawn(move || {
            let _ = stdin.write_all(requests.as_bytes());
        });
        let mut out = BufReader::new(
            run.child
                .stdout
                .take()
                .ok_or_else(|| fail("git has no stdout"))?,
        );
        let mut result = Vec::with_capacity(paths.len());
        let mut missing = Vec::new();
        for p in paths {
            let shown = format!("{p} at {}", self.name);
            let mut header = String::new();
            out.by_ref()
                .take(1024)
                .read_line(&mut header)
                .map_err(|e| fail(format!("cannot read {shown}: {e}")))?;
            let header = header.trim_end_matches('\n').to_string();
            if header.ends_with(" missing") || header.ends_with(" ambiguous") {
                missing.push(p.as_str());
                result.push(None);
                continue;
            }
            // `OID TYPE SIZE`, or for a link git does not follow `symlink SIZE` (and the like)
            // followed by the link's target or the name asked for.
            let words: Vec<&str> = header
                .rsplitn(3, ' ')
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
            match words.as_slice() {
                [kind @ ("dangling" | "loop" | "notdir" | "symlink"), size] => {
                    let size: u64 = size.parse().unwrap_or(0);
                    let mut said = Vec::new();
                    out.by_ref()
                        .take(size.min(MAX_PATH_BYTES))
                        .read_to_end(&mut said)
                        .map_err(|e| fail(format!("cannot read {shown}: {e}")))?;
                    let said = String::from_utf8_lossy(&said);
                    if *kind == "symlink"
                        && said.split('/').any(crate::argocd::folder::is_git_dir_name)
                    {
                        return Err(fail(format!(
                            "{shown}: a symbolic link into .git ({}); paths inside .git are never read",
                            limits::quoted(&said)
                        )));
                    }
                    return Err(fail(format!(
                        "{shown}: a symbolic link that leaves the repository or resolves to nothing; the plugin reads only files inside the repository"
                    )));
                }
                [_, "blob", size] => {
                    let size: u64 = size
                        .parse()
                        .map_err(|_| fail(format!("cannot read {shown}: git said {header:?}")))?;
                    if size > limits::MAX_FILE_BYTES {
                        return Err(fail(format!(
                            "{shown}: {size} bytes; at most {} are read",
                            limits::MAX_FILE_BYTES
                        )));
                    }
                    let mut bytes = vec![0u8; size as usize];
                    out.read_exact(&mut bytes)
                        .map_err(|e| fail(format!("cannot read {shown}: {e}")))?;
                    skip(&mut out, 1)?;
                    let text = limits::text_of(bytes).map_err(|(line, column)| {
                        fail(format!(
                            "{p}:{line}:{column} at {}: not UTF-8 text",
                            self.name
                        ))
                    })?;
                    result.push(Some(text));
                }
                [_, kind, _] => {
                    return Err(fail(format!("{shown}: a {kind}, not a file")));
                }
                _ => return Err(fail(format!("cannot read {shown}: git said {header:?}"))),
            }
        }
        drop(out);
        let _ = run.finish();
        if !missing.is_empty() {
            self.refuse_unfetched(&missing)?;
        }
        Ok(result)
    }

    /// `cat-file` says "missing" both for a path the revision does not hold and for one whose
    /// content this clone lacks (a partial clone, whose lazy fetch is off): the tree, which a
    /// partial clone holds, tells them apart. A file the base holds is never taken for absent.
    fn refuse_unfetched(&self, missing: &[&str]) -> Result<(), GitError> {
        let mut c = self.tree.command();
        // Every path is a literal path, never pathspec magic (git(1), GIT_LITERAL_PATHSPECS).
        c.env("GIT_LITERAL_PATHSPECS", "1")
            .args([
                "ls-tree",
                "-z",
                "--full-tree",
                "--name-only",
                "--end-of-options",
            ])
            .arg(&self.commit)
            .arg("--")
            .args(missing);
        let mut run = Running::start(c, false)?;
        let mut listed = Vec::new();
        if let Some(stdout) = run.child.stdout.take() {
            let _ = stdout
                .take((MAX_PATH_BYTES + 1) * (missing.len() as u64 + 1))
                .read_to_end(&mut listed);
        }
        let (code, err) = run.finish();
        if code != Some(0) {
            return Err(fail(format!(
                "cannot list the files of {}: {}",
                self.name,
                git_says(&err)
            )));
        }
        let held = listed
            .split(|b| *b == 0)
            .find_map(|name| missing.iter().find(|p| p.as_bytes() == name));
        match held {
            Some(p) => Err(fail(format!(
                "{p} at {}: its content is not in this clone (a partial clone; git would fetch it from a remote, which diff never lets git do): diff in a clone that holds the base's files, e.g. one made without --filter",
                self.name
            ))),
            None => Ok(()),
        }
    }
}

fn skip(r: &mut impl Read, n: u64) -> Result<(), GitError> {
    std::io::copy(&mut r.take(n), &mut std::io::sink())
        .map(|_| ())
        .map_err(|e| fail(format!("cannot read git's answer: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn git_messages_are_picked_escaped_and_bounded() {
        let said = "warning: lazy fetching disabled\nfatal: not a git repository: '/x\x1b[31m'\n";
        let m = git_says(said);
        assert!(m.starts_with("fatal: not a git repository"), "{m}");
        assert!(!m.contains('\x1b'), "{m}");
        assert_eq!(git_says(""), "git said nothing");
        assert!(git_says(&"x".repeat(10_000)).chars().count() < 200);
    }

    #[test]
    fn a_folder_that_does_not_exist_keeps_its_plain_names() {
        let (existing, tail) = nearest_existing(Path::new("no-such/folder")).unwrap();
        assert_eq!(existing, Path::new("."));
        assert_eq!(tail, [OsString::from("no-such"), OsString::from("folder")]);
        assert!(nearest_existing(Path::new("no-such/..")).is_err());
    }
}
