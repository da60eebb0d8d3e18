//! cilium-cmp's renderer: Cilium's Kubernetes manifests rendered natively, identical to the
//! upstream Helm chart's output for the same values, and deterministic by construction.
//!
//! Pipeline: `values` (Helm merge rules) → the checks (`known_keys`, `schema`, `determinism`) →
//! `engine` (the official chart archive's own templates, as Helm 4 renders them) → `admission`
//! (what the cluster would refuse later) → `output` (canonical YAML, content hash). The chart
//! archives are read from the store (`chart`); downloading one goes through an HTTP client the
//! caller hands in (`chart::fetch::Transport`), so this crate links none.

// System calls std lacks go through rustix and signal-hook, whose safe APIs carry the checks. The
// one exception is mapping a compiled chart's file (`chart::shared`), allowed there alone.
#![deny(unsafe_code)]
// Every public item says what it is for; an item public only for the crate's own use is
// `pub(crate)` instead of documented for readers it does not have.
#![warn(missing_docs)]

pub mod admission;
pub mod changes;
pub mod chart;
pub mod cilium_facts;
pub mod data_json;
pub mod determinism;
pub mod editor_schema;
pub mod engine;
pub mod error;
pub mod known_keys;
pub mod kube_version;
pub mod merge;
pub mod output;
pub mod parallel;
pub mod quantity;
pub mod release_name;
pub mod render;
pub mod replace_file;
pub mod schema;
pub mod setexpr;
pub mod shell;
pub mod talos;
pub mod talos_config;
pub mod tmpl;
pub mod values;
pub mod versions;
