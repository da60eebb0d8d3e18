//! TLS: where secrets are read from and synchronised, and the projected sources of certificate volumes (a Secret's key pair and its CA, or the CA bundle).

use serde_json::Value;

use super::labels::put;
use super::values::written_or_compat;
use crate::components::Ctx;
use crate::error::RenderError;
use crate::tmpl::{bare, print};

/// What the chart's `readSecretsOnlyFromSecretsNamespace` helper prints.
pub fn read_secrets_only_text(ctx: &Ctx) -> String {
    let own = ctx.v("tls.readSecretsOnlyFromSecretsNamespace");
    if !own.is_null() {
        return print(own);
    }
    let backend = ctx.v("tls.secretsBackend");
    if !backend.is_null() {
        return (backend.as_str() == Some("local")).to_string();
    }
    "true".into()
}

/// Secrets are read only from the secrets namespace: the chart compares the text with "true".
pub fn read_secrets_only_from_secrets_namespace(ctx: &Ctx) -> bool {
    read_secrets_only_text(ctx) == "true"
}

/// What the chart's `secretSyncEnabled` helper prints.
pub fn secret_sync_text(ctx: &Ctx) -> Result<String, RenderError> {
    written_or_compat(ctx, "tls.secretSync.enabled", 1, 17)
}

/// Secret synchronisation is on: the chart compares the helper's text with "true".
pub fn secret_sync_enabled(ctx: &Ctx) -> Result<bool, RenderError> {
    Ok(secret_sync_text(ctx)? == "true")
}

/// The projected-volume source of the CA bundle (`tls.caBundle`), a Secret or a ConfigMap,
/// mounted as `path`; used instead of a certificate Secret's own `ca.crt` when the bundle is on.
pub fn ca_bundle_source(ctx: &Ctx, path: &str, optional: bool) -> Value {
    let kind = if ctx.on("tls.caBundle.useSecret") {
        "secret"
    } else {
        "configMap"
    };
    let mut src = tree!({
        "name": bare(ctx.v("tls.caBundle.name")),
        "items": [{"key": bare(ctx.v("tls.caBundle.key")), "path": path}],
    });
    if optional {
        put(&mut src, "optional", Some(Value::Bool(true)));
    }
    tree!({ kind: src })
}

/// The sources of a projected TLS volume: the certificate Secret's key pair (`items`, already
/// pointing at their file names) and its CA as `ca_path`, taken from the Secret's own `ca.crt`
/// or, with `tls.caBundle.enabled`, from the CA bundle. `optional` marks both sources.
pub fn cert_sources(
    ctx: &Ctx,
    secret: &str,
    mut items: Vec<Value>,
    ca_path: &str,
    optional: bool,
) -> Vec<Value> {
    let bundle = ctx.on("tls.caBundle.enabled");
    if !bundle {
        items.push(tree!({"key": "ca.crt", "path": ca_path}));
    }
    let mut secret = tree!({"name": secret, "items": items});
    if optional {
        put(&mut secret, "optional", Some(Value::Bool(true)));
    }
    let mut out = vec![tree!({ "secret": secret })];
    if bundle {
        out.push(ca_bundle_source(ctx, ca_path, optional));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::tests::with_ctx;
    use super::*;
    use serde_json::json;

    #[test]
    fn cert_sources_take_the_ca_from_the_bundle_when_on() {
        let items = || vec![json!({"key": "tls.crt", "path": "c.crt"})];
        with_ctx("{}", "1.35.0", |ctx| {
            let s = cert_sources(ctx, "sec", items(), "ca.crt", false);
            assert_eq!(s.len(), 1);
            assert_eq!(
                s[0]["secret"]["items"][1],
                json!({"key": "ca.crt", "path": "ca.crt"})
            );
            assert!(s[0]["secret"].get("optional").is_none());
        });
        let bundle = "tls: {caBundle: {enabled: true, useSecret: true, name: b, key: k}}\n";
        with_ctx(bundle, "1.35.0", |ctx| {
            let s = cert_sources(ctx, "sec", items(), "ca.crt", true);
            assert_eq!(s[0]["secret"]["items"].as_array().map(Vec::len), Some(1));
            assert_eq!(s[0]["secret"]["optional"], true);
            assert_eq!(
                s[1],
                json!({"secret": {"name": "b", "optional": true, "items": [{"key": "k", "path": "ca.crt"}]}})
            );
        });
    }
}
