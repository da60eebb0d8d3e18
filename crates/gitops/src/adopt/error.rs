//! Why `adopt-check` cannot read the Argo CD files it is given (the live dumps' own refusals
//! are `AdoptError`'s).

use cilium_cmp_yaml::diagnostic::Span;

/// An Argo CD Application or `argocd-cm` given to `adopt-check` (or `lock`) that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ArgoFileError {
    /// `--argocd-application`: no YAML, or no Application.
    #[error("{message}")]
    Application {
        /// The words shown.
        message: String,
        /// Where in the user's file, when known.
        span: Option<Box<Span>>,
    },
    /// `--argocd-cm`: no YAML, or settings Argo CD would not read.
    #[error("{message}")]
    ConfigMap {
        /// The words shown.
        message: String,
        /// Where in the user's file, when known.
        span: Option<Box<Span>>,
    },
    /// The render cannot be matched against the `resource.exclusions` rules.
    #[error("{0}")]
    Exclusions(String),
}
