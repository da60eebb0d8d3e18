//! Any `--set`, `--set-string` or `--set-json` argument (the first byte picks the flag): an
//! error or an assignment, never a panic or unbounded memory.
#![no_main]

use cilium_cmp_render::setexpr::{apply_as, Kind};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let Ok(expr) = std::str::from_utf8(rest) else {
        return;
    };
    let kind = match pick % 3 {
        0 => Kind::Typed,
        1 => Kind::String,
        _ => Kind::Json,
    };
    let mut root = serde_json::Value::Object(Default::default());
    let _ = apply_as(&mut root, expr, kind);
});
