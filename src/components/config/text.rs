//! How `cilium-config` reports Go-template behaviour that fails on user values: text printed
//! into the ConfigMap that breaks its YAML (the reading back itself is `tmpl::read_back_*`), and
//! the chart's duration validation.

use serde_json::Value;

use super::super::Ctx;
use crate::error::RenderError;
use crate::tmpl::{self, parse_duration, print, truthy, ReadBack};

/// `{{ x }}` as Helm prints it: nil prints nothing (Helm blanks Go's `<no value>`), which is
/// what `quote` prints inside its quotes.
pub use crate::tmpl::quote as text;

/// `tmpl::read_back_bare` of the value at `path`, printed as `text`.
pub fn bare(ctx: &Ctx, path: &str, text: &str) -> Result<Value, RenderError> {
    tmpl::read_back_bare(text).map_err(|e| refused(ctx, path, e))
}

/// `tmpl::read_back_dquoted` of the value at `path`, printed as `text`.
pub fn dquoted(ctx: &Ctx, path: &str, text: &str) -> Result<Value, RenderError> {
    tmpl::read_back_dquoted(text).map_err(|e| refused(ctx, path, e))
}

/// `tmpl::read_back_folded` of the list at `path`.
pub fn folded(ctx: &Ctx, path: &str, items: &Value) -> Result<Value, RenderError> {
    tmpl::read_back_folded(items).map_err(|e| refused(ctx, path, e))
}

fn refused(ctx: &Ctx, path: &str, why: ReadBack) -> RenderError {
    match why {
        ReadBack::Invalid(e) => ctx.invalid(
            path,
            format!("printed into cilium-config unquoted, this value makes the ConfigMap invalid YAML ({e}); use plain text without YAML syntax"),
        ),
        ReadBack::AddsEntries => ctx.invalid(
            path,
            "printed into cilium-config unquoted, this value adds entries to the ConfigMap; use plain text without YAML syntax",
        ),
    }
}

/// The chart's `validateDuration`: a set value must parse as a Go duration and prints as
/// written; an unset one prints `0s`.
pub fn duration(ctx: &Ctx, path: &str) -> Result<String, RenderError> {
    let v = ctx.v(path);
    if !truthy(v) {
        return Ok("0s".into());
    }
    let s = print(v);
    if parse_duration(&s).is_some() {
        Ok(s)
    } else {
        Err(ctx.invalid(
            path,
            format!("{s:?} is not a duration; write a number with a unit (ns, us, ms, s, m, h), for example \"30s\", \"5m0s\" or \"1h30m\""),
        ))
    }
}
