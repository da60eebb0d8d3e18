//! Mirrors the chart's templates: spire/
//!
//! Every SPIRE object is rendered only when the chart installs SPIRE itself; its server and
//! agent embed bundled init scripts evaluated as templates, which cilium-cmp does not do, so
//! that installation is refused as a whole. Pointing Cilium at an existing SPIRE server
//! (install disabled) renders nothing here and is supported.

use serde_json::Value;

use super::Ctx;
use crate::error::RenderError;

pub fn render(ctx: &Ctx) -> Result<Vec<Value>, RenderError> {
    if ctx.on("authentication.mutual.spire.enabled")
        && ctx.on("authentication.mutual.spire.install.enabled")
    {
        return Err(ctx.invalid(
            "authentication.mutual.spire.install.enabled",
            "installing SPIRE with the chart is not supported by cilium-cmp yet: the SPIRE \
             server and agent embed chart scripts evaluated as templates, which this renderer \
             does not do. Set authentication.mutual.spire.install.enabled to false and run SPIRE \
             yourself (set authentication.mutual.spire.serverAddress to its server), or keep \
             authentication.mutual.spire.enabled false",
        ));
    }
    Ok(Vec::new())
}
