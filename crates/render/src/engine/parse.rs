//! The parser of Go's `text/template` (src/text/template/parse/parse.go, node.go): a file's
//! body and its `{{define}}`s as trees, pipelines and commands, variable scopes checked as
//! Go checks them (an undefined `$x` is a parse error), functions checked against the set the
//! engine knows.

use std::sync::Arc;

use super::lex::{lex, Tok, Token};
use super::TemplateError;

/// One parsed template (a file's body, or a `define`), with the text its positions point into.
#[derive(Debug)]
pub struct Tree {
    pub name: String,
    /// The file it was parsed from: what error positions name (Go's `ParseName`).
    pub file: Arc<str>,
    pub src: Arc<str>,
    pub root: Body,
}

/// A list of nodes (a tree's root, a branch's body): parsed from the text, or left in a compiled
/// chart's section until it first runs (`compiled::Lazy`). A process renders once, and most
/// bodies of the chart belong to features its values leave off (every `if` not taken), so
/// reading only what runs saves most of the section's decoding (ARCHITECTURE.md, "Performance").
pub struct Body {
    nodes: std::sync::OnceLock<Option<Vec<Node>>>,
    // Boxed: most bodies of a parse have none, and a node holds two bodies.
    compiled: Option<Box<super::compiled::Lazy>>,
}

impl Body {
    /// Nodes the parser made.
    pub fn new(nodes: Vec<Node>) -> Body {
        Body {
            nodes: std::sync::OnceLock::from(Some(nodes)),
            compiled: None,
        }
    }

    /// Nodes still in a compiled section, read on first use.
    pub(super) fn compiled(lazy: super::compiled::Lazy) -> Body {
        Body {
            nodes: std::sync::OnceLock::new(),
            compiled: Some(Box::new(lazy)),
        }
    }

    /// The nodes; None only when they come from a compiled section that is damaged.
    pub fn nodes(&self) -> Option<&[Node]> {
        self.nodes
            .get_or_init(|| {
                self.compiled
                    .as_deref()
                    .and_then(super::compiled::Lazy::read)
            })
            .as_deref()
    }
}

impl std::fmt::Debug for Body {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.nodes.get() {
            Some(Some(nodes)) => nodes.fmt(f),
            Some(None) => f.write_str("Body(damaged)"),
            None => f.write_str("Body(not read yet)"),
        }
    }
}

#[derive(Debug)]
pub enum Node {
    /// Text between actions: where it lies in the tree's `src` (the lexer's text is always a
    /// slice of the source, trim markers only narrow it), so text is never copied.
    Text(std::ops::Range<usize>),
    Action(Pipe),
    If(Branch),
    With(Branch),
    Range(Branch),
    Template {
        pos: usize,
        name: String,
        pipe: Option<Pipe>,
    },
    Break(usize),
    Continue(usize),
}

#[derive(Debug)]
pub struct Branch {
    pub pos: usize,
    pub pipe: Pipe,
    pub list: Body,
    pub else_list: Option<Body>,
}

#[derive(Debug)]
pub struct Pipe {
    pub pos: usize,
    pub decl: Vec<Arc<str>>,
    pub is_assign: bool,
    pub cmds: Vec<Cmd>,
}

#[derive(Debug)]
pub struct Cmd {
    pub pos: usize,
    pub args: Vec<Arg>,
}

#[derive(Debug, Clone)]
pub struct Num {
    pub int: Option<i64>,
    pub float: Option<f64>,
    /// Whether exec makes it a float64 (exec.go `idealConstant`: a float written with `.`,
    /// `e` or `p`), else an int.
    pub is_float: bool,
    pub text: String,
}

#[derive(Debug)]
pub enum Arg {
    Field(usize, Vec<String>),
    Variable(usize, String, Vec<String>),
    Chain(usize, Box<Arg>, Vec<String>),
    Dot(usize),
    Nil(usize),
    Bool(bool),
    Number(Num),
    Str(Arc<str>),
    Ident(usize, String),
    Pipe(Box<Pipe>),
}

/// How deep control structures and parentheses may nest in one template: `tpl` parses text
/// from values, which a hostile values file could nest without end.
pub const MAX_PARSE_NESTING: usize = 100;

struct Parser<'a> {
    name: &'a str,
    src: &'a str,
    toks: Vec<Token<'a>>,
    i: usize,
    vars: Vec<String>,
    depth: usize,
    range_depth: usize,
    is_func: &'a dyn Fn(&str) -> bool,
}

/// Parses one file: its body under `name` and every `define`/`block` in it.
pub fn parse_file(
    name: &str,
    src: &str,
    is_func: &dyn Fn(&str) -> bool,
) -> Result<Vec<Tree>, TemplateError> {
    let toks = lex(name, src)?;
    let mut p = Parser {
        name,
        src,
        toks,
        i: 0,
        vars: vec!["$".into()],
        depth: 0,
        range_depth: 0,
        is_func,
    };
    let file: Arc<str> = Arc::from(name);
    let srca: Arc<str> = Arc::from(src);
    let mut trees = Vec::new();
    let mut body = Vec::new();
    loop {
        match &p.peek().tok {
            Tok::Eof => break,
            Tok::Left if matches!(p.peek_non_space_at(p.i + 1), Tok::Define) => {
                p.advance();
                p.next_non_space();
                let (tname, list) = p.definition(&file, &srca)?;
                trees.push(Tree {
                    name: tname,
                    file: file.clone(),
                    src: srca.clone(),
                    root: Body::new(list),
                });
            }
            _ => {
                let n = p.text_or_action(&mut trees, &file, &srca)?;
                match n {
                    Item::Node(n) => body.push(n),
                    Item::End(pos) => return Err(p.err(pos, "unexpected {{end}}")),
                    Item::Else(pos, _) => return Err(p.err(pos, "unexpected {{else}}")),
                }
            }
        }
    }
    trees.push(Tree {
        name: name.to_string(),
        file,
        src: srca,
        root: Body::new(body),
    });
    Ok(trees)
}

/// Whether a tree holds only space text: Go keeps an earlier definition over such a one
/// (template.go `AddParseTree` via `parse.IsEmptyTree`).
pub fn is_empty_tree(tree: &Tree) -> bool {
    tree.root.nodes().is_some_and(|nodes| {
        nodes.iter().all(|n| match n {
            Node::Text(t) => tree.src.get(t.clone()).is_some_and(|t| t.trim().is_empty()),
            _ => false,
        })
    })
}

enum Item<'a> {
    Node(Node),
    End(usize),
    Else(usize, Option<Tok<'a>>),
}

impl<'a> Parser<'a> {
    fn err(&self, pos: usize, msg: &str) -> TemplateError {
        TemplateError::parse(self.name, self.src, pos, msg.to_string())
    }

    fn peek(&self) -> &Token<'a> {
        &self.toks[self.i.min(self.toks.len() - 1)]
    }

    fn peek_non_space_at(&self, mut i: usize) -> Tok<'a> {
        while i < self.toks.len() && self.toks[i].tok == Tok::Space {
            i += 1;
        }
        self.toks.get(i).map(|t| t.tok.clone()).unwrap_or(Tok::Eof)
    }

    fn next(&mut self) -> Token<'a> {
        let t = self.peek().clone();
        self.advance();
        t
    }

    /// Moves past the current token without copying it (most callers only skip it).
    fn advance(&mut self) {
        if self.i < self.toks.len() {
            self.i += 1;
        }
    }

    fn next_non_space(&mut self) -> Token<'a> {
        loop {
            let t = self.next();
            if t.tok != Tok::Space {
                return t;
            }
        }
    }

    fn peek_non_space(&mut self) -> Token<'a> {
        while self.peek().tok == Tok::Space {
            self.i += 1;
        }
        self.peek().clone()
    }

    fn expect_right(&mut self, ctx: &str) -> Result<(), TemplateError> {
        let t = self.next_non_space();
        if t.tok != Tok::Right {
            return Err(self.err(t.pos, &format!("unexpected {:?} in {ctx}", t.tok)));
        }
        Ok(())
    }

    fn string_arg(&mut self, ctx: &str) -> Result<String, TemplateError> {
        let t = self.next_non_space();
        match t.tok {
            Tok::Str(s) => Ok(s.into_owned()),
            other => Err(self.err(t.pos, &format!("unexpected {other:?} in {ctx}"))),
        }
    }

    /// `{{define "name"}} list {{end}}` (after `define`).
    fn definition(
        &mut self,
        file: &Arc<str>,
        src: &Arc<str>,
    ) -> Result<(String, Vec<Node>), TemplateError> {
        let name = self.string_arg("define clause")?;
        self.expect_right("define clause")?;
        let saved = std::mem::replace(&mut self.vars, vec!["$".into()]);
        let mut dummy = Vec::new();
        let (list, end) = self.item_list(&mut dummy, file, src)?;
        self.vars = saved;
        if let Item::Else(pos, _) = end {
            return Err(self.err(pos, "unexpected {{else}} in define"));
        }
        if !dummy.is_empty() {
            return Err(self.err(self.peek().pos, "unexpected define in define"));
        }
        Ok((name, list))
    }

    /// Nodes up to `{{end}}` or `{{else}}`, which is returned.
    fn item_list(
        &mut self,
        trees: &mut Vec<Tree>,
        file: &Arc<str>,
        src: &Arc<str>,
    ) -> Result<(Vec<Node>, Item<'a>), TemplateError> {
        let mut list = Vec::new();
        loop {
            if self.peek().tok == Tok::Eof {
                return Err(self.err(self.peek().pos, "unexpected EOF"));
            }
            match self.text_or_action(trees, file, src)? {
                Item::Node(n) => list.push(n),
                end => return Ok((list, end)),
            }
        }
    }

    fn text_or_action(
        &mut self,
        trees: &mut Vec<Tree>,
        file: &Arc<str>,
        src: &Arc<str>,
    ) -> Result<Item<'a>, TemplateError> {
        if let Some(Token {
            tok: Tok::Text(s), ..
        }) = self.toks.get(self.i)
        {
            // A slice of `self.src`: its offset is the distance between the two.
            let start = s.as_ptr() as usize - self.src.as_ptr() as usize;
            let text = start..start + s.len();
            self.advance();
            return Ok(Item::Node(Node::Text(text)));
        }
        let t = self.next();
        match t.tok {
            Tok::Left => self.action(trees, file, src),
            other => Err(self.err(t.pos, &format!("unexpected {other:?} in input"))),
        }
    }

    fn action(
        &mut self,
        trees: &mut Vec<Tree>,
        file: &Arc<str>,
        src: &Arc<str>,
    ) -> Result<Item<'a>, TemplateError> {
        let t = self.peek_non_space();
        match t.tok {
            Tok::Block => {
                self.advance();
                // `{{block "name" pipe}} list {{end}}`: a define and a template call.
                let name = self.string_arg("block clause")?;
                let pipe = self.pipeline("block", false)?;
                let saved = std::mem::replace(&mut self.vars, vec!["$".into()]);
                let (list, end) = self.nested(|p| p.item_list(trees, file, src))?;
                self.vars = saved;
                if let Item::Else(pos, _) = end {
                    return Err(self.err(pos, "unexpected {{else}} in block"));
                }
                trees.push(Tree {
                    name: name.clone(),
                    file: file.clone(),
                    src: src.clone(),
                    root: Body::new(list),
                });
                Ok(Item::Node(Node::Template {
                    pos: t.pos,
                    name,
                    pipe: Some(pipe),
                }))
            }
            Tok::Break | Tok::Continue => {
                self.advance();
                if self.range_depth == 0 {
                    return Err(self.err(
                        t.pos,
                        &format!(
                            "{{{{{}}}}} outside {{{{range}}}}",
                            if t.tok == Tok::Break {
                                "break"
                            } else {
                                "continue"
                            }
                        ),
                    ));
                }
                self.expect_right("break/continue")?;
                Ok(Item::Node(if t.tok == Tok::Break {
                    Node::Break(t.pos)
                } else {
                    Node::Continue(t.pos)
                }))
            }
            Tok::Else => {
                self.advance();
                let n = self.peek_non_space();
                match n.tok {
                    Tok::If | Tok::With => Ok(Item::Else(t.pos, Some(n.tok))),
                    _ => {
                        self.expect_right("else")?;
                        Ok(Item::Else(t.pos, None))
                    }
                }
            }
            Tok::End => {
                self.advance();
                self.expect_right("end")?;
                Ok(Item::End(t.pos))
            }
            Tok::If | Tok::With | Tok::Range => {
                self.advance();
                let b = self.nested(|p| p.control(&t.tok, t.pos, trees, file, src))?;
                Ok(Item::Node(b))
            }
            Tok::Template => {
                self.advance();
                let name = self.string_arg("template clause")?;
                let nx = self.peek_non_space();
                let pipe = if nx.tok == Tok::Right {
                    self.advance();
                    None
                } else {
                    Some(self.pipeline("template", false)?)
                };
                Ok(Item::Node(Node::Template {
                    pos: t.pos,
                    name,
                    pipe,
                }))
            }
            Tok::Define => Err(self.err(
                t.pos,
                "unexpected {{define}}: a define must be at the top level",
            )),
            _ => {
                let pipe = self.pipeline("command", false)?;
                Ok(Item::Node(Node::Action(pipe)))
            }
        }
    }

    fn nested<T>(
        &mut self,
        f: impl FnOnce(&mut Self) -> Result<T, TemplateError>,
    ) -> Result<T, TemplateError> {
        self.depth += 1;
        if self.depth > MAX_PARSE_NESTING {
            let pos = self.peek().pos;
            return Err(self.err(
                pos,
                &format!("the template nests more than {MAX_PARSE_NESTING} levels"),
            ));
        }
        let r = f(self);
        self.depth -= 1;
        r
    }

    /// `if`, `with`, `range`: the pipeline, the list, an optional else (with `else if` /
    /// `else with` chains as Go desugars them: a nested node ending at the same `{{end}}`).
    fn control(
        &mut self,
        kind: &Tok<'a>,
        pos: usize,
        trees: &mut Vec<Tree>,
        file: &Arc<str>,
        src: &Arc<str>,
    ) -> Result<Node, TemplateError> {
        let mark = self.vars.len();
        let is_range = *kind == Tok::Range;
        let pipe = self.pipeline(if is_range { "range" } else { "if" }, is_range)?;
        if is_range {
            self.range_depth += 1;
        }
        let (list, end) = self.item_list(trees, file, src)?;
        if is_range {
            self.range_depth -= 1;
        }
        let else_list = match end {
            Item::End(_) => None,
            Item::Else(epos, chained) => match chained {
                Some(ctok) if !is_range => {
                    if ctok != *kind {
                        // `{{if}}...{{else with}}` is allowed only for the same keyword in Go 1.23+.
                        if !(*kind == Tok::With && ctok == Tok::With
                            || *kind == Tok::If && ctok == Tok::If)
                        {
                            return Err(self.err(epos, "unexpected else chain"));
                        }
                    }
                    self.next_non_space();
                    let inner = self.nested(|p| p.control(&ctok, epos, trees, file, src))?;
                    Some(Body::new(vec![inner]))
                }
                Some(_) => return Err(self.err(epos, "unexpected {{else if}} in range")),
                None => {
                    let (l, end2) = self.item_list(trees, file, src)?;
                    if let Item::Else(p2, _) = end2 {
                        return Err(self.err(p2, "expected end; found {{else}}"));
                    }
                    Some(Body::new(l))
                }
            },
            Item::Node(_) => unreachable!("item_list ends on end or else"),
        };
        self.vars.truncate(mark);
        let b = Branch {
            pos,
            pipe,
            list: Body::new(list),
            else_list,
        };
        Ok(match kind {
            Tok::If => Node::If(b),
            Tok::With => Node::With(b),
            _ => Node::Range(b),
        })
    }

    /// A pipeline up to `}}` (or `)` when `in_paren`): optional declarations, commands
    /// joined by `|`.
    fn pipeline(&mut self, ctx: &str, allow_two: bool) -> Result<Pipe, TemplateError> {
        self.pipeline_until(ctx, allow_two, Tok::Right)
    }

    fn pipeline_until(
        &mut self,
        ctx: &str,
        allow_two: bool,
        end: Tok<'a>,
    ) -> Result<Pipe, TemplateError> {
        let start = self.peek_non_space();
        let mut decl: Vec<Arc<str>> = Vec::new();
        let mut is_assign = false;
        // Declarations: `$x :=`, `$x =`, and in range `$i, $v :=`.
        if let Tok::Variable(v) = &start.tok {
            let save = self.i;
            self.advance();
            let after = self.peek_non_space();
            match after.tok {
                Tok::Declare | Tok::Assign => {
                    self.advance();
                    is_assign = after.tok == Tok::Assign;
                    decl.push(Arc::from(*v));
                }
                Tok::Comma if allow_two => {
                    self.advance();
                    let second = self.next_non_space();
                    let Tok::Variable(v2) = second.tok else {
                        return Err(self.err(second.pos, "range can only initialize variables"));
                    };
                    let op = self.next_non_space();
                    if op.tok != Tok::Declare && op.tok != Tok::Assign {
                        return Err(self.err(op.pos, "range can only initialize variables"));
                    }
                    is_assign = op.tok == Tok::Assign;
                    decl.push(Arc::from(*v));
                    decl.push(Arc::from(v2));
                }
                _ => self.i = save,
            }
        }
        if is_assign {
            for v in &decl {
                if !self.vars.iter().any(|x| **x == **v) {
                    return Err(self.err(start.pos, &format!("undefined variable {v:?}")));
                }
            }
        }
        let mut cmds = Vec::new();
        loop {
            let t = self.peek_non_space();
            if t.tok == end {
                self.advance();
                break;
            }
            if t.tok == Tok::Eof || t.tok == Tok::Right || t.tok == Tok::RParen {
                return Err(self.err(t.pos, &format!("unexpected {:?} in {ctx}", t.tok)));
            }
            cmds.push(self.command(&end)?);
            let t = self.peek_non_space();
            if t.tok == Tok::Pipe {
                self.advance();
                continue;
            }
        }
        if cmds.is_empty() {
            return Err(self.err(start.pos, &format!("missing value for {ctx}")));
        }
        for (i, c) in cmds.iter().enumerate() {
            if i > 0 {
                if let Some(
                    Arg::Bool(_) | Arg::Number(_) | Arg::Str(_) | Arg::Nil(_) | Arg::Dot(_),
                ) = c.args.first()
                {
                    return Err(self.err(c.pos, "non executable command in pipeline stage"));
                }
            }
        }
        if !is_assign {
            self.vars.extend(decl.iter().map(|d| d.to_string()));
        }
        Ok(Pipe {
            pos: start.pos,
            decl,
            is_assign,
            cmds,
        })
    }

    fn command(&mut self, end: &Tok<'a>) -> Result<Cmd, TemplateError> {
        let pos = self.peek_non_space().pos;
        let mut args = Vec::new();
        loop {
            let t = self.peek_non_space();
            if t.tok == *end || t.tok == Tok::Pipe {
                break;
            }
            if matches!(t.tok, Tok::Right | Tok::RParen | Tok::Eof) {
                return Err(self.err(t.pos, &format!("unexpected {:?} in operand", t.tok)));
            }
            args.push(self.operand()?);
            // Operands are separated by space (parse.go: "missing space?").
            let n = self.peek().tok.clone();
            match n {
                Tok::Space => {}
                ref x if x == end || *x == Tok::Pipe => {}
                _ => return Err(self.err(self.peek().pos, &format!("unexpected {n:?} in operand"))),
            }
        }
        if args.is_empty() {
            return Err(self.err(pos, "empty command"));
        }
        Ok(Cmd { pos, args })
    }

    fn operand(&mut self) -> Result<Arg, TemplateError> {
        let t = self.next();
        let term = match t.tok {
            Tok::Ident(name) => {
                if !(self.is_func)(name) {
                    return Err(self.err(t.pos, &format!("function {name:?} not defined")));
                }
                Arg::Ident(t.pos, name.to_string())
            }
            Tok::Dot => Arg::Dot(t.pos),
            Tok::Nil => Arg::Nil(t.pos),
            Tok::Variable(v) => {
                if !self.vars.iter().any(|x| x == v) {
                    return Err(self.err(t.pos, &format!("undefined variable {v:?}")));
                }
                Arg::Variable(t.pos, v.to_string(), Vec::new())
            }
            Tok::Field(f) => Arg::Field(t.pos, vec![f.to_string()]),
            Tok::Bool(b) => Arg::Bool(b),
            Tok::Char(c) => Arg::Number(Num {
                int: Some(c),
                float: Some(c as f64),
                is_float: false,
                text: format!("{c}"),
            }),
            Tok::Number(text) => Arg::Number(
                number(text)
                    .ok_or_else(|| self.err(t.pos, &format!("bad number syntax: {text:?}")))?,
            ),
            Tok::Str(s) => Arg::Str(Arc::from(s.as_ref())),
            Tok::LParen => {
                let p = self
                    .nested(|p| p.pipeline_until("parenthesized pipeline", false, Tok::RParen))?;
                Arg::Pipe(Box::new(p))
            }
            other => return Err(self.err(t.pos, &format!("unexpected {other:?} in operand"))),
        };
        if !matches!(self.peek().tok, Tok::Field(_)) {
            return Ok(term);
        }
        let mut fields = Vec::new();
        while let Tok::Field(f) = &self.peek().tok {
            fields.push(f.to_string());
            self.advance();
        }
        Ok(match term {
            Arg::Field(p, mut f) => {
                f.extend(fields);
                Arg::Field(p, f)
            }
            Arg::Variable(p, v, mut f) => {
                f.extend(fields);
                Arg::Variable(p, v, f)
            }
            Arg::Bool(_) | Arg::Str(_) | Arg::Number(_) | Arg::Nil(_) | Arg::Dot(_) => {
                return Err(self.err(t.pos, "unexpected . after term"));
            }
            other => Arg::Chain(t.pos, Box::new(other), fields),
        })
    }
}

/// A number literal's values (parse/node.go `newNumber`, strconv with base prefixes and
/// underscores).
pub fn number(text: &str) -> Option<Num> {
    if text.ends_with('i') {
        return None; // complex numbers: the chart has none; refused rather than mis-evaluated
    }
    let (neg, body) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    if body.starts_with('_') || body.ends_with('_') || body.contains("__") {
        return None;
    }
    let clean = body.replace('_', "");
    let lower = clean.to_ascii_lowercase();
    let int_of = |digits: &str, radix: u32| -> Option<i64> {
        let v = i64::from_str_radix(digits, radix).ok()?;
        Some(if neg { -v } else { v })
    };
    let (int, float, is_float) = if let Some(h) = lower.strip_prefix("0x") {
        if h.contains('p') || h.contains('.') {
            return None; // hex floats: not in any chart
        }
        let i = int_of(h, 16)?;
        (Some(i), Some(i as f64), false)
    } else if let Some(o) = lower.strip_prefix("0o") {
        let i = int_of(o, 8)?;
        (Some(i), Some(i as f64), false)
    } else if let Some(b) = lower.strip_prefix("0b") {
        let i = int_of(b, 2)?;
        (Some(i), Some(i as f64), false)
    } else if lower.contains(['.', 'e']) {
        let f: f64 = clean.parse().ok()?;
        let f = if neg { -f } else { f };
        let int = (f.fract() == 0.0 && f.abs() < 9.2e18).then_some(f as i64);
        (int, Some(f), true)
    } else if lower.len() > 1 && lower.starts_with('0') {
        let i = int_of(&lower[1..], 8)?;
        (Some(i), Some(i as f64), false)
    } else {
        let i = int_of(&lower, 10)?;
        (Some(i), Some(i as f64), false)
    };
    Some(Num {
        int,
        float,
        is_float,
        text: text.to_string(),
    })
}
