//! A small evaluator of Go's text/template, for the files bundled in the chart that the chart
//! runs through Helm's `tpl` (node-init's startup and pre-stop scripts, SPIRE's init scripts).
//! Those files are read from the official archive at run time, never stored here, so their
//! template actions must be evaluated here, following Go's rules exactly.
//!
//! It knows only what those files use: text, `{{ }}` actions with the `{{-`/`-}}` trim markers
//! and comments, `if`/`else if`/`else`/`end`, `.Values` field chains, string, number and boolean
//! constants, parentheses, pipelines (`x | f`), and the functions `and`, `or`, `not`, `eq`,
//! `quote`, `dir` and `include "cilium.namespace" .`. Anything else (`range`, `with`, variables,
//! another function) is refused with the file and the construct named, so a new chart release
//! that needs more fails loudly instead of rendering something else than Helm.

use serde_json::Value;

use crate::limits::MAX_TEMPLATE_NESTING;
use crate::tmpl::{go_quote, path_dir, print, truthy};

/// What a template can see: `.Values` and what `include "cilium.namespace" .` prints.
pub struct Scope<'a> {
    pub values: &'a Value,
    pub namespace: &'a str,
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TplError {
    /// The file uses a construct this evaluator does not implement.
    #[error("{file} uses {construct}, which cilium-cmp's template evaluator does not implement")]
    Unsupported { file: String, construct: String },
    /// The file is not a well-formed template.
    #[error("{file} is not a valid template: {message}")]
    Syntax { file: String, message: String },
    /// Evaluation failed where Helm's fails too (for example a field of a value that is not a
    /// map); `path` is the value the failing action reads, when it reads one.
    #[error("{file}: evaluating {action} fails as in Helm: {message}")]
    Failed {
        file: String,
        action: String,
        path: Option<String>,
        message: String,
    },
}

/// Evaluates `text` (the bundled file `file`) as Helm's `tpl` does, including Helm's removal of
/// every `<no value>` from the result.
pub fn evaluate(file: &str, text: &str, scope: &Scope) -> Result<String, TplError> {
    let pieces = split(file, text)?;
    let (nodes, end) = Parser {
        file,
        pieces: &pieces,
        at: 0,
    }
    .block(0)?;
    if !matches!(end, BlockEnd::File) {
        return Err(TplError::Syntax {
            file: file.to_string(),
            message: "an `else` or `end` without its `if`".into(),
        });
    }
    let mut out = String::with_capacity(text.len());
    Eval { file, scope }.nodes(&nodes, &mut out)?;
    Ok(out.replace("<no value>", ""))
}

// ---------------------------------------------------------------------------------------------
// Splitting the text into literal text and actions, applying the trim markers.

enum Piece {
    Text(String),
    /// The inside of one `{{ }}` (markers and comment removed), and the original for messages.
    Action {
        body: String,
        shown: String,
    },
}

/// Go's template whitespace: what the trim markers remove.
fn is_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\r' | '\n')
}

fn split(file: &str, text: &str) -> Result<Vec<Piece>, TplError> {
    let syntax = |message: String| TplError::Syntax {
        file: file.to_string(),
        message,
    };
    let mut pieces = Vec::new();
    let mut rest = text;
    let mut trim_next = false;
    while let Some(open) = rest.find("{{") {
        let mut before = &rest[..open];
        if trim_next {
            before = before.trim_start_matches(is_space);
        }
        let after_open = &rest[open + 2..];
        // `{{- ` trims only when the dash is followed by a space; `{{-3}}` is the number -3.
        let trim_left = after_open.starts_with('-') && after_open[1..].starts_with(is_space);
        if trim_left {
            before = before.trim_end_matches(is_space);
        }
        pieces.push(Piece::Text(before.to_string()));
        let inner_start = if trim_left { 1 } else { 0 };
        let close = find_close(&after_open[inner_start..]).ok_or_else(|| {
            syntax(format!(
                "unclosed action starting with {:?}",
                excerpt(after_open)
            ))
        })?;
        let mut body = &after_open[inner_start..inner_start + close];
        let trim_right = body.ends_with('-') && body[..body.len() - 1].ends_with(is_space);
        if trim_right {
            body = &body[..body.len() - 1];
        }
        let shown =
            crate::limits::quoted(&format!("{{{{{}}}}}", &after_open[..inner_start + close]));
        let trimmed = body.trim_matches(is_space);
        if trimmed.starts_with("/*") {
            if !trimmed.ends_with("*/") {
                return Err(syntax(format!("unclosed comment in {shown}")));
            }
        } else {
            pieces.push(Piece::Action {
                body: trimmed.to_string(),
                shown,
            });
        }
        trim_next = trim_right;
        rest = &after_open[inner_start + close + 2..];
    }
    let last = if trim_next {
        rest.trim_start_matches(is_space)
    } else {
        rest
    };
    pieces.push(Piece::Text(last.to_string()));
    Ok(pieces)
}

/// The index of the `}}` closing an action, skipping string constants (which may hold `}}`).
fn find_close(s: &str) -> Option<usize> {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'"' => {
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
            }
            b'`' => {
                i += 1;
                while i < b.len() && b[i] != b'`' {
                    i += 1;
                }
            }
            b'}' if b.get(i + 1) == Some(&b'}') => return Some(i),
            _ => {}
        }
        i += 1;
    }
    None
}

fn excerpt(s: &str) -> String {
    crate::limits::quoted(s)
}

// ---------------------------------------------------------------------------------------------
// Tokens and the tree of one file.

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Ident(String),
    /// `.a.b` (keys without the dots); `.` alone is an empty chain.
    Field(Vec<String>),
    Str(String),
    Number(Value),
    Bool(bool),
    Open,
    Close,
    Pipe,
}

#[derive(Debug, Clone)]
enum Operand {
    Dot,
    Field(Vec<String>),
    Const(Value),
    Func(String),
    Nested(Pipeline),
}

type Command = Vec<Operand>;
type Pipeline = Vec<Command>;

#[derive(Debug)]
struct Action {
    pipeline: Pipeline,
    shown: String,
}

#[derive(Debug)]
enum Node {
    Text(String),
    Print(Action),
    /// `if`, its `else if`s, and the final `else` (an empty list when there is none).
    If(Vec<(Action, Vec<Node>)>, Vec<Node>),
}

fn tokens(file: &str, body: &str, shown: &str) -> Result<Vec<Token>, TplError> {
    let unsupported = |construct: String| TplError::Unsupported {
        file: file.to_string(),
        construct,
    };
    let mut out = Vec::new();
    let chars: Vec<char> = body.chars().collect();
    let mut i = 0;
    let ident_char = |c: char| c.is_alphanumeric() || c == '_';
    while i < chars.len() {
        let c = chars[i];
        match c {
            c if is_space(c) => i += 1,
            '(' => {
                out.push(Token::Open);
                i += 1;
            }
            ')' => {
                out.push(Token::Close);
                i += 1;
            }
            '|' => {
                out.push(Token::Pipe);
                i += 1;
            }
            '.' => {
                let mut keys = Vec::new();
                while i < chars.len() && chars[i] == '.' {
                    let start = i + 1;
                    let mut end = start;
                    while end < chars.len() && ident_char(chars[end]) {
                        end += 1;
                    }
                    if end == start {
                        if keys.is_empty() {
                            i = start;
                            break;
                        }
                        return Err(unsupported(format!("the field chain in {shown}")));
                    }
                    keys.push(chars[start..end].iter().collect());
                    i = end;
                }
                out.push(Token::Field(keys));
            }
            '"' => {
                let (s, next) = go_string(&chars, i)
                    .ok_or_else(|| unsupported(format!("the string constant in {shown}")))?;
                out.push(Token::Str(s));
                i = next;
            }
            '`' => {
                let end = chars[i + 1..]
                    .iter()
                    .position(|&c| c == '`')
                    .ok_or_else(|| unsupported(format!("the raw string in {shown}")))?;
                out.push(Token::Str(chars[i + 1..i + 1 + end].iter().collect()));
                i += end + 2;
            }
            c if c.is_ascii_digit()
                || (c == '-' && chars.get(i + 1).is_some_and(char::is_ascii_digit)) =>
            {
                let start = i;
                i += 1;
                while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '.') {
                    i += 1;
                }
                let text: String = chars[start..i].iter().collect();
                out.push(Token::Number(number(&text).ok_or_else(|| {
                    unsupported(format!("the number {text} in {shown}"))
                })?));
            }
            c if ident_char(c) => {
                let start = i;
                while i < chars.len() && ident_char(chars[i]) {
                    i += 1;
                }
                let word: String = chars[start..i].iter().collect();
                out.push(match word.as_str() {
                    "true" => Token::Bool(true),
                    "false" => Token::Bool(false),
                    _ => Token::Ident(word),
                });
            }
            '$' => return Err(unsupported(format!("a variable ({shown})"))),
            other => return Err(unsupported(format!("{other:?} in {shown}"))),
        }
    }
    Ok(out)
}

/// A decimal integer constant (Go's `int`) or float constant (`float64`).
fn number(text: &str) -> Option<Value> {
    if let Ok(i) = text.parse::<i64>() {
        return Some(Value::from(i));
    }
    let f: f64 = text.parse().ok()?;
    serde_json::Number::from_f64(f).map(Value::Number)
}

/// A double-quoted Go string constant starting at `start`, with the common escapes; None for
/// an escape it does not know (refused rather than guessed) or a missing closing quote.
fn go_string(chars: &[char], start: usize) -> Option<(String, usize)> {
    let mut out = String::new();
    let mut i = start + 1;
    while i < chars.len() {
        match chars[i] {
            '"' => return Some((out, i + 1)),
            '\\' => {
                out.push(match chars.get(i + 1)? {
                    'n' => '\n',
                    't' => '\t',
                    'r' => '\r',
                    '\\' => '\\',
                    '"' => '"',
                    _ => return None,
                });
                i += 2;
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    None
}

struct Parser<'a> {
    file: &'a str,
    pieces: &'a [Piece],
    at: usize,
}

/// How a block ended: at the end of the file, or at an `else`/`else if`/`end` action.
enum BlockEnd {
    File,
    Else(Option<Action>),
    End,
}

impl Parser<'_> {
    fn unsupported(&self, construct: String) -> TplError {
        TplError::Unsupported {
            file: self.file.to_string(),
            construct,
        }
    }

    fn syntax(&self, message: String) -> TplError {
        TplError::Syntax {
            file: self.file.to_string(),
            message,
        }
    }

    /// Nodes up to the end of the file or the action closing the enclosing `if`.
    fn block(&mut self, depth: usize) -> Result<(Vec<Node>, BlockEnd), TplError> {
        if depth > MAX_TEMPLATE_NESTING {
            return Err(self.syntax(format!(
                "`if` blocks nested deeper than {MAX_TEMPLATE_NESTING}"
            )));
        }
        let mut nodes = Vec::new();
        while let Some(piece) = self.pieces.get(self.at) {
            self.at += 1;
            let (body, shown) = match piece {
                Piece::Text(t) => {
                    if !t.is_empty() {
                        nodes.push(Node::Text(t.clone()));
                    }
                    continue;
                }
                Piece::Action { body, shown } => (body, shown),
            };
            let toks = tokens(self.file, body, shown)?;
            match toks.first() {
                Some(Token::Ident(word)) if word == "if" => {
                    nodes.push(self.if_block(&toks[1..], shown, depth)?);
                }
                Some(Token::Ident(word)) if word == "else" => {
                    return match toks.get(1) {
                        None => Ok((nodes, BlockEnd::Else(None))),
                        Some(Token::Ident(w)) if w == "if" => {
                            let action = self.action(&toks[2..], shown, depth)?;
                            Ok((nodes, BlockEnd::Else(Some(action))))
                        }
                        Some(_) => {
                            Err(self.unsupported(format!("`else` followed by more ({shown})")))
                        }
                    };
                }
                Some(Token::Ident(word)) if word == "end" => {
                    if toks.len() > 1 {
                        return Err(self.syntax(format!("{shown}: `end` takes nothing")));
                    }
                    return Ok((nodes, BlockEnd::End));
                }
                Some(Token::Ident(word))
                    if matches!(
                        word.as_str(),
                        "range" | "with" | "define" | "template" | "block" | "break" | "continue"
                    ) =>
                {
                    return Err(self.unsupported(format!("`{word}` ({shown})")));
                }
                _ => nodes.push(Node::Print(self.action(&toks, shown, depth)?)),
            }
        }
        Ok((nodes, BlockEnd::File))
    }

    fn if_block(&mut self, cond: &[Token], shown: &str, depth: usize) -> Result<Node, TplError> {
        let mut branches = Vec::new();
        let mut action = self.action(cond, shown, depth)?;
        loop {
            let (body, end) = self.block(depth + 1)?;
            branches.push((action, body));
            match end {
                BlockEnd::End => return Ok(Node::If(branches, Vec::new())),
                BlockEnd::Else(Some(next)) => action = next,
                BlockEnd::Else(None) => {
                    let (otherwise, end) = self.block(depth + 1)?;
                    return match end {
                        BlockEnd::End => Ok(Node::If(branches, otherwise)),
                        _ => Err(self.syntax(format!("the `if` of {shown} has no matching end"))),
                    };
                }
                BlockEnd::File => {
                    return Err(self.syntax(format!("the `if` of {shown} has no matching end")))
                }
            }
        }
    }

    fn action(&self, toks: &[Token], shown: &str, depth: usize) -> Result<Action, TplError> {
        let mut at = 0;
        let pipeline = self.pipeline(toks, &mut at, shown, depth)?;
        if at != toks.len() {
            return Err(self.syntax(format!("{shown}: unexpected `)`")));
        }
        if pipeline.is_empty() {
            return Err(self.syntax(format!("{shown}: missing value")));
        }
        Ok(Action {
            pipeline,
            shown: shown.to_string(),
        })
    }

    fn pipeline(
        &self,
        toks: &[Token],
        at: &mut usize,
        shown: &str,
        depth: usize,
    ) -> Result<Pipeline, TplError> {
        if depth > MAX_TEMPLATE_NESTING {
            return Err(self.syntax(format!(
                "{shown}: nested deeper than {MAX_TEMPLATE_NESTING}"
            )));
        }
        let mut pipeline = Vec::new();
        let mut command = Vec::new();
        while let Some(tok) = toks.get(*at) {
            *at += 1;
            match tok {
                Token::Close => {
                    *at -= 1;
                    break;
                }
                Token::Pipe => {
                    if command.is_empty() {
                        return Err(self.syntax(format!("{shown}: missing command before `|`")));
                    }
                    pipeline.push(std::mem::take(&mut command));
                }
                Token::Open => {
                    let inner = self.pipeline(toks, at, shown, depth + 1)?;
                    if toks.get(*at) != Some(&Token::Close) {
                        return Err(self.syntax(format!("{shown}: unclosed `(`")));
                    }
                    *at += 1;
                    if inner.is_empty() {
                        return Err(self.syntax(format!("{shown}: empty parentheses")));
                    }
                    if matches!(toks.get(*at), Some(Token::Field(keys)) if !keys.is_empty()) {
                        return Err(
                            self.unsupported(format!("a field of a parenthesised value ({shown})"))
                        );
                    }
                    command.push(Operand::Nested(inner));
                }
                Token::Field(keys) if keys.is_empty() => command.push(Operand::Dot),
                Token::Field(keys) => command.push(Operand::Field(keys.clone())),
                Token::Str(s) => command.push(Operand::Const(Value::String(s.clone()))),
                Token::Number(n) => command.push(Operand::Const(n.clone())),
                Token::Bool(b) => command.push(Operand::Const(Value::Bool(*b))),
                Token::Ident(name) => {
                    if !KNOWN_FUNCTIONS.contains(&name.as_str()) {
                        return Err(self.unsupported(format!("the function `{name}` ({shown})")));
                    }
                    if !command.is_empty() {
                        return Err(self.unsupported(format!(
                            "`{name}` as an argument without parentheses ({shown})"
                        )));
                    }
                    command.push(Operand::Func(name.clone()));
                }
            }
        }
        if !command.is_empty() {
            pipeline.push(command);
        } else if !pipeline.is_empty() {
            return Err(self.syntax(format!("{shown}: missing command after `|`")));
        }
        Ok(pipeline)
    }
}

const KNOWN_FUNCTIONS: &[&str] = &["and", "or", "not", "eq", "quote", "dir", "include"];

// ---------------------------------------------------------------------------------------------
// Evaluation.

/// A value during evaluation: `.` (the chart's top-level scope) or a values tree. Go makes no
/// difference between a key set to null and a missing key once a function or `if` sees it, so
/// both are `Null` here.
#[derive(Debug, Clone)]
enum Val {
    Dot,
    V(Value),
}

impl Val {
    fn truthy(&self) -> bool {
        match self {
            Val::Dot => true,
            Val::V(v) => truthy(v),
        }
    }
}

struct Eval<'a> {
    file: &'a str,
    scope: &'a Scope<'a>,
}

/// Go's basic kinds as `eq` sorts its operands.
#[derive(Debug, PartialEq, Clone, Copy)]
enum Kind {
    Nil,
    Bool,
    Int,
    Float,
    Str,
    Other,
}

fn kind(v: &Val) -> Kind {
    match v {
        Val::Dot => Kind::Other,
        Val::V(Value::Null) => Kind::Nil,
        Val::V(Value::Bool(_)) => Kind::Bool,
        Val::V(Value::Number(n)) if n.is_f64() => Kind::Float,
        Val::V(Value::Number(_)) => Kind::Int,
        Val::V(Value::String(_)) => Kind::Str,
        Val::V(_) => Kind::Other,
    }
}

/// Go's type name of a value as error messages print it.
fn type_name(v: &Val) -> &'static str {
    match kind(v) {
        Kind::Nil => "<nil>",
        Kind::Bool => "bool",
        Kind::Int => "int",
        Kind::Float => "float64",
        Kind::Str => "string",
        Kind::Other => match v {
            Val::V(Value::Array(_)) => "[]interface {}",
            _ => "map[string]interface {}",
        },
    }
}

impl Eval<'_> {
    fn fail(&self, action: &Action, message: String) -> TplError {
        TplError::Failed {
            file: self.file.to_string(),
            action: action.shown.clone(),
            path: first_field(&action.pipeline),
            message,
        }
    }

    fn nodes(&self, nodes: &[Node], out: &mut String) -> Result<(), TplError> {
        for node in nodes {
            match node {
                Node::Text(t) => out.push_str(t),
                Node::Print(action) => {
                    let v = self.pipeline(action, &action.pipeline)?;
                    out.push_str(&self.printed(action, &v)?);
                }
                Node::If(branches, otherwise) => {
                    let mut taken = None;
                    for (cond, body) in branches {
                        if self.pipeline(cond, &cond.pipeline)?.truthy() {
                            taken = Some(body);
                            break;
                        }
                    }
                    self.nodes(taken.unwrap_or(otherwise), out)?;
                }
            }
        }
        Ok(())
    }

    /// What `{{ x }}` writes: Go's `%v`, and `<no value>` for nil (which Helm then removes).
    fn printed(&self, action: &Action, v: &Val) -> Result<String, TplError> {
        match v {
            Val::Dot => Err(TplError::Unsupported {
                file: self.file.to_string(),
                construct: format!("printing the whole scope ({})", action.shown),
            }),
            Val::V(Value::Null) => Ok("<no value>".into()),
            Val::V(v) => Ok(print(v)),
        }
    }

    fn pipeline(&self, action: &Action, pipeline: &Pipeline) -> Result<Val, TplError> {
        let mut last: Option<Val> = None;
        for command in pipeline {
            last = Some(self.command(action, command, last)?);
        }
        Ok(last.unwrap_or(Val::V(Value::Null)))
    }

    fn command(
        &self,
        action: &Action,
        command: &Command,
        piped: Option<Val>,
    ) -> Result<Val, TplError> {
        let Some(Operand::Func(name)) = command.first() else {
            if command.len() > 1 || piped.is_some() {
                return Err(self.fail(action, "can't give an argument to a non-function".into()));
            }
            return self.operand(action, &command[0]);
        };
        let args = &command[1..];
        // `and` and `or` evaluate their arguments only as far as needed (Go 1.18 and later).
        if name == "and" || name == "or" {
            let mut all: Vec<Result<Val, &Operand>> = args.iter().map(Err).collect();
            if let Some(p) = piped {
                all.push(Ok(p));
            }
            if all.is_empty() {
                return Err(self.fail(action, format!("wrong number of args for {name}")));
            }
            let count = all.len();
            for (i, arg) in all.into_iter().enumerate() {
                let v = match arg {
                    Ok(v) => v,
                    Err(op) => self.operand(action, op)?,
                };
                if i + 1 == count || v.truthy() != (name == "and") {
                    return Ok(v);
                }
            }
            unreachable!("the loop returns at the last argument");
        }
        let mut values = args
            .iter()
            .map(|op| self.operand(action, op))
            .collect::<Result<Vec<_>, _>>()?;
        values.extend(piped);
        let arity = |n: usize| {
            if values.len() == n {
                Ok(())
            } else {
                Err(self.fail(
                    action,
                    format!(
                        "wrong number of args for {name}: want {n} got {}",
                        values.len()
                    ),
                ))
            }
        };
        match name.as_str() {
            "not" => {
                arity(1)?;
                Ok(Val::V(Value::Bool(!values[0].truthy())))
            }
            "eq" => {
                if values.len() < 2 {
                    return Err(self.fail(action, "missing argument for comparison".into()));
                }
                let first = &values[0];
                for other in &values[1..] {
                    if self.equal(action, first, other)? {
                        return Ok(Val::V(Value::Bool(true)));
                    }
                }
                Ok(Val::V(Value::Bool(false)))
            }
            "quote" => {
                let parts: Vec<String> = values
                    .iter()
                    .filter_map(|v| match v {
                        Val::V(Value::Null) => None,
                        Val::V(v) => Some(Ok(go_quote(&print(v)))),
                        Val::Dot => Some(Err(())),
                    })
                    .collect::<Result<_, _>>()
                    .map_err(|_| TplError::Unsupported {
                        file: self.file.to_string(),
                        construct: format!("quoting the whole scope ({})", action.shown),
                    })?;
                Ok(Val::V(Value::String(parts.join(" "))))
            }
            "dir" => {
                arity(1)?;
                match &values[0] {
                    Val::V(Value::String(s)) => Ok(Val::V(Value::String(path_dir(s)))),
                    Val::V(Value::Null) => {
                        Err(self.fail(action, "invalid value; expected string".into()))
                    }
                    other => Err(self.fail(
                        action,
                        format!(
                            "wrong type for value; expected string; got {}",
                            type_name(other)
                        ),
                    )),
                }
            }
            "include" => {
                arity(2)?;
                match (&values[0], &values[1]) {
                    (Val::V(Value::String(t)), Val::Dot) if t == "cilium.namespace" => {
                        Ok(Val::V(Value::String(self.scope.namespace.to_string())))
                    }
                    _ => Err(TplError::Unsupported {
                        file: self.file.to_string(),
                        construct: format!(
                            "an include other than `include \"cilium.namespace\" .` ({})",
                            action.shown
                        ),
                    }),
                }
            }
            other => Err(TplError::Unsupported {
                file: self.file.to_string(),
                construct: format!("the function `{other}`"),
            }),
        }
    }

    /// Go's `eq` on two operands: basic kinds compare by value; nil equals only nil; operands of
    /// different kinds, or maps and lists, fail the render.
    fn equal(&self, action: &Action, a: &Val, b: &Val) -> Result<bool, TplError> {
        let (ka, kb) = (kind(a), kind(b));
        if ka == Kind::Nil || kb == Kind::Nil {
            return Ok(ka == kb);
        }
        if ka != kb {
            return Err(self.fail(
                action,
                format!(
                    "error calling eq: incompatible types for comparison: {} and {}",
                    type_name(a),
                    type_name(b)
                ),
            ));
        }
        match (a, b) {
            (Val::V(Value::Number(x)), Val::V(Value::Number(y))) if ka == Kind::Int => {
                Ok(x.as_i64().map(i128::from).or(x.as_u64().map(i128::from))
                    == y.as_i64().map(i128::from).or(y.as_u64().map(i128::from)))
            }
            (Val::V(Value::Number(x)), Val::V(Value::Number(y))) => Ok(x.as_f64() == y.as_f64()),
            (Val::V(Value::String(x)), Val::V(Value::String(y))) => Ok(x == y),
            (Val::V(Value::Bool(x)), Val::V(Value::Bool(y))) => Ok(x == y),
            _ => Err(self.fail(
                action,
                format!("error calling eq: non-comparable type {}", type_name(a)),
            )),
        }
    }

    fn operand(&self, action: &Action, op: &Operand) -> Result<Val, TplError> {
        match op {
            Operand::Dot => Ok(Val::Dot),
            Operand::Const(v) => Ok(Val::V(v.clone())),
            Operand::Nested(p) => self.pipeline(action, p),
            Operand::Func(name) => Err(self.fail(action, format!("`{name}` is not a value"))),
            Operand::Field(keys) => self.field(action, keys),
        }
    }

    /// A `.Values.a.b` chain. A missing key is nil; a field of nil or of anything but a map
    /// fails, as it does in Helm.
    fn field(&self, action: &Action, keys: &[String]) -> Result<Val, TplError> {
        if keys[0] != "Values" {
            return Err(TplError::Unsupported {
                file: self.file.to_string(),
                construct: format!("the field .{} ({})", keys[0], action.shown),
            });
        }
        let mut at = self.scope.values;
        for (i, key) in keys.iter().enumerate().skip(1) {
            at = match at {
                Value::Object(m) => m.get(key).unwrap_or(&Value::Null),
                other => {
                    let parent = keys[1..i].join(".");
                    return Err(TplError::Failed {
                        file: self.file.to_string(),
                        action: action.shown.clone(),
                        path: Some(parent.clone()),
                        message: match other {
                            Value::Null => format!(
                                "nil pointer evaluating interface {{}}.{key} ({parent} is not set)"
                            ),
                            _ => format!("can't evaluate field {key} ({parent} is not a map)"),
                        },
                    });
                }
            };
        }
        Ok(Val::V(at.clone()))
    }
}

/// The first `.Values` path an action reads, which an error names.
fn first_field(pipeline: &Pipeline) -> Option<String> {
    pipeline.iter().flatten().find_map(|op| match op {
        Operand::Field(keys) if keys.len() > 1 && keys[0] == "Values" => Some(keys[1..].join(".")),
        Operand::Nested(p) => first_field(p),
        _ => None,
    })
}

#[cfg(test)]
mod tests;
