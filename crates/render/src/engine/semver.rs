//! Masterminds semver v3, as Sprig's `semver` and `semverCompare` use it
//! (github.com/Masterminds/semver/v3: `version.go` NewVersion, `constraints.go`): loose
//! versions (`v1`, `1.2`, `1.2.3-pre+build`) and constraints (`>=1.8`, `>= 1.33-0`, `~1.2`,
//! `^1`, `1.2.x`, `a, b` for AND, `a || b` for OR).

use std::cmp::Ordering;
use std::fmt;

#[derive(Debug, Clone)]
pub struct Version {
    pub major: u64,
    pub minor: u64,
    pub patch: u64,
    pub pre: String,
    pub meta: String,
    pub original: String,
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)?;
        if !self.pre.is_empty() {
            write!(f, "-{}", self.pre)?;
        }
        if !self.meta.is_empty() {
            write!(f, "+{}", self.meta)?;
        }
        Ok(())
    }
}

fn ident_ok(x: &str) -> bool {
    x.split('.')
        .all(|p| !p.is_empty() && p.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'-'))
}

/// `semver.NewVersion`: the loose form; the error text is the library's.
pub fn parse(text: &str) -> Result<Version, String> {
    let bad = || "Invalid Semantic Version".to_string();
    let s = text.strip_prefix('v').unwrap_or(text);
    let (s, meta) = match s.split_once('+') {
        Some((a, b)) => (a, b),
        None => (s, ""),
    };
    let (core, pre) = match s.split_once('-') {
        Some((a, b)) => (a, b),
        None => (s, ""),
    };
    if (!pre.is_empty() && !ident_ok(pre)) || (!meta.is_empty() && !ident_ok(meta)) {
        return Err(bad());
    }
    if s.len() < text.len().saturating_sub(1 + meta.len()) && pre.is_empty() && s.ends_with('-') {
        return Err(bad());
    }
    let parts: Vec<&str> = core.split('.').collect();
    if parts.is_empty() || parts.len() > 3 {
        return Err(bad());
    }
    let mut nums = [0u64; 3];
    for (i, p) in parts.iter().enumerate() {
        if p.is_empty() || !p.bytes().all(|c| c.is_ascii_digit()) {
            return Err(bad());
        }
        nums[i] = p.parse().map_err(|_| bad())?;
    }
    Ok(Version {
        major: nums[0],
        minor: nums[1],
        patch: nums[2],
        pre: pre.to_string(),
        meta: meta.to_string(),
        original: text.to_string(),
    })
}

/// Version precedence (semver 2.0 §11): core numbers, then a pre-release sorts before none,
/// pre-release identifiers compared numerically or lexically, numeric ones first.
pub fn compare(a: &Version, b: &Version) -> Ordering {
    (a.major, a.minor, a.patch)
        .cmp(&(b.major, b.minor, b.patch))
        .then_with(|| match (a.pre.is_empty(), b.pre.is_empty()) {
            (true, true) => Ordering::Equal,
            (true, false) => Ordering::Greater,
            (false, true) => Ordering::Less,
            (false, false) => compare_pre(&a.pre, &b.pre),
        })
}

fn compare_pre(a: &str, b: &str) -> Ordering {
    let mut x = a.split('.');
    let mut y = b.split('.');
    loop {
        match (x.next(), y.next()) {
            (None, None) => return Ordering::Equal,
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(p), Some(q)) => {
                let o = match (p.parse::<u64>(), q.parse::<u64>()) {
                    (Ok(m), Ok(n)) => m.cmp(&n),
                    (Ok(_), Err(_)) => Ordering::Less,
                    (Err(_), Ok(_)) => Ordering::Greater,
                    (Err(_), Err(_)) => p.cmp(q),
                };
                if o != Ordering::Equal {
                    return o;
                }
            }
        }
    }
}

struct Constraint {
    op: String,
    con: Version,
    minor_dirty: bool,
    patch_dirty: bool,
    dirty: bool,
}

fn is_x(s: &str) -> bool {
    matches!(s, "x" | "X" | "*")
}

fn parse_constraint(text: &str) -> Result<Constraint, String> {
    let t = text.trim();
    let ops = [">=", "=>", "<=", "=<", "!=", "~>", ">", "<", "=", "~", "^"];
    let (op, rest) = ops
        .iter()
        .find_map(|op| t.strip_prefix(op).map(|r| (op.to_string(), r.trim_start())))
        .unwrap_or((String::new(), t));
    let bad = || format!("improper constraint: {text}");
    let rest = rest.strip_prefix('v').unwrap_or(rest);
    let (core, tail) = match rest.find(['-', '+']) {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, ""),
    };
    let parts: Vec<&str> = core.split('.').collect();
    if parts.is_empty() || parts.len() > 3 || parts.iter().any(|p| p.is_empty()) {
        return Err(bad());
    }
    let (mut minor_dirty, mut patch_dirty, mut dirty) = (false, false, false);
    let num = |p: &str| -> Result<u64, String> {
        if is_x(p) {
            Ok(0)
        } else {
            p.parse().map_err(|_| bad())
        }
    };
    let major = num(parts[0])?;
    if is_x(parts[0]) {
        dirty = true;
        minor_dirty = true;
        patch_dirty = true;
    }
    let minor = match parts.get(1) {
        Some(p) if !is_x(p) => num(p)?,
        _ => {
            dirty = true;
            minor_dirty = true;
            patch_dirty = true;
            0
        }
    };
    let patch = match parts.get(2) {
        Some(p) if !is_x(p) => num(p)?,
        _ => {
            dirty = true;
            patch_dirty = true;
            0
        }
    };
    let full = format!("{major}.{minor}.{patch}{tail}");
    let mut con = parse(&full).map_err(|_| bad())?;
    con.original = rest.to_string();
    Ok(Constraint {
        op,
        con,
        minor_dirty,
        patch_dirty,
        dirty,
    })
}

impl Constraint {
    fn check(&self, v: &Version) -> bool {
        let c = &self.con;
        // A pre-release version satisfies only constraints that name a pre-release
        // (constraints.go: "prerelease versions are not matched unless the constraint has one").
        if !v.pre.is_empty() && c.pre.is_empty() {
            return false;
        }
        match self.op.as_str() {
            "" | "=" => {
                if self.dirty {
                    if v.major != c.major {
                        return false;
                    }
                    if !self.minor_dirty && v.minor != c.minor {
                        return false;
                    }
                    if !self.patch_dirty && v.patch != c.patch {
                        return false;
                    }
                    return true;
                }
                compare(v, c) == Ordering::Equal
            }
            "!=" => {
                if self.dirty {
                    let same = v.major == c.major
                        && (self.minor_dirty || v.minor == c.minor)
                        && (self.patch_dirty || v.patch == c.patch);
                    return !same;
                }
                compare(v, c) != Ordering::Equal
            }
            ">" => {
                if !self.dirty {
                    return compare(v, c) == Ordering::Greater;
                }
                if v.major != c.major {
                    return v.major > c.major;
                }
                if self.minor_dirty {
                    return false;
                }
                if self.patch_dirty {
                    return v.minor > c.minor;
                }
                compare(v, c) == Ordering::Greater
            }
            "<" => compare(v, c) == Ordering::Less,
            ">=" | "=>" => compare(v, c) != Ordering::Less,
            "<=" | "=<" => {
                if !self.dirty {
                    return compare(v, c) != Ordering::Greater;
                }
                if v.major != c.major {
                    return v.major < c.major;
                }
                if v.minor > c.minor && !self.minor_dirty {
                    return false;
                }
                true
            }
            "~" | "~>" => {
                if compare(v, c) == Ordering::Less {
                    return false;
                }
                if c.major == 0 && c.minor == 0 && c.patch == 0 && self.minor_dirty {
                    return true;
                }
                if v.major != c.major {
                    return false;
                }
                if v.minor != c.minor && !self.minor_dirty {
                    return false;
                }
                true
            }
            "^" => {
                if compare(v, c) == Ordering::Less {
                    return false;
                }
                if c.major > 0 || self.minor_dirty {
                    return v.major == c.major;
                }
                if c.minor > 0 || self.patch_dirty {
                    return v.major == 0 && v.minor == c.minor;
                }
                v.major == 0 && v.minor == 0 && v.patch == c.patch
            }
            _ => false,
        }
    }
}

/// `semverCompare CONSTRAINT VERSION`: whether the version satisfies the constraint. Errors are
/// the library's messages.
pub fn satisfies(constraint: &str, version: &str) -> Result<bool, String> {
    let v = parse(version)?;
    let mut any = false;
    for alt in constraint.split("||") {
        let mut all = true;
        let pieces: Vec<String> = split_and(alt);
        if pieces.is_empty() {
            return Err(format!("improper constraint: {constraint}"));
        }
        for p in pieces {
            let c = parse_constraint(&p)?;
            if !c.check(&v) {
                all = false;
            }
        }
        any |= all;
    }
    Ok(any)
}

/// The AND-ed parts of one alternative: separated by commas or by spaces between complete
/// constraints (`>= 1.2 < 2` is two), an operator and its version joined (`>= 1.2` is one).
fn split_and(alt: &str) -> Vec<String> {
    let is_op = |w: &str| w.chars().all(|c| "<>=!~^".contains(c));
    let mut out: Vec<String> = Vec::new();
    for chunk in alt.split(',') {
        let mut cur = String::new();
        // A hyphen range `A - B` is `>= A, <= B` (constraints.go `rewriteRange`).
        let words: Vec<&str> = chunk.split_whitespace().collect();
        let mut rewritten: Vec<String> = Vec::with_capacity(words.len());
        let mut i = 0;
        while i < words.len() {
            if i + 2 < words.len() && words[i + 1] == "-" {
                rewritten.push(format!(">={}", words[i]));
                rewritten.push(format!("<={}", words[i + 2]));
                i += 3;
            } else {
                rewritten.push(words[i].to_string());
                i += 1;
            }
        }
        for word in rewritten.iter().map(String::as_str) {
            // A word joins the current part only when that part is a bare operator so far.
            if !cur.is_empty() && !is_op(&cur) {
                out.push(std::mem::take(&mut cur));
            }
            cur.push_str(word);
        }
        if !cur.is_empty() {
            out.push(cur);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constraints_as_the_chart_uses_them() {
        assert!(satisfies(">= 1.33-0", "v1.35.0").unwrap());
        assert!(!satisfies(">= 1.33-0", "v1.29.0").unwrap());
        assert!(satisfies("<1.30.0", "1.29.0").unwrap());
        assert!(satisfies(">=1.8", "1.8").unwrap());
        assert!(!satisfies(">=1.8", "1.7").unwrap());
        assert!(satisfies(">= 1.33-0", "v1.33.0-gke.1").unwrap());
        assert!(!satisfies(">=1.33", "v1.33.0-gke.1").unwrap());
        assert!(satisfies("~1.2", "1.2.9").unwrap());
        assert!(satisfies("^1", "1.9.0").unwrap());
        assert!(satisfies(">1.0, <2 || 3.x", "3.1.0").unwrap());
        assert!(parse("x.y").is_err());
    }
}
