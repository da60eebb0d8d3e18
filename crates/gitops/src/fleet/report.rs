//! The fleet report for people (text) and scripts (JSON, versioned).

use serde_json::{json, Value};

use super::ca::CaSetup;
use super::mesh::Facts;
use super::{FleetMember, FleetReport, Place};
use cilium_cmp_yaml::escape;

/// The JSON report's version: fields are only added within one version.
pub const JSON_VERSION: u32 = 1;

/// A member's name, ID and CA setup, as the mesh summary shows them.
fn cluster_line(m: &FleetMember) -> (String, String, String) {
    let f = Facts::of(m);
    let ca = CaSetup::of(m, &f).label();
    (f.name, f.id_text, ca)
}

/// `cluster.id` for scripts: the number the chart reads (`int`), the text as written when it is
/// none (a finding says why), null when unset.
fn id_json(m: &FleetMember) -> Value {
    let f = Facts::of(m);
    match f.id {
        Some(n) => Value::from(n),
        None if f.id_text.is_empty() => Value::Null,
        None => Value::String(f.id_text),
    }
}

/// The report as text: each mesh and its clusters, then each finding with its places. Folder
/// names, cluster names, values and the findings' messages (which quote them) are the
/// repository's: each goes through the one text escaper, and the report through `escape::lines`
/// last (a cluster line starts with the cluster's name).
pub fn text(members: &[FleetMember], r: &FleetReport) -> String {
    let mut out = String::new();
    let meshed: usize = r.meshes.iter().map(|m| m.members.len()).sum();
    if r.meshes.is_empty() {
        // Not "0 meshes of 0 clusters": say what that means.
        out.push_str(&format!(
            "{} application folder{} read; no Cluster Mesh to report\n",
            r.folders,
            plural(r.folders),
        ));
    } else {
        out.push_str(&format!(
            "{} application folder{} read; {} mesh{} of {meshed} cluster{}\n",
            r.folders,
            plural(r.folders),
            r.meshes.len(),
            if r.meshes.len() == 1 { "" } else { "es" },
            plural(meshed)
        ));
    }
    for (n, mesh) in r.meshes.iter().enumerate() {
        out.push_str(&format!("mesh {}:\n", n + 1));
        for &i in &mesh.members {
            let (name, id, ca) = cluster_line(&members[i]);
            out.push_str(&format!(
                "  {} (cluster.id {}, CA: {})  {}\n",
                escape::text(&name),
                escape::text(&id),
                escape::message(&ca),
                escape::text(&members[i].folder)
            ));
        }
        for e in &mesh.external {
            out.push_str(&format!("  {} (outside the repository)\n", escape::text(e)));
        }
    }
    if r.findings.is_empty() {
        out.push_str("no findings\n");
        return escape::lines(&out);
    }
    out.push_str(&format!(
        "{} finding{}:\n",
        r.findings.len(),
        plural(r.findings.len())
    ));
    for f in &r.findings {
        out.push_str(&format!(
            "\n{}: {}\n",
            f.check.name(),
            escape::message(&f.message)
        ));
        for p in &f.places {
            out.push_str(&format!(
                "  {}: {} = {} (folder {})\n",
                escape::text(&p.location()),
                escape::text(&p.path),
                escape::message(&p.value),
                escape::text(&p.folder)
            ));
        }
    }
    escape::lines(&out)
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

fn place_json(p: &Place) -> Value {
    json!({
        "folder": p.folder,
        "file": p.file,
        "line": p.line,
        "path": p.path,
        "value": p.value,
    })
}

/// The report as JSON (one document, newline-terminated).
pub fn json(members: &[FleetMember], r: &FleetReport) -> String {
    let meshes: Vec<Value> = r
        .meshes
        .iter()
        .map(|mesh| {
            json!({
                "clusters": mesh.members.iter().map(|&i| {
                    let (name, _, ca) = cluster_line(&members[i]);
                    json!({"folder": members[i].folder, "name": name, "id": id_json(&members[i]), "ca": ca})
                }).collect::<Vec<_>>(),
                "external": mesh.external,
            })
        })
        .collect();
    let findings: Vec<Value> = r
        .findings
        .iter()
        .map(|f| {
            json!({
                "check": f.check.name(),
                "message": f.message,
                "places": f.places.iter().map(place_json).collect::<Vec<_>>(),
            })
        })
        .collect();
    let doc = json!({
        "version": JSON_VERSION,
        "folders": r.folders,
        "meshes": meshes,
        "findings": findings,
    });
    format!(
        "{}\n",
        escape::json(&serde_json::to_string_pretty(&doc).unwrap_or_default())
    )
}
