//! The `cilium-clustermesh` Secret (how agents reach each remote cluster, or the local
//! KVStoreMesh) and the `cilium-kvstoremesh` Secret (how KVStoreMesh reaches the remote clusters).

use serde_json::{Map, Number, Value};

use super::mesh_annotations;
use crate::changes::Change;
use crate::components::common::{common_labels, metadata};
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
    let clusters = clusters(ctx)?;
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

const CLUSTERS: &str = "clustermesh.config.clusters";

/// The remote clusters the templates iterate. Until 1.19 that is the list as given; from 1.19
/// the chart normalises it (its `clustermesh-clusters` helper): a list, or a map keyed by
/// name, minus the entries with `enabled: false`, one per name in name order, and passed
/// through JSON, so numbers come back as floats.
pub(super) fn clusters(ctx: &Ctx) -> Result<Vec<Value>, RenderError> {
    let given = ctx.v(CLUSTERS);
    if !ctx.plan.has(Change::ClustermeshClustersMap) {
        return Ok(match given {
            Value::Array(a) => a.clone(),
            _ => Vec::new(),
        });
    }
    let mut by_name = Map::new();
    match given {
        Value::Object(m) => {
            for (name, cluster) in m {
                if let Some(mut c) = enabled_cluster(ctx, &format!("{name:?}"), cluster)? {
                    c.insert("name".into(), Value::String(name.clone()));
                    by_name.insert(name.clone(), Value::Object(c));
                }
            }
        }
        Value::Array(a) => {
            for (i, cluster) in a.iter().enumerate() {
                let at = format!("number {i}");
                if let Some(c) = enabled_cluster(ctx, &at, cluster)? {
                    let Some(Value::String(name)) = c.get("name") else {
                        return Err(ctx.invalid(
                            CLUSTERS,
                            format!("cluster {at} needs a name that is a string (the chart keys the clusters by name; Helm fails too)"),
                        ));
                    };
                    by_name.insert(name.clone(), Value::Object(c));
                }
            }
        }
        other => {
            return Err(ctx.invalid(
                CLUSTERS,
                format!(
                    "must be a list or a map of clusters, not {} (the chart fails too)",
                    go_kind(other)
                ),
            ))
        }
    }
    // serde_json's map is sorted by key, as Go ranges over a dict.
    Ok(by_name.into_values().map(through_json).collect())
}

/// One cluster entry without its `enabled` key, or None when it is switched off; `at` names
/// the entry in errors. The chart compares `enabled` with false, which Go refuses for anything
/// but a bool or nothing.
fn enabled_cluster(
    ctx: &Ctx,
    at: &str,
    cluster: &Value,
) -> Result<Option<Map<String, Value>>, RenderError> {
    let Value::Object(c) = cluster else {
        return Err(ctx.invalid(
            CLUSTERS,
            format!("cluster {at} must be a map describing the cluster (Helm fails too)"),
        ));
    };
    match c.get("enabled") {
        Some(Value::Bool(false)) => Ok(None),
        None | Some(Value::Null | Value::Bool(true)) => {
            let mut c = c.clone();
            c.remove("enabled");
            Ok(Some(c))
        }
        Some(_) => Err(ctx.invalid(
            CLUSTERS,
            format!("cluster {at}: enabled must be true or false (the chart compares it with false; Helm fails too)"),
        )),
    }
}

/// Sprig's `kindOf`, as the chart's error names it.
fn go_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "invalid",
        Value::Bool(_) => "bool",
        Value::Number(_) => "float64",
        Value::String(_) => "string",
        Value::Array(_) => "slice",
        Value::Object(_) => "map",
    }
}

/// A value after `toJson | fromJson`: every number becomes a float.
fn through_json(v: Value) -> Value {
    match v {
        Value::Number(n) => n
            .as_f64()
            .and_then(Number::from_f64)
            .map_or(Value::Null, Value::Number),
        Value::Array(a) => Value::Array(a.into_iter().map(through_json).collect()),
        Value::Object(m) => {
            Value::Object(m.into_iter().map(|(k, v)| (k, through_json(v))).collect())
        }
        other => other,
    }
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
    crate::components::extras::toyaml::to_yaml(v)
}
