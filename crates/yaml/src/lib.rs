//! The lowest layer of cilium-cmp: YAML read as go-yaml reads it and written as it writes it
//! (`yaml`), Go's printing of numbers and strings (`gofmt`), the bounds every input is held to
//! (`limits`) and the escaping of user text in messages (`escape`). It depends on no other crate
//! of the workspace; everything else builds on it.

// System calls std lacks go through rustix and signal-hook, whose safe APIs carry the checks.
#![forbid(unsafe_code)]
// Every public item says what it is for. The modules marked `allow(missing_docs)` below are the
// ones not yet through that pass (issue 28); a new module starts documented.
#![warn(missing_docs)]

pub mod diagnostic;
pub mod escape;
pub mod gofmt;
pub mod limits;
pub mod yaml;
