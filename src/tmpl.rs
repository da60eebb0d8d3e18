//! The few Go-template and Sprig behaviours whose exact output the chart's renders depend on:
//! how a value prints with `{{ }}`, what counts as true, and (through `gofmt`) how Go formats numbers; and the
//! Sprig functions whose results land in the chart's text (`quote`, `int64`, `float64`, `join`,
//! `b64enc`, `toJson`, the path functions, durations); and what YAML makes of text a template
//! prints into it (`bare`, `read_back_*`). Every component uses these, so there is one copy of
//! each.

use serde_json::Value;

use crate::gofmt::small_integer;
pub use crate::gofmt::{go_g_float, go_json_float, percent_s, print};

/// Go templates' notion of truth: false, 0, "", nil and empty collections are false.
pub fn truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(m) => !m.is_empty(),
    }
}

/// `{{ value | quote }}` for a value that may be absent: Sprig quotes nil as an empty string.
pub fn quote(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        other => print(other),
    }
}

/// `{{ x | quote }}` where the result lands in YAML as a string value: always a string, nil
/// quoting to "" (see `quote`).
pub fn quoted(v: &Value) -> Value {
    Value::String(quote(v))
}

/// The value a `with x` block inserts with `toYaml`: present only when Go-template true, so
/// empty maps, lists and strings leave the key out.
pub fn with(v: &Value) -> Option<Value> {
    truthy(v).then(|| v.clone())
}

/// The items `range` visits: a list's elements, or a map's values in key order (Go sorts map
/// keys); anything else ranges over nothing.
pub fn range_items(v: &Value) -> Vec<&Value> {
    match v {
        Value::Array(a) => a.iter().collect(),
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            keys.into_iter().filter_map(|k| m.get(k)).collect()
        }
        _ => Vec::new(),
    }
}

/// Go's `%q` of a string (`strconv.Quote`), which Sprig's `quote` writes into the text of
/// config files and scripts: the chart's output then carries Go's escapes, not YAML's.
pub fn go_quote(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\u{b}' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Sprig's `quote` of one value inside a text block: Go's `%q` of the printed value, and
/// nothing at all for nil (Sprig skips nil arguments).
pub fn quote_text(v: &Value) -> String {
    if v.is_null() {
        String::new()
    } else {
        go_quote(&print(v))
    }
}

/// Sprig's integer conversion (`int`, `int64`, and the operands of `mul`), which is
/// `cast.ToInt64`: numbers truncate, booleans are 0/1, text parses as Go's
/// `strconv.ParseInt(s, 0, 64)` after a trailing ".0…" is dropped, and anything else
/// (including text that does not parse) is 0.
pub fn to_int64(v: &Value) -> i64 {
    match v {
        Value::Number(n) => n
            .as_i64()
            .or_else(|| n.as_f64().map(|f| f as i64))
            .unwrap_or(0),
        Value::String(s) => parse_go_int(trim_zero_decimal(s)).unwrap_or(0),
        Value::Bool(b) => i64::from(*b),
        _ => 0,
    }
}

/// cast's `trimZeroDecimal`: "15.00" becomes "15"; text with other decimals stays as it is.
fn trim_zero_decimal(s: &str) -> &str {
    let mut found_zero = false;
    for (i, b) in s.bytes().enumerate().rev() {
        match b {
            b'.' if found_zero => return &s[..i],
            b'.' => {}
            b'0' => found_zero = true,
            _ => return s,
        }
    }
    s
}

/// Go's `strconv.ParseInt(s, 0, 64)`: optional sign, then decimal, `0x` hex, `0o`/`0` octal or
/// `0b` binary, with `_` separators allowed; None where Go reports an error.
pub fn parse_go_int(s: &str) -> Option<i64> {
    let (neg, rest) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    if rest.starts_with(['+', '-']) {
        return None;
    }
    let lower = rest.replace('_', "").to_ascii_lowercase();
    let (digits, radix) = if let Some(h) = lower.strip_prefix("0x") {
        (h, 16)
    } else if let Some(b) = lower.strip_prefix("0b") {
        (b, 2)
    } else if let Some(o) = lower.strip_prefix("0o") {
        (o, 8)
    } else if lower.len() > 1 && lower.starts_with('0') {
        (&lower[1..], 8)
    } else {
        (lower.as_str(), 10)
    };
    if digits.starts_with(['+', '-']) {
        return None;
    }
    // Parsed with the sign, so that i64::MIN fits.
    let signed = if neg {
        format!("-{digits}")
    } else {
        digits.to_string()
    };
    i64::from_str_radix(&signed, radix).ok()
}

/// Sprig's `b64enc`: standard base64 with padding.
pub fn b64enc(data: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        let b = [
            chunk.first().copied().unwrap_or(0),
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(A[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

// Go's path functions (Sprig's `clean`, `dir`, `base`): the engine's, one copy.
pub use crate::engine::funcs::{path_base, path_clean, path_dir};

/// Go templates' `eq VALUE "text"` on a value: nil never equals, a string compares, and any
/// other kind makes Helm fail ("incompatible types for comparison"), returned as None.
pub fn eq_text(v: &Value, text: &str) -> Option<bool> {
    match v {
        Value::Null => Some(false),
        Value::String(s) => Some(s == text),
        _ => None,
    }
}

/// The condition of Sprig's `ternary`, which must be a real boolean (Helm fails on anything
/// else, nil included): None where Helm would fail.
pub fn ternary_bool(v: &Value) -> Option<bool> {
    match v {
        Value::Bool(b) => Some(*b),
        _ => None,
    }
}

/// Sprig's `toJson` (Go's `json.Marshal` of a decoded YAML tree): keys sorted bytewise, no
/// spaces, every number a float64, and `<`, `>`, `&`, U+2028 and U+2029 escaped.
pub fn to_json(v: &Value) -> String {
    let mut out = String::new();
    write_json(&mut out, v, true);
    out
}

/// Sprig's `toRawJson`: `toJson` without the escaping of `<`, `>` and `&`.
pub fn to_raw_json(v: &Value) -> String {
    let mut out = String::new();
    write_json(&mut out, v, false);
    out
}

fn write_json(out: &mut String, v: &Value, html: bool) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => {
            let f = n.as_f64().unwrap_or(0.0);
            match small_integer(f, 1e15) {
                Some(i) => {
                    use std::fmt::Write;
                    let _ = write!(out, "{i}");
                }
                None => out.push_str(&json_number(f)),
            }
        }
        Value::String(s) => write_json_string(out, s, html),
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
            // serde_json's Map is a BTreeMap here (no preserve_order), already in Go's byte order.
            out.push('{');
            for (i, (k, x)) in m.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_json_string(out, k, html);
                out.push(':');
                write_json(out, x, html);
            }
            out.push('}');
        }
    }
}

/// encoding/json's float text: `go_json_float`, then Go's clean-up of a one-digit negative
/// exponent ("1e-07" is written "1e-7"; positive exponents keep two digits).
fn json_number(f: f64) -> String {
    let mut text = go_json_float(f);
    if let Some(i) = text.find("e-0") {
        if text.len() == i + 4 {
            text.remove(i + 2);
        }
    }
    text
}

// Go's encoding/json string form: the engine's, one copy.
use crate::engine::json::string as write_json_string;

/// The chart's `hasDuration`-style test: the value, printed, is a Go duration other than zero.
pub fn has_duration(v: &Value) -> bool {
    parse_duration(&print(v)).is_some_and(|d| d != 0)
}

/// Go's `time.ParseDuration`, in nanoseconds; None where Go reports an error (the engine's,
/// one copy).
pub fn parse_duration(s: &str) -> Option<i128> {
    crate::engine::funcs::parse_duration(s).ok().map(i128::from)
}

/// A value printed bare into YAML by the chart is re-typed by the YAML reader: model that.
pub fn bare(v: &Value) -> Value {
    match v {
        Value::String(s) => {
            crate::yaml::read::resolve_plain(s).unwrap_or_else(|| Value::String(s.clone()))
        }
        Value::Number(_) => {
            let text = print(v);
            crate::yaml::read::resolve_plain(&text).unwrap_or(Value::String(text))
        }
        other => other.clone(),
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
pub fn to_float64(v: &Value) -> f64 {
    match v {
        Value::Number(n) => n.as_f64().unwrap_or(0.0),
        Value::Bool(b) => f64::from(u8::from(*b)),
        Value::String(s) => s.trim().parse::<f64>().unwrap_or(0.0),
        _ => 0.0,
    }
}

/// A `k=v` list as charts build it from a map with `printf "%s=%s"` in a `range`: keys sorted,
/// values in Go's `%s`, joined by commas.
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

/// Why text a template printed into YAML does not read back as one value.
#[derive(Debug)]
pub enum ReadBack {
    /// The document is no longer valid YAML.
    Invalid(crate::yaml::ReadError),
    /// The text added entries of its own next to the key.
    AddsEntries,
}

/// What YAML makes of `key: TEXT` when a template prints TEXT without quotes: numbers,
/// booleans, nulls, flow collections and comments all take effect.
pub fn read_back_bare(text: &str) -> Result<Value, ReadBack> {
    read_back(&format!("k: {text}\n"))
}

/// What YAML makes of `key: "TEXT"` when a template wraps printed text in double quotes itself
/// (no escaping happens, so quotes and backslashes in TEXT change the meaning).
pub fn read_back_dquoted(text: &str) -> Result<Value, ReadBack> {
    if !text.contains(['"', '\\', '\n', '\r']) {
        return Ok(Value::String(text.to_string()));
    }
    read_back(&format!("k: \"{text}\"\n"))
}

/// `key: {{- range list }}` followed by one printed item per indented line: a multi-line plain
/// scalar, which YAML folds into one line joined by spaces.
pub fn read_back_folded(items: &Value) -> Result<Value, ReadBack> {
    let mut doc = String::from("k:");
    for item in range_items(items) {
        doc.push_str("\n    ");
        doc.push_str(&quote(item));
    }
    doc.push('\n');
    read_back(&doc)
}

fn read_back(doc: &str) -> Result<Value, ReadBack> {
    match crate::yaml::parse_value(doc).map_err(ReadBack::Invalid)? {
        Value::Object(mut m) if m.len() == 1 => Ok(m.remove("k").unwrap_or(Value::Null)),
        _ => Err(ReadBack::AddsEntries),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn floats_print_like_go() {
        assert_eq!(print(&json!(7445.0)), "7445");
        assert_eq!(print(&json!(1000000.0)), "1e+06");
        assert_eq!(print(&json!(100000.0)), "100000");
        assert_eq!(print(&json!(0.0025)), "0.0025");
        assert_eq!(print(&json!(0.00001)), "1e-05");
        assert_eq!(print(&json!(123456789.0)), "1.23456789e+08");
        assert_eq!(print(&json!(2)), "2");
        assert_eq!(print(&json!(-999999.0)), "-999999");
        assert_eq!(print(&json!(-1000000.0)), "-1e+06");
        assert_eq!(go_json_float(123456789012345.0), "123456789012345");
        assert_eq!(go_json_float(1e15), "1000000000000000");
        assert_eq!(go_json_float(-0.0), "-0");
        assert_eq!(to_json(&json!([-0.0, 3.0, 1e21, 2.5])), "[-0,3,1e+21,2.5]");
    }

    #[test]
    fn json_keys_in_byte_order_and_strings_escaped() {
        let v = json!({"b": 1.0, "B": "<a&b>\"\u{2028}", "a": [0.0000001, "x\ny"]});
        assert_eq!(
            to_json(&v),
            r#"{"B":"\u003ca\u0026b\u003e\"\u2028","a":[1e-7,"x\ny"],"b":1}"#
        );
        assert_eq!(to_raw_json(&json!("<a>")), r#""<a>""#);
    }

    #[test]
    fn truth_follows_go_templates() {
        assert!(!truthy(&json!(0.0)));
        assert!(!truthy(&json!("")));
        assert!(!truthy(&json!({})));
        assert!(truthy(&json!("false")));
    }

    #[test]
    fn sprig_int_conversion() {
        assert_eq!(to_int64(&json!(365.0)), 365);
        assert_eq!(to_int64(&json!(1.9)), 1);
        assert_eq!(to_int64(&json!(2.9)), 2);
        assert_eq!(to_int64(&json!("1095")), 1095);
        assert_eq!(to_int64(&json!("15.00")), 15);
        assert_eq!(to_int64(&json!("1.5")), 0);
        assert_eq!(to_int64(&json!("0x10")), 16);
        assert_eq!(to_int64(&json!("010")), 8);
        assert_eq!(to_int64(&json!("-1_000")), -1000);
        assert_eq!(to_int64(&json!("+-5")), 0);
        assert_eq!(to_int64(&json!("abc")), 0);
        assert_eq!(to_int64(&json!(true)), 1);
        assert_eq!(to_int64(&Value::Null), 0);
    }

    #[test]
    fn quoting_like_go() {
        assert_eq!(go_quote("a\"b\\c"), "\"a\\\"b\\\\c\"");
        assert_eq!(go_quote("x\n\t\u{7}\u{1}"), "\"x\\n\\t\\a\\x01\"");
        assert_eq!(quote_text(&json!("a\"b\\c\n")), "\"a\\\"b\\\\c\\n\"");
        assert_eq!(quote_text(&json!(10.0)), "\"10\"");
        assert_eq!(quote_text(&Value::Null), "");
        assert_eq!(quoted(&Value::Null), json!(""));
        assert_eq!(quoted(&json!(true)), json!("true"));
    }

    #[test]
    fn base64_pads() {
        assert_eq!(b64enc(b""), "");
        assert_eq!(b64enc(b"f"), "Zg==");
        assert_eq!(b64enc(b"fo"), "Zm8=");
        assert_eq!(b64enc(b"foo"), "Zm9v");
        assert_eq!(b64enc(b"foobar"), "Zm9vYmFy");
        assert_eq!(b64enc(b"endpoints:"), "ZW5kcG9pbnRzOg==");
    }

    #[test]
    fn paths_like_go() {
        assert_eq!(
            path_dir("/run/spire/sockets/admin.sock"),
            "/run/spire/sockets"
        );
        assert_eq!(path_dir("admin.sock"), ".");
        assert_eq!(path_dir("/a//b/../c/"), "/a/c");
        assert_eq!(path_dir("/x"), "/");
        assert_eq!(path_clean("a/../../b"), "../b");
        assert_eq!(
            path_base("/tmp/x.d/cilium-bootstrap-time"),
            "cilium-bootstrap-time"
        );
        assert_eq!(path_base("/a/b/"), "b");
        assert_eq!(path_base(""), ".");
        assert_eq!(path_base("///"), "/");
    }

    #[test]
    fn go_durations() {
        for ok in [
            "0", "5m0s", "1h30m", "1.5h", "-2s", ".5s", "300ms", "1us", "1\u{b5}s",
        ] {
            assert!(parse_duration(ok).is_some(), "{ok}");
        }
        for bad in ["", "5", "30", "s", "1x", "1.s5", "-", "9999999999999h"] {
            assert!(parse_duration(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn sprig_casts_joins_and_maps() {
        assert_eq!(to_int64(&json!(16384.0)), 16384);
        assert_eq!(to_int64(&json!("42.0")), 42);
        assert_eq!(to_float64(&json!("0.5")), 0.5);
        assert_eq!(to_float64(&json!(true)), 1.0);
        assert_eq!(to_float64(&json!("x")), 0.0);
        assert_eq!(join(&json!(["a", null, 1.0]), " "), "a 1");
        assert_eq!(join(&json!("x"), ","), "x");
        assert_eq!(join(&Value::Null, ","), "");
        assert_eq!(
            map_to_string(&json!({"z": "1", "a": true})),
            "a=%!s(bool=true),z=1"
        );
        assert_eq!(to_raw_json(&json!({"a": "<x>&"})), r#"{"a":"<x>&"}"#);
    }

    #[test]
    fn printed_text_reads_back_as_yaml() {
        assert_eq!(read_back_bare("0755").unwrap(), json!(493.0));
        assert_eq!(read_back_bare("a # c").unwrap(), json!("a"));
        assert_eq!(read_back_bare("[a, b]").unwrap(), json!(["a", "b"]));
        assert!(matches!(
            read_back_bare("a\nb: c"),
            Err(ReadBack::AddsEntries)
        ));
        assert!(matches!(read_back_bare("[a"), Err(ReadBack::Invalid(_))));
        assert_eq!(read_back_dquoted("yes").unwrap(), json!("yes"));
        assert_eq!(read_back_dquoted("a\\tb").unwrap(), json!("a\tb"));
        assert_eq!(
            read_back_folded(&json!(["a", 1.0, "c"])).unwrap(),
            json!("a 1 c")
        );
    }

    #[test]
    fn durations_follow_go() {
        assert_eq!(parse_duration("5m0s"), Some(300_000_000_000));
        assert_eq!(parse_duration("1.5h"), Some(5_400_000_000_000));
        assert_eq!(parse_duration("0"), Some(0));
        assert_eq!(parse_duration("300"), None);
        assert_eq!(parse_duration(""), None);
        assert!(has_duration(&json!("15m")));
        assert!(!has_duration(&json!("0s")));
        assert!(!has_duration(&Value::Null));
    }

    #[test]
    fn json_like_go() {
        let v = json!({"b": [1.0, 0.5, 1e21], "a": "<x&y>\u{2028}\"\\\n\u{1}", "@": null});
        assert_eq!(
            to_json(&v),
            r#"{"@":null,"a":"\u003cx\u0026y\u003e\u2028\"\\\n\u0001","b":[1,0.5,1e+21]}"#
        );
    }

    #[test]
    fn template_conditions() {
        assert_eq!(eq_text(&Value::Null, "x"), Some(false));
        assert_eq!(eq_text(&json!("x"), "x"), Some(true));
        assert_eq!(eq_text(&json!(1.0), "x"), None);
        assert_eq!(ternary_bool(&json!(false)), Some(false));
        assert_eq!(ternary_bool(&json!("true")), None);
        assert_eq!(with(&json!({})), None);
        assert_eq!(with(&json!([1])), Some(json!([1])));
        let m = json!({"b": 2, "a": 1});
        assert_eq!(range_items(&m), vec![&json!(1), &json!(2)]);
        assert!(range_items(&json!("s")).is_empty());
    }
}
