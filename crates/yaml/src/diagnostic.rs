//! One refusal as the user is shown it: a stable kind, the message, where in the user's input
//! it points (a `Span`: source, line, column, bytes, and the line's text for the excerpt), other
//! places that matter (labels) and help. Rendered for people as the message followed by a caret
//! excerpt (codespan-reporting; ARCHITECTURE.md, "Dependencies, and why" says why that crate), or
//! as one JSON object for CI and tools (`--error-format json`; docs/diagnostics.md is its schema).
//!
//! This module depends on nothing else of the crate, so it can sit below every other layer.

use std::ops::Range;

/// A place in a named source: a values file, standard input, `cilium-cmp.yaml`, or the text of a
/// `--set` flag. Lines and columns are 1-based, columns counted in characters (as editors and
/// the `FILE:LINE:COLUMN` form count them); `start..end` are byte offsets into the source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Span {
    /// The source's name as messages show it (a path, `<stdin>`, `--set`).
    pub source: String,
    /// The line the span starts on, from 1.
    pub line: usize,
    /// The column it starts at, from 1, in characters.
    pub column: usize,
    /// The byte offset of its first byte in the source.
    pub start: usize,
    /// The byte offset just past its last byte.
    pub end: usize,
    /// The whole lines the span lies on, for the excerpt (none when the text is not at hand).
    pub excerpt: Option<Excerpt>,
}

/// The text of the lines a span lies on, where they start in the source, and the first line's
/// number.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Excerpt {
    /// The lines, as they are in the source.
    pub text: String,
    /// The byte offset in the source where `text` starts.
    pub offset: usize,
    /// The number of the first of those lines, from 1.
    pub first_line: usize,
}

impl Span {
    /// The bytes `range` of `text`, the source named `source` (clamped to the text and moved
    /// back to character boundaries, so any range gives a span).
    pub fn in_text(source: &str, text: &str, range: Range<usize>) -> Span {
        let floor = |mut i: usize| {
            i = i.min(text.len());
            while !text.is_char_boundary(i) {
                i -= 1;
            }
            i
        };
        let start = floor(range.start);
        let end = floor(range.end.max(start));
        let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
        let mut line_end = text[end..].find('\n').map_or(text.len(), |i| end + i);
        // A long line (minified JSON, a hostile file) is shown only up to a bound past the
        // span; a span beyond that bound has no excerpt at all.
        if line_end - line_start > MAX_EXCERPT {
            line_end = floor(
                end.max(line_start + MAX_EXCERPT / 2)
                    .min(line_start + MAX_EXCERPT),
            );
        }
        let shown = end <= line_end && end - start <= MAX_EXCERPT;
        let line = text[..start].matches('\n').count() + 1;
        let column = text[line_start..start].chars().count() + 1;
        Span {
            source: source.to_string(),
            line,
            column,
            start,
            end,
            excerpt: shown.then(|| Excerpt {
                text: text[line_start..line_end]
                    .trim_end_matches('\r')
                    .to_string(),
                offset: line_start,
                first_line: line,
            }),
        }
    }

    /// One character at `line` and `column` (1-based, in characters) of `text`, or the end of
    /// the line when the column lies past it: where a reader stopped.
    pub fn at(source: &str, text: &str, line: usize, column: usize) -> Span {
        let Some(line_start) = line_offset(text, line) else {
            return Span::in_text(source, text, text.len()..text.len());
        };
        let rest = &text[line_start..];
        let line_len = rest.find('\n').unwrap_or(rest.len());
        let start = line_start
            + rest[..line_len]
                .char_indices()
                .nth(column.saturating_sub(1))
                .map_or(line_len, |(i, _)| i);
        let end = text[start..]
            .chars()
            .next()
            .filter(|c| *c != '\n')
            .map_or(start, |c| start + c.len_utf8());
        Span::in_text(source, text, start..end)
    }

    /// The entry written on `line` of `text`: the key `key` when that line holds it, else the
    /// line's text without its indentation (a list item, a flow value). None past the text's end.
    pub fn of_entry(source: &str, text: &str, line: usize, key: Option<&str>) -> Option<Span> {
        let line_start = line_offset(text, line)?;
        let rest = &text[line_start..];
        let line_text = rest[..rest.find('\n').unwrap_or(rest.len())].trim_end_matches('\r');
        let indent = line_text.len() - line_text.trim_start().len();
        let body = line_text[indent..].trim_end();
        // The key as written: plain, or quoted (`"a.b":`), after a list dash.
        let found = key.filter(|k| !k.is_empty()).and_then(|k| {
            [k.to_string(), format!("\"{k}\""), format!("'{k}'")]
                .into_iter()
                .find_map(|written| {
                    let at = body.find(&format!("{written}:"))?;
                    Some(at..at + written.len())
                })
        });
        let range = found.unwrap_or(0..body.len());
        let start = line_start + indent + range.start;
        Some(Span::in_text(
            source,
            text,
            start..line_start + indent + range.end,
        ))
    }

    /// A span with no text at hand: only the line (column 1), for a source read elsewhere.
    pub fn line_only(source: &str, line: usize) -> Span {
        Span {
            source: source.to_string(),
            line,
            column: 1,
            start: 0,
            end: 0,
            excerpt: None,
        }
    }
}

/// The most bytes of the user's text an excerpt shows.
const MAX_EXCERPT: usize = 240;

/// The byte offset line `line` (1-based) starts at, if the text has that line.
fn line_offset(text: &str, line: usize) -> Option<usize> {
    if line == 0 {
        return None;
    }
    if line == 1 {
        return Some(0);
    }
    text.match_indices('\n')
        .nth(line - 2)
        .map(|(i, _)| i + 1)
        .filter(|i| *i <= text.len())
}

/// Whether a diagnostic stops the command or only warns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    /// The command stops: nothing on stdout, a non-zero status.
    Error,
    /// The command goes on; the diagnostic is a warning on stderr.
    Warning,
}

impl Severity {
    fn word(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

/// A span with what it shows (may be empty).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Label {
    /// Where.
    pub span: Span,
    /// What is there (may be empty).
    pub message: String,
}

/// One refusal: its stable kind (`values.unknown-key`, docs/diagnostics.md lists them), the
/// message (the same words the error always had), the place it points at, other places and help.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// The stable kind, `area.what` (docs/diagnostics.md).
    pub kind: String,
    /// Whether it stops the command.
    pub severity: Severity,
    /// The message, as the error always worded it.
    pub message: String,
    /// The place it is about, when it has one.
    pub primary: Option<Label>,
    /// Other places it names (the entry a repeated key replaced, say).
    pub labels: Vec<Label>,
    /// What to do about it, one line each.
    pub help: Vec<String>,
}

impl Diagnostic {
    /// An error of `kind` with `message`, pointing nowhere yet.
    pub fn error(kind: impl Into<String>, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            kind: kind.into(),
            severity: Severity::Error,
            message: message.into(),
            primary: None,
            labels: Vec::new(),
            help: Vec::new(),
        }
    }

    /// Points at `span` (the first one given is the primary, later ones become labels).
    pub fn at(mut self, span: Option<Span>, label: impl Into<String>) -> Diagnostic {
        if let Some(span) = span {
            let label = Label {
                span,
                message: label.into(),
            };
            if self.primary.is_none() {
                self.primary = Some(label);
            } else {
                self.labels.push(label);
            }
        }
        self
    }

    /// Every span, the primary first.
    pub fn spans(&self) -> impl Iterator<Item = &Label> {
        self.primary.iter().chain(self.labels.iter())
    }

    /// The human form: `error: MESSAGE`, then an excerpt of each line pointed at with carets
    /// under the span and its label, then the help. ANSI colours only when `colour`.
    pub fn render(&self, colour: bool) -> String {
        use codespan_reporting::diagnostic as cs;
        use codespan_reporting::term;

        let excerpts: Vec<&Label> = self.spans().filter(|l| l.span.excerpt.is_some()).collect();
        let labels: Vec<cs::Label<usize>> = excerpts
            .iter()
            .enumerate()
            .map(|(id, l)| {
                let e = l.span.excerpt.as_ref().expect("filtered above");
                let start = l.span.start.saturating_sub(e.offset).min(e.text.len());
                let end = l
                    .span
                    .end
                    .saturating_sub(e.offset)
                    .clamp(start, e.text.len());
                let primary = self.primary.as_ref().is_some_and(|p| std::ptr::eq(p, *l));
                let label = if primary {
                    cs::Label::primary(id, start..end)
                } else {
                    cs::Label::secondary(id, start..end)
                };
                label.with_message(&l.message)
            })
            .collect();
        // Spans without their text are named where they point, so the place is never lost.
        let mut notes: Vec<String> = self
            .spans()
            .filter(|l| l.span.excerpt.is_none())
            .map(|l| match l.message.as_str() {
                "" => format!("at {} line {}", l.span.source, l.span.line),
                m => format!("at {} line {}: {m}", l.span.source, l.span.line),
            })
            .collect();
        notes.extend(self.help.iter().map(|h| format!("help: {h}")));
        let severity = match self.severity {
            Severity::Error => cs::Severity::Error,
            Severity::Warning => cs::Severity::Warning,
        };
        let d = cs::Diagnostic::new(severity)
            .with_message(&self.message)
            .with_labels(labels)
            .with_notes(notes);
        let files = Excerpts(&excerpts);
        let config = term::Config {
            chars: term::Chars::ascii(),
            ..term::Config::default()
        };
        let rendered = if colour {
            let mut out = term::termcolor::Ansi::new(Vec::new());
            term::emit_to_write_style(&mut out, &config, &files, &d)
                .map(|()| String::from_utf8_lossy(&out.into_inner()).into_owned())
        } else {
            term::emit_into_string(&config, &files, &d)
        };
        // The excerpts are built to fit the labels; should rendering fail all the same, the
        // message alone is still the error.
        // codespan-reporting ends with a blank line; one line end, as every message had.
        let rendered =
            rendered.unwrap_or_else(|_| format!("{}: {}", self.severity.word(), self.message));
        format!("{}\n", rendered.trim_end())
    }

    /// The JSON form (docs/diagnostics.md): kind, severity, message, spans (the primary first)
    /// with file, line, column, byte offsets and label, and help.
    pub fn to_json(&self) -> serde_json::Value {
        let spans: Vec<serde_json::Value> = self
            .spans()
            .map(|l| {
                let primary = self.primary.as_ref().is_some_and(|p| std::ptr::eq(p, l));
                serde_json::json!({
                    "file": l.span.source,
                    "line": l.span.line,
                    "column": l.span.column,
                    "byte_start": l.span.start,
                    "byte_end": l.span.end,
                    "primary": primary,
                    "label": l.message,
                    "text": l.span.excerpt.as_ref().map(|e| e.text.as_str()),
                })
            })
            .collect();
        serde_json::json!({
            "kind": self.kind,
            "severity": self.severity.word(),
            "message": self.message,
            "spans": spans,
            "help": self.help,
        })
    }
}

/// The excerpts as codespan-reporting's files: one per span, its text the span's lines, numbered
/// from the span's first line (so a one-line excerpt shows the line's real number).
struct Excerpts<'a>(&'a [&'a Label]);

impl<'a> Excerpts<'a> {
    fn excerpt(&self, id: usize) -> Result<&'a Excerpt, codespan_reporting::files::Error> {
        self.0
            .get(id)
            .and_then(|l| l.span.excerpt.as_ref())
            .ok_or(codespan_reporting::files::Error::FileMissing)
    }
}

impl<'a> codespan_reporting::files::Files<'a> for Excerpts<'a> {
    type FileId = usize;
    type Name = &'a str;
    type Source = &'a str;

    fn name(&'a self, id: usize) -> Result<&'a str, codespan_reporting::files::Error> {
        self.0
            .get(id)
            .map(|l| l.span.source.as_str())
            .ok_or(codespan_reporting::files::Error::FileMissing)
    }

    fn source(&'a self, id: usize) -> Result<&'a str, codespan_reporting::files::Error> {
        Ok(self.excerpt(id)?.text.as_str())
    }

    fn line_index(
        &'a self,
        id: usize,
        byte: usize,
    ) -> Result<usize, codespan_reporting::files::Error> {
        let text = &self.excerpt(id)?.text;
        Ok(text[..byte.min(text.len())].matches('\n').count())
    }

    fn line_number(
        &'a self,
        id: usize,
        index: usize,
    ) -> Result<usize, codespan_reporting::files::Error> {
        Ok(self.excerpt(id)?.first_line + index)
    }

    fn line_range(
        &'a self,
        id: usize,
        index: usize,
    ) -> Result<Range<usize>, codespan_reporting::files::Error> {
        let text = &self.excerpt(id)?.text;
        let mut start = 0;
        for (i, line) in text.split_inclusive('\n').enumerate() {
            if i == index {
                return Ok(start..start + line.len());
            }
            start += line.len();
        }
        if index == 0 || start == text.len() {
            return Ok(start..start);
        }
        Err(codespan_reporting::files::Error::LineTooLarge {
            given: index,
            max: text.matches('\n').count(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_count_lines_and_characters_from_one() {
        let text = "a: 1\nbé: [x\n";
        let s = Span::at("v.yaml", text, 2, 5);
        assert_eq!((s.line, s.column, s.start, s.end), (2, 5, 10, 11));
        assert_eq!(s.excerpt.unwrap().text, "bé: [x");
        let k = Span::of_entry("v.yaml", "top:\n  inner: 3\n", 2, Some("inner")).unwrap();
        assert_eq!((k.line, k.column, k.start, k.end), (2, 3, 7, 12));
        assert!(Span::of_entry("v.yaml", "a: 1\n", 9, None).is_none());
    }

    #[test]
    fn the_excerpt_shows_the_real_line_number() {
        let text = "a: 1\nb: 2\nc: 3\n";
        let d = Diagnostic::error("values.test", "c is wrong")
            .at(Span::of_entry("v.yaml", text, 3, Some("c")), "here");
        let shown = d.render(false);
        assert!(shown.starts_with("error: c is wrong\n"), "{shown}");
        assert!(shown.contains("3 | c: 3\n"), "{shown}");
        assert!(shown.contains("  | ^ here"), "{shown}");
    }
}
