//! `--set` expressions as Helm's `--set` reads them: `a.b=c`, several joined by commas,
//! `list[0]=x`, `list={a,b}`, backslash escapes for `.`, `,`, `=` and `[`; `true`, `false`,
//! `null` and plain integers are typed, everything else is a string.

use serde_json::{Map, Value};

/// Applies one `--set` argument (which may hold several comma-separated assignments).
pub fn apply(root: &mut Value, expr: &str) -> Result<(), String> {
    for part in split_unescaped(expr, ',', true) {
        if part.is_empty() {
            continue;
        }
        let (key, raw) = split_key_value(&part).ok_or_else(|| {
            format!("{part:?} is not PATH=VALUE (for example hubble.relay.enabled=true)")
        })?;
        let value = if raw.starts_with('{') && raw.ends_with('}') {
            let inner = &raw[1..raw.len() - 1];
            Value::Array(
                split_unescaped(inner, ',', false)
                    .iter()
                    .filter(|s| !s.is_empty())
                    .map(|s| typed(&unescape(s)))
                    .collect(),
            )
        } else {
            typed(&unescape(&raw))
        };
        let segments = parse_path(&key)?;
        assign(root, &segments, value)?;
    }
    Ok(())
}

#[derive(Debug, PartialEq)]
enum Segment {
    Key(String),
    Index(usize),
}

/// Splits on `sep` where it is not escaped (and, at the top level, not inside `{...}`).
fn split_unescaped(s: &str, sep: char, respect_braces: bool) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut depth = 0usize;
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                let cur = out.last_mut().expect("out starts non-empty");
                cur.push('\\');
                if let Some(n) = chars.next() {
                    cur.push(n);
                }
            }
            '{' if respect_braces => {
                depth += 1;
                out.last_mut().expect("non-empty").push(c);
            }
            '}' if respect_braces => {
                depth = depth.saturating_sub(1);
                out.last_mut().expect("non-empty").push(c);
            }
            c if c == sep && depth == 0 => out.push(String::new()),
            c => out.last_mut().expect("non-empty").push(c),
        }
    }
    out
}

fn split_key_value(part: &str) -> Option<(String, String)> {
    let mut escaped = false;
    for (i, c) in part.char_indices() {
        match c {
            '\\' if !escaped => escaped = true,
            '=' if !escaped => return Some((part[..i].to_string(), part[i + 1..].to_string())),
            _ => escaped = false,
        }
    }
    None
}

fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            if let Some(n) = chars.next() {
                out.push(n);
            }
        } else {
            out.push(c);
        }
    }
    out
}

fn parse_path(key: &str) -> Result<Vec<Segment>, String> {
    let mut segs = Vec::new();
    let mut cur = String::new();
    let mut chars = key.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if let Some(n) = chars.next() {
                    cur.push(n);
                }
            }
            '.' => {
                if !cur.is_empty() {
                    segs.push(Segment::Key(std::mem::take(&mut cur)));
                }
            }
            '[' => {
                if !cur.is_empty() {
                    segs.push(Segment::Key(std::mem::take(&mut cur)));
                }
                let mut digits = String::new();
                for d in chars.by_ref() {
                    if d == ']' {
                        break;
                    }
                    digits.push(d);
                }
                let idx: usize = digits
                    .parse()
                    .map_err(|_| format!("list index [{digits}] is not a number"))?;
                if idx > 65536 {
                    return Err(format!("list index [{idx}] is too large"));
                }
                segs.push(Segment::Index(idx));
            }
            c => cur.push(c),
        }
    }
    if !cur.is_empty() {
        segs.push(Segment::Key(cur));
    }
    if segs.is_empty() {
        return Err("the path before '=' is empty".into());
    }
    if matches!(segs[0], Segment::Index(_)) {
        return Err("a path must start with a key, not a list index".into());
    }
    Ok(segs)
}

fn assign(node: &mut Value, path: &[Segment], value: Value) -> Result<(), String> {
    let Some((first, rest)) = path.split_first() else {
        *node = value;
        return Ok(());
    };
    match first {
        Segment::Key(k) => {
            if !node.is_object() {
                *node = Value::Object(Map::new());
            }
            let map = node.as_object_mut().expect("made an object above");
            let child = map.entry(k.clone()).or_insert(Value::Null);
            assign(child, rest, value)
        }
        Segment::Index(i) => {
            if !node.is_array() {
                *node = Value::Array(Vec::new());
            }
            let list = node.as_array_mut().expect("made an array above");
            while list.len() <= *i {
                list.push(Value::Null);
            }
            assign(&mut list[*i], rest, value)
        }
    }
}

/// Helm's typing of a `--set` value.
fn typed(s: &str) -> Value {
    match s {
        "true" => return Value::Bool(true),
        "false" => return Value::Bool(false),
        "null" => return Value::Null,
        _ => {}
    }
    // Integers without a leading zero become int64, as Helm's parser does.
    let digits = s.strip_prefix('-').unwrap_or(s);
    if !digits.is_empty()
        && digits.chars().all(|c| c.is_ascii_digit())
        && (digits == "0" || !digits.starts_with('0'))
    {
        if let Ok(i) = s.parse::<i64>() {
            return Value::from(i);
        }
    }
    Value::String(s.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn helm_set_syntax() {
        let mut v = json!({});
        apply(&mut v, "a.b=1,c=true,d=x\\,y").unwrap();
        apply(&mut v, "l[1].n=z").unwrap();
        apply(&mut v, "m={p,q}").unwrap();
        apply(&mut v, "k\\.dot=007").unwrap();
        assert_eq!(
            v,
            json!({"a": {"b": 1}, "c": true, "d": "x,y", "l": [null, {"n": "z"}], "m": ["p", "q"], "k.dot": "007"})
        );
        assert!(apply(&mut v, "novalue").is_err());
        assert!(apply(&mut v, "=x").is_err());
    }
}
