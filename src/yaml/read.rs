//! Reads YAML the way Helm reads a values file.
//!
//! Helm parses values with go-yaml v2 (YAML 1.1 scalars: `yes`/`on` are booleans, `0755` is octal)
//! and then passes them through JSON, so every number ends up a float64 and every key a string.
//! This reader reproduces that, and records the line of every entry so errors can point at it.

use std::collections::BTreeMap;

use saphyr_parser::{Event, Parser, ScalarStyle, Span};
use serde_json::{Map, Number, Value};

use super::scalar::{classify, Plain};
use crate::limits;

/// A parsed document and the line each path was written on (dotted path, `[i]` for list items).
#[derive(Debug, Clone, Default)]
pub struct Located {
    pub value: Value,
    pub lines: BTreeMap<String, usize>,
    /// Line and column where the document's root node starts.
    pub start: (usize, usize),
}

/// Where a reading failed (1-based line and column, in characters) and why. Displayed as
/// `LINE:COLUMN: reason`, so that `file:{error}` is the `file:line:column:` form editors and
/// terminals turn into a link.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("{line}:{column}: {message}")]
    Syntax {
        line: usize,
        column: usize,
        message: String,
    },
}

impl ReadError {
    /// The error as `FILE:LINE:COLUMN: reason`.
    pub fn in_file(&self, file: &str) -> String {
        format!("{file}:{self}")
    }

    /// `FILE:LINE:COLUMN`, for messages that put the reason elsewhere.
    pub fn position_in(&self, file: &str) -> String {
        let ReadError::Syntax { line, column, .. } = self;
        format!("{file}:{line}:{column}")
    }

    pub fn message(&self) -> &str {
        let ReadError::Syntax { message, .. } = self;
        message
    }
}

/// Parses a single-document YAML text (an empty text is an empty mapping, as Helm treats it).
pub fn parse_values(text: &str) -> Result<Located, ReadError> {
    single(read_stream(text, true, true)?)
}

/// `parse_values` without recording lines: for a render, which needs them only to report an
/// error (and can read the text again then).
pub fn parse_value(text: &str) -> Result<Value, ReadError> {
    single(read_stream(text, false, true)?).map(|doc| doc.value)
}

fn single(mut docs: Vec<Located>) -> Result<Located, ReadError> {
    match docs.len() {
        0 => Ok(Located {
            value: Value::Object(Map::new()),
            lines: BTreeMap::new(),
            start: (1, 1),
        }),
        1 => Ok(docs.remove(0)),
        _ => Err(ReadError::Syntax {
            line: docs[1].start.0,
            column: docs[1].start.1,
            message: "a values file holds one YAML document; this one holds several".into(),
        }),
    }
}

/// Parses every document of a manifest stream; empty documents are dropped. A key written twice
/// keeps its last value, as Kubernetes' reader does (Helm's own output has such keys where a
/// template writes one twice); values files refuse them instead.
pub fn parse_stream(text: &str) -> Result<Vec<Located>, ReadError> {
    read_stream(text, true, false)
}

/// `parse_stream` without recording lines: for large inputs read only for their objects (live
/// cluster dumps), whose paths would cost more memory than the text itself.
pub fn parse_stream_values(text: &str) -> Result<Vec<Value>, ReadError> {
    Ok(read_stream(text, false, false)?
        .into_iter()
        .map(|doc| doc.value)
        .collect())
}

/// `refuse_duplicates`: a key written twice in one mapping is an error (for what users write,
/// where Helm would silently drop the first), else the last wins.
fn read_stream(
    text: &str,
    record_lines: bool,
    refuse_duplicates: bool,
) -> Result<Vec<Located>, ReadError> {
    let mut reader = Reader {
        parser: Parser::new_from_str(text),
        anchors: BTreeMap::new(),
        lines: BTreeMap::new(),
        record_lines,
        refuse_duplicates,
        alias_budget: limits::MAX_ALIAS_EXPANSION,
        path_budget: limits::MAX_RECORDED_PATH_BYTES,
    };
    let mut docs = Vec::new();
    loop {
        let (event, span) = reader.next()?;
        match event {
            Event::StreamEnd => break,
            Event::DocumentStart(_) => {
                reader.lines.clear();
                let (event, span) = reader.next()?;
                let start = position(span);
                let value = match event {
                    Event::DocumentEnd => Value::Null,
                    other => {
                        let v = reader.node(other, span, "", 0)?;
                        let (end, span) = reader.next()?;
                        if !matches!(end, Event::DocumentEnd) {
                            return Err(syntax(span, "expected the end of the document"));
                        }
                        v
                    }
                };
                if !value.is_null() {
                    docs.push(Located {
                        value,
                        lines: std::mem::take(&mut reader.lines),
                        start,
                    });
                }
            }
            Event::StreamStart | Event::Nothing | Event::DocumentEnd => {}
            _ => return Err(syntax(span, "unexpected content outside a document")),
        }
    }
    Ok(docs)
}

struct Reader<'a> {
    parser: Parser<'a, saphyr_parser::StrInput<'a>>,
    /// Anchored nodes with what copying one costs (`expansion_cost`).
    anchors: BTreeMap<usize, (Value, usize)>,
    lines: BTreeMap<String, usize>,
    /// Whether to fill `lines` (and so build every node's path).
    record_lines: bool,
    refuse_duplicates: bool,
    /// What aliases may still copy in this stream (`limits::MAX_ALIAS_EXPANSION`).
    alias_budget: usize,
    /// Path bytes `lines` may still take (`limits::MAX_RECORDED_PATH_BYTES`).
    path_budget: usize,
}

/// What copying a node costs: its nodes plus its scalar bytes, so that both a deep alias chain
/// and one huge scalar referenced many times count.
fn expansion_cost(v: &Value) -> usize {
    match v {
        Value::String(s) => 1 + s.len(),
        Value::Array(items) => items.iter().map(expansion_cost).sum::<usize>() + 1,
        Value::Object(m) => m
            .iter()
            .map(|(k, v)| k.len() + expansion_cost(v))
            .sum::<usize>()
            .saturating_add(1),
        _ => 1,
    }
}

/// 1-based line and column of a span's start (the parser counts columns from 0).
fn position(span: Span) -> (usize, usize) {
    (span.start.line().max(1), span.start.col() + 1)
}

fn syntax(span: Span, message: &str) -> ReadError {
    let (line, column) = position(span);
    ReadError::Syntax {
        line,
        column,
        message: message.to_string(),
    }
}

/// Documents nested deeper than this are refused instead of risking the stack.
pub(super) const MAX_DEPTH: usize = limits::MAX_DEPTH;

impl<'a> Reader<'a> {
    fn anchor(&mut self, id: usize, value: &Value) {
        if id > 0 {
            self.anchors
                .insert(id, (value.clone(), expansion_cost(value)));
        }
    }

    fn next(&mut self) -> Result<(Event<'a>, Span), ReadError> {
        match self.parser.next() {
            Some(Ok(pair)) => Ok(pair),
            Some(Err(e)) => Err(ReadError::Syntax {
                line: e.marker().line().max(1),
                column: e.marker().col() + 1,
                message: e.info().to_string(),
            }),
            None => Ok((Event::StreamEnd, Span::default())),
        }
    }

    /// One node; `path` names it in `lines` (empty when lines are not recorded), `depth` counts
    /// the collections it is in.
    fn node(
        &mut self,
        event: Event<'a>,
        span: Span,
        path: &str,
        depth: usize,
    ) -> Result<Value, ReadError> {
        if depth > MAX_DEPTH {
            return Err(syntax(span, "the document is nested too deeply"));
        }
        if self.record_lines && !path.is_empty() {
            self.path_budget = self.path_budget.checked_sub(path.len()).ok_or_else(|| {
                syntax(
                    span,
                    "the document's keys are too many or too long to report errors in",
                )
            })?;
            self.lines.insert(path.to_string(), span.start.line());
        }
        match event {
            Event::Scalar(text, style, anchor, tag) => {
                let tag = tag.map(|t| t.suffix.clone());
                let v = scalar(&text, style, tag.as_deref()).map_err(|m| syntax(span, &m))?;
                self.anchor(anchor, &v);
                Ok(v)
            }
            Event::Alias(id) => {
                let (value, cost) = self
                    .anchors
                    .get(&id)
                    .ok_or_else(|| syntax(span, "alias to an unknown anchor"))?;
                self.alias_budget = self.alias_budget.checked_sub(*cost).ok_or_else(|| {
                    syntax(
                        span,
                        &format!(
                            "aliases (*name) in this file copy more than {} nodes and bytes; write the values out, or reuse fewer or smaller anchors",
                            limits::MAX_ALIAS_EXPANSION
                        ),
                    )
                })?;
                Ok(value.clone())
            }
            Event::SequenceStart(anchor, _) => {
                let mut items = Vec::new();
                loop {
                    let (ev, sp) = self.next()?;
                    if matches!(ev, Event::SequenceEnd) {
                        break;
                    }
                    let child = if self.record_lines {
                        format!("{path}[{}]", items.len())
                    } else {
                        String::new()
                    };
                    items.push(self.node(ev, sp, &child, depth + 1)?);
                }
                let v = Value::Array(items);
                self.anchor(anchor, &v);
                Ok(v)
            }
            Event::MappingStart(anchor, _) => {
                let mut map = Map::new();
                let mut merged: Vec<Map<String, Value>> = Vec::new();
                loop {
                    let (ev, sp) = self.next()?;
                    if matches!(ev, Event::MappingEnd) {
                        break;
                    }
                    let is_merge =
                        matches!(&ev, Event::Scalar(t, ScalarStyle::Plain, _, _) if t == "<<");
                    let key = self.node(ev, sp, "", depth + 1)?;
                    if key.is_array() || key.is_object() {
                        // Helm's reader refuses these too ("invalid map key").
                        return Err(syntax(
                            sp,
                            "a mapping key must be a scalar, not a list or mapping",
                        ));
                    }
                    let key = key_string(&key);
                    let (vev, vsp) = self.next()?;
                    let child = match (self.record_lines, path.is_empty()) {
                        (false, _) => String::new(),
                        (true, true) => key.clone(),
                        (true, false) => format!("{path}.{key}"),
                    };
                    let value = self.node(vev, vsp, &child, depth + 1)?;
                    if !child.is_empty() {
                        // A block mapping or list starts on the line after its key: name the
                        // key's line, where a reader looks for the value.
                        self.lines.insert(child, sp.start.line());
                    }
                    if is_merge {
                        // YAML 1.1 merge keys, which go-yaml honours: entries written
                        // in the mapping itself win over merged ones.
                        match value {
                            Value::Object(m) => merged.push(m),
                            Value::Array(list) => {
                                for item in list {
                                    match item {
                                        Value::Object(m) => merged.push(m),
                                        _ => {
                                            return Err(syntax(
                                                vsp,
                                                "a merge key (<<) takes mappings",
                                            ))
                                        }
                                    }
                                }
                            }
                            _ => return Err(syntax(vsp, "a merge key (<<) takes mappings")),
                        }
                        continue;
                    }
                    if self.refuse_duplicates && map.contains_key(&key) {
                        // Helm keeps the last silently, so the first is lost without a word.
                        return Err(syntax(
                            sp,
                            &format!(
                                "duplicate key {}: each key may appear once in a mapping",
                                limits::quoted(&key)
                            ),
                        ));
                    }
                    map.insert(key, value);
                }
                for m in merged {
                    for (k, v) in m {
                        map.entry(k).or_insert(v);
                    }
                }
                let v = Value::Object(map);
                self.anchor(anchor, &v);
                Ok(v)
            }
            _ => Err(syntax(span, "unexpected YAML event")),
        }
    }
}

/// Keys become strings, as they do when Helm passes values through JSON.
pub(super) fn key_string(key: &Value) -> String {
    match key {
        Value::String(s) => s.clone(),
        Value::Null => "null".into(),
        other => crate::gofmt::print(other),
    }
}

/// Resolves one scalar with go-yaml v2's rules, then applies JSON's view of numbers.
pub(super) fn scalar(text: &str, style: ScalarStyle, tag: Option<&str>) -> Result<Value, String> {
    match tag {
        Some("str") => return Ok(Value::String(text.to_string())),
        Some("null") => return Ok(Value::Null),
        Some("bool") => {
            return resolve_plain(text)
                .filter(Value::is_boolean)
                .ok_or_else(|| format!("{text:?} is not a boolean"))
        }
        Some("int") | Some("float") => {
            return resolve_plain(text)
                .filter(Value::is_number)
                .ok_or_else(|| format!("{text:?} is not a number"))
        }
        _ => {}
    }
    if style != ScalarStyle::Plain {
        return Ok(Value::String(text.to_string()));
    }
    Ok(resolve_plain(text).unwrap_or_else(|| Value::String(text.to_string())))
}

/// The non-string meaning a plain scalar has in Helm's values, if any: go-yaml's reading
/// (`scalar::classify`) after the JSON step.
pub fn resolve_plain(text: &str) -> Option<Value> {
    match classify(text) {
        Plain::Null => Some(Value::Null),
        Plain::Bool(b) => Some(Value::Bool(b)),
        Plain::Number(f) => Some(number(f)),
        // Infinity and NaN cannot pass through JSON, which Helm requires; keep the text.
        Plain::InfNan => Some(Value::String(text.to_string())),
        Plain::Timestamp | Plain::Base60 | Plain::String => date(text).map(Value::String),
    }
}

/// Every number is a float64 in Helm's values, as JSON decoding makes it.
pub fn number(f: f64) -> Value {
    Number::from_f64(f)
        .map(Value::Number)
        .unwrap_or(Value::Null)
}

/// A plain `YYYY-MM-DD` becomes a timestamp in go-yaml and an RFC 3339 string after JSON. Only
/// this form is rewritten (any digits, as the reader always has); other timestamp forms keep
/// their text.
fn date(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let date_like = b.len() == 10
        && b[4] == b'-'
        && b[7] == b'-'
        && b.iter()
            .enumerate()
            .all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit());
    date_like.then(|| format!("{s}T00:00:00Z"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn refused(text: &str) -> String {
        let started = std::time::Instant::now();
        let err = parse_value(text).expect_err("refused").to_string();
        assert!(started.elapsed().as_secs() < 1, "refused quickly");
        err
    }

    #[test]
    fn billion_laughs_is_refused() {
        let mut doc = String::from("a: &a [x, x, x, x, x, x, x, x, x, x]\n");
        for (prev, name) in ["a", "b", "c", "d", "e", "f", "g", "h", "i"]
            .iter()
            .zip(["b", "c", "d", "e", "f", "g", "h", "i", "j"])
        {
            doc.push_str(&format!("{name}: &{name} [*{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}]\n"));
        }
        assert!(refused(&doc).contains("aliases"));
    }

    #[test]
    fn a_huge_scalar_aliased_many_times_is_refused() {
        let mut doc = format!("big: &big \"{}\"\nlist:\n", "x".repeat(100_000));
        doc.push_str(&"  - *big\n".repeat(200));
        assert!(refused(&doc).contains("aliases"));
    }

    #[test]
    fn merge_key_chains_are_bounded() {
        let mut doc = String::from("m0: &m0 {a: 1, b: 2, c: 3, d: 4, e: 5, f: 6, g: 7, h: 8}\n");
        for i in 1..40 {
            let prev = i - 1;
            doc.push_str(&format!(
                "m{i}: &m{i} {{<<: [*m{prev}, *m{prev}], k{i}: [*m{prev}, *m{prev}, *m{prev}]}}\n"
            ));
        }
        assert!(refused(&doc).contains("aliases"));
    }

    #[test]
    fn small_real_world_anchors_still_work() {
        let doc = parse_value(
            "res: &res {limits: {cpu: 1}}\noperator: {resources: *res}\nrelay:\n  <<: {replicas: 2}\n  resources: *res\n",
        )
        .unwrap();
        assert_eq!(doc["operator"]["resources"]["limits"]["cpu"], json!(1.0));
        assert_eq!(doc["relay"]["replicas"], json!(2.0));
    }

    #[test]
    fn collection_keys_and_duplicate_keys_are_refused() {
        assert!(refused("a: &a {x: 1}\n? *a\n: 1\n").contains("mapping key must be a scalar"));
        let err = refused("a: 1\nb: 2\na: 3\n");
        assert!(err.starts_with("3:1: duplicate key \"a\""), "{err}");
    }

    #[test]
    fn deep_nesting_is_refused() {
        let doc = format!("{}1{}", "[".repeat(100), "]".repeat(100));
        assert!(refused(&doc).contains("nested too deeply"));
        // Far deeper, the parser's own recursion limit answers first.
        let doc = format!("{}1{}", "[".repeat(100_000), "]".repeat(100_000));
        assert!(refused(&doc).contains("recursion limit"));
    }

    #[test]
    fn recorded_paths_are_bounded() {
        // Long keys nested deep with many leaves: the paths of error messages would be huge.
        let key = "k".repeat(1000);
        let mut doc = String::new();
        for depth in 0..60 {
            doc.push_str(&format!("{}{key}{depth}:\n", "  ".repeat(depth)));
        }
        for leaf in 0..2000 {
            doc.push_str(&format!("{}l{leaf}: 1\n", "  ".repeat(60)));
        }
        let started = std::time::Instant::now();
        let err = parse_values(&doc).unwrap_err().to_string();
        assert!(err.contains("too many or too long"), "{err}");
        assert!(started.elapsed().as_secs() < 1);
    }

    #[test]
    fn floats_beyond_float64_stay_text_as_in_go_yaml() {
        let v = parse_value("a: 1e400\nb: -1e400\nc: 1e300\n").unwrap();
        assert_eq!(v["a"], json!("1e400"));
        assert_eq!(v["b"], json!("-1e400"));
        assert_eq!(v["c"], json!(1e300));
    }

    #[test]
    fn yaml_11_scalars_resolve_like_go_yaml() {
        let doc = parse_values(
            "a: yes\nb: on\nc: 0755\nd: 0x1F\ne: 1.5\nf: '0755'\ng: ~\nh: 1e3\ni: N\nj: 7445\nk: 2001-12-14\n",
        )
        .unwrap();
        let v = doc.value;
        assert_eq!(v["a"], json!(true));
        assert_eq!(v["b"], json!(true));
        assert_eq!(v["c"], json!(493.0));
        assert_eq!(v["d"], json!(31.0));
        assert_eq!(v["e"], json!(1.5));
        assert_eq!(v["f"], json!("0755"));
        assert_eq!(v["g"], Value::Null);
        assert_eq!(v["h"], json!(1000.0));
        assert_eq!(v["i"], json!(false));
        assert_eq!(v["j"], json!(7445.0));
        assert_eq!(v["k"], json!("2001-12-14T00:00:00Z"));
    }

    #[test]
    fn lines_are_recorded_and_merge_keys_apply() {
        let doc = parse_values("base: &b\n  x: 1\n  z: 2\nother:\n  <<: *b\n  z: 3\n").unwrap();
        assert_eq!(doc.value["other"], json!({"x": 1.0, "z": 3.0}));
        assert_eq!(doc.lines["other.z"], 6);
        assert_eq!(doc.lines["base.x"], 2);
    }

    #[test]
    fn syntax_errors_carry_a_line_and_column() {
        let err = parse_values("a: [1, 2\nb: 3\n").unwrap_err();
        assert!(err.in_file("v.yaml").starts_with("v.yaml:2:"), "{err}");
        let err = parse_values("a: 1\n  b: 2\n").unwrap_err();
        assert!(err.to_string().starts_with("2:"), "{err}");
        let err = parse_values("a: 1\nb:\n  c: x\n  c: y\n").unwrap_err();
        assert_eq!(err.position_in("v.yaml"), "v.yaml:4:3", "{err}");
        let err = parse_values("# c\n---\na: 1\n---\nb: 2\n").unwrap_err();
        assert_eq!(err.position_in("v.yaml"), "v.yaml:5:1", "{err}");
    }
}
