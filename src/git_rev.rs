//! Reading files of another revision of the repository for `diff --base`, with git's plumbing
//! only: `rev-parse` to resolve the revision, `ls-tree` to list its files and `cat-file --batch`
//! to read them. Plumbing runs no hooks and applies no filters or attributes from the checkout
//! (a pull request may have written them), and every revision or path is passed after
//! `--end-of-options` or on stdin, never where git reads options. Files get the bounds of
//! `limits`, and a symbolic link that leaves the repository is refused as the plugin refuses it
//! (`cat-file --follow-symlinks` resolves links inside the tree only:
//! https://git-scm.com/docs/git-cat-file#Documentation/git-cat-file.txt---follow-symlinks).

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::limits;

#[derive(Debug, thiserror::Error)]
pub enum GitError {
    #[error("{0}")]
    Message(String),
}

fn fail(message: impl Into<String>) -> GitError {
    GitError::Message(message.into())
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
}

fn git(top: &Path) -> Command {
    let mut c = Command::new("git");
    c.arg("-C").arg(top);
    // Nothing from the environment may point git elsewhere or page its output.
    c.env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env("GIT_PAGER", "cat")
        .env("GIT_TERMINAL_PROMPT", "0");
    c
}

fn output(mut c: Command, what: &str) -> Result<String, GitError> {
    let out = c.stdin(Stdio::null()).output().map_err(|e| {
        fail(format!(
            "cannot run git ({e}); `diff --base` needs git on PATH"
        ))
    })?;
    if !out.status.success() {
        return Err(fail(format!(
            "{what}: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    String::from_utf8(out.stdout).map_err(|_| fail(format!("{what}: git printed non-UTF-8 text")))
}

impl Revision {
    /// Resolves `rev` in the git work tree holding `dir`.
    pub fn open(dir: &Path, rev: &str) -> Result<Revision, GitError> {
        let mut c = git(dir);
        c.args(["rev-parse", "--show-toplevel"]);
        let top = output(c, "").map_err(|_| {
            fail(format!(
                "{} is not in a git work tree: --base reads the other revision with git; run it in a clone of the repository",
                dir.display()
            ))
        })?;
        let top = PathBuf::from(top.trim_end_matches(['\n', '\r']));
        if rev.is_empty() || rev.len() > 256 || rev.contains(['\n', '\0']) {
            return Err(fail(format!(
                "--base {}: not a revision name",
                limits::quoted(rev)
            )));
        }
        let mut c = git(&top);
        c.args(["rev-parse", "--verify", "--quiet", "--end-of-options"])
            .arg(format!("{rev}^{{commit}}"));
        let commit = output(c, "").map_err(|_| {
            fail(format!(
                "--base {}: no such revision in {} (a branch, tag or commit; in CI fetch it first, e.g. `git fetch origin main` and --base origin/main)",
                limits::quoted(rev),
                top.display()
            ))
        })?;
        Ok(Revision {
            top,
            name: rev.to_string(),
            commit: commit.trim().to_string(),
        })
    }

    /// Every file path of the revision (`/`-separated, relative to the top), bounded.
    pub fn files(&self) -> Result<Vec<String>, GitError> {
        let mut c = git(&self.top);
        c.args([
            "ls-tree",
            "-r",
            "-z",
            "--name-only",
            "--full-tree",
            "--end-of-options",
        ])
        .arg(&self.commit);
        let text = output(c, &format!("cannot list the files of {}", self.name))?;
        let files: Vec<String> = text
            .split('\0')
            .filter(|p| !p.is_empty())
            .map(str::to_string)
            .collect();
        if files.len() > MAX_TREE_FILES {
            return Err(fail(format!(
                "{} holds {} files; at most {MAX_TREE_FILES} are read",
                self.name,
                files.len()
            )));
        }
        Ok(files)
    }

    /// The text of each path at the revision (None where it does not exist), each within
    /// `limits::MAX_FILE_BYTES`, in one `cat-file --batch` process.
    pub fn read(&self, paths: &[String]) -> Result<Vec<Option<String>>, GitError> {
        if paths.is_empty() {
            return Ok(Vec::new());
        }
        let mut c = git(&self.top);
        c.args(["cat-file", "--batch", "--follow-symlinks"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        let mut child = c
            .spawn()
            .map_err(|e| fail(format!("cannot run git ({e})")))?;
        let mut stdin = child.stdin.take().ok_or_else(|| fail("git has no stdin"))?;
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
        // Written from another thread: git answers while it reads, and both pipes are bounded.
        let writer = std::thread::spawn(move || {
            let _ = stdin.write_all(requests.as_bytes());
        });
        let mut out = BufReader::new(
            child
                .stdout
                .take()
                .ok_or_else(|| fail("git has no stdout"))?,
        );
        let mut result = Vec::with_capacity(paths.len());
        for p in paths {
            let shown = format!("{p} at {}", self.name);
            let mut header = String::new();
            out.read_line(&mut header)
                .map_err(|e| fail(format!("cannot read {shown}: {e}")))?;
            let header = header.trim_end_matches('\n').to_string();
            if header.ends_with(" missing") || header.ends_with(" ambiguous") {
                result.push(None);
                continue;
            }
            // `OID TYPE SIZE`, or for a link git does not follow `symlink SIZE` (and the like)
            // followed by the link's target.
            let words: Vec<&str> = header
                .rsplitn(3, ' ')
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
            match words.as_slice() {
                ["dangling" | "loop" | "notdir" | "symlink", size] => {
                    let size: u64 = size.parse().unwrap_or(0);
                    skip(&mut out, size + 1)?;
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
                [_, kind, size] => {
                    let size: u64 = size.parse().unwrap_or(0);
                    skip(&mut out, size + 1)?;
                    return Err(fail(format!("{shown}: a {kind}, not a file")));
                }
                _ => return Err(fail(format!("cannot read {shown}: git said {header:?}"))),
            }
        }
        drop(out);
        let _ = writer.join();
        let _ = child.wait();
        Ok(result)
    }
}

/// Files listed from one revision (a monorepo is far below this).
pub const MAX_TREE_FILES: usize = 1_000_000;

fn skip(r: &mut impl Read, n: u64) -> Result<(), GitError> {
    std::io::copy(&mut r.take(n), &mut std::io::sink())
        .map(|_| ())
        .map_err(|e| fail(format!("cannot read git's answer: {e}")))
}
