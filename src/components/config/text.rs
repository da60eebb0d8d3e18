//! Go-template and Sprig behaviours the `cilium-config` ConfigMap depends on beyond `tmpl`:
//! duration validation, `int`/`float64` casts, `join`, `toJson`, and how text printed into the
//! YAML without quotes is read back.

use serde_json::Value;

use super::super::Ctx;
use crate::error::RenderError;
use crate::tmpl::{go_g_float, print, truthy};

/// `{{ x }}` as Helm prints it: nil prints nothing (Helm blanks Go's `<no value>`).
pub fn text(v: &Value) -> String {
    if v.is_null() {
        String::new()
    } else {
        print(v)
    }
}

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
    for item in list_items(items) {
        doc.push_str("\n    ");
        doc.push_str(&text(item));
    }
    doc.push('\n');
    from_line(ctx, path, &doc)
}

fn from_line(ctx: &Ctx, path: &str, doc: &str) -> Result<Value, RenderError> {
    let parsed = crate::yaml::parse_values(doc).map_err(|e| {
        ctx.invalid(
            path,
            format!("printed into cilium-config unquoted, this value makes the ConfigMap invalid YAML ({e}); use plain text without YAML syntax"),
        )
    })?;
    match parsed.value {
        Value::Object(mut m) if m.len() == 1 => Ok(m.remove("k").unwrap_or(Value::Null)),
        _ => Err(ctx.invalid(
            path,
            "printed into cilium-config unquoted, this value adds entries to the ConfigMap; use plain text without YAML syntax",
        )),
    }
}

/// The elements a template `range` visits over a list; anything else yields none.
fn list_items(v: &Value) -> Vec<&Value> {
    match v {
        Value::Array(a) => a.iter().collect(),
        Value::Object(m) => m.values().collect(),
        _ => Vec::new(),
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

/// Sprig's `int` (cast.ToInt): floats truncate, strings parse (0 when they do not), bools 1/0.
pub fn to_int(v: &Value) -> i64 {
    match v {
        Value::Number(n) => n
            .as_i64()
            .unwrap_or_else(|| n.as_f64().map(|f| f as i64).unwrap_or(0)),
        Value::Bool(b) => i64::from(*b),
        Value::String(s) => parse_int_text(s).unwrap_or(0),
        _ => 0,
    }
}

fn parse_int_text(s: &str) -> Option<i64> {
    // cast trims a zero fraction ("10.0") before parsing with Go's base prefixes.
    let s = match s.split_once('.') {
        Some((int, frac)) if !frac.is_empty() && frac.bytes().all(|b| b == b'0') => int,
        _ => s,
    };
    let (neg, digits) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let lower = digits.to_ascii_lowercase();
    let (radix, body) = if let Some(r) = lower.strip_prefix("0x") {
        (16, r.to_string())
    } else if let Some(r) = lower.strip_prefix("0o") {
        (8, r.to_string())
    } else if let Some(r) = lower.strip_prefix("0b") {
        (2, r.to_string())
    } else if lower.len() > 1 && lower.starts_with('0') {
        (8, lower[1..].to_string())
    } else {
        (10, lower.clone())
    };
    let body = if radix != 10 || lower.starts_with('0') {
        body.replace('_', "")
    } else {
        body
    };
    if body.is_empty() || body.starts_with(['+', '-']) {
        return None;
    }
    let n = i64::from_str_radix(&body, radix).ok()?;
    Some(if neg { -n } else { n })
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
    if go_duration_ok(&s) {
        Ok(s)
    } else {
        Err(ctx.invalid(
            path,
            format!("{s:?} is not a duration; write a number with a unit (ns, us, ms, s, m, h), for example \"30s\", \"5m0s\" or \"1h30m\""),
        ))
    }
}

/// Whether Go's `time.ParseDuration` accepts `s`.
pub fn go_duration_ok(s: &str) -> bool {
    const LIMIT: u128 = 1 << 63;
    let mut rest = s.strip_prefix(['-', '+']).unwrap_or(s);
    let negative = s.starts_with('-');
    if rest == "0" {
        return true;
    }
    if rest.is_empty() {
        return false;
    }
    let mut total: u128 = 0;
    while !rest.is_empty() {
        let int_len = rest.bytes().take_while(u8::is_ascii_digit).count();
        let (int_part, after) = rest.split_at(int_len);
        let (frac_part, after) = match after.strip_prefix('.') {
            Some(a) => {
                let n = a.bytes().take_while(u8::is_ascii_digit).count();
                a.split_at(n)
            }
            None => ("", after),
        };
        if int_part.is_empty() && frac_part.is_empty() {
            return false;
        }
        let unit_len = after
            .char_indices()
            .find(|(_, c)| *c == '.' || c.is_ascii_digit())
            .map_or(after.len(), |(i, _)| i);
        let (unit, after) = after.split_at(unit_len);
        let scale: u128 = match unit {
            "ns" => 1,
            "us" | "\u{b5}s" | "\u{3bc}s" => 1_000,
            "ms" => 1_000_000,
            "s" => 1_000_000_000,
            "m" => 60_000_000_000,
            "h" => 3_600_000_000_000,
            _ => return false,
        };
        let whole: u128 = if int_part.is_empty() {
            0
        } else {
            match int_part.parse::<u128>() {
                Ok(w) if w < LIMIT => w,
                _ => return false,
            }
        };
        let mut v = whole * scale;
        if v > LIMIT {
            return false;
        }
        // The fraction adds at most one unit; Go truncates it to whole nanoseconds.
        let mut frac_value: f64 = 0.0;
        let mut place = 1.0;
        for d in frac_part.bytes() {
            place /= 10.0;
            frac_value += f64::from(d - b'0') * place;
        }
        v += (frac_value * scale as f64) as u128;
        total += v;
        if total > LIMIT {
            return false;
        }
        rest = after;
    }
    total < LIMIT || (negative && total == LIMIT)
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

/// Go's `%s` of a value: strings as they are, other scalars in Go's bad-verb form.
fn percent_s(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "%!s(<nil>)".into(),
        Value::Bool(b) => format!("%!s(bool={b})"),
        Value::Number(n) => format!("%!s(float64={})", go_g_float(n.as_f64().unwrap_or(0.0))),
        Value::Array(a) => format!(
            "[{}]",
            a.iter().map(percent_s).collect::<Vec<_>>().join(" ")
        ),
        Value::Object(m) => format!(
            "map[{}]",
            m.iter()
                .map(|(k, v)| format!("{k}:{}", percent_s(v)))
                .collect::<Vec<_>>()
                .join(" ")
        ),
    }
}

/// Sprig's `toJson` (HTML characters escaped) or `toRawJson` (not): Go's encoding/json, keys
/// sorted, no spaces.
pub fn to_json(v: &Value, escape_html: bool) -> String {
    let mut out = String::new();
    write_json(&mut out, v, escape_html);
    out
}

fn write_json(out: &mut String, v: &Value, html: bool) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => out.push_str(&i.to_string()),
            (_, Some(u)) => out.push_str(&u.to_string()),
            _ => out.push_str(&json_float(n.as_f64().unwrap_or(0.0))),
        },
        Value::String(s) => json_string(out, s, html),
        Value::Array(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_json(out, x, html);
            }
            out.push(']');
        }
        Value::Object(m) => {
            out.push('{');
            for (i, (k, x)) in m.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                json_string(out, k, html);
                out.push(':');
                write_json(out, x, html);
            }
            out.push('}');
        }
    }
}

/// encoding/json's float form: decimal between 1e-6 and 1e21, else exponent without a
/// zero-padded negative exponent (1e-7, 1e+21).
fn json_float(f: f64) -> String {
    let abs = f.abs();
    if abs == 0.0 || (1e-6..1e21).contains(&abs) {
        return format!("{f}");
    }
    let sci = format!("{f:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if exp < 0 {
        format!("{mantissa}e-{}", -exp)
    } else {
        format!("{mantissa}e+{exp:02}")
    }
}

fn json_string(out: &mut String, s: &str, html: bool) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '<' | '>' | '&' if html => out.push_str(&format!("\\u{:04x}", c as u32)),
            '\u{2028}' | '\u{2029}' => out.push_str(&format!("\\u{:04x}", c as u32)),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn durations_follow_go() {
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
            to_json(&v, true),
            r#"{"a":"\u003cx\u003e\u0026","b":[1,0.5,1e-7,null]}"#
        );
        assert_eq!(to_json(&v, false), r#"{"a":"<x>&","b":[1,0.5,1e-7,null]}"#);
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
