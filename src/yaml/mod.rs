//! The project's one YAML stack: a go-yaml-compatible reader and a canonical writer.
//!
//! Parsing rides on `saphyr-parser` (a maintained, spec-complete event parser with source spans);
//! scalar typing and output are ours, because Helm's semantics (YAML 1.1 scalars, then JSON) are
//! not what any serde YAML crate implements, and the output must be byte-stable forever.

pub mod read;
pub mod scalar;
pub mod write;

pub use read::{parse_stream, parse_stream_values, parse_value, parse_values, Located, ReadError};
pub use write::{to_string, write_document};
