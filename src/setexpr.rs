//! `--set` expressions as Helm's `--set` reads them: `a.b=c`, several joined by commas,
//! `list[0]=x`, `list={a,b}`, backslash escapes for `.`, `,`, `=` and `[`; `true`, `false`,
//! `null` and plain integers are typed, everything else is a string.

use serde_json::{Map, Value};

use crate::limits;

/// Applies `--set` arguments in order, within the bounds of `limits` (path depth, list index,
/// list slots created in total).
pub fn apply_all(root: &mut Value, exprs: &[String]) -> Result<(), (String, String)> {
    let mut slots = limits::MAX_SET_SLOTS;
    for expr in exprs {
        apply_within(root, expr, &mut slots).map_err(|m| (expr.clone(), m))?;
    }
    Ok(())
}

/// Applies one `--set` argument (which may hold several comma-separated assignments).
pub fn apply(root: &mut Value, expr: &str) -> Result<(), String> {
    let mut slots = limits::MAX_SET_SLOTS;
    apply_within(root, expr, &mut slots)
}

fn apply_within(root: &mut Value, expr: &str, slots: &mut usize) -> Result<(), String> {
    for part in split_unescaped(expr, ',', true)? {
        if part.is_empty() {
            continue;
        }
        let (key, raw) = split_key_value(&part).ok_or_else(|| {
            format!("{part:?} is not PATH=VALUE (for example hubble.relay.enabled=true)")
        })?;
        let value = if let Some(list) = raw.strip_prefix('{') {
            let inner = list
                .strip_suffix('}')
                .ok_or_else(|| format!("the list {} must end with '}}'", limits::quoted(&raw)))?;
            Value::Array(
                split_unescaped(inner, ',', false)?
                    .iter()
                    .filter(|s| !s.is_empty())
                    .map(|s| typed(&unescape(s)))
                    .collect(),
            )
        } else {
            typed(&unescape(&raw))
        };
        let segments = parse_path(&key)?;
        if segments.len() > limits::MAX_DEPTH {
            return Err(format!(
                "the path has {} parts; at most {} are allowed",
                segments.len(),
                limits::MAX_DEPTH
            ));
        }
        assign(root, &segments, value, slots)?;
    }
    Ok(())
}

#[derive(Debug, PartialEq)]
enum Segment {
    Key(String),
    Index(usize),
}

/// Splits on `sep` where it is not escaped (and, at the top level, not inside `{...}`).
fn split_unescaped(s: &str, sep: char, respect_braces: bool) -> Result<Vec<String>, String> {
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
    if depth > 0 {
        return Err("a list opened with '{' must end with '}'".into());
    }
    Ok(out)
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
                let mut closed = false;
                for d in chars.by_ref() {
                    if d == ']' {
                        closed = true;
                        break;
                    }
                    digits.push(d);
                }
                if !closed {
                    return Err(format!(
                        "the list index [{} is not closed with ']'",
                        limits::quoted(&digits)
                    ));
                }
                let idx: usize = digits.parse().map_err(|_| {
                    format!("list index [{}] is not a number", limits::quoted(&digits))
                })?;
                if idx > limits::MAX_SET_INDEX {
                    return Err(format!(
                        "list index [{idx}] is too large; at most {} is allowed",
                        limits::MAX_SET_INDEX
                    ));
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

fn assign(
    node: &mut Value,
    path: &[Segment],
    value: Value,
    slots: &mut usize,
) -> Result<(), String> {
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
            assign(child, rest, value, slots)
        }
        Segment::Index(i) => {
            if !node.is_array() {
                *node = Value::Array(Vec::new());
            }
            let list = node.as_array_mut().expect("made an array above");
            let added = (*i + 1).saturating_sub(list.len());
            *slots = slots.checked_sub(added).ok_or_else(|| {
                format!(
                    "list indexes create more than {} list items in total",
                    limits::MAX_SET_SLOTS
                )
            })?;
            list.resize(list.len() + added, Value::Null);
            assign(&mut list[*i], rest, value, slots)
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

    #[test]
    fn malformed_and_oversized_paths_are_refused() {
        let mut v = json!({});
        assert!(apply(&mut v, "x[0=1").unwrap_err().contains("not closed"));
        assert!(apply(&mut v, "extraArgs={a,b")
            .unwrap_err()
            .contains("must end with '}'"));
        assert!(apply(&mut v, "x[1024]=1")
            .unwrap_err()
            .contains("too large"));
        let deep = format!("{}=1", vec!["a"; 40_000].join("."));
        assert!(apply(&mut v, &deep).unwrap_err().contains("at most 64"));
        // Many large indexes on distinct keys: bounded in total, not per key.
        let many: Vec<String> = (0..300).map(|i| format!("x{i}[1023]=1")).collect();
        let (_, err) = apply_all(&mut v, &[many.join(",")]).unwrap_err();
        assert!(err.contains("in total"), "{err}");
    }
}
