//! The `cilium-clustermesh` Secret (how agents reach each remote cluster, or the local
//! KVStoreMesh) and the `cilium-kvstoremesh` Secret (how KVStoreMesh reaches the remote clusters).

use serde_json::{Map, Value};

use super::mesh_annotations;
use crate::changes::Change;
use crate::components::common::{common_labels, mesh_clusters, metadata, CLUSTERS};
use crate::components::Ctx;
use crate::error::RenderError;
use crate::tmpl::{b64enc, bare, print, quote, truthy};

pub(super) fn render(ctx: &Ctx) -> Result<Vec<Value>, RenderError> {
    if !ctx.on("clustermesh.config.enabled") {
        return Ok(Vec::new());
    }
    let ns = ctx.namespace();
    let kvstoremesh =
        ctx.on("clustermesh.useAPIServer") && ctx.on("clustermesh.apiserver.kvstoremesh.enabled");
    // With KVStoreMesh, agents talk to the local apiserver instead of the remote clusters.
    let local = if kvstoremesh {
        format!("https://clustermesh-apiserver.{ns}.svc:2379")
    } else {
        String::new()
    };
    let local_etcd = kvstoremesh
        && ctx
            .v("clustermesh.apiserver.kvstoremesh.kvstoreMode")
            .as_str()
            == Some("external");
    let clusters = mesh_clusters(ctx)?;
    let mut out = Vec::new();
    out.push(secret(
        ctx,
        "cilium-clustermesh",
        &ns,
        &clusters,
        &local,
        local_etcd,
    )?);
    if kvstoremesh {
        out.push(secret(
            ctx,
            "cilium-kvstoremesh",
            &ns,
            &clusters,
            "",
            false,
        )?);
    }
    Ok(out)
}

fn secret(
    ctx: &Ctx,
    name: &str,
    ns: &str,
    clusters: &[Value],
    local: &str,
    local_etcd: bool,
) -> Result<Value, RenderError> {
    let mut data = Map::new();
    for (i, c) in clusters.iter().enumerate() {
        let cname = quote(&c["name"]);
        let cfg = etcd_config(ctx, i, c, local, local_etcd)?;
        data.insert(cname.clone(), Value::String(b64enc(cfg.as_bytes())));
        let tls = &c["tls"];
        if local.is_empty() && truthy(&tls["cert"]) && truthy(&tls["key"]) {
            if truthy(&tls["caCert"]) {
                data.insert(format!("{cname}.etcd-client-ca.crt"), bare(&tls["caCert"]));
            }
            data.insert(format!("{cname}.etcd-client.key"), bare(&tls["key"]));
            data.insert(format!("{cname}.etcd-client.crt"), bare(&tls["cert"]));
        }
    }
    let mut obj = tree!({
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": metadata(name, Some(ns), common_labels(ctx), mesh_annotations(ctx)),
    });
    if !data.is_empty() {
        if let Value::Object(m) = &mut obj {
            m.insert("data".into(), Value::Object(data));
        }
    }
    Ok(obj)
}

/// What a nil prints as inside an included template, before Helm blanks it in the output.
fn raw(v: &Value) -> String {
    if v.is_null() {
        "<no value>".into()
    } else {
        print(v)
    }
}

/// The etcd client configuration for one remote cluster (the chart's etcd-cfg helper).
fn etcd_config(
    ctx: &Ctx,
    index: usize,
    c: &Value,
    local: &str,
    local_etcd: bool,
) -> Result<String, RenderError> {
    let tls = &c["tls"];
    let own_cert = truthy(&tls["cert"]) && truthy(&tls["key"]);
    let prefix = if !local.is_empty() {
        "local-".to_string()
    } else if own_cert {
        format!("{}.", sprintf_s(&c["name"]))
    } else {
        "common-".to_string()
    };
    let mut t = String::from("endpoints:");
    if local_etcd {
        t.push('\n');
        t.push_str(&endpoints_yaml(ctx.v("etcd.endpoints")));
    } else if !local.is_empty() {
        t.push_str(&format!("\n- {local}"));
    } else if truthy(&c["ips"]) {
        t.push_str(&format!(
            "\n- https://{}.{}:{}",
            raw(&c["name"]),
            raw(ctx.v("clustermesh.config.domain")),
            raw(&c["port"])
        ));
    } else {
        let address = &c["address"];
        if address.is_null() || address.as_str() == Some("") {
            const WHY: &str =
                "the chart fails with \"missing clustermesh.apiserver.config.clusters.address\"";
            // From 1.19 the clusters are filtered and sorted, so the name finds the entry.
            return Err(if ctx.plan.has(Change::ClustermeshClustersMap) {
                ctx.invalid(
                    CLUSTERS,
                    format!(
                        "cluster {:?} needs an address, or ips ({WHY})",
                        print(&c["name"])
                    ),
                )
            } else {
                ctx.invalid(
                    &format!("{CLUSTERS}.{index}.address"),
                    format!("is required for a cluster without ips ({WHY})"),
                )
            });
        }
        t.push_str(&format!(
            "\n- https://{}:{}",
            print(address),
            raw(&c["port"])
        ));
    }
    if local_etcd {
        if ctx.on("etcd.ssl") {
            t.push_str("\ntrusted-ca-file: '/var/lib/etcd-secrets/etcd-client-ca.crt'");
            t.push_str("\nkey-file: '/var/lib/etcd-secrets/etcd-client.key'");
            t.push_str("\ncert-file: '/var/lib/etcd-secrets/etcd-client.crt'");
        }
    } else {
        // A custom CA only counts together with a custom cert and key (else prefix is common-).
        let ca_prefix = if !local.is_empty() || truthy(&tls["caCert"]) {
            prefix.as_str()
        } else {
            "common-"
        };
        t.push_str(&format!(
            "\ntrusted-ca-file: /var/lib/cilium/clustermesh/{ca_prefix}etcd-client-ca.crt"
        ));
        t.push_str(&format!(
            "\nkey-file: /var/lib/cilium/clustermesh/{prefix}etcd-client.key"
        ));
        t.push_str(&format!(
            "\ncert-file: /var/lib/cilium/clustermesh/{prefix}etcd-client.crt"
        ));
    }
    // From 1.20 the agents and KVStoreMesh resolve a cluster given by IP themselves.
    if ctx.plan.has(Change::ClustermeshConfigHostAliases)
        && !local_etcd
        && local.is_empty()
        && truthy(&c["ips"])
    {
        t.push_str(&format!(
            "\ncilium-host-aliases:\n- hostname: {}.{}\n  ips: \n{}",
            raw(&c["name"]),
            raw(ctx.v("clustermesh.config.domain")),
            indent(&endpoints_yaml(&c["ips"]), 4)
        ));
    }
    Ok(t)
}

/// Sprig's `indent`: every line, empty ones included, prefixed by `n` spaces.
fn indent(text: &str, n: usize) -> String {
    let pad = " ".repeat(n);
    text.split('\n')
        .map(|l| format!("{pad}{l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Go's `printf "%s"` of a value: strings as they are, anything else flagged as Go does.
fn sprintf_s(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "%!s(<nil>)".into(),
        Value::Bool(b) => format!("%!s(bool={b})"),
        Value::Number(_) => format!("%!s(float64={})", print(v)),
        other => print(other),
    }
}

/// Helm's `toYaml` of a value (the external etcd endpoints, a cluster's IPs).
fn endpoints_yaml(v: &Value) -> String {
    crate::yaml::go_emit::to_yaml(v)
}
