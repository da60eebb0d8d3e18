//! cilium-cmp's GitOps tools, built on the renderer (`cilium-cmp-render`): the Argo CD
//! plugin and its application folder (`argocd`), `import-application`, `adopt-check` (`adopt`),
//! `diff`, `fleet-check` (`fleet`), `fix-values` and the git revisions `diff --base` reads
//! (`git_rev`).

// System calls std lacks go through rustix and signal-hook, whose safe APIs carry the checks.
#![forbid(unsafe_code)]
// Every public item says what it is for. The modules marked `allow(missing_docs)` below are the
// ones not yet through that pass (issue 28); a new module starts documented.
#![warn(missing_docs)]

pub mod adopt;
pub mod argocd;
pub mod diagnose;
pub mod diff;
pub mod fix_values;
pub mod fleet;
pub mod git_rev;
pub mod import_application;
pub mod refusal;
pub mod unified_diff;
