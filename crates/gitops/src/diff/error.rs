//! Why `diff` (and `talos-check`'s comparison) gives no report.

/// A `diff` that cannot compare; the words are the ones shown.
#[derive(Debug, thiserror::Error)]
pub enum DiffError {
    /// Both sides have the same inputs: nothing could change.
    #[error("{0}")]
    SameInputs(String),
    /// The base revision's or the work tree's folders cannot be read or rendered.
    #[error("{0}")]
    Base(String),
    /// The two renders cannot be compared (a stream that is no objects).
    #[error("{0}")]
    Compare(String),
}

/// Why one side of a diff has no render.
#[derive(Debug, thiserror::Error)]
pub enum SideError {
    /// Its inputs do not render; the render's own error, so its kind and places are kept.
    #[error(transparent)]
    Render(#[from] cilium_cmp_render::error::RenderError),
    /// Its objects are past the bounds a comparison takes (`adopt::bounds::check_trees`).
    #[error("{0}")]
    TooLarge(String),
}
