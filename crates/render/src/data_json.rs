//! A JSON reader for the data files, faster than building through serde's visitors: maps are
//! built from sorted runs at once, strings without escapes are copied whole. Numbers and
//! escaped strings go through serde_json itself, so the result is exactly what
//! `serde_json::from_str` gives (a test holds it to that for every release).

use serde_json::{Map, Value};

/// Parses a whole document; None if it is not the JSON this reader handles.
pub(crate) fn parse(text: &str) -> Option<Value> {
    let mut r = Reader { text, i: 0 };
    let v = r.value()?;
    r.ws();
    if r.i == text.len() { Some(v) } else { None }.or_else(|| serde_json::from_str(text).ok())
}

/// The members of the JSON object `text`, each with its value's text, unparsed.
#[cfg(test)]
pub(crate) fn members(text: &str) -> Option<Vec<(String, &str)>> {
    members_expanding(text, "").map(|(m, _)| m)
}

/// `members`, where the value of the member named `expand` (an object) is split into its
/// own members in the same pass (the last such member's, if the name repeats).
#[allow(clippy::type_complexity)]
pub(crate) fn members_expanding<'t>(
    text: &'t str,
    expand: &str,
) -> Option<(Vec<(String, &'t str)>, Option<Vec<(String, &'t str)>>)> {
    let mut r = Reader { text, i: 0 };
    r.ws();
    r.object_members(expand)
}

/// The index just past the closing quote of the string whose body starts at `i`.
fn skip_string(b: &[u8], mut i: usize) -> Option<usize> {
    loop {
        while i < b.len() && b[i] != b'"' && b[i] != b'\\' {
            i += 1;
        }
        match *b.get(i)? {
            b'"' => return Some(i + 1),
            _ => i += 2,
        }
    }
}

/// The bytes that matter when stepping over a collection.
const STRUCTURAL: [bool; 256] = {
    let mut t = [false; 256];
    t[b'"' as usize] = true;
    t[b'{' as usize] = true;
    t[b'}' as usize] = true;
    t[b'[' as usize] = true;
    t[b']' as usize] = true;
    t
};

pub(crate) struct Reader<'a> {
    pub(crate) text: &'a str,
    pub(crate) i: usize,
}

impl<'a> Reader<'a> {
    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.i).copied()
    }

    fn next(&mut self) -> Option<u8> {
        let c = self.peek()?;
        self.i += 1;
        Some(c)
    }

    fn eat(&mut self, c: u8) -> Option<()> {
        (self.peek()? == c).then(|| self.i += 1)
    }

    fn ws(&mut self) {
        let b = self.text.as_bytes();
        let mut i = self.i;
        while i < b.len() && matches!(b[i], b' ' | b'\n' | b'\r' | b'\t') {
            i += 1;
        }
        self.i = i;
    }

    #[allow(clippy::type_complexity)]
    fn object_members(
        &mut self,
        expand: &str,
    ) -> Option<(Vec<(String, &'a str)>, Option<Vec<(String, &'a str)>>)> {
        let text = self.text;
        self.eat(b'{')?;
        let mut out = Vec::new();
        let mut expanded = None;
        self.ws();
        if self.eat(b'}').is_some() {
            return Some((out, expanded));
        }
        loop {
            self.ws();
            let key = self.string()?;
            self.ws();
            self.eat(b':')?;
            self.ws();
            let start = self.i;
            if !expand.is_empty() && key == expand && self.peek() == Some(b'{') {
                expanded = Some(self.object_members("")?.0);
            } else {
                self.skip()?;
            }
            out.push((key, text.get(start..self.i)?));
            self.ws();
            match self.next()? {
                b',' => {}
                b'}' => return Some((out, expanded)),
                _ => return None,
            }
        }
    }

    fn literal(&mut self, word: &str, v: Value) -> Option<Value> {
        let end = self.i + word.len();
        (self.text.get(self.i..end)? == word).then(|| {
            self.i = end;
            v
        })
    }

    pub(crate) fn value(&mut self) -> Option<Value> {
        self.ws();
        match self.peek()? {
            b'{' => {
                self.i += 1;
                let mut items: Vec<(String, Value)> = Vec::new();
                self.ws();
                if self.eat(b'}').is_none() {
                    loop {
                        self.ws();
                        let k = self.string()?;
                        self.ws();
                        self.eat(b':')?;
                        items.push((k, self.value()?));
                        self.ws();
                        match self.next()? {
                            b',' => {}
                            b'}' => break,
                            _ => return None,
                        }
                    }
                }
                Some(Value::Object(items.into_iter().collect::<Map<_, _>>()))
            }
            b'[' => {
                self.i += 1;
                let mut items = Vec::new();
                self.ws();
                if self.eat(b']').is_none() {
                    loop {
                        items.push(self.value()?);
                        self.ws();
                        match self.next()? {
                            b',' => {}
                            b']' => break,
                            _ => return None,
                        }
                    }
                }
                Some(Value::Array(items))
            }
            b'"' => self.string().map(Value::String),
            b't' => self.literal("true", Value::Bool(true)),
            b'f' => self.literal("false", Value::Bool(false)),
            b'n' => self.literal("null", Value::Null),
            _ => {
                let start = self.i;
                while matches!(
                    self.peek(),
                    Some(b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E')
                ) {
                    self.i += 1;
                }
                let n: serde_json::Number = self.text.get(start..self.i)?.parse().ok()?;
                Some(Value::Number(n))
            }
        }
    }

    fn string(&mut self) -> Option<String> {
        let start = self.i;
        self.eat(b'"')?;
        let b = self.text.as_bytes();
        let stop = b[self.i..].iter().position(|&c| c == b'"' || c == b'\\')?;
        let end = self.i + stop;
        if b[end] == b'"' {
            let s = self.text.get(self.i..end)?.to_string();
            self.i = end + 1;
            return Some(s);
        }
        // Escapes are rare in the data: find the end, let serde_json decode.
        self.i = skip_string(b, self.i)?;
        serde_json::from_str(self.text.get(start..self.i)?).ok()
    }

    /// Steps over one value without building it.
    fn skip(&mut self) -> Option<()> {
        self.ws();
        let b = self.text.as_bytes();
        let mut i = self.i;
        match *b.get(i)? {
            b'"' => i = skip_string(b, i + 1)?,
            b'{' | b'[' => {
                let mut depth = 0usize;
                loop {
                    while i < b.len() && !STRUCTURAL[b[i] as usize] {
                        i += 1;
                    }
                    let c = *b.get(i)?;
                    i += 1;
                    match c {
                        // Strings here are mostly short keys: stepped over in line.
                        b'"' => loop {
                            let c = *b.get(i)?;
                            i += 1;
                            match c {
                                b'"' => break,
                                b'\\' => i += 1,
                                _ => {}
                            }
                        },
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                }
            }
            _ => {
                while i < b.len()
                    && !matches!(b[i], b',' | b'}' | b']' | b' ' | b'\n' | b'\r' | b'\t')
                {
                    i += 1;
                }
            }
        }
        self.i = i;
        Some(())
    }
}
