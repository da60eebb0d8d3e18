//! Cluster Mesh's list of remote clusters (`clustermesh.config.clusters`), read the way every
//! template that walks it does, and the host aliases that resolve the clusters' names.

use serde_json::{Map, Number, Value};

use crate::changes::Change;
use crate::components::Ctx;
use crate::error::RenderError;
use crate::tmpl::{bare, quote};

pub const CLUSTERS: &str = "clustermesh.config.clusters";

/// The remote clusters the templates iterate (Cluster Mesh's Secrets, users and host aliases,
/// and the agent's and operator's host aliases). Until 1.19 that is the list as given; from 1.19
/// the chart normalises it (its `clustermesh-clusters` helper): a list, or a map keyed by
/// name, minus the entries with `enabled: false`, one per name in name order, and passed
/// through JSON, so numbers come back as floats.
pub fn mesh_clusters(ctx: &Ctx) -> Result<Vec<Value>, RenderError> {
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

/// Each remote cluster given by IP addresses as `<name>.<clustermesh.config.domain>`, one host
/// alias per address, in the order of `mesh_clusters`.
pub fn mesh_host_aliases(ctx: &Ctx) -> Result<Vec<Value>, RenderError> {
    let domain = quote(ctx.v("clustermesh.config.domain"));
    let mut out = Vec::new();
    for c in mesh_clusters(ctx)? {
        let Value::Array(ips) = &c["ips"] else {
            continue;
        };
        let host = format!("{}.{domain}", quote(&c["name"]));
        for ip in ips {
            out.push(tree!({"ip": bare(ip), "hostnames": [&host]}));
        }
    }
    Ok(out)
}
