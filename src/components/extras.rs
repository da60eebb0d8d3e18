//! Mirrors the chart's templates: cilium-resource-quota.yaml, cilium-secrets-namespace.yaml, cilium-dynamic-metrics-configmap.yaml, cilium-flowlog-configmap.yaml

use serde_json::Value;

use super::Ctx;
use crate::error::RenderError;

pub fn render(_ctx: &Ctx) -> Result<Vec<Value>, RenderError> {
    Ok(Vec::new())
}
