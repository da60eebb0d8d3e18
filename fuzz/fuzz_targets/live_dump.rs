//! Any text as an `adopt-check --live` dump: its objects or a clear error, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let _ = cilium_cmp::adopt::live::objects_of("live.yaml", text, "kube-system");
    // The whole comparison, managedFields included, on the text as render and as live dump.
    let _ = cilium_cmp::adopt::check(
        text,
        &[("live.yaml".into(), text.into())],
        "kube-system",
        "cilium",
    );
});
