//! TEMPORARY: the quoting/typing rules before the classifier, to compare against.
#![allow(dead_code, clippy::all)]
use crate::yaml::read::number;
use serde_json::Value;

/// The non-string meaning go-yaml v2 gives a plain scalar, if any.
pub fn resolve_plain(text: &str) -> Option<Value> {
    match text {
        "" | "~" | "null" | "Null" | "NULL" => return Some(Value::Null),
        "y" | "Y" | "yes" | "Yes" | "YES" | "true" | "True" | "TRUE" | "on" | "On" | "ON" => {
            return Some(Value::Bool(true))
        }
        "n" | "N" | "no" | "No" | "NO" | "false" | "False" | "FALSE" | "off" | "Off" | "OFF" => {
            return Some(Value::Bool(false))
        }
        _ => {}
    }
    let first = text.chars().next()?;
    if !(first.is_ascii_digit() || matches!(first, '+' | '-' | '.')) {
        return None;
    }
    if let Some(date) = timestamp(text) {
        return Some(Value::String(date));
    }
    let plain: std::borrow::Cow<str> = if text.contains('_') {
        text.replace('_', "").into()
    } else {
        text.into()
    };
    if let Some(i) = parse_go_int(&plain) {
        return Some(number(i as f64));
    }
    if is_yaml_float(&plain) {
        // Out of float64's range go-yaml's ParseFloat fails and the text stays a string.
        if let Ok(f) = plain.parse::<f64>().map(|f| f.is_finite().then_some(f)) {
            return f.map(number);
        }
    }
    match plain.as_ref() {
        // Infinity and NaN cannot pass through JSON, which Helm requires; keep the text.
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" | "-.inf" | "-.Inf" | "-.INF"
        | ".nan" | ".NaN" | ".NAN" => Some(Value::String(text.to_string())),
        _ => None,
    }
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
        (rest.to_string(), 16)
    } else if let Some(rest) = lower.strip_prefix("0b") {
        (rest.to_string(), 2)
    } else if let Some(rest) = lower.strip_prefix("0o") {
        (rest.to_string(), 8)
    } else if lower.len() > 1 && lower.starts_with('0') {
        (lower[1..].to_string(), 8)
    } else {
        (lower, 10)
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    let v = i128::from_str_radix(&digits, radix).ok()?;
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

/// A plain `YYYY-MM-DD` becomes a timestamp in go-yaml and an RFC 3339 string after JSON.
fn timestamp(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let date_like = b.len() == 10
        && b[4] == b'-'
        && b[7] == b'-'
        && b.iter()
            .enumerate()
            .all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit());
    date_like.then(|| format!("{s}T00:00:00Z"))
}

/// True when a string may be written bare and still read back as the same string by both
/// YAML 1.1 and 1.2 readers.
pub fn is_plain_safe(s: &str) -> bool {
    // Most strings in a render are names, labels and paths starting with a letter: decide those
    // in one pass; everything else takes the thorough path below.
    const NAME: [bool; 256] = {
        let mut t = [false; 256];
        let mut c = 0;
        while c < 256 {
            let b = c as u8;
            // `+` and `=` too (base64 text: certificates, keys): after a letter neither can
            // make a plain scalar read as anything but a string.
            t[c] =
                b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b'/' | b'+' | b'=');
            c += 1;
        }
        t
    };
    let b = s.as_bytes();
    // Without an early exit the loop runs without a branch per byte.
    if b.first().is_some_and(u8::is_ascii_alphabetic)
        && b.iter().fold(true, |ok, &c| ok & NAME[c as usize])
    {
        return !is_yaml11_word(s);
    }
    is_plain_safe_slow(s)
}

/// Words YAML 1.1 or go-yaml read as booleans or null.
fn is_yaml11_word(s: &str) -> bool {
    s.len() <= 5
        && matches!(
            s,
            "y" | "Y"
                | "yes"
                | "Yes"
                | "YES"
                | "n"
                | "N"
                | "no"
                | "No"
                | "NO"
                | "true"
                | "True"
                | "TRUE"
                | "false"
                | "False"
                | "FALSE"
                | "on"
                | "On"
                | "ON"
                | "off"
                | "Off"
                | "OFF"
                | "null"
                | "Null"
                | "NULL"
        )
}

fn is_plain_safe_slow(s: &str) -> bool {
    // Letters, digits and the punctuation a plain scalar may carry anywhere.
    const PLAIN: [bool; 256] = {
        let mut t = [false; 256];
        let mut c = 0;
        while c < 256 {
            let b = c as u8;
            t[c] = b.is_ascii_alphanumeric()
                || matches!(
                    b,
                    b'_' | b'-'
                        | b'.'
                        | b'/'
                        | b':'
                        | b'@'
                        | b'+'
                        | b'='
                        | b','
                        | b'('
                        | b')'
                        | b'$'
                        | b'^'
                        | b'~'
                        | b' '
                );
            c += 1;
        }
        t
    };
    let b = s.as_bytes();
    let (Some(&first), Some(&last)) = (b.first(), b.last()) else {
        return false;
    };
    // Only ASCII passes, so the one space is the only whitespace that could lead or trail; a
    // `: ` would start a mapping and a final `:` make a key (` #`, a comment, needs `#`, which
    // never passes).
    if first == b' ' || last == b' ' || last == b':' {
        return false;
    }
    for (i, &c) in b.iter().enumerate() {
        if !PLAIN[c as usize] || (c == b':' && b.get(i + 1) == Some(&b' ')) {
            return false;
        }
    }
    if matches!(
        first,
        b'-' | b':' | b'@' | b',' | b'=' | b'~' | b'+' | b'$' | b'^' | b'(' | b')'
    ) && b.len() == 1
    {
        return false;
    }
    if first == b'-' && s.starts_with("- ")
        || s.starts_with("---")
        || first == b'@'
        || first == b','
    {
        return false;
    }
    // Only what starts like a number can read as one (the YAML 1.1 words are letters only, which
    // `is_plain_safe` sees to, and `=` alone was refused above).
    if (first.is_ascii_digit() || matches!(first, b'+' | b'-' | b'.'))
        && (resolve_plain(s).is_some() || yaml11_special(s))
    {
        return false;
    }
    true
}

fn yaml11_special(s: &str) -> bool {
    let first = s.as_bytes()[0];
    if s == "=" || s == "<<" {
        return true;
    }
    // Sexagesimal numbers (190:20:30) and anything number-like starting with a digit or sign
    // are quoted: cheaper than reproducing every resolver's regular expressions exactly.
    if first.is_ascii_digit() || ((first == b'-' || first == b'+' || first == b'.') && s.len() > 1)
    {
        let rest = s.trim_start_matches(['-', '+', '.']);
        return rest.chars().all(|c| {
            c.is_ascii_hexdigit()
                || matches!(
                    c,
                    '_' | ':'
                        | '.'
                        | 'x'
                        | 'X'
                        | 'o'
                        | 'O'
                        | '-'
                        | '+'
                        | 'e'
                        | 'E'
                        | 'T'
                        | 't'
                        | 'Z'
                        | 'z'
                        | ' '
                )
        }) || rest.starts_with(|c: char| c.is_ascii_digit()) && rest.len() <= 1;
    }
    false
}

fn is_inf_or_nan(s: &str) -> bool {
    matches!(
        s,
        ".inf"
            | ".Inf"
            | ".INF"
            | "+.inf"
            | "+.Inf"
            | "+.INF"
            | "-.inf"
            | "-.Inf"
            | "-.INF"
            | ".nan"
            | ".NaN"
            | ".NAN"
    )
}

/// go-yaml v2 reads these as timestamps, so it quotes them: `YYYY-M-D`, optionally followed by
/// `T`/`t` and `h:m:s[.frac]` with a `Z` or `±hh:mm` zone, or by a space and a zone-less time.
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

/// go-yaml's `[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?`, which it quotes.
fn is_base60_float(s: &str) -> bool {
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
        let digits = &b[start..i];
        let ok = match digits {
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

/// toyaml's old decision: does the emitter treat the string as typed (quote it)?
pub fn toyaml_typed(s: &str) -> bool {
    match resolve_plain(s) {
        Some(Value::String(_)) | None => is_base60_float(s) || is_timestamp(s) || is_inf_or_nan(s),
        Some(_) => true,
    }
}

#[cfg(test)]
mod compare {
    use super::*;

    fn corpus() -> Vec<String> {
        let mut out = crate::yaml::scalar::tests::tricky_strings();
        if let Ok(path) = std::env::var("QUOTING_STRINGS") {
            for line in std::fs::read_to_string(path).unwrap().lines() {
                out.push(serde_json::from_str(line).unwrap());
            }
        }
        out
    }

    #[test]
    fn old_and_new_decisions_agree() {
        let strings = corpus();
        let mut diffs = Vec::new();
        for s in &strings {
            let old_v = resolve_plain(s).unwrap_or_else(|| Value::String(s.clone()));
            let new_v =
                crate::yaml::read::resolve_plain(s).unwrap_or_else(|| Value::String(s.clone()));
            if old_v != new_v {
                diffs.push(format!("reader {s:?}: {old_v} vs {new_v}"));
            }
            if is_plain_safe(s) != crate::yaml::write::is_plain_safe(s) {
                diffs.push(format!("writer {s:?}: old plain {}", is_plain_safe(s)));
            }
            if toyaml_typed(s) != crate::yaml::scalar::classify(s).is_typed() {
                diffs.push(format!("toyaml {s:?}: old typed {}", toyaml_typed(s)));
            }
        }
        eprintln!("compared {} strings", strings.len());
        assert!(
            diffs.is_empty(),
            "{} differences:\n{}",
            diffs.len(),
            diffs[..diffs.len().min(50)].join("\n")
        );
    }
}
