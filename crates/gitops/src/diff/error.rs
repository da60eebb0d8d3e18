//! Why `diff` (and `talos-check`'s comparison) gives no report.

/// A `diff` that cannot compare; the words are the ones shown.
#[derive(Debug, thiserror::Error)]
pub enum DiffError {
    /// Both sides have the same inputs: nothing could change.
    #[error("{0}")]
    SameInputs(String),
    /// One side's inputs do not render.
    #[error("{0}")]
    Render(String),
    /// The base revision's or the work tree's folders cannot be read or rendered.
    #[error("{0}")]
    Base(String),
    /// The two renders cannot be compared (a stream that is no objects).
    #[error("{0}")]
    Compare(String),
}
