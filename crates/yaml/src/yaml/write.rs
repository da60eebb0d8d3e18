//! Writes the canonical YAML form of objects: block style, keys sorted, and every string that a
//! YAML 1.1 or 1.2 reader (Kubernetes, Argo CD, PyYAML) could take for another type quoted:
//! what go-yaml types (`scalar::classify`), plus the broader `number_like` rule.

use serde_json::Value;

use super::scalar::{classify, starts_like_number};

/// Appends one document (`---` line included) to `out`.
pub fn write_document(out: &mut String, value: &Value) {
    out.push_str("---\n");
    match value {
        Value::Object(m) if !m.is_empty() => write_map(out, m, 0),
        Value::Array(a) if !a.is_empty() => write_seq(out, a, 0),
        other => {
            write_inline(out, other, 0);
            out.push('\n');
        }
    }
}

/// Serialises one value as a standalone document body, without the `---` line.
pub fn to_string(value: &Value) -> String {
    let mut s = String::new();
    write_document(&mut s, value);
    s.split_off(4)
}

fn indent(out: &mut String, mut n: usize) {
    const SPACES: &str = "                                                                ";
    while n > SPACES.len() {
        out.push_str(SPACES);
        n -= SPACES.len();
    }
    out.push_str(&SPACES[..n]);
}

fn is_block(v: &Value) -> bool {
    match v {
        Value::Object(m) => !m.is_empty(),
        Value::Array(a) => !a.is_empty(),
        _ => false,
    }
}

fn write_map(out: &mut String, m: &serde_json::Map<String, Value>, level: usize) {
    let mut first = true;
    for (k, v) in m {
        if !first {
            indent(out, level);
        }
        first = false;
        write_string(out, k, level, true);
        out.push(':');
        match v {
            Value::Object(child) if !child.is_empty() => {
                out.push('\n');
                indent(out, level + 2);
                write_map(out, child, level + 2);
            }
            Value::Array(items) if !items.is_empty() => {
                out.push('\n');
                indent(out, level + 2);
                write_seq(out, items, level + 2);
            }
            _ => {
                out.push(' ');
                write_inline(out, v, level + 2);
                out.push('\n');
            }
        }
    }
}

fn write_seq(out: &mut String, items: &[Value], level: usize) {
    let mut first = true;
    for item in items {
        if !first {
            indent(out, level);
        }
        first = false;
        out.push_str("- ");
        if is_block(item) {
            match item {
                Value::Object(m) => write_map(out, m, level + 2),
                Value::Array(a) => write_seq(out, a, level + 2),
                _ => unreachable!("is_block covers only collections"),
            }
        } else {
            write_inline(out, item, level + 2);
            out.push('\n');
        }
    }
}

/// Scalars and empty collections; `level` is the indentation of a block literal's lines.
fn write_inline(out: &mut String, v: &Value, level: usize) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => write_number(out, n),
        Value::String(s) => write_string(out, s, level, false),
        Value::Object(_) => out.push_str("{}"),
        Value::Array(_) => out.push_str("[]"),
    }
}

/// Numbers as Helm's toYaml prints them: integral values without a fraction, others in Go's
/// shortest form (which is also what JSON would carry).
fn format_number(n: &serde_json::Number) -> String {
    if let Some(i) = n.as_i64() {
        return i.to_string();
    }
    if let Some(u) = n.as_u64() {
        return u.to_string();
    }
    let f = n.as_f64().unwrap_or(0.0);
    if f.fract() == 0.0 && f.abs() < 1e21 {
        return format!("{f:.0}");
    }
    crate::gofmt::go_json_float(f)
}

/// `format_number` appended to `out`; integral values (the usual case: every number in values is
/// a float64) are printed without going through float formatting.
fn write_number(out: &mut String, n: &serde_json::Number) {
    use std::fmt::Write;
    if let Some(i) = n.as_i64() {
        let _ = write!(out, "{i}");
        return;
    }
    if let Some(f) = n.as_f64() {
        // Exactly representable integers print the same as an i64 as with `{:.0}`; -0.0 does not.
        if f.fract() == 0.0 && f.abs() < 9.0e15 && !(f == 0.0 && f.is_sign_negative()) {
            let _ = write!(out, "{}", f as i64);
            return;
        }
    }
    out.push_str(&format_number(n));
}

fn write_string(out: &mut String, s: &str, level: usize, is_key: bool) {
    if is_plain_safe(s) {
        out.push_str(s);
    } else if !is_key && s.contains('\n') && literal_ok(s) {
        write_literal(out, s, level);
    } else {
        write_double_quoted(out, s);
    }
}

/// A block literal keeps configuration files readable; it cannot carry characters YAML forbids
/// unescaped, carriage returns, or trailing spaces on the last line.
fn literal_ok(s: &str) -> bool {
    let b = s.as_bytes();
    // Neither an empty first line nor one that starts with a space could be read back as is.
    if matches!(b.first(), Some(b'\n' | b' ' | b'\t')) {
        return false;
    }
    let mut i = 0;
    while i < b.len() {
        // Eight printable ASCII bytes at a time need no closer look (texts are mostly those).
        if let Some(word) = b.get(i..i + 8) {
            let w = u64::from_le_bytes(word.try_into().unwrap_or_default());
            if all_printable_ascii(w) {
                i += 8;
                continue;
            }
        }
        let c = b[i];
        match c {
            // No line may end in a space or tab.
            b'\n' if i > 0 && matches!(b[i - 1], b' ' | b'\t') => return false,
            b'\n' | b'\t' => {}
            0..=0x1f | 0x7f => return false,
            // U+0080..U+009F (control characters, U+0085 among them).
            0xc2 if matches!(b.get(i + 1), Some(0x80..=0x9f)) => return false,
            // U+FEFF.
            0xef if b.get(i + 1..i + 3) == Some(&[0xbb, 0xbf]) => return false,
            // U+2028 and U+2029.
            0xe2 if matches!(b.get(i + 1..i + 3), Some([0x80, 0xa8 | 0xa9])) => return false,
            _ => {}
        }
        i += 1;
    }
    !matches!(b.last(), Some(b' ' | b'\t'))
}

/// True when all eight bytes of `w` lie in 0x20..=0x7e (no control character, no DEL, no byte
/// of a multi-byte character).
fn all_printable_ascii(w: u64) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    // A byte below 0x20 borrows into its high bit; a byte of 0x7f or more has it, or gets it
    // when one is added to every byte. Carries only ever add false alarms, which the caller
    // then checks byte by byte.
    let below = w.wrapping_sub(ONES * 0x20) & !w;
    let above = w.wrapping_add(ONES) | w;
    (below | above) & HIGH == 0
}

fn write_literal(out: &mut String, s: &str, level: usize) {
    let body = s.trim_end_matches('\n');
    let trailing = s.len() - body.len();
    out.push('|');
    match trailing {
        0 => out.push('-'),
        1 => {}
        _ => out.push('+'),
    }
    for line in s[..body.len() + trailing.saturating_sub(1)].split('\n') {
        out.push('\n');
        if !line.is_empty() {
            indent(out, level);
            out.push_str(line);
        }
    }
}

fn write_double_quoted(out: &mut String, s: &str) {
    out.push('"');
    let b = s.as_bytes();
    // Runs of characters that need no escape are copied whole.
    let mut run = 0;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let (escape, len): (&str, usize) = match c {
            b'"' => ("\\\"", 1),
            b'\\' => ("\\\\", 1),
            b'\n' => ("\\n", 1),
            b'\t' => ("\\t", 1),
            b'\r' => ("\\r", 1),
            0..=0x1f | 0x7f => ("", 1),
            0xc2 if b.get(i + 1) == Some(&0x85) => ("\\N", 2),
            0xef if b.get(i + 1..i + 3) == Some(&[0xbb, 0xbf]) => ("\\ufeff", 3),
            0xe2 if b.get(i + 1..i + 3) == Some(&[0x80, 0xa8]) => ("\\u2028", 3),
            0xe2 if b.get(i + 1..i + 3) == Some(&[0x80, 0xa9]) => ("\\u2029", 3),
            _ => {
                i += 1;
                continue;
            }
        };
        out.push_str(&s[run..i]);
        if escape.is_empty() {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            out.push_str("\\x");
            out.push(HEX[(c >> 4) as usize] as char);
            out.push(HEX[(c & 15) as usize] as char);
        } else {
            out.push_str(escape);
        }
        i += len;
        run = i;
    }
    out.push_str(&s[run..]);
    out.push('"');
}

/// True when a string may be written bare and still read back as the same string by both
/// YAML 1.1 and 1.2 readers.
pub(super) fn is_plain_safe(s: &str) -> bool {
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
        // Starting with a letter, only go-yaml's null and boolean words are typed.
        return !classify(s).is_typed();
    }
    is_plain_safe_slow(s)
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
    // Only what starts like a number can read as one (the null and boolean words are letters
    // only, which `is_plain_safe` sees to, and `~` and `=` alone were refused above).
    if !starts_like_number(s) {
        return true;
    }
    let without_underscores: std::borrow::Cow<str> = if s.contains('_') {
        s.replace('_', "").into()
    } else {
        s.into()
    };
    !(classify(&without_underscores).is_typed() || number_like(s))
}

/// The writer's own rule on top of go-yaml's, deliberately broader (and kept as it is, since
/// the content hash depends on every quote): a string spelled only with what numbers,
/// timestamps and base-60 numbers are made of (digits, hex digits, signs, `.`, `_`, `:`, the
/// exponent, radix and zone letters, spaces) is quoted, whether or not it parses. That covers
/// every YAML 1.1 and 1.2 number grammar without reproducing each reader's regular expressions.
/// (The caller also classifies the text without `_`, which YAML 1.1 numbers may carry anywhere:
/// `.in_f` is quoted too.)
fn number_like(s: &str) -> bool {
    starts_like_number(s)
        && !matches!(s, "+" | "-" | ".")
        && s.trim_start_matches(['-', '+', '.']).chars().all(|c| {
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
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::read::parse_stream;
    use serde_json::json;

    fn round_trip(v: Value) {
        let mut s = String::new();
        write_document(&mut s, &v);
        let back = parse_stream(&s).unwrap();
        assert_eq!(back[0].value, normalise(&v), "text was:\n{s}");
    }

    /// The reader turns every number into a float, as Helm does.
    fn normalise(v: &Value) -> Value {
        match v {
            Value::Number(n) => crate::yaml::read::number(n.as_f64().unwrap()),
            Value::Array(a) => Value::Array(a.iter().map(normalise).collect()),
            Value::Object(m) => {
                Value::Object(m.iter().map(|(k, v)| (k.clone(), normalise(v))).collect())
            }
            other => other.clone(),
        }
    }

    /// `literal_ok` byte by byte, without the eight-byte shortcut.
    fn literal_ok_slowly(s: &str) -> bool {
        let b = s.as_bytes();
        if matches!(b.first(), Some(b'\n' | b' ' | b'\t')) {
            return false;
        }
        for (i, &c) in b.iter().enumerate() {
            let bad = match c {
                b'\n' => i > 0 && matches!(b[i - 1], b' ' | b'\t'),
                b'\t' => false,
                0..=0x1f | 0x7f => true,
                0xc2 => matches!(b.get(i + 1), Some(0x80..=0x9f)),
                0xef => b.get(i + 1..i + 3) == Some(&[0xbb, 0xbf]),
                0xe2 => matches!(b.get(i + 1..i + 3), Some([0x80, 0xa8 | 0xa9])),
                _ => false,
            };
            if bad {
                return false;
            }
        }
        !matches!(b.last(), Some(b' ' | b'\t'))
    }

    #[test]
    fn the_fast_literal_check_agrees_with_the_byte_by_byte_one() {
        let specials = [
            " \n", "\t\n", "\r", "\u{7f}", "\u{85}", "\u{9f}", "\u{a0}", "\u{feff}", "\u{2028}",
            "\u{2029}", "\u{2027}", "é", "~", "\u{1}", "\n", "\t", "}", " ",
        ];
        let mut checked = 0;
        for special in specials {
            for before in 0..20 {
                for after in 0..12 {
                    let s = format!("a{}{special}{}\nend", "x".repeat(before), "y".repeat(after));
                    assert_eq!(literal_ok(&s), literal_ok_slowly(&s), "{s:?}");
                    checked += 1;
                }
            }
        }
        assert_eq!(checked, specials.len() * 240);
        for w in [0u64, u64::MAX, 0x2020_2020_2020_2020, 0x7e7e_7e7e_7e7e_7e7e] {
            let bytes = w.to_le_bytes();
            let printable = bytes.iter().all(|b| (0x20..=0x7e).contains(b));
            assert_eq!(all_printable_ascii(w), printable, "{w:#x}");
        }
    }

    #[test]
    fn ambiguous_strings_are_quoted_and_read_back() {
        for s in [
            "yes",
            "on",
            "y",
            "N",
            "0755",
            "7445",
            "1e3",
            "1.5",
            "12:30",
            "2001-12-14",
            "",
            " x",
            "a: b",
            "- x",
            "#c",
            "null",
            "~",
            "true",
            "0x1F",
            ".5",
            "-",
            "*a",
            "&a",
            "!t",
            "%x",
            "key:",
            "x #y",
            "{a}",
            "[a]",
            "'q'",
            "\"q\"",
            "|",
            ">",
            "@x",
            "`x",
            "a\tb",
            "tab\t",
            "line1\nline2",
            "line1\nline2\n",
            "two\n\n",
            "  lead\nx",
            "trail \nx",
            "=",
            "<<",
            "1_000",
            "+1",
            "-.inf",
            ".NaN",
            "0b101",
            "0o17",
            "1:2:3",
            "é",
            "a,b",
            "$(X)",
        ] {
            round_trip(json!({ "k": s, s: "key" }));
        }
    }

    #[test]
    fn typed_and_number_like_strings_are_quoted() {
        let quoted = |s: &str| !is_plain_safe(s);
        // What go-yaml reads as another type.
        for s in [
            "yes", "Off", "~", "0o17", "1_000", ".Inf", "2025-1-2", "12:30", "1e3",
        ] {
            assert!(quoted(s), "{s:?}");
        }
        // Strings to go-yaml, quoted by the writer's broader rules all the same.
        for s in [
            "1.2.3",
            "2025-13-01",
            "1:60",
            "._x5",
            ".in_f",
            "0x",
            "1e",
            "12 34",
            "--",
            "1a",
        ] {
            assert!(classify(s) == crate::yaml::scalar::Plain::String, "{s:?}");
            assert!(quoted(s), "{s:?}");
        }
        // Plain: nothing number-like, or not starting like a number.
        for s in [
            "v1.2.3",
            ".git",
            "-y",
            "1.2.3g",
            "a:b",
            "_no",
            "n_o",
            ".",
            "10Gi",
            "0.0.0.0/0",
        ] {
            assert!(!quoted(s), "{s:?}");
        }
    }

    #[test]
    fn nested_collections_round_trip() {
        round_trip(json!({
            "a": [{"b": 1, "c": [1, 2, {"d": []}]}, [], {}, [[1], [2]], "x"],
            "e": {"f": {"g": "multi\nline\n"}, "h": {}},
            "i": 1.5, "j": null, "k": false
        }));
    }

    /// The plain per-character forms the fast ones above must agree with.
    fn literal_ok_reference(s: &str) -> bool {
        !s.chars().any(|c| {
            (c.is_control() && c != '\n' && c != '\t')
                || c == '\u{feff}'
                || c == '\u{85}'
                || c == '\u{2028}'
                || c == '\u{2029}'
        }) && !s.lines().any(|l| l.ends_with(' ') || l.ends_with('\t'))
            && !s.starts_with('\n')
            && !s
                .lines()
                .next()
                .is_some_and(|l| l.starts_with(' ') || l.starts_with('\t'))
    }

    fn double_quoted_reference(s: &str) -> String {
        let mut out = String::from('"');
        for c in s.chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                '\n' => out.push_str("\\n"),
                '\t' => out.push_str("\\t"),
                '\r' => out.push_str("\\r"),
                c if (c as u32) < 0x20 || c == '\u{7f}' => {
                    out.push_str(&format!("\\x{:02x}", c as u32));
                }
                '\u{85}' => out.push_str("\\N"),
                '\u{feff}' | '\u{2028}' | '\u{2029}' => {
                    out.push_str(&format!("\\u{:04x}", c as u32))
                }
                c => out.push(c),
            }
        }
        out.push('"');
        out
    }

    #[test]
    fn escaping_and_block_choice_match_the_per_character_rules() {
        let pieces = [
            "a", " ", "\t", "\n", "\r", "\"", "\\", "\u{0}", "\u{1b}", "\u{7f}", "\u{80}",
            "\u{85}", "\u{9f}", "\u{a0}", "é", "\u{feff}", "\u{2027}", "\u{2028}", "\u{2029}",
            "\u{202a}", "€", "😀", "x y", "#",
        ];
        let mut cases = vec![String::new()];
        for a in pieces {
            cases.push(a.to_string());
            for b in pieces {
                cases.push(format!("{a}{b}"));
                for c in ["\n", " ", "z", "\u{2028}"] {
                    cases.push(format!("{a}{b}{c}"));
                    cases.push(format!("{c}{a}\n{b}"));
                }
            }
        }
        for s in &cases {
            assert_eq!(literal_ok(s), literal_ok_reference(s), "{s:?}");
            let mut got = String::new();
            write_double_quoted(&mut got, s);
            assert_eq!(got, double_quoted_reference(s), "{s:?}");
        }
    }

    #[test]
    fn numbers_print_like_helm() {
        assert_eq!(to_string(&json!({"a": 7445.0})), "a: 7445\n");
        assert_eq!(to_string(&json!({"a": 0.0025})), "a: 0.0025\n");
    }
}
