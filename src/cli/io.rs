//! Where the command line reads and writes outside the library: standard input (once), standard
//! output (whole, and quietly when the reader has gone), and output files (whole or not at all).

use std::io::Write;
use std::path::Path;

use anyhow::Context;

use cilium_cmp_render::replace_file::Force;
use cilium_cmp_yaml::limits;

/// The name standard input has in error messages, as `-f -` and `--set-file KEY=-` read it.
pub const STDIN_NAME: &str = "<stdin>";

/// Standard output was closed by its reader (`cilium-cmp render | head -1`). Not a failure of
/// ours: `main` ends quietly with status 0 on it, as `ripgrep`, `git log` and others do, so a
/// pipeline under `set -o pipefail` does not fail because its reader stopped early.
#[derive(Debug, thiserror::Error)]
#[error("standard output was closed")]
pub struct ClosedStdout;

/// Writes all output at once, only after the render succeeded: never a partial stream.
pub fn write_stdout(text: &str) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    let written = out.write_all(text.as_bytes()).and_then(|()| out.flush());
    match written {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Err(ClosedStdout.into()),
        other => other.context("cannot write to standard output"),
    }
}

/// A line (or lines) for people on standard error, where a CI log or Argo CD shows it: through
/// `escape::lines` (nothing hidden, no line a GitHub Actions workflow command), since the
/// messages quote folders, files and values of the repository. Names in it should have gone
/// through `escape::text` already; this is the last guard, not the only one.
pub fn say(text: &str) {
    let mut line = cilium_cmp_yaml::escape::lines(text);
    line.push('\n');
    to_stderr(&line);
}

/// `say` without the line break it adds: for text that ends its own lines (or is empty).
pub fn say_part(text: &str) {
    to_stderr(&cilium_cmp_yaml::escape::lines(text));
}

/// Writes to stderr, ignoring an error (stderr closed, or a pipe whose reader went away):
/// `eprint!` would panic there, and a message nobody can read is no reason to fail a command
/// whose work succeeded. The only way the binary writes to stderr besides its log lines.
pub fn to_stderr(text: &str) {
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(text.as_bytes()).and_then(|()| err.flush());
}

/// A diagnostic with every piece that quotes the repository escaped as `say` escapes: the
/// message, labels and help; an excerpt the escaper would change is left out (its offsets would
/// no longer fit), its place still named.
pub fn escaped(
    mut d: cilium_cmp_yaml::diagnostic::Diagnostic,
) -> cilium_cmp_yaml::diagnostic::Diagnostic {
    use cilium_cmp_yaml::escape;
    d.message = escape::lines(&d.message);
    d.help = d.help.iter().map(|h| escape::lines(h)).collect();
    for l in d.primary.iter_mut().chain(d.labels.iter_mut()) {
        l.message = escape::lines(&l.message);
        l.span.source = escape::text(&l.span.source);
        if l.span
            .excerpt
            .as_ref()
            .is_some_and(|e| escape::lines(&e.text) != e.text)
        {
            l.span.excerpt = None;
        }
    }
    d
}

/// Writes `text` to `path` whole or not at all: into a new file beside it (created exclusively,
/// so nothing else's file is overwritten) with `path`'s mode and owner, then renamed over
/// `path`. A failure leaves `path` as it was and removes the temporary file. A link, a
/// hard-linked or a read-only file is refused unless `force` (`replace_file`).
pub fn write_file(path: &Path, text: &str, force: Force) -> anyhow::Result<()> {
    cilium_cmp_render::replace_file::replace(path, text.as_bytes(), force)
        .with_context(|| format!("cannot write {}", path.display()))
}

/// Refuses, before any work, a target `write_file` would refuse: a command writing several
/// files (`fix-values`) then writes all of them or none.
pub fn check_writable(path: &Path, force: Force) -> anyhow::Result<()> {
    cilium_cmp_render::replace_file::check(path, force)
        .with_context(|| format!("cannot write {}", path.display()))
}

/// Standard input, which one command may read only once (`-f -` or `--set-file KEY=-`, as Helm
/// reads them); bounded and checked like any input file.
#[derive(Default)]
pub struct Stdin {
    taken_by: Option<String>,
}

impl Stdin {
    /// Reads standard input for `user` (the flag that names it, for the error when a second one
    /// asks).
    pub fn read(&mut self, user: &str) -> anyhow::Result<String> {
        if let Some(first) = &self.taken_by {
            return Err(cilium_cmp_gitops::refusal::UsageError::Stdin(format!(
                "{user} reads standard input ('-'), which {first} already read; it can be read once: \
                 pass the other values as a file"
            ))
            .into());
        }
        self.taken_by = Some(user.to_string());
        Ok(limits::read_stdin(STDIN_NAME)?)
    }
}

/// Helm reads `-` (with spaces around it) as standard input.
pub fn is_stdin(name: &str) -> bool {
    name.trim() == "-"
}
