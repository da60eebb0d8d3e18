//! A quick reader for the block YAML that values files are nearly always written in: nested
//! mappings and sequences by indentation, one-line plain and quoted scalars, `|` literal blocks,
//! comments. It gives exactly what the full reader (`read.rs`) gives for such text, in a tenth of
//! the time, and declines (None) at the first thing it is not sure of: tabs, non-ASCII text,
//! anchors, tags, flow collections, folded or multi-line scalars, escapes, several documents...
//! The full reader then reads the whole text, and reports any error.

use serde_json::{Map, Value};

use super::read::{key_string, scalar, MAX_DEPTH};
use saphyr_parser::ScalarStyle;

/// The value of a one-document text, when every line of it is in the subset read here.
pub(super) fn read(text: &str) -> Option<Value> {
    // Printable ASCII and line feeds only: no tabs, carriage returns, byte-order marks.
    if !text
        .bytes()
        .all(|b| b == b'\n' || (0x20..0x7f).contains(&b))
    {
        return None;
    }
    let mut r = Reader {
        lines: text.split('\n').collect(),
        pos: 0,
        shifted: None,
    };
    let (indent, content) = r.peek()?;
    if indent != 0 || content.starts_with("---") || content.starts_with("...") {
        return None;
    }
    let value = r.block(0, 0)?;
    // Anything left over (a less indented line cannot follow the top level) is not ours.
    r.peek().is_none().then_some(value)
}

struct Reader<'t> {
    lines: Vec<&'t str>,
    /// The next line to read.
    pos: usize,
    /// The rest of line `pos` seen as a line of its own, at this indentation: a mapping that
    /// starts on a sequence item's line (`- key: value`).
    shifted: Option<(usize, &'t str)>,
}

/// A line of only spaces, or a comment.
fn insignificant(line: &str) -> bool {
    let body = line.trim_start_matches(' ');
    body.is_empty() || body.starts_with('#')
}

fn is_item(content: &str) -> bool {
    content == "-" || content.starts_with("- ")
}

/// Characters a key may have here: what names, labels and dotted paths use.
fn key_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b'/')
}

/// `key: rest` or `key:`, with a key of `key_char`s only.
fn split_key(content: &str) -> Option<(&str, &str)> {
    let colon = content.find(':')?;
    let (key, after) = (&content[..colon], &content[colon + 1..]);
    if key.is_empty() || !key.bytes().all(key_char) || key == "<<" {
        return None;
    }
    match after.as_bytes().first() {
        None => Some((key, "")),
        Some(b' ') => Some((key, after.trim_start_matches(' '))),
        _ => None,
    }
}

/// Removes a trailing comment (` #` onward) and trailing spaces from unquoted text.
fn strip_comment(text: &str) -> &str {
    let end = text.find(" #").unwrap_or(text.len());
    text[..end].trim_end_matches(' ')
}

/// What may follow a closing quote: spaces, then nothing or a comment.
fn only_comment_after(rest: &str) -> bool {
    let trimmed = rest.trim_start_matches(' ');
    trimmed.is_empty() || (trimmed.starts_with('#') && trimmed.len() < rest.len())
}

impl<'t> Reader<'t> {
    /// The next significant line as (indentation, content without trailing spaces), skipping
    /// blank and comment lines; None at the end.
    fn peek(&mut self) -> Option<(usize, &'t str)> {
        if let Some(shifted) = self.shifted {
            return Some(shifted);
        }
        while let Some(&line) = self.lines.get(self.pos) {
            if insignificant(line) {
                self.pos += 1;
                continue;
            }
            let content = line.trim_start_matches(' ');
            return Some((line.len() - content.len(), content.trim_end_matches(' ')));
        }
        None
    }

    /// Moves past the line `peek` returned (a shifted line is the rest of line `pos`).
    fn consume(&mut self) {
        self.shifted = None;
        self.pos += 1;
    }

    /// The collection whose first line is next, at `indent`.
    fn block(&mut self, indent: usize, depth: usize) -> Option<Value> {
        if depth > MAX_DEPTH / 2 {
            return None;
        }
        let (_, content) = self.peek()?;
        if is_item(content) {
            self.sequence(indent, depth)
        } else {
            self.mapping(indent, depth)
        }
    }

    fn mapping(&mut self, indent: usize, depth: usize) -> Option<Value> {
        let mut map = Map::new();
        while let Some((at, content)) = self.peek() {
            if at < indent {
                break;
            }
            if at > indent || is_item(content) {
                return None;
            }
            let (key, rest) = split_key(content)?;
            self.consume();
            let key = key_string(&scalar(key, ScalarStyle::Plain, None).ok()?);
            let value = self.value(indent, rest, true, depth)?;
            map.insert(key, value);
        }
        Some(Value::Object(map))
    }

    fn sequence(&mut self, indent: usize, depth: usize) -> Option<Value> {
        let mut items = Vec::new();
        while let Some((at, content)) = self.peek() {
            if at < indent || (at == indent && !is_item(content)) {
                break;
            }
            if at > indent {
                return None;
            }
            let after = &content[1..];
            let rest = after.trim_start_matches(' ');
            if is_item(rest) {
                return None;
            }
            if split_key(rest).is_some() {
                // `- key: value`: a mapping whose keys line up with this first one.
                let column = indent + 1 + (after.len() - rest.len());
                self.shifted = Some((column, rest));
                items.push(self.mapping(column, depth + 1)?);
            } else {
                self.consume();
                items.push(self.value(indent, rest, false, depth)?);
            }
        }
        Some(Value::Array(items))
    }

    /// The value after `key:` or `-` on a line at `indent`: `rest` of that line, or the block
    /// below it. A mapping's value may be a sequence at the mapping's own indentation.
    fn value(&mut self, indent: usize, rest: &'t str, in_map: bool, depth: usize) -> Option<Value> {
        if rest.is_empty() || rest.starts_with('#') {
            return match self.peek() {
                Some((at, _)) if at > indent => self.block(at, depth + 1),
                Some((at, content)) if in_map && at == indent && is_item(content) => {
                    self.sequence(at, depth + 1)
                }
                _ => Some(Value::Null),
            };
        }
        let value = if rest.starts_with('|') {
            return self.literal(indent, rest);
        } else {
            inline(rest)?
        };
        // A more indented line after a one-line value would continue it: not read here.
        match self.peek() {
            Some((at, _)) if at > indent => None,
            _ => Some(value),
        }
    }

    /// A `|`, `|-` or `|+` block whose lines follow, more indented than `indent`.
    fn literal(&mut self, indent: usize, header: &str) -> Option<Value> {
        let keep = match header {
            "|" => None,
            "|-" => Some(false),
            "|+" => Some(true),
            _ => return None,
        };
        let first = *self.lines.get(self.pos)?;
        let first_text = first.trim_start_matches(' ');
        let body_indent = first.len() - first_text.len();
        // Leading blank lines, and a block no deeper than its key, are left to the full reader.
        if first_text.is_empty() || body_indent <= indent {
            return None;
        }
        let mut body: Vec<&str> = Vec::new();
        while let Some(&line) = self.lines.get(self.pos) {
            let spaces = line.len() - line.trim_start_matches(' ').len();
            if spaces == line.len() {
                // Blank: part of the block (kept or chomped at its end), unless it has more
                // spaces than the block's indentation, which this reader leaves alone.
                if spaces > body_indent {
                    return None;
                }
                body.push("");
            } else if spaces >= body_indent {
                body.push(&line[body_indent..]);
            } else {
                break;
            }
            self.pos += 1;
        }
        // The text's last line break ends the last line; without it, leave the text alone.
        if self.pos >= self.lines.len() {
            body.pop().filter(|last| last.is_empty())?;
        }
        let trailing = body.iter().rev().take_while(|l| l.is_empty()).count();
        let lines = &body[..body.len() - trailing];
        let mut text = lines.join("\n");
        match keep {
            Some(false) => {}
            None => text.push('\n'),
            Some(true) => {
                text.push('\n');
                text.extend(std::iter::repeat_n('\n', trailing));
            }
        }
        Some(Value::String(text))
    }
}

/// A one-line scalar, `[]` or `{}`.
fn inline(rest: &str) -> Option<Value> {
    let first = rest.as_bytes()[0];
    match first {
        b'"' => {
            let body = &rest[1..];
            let close = body.find('"')?;
            let text = &body[..close];
            if text.contains('\\') || !only_comment_after(&body[close + 1..]) {
                return None;
            }
            scalar(text, ScalarStyle::DoubleQuoted, None).ok()
        }
        b'\'' => {
            let body = &rest[1..];
            let mut text = String::new();
            let mut i = 0;
            let b = body.as_bytes();
            loop {
                match b.get(i)? {
                    b'\'' if b.get(i + 1) == Some(&b'\'') => {
                        text.push('\'');
                        i += 2;
                    }
                    b'\'' => break,
                    &c => {
                        text.push(c as char);
                        i += 1;
                    }
                }
            }
            if !only_comment_after(&body[i + 1..]) {
                return None;
            }
            scalar(&text, ScalarStyle::SingleQuoted, None).ok()
        }
        b'[' | b'{' => match strip_comment(rest) {
            "[]" => Some(Value::Array(Vec::new())),
            "{}" => Some(Value::Object(Map::new())),
            flow => flow_list(flow),
        },
        b'-' if matches!(rest.as_bytes().get(1), None | Some(b' ')) => None,
        b'&' | b'*' | b'!' | b'|' | b'>' | b'%' | b'@' | b'`' | b'?' | b':' | b',' | b']'
        | b'}' => None,
        _ => {
            let text = strip_comment(rest);
            if text.contains(": ") || text.ends_with(':') {
                return None;
            }
            scalar(text, ScalarStyle::Plain, None).ok()
        }
    }
}

/// `[a, b, c]` of plain words (`key_char`s), as Talos' documentation writes capability lists.
fn flow_list(flow: &str) -> Option<Value> {
    let inner = flow.strip_prefix('[')?.strip_suffix(']')?;
    inner
        .split(',')
        .map(|item| {
            let word = item.trim_matches(' ');
            (!word.is_empty() && word.bytes().all(key_char))
                .then(|| scalar(word, ScalarStyle::Plain, None).ok())?
        })
        .collect::<Option<Vec<Value>>>()
        .map(Value::Array)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The full reader's answer for one document.
    fn full(text: &str) -> Option<Value> {
        super::super::read::read_full(text).ok()
    }

    /// Texts in the subset are read exactly as the full reader reads them; texts outside it
    /// are declined, never misread.
    fn agrees(text: &str) -> bool {
        let quick = read(text);
        if let Some(v) = &quick {
            assert_eq!(Some(v), full(text).as_ref(), "misread:\n{text}");
        }
        quick.is_some()
    }

    #[test]
    fn reads_the_subset_as_the_full_reader_does() {
        let read_here = [
            "a: 1\n",
            "a: 1",
            "a:\n  b: true\n  c: yes\n  d: ~\n  e: 0755\n  f: 1e3\n  g: 2001-12-14\n",
            "a: x # comment\nb: 'it''s' # c\nc: \"q # not a comment\"\n",
            "# head\n\na:   \n  # inner\n  b: 1\n\n",
            "list:\n- a\n- b: 1\n  c: 2\n-\n- 'x'\nnext: 1\n",
            "list:\n  -   k: v\n      j: w\n  - 3\n",
            "empty: []\nmap: {}\nnull:\ntrue: 1\n1.0: x\n",
            "caps: [CHOWN, NET_ADMIN,SYS_ADMIN , 1, yes, a.b/c-d] # talos\n",
            "text: |\n  line one\n    indented\n\n  # not a comment\n  last\nafter: 1\n",
            "strip: |-\n  a\n\n\nkeep: |+\n  b\n\n\nclip: |\n  c\n\n",
            "url: http://example.com:8080/x\nhost: a:b\nneg: -1\nk8s.io/name: v\n",
            "a:\n  b:\n    c:\n      - d\n      - e:\n          f: g\n",
        ];
        for text in read_here {
            assert!(agrees(text), "declined:\n{text}");
        }
        let declined = [
            "a:\tb\n",
            "a: é\n",
            "--- \na: 1\n",
            "a: &x 1\nb: *x\n",
            "a: !!str 1\n",
            "a: [1, [2]]\n",
            "a: [1, 2,]\n",
            "a: [1, 'x']\n",
            "a: [a b]\n",
            "a: {b: 1}\n",
            "a: >\n  folded\n",
            "a: \"esc\\n\"\n",
            "a: multi\n  line\n",
            "a: b: c\n",
            "<<: {a: 1}\n",
            "? complex\n: key\n",
            "- - nested\n",
            "a:\n  - x\n   - y\n",
            "a: |\n\n  lead blank\n",
            "a: |2\n  x\n",
            "a: |\n  no final break",
            "key : spaced\n",
            "  indented: top\n",
            "a: 1\n b: 2\n",
            "scalar\n",
            "",
        ];
        for text in declined {
            assert!(!agrees(text), "read, but should be declined:\n{text}");
        }
    }

    /// The shipped Talos example, then each reference scenario's values (the first `limit`
    /// scenarios) as this project writes them and, with `raw`, as the scenario's author did.
    fn real_values_texts(limit: usize, raw: bool) -> Vec<String> {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut texts =
            vec![std::fs::read_to_string(root.join("examples/talos/values.yaml")).unwrap()];
        let Ok(dir) = std::fs::read_dir(root.join("../shared/cilium-reference/scenarios")) else {
            return texts;
        };
        let mut paths: Vec<_> = dir.flatten().map(|e| e.path()).collect();
        paths.sort();
        for path in paths.iter().take(limit) {
            let text = std::fs::read_to_string(path).unwrap();
            let doc = crate::yaml::parse_values(&text).unwrap().value;
            texts.push(crate::yaml::to_string(&doc["values"]));
            if let (true, Some(at)) = (raw, text.find("\nvalues:\n")) {
                let block: Vec<&str> = text[at + 9..]
                    .lines()
                    .take_while(|l| l.starts_with("  ") || l.is_empty())
                    .map(|l| l.get(2..).unwrap_or(""))
                    .collect();
                texts.push(block.join("\n") + "\n");
            }
        }
        texts
    }

    /// Thousands of near-misses: real values texts with one to three lines changed, indented,
    /// doubled or dropped, or a value replaced by something tricky. Whatever is read here must be what the
    /// full reader reads (a text the full reader refuses must be declined).
    #[test]
    fn never_misreads_a_variant() {
        const TRICKY: &[&str] = &[
            "a: b",
            "'q'",
            "'it''s'",
            "'open",
            "\"d\"",
            "\"a\\nb\"",
            "x #y",
            "x#y",
            "-",
            "- x",
            "|",
            "|-",
            "|+",
            ">",
            "[]",
            "{}",
            "[a, b]",
            "[a, [b]]",
            "{a: 1}",
            "~",
            "null",
            "0x1F",
            "0o17",
            "0755",
            "1_000",
            ".inf",
            "-.Inf",
            ".NaN",
            "1e3",
            "+1",
            "2001-12-14",
            "2001-12-14t21:59:43.10-05:00",
            "on",
            "Off",
            "y",
            "N",
            "<<",
            "? x",
            "&a x",
            "*a",
            "!!str 1",
            "@x",
            "`x",
            "%x",
            "x:",
            "x: ",
            ":x",
            "a:b",
            "http://h:1/p",
            "' spaced '",
            "\"\" #",
            "'' #c",
            "#",
            " # c",
            "[]#",
            "--- x",
            "... x",
            "x\\y",
            "- - x",
            "-x",
        ];
        let mut bases = real_values_texts(12, true);
        bases.push(
            "a:\n  b: |\n    one\n    two\n  c:\n  - x\n  - k: v\n    l: |-\n      t\n".into(),
        );
        let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        };
        let (mut read_here, mut total) = (0, 0);
        for base in &bases {
            let lines: Vec<&str> = base.lines().collect();
            for _ in 0..300 {
                let mut v: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
                for _ in 0..1 + next(3) {
                    if v.is_empty() {
                        break;
                    }
                    let i = next(v.len());
                    match next(6) {
                        0 => v[i] = format!(" {}", v[i]),
                        1 => v.insert(i, v[i].clone()),
                        2 => {
                            v.remove(i);
                        }
                        3 => v.insert(i, format!("{}# note", " ".repeat(next(6)))),
                        4 => v[i] = v[i].trim_start().to_string(),
                        _ => {
                            let t = TRICKY[next(TRICKY.len())];
                            v[i] = match v[i].find(": ") {
                                Some(c) => format!("{}: {t}", &v[i][..c]),
                                None => format!("{}{t}", v[i]),
                            };
                        }
                    }
                }
                let text = v.join("\n") + if next(4) == 0 { "" } else { "\n" };
                total += 1;
                if let Some(quick) = read(&text) {
                    read_here += 1;
                    assert_eq!(Some(&quick), full(&text).as_ref(), "misread:\n{text}");
                }
            }
        }
        // The variants mostly stay in the subset: the comparison is not vacuous.
        assert!(read_here * 3 > total, "{read_here} of {total} read here");
    }

    /// Every reference scenario's values, and the shipped examples, are read here (so renders
    /// take this path) and read as the full reader reads them.
    #[test]
    fn reads_real_values_files() {
        let texts = real_values_texts(usize::MAX, false);
        for text in &texts {
            assert!(agrees(text), "declined:\n{text}");
        }
    }
}
