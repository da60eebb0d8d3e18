//! Any text read as a values file, with and without line recording: an error or a value, never
//! a panic, an abort or unbounded memory.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let _ = cilium_cmp_yaml::yaml::parse_value(text);
    let _ = cilium_cmp_yaml::yaml::parse_values(text);
});
