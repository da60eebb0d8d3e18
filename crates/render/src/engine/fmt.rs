//! Go's `fmt` as templates reach it: `printf`'s verbs (src/fmt/print.go, format.go) with flags,
//! width and precision, the `%!v(MISSING)`/`%!(EXTRA ...)` forms, and strconv.Quote (`%q`,
//! Sprig's `quote`).

use super::value::{sprint, Value};

#[derive(Default, Clone, Copy)]
struct Spec {
    minus: bool,
    plus: bool,
    sharp: bool,
    space: bool,
    zero: bool,
    width: Option<usize>,
    prec: Option<usize>,
}

/// Bounds a width or precision written in a format: Go accepts up to 1e6.
const MAX_WIDTH: usize = 1_000_000;

pub fn sprintf(format: &str, args: &[Value]) -> String {
    let mut out = String::new();
    let mut argi = 0usize;
    let mut it = format.chars().peekable();
    while let Some(c) = it.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let mut s = Spec::default();
        while let Some(&f) = it.peek() {
            match f {
                '-' => s.minus = true,
                '+' => s.plus = true,
                '#' => s.sharp = true,
                ' ' => s.space = true,
                '0' => s.zero = true,
                _ => break,
            }
            it.next();
        }
        let num =
            |it: &mut std::iter::Peekable<std::str::Chars>, argi: &mut usize| -> Option<usize> {
                if it.peek() == Some(&'*') {
                    it.next();
                    let v = match args.get(*argi) {
                        Some(Value::Int(i)) => Some((*i).clamp(0, MAX_WIDTH as i64) as usize),
                        _ => None,
                    };
                    *argi += 1;
                    return v;
                }
                let mut n: Option<usize> = None;
                while let Some(d) = it.peek().and_then(|c| c.to_digit(10)) {
                    n = Some((n.unwrap_or(0) * 10 + d as usize).min(MAX_WIDTH));
                    it.next();
                }
                n
            };
        s.width = num(&mut it, &mut argi);
        if it.peek() == Some(&'.') {
            it.next();
            s.prec = Some(num(&mut it, &mut argi).unwrap_or(0));
        }
        let Some(verb) = it.next() else {
            out.push_str("%!(NOVERB)");
            break;
        };
        if verb == '%' {
            out.push('%');
            continue;
        }
        let Some(arg) = args.get(argi) else {
            out.push_str(&format!("%!{verb}(MISSING)"));
            continue;
        };
        argi += 1;
        out.push_str(&format_one(verb, &s, arg));
    }
    if argi < args.len() {
        out.push_str("%!(EXTRA ");
        let extra: Vec<String> = args[argi..]
            .iter()
            .map(|a| match a {
                Value::Nil => "<nil>".to_string(),
                a => format!("{}={}", a.type_name(), sprint(a)),
            })
            .collect();
        out.push_str(&extra.join(", "));
        out.push(')');
    }
    out
}

fn bad(verb: char, arg: &Value) -> String {
    match arg {
        Value::Nil => format!("%!{verb}(<nil>)"),
        a => format!("%!{verb}({}={})", a.type_name(), sprint(a)),
    }
}

fn pad(s: String, spec: &Spec, numeric: bool) -> String {
    let Some(w) = spec.width else { return s };
    let n = s.chars().count();
    if n >= w {
        return s;
    }
    let fill = w - n;
    if spec.minus {
        let mut s = s;
        s.extend(std::iter::repeat_n(' ', fill));
        s
    } else if spec.zero && numeric {
        let (sign, rest) = if s.starts_with(['-', '+', ' ']) {
            s.split_at(1)
        } else {
            ("", s.as_str())
        };
        format!("{sign}{}{rest}", "0".repeat(fill))
    } else {
        format!("{}{s}", " ".repeat(fill))
    }
}

fn signed(s: String, neg: bool, spec: &Spec) -> String {
    if neg {
        s
    } else if spec.plus {
        format!("+{s}")
    } else if spec.space {
        format!(" {s}")
    } else {
        s
    }
}

/// An element of a list or map: a nil one is an `interface{}` holding nothing, which fmt
/// prints as `<nil>` whatever the verb (print.go `printValue`, case `reflect.Interface`).
fn format_elem(verb: char, spec: &Spec, arg: &Value) -> String {
    match arg {
        Value::Nil => "<nil>".to_string(),
        _ => format_one(verb, spec, arg),
    }
}

/// A map under a verb other than `%v`: keys (sorted) and values both formatted with the verb
/// (print.go `printValue`, case `reflect.Map`), so `%q` quotes the keys too.
fn format_map(verb: char, arg: &Value) -> String {
    let Value::Map(m) = arg else {
        return bad(verb, arg);
    };
    let parts: Vec<String> = m
        .borrow()
        .iter()
        .map(|(k, x)| {
            format!(
                "{}:{}",
                format_one(verb, &Spec::default(), &Value::str(k)),
                format_elem(verb, &Spec::default(), x)
            )
        })
        .collect();
    format!("map[{}]", parts.join(" "))
}

fn format_one(verb: char, spec: &Spec, arg: &Value) -> String {
    match verb {
        'T' => pad(arg.type_name().to_string(), spec, false),
        'v' => match arg {
            Value::Int(_) | Value::Float(_) => format_one(
                if matches!(arg, Value::Int(_)) {
                    'd'
                } else {
                    'g'
                },
                spec,
                arg,
            ),
            Value::Str(s) if spec.sharp => pad(quote(s), spec, false),
            _ => pad(sprint(arg), spec, false),
        },
        's' => match arg {
            Value::Str(s) => pad(truncate(s, spec.prec), spec, false),
            Value::List(l) => {
                let parts: Vec<String> = l
                    .iter()
                    .map(|x| format_elem('s', &Spec::default(), x))
                    .collect();
                pad(format!("[{}]", parts.join(" ")), spec, false)
            }
            Value::Map(_) => pad(format_map('s', arg), spec, false),
            Value::Obj(_) => pad(sprint(arg), spec, false),
            _ => bad('s', arg),
        },
        'q' => match arg {
            Value::Str(s) => pad(quote(s), spec, false),
            Value::Int(i) => match char::from_u32(*i as u32) {
                Some(c) => pad(format!("'{}'", quote_char(c)), spec, false),
                None => bad('q', arg),
            },
            Value::List(l) => {
                let parts: Vec<String> = l
                    .iter()
                    .map(|x| format_elem('q', &Spec::default(), x))
                    .collect();
                format!("[{}]", parts.join(" "))
            }
            Value::Map(_) => format_map('q', arg),
            _ => bad('q', arg),
        },
        'd' => match arg {
            Value::Int(i) => pad(signed(i.to_string(), *i < 0, spec), spec, true),
            Value::List(l) => {
                let parts: Vec<String> = l
                    .iter()
                    .map(|x| format_elem('d', &Spec::default(), x))
                    .collect();
                format!("[{}]", parts.join(" "))
            }
            Value::Map(_) => format_map('d', arg),
            _ => bad('d', arg),
        },
        'x' | 'X' | 'o' | 'b' => match arg {
            Value::Int(i) => {
                let mag = i.unsigned_abs();
                let mut s = match verb {
                    'x' => format!("{mag:x}"),
                    'X' => format!("{mag:X}"),
                    'o' => format!("{mag:o}"),
                    _ => format!("{mag:b}"),
                };
                if spec.sharp {
                    s = match verb {
                        'x' => format!("0x{s}"),
                        'X' => format!("0X{s}"),
                        'o' => format!("0{s}"),
                        _ => s,
                    };
                }
                if *i < 0 {
                    s = format!("-{s}");
                }
                pad(signed(s, *i < 0, spec), spec, true)
            }
            Value::Str(s) if verb == 'x' || verb == 'X' => {
                let h: String = s
                    .bytes()
                    .map(|b| {
                        if verb == 'x' {
                            format!("{b:02x}")
                        } else {
                            format!("{b:02X}")
                        }
                    })
                    .collect();
                pad(h, spec, false)
            }
            _ => bad(verb, arg),
        },
        't' => match arg {
            Value::Bool(b) => pad(b.to_string(), spec, false),
            _ => bad('t', arg),
        },
        'c' => match arg {
            Value::Int(i) => pad(
                char::from_u32(*i as u32).unwrap_or('\u{FFFD}').to_string(),
                spec,
                false,
            ),
            _ => bad('c', arg),
        },
        'f' | 'F' | 'e' | 'E' | 'g' | 'G' => match arg {
            Value::Float(f) => pad(float(verb, *f, spec), spec, true),
            _ => bad(verb, arg),
        },
        _ => format!("%!{verb}({}={})", arg.type_name(), sprint(arg)),
    }
}

fn float(verb: char, f: f64, spec: &Spec) -> String {
    if f.is_nan() {
        return "NaN".into();
    }
    if f.is_infinite() {
        return signed(
            if f > 0.0 {
                "+Inf".into()
            } else {
                "-Inf".into()
            },
            f < 0.0,
            spec,
        );
    }
    let s = match verb {
        'f' | 'F' => format!("{:.*}", spec.prec.unwrap_or(6), f),
        'e' | 'E' => {
            let s = go_exp(f, spec.prec.unwrap_or(6));
            if verb == 'E' {
                s.to_uppercase()
            } else {
                s
            }
        }
        _ => match spec.prec {
            None => super::value::go_float(f),
            Some(p) => {
                let p = p.max(1);
                let exp = if f == 0.0 {
                    0
                } else {
                    f.abs().log10().floor() as i32
                };
                if exp < -4 || exp >= p as i32 {
                    go_exp(f, p - 1)
                } else {
                    let s = format!("{:.*}", (p as i32 - 1 - exp).max(0) as usize, f);
                    if s.contains('.') {
                        s.trim_end_matches('0').trim_end_matches('.').to_string()
                    } else {
                        s
                    }
                }
            }
        },
    };
    signed(s, f.is_sign_negative(), spec)
}

/// Go's `%e`: at least two exponent digits, with a sign.
fn go_exp(f: f64, prec: usize) -> String {
    let s = format!("{:.*e}", prec, f);
    let (m, e) = s.split_once('e').unwrap_or((&s, "0"));
    let e: i32 = e.parse().unwrap_or(0);
    format!("{m}e{}{:02}", if e < 0 { '-' } else { '+' }, e.abs())
}

fn truncate(s: &str, prec: Option<usize>) -> String {
    match prec {
        Some(p) => s.chars().take(p).collect(),
        None => s.to_string(),
    }
}

/// Whether Go's `strconv.IsPrint` holds, near enough for text in charts: letters, marks,
/// numbers, punctuation, symbols and the ASCII space; not controls, other spaces, format
/// characters, private use or unassigned code points.
fn is_print(c: char) -> bool {
    if c == ' ' {
        return true;
    }
    if c.is_control() || c.is_whitespace() {
        return false;
    }
    let u = c as u32;
    !matches!(u,
        0xAD | 0x600..=0x605 | 0x61C | 0x6DD | 0x70F | 0x180E | 0x200B..=0x200F | 0x202A..=0x202E
        | 0x2060..=0x206F | 0xFEFF | 0xFFF9..=0xFFFB | 0xE000..=0xF8FF | 0xF0000..=0x10FFFF
        | 0xFFFE | 0xFFFF | 0xD800..=0xDFFF)
}

fn push_escaped(out: &mut String, c: char, quote: char) {
    match c {
        '\x07' => out.push_str("\\a"),
        '\x08' => out.push_str("\\b"),
        '\x0c' => out.push_str("\\f"),
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        '\x0b' => out.push_str("\\v"),
        '\\' => out.push_str("\\\\"),
        c if c == quote => {
            out.push('\\');
            out.push(c);
        }
        c if is_print(c) => out.push(c),
        c if (c as u32) < 0x80 => out.push_str(&format!("\\x{:02x}", c as u32)),
        c if (c as u32) < 0x10000 => out.push_str(&format!("\\u{:04x}", c as u32)),
        c => out.push_str(&format!("\\U{:08x}", c as u32)),
    }
}

/// strconv.Quote: a double-quoted Go string literal.
pub fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        push_escaped(&mut out, c, '"');
    }
    out.push('"');
    out
}

fn quote_char(c: char) -> String {
    let mut out = String::new();
    push_escaped(&mut out, c, '\'');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verbs_as_go_prints_them() {
        let s = |v: &str| Value::str(v);
        assert_eq!(sprintf("%s-%d", &[s("a"), Value::Int(3)]), "a-3");
        assert_eq!(sprintf("%d", &[Value::Float(3.0)]), "%!d(float64=3)");
        assert_eq!(
            sprintf("%v %v", &[Value::Float(1e6), Value::Nil]),
            "1e+06 <nil>"
        );
        assert_eq!(sprintf("%q", &[s("a\"b\n")]), "\"a\\\"b\\n\"");
        assert_eq!(sprintf("%d.%d.0", &[Value::Int(1)]), "1.%!d(MISSING).0");
        assert_eq!(sprintf("x", &[Value::Int(1)]), "x%!(EXTRA int=1)");
        assert_eq!(
            sprintf("%05d|%-4s|%4s", &[Value::Int(-42), s("ab"), s("ab")]),
            "-0042|ab  |  ab"
        );
        assert_eq!(
            sprintf("%.2f %t", &[Value::Float(1.005), Value::Bool(true)]),
            "1.00 true"
        );
    }
}
