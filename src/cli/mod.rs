//! The command line's parts; `main.rs` dispatches to them.

pub mod adopt;
pub mod args;
pub mod chart;
pub mod diff;
pub mod fix_values;
pub mod fleet;
pub mod http;
pub mod import_application;
pub mod inputs;
pub mod io;
pub mod lock;
pub mod log;
pub mod talos_check;
pub mod usage;
pub mod verify;
