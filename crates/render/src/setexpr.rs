//! `--set` expressions as Helm's `--set` reads them: `a.b=c`, several joined by commas,
//! `list[0]=x`, `list={a,b}`, backslash escapes for `.`, `,`, `=` and `[`; `true`, `false`,
//! `null` (in any case) and plain integers are typed, everything else is a string.
//!
//! The same parser reads Helm's other forms, which differ only in how a value is read:
//! `--set-string` (always a string), `--set-file` (the named file's content, as a string) and
//! `--set-json` (one JSON value per assignment, or one whole JSON object merged at the top).

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use cilium_cmp_yaml::limits;

/// Why a `--set`-like argument cannot be applied (the caller names the flag and the argument).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SetExprError {
    /// A `--set-file` argument names a file whose text the caller did not hand in (not in
    /// [`SetArgs::files`], or applied through a function that is given no files).
    #[error("the file {} was not read", limits::quoted(.name))]
    FileNotRead {
        /// The file name as written after `=`, unescaped.
        name: String,
    },
    /// Two commas in a row, or a comma first: Helm allows only one trailing comma.
    #[error(
        "an empty assignment between commas (`a=1,,b=2` or a leading ','); remove the extra comma"
    )]
    EmptyAssignment,
    /// One comma-separated part of a `--set`, `--set-string` or `--set-file` argument has no
    /// unescaped `=`.
    #[error("{}not {example}", named_part(.part))]
    NotAnAssignment {
        /// The part without `=`; empty when it is the whole expression, which the message
        /// names already (`--set "a.b": not PATH=VALUE ...`).
        part: String,
        /// The form the flag takes, with an example, for the message.
        example: &'static str,
    },
    /// A value starting with `{` (a list) does not end with `}`.
    #[error("the list {} must end with '}}'", limits::quoted(.list))]
    ListNotClosed {
        /// The value after `=`, as written.
        list: String,
    },
    /// A `{` in the expression has no matching `}`, so the assignments cannot be split.
    #[error("a list opened with '{{' must end with '}}'")]
    BraceNotClosed,
    /// The path before `=` has more parts (keys and indexes) than values may nest.
    #[error(
        "the path has {parts} parts; at most {} are allowed",
        limits::MAX_DEPTH
    )]
    PathTooDeep {
        /// How many parts the path has.
        parts: usize,
    },
    /// Nothing but dots (or nothing at all) before `=`.
    #[error("the path before '=' is empty")]
    EmptyPath,
    /// The path's first part is `[N]`: the values are a map at the top, not a list.
    #[error("a path must start with a key, not a list index")]
    PathStartsWithIndex,
    /// A `[` in the path has no `]` after it.
    #[error("the list index [{} is not closed with ']'", limits::quoted(.digits))]
    IndexNotClosed {
        /// The text after `[`, to the end of the path.
        digits: String,
    },
    /// The text between `[` and `]` is not a non-negative integer.
    #[error("list index [{}] is not a number", limits::quoted(.digits))]
    IndexNotANumber {
        /// The text between the brackets.
        digits: String,
    },
    /// A list index above [`limits::MAX_SET_INDEX`] (Helm fills the items before it with
    /// nulls, so a large index would allocate that many).
    #[error(
        "list index [{index}] is too large; at most {} is allowed",
        limits::MAX_SET_INDEX
    )]
    IndexTooLarge {
        /// The index as written.
        index: usize,
    },
    /// The list items that indexes created, over every argument of one call, exceed
    /// [`limits::MAX_SET_SLOTS`].
    #[error(
        "list indexes create more than {} list items in total",
        limits::MAX_SET_SLOTS
    )]
    TooManyListItems,
    /// A `--set-json` argument that is neither a JSON object nor starts with `PATH=`.
    #[error("{}not PATH=JSON (for example 'tolerations=[{{\"operator\":\"Exists\"}}]')", named_part(.part))]
    NotAJsonAssignment {
        /// The rest of the argument from where an assignment was expected; empty when it is
        /// the whole expression, as for `NotAnAssignment`.
        part: String,
    },
    /// A whole-object `--set-json` argument that does not parse (serde_json's reason).
    #[error("not JSON: {reason}")]
    NotJson {
        /// serde_json's description of the first error.
        reason: String,
    },
    /// The value after `PATH=` in a `--set-json` assignment does not parse as JSON.
    #[error("the value of {} is not JSON: {reason}", limits::quoted(.key))]
    ValueNotJson {
        /// The path before `=`, as written.
        key: String,
        /// serde_json's description of the first error.
        reason: String,
    },
    /// A `--set-json` value parses, but something other than `,` follows it.
    #[error("the JSON value of {} is followed by {}; separate assignments with ','", limits::quoted(.key), limits::quoted(.tail))]
    TextAfterJson {
        /// The path before `=`, as written.
        key: String,
        /// The text after the JSON value, leading blanks removed.
        tail: String,
    },
    /// A `--set-json` value nests deeper than a values file may ([`limits::MAX_DEPTH`]).
    #[error("the JSON value is nested more than {} deep", limits::MAX_DEPTH)]
    JsonTooDeep,
}

/// The part of an expression a message is about, unless it is all of it (the flag's message
/// quotes the whole expression first, and saying it twice reads as a stutter).
fn named_part(part: &str) -> String {
    if part.is_empty() {
        String::new()
    } else {
        format!("{} is ", limits::quoted(part))
    }
}

/// How the value after `=` is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `--set`: typed as Helm types it.
    Typed,
    /// `--set-string`: always a string.
    String,
    /// `--set-json`: a JSON value.
    Json,
    /// `--set-file`: the value is a file name; the file's content becomes a string.
    File,
}

impl Kind {
    /// The flag, for error messages and origins.
    pub fn flag(self) -> &'static str {
        match self {
            Kind::Typed => "--set",
            Kind::String => "--set-string",
            Kind::Json => "--set-json",
            Kind::File => "--set-file",
        }
    }
}

/// Every `--set`-like argument of one render, and the content of the files `--set-file` names
/// (read by the front end: the library reads no files).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SetArgs {
    /// `--set-json` arguments, in command-line order.
    pub json: Vec<String>,
    /// `--set` arguments, in command-line order.
    pub typed: Vec<String>,
    /// `--set-string` arguments, in command-line order.
    pub string: Vec<String>,
    /// `--set-file` arguments, in command-line order (names, not content: see `files`).
    pub file: Vec<String>,
    /// File name as written after `=` (unescaped) → its text.
    pub files: BTreeMap<String, String>,
}

impl SetArgs {
    /// In Helm's order (`MergeValues` in Helm's `pkg/cli/values`): `--set-json`, then `--set`,
    /// then `--set-string`, then `--set-file`, whatever their order on the command line.
    pub fn in_order(&self) -> impl Iterator<Item = (Kind, &String)> {
        fn of(kind: Kind, list: &[String]) -> impl Iterator<Item = (Kind, &String)> {
            list.iter().map(move |e| (kind, e))
        }
        of(Kind::Json, &self.json)
            .chain(of(Kind::Typed, &self.typed))
            .chain(of(Kind::String, &self.string))
            .chain(of(Kind::File, &self.file))
    }

    /// No `--set`-like argument at all (the `files` are not looked at).
    pub fn is_empty(&self) -> bool {
        self.json.is_empty()
            && self.typed.is_empty()
            && self.string.is_empty()
            && self.file.is_empty()
    }

    /// Bytes of expression text and file content, for the bound on a render's input.
    pub fn byte_len(&self) -> usize {
        self.in_order().map(|(_, e)| e.len()).sum::<usize>()
            + self.files.values().map(String::len).sum::<usize>()
    }

    /// The flags used, for the origin of these values in error messages (`--set`,
    /// `--set/--set-string`, ...).
    pub fn source_name(&self) -> String {
        let mut kinds: Vec<&str> = Vec::new();
        for (kind, _) in self.in_order() {
            if !kinds.contains(&kind.flag()) {
                kinds.push(kind.flag());
            }
        }
        if kinds.is_empty() {
            "--set".into()
        } else {
            kinds.join("/")
        }
    }

    /// Applies every argument in Helm's order. The error names the flag and the argument.
    pub fn apply(&self, root: &mut Value) -> Result<(), (Kind, String, SetExprError)> {
        let mut slots = limits::MAX_SET_SLOTS;
        let read = |name: &str| -> Result<String, SetExprError> {
            self.files
                .get(name)
                .cloned()
                .ok_or_else(|| SetExprError::FileNotRead { name: name.into() })
        };
        for (kind, expr) in self.in_order() {
            apply_kind(root, expr, kind, &read, &mut slots).map_err(|m| (kind, expr.clone(), m))?;
        }
        Ok(())
    }
}

/// The file names a `--set-file` argument names (unescaped, in order), for the front end to read.
pub fn file_names(expr: &str) -> Result<Vec<String>, SetExprError> {
    let names = std::cell::RefCell::new(Vec::new());
    let record = |name: &str| -> Result<String, SetExprError> {
        names.borrow_mut().push(name.to_string());
        Ok(String::new())
    };
    let mut scratch = Value::Object(Map::new());
    let mut slots = limits::MAX_SET_SLOTS;
    apply_kind(&mut scratch, expr, Kind::File, &record, &mut slots)?;
    Ok(names.into_inner())
}

/// Applies `--set` arguments in order, within the bounds of `limits` (path depth, list index,
/// list slots created in total).
pub fn apply_all(root: &mut Value, exprs: &[String]) -> Result<(), (String, SetExprError)> {
    let mut slots = limits::MAX_SET_SLOTS;
    for expr in exprs {
        apply_kind(root, expr, Kind::Typed, &no_files, &mut slots)
            .map_err(|m| (expr.clone(), m))?;
    }
    Ok(())
}

/// Applies one `--set` argument (which may hold several comma-separated assignments).
pub fn apply(root: &mut Value, expr: &str) -> Result<(), SetExprError> {
    apply_as(root, expr, Kind::Typed)
}

/// Applies one argument of the given kind (`Kind::File` is refused: it needs the files' text).
pub fn apply_as(root: &mut Value, expr: &str, kind: Kind) -> Result<(), SetExprError> {
    let mut slots = limits::MAX_SET_SLOTS;
    apply_kind(root, expr, kind, &no_files, &mut slots)
}

fn no_files(name: &str) -> Result<String, SetExprError> {
    Err(SetExprError::FileNotRead { name: name.into() })
}

type FileReader<'a> = dyn Fn(&str) -> Result<String, SetExprError> + 'a;

fn apply_kind(
    root: &mut Value,
    expr: &str,
    kind: Kind,
    read: &FileReader<'_>,
    slots: &mut usize,
) -> Result<(), SetExprError> {
    if kind == Kind::Json {
        return apply_json(root, expr, slots);
    }
    let scalar = |raw: &str| -> Result<Value, SetExprError> {
        let text = unescape(raw);
        Ok(match kind {
            Kind::Typed => typed(&text),
            Kind::String => Value::String(text),
            Kind::File => Value::String(read(&text)?),
            Kind::Json => unreachable!("JSON is read by apply_json"),
        })
    };
    let parts = split_unescaped(expr, ',', true)?;
    let last = parts.len().saturating_sub(1);
    for (i, part) in parts.into_iter().enumerate() {
        // Helm accepts one trailing comma and an empty argument, nothing empty before an
        // assignment ("key \"\" has no value").
        if part.is_empty() {
            if i < last {
                return Err(SetExprError::EmptyAssignment);
            }
            continue;
        }
        let (key, raw) = split_key_value(&part).ok_or_else(|| {
            let example = match kind {
                Kind::File => "PATH=FILE (for example extraConfig.custom=custom.conf)",
                Kind::String => "PATH=VALUE (for example cluster.name=prod)",
                _ => "PATH=VALUE (for example hubble.relay.enabled=true)",
            };
            SetExprError::NotAnAssignment {
                part: if part == expr.trim_end_matches(',') {
                    String::new()
                } else {
                    part.clone()
                },
                example,
            }
        })?;
        let value = if let Some(list) = raw.strip_prefix('{') {
            let inner = list
                .strip_suffix('}')
                .ok_or_else(|| SetExprError::ListNotClosed { list: raw.clone() })?;
            // Every item counts, empty ones too: Helm reads `{a,,b}` as a, "", b and `{}` as
            // one empty string.
            Value::Array(
                split_unescaped(inner, ',', false)?
                    .iter()
                    .map(|s| scalar(s))
                    .collect::<Result<_, _>>()?,
            )
        } else {
            scalar(&raw)?
        };
        assign_path(root, &key, value, slots)?;
    }
    Ok(())
}

fn assign_path(
    root: &mut Value,
    key: &str,
    value: Value,
    slots: &mut usize,
) -> Result<(), SetExprError> {
    let segments = parse_path(key)?;
    if segments.len() > limits::MAX_DEPTH {
        return Err(SetExprError::PathTooDeep {
            parts: segments.len(),
        });
    }
    assign(root, &segments, value, slots)
}

/// `--set-json`: `PATH=JSON[,PATH=JSON...]`, where each JSON value ends where the JSON ends (so
/// it may hold commas), an empty value is null; or one JSON object, merged at the top as a
/// values file would be.
fn apply_json(root: &mut Value, expr: &str, slots: &mut usize) -> Result<(), SetExprError> {
    let trimmed = expr.trim();
    if trimmed.starts_with('{') {
        let value = json_value(trimmed)?;
        let Value::Object(_) = value else {
            unreachable!("a JSON text starting with '{{' is an object")
        };
        crate::merge::merge_into(root, value);
        return Ok(());
    }
    let mut rest = expr;
    while !rest.is_empty() {
        let (key, after) = split_json_key(rest).map_err(|e| match e {
            SetExprError::NotAJsonAssignment { part } if part == expr => {
                SetExprError::NotAJsonAssignment {
                    part: String::new(),
                }
            }
            other => other,
        })?;
        let text = after.trim_start();
        let value_end;
        let value = if text.is_empty() || text.starts_with(',') {
            value_end = text.find(',').map_or(text.len(), |i| i);
            Value::Null
        } else {
            let mut stream = serde_json::Deserializer::from_str(text).into_iter::<Value>();
            let value = match stream.next() {
                Some(Ok(v)) => v,
                Some(Err(e)) => {
                    return Err(SetExprError::ValueNotJson {
                        key,
                        reason: e.to_string(),
                    })
                }
                None => Value::Null,
            };
            value_end = stream.byte_offset();
            value
        };
        let tail = text[value_end..].trim_start();
        rest = match tail.strip_prefix(',') {
            Some(r) => r,
            None if tail.is_empty() => tail,
            None => {
                return Err(SetExprError::TextAfterJson {
                    key,
                    tail: tail.to_string(),
                })
            }
        };
        assign_path(root, &key, helm_json(value)?, slots)?;
    }
    Ok(())
}

/// The path before '=' of a `--set-json` assignment (escapes as in `--set`), and the text after.
fn split_json_key(s: &str) -> Result<(String, &str), SetExprError> {
    let mut escaped = false;
    for (i, c) in s.char_indices() {
        match c {
            '\\' if !escaped => escaped = true,
            '=' if !escaped => return Ok((s[..i].to_string(), &s[i + 1..])),
            ',' if !escaped => break,
            _ => escaped = false,
        }
    }
    Err(SetExprError::NotAJsonAssignment { part: s.into() })
}

fn json_value(text: &str) -> Result<Value, SetExprError> {
    let value: Value = serde_json::from_str(text).map_err(|e| SetExprError::NotJson {
        reason: e.to_string(),
    })?;
    helm_json(value)
}

/// A JSON value as Helm holds it: every number a float64 (Go's JSON decoder), nested at most
/// `MAX_DEPTH` deep like a values file.
fn helm_json(value: Value) -> Result<Value, SetExprError> {
    fn convert(v: Value, depth: usize) -> Result<Value, SetExprError> {
        if depth > limits::MAX_DEPTH {
            return Err(SetExprError::JsonTooDeep);
        }
        Ok(match v {
            Value::Number(n) => cilium_cmp_yaml::yaml::read::number(n.as_f64().unwrap_or(f64::NAN)),
            Value::Array(a) => Value::Array(
                a.into_iter()
                    .map(|x| convert(x, depth + 1))
                    .collect::<Result<_, _>>()?,
            ),
            Value::Object(m) => Value::Object(
                m.into_iter()
                    .map(|(k, x)| Ok((k, convert(x, depth + 1)?)))
                    .collect::<Result<_, SetExprError>>()?,
            ),
            other => other,
        })
    }
    convert(value, 1)
}

#[derive(Debug, PartialEq)]
enum Segment {
    Key(String),
    Index(usize),
}

/// Splits on `sep` where it is not escaped (and, at the top level, not inside `{...}`).
fn split_unescaped(s: &str, sep: char, respect_braces: bool) -> Result<Vec<String>, SetExprError> {
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
        return Err(SetExprError::BraceNotClosed);
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

fn parse_path(key: &str) -> Result<Vec<Segment>, SetExprError> {
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
                    return Err(SetExprError::IndexNotClosed { digits });
                }
                let idx: usize = digits.parse().map_err(|_| SetExprError::IndexNotANumber {
                    digits: digits.clone(),
                })?;
                if idx > limits::MAX_SET_INDEX {
                    return Err(SetExprError::IndexTooLarge { index: idx });
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
        return Err(SetExprError::EmptyPath);
    }
    if matches!(segs[0], Segment::Index(_)) {
        return Err(SetExprError::PathStartsWithIndex);
    }
    Ok(segs)
}

fn assign(
    node: &mut Value,
    path: &[Segment],
    value: Value,
    slots: &mut usize,
) -> Result<(), SetExprError> {
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
            *slots = slots
                .checked_sub(added)
                .ok_or(SetExprError::TooManyListItems)?;
            list.resize(list.len() + added, Value::Null);
            assign(&mut list[*i], rest, value, slots)
        }
    }
}

/// Helm's typing of a `--set` value (`typedVal` in Helm's strvals): `true`, `false` and `null`
/// in any case; `0`, and integers that do not start with `0` (a sign is allowed), are int64.
fn typed(s: &str) -> Value {
    if s.eq_ignore_ascii_case("true") {
        return Value::Bool(true);
    }
    if s.eq_ignore_ascii_case("false") {
        return Value::Bool(false);
    }
    if s.eq_ignore_ascii_case("null") {
        return Value::Null;
    }
    if s == "0" {
        return Value::from(0);
    }
    if !s.starts_with('0') {
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
    fn a_message_names_the_part_only_when_it_is_not_the_whole_expression() {
        let message = |expr: &str, kind: Kind| {
            apply_as(&mut json!({}), expr, kind)
                .unwrap_err()
                .to_string()
        };
        assert_eq!(
            message("a.b", Kind::Typed),
            "not PATH=VALUE (for example hubble.relay.enabled=true)"
        );
        assert_eq!(
            message("a=1,b.c", Kind::Typed),
            "\"b.c\" is not PATH=VALUE (for example hubble.relay.enabled=true)"
        );
        assert!(message("a.b", Kind::Json).starts_with("not PATH=JSON"));
        assert!(message("a=1,b", Kind::Json).starts_with("\"b\" is not PATH=JSON"));
    }

    #[test]
    fn malformed_and_oversized_paths_are_refused() {
        let mut v = json!({});
        assert_eq!(
            apply(&mut v, "x[0=1").unwrap_err(),
            SetExprError::IndexNotClosed { digits: "0".into() }
        );
        let unclosed = apply(&mut v, "extraArgs={a,b").unwrap_err();
        // The brace is found open while the argument is split, before any list is read.
        assert_eq!(unclosed, SetExprError::BraceNotClosed);
        assert!(unclosed.to_string().contains("must end with '}'"));
        assert_eq!(
            apply(&mut v, "x[1024]=1").unwrap_err(),
            SetExprError::IndexTooLarge { index: 1024 }
        );
        assert_eq!(
            apply(&mut v, "x[1024]=1").unwrap_err().to_string(),
            "list index [1024] is too large; at most 1023 is allowed"
        );
        let deep = format!("{}=1", vec!["a"; 40_000].join("."));
        let err = apply(&mut v, &deep).unwrap_err();
        assert_eq!(err, SetExprError::PathTooDeep { parts: 40_000 });
        assert!(err.to_string().contains("at most 64"), "{err}");
        // Many large indexes on distinct keys: bounded in total, not per key.
        let many: Vec<String> = (0..300).map(|i| format!("x{i}[1023]=1")).collect();
        let (_, err) = apply_all(&mut v, &[many.join(",")]).unwrap_err();
        assert_eq!(err, SetExprError::TooManyListItems);
        assert!(err.to_string().contains("in total"), "{err}");
    }
}
