//! Where each key of a values file is written: the positions `fix-values` edits by lines.
//!
//! The project's reader (`yaml::read`) keeps only the line of each path; an edit needs the key's
//! column, where its value ends, and whether the key sits in block style at all (a key inside
//! `{...}` shares its line with others). This walks the same parser's events once more.

use std::collections::BTreeMap;

use saphyr_parser::{Event, Parser, Span};

use cilium_cmp_yaml::limits;

/// One key of a block mapping, as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// 1-based line of the key.
    pub line: usize,
    /// 0-based column (in characters) where the key starts, quotes included.
    pub column: usize,
    /// 0-based column just past the key (its closing quote, if any).
    pub key_end: usize,
    /// The last line the value's own text reaches (a multi-line scalar, a flow collection).
    pub value_end: usize,
    /// Whether the value is a mapping in block style (one a key can be added to by lines).
    pub block_map: bool,
}

/// The keys of a file, by path (keys may hold dots, so the path is a list).
#[derive(Debug, Clone, Default)]
pub struct Layout {
    /// Every key of the file where it is written (the last occurrence, the one Helm keeps).
    pub entries: BTreeMap<Vec<String>, Entry>,
    /// Earlier occurrences of keys written again in the same mapping (Helm keeps the last,
    /// which `entries` holds), by path.
    pub earlier: BTreeMap<Vec<String>, Vec<Entry>>,
    /// What keeps the file from being edited by lines, if anything (for the message).
    pub obstacle: Option<String>,
}

/// The layout of one values file. A text the parser refuses has no layout (the render reports
/// it with its position).
pub fn layout(text: &str) -> Option<Layout> {
    let chars: Vec<char> = text.chars().collect();
    let mut walker = Walker {
        parser: Parser::new_from_str(text),
        chars,
        layout: Layout::default(),
        documents: 0,
    };
    walker.stream().ok()?;
    Some(walker.layout)
}

struct Walker<'a> {
    parser: Parser<'a, saphyr_parser::StrInput<'a>>,
    chars: Vec<char>,
    layout: Layout,
    documents: usize,
}

/// The walk stops at a parse error; the caller has the reader's message for it.
struct Stop;

impl<'a> Walker<'a> {
    fn next(&mut self) -> Result<(Event<'a>, Span), Stop> {
        match self.parser.next() {
            Some(Ok(pair)) => Ok(pair),
            _ => Err(Stop),
        }
    }

    fn obstacle(&mut self, why: &str) {
        if self.layout.obstacle.is_none() {
            self.layout.obstacle = Some(why.to_string());
        }
    }

    fn stream(&mut self) -> Result<(), Stop> {
        loop {
            let (event, span) = self.next()?;
            match event {
                Event::StreamEnd => return Ok(()),
                Event::DocumentStart(_) => {
                    self.documents += 1;
                    if self.documents > 1 {
                        self.obstacle("it holds several YAML documents");
                    }
                }
                Event::StreamStart | Event::Nothing | Event::DocumentEnd => {}
                other => {
                    let mut path = Vec::new();
                    self.node(other, span, &mut path, 0, true)?;
                }
            }
        }
    }

    /// One node at `path`; returns the last line its text reaches. `record`: whether its keys
    /// are recorded (not below a list or a flow collection, whose keys are never edited alone).
    fn node(
        &mut self,
        event: Event<'a>,
        span: Span,
        path: &mut Vec<String>,
        depth: usize,
        record: bool,
    ) -> Result<usize, Stop> {
        if depth > limits::MAX_DEPTH {
            return Err(Stop);
        }
        // A block scalar's span ends where the next token starts: on a later line, after
        // nothing but indentation. Its text ended on the line before.
        let line_start = span.end.index() - span.end.col().min(span.end.index());
        let only_indent = self
            .chars
            .get(line_start..span.end.index())
            .is_some_and(|before| before.iter().all(|c| c.is_whitespace()));
        let mut end = if only_indent && span.end.line() > span.start.line() {
            span.end.line() - 1
        } else {
            span.end.line().max(span.start.line())
        };
        match event {
            Event::Scalar(_, _, anchor, _) if anchor > 0 => {
                self.obstacle("it uses anchors (&name) and aliases (*name)")
            }
            Event::Alias(_) => self.obstacle("it uses anchors (&name) and aliases (*name)"),
            Event::SequenceStart(anchor, _) => {
                if anchor > 0 {
                    self.obstacle("it uses anchors (&name) and aliases (*name)");
                }
                let flow = self.chars.get(span.start.index()) == Some(&'[');
                loop {
                    let (ev, sp) = self.next()?;
                    if matches!(ev, Event::SequenceEnd) {
                        // As for mappings: only a flow sequence's end (`]`) is its own text.
                        if flow {
                            end = end.max(sp.start.line());
                        }
                        break;
                    }
                    end = end.max(self.node(ev, sp, path, depth + 1, false)?);
                }
            }
            Event::MappingStart(anchor, _) => {
                if anchor > 0 {
                    self.obstacle("it uses anchors (&name) and aliases (*name)");
                }
                let flow = self.chars.get(span.start.index()) == Some(&'{');
                let map_start_line = span.start.line();
                loop {
                    let (kev, ksp) = self.next()?;
                    if matches!(kev, Event::MappingEnd) {
                        // A flow mapping ends at its `}`; a block one's end event sits at the
                        // next token, which is not part of it.
                        if flow {
                            end = end.max(ksp.start.line());
                        }
                        break;
                    }
                    let key = match &kev {
                        Event::Scalar(text, _, anchor, _) => {
                            if *anchor > 0 {
                                self.obstacle("it uses anchors (&name) and aliases (*name)");
                            }
                            Some(text.to_string())
                        }
                        _ => None,
                    };
                    if key.as_deref() == Some("<<") {
                        self.obstacle("it uses merge keys (<<)");
                    }
                    let key_line = ksp.start.line();
                    end = end.max(ksp.end.line());
                    if key.is_none() {
                        // A collection as a key: the reader refuses it; walk it for its end.
                        end = end.max(self.node(kev, ksp, path, depth + 1, false)?);
                    }
                    let (vev, vsp) = self.next()?;
                    let value_is_block_map = matches!(vev, Event::MappingStart(..))
                        && self.chars.get(vsp.start.index()) != Some(&'{');
                    let record_here = record && !flow && key.is_some();
                    if let Some(k) = &key {
                        path.push(k.clone());
                    }
                    let value_end = self.node(vev, vsp, path, depth + 1, record_here)?;
                    if record_here {
                        if let Some(before) = self.layout.entries.get(path.as_slice()) {
                            // Keys of a later mapping at the same path land on the same paths,
                            // so only a key written again in the mapping itself counts.
                            if before.line >= map_start_line {
                                let before = before.clone();
                                self.layout
                                    .earlier
                                    .entry(path.clone())
                                    .or_default()
                                    .push(before);
                            }
                        }
                        self.layout.entries.insert(
                            path.clone(),
                            Entry {
                                line: key_line,
                                column: ksp.start.col(),
                                key_end: ksp.end.col(),
                                value_end: value_end.max(key_line),
                                block_map: value_is_block_map,
                            },
                        );
                    }
                    if key.is_some() {
                        path.pop();
                    }
                    end = end.max(value_end);
                }
            }
            _ => {}
        }
        Ok(end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(p: &str) -> Vec<String> {
        p.split('.').map(str::to_string).collect()
    }

    #[test]
    fn keys_have_their_line_column_and_value_end() {
        let text =
            "a:\n  b: 1\n  \"c\": |\n    x\n    y\nd: {e: 1,\n  f: 2}\ng:\n- 1\nh: [\n  2]\n";
        let l = layout(text).unwrap();
        assert_eq!(l.obstacle, None);
        let a = &l.entries[&keys("a")];
        assert_eq!((a.line, a.column, a.block_map), (1, 0, true));
        let c = &l.entries[&keys("a.c")];
        assert_eq!((c.line, c.column, c.key_end), (3, 2, 5));
        assert!(c.value_end >= 5, "{c:?}");
        let d = &l.entries[&keys("d")];
        assert_eq!((d.line, d.value_end, d.block_map), (6, 7, false));
        // A block list ends with its last item, a flow one at its `]`.
        assert_eq!(l.entries[&keys("g")].value_end, 9);
        assert_eq!(l.entries[&keys("h")].value_end, 11);
        // Keys inside a flow mapping are not edited alone.
        assert!(!l.entries.contains_key(&keys("d.e")));
    }

    #[test]
    fn anchors_merge_keys_and_documents_are_obstacles() {
        let l = layout("a: &x 1\nb: *x\n").unwrap();
        assert!(l.obstacle.unwrap().contains("anchors"));
        let l = layout("a: 1\n---\nb: 2\n").unwrap();
        assert!(l.obstacle.unwrap().contains("several"));
        assert!(layout("a: [\n").is_none());
    }
}
