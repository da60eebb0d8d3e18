//! Go-template and Sprig behaviours the `cilium-config` ConfigMap depends on beyond `tmpl`:
//! duration validation, `int`/`float64` casts, `join`, `toJson`, and how text printed into the
//! YAML without quotes is read back.

use serde_json::Value;

use super::super::Ctx;
use crate::error::RenderError;
use crate::tmpl::{parse_duration, percent_s, print, range_items, truthy};

/// `{{ x }}` as Helm prints it: nil prints nothing (Helm blanks Go's `<no value>`), which is
/// what `quote` prints inside its quotes.
pub use crate::tmpl::quote as text;

/// What YAML makes of `key: TEXT` when the chart prints TEXT without quotes: numbers, booleans,
/// nulls, flow collections and comments all take effect.
pub fn bare(ctx: &Ctx, path: &str, text: &str) -> Result<Value, RenderError> {
    let line = format!("k: {text}\n");
    from_line(ctx, path, &line)
}

/// What YAML makes of `key: "TEXT"` when the chart wraps printed text in double quotes itself
/// (no escaping happens, so quotes and backslashes in TEXT change the meaning).
pub fn dquoted(ctx: &Ctx, path: &str, text: &str) -> Result<Value, RenderError> {
    if !text.contains(['"', '\\', '\n', '\r']) {
        return Ok(Value::String(text.to_string()));
    }
    let line = format!("k: \"{text}\"\n");
    from_line(ctx, path, &line)
}

/// The chart's `key: {{- range list }}` followed by one item per indented line: a multi-line
/// plain scalar, which YAML folds into one line joined by spaces.
pub fn folded(ctx: &Ctx, path: &str, items: &Value) -> Result<Value, RenderError> {
    let mut doc = String::from("k:");
    for item in range_items(items) {
        doc.push_str("\n    ");
        doc.push_str(&text(item));
    }
    doc.push('\n');
    from_line(ctx, path, &doc)
}

fn from_line(ctx: &Ctx, path: &str, doc: &str) -> Result<Value, RenderError> {
    let parsed = crate::yaml::parse_value(doc).map_err(|e| {
        ctx.invalid(
            path,
            format!("printed into cilium-config unquoted, this value makes the ConfigMap invalid YAML ({e}); use plain text without YAML syntax"),
        )
    })?;
    match parsed {
        Value::Object(mut m) if m.len() == 1 => Ok(m.remove("k").unwrap_or(Value::Null)),
        _ => Err(ctx.invalid(
            path,
            "printed into cilium-config unquoted, this value adds entries to the ConfigMap; use plain text without YAML syntax",
        )),
    }
}

/// Sprig's `join SEP x`: nil items are skipped, a scalar is joined as itself, nil is empty.
pub fn join(v: &Value, sep: &str) -> String {
    match v {
        Value::Null => String::new(),
        Value::Array(a) => a
            .iter()
            .filter(|x| !x.is_null())
            .map(print)
            .collect::<Vec<_>>()
            .join(sep),
        other => print(other),
    }
}

/// Sprig's `float64` (cast.ToFloat64): strings parse (0 when they do not), bools 1/0.
pub fn to_float(v: &Value) -> f64 {
    match v {
        Value::Number(n) => n.as_f64().unwrap_or(0.0),
        Value::Bool(b) => f64::from(u8::from(*b)),
        Value::String(s) => s.trim().parse::<f64>().unwrap_or(0.0),
        _ => 0.0,
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

/// The chart's `mapToString`: `k=v` pairs, keys sorted, joined by commas (Go's `%s`).
pub fn map_to_string(v: &Value) -> String {
    match v {
        Value::Object(m) => m
            .iter()
            .map(|(k, v)| format!("{k}={}", percent_s(v)))
            .collect::<Vec<_>>()
            .join(","),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tmpl::{to_int64 as to_int, to_json, to_raw_json};
    use serde_json::json;

    #[test]
    fn durations_follow_go() {
        let go_duration_ok = |s: &str| parse_duration(s).is_some();
        for ok in [
            "0", "5m0s", "1h30m", "1.5h", "-2s", ".5s", "300ms", "1us", "1\u{b5}s",
        ] {
            assert!(go_duration_ok(ok), "{ok}");
        }
        for bad in ["", "5", "30", "s", "1x", "1.s5", "-", "9999999999999h"] {
            assert!(!go_duration_ok(bad), "{bad}");
        }
    }

    #[test]
    fn casts_follow_sprig() {
        assert_eq!(to_int(&json!(16384.0)), 16384);
        assert_eq!(to_int(&json!(2.9)), 2);
        assert_eq!(to_int(&json!("42")), 42);
        assert_eq!(to_int(&json!("42.0")), 42);
        assert_eq!(to_int(&json!("0x10")), 16);
        assert_eq!(to_int(&json!("abc")), 0);
        assert_eq!(to_int(&json!(true)), 1);
        assert_eq!(to_float(&json!("0.5")), 0.5);
    }

    #[test]
    fn json_like_go() {
        let v = json!({"b": [1.0, 0.5, 1e-7, null], "a": "<x>&"});
        assert_eq!(
            to_json(&v),
            r#"{"a":"\u003cx\u003e\u0026","b":[1,0.5,1e-7,null]}"#
        );
        assert_eq!(to_raw_json(&v), r#"{"a":"<x>&","b":[1,0.5,1e-7,null]}"#);
    }

    #[test]
    fn joins_and_maps() {
        assert_eq!(join(&json!(["a", null, 1.0]), " "), "a 1");
        assert_eq!(join(&json!("x"), ","), "x");
        assert_eq!(join(&Value::Null, ","), "");
        assert_eq!(
            map_to_string(&json!({"z": "1", "a": true})),
            "a=%!s(bool=true),z=1"
        );
    }
}
