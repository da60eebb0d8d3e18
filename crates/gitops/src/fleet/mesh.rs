//! Which clusters mesh with which, read from each folder's values as the chart reads them, and
//! the pod CIDRs each one sets.
//!
//! Two ways to mesh:
//! - `clustermesh.config.enabled` with peers in `clustermesh.config.clusters`: the chart writes
//!   one entry per peer into the `cilium-clustermesh` Secret (templates/clustermesh-config).
//!   From 1.19 the peers may be a map keyed by name, and an entry with `enabled: false` is left
//!   out; 1.18 takes a list and writes every entry. An entry named like the cluster itself is
//!   skipped by Cilium ("Ignoring configuration for own cluster", cilium/cilium
//!   pkg/clustermesh/common/clustermesh.go), so one shared list can name every cluster.
//! - `clustermesh.useAPIServer` without peers in the values: the connections are made outside
//!   the chart (`cilium clustermesh connect`), so such a folder is taken to mesh with every
//!   folder of the repository that runs a clustermesh-apiserver.
//!
//! A mesh is a connected group: a cluster's peers' peers share its mesh, and the checks hold
//! across the whole group (a cluster that two others both reach must tell them apart). A peer
//! outside the repository links the clusters that name it in the same way.

use std::collections::BTreeMap;

use serde_json::Value;

use super::cidr::Cidr;
use super::{Check, FleetFinding, FleetMember, Place};

/// A group of meshed folders (indexes into the members, in folder order) and the peers they name
/// that live outside the repository.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mesh {
    /// The meshed folders, as indexes into the members the report was made from.
    pub members: Vec<usize>,
    /// Peer names declared outside the repository (`clusterMesh.externalPeers`), sorted.
    pub external: Vec<String>,
}

/// What the checks read of one folder's values.
#[derive(Debug, Clone)]
pub(crate) struct Facts {
    pub name: String,
    /// `cluster.id` as the chart's `int` reads it; None when it is no whole number.
    pub id: Option<u64>,
    /// `cluster.id` as written, for messages.
    pub id_text: String,
    /// `clustermesh.maxConnectedClusters`, read as `id` is.
    pub max: Option<u64>,
    /// `clustermesh.maxConnectedClusters` as written.
    pub max_text: String,
    pub use_api_server: bool,
    /// Peers the values name (the cluster's own name left out), with where each is written.
    pub peers: Vec<(String, Place)>,
    /// Whether every named peer's entry carries its own client certificate, key and the peer's CA
    /// (`tls.cert`, `tls.key`, `tls.caCert`: the chart's deprecated per-peer certificates; without
    /// `caCert` the chart points the connection at the cluster's own CA file).
    pub peers_bring_certificates: bool,
}

impl Facts {
    pub(crate) fn of(m: &FleetMember) -> Facts {
        let v = &m.values;
        let name = scalar_text(v.get("cluster.name"));
        let id = v.get("cluster.id");
        let max = v.get("clustermesh.maxConnectedClusters");
        let mut peers = Vec::new();
        let mut with_certificates = Vec::new();
        let has_certificate = |entry: &Value| {
            ["cert", "key", "caCert"].iter().all(|k| {
                entry
                    .get("tls")
                    .and_then(|t| t.get(*k))
                    .is_some_and(cilium_cmp_render::tmpl::truthy)
            })
        };
        if v.on("clustermesh.config.enabled") {
            let path = "clustermesh.config.clusters";
            // The `enabled: false` switch and the map form arrived together in 1.19.0.
            let honours_enabled = (m.cilium_version.major, m.cilium_version.minor) >= (1, 19);
            let on = |entry: &Value| {
                !(honours_enabled && entry.get("enabled") == Some(&Value::Bool(false)))
            };
            match v.get(path) {
                Value::Array(items) => {
                    for (i, item) in items.iter().enumerate() {
                        let peer = scalar_text(item.get("name").unwrap_or(&Value::Null));
                        if on(item) && !peer.is_empty() {
                            let place = Place::of_item(m, path, i, peer.clone());
                            with_certificates.push((peer.clone(), has_certificate(item)));
                            peers.push((peer, place));
                        }
                    }
                }
                Value::Object(map) => {
                    for (peer, entry) in map {
                        if on(entry) {
                            let place = Place::of_value(m, &format!("{path}.{peer}"), peer.clone());
                            with_certificates.push((peer.clone(), has_certificate(entry)));
                            peers.push((peer.clone(), place));
                        }
                    }
                }
                _ => {}
            }
        }
        peers.retain(|(p, _)| *p != name);
        with_certificates.retain(|(p, _)| *p != name);
        Facts {
            peers_bring_certificates: !with_certificates.is_empty()
                && with_certificates.iter().all(|(_, c)| *c),
            name,
            id: integer(id),
            id_text: scalar_text(id),
            max: integer(max),
            max_text: scalar_text(max),
            use_api_server: v.on("clustermesh.useAPIServer"),
            peers,
        }
    }

    /// Whether the folder takes part in a mesh at all.
    pub fn meshed(&self) -> bool {
        self.use_api_server || !self.peers.is_empty()
    }
}

/// A value as a template prints it (strings bare).
fn scalar_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => cilium_cmp_render::tmpl::quote(other),
    }
}

/// A whole number, as the chart's `int` reads a number or a numeric string.
fn integer(v: &Value) -> Option<u64> {
    match v {
        Value::Number(n) => n.as_u64().or_else(|| {
            n.as_f64()
                .filter(|f| f.fract() == 0.0 && *f >= 0.0 && *f < 1e15)
                .map(|f| f as u64)
        }),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// Groups the meshed members; reports peers that are neither a folder nor declared outside.
pub(crate) fn meshes(members: &[FleetMember], facts: &[Facts]) -> (Vec<Mesh>, Vec<FleetFinding>) {
    // Peers may be named by a folder that does not itself mesh (its values name none and run no
    // apiserver): still a folder of the repository, so not missing; it joins the mesh.
    let mut by_any_name: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, f) in facts.iter().enumerate() {
        by_any_name.entry(f.name.as_str()).or_default().push(i);
    }
    let mut parent: Vec<usize> = (0..members.len()).collect();
    let mut in_mesh = vec![false; members.len()];
    let mut external: BTreeMap<usize, Vec<String>> = BTreeMap::new();
    let mut outside: BTreeMap<String, usize> = BTreeMap::new();
    let mut findings = Vec::new();
    let servers: Vec<usize> = (0..facts.len())
        .filter(|&i| facts[i].use_api_server)
        .collect();
    let mut implicit = false;
    for (i, f) in facts.iter().enumerate() {
        if !f.meshed() {
            continue;
        }
        in_mesh[i] = true;
        if f.peers.is_empty() {
            // Meshed with every server: linking it to the first links it to all, once the
            // servers are linked together below.
            if let Some(&first) = servers.first() {
                union(&mut parent, i, first);
                implicit = true;
            }
            continue;
        }
        for (peer, place) in &f.peers {
            if let Some(found) = by_any_name.get(peer.as_str()) {
                for &j in found {
                    in_mesh[j] = true;
                    union(&mut parent, i, j);
                }
            } else if members[i]
                .mesh
                .external_peers
                .iter()
                .any(|(e, _)| e == peer)
            {
                // A peer outside the repository links the clusters that name it: it sees them
                // all, so they share its mesh.
                let next = parent.len();
                let node = *outside.entry(peer.clone()).or_insert(next);
                if node == next {
                    parent.push(next);
                }
                union(&mut parent, i, node);
                external.entry(i).or_default().push(peer.clone());
            } else {
                findings.push(FleetFinding {
                    check: Check::MissingPeer,
                    message: format!(
                        "{} names the peer {peer} in clustermesh.config.clusters, but no application folder of the repository sets cluster.name {peer}; add the peer's folder, fix the name, or, when the peer is managed outside this repository, list it in {} as clusterMesh: {{externalPeers: [{peer}]}}",
                        members[i].folder, members[i].settings_file
                    ),
                    places: vec![place.clone()],
                });
            }
        }
    }
    if implicit {
        for w in servers.windows(2) {
            union(&mut parent, w[0], w[1]);
        }
    }
    let mut groups: BTreeMap<usize, Mesh> = BTreeMap::new();
    for i in (0..members.len()).filter(|&i| in_mesh[i]) {
        let root = find(&mut parent, i);
        let g = groups.entry(root).or_insert_with(|| Mesh {
            members: Vec::new(),
            external: Vec::new(),
        });
        g.members.push(i);
        g.external.extend(external.remove(&i).unwrap_or_default());
    }
    let mut meshes: Vec<Mesh> = groups.into_values().collect();
    for m in &mut meshes {
        m.members
            .sort_by(|a, b| members[*a].folder.cmp(&members[*b].folder));
        m.external.sort();
        m.external.dedup();
    }
    meshes.sort_by(|a, b| {
        members[a.members[0]]
            .folder
            .cmp(&members[b.members[0]].folder)
    });
    (meshes, findings)
}

fn find(parent: &mut [usize], mut i: usize) -> usize {
    while parent[i] != i {
        parent[i] = parent[parent[i]];
        i = parent[i];
    }
    i
}

fn union(parent: &mut [usize], a: usize, b: usize) {
    let (ra, rb) = (find(parent, a), find(parent, b));
    if ra != rb {
        parent[ra.max(rb)] = ra.min(rb);
    }
}

/// The pod CIDRs a folder's values decide, with where each is written. Only the IPAM modes whose
/// pools the values hold: `cluster-pool` (`ipam.operator.clusterPoolIPv4PodCIDRList` and the IPv6
/// list, for each enabled family) and `multi-pool` (`ipam.operator.autoCreateCiliumPodIPPools`).
/// Other modes take pod CIDRs from Kubernetes or the cloud, which the repository does not hold.
/// `ipv4NativeRoutingCIDR` is not one: in a mesh it is meant to span every cluster's pods.
fn pod_cidr_texts(m: &FleetMember) -> Vec<(String, Place)> {
    let v = &m.values;
    let mut out = Vec::new();
    let mut list = |path: &str| match v.get(path) {
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                let text = scalar_text(item);
                out.push((text.clone(), Place::of_item(m, path, i, text)));
            }
        }
        Value::String(s) if !s.trim().is_empty() => {
            out.push((s.clone(), Place::of_value(m, path, s.clone())));
        }
        _ => {}
    };
    match v.text("ipam.mode").as_str() {
        "cluster-pool" => {
            if v.on("ipv4.enabled") {
                list("ipam.operator.clusterPoolIPv4PodCIDRList");
            }
            if v.on("ipv6.enabled") {
                list("ipam.operator.clusterPoolIPv6PodCIDRList");
            }
        }
        "multi-pool" => {
            if let Value::Object(pools) = v.get("ipam.operator.autoCreateCiliumPodIPPools") {
                let names: Vec<String> = pools.keys().cloned().collect();
                for pool in names {
                    for family in ["ipv4", "ipv6"] {
                        list(&format!(
                            "ipam.operator.autoCreateCiliumPodIPPools.{pool}.{family}.cidrs"
                        ));
                    }
                }
            }
        }
        _ => {}
    }
    out
}

/// Pod CIDRs of different clusters of a mesh that share addresses, and pod CIDRs that are no
/// CIDR. The prefixes of all members are swept in address order: each run of prefixes that
/// overlap one another and belong to more than one cluster is one finding (so the cost stays
/// n log n, and 500 clusters left on the chart's default give one finding, not 124,750).
pub fn pod_cidrs(members: &[FleetMember], m: &Mesh) -> Vec<FleetFinding> {
    let mut out = Vec::new();
    let mut all: Vec<(Cidr, usize, Place)> = Vec::new();
    for &i in &m.members {
        for (text, place) in pod_cidr_texts(&members[i]) {
            match Cidr::parse(&text) {
                Some(c) => all.push((c, i, place)),
                None => out.push(FleetFinding {
                    check: Check::InvalidPodCidr,
                    message: format!(
                        "{} is not a CIDR such as 10.1.0.0/16 or fd00:1::/104; the mesh cannot be checked for overlapping pod CIDRs",
                        cilium_cmp_yaml::limits::quoted(&text)
                    ),
                    places: vec![place],
                }),
            }
        }
    }
    all.sort_by_key(|(c, i, _)| (c.range(), members[*i].folder.clone()));
    let mut run: Vec<(Cidr, usize, Place)> = Vec::new();
    let mut run_end = None;
    let flush = |run: &mut Vec<(Cidr, usize, Place)>, out: &mut Vec<FleetFinding>| {
        let owners: std::collections::BTreeSet<usize> = run.iter().map(|(_, i, _)| *i).collect();
        if owners.len() > 1 {
            out.push(FleetFinding {
                check: Check::PodCidrOverlap,
                message: format!(
                    "pod CIDRs of {} clusters of one mesh overlap ({}); the clusters of a mesh need pod CIDRs apart, or a pod address means two pods",
                    owners.len(),
                    run.iter()
                        .map(|(_, i, p)| format!("{} in {}", p.value, members[*i].folder))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                places: run.iter().map(|(_, _, p)| p.clone()).collect(),
            });
        }
        run.clear();
    };
    for item in all {
        let (start, end) = item.0.range();
        match run_end {
            Some((v6, e)) if v6 == start.0 && start.1 <= e => {
                run_end = Some((v6, e.max(end.1)));
            }
            _ => {
                flush(&mut run, &mut out);
                run_end = Some(end);
            }
        }
        run.push(item);
    }
    flush(&mut run, &mut out);
    out
}
