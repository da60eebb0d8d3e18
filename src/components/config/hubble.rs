//! Hubble's keys: the server socket and buffers, metrics, redaction, flow export, the TLS
//! listener and drop events.

use super::text::{duration, folded};
use super::{has, set, Data, Derived};
use crate::changes::Change;
use crate::components::Ctx;
use crate::error::RenderError;
use crate::tmpl::{join, truthy};
use serde_json::Value;

pub fn hubble(ctx: &Ctx, _d: &Derived, data: &mut Data) -> Result<(), RenderError> {
    data.qv(ctx, "enable-hubble", "hubble.enabled");
    if !ctx.on("hubble.enabled") {
        return Ok(());
    }
    data.qv(ctx, "hubble-socket-path", "hubble.socketPath");
    for (key, path) in [
        ("hubble-event-queue-size", "hubble.eventQueueSize"),
        ("hubble-event-buffer-capacity", "hubble.eventBufferCapacity"),
    ] {
        if has(ctx, path) {
            data.qv(ctx, key, path);
        }
    }
    if ctx.plan.has(Change::ConfigKeysAdded119) && has(ctx, "hubble.lostEventSendInterval") {
        data.s(
            "hubble-lost-event-send-interval",
            duration(ctx, "hubble.lostEventSendInterval")?,
        );
    }
    metrics(ctx, data)?;
    data.qv_when(
        ctx,
        has,
        "hubble-network-policy-correlation-enabled",
        "hubble.networkPolicyCorrelation.enabled",
    );
    if ctx.on("hubble.redact") && ctx.v("hubble.redact.enabled") == &Value::Bool(true) {
        redact(ctx, data)?;
    }
    if ctx.on("hubble.export") {
        export(ctx, data)?;
    }
    if has(ctx, "hubble.listenAddress") {
        data.qv(ctx, "hubble-listen-address", "hubble.listenAddress");
        if ctx.on("hubble.tls.enabled") {
            data.s("hubble-disable-tls", "false");
            data.s(
                "hubble-tls-cert-file",
                "/var/lib/cilium/tls/hubble/server.crt",
            );
            data.s(
                "hubble-tls-key-file",
                "/var/lib/cilium/tls/hubble/server.key",
            );
            data.s(
                "hubble-tls-client-ca-files",
                "/var/lib/cilium/tls/hubble/client-ca.crt",
            );
        } else {
            data.s("hubble-disable-tls", "true");
        }
    }
    if ctx.on("hubble.dropEventEmitter.enabled") {
        data.s("hubble-drop-events", "true");
        data.qv(
            ctx,
            "hubble-drop-events-interval",
            "hubble.dropEventEmitter.interval",
        );
        data.s(
            "hubble-drop-events-reasons",
            join(ctx.v("hubble.dropEventEmitter.reasons"), " "),
        );
    }
    let prefer_ipv6 = ctx.plan.has(Change::ConfigKeysAdded120) && super::general::prefer_ipv6(ctx)?;
    if ctx.v("hubble.preferIpv6") == &Value::Bool(true)
        || prefer_ipv6
        || ctx.v("ipv4.enabled") == &Value::Bool(false)
    {
        data.s("hubble-prefer-ipv6", "true");
    }
    data.qv_when(
        ctx,
        set,
        "hubble-skip-unknown-cgroup-ids",
        "hubble.skipUnknownCGroupIDs",
    );
    Ok(())
}

fn metrics(ctx: &Ctx, data: &mut Data) -> Result<(), RenderError> {
    let static_metrics = ctx.on("hubble.metrics.enabled");
    if static_metrics || ctx.on("hubble.metrics.dynamic.enabled") {
        let port = super::text::text(ctx.v("hubble.metrics.port"));
        data.put(
            "hubble-metrics-server",
            super::text::dquoted(ctx, "hubble.metrics.port", &format!(":{port}"))?,
        );
        data.dq(
            ctx,
            "hubble-metrics-server-enable-tls",
            "hubble.metrics.tls.enabled",
        )?;
        if ctx.on("hubble.metrics.tls.enabled") {
            data.s(
                "hubble-metrics-server-tls-cert-file",
                "/var/lib/cilium/tls/hubble-metrics/server.crt",
            );
            data.s(
                "hubble-metrics-server-tls-key-file",
                "/var/lib/cilium/tls/hubble-metrics/server.key",
            );
            if ctx.on("hubble.metrics.tls.server.mtls.enabled") {
                data.s(
                    "hubble-metrics-server-tls-client-ca-files",
                    "/var/lib/cilium/tls/hubble-metrics/client-ca.crt",
                );
            }
        }
        data.qv(
            ctx,
            "enable-hubble-open-metrics",
            "hubble.metrics.enableOpenMetrics",
        );
    }
    if static_metrics {
        data.put(
            "hubble-metrics",
            folded(
                ctx,
                "hubble.metrics.enabled",
                ctx.v("hubble.metrics.enabled"),
            )?,
        );
    }
    if ctx.on("hubble.metrics.dynamic.enabled") {
        data.s(
            "hubble-dynamic-metrics-config-path",
            "/dynamic-metrics-config/dynamic-metrics.yaml",
        );
    }
    Ok(())
}

fn redact(ctx: &Ctx, data: &mut Data) -> Result<(), RenderError> {
    data.s("hubble-redact-enabled", "true");
    if ctx.on("hubble.redact.http") {
        data.qv(
            ctx,
            "hubble-redact-http-urlquery",
            "hubble.redact.http.urlQuery",
        );
        data.qv(
            ctx,
            "hubble-redact-http-userinfo",
            "hubble.redact.http.userInfo",
        );
        if ctx.on("hubble.redact.http.headers") {
            for (key, path) in [
                (
                    "hubble-redact-http-headers-allow",
                    "hubble.redact.http.headers.allow",
                ),
                (
                    "hubble-redact-http-headers-deny",
                    "hubble.redact.http.headers.deny",
                ),
            ] {
                if ctx.on(path) {
                    data.put(key, folded(ctx, path, ctx.v(path))?);
                }
            }
        }
    }
    if !ctx.plan.has(Change::ConfigKeysRetired120) && ctx.on("hubble.redact.kafka") {
        data.qv(
            ctx,
            "hubble-redact-kafka-apikey",
            "hubble.redact.kafka.apiKey",
        );
    }
    Ok(())
}

/// Static file export (older top-level size settings still win) and dynamic flow logs.
fn export(ctx: &Ctx, data: &mut Data) -> Result<(), RenderError> {
    let added_119 = ctx.plan.has(Change::ConfigKeysAdded119);
    if ctx.on("hubble.export.static.enabled") {
        for (key, field) in [
            ("hubble-export-file-max-size-mb", "fileMaxSizeMb"),
            ("hubble-export-file-max-backups", "fileMaxBackups"),
            ("hubble-export-file-compress", "fileCompress"),
        ] {
            let old = ctx.v(&format!("hubble.export.{field}"));
            let v = if truthy(old) {
                old
            } else {
                ctx.v(&format!("hubble.export.static.{field}"))
            };
            data.q(key, v);
        }
        if added_119 {
            // The chart falls back to the static interval with `default`, after a helper that
            // always prints something, so the static value is never read.
            data.s(
                "hubble-export-aggregation-interval",
                duration(ctx, "hubble.export.aggregationInterval")?,
            );
        }
        data.qv(
            ctx,
            "hubble-export-file-path",
            "hubble.export.static.filePath",
        );
        let mut lists = vec![("hubble-export-fieldmask", "fieldMask")];
        if added_119 {
            lists.push(("hubble-export-fieldaggregate", "fieldAggregate"));
        }
        lists.extend([
            ("hubble-export-allowlist", "allowList"),
            ("hubble-export-denylist", "denyList"),
        ]);
        for (key, field) in lists {
            data.s(
                key,
                join(ctx.v(&format!("hubble.export.static.{field}")), " "),
            );
        }
    }
    if ctx.on("hubble.export.dynamic.enabled") {
        data.s(
            "hubble-flowlogs-config-path",
            "/flowlog-config/flowlogs.yaml",
        );
    }
    Ok(())
}
