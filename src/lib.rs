//! cilium-cmp: Cilium's Kubernetes manifests rendered natively, identical to the upstream Helm
//! chart's output for the same values, and deterministic by construction.
//!
//! Pipeline: `values` (Helm merge rules) → the checks (`known_keys`, `schema`, `determinism`) →
//! `engine` (the official chart archive's own templates, as Helm 4 renders them) → `admission`
//! (what the cluster would refuse later) → `output` (canonical YAML, content hash).

pub mod admission;
pub mod adopt;
pub mod argocd;
pub mod changes;
pub mod chart;
pub mod cilium_facts;
pub mod data_json;
pub mod determinism;
pub mod diff;
pub mod editor_schema;
pub mod engine;
pub mod error;
pub mod escape;
pub mod fix_values;
pub mod fleet;
pub mod git_rev;
pub mod gofmt;
// `import-application`: above both the Argo CD folder and fix-values, which it uses.
pub mod import_application;
pub mod known_keys;
pub mod kube_version;
pub mod limits;
pub mod merge;
pub mod output;
pub mod parallel;

pub mod release_name;
pub mod render;
pub mod replace_file;
pub mod schema;

pub mod setexpr;
pub mod shell;
pub mod talos;
pub mod talos_config;
pub mod tmpl;
pub mod unified_diff;
pub mod values;
pub mod versions;
pub mod yaml;

pub use error::RenderError;
pub use render::{render, Inputs};
