//! The binary's HTTP client for `chart fetch` and the first-use download: ureq, handed to the
//! library as its `chart::fetch::Transport`, so the library crates build without an HTTP client.
//! What is fetched, and every check of the bytes, stays in `chart::fetch`; this keeps only the
//! transport's rules the request names: https only (redirects too) unless the address is on this
//! machine, the environment's proxy for remote addresses only, the kind's byte bound and the
//! fetch timeouts of `limits`.

use std::time::Duration;

use cilium_cmp_render::chart::fetch::{Kind, Request, Transport};
use cilium_cmp_yaml::limits::{FETCH_CONNECT_SECS, FETCH_TOTAL_SECS};

/// ureq with rustls and the Mozilla roots compiled in (no gzip: an archive is stored as served).
pub struct Ureq;

impl Transport for Ureq {
    fn get(&self, request: &Request<'_>) -> Result<Vec<u8>, String> {
        let loopback = request.loopback;
        let config = ureq::Agent::config_builder()
            // Redirects (a mirror moving) may not leave https.
            .https_only(!loopback)
            // A proxy from the environment serves remote repositories, never this machine.
            .proxy(if loopback {
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
        let mut response = agent
            .get(request.url)
            .call()
            .map_err(|e| describe(e, request.kind))?;
        response
            .body_mut()
            .with_config()
            .limit(request.kind.limit())
            .read_to_vec()
            .map_err(|e| describe(e, request.kind))
    }
}

fn describe(e: ureq::Error, kind: Kind) -> String {
    let (what, usual) = (kind.noun(), kind.usual_size());
    match e {
        ureq::Error::StatusCode(404) => format!("the server answered 404 Not Found: the repository has no such {what} (check --repo)"),
        ureq::Error::StatusCode(code) => format!("the server answered HTTP {code}"),
        ureq::Error::BodyExceedsLimit(_) => format!(
            "the answer is larger than {} bytes; {usual}", kind.limit()
        ),
        ureq::Error::Timeout(_) => format!(
            "no answer within the time allowed ({FETCH_CONNECT_SECS} s to connect, {FETCH_TOTAL_SECS} s in all)"
        ),
        ureq::Error::Io(io) if io.kind() == std::io::ErrorKind::UnexpectedEof => {
            format!("the connection closed before the whole {what} arrived")
        }
        other => other.to_string(),
    }
}
