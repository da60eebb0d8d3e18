//! Turns an official chart archive into this project's facts for that Cilium release: the
//! chart's default values and its values schema as plain JSON (no comments, no template text). Adding a patch release
//! is: run `cilium-cmp import-chart cilium-X.Y.Z.tgz`, add the version to `versions.rs`, run the
//! parity tests.

use std::path::Path;

use crate::chart::ChartFiles;

/// Writes `DATA_DIR/VERSION/values.json` and returns the version imported.
pub fn import(archive: &Path, data_dir: &Path) -> anyhow::Result<String> {
    let chart = ChartFiles::open(archive)?;
    let version = chart.version()?;
    let text = chart.text("values.yaml")?;
    let doc = crate::yaml::parse_values(&text)
        .map_err(|e| anyhow::anyhow!("values.yaml of {}: {e}", chart.path()))?;
    let dir = data_dir.join(&version);
    std::fs::create_dir_all(&dir)?;
    let mut json = serde_json::to_string_pretty(&doc.value)?;
    json.push('\n');
    std::fs::write(dir.join("values.json"), json)?;
    // The values schema: types and enumerations Helm checks values against before rendering.
    let schema: serde_json::Value = serde_json::from_str(&chart.text("values.schema.json")?)?;
    let mut compact = serde_json::to_string(&schema)?;
    compact.push('\n');
    std::fs::write(dir.join("values.schema.json"), compact)?;
    Ok(version)
}
