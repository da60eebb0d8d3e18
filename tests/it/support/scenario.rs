//! Reading a scenario (`../shared/cilium-reference/scenarios/NAME.yaml`, or the project's own in
//! `tests/scenarios/`) into render inputs, shared by the parity test and the benchmark.

use std::path::Path;

use cilium_cmp_render::render::Inputs;
use serde_json::Value;

/// A scenario's render inputs (without a chart archive) and whether it needs one.
#[allow(dead_code)] // the benchmark's entry point; the parity suite reads files by path
pub fn inputs(reference: &Path, name: &str, version: &str) -> Option<(Inputs, bool)> {
    inputs_from_file(
        &reference.join("scenarios").join(format!("{name}.yaml")),
        version,
    )
}

/// The same for a scenario file anywhere.
pub fn inputs_from_file(file: &Path, version: &str) -> Option<(Inputs, bool)> {
    let text = std::fs::read_to_string(file).ok()?;
    let name = file.file_stem()?.to_string_lossy();
    let scen = cilium_cmp_yaml::yaml::parse_values(&text).ok()?.value;
    let mut inputs = Inputs::new(version.parse().ok()?);
    inputs.namespace = scen["namespace"]
        .as_str()
        .unwrap_or("kube-system")
        .to_string();
    if let Some(k) = scen["kubeVersion"].as_str() {
        inputs.kube_version = k.parse().expect("a scenario names a Kubernetes version");
    }
    if let Value::Array(a) = &scen["apiVersions"] {
        inputs.api_versions = cilium_cmp_render::kube_version::ApiVersions::from_lists(
            a.iter().filter_map(|x| x.as_str()),
        );
    }
    inputs.values_files.push((
        format!("{name}.yaml"),
        cilium_cmp_yaml::yaml::to_string(&scen["values"]),
    ));
    Some((inputs, scen["needsChartArchive"] == Value::Bool(true)))
}
