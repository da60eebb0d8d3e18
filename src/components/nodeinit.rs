//! Mirrors the chart's templates: cilium-nodeinit/
//!
//! The node-init DaemonSet embeds the chart's bundled startup/pre-stop scripts after evaluating
//! them as templates; cilium-cmp does not evaluate bundled template text, so the feature is
//! refused as a whole rather than rendered half-way.

use serde_json::Value;

use super::Ctx;
use crate::error::RenderError;

pub fn render(ctx: &Ctx) -> Result<Vec<Value>, RenderError> {
    if ctx.on("nodeinit.enabled") {
        return Err(ctx.invalid(
            "nodeinit.enabled",
            "the node-init DaemonSet is not supported by cilium-cmp yet: its startup and pre-stop \
             scripts are chart files evaluated as templates, which this renderer does not do. \
             Keep nodeinit.enabled false and prepare the nodes outside this chart (for example \
             with your own DaemonSet or the node image), or render this release with Helm",
        ));
    }
    Ok(Vec::new())
}
