//! Mirrors the chart's templates: cilium-ca-bundle-configmap.yaml, cilium-ca-secret.yaml

use serde_json::{Map, Value};

use super::common::{common_labels, merged, metadata};
use super::Ctx;
use crate::changes::Change;
use crate::error::RenderError;
use crate::plan::CertSource;
use crate::tmpl::{bare, print, with};

pub fn render(ctx: &Ctx) -> Result<Vec<Value>, RenderError> {
    let mut out = Vec::new();
    if ctx.on("tls.caBundle.enabled") && ctx.on("tls.caBundle.content") {
        out.push(ca_bundle(ctx)?);
    }
    if let Some(secret) = ca_secret(ctx)? {
        out.push(secret);
    }
    Ok(out)
}

/// The trusted CA bundle, as a ConfigMap or (with `useSecret`) a Secret.
fn ca_bundle(ctx: &Ctx) -> Result<Value, RenderError> {
    let use_secret = match ctx.v("tls.caBundle.useSecret") {
        Value::Bool(b) => *b,
        _ => {
            return Err(ctx.invalid(
                "tls.caBundle.useSecret",
                "must be true (a Secret) or false (a ConfigMap)",
            ))
        }
    };
    let ns = ctx.namespace();
    let Value::String(content) = ctx.v("tls.caBundle.content") else {
        return Err(ctx.invalid(
            "tls.caBundle.content",
            "must be text: the PEM certificates to trust",
        ));
    };
    let content = block_literal(content);
    let mut data = Map::new();
    data.insert(ctx.text("tls.caBundle.key"), Value::String(content));
    let name = match bare(ctx.v("tls.caBundle.name")) {
        Value::String(s) => s,
        other => print(&other),
    };
    let (kind, field) = if use_secret {
        ("Secret", "stringData")
    } else {
        ("ConfigMap", "data")
    };
    Ok(tree!({
        "apiVersion": "v1",
        "kind": kind,
        "metadata": metadata(&name, Some(&ns), common_labels(ctx), None),
        field: data,
    }))
}

/// Text placed in a `|` block scalar: trailing empty lines collapse into one line break, while
/// lines holding only spaces stay content.
fn block_literal(text: &str) -> String {
    let mut lines: Vec<&str> = text.split('\n').collect();
    while lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop();
    }
    if lines.is_empty() {
        String::new()
    } else {
        format!("{}\n", lines.join("\n"))
    }
}

/// The shared `cilium-ca` Secret. The chart renders it when it must mint certificates itself
/// (`helm` TLS methods) or when the user supplied the CA; only the latter is deterministic.
fn ca_secret(ctx: &Ctx) -> Result<Option<Value>, RenderError> {
    let clustermesh_helm =
        ctx.on("clustermesh.useAPIServer") && ctx.plan.clustermesh_certs == CertSource::Helm;
    // With Hubble on, the plan's relay and UI facts are the chart's bare switches.
    let hubble_helm = (ctx.on("agent") || ctx.plan.hubble_relay || ctx.plan.hubble_ui)
        && ctx.on("hubble.enabled")
        && ctx.on("hubble.tls.enabled")
        && ctx.plan.hubble_certs == CertSource::Helm;
    let supplied = ctx.on("tls.ca.key") && ctx.on("tls.ca.cert");
    if !(clustermesh_helm || hubble_helm || supplied) {
        return Ok(None);
    }
    if !supplied {
        return Err(ctx.invalid(
            "tls.ca.cert",
            "the chart would look up the cilium-ca Secret in the live cluster or generate a new \
             random CA on every render, which a deterministic render cannot do: supply the CA as \
             base64-encoded PEM in tls.ca.cert and tls.ca.key, or use the cronJob or certmanager \
             TLS method instead of helm",
        ));
    }
    let cert = pem_from_base64(ctx, "tls.ca.cert", "certificate")?;
    let key = pem_from_base64(ctx, "tls.ca.key", "private key")?;
    let ns = ctx.namespace();
    Ok(Some(tree!({
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": ca_secret_metadata(ctx, &ns),
        "data": {"ca.crt": base64_encode(&cert), "ca.key": base64_encode(&key)},
    })))
}

/// From 1.19 the chart marks the Secret as one its templates cannot render idempotently (the
/// mark follows `commonLabels`, so it wins a clash) and adds `nonIdempotentAnnotations`.
fn ca_secret_metadata(ctx: &Ctx, ns: &str) -> Value {
    if !ctx.plan.has(Change::CaSecretNonIdempotentMarks) {
        return metadata("cilium-ca", Some(ns), common_labels(ctx), None);
    }
    let mark = tree!({"cilium.io/helm-template-non-idempotent": "true"});
    metadata(
        "cilium-ca",
        Some(ns),
        merged(&[ctx.v("commonLabels"), &mark]),
        with(ctx.v("nonIdempotentAnnotations")),
    )
}

/// The chart decodes the supplied CA and re-encodes it, so it must be base64 of a PEM block.
fn pem_from_base64(ctx: &Ctx, path: &str, what: &str) -> Result<Vec<u8>, RenderError> {
    let v = ctx.v(path);
    let Value::String(text) = v else {
        return Err(ctx.invalid(path, format!("must be the base64-encoded PEM {what}")));
    };
    let bytes = base64_decode(text).ok_or_else(|| {
        ctx.invalid(
            path,
            format!("is not valid base64: it must be the base64-encoded PEM {what} (for example the output of `base64 -w0 ca.crt`)"),
        )
    })?;
    let pem = String::from_utf8_lossy(&bytes);
    if !(pem.contains("-----BEGIN ") && pem.contains("-----END ")) {
        return Err(ctx.invalid(
            path,
            format!("does not decode to a PEM block: it must be the base64-encoded PEM {what}"),
        ));
    }
    Ok(bytes)
}

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Each byte's value in `ALPHABET`, or `INVALID`.
const DECODE: [u8; 256] = {
    let mut table = [INVALID; 256];
    let mut i = 0;
    while i < ALPHABET.len() {
        table[ALPHABET[i] as usize] = i as u8;
        i += 1;
    }
    table
};
const INVALID: u8 = 0xff;

/// Standard padded base64, as Go's `base64.StdEncoding`.
fn base64_encode(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Go's `base64.StdEncoding.DecodeString`: padding required, line breaks ignored.
fn base64_decode(text: &str) -> Option<Vec<u8>> {
    let symbols: std::borrow::Cow<[u8]> = if text.contains(['\n', '\r']) {
        text.bytes()
            .filter(|b| *b != b'\n' && *b != b'\r')
            .collect::<Vec<u8>>()
            .into()
    } else {
        text.as_bytes().into()
    };
    if symbols.len() % 4 != 0 {
        return None;
    }
    let mut out = Vec::with_capacity(symbols.len() / 4 * 3);
    let quads = symbols.len() / 4;
    for (qi, quad) in symbols.chunks(4).enumerate() {
        let last = qi + 1 == quads;
        let mut n: u32 = 0;
        let mut count = 0;
        for (i, &c) in quad.iter().enumerate() {
            if c == b'=' {
                // Padding only at the end of the last quad, after at least two symbols.
                if !last || i < 2 || quad[i..].iter().any(|&p| p != b'=') {
                    return None;
                }
                break;
            }
            let v = DECODE[c as usize];
            if v == INVALID {
                return None;
            }
            let v = u32::from(v);
            n |= v << (18 - 6 * i);
            count += 1;
        }
        out.push((n >> 16) as u8);
        if count > 2 {
            out.push((n >> 8) as u8);
        }
        if count > 3 {
            out.push(n as u8);
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_round_trips_like_go() {
        for s in ["", "f", "fo", "foo", "foob", "fooba", "foobar"] {
            let e = base64_encode(s.as_bytes());
            assert_eq!(base64_decode(&e).as_deref(), Some(s.as_bytes()));
        }
        assert_eq!(base64_encode(b"foobar"), "Zm9vYmFy");
        assert_eq!(base64_encode(b"fo"), "Zm8=");
        assert_eq!(base64_decode("Zm9v\nYmFy").as_deref(), Some(&b"foobar"[..]));
        assert!(base64_decode("Zm9").is_none());
        assert!(base64_decode("Zm=v").is_none());
        assert!(base64_decode("Z===").is_none());
    }

    #[test]
    fn block_literal_keeps_one_trailing_break() {
        assert_eq!(block_literal("abc"), "abc\n");
        assert_eq!(block_literal("a\nb\n\n"), "a\nb\n");
        assert_eq!(block_literal(""), "");
        assert_eq!(block_literal("a  \n  \n\n"), "a  \n  \n");
    }
}
