//! The functions a template calls: Go's builtins (src/text/template/funcs.go), Sprig v3's
//! (github.com/Masterminds/sprig/v3 `functions.go` and a file per family: `strings.go`,
//! `dict.go`, `list.go`, `defaults.go`, `numeric.go`, `regex.go`, `semver.go`, `reflect.go`)
//! and Helm's (`pkg/engine/funcs.go`, `files.go`; `include`, `tpl` live in `exec`). Functions
//! that mint randomness or read the clock, the cluster, DNS or the environment are known but
//! refused when reached (`ErrorKind::NonDeterministic`).

use std::rc::Rc;
use std::sync::Arc;

use sha2::{Digest, Sha256};

use super::fmt::{quote, sprintf};
use super::json;
use super::value::{sprint, Map, Obj, Value, MAX_VALUE_DEPTH};
use super::ErrorKind;

/// Strings and lists a function builds may not grow past these (a values file could double
/// a string in a loop).
pub(crate) const MAX_STRING_BYTES: usize = 16 << 20;
pub(crate) const MAX_LIST_LEN: usize = 1 << 20;

/// Why a function call failed; the executor adds the template's position.
#[derive(Debug)]
pub(crate) struct FnError {
    pub kind: ErrorKind,
    pub message: String,
}

fn err<T>(m: impl Into<String>) -> Result<T, FnError> {
    Err(FnError {
        kind: ErrorKind::Exec,
        message: m.into(),
    })
}

fn limit<T>(m: impl Into<String>) -> Result<T, FnError> {
    Err(FnError {
        kind: ErrorKind::Limit,
        message: m.into(),
    })
}

type F = Result<Value, FnError>;

/// Functions never evaluated: their results depend on randomness, the clock, the cluster, DNS
/// or the environment (Sprig `crypto.go`, `date.go`, `rand`, `uuid`; Helm's `lookup`,
/// `getHostByName`; Sprig's `env`/`expandenv`, which Helm removes).
pub const REFUSED: &[&str] = &[
    "genCA",
    "genCAWithKey",
    "genSignedCert",
    "genSignedCertWithKey",
    "genSelfSignedCert",
    "genSelfSignedCertWithKey",
    "genPrivateKey",
    "derivePassword",
    "encryptAES",
    "decryptAES",
    "randAlphaNum",
    "randAlpha",
    "randAscii",
    "randNumeric",
    "randBytes",
    "randInt",
    "uuidv4",
    "shuffle",
    "date",
    "dateInZone",
    "date_in_zone",
    "ago",
    "htmlDate",
    "htmlDateInZone",
    "unixEpoch",
    "toDate",
    "mustToDate",
    "duration",
    "durationRound",
    "lookup",
    "getHostByName",
    "env",
    "expandenv",
    "bcrypt",
    "htpasswd",
];

/// Every function this engine evaluates (besides `include`, `tpl`, `and`, `or`, handled by
/// the executor), for the parser's "function not defined" check and the function-list test.
pub const IMPLEMENTED: &[&str] = &[
    // Go builtins.
    "and",
    "or",
    "not",
    "len",
    "index",
    "slice",
    "eq",
    "ne",
    "lt",
    "le",
    "gt",
    "ge",
    "print",
    "printf",
    "println",
    "html",
    "js",
    "urlquery",
    "call",
    // Helm.
    "include",
    "tpl",
    "required",
    "fail",
    "toYaml",
    "mustToYaml",
    "toYamlPretty",
    "fromYaml",
    "fromYamlArray",
    "toJson",
    "mustToJson",
    "fromJson",
    "fromJsonArray",
    "toToml",
    // Sprig strings.
    "toString",
    "quote",
    "squote",
    "trim",
    "trimAll",
    "trimPrefix",
    "trimSuffix",
    "upper",
    "lower",
    "title",
    "untitle",
    "contains",
    "hasPrefix",
    "hasSuffix",
    "replace",
    "repeat",
    "substr",
    "nospace",
    "trunc",
    "abbrev",
    "indent",
    "nindent",
    "join",
    "split",
    "splitList",
    "splitn",
    "cat",
    "wrap",
    "b64enc",
    "b64dec",
    "sha256sum",
    "sha1sum",
    "adler32sum",
    "toStrings",
    "camelcase",
    "snakecase",
    "kebabcase",
    "swapcase",
    "plural",
    "initials",
    // Sprig defaults, reflection, JSON.
    "default",
    "empty",
    "coalesce",
    "ternary",
    "all",
    "any",
    "fromJson",
    "toRawJson",
    "mustToRawJson",
    "toPrettyJson",
    "mustToPrettyJson",
    "mustFromJson",
    "deepCopy",
    "mustDeepCopy",
    "kindOf",
    "kindIs",
    "typeOf",
    "typeIs",
    "typeIsLike",
    "deepEqual",
    // Sprig numbers.
    "int",
    "int64",
    "float64",
    "atoi",
    "add",
    "add1",
    "sub",
    "mul",
    "div",
    "mod",
    "max",
    "min",
    "floor",
    "ceil",
    "round",
    "until",
    "untilStep",
    "seq",
    // Sprig lists and dicts.
    "list",
    "tuple",
    "dict",
    "get",
    "set",
    "unset",
    "hasKey",
    "pluck",
    "keys",
    "pick",
    "omit",
    "values",
    "dig",
    "merge",
    "mustMerge",
    "mergeOverwrite",
    "mustMergeOverwrite",
    "append",
    "mustAppend",
    "push",
    "mustPush",
    "prepend",
    "mustPrepend",
    "concat",
    "first",
    "mustFirst",
    "last",
    "mustLast",
    "rest",
    "mustRest",
    "initial",
    "mustInitial",
    "uniq",
    "mustUniq",
    "has",
    "mustHas",
    "without",
    "mustWithout",
    "compact",
    "mustCompact",
    "reverse",
    "mustReverse",
    "sortAlpha",
    // Sprig regex, semver, paths, certificates from given data.
    "regexMatch",
    "mustRegexMatch",
    "regexFind",
    "mustRegexFind",
    "regexFindAll",
    "mustRegexFindAll",
    "regexReplaceAll",
    "mustRegexReplaceAll",
    "regexReplaceAllLiteral",
    "mustRegexReplaceAllLiteral",
    "regexSplit",
    "mustRegexSplit",
    "regexQuoteMeta",
    "semver",
    "semverCompare",
    "base",
    "dir",
    "ext",
    "clean",
    "isAbs",
    "buildCustomCert",
    // Sprig dates, on the opaque `now` only (see `Obj::Time`).
    "now",
    "dateModify",
    "date_modify",
    "mustDateModify",
    "must_date_modify",
];

pub(crate) fn is_function(name: &str) -> bool {
    IMPLEMENTED.contains(&name) || REFUSED.contains(&name)
}

fn want(name: &str, args: &[Value], n: usize) -> Result<(), FnError> {
    if args.len() != n {
        return err(format!(
            "wrong number of args for {name}: want {n} got {}",
            args.len()
        ));
    }
    Ok(())
}

fn want_at_least(name: &str, args: &[Value], n: usize) -> Result<(), FnError> {
    if args.len() < n {
        return err(format!(
            "wrong number of args for {name}: want at least {n} got {}",
            args.len()
        ));
    }
    Ok(())
}

/// A parameter of Go type `go_type`: `take` reads the value of that type; Go's reflection
/// refuses any other (exec.go `validateType`), and nil is "invalid" unless `take` accepts it.
fn typed<T>(v: &Value, go_type: &str, take: impl Fn(&Value) -> Option<T>) -> Result<T, FnError> {
    match (take(v), v) {
        (Some(t), _) => Ok(t),
        (None, Value::Nil) => err(format!("invalid value; expected {go_type}")),
        (None, other) => err(format!(
            "wrong type for value; expected {go_type}; got {}",
            other.type_name()
        )),
    }
}

/// A `string` parameter.
fn s(v: &Value) -> Result<Arc<str>, FnError> {
    typed(v, "string", |v| match v {
        Value::Str(s) => Some(s.clone()),
        _ => None,
    })
}

/// An `int` parameter.
fn int(v: &Value) -> Result<i64, FnError> {
    typed(v, "int", |v| match v {
        Value::Int(i) => Some(*i),
        _ => None,
    })
}

/// A `map[string]interface{}` parameter (nil is a nil map).
fn map_arg(v: &Value) -> Result<Option<Rc<std::cell::RefCell<Map>>>, FnError> {
    typed(v, "map[string]interface {}", |v| match v {
        Value::Map(m) => Some(Some(m.clone())),
        Value::Nil => Some(None),
        _ => None,
    })
}

fn bool_arg(v: &Value) -> Result<bool, FnError> {
    typed(v, "bool", |v| match v {
        Value::Bool(b) => Some(*b),
        _ => None,
    })
}

fn string_result(out: String) -> F {
    if out.len() > MAX_STRING_BYTES {
        return limit(format!("a string grew past {MAX_STRING_BYTES} bytes"));
    }
    Ok(Value::string(out))
}

fn list_result(l: Vec<Value>) -> F {
    if l.len() > MAX_LIST_LEN {
        return limit(format!("a list grew past {MAX_LIST_LEN} items"));
    }
    Ok(Value::list(l))
}

/// Sprig's `strval`: strings as they are, everything else as `%v` prints it.
pub(crate) fn strval(v: &Value) -> String {
    match v {
        Value::Str(s) => s.to_string(),
        other => sprint(other),
    }
}

/// Sprig's `empty` (defaults.go): nil, zero numbers, false, and empty strings, lists and
/// maps; structs and pointers to them are never empty.
pub(crate) fn empty(v: &Value) -> bool {
    match v {
        Value::Nil => true,
        Value::Bool(b) => !b,
        Value::Int(i) => *i == 0,
        Value::Float(f) => *f == 0.0,
        Value::Str(s) => s.is_empty(),
        Value::List(l) => l.is_empty(),
        Value::Map(m) => m.borrow().is_empty(),
        Value::Obj(o) => match &**o {
            Obj::Files(f) => f.is_empty(),
            Obj::ApiVersions(v) => v.is_empty(),
            Obj::Semver(_) | Obj::Time(_) | Obj::KubeVersion { .. } => false,
        },
    }
}

/// A list parameter as Sprig's list functions take it (`interface{}` of slice kind).
fn list_of(name: &str, v: &Value) -> Result<Rc<Vec<Value>>, FnError> {
    match v {
        Value::List(l) => Ok(l.clone()),
        other => err(format!("Cannot {name} on type {}", other.kind_name())),
    }
}

/// Sprig's `strslice` (strings.go): nils inside a list are dropped, a lone value is a list
/// of one, nil is empty.
fn strslice(v: &Value) -> Vec<String> {
    match v {
        Value::List(l) => l
            .iter()
            .filter(|x| !matches!(x, Value::Nil))
            .map(strval)
            .collect(),
        Value::Nil => Vec::new(),
        other => vec![strval(other)],
    }
}

/// cast.ToInt64 (github.com/spf13/cast, as Sprig's `int`, `int64`, arithmetic use it):
/// numbers truncate, strings parse with Go's base prefixes (`trimZeroDecimal` first), bools
/// are 1 or 0, anything else is 0.
pub(crate) fn to_int64(v: &Value) -> i64 {
    match v {
        Value::Int(i) => *i,
        // Go's `int64(f)` truncates; a float beyond int64's range (or NaN) gives what amd64's
        // conversion gives, the minimum int64 (Helm's reference renders are amd64 builds;
        // `int64 1e100` is -9223372036854775808 there), where Rust's `as` would saturate.
        Value::Float(f) => {
            if f.is_nan() || *f >= 9_223_372_036_854_775_808.0 || *f < -9_223_372_036_854_775_808.0
            {
                i64::MIN
            } else {
                *f as i64
            }
        }
        Value::Bool(b) => *b as i64,
        Value::Str(s) => {
            let t = trim_zero_decimal(s);
            parse_go_int(&t).unwrap_or(0)
        }
        _ => 0,
    }
}

fn trim_zero_decimal(s: &str) -> String {
    // cast's trimZeroDecimal: "10.0" and "10.00" become "10"; "10.5" stays.
    if let Some((a, b)) = s.split_once('.') {
        if !a.is_empty() && !b.is_empty() && b.bytes().all(|c| c == b'0') {
            return a.to_string();
        }
    }
    s.to_string()
}

/// strconv.ParseInt(s, 0, 64).
fn parse_go_int(s: &str) -> Option<i64> {
    let (neg, body) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    if body.is_empty() {
        return None;
    }
    let lower = body.to_ascii_lowercase();
    let (digits, radix, prefixed) = if let Some(h) = lower.strip_prefix("0x") {
        (h.to_string(), 16, true)
    } else if let Some(o) = lower.strip_prefix("0o") {
        (o.to_string(), 8, true)
    } else if let Some(b) = lower.strip_prefix("0b") {
        (b.to_string(), 2, true)
    } else if lower.len() > 1 && lower.starts_with('0') {
        (lower[1..].to_string(), 8, true)
    } else {
        (lower.clone(), 10, false)
    };
    // Underscores are allowed only with a base prefix (strconv `underscoreOK`).
    let digits = if prefixed {
        digits.replace('_', "")
    } else {
        digits
    };
    if digits.is_empty() || digits.starts_with(['+', '-']) {
        return None;
    }
    let v = i128::from_str_radix(&digits, radix).ok()?;
    let v = if neg { -v } else { v };
    i64::try_from(v).ok()
}

/// cast.ToFloat64.
fn to_float64(v: &Value) -> f64 {
    match v {
        Value::Int(i) => *i as f64,
        Value::Float(f) => *f,
        Value::Bool(b) => *b as i64 as f64,
        Value::Str(s) => s
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|_| !s.is_empty())
            .unwrap_or(0.0),
        _ => 0.0,
    }
}

#[derive(PartialEq)]
enum Kind {
    Bool,
    Int,
    Float,
    Str,
    Other,
}

fn basic_kind(v: &Value) -> Kind {
    match v {
        Value::Bool(_) => Kind::Bool,
        Value::Int(_) => Kind::Int,
        Value::Float(_) => Kind::Float,
        Value::Str(_) => Kind::Str,
        _ => Kind::Other,
    }
}

/// Go's `eq` (funcs.go): basic kinds compare by value and must agree (an int is not a
/// float64: "incompatible types for comparison"); nil equals only nil; maps and lists are not
/// comparable.
fn eq(args: &[Value]) -> Result<bool, FnError> {
    if args.len() < 2 {
        return err("missing argument for comparison");
    }
    let a = &args[0];
    let ka = basic_kind(a);
    for b in &args[1..] {
        let kb = basic_kind(b);
        let truth = if ka != kb {
            if !matches!(a, Value::Nil) && !matches!(b, Value::Nil) {
                return err("incompatible types for comparison");
            }
            false
        } else {
            match (a, b) {
                (Value::Bool(x), Value::Bool(y)) => x == y,
                (Value::Int(x), Value::Int(y)) => x == y,
                (Value::Float(x), Value::Float(y)) => x == y,
                (Value::Str(x), Value::Str(y)) => x == y,
                (Value::Nil, Value::Nil) => true,
                (Value::Obj(x), Value::Obj(y))
                    if matches!((&**x, &**y), (Obj::Time(_), Obj::Time(_))) =>
                {
                    matches!((&**x, &**y), (Obj::Time(p), Obj::Time(q)) if p == q)
                }
                (Value::Nil, _) | (_, Value::Nil) => false,
                (x, _) => {
                    return err(format!(
                        "non-comparable type {}: {}",
                        sprint(x),
                        x.type_name()
                    ));
                }
            }
        };
        if truth {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Go's `lt`: ints, floats and strings of one kind.
fn lt(a: &Value, b: &Value) -> Result<bool, FnError> {
    let (ka, kb) = (basic_kind(a), basic_kind(b));
    if matches!(ka, Kind::Other | Kind::Bool) || matches!(kb, Kind::Other | Kind::Bool) {
        return err("invalid type for comparison");
    }
    if ka != kb {
        return err("incompatible types for comparison");
    }
    Ok(match (a, b) {
        (Value::Int(x), Value::Int(y)) => x < y,
        (Value::Float(x), Value::Float(y)) => x < y,
        (Value::Str(x), Value::Str(y)) => x < y,
        _ => false,
    })
}

/// Sprig's `merge`/`mergeOverwrite` through mergo (github.com/imdario/mergo `merge.go`,
/// `deepMerge` on maps): keys missing in `dst` are added, maps on both sides merge deeply,
/// and a value already in `dst` is replaced only if overwriting or if it is Go's "empty"
/// (`isEmptyValue`: "", 0, false, nil, an empty map or list) — so `merge` fills empty values too.
fn mergo(
    dst: &Rc<std::cell::RefCell<Map>>,
    src: &Map,
    overwrite: bool,
    depth: usize,
) -> Result<(), FnError> {
    if depth > MAX_VALUE_DEPTH {
        return err("merge: the values nest too deeply");
    }
    for (k, sv) in src {
        if matches!(sv, Value::Nil) {
            if overwrite {
                dst.borrow_mut().insert(k.clone(), Value::Nil);
            }
            continue;
        }
        let dv = dst.borrow().get(k).cloned();
        if let (Value::Map(sm), Some(Value::Map(dm))) = (sv, &dv) {
            if !Rc::ptr_eq(sm, dm) {
                let snapshot = sm.borrow().clone();
                mergo(dm, &snapshot, overwrite, depth + 1)?;
            }
        }
        let dv = dst.borrow().get(k).cloned();
        if let Some(d) = &dv {
            if !empty(d) {
                if matches!(sv, Value::List(_)) {
                    // mergo's slice case replaces the destination's list when overwriting
                    // (its test reads the emptiness of the maps, not the elements): only
                    // `merge` keeps a non-empty list already there.
                    if overwrite {
                        dst.borrow_mut().insert(k.clone(), sv.clone());
                    }
                    continue;
                }
                if matches!(sv, Value::Map(_)) && matches!(d, Value::Map(_)) {
                    continue;
                }
            }
        }
        if overwrite || dv.as_ref().is_none_or(empty) {
            dst.borrow_mut().insert(k.clone(), sv.clone());
        }
    }
    Ok(())
}

fn merge_fn(args: &[Value], overwrite: bool) -> F {
    if args.is_empty() {
        return err("wrong number of args for merge: want at least 1 got 0");
    }
    let dst = map_arg(&args[0])?.unwrap_or_else(|| Rc::new(std::cell::RefCell::new(Map::new())));
    for a in &args[1..] {
        if let Some(src) = map_arg(a)? {
            let snapshot = src.borrow().clone();
            mergo(&dst, &snapshot, overwrite, 0)?;
        }
    }
    Ok(Value::Map(dst))
}

fn regex(pattern: &str) -> Result<regex::Regex, FnError> {
    regex::RegexBuilder::new(pattern)
        .size_limit(1 << 20)
        .dfa_size_limit(1 << 20)
        .build()
        .map_err(|e| FnError {
            kind: ErrorKind::Exec,
            message: format!("regexp: Compile({}): {e}", quote(pattern)),
        })
}

/// Go's `Regexp.ReplaceAllString` template expansion: `$1`, `${1}`, `$name`, `$$`; a name
/// is the longest run of letters, digits and underscores, an unknown group is empty.
fn expand(caps: &regex::Captures, repl: &str, out: &mut String) {
    let b = repl.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'$' || i + 1 >= b.len() {
            let ch = repl[i..].chars().next().unwrap_or('$');
            out.push(ch);
            i += ch.len_utf8();
            continue;
        }
        if b[i + 1] == b'$' {
            out.push('$');
            i += 2;
            continue;
        }
        let (name, next) = if b[i + 1] == b'{' {
            match repl[i + 2..].find('}') {
                Some(e) => (&repl[i + 2..i + 2 + e], i + 3 + e),
                None => {
                    out.push('$');
                    i += 1;
                    continue;
                }
            }
        } else {
            let e = repl[i + 1..]
                .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                .map(|e| i + 1 + e)
                .unwrap_or(repl.len());
            (&repl[i + 1..e], e)
        };
        if name.is_empty() || !name.chars().all(|c| c.is_alphanumeric() || c == '_') {
            out.push('$');
            i += 1;
            continue;
        }
        let m = match name.parse::<usize>() {
            Ok(n) => caps.get(n),
            Err(_) => caps.name(name),
        };
        if let Some(m) = m {
            out.push_str(m.as_str());
        }
        i = next;
    }
}

/// Sprig's `b64enc`: standard base64 (RFC 4648 alphabet) with `=` padding.
pub fn b64enc(data: &[u8]) -> String {
    const T: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for c in data.chunks(3) {
        let n = (c[0] as u32) << 16
            | (*c.get(1).unwrap_or(&0) as u32) << 8
            | *c.get(2).unwrap_or(&0) as u32;
        out.push(T[(n >> 18) as usize & 63] as char);
        out.push(T[(n >> 12) as usize & 63] as char);
        out.push(if c.len() > 1 {
            T[(n >> 6) as usize & 63] as char
        } else {
            '='
        });
        out.push(if c.len() > 2 {
            T[n as usize & 63] as char
        } else {
            '='
        });
    }
    out
}

fn b64dec(s: &str) -> Option<Vec<u8>> {
    let val = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    };
    let b: Vec<u8> = s.bytes().filter(|c| *c != b'\r' && *c != b'\n').collect();
    if !b.len().is_multiple_of(4) {
        return None;
    }
    let mut out = Vec::new();
    for chunk in b.chunks(4) {
        let pads = chunk.iter().rev().take_while(|c| **c == b'=').count();
        if pads > 2 {
            return None;
        }
        let mut n = 0u32;
        for (i, c) in chunk.iter().enumerate() {
            n <<= 6;
            if i < 4 - pads {
                n |= val(*c)?;
            }
        }
        out.push((n >> 16) as u8);
        if pads < 2 {
            out.push((n >> 8) as u8);
        }
        if pads < 1 {
            out.push(n as u8);
        }
    }
    Some(out)
}

/// Go's `path.Clean` (Sprig's `clean`), which `dir` also applies.
pub(crate) fn path_clean(p: &str) -> String {
    if p.is_empty() {
        return ".".into();
    }
    let rooted = p.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for seg in p.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                if parts.last().is_some_and(|l| *l != "..") {
                    parts.pop();
                } else if !rooted {
                    parts.push("..");
                }
            }
            s => parts.push(s),
        }
    }
    let body = parts.join("/");
    match (rooted, body.is_empty()) {
        (true, _) => format!("/{body}"),
        (false, true) => ".".into(),
        (false, false) => body,
    }
}

/// Go's `path.Base` (Sprig's `base`): the last element, trailing slashes ignored.
pub(crate) fn path_base(p: &str) -> String {
    if p.is_empty() {
        return ".".into();
    }
    let t = p.trim_end_matches('/');
    if t.is_empty() {
        return "/".into();
    }
    t.rsplit('/').next().unwrap_or(t).to_string()
}

/// Go's `path.Dir` (Sprig's `dir`): everything before the last slash, cleaned.
pub(crate) fn path_dir(p: &str) -> String {
    let i = p.rfind('/').map(|i| i + 1).unwrap_or(0);
    path_clean(&p[..i])
}

/// strings.Title: the first letter of each word upper-cased (a word starts after a space or
/// a punctuation character; letters, digits and `_` continue a word).
fn title(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut prev_sep = true;
    for c in s.chars() {
        if prev_sep {
            out.extend(c.to_uppercase());
        } else {
            out.push(c);
        }
        prev_sep = !(c.is_alphanumeric() || c == '_');
    }
    out
}

/// Go's `index` builtin: maps by key, lists by int index.
fn index(args: &[Value]) -> F {
    let Some(mut item) = args.first().cloned() else {
        return err("wrong number of args for index: want at least 1 got 0");
    };
    for ix in &args[1..] {
        item = match (&item, ix) {
            (Value::Map(m), Value::Str(k)) => m.borrow().get(&**k).cloned().unwrap_or(Value::Nil),
            (Value::Map(_), Value::Nil) => Value::Nil,
            (Value::Map(_), other) => {
                return err(format!(
                    "value has type {}; should be string",
                    other.type_name()
                ));
            }
            (Value::List(l), Value::Int(i)) => {
                match usize::try_from(*i).ok().and_then(|i| l.get(i)) {
                    Some(v) => v.clone(),
                    None => return err(format!("error calling index: index out of range: {i}")),
                }
            }
            (Value::List(_), other) => {
                return err(format!(
                    "cannot index slice/array with type {}",
                    other.type_name()
                ));
            }
            (Value::Str(s), Value::Int(i)) => {
                match usize::try_from(*i).ok().and_then(|i| s.as_bytes().get(i)) {
                    Some(b) => Value::Int(*b as i64),
                    None => return err(format!("error calling index: index out of range: {i}")),
                }
            }
            (Value::Nil, _) => return err("index of untyped nil"),
            (other, _) => return err(format!("can't index item of type {}", other.type_name())),
        };
    }
    Ok(item)
}

fn len_of(v: &Value) -> F {
    Ok(Value::Int(match v {
        Value::Str(s) => s.len() as i64,
        Value::List(l) => l.len() as i64,
        Value::Map(m) => m.borrow().len() as i64,
        Value::Obj(o) => match &**o {
            Obj::Files(f) => f.len() as i64,
            Obj::ApiVersions(v) => v.len() as i64,
            Obj::Semver(_) => return err("len of type *semver.Version"),
            Obj::Time(_) => return err("len of type time.Time"),
            Obj::KubeVersion { .. } => return err("len of type common.KubeVersion"),
        },
        Value::Nil => return err("len of nil pointer"),
        other => return err(format!("len of type {}", other.type_name())),
    }))
}

/// Helm's `toYaml` (sigs.k8s.io/yaml: JSON first, then go-yaml prints it); an error gives
/// the empty string, as Helm's does.
pub(crate) fn to_yaml(v: &Value) -> Result<String, String> {
    let j = v.to_json(0)?;
    Ok(cilium_cmp_yaml::yaml::go_emit::to_yaml(&j))
}

/// Helm's `fromYaml`: the document as a map (numbers float64); an error is the map
/// `{"Error": message}`.
fn from_yaml(text: &str) -> Value {
    match cilium_cmp_yaml::yaml::read::parse_value(text) {
        Ok(serde_json::Value::Object(m)) => Value::from_values_json(&serde_json::Value::Object(m)),
        Ok(serde_json::Value::Null) => Value::map(Map::new()),
        Ok(other) => {
            let mut m = Map::new();
            m.insert(
                "Error".into(),
                Value::string(format!(
                    "error unmarshaling JSON: while decoding JSON: json: cannot unmarshal {} into Go value of type map[string]interface {{}}",
                    json_kind(&other)
                )),
            );
            Value::map(m)
        }
        Err(e) => {
            let mut m = Map::new();
            m.insert(
                "Error".into(),
                Value::string(format!("error converting YAML to JSON: yaml: line {}", e)),
            );
            Value::map(m)
        }
    }
}

fn json_kind(v: &serde_json::Value) -> &'static str {
    match v {
        serde_json::Value::Array(_) => "array",
        serde_json::Value::String(_) => "string",
        serde_json::Value::Number(_) => "number",
        serde_json::Value::Bool(_) => "bool",
        _ => "object",
    }
}

fn from_json(text: &str, want_list: bool) -> Value {
    match serde_json::from_str::<serde_json::Value>(text) {
        Ok(j @ serde_json::Value::Object(_)) if !want_list => Value::from_values_json(&j),
        Ok(j @ serde_json::Value::Array(_)) if want_list => Value::from_values_json(&j),
        Ok(other) => {
            let msg = format!(
                "json: cannot unmarshal {} into Go value of type {}",
                json_kind(&other),
                if want_list {
                    "[]interface {}"
                } else {
                    "map[string]interface {}"
                }
            );
            if want_list {
                Value::list(vec![Value::string(msg)])
            } else {
                let mut m = Map::new();
                m.insert("Error".into(), Value::string(msg));
                Value::map(m)
            }
        }
        Err(e) => {
            let msg = e.to_string();
            if want_list {
                Value::list(vec![Value::string(msg)])
            } else {
                let mut m = Map::new();
                m.insert("Error".into(), Value::string(msg));
                Value::map(m)
            }
        }
    }
}

/// A method or field of one of Helm's objects (`.Files.Get`, `.Capabilities.APIVersions.Has`,
/// `(semver x).Major`).
pub(crate) fn method(o: &Obj, name: &str, args: Vec<Value>) -> F {
    match o {
        Obj::Files(files) => match name {
            "Get" | "GetBytes" => {
                want(name, &args, 1)?;
                let p = s(&args[0])?;
                Ok(Value::string(
                    files.get(&*p).map(|b| String::from_utf8_lossy(b).into_owned()).unwrap_or_default(),
                ))
            }
            "Glob" => {
                want(name, &args, 1)?;
                let p = s(&args[0])?;
                let found = files
                    .iter()
                    .filter(|(k, _)| glob_match(&p, k))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                Ok(Value::Obj(Rc::new(Obj::Files(std::sync::Arc::new(found)))))
            }
            "AsConfig" | "AsSecrets" => {
                want(name, &args, 0)?;
                let m: Map = files
                    .iter()
                    .map(|(k, v)| {
                        let text = if name == "AsConfig" { String::from_utf8_lossy(v).into_owned() } else { b64enc(v) };
                        (path_base(k), Value::string(text))
                    })
                    .collect();
                if m.is_empty() {
                    return Ok(Value::str("{}"));
                }
                to_yaml(&Value::map(m)).map(Value::string).or_else(|_| Ok(Value::str("")))
            }
            "Lines" => {
                want(name, &args, 1)?;
                let p = s(&args[0])?;
                let text = files.get(&*p).map(|b| String::from_utf8_lossy(b).into_owned()).unwrap_or_default();
                if text.is_empty() {
                    return Ok(Value::list(Vec::new()));
                }
                let t = text.strip_suffix('\n').unwrap_or(&text);
                Ok(Value::list(t.split('\n').map(Value::str).collect()))
            }
            _ => err(format!("can't evaluate field {name} in type engine.files")),
        },
        Obj::ApiVersions(v) => match name {
            "Has" => {
                want(name, &args, 1)?;
                let p = s(&args[0])?;
                Ok(Value::Bool(v.iter().any(|x| **x == *p)))
            }
            _ => err(format!("can't evaluate field {name} in type common.VersionSet")),
        },
        Obj::KubeVersion {
            version,
            normalized,
            major,
            minor,
        } => {
            want(name, &args, 0)?;
            Ok(Value::str(match name {
                "Version" | "GitVersion" => version,
                "Major" => major,
                "Minor" => minor,
                "String" => normalized,
                _ => return err(format!("can't evaluate field {name} in type common.KubeVersion")),
            }))
        }
        Obj::Time(_) => Err(FnError {
            kind: ErrorKind::NonDeterministic { function: "now".into() },
            message: format!("the method {name} of the time `now` returns is not evaluated: it would reveal the clock"),
        }),
        Obj::Semver(v) if matches!(name, "Compare" | "LessThan" | "GreaterThan" | "Equal") => {
            // Masterminds semver v3 `version.go`: the other operand is a `*Version`.
            want(name, &args, 1)?;
            let other = match &args[0] {
                Value::Obj(o) => match &**o {
                    Obj::Semver(w) => w,
                    _ => return err(format!("wrong type for value; expected *semver.Version; got {}", args[0].type_name())),
                },
                a => return err(format!("wrong type for value; expected *semver.Version; got {}", a.type_name())),
            };
            let o = super::semver::compare(v, other);
            Ok(match name {
                "Compare" => Value::Int(o as i64),
                "LessThan" => Value::Bool(o.is_lt()),
                "GreaterThan" => Value::Bool(o.is_gt()),
                _ => Value::Bool(o.is_eq()),
            })
        }
        Obj::Semver(v) => {
            want(name, &args, 0)?;
            Ok(match name {
                "Major" => Value::Int(v.major as i64),
                "Minor" => Value::Int(v.minor as i64),
                "Patch" => Value::Int(v.patch as i64),
                "Prerelease" => Value::str(&v.pre),
                "Metadata" => Value::str(&v.meta),
                "Original" => Value::str(&v.original),
                "String" => Value::string(v.to_string()),
                _ => return err(format!("can't evaluate field {name} in type *semver.Version")),
            })
        }
    }
}

/// The methods of Helm's `common.Values` (`pkg/chart/common/values.go`): `AsMap` (the map
/// itself), `YAML` (its YAML text), `Table NAME` (a dotted path to a nested map).
pub(crate) fn values_method(recv: &Value, name: &str, args: Vec<Value>) -> F {
    match name {
        "AsMap" => {
            want(name, &args, 0)?;
            Ok(recv.clone())
        }
        "YAML" => {
            want(name, &args, 0)?;
            let y = to_yaml(recv).map_err(|e| FnError {
                kind: ErrorKind::Exec,
                message: e,
            })?;
            Ok(Value::string(format!("{y}\n")))
        }
        _ => {
            want(name, &args, 1)?;
            let path = s(&args[0])?;
            let mut cur = recv.clone();
            for part in path.split('.') {
                let next = match &cur {
                    Value::Map(m) => m.borrow().get(part).cloned(),
                    _ => None,
                };
                match next {
                    Some(v @ Value::Map(_)) => cur = v,
                    _ => return err(format!("no table named {:?}", path.to_string())),
                }
            }
            Ok(cur)
        }
    }
}

/// gobwas/glob with `/` as separator, as Helm's `Files.Glob` compiles patterns: `*` and `?`
/// stay within a path segment, `**` crosses them, `[...]` and `{a,b}` as usual.
pub(crate) fn glob_match(pat: &str, name: &str) -> bool {
    fn m(p: &[char], n: &[char], depth: usize) -> bool {
        if depth > 64 {
            return false;
        }
        match p.first() {
            None => n.is_empty(),
            Some('*') if p.get(1) == Some(&'*') => {
                (0..=n.len()).any(|i| m(&p[2..], &n[i..], depth + 1))
            }
            Some('*') => {
                for i in 0..=n.len() {
                    if m(&p[1..], &n[i..], depth + 1) {
                        return true;
                    }
                    if i < n.len() && n[i] == '/' {
                        break;
                    }
                }
                false
            }
            Some('?') => !n.is_empty() && n[0] != '/' && m(&p[1..], &n[1..], depth + 1),
            Some('[') => {
                let Some(close) = p.iter().position(|c| *c == ']') else {
                    return false;
                };
                if n.is_empty() {
                    return false;
                }
                let set = &p[1..close];
                let (neg, set) = match set.first() {
                    Some('!') | Some('^') => (true, &set[1..]),
                    _ => (false, set),
                };
                let mut hit = false;
                let mut i = 0;
                while i < set.len() {
                    if i + 2 < set.len() && set[i + 1] == '-' {
                        hit |= set[i] <= n[0] && n[0] <= set[i + 2];
                        i += 3;
                    } else {
                        hit |= set[i] == n[0];
                        i += 1;
                    }
                }
                hit != neg && m(&p[close + 1..], &n[1..], depth + 1)
            }
            Some('{') => {
                let Some(close) = p.iter().position(|c| *c == '}') else {
                    return false;
                };
                let rest = &p[close + 1..];
                p[1..close].split(|c| *c == ',').any(|alt| {
                    let mut q: Vec<char> = alt.to_vec();
                    q.extend_from_slice(rest);
                    m(&q, n, depth + 1)
                })
            }
            Some('\\') if p.len() > 1 => {
                !n.is_empty() && n[0] == p[1] && m(&p[2..], &n[1..], depth + 1)
            }
            Some(c) => !n.is_empty() && n[0] == *c && m(&p[1..], &n[1..], depth + 1),
        }
    }
    let p: Vec<char> = pat.chars().collect();
    let n: Vec<char> = name.chars().collect();
    m(&p, &n, 0)
}

fn nondeterministic(name: &str) -> FnError {
    FnError {
        kind: ErrorKind::NonDeterministic { function: name.to_string() },
        message: format!(
            "function {name:?} is not evaluated: its result depends on randomness, the clock, the cluster or the environment, so the render would not be deterministic"
        ),
    }
}

/// Calls a function by name (everything but `include`, `tpl`, `and`, `or`).
pub(crate) fn call(name: &str, a: Vec<Value>) -> F {
    if REFUSED.contains(&name) {
        return Err(nondeterministic(name));
    }
    let r = call_inner(name, &a)?;
    match &r {
        Value::Str(s) if s.len() > MAX_STRING_BYTES => limit(format!(
            "{name} built a string over {MAX_STRING_BYTES} bytes"
        )),
        Value::List(l) if l.len() > MAX_LIST_LEN => {
            limit(format!("{name} built a list over {MAX_LIST_LEN} items"))
        }
        _ => Ok(r),
    }
}

fn call_inner(name: &str, a: &[Value]) -> F {
    let sv = |i: usize| s(&a[i]);
    match name {
        // Go builtins.
        "not" => {
            want(name, a, 1)?;
            Ok(Value::Bool(!a[0].truthy()))
        }
        "len" => {
            want(name, a, 1)?;
            len_of(&a[0])
        }
        "index" => index(a),
        "slice" => {
            want_at_least(name, a, 1)?;
            let idx: Vec<i64> = a[1..].iter().map(int).collect::<Result<_, _>>()?;
            match &a[0] {
                // An empty list slices to nil, whatever the indices.
                Value::List(l) if l.is_empty() => Ok(Value::Nil),
                Value::List(l) => {
                    let lo = *idx.first().unwrap_or(&0);
                    let hi = *idx.get(1).unwrap_or(&(l.len() as i64));
                    if lo < 0 || hi < lo || hi as usize > l.len() {
                        return err(format!("index out of range: {lo}:{hi}"));
                    }
                    Ok(Value::list(l[lo as usize..hi as usize].to_vec()))
                }
                // Sprig's `slice` replaces Go's builtin (list.go `mustSlice`): lists only.
                other => err(format!(
                    "list should be type of slice or array but {}",
                    other.kind_name()
                )),
            }
        }
        "eq" => eq(a).map(Value::Bool),
        "ne" => {
            want(name, a, 2)?;
            eq(a).map(|b| Value::Bool(!b))
        }
        "lt" | "le" | "gt" | "ge" => {
            want(name, a, 2)?;
            let (x, y) = (&a[0], &a[1]);
            let r = match name {
                "lt" => lt(x, y)?,
                "le" => lt(x, y)? || eq(a)?,
                "gt" => !(lt(x, y)? || eq(a)?),
                _ => !lt(x, y)?,
            };
            Ok(Value::Bool(r))
        }
        "print" => {
            // fmt.Sprint: a space between operands when neither is a string.
            let mut out = String::new();
            for (i, v) in a.iter().enumerate() {
                if i > 0 && !matches!(v, Value::Str(_)) && !matches!(a[i - 1], Value::Str(_)) {
                    out.push(' ');
                }
                out.push_str(&sprint(v));
            }
            string_result(out)
        }
        "println" => {
            let parts: Vec<String> = a.iter().map(sprint).collect();
            string_result(format!("{}\n", parts.join(" ")))
        }
        "printf" => {
            want_at_least(name, a, 1)?;
            let f = sv(0)?;
            string_result(sprintf(&f, &a[1..]))
        }
        "html" => {
            let t: String = a.iter().map(strval).collect();
            let mut out = String::new();
            for c in t.chars() {
                match c {
                    '<' => out.push_str("&lt;"),
                    '>' => out.push_str("&gt;"),
                    '&' => out.push_str("&amp;"),
                    '\'' => out.push_str("&#39;"),
                    '"' => out.push_str("&#34;"),
                    '\0' => out.push('\u{FFFD}'),
                    c => out.push(c),
                }
            }
            string_result(out)
        }
        "js" => {
            let t: String = a.iter().map(strval).collect();
            let mut out = String::new();
            for c in t.chars() {
                match c {
                    '\\' => out.push_str("\\\\"),
                    '\'' => out.push_str("\\'"),
                    '"' => out.push_str("\\\""),
                    '<' => out.push_str("\\u003C"),
                    '>' => out.push_str("\\u003E"),
                    '&' => out.push_str("\\u0026"),
                    '=' => out.push_str("\\u003D"),
                    '\n' => out.push_str("\\n"),
                    '\r' => out.push_str("\\r"),
                    '\t' => out.push_str("\\t"),
                    c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04X}", c as u32)),
                    c => out.push(c),
                }
            }
            string_result(out)
        }
        "urlquery" => {
            let t: String = a.iter().map(strval).collect();
            let mut out = String::new();
            for b in t.bytes() {
                match b {
                    b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                        out.push(b as char)
                    }
                    b' ' => out.push('+'),
                    b => out.push_str(&format!("%{b:02X}")),
                }
            }
            string_result(out)
        }
        "call" => err("call of a non-function: templates here hold no function values"),

        // Helm.
        "required" => {
            want(name, a, 2)?;
            let msg = sv(0)?;
            match &a[1] {
                Value::Nil => Err(FnError {
                    kind: ErrorKind::Fail,
                    message: msg.to_string(),
                }),
                Value::Str(x) if x.is_empty() => Err(FnError {
                    kind: ErrorKind::Fail,
                    message: msg.to_string(),
                }),
                v => Ok(v.clone()),
            }
        }
        "fail" => {
            want(name, a, 1)?;
            Err(FnError {
                kind: ErrorKind::Fail,
                message: sv(0)?.to_string(),
            })
        }
        "toYaml" | "mustToYaml" | "toYamlPretty" => {
            want(name, a, 1)?;
            match to_yaml(&a[0]) {
                Ok(t) => string_result(t),
                Err(e) if name == "mustToYaml" => err(e),
                Err(_) => Ok(Value::str("")),
            }
        }
        "fromYaml" => {
            want(name, a, 1)?;
            Ok(from_yaml(&sv(0)?))
        }
        "fromYamlArray" => {
            want(name, a, 1)?;
            let text = sv(0)?;
            Ok(match cilium_cmp_yaml::yaml::read::parse_value(&text) {
                Ok(j @ serde_json::Value::Array(_)) => Value::from_values_json(&j),
                Ok(serde_json::Value::Null) => Value::list(Vec::new()),
                Ok(other) => Value::list(vec![Value::string(format!(
                    "error unmarshaling JSON: while decoding JSON: json: cannot unmarshal {} into Go value of type []interface {{}}",
                    json_kind(&other)
                ))]),
                Err(e) => Value::list(vec![Value::string(format!("error converting YAML to JSON: yaml: line {e}"))]),
            })
        }
        "toJson" | "mustToJson" | "toRawJson" | "mustToRawJson" => {
            want(name, a, 1)?;
            match json::to_json(&a[0], !name.ends_with("RawJson")) {
                Ok(t) => string_result(t),
                Err(e) if name.starts_with("must") => err(e),
                Err(_) => Ok(Value::str("")),
            }
        }
        "toPrettyJson" | "mustToPrettyJson" => {
            want(name, a, 1)?;
            match json::to_json(&a[0], true) {
                Ok(t) => string_result(json::indent(&t)),
                Err(e) if name.starts_with("must") => err(e),
                Err(_) => Ok(Value::str("")),
            }
        }
        "fromJson" | "mustFromJson" => {
            want(name, a, 1)?;
            Ok(from_json(&sv(0)?, false))
        }
        "fromJsonArray" => {
            want(name, a, 1)?;
            Ok(from_json(&sv(0)?, true))
        }
        "toToml" => err("toToml is not supported by this engine (no Cilium template calls it)"),

        // Sprig strings.
        "toString" => {
            want(name, a, 1)?;
            string_result(strval(&a[0]))
        }
        "quote" => {
            let parts: Vec<String> = a
                .iter()
                .filter(|v| !matches!(v, Value::Nil))
                .map(|v| quote(&strval(v)))
                .collect();
            string_result(parts.join(" "))
        }
        "squote" => {
            let parts: Vec<String> = a
                .iter()
                .filter(|v| !matches!(v, Value::Nil))
                .map(|v| format!("'{}'", strval(v)))
                .collect();
            string_result(parts.join(" "))
        }
        "cat" => {
            let parts: Vec<String> = a
                .iter()
                .filter(|v| !matches!(v, Value::Nil))
                .map(strval)
                .collect();
            string_result(parts.join(" "))
        }
        "trim" => {
            want(name, a, 1)?;
            Ok(Value::str(sv(0)?.trim_matches(|c: char| c.is_whitespace())))
        }
        "trimAll" => {
            want(name, a, 2)?;
            let cut: Vec<char> = sv(0)?.chars().collect();
            Ok(Value::str(sv(1)?.trim_matches(|c| cut.contains(&c))))
        }
        "trimPrefix" => {
            want(name, a, 2)?;
            let (p, x) = (sv(0)?, sv(1)?);
            Ok(Value::str(x.strip_prefix(&*p).unwrap_or(&x)))
        }
        "trimSuffix" => {
            want(name, a, 2)?;
            let (p, x) = (sv(0)?, sv(1)?);
            Ok(Value::str(x.strip_suffix(&*p).unwrap_or(&x)))
        }
        "upper" => {
            want(name, a, 1)?;
            Ok(Value::string(sv(0)?.to_uppercase()))
        }
        "lower" => {
            want(name, a, 1)?;
            Ok(Value::string(sv(0)?.to_lowercase()))
        }
        "title" => {
            want(name, a, 1)?;
            Ok(Value::string(title(&sv(0)?)))
        }
        "untitle" => {
            want(name, a, 1)?;
            let mut out = String::new();
            let mut prev_sep = true;
            for c in sv(0)?.chars() {
                if prev_sep {
                    out.extend(c.to_lowercase());
                } else {
                    out.push(c);
                }
                prev_sep = c.is_whitespace();
            }
            Ok(Value::string(out))
        }
        "swapcase" => {
            want(name, a, 1)?;
            Ok(Value::string(
                sv(0)?
                    .chars()
                    .flat_map(|c| {
                        if c.is_uppercase() {
                            c.to_lowercase().collect::<Vec<_>>()
                        } else {
                            c.to_uppercase().collect()
                        }
                    })
                    .collect(),
            ))
        }
        "camelcase" | "snakecase" | "kebabcase" => err(format!(
            "{name} is not supported by this engine (no Cilium template calls it)"
        )),
        // Sprig strings.go `abbrev` over goutils `Abbreviate` (offset 0): byte widths; below
        // 4 the string is returned whole.
        "abbrev" => {
            want(name, a, 2)?;
            let (w, x) = (int(&a[0])?, sv(1)?);
            if w < 4 || x.len() as i64 <= w {
                return Ok(Value::Str(x));
            }
            let cut = &x.as_bytes()[..(w - 3) as usize];
            Ok(Value::string(format!(
                "{}...",
                String::from_utf8_lossy(cut)
            )))
        }
        // goutils `Initials`: the first byte of every run of non-space bytes.
        "initials" => {
            want(name, a, 1)?;
            let x = sv(0)?;
            let mut out = String::new();
            let mut gap = true;
            for b in x.bytes() {
                if matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r' | 0x85 | 0xa0) {
                    gap = true;
                } else if gap {
                    out.push(char::from(b));
                    gap = false;
                }
            }
            Ok(Value::string(out))
        }
        "plural" => {
            want(name, a, 3)?;
            Ok(if int(&a[2])? == 1 {
                a[0].clone()
            } else {
                a[1].clone()
            })
        }
        "wrap" => {
            want(name, a, 2)?;
            let (w, x) = (int(&a[0])?, sv(1)?);
            Ok(Value::string(wrap(&x, w.max(1) as usize)))
        }
        "contains" => {
            want(name, a, 2)?;
            Ok(Value::Bool(sv(1)?.contains(&*sv(0)?)))
        }
        "hasPrefix" => {
            want(name, a, 2)?;
            Ok(Value::Bool(sv(1)?.starts_with(&*sv(0)?)))
        }
        "hasSuffix" => {
            want(name, a, 2)?;
            Ok(Value::Bool(sv(1)?.ends_with(&*sv(0)?)))
        }
        "replace" => {
            want(name, a, 3)?;
            let (old, new, src) = (sv(0)?, sv(1)?, sv(2)?);
            if old.is_empty() {
                // strings.Replace with an empty old inserts `new` around every rune.
                let n = src.chars().count() + 1;
                if n.saturating_mul(new.len()).saturating_add(src.len()) > MAX_STRING_BYTES {
                    return limit(format!(
                        "replace would build a string over {MAX_STRING_BYTES} bytes"
                    ));
                }
                let mut out = String::from(&*new);
                for c in src.chars() {
                    out.push(c);
                    out.push_str(&new);
                }
                return string_result(out);
            }
            let hits = src.matches(&*old).count();
            if hits.saturating_mul(new.len()).saturating_add(src.len()) > MAX_STRING_BYTES {
                return limit(format!(
                    "replace would build a string over {MAX_STRING_BYTES} bytes"
                ));
            }
            string_result(src.replace(&*old, &new))
        }
        "repeat" => {
            want(name, a, 2)?;
            let (n, x) = (int(&a[0])?, sv(1)?);
            if n < 0 {
                return err("strings: negative Repeat count");
            }
            if (n as usize).saturating_mul(x.len()) > MAX_STRING_BYTES {
                return limit(format!(
                    "repeat would build a string over {MAX_STRING_BYTES} bytes"
                ));
            }
            Ok(Value::string(x.repeat(n as usize)))
        }
        "substr" => {
            want(name, a, 3)?;
            let (start, end, x) = (int(&a[0])?, int(&a[1])?, sv(2)?);
            // Sprig strings.go `substring`: byte offsets; a negative start means from the
            // beginning, an end past the string or negative means to its end; any other
            // pair Go cannot slice with (start past end or past the string) panics, which the
            // template reports as an error.
            let len = x.len() as i64;
            let (st, en) = if start < 0 {
                (0, end)
            } else if end < 0 || end > len {
                (start, len)
            } else {
                (start, end)
            };
            if en < 0 || en > len || st > en {
                return err(format!(
                    "runtime error: slice bounds out of range [{st}:{en}]"
                ));
            }
            Ok(Value::string(
                String::from_utf8_lossy(&x.as_bytes()[st as usize..en as usize]).into_owned(),
            ))
        }
        "nospace" => {
            want(name, a, 1)?;
            Ok(Value::string(
                sv(0)?.chars().filter(|c| !c.is_whitespace()).collect(),
            ))
        }
        "trunc" => {
            want(name, a, 2)?;
            let (c, x) = (int(&a[0])?, sv(1)?);
            let len = x.len() as i64;
            // Byte offsets (strings.go `trunc`); a cut inside a character keeps Go's bytes.
            let cut =
                |lo: usize, hi: usize| String::from_utf8_lossy(&x.as_bytes()[lo..hi]).into_owned();
            if c < 0 && len + c > 0 {
                return Ok(Value::string(cut((len + c) as usize, len as usize)));
            }
            if c >= 0 && len > c {
                return Ok(Value::string(cut(0, c as usize)));
            }
            Ok(Value::Str(x))
        }
        "indent" | "nindent" => {
            want(name, a, 2)?;
            let (n, x) = (int(&a[0])?, sv(1)?);
            let n = n.max(0) as usize;
            let lines = x.matches('\n').count() + 1;
            if lines.saturating_mul(n).saturating_add(x.len()) > MAX_STRING_BYTES {
                return limit(format!(
                    "{name} would build a string over {MAX_STRING_BYTES} bytes"
                ));
            }
            let pad = " ".repeat(n);
            let mut out = String::with_capacity(x.len() + lines * n + 1);
            if name == "nindent" {
                out.push('\n');
            }
            out.push_str(&pad);
            out.push_str(&x.replace('\n', &format!("\n{pad}")));
            Ok(Value::string(out))
        }
        "join" => {
            want(name, a, 2)?;
            let sep = sv(0)?;
            string_result(strslice(&a[1]).join(&sep))
        }
        "split" | "splitn" => {
            let (sep, x, n) = if name == "split" {
                want(name, a, 2)?;
                (sv(0)?, sv(1)?, -1)
            } else {
                want(name, a, 3)?;
                (sv(0)?, sv(2)?, int(&a[1])?)
            };
            let parts: Vec<&str> = if n < 0 {
                x.split(&*sep).collect()
            } else {
                x.splitn(n as usize, &*sep).collect()
            };
            let m: Map = parts
                .iter()
                .enumerate()
                .map(|(i, p)| (format!("_{i}"), Value::str(p)))
                .collect();
            Ok(Value::map(m))
        }
        "splitList" => {
            want(name, a, 2)?;
            let (sep, x) = (sv(0)?, sv(1)?);
            if sep.is_empty() {
                return list_result(x.chars().map(|c| Value::string(c.to_string())).collect());
            }
            list_result(x.split(&*sep).map(Value::str).collect())
        }
        "b64enc" => {
            want(name, a, 1)?;
            string_result(b64enc(sv(0)?.as_bytes()))
        }
        "b64dec" => {
            want(name, a, 1)?;
            Ok(match b64dec(&sv(0)?) {
                Some(b) => Value::string(String::from_utf8_lossy(&b).into_owned()),
                None => Value::str("illegal base64 data at input byte 0"),
            })
        }
        "sha256sum" => {
            want(name, a, 1)?;
            let d = Sha256::digest(sv(0)?.as_bytes());
            Ok(Value::string(
                d.iter().map(|b| format!("{b:02x}")).collect(),
            ))
        }
        "sha1sum" => {
            want(name, a, 1)?;
            let d = sha1(sv(0)?.as_bytes());
            Ok(Value::string(
                d.iter().map(|b| format!("{b:02x}")).collect(),
            ))
        }
        // hash/adler32 of the bytes, printed in decimal (Sprig crypto.go `adler32sum`).
        "adler32sum" => {
            want(name, a, 1)?;
            let (mut lo, mut hi) = (1u32, 0u32);
            for b in sv(0)?.bytes() {
                lo = (lo + b as u32) % 65521;
                hi = (hi + lo) % 65521;
            }
            Ok(Value::string(((hi << 16) | lo).to_string()))
        }
        "toStrings" => {
            want(name, a, 1)?;
            list_result(strslice(&a[0]).into_iter().map(Value::string).collect())
        }

        // Sprig defaults and reflection.
        "default" => {
            want_at_least(name, a, 1)?;
            if a.len() < 2 || empty(&a[1]) {
                Ok(a[0].clone())
            } else {
                Ok(a[1].clone())
            }
        }
        "empty" => {
            want(name, a, 1)?;
            Ok(Value::Bool(empty(&a[0])))
        }
        "coalesce" => Ok(a.iter().find(|v| !empty(v)).cloned().unwrap_or(Value::Nil)),
        "all" => Ok(Value::Bool(a.iter().all(|v| !empty(v)))),
        "any" => Ok(Value::Bool(a.iter().any(|v| !empty(v)))),
        "ternary" => {
            want(name, a, 3)?;
            Ok(if bool_arg(&a[2])? {
                a[0].clone()
            } else {
                a[1].clone()
            })
        }
        "deepCopy" | "mustDeepCopy" => {
            want(name, a, 1)?;
            a[0].deep_copy(0).map_err(|e| FnError {
                kind: ErrorKind::Exec,
                message: e,
            })
        }
        "kindOf" => {
            want(name, a, 1)?;
            Ok(Value::str(a[0].kind_name()))
        }
        "kindIs" => {
            want(name, a, 2)?;
            Ok(Value::Bool(*sv(0)? == *a[1].kind_name()))
        }
        "typeOf" => {
            want(name, a, 1)?;
            Ok(Value::str(a[0].type_name()))
        }
        "typeIs" => {
            want(name, a, 2)?;
            Ok(Value::Bool(*sv(0)? == *a[1].type_name()))
        }
        "typeIsLike" => {
            want(name, a, 2)?;
            let t = sv(0)?;
            let n = a[1].type_name();
            Ok(Value::Bool(*t == *n || *t == *format!("*{n}")))
        }
        "deepEqual" => {
            want(name, a, 2)?;
            Ok(Value::Bool(
                a[0].to_json(0).ok() == a[1].to_json(0).ok()
                    && a[0].type_name() == a[1].type_name(),
            ))
        }

        // Sprig numbers.
        "int" | "int64" | "atoi" => {
            want(name, a, 1)?;
            if name == "atoi" {
                return Ok(Value::Int(sv(0)?.parse::<i64>().unwrap_or(0)));
            }
            Ok(Value::Int(to_int64(&a[0])))
        }
        "float64" => {
            want(name, a, 1)?;
            Ok(Value::Float(to_float64(&a[0])))
        }
        "add1" => {
            want(name, a, 1)?;
            Ok(Value::Int(to_int64(&a[0]).wrapping_add(1)))
        }
        "add" | "mul" => {
            let mut acc: i64 = if name == "add" { 0 } else { 1 };
            for (i, v) in a.iter().enumerate() {
                let x = to_int64(v);
                acc = if i == 0 {
                    x
                } else if name == "add" {
                    acc.wrapping_add(x)
                } else {
                    acc.wrapping_mul(x)
                };
            }
            Ok(Value::Int(acc))
        }
        "sub" | "div" | "mod" => {
            want(name, a, 2)?;
            let (x, y) = (to_int64(&a[0]), to_int64(&a[1]));
            Ok(Value::Int(match name {
                "sub" => x.wrapping_sub(y),
                _ if y == 0 => return err("runtime error: integer divide by zero"),
                "div" => x.wrapping_div(y),
                _ => x.wrapping_rem(y),
            }))
        }
        "max" | "min" => {
            want_at_least(name, a, 1)?;
            let xs = a.iter().map(to_int64);
            Ok(Value::Int(if name == "max" {
                xs.max().unwrap_or(0)
            } else {
                xs.min().unwrap_or(0)
            }))
        }
        "floor" | "ceil" => {
            want(name, a, 1)?;
            let f = to_float64(&a[0]);
            Ok(Value::Float(if name == "floor" {
                f.floor()
            } else {
                f.ceil()
            }))
        }
        "round" => {
            want_at_least(name, a, 2)?;
            let (f, p) = (to_float64(&a[0]), to_int64(&a[1]).clamp(-300, 300) as i32);
            let m = 10f64.powi(p);
            Ok(Value::Float((f * m).round() / m))
        }
        "until" | "untilStep" | "seq" => {
            let (start, stop, step) = match (name, a.len()) {
                ("until", 1) => (0, int(&a[0])?, 1),
                ("untilStep", 3) => (int(&a[0])?, int(&a[1])?, int(&a[2])?),
                ("seq", 1) => (1, to_int64(&a[0]) + 1, 1),
                ("seq", 2) => (to_int64(&a[0]), to_int64(&a[1]) + 1, 1),
                _ => return err(format!("wrong number of args for {name}")),
            };
            let step = if name == "until" && stop < 0 {
                -1
            } else {
                step
            };
            if step == 0 {
                return Ok(Value::list(Vec::new()));
            }
            let count = ((stop as i128 - start as i128) / step as i128).max(0) as u128;
            if count > MAX_LIST_LEN as u128 {
                return limit(format!(
                    "{name} would build a list over {MAX_LIST_LEN} items"
                ));
            }
            let mut out = Vec::new();
            let mut i = start;
            while (step > 0 && i < stop) || (step < 0 && i > stop) {
                out.push(Value::Int(i));
                i += step;
            }
            if name == "seq" {
                return Ok(Value::string(
                    out.iter().map(sprint).collect::<Vec<_>>().join(" "),
                ));
            }
            list_result(out)
        }

        // Sprig lists and dicts.
        "list" | "tuple" => list_result(a.to_vec()),
        "dict" => {
            let mut m = Map::new();
            for pair in a.chunks(2) {
                let k = strval(&pair[0]);
                m.insert(k, pair.get(1).cloned().unwrap_or_else(|| Value::str("")));
            }
            Ok(Value::map(m))
        }
        "get" => {
            want(name, a, 2)?;
            let k = sv(1)?;
            Ok(match map_arg(&a[0])? {
                Some(m) => m
                    .borrow()
                    .get(&*k)
                    .cloned()
                    .unwrap_or_else(|| Value::str("")),
                None => Value::str(""),
            })
        }
        "set" => {
            want(name, a, 3)?;
            let k = sv(1)?;
            match map_arg(&a[0])? {
                Some(m) => {
                    m.borrow_mut().insert(k.to_string(), a[2].clone());
                    Ok(Value::Map(m))
                }
                None => err("assignment to entry in nil map"),
            }
        }
        "unset" => {
            want(name, a, 2)?;
            let k = sv(1)?;
            match map_arg(&a[0])? {
                Some(m) => {
                    m.borrow_mut().remove(&*k);
                    Ok(Value::Map(m))
                }
                None => Ok(Value::Nil),
            }
        }
        "hasKey" => {
            want(name, a, 2)?;
            let k = sv(1)?;
            Ok(Value::Bool(
                map_arg(&a[0])?.is_some_and(|m| m.borrow().contains_key(&*k)),
            ))
        }
        "pluck" => {
            want_at_least(name, a, 1)?;
            let k = sv(0)?;
            let mut out = Vec::new();
            for d in &a[1..] {
                if let Some(m) = map_arg(d)? {
                    if let Some(v) = m.borrow().get(&*k) {
                        out.push(v.clone());
                    }
                }
            }
            list_result(out)
        }
        "keys" => {
            // Go's map order is random; sorted here, which is one of its orders.
            let mut out = Vec::new();
            for d in a {
                if let Some(m) = map_arg(d)? {
                    out.extend(m.borrow().keys().map(|k| Value::str(k)));
                }
            }
            list_result(out)
        }
        "values" => {
            want(name, a, 1)?;
            let m = map_arg(&a[0])?;
            list_result(
                m.map(|m| m.borrow().values().cloned().collect())
                    .unwrap_or_default(),
            )
        }
        "pick" | "omit" => {
            want_at_least(name, a, 1)?;
            let names: Vec<String> = a[1..]
                .iter()
                .map(|v| s(v).map(|x| x.to_string()))
                .collect::<Result<_, _>>()?;
            let m = map_arg(&a[0])?;
            let out: Map = m
                .map(|m| {
                    m.borrow()
                        .iter()
                        .filter(|(k, _)| names.contains(k) == (name == "pick"))
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect()
                })
                .unwrap_or_default();
            Ok(Value::map(out))
        }
        "dig" => {
            if a.len() < 3 {
                return err("dig needs at least three arguments");
            }
            let dict = map_arg(&a[a.len() - 1])?;
            let def = a[a.len() - 2].clone();
            let keys: Vec<Arc<str>> = a[..a.len() - 2].iter().map(s).collect::<Result<_, _>>()?;
            let Some(mut cur) = dict else {
                return err(
                    "interface conversion: interface {} is nil, not map[string]interface {}",
                );
            };
            for (i, k) in keys.iter().enumerate() {
                let step = cur.borrow().get(&**k).cloned();
                let Some(step) = step else { return Ok(def) };
                if i + 1 == keys.len() {
                    return Ok(step);
                }
                match step {
                    Value::Map(m) => cur = m,
                    other => {
                        return err(format!(
                        "interface conversion: interface {{}} is {}, not map[string]interface {{}}",
                        if matches!(other, Value::Nil) {
                            "nil".to_string()
                        } else {
                            other.type_name().to_string()
                        }
                    ))
                    }
                }
            }
            Ok(def)
        }
        "merge" | "mustMerge" => merge_fn(a, false),
        "mergeOverwrite" | "mustMergeOverwrite" => merge_fn(a, true),
        "append" | "push" | "mustAppend" | "mustPush" => {
            want(name, a, 2)?;
            let l = list_of("push", &a[0])?;
            let mut out = l.to_vec();
            out.push(a[1].clone());
            list_result(out)
        }
        "prepend" | "mustPrepend" => {
            want(name, a, 2)?;
            let l = list_of("prepend", &a[0])?;
            let mut out = vec![a[1].clone()];
            out.extend(l.iter().cloned());
            list_result(out)
        }
        "concat" => {
            let mut out = Vec::new();
            for l in a {
                match l {
                    Value::List(l) => {
                        if out.len() + l.len() > MAX_LIST_LEN {
                            return limit(format!(
                                "concat would build a list over {MAX_LIST_LEN} items"
                            ));
                        }
                        out.extend(l.iter().cloned())
                    }
                    other => {
                        return err(format!("Cannot concat type {} as list", other.kind_name()))
                    }
                }
            }
            list_result(out)
        }
        "first" | "mustFirst" | "last" | "mustLast" => {
            want(name, a, 1)?;
            let l = list_of("find first", &a[0])?;
            Ok(if name.to_lowercase().contains("first") {
                l.first()
            } else {
                l.last()
            }
            .cloned()
            .unwrap_or(Value::Nil))
        }
        "rest" | "mustRest" | "initial" | "mustInitial" => {
            want(name, a, 1)?;
            let l = list_of("find rest", &a[0])?;
            if l.is_empty() {
                return Ok(Value::Nil);
            }
            Ok(Value::list(if name.contains("est") {
                l[1..].to_vec()
            } else {
                l[..l.len() - 1].to_vec()
            }))
        }
        "uniq" | "mustUniq" => {
            want(name, a, 1)?;
            let l = list_of("find uniq", &a[0])?;
            let mut out: Vec<Value> = Vec::new();
            let mut seen: Vec<serde_json::Value> = Vec::new();
            for v in l.iter() {
                let j = v.to_json(0).unwrap_or(serde_json::Value::Null);
                let key = (v.type_name(), j);
                if !seen
                    .iter()
                    .zip(out.iter())
                    .any(|(s, o)| *s == key.1 && o.type_name() == key.0)
                {
                    seen.push(key.1);
                    out.push(v.clone());
                }
            }
            list_result(out)
        }
        "has" | "mustHas" => {
            want(name, a, 2)?;
            match &a[1] {
                Value::Nil => Ok(Value::Bool(false)),
                Value::List(l) => {
                    for x in l.iter() {
                        if same(x, &a[0]) {
                            return Ok(Value::Bool(true));
                        }
                    }
                    Ok(Value::Bool(false))
                }
                other => err(format!("Cannot find has on type {}", other.kind_name())),
            }
        }
        "without" | "mustWithout" => {
            want_at_least(name, a, 1)?;
            let l = list_of("find without", &a[0])?;
            list_result(
                l.iter()
                    .filter(|x| !a[1..].iter().any(|o| same(x, o)))
                    .cloned()
                    .collect(),
            )
        }
        "compact" | "mustCompact" => {
            want(name, a, 1)?;
            let l = list_of("compact", &a[0])?;
            list_result(l.iter().filter(|x| !empty(x)).cloned().collect())
        }
        "reverse" | "mustReverse" => {
            want(name, a, 1)?;
            let l = list_of("find reverse", &a[0])?;
            list_result(l.iter().rev().cloned().collect())
        }
        "sortAlpha" => {
            want(name, a, 1)?;
            let mut v = strslice(&a[0]);
            v.sort();
            list_result(v.into_iter().map(Value::string).collect())
        }

        // Sprig regex (Go's RE2 syntax; the `regex` crate is RE2's family and linear-time).
        "regexMatch" | "mustRegexMatch" => {
            want(name, a, 2)?;
            match regex(&sv(0)?) {
                Ok(r) => Ok(Value::Bool(r.is_match(&sv(1)?))),
                Err(e) if name.starts_with("must") => Err(e),
                Err(_) => Ok(Value::Bool(false)),
            }
        }
        "regexFind" | "mustRegexFind" => {
            want(name, a, 2)?;
            let r = regex(&sv(0)?)?;
            Ok(Value::str(
                r.find(&sv(1)?).map(|m| m.as_str()).unwrap_or(""),
            ))
        }
        "regexFindAll" | "mustRegexFindAll" => {
            want(name, a, 3)?;
            let r = regex(&sv(0)?)?;
            let n = int(&a[2])?;
            let text = sv(1)?;
            let it = r.find_iter(&text).map(|m| Value::str(m.as_str()));
            list_result(if n < 0 {
                it.collect()
            } else {
                it.take(n as usize).collect()
            })
        }
        "regexReplaceAll" | "mustRegexReplaceAll" => {
            want(name, a, 3)?;
            let r = regex(&sv(0)?)?;
            let (text, repl) = (sv(1)?, sv(2)?);
            let mut out = String::new();
            let mut last = 0;
            for caps in r.captures_iter(&text) {
                let m = caps.get(0).expect("group 0 always matches");
                out.push_str(&text[last..m.start()]);
                expand(&caps, &repl, &mut out);
                last = m.end();
                if out.len() > MAX_STRING_BYTES {
                    return limit(format!(
                        "{name} built a string over {MAX_STRING_BYTES} bytes"
                    ));
                }
            }
            out.push_str(&text[last..]);
            string_result(out)
        }
        "regexReplaceAllLiteral" | "mustRegexReplaceAllLiteral" => {
            want(name, a, 3)?;
            let r = regex(&sv(0)?)?;
            let (text, repl) = (sv(1)?, sv(2)?);
            string_result(r.replace_all(&text, regex::NoExpand(&repl)).into_owned())
        }
        "regexSplit" | "mustRegexSplit" => {
            want(name, a, 3)?;
            let r = regex(&sv(0)?)?;
            let (text, n) = (sv(1)?, int(&a[2])?);
            if n == 0 {
                return Ok(Value::Nil);
            }
            let parts: Vec<Value> = if n < 0 {
                r.split(&text).map(Value::str).collect()
            } else {
                r.splitn(&text, n as usize).map(Value::str).collect()
            };
            list_result(parts)
        }
        "regexQuoteMeta" => {
            want(name, a, 1)?;
            Ok(Value::string(regex::escape(&sv(0)?)))
        }

        // Sprig semver.
        "semver" => {
            want(name, a, 1)?;
            let v = super::semver::parse(&sv(0)?).map_err(|e| FnError {
                kind: ErrorKind::Exec,
                message: e,
            })?;
            Ok(Value::Obj(Rc::new(Obj::Semver(v))))
        }
        "semverCompare" => {
            want(name, a, 2)?;
            super::semver::satisfies(&sv(0)?, &sv(1)?)
                .map(Value::Bool)
                .map_err(|e| FnError {
                    kind: ErrorKind::Exec,
                    message: e,
                })
        }

        // Sprig paths (Go's `path` package).
        "base" => {
            want(name, a, 1)?;
            Ok(Value::string(path_base(&sv(0)?)))
        }
        "dir" => {
            want(name, a, 1)?;
            Ok(Value::string(path_dir(&sv(0)?)))
        }
        "clean" => {
            want(name, a, 1)?;
            Ok(Value::string(path_clean(&sv(0)?)))
        }
        "ext" => {
            want(name, a, 1)?;
            let p = sv(0)?;
            let b = p.rsplit('/').next().unwrap_or(&p);
            Ok(Value::str(b.rfind('.').map(|i| &b[i..]).unwrap_or("")))
        }
        "isAbs" => {
            want(name, a, 1)?;
            Ok(Value::Bool(sv(0)?.starts_with('/')))
        }
        "now" => {
            want(name, a, 0)?;
            Ok(Value::Obj(Rc::new(Obj::Time(0))))
        }
        "dateModify" | "date_modify" | "mustDateModify" | "must_date_modify" => {
            want(name, a, 2)?;
            let d = sv(0)?;
            let Value::Obj(o) = &a[1] else {
                return err(format!(
                    "wrong type for value; expected time.Time; got {}",
                    a[1].type_name()
                ));
            };
            let Obj::Time(t) = &**o else {
                return err(format!(
                    "wrong type for value; expected time.Time; got {}",
                    a[1].type_name()
                ));
            };
            match parse_duration(&d) {
                Ok(ns) => Ok(Value::Obj(Rc::new(Obj::Time(t + ns as i128)))),
                Err(e) if name.starts_with("must") => err(e),
                Err(_) => Ok(a[1].clone()),
            }
        }
        "buildCustomCert" => {
            // Deterministic (it decodes the certificate and key the user gave), Sprig
            // crypto.go `buildCustomCertificate`; the result is a struct with Cert and Key.
            want(name, a, 2)?;
            let cert = b64dec(&sv(0)?).ok_or_else(|| FnError {
                kind: ErrorKind::Exec,
                message: "unable to decode base64 certificate".into(),
            })?;
            let key = b64dec(&sv(1)?).ok_or_else(|| FnError {
                kind: ErrorKind::Exec,
                message: "unable to decode base64 private key".into(),
            })?;
            let cert = String::from_utf8_lossy(&cert).into_owned();
            let key = String::from_utf8_lossy(&key).into_owned();
            if !cert.contains("-----BEGIN ") {
                return err("unable to decode certificate");
            }
            if !key.contains("-----BEGIN ") {
                return err("unable to decode private key");
            }
            let mut m = Map::new();
            m.insert("Cert".into(), Value::string(cert));
            m.insert("Key".into(), Value::string(key));
            Ok(Value::map(m))
        }
        _ => err(format!("function {name:?} not defined")),
    }
}

/// Go's `time.ParseDuration` (src/time/format.go): signed sequence of decimal numbers with
/// units ns, us, µs, ms, s, m, h; the fraction below a nanosecond is dropped; more than
/// 2^63-1 ns is an error.
pub(crate) fn parse_duration(text: &str) -> Result<i64, String> {
    let bad = || format!("time: invalid duration {}", quote(text));
    let (neg, mut s) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    if s == "0" {
        return Ok(0);
    }
    if s.is_empty() {
        return Err(bad());
    }
    let mut total: u128 = 0;
    while !s.is_empty() {
        let int_len = s.bytes().take_while(|b| b.is_ascii_digit()).count();
        let int_part = &s[..int_len];
        s = &s[int_len..];
        let mut frac_part = "";
        if let Some(rest) = s.strip_prefix('.') {
            let n = rest.bytes().take_while(|b| b.is_ascii_digit()).count();
            frac_part = &rest[..n];
            s = &rest[n..];
            if int_len == 0 && n == 0 {
                return Err(bad());
            }
        } else if int_len == 0 {
            return Err(bad());
        }
        let unit_len = s
            .find(|c: char| c == '.' || c.is_ascii_digit())
            .unwrap_or(s.len());
        let unit: u128 = match &s[..unit_len] {
            "ns" => 1,
            "us" | "\u{b5}s" | "\u{3bc}s" => 1_000,
            "ms" => 1_000_000,
            "s" => 1_000_000_000,
            "m" => 60_000_000_000,
            "h" => 3_600_000_000_000,
            "" => return Err(format!("time: missing unit in duration {}", quote(text))),
            u => {
                return Err(format!(
                    "time: unknown unit {} in duration {}",
                    quote(u),
                    quote(text)
                ))
            }
        };
        s = &s[unit_len..];
        let v: u128 = if int_part.is_empty() {
            0
        } else {
            int_part.parse().map_err(|_| bad())?
        };
        let mut add = v.checked_mul(unit).ok_or_else(bad)?;
        if !frac_part.is_empty() {
            let digits = &frac_part[..frac_part.len().min(30)];
            let f: u128 = digits.parse().map_err(|_| bad())?;
            let scale = 10u128.pow(digits.len() as u32);
            add += f * unit / scale;
        }
        total = total.checked_add(add).ok_or_else(bad)?;
        if total > i64::MAX as u128 + neg as u128 {
            return Err(bad());
        }
    }
    let t = total as i128;
    Ok((if neg { -t } else { t }) as i64)
}

/// reflect.DeepEqual for `has`/`without`: same type and same value.
fn same(a: &Value, b: &Value) -> bool {
    a.type_name() == b.type_name() && a.to_json(0).ok() == b.to_json(0).ok()
}

/// goutils `WrapCustom(s, width, "\n", false)` (Sprig's `wrap`): byte columns, breaking at the
/// last space within the width; a longer word runs on to the next space; spaces at a line's
/// start are dropped.
fn wrap(s: &str, width: usize) -> String {
    let b = s.as_bytes();
    let mut out: Vec<u8> = Vec::with_capacity(b.len() + 8);
    let mut off = 0usize;
    while b.len() - off > width {
        if b[off] == b' ' {
            off += 1;
            continue;
        }
        let end = width + off + 1;
        if let Some(i) = b[off..end].iter().rposition(|&c| c == b' ') {
            out.extend_from_slice(&b[off..off + i]);
            out.push(b'\n');
            off += i + 1;
        } else {
            let end = width + off;
            match b[end..].iter().position(|&c| c == b' ') {
                None => {
                    out.extend_from_slice(&b[off..]);
                    off = b.len();
                }
                Some(i) => {
                    out.extend_from_slice(&b[off..end + i]);
                    out.push(b'\n');
                    off = end + i + 1;
                }
            }
        }
    }
    out.extend_from_slice(&b[off..]);
    String::from_utf8_lossy(&out).into_owned()
}

/// SHA-1 (FIPS 180-4), for Sprig's `sha1sum` (crypto.go: hex of `sha1.Sum`); written out here
/// rather than adding a crate for one function no Cilium template calls.
fn sha1(data: &[u8]) -> [u8; 20] {
    let mut h: [u32; 5] = [0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0];
    let mut msg = data.to_vec();
    let bits = (data.len() as u64).wrapping_mul(8);
    msg.push(0x80);
    while msg.len() % 64 != 56 {
        msg.push(0);
    }
    msg.extend_from_slice(&bits.to_be_bytes());
    for chunk in msg.chunks(64) {
        let mut w = [0u32; 80];
        for (i, word) in chunk.chunks(4).enumerate() {
            w[i] = u32::from_be_bytes([word[0], word[1], word[2], word[3]]);
        }
        for i in 16..80 {
            w[i] = (w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16]).rotate_left(1);
        }
        let [mut a, mut b, mut c, mut d, mut e] = h;
        for (i, wi) in w.iter().enumerate() {
            let (f, k) = match i {
                0..=19 => ((b & c) | (!b & d), 0x5A827999),
                20..=39 => (b ^ c ^ d, 0x6ED9EBA1),
                40..=59 => ((b & c) | (b & d) | (c & d), 0x8F1BBCDC),
                _ => (b ^ c ^ d, 0xCA62C1D6),
            };
            let t = a
                .rotate_left(5)
                .wrapping_add(f)
                .wrapping_add(e)
                .wrapping_add(k)
                .wrapping_add(*wi);
            e = d;
            d = c;
            c = b.rotate_left(30);
            b = a;
            a = t;
        }
        for (x, y) in h.iter_mut().zip([a, b, c, d, e]) {
            *x = x.wrapping_add(y);
        }
    }
    let mut out = [0u8; 20];
    for (i, x) in h.iter().enumerate() {
        out[i * 4..i * 4 + 4].copy_from_slice(&x.to_be_bytes());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_and_paths() {
        assert_eq!(b64enc(b"hello"), "aGVsbG8=");
        assert_eq!(b64dec("aGVsbG8=").unwrap(), b"hello");
        assert_eq!(path_dir("cilium/templates/x.yaml"), "cilium/templates");
        assert_eq!(path_base("a/b/"), "b");
        assert!(glob_match(
            "files/hubble/dashboards/*.json",
            "files/hubble/dashboards/a.json"
        ));
        assert!(!glob_match("files/*.json", "files/x/a.json"));
        assert!(glob_match("files/**.json", "files/x/a.json"));
    }

    #[test]
    fn cast_as_sprig_calls_it() {
        assert_eq!(to_int64(&Value::str("0755")), 493);
        assert_eq!(to_int64(&Value::str("10.0")), 10);
        assert_eq!(to_int64(&Value::str("10.5")), 0);
        assert_eq!(to_int64(&Value::Float(7.9)), 7);
    }
}
