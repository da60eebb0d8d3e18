//! Any `--set` argument: an error or an assignment, never a panic or unbounded memory.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|expr: &str| {
    let mut root = serde_json::Value::Object(Default::default());
    let _ = cilium_cmp::setexpr::apply(&mut root, expr);
});
