//! Writes the canonical YAML form of objects: block style, keys sorted, and every string that a
//! YAML 1.1 reader (Kubernetes, Argo CD, PyYAML) could take for another type quoted.

use serde_json::Value;

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

fn indent(out: &mut String, n: usize) {
    for _ in 0..n {
        out.push(' ');
    }
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
        Value::Number(n) => out.push_str(&format_number(n)),
        Value::String(s) => write_string(out, s, level, false),
        Value::Object(_) => out.push_str("{}"),
        Value::Array(_) => out.push_str("[]"),
    }
}

/// Numbers as Helm's toYaml prints them: integral values without a fraction, others in Go's
/// shortest form (which is also what JSON would carry).
pub fn format_number(n: &serde_json::Number) -> String {
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
    crate::tmpl::go_json_float(f)
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
            '\u{feff}' | '\u{2028}' | '\u{2029}' => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// True when a string may be written bare and still read back as the same string by both
/// YAML 1.1 and 1.2 readers.
fn is_plain_safe(s: &str) -> bool {
    // Most strings in a render are names, labels and paths starting with a letter: decide those
    // in one pass; everything else takes the thorough path below.
    let b = s.as_bytes();
    if b.first().is_some_and(u8::is_ascii_alphabetic)
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.' | b'/'))
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
    let Some(first) = s.chars().next() else {
        return false;
    };
    if s != s.trim() {
        return false;
    }
    if !s.chars().all(|c| {
        c.is_ascii_alphanumeric()
            || matches!(
                c,
                '_' | '-'
                    | '.'
                    | '/'
                    | ':'
                    | '@'
                    | '+'
                    | '='
                    | ','
                    | '('
                    | ')'
                    | '$'
                    | '^'
                    | '~'
                    | ' '
            )
    }) {
        return false;
    }
    if matches!(
        first,
        '-' | ':' | '@' | ',' | '=' | '~' | '+' | '$' | '^' | '(' | ')'
    ) && s.len() == 1
    {
        return false;
    }
    if first == '-' && s.starts_with("- ") || s.starts_with("---") || first == '@' || first == ',' {
        return false;
    }
    if s.contains(": ") || s.ends_with(':') || s.contains(" #") {
        return false;
    }
    // Anything a YAML 1.1 resolver could read as another type keeps its quotes: booleans
    // (go-yaml's y/n included), nulls, numbers in every base, sexagesimal and timestamps.
    if crate::yaml::read::resolve_plain(s).is_some() || yaml11_special(s) {
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
    fn nested_collections_round_trip() {
        round_trip(json!({
            "a": [{"b": 1, "c": [1, 2, {"d": []}]}, [], {}, [[1], [2]], "x"],
            "e": {"f": {"g": "multi\nline\n"}, "h": {}},
            "i": 1.5, "j": null, "k": false
        }));
    }

    #[test]
    fn numbers_print_like_helm() {
        assert_eq!(to_string(&json!({"a": 7445.0})), "a: 7445\n");
        assert_eq!(to_string(&json!({"a": 0.0025})), "a: 0.0025\n");
    }
}
