//! What the test modules share, compiled once into the one test binary: the harness (needs,
//! ignored with the reason, failed under CI), the official chart archives, scratch folders,
//! child processes measured, the scenarios, Helm's references and the tests' Python. The Python
//! helpers the tests run (`*.py`) sit beside them.

pub mod charts;
pub mod child;
pub mod combination;
pub mod git;
pub mod harness;
pub mod helm_compare;
pub mod python;
pub mod refusal;
pub mod repack;
pub mod scenario;
pub mod scratch;
