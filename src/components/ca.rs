//! Mirrors the chart's templates: cilium-ca-bundle-configmap.yaml, cilium-ca-secret.yaml

use serde_json::Value;

use super::Ctx;
use crate::error::RenderError;

pub fn render(_ctx: &Ctx) -> Result<Vec<Value>, RenderError> {
    Ok(Vec::new())
}
