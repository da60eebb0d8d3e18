//! Mirrors the chart's templates: hubble-ui/

use serde_json::Value;

use super::Ctx;
use crate::error::RenderError;

pub fn render(_ctx: &Ctx) -> Result<Vec<Value>, RenderError> {
    Ok(Vec::new())
}
