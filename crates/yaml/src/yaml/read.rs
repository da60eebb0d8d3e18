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
    /// The document as a JSON tree.
    pub value: Value,
    /// The 1-based line of each path.
    pub lines: BTreeMap<String, usize>,
    /// Line and column where the document's root node starts.
    pub start: (usize, usize),
    /// Keys written more than once in one mapping, when read as Helm reads a values file
    /// (`parse_values_as_helm`); empty otherwise.
    pub duplicates: Vec<Duplicate>,
}

/// A key written again in the same mapping. Helm reads values with sigs.k8s.io/yaml
/// (`ReadValues` in helm/pkg/chart/common/util), which decodes with go-yaml v2 into a Go map:
/// each occurrence replaces the one before it whole (no merging of two maps), so only the last
/// one counts. Checked with Helm v4.2.3: `a: {b: 1}` then `a: {c: 2}` reads as `{a: {c: 2}}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Duplicate {
    /// The dotted path (`[i]` for list items) of the key.
    pub path: String,
    /// The path as mapping keys, when no list lies above it (what `fix-values` edits).
    pub keys: Option<Vec<String>>,
    /// The 1-based line of the occurrence Helm ignores, and of the one after it that replaced it.
    pub ignored_line: usize,
    /// The line of the occurrence that counts instead.
    pub replaced_by_line: usize,
}

/// What the reader does with a key written twice in one mapping.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Duplicates {
    /// An error (settings files, Applications).
    Refuse,
    /// The last wins, silently (manifest streams, as Kubernetes' reader does).
    LastWins,
    /// The last wins, as in Helm's values, and each is recorded in `Located::duplicates`.
    Record,
}

/// Where a reading failed (1-based line and column, in characters) and why. Displayed as
/// `LINE:COLUMN: reason`, so that `file:{error}` is the `file:line:column:` form editors and
/// terminals turn into a link.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The text is not YAML, or not YAML this reader accepts: where, and why.
    #[error("{line}:{column}: {message}")]
    Syntax {
        /// 1-based line.
        line: usize,
        /// 1-based column, in characters.
        column: usize,
        /// What is wrong there.
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

    /// Where in `text` (the source named `file`) the reading stopped, for the excerpt.
    pub fn span_in(&self, file: &str, text: &str) -> crate::diagnostic::Span {
        let ReadError::Syntax { line, column, .. } = self;
        crate::diagnostic::Span::at(file, text, *line, *column)
    }

    /// The reason alone, without the position.
    pub fn message(&self) -> &str {
        let ReadError::Syntax { message, .. } = self;
        message
    }
}

/// Parses a single-document YAML text (an empty text is an empty mapping, as Helm treats it).
pub fn parse_values(text: &str) -> Result<Located, ReadError> {
    single(read_stream(text, true, Duplicates::Refuse)?)
}

/// A values file read as Helm reads it: a key written twice keeps its last value, and each
/// such key is listed in `duplicates` (its earlier values do nothing, which the caller reports).
pub fn parse_values_as_helm(text: &str) -> Result<Located, ReadError> {
    single(read_stream(text, true, Duplicates::Record)?)
}

/// `parse_values_as_helm` without recording lines (the duplicates keep theirs).
pub fn parse_value_as_helm(text: &str) -> Result<(Value, Vec<Duplicate>), ReadError> {
    single(read_stream(text, false, Duplicates::Record)?).map(|doc| (doc.value, doc.duplicates))
}

/// `parse_values` without recording lines: for a render, which needs them only to report an
/// error (and can read the text again then).
pub fn parse_value(text: &str) -> Result<Value, ReadError> {
    single(read_stream(text, false, Duplicates::Refuse)?).map(|doc| doc.value)
}

fn single(mut docs: Vec<Located>) -> Result<Located, ReadError> {
    match docs.len() {
        0 => Ok(Located {
            value: Value::Object(Map::new()),
            lines: BTreeMap::new(),
            start: (1, 1),
            duplicates: Vec::new(),
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
    read_stream(text, true, Duplicates::LastWins)
}

/// `parse_stream` without recording lines: for large inputs read only for their objects (live
/// cluster dumps), whose paths would cost more memory than the text itself.
pub fn parse_stream_values(text: &str) -> Result<Vec<Value>, ReadError> {
    Ok(read_stream(text, false, Duplicates::LastWins)?
        .into_iter()
        .map(|doc| doc.value)
        .collect())
}

fn read_stream(
    text: &str,
    record_lines: bool,
    duplicates: Duplicates,
) -> Result<Vec<Located>, ReadError> {
    let mut reader = Reader {
        parser: Parser::new_from_str(text),
        anchors: BTreeMap::new(),
        lines: BTreeMap::new(),
        record_lines,
        duplicates,
        found: Vec::new(),
        keys: Vec::new(),
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
                reader.found.clear();
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
                        duplicates: std::mem::take(&mut reader.found),
                    });
                }
            }
            Event::StreamStart | Event::Nothing | Event::DocumentEnd => {}
            _ => return Err(syntax(span, "unexpected content outside a document")),
        }
    }
    Ok(docs)
}

/// One step of the path to a node: a mapping key or a list index.
enum Step {
    Key(String),
    Item(usize),
}

struct Reader<'a> {
    parser: Parser<'a, saphyr_parser::StrInput<'a>>,
    /// Anchored nodes with what copying one costs (`expansion_cost`).
    anchors: BTreeMap<usize, (Value, usize)>,
    lines: BTreeMap<String, usize>,
    /// Whether to fill `lines` (and so build every node's path).
    record_lines: bool,
    duplicates: Duplicates,
    /// The duplicates of the current document (`Duplicates::Record`).
    found: Vec<Duplicate>,
    /// The keys from the root to the node being read (`None` for a list item), kept only with
    /// `Duplicates::Record` to name a duplicate's path.
    keys: Vec<Step>,
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
                    let record = self.duplicates == Duplicates::Record;
                    if record {
                        self.keys.push(Step::Item(items.len()));
                    }
                    let item = self.node(ev, sp, &child, depth + 1);
                    if record {
                        self.keys.pop();
                    }
                    items.push(item?);
                }
                let v = Value::Array(items);
                self.anchor(anchor, &v);
                Ok(v)
            }
            Event::MappingStart(anchor, _) => {
                let mut map = Map::new();
                // The keys written in the mapping itself, once a merge key has put others in
                // `map` (until then they are `map`'s keys): only these can be repeated.
                let mut written: Option<std::collections::HashSet<String>> = None;
                // Where each key was last written (`Duplicates::Record` only).
                let mut key_lines: BTreeMap<String, usize> = BTreeMap::new();
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
                    let repeated = !is_merge
                        && match &written {
                            None => map.contains_key(&key),
                            Some(w) => w.contains(&key),
                        };
                    let seen_at = match (self.duplicates, repeated) {
                        (Duplicates::Refuse, true) => {
                            // Helm keeps the last silently; where users write settings, say so.
                            return Err(syntax(
                                sp,
                                &format!(
                                    "duplicate key {}: each key may appear once in a mapping",
                                    limits::quoted(&key)
                                ),
                            ));
                        }
                        (Duplicates::Record, true) => {
                            if !child.is_empty() {
                                // The earlier value's own paths are gone with it.
                                let dotted = format!("{child}.");
                                let listed = format!("{child}[");
                                self.lines.retain(|p, _| {
                                    !(p.starts_with(&dotted) || p.starts_with(&listed))
                                });
                            }
                            key_lines.get(&key).copied()
                        }
                        _ => None,
                    };
                    let record = self.duplicates == Duplicates::Record && !is_merge;
                    if record {
                        self.keys.push(Step::Key(key.clone()));
                    }
                    let value = self.node(vev, vsp, &child, depth + 1);
                    if record {
                        self.keys.pop();
                    }
                    let value = value?;
                    if record {
                        if let Some(ignored_line) = seen_at {
                            let mut keys = Vec::new();
                            let mut path = String::new();
                            let mut under_list = false;
                            for step in self.keys.iter().chain([&Step::Key(key.clone())]) {
                                match step {
                                    Step::Key(k) => {
                                        if !path.is_empty() {
                                            path.push('.');
                                        }
                                        path.push_str(k);
                                        keys.push(k.clone());
                                    }
                                    Step::Item(i) => {
                                        path.push_str(&format!("[{i}]"));
                                        under_list = true;
                                    }
                                }
                            }
                            self.found.push(Duplicate {
                                path,
                                keys: (!under_list).then_some(keys),
                                ignored_line,
                                replaced_by_line: sp.start.line(),
                            });
                        }
                    }
                    if !child.is_empty() {
                        // A block mapping or list starts on the line after its key: name the
                        // key's line, where a reader looks for the value.
                        self.lines.insert(child, sp.start.line());
                    }
                    if is_merge {
                        // YAML 1.1 merge keys as Helm's reader (go-yaml v2, in sigs.k8s.io/yaml)
                        // applies them, in the order written: a merge sets every key it brings,
                        // over keys written before it, and keys written after it win; of a list
                        // of mappings the earlier ones win (v2's `decoder.merge` applies the
                        // list backwards). Checked with Helm 4's own reader.
                        let mut sources = Vec::new();
                        match value {
                            Value::Object(m) => sources.push(m),
                            Value::Array(list) => {
                                for item in list {
                                    match item {
                                        Value::Object(m) => sources.push(m),
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
                        if written.is_none() {
                            written = Some(map.keys().cloned().collect());
                        }
                        for m in sources.into_iter().rev() {
                            map.extend(m);
                        }
                        continue;
                    }
                    if record {
                        key_lines.insert(key.clone(), sp.start.line());
                    }
                    if let Some(w) = &mut written {
                        w.insert(key.clone());
                    }
                    map.insert(key, value);
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
    fn a_values_file_keeps_the_last_of_a_repeated_key_as_helm_does() {
        // What Helm v4.2.3's values reader gave for this text: {"envoy":{"enabled":false},"foo":1}
        // (the second `envoy:` replaces the first whole) and, for the nested one, {"x": 2}.
        let text = "envoy:\n  enabled: true\n  log: {level: debug}\nfoo: 1\nenvoy:\n  enabled: false\nbar:\n  x: 1\n  x: 2\nl:\n- {k: 1, k: 2}\n";
        let doc = parse_values_as_helm(text).unwrap();
        assert_eq!(
            doc.value,
            serde_json::json!({"envoy": {"enabled": false}, "foo": 1.0, "bar": {"x": 2.0}, "l": [{"k": 2.0}]})
        );
        let found: Vec<(&str, Option<Vec<String>>, usize, usize)> = doc
            .duplicates
            .iter()
            .map(|d| {
                (
                    d.path.as_str(),
                    d.keys.clone(),
                    d.ignored_line,
                    d.replaced_by_line,
                )
            })
            .collect();
        assert_eq!(
            found,
            vec![
                ("envoy", Some(vec!["envoy".into()]), 1, 5),
                ("bar.x", Some(vec!["bar".into(), "x".into()]), 8, 9),
                ("l[0].k", None, 11, 11),
            ]
        );
        // The ignored occurrence's own paths are not reported as written.
        assert_eq!(doc.lines.get("envoy.log"), None);
        assert_eq!(doc.lines.get("envoy.enabled"), Some(&6));
        let (value, dups) = parse_value_as_helm(text).unwrap();
        assert_eq!(value, doc.value);
        assert_eq!(dups, doc.duplicates);
        // Settings and Applications still refuse them.
        assert!(parse_values(text).is_err());
    }

    #[test]
    fn lines_are_recorded_and_merge_keys_apply() {
        let doc = parse_values("base: &b\n  x: 1\n  z: 2\nother:\n  <<: *b\n  z: 3\n").unwrap();
        assert_eq!(doc.value["other"], json!({"x": 1.0, "z": 3.0}));
        assert_eq!(doc.lines["other.z"], 6);
        assert_eq!(doc.lines["base.x"], 2);
    }

    /// What Helm 4's reader (`helm_values_from_yaml`, go-yaml v2) gives for each text: merges
    /// apply in the order written, and of a list of mappings the earlier win.
    #[test]
    fn merge_keys_apply_in_the_order_helm_applies_them() {
        let cases = [
            ("a: 1\n<<: {a: 5, b: 6}\n", json!({"a": 5.0, "b": 6.0})),
            ("<<: {a: 5, b: 6}\na: 1\n", json!({"a": 1.0, "b": 6.0})),
            (
                "x: &x {k: 1}\nw: &w {k: 2, j: 3}\nz:\n  <<: [*x, *w]\n",
                json!({"x": {"k": 1.0}, "w": {"k": 2.0, "j": 3.0}, "z": {"k": 1.0, "j": 3.0}}),
            ),
            (
                "x: &x {k: 1}\nw: &w {k: 2}\nz:\n  <<: *x\n  <<: *w\n",
                json!({"x": {"k": 1.0}, "w": {"k": 2.0}, "z": {"k": 2.0}}),
            ),
        ];
        for (text, helm) in cases {
            assert_eq!(parse_values(text).unwrap().value, helm, "{text}");
        }
        // A key written after a merge that brought it is no repetition.
        assert!(parse_values("b: &b {k: 1}\nc:\n  <<: *b\n  k: 2\n").is_ok());
        assert!(parse_values("c:\n  k: 1\n  <<: {j: 2}\n  k: 3\n").is_err());
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
