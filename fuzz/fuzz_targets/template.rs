//! Any text as a bundled template file (nodeinit's and SPIRE's scripts come from a chart archive
//! the user supplies): evaluated or refused, never a panic or a runaway.
#![no_main]

use cilium_cmp::tmpl_eval::{evaluate, Scope};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let values = serde_json::json!({
        "nodeinit": {"enabled": true, "bootstrapFile": "/tmp/cilium-bootstrap.d/cilium-bootstrap-time", "reconfigureKubelet": false},
        "gke": {"enabled": false},
        "authentication": {"mutual": {"spire": {"install": {"namespace": "cilium-spire"}}}},
        "count": 3.0,
        "empty": ""
    });
    let scope = Scope {
        values: &values,
        namespace: "kube-system",
    };
    let _ = evaluate("files/fuzz.bash", text, &scope);
});
