//! Go's encoding/json `Marshal` of template values, as Helm's `toJson` (`pkg/engine/funcs.go`)
//! and Sprig's `toRawJson` (no HTML escaping) call it: map keys sorted, `<`, `>`, `&`, U+2028
//! and U+2029 escaped (encode.go `appendString`), floats in encoding/json's format.

use super::value::{Obj, Value, MAX_VALUE_DEPTH};
use cilium_cmp_yaml::gofmt::go_json_float;

pub fn to_json(v: &Value, html: bool) -> Result<String, String> {
    let mut out = String::new();
    write(&mut out, v, html, 0)?;
    Ok(out)
}

fn write(out: &mut String, v: &Value, html: bool, depth: usize) -> Result<(), String> {
    if depth > MAX_VALUE_DEPTH {
        return Err(format!(
            "json: the value nests deeper than {MAX_VALUE_DEPTH} levels"
        ));
    }
    match v {
        Value::Nil => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Int(i) => out.push_str(&i.to_string()),
        Value::Float(f) => {
            if !f.is_finite() {
                return Err(format!("json: unsupported value: {f}"));
            }
            out.push_str(&go_json_float(*f));
        }
        Value::Str(s) => string(out, s, html),
        Value::List(l) => {
            out.push('[');
            for (i, x) in l.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write(out, x, html, depth + 1)?;
            }
            out.push(']');
        }
        Value::Map(m) => {
            out.push('{');
            for (i, (k, x)) in m.borrow().iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                string(out, k, html);
                out.push(':');
                write(out, x, html, depth + 1)?;
            }
            out.push('}');
        }
        Value::Obj(o) => match &**o {
            Obj::Semver(s) => string(out, &s.original, html),
            // A struct's exported fields in declaration order, not sorted as a map's keys.
            Obj::KubeVersion {
                version,
                major,
                minor,
                ..
            } => {
                for (i, (k, x)) in [("Version", version), ("Major", major), ("Minor", minor)]
                    .into_iter()
                    .enumerate()
                {
                    out.push(if i == 0 { '{' } else { ',' });
                    string(out, k, html);
                    out.push(':');
                    string(out, x, html);
                }
                out.push('}');
            }
            _ => {
                let j = v.to_json(depth)?;
                write(out, &Value::from_json_with(&j, false), html, depth + 1)?;
            }
        },
    }
    Ok(())
}

/// A JSON string as Go's encoding/json writes it (`html`: `<`, `>`, `&` escaped, as
/// `json.Marshal` does and `toRawJson` does not).
pub fn string(out: &mut String, s: &str, html: bool) {
    out.push('"');
    // Most strings need no escape: copied whole.
    let plain = |b: u8| {
        (0x20..0x80).contains(&b)
            && b != b'"'
            && b != b'\\'
            && !(html && matches!(b, b'<' | b'>' | b'&'))
    };
    if s.bytes().all(plain) {
        out.push_str(s);
        out.push('"');
        return;
    }
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            // Go 1.22+ writes these two short forms (encoding/json `appendString`).
            '\x08' => out.push_str("\\b"),
            '\x0c' => out.push_str("\\f"),
            '<' | '>' | '&' if html => out.push_str(&format!("\\u{:04x}", c as u32)),
            '\u{2028}' | '\u{2029}' => out.push_str(&format!("\\u{:04x}", c as u32)),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Go's `json.Indent` with no prefix and two spaces (Sprig's `toPrettyJson` is
/// `json.MarshalIndent(v, "", "  ")`, encoding/json `indent.go` over `Marshal`'s text): a
/// newline and the depth's indent after `{`, `[` and `,`, a space after `:`, and empty
/// objects and arrays kept as `{}` and `[]`.
pub fn indent(compact: &str) -> String {
    let mut out = String::with_capacity(compact.len() * 2);
    let mut depth = 0usize;
    let (mut in_string, mut escaped, mut need_indent) = (false, false, false);
    let newline = |out: &mut String, depth: usize| {
        out.push('\n');
        for _ in 0..depth {
            out.push_str("  ");
        }
    };
    for c in compact.chars() {
        if in_string {
            out.push(c);
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
            continue;
        }
        if need_indent && c != '}' && c != ']' {
            need_indent = false;
            depth += 1;
            newline(&mut out, depth);
        }
        match c {
            '"' => {
                in_string = true;
                out.push(c);
            }
            '{' | '[' => {
                out.push(c);
                need_indent = true;
            }
            ',' => {
                out.push(c);
                newline(&mut out, depth);
            }
            ':' => out.push_str(": "),
            '}' | ']' => {
                if need_indent {
                    need_indent = false;
                } else {
                    depth = depth.saturating_sub(1);
                    newline(&mut out, depth);
                }
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    out
}
