//! The refusals of the commands' front ends that are no render's or folder's: usage mistakes
//! the argument parser cannot see, locks, `verify` and `talos-check`. Each carries the words
//! users have always been shown, and the place in their file when there is one, so
//! `diagnose` can give it a stable kind and a caret excerpt.

use cilium_cmp_yaml::diagnostic::Span;

/// A usage mistake the argument parser cannot catch; the status stays the one of bad input.
#[derive(Debug, thiserror::Error)]
pub enum UsageError {
    /// Flags that cannot be given together.
    #[error("{0}")]
    Conflict(String),
    /// A flag or argument the command needs is missing.
    #[error("{0}")]
    Missing(String),
    /// Standard input where a file is needed, or asked for twice.
    #[error("{0}")]
    Stdin(String),
    /// The same file named twice.
    #[error("{0}")]
    Repeated(String),
    /// More of a flag than the command takes.
    #[error("{0}")]
    TooMany(String),
    /// A path that is not the folder the flag needs (absent, absolute, not an application folder).
    #[error("{0}")]
    Folder(String),
    /// A target that exists already where the command writes a new one.
    #[error("{0}")]
    Exists(String),
    /// The process's environment cannot be read (a variable that is not UTF-8).
    #[error("{0}")]
    Environment(String),
}

/// A folder's lock (`cilium-cmp.lock`) that does not match, or a repository-wide lock run that
/// failed for some folders.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// The folder has no lock.
    #[error("{0}")]
    Missing(String),
    /// The lock holds another render than the folder gives now.
    #[error("{0}")]
    Stale(String),
    /// Some folders of a repository-wide run failed (each is named above the message).
    #[error("{0}")]
    FoldersFailed(String),
    /// The repository holds no application folder.
    #[error("{0}")]
    NoFolders(String),
    /// The application folders could not be listed.
    #[error("{0}")]
    Search(String),
}

/// Why `verify` refuses a render.
#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    /// The file (or an inline manifest in it) is no YAML stream; the span is where the reader
    /// stopped, when the text is the file's own.
    #[error("{message}")]
    NotYaml {
        /// The words shown.
        message: String,
        /// Where in the user's file.
        span: Option<Box<Span>>,
    },
    /// The stamped hash is not the content's.
    #[error("{0}")]
    Mismatch(String),
    /// No hash is stamped.
    #[error("{0}")]
    Unstamped(String),
}

/// A release the binary does not list whose archive is not in the chart folder either, so
/// nothing can be rendered for it.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct NotStored(pub String);

/// Why `talos-check` cannot compare a machine config with the folder.
#[derive(Debug, thiserror::Error)]
pub enum TalosError {
    /// The machine config is not one Talos would read; the span is where, when known.
    #[error("{message}")]
    MachineConfig {
        /// The words shown.
        message: String,
        /// Where in the user's file.
        span: Option<Box<Span>>,
    },
    /// An inline manifest of the machine config is no stream of objects.
    #[error("{0}")]
    InlineManifest(String),
}

/// Where a YAML reader stopped in `text`, the file shown as `file`, when `message` is its error
/// (`LINE:COLUMN: reason`, as `ReadError` shows it): for refusals that kept only the text.
pub fn syntax_span(file: &str, text: &str, message: &str) -> Option<Box<Span>> {
    let mut parts = message.splitn(3, ':');
    let line = parts.next()?.trim().parse().ok()?;
    let column = parts.next()?.trim().parse().ok()?;
    parts.next()?;
    Some(Box::new(Span::at(file, text, line, column)))
}

/// The entry `path` (dotted, as `Located::lines` keys it) of the YAML document `text`, the
/// file shown as `file`: its key on its line. None when the text does not read or has no such
/// entry; for refusals about a field of a file that did read.
pub fn entry_span(file: &str, text: &str, path: &str) -> Option<Box<Span>> {
    let doc = cilium_cmp_yaml::yaml::read::parse_values(text).ok()?;
    let line = *doc.lines.get(path)?;
    let key = path.rsplit('.').next();
    Span::of_entry(file, text, line, key).map(Box::new)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reader_position_becomes_a_span_and_other_text_does_not() {
        let s = syntax_span("m.yaml", "a: 1\nb: [\n", "2:4: not closed").unwrap();
        assert_eq!((s.source.as_str(), s.line, s.column), ("m.yaml", 2, 4));
        assert!(syntax_span("m.yaml", "a: 1\n", "document 2 is not a config").is_none());
        let k = entry_span("a.yaml", "apiVersion: v1\nkind: Pod\n", "kind").unwrap();
        assert_eq!((k.line, k.column, k.start, k.end), (2, 1, 15, 19));
    }
}
