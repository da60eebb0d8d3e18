//! The parsed templates of a chart archive in a compact binary form: the section of a compiled
//! chart (`chart::compiled`, which holds the archive's files beside it) that lets a process that
//! renders once (every render Argo CD starts) read what an earlier process parsed instead of
//! parsing every template again (ARCHITECTURE.md, "Performance").
//!
//! A section that is truncated, corrupt or hostile is refused by `decode` (every length and
//! count is checked against what is left, nesting is bounded, nothing panics), and the caller
//! parses the archive as if there were none. Which archive and which build of the engine wrote
//! it is `chart::compiled`'s to check.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use super::helm::ChartTemplates;
use super::parse::{Arg, Body, Branch, Cmd, Node, Num, Pipe, Tree, MAX_PARSE_NESTING};
use crate::chart::archive::ChartFiles;
use crate::chart::shared::SharedBytes;

/// How deep nodes, arguments and pipelines may nest in a section: what the parser can produce
/// (each level of `MAX_PARSE_NESTING` is at most a node, a pipeline, a command and an argument)
/// with room to spare, and little enough for the reader's stack.
const MAX_DEPTH: usize = 4 * MAX_PARSE_NESTING + 16;

/// The section of `templates`.
pub fn encode(templates: &ChartTemplates) -> Vec<u8> {
    let mut w = Writer {
        out: Vec::with_capacity(1 << 19),
        text: String::with_capacity(1 << 20),
    };
    w.str(&templates.name);
    w.str(&templates.chart.to_string());
    w.str(&templates.default_values.to_string());
    w.len(templates.order.len());
    for name in &templates.order {
        w.str(name);
    }
    // Trees point into their file's text: each file is written once, and each tree names it.
    let mut names: Vec<&String> = templates.templates.keys().collect();
    names.sort();
    let mut sources: Vec<(&Arc<str>, &Arc<str>)> = Vec::new();
    for name in &names {
        let t = &templates.templates[*name];
        if !sources.iter().any(|(f, _)| f[..] == t.file[..]) {
            sources.push((&t.file, &t.src));
        }
    }
    w.len(sources.len());
    for (file, src) in &sources {
        w.str(file);
        w.str(src);
    }
    w.len(names.len());
    for name in names {
        let t = &templates.templates[name];
        let source = sources
            .iter()
            .position(|(f, _)| f[..] == t.file[..])
            .unwrap_or(0);
        w.str(&t.name);
        w.len(source);
        w.body(&t.root);
    }
    let mut section = Writer {
        out: Vec::with_capacity(w.text.len() + w.out.len() + 8),
        text: String::new(),
    };
    section.len(w.text.len());
    section.out.extend_from_slice(w.text.as_bytes());
    section.out.extend_from_slice(&w.out);
    section.out
}

/// Reads a section written by `encode` for the templates of `chart`; None when it is damaged.
/// The outline (names, files, the chart's metadata and defaults) is read and checked here; each
/// body of nodes is left in the section, and read and checked the first time it runs
/// (`parse::Body`), so a damaged body is refused then, as an error of the render.
pub fn decode(section: &SharedBytes, chart: &ChartFiles) -> Option<ChartTemplates> {
    let mut r = Reader {
        section,
        text: 0..0,
        at: 0,
        end: section.len(),
        depth: 0,
        src: None,
    };
    let table = r.len()?;
    let start = r.at;
    r.take(table)?;
    r.text = start..r.at;
    let name = r.str()?.to_string();
    // The project's data reader gives what serde_json would, in less time (`data_json`).
    let meta = crate::data_json::parse(r.str()?)?;
    let default_values = crate::data_json::parse(r.str()?)?;
    let mut order = Vec::new();
    for _ in 0..r.count()? {
        order.push(r.str()?.to_string());
    }
    let mut sources: Vec<(Arc<str>, Arc<str>)> = Vec::new();
    for _ in 0..r.count()? {
        let file = Arc::from(r.str()?);
        sources.push((file, Arc::from(r.str()?)));
    }
    let mut templates = HashMap::new();
    for _ in 0..r.count()? {
        let tree_name = r.str()?.to_string();
        let (file, src) = sources.get(r.len()?)?.clone();
        r.src = Some(src.clone());
        let root = r.body()?;
        templates.insert(
            tree_name.clone(),
            Arc::new(Tree {
                name: tree_name,
                file,
                src,
                root,
            }),
        );
    }
    if r.at != r.end {
        return None;
    }
    let bundled: BTreeMap<String, SharedBytes> = chart
        .files()
        .iter()
        .filter(|(f, _)| ChartTemplates::is_bundled_file(f))
        .map(|(f, b)| (f.clone(), b.clone()))
        .collect();
    Some(ChartTemplates::from_parts(
        name,
        templates,
        order,
        bundled,
        meta,
        default_values,
    ))
}

/// A body of nodes still in a compiled section: where it lies, and what reading it needs.
pub struct Lazy {
    section: SharedBytes,
    /// Where the string table lies in the section.
    text: std::ops::Range<usize>,
    /// Where the body lies in the section.
    at: usize,
    end: usize,
    /// How deep it sits, so that the nesting bound counts from the tree's root.
    depth: usize,
    /// The text of its tree, which every text node must lie within.
    src: Arc<str>,
}

impl Lazy {
    /// The body's nodes; None when the section is damaged there.
    pub(super) fn read(&self) -> Option<Vec<Node>> {
        let mut r = Reader {
            section: &self.section,
            text: self.text.clone(),
            at: self.at,
            end: self.end,
            depth: self.depth,
            src: Some(self.src.clone()),
        };
        let nodes = r.nodes()?;
        (r.at == r.end && texts_within(&nodes, &self.src)).then_some(nodes)
    }
}

/// Strings go to a table of their own, so that reading checks their UTF-8 once, not per string.
/// Whether every text of `nodes` is a slice of `src` (what exec writes); the bodies of their
/// branches are checked when they are read.
fn texts_within(nodes: &[Node], src: &str) -> bool {
    nodes.iter().all(|n| match n {
        Node::Text(t) => src.get(t.clone()).is_some(),
        _ => true,
    })
}

struct Writer {
    out: Vec<u8>,
    text: String,
}

impl Writer {
    /// LEB128, as protobuf writes lengths: most are one byte.
    fn len(&mut self, mut n: usize) {
        loop {
            let low = (n & 0x7f) as u8;
            n >>= 7;
            if n == 0 {
                self.out.push(low);
                return;
            }
            self.out.push(low | 0x80);
        }
    }
    fn str(&mut self, s: &str) {
        self.len(self.text.len());
        self.len(s.len());
        self.text.push_str(s);
    }
    fn strs(&mut self, v: &[String]) {
        self.len(v.len());
        for s in v {
            self.str(s);
        }
    }
    fn flag(&mut self, b: bool) {
        self.out.push(b as u8);
    }
    /// A body: its length in bytes first, so that a reader can leave it until it runs. Only
    /// parsed templates are written, whose bodies are always there to write.
    fn body(&mut self, body: &Body) {
        let outer = std::mem::take(&mut self.out);
        let nodes = body.nodes().unwrap_or_default();
        self.len(nodes.len());
        for n in nodes {
            self.node(n);
        }
        let inner = std::mem::replace(&mut self.out, outer);
        self.len(inner.len());
        self.out.extend_from_slice(&inner);
    }
    fn node(&mut self, n: &Node) {
        match n {
            Node::Text(t) => {
                self.out.push(0);
                self.len(t.start);
                self.len(t.end);
            }
            Node::Action(p) => {
                self.out.push(1);
                self.pipe(p);
            }
            Node::If(b) => {
                self.out.push(2);
                self.branch(b);
            }
            Node::With(b) => {
                self.out.push(3);
                self.branch(b);
            }
            Node::Range(b) => {
                self.out.push(4);
                self.branch(b);
            }
            Node::Template { pos, name, pipe } => {
                self.out.push(5);
                self.len(*pos);
                self.str(name);
                self.flag(pipe.is_some());
                if let Some(p) = pipe {
                    self.pipe(p);
                }
            }
            Node::Break(pos) => {
                self.out.push(6);
                self.len(*pos);
            }
            Node::Continue(pos) => {
                self.out.push(7);
                self.len(*pos);
            }
        }
    }
    fn branch(&mut self, b: &Branch) {
        self.len(b.pos);
        self.pipe(&b.pipe);
        self.body(&b.list);
        self.flag(b.else_list.is_some());
        if let Some(e) = &b.else_list {
            self.body(e);
        }
    }
    fn pipe(&mut self, p: &Pipe) {
        self.len(p.pos);
        self.len(p.decl.len());
        for d in &p.decl {
            self.str(d);
        }
        self.flag(p.is_assign);
        self.len(p.cmds.len());
        for c in &p.cmds {
            self.len(c.pos);
            self.len(c.args.len());
            for a in &c.args {
                self.arg(a);
            }
        }
    }
    fn arg(&mut self, a: &Arg) {
        match a {
            Arg::Field(pos, f) => {
                self.out.push(0);
                self.len(*pos);
                self.strs(f);
            }
            Arg::Variable(pos, v, f) => {
                self.out.push(1);
                self.len(*pos);
                self.str(v);
                self.strs(f);
            }
            Arg::Chain(pos, inner, f) => {
                self.out.push(2);
                self.len(*pos);
                self.arg(inner);
                self.strs(f);
            }
            Arg::Dot(pos) => {
                self.out.push(3);
                self.len(*pos);
            }
            Arg::Nil(pos) => {
                self.out.push(4);
                self.len(*pos);
            }
            Arg::Bool(b) => {
                self.out.push(5);
                self.flag(*b);
            }
            Arg::Number(n) => {
                self.out.push(6);
                self.flag(n.int.is_some());
                self.out
                    .extend_from_slice(&n.int.unwrap_or(0).to_le_bytes());
                self.flag(n.float.is_some());
                self.out
                    .extend_from_slice(&n.float.unwrap_or(0.0).to_bits().to_le_bytes());
                self.flag(n.is_float);
                self.str(&n.text);
            }
            Arg::Str(s) => {
                self.out.push(7);
                self.str(s);
            }
            Arg::Ident(pos, name) => {
                self.out.push(8);
                self.len(*pos);
                self.str(name);
            }
            Arg::Pipe(p) => {
                self.out.push(9);
                self.pipe(p);
            }
        }
    }
}

struct Reader<'a> {
    section: &'a SharedBytes,
    /// Where the string table (see `Writer`) lies in the section.
    text: std::ops::Range<usize>,
    /// The next byte to read, and the end of what this reader reads.
    at: usize,
    end: usize,
    depth: usize,
    /// The text of the tree being read, which the bodies it leaves for later keep.
    src: Option<Arc<str>>,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let section: &'a [u8] = self.section;
        let to = self.at.checked_add(n).filter(|&to| to <= self.end)?;
        let head = section.get(self.at..to)?;
        self.at = to;
        Some(head)
    }
    fn byte(&mut self) -> Option<u8> {
        Some(self.take(1)?[0])
    }
    fn len(&mut self) -> Option<usize> {
        let mut n: usize = 0;
        for shift in (0..64).step_by(7) {
            let b = self.byte()?;
            n |= usize::try_from(u64::from(b & 0x7f).checked_shl(shift)?).ok()?;
            if b & 0x80 == 0 {
                return Some(n);
            }
        }
        None
    }
    /// A count of items that follow: each takes at least a byte, so a count larger than what
    /// is left is damage, refused before anything is reserved for it.
    fn count(&mut self) -> Option<usize> {
        let n = self.len()?;
        (n <= self.end - self.at).then_some(n)
    }
    /// A string of the table. Each is checked for UTF-8 as it is read: the table is not read
    /// whole, as most bodies never are.
    fn str(&mut self) -> Option<&'a str> {
        let section: &'a [u8] = self.section;
        let at = self.len()?;
        let n = self.len()?;
        let from = self.text.start.checked_add(at)?;
        let to = from.checked_add(n).filter(|&to| to <= self.text.end)?;
        std::str::from_utf8(section.get(from..to)?).ok()
    }
    fn strs(&mut self) -> Option<Vec<String>> {
        let n = self.count()?;
        let mut v = Vec::with_capacity(n);
        for _ in 0..n {
            v.push(self.str()?.to_string());
        }
        Some(v)
    }
    /// A body, left where it lies until it runs.
    fn body(&mut self) -> Option<Body> {
        let n = self.len()?;
        let at = self.at;
        self.take(n)?;
        Some(Body::compiled(Lazy {
            section: self.section.clone(),
            text: self.text.clone(),
            at,
            end: self.at,
            depth: self.depth,
            src: self.src.clone()?,
        }))
    }
    fn flag(&mut self) -> Option<bool> {
        match self.byte()? {
            0 => Some(false),
            1 => Some(true),
            _ => None,
        }
    }
    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
    fn nested<T>(&mut self, f: impl FnOnce(&mut Self) -> Option<T>) -> Option<T> {
        if self.depth >= MAX_DEPTH {
            return None;
        }
        self.depth += 1;
        let r = f(self);
        self.depth -= 1;
        r
    }
    fn nodes(&mut self) -> Option<Vec<Node>> {
        let n = self.count()?;
        let mut v = Vec::with_capacity(n);
        for _ in 0..n {
            v.push(self.nested(Self::node)?);
        }
        Some(v)
    }
    fn node(&mut self) -> Option<Node> {
        Some(match self.byte()? {
            0 => {
                let (start, end) = (self.len()?, self.len()?);
                // Within the tree's text, on character boundaries: checked when the body
                // is read whole (`Lazy::read`).
                Node::Text(start..end)
            }
            1 => Node::Action(self.pipe()?),
            2 => Node::If(self.branch()?),
            3 => Node::With(self.branch()?),
            4 => Node::Range(self.branch()?),
            5 => {
                let pos = self.len()?;
                let name = self.str()?.to_string();
                let pipe = if self.flag()? {
                    Some(self.pipe()?)
                } else {
                    None
                };
                Node::Template { pos, name, pipe }
            }
            6 => Node::Break(self.len()?),
            7 => Node::Continue(self.len()?),
            _ => return None,
        })
    }
    fn branch(&mut self) -> Option<Branch> {
        let pos = self.len()?;
        let pipe = self.pipe()?;
        let list = self.body()?;
        let else_list = if self.flag()? {
            Some(self.body()?)
        } else {
            None
        };
        Some(Branch {
            pos,
            pipe,
            list,
            else_list,
        })
    }
    fn pipe(&mut self) -> Option<Pipe> {
        self.nested(|r| {
            let pos = r.len()?;
            let mut decl = Vec::new();
            for _ in 0..r.count()? {
                decl.push(Arc::from(r.str()?));
            }
            let is_assign = r.flag()?;
            let n = r.count()?;
            let mut cmds = Vec::with_capacity(n);
            for _ in 0..n {
                let pos = r.len()?;
                let m = r.count()?;
                let mut args = Vec::with_capacity(m);
                for _ in 0..m {
                    args.push(r.arg()?);
                }
                cmds.push(Cmd { pos, args });
            }
            Some(Pipe {
                pos,
                decl,
                is_assign,
                cmds,
            })
        })
    }
    fn arg(&mut self) -> Option<Arg> {
        self.nested(|r| {
            Some(match r.byte()? {
                0 => Arg::Field(r.len()?, r.strs()?),
                1 => {
                    let pos = r.len()?;
                    let v = r.str()?.to_string();
                    Arg::Variable(pos, v, r.strs()?)
                }
                2 => {
                    let pos = r.len()?;
                    let inner = r.arg()?;
                    Arg::Chain(pos, Box::new(inner), r.strs()?)
                }
                3 => Arg::Dot(r.len()?),
                4 => Arg::Nil(r.len()?),
                5 => Arg::Bool(r.flag()?),
                6 => {
                    let has_int = r.flag()?;
                    let int = r.u64()? as i64;
                    let has_float = r.flag()?;
                    let float = f64::from_bits(r.u64()?);
                    let is_float = r.flag()?;
                    Arg::Number(Num {
                        int: has_int.then_some(int),
                        float: has_float.then_some(float),
                        is_float,
                        text: r.str()?.to_string(),
                    })
                }
                7 => Arg::Str(Arc::from(r.str()?)),
                8 => {
                    let pos = r.len()?;
                    Arg::Ident(pos, r.str()?.to_string())
                }
                9 => Arg::Pipe(Box::new(r.pipe()?)),
                _ => return None,
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::RenderOptions;

    /// A small chart whose templates use every kind of node and argument the parser makes.
    fn chart() -> ChartFiles {
        let mut files = BTreeMap::new();
        let mut add = |name: &str, text: &str| {
            files.insert(name.to_string(), text.as_bytes().to_vec());
        };
        add("Chart.yaml", "apiVersion: v2\nname: demo\nversion: 1.2.3\n");
        add(
            "values.yaml",
            "enabled: true\nname: x\nports: [80, 443]\nlabels: {b: 2, a: 1}\nratio: 0.5\n",
        );
        add("files/motd.txt", "hello\n");
        add(
            "templates/_helpers.tpl",
            "{{- define \"demo.name\" -}}{{ .Values.name | default \"none\" | quote }}{{- end -}}\n\
             {{/* a comment */}}{{- define \"demo.empty\" }}{{ end }}",
        );
        add(
            "templates/config.yaml",
            "{{- $n := 0 -}}\n\
             kind: ConfigMap\n\
             metadata:\n  name: {{ include \"demo.name\" . }}\n\
             data:\n\
             {{- if and .Values.enabled (not false) }}\n  on: \"yes\"\n\
             {{- else if .Values.other }}\n  on: other\n{{- else }}\n  on: \"no\"\n{{- end }}\n\
             {{- with .Values.labels }}\n  labels: {{ toJson . | squote }}\n{{- end }}\n\
             {{- range $i, $p := .Values.ports }}{{ if eq $i 1 }}{{ break }}{{ end }}\n  \
             port{{ $i }}: {{ $p | toString | quote }}{{ $n = add $n 1 }}\n{{- end }}\n\
             {{- range .Values.ports }}{{ if eq (int .) 80 }}{{ continue }}{{ end }}\n  tls: \"{{ . }}\"\n{{- end }}\n  \
             count: {{ $n | quote }}\n  hex: {{ 0x1F | quote }}\n  float: {{ 1.5e3 | quote }}\n  \
             char: {{ 'a' | quote }}\n  ratio: {{ .Values.ratio | quote }}\n  \
             nil: {{ printf \"%v\" nil | quote }}\n  chain: {{ (.Files.Get \"files/motd.txt\") | trim | quote }}\n  \
             raw: {{ `r\\aw` | quote }}\n  esc: {{ \"tab\\there\" | quote }}\n\
             {{- template \"demo.block\" . }}\n",
        );
        add(
            "templates/block.yaml",
            "{{- block \"demo.block\" . }}\n  block: {{ .Release.Name | quote }}{{ end }}\n",
        );
        ChartFiles::from_files("demo.tgz", files).unwrap()
    }

    /// The chart's defaults and the release a test renders with.
    fn inputs(t: &ChartTemplates) -> (serde_json::Value, RenderOptions) {
        let values = crate::merge::coalesce(&t.default_values, &serde_json::json!({}));
        let opts = RenderOptions {
            release_name: "cilium".into(),
            namespace: "kube-system".into(),
            kube_version: "1.35.0".into(),
            api_versions: vec![],
        };
        (values, opts)
    }

    fn rendered(t: &ChartTemplates) -> Vec<super::super::Manifest> {
        let (values, opts) = inputs(t);
        t.render(&values, &opts).unwrap()
    }

    #[test]
    fn decoded_templates_render_what_the_parsed_ones_render() {
        let chart = chart();
        let parsed = ChartTemplates::parse(&chart).unwrap();
        let section = SharedBytes::from(encode(&parsed));
        let decoded = decode(&section, &chart).expect("decodes");
        let out = rendered(&parsed);
        assert!(
            out.iter().any(|m| m.text.contains("port0: \"80\"")),
            "{out:?}"
        );
        assert_eq!(rendered(&decoded), out);
        assert_eq!(decoded.template_names(), parsed.template_names());
        // Written again, it is the same bytes: nothing is lost on the way.
        assert_eq!(encode(&decoded), *section);
    }

    /// Reads every body of `nodes` and of the branches within, as rendering every path would;
    /// false when one is damaged.
    fn read_all(nodes: &[Node]) -> bool {
        nodes.iter().all(|n| match n {
            Node::If(b) | Node::With(b) | Node::Range(b) => {
                b.list.nodes().is_some_and(read_all)
                    && b.else_list
                        .as_ref()
                        .is_none_or(|e| e.nodes().is_some_and(read_all))
            }
            _ => true,
        })
    }

    /// Decodes `section` and reads every body it holds; None when any part is damaged.
    fn decode_all(section: &[u8], chart: &ChartFiles) -> Option<ChartTemplates> {
        let t = decode(&SharedBytes::from(section), chart)?;
        t.templates
            .values()
            .all(|tree| tree.root.nodes().is_some_and(read_all))
            .then_some(t)
    }

    #[test]
    fn a_damaged_section_is_refused_without_a_panic() {
        let chart = chart();
        let section = encode(&ChartTemplates::parse(&chart).unwrap());
        assert!(decode_all(&section, &chart).is_some());
        for cut in (0..section.len()).step_by(7) {
            assert!(
                decode_all(&section[..cut], &chart).is_none(),
                "cut at {cut}"
            );
        }
        // Every byte changed in turn: refused, or read as some other tree, never a panic.
        let mut damaged = section.clone();
        for i in 0..damaged.len() {
            let was = damaged[i];
            damaged[i] = was.wrapping_add(0x55);
            let _ = decode_all(&damaged, &chart);
            damaged[i] = 0xff;
            let _ = decode_all(&damaged, &chart);
            damaged[i] = was;
        }
    }

    #[test]
    fn a_damaged_body_is_an_error_of_the_render_that_reaches_it() {
        let chart = chart();
        let parsed = ChartTemplates::parse(&chart).unwrap();
        let mut section = encode(&parsed);
        // The last tree's root is the last body of the section: its last byte is damaged, so
        // the outline still reads and the body does not.
        let last = section.len() - 1;
        section[last] = 0xff;
        let decoded = decode(&SharedBytes::from(section), &chart).expect("the outline reads");
        let (values, opts) = inputs(&decoded);
        let err = decoded.render(&values, &opts).unwrap_err();
        assert!(err.to_string().contains("compiled chart"), "{err}");
    }

    #[test]
    fn nesting_beyond_the_bound_is_refused() {
        // A pipeline whose argument is a pipeline, and so on, deeper than any parse makes.
        let mut w = Writer {
            out: Vec::new(),
            text: String::new(),
        };
        for _ in 0..MAX_DEPTH {
            w.len(0); // pos
            w.len(0); // no declarations
            w.flag(false);
            w.len(1); // one command
            w.len(0); // pos
            w.len(1); // one argument
            w.out.push(9); // a parenthesised pipeline
        }
        let section = SharedBytes::from(w.out);
        let mut r = Reader {
            section: &section,
            text: 0..0,
            at: 0,
            end: section.len(),
            depth: 0,
            src: None,
        };
        assert!(r.pipe().is_none());
    }
}
