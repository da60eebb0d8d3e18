//! `cilium-cmp chart fetch`: downloads the official chart archive of a release, checks its
//! sha256 and stores it where the other commands look (`chart::store`).
//!
//! What the bytes are checked against, in order: the sha256 pinned in this binary
//! (`chart::pins`) for a release it lists; else the digest the user gives (`--sha256`); else the
//! `digest` of the release's entry in the repository's `index.yaml`, read as Helm reads it
//! (`chart::index`). A listed release is fetched from `<repository>/cilium-VERSION.tgz` (the
//! relative name Cilium's index lists for every release), and its index is read only when that
//! address answers 404 (a mirror laid out otherwise); an index entry that disagrees with the pin
//! is then refused. An unlisted release's archive is found at its entry's first URL, relative
//! to the repository or absolute, and an absolute one must be https (http only to this machine,
//! and only for a repository on this machine): an index cannot send the download to another
//! scheme or a local file.
//!
//! Pre-releases (`1.21.0-pre.1`) are fetched only when named exactly: the index is searched for
//! that name and nothing else, so no pre-release is ever taken in place of a release.
//!
//! The bytes themselves come through a `Transport` the caller hands in (the binary's is ureq,
//! `src/cli/http.rs`): every rule above is decided here, but the library opens no connection
//! and depends on no HTTP client, so a library user or the fuzz targets do not build one.

use std::path::{Path, PathBuf};

use super::index::{self, Found};
use super::pins;
use super::store;
use crate::release_name::{release_name, ReleaseName};
use cilium_cmp_yaml::limits::{self, MAX_DOWNLOAD_BYTES, MAX_INDEX_BYTES, MAX_URL_CHARS};

/// Cilium's Helm chart repository.
pub const DEFAULT_REPO: &str = "https://helm.cilium.io/";

/// Why `fetch` stored no archive. Each message says what was tried; none leaves a partial file.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    /// The version is not one this binary lists, nor a release name newer than every listed
    /// one (the text says why).
    #[error("{0}; `cilium-cmp chart fetch` downloads the archives of the releases this cilium-cmp supports, and of newer releases and pre-releases named exactly")]
    Version(String),
    #[error("--sha256 {given}: {message}")]
    /// `--sha256` is not 64 hexadecimal digits, or differs from the pin of a pinned release.
    Digest {
        /// The digest as given (quoted when it is malformed).
        given: String,
        /// Why it is refused.
        message: String,
    },
    /// The repository address is not one downloads may use: https, or http to this machine.
    #[error("--repo {url}: {message}")]
    Repo {
        /// The address as given, quoted.
        url: String,
        /// Why it is refused.
        message: String,
    },
    /// The `Transport` returned an error for the archive or the index.
    #[error("cannot download {url}: {message}")]
    Download {
        /// The address asked for.
        url: String,
        /// The transport's reason (with what was tried after a 404, if anything).
        message: String,
    },
    /// The repository's `index.yaml` was downloaded but does not say where the release is: it
    /// is not UTF-8 or not an index, lists no such release, or names an address that may not
    /// be used.
    #[error("{url}: {message}; nothing was downloaded")]
    Index {
        /// The index's address.
        url: String,
        /// What is wrong with it (for a missing release, how many versions it lists and its
        /// pre-releases of that X.Y.Z).
        message: String,
    },
    /// A pinned release's archive was not beside the index, and the index's entry for it gives
    /// another digest than the pin.
    #[error("{index} lists cilium {version} with digest {listed}, but this binary pins its archive to sha256 {pinned}; the repository is not serving the official archive, nothing was downloaded")]
    IndexDisagrees {
        /// The index's address.
        index: String,
        /// The release.
        version: String,
        /// The digest the index gives.
        listed: String,
        /// The sha256 this binary pins.
        pinned: String,
    },
    /// The downloaded bytes do not have the expected sha256.
    #[error("{url} is not the official archive of Cilium {version}: its sha256 is {got}, the expected one is {expected} ({against}); nothing was written")]
    Mismatch {
        /// Where the bytes came from.
        url: String,
        /// The release.
        version: String,
        /// The sha256 they should have (lowercase hex).
        expected: String,
        /// The sha256 they have.
        got: String,
        /// Where `expected` comes from, in words ([`Against`]'s display).
        against: String,
    },
    /// No folder was given and [`store::default_dir`] finds none.
    #[error("no folder to store chart archives in: neither CILIUM_CMP_CHART_DIR nor HOME is set; pass --dir")]
    NoDir,
    /// A file already at the target path cannot be read (it is left as it is).
    #[error(transparent)]
    Stored(#[from] store::StoreError),
    /// The checked archive cannot be written into the folder.
    #[error("cannot write {path}: {message}; pass --dir to store the archive elsewhere")]
    Write {
        /// The archive's path in the folder.
        path: String,
        /// The system's reason.
        message: String,
    },
}

/// What the archive's sha256 was checked against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Against {
    /// The pin compiled into this binary.
    Pin,
    /// `--sha256`.
    Given,
    /// The digest of the release's entry in this index (its URL).
    Index(String),
}

impl std::fmt::Display for Against {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Against::Pin => f.write_str("its sha256 pinned in this binary"),
            Against::Given => f.write_str("the sha256 given"),
            Against::Index(url) => write!(f, "the digest {url} lists"),
        }
    }
}

/// The HTTP client `fetch` downloads through, handed in by the program that links one.
pub trait Transport {
    /// The body of a GET of `request.url`, of at most `request.kind.limit()` bytes, within the
    /// fetch timeouts (`limits::FETCH_CONNECT_SECS`, `limits::FETCH_TOTAL_SECS`); else why not,
    /// in the words of the message. A missing file's reason contains `404` (HTTP's status), which
    /// sends `fetch` to the repository's index (a mirror laid out otherwise).
    fn get(&self, request: &Request<'_>) -> Result<Vec<u8>, String>;
}

/// One download `fetch` asks of its `Transport`, with the rules the client must keep.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    /// The address to GET.
    pub url: &'a str,
    /// Plain http to this machine (a local mirror, the tests): no proxy, and redirects may stay
    /// on http. Otherwise the address is https, and so must every redirect be, through the
    /// environment's proxy if it names one.
    pub loopback: bool,
    /// What the body is, which sets its size bound ([`Kind::limit`]).
    pub kind: Kind,
}

/// What `fetch` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fetched {
    /// The stored archive.
    pub path: PathBuf,
    /// Whether it was downloaded now (false: already stored with the right bytes).
    pub downloaded: bool,
    /// Its sha256 (lowercase hex).
    pub sha256: String,
    /// What that sha256 was checked against.
    pub against: Against,
    /// The release's name (`1.21.0-pre.1`).
    pub release: ReleaseName,
}

/// The release asked for and the digest its bytes must have, when known before any download.
struct Want {
    release: ReleaseName,
    /// The pin, or the digest the user gave; None: the index's entry decides.
    expected: Option<(String, Against)>,
}

/// Fetches `cilium-VERSION.tgz` from `repo` into `dir` (default: `store::default_dir`), through
/// `transport`. `sha256` is the digest the user vouches for: for a release without a pin it
/// spares reading the index, and for a pinned one it must be the pin.
pub fn fetch(
    version: &str,
    repo: &str,
    dir: Option<&Path>,
    sha256: Option<&str>,
    transport: &dyn Transport,
) -> Result<Fetched, FetchError> {
    let want = wanted(version, sha256)?;
    let source = Source::parse(repo).map_err(|message| FetchError::Repo {
        url: limits::quoted(repo),
        message,
    })?;
    let dir = match dir {
        Some(d) => d.to_path_buf(),
        None => store::default_dir().ok_or(FetchError::NoDir)?,
    };
    let release = want.release;
    let name = release.archive_name();
    let target = dir.join(&name);
    let version = release.to_string();
    let (url, expected, against) = match want.expected {
        Some((expected, against)) => {
            let url = Target {
                url: format!("{}{name}", source.base),
                loopback: source.loopback,
            };
            (url, expected, against)
        }
        None => {
            let (url, entry) = from_index(&source, &release, transport)?;
            (url, entry.digest, Against::Index(source.index_url()))
        }
    };
    if let Some(bytes) = store::read_stored(&target)? {
        if store::sha256_hex(&bytes) == expected {
            return Ok(Fetched {
                path: target,
                downloaded: false,
                sha256: expected,
                against,
                release,
            });
        }
    }
    let (url, bytes) = match download(&url, Kind::Archive, transport) {
        // A mirror that does not keep the archives beside its index: its index says where.
        Err(FetchError::Download {
            url: tried,
            message,
        }) if against == Against::Pin && message.contains("404") => {
            let (found, entry) =
                from_index(&source, &release, transport).map_err(|e| FetchError::Download {
                    url: tried.clone(),
                    message: format!("{message}; nor does its index name another address ({e})"),
                })?;
            if entry.digest != expected {
                return Err(FetchError::IndexDisagrees {
                    index: source.index_url(),
                    version,
                    listed: entry.digest,
                    pinned: expected,
                });
            }
            let bytes = download(&found, Kind::Archive, transport)?;
            (found, bytes)
        }
        other => (url, other?),
    };
    let got = store::sha256_hex(&bytes);
    if got != expected {
        return Err(FetchError::Mismatch {
            url: url.url,
            version,
            expected,
            got,
            against: against.to_string(),
        });
    }
    let path = store::store(&dir, &name, &bytes).map_err(|e| FetchError::Write {
        path: target.display().to_string(),
        message: limits::io_reason(&e),
    })?;
    Ok(Fetched {
        path,
        downloaded: true,
        sha256: got,
        against,
        release,
    })
}

/// The release's name and, when known without the index, the sha256 its archive must have:
/// the pin, or for a release without one, the digest the user gave.
fn wanted(version: &str, given: Option<&str>) -> Result<Want, FetchError> {
    let given = match given {
        Some(g) => {
            let hex = g.trim().to_ascii_lowercase();
            if !(hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit())) {
                return Err(FetchError::Digest {
                    given: limits::quoted(g),
                    message: "not a sha256 (64 hexadecimal digits)".into(),
                });
            }
            Some(hex)
        }
        None => None,
    };
    let listed = match crate::versions::parse(version) {
        Ok(v) => v.to_string(),
        Err(e) => {
            let release = release_name(version)
                .filter(|_| crate::versions::is_newer_than_listed(version))
                .ok_or_else(|| FetchError::Version(e.to_string()))?;
            return Ok(Want {
                release,
                expected: given.map(|g| (g, Against::Given)),
            });
        }
    };
    let pin = pins::sha256_of(&listed).ok_or_else(|| {
        FetchError::Version(format!(
            "Cilium {listed} has no pinned sha256 in this build (a bug: every supported release has one)"
        ))
    })?;
    if let Some(g) = given.filter(|g| g != pin) {
        return Err(FetchError::Digest {
            given: g,
            message: format!(
                "Cilium {listed} is pinned in this binary to sha256 {pin}; leave --sha256 out"
            ),
        });
    }
    let release = release_name(&listed).ok_or_else(|| {
        FetchError::Version(format!(
            "Cilium {listed} is listed but not a release name (a bug)"
        ))
    })?;
    Ok(Want {
        release,
        expected: Some((pin.to_string(), Against::Pin)),
    })
}

/// Reads the repository's index and finds `release`'s entry and where its archive is.
fn from_index(
    source: &Source,
    release: &ReleaseName,
    transport: &dyn Transport,
) -> Result<(Target, index::Entry), FetchError> {
    let url = source.index_url();
    let fail = |message: String| FetchError::Index {
        url: url.clone(),
        message,
    };
    let bytes = download(
        &Target {
            url: url.clone(),
            loopback: source.loopback,
        },
        Kind::Index,
        transport,
    )?;
    let text = String::from_utf8(bytes)
        .map_err(|_| fail("not UTF-8 text, so not a chart repository index".into()))?;
    let entry = match index::find(&text, "cilium", release).map_err(|e| fail(e.to_string()))? {
        Found::Entry(entry) => entry,
        Found::Missing {
            versions,
            pre_releases,
        } => {
            let mut message =
                format!("lists no cilium {release} (it lists {versions} cilium versions)");
            if !pre_releases.is_empty() {
                message.push_str(&format!(
                    "; its pre-releases {} are fetched only when named exactly",
                    pre_releases.join(", ")
                ));
            }
            return Err(fail(message));
        }
    };
    let target = source.resolve(&entry.url).map_err(|message| {
        fail(format!(
            "the entry of cilium {release} names its archive at {}: {message}",
            limits::quoted(&entry.url)
        ))
    })?;
    Ok((target, entry))
}

/// Whether `repo` is a repository address `fetch` accepts; why not, when it is not.
pub fn check_repository(repo: &str) -> Result<(), String> {
    Source::parse(repo).map(|_| ())
}

/// A checked repository address.
struct Source {
    /// Ends in `/`, so the archive's name appends to it.
    base: String,
    /// `scheme://authority`, for an index's path-absolute URL (`/charts/x.tgz`).
    origin: String,
    /// Plain http to this machine (a local mirror, the tests): no proxy, no https requirement.
    loopback: bool,
}

/// An address to download from, checked as `Source` checks a repository.
struct Target {
    url: String,
    loopback: bool,
}

impl Source {
    /// Accepts `https://HOST[/PATH]`, and `http://` only to this machine (127.0.0.1, ::1,
    /// localhost). The pin makes the transport's integrity irrelevant, but https keeps which
    /// releases a machine fetches private and is what every real repository serves.
    fn parse(repo: &str) -> Result<Source, String> {
        let (uri, loopback) = checked_url(repo)?;
        if uri.query().is_some() || repo.contains('#') {
            return Err(
                "a repository URL has no query or fragment (the archive's name is appended to it)"
                    .into(),
            );
        }
        let origin = format!(
            "{}://{}",
            uri.scheme_str().unwrap_or("https"),
            uri.authority().map_or("", |a| a.as_str())
        );
        let mut base = repo.to_string();
        if !base.ends_with('/') {
            base.push('/');
        }
        Ok(Source {
            base,
            origin,
            loopback,
        })
    }

    fn index_url(&self) -> String {
        format!("{}index.yaml", self.base)
    }

    /// Where an index's URL points, as Helm's `repo.ResolveReferenceURL` resolves it against
    /// the repository (the repository's path taken as a folder). A relative reference is kept
    /// to plain paths: `.`/`..` segments, backslashes and fragments are refused rather than
    /// normalised, since no real index writes them. An absolute one (or `//host/...`) must
    /// pass the repository's own checks, and plain http to this machine is followed only from
    /// a repository on this machine (a remote index may not point the client at local services).
    fn resolve(&self, reference: &str) -> Result<Target, String> {
        let has_scheme = reference.split_once(':').is_some_and(|(scheme, _)| {
            !scheme.is_empty()
                && !scheme.contains('/')
                && scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        });
        let absolute = if has_scheme {
            Some(reference.to_string())
        } else if let Some(rest) = reference.strip_prefix("//") {
            let scheme = self.origin.split_once(':').map_or("https", |(s, _)| s);
            Some(format!("{scheme}://{rest}"))
        } else {
            None
        };
        if let Some(url) = absolute {
            let (_, loopback) = checked_url(&url)?;
            if url.contains('#') {
                return Err("a URL with a fragment is not an archive's address".into());
            }
            if loopback && !self.loopback {
                return Err(
                    "plain http to this machine is followed only from an index on this machine"
                        .into(),
                );
            }
            return Ok(Target { url, loopback });
        }
        if reference.is_empty()
            || reference
                .chars()
                .any(|c| c == '\\' || c == '#' || c.is_whitespace() || c.is_control())
            || reference.split('/').any(|seg| seg == "." || seg == "..")
        {
            return Err("not a plain relative path such as cilium-1.20.0.tgz".into());
        }
        let url = match reference.strip_prefix('/') {
            Some(_) => format!("{}{reference}", self.origin),
            None => format!("{}{reference}", self.base),
        };
        if url.chars().count() > MAX_URL_CHARS {
            return Err(format!("longer than {MAX_URL_CHARS} characters"));
        }
        Ok(Target {
            url,
            loopback: self.loopback,
        })
    }
}

/// `https://HOST...`, or `http://` to this machine (then true); no credentials, bounded length.
fn checked_url(text: &str) -> Result<(http::Uri, bool), String> {
    if text.chars().count() > MAX_URL_CHARS {
        return Err(format!("longer than {MAX_URL_CHARS} characters"));
    }
    // Only these two schemes are ever followed (checked before parsing: `file:` and other
    // schemes without an authority are not even URLs to the parser).
    let lower = text.get(..8).unwrap_or(text).to_ascii_lowercase();
    if !(lower.starts_with("https://") || lower.starts_with("http://")) {
        return Err("not an https URL such as https://helm.cilium.io/".into());
    }
    let uri: http::Uri = text
        .parse()
        .map_err(|_| "not a URL such as https://helm.cilium.io/".to_string())?;
    if uri.authority().is_some_and(|a| a.as_str().contains('@')) {
        return Err("credentials in the URL are not supported".into());
    }
    let host = uri.host().unwrap_or("");
    let loopback = matches!(host, "127.0.0.1" | "[::1]" | "::1" | "localhost");
    match uri.scheme_str() {
        Some("https") if !host.is_empty() => Ok((uri, false)),
        Some("http") if loopback => Ok((uri, true)),
        Some("http") => Err(
            "plain http is accepted only from this machine (127.0.0.1, ::1, localhost); use https"
                .into(),
        ),
        _ => Err("not an https URL such as https://helm.cilium.io/".into()),
    }
}

/// What is downloaded, for its bound and the words of its errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A chart archive (`cilium-VERSION.tgz`).
    Archive,
    /// A chart repository's `index.yaml`.
    Index,
}

impl Kind {
    /// The most bytes a download of this kind may have.
    pub fn limit(self) -> u64 {
        match self {
            Kind::Archive => MAX_DOWNLOAD_BYTES,
            Kind::Index => MAX_INDEX_BYTES,
        }
    }

    /// Its name in messages.
    pub fn noun(self) -> &'static str {
        match self {
            Kind::Archive => "archive",
            Kind::Index => "index",
        }
    }

    /// How large a real one is, for the message of one over the bound.
    pub fn usual_size(self) -> &'static str {
        match self {
            Kind::Archive => "the official archives are about 210 KB",
            Kind::Index => "Cilium's index is a few MB",
        }
    }
}

/// The response body, through the transport, as a `FetchError` naming the address.
fn download(target: &Target, kind: Kind, transport: &dyn Transport) -> Result<Vec<u8>, FetchError> {
    transport
        .get(&Request {
            url: &target.url,
            loopback: target.loopback,
            kind,
        })
        .map_err(|message| FetchError::Download {
            url: target.url.clone(),
            message,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn digest_of(version: &str, given: Option<&str>) -> Result<(String, Option<String>), String> {
        wanted(version, given)
            .map(|w| (w.release.to_string(), w.expected.map(|(d, _)| d)))
            .map_err(|e| e.to_string())
    }

    #[test]
    fn digests_a_release_is_fetched_with() {
        let pin = "c5f013912360d1a334f44ef25f36da59ba3414cdb48f466ee12d0c4fdff27883";
        assert_eq!(digest_of("1.20.0", None).unwrap().1.unwrap(), pin);
        assert_eq!(
            digest_of("v1.20.0", Some(&pin.to_uppercase())).unwrap(),
            ("1.20.0".to_string(), Some(pin.to_string()))
        );
        let other = "a".repeat(64);
        let err = digest_of("1.20.0", Some(&other)).unwrap_err();
        assert!(err.contains("pinned in this binary"), "{err}");
        assert_eq!(
            digest_of("1.20.1", Some(&other)).unwrap(),
            ("1.20.1".to_string(), Some(other.clone()))
        );
        // Without a digest, the index decides.
        assert_eq!(digest_of("1.20.1", None).unwrap(), ("1.20.1".into(), None));
        assert_eq!(
            digest_of("v1.21.0-pre.1", None).unwrap(),
            ("1.21.0-pre.1".into(), None)
        );
        assert_eq!(
            digest_of("1.20.0-rc.2", None).unwrap(),
            ("1.20.0-rc.2".into(), None)
        );
        let err = digest_of("1.20.1", Some("abc")).unwrap_err();
        assert!(err.contains("64 hexadecimal"), "{err}");
        for old in ["../x", "1.17.0", "1.17.0-rc.1", "1.20.1+x"] {
            let err = digest_of(old, None).unwrap_err();
            assert!(
                err.contains("is not a Cilium release cilium-cmp renders"),
                "{old}: {err}"
            );
        }
    }

    #[test]
    fn repository_addresses() {
        let ok = |r: &str| Source::parse(r).map(|s| (s.base, s.loopback));
        assert_eq!(
            ok(DEFAULT_REPO).unwrap(),
            ("https://helm.cilium.io/".into(), false)
        );
        assert_eq!(
            ok("https://mirror.example/cilium").unwrap().0,
            "https://mirror.example/cilium/"
        );
        assert_eq!(
            ok("http://127.0.0.1:8080").unwrap(),
            ("http://127.0.0.1:8080/".into(), true)
        );
        assert!(ok("http://[::1]:80/x/").unwrap().1);
        assert!(ok("http://localhost/").unwrap().1);
        for bad in [
            "http://mirror.example/",
            "ftp://helm.cilium.io/",
            "helm.cilium.io",
            "https://helm.cilium.io/?x=1",
            "https://user:pw@helm.cilium.io/",
            "",
        ] {
            assert!(ok(bad).is_err(), "{bad} must be refused");
        }
        let long = format!("https://x/{}", "a".repeat(MAX_URL_CHARS));
        let err = ok(&long).unwrap_err();
        assert!(err.contains("longer than") && err.len() < 400, "{err}");
    }

    #[test]
    fn index_urls_resolve_against_the_repository() {
        let remote = Source::parse("https://helm.example/charts").unwrap();
        let local = Source::parse("http://127.0.0.1:9/charts/").unwrap();
        let at = |s: &Source, r: &str| s.resolve(r).map(|t| (t.url, t.loopback));
        assert_eq!(
            at(&remote, "cilium-1.20.1.tgz").unwrap(),
            (
                "https://helm.example/charts/cilium-1.20.1.tgz".into(),
                false
            )
        );
        assert_eq!(
            at(&remote, "/other/cilium-1.20.1.tgz").unwrap().0,
            "https://helm.example/other/cilium-1.20.1.tgz"
        );
        assert_eq!(
            at(&remote, "https://github.example/r/cilium-1.20.1.tgz")
                .unwrap()
                .0,
            "https://github.example/r/cilium-1.20.1.tgz"
        );
        assert_eq!(
            at(&remote, "//cdn.example/c.tgz").unwrap().0,
            "https://cdn.example/c.tgz"
        );
        assert_eq!(
            at(&local, "sub/c.tgz").unwrap(),
            ("http://127.0.0.1:9/charts/sub/c.tgz".into(), true)
        );
        assert!(at(&local, "http://localhost:9/c.tgz").unwrap().1);
        for bad in [
            "file:///etc/passwd",
            "ftp://helm.example/c.tgz",
            "http://helm.example/c.tgz",
            "http://127.0.0.1/c.tgz",
            "https://u:p@helm.example/c.tgz",
            "../c.tgz",
            "a/./c.tgz",
            "c.tgz#x",
            "a\\c.tgz",
            "",
            "c d.tgz",
        ] {
            assert!(at(&remote, bad).is_err(), "{bad} must be refused");
        }
        assert!(at(&local, "file:///etc/passwd").is_err());
        // A network-path reference takes the repository's scheme, then the same checks.
        assert!(at(&local, "//127.0.0.1:9/c.tgz").unwrap().1);
        assert!(at(&local, "//helm.example/c.tgz").is_err());
    }
}
