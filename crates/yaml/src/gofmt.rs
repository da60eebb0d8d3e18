//! How Go prints a value: `%v` (what `{{ value }}` shows) and its float formats (`%g` and
//! encoding/json's). The chart's text goes through these, and so does the YAML stack wherever it
//! must print a number as Helm would; they sit below both so that neither imports the other.

use serde_json::Value;

/// What `{{ value }}` prints (Go's `%v`): floats in `%g` form (7445, 1e+06, 0.0025).
pub fn print(v: &Value) -> String {
    match v {
        Value::Null => "<nil>".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => i.to_string(),
            (_, Some(u)) => u.to_string(),
            _ => go_g_float(n.as_f64().unwrap_or(0.0)),
        },
        Value::String(s) => s.clone(),
        Value::Array(a) => format!("[{}]", a.iter().map(print).collect::<Vec<_>>().join(" ")),
        Value::Object(m) => format!(
            "map[{}]",
            m.iter()
                .map(|(k, v)| format!("{k}:{}", print(v)))
                .collect::<Vec<_>>()
                .join(" ")
        ),
    }
}

/// `f` as an integer when it is a whole number other than zero (zero keeps its sign in some
/// formats) and below `limit` in size, where every float format here prints plain digits.
fn small_integer(f: f64, limit: f64) -> Option<i64> {
    (f != 0.0 && f.fract() == 0.0 && f.abs() < limit).then_some(f as i64)
}

/// Go's strconv.FormatFloat(f, 'g', -1, 64), as used by `%v`: shortest digits, and the
/// exponent form when the decimal exponent is below -4 or at least 6.
pub fn go_g_float(f: f64) -> String {
    if f == 0.0 {
        return "0".into();
    }
    if !f.is_finite() {
        return if f.is_nan() {
            "NaN".into()
        } else if f > 0.0 {
            "+Inf".into()
        } else {
            "-Inf".into()
        };
    }
    if let Some(i) = small_integer(f, 1e6) {
        return i.to_string();
    }
    // Rust's `{:e}` gives the shortest round-trip digits, as Go's shortest formatting does.
    let sci = format!("{f:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if !(-4..6).contains(&exp) {
        let sign = if exp < 0 { '-' } else { '+' };
        return format!("{mantissa}e{sign}{:02}", exp.abs());
    }
    format!("{f}")
}

/// Go's encoding/json float formatting: plain decimal between 1e-6 and 1e21, else exponent.
pub fn go_json_float(f: f64) -> String {
    if let Some(i) = small_integer(f, 1e15) {
        return i.to_string();
    }
    let abs = f.abs();
    if abs != 0.0 && !(1e-6..1e21).contains(&abs) {
        let sci = format!("{f:e}");
        let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
        let exp: i32 = exp.parse().unwrap_or(0);
        let sign = if exp < 0 { '-' } else { '+' };
        return format!("{mantissa}e{sign}{:02}", exp.abs());
    }
    format!("{f}")
}
