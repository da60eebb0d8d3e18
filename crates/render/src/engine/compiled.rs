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

use serde_json::Value as Json;

use super::helm::ChartTemplates;
use super::parse::{Arg, Branch, Cmd, Node, Num, Pipe, Tree, MAX_PARSE_NESTING};
use crate::chart::archive::ChartFiles;

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
        w.nodes(&t.root);
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
pub fn decode(section: &[u8], chart: &ChartFiles) -> Option<ChartTemplates> {
    let mut r = Reader {
        b: section,
        text: "",
        depth: 0,
    };
    let table = r.len()?;
    r.text = std::str::from_utf8(r.take(table)?).ok()?;
    let name = r.str()?.to_string();
    let meta: Json = serde_json::from_str(r.str()?).ok()?;
    let default_values: Json = serde_json::from_str(r.str()?).ok()?;
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
        let root = r.nodes()?;
        if !texts_within(&root, &src) {
            return None;
        }
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
    if !r.b.is_empty() {
        return None;
    }
    let bundled: BTreeMap<String, Arc<[u8]>> = chart
        .files()
        .iter()
        .filter(|(f, _)| ChartTemplates::is_bundled_file(f))
        .map(|(f, b)| (f.clone(), Arc::from(b.as_slice())))
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

/// Strings go to a table of their own, so that reading checks their UTF-8 once, not per string.
/// Whether every text of `nodes` is a slice of `src` (what exec writes).
fn texts_within(nodes: &[Node], src: &str) -> bool {
    nodes.iter().all(|n| match n {
        Node::Text(t) => src.get(t.clone()).is_some(),
        Node::If(b) | Node::With(b) | Node::Range(b) => {
            texts_within(&b.list, src)
                && b.else_list.as_deref().is_none_or(|e| texts_within(e, src))
        }
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
    fn nodes(&mut self, nodes: &[Node]) {
        self.len(nodes.len());
        for n in nodes {
            self.node(n);
        }
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
        self.nodes(&b.list);
        self.flag(b.else_list.is_some());
        if let Some(e) = &b.else_list {
            self.nodes(e);
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
    b: &'a [u8],
    /// The string table (see `Writer`).
    text: &'a str,
    depth: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if n > self.b.len() {
            return None;
        }
        let (head, rest) = self.b.split_at(n);
        self.b = rest;
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
        (n <= self.b.len()).then_some(n)
    }
    fn str(&mut self) -> Option<&'a str> {
        let at = self.len()?;
        let n = self.len()?;
        self.text.get(at..at.checked_add(n)?)
    }
    fn strs(&mut self) -> Option<Vec<String>> {
        let n = self.count()?;
        let mut v = Vec::with_capacity(n);
        for _ in 0..n {
            v.push(self.str()?.to_string());
        }
        Some(v)
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
                // Within the tree's text, on character boundaries: checked once the tree's
                // text is known (`decode`).
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
        let list = self.nodes()?;
        let else_list = if self.flag()? {
            Some(self.nodes()?)
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

    fn rendered(t: &ChartTemplates) -> Vec<super::super::Manifest> {
        let values = crate::merge::coalesce(&t.default_values, &serde_json::json!({}));
        let opts = RenderOptions {
            release_name: "cilium".into(),
            namespace: "kube-system".into(),
            kube_version: "1.35.0".into(),
            api_versions: vec![],
        };
        t.render(&values, &opts).unwrap()
    }

    #[test]
    fn decoded_templates_render_what_the_parsed_ones_render() {
        let chart = chart();
        let parsed = ChartTemplates::parse(&chart).unwrap();
        let section = encode(&parsed);
        let decoded = decode(&section, &chart).expect("decodes");
        let out = rendered(&parsed);
        assert!(
            out.iter().any(|m| m.text.contains("port0: \"80\"")),
            "{out:?}"
        );
        assert_eq!(rendered(&decoded), out);
        assert_eq!(decoded.template_names(), parsed.template_names());
        // Written again, it is the same bytes: nothing is lost on the way.
        assert_eq!(encode(&decoded), section);
    }

    #[test]
    fn a_damaged_section_is_refused_without_a_panic() {
        let chart = chart();
        let section = encode(&ChartTemplates::parse(&chart).unwrap());
        for cut in (0..section.len()).step_by(7) {
            assert!(decode(&section[..cut], &chart).is_none(), "cut at {cut}");
        }
        // Every byte changed in turn: refused, or read as some other tree, never a panic.
        let mut damaged = section.clone();
        for i in 0..damaged.len() {
            let was = damaged[i];
            damaged[i] = was.wrapping_add(0x55);
            let _ = decode(&damaged, &chart);
            damaged[i] = 0xff;
            let _ = decode(&damaged, &chart);
            damaged[i] = was;
        }
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
        let mut r = Reader {
            b: &w.out,
            text: "",
            depth: 0,
        };
        assert!(r.pipe().is_none());
    }
}
