//! `cilium-cmp chart fetch`: downloads the official chart archive of a supported release, checks
//! it against the sha256 pinned in this binary (`chart::pins`) and stores it where the other
//! commands look (`chart::store`). A release this binary does not list has no pin: it is fetched
//! only when the user gives its digest (`--sha256`), which Cilium's repository index lists as
//! the entry's `digest` (Helm's index format: the sha256 of the archive).
//!
//! The archive's address is `<repository>/cilium-VERSION.tgz`. Cilium's repository index
//! (`index.yaml` at the same address) lists exactly that relative name for every release, but it
//! is several megabytes of chart metadata; reading it would only find the same name, and the pin,
//! not the index, decides whether the bytes are right.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::pins;
use super::store::{self, archive_name};
use crate::limits::{
    self, FETCH_CONNECT_SECS, FETCH_TOTAL_SECS, MAX_DOWNLOAD_BYTES, MAX_URL_CHARS,
};

/// Cilium's Helm chart repository.
pub const DEFAULT_REPO: &str = "https://helm.cilium.io/";

#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    #[error("{0}; `cilium-cmp chart fetch` downloads the archives of the releases this cilium-cmp supports")]
    Version(String),
    #[error("Cilium {version} is not a release this cilium-cmp lists, so no sha256 is pinned for it: pass its archive's digest with --sha256 (Cilium's Helm repository index, {DEFAULT_REPO}index.yaml, lists it as the `digest` of its cilium {version} entry); nothing was downloaded")]
    NeedsDigest { version: String },
    #[error("--sha256 {given}: {message}")]
    Digest { given: String, message: String },
    #[error("--repo {url}: {message}")]
    Repo { url: String, message: String },
    #[error("cannot download {url}: {message}")]
    Download { url: String, message: String },
    #[error("{url} is not the official archive of Cilium {version}: its sha256 is {got}, the expected one is {expected}; nothing was written")]
    Mismatch {
        url: String,
        version: String,
        expected: String,
        got: String,
    },
    #[error("no folder to store chart archives in: neither CILIUM_CMP_CHART_DIR nor HOME is set; pass --dir")]
    NoDir,
    #[error(transparent)]
    Stored(#[from] store::StoreError),
    #[error("cannot write {path}: {message}; pass --dir to store the archive elsewhere")]
    Write { path: String, message: String },
}

/// What `fetch` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fetched {
    /// Downloaded, checked and stored at this path.
    Downloaded(PathBuf),
    /// The pinned archive was already stored at this path; nothing was downloaded.
    AlreadyStored(PathBuf),
}

/// Fetches `cilium-VERSION.tgz` from `repo` into `dir` (default: `store::default_dir`).
/// `sha256` is the digest the user vouches for: required for a release without a pin, and for a
/// pinned one it must be the pin.
pub fn fetch(
    version: &str,
    repo: &str,
    dir: Option<&Path>,
    sha256: Option<&str>,
) -> Result<Fetched, FetchError> {
    let (version, expected) = expected_digest(version, sha256)?;
    let expected = expected.as_str();
    let source = Source::parse(repo)?;
    let dir = match dir {
        Some(d) => d.to_path_buf(),
        None => store::default_dir().ok_or(FetchError::NoDir)?,
    };
    let name = archive_name(&version);
    let target = dir.join(&name);
    if let Some(bytes) = store::read_stored(&target)? {
        if store::sha256_hex(&bytes) == expected {
            return Ok(Fetched::AlreadyStored(target));
        }
    }
    let url = format!("{}{name}", source.base);
    let bytes = download(&url, &source)?;
    let got = store::sha256_hex(&bytes);
    if got != expected {
        return Err(FetchError::Mismatch {
            url,
            version,
            expected: expected.to_string(),
            got,
        });
    }
    let path = store::store(&dir, &name, &bytes).map_err(|e| FetchError::Write {
        path: target.display().to_string(),
        message: crate::argocd::folder::io_reason(&e),
    })?;
    Ok(Fetched::Downloaded(path))
}

/// The release's name and the sha256 its archive must have: the pin, or for a release without
/// one, the digest the user gave.
fn expected_digest(version: &str, given: Option<&str>) -> Result<(String, String), FetchError> {
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
    match crate::versions::parse(version) {
        Ok(v) => {
            let v = v.to_string();
            let pin = pins::sha256_of(&v).ok_or_else(|| FetchError::Version(format!(
                "Cilium {v} has no pinned sha256 in this build (a bug: every supported release has one)"
            )))?;
            match given {
                Some(g) if g != pin => Err(FetchError::Digest {
                    given: g,
                    message: format!(
                        "Cilium {v} is pinned in this binary to sha256 {pin}; leave --sha256 out"
                    ),
                }),
                _ => Ok((v, pin.to_string())),
            }
        }
        Err(e) if !crate::versions::is_newer_than_listed(version) => {
            Err(FetchError::Version(e.to_string()))
        }
        Err(e) => match (crate::versions::release_number(version), given) {
            (Some(v), Some(g)) => Ok((v, g)),
            (Some(v), None) => Err(FetchError::NeedsDigest { version: v }),
            (None, _) => Err(FetchError::Version(e.to_string())),
        },
    }
}

/// A checked repository address.
struct Source {
    /// Ends in `/`, so the archive's name appends to it.
    base: String,
    /// Plain http to this machine (a local mirror, the tests): no proxy, no https requirement.
    loopback: bool,
}

impl Source {
    /// Accepts `https://HOST[/PATH]`, and `http://` only to this machine (127.0.0.1, ::1,
    /// localhost). The pin makes the transport's integrity irrelevant, but https keeps which
    /// releases a machine fetches private and is what every real repository serves.
    fn parse(repo: &str) -> Result<Source, FetchError> {
        let fail = |message: &str| FetchError::Repo {
            url: limits::quoted(repo),
            message: message.to_string(),
        };
        if repo.chars().count() > MAX_URL_CHARS {
            return Err(fail(&format!("longer than {MAX_URL_CHARS} characters")));
        }
        let uri: ureq::http::Uri = repo
            .parse()
            .map_err(|_| fail("not a URL such as https://helm.cilium.io/"))?;
        if uri.query().is_some() || repo.contains('#') {
            return Err(fail(
                "a repository URL has no query or fragment (the archive's name is appended to it)",
            ));
        }
        if uri.authority().is_some_and(|a| a.as_str().contains('@')) {
            return Err(fail("credentials in the URL are not supported"));
        }
        let host = uri.host().unwrap_or("");
        let loopback = matches!(host, "127.0.0.1" | "[::1]" | "::1" | "localhost");
        match uri.scheme_str() {
            Some("https") if !host.is_empty() => {}
            Some("http") if loopback => {}
            Some("http") => {
                return Err(fail("plain http is accepted only from this machine (127.0.0.1, ::1, localhost); use https"))
            }
            _ => return Err(fail("not an https URL such as https://helm.cilium.io/")),
        }
        let mut base = repo.to_string();
        if !base.ends_with('/') {
            base.push('/');
        }
        Ok(Source { base, loopback })
    }
}

/// The response body, at most `MAX_DOWNLOAD_BYTES`, within the fetch timeouts.
fn download(url: &str, source: &Source) -> Result<Vec<u8>, FetchError> {
    let fail = |message: String| FetchError::Download {
        url: url.to_string(),
        message,
    };
    let config = ureq::Agent::config_builder()
        // Redirects (a mirror moving) may not leave https.
        .https_only(!source.loopback)
        // A proxy from the environment serves remote repositories, never this machine.
        .proxy(if source.loopback {
            None
        } else {
            ureq::Proxy::try_from_env()
        })
        .max_redirects(5)
        .timeout_connect(Some(Duration::from_secs(FETCH_CONNECT_SECS)))
        .timeout_global(Some(Duration::from_secs(FETCH_TOTAL_SECS)))
        .user_agent(concat!("cilium-cmp/", env!("CARGO_PKG_VERSION")))
        .build();
    let agent = ureq::Agent::new_with_config(config);
    let mut response = agent.get(url).call().map_err(|e| fail(describe(e)))?;
    response
        .body_mut()
        .with_config()
        .limit(MAX_DOWNLOAD_BYTES)
        .read_to_vec()
        .map_err(|e| fail(describe(e)))
}

fn describe(e: ureq::Error) -> String {
    match e {
        ureq::Error::StatusCode(404) => "the server answered 404 Not Found: the repository has no such archive (check --repo)".into(),
        ureq::Error::StatusCode(code) => format!("the server answered HTTP {code}"),
        ureq::Error::BodyExceedsLimit(_) => format!(
            "the answer is larger than {MAX_DOWNLOAD_BYTES} bytes; the official archives are about 210 KB"
        ),
        ureq::Error::Timeout(_) => format!(
            "no answer within the time allowed ({FETCH_CONNECT_SECS} s to connect, {FETCH_TOTAL_SECS} s in all)"
        ),
        ureq::Error::Io(io) if io.kind() == std::io::ErrorKind::UnexpectedEof => {
            "the connection closed before the whole archive arrived".into()
        }
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digests_a_release_is_fetched_with() {
        let pin = "c5f013912360d1a334f44ef25f36da59ba3414cdb48f466ee12d0c4fdff27883";
        assert_eq!(expected_digest("1.20.0", None).unwrap().1, pin);
        assert_eq!(
            expected_digest("v1.20.0", Some(&pin.to_uppercase()))
                .unwrap()
                .1,
            pin
        );
        let other = "a".repeat(64);
        let err = expected_digest("1.20.0", Some(&other))
            .unwrap_err()
            .to_string();
        assert!(err.contains("pinned in this binary"), "{err}");
        assert_eq!(
            expected_digest("1.20.1", Some(&other)).unwrap(),
            ("1.20.1".to_string(), other.clone())
        );
        let err = expected_digest("1.20.1", None).unwrap_err().to_string();
        assert!(
            err.contains("--sha256") && err.contains("index.yaml"),
            "{err}"
        );
        let err = expected_digest("1.20.1", Some("abc"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("64 hexadecimal"), "{err}");
        assert!(expected_digest("../x", Some(&other)).is_err());
        let err = expected_digest("1.17.0", Some(&other))
            .unwrap_err()
            .to_string();
        assert!(err.contains("is not supported"), "{err}");
    }

    #[test]
    fn repository_addresses() {
        let ok = |r: &str| {
            Source::parse(r)
                .map(|s| (s.base, s.loopback))
                .map_err(|e| e.to_string())
        };
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
}
