//! The project's one YAML stack: a go-yaml-compatible reader, a canonical writer, and
//! go-yaml v2's own emitter for what the chart prints with `toYaml` (`go_emit`).
//!
//! Parsing rides on `saphyr-parser` (a maintained, spec-complete event parser with source spans);
//! scalar typing and output are ours, because Helm's semantics (YAML 1.1 scalars, then JSON) are
//! not what any serde YAML crate implements, and the output must be byte-stable forever.

pub mod go_emit;
pub mod read;
pub mod scalar;
pub mod write;

pub use read::{parse_stream, parse_stream_values, parse_value, parse_values, Located, ReadError};
pub use write::{to_string, write_document};
