//! Go templates' truth, Sprig's `quote` and Go's printing of a values tree, for the policy
//! layers that read values and rendered objects as JSON (admission, the fleet checks, adopt-check):
//! the engine has its own value type and functions; these agree with them on JSON values.

use serde_json::Value;

#[cfg(test)]
use cilium_cmp_yaml::gofmt::go_json_float;
pub use cilium_cmp_yaml::gofmt::print;

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

/// `{{ value | quote }}`'s text for a value that may be absent: Sprig quotes nil as an empty
/// string.
pub fn quote(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        other => print(other),
    }
}

/// Sprig's `b64enc` (the engine's).
pub use crate::engine::funcs::b64enc;

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
    }

    #[test]
    fn truth_follows_go_templates() {
        assert!(!truthy(&json!(0.0)));
        assert!(!truthy(&json!("")));
        assert!(!truthy(&json!({})));
        assert!(truthy(&json!("false")));
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
}
