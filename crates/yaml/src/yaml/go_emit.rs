//! Helm's `toYaml` as text, for values the chart embeds inside a ConfigMap string: Helm turns the
//! value into JSON and lets go-yaml v2 print it, so key order, quoting, sequence indentation and
//! the 80-column folding of long plain strings follow go-yaml v2's emitter.

use serde_json::Value;

use super::scalar::classify;
use crate::gofmt::go_g_float;

/// `toYaml v`: the document without its final line break.
pub fn to_yaml(v: &Value) -> String {
    let mut e = Emitter { out: String::new() };
    match v {
        Value::Object(m) if !m.is_empty() => e.map(m, 0),
        Value::Array(a) if !a.is_empty() => e.seq(a, 0),
        other => {
            // A document that is one scalar continues its literal and folded lines two
            // columns in, as go-yaml writes them (`toYaml "a\nb"` is `|-\n  a\n  b`;
            // tests/conformance/serialize, checked against Helm).
            e.scalar(other, 2, false);
            e.out.push('\n');
        }
    }
    let mut s = e.out;
    if s.ends_with('\n') {
        s.pop();
    }
    s
}

/// go-yaml's preferred line width: plain and quoted scalars fold at spaces beyond it.
const BEST_WIDTH: usize = 80;

struct Emitter {
    out: String,
}

impl Emitter {
    fn column(&self) -> usize {
        let line = match self.out.rfind('\n') {
            Some(i) => &self.out[i + 1..],
            None => &self.out[..],
        };
        line.chars().count()
    }

    fn pad(&mut self, n: usize) {
        self.out.extend(std::iter::repeat_n(' ', n));
    }

    fn newline_indent(&mut self, n: usize) {
        self.out.push('\n');
        self.pad(n);
    }

    /// A block mapping whose first key is written at the current position (column `indent`).
    fn map(&mut self, m: &serde_json::Map<String, Value>, indent: usize) {
        let mut keys: Vec<&String> = m.keys().collect();
        keys.sort_by(|a, b| natural_order(a, b));
        for (i, k) in keys.into_iter().enumerate() {
            if i > 0 {
                self.pad(indent);
            }
            // Keys too long or spanning lines cannot be simple keys: go-yaml writes `? key`
            // and puts the value on its own `:` line.
            if k.contains(['\n', '\r', '\u{85}', '\u{2028}', '\u{2029}']) || k.len() > 128 {
                self.out.push_str("? ");
                self.string(k, indent + 2, false);
                self.newline_indent(indent);
                // The value then sits after `: ` the way a sequence item sits after `- `.
                self.out.push_str(": ");
                match &m[k.as_str()] {
                    Value::Object(c) if !c.is_empty() => self.map(c, indent + 2),
                    Value::Array(a) if !a.is_empty() => self.seq(a, indent + 2),
                    v => {
                        self.scalar(v, indent + 2, false);
                        self.out.push('\n');
                    }
                }
                continue;
            }
            self.string(k, indent, true);
            self.out.push(':');
            match &m[k.as_str()] {
                Value::Object(c) if !c.is_empty() => {
                    self.newline_indent(indent + 2);
                    self.map(c, indent + 2);
                }
                // go-yaml v2 does not indent a sequence under a mapping key.
                Value::Array(a) if !a.is_empty() => {
                    self.newline_indent(indent);
                    self.seq(a, indent);
                }
                v => {
                    self.out.push(' ');
                    self.scalar(v, indent + 2, false);
                    self.out.push('\n');
                }
            }
        }
    }

    fn seq(&mut self, items: &[Value], indent: usize) {
        for (i, item) in items.iter().enumerate() {
            if i > 0 {
                self.pad(indent);
            }
            self.out.push_str("- ");
            match item {
                Value::Object(c) if !c.is_empty() => self.map(c, indent + 2),
                Value::Array(a) if !a.is_empty() => self.seq(a, indent + 2),
                v => {
                    self.scalar(v, indent + 2, false);
                    self.out.push('\n');
                }
            }
        }
    }

    /// Scalars and empty collections; `indent` is where folded or literal lines continue.
    fn scalar(&mut self, v: &Value, indent: usize, key: bool) {
        match v {
            Value::Null => self.out.push_str("null"),
            Value::Bool(b) => self.out.push_str(if *b { "true" } else { "false" }),
            Value::Number(n) => {
                let f = n.as_f64().unwrap_or(0.0);
                self.out.push_str(&number(f));
            }
            Value::String(s) => self.string(s, indent, key),
            Value::Object(_) => self.out.push_str("{}"),
            Value::Array(_) => self.out.push_str("[]"),
        }
    }

    fn string(&mut self, s: &str, indent: usize, key: bool) {
        let a = analyze(s);
        // go-yaml quotes what its reader would not read back as a string.
        let typed = classify(s).is_typed();
        if s.contains('\n') {
            if a.block_allowed && !key {
                self.literal(s, indent);
            } else {
                self.double_quoted(s, indent, !key);
            }
        } else if typed || !a.single_allowed {
            self.double_quoted(s, indent, !key);
        } else if a.plain_allowed {
            self.plain(s, indent, !key);
        } else {
            self.single_quoted(s, indent, !key);
        }
    }

    fn plain(&mut self, s: &str, indent: usize, breaks: bool) {
        let chars: Vec<char> = s.chars().collect();
        let mut spaces = false;
        for (i, &c) in chars.iter().enumerate() {
            if c == ' ' {
                let next_space = chars.get(i + 1) == Some(&' ');
                if breaks && !spaces && self.column() > BEST_WIDTH && !next_space {
                    self.newline_indent(indent);
                } else {
                    self.out.push(c);
                }
                spaces = true;
            } else {
                self.out.push(c);
                spaces = false;
            }
        }
    }

    fn single_quoted(&mut self, s: &str, indent: usize, breaks: bool) {
        let chars: Vec<char> = s.chars().collect();
        self.out.push('\'');
        let mut spaces = false;
        for (i, &c) in chars.iter().enumerate() {
            if c == ' ' {
                let next_space = chars.get(i + 1) == Some(&' ');
                if breaks
                    && !spaces
                    && self.column() > BEST_WIDTH
                    && i > 0
                    && i + 1 < chars.len()
                    && !next_space
                {
                    self.newline_indent(indent);
                } else {
                    self.out.push(c);
                }
                spaces = true;
            } else {
                if c == '\'' {
                    self.out.push('\'');
                }
                self.out.push(c);
                spaces = false;
            }
        }
        self.out.push('\'');
    }

    fn double_quoted(&mut self, s: &str, indent: usize, breaks: bool) {
        let chars: Vec<char> = s.chars().collect();
        self.out.push('"');
        let mut spaces = false;
        for (i, &c) in chars.iter().enumerate() {
            if !printable(c) || c == '\u{feff}' || is_break(c) || c == '"' || c == '\\' {
                self.out.push('\\');
                match c {
                    '\0' => self.out.push('0'),
                    '\u{7}' => self.out.push('a'),
                    '\u{8}' => self.out.push('b'),
                    '\t' => self.out.push('t'),
                    '\n' => self.out.push('n'),
                    '\u{b}' => self.out.push('v'),
                    '\u{c}' => self.out.push('f'),
                    '\r' => self.out.push('r'),
                    '\u{1b}' => self.out.push('e'),
                    '"' => self.out.push('"'),
                    '\\' => self.out.push('\\'),
                    '\u{85}' => self.out.push('N'),
                    '\u{a0}' => self.out.push('_'),
                    '\u{2028}' => self.out.push('L'),
                    '\u{2029}' => self.out.push('P'),
                    c if (c as u32) <= 0xff => self.out.push_str(&format!("x{:02X}", c as u32)),
                    c if (c as u32) <= 0xffff => self.out.push_str(&format!("u{:04X}", c as u32)),
                    c => self.out.push_str(&format!("U{:08X}", c as u32)),
                }
                spaces = false;
            } else if c == ' ' {
                if breaks && !spaces && self.column() > BEST_WIDTH && i > 0 && i + 1 < chars.len() {
                    self.newline_indent(indent);
                    if chars.get(i + 1) == Some(&' ') {
                        self.out.push('\\');
                    }
                } else {
                    self.out.push(c);
                }
                spaces = true;
            } else {
                self.out.push(c);
                spaces = false;
            }
        }
        self.out.push('"');
    }

    fn literal(&mut self, s: &str, indent: usize) {
        self.out.push('|');
        if s.starts_with([' ', '\n']) {
            self.out.push('2');
        }
        let body = match s.strip_suffix('\n') {
            None => {
                self.out.push('-');
                s
            }
            Some(rest) => {
                if rest.is_empty() || rest.ends_with('\n') {
                    self.out.push('+');
                }
                rest
            }
        };
        self.out.push('\n');
        let mut at_line_start = true;
        for c in body.chars() {
            if c == '\n' {
                self.out.push('\n');
                at_line_start = true;
            } else {
                if at_line_start {
                    self.pad(indent);
                    at_line_start = false;
                }
                self.out.push(c);
            }
        }
    }
}

/// Numbers after Helm's JSON round trip: integral values print as integers, others in Go's
/// shortest `%g` form.
fn number(f: f64) -> String {
    if f.fract() == 0.0 && f.abs() < 1.8e19 {
        format!("{}", f as i128)
    } else {
        go_g_float(f)
    }
}

fn is_break(c: char) -> bool {
    matches!(c, '\n' | '\r' | '\u{85}' | '\u{2028}' | '\u{2029}')
}

/// libyaml's printable set (tab and characters beyond the Basic Multilingual Plane excluded).
fn printable(c: char) -> bool {
    let u = c as u32;
    u == 0x0a
        || (0x20..=0x7e).contains(&u)
        || (0xa0..=0xd7ff).contains(&u)
        || ((0xe000..=0xfffd).contains(&u) && u != 0xfeff)
}

struct Analysis {
    plain_allowed: bool,
    single_allowed: bool,
    block_allowed: bool,
}

/// The scalar analysis of go-yaml's emitter, in block context.
fn analyze(s: &str) -> Analysis {
    let chars: Vec<char> = s.chars().collect();
    if chars.is_empty() {
        return Analysis {
            plain_allowed: false,
            single_allowed: true,
            block_allowed: false,
        };
    }
    let mut block_indicators = s.starts_with("---") || s.starts_with("...");
    let (mut leading_space, mut leading_break, mut trailing_space, mut trailing_break) =
        (false, false, false, false);
    let (mut break_space, mut space_break, mut special, mut line_breaks) =
        (false, false, false, false);
    let (mut previous_space, mut previous_break) = (false, false);
    let mut preceded_by_ws = true;
    let blankz = |i: usize| match chars.get(i) {
        None => true,
        Some(&c) => c == ' ' || c == '\t' || is_break(c) || c == '\0',
    };
    let last = chars.len() - 1;
    for (i, &c) in chars.iter().enumerate() {
        let followed_by_ws = blankz(i + 1);
        if i == 0 {
            match c {
                '#' | ',' | '[' | ']' | '{' | '}' | '&' | '*' | '!' | '|' | '>' | '\'' | '"'
                | '%' | '@' | '`' => block_indicators = true,
                '?' | ':' | '-' if followed_by_ws => block_indicators = true,
                _ => {}
            }
        } else {
            match c {
                ':' if followed_by_ws => block_indicators = true,
                '#' if preceded_by_ws => block_indicators = true,
                _ => {}
            }
        }
        if !printable(c) {
            special = true;
        }
        if c == ' ' {
            if i == 0 {
                leading_space = true;
            }
            if i == last {
                trailing_space = true;
            }
            if previous_break {
                break_space = true;
            }
            previous_space = true;
            previous_break = false;
        } else if is_break(c) {
            line_breaks = true;
            if i == 0 {
                leading_break = true;
            }
            if i == last {
                trailing_break = true;
            }
            if previous_space {
                space_break = true;
            }
            previous_break = true;
            previous_space = false;
        } else {
            previous_space = false;
            previous_break = false;
        }
        preceded_by_ws = blankz(i);
    }
    let mut plain = true;
    let mut single = true;
    let mut block = true;
    if leading_space || leading_break || trailing_space || trailing_break {
        plain = false;
    }
    if trailing_space {
        block = false;
    }
    if break_space {
        plain = false;
        single = false;
    }
    if space_break || special {
        plain = false;
        single = false;
        block = false;
    }
    if line_breaks || block_indicators {
        plain = false;
    }
    Analysis {
        plain_allowed: plain,
        single_allowed: single,
        block_allowed: block,
    }
}

/// go-yaml v2's key order: runs of digits compare as numbers, letters after other characters.
fn natural_order(a: &str, b: &str) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    let ar: Vec<char> = a.chars().collect();
    let br: Vec<char> = b.chars().collect();
    let less = |x: bool| if x { Ordering::Less } else { Ordering::Greater };
    let mut i = 0;
    while i < ar.len() && i < br.len() {
        if ar[i] == br[i] {
            i += 1;
            continue;
        }
        let al = ar[i].is_alphabetic();
        let bl = br[i].is_alphabetic();
        if al && bl {
            return ar[i].cmp(&br[i]);
        }
        if al || bl {
            return less(bl);
        }
        let (mut an, mut bn): (i128, i128) = (0, 0);
        if ar[i] == '0' || br[i] == '0' {
            let mut j = i;
            while j > 0 && ar[j - 1].is_ascii_digit() {
                j -= 1;
                if ar[j] != '0' {
                    an = 1;
                    bn = 1;
                    break;
                }
            }
        }
        let mut ai = i;
        while ai < ar.len() && ar[ai].is_ascii_digit() {
            an = an
                .saturating_mul(10)
                .saturating_add(i128::from(ar[ai] as u8 - b'0'));
            ai += 1;
        }
        let mut bi = i;
        while bi < br.len() && br[bi].is_ascii_digit() {
            bn = bn
                .saturating_mul(10)
                .saturating_add(i128::from(br[bi] as u8 - b'0'));
            bi += 1;
        }
        if an != bn {
            return less(an < bn);
        }
        if ai != bi {
            return less(ai < bi);
        }
        return less(ar[i] < br[i]);
    }
    ar.len().cmp(&br.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn layout_follows_go_yaml_v2() {
        let v = json!([{"name": "dns", "contextOptions": [{"name": "sourceContext", "values": ["pod"]}]}]);
        assert_eq!(
            to_yaml(&v),
            "- contextOptions:\n  - name: sourceContext\n    values:\n    - pod\n  name: dns"
        );
        assert_eq!(
            to_yaml(&json!({"a": {}, "b": [], "c": null, "d": 5.0, "e": 0.5})),
            "a: {}\nb: []\nc: null\nd: 5\ne: 0.5"
        );
    }

    #[test]
    fn strings_are_quoted_like_go_yaml() {
        let v = json!({"k": ["yes", "", "a: b", " x", "#x", "it's", "12:30", "1.5", "plain text", "tab\tx", "-x", "- x"]});
        assert_eq!(
            to_yaml(&v),
            "k:\n- \"yes\"\n- \"\"\n- 'a: b'\n- ' x'\n- '#x'\n- it's\n- \"12:30\"\n- \"1.5\"\n- plain text\n- \"tab\\tx\"\n- -x\n- '- x'"
        );
        assert_eq!(to_yaml(&json!({"s": "a\nb\n"})), "s: |\n  a\n  b");
        assert_eq!(
            to_yaml(&json!([
                "2025-01-01T00:00:00Z",
                "2025-1-2",
                "2025-13-01",
                "2025-01-01 10:00:00"
            ])),
            "- \"2025-01-01T00:00:00Z\"\n- \"2025-1-2\"\n- 2025-13-01\n- \"2025-01-01 10:00:00\""
        );
        assert_eq!(to_yaml(&json!({"s": "a\nb"})), "s: |-\n  a\n  b");
    }

    #[test]
    fn long_and_multiline_keys_are_complex() {
        assert_eq!(to_yaml(&json!({"a\nb": 1})), "? |-\n  a\n  b\n: 1");
        let long = "k".repeat(129);
        assert_eq!(
            to_yaml(&json!({ long.clone(): [1] })),
            format!("? {long}\n: - 1")
        );
    }

    #[test]
    fn keys_sort_naturally() {
        let v = json!({"a10": 1, "a2": 1, "B": 1, "_x": 1, "a": 1});
        assert_eq!(to_yaml(&v), "_x: 1\nB: 1\na: 1\na2: 1\na10: 1");
    }

    #[test]
    fn long_plain_strings_fold() {
        let long = "word ".repeat(20);
        let long = long.trim_end();
        let out = to_yaml(&json!({ "k": long }));
        assert!(out.contains("\n  word"), "{out}");
    }
}
