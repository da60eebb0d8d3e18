//! A scan of the components' source for the values paths they read and the release gates
//! (`ctx.plan.has(Change::X)`) around each read, for `tests/value_paths.rs`. It reads Rust as
//! lines of text, not as a syntax tree: it sees `if` blocks and their `else` branches, `&&` and
//! `||` chains on one line or across lines, early returns, names bound to a gate, functions that
//! hold only where a change does, and the gates at every call of a function. What it cannot see
//! gates nothing, so a missed gate makes the check stricter (a failure to look at), never
//! laxer.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The calls whose first argument is a values path.
pub const READERS: &[&str] = &[
    ".v(",
    ".on(",
    ".text(",
    ".invalid(",
    ".user_set(",
    ".origin(",
    ".describe_origin(",
];

/// The string literals passed first to a reader, with their line, that look like a path.
pub fn read_paths(text: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    for (n, line) in text.lines().enumerate() {
        for reader in READERS {
            let mut rest = line;
            while let Some(at) = rest.find(reader) {
                rest = &rest[at + reader.len()..];
                let Some(lit) = rest.strip_prefix('"') else {
                    continue;
                };
                let Some(end) = lit.find('"') else { continue };
                let path = &lit[..end];
                let looks_like_a_path = !path.is_empty()
                    && path.split('.').all(|k| {
                        !k.is_empty() && k.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
                    });
                if looks_like_a_path {
                    found.push((n + 1, path.to_string()));
                }
            }
        }
    }
    found
}

/// A condition on the release: a change of `src/changes.rs` that holds (or does not).
#[derive(Debug, Clone, PartialEq)]
pub struct Gate {
    pub change: String,
    pub holds: bool,
}

/// The `plan.has(Change::X)` calls of a piece of code, each with whether it is negated (`!`)
/// and where it starts.
pub fn gates_at(code: &str) -> Vec<(usize, Gate)> {
    let mut out = Vec::new();
    let needle = "plan.has(Change::";
    let mut from = 0;
    while let Some(at) = code[from..].find(needle) {
        let start = from + at;
        let name_from = start + needle.len();
        let name: String = code[name_from..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        // `!ctx.plan.has(..)`, `!self.plan.has(..)`: the `!` sits before the receiver.
        let before = code[..start]
            .trim_end_matches(|c: char| c.is_ascii_alphanumeric() || c == '_' || c == '.');
        out.push((
            start,
            Gate {
                change: name,
                holds: !before.ends_with('!'),
            },
        ));
        from = name_from;
    }
    out
}

/// Code with string and char literals blanked (so braces and `||` inside them do not count).
pub fn code_only(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars().peekable();
    let mut in_str = false;
    while let Some(c) = chars.next() {
        if in_str {
            if c == '\\' {
                chars.next();
                out.push(' ');
            } else if c == '"' {
                in_str = false;
                out.push('"');
                continue;
            }
            out.push(' ');
            continue;
        }
        match c {
            '"' => {
                in_str = true;
                out.push('"');
            }
            '\'' if chars.clone().nth(1) == Some('\'') => {
                chars.next();
                chars.next();
                out.push_str("' '");
            }
            '/' if chars.peek() == Some(&'/') => break,
            _ => out.push(c),
        }
    }
    out
}

/// A block being read: the gates that hold inside it, and (for an `if`) the gates of its
/// condition and how they are joined, so that an early `return` in it gates the rest of the
/// enclosing block.
struct Block {
    gates: Vec<Gate>,
    condition: Option<Condition>,
    returns: bool,
}

#[derive(Clone, Default)]
struct Condition {
    gates: Vec<Gate>,
    and: bool,
    or: bool,
    /// `if !(A && B)`: the negation of a whole `&&` chain.
    negated_chain: bool,
    /// `} else if`: the branches before it did not run.
    else_if: bool,
}

fn not(g: &Gate) -> Gate {
    Gate {
        change: g.change.clone(),
        holds: !g.holds,
    }
}

/// Functions that hold only where a change does: `fn name(ctx: &Ctx) -> bool` whose body
/// starts `ctx.plan.has(Change::X) &&` (or is that call alone), by name.
pub fn predicates(texts: &[String]) -> BTreeMap<String, Gate> {
    let mut out = BTreeMap::new();
    for text in texts {
        let lines: Vec<String> = text.lines().map(code_only).collect();
        for (i, l) in lines.iter().enumerate() {
            let trimmed = l.trim_start();
            let Some(name) = defines(trimmed) else {
                continue;
            };
            if !trimmed.trim_end().ends_with("-> bool {") {
                continue;
            }
            let body = lines.get(i + 1).map_or("", |b| b.trim());
            let gates = gates_at(body);
            if gates.len() == 1
                && body[..gates[0].0]
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.')
                && gates[0].1.holds
                && (body.ends_with("&&") || body.ends_with(')'))
            {
                out.insert(name, gates[0].1.clone());
            }
        }
    }
    out
}

/// The gate literals of a line: `plan.has(Change::X)` calls, the names bound to one earlier
/// in the function (`let on = ctx.plan.has(Change::X);`) and calls of gate predicates
/// (`name(` of `predicates`), with their positions.
pub fn literals(code: &str, aliases: &BTreeMap<String, Gate>) -> Vec<(usize, Gate)> {
    let mut out = gates_at(code);
    for (name, gate) in aliases {
        let mut from = 0;
        while let Some(at) = code[from..].find(name.as_str()) {
            let start = from + at;
            let end = start + name.len();
            from = end;
            let word = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
            if word(code[..start].chars().next_back()) || word(code[end..].chars().next()) {
                continue;
            }
            let negated = code[..start].trim_end().ends_with('!');
            out.push((start, if negated { not(gate) } else { gate.clone() }));
        }
    }
    out.sort_by_key(|(at, _)| *at);
    out
}

/// What a read at `at` on this line may assume from the literals before it: short-circuit
/// evaluation runs the right side of `A && ..` only where A holds and of `A || ..` only where
/// it does not; a read in a block opened on the same line (`if A { .. }`) runs where A holds.
pub fn same_line_gates(code: &str, at: usize, literals: &[(usize, Gate)]) -> Vec<Gate> {
    let mut out = Vec::new();
    for (q, g) in literals.iter().filter(|(q, _)| *q < at) {
        let between = &code[*q..at.min(code.len())];
        match (between.contains("&&"), between.contains("||")) {
            (true, false) => out.push(g.clone()),
            (false, true) => out.push(not(g)),
            (false, false) if between.matches('{').count() > between.matches('}').count() => {
                out.push(g.clone())
            }
            _ => {}
        }
    }
    out
}

/// What the scan finds: a values path read, or a call of a function of the components.
#[derive(Debug, Clone, PartialEq)]
pub enum Item {
    Read(String),
    Call(String),
}

/// One item found, with its line, the function it is in and the gates the code around it puts
/// on it.
pub struct Found {
    pub line: usize,
    pub item: Item,
    pub function: String,
    pub gates: Vec<Gate>,
}

/// The calls on a line of the functions named in `functions`, with their positions.
pub fn calls_in(code: &str, functions: &BTreeSet<String>) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let bytes = code.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i].is_ascii_alphabetic() || bytes[i] == b'_' {
            let start = i;
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            let name = &code[start..i];
            let definition = code[..start].trim_end().ends_with("fn");
            let next = code[i..].trim_start().chars().next();
            let prev = code[..start].trim_end().chars().next_back();
            // Called (`name(`), or passed on as a function (`.map(name)`, `[a, name]`).
            let used = next == Some('(')
                || (matches!(prev, Some('(' | ',' | '[')) && matches!(next, Some(')' | ',' | ']')));
            if !definition && used && functions.contains(name) {
                // Called (`name(`), or passed on to be called (`.map(name)`, `Some(name)`);
                // `module::name` keeps its module.
                let module: String = code[..start]
                    .strip_suffix("::")
                    .map(|before| {
                        let from = before
                            .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                            .map_or(0, |i| i + 1);
                        before[from..].to_string()
                    })
                    .unwrap_or_default();
                if module.is_empty() || module == "self" {
                    out.push((start, name.to_string()));
                } else {
                    out.push((start, format!("{module}::{name}")));
                }
            }
        } else {
            i += 1;
        }
    }
    out
}

/// The name a line defines a function under, if it does.
pub fn defines(trimmed: &str) -> Option<String> {
    let rest = ["fn ", "pub fn ", "pub(crate) fn ", "pub(super) fn "]
        .iter()
        .find_map(|p| trimmed.strip_prefix(p))?;
    let name: String = rest
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    (!name.is_empty()).then_some(name)
}

/// The scan of one file: every read and every call of `functions`, with its gates.
/// Functions are named `FILE#name` when `file` defines them (a call in the same file means that
/// one), and by their bare name otherwise (any file's function of that name).
pub fn scan(
    file: &str,
    text: &str,
    functions: &BTreeSet<String>,
    predicates: &BTreeMap<String, Gate>,
) -> Vec<Found> {
    let local: BTreeSet<String> = text
        .lines()
        .filter_map(|l| defines(l.trim_start()))
        .collect();
    let key = |name: &str| {
        if local.contains(name) {
            format!("{file}#{name}")
        } else {
            name.to_string() // a bare name, or `module::name`
        }
    };
    let mut out = Vec::new();
    let mut function = String::new();
    let mut stack: Vec<Block> = vec![Block {
        gates: Vec::new(),
        condition: None,
        returns: false,
    }];
    let mut aliases: BTreeMap<String, Gate> = predicates.clone();
    // The condition of an `if` whose `{` is not reached yet.
    let mut pending: Option<Condition> = None;
    // Where the earlier branches of an `if .. else if ..` chain did not run (None: unknown).
    let mut chain: Option<Vec<Gate>> = Some(Vec::new());
    // The expression a line continues (`let x = A\n    && B;`): its gates and operators.
    let mut expr: Option<Condition> = None;
    for (n, raw) in text.lines().enumerate() {
        let line = code_only(raw);
        let trimmed = line.trim_start();
        if trimmed.starts_with("#[cfg(test)]") {
            // The unit tests below call functions for any release they like.
            break;
        }
        if let Some(name) = defines(trimmed) {
            // A new function: nothing gates it from the code before.
            stack.truncate(1);
            stack[0].gates.clear();
            aliases = predicates.clone();
            function = key(&name);
        }
        let lits = literals(&line, &aliases);
        // `let name = ctx.plan.has(Change::X);` binds a gate to a name.
        if let Some(rest) = trimmed.strip_prefix("let ") {
            if let Some((name, value)) = rest.split_once(" = ") {
                let value = value.trim().trim_end_matches(';');
                let gates = gates_at(value);
                let plain = gates.len() == 1
                    && value.trim_start_matches('!').ends_with(')')
                    && !value.contains("&&")
                    && !value.contains("||");
                if plain
                    && name
                        .bytes()
                        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
                {
                    aliases.insert(name.to_string(), gates[0].1.clone());
                }
            }
        }
        let else_if = trimmed.starts_with("} else if ") || trimmed.starts_with("else if ");
        let starts_if = trimmed.starts_with("if ") || trimmed.contains("= if ") || else_if;
        if starts_if {
            if !else_if {
                chain = Some(Vec::new());
            }
            let after_if = trimmed.split_once("if ").map_or("", |(_, r)| r);
            pending = Some(Condition {
                negated_chain: after_if.starts_with("!("),
                else_if,
                ..Condition::default()
            });
        }
        if let Some(c) = pending.as_mut() {
            // The condition's part of this line: up to the block's `{`.
            let cond = line.split('{').next().unwrap_or("");
            c.gates.extend(
                lits.iter()
                    .filter(|(at, _)| *at < cond.len())
                    .map(|(_, g)| g.clone()),
            );
            c.and |= cond.contains("&&");
            c.or |= cond.contains("||");
        }
        let enclosing: Vec<Gate> = stack.iter().flat_map(|b| b.gates.iter().cloned()).collect();
        let mut items: Vec<(usize, Item)> = read_paths(raw)
            .into_iter()
            .map(|(_, path)| {
                let at = raw.find(&format!("\"{path}\"")).unwrap_or(0);
                (at, Item::Read(path))
            })
            .collect();
        if defines(trimmed).is_none() {
            items.extend(
                calls_in(&line, functions)
                    .into_iter()
                    .map(|(at, name)| (at, Item::Call(key(&name)))),
            );
        }
        // A line that continues an expression (`&& B`, `|| B`) runs where the lines before
        // it let it: after `A &&` where A holds, after `!A ||` where A does.
        let continues = trimmed.starts_with("&&") || trimmed.starts_with("||");
        let from_before: Vec<Gate> = match expr.as_ref().filter(|_| continues) {
            Some(e) if trimmed.starts_with("&&") && !e.or => e.gates.clone(),
            Some(e) if trimmed.starts_with("||") && !e.and => e.gates.iter().map(not).collect(),
            _ => Vec::new(),
        };
        for (at, item) in items {
            let mut gates = enclosing.clone();
            if !trimmed.starts_with("} else") {
                gates.extend(same_line_gates(&line, at, &lits));
            }
            gates.extend(from_before.iter().cloned());
            out.push(Found {
                line: n + 1,
                item,
                function: function.clone(),
                gates,
            });
        }
        if let Some(b) = stack.last_mut() {
            b.returns |= trimmed.contains("return") || trimmed.starts_with("continue");
        }
        let e = match expr.take() {
            Some(e) if continues => e,
            _ => Condition::default(),
        };
        let code_part = line.trim_end();
        let mut e = e;
        e.gates.extend(lits.iter().map(|(_, g)| g.clone()));
        e.and |= code_part.contains("&&");
        e.or |= code_part.contains("||");
        let ends = code_part.ends_with(';')
            || code_part.ends_with('{')
            || code_part.ends_with('}')
            || code_part.ends_with(',');
        if !ends {
            expr = Some(e);
        }
        for c in line.chars() {
            match c {
                '{' => {
                    let (gates, condition) = match pending.take() {
                        Some(c) => {
                            let mut gates = if c.or || c.negated_chain {
                                Vec::new()
                            } else {
                                c.gates.clone()
                            };
                            if c.else_if {
                                gates.extend(chain.iter().flatten().cloned());
                            }
                            (gates, Some(c))
                        }
                        None if trimmed.starts_with("} else {")
                            || trimmed.starts_with("else {") =>
                        {
                            // An `else` holds where no branch before it did.
                            (chain.clone().unwrap_or_default(), None)
                        }
                        None => (Vec::new(), None),
                    };
                    stack.push(Block {
                        gates,
                        condition,
                        returns: false,
                    });
                }
                '}' if stack.len() > 1 => {
                    let closed = stack.pop().unwrap();
                    let else_follows = trimmed.starts_with('}') && trimmed.contains("else");
                    if else_follows {
                        // The next branch runs where this one's condition did not hold: known
                        // for one gate alone, or gates joined by `||` (none of them holds).
                        let negated = match closed.condition.as_ref() {
                            Some(c) if !c.gates.is_empty() && !c.and && !c.negated_chain => {
                                Some(c.gates.iter().map(not).collect::<Vec<_>>())
                            }
                            Some(c) if c.gates.is_empty() => Some(Vec::new()),
                            _ => None,
                        };
                        chain = match (chain.take(), negated) {
                            (Some(mut g), Some(n)) => {
                                g.extend(n);
                                Some(g)
                            }
                            _ => None,
                        };
                    }
                    // `if !A || !B { return ..; }`: the rest of the enclosing block runs only
                    // where A and B hold (and `if !A { return ..; }` where A does).
                    if closed.returns && !else_follows {
                        if let Some(c) = closed.condition.as_ref() {
                            let parent = stack.last_mut().unwrap();
                            if c.negated_chain && !c.or {
                                // `if !(A && B) { return }`: A and B hold after it.
                                parent.gates.extend(c.gates.iter().cloned());
                            } else if !c.negated_chain && !c.and && !c.gates.is_empty() {
                                parent.gates.extend(c.gates.iter().map(not));
                            }
                        }
                    }
                }
                _ => {}
            }
        }
    }
    out
}

/// The gates every call of a function is under (its callers' own included), by function name;
/// a function with no call the scan sees (an entry point, a function stored in a table) has
/// none. Same-named functions of different modules share one entry: their calls together, so
/// the gates are those all of them have (fewer, never more).
pub fn function_gates(
    scans: &[Vec<Found>],
    private: &BTreeSet<String>,
) -> BTreeMap<String, Vec<Gate>> {
    let mut calls: BTreeMap<&str, Vec<(&str, &Vec<Gate>)>> = BTreeMap::new();
    for found in scans.iter().flatten() {
        if let Item::Call(name) = &found.item {
            // A recursive call adds nothing to what its other callers say.
            if *name != found.function {
                calls
                    .entry(name.as_str())
                    .or_default()
                    .push((found.function.as_str(), &found.gates));
            }
        }
    }
    // A file's function is also what other files call by its bare name (imported with `use`)
    // or as `module::name` where the module is that file.
    let elsewhere: BTreeMap<&str, Vec<(&str, &Vec<Gate>)>> = calls
        .iter()
        .filter(|(k, _)| !k.contains('#'))
        .map(|(k, v)| (*k, v.clone()))
        .collect();
    let defined: BTreeSet<&str> = scans
        .iter()
        .flatten()
        .map(|f| f.function.as_str())
        .filter(|f| f.contains('#'))
        .collect();
    // A private function is called from its own file only.
    for function in defined.into_iter().filter(|f| !private.contains(*f)) {
        let (file, name) = function.split_once('#').unwrap();
        let path = Path::new(file);
        let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
        let module = if stem == "mod" {
            path.parent()
                .and_then(|p| p.file_name())
                .and_then(|s| s.to_str())
                .unwrap_or("")
        } else {
            stem
        };
        let mut sites = Vec::new();
        for other in [name.to_string(), format!("{module}::{name}")] {
            sites.extend(elsewhere.get(other.as_str()).into_iter().flatten().copied());
        }
        if !sites.is_empty() {
            calls.entry(function).or_default().extend(sites);
        }
    }
    // From "every gate" down to what holds at every call, until nothing changes.
    let mut gates: BTreeMap<String, Option<Vec<Gate>>> =
        calls.keys().map(|n| (n.to_string(), None)).collect();
    for _ in 0..50 {
        let mut changed = false;
        for (name, sites) in &calls {
            let mut common: Option<Vec<Gate>> = None;
            for (caller, local) in sites {
                let mut here: Vec<Gate> = (*local).clone();
                match gates.get(*caller) {
                    Some(Some(g)) => here.extend(g.iter().cloned()),
                    Some(None) => continue, // not known yet: says nothing this round
                    None => {}              // a caller nobody calls: its own gates only
                }
                common = Some(match common {
                    None => here,
                    Some(c) => c.into_iter().filter(|g| here.contains(g)).collect(),
                });
            }
            let Some(common) = common else { continue };
            let entry = gates.get_mut(*name).unwrap();
            if entry.as_ref() != Some(&common) {
                *entry = Some(common);
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    gates
        .into_iter()
        .map(|(n, g)| (n, g.unwrap_or_default()))
        .collect()
}
