//! The few Go-template and Sprig behaviours whose exact output the chart's renders depend on:
//! how a value prints with `{{ }}`, what counts as true, and how Go formats numbers.

use serde_json::Value;

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

/// `{{ value | quote }}` for a value that may be absent: Sprig quotes nil as an empty string.
pub fn quote(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        other => print(other),
    }
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
    }

    #[test]
    fn truth_follows_go_templates() {
        assert!(!truthy(&json!(0.0)));
        assert!(!truthy(&json!("")));
        assert!(!truthy(&json!({})));
        assert!(truthy(&json!("false")));
    }
}
