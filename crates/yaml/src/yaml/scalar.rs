//! The one classifier of plain (unquoted) scalars: what go-yaml v2, Helm's YAML library, makes of
//! a bare word. The reader types values with it, the `toYaml` emulation quotes what would not
//! read back as a string, and the canonical writer quotes what any reader could take for another
//! type (with extra rules of its own on top, see `write.rs`).

/// What a plain scalar resolves to.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Plain {
    /// `null`, `~` or nothing.
    Null,
    /// `true`, `yes`, `on`, `y` and their negations, as YAML 1.1 reads them.
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
    /// Anything else: a string.
    String,
}

impl Plain {
    /// Whether the scalar, written bare, would not read back as the same string.
    pub fn is_typed(self) -> bool {
        self != Plain::String
    }
}

/// Resolves a plain scalar with go-yaml v2's rules. Three corners differ from go-yaml and are
/// kept, because values already read this way: `_` is dropped before the float check also after
/// a leading `.` (`._5` is 0.5 here, text to go-yaml), `0b-1` and `0b+1` stay text (go-yaml's
/// binary fallback takes them), and `-0x8000000000000001` to `-0xFFFFFFFFFFFFFFFF` are numbers
/// (go-yaml's int64 overflows there and it keeps the text).
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

    #[test]
    fn classes() {
        use Plain::*;
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
            ("._5", Number(0.5)),
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

    /// Strings near every edge of the plain-scalar rules: all short ones over the characters
    /// numbers, timestamps and the YAML 1.1 words are made of, dates and times valid and
    /// not, the words in every case with `_` inserted, and known oddities.
    fn tricky_strings() -> Vec<String> {
        let mut out = Vec::new();
        let alpha: Vec<char> = "0123456789.:+-eExXoO_tTzZ ~yYnNiIfFaAlLuU"
            .chars()
            .collect();
        for a in &alpha {
            out.push(a.to_string());
            for b in &alpha {
                out.push(format!("{a}{b}"));
                for c in &alpha {
                    out.push(format!("{a}{b}{c}"));
                }
            }
        }
        let small: Vec<char> = "01259:.-+_eTxZ ".chars().collect();
        for a in &small {
            for b in &small {
                for c in &small {
                    for d in &small {
                        out.push(format!("{a}{b}{c}{d}"));
                        out.push(format!("1{a}{b}{c}{d}"));
                    }
                }
            }
        }
        for y in [
            "0000", "1999", "2000", "2001", "2023", "2024", "2100", "9999", "12345", "999",
        ] {
            for m in 0..=13 {
                for d in 0..=32 {
                    for (mf, df) in [
                        (format!("{m}"), format!("{d}")),
                        (format!("{m:02}"), format!("{d:02}")),
                    ] {
                        let date = format!("{y}-{mf}-{df}");
                        for tail in [
                            "",
                            "T1:2:3Z",
                            "t10:20:30.5+01:00",
                            " 10:20:30",
                            " 10:20:30Z",
                            "T24:00:00Z",
                            "T10:20:30.1234567890Z",
                            "T10:20:30-05",
                            "T10:20:30",
                            "x",
                            " ",
                            "T23:59:59.999999999-23:59",
                        ] {
                            out.push(format!("{date}{tail}"));
                            out.push(format!("-{date}{tail}"));
                        }
                    }
                }
            }
        }
        let mut words = Vec::new();
        for w in [
            "inf", "nan", "yes", "no", "on", "off", "true", "false", "null", "y", "n",
        ] {
            let n = w.len();
            for mask in 0..(1u32 << n) {
                let cased: String = w
                    .chars()
                    .enumerate()
                    .map(|(i, c)| {
                        if mask & (1 << i) != 0 {
                            c.to_ascii_uppercase()
                        } else {
                            c
                        }
                    })
                    .collect();
                words.push(cased.clone());
                for i in 0..=n {
                    words.push(format!("{}_{}", &cased[..i], &cased[i..]));
                }
            }
        }
        for w in words {
            for p in ["", ".", "+.", "-.", "+", "-", "_.", "._", "1", "0x"] {
                out.push(format!("{p}{w}"));
            }
        }
        for s in [
            "1e400",
            "-1e400",
            "1e308",
            "18446744073709551615",
            "18446744073709551616",
            "-18446744073709551615",
            "-9223372036854775809",
            "0x10000000000000000",
            "0xFFFFFFFFFFFFFFFF",
            "-0x8000000000000001",
            "0b-1",
            "0b+1",
            "+0x1F",
            "1_000_000",
            "1__0",
            "_1",
            "1_",
            "0o_17",
            "190:20:30",
            "190:20:30.15",
            "1:2:3",
            "-1:59",
            "1:60",
            "1:2:3.4_5",
            "0.",
            "+.5",
            "-.5e3",
            "1.5e+3",
            "1.5e",
            "6.8523015e+5",
            "685.230_15e+03",
            "685_230.15",
            "02472256",
            "0x_0A_74_AE",
            "0b1010_0111_0100_1010_1110",
            "<<",
            "=",
            "---",
            "...",
            "- x",
            "a: b",
            "key:",
            "#x",
            "2001-12-14t21:59:43.10-05:00",
            "2001-12-14 21:59:43.10 -5",
            "2002-12-14",
            "12:30:00",
        ] {
            out.push(s.to_string());
        }
        out
    }

    /// FNV-1a: a fingerprint that stays the same across Rust releases.
    fn fnv(hash: &mut u64, bytes: &[u8]) {
        for &b in bytes {
            *hash = (*hash ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
        }
    }

    /// Every decision made from the classifier, over `tricky_strings`, fingerprinted: the
    /// reader's typing, the canonical writer's quoting (whose bytes the content hash locks) and
    /// the `toYaml` emulation's quoting. The constant was recorded from the rules as they were
    /// before the classifier; a change here changes output somewhere.
    #[test]
    fn decisions_are_unchanged() {
        let mut hash = 0xcbf2_9ce4_8422_2325u64;
        for s in tricky_strings() {
            let read = crate::yaml::read::resolve_plain(&s)
                .unwrap_or(serde_json::Value::String(s.clone()));
            let plain = crate::yaml::write::is_plain_safe(&s);
            let typed = classify(&s).is_typed();
            fnv(&mut hash, s.as_bytes());
            fnv(&mut hash, &[0xff, u8::from(plain), u8::from(typed)]);
            fnv(&mut hash, read.to_string().as_bytes());
        }
        assert_eq!(hash, 17_783_168_381_325_234_891);
    }
}
