//! Any text as a template of the engine (a bundled file or a template of a chart archive the user
//! supplies): rendered or refused, never a panic or a runaway.
#![no_main]

use cilium_cmp_render::engine::helm::render_text;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let values = serde_json::json!({
        "nodeinit": {"enabled": true, "bootstrapFile": "/tmp/cilium-bootstrap.d/cilium-bootstrap-time", "reconfigureKubelet": false},
        "gke": {"enabled": false},
        "authentication": {"mutual": {"spire": {"install": {"namespace": "cilium-spire"}}}},
        "count": 3.0,
        "empty": ""
    });
    let _ = render_text("files/fuzz.bash", text, &values);
});
