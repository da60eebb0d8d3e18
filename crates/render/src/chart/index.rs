//! Finding one release in a Helm chart repository's `index.yaml` without building its tree.
//!
//! The format is Helm's `pkg/repo` `IndexFile` (repo/index.go): a mapping whose `entries` maps a
//! chart's name to a list of `ChartVersion`s, each with `version`, `digest` (the sha256 of the
//! archive, hex) and `urls` (the archive's address, relative to the repository or absolute;
//! Helm's `ChartDownloader.ResolveChartVersion` uses the first). Cilium's index is several MB
//! of metadata about every chart it publishes, so it is read as saphyr-parser events and only
//! the wanted chart's `version`, `digest` and `urls` are kept: memory does not grow with the
//! rest, and nesting deeper than `limits::MAX_DEPTH` is refused instead of followed.

use saphyr_parser::{Event, Parser, Span, StrInput};

use crate::release_name::{release_name, ReleaseName};

/// The wanted release's entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// As the index writes it.
    pub version: String,
    /// Lowercase hex.
    pub digest: String,
    /// The first of `urls`, as written.
    pub url: String,
}

/// What the index says about the wanted release.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    Entry(Entry),
    /// No entry has that version. `pre_releases`: the chart's pre-releases of the same
    /// `X.Y.Z` (at most `SHOWN`), which the user may have meant but must name exactly.
    Missing {
        versions: usize,
        pre_releases: Vec<String>,
    },
}

/// Pre-release names a missing-release answer lists.
const SHOWN: usize = 8;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}, column {column}: {message}")]
pub struct IndexError {
    pub line: usize,
    pub column: usize,
    pub message: String,
}

/// The entry of `chart` whose version is `want` (a `v` prefix on either side ignored, as
/// semver reads them); only an exact name matches, never a range, so a pre-release is found
/// only when it is the name asked for.
pub fn find(text: &str, chart: &str, want: &ReleaseName) -> Result<Found, IndexError> {
    let mut r = Events {
        parser: Parser::new_from_str(text),
        last: Span::default(),
    };
    let mut found: Option<Entry> = None;
    let mut versions = 0;
    let mut pre_releases = Vec::new();
    // Only the first document is the index (Helm's loader reads one).
    loop {
        match r.next()? {
            Event::StreamStart | Event::Nothing => {}
            Event::DocumentStart(_) => break,
            _ => return Err(r.fail("not a chart repository index (no YAML document)")),
        }
    }
    if !matches!(r.next()?, Event::MappingStart(..)) {
        return Err(r.fail("not a chart repository index (not a mapping)"));
    }
    let mut saw_entries = false;
    while let Some(key) = r.key()? {
        if key != "entries" {
            r.skip_value()?;
            continue;
        }
        saw_entries = true;
        if !matches!(r.next()?, Event::MappingStart(..)) {
            return Err(r.fail("`entries` is not a mapping of chart names"));
        }
        while let Some(name) = r.key()? {
            if name != chart {
                r.skip_value()?;
                continue;
            }
            if !matches!(r.next()?, Event::SequenceStart(..)) {
                return Err(r.fail(&format!("`entries.{chart}` is not a list")));
            }
            loop {
                match r.next()? {
                    Event::SequenceEnd => break,
                    Event::MappingStart(..) => {}
                    _ => {
                        return Err(r.fail(&format!(
                            "an item of `entries.{chart}` is not a chart version"
                        )))
                    }
                }
                let at = r.last;
                let item = r.chart_version()?;
                versions += 1;
                let Some(version) = item.version else {
                    continue;
                };
                let Some(name) = release_name(&version) else {
                    continue;
                };
                if name == *want {
                    if found.is_some() {
                        return Err(fail_at(
                            at,
                            &format!("{chart} {want} is listed twice; which archive is meant is not clear"),
                        ));
                    }
                    let digest = item.digest.map(|d| d.trim().to_ascii_lowercase());
                    let Some(digest) = digest
                        .filter(|d| d.len() == 64 && d.bytes().all(|b| b.is_ascii_hexdigit()))
                    else {
                        return Err(fail_at(
                            at,
                            &format!("the entry of {chart} {want} has no sha256 `digest` (64 hexadecimal digits)"),
                        ));
                    };
                    let Some(url) = item.url else {
                        return Err(fail_at(
                            at,
                            &format!("the entry of {chart} {want} has no `urls`"),
                        ));
                    };
                    found = Some(Entry {
                        version,
                        digest,
                        url,
                    });
                } else if name.is_pre_release()
                    && (name.major, name.minor, name.patch) == (want.major, want.minor, want.patch)
                    && pre_releases.len() < SHOWN
                {
                    pre_releases.push(name.to_string());
                }
            }
        }
    }
    if !saw_entries {
        return Err(r.fail("not a chart repository index (no `entries`)"));
    }
    Ok(match found {
        Some(e) => Found::Entry(e),
        None => Found::Missing {
            versions,
            pre_releases,
        },
    })
}

/// The fields of one `ChartVersion` this reader keeps.
#[derive(Default)]
struct Item {
    version: Option<String>,
    digest: Option<String>,
    url: Option<String>,
}

struct Events<'a> {
    parser: Parser<'a, StrInput<'a>>,
    /// Where the last event began, for errors.
    last: Span,
}

fn fail_at(span: Span, message: &str) -> IndexError {
    IndexError {
        line: span.start.line().max(1),
        column: span.start.col() + 1,
        message: message.to_string(),
    }
}

impl<'a> Events<'a> {
    fn next(&mut self) -> Result<Event<'a>, IndexError> {
        match self.parser.next() {
            Some(Ok((event, span))) => {
                self.last = span;
                Ok(event)
            }
            Some(Err(e)) => Err(IndexError {
                line: e.marker().line().max(1),
                column: e.marker().col() + 1,
                message: e.info().to_string(),
            }),
            None => Ok(Event::StreamEnd),
        }
    }

    fn fail(&self, message: &str) -> IndexError {
        fail_at(self.last, message)
    }

    /// The next key of the mapping being read, or None at its end. A key that is not a plain
    /// string (a list, an alias) is skipped with its value and reads as no name.
    fn key(&mut self) -> Result<Option<String>, IndexError> {
        loop {
            match self.next()? {
                Event::MappingEnd => return Ok(None),
                Event::Scalar(text, ..) => return Ok(Some(text.into_owned())),
                other => {
                    self.skip(other)?;
                    self.skip_value()?;
                }
            }
        }
    }

    fn skip_value(&mut self) -> Result<(), IndexError> {
        let event = self.next()?;
        self.skip(event)
    }

    /// Consumes the node `first` starts, without recursion or keeping anything.
    fn skip(&mut self, first: Event<'a>) -> Result<(), IndexError> {
        let mut depth = 0usize;
        let mut event = first;
        loop {
            match event {
                Event::SequenceStart(..) | Event::MappingStart(..) => {
                    depth += 1;
                    if depth > cilium_cmp_yaml::limits::MAX_DEPTH {
                        return Err(self.fail(&format!(
                            "nested deeper than {} levels",
                            cilium_cmp_yaml::limits::MAX_DEPTH
                        )));
                    }
                }
                Event::SequenceEnd | Event::MappingEnd => depth = depth.saturating_sub(1),
                Event::Scalar(..) | Event::Alias(_) => {}
                _ => return Err(self.fail("the index ends in the middle of a value")),
            }
            if depth == 0 {
                return Ok(());
            }
            event = self.next()?;
        }
    }

    /// The mapping of one chart version, its start already read.
    fn chart_version(&mut self) -> Result<Item, IndexError> {
        let mut item = Item::default();
        while let Some(key) = self.key()? {
            match key.as_str() {
                "version" => item.version = self.scalar(&key)?,
                "digest" => item.digest = self.scalar(&key)?,
                "urls" => match self.next()? {
                    Event::SequenceStart(..) => loop {
                        match self.next()? {
                            Event::SequenceEnd => break,
                            Event::Scalar(text, ..) => {
                                item.url.get_or_insert_with(|| text.into_owned());
                            }
                            _ => return Err(self.fail("an item of `urls` is not a URL")),
                        }
                    },
                    other => {
                        self.skip(other)?;
                        return Err(self.fail("`urls` is not a list"));
                    }
                },
                _ => self.skip_value()?,
            }
        }
        Ok(item)
    }

    /// A scalar value, refusing what would need following (an alias) or is not text.
    fn scalar(&mut self, key: &str) -> Result<Option<String>, IndexError> {
        match self.next()? {
            Event::Scalar(text, ..) => Ok(Some(text.into_owned())),
            other => {
                self.skip(other)?;
                Err(self.fail(&format!("`{key}` of a chart version is not a plain value")))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const INDEX: &str = "apiVersion: v1\nentries:\n  tetragon:\n  - version: 1.20.1\n    digest: ffff\n    urls: [x]\n  cilium:\n  - annotations: {a: [1, {b: 2}]}\n    version: 1.20.1\n    digest: ABCDEF0123456789abcdef0123456789ABCDEF0123456789abcdef0123456789\n    urls:\n    - cilium-1.20.1.tgz\n    - https://mirror.example/cilium-1.20.1.tgz\n  - version: v1.21.0-pre.1\n    digest: 0000000000000000000000000000000000000000000000000000000000000000\n    urls: [cilium-1.21.0-pre.1.tgz]\n  - version: 1.21.0-pre.2\n    digest: 1111111111111111111111111111111111111111111111111111111111111111\n    urls: [cilium-1.21.0-pre.2.tgz]\ngenerated: \"2026-01-01T00:00:00Z\"\n";

    fn look(text: &str, want: &str) -> Result<Found, IndexError> {
        find(text, "cilium", &release_name(want).unwrap())
    }

    #[test]
    fn finds_exactly_the_named_release() {
        assert_eq!(
            look(INDEX, "v1.20.1").unwrap(),
            Found::Entry(Entry {
                version: "1.20.1".into(),
                digest: "abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789".into(),
                url: "cilium-1.20.1.tgz".into(),
            })
        );
        let Found::Entry(e) = look(INDEX, "1.21.0-pre.1").unwrap() else {
            panic!("the pre-release named exactly is found")
        };
        assert_eq!(e.url, "cilium-1.21.0-pre.1.tgz");
        // A final release is never answered with one of its pre-releases.
        assert_eq!(
            look(INDEX, "1.21.0").unwrap(),
            Found::Missing {
                versions: 3,
                pre_releases: vec!["1.21.0-pre.1".into(), "1.21.0-pre.2".into()],
            }
        );
        // Another chart's entries are not the cilium chart's.
        assert!(matches!(
            find(INDEX, "tetragon", &release_name("1.20.1").unwrap()),
            Err(e) if e.message.contains("no sha256")
        ));
    }

    #[test]
    fn malformed_indexes_are_refused_with_where() {
        for (text, says) in [
            ("", "no YAML document"),
            ("[1]\n", "not a mapping"),
            ("apiVersion: v1\n", "no `entries`"),
            ("entries: [1]\n", "not a mapping of chart names"),
            ("entries:\n  cilium: {}\n", "not a list"),
            ("entries:\n  cilium: [1]\n", "not a chart version"),
            ("entries:\n  cilium:\n  - version: 1.20.1\n    urls: [a]\n", "no sha256"),
            ("entries:\n  cilium:\n  - {version: 1.20.1, digest: abc, urls: [a]}\n", "no sha256"),
            (
                "entries:\n  cilium:\n  - {version: 1.20.1, digest: \"0000000000000000000000000000000000000000000000000000000000000000\"}\n",
                "no `urls`",
            ),
            (
                "entries:\n  cilium:\n  - {version: 1.20.1, digest: \"0000000000000000000000000000000000000000000000000000000000000000\", urls: [a]}\n  - {version: v1.20.1, digest: \"0000000000000000000000000000000000000000000000000000000000000000\", urls: [a]}\n",
                "listed twice",
            ),
            ("entries:\n  cilium:\n  - version: [1]\n", "not a plain value"),
            ("entries:\n  cilium:\n  - urls: x\n", "not a list"),
            ("entries: {cilium: [\n", "line"),
        ] {
            let err = look(text, "1.20.1").unwrap_err();
            assert!(err.to_string().contains(says), "{text:?}: {err}");
        }
        let deep = format!(
            "entries:\n  other: {}{}\n",
            "[".repeat(100),
            "]".repeat(100)
        );
        let err = look(&deep, "1.20.1").unwrap_err();
        assert!(err.message.contains("nested deeper"), "{err}");
    }
}
