//! Any text as an application folder's `cilium-cmp.yaml`: settings or an error, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let _ = cilium_cmp_gitops::argocd::folder::parse_settings(text, "cilium-cmp.yaml");
});
