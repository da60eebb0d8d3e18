//! The command line's parts; `main.rs` dispatches to them.

pub mod adopt;
pub mod args;
pub mod chart;
pub mod diff;
pub mod fix_values;
pub mod fleet;
pub mod folder;
pub mod http;
pub mod import_application;
pub mod inputs;
pub mod io;
pub mod lock;
pub mod log;
pub mod progress;
pub mod render;
pub mod talos_check;
pub mod usage;
pub mod verify;

use std::process::ExitCode;

/// The status of a check that found what the user must look at (a disruptive adoption, Cluster
/// Mesh findings, a diff with consequences): 3, as docs/command-line.md lists the statuses.
pub const FINDINGS: u8 = 3;

/// A status the library computed (`diff::exit_code`: 0, 1, 2 or 3) as the process's.
pub fn exit_code(code: i32) -> ExitCode {
    match u8::try_from(code) {
        Ok(0) => ExitCode::SUCCESS,
        Ok(c) => ExitCode::from(c),
        Err(_) => ExitCode::FAILURE,
    }
}
