//! The lexer of Go's `text/template` (src/text/template/parse/lex.go): text and actions
//! delimited by `{{ }}`, trim markers `{{- ` and ` -}}` (a dash beside the delimiter and one
//! space, tab or line break), comments `{{/* */}}`, and the tokens inside an action.

use std::borrow::Cow;

use super::TemplateError;

/// A token; its text borrows the template source (only a quoted string with escapes owns
/// its unquoted text), so that lexing copies nothing and the parser may look ahead freely.
#[derive(Debug, Clone, PartialEq)]
pub enum Tok<'a> {
    /// Text outside actions, after trim markers took their spaces.
    Text(&'a str),
    /// `{{` (or `{{- `), opening an action.
    Left,
    /// `}}` (or ` -}}`), closing an action.
    Right,
    /// Spaces, tabs or line breaks inside an action (one token per run), which separate
    /// arguments.
    Space,
    /// A word that is no keyword, `true`, `false` or `nil`: a function's name.
    Ident(&'a str),
    /// `.name`, without the dot; a chain `.a.b` is one token per part.
    Field(&'a str),
    /// `$` or `$name`, with the `$`.
    Variable(&'a str),
    /// `.` alone.
    Dot,
    /// `true` or `false`.
    Bool(bool),
    /// `nil`.
    Nil,
    /// A number as written (sign, base prefix and all); the parser reads its value.
    Number(&'a str),
    /// A `"quoted"` string with its escapes read, or a `` `raw` `` one without its carriage
    /// returns.
    Str(Cow<'a, str>),
    /// A character constant (`'a'`), as its code point.
    Char(i64),
    /// `|`.
    Pipe,
    /// `(`.
    LParen,
    /// `)`.
    RParen,
    /// `=`.
    Assign,
    /// `:=`.
    Declare,
    /// `,` (between the two variables of a `range`).
    Comma,
    // Keywords.
    /// `if`.
    If,
    /// `else`.
    Else,
    /// `end`.
    End,
    /// `range`.
    Range,
    /// `with`.
    With,
    /// `define`.
    Define,
    /// `template`.
    Template,
    /// `block`.
    Block,
    /// `break`.
    Break,
    /// `continue`.
    Continue,
    /// The end of the source.
    Eof,
}

/// A token and where it starts.
#[derive(Debug, Clone)]
pub struct Token<'a> {
    /// The token.
    pub tok: Tok<'a>,
    /// Byte offset in the source, for error positions.
    pub pos: usize,
}

/// The characters the trim markers remove (lex.go `spaceChars`).
const SPACE_CHARS: &[char] = &[' ', '\t', '\r', '\n'];

fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n')
}

fn is_alnum(c: char) -> bool {
    c == '_' || c.is_alphanumeric()
}

/// Whether `s` starts with ` -}}` (a right trim marker) or `}}`; returns the length to skip and
/// whether text after it is trimmed.
fn at_right(s: &[u8]) -> Option<(usize, bool)> {
    if s.len() >= 4 && is_space(s[0]) && s[1] == b'-' && &s[2..4] == b"}}" {
        return Some((4, true));
    }
    if s.starts_with(b"}}") {
        return Some((2, false));
    }
    None
}

/// The tokens of the template `src` (named `name` in errors), ending with [`Tok::Eof`]; else a
/// parse error where Go's lexer stops (an unclosed action, comment, paren or quote, a bad
/// number, a character no token starts with).
pub fn lex<'a>(name: &str, src: &'a str) -> Result<Vec<Token<'a>>, TemplateError> {
    let b = src.as_bytes();
    let mut out: Vec<Token> = Vec::with_capacity(src.len() / 4);
    let opener = memchr::memmem::Finder::new(b"{{");
    let mut pos = 0usize;
    let mut trim_next = false;
    let err = |pos: usize, msg: String| TemplateError::parse(name, src, pos, msg);
    loop {
        let start = pos;
        let idx = opener.find(&b[pos..]).map(|i| i + pos);
        let end = idx.unwrap_or(b.len());
        let mut text = &src[start..end];
        if trim_next {
            text = text.trim_start_matches(SPACE_CHARS);
        }
        let Some(idx) = idx else {
            if !text.is_empty() {
                out.push(Token {
                    tok: Tok::Text(text),
                    pos: start,
                });
            }
            out.push(Token {
                tok: Tok::Eof,
                pos: b.len(),
            });
            return Ok(out);
        };
        let trim_left = b.len() >= idx + 4 && b[idx + 2] == b'-' && is_space(b[idx + 3]);
        if trim_left {
            text = text.trim_end_matches(SPACE_CHARS);
        }
        if !text.is_empty() {
            out.push(Token {
                tok: Tok::Text(text),
                pos: start,
            });
        }
        pos = idx + 2 + if trim_left { 2 } else { 0 };
        // A comment is a whole action: `{{/*` ... `*/}}`, trim markers allowed around it.
        let after = &src[pos..];
        if after.starts_with("/*") {
            let Some(close) = after.find("*/") else {
                return Err(err(idx, "unclosed comment".into()));
            };
            let p = pos + close + 2;
            match at_right(&b[p..]) {
                Some((n, trim)) => {
                    pos = p + n;
                    trim_next = trim;
                    continue;
                }
                None => return Err(err(idx, "comment ends before closing delimiter".into())),
            }
        }
        out.push(Token {
            tok: Tok::Left,
            pos: idx,
        });
        let mut paren = 0i32;
        loop {
            if let Some((n, trim)) = at_right(&b[pos..]) {
                if paren > 0 {
                    return Err(err(pos, "unclosed left paren".into()));
                }
                out.push(Token {
                    tok: Tok::Right,
                    pos,
                });
                pos += n;
                trim_next = trim;
                break;
            }
            let Some(c) = src[pos..].chars().next() else {
                return Err(err(idx, "unclosed action".into()));
            };
            let tpos = pos;
            let push = |out: &mut Vec<Token<'a>>, tok: Tok<'a>| out.push(Token { tok, pos: tpos });
            match c {
                '\r' | '\n' => {
                    // Go 1.16+ allows line breaks inside actions; they count as space.
                    pos += 1;
                    if out.last().map(|t| &t.tok) != Some(&Tok::Space) {
                        push(&mut out, Tok::Space);
                    }
                }
                ' ' | '\t' => {
                    while pos < b.len() && matches!(b[pos], b' ' | b'\t' | b'\r' | b'\n') {
                        if at_right(&b[pos..]).is_some_and(|(_, t)| t) {
                            break;
                        }
                        pos += 1;
                    }
                    if out.last().map(|t| &t.tok) != Some(&Tok::Space) {
                        push(&mut out, Tok::Space);
                    }
                }
                '=' => {
                    pos += 1;
                    push(&mut out, Tok::Assign);
                }
                ':' => {
                    if b.get(pos + 1) != Some(&b'=') {
                        return Err(err(pos, "expected :=".into()));
                    }
                    pos += 2;
                    push(&mut out, Tok::Declare);
                }
                '|' => {
                    pos += 1;
                    push(&mut out, Tok::Pipe);
                }
                ',' => {
                    pos += 1;
                    push(&mut out, Tok::Comma);
                }
                '(' => {
                    pos += 1;
                    paren += 1;
                    push(&mut out, Tok::LParen);
                }
                ')' => {
                    pos += 1;
                    paren -= 1;
                    if paren < 0 {
                        return Err(err(tpos, "unexpected right paren".into()));
                    }
                    push(&mut out, Tok::RParen);
                }
                '"' => {
                    let (s, n) = quoted(&src[pos..])
                        .ok_or_else(|| err(tpos, "unterminated quoted string".into()))?;
                    pos += n;
                    push(&mut out, Tok::Str(s));
                }
                '`' => {
                    let Some(close) = src[pos + 1..].find('`') else {
                        return Err(err(tpos, "unterminated raw quoted string".into()));
                    };
                    // strconv.Unquote drops carriage returns from raw strings.
                    let raw = &src[pos + 1..pos + 1 + close];
                    let s = if raw.contains('\r') {
                        Cow::Owned(raw.replace('\r', ""))
                    } else {
                        Cow::Borrowed(raw)
                    };
                    pos += close + 2;
                    push(&mut out, Tok::Str(s));
                }
                '\'' => {
                    let (v, n) = char_const(&src[pos..])
                        .ok_or_else(|| err(tpos, "unterminated character constant".into()))?;
                    pos += n;
                    push(&mut out, Tok::Char(v));
                }
                '$' => {
                    let n = 1 + src[pos + 1..]
                        .char_indices()
                        .find(|(_, c)| !is_alnum(*c))
                        .map(|(i, _)| i)
                        .unwrap_or(src.len() - pos - 1);
                    push(&mut out, Tok::Variable(&src[pos..pos + n]));
                    pos += n;
                }
                '.' => {
                    let next = src[pos + 1..].chars().next();
                    if next.is_some_and(|c| c.is_ascii_digit()) {
                        let n = number_len(&src[pos..]);
                        push(&mut out, Tok::Number(&src[pos..pos + n]));
                        pos += n;
                    } else if next.is_some_and(is_alnum) {
                        let n = 1 + src[pos + 1..]
                            .char_indices()
                            .find(|(_, c)| !is_alnum(*c))
                            .map(|(i, _)| i)
                            .unwrap_or(src.len() - pos - 1);
                        push(&mut out, Tok::Field(&src[pos + 1..pos + n]));
                        pos += n;
                    } else {
                        pos += 1;
                        push(&mut out, Tok::Dot);
                    }
                }
                '+' | '-' | '0'..='9' => {
                    let n = number_len(&src[pos..]);
                    if n == 0 || (n == 1 && matches!(c, '+' | '-')) {
                        return Err(err(
                            tpos,
                            format!("bad number syntax: {:?}", &src[pos..pos + 1]),
                        ));
                    }
                    let text = &src[pos..pos + n];
                    if src[pos + n..].chars().next().is_some_and(is_alnum) {
                        return Err(err(tpos, format!("bad number syntax: {text:?}")));
                    }
                    push(&mut out, Tok::Number(text));
                    pos += n;
                }
                c if is_alnum(c) => {
                    let n = src[pos..]
                        .char_indices()
                        .find(|(_, c)| !is_alnum(*c))
                        .map(|(i, _)| i)
                        .unwrap_or(src.len() - pos);
                    let word = &src[pos..pos + n];
                    pos += n;
                    let tok = match word {
                        "true" => Tok::Bool(true),
                        "false" => Tok::Bool(false),
                        "nil" => Tok::Nil,
                        "if" => Tok::If,
                        "else" => Tok::Else,
                        "end" => Tok::End,
                        "range" => Tok::Range,
                        "with" => Tok::With,
                        "define" => Tok::Define,
                        "template" => Tok::Template,
                        "block" => Tok::Block,
                        "break" => Tok::Break,
                        "continue" => Tok::Continue,
                        w => Tok::Ident(w),
                    };
                    push(&mut out, tok);
                }
                other => {
                    return Err(err(
                        tpos,
                        format!("unrecognized character in action: {other:?}"),
                    ))
                }
            }
        }
    }
}

/// The length of a number's text (lex.go `scanNumber`): sign, base prefix, digits with
/// underscores, fraction, exponent, imaginary suffix.
fn number_len(s: &str) -> usize {
    let b = s.as_bytes();
    let mut i = 0;
    if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
        i += 1;
    }
    let mut digits: &[u8] = b"0123456789_";
    let mut exp: &[u8] = b"eE";
    if i + 1 < b.len() && b[i] == b'0' {
        match b[i + 1] {
            b'x' | b'X' => {
                i += 2;
                digits = b"0123456789abcdefABCDEF_";
                exp = b"pP";
            }
            b'o' | b'O' => {
                i += 2;
                digits = b"01234567_";
                exp = b"";
            }
            b'b' | b'B' => {
                i += 2;
                digits = b"01_";
                exp = b"";
            }
            _ => {}
        }
    }
    while i < b.len() && digits.contains(&b[i]) {
        i += 1;
    }
    if i < b.len() && b[i] == b'.' {
        i += 1;
        while i < b.len() && digits.contains(&b[i]) {
            i += 1;
        }
    }
    if !exp.is_empty() && i < b.len() && exp.contains(&b[i]) {
        i += 1;
        if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
            i += 1;
        }
        while i < b.len() && b"0123456789_".contains(&b[i]) {
            i += 1;
        }
    }
    if i < b.len() && b[i] == b'i' {
        i += 1;
    }
    i
}

/// An interpreted string literal (strconv.Unquote's escapes); returns it and its length. One
/// without escapes is borrowed.
fn quoted(s: &str) -> Option<(Cow<'_, str>, usize)> {
    let plain = s.as_bytes()[1..]
        .iter()
        .position(|&c| matches!(c, b'"' | b'\\' | b'\n'));
    if let Some(end) = plain {
        if s.as_bytes()[1 + end] == b'"' {
            return Some((Cow::Borrowed(&s[1..1 + end]), end + 2));
        }
    }
    unquote_escaped(s).map(|(o, n)| (Cow::Owned(o), n))
}

fn unquote_escaped(s: &str) -> Option<(String, usize)> {
    let mut out = String::new();
    let mut it = s.char_indices().skip(1).peekable();
    while let Some((i, c)) = it.next() {
        match c {
            '"' => return Some((out, i + 1)),
            '\n' => return None,
            '\\' => {
                let (_, e) = it.next()?;
                match e {
                    'a' => out.push('\x07'),
                    'b' => out.push('\x08'),
                    'f' => out.push('\x0c'),
                    'n' => out.push('\n'),
                    'r' => out.push('\r'),
                    't' => out.push('\t'),
                    'v' => out.push('\x0b'),
                    '\\' => out.push('\\'),
                    '"' => out.push('"'),
                    'x' | 'u' | 'U' => {
                        let n = match e {
                            'x' => 2,
                            'u' => 4,
                            _ => 8,
                        };
                        let mut v = 0u32;
                        for _ in 0..n {
                            let (_, h) = it.next()?;
                            v = v * 16 + h.to_digit(16)?;
                        }
                        out.push(char::from_u32(v)?);
                    }
                    '0'..='7' => {
                        let mut v = e.to_digit(8)?;
                        for _ in 0..2 {
                            let (_, h) = it.next()?;
                            v = v * 8 + h.to_digit(8)?;
                        }
                        out.push(char::from_u32(v)?);
                    }
                    _ => return None,
                }
            }
            c => out.push(c),
        }
    }
    None
}

/// A character constant `'a'`, `'\n'`: its code point and length.
fn char_const(s: &str) -> Option<(i64, usize)> {
    let rest = &s[1..];
    let close = rest.find('\'')?;
    let close = if close == 1 && rest.starts_with('\\') {
        1 + rest[2..].find('\'')? + 1
    } else {
        close
    };
    let inner = &rest[..close];
    let c = if inner.starts_with('\\') {
        let (q, _) = unquote_escaped(&format!("\"{inner}\""))?;
        let mut cs = q.chars();
        let c = cs.next()?;
        if cs.next().is_some() {
            return None;
        }
        c
    } else {
        let mut cs = inner.chars();
        let c = cs.next()?;
        if cs.next().is_some() {
            return None;
        }
        c
    };
    Some((c as i64, close + 2))
}
