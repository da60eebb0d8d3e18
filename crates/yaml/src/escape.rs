//! Repository-derived text (folder names, file paths, values keys and values, object names from a
//! live dump, revision names, messages that embed them) as each medium may show it: a terminal or
//! CI log (`text`, `message`, `lines`), a pull-request comment (`md_*`), a JSON report (`json`).
//! `Prose` keeps the program's words apart from the names in them, so that each medium escapes
//! the names and only the names.
//!
//! What is never emitted as itself (`hidden`): control characters, which move the cursor, recolour
//! or retitle a terminal, or end a line; the bidirectional controls and invisible characters that
//! make a name read as something else; and, in text, what GitHub Actions' runner reads as a
//! workflow command. Its runner (`actions/runner`, `src/Runner.Common/ActionCommand.cs`) tries
//! two forms on every line a step prints: `TryParseV2` trims the line's leading white space and
//! needs `::` at its start (`::error file=x::msg`, `::add-mask::`, `::stop-commands::TOKEN`;
//! GitHub's "Workflow commands for GitHub Actions" page documents the form), and the legacy
//! `TryParse` finds `##[` anywhere in the line (`##[error]msg`). So no escaped string starts with
//! a colon after its spaces, and no `[` follows a `#`.

use std::fmt;
use std::ops::Deref;

/// Characters shown as an escape and never written as themselves.
///
/// - Unicode's Cc: C0 (U+0000–U+001F), DEL, C1 (U+0080–U+009F; U+009B is a one-byte CSI to some
///   terminals).
/// - The explicit bidirectional formatting characters of UAX #9 (section 2, "Directional
///   Formatting Characters": ALM, LRM, RLM, LRE–RLO, LRI–PDI), with which a name displays in an
///   order other than the order it is read in ("Trojan Source", CVE-2021-42574).
/// - Every white space but the space itself (Unicode's White_Space: tabs, line and paragraph
///   separators U+2028/U+2029, no-break and wide spaces): the runner's `TrimStart` skips all of
///   them before looking for `::`, and a line separator ends a line in some viewers.
/// - Characters that draw nothing: zero-width space, joiners and word joiner, invisible operators,
///   byte-order mark, soft hyphen, Hangul fillers, interlinear annotation controls, and the tag
///   characters U+E0000–U+E007F (which carry hidden ASCII).
pub fn hidden(c: char) -> bool {
    matches!(
        c,
        '\u{0}'..='\u{1f}'
            | '\u{7f}'..='\u{9f}'
            | '\u{ad}'
            | '\u{61c}'
            | '\u{115f}'
            | '\u{1160}'
            | '\u{180e}'
            | '\u{200b}'..='\u{200f}'
            | '\u{202a}'..='\u{202e}'
            | '\u{2060}'..='\u{2064}'
            | '\u{2066}'..='\u{2069}'
            | '\u{3164}'
            | '\u{feff}'
            | '\u{ffa0}'
            | '\u{fff9}'..='\u{fffb}'
            | '\u{e0000}'..='\u{e007f}'
    ) || (c.is_whitespace() && c != ' ')
}

/// What a string is, which decides the little that differs between the text forms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Form {
    /// A raw repository string: every backslash doubled too, so the escaped form reads back to
    /// exactly one string.
    Name,
    /// A raw string inside double quotes: as `Name`, and `"` escaped.
    Quoted,
    /// A one-line message the program composed, names in it perhaps escaped already: backslashes
    /// kept (escaping them again would garble the names' escapes).
    Message,
    /// Several lines the program composed: as `Message`, but its line breaks kept and each line
    /// start guarded.
    Lines,
}

fn push_escape(out: &mut String, c: char) {
    match c {
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        _ => {
            use fmt::Write;
            let _ = write!(out, "\\u{{{:x}}}", c as u32);
        }
    }
}

/// How a character that is not copied is written.
enum Shown {
    As(&'static str),
    Escape,
}

/// The one text escaper: `text` escaped in `form`, its first `max_chars` characters (then `…`).
/// Runs of characters that need nothing are copied whole (a report passes `lines` last).
fn escape(text: &str, form: Form, max_chars: Option<usize>) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    if form == Form::Quoted {
        out.push('"');
    }
    // At a line start (after spaces) a colon would begin `::command`; quotes guard the start.
    let mut line_start = form != Form::Quoted;
    let mut previous = '\0';
    let mut copied = 0;
    let mut end = text.len();
    let mut cut = false;
    for (taken, (at, c)) in text.char_indices().enumerate() {
        if max_chars.is_some_and(|max| taken == max) {
            end = at;
            cut = true;
            break;
        }
        let replacement = match c {
            '\n' if form == Form::Lines => None,
            '\\' if matches!(form, Form::Name | Form::Quoted) => Some(Shown::As("\\\\")),
            '"' if form == Form::Quoted => Some(Shown::As("\\\"")),
            ':' if line_start => Some(Shown::Escape),
            '[' if previous == '#' => Some(Shown::Escape),
            // Printable ASCII is never hidden: the common case, decided without `hidden`.
            ' '..='~' => None,
            c if hidden(c) => Some(Shown::Escape),
            _ => None,
        };
        if let Some(r) = replacement {
            out.push_str(&text[copied..at]);
            match r {
                Shown::As(s) => out.push_str(s),
                Shown::Escape => push_escape(&mut out, c),
            }
            copied = at + c.len_utf8();
        }
        line_start = if c == '\n' {
            form == Form::Lines
        } else {
            line_start && c == ' '
        };
        previous = c;
    }
    out.push_str(&text[copied..end]);
    if cut {
        out.push('…');
    }
    if form == Form::Quoted {
        out.push('"');
    }
    out
}

/// A repository string for a line of text output: nothing hidden, no line break, no workflow
/// command; `\` doubled, so distinct strings stay distinct.
pub fn text(name: &str) -> String {
    escape(name, Form::Name, None)
}

/// `text` of at most `max_chars` characters of `name` (then `…`), for messages that quote it.
pub fn text_within(name: &str, max_chars: usize) -> String {
    escape(name, Form::Name, Some(max_chars))
}

/// `name` in double quotes, escaped as `text` and its quotes escaped, at most `max_chars`
/// characters of it.
pub fn quoted_within(name: &str, max_chars: usize) -> String {
    escape(name, Form::Quoted, Some(max_chars))
}

/// A one-line message the program composed (names in it escaped or not): made one line, nothing
/// hidden, no workflow command.
pub fn message(text: &str) -> String {
    escape(text, Form::Message, None)
}

/// Text the program composed over several lines (an error with its advice, a report): line breaks
/// kept, everything else as `message`, every line start guarded. What every text report and
/// error goes through last.
pub fn lines(text: &str) -> String {
    escape(text, Form::Lines, None)
}

/// The longest run of backticks in `s`.
fn longest_backtick_run(s: &str) -> usize {
    let mut longest = 0;
    let mut run = 0;
    for c in s.chars() {
        if c == '`' {
            run += 1;
            longest = longest.max(run);
        } else {
            run = 0;
        }
    }
    longest
}

/// A code span of `content` (one line, nothing hidden): CommonMark 0.31 section 6.1 ("Code
/// spans", which GFM keeps): a span opened by N backticks ends only at a run of exactly N, so N
/// is one more than the longest run inside; a space pads content that starts or ends with a
/// backtick (one space is stripped from each side of content that starts and ends with one).
/// The content of a code span is not parsed for inlines at all: no emphasis, link, image, raw
/// HTML or autolink, GFM's extended `www.`/`http://`/email autolinks (section 6.9) included; an
/// HTML tag or autolink takes precedence only when it starts before the opening backticks, and
/// the report writes none there. GitHub's @mention, #123 and :emoji: filters skip `code`
/// elements (html-pipeline, the filters GitHub published: `MentionFilter` "Mentions within
/// <pre>, <code>, and <a> elements are ignored").
fn code_span(content: &str) -> String {
    if content.is_empty() {
        return "` `".into();
    }
    let fence = "`".repeat(longest_backtick_run(content) + 1);
    let stripped =
        content.starts_with(' ') && content.ends_with(' ') && !content.chars().all(|c| c == ' ');
    let pad = content.starts_with('`') || content.ends_with('`') || stripped;
    if pad {
        format!("{fence} {content} {fence}")
    } else {
        format!("{fence}{content}{fence}")
    }
}

/// A repository string in a Markdown paragraph, list item or heading: a code span of its `text`.
pub fn md_code(name: &str) -> String {
    code_span(&text(name))
}

/// A repository string in a GFM table cell: `md_code`, and every `|` escaped as `\|` even inside
/// the code span, since the table splits its row into cells before any inline is read (GFM
/// section 4.10, "Tables": "Include a pipe in a cell's content by escaping it, including inside
/// other inline spans"). `text` doubles every backslash, so the `\` added before a pipe always
/// makes an odd run and the pipe is escaped.
pub fn md_cell(name: &str) -> String {
    md_code(name).replace('|', "\\|")
}

/// A repository string inside raw HTML (a `<summary>` line, an HTML block in which Markdown is
/// not read): its `text`, HTML-escaped, in a `<code>` element (which the mention and emoji
/// filters skip), on one line (a blank line would end the HTML block).
pub fn md_html(name: &str) -> String {
    let mut out = String::from("<code>");
    for c in text(name).chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out.push_str("</code>");
    out
}

/// Lines the program composed (names in them included) as a fenced code block: nothing hidden,
/// every line start guarded (`lines`), and a fence of backticks longer than any run inside, since
/// only a run at least as long as the opening one closes it (CommonMark section 4.5, "Fenced code
/// blocks"). The content of a fenced block is never read as Markdown.
pub fn md_fenced(info: &str, body: &str) -> String {
    let body = lines(body.trim_end_matches('\n'));
    let fence = "`".repeat((longest_backtick_run(&body) + 1).max(3));
    format!("{fence}{info}\n{body}\n{fence}\n")
}

/// A JSON document as serde_json wrote it, with what serde leaves as itself escaped too: serde
/// escapes C0, `"` and `\` (RFC 8259 section 7 requires no more), so DEL, C1, bidirectional
/// controls and invisible characters (`hidden`) become `\uXXXX` (UTF-16, as section 7 spells
/// characters beyond the BMP), and `##[` becomes `##\u005b`, so no line of the report is a
/// workflow command when a CI step prints it. Outside strings serde writes only ASCII
/// punctuation, digits, letters, spaces and (pretty) line breaks, and `#` only inside a string,
/// so each replacement is inside a string and the document's value is unchanged.
pub fn json(serialized: &str) -> String {
    let mut out = String::with_capacity(serialized.len());
    let mut previous = None;
    for c in serialized.chars() {
        if (c != '\n' && hidden(c)) || (c == '[' && previous == Some('#')) {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                use fmt::Write;
                let _ = write!(out, "\\u{unit:04x}");
            }
        } else {
            out.push(c);
        }
        previous = Some(c);
    }
    out
}

/// Words of the program with repository-derived names among them. The plain text (`Deref`,
/// `Display`) is what JSON carries and tests read; `text` and `markdown` escape only the names,
/// so the program's own Markdown (a `code` span, a link to Cilium's documentation) keeps working
/// in a comment while nothing from the repository can form any.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Prose {
    plain: String,
    /// Byte ranges of `plain` that are names, and whether each is escaped already.
    names: Vec<(usize, usize, Escaped)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Escaped {
    No,
    /// Through the text escaper already (a `compare::Path` quotes its keys with
    /// `limits::quoted`): escaping it again would double its backslashes.
    Yes,
}

impl Prose {
    /// An empty text.
    pub fn new() -> Prose {
        Prose::default()
    }

    /// A name alone (anything not known to be the program's own words is a name).
    pub fn of_name(name: &str) -> Prose {
        Prose::new().name(name)
    }

    /// The program's own words (never a repository string).
    pub fn words(mut self, words: &str) -> Prose {
        self.plain.push_str(words);
        self
    }

    /// A repository-derived string.
    pub fn name(mut self, name: &str) -> Prose {
        let start = self.plain.len();
        self.plain.push_str(name);
        self.names.push((start, self.plain.len(), Escaped::No));
        self
    }

    /// A name the text escaper has shown already (`text`, `limits::quoted`: a field path).
    pub fn shown(mut self, shown: &str) -> Prose {
        let start = self.plain.len();
        self.plain.push_str(shown);
        self.names.push((start, self.plain.len(), Escaped::Yes));
        self
    }

    /// Names joined by the program's `separator`.
    pub fn names<S: AsRef<str>>(mut self, names: &[S], separator: &str) -> Prose {
        for (i, n) in names.iter().enumerate() {
            if i > 0 {
                self = self.words(separator);
            }
            self = self.name(n.as_ref());
        }
        self
    }

    /// The text written so far.
    pub fn as_str(&self) -> &str {
        &self.plain
    }

    /// Pieces in order: the program's words (None), or a name and whether it is escaped.
    fn pieces(&self) -> Vec<(&str, Option<Escaped>)> {
        let mut at = 0;
        let mut out = Vec::with_capacity(self.names.len() * 2 + 1);
        for &(start, end, escaped) in &self.names {
            if start > at {
                out.push((&self.plain[at..start], None));
            }
            out.push((&self.plain[start..end], Some(escaped)));
            at = end;
        }
        if at < self.plain.len() {
            out.push((&self.plain[at..], None));
        }
        out
    }

    /// For a line of text output: names through `text`, the program's words as written (the
    /// report's last pass, `lines`, guards the line they end up in).
    pub fn text(&self) -> String {
        let mut out = String::with_capacity(self.plain.len());
        for (piece, name) in self.pieces() {
            match name {
                None => out.push_str(piece),
                Some(Escaped::No) => out.push_str(&text(piece)),
                Some(Escaped::Yes) => out.push_str(&message(piece)),
            }
        }
        out
    }

    /// For Markdown outside tables: names as code spans, the program's words as written (its own
    /// Markdown).
    pub fn markdown(&self) -> String {
        let mut out = String::with_capacity(self.plain.len() + 8);
        for (piece, name) in self.pieces() {
            match name {
                None => out.push_str(piece),
                Some(Escaped::No) => out.push_str(&md_code(piece)),
                Some(Escaped::Yes) => out.push_str(&code_span(&message(piece))),
            }
        }
        out
    }
}

impl Deref for Prose {
    type Target = str;
    fn deref(&self) -> &str {
        &self.plain
    }
}

impl fmt::Display for Prose {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.plain)
    }
}

/// A literal is the program's own words.
impl From<&'static str> for Prose {
    fn from(words: &'static str) -> Prose {
        Prose::new().words(words)
    }
}

/// A string built at run time may hold anything: it is a name unless built with `words`.
impl From<String> for Prose {
    fn from(name: String) -> Prose {
        Prose::of_name(&name)
    }
}

impl PartialEq<str> for Prose {
    fn eq(&self, other: &str) -> bool {
        self.plain == other
    }
}

impl PartialEq<&str> for Prose {
    fn eq(&self, other: &&str) -> bool {
        self.plain == *other
    }
}

/// Reads `text`'s output back: the escaping loses nothing, so distinct names stay distinct
/// (the tests' proof); None for text `text` cannot have written.
pub fn read_back(s: &str) -> Option<String> {
    let mut out = String::new();
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('\\') => out.push('\\'),
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('t') => out.push('\t'),
            Some('"') => out.push('"'),
            Some('u') => {
                if chars.next() != Some('{') {
                    return None;
                }
                let hex: String = chars.by_ref().take_while(|c| *c != '}').collect();
                out.push(char::from_u32(u32::from_str_radix(&hex, 16).ok()?)?);
            }
            _ => return None,
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_and_invisible_characters_are_shown_as_escapes() {
        assert_eq!(text("a\u{1b}[31mb\u{7}"), "a\\u{1b}[31mb\\u{7}");
        assert_eq!(text("x\ny\rz\tw"), "x\\ny\\rz\\tw");
        assert_eq!(text("\u{9b}31m"), "\\u{9b}31m");
        assert_eq!(text("evil\u{202e}txt.exe"), "evil\\u{202e}txt.exe");
        assert_eq!(text("a\u{2066}b\u{2069}"), "a\\u{2066}b\\u{2069}");
        assert_eq!(text("l\u{2028}p\u{2029}"), "l\\u{2028}p\\u{2029}");
        assert_eq!(text("zw\u{200b}j\u{feff}"), "zw\\u{200b}j\\u{feff}");
        assert_eq!(text("tag\u{e0041}"), "tag\\u{e0041}");
        assert_eq!(text("back\\slash"), "back\\\\slash");
        assert_eq!(
            text("café – naïve ünïcode 名前"),
            "café – naïve ünïcode 名前"
        );
    }

    #[test]
    fn no_escaped_string_can_begin_a_workflow_command() {
        assert_eq!(text("::error file=x::pwned"), "\\u{3a}:error file=x::pwned");
        assert_eq!(text("  ::add-mask::x"), "  \\u{3a}:add-mask::x");
        // Other white space is escaped, so the line then starts with a backslash.
        assert_eq!(
            text("\u{3000}::stop-commands::t"),
            "\\u{3000}::stop-commands::t"
        );
        // The legacy form is read anywhere in a line.
        assert_eq!(text("a ##[error]x"), "a ##\\u{5b}error]x");
        // A colon elsewhere is left alone.
        assert_eq!(text("a::b"), "a::b");
        assert_eq!(
            lines("ok\n  ::error::x\n::warning::y\nz ##[set-output]w"),
            "ok\n  \\u{3a}:error::x\n\\u{3a}:warning::y\nz ##\\u{5b}set-output]w"
        );
        assert_eq!(message("a\n::error::x"), "a\\n::error::x");
        assert_eq!(quoted_within("::x\"y", 10), "\"::x\\\"y\"");
    }

    #[test]
    fn quoting_is_bounded() {
        let long = "a\n".repeat(1000);
        let q = quoted_within(&long, 5);
        assert_eq!(q, "\"a\\na\\na…\"");
        assert_eq!(text_within("abc", 3), "abc");
    }

    #[test]
    fn markdown_names_cannot_form_links_mentions_html_or_cells() {
        assert_eq!(md_code("[a](https://evil)"), "`[a](https://evil)`");
        assert_eq!(md_code("a`b``c"), "```a`b``c```");
        assert_eq!(md_code("`x"), "`` `x ``");
        assert_eq!(md_code("a\nb"), "`a\\nb`");
        assert_eq!(md_cell("a|b"), "`a\\|b`");
        assert_eq!(md_cell("a\\|b"), "`a\\\\\\|b`");
        assert_eq!(
            md_html("<img src=x> @org/team"),
            "<code>&lt;img src=x&gt; @org/team</code>"
        );
        let block = md_fenced("text", "line ```` x\n::error::y\n");
        assert!(block.starts_with("`````text\n"), "{block}");
        assert!(block.ends_with("\n`````\n"), "{block}");
        assert!(block.contains("\n\\u{3a}:error::y\n"), "{block}");
    }

    #[test]
    fn json_keeps_its_value_and_loses_what_serde_leaves() {
        let v = serde_json::json!({"k\u{202e}": ["##[error]x \u{9b} \u{e0041} ok"]});
        let out = json(&serde_json::to_string_pretty(&v).unwrap());
        assert!(!out.chars().any(|c| c != '\n' && hidden(c)), "{out}");
        assert!(!out.contains("##["), "{out}");
        assert_eq!(serde_json::from_str::<serde_json::Value>(&out).unwrap(), v);
    }

    #[test]
    fn prose_escapes_only_its_names() {
        let p = Prose::new()
            .words("add `")
            .name("a.b: [x](y) @team")
            .words("` (see https://docs.cilium.io/)");
        assert_eq!(p, "add `a.b: [x](y) @team` (see https://docs.cilium.io/)");
        assert_eq!(
            p.markdown(),
            "add ``a.b: [x](y) @team`` (see https://docs.cilium.io/)"
        );
        let n = Prose::new().words("image ").name("x\u{1b}\n::error::y");
        assert_eq!(n.text(), "image x\\u{1b}\\n::error::y");
        assert_eq!(Prose::from(String::from("@x")).markdown(), "`@x`");
        let path = Prose::new().words("changes: ").shown("a[\"x\\u{1b}\"]");
        assert_eq!(path.text(), "changes: a[\"x\\u{1b}\"]");
        assert_eq!(path.markdown(), "changes: `a[\"x\\u{1b}\"]`");
    }

    proptest::proptest! {
        #[test]
        fn escaped_text_hides_nothing_and_reads_back(s in "\\PC*|[\\x00-\\x20\\x7f-\\xa0:#\\[\\\\`|\u{202a}-\u{202e}\u{2066}-\u{2069}\u{2028}\u{2029}]*") {
            for out in [text(&s), message(&s), lines(&s), quoted_within(&s, 1000)] {
                proptest::prop_assert!(!out.chars().any(|c| c != '\n' && hidden(c)), "{:?}", out);
                proptest::prop_assert!(!out.contains("##["), "{:?}", out);
                for line in out.lines() {
                    proptest::prop_assert!(!line.trim_start().starts_with(':'), "{:?}", out);
                }
            }
            proptest::prop_assert!(!text(&s).contains('\n'));
            proptest::prop_assert!(!message(&s).contains('\n'));
            proptest::prop_assert_eq!(read_back(&text(&s)), Some(s.clone()));
            let q = quoted_within(&s, usize::MAX);
            proptest::prop_assert!(q.len() >= 2 && q.starts_with('"') && q.ends_with('"'));
            proptest::prop_assert_eq!(read_back(&q[1..q.len() - 1]), Some(s.clone()));
        }

        #[test]
        fn markdown_code_spans_hold_exactly_the_escaped_text(s in "[ `a|\\\\\n]{0,12}|\\PC{0,20}") {
            let span = md_code(&s);
            proptest::prop_assert!(!span.contains('\n'));
            // The span's content is what the code-span rules give back: strip the fence of the
            // opening run's length, then one space on each side when both are there.
            let n = span.chars().take_while(|c| *c == '`').count();
            let inner = &span[n..span.len() - n];
            proptest::prop_assert!(!inner.starts_with('`') && !inner.ends_with('`'));
            proptest::prop_assert!(longest_backtick_run(inner) < n);
            let content = if inner.len() >= 2 && inner.starts_with(' ') && inner.ends_with(' ') && !inner.chars().all(|c| c == ' ') {
                &inner[1..inner.len() - 1]
            } else {
                inner
            };
            if !s.is_empty() {
                proptest::prop_assert_eq!(read_back(content), Some(s.clone()));
            }
            let cell = md_cell(&s);
            let bytes = cell.as_bytes();
            for (i, b) in bytes.iter().enumerate() {
                if *b == b'|' {
                    let run = bytes[..i].iter().rev().take_while(|b| **b == b'\\').count();
                    proptest::prop_assert!(run % 2 == 1, "{:?}", cell);
                }
            }
        }
    }
}
