//! The one classifier of plain (unquoted) scalars: what go-yaml v2, Helm's YAML library, makes of
//! a bare word. The reader types values with it, the `toYaml` emulation quotes what would not
//! read back as a string, and the canonical writer quotes what any reader could take for another
//! type (with extra rules of its own on top, see `write.rs`).

/// What a plain scalar resolves to.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Plain {
    Null,
    Bool(bool),
    /// An integer or float within float64's range (Helm's values hold every number as float64).
    Number(f64),
    /// `.inf`, `-.Inf`, `.nan`, …: floats to go-yaml, which Helm's JSON step cannot carry.
    InfNan,
    /// `2001-12-14`, `2001-12-14T21:59:43.1Z`, `2001-12-14 21:59:43`: go-yaml's timestamp forms.
    Timestamp,
    /// `190:20:30`: go-yaml reads it as a string, but YAML 1.1 as a base-60 number, so go-yaml's
    /// emitter quotes it.
    Base60,
    String,
}

impl Plain {
    /// Whether the scalar, written bare, would not read back as the same string.
    pub fn is_typed(self) -> bool {
        self != Plain::String
    }
}

/// Resolves a plain scalar with go-yaml v2's rules.
pub fn classify(text: &str) -> Plain {
    match text {
        "" | "~" | "null" | "Null" | "NULL" => return Plain::Null,
        "y" | "Y" | "yes" | "Yes" | "YES" | "true" | "True" | "TRUE" | "on" | "On" | "ON" => {
            return Plain::Bool(true)
        }
        "n" | "N" | "no" | "No" | "NO" | "false" | "False" | "FALSE" | "off" | "Off" | "OFF" => {
            return Plain::Bool(false)
        }
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" | "-.inf" | "-.Inf" | "-.INF"
        | ".nan" | ".NaN" | ".NAN" => return Plain::InfNan,
        _ => {}
    }
    // Everything else that is not a string starts like a number.
    if !starts_like_number(text) {
        return Plain::String;
    }
    if let Some(f) = number(text) {
        Plain::Number(f)
    } else if is_timestamp(text) {
        Plain::Timestamp
    } else if is_base60(text) {
        Plain::Base60
    } else {
        Plain::String
    }
}

/// A digit, sign or dot first: the only way a scalar other than the words above can be typed.
pub fn starts_like_number(text: &str) -> bool {
    text.starts_with(|c: char| c.is_ascii_digit() || matches!(c, '+' | '-' | '.'))
}

/// go-yaml's integers (Go's `ParseInt`/`ParseUint` with base 0) and floats, `_` separators
/// dropped first. Out of range both fail and the text stays a string.
fn number(text: &str) -> Option<f64> {
    let plain: std::borrow::Cow<str> = if text.contains('_') {
        text.replace('_', "").into()
    } else {
        text.into()
    };
    if let Some(i) = parse_go_int(&plain) {
        return Some(i as f64);
    }
    if is_yaml_float(&plain) {
        return plain.parse::<f64>().ok().filter(|f| f.is_finite());
    }
    None
}

/// Go's strconv.ParseInt with base 0: decimal, 0x hex, 0o / leading-0 octal, 0b binary.
fn parse_go_int(s: &str) -> Option<i128> {
    let (neg, body) = match s.as_bytes().first()? {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    if body.is_empty() {
        return None;
    }
    let lower = body.to_ascii_lowercase();
    let (digits, radix) = if let Some(rest) = lower.strip_prefix("0x") {
        (rest, 16)
    } else if let Some(rest) = lower.strip_prefix("0b") {
        (rest, 2)
    } else if let Some(rest) = lower.strip_prefix("0o") {
        (rest, 8)
    } else if lower.len() > 1 && lower.starts_with('0') {
        (&lower[1..], 8)
    } else {
        (lower.as_str(), 10)
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    let v = i128::from_str_radix(digits, radix).ok()?;
    // go-yaml falls back to uint64, then float; beyond that the text stays a string.
    if v > u64::MAX as i128 {
        return None;
    }
    Some(if neg { -v } else { v })
}

/// go-yaml v2's float syntax: `[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?`.
fn is_yaml_float(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
        i += 1;
    }
    let int_start = i;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    let int_digits = i - int_start;
    if i < b.len() && b[i] == b'.' {
        i += 1;
        let frac_start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if int_digits == 0 && i == frac_start {
            return false;
        }
    } else if int_digits == 0 {
        return false;
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        i += 1;
        if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
            i += 1;
        }
        let exp_start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if i == exp_start {
            return false;
        }
    }
    i == b.len()
}

/// go-yaml v2's timestamps (what Go's `time.Parse` accepts of its formats): `YYYY-M-D`,
/// optionally followed by `T`/`t` and `h:m:s[.frac]` with a `Z` or `±hh:mm` zone, or by a space
/// and a zone-less time.
fn is_timestamp(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    let num = |i: &mut usize, min: usize, max: usize| -> Option<u32> {
        let start = *i;
        while *i < b.len() && b[*i].is_ascii_digit() && *i - start < max {
            *i += 1;
        }
        if *i - start < min {
            return None;
        }
        s[start..*i].parse().ok()
    };
    let expect = |i: &mut usize, c: u8| -> Option<()> { (b.get(*i) == Some(&c)).then(|| *i += 1) };
    let mut parse = || -> Option<()> {
        let year = num(&mut i, 4, 4)?;
        expect(&mut i, b'-')?;
        let month = num(&mut i, 1, 2)?;
        expect(&mut i, b'-')?;
        let day = num(&mut i, 1, 2)?;
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
        let days = match month {
            1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
            4 | 6 | 9 | 11 => 30,
            2 if leap => 29,
            2 => 28,
            _ => return None,
        };
        if day == 0 || day > days {
            return None;
        }
        if i == b.len() {
            return Some(());
        }
        let zoned = match b[i] {
            b'T' | b't' => true,
            b' ' => false,
            _ => return None,
        };
        i += 1;
        let hour = num(&mut i, 1, 2)?;
        expect(&mut i, b':')?;
        let minute = num(&mut i, 1, 2)?;
        expect(&mut i, b':')?;
        let second = num(&mut i, 1, 2)?;
        if hour > 23 || minute > 59 || second > 59 {
            return None;
        }
        if b.get(i) == Some(&b'.') {
            i += 1;
            num(&mut i, 1, 9)?;
        }
        if zoned {
            match b.get(i) {
                Some(b'Z') => i += 1,
                Some(b'+' | b'-') => {
                    i += 1;
                    let h = num(&mut i, 2, 2)?;
                    expect(&mut i, b':')?;
                    let m = num(&mut i, 2, 2)?;
                    if h > 23 || m > 59 {
                        return None;
                    }
                }
                _ => return None,
            }
        }
        (i == b.len()).then_some(())
    };
    parse().is_some()
}

/// go-yaml's `[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?`.
fn is_base60(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = usize::from(matches!(b.first(), Some(b'+' | b'-')));
    if !b.get(i).is_some_and(u8::is_ascii_digit) {
        return false;
    }
    while b.get(i).is_some_and(|c| c.is_ascii_digit() || *c == b'_') {
        i += 1;
    }
    let mut groups = 0;
    while b.get(i) == Some(&b':') {
        i += 1;
        let start = i;
        while b.get(i).is_some_and(u8::is_ascii_digit) && i - start < 2 {
            i += 1;
        }
        let ok = match &b[start..i] {
            [d] => d.is_ascii_digit(),
            [a, _] => (b'0'..=b'5').contains(a),
            _ => false,
        };
        if !ok {
            return false;
        }
        groups += 1;
    }
    if groups == 0 {
        return false;
    }
    if b.get(i) == Some(&b'.') {
        i += 1;
        while b.get(i).is_some_and(|c| c.is_ascii_digit() || *c == b'_') {
            i += 1;
        }
    }
    i == b.len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use Plain::*;

    #[test]
    fn classes() {
        for (text, want) in [
            ("", Null),
            ("~", Null),
            ("Null", Null),
            ("nULL", String),
            ("yes", Bool(true)),
            ("Off", Bool(false)),
            ("0755", Number(493.0)),
            ("0o17", Number(15.0)),
            ("0x1F", Number(31.0)),
            ("-0b101", Number(-5.0)),
            ("1_000", Number(1000.0)),
            ("08", Number(8.0)),
            (".5", Number(0.5)),
            ("1e3", Number(1000.0)),
            ("1e400", String),
            ("18446744073709551616", Number(18446744073709551616.0)),
            ("0x10000000000000000", String),
            ("-.Inf", InfNan),
            (".in_f", String),
            ("2001-12-14", Timestamp),
            ("2025-1-2", Timestamp),
            ("2024-02-29", Timestamp),
            ("2023-02-29", String),
            ("2025-13-01", String),
            ("2001-12-14t21:59:43.10-05:00", Timestamp),
            ("2001-12-14 21:59:43.10", Timestamp),
            ("2001-12-14 21:59:43Z", String),
            ("12:30", Base60),
            ("-1_0:59:59.5", Base60),
            ("1:60", String),
            ("<<", String),
            ("=", String),
            ("1.2.3", String),
        ] {
            assert_eq!(classify(text), want, "{text:?}");
        }
    }
}
