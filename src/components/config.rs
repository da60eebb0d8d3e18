//! Mirrors the chart's templates: cilium-configmap.yaml

use serde_json::Value;

use super::Ctx;
use crate::error::RenderError;

/// The `cilium-config` ConfigMap, when the chart renders it. Other components hash it for their
/// `cilium.io/cilium-configmap-checksum` annotation.
pub fn cilium_config(_ctx: &Ctx) -> Result<Option<Value>, RenderError> {
    Ok(None)
}

pub fn render(ctx: &Ctx) -> Result<Vec<Value>, RenderError> {
    Ok(cilium_config(ctx)?.into_iter().collect())
}
