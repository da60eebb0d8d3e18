//! Execution of parsed templates with Go's semantics (src/text/template/exec.go): pipelines
//! and their final argument, field chains on maps with `missingkey=zero` (Helm's option,
//! `pkg/engine/engine.go`), variables and their scopes, `if`/`with`/`range` (maps in key order,
//! ints, `break`/`continue`), `template`, and Helm's `include` and `tpl` (engine.go
//! `includeFun`, `tplFun`), all within this engine's bounds.

use std::collections::HashMap;
use std::sync::Arc;

use super::funcs::{self, FnError};
use super::parse::{parse_file, Arg, Body, Branch, Node, Pipe, Tree};
use super::value::{sprint, Obj, Value};
use super::{line_col, ErrorKind, TemplateError};

/// Helm's bound on how often one name may be included within itself (engine.go
/// `recursionMaxNums`).
pub const MAX_INCLUDE_PER_NAME: usize = 1000;
/// How deep `template`/`include`/`tpl` calls may nest in all: Helm's per-name bound, over
/// all names (Go's own `maxExecDepth` is far larger, but a chart never nests more than a
/// handful of levels, and each level costs stack).
pub const MAX_CALL_DEPTH: usize = 1000;
/// Bytes one render may write in all (every file, `include` buffers counted too). Cilium's
/// largest render writes about 2 MB.
pub const MAX_OUTPUT_BYTES: usize = 64 << 20;
/// Range iterations in one render. Cilium's renders take a few thousand.
pub const MAX_ITERATIONS: u64 = 1_000_000;
/// Actions and commands evaluated in one render: recursion through `tpl` text from values
/// could otherwise branch exponentially. Cilium's renders take a few hundred thousand.
pub const MAX_STEPS: u64 = 50_000_000;

pub type Templates = HashMap<String, Arc<Tree>>;

/// What one render carries across the templates it executes.
pub struct Ctx<'s> {
    pub base: &'s Templates,
    /// Definitions made by `tpl` text, visible while that text runs (Helm clones the set).
    overlay: Vec<Templates>,
    include_counts: HashMap<String, usize>,
    depth: usize,
    pub out_left: usize,
    pub iter_left: u64,
    pub steps_left: u64,
    /// The `.Values` map, which in Helm is a `common.Values` with methods (`AsMap`, `YAML`,
    /// `Table`) that take precedence over its keys (exec.go `evalField` tries methods first).
    pub values_root: Option<std::rc::Rc<std::cell::RefCell<super::value::Map>>>,
}

enum Flow {
    Break,
    Continue,
    Err(Box<TemplateError>),
}

impl From<TemplateError> for Flow {
    fn from(e: TemplateError) -> Flow {
        Flow::Err(Box::new(e))
    }
}

type R<T> = Result<T, Flow>;

impl<'s> Ctx<'s> {
    pub fn new(base: &'s Templates) -> Ctx<'s> {
        Ctx {
            base,
            overlay: Vec::new(),
            include_counts: HashMap::new(),
            depth: 0,
            out_left: MAX_OUTPUT_BYTES,
            iter_left: MAX_ITERATIONS,
            steps_left: MAX_STEPS,
            values_root: None,
        }
    }

    fn lookup(&self, name: &str) -> Option<Arc<Tree>> {
        for o in self.overlay.iter().rev() {
            if let Some(t) = o.get(name) {
                return Some(t.clone());
            }
        }
        self.base.get(name).cloned()
    }

    /// Executes the template `name` with `dot` (Go's `ExecuteTemplate`), appending to `out`.
    pub fn execute(
        &mut self,
        name: &str,
        dot: &Value,
        out: &mut String,
    ) -> Result<(), TemplateError> {
        let Some(tree) = self.lookup(name) else {
            return Err(TemplateError {
                kind: ErrorKind::Exec,
                file: name.to_string(),
                line: 0,
                column: 0,
                message: format!("no template {name:?} associated with template \"gotpl\""),
            });
        };
        self.run(&tree, dot, out)
    }

    fn run(&mut self, tree: &Tree, dot: &Value, out: &mut String) -> Result<(), TemplateError> {
        if self.depth >= MAX_CALL_DEPTH {
            return Err(TemplateError {
                kind: ErrorKind::Limit,
                file: tree.file.to_string(),
                line: 0,
                column: 0,
                message: format!(
                    "templates nest more than {MAX_CALL_DEPTH} calls deep (executing {:?})",
                    tree.name
                ),
            });
        }
        self.depth += 1;
        let mut st = State {
            ctx: self,
            tree,
            vars: vec![(Arc::from("$"), dot.clone())],
        };
        let r = st.walk_list(dot, &tree.root, out);
        self.depth -= 1;
        match r {
            Ok(()) => Ok(()),
            Err(Flow::Err(e)) => Err(*e),
            Err(_) => Ok(()),
        }
    }
}

struct State<'c, 's, 't> {
    ctx: &'c mut Ctx<'s>,
    tree: &'t Tree,
    vars: Vec<(Arc<str>, Value)>,
}

impl State<'_, '_, '_> {
    fn err(&self, pos: usize, kind: ErrorKind, message: String) -> Flow {
        let (line, column) = line_col(&self.tree.src, pos);
        Flow::Err(Box::new(TemplateError {
            kind,
            file: self.tree.file.to_string(),
            line,
            column,
            message,
        }))
    }

    fn exec_err(&self, pos: usize, message: String) -> Flow {
        self.err(
            pos,
            ErrorKind::Exec,
            format!("executing {:?}: {message}", self.tree.name),
        )
    }

    fn step(&mut self, pos: usize) -> R<()> {
        if self.ctx.steps_left == 0 {
            return Err(self.err(
                pos,
                ErrorKind::Limit,
                format!("the render took more than {MAX_STEPS} steps"),
            ));
        }
        self.ctx.steps_left -= 1;
        Ok(())
    }

    fn write(&mut self, pos: usize, out: &mut String, s: &str) -> R<()> {
        if s.len() > self.ctx.out_left {
            return Err(self.err(
                pos,
                ErrorKind::Limit,
                format!("the render wrote more than {MAX_OUTPUT_BYTES} bytes"),
            ));
        }
        self.ctx.out_left -= s.len();
        out.push_str(s);
        Ok(())
    }

    fn walk_list(&mut self, dot: &Value, list: &Body, out: &mut String) -> R<()> {
        // A body a compiled chart holds is read here, the first time it runs; the file's CRC
        // was checked when it was loaded, so only a forged file fails here.
        let Some(nodes) = list.nodes() else {
            return Err(self.err(
                0,
                ErrorKind::Exec,
                format!(
                    "the compiled chart holding template {:?} is damaged: remove the folder of \
                     compiled charts (${}, or ~/.cache/cilium-cmp/compiled) and render again",
                    self.tree.name,
                    crate::chart::compiled::DIR_VAR
                ),
            ));
        };
        for n in nodes {
            self.walk(dot, n, out)?;
        }
        Ok(())
    }

    fn walk(&mut self, dot: &Value, node: &Node, out: &mut String) -> R<()> {
        match node {
            Node::Text(t) => {
                let tree = self.tree;
                self.write(0, out, tree.src.get(t.clone()).unwrap_or(""))
            }
            Node::Action(pipe) => {
                self.step(pipe.pos)?;
                let v = self.eval_pipe(dot, pipe)?;
                if pipe.decl.is_empty() {
                    // exec.go `printValue`: a nil (missing key, nil value) prints `<no value>`.
                    let s = match &v {
                        Value::Nil => "<no value>".to_string(),
                        Value::Obj(o) => match &**o {
                            super::value::Obj::KubeVersion { normalized, .. } => normalized.clone(),
                            _ => sprint(&v),
                        },
                        other => sprint(other),
                    };
                    if super::value::clock_leaked() {
                        return Err(self.clock_err(pipe.pos));
                    }
                    self.write(pipe.pos, out, &s)?;
                }
                Ok(())
            }
            Node::If(b) | Node::With(b) => {
                let is_with = matches!(node, Node::With(_));
                let mark = self.vars.len();
                let r = self.walk_if_with(dot, b, is_with, out);
                self.vars.truncate(mark);
                r
            }
            Node::Range(b) => {
                let mark = self.vars.len();
                let r = self.walk_range(dot, b, out);
                self.vars.truncate(mark);
                r
            }
            Node::Template { pos, name, pipe } => {
                self.step(*pos)?;
                let new_dot = match pipe {
                    Some(p) => {
                        let mark = self.vars.len();
                        let v = self.eval_pipe(dot, p);
                        self.vars.truncate(mark);
                        v?
                    }
                    None => Value::Nil,
                };
                let Some(tree) = self.ctx.lookup(name) else {
                    return Err(self.exec_err(
                        *pos,
                        format!(
                            "template: no template {name:?} associated with template \"gotpl\""
                        ),
                    ));
                };
                self.ctx.run(&tree, &new_dot, out).map_err(Flow::from)
            }
            Node::Break(_) => Err(Flow::Break),
            Node::Continue(_) => Err(Flow::Continue),
        }
    }

    fn walk_if_with(&mut self, dot: &Value, b: &Branch, is_with: bool, out: &mut String) -> R<()> {
        self.step(b.pos)?;
        let v = self.eval_pipe(dot, &b.pipe)?;
        if v.truthy() {
            let d = if is_with { v } else { dot.clone() };
            self.walk_list(&d, &b.list, out)
        } else if let Some(e) = &b.else_list {
            self.walk_list(dot, e, out)
        } else {
            Ok(())
        }
    }

    fn walk_range(&mut self, dot: &Value, b: &Branch, out: &mut String) -> R<()> {
        self.step(b.pos)?;
        let v = self.eval_pipe(dot, &b.pipe)?;
        let mark = self.vars.len();
        let items: Vec<(Value, Value)> = match &v {
            Value::List(l) => l
                .iter()
                .enumerate()
                .map(|(i, x)| (Value::Int(i as i64), x.clone()))
                .collect(),
            Value::Map(m) => m
                .borrow()
                .iter()
                .map(|(k, x)| (Value::str(k), x.clone()))
                .collect(),
            Value::Obj(o) => match &**o {
                Obj::Files(f) => f
                    .iter()
                    .map(|(k, x)| {
                        (
                            Value::str(k),
                            Value::string(String::from_utf8_lossy(x).into_owned()),
                        )
                    })
                    .collect(),
                Obj::ApiVersions(l) => l
                    .iter()
                    .enumerate()
                    .map(|(i, x)| (Value::Int(i as i64), Value::str(x)))
                    .collect(),
                Obj::Semver(_) | Obj::Time(_) | Obj::KubeVersion { .. } => {
                    return Err(
                        self.exec_err(b.pos, format!("range can't iterate over {}", v.type_name()))
                    )
                }
            },
            Value::Int(n) => {
                if b.pipe.decl.len() > 1 {
                    return Err(self.exec_err(
                        b.pos,
                        "can't use a range over an integer with two variables".into(),
                    ));
                }
                if (*n as u64) > self.ctx.iter_left && *n > 0 {
                    return Err(self.err(
                        b.pos,
                        ErrorKind::Limit,
                        format!("range over {n}: more than {MAX_ITERATIONS} iterations"),
                    ));
                }
                (0..(*n).max(0))
                    .map(|i| (Value::Int(i), Value::Int(i)))
                    .collect()
            }
            Value::Nil => Vec::new(),
            other => {
                return Err(
                    self.exec_err(b.pos, format!("range can't iterate over {}", sprint(other)))
                )
            }
        };
        if items.is_empty() {
            if let Some(e) = &b.else_list {
                return self.walk_list(dot, e, out);
            }
            return Ok(());
        }
        for (index, elem) in items {
            if self.ctx.iter_left == 0 {
                return Err(self.err(
                    b.pos,
                    ErrorKind::Limit,
                    format!("the render ran more than {MAX_ITERATIONS} loop iterations"),
                ));
            }
            self.ctx.iter_left -= 1;
            let d = &b.pipe.decl;
            if !d.is_empty() {
                if b.pipe.is_assign {
                    if d.len() > 1 {
                        self.set_var(&d[0], index.clone());
                        self.set_var(&d[1], elem.clone());
                    } else {
                        self.set_var(&d[0], elem.clone());
                    }
                } else {
                    let n = self.vars.len();
                    if d.len() > 1 {
                        self.vars[n - 2].1 = index.clone();
                    }
                    self.vars[n - 1].1 = elem.clone();
                }
            }
            let inner = self.vars.len();
            let r = self.walk_list(&elem, &b.list, out);
            self.vars.truncate(inner);
            match r {
                Ok(()) | Err(Flow::Continue) => {}
                Err(Flow::Break) => break,
                Err(e) => return Err(e),
            }
        }
        let _ = mark;
        Ok(())
    }

    fn set_var(&mut self, name: &str, v: Value) {
        if let Some(slot) = self.vars.iter_mut().rev().find(|(n, _)| **n == *name) {
            slot.1 = v;
        }
    }

    fn var(&self, pos: usize, name: &str) -> R<Value> {
        match self.vars.iter().rev().find(|(n, _)| **n == *name) {
            Some((_, v)) => Ok(v.clone()),
            None => Err(self.exec_err(pos, format!("undefined variable: {name}"))),
        }
    }

    fn eval_pipe(&mut self, dot: &Value, pipe: &Pipe) -> R<Value> {
        let mut val: Option<Value> = None;
        for cmd in &pipe.cmds {
            self.step(cmd.pos)?;
            val = Some(self.eval_cmd(dot, &cmd.args, cmd.pos, val)?);
        }
        let v = val.unwrap_or(Value::Nil);
        if pipe.is_assign {
            for d in &pipe.decl {
                self.set_var(d, v.clone());
            }
        } else {
            for d in &pipe.decl {
                self.vars.push((d.clone(), v.clone()));
            }
        }
        Ok(v)
    }

    fn not_a_function(&self, pos: usize, args: &[Arg], fin: &Option<Value>) -> R<()> {
        if args.len() > 1 || fin.is_some() {
            return Err(self.exec_err(pos, "can't give argument to non-function".into()));
        }
        Ok(())
    }

    fn eval_cmd(&mut self, dot: &Value, args: &[Arg], pos: usize, fin: Option<Value>) -> R<Value> {
        match &args[0] {
            Arg::Field(p, idents) => {
                self.field_chain(dot, dot.clone(), idents, &args[1..], fin, *p)
            }
            Arg::Chain(p, node, idents) => {
                let recv = self.eval_arg(dot, node)?;
                self.field_chain(dot, recv, idents, &args[1..], fin, *p)
            }
            Arg::Variable(p, name, idents) => {
                let v = self.var(*p, name)?;
                if idents.is_empty() {
                    self.not_a_function(*p, args, &fin)?;
                    return Ok(v);
                }
                self.field_chain(dot, v, idents, &args[1..], fin, *p)
            }
            Arg::Pipe(p) => {
                self.not_a_function(pos, args, &fin)?;
                self.eval_pipe(dot, p)
            }
            Arg::Ident(p, name) => self.call(dot, *p, name, &args[1..], fin),
            Arg::Nil(p) => Err(self.exec_err(*p, "nil is not a command".into())),
            other => {
                self.not_a_function(pos, args, &fin)?;
                self.eval_arg(dot, other)
            }
        }
    }

    fn eval_arg(&mut self, dot: &Value, arg: &Arg) -> R<Value> {
        Ok(match arg {
            Arg::Field(p, idents) => self.field_chain(dot, dot.clone(), idents, &[], None, *p)?,
            Arg::Chain(p, node, idents) => {
                let recv = self.eval_arg(dot, node)?;
                self.field_chain(dot, recv, idents, &[], None, *p)?
            }
            Arg::Variable(p, name, idents) => {
                let v = self.var(*p, name)?;
                if idents.is_empty() {
                    v
                } else {
                    self.field_chain(dot, v, idents, &[], None, *p)?
                }
            }
            Arg::Pipe(p) => {
                let mark = self.vars.len();
                let v = self.eval_pipe(dot, p);
                self.vars.truncate(mark);
                v?
            }
            Arg::Ident(p, name) => self.call(dot, *p, name, &[], None)?,
            Arg::Dot(_) => dot.clone(),
            Arg::Nil(_) => Value::Nil,
            Arg::Bool(b) => Value::Bool(*b),
            Arg::Number(n) => {
                if n.is_float {
                    Value::Float(n.float.unwrap_or(0.0))
                } else {
                    match n.int {
                        Some(i) => Value::Int(i),
                        None => Value::Float(n.float.unwrap_or(0.0)),
                    }
                }
            }
            Arg::Str(s) => Value::Str(s.clone()),
        })
    }

    fn field_chain(
        &mut self,
        dot: &Value,
        mut recv: Value,
        idents: &[String],
        args: &[Arg],
        fin: Option<Value>,
        pos: usize,
    ) -> R<Value> {
        // A nil receiver at the start of a chain (a variable, dot or parenthesized pipeline
        // holding nil: an invalid reflect.Value in Go) gives nil for the whole chain; a nil
        // found by a lookup inside the chain is a nil interface, and a field of it is an
        // error (exec.go `evalField`: "nil pointer evaluating interface {}.x"). The chart
        // relies on both: `($cluster.tls).cert` with `tls` null.
        if matches!(recv, Value::Nil) {
            return Ok(Value::Nil);
        }
        let n = idents.len();
        for (i, name) in idents.iter().enumerate() {
            if i + 1 < n {
                recv = self.field(dot, name, &[], None, recv, pos)?;
            } else {
                return self.field(dot, name, args, fin, recv, pos);
            }
        }
        Ok(recv)
    }

    fn field(
        &mut self,
        dot: &Value,
        name: &str,
        args: &[Arg],
        fin: Option<Value>,
        recv: Value,
        pos: usize,
    ) -> R<Value> {
        match &recv {
            Value::Map(m)
                if self
                    .ctx
                    .values_root
                    .as_ref()
                    .is_some_and(|r| std::rc::Rc::ptr_eq(r, m))
                    && matches!(name, "AsMap" | "YAML" | "Table") =>
            {
                let mut vals = Vec::with_capacity(args.len() + 1);
                for a in args {
                    vals.push(self.eval_arg(dot, a)?);
                }
                if let Some(f) = fin {
                    vals.push(f);
                }
                funcs::values_method(&recv, name, vals).map_err(|e| self.fn_err(pos, name, e))
            }
            Value::Map(m) => {
                if !args.is_empty() || fin.is_some() {
                    return Err(
                        self.exec_err(pos, format!("{name} is not a method but has arguments"))
                    );
                }
                Ok(m.borrow().get(name).cloned().unwrap_or(Value::Nil))
            }
            Value::Nil => {
                Err(self.exec_err(pos, format!("nil pointer evaluating interface {{}}.{name}")))
            }
            Value::Obj(o) => {
                let mut vals = Vec::with_capacity(args.len() + 1);
                for a in args {
                    vals.push(self.eval_arg(dot, a)?);
                }
                if let Some(f) = fin {
                    vals.push(f);
                }
                funcs::method(o, name, vals).map_err(|e| self.fn_err(pos, name, e))
            }
            other => Err(self.exec_err(
                pos,
                format!("can't evaluate field {name} in type {}", other.type_name()),
            )),
        }
    }

    fn fn_err(&self, pos: usize, name: &str, e: FnError) -> Flow {
        match e.kind {
            ErrorKind::Exec => self.exec_err(pos, format!("error calling {name}: {}", e.message)),
            kind => self.err(pos, kind, e.message),
        }
    }

    fn call(
        &mut self,
        dot: &Value,
        pos: usize,
        name: &str,
        args: &[Arg],
        fin: Option<Value>,
    ) -> R<Value> {
        // `and` and `or` evaluate their operands only as far as needed (Go 1.18+, funcs.go).
        if name == "and" || name == "or" {
            if args.is_empty() && fin.is_none() {
                return Err(self.exec_err(
                    pos,
                    format!("wrong number of args for {name}: want at least 1 got 0"),
                ));
            }
            let mut last = Value::Nil;
            for a in args {
                last = self.eval_arg(dot, a)?;
                if last.truthy() != (name == "and") {
                    return Ok(last);
                }
            }
            if let Some(f) = fin {
                last = f;
            }
            return Ok(last);
        }
        let mut vals = Vec::with_capacity(args.len() + 1);
        for a in args {
            vals.push(self.eval_arg(dot, a)?);
        }
        if let Some(f) = fin {
            vals.push(f);
        }
        match name {
            "include" => self.include(pos, vals),
            "tpl" => self.tpl(pos, vals),
            // `.Values` itself is Helm's named map type (`common.Values`), which Sprig's
            // reflection names as such; every map below it is a plain map.
            "typeOf" if vals.len() == 1 && self.is_values_root(&vals[0]) => {
                Ok(Value::str("common.Values"))
            }
            "typeIs" if vals.len() == 2 && self.is_values_root(&vals[1]) => {
                Ok(Value::Bool(vals[0].as_str() == Some("common.Values")))
            }
            _ => {
                let r = funcs::call(name, vals).map_err(|e| self.fn_err(pos, name, e));
                if super::value::clock_leaked() {
                    return Err(self.clock_err(pos));
                }
                r
            }
        }
    }

    /// The chart's own `fail`/`required` reached through `include` or `tpl` is reported at the
    /// call: Go wraps a function's error with the calling action's place (exec.go `evalCall`,
    /// "error calling include: ..."), and Helm prints the outermost place with the innermost
    /// message (engine.go `cleanupExecError`). Through `{{ template }}`, which is no function
    /// call, the place stays the failing action's.
    fn at_call(&self, pos: usize, e: TemplateError) -> Flow {
        if e.kind != ErrorKind::Fail {
            return Flow::from(e);
        }
        let (line, column) = line_col(&self.tree.src, pos);
        Flow::from(TemplateError {
            file: self.tree.file.to_string(),
            line,
            column,
            ..e
        })
    }

    fn is_values_root(&self, v: &Value) -> bool {
        match (v, &self.ctx.values_root) {
            (Value::Map(m), Some(r)) => std::rc::Rc::ptr_eq(m, r),
            _ => false,
        }
    }

    fn clock_err(&self, pos: usize) -> Flow {
        self.err(
            pos,
            ErrorKind::NonDeterministic { function: "now".into() },
            "function \"now\" is not evaluated here: its time would reach the output, which would then depend on the clock".into(),
        )
    }

    fn include(&mut self, pos: usize, vals: Vec<Value>) -> R<Value> {
        let [name, data]: [Value; 2] = vals.try_into().map_err(|v: Vec<Value>| {
            self.exec_err(
                pos,
                format!("wrong number of args for include: want 2 got {}", v.len()),
            )
        })?;
        let Value::Str(name) = name else {
            return Err(self.exec_err(
                pos,
                format!(
                    "wrong type for value; expected string; got {}",
                    name.type_name()
                ),
            ));
        };
        let count = self.ctx.include_counts.entry(name.to_string()).or_insert(0);
        if *count > MAX_INCLUDE_PER_NAME {
            return Err(self.err(
                pos,
                ErrorKind::Limit,
                format!("rendering template has a nested reference name: {name}: unable to execute template"),
            ));
        }
        *count += 1;
        let mut buf = String::new();
        let r = match self.ctx.lookup(&name) {
            Some(tree) => self.ctx.run(&tree, &data, &mut buf),
            None => {
                if let Some(c) = self.ctx.include_counts.get_mut(&*name) {
                    *c -= 1;
                }
                return Err(self.exec_err(pos, format!("error calling include: template: no template {name:?} associated with template \"gotpl\"")));
            }
        };
        if let Some(c) = self.ctx.include_counts.get_mut(&*name) {
            *c -= 1;
        }
        r.map_err(|e| self.at_call(pos, e))?;
        Ok(Value::string(buf))
    }

    fn tpl(&mut self, pos: usize, vals: Vec<Value>) -> R<Value> {
        let [text, data]: [Value; 2] = vals.try_into().map_err(|v: Vec<Value>| {
            self.exec_err(
                pos,
                format!("wrong number of args for tpl: want 2 got {}", v.len()),
            )
        })?;
        let Value::Str(text) = text else {
            return Err(self.exec_err(
                pos,
                format!(
                    "wrong type for value; expected string; got {}",
                    text.type_name()
                ),
            ));
        };
        // Helm parses the text as a new body of the root template "gotpl" in a clone of the set
        // (engine.go `tplFun`); its defines are seen only while it runs.
        let trees = parse_file("gotpl", &text, &funcs::is_function).map_err(|e| {
            let mut e = e;
            e.message = format!("cannot parse template {:?}: {}", short(&text), e.message);
            Flow::from(e)
        })?;
        let mut overlay = Templates::new();
        let mut body = None;
        for t in trees {
            if t.name == "gotpl" {
                body = Some(Arc::new(t));
            } else if !super::parse::is_empty_tree(&t) || !overlay.contains_key(&t.name) {
                overlay.insert(t.name.clone(), Arc::new(t));
            }
        }
        self.ctx.overlay.push(overlay);
        let mut buf = String::new();
        let r = match &body {
            Some(b) => self.ctx.run(b, &data, &mut buf),
            None => Ok(()),
        };
        self.ctx.overlay.pop();
        let r = r.map_err(|e| match self.at_call(pos, e) {
            Flow::Err(e) => *e,
            _ => unreachable!("at_call returns an error"),
        });
        r.map_err(|mut e| {
            if e.kind == ErrorKind::Exec {
                e.message = format!(
                    "error during tpl function execution for {:?}: {}",
                    short(&text),
                    e.message
                );
            }
            Flow::from(e)
        })?;
        Ok(Value::string(buf.replace("<no value>", "")))
    }
}

/// The start of a long text, for error messages.
fn short(s: &str) -> String {
    if s.chars().count() <= 80 {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(77).collect();
        t.push_str("...");
        t
    }
}
