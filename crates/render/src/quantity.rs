//! Kubernetes resource quantities compared by amount, not by spelling. The API server stores a
//! quantity in its canonical form (`cpu: 0.5` comes back as `500m`, `memory: 1024Mi` as `1Gi`,
//! a number as a string), so a render and a live object that ask for the same amount spell it
//! differently; comparing the text would report a restart that is none. The same reading
//! tells which text the API server refuses as a quantity at all (admission).

use serde_json::Value;

/// Where a value is a quantity: the entries of `resources.limits` and `resources.requests` (of
/// containers, pods and claims), a ResourceQuota's `spec.hard`, an `emptyDir`'s `sizeLimit`.
pub fn is_quantity_field(keys: &[&str]) -> bool {
    matches!(
        keys,
        [.., "resources", "limits" | "requests", _]
            | ["spec", "hard", _]
            | [.., "emptyDir", "sizeLimit"]
    )
}

/// Whether two values are the same amount (both must read as quantities).
pub fn same_amount(a: &Value, b: &Value) -> bool {
    match (amount(a), amount(b)) {
        (Some(x), Some(y)) => x == y,
        _ => false,
    }
}

/// Whether the API server reads `v` as a quantity when it decodes the object: the rules of
/// `ParseQuantity` and `Quantity.UnmarshalJSON` in k8s.io/apimachinery
/// (pkg/api/resource/quantity.go): surrounding blanks trimmed; an optional sign; digits with at
/// most one point; then nothing, a binary suffix (`Ki` to `Ei`), a decimal one (`n`, `u`, `m`,
/// `k`, `M` to `E`) or an exponent (`e3`, `E-2`). A JSON number always is one; null is none set.
pub fn is_quantity(v: &Value) -> bool {
    match v {
        Value::Number(_) | Value::Null => true,
        Value::String(s) => parses(s.trim()),
        _ => false,
    }
}

fn parses(text: &str) -> bool {
    if text.is_empty() {
        return false;
    }
    let unsigned = text.strip_prefix(['-', '+']).unwrap_or(text);
    let number_end = unsigned
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(unsigned.len());
    let (number, suffix) = unsigned.split_at(number_end);
    if number.matches('.').count() > 1 {
        return false;
    }
    match suffix {
        "" | "Ki" | "Mi" | "Gi" | "Ti" | "Pi" | "Ei" | "n" | "u" | "m" | "k" | "M" | "G" | "T"
        | "P" | "E" => true,
        _ => suffix.strip_prefix(['e', 'E']).is_some_and(|exponent| {
            let digits = exponent.strip_prefix(['-', '+']).unwrap_or(exponent);
            !digits.is_empty() && digits.len() <= 18 && digits.bytes().all(|b| b.is_ascii_digit())
        }),
    }
}

/// The amount in billionths (the API's smallest unit is a thousandth of a core, `1m`; a
/// billionth covers `n` as well), or None for text that is no quantity.
pub fn amount(v: &Value) -> Option<i128> {
    let text = match v {
        Value::String(s) => s.clone(),
        // The reader keeps numbers as float64, as Helm does; print them as Go would.
        Value::Number(n) => crate::tmpl::print(&Value::Number(n.clone())),
        _ => return None,
    };
    nano(&text)
}

fn nano(text: &str) -> Option<i128> {
    let text = text.trim();
    let (sign, unsigned) = match text.strip_prefix('-') {
        Some(rest) => (-1, rest),
        None => (1, text.strip_prefix('+').unwrap_or(text)),
    };
    let number_end = unsigned
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(unsigned.len());
    let (number, suffix) = unsigned.split_at(number_end);
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    if whole.is_empty() && fraction.is_empty() || whole.len() + fraction.len() > 30 {
        return None;
    }
    let digits: i128 = format!("{whole}{fraction}").parse().ok()?;
    // The number is digits / 10^fraction; the suffix multiplies it.
    let (numerator, denominator_pow10) = match suffix {
        "Ki" | "Mi" | "Gi" | "Ti" | "Pi" | "Ei" => {
            let power = 10 * (1 + "KMGTPE".find(&suffix[..1])? as u32);
            (digits.checked_mul(1i128 << power)?, 0)
        }
        _ => {
            let exponent: i32 = match suffix {
                "n" => -9,
                "u" => -6,
                "m" => -3,
                "" => 0,
                "k" => 3,
                "M" => 6,
                "G" => 9,
                "T" => 12,
                "P" => 15,
                "E" => 18,
                _ => suffix
                    .strip_prefix(['e', 'E'])?
                    .parse()
                    .ok()
                    .filter(|e: &i32| e.abs() <= 18)?,
            };
            (digits, -exponent)
        }
    };
    // In billionths: numerator * 10^(9 - fraction digits - pow10-of-denominator), exact only.
    let shift = 9 - fraction.len() as i32 - denominator_pow10;
    let value = if shift >= 0 {
        numerator.checked_mul(10i128.checked_pow(shift as u32)?)?
    } else {
        let divisor = 10i128.checked_pow((-shift) as u32)?;
        if numerator % divisor != 0 {
            // Finer than the API keeps; compared exactly, never rounded into a match.
            return None;
        }
        numerator / divisor
    };
    Some(sign * value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_same_amount_spelt_as_the_api_server_stores_it_matches() {
        for (render, live) in [
            (json!(0.5), json!("500m")),
            (json!(1.0), json!("1")),
            (json!("1000m"), json!("1")),
            (json!("1024Mi"), json!("1Gi")),
            (json!("128974848"), json!("123Mi")),
            (json!("1e3"), json!("1k")),
            (json!("0.1"), json!("100m")),
            (json!("10k"), json!("10k")),
        ] {
            assert!(same_amount(&render, &live), "{render} vs {live}");
        }
        for (render, live) in [
            (json!("1"), json!("2")),
            (json!("1G"), json!("1Gi")),
            (json!("100m"), json!("101m")),
            (json!("abc"), json!("abc")),
            (json!(true), json!("1")),
        ] {
            assert!(!same_amount(&render, &live), "{render} vs {live}");
        }
    }

    #[test]
    fn what_the_api_server_reads_as_a_quantity() {
        for ok in [
            "1", "0", "1.5", "1.", ".5", "100m", "1Ki", "2Ei", "1e3", "1E-2", "5n", "+1", "-1",
            " 3Gi ", "m", "1k",
        ] {
            assert!(is_quantity(&json!(ok)), "{ok}");
        }
        for bad in [
            "", "lots", "1 Gi", "1.2.3", "1KB", "1e", "1gi", "1Mi5", "e3x",
        ] {
            assert!(!is_quantity(&json!(bad)), "{bad}");
        }
        assert!(is_quantity(&json!(0.25)));
        assert!(!is_quantity(&json!(true)));
        assert!(!is_quantity(&json!({"a": 1})));
    }

    #[test]
    fn quantity_fields_are_the_resource_amounts() {
        assert!(is_quantity_field(&[
            "spec",
            "template",
            "spec",
            "containers",
            "resources",
            "limits",
            "cpu"
        ]));
        assert!(is_quantity_field(&["spec", "hard", "pods"]));
        assert!(!is_quantity_field(&[
            "spec",
            "template",
            "spec",
            "containers",
            "image"
        ]));
        assert!(!is_quantity_field(&["resources", "limits"]));
    }
}
