//! Fleet checks for Cluster Mesh: across the application folders of one repository, the clusters
//! that mesh with each other must fit together before a change merges (unique `cluster.name` and
//! `cluster.id` in the range `clustermesh.maxConnectedClusters` allows, one
//! `maxConnectedClusters`, peers that exist, pod CIDRs apart, one certificate authority).
//!
//! The checks read merged values only (no render), so they are a pure function of the members:
//! the command `fleet-check` loads the folders of the working tree (`load`), and a front end that
//! reads another git revision builds `FleetMember`s from its own values and calls `check`.

pub mod ca;
pub mod cidr;
pub mod load;
pub mod mesh;
pub mod report;

use std::collections::BTreeMap;

use crate::argocd::folder::MeshSettings;
use cilium_cmp_render::values::Values;
use cilium_cmp_render::versions::CiliumVersion;

pub use load::{find_folders, load_member, load_repo, member_of, FleetError};
pub use mesh::Mesh;

/// One application folder, as the checks see it.
#[derive(Debug, Clone)]
pub struct FleetMember {
    /// The folder relative to the repository root, `/`-separated (as an Application's path).
    pub folder: String,
    /// Its settings file relative to the repository root (where `clusterMesh` is written).
    pub settings_file: String,
    /// The Cilium release the folder renders, read as the render reads it; which values mean what
    /// can depend on it (a peer's `enabled: false` counts from 1.19).
    pub cilium_version: CiliumVersion,
    /// The folder's values merged over the release's defaults, as the plugin merges them; each
    /// user value knows its file and line (`Values::origin`), named relative to the repository.
    pub values: Values,
    /// The settings file's `clusterMesh`: peers managed outside the repository, and whether the
    /// mesh's CA is created beforehand.
    pub mesh: MeshSettings,
}

/// Where a finding points: a value of one folder, at the file and line that set it (or the
/// chart's default when no file does).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    /// The member's folder (`FleetMember::folder`).
    pub folder: String,
    /// Repository-relative file; None when the value is the chart's default.
    pub file: Option<String>,
    /// The 1-based line in `file`, when known.
    pub line: Option<usize>,
    /// The value path (`cluster.id`) or settings key (`clusterMesh.sharedCA`).
    pub path: String,
    /// The value as it is read, for the reader (`2`, `"10.0.0.0/8"`).
    pub value: String,
}

impl Place {
    /// The place of a value path of a member's merged values.
    pub fn of_value(m: &FleetMember, path: &str, value: String) -> Place {
        let origin = m.values.origin(path);
        Place {
            folder: m.folder.clone(),
            file: origin.as_ref().map(|o| o.source.clone()),
            line: origin.and_then(|o| o.line),
            path: path.to_string(),
            value,
        }
    }

    /// The place of item `index` of the list at `path`.
    pub fn of_item(m: &FleetMember, path: &str, index: usize, value: String) -> Place {
        let origin = m.values.origin_of_item(path, index);
        Place {
            folder: m.folder.clone(),
            file: origin.as_ref().map(|o| o.source.clone()),
            line: origin.and_then(|o| o.line),
            path: format!("{path}[{index}]"),
            value,
        }
    }

    /// The place of a key of the member's settings file.
    pub fn of_setting(m: &FleetMember, key: &str, line: Option<usize>, value: &str) -> Place {
        Place {
            folder: m.folder.clone(),
            file: Some(m.settings_file.clone()),
            line,
            path: key.to_string(),
            value: value.to_string(),
        }
    }

    /// `FILE:LINE`, `FILE`, or `the chart's default`.
    pub fn location(&self) -> String {
        match (&self.file, self.line) {
            (Some(f), Some(l)) => format!("{f}:{l}"),
            (Some(f), None) => f.clone(),
            (None, _) => "the chart's default".into(),
        }
    }
}

/// What a finding is about; the names are stable (the JSON report carries them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Check {
    /// A folder names a peer in `clustermesh.config.clusters` that is no folder's `cluster.name`
    /// and that its settings do not list in `clusterMesh.externalPeers`.
    MissingPeer,
    /// Two folders of one mesh set the same `cluster.name`.
    DuplicateClusterName,
    /// Two clusters of one mesh set the same `cluster.id`.
    DuplicateClusterId,
    /// A meshed cluster's `cluster.id` is not a number from 1 to its
    /// `clustermesh.maxConnectedClusters` (unset counts too).
    ClusterIdOutOfRange,
    /// The clusters of one mesh set different `clustermesh.maxConnectedClusters`.
    MaxConnectedClustersDiffer,
    /// Pod CIDRs of different clusters of one mesh share addresses.
    PodCidrOverlap,
    /// A pod CIDR the values set cannot be read as one.
    InvalidPodCidr,
    /// A cluster of a mesh gets no certificate authority shared with the others from its values
    /// or settings (the message says why).
    NoSharedCa,
    /// The clusters of one mesh name more than one certificate authority (CA pairs in values or
    /// cert-manager issuers that differ).
    DifferentCas,
}

impl Check {
    /// Its stable name, which both reports show (`check` in the JSON report).
    pub fn name(self) -> &'static str {
        match self {
            Check::MissingPeer => "missing-peer",
            Check::DuplicateClusterName => "duplicate-cluster-name",
            Check::DuplicateClusterId => "duplicate-cluster-id",
            Check::ClusterIdOutOfRange => "cluster-id-out-of-range",
            Check::MaxConnectedClustersDiffer => "max-connected-clusters-differ",
            Check::PodCidrOverlap => "pod-cidr-overlap",
            Check::InvalidPodCidr => "invalid-pod-cidr",
            Check::NoSharedCa => "no-shared-ca",
            Check::DifferentCas => "different-cas",
        }
    }
}

/// One problem of a mesh, with every place involved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FleetFinding {
    /// Which check found it.
    pub check: Check,
    /// What is wrong and how to fix it, for people; it quotes the repository's names and values
    /// as they are, so a report escapes it.
    pub message: String,
    /// Every value or setting involved, in every folder concerned.
    pub places: Vec<Place>,
}

/// The meshes among the members and everything wrong with them.
#[derive(Debug, Clone)]
pub struct FleetReport {
    /// How many folders were read.
    pub folders: usize,
    /// Each group of meshed folders, in folder order of their first member.
    pub meshes: Vec<Mesh>,
    /// Missing peers first, then each mesh's findings in the order of `meshes`.
    pub findings: Vec<FleetFinding>,
}

/// Runs every check over the members (all folders of one repository: peers are looked up among
/// them).
pub fn check(members: &[FleetMember]) -> Vec<FleetFinding> {
    report(members).findings
}

/// The meshes and the findings.
pub fn report(members: &[FleetMember]) -> FleetReport {
    let facts: Vec<mesh::Facts> = members.iter().map(mesh::Facts::of).collect();
    let (meshes, mut findings) = mesh::meshes(members, &facts);
    for m in &meshes {
        findings.extend(check_mesh(members, &facts, m));
    }
    FleetReport {
        folders: members.len(),
        meshes,
        findings,
    }
}

fn check_mesh(members: &[FleetMember], facts: &[mesh::Facts], m: &Mesh) -> Vec<FleetFinding> {
    let mut out = Vec::new();
    out.extend(ids_in_range(members, facts, m));
    if m.members.len() + m.external.len() < 2 {
        return out;
    }
    // What needs two folders to compare; a peer outside the repository cannot be read.
    out.extend(duplicates(members, facts, m));
    out.extend(max_connected_clusters(members, facts, m));
    out.extend(mesh::pod_cidrs(members, m));
    // A CA of this cluster's own fails with any peer, inside the repository or not.
    out.extend(ca::check(members, facts, m));
    out
}

/// Cilium refuses a cluster ID of 0 or above `maxConnectedClusters` when it connects a mesh
/// (`ValidateClusterID` in cilium/cilium pkg/clustermesh/types/types.go: 0 is reserved, the
/// maximum is `ClusterIDMax`, set from `--max-connected-clusters`, 255 or 511).
fn ids_in_range(members: &[FleetMember], facts: &[mesh::Facts], m: &Mesh) -> Vec<FleetFinding> {
    let mut out = Vec::new();
    for &i in &m.members {
        let f = &facts[i];
        let max = f.max.unwrap_or(255);
        let ok = matches!(f.id, Some(id) if (1..=max).contains(&id));
        if !ok {
            out.push(FleetFinding {
                check: Check::ClusterIdOutOfRange,
                message: format!(
                    "cluster {} meshes with other clusters but its cluster.id is {}; a meshed cluster needs an ID from 1 to {max} (clustermesh.maxConnectedClusters is {max}; 0 is reserved for clusters outside a mesh)",
                    f.name, f.id_text
                ),
                places: vec![
                    Place::of_value(&members[i], "cluster.id", f.id_text.clone()),
                    Place::of_value(
                        &members[i],
                        "clustermesh.maxConnectedClusters",
                        max.to_string(),
                    ),
                ],
            });
        }
    }
    out
}

fn duplicates(members: &[FleetMember], facts: &[mesh::Facts], m: &Mesh) -> Vec<FleetFinding> {
    let mut out = Vec::new();
    let mut by_name: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    let mut by_id: BTreeMap<u64, Vec<usize>> = BTreeMap::new();
    for &i in &m.members {
        by_name.entry(facts[i].name.as_str()).or_default().push(i);
        if let Some(id) = facts[i].id {
            by_id.entry(id).or_default().push(i);
        }
    }
    for (name, list) in by_name.into_iter().filter(|(_, l)| l.len() > 1) {
        out.push(FleetFinding {
            check: Check::DuplicateClusterName,
            message: format!(
                "{} folders of one mesh set cluster.name {name}; each cluster of a mesh needs its own name (peers are told apart by it)",
                list.len()
            ),
            places: list
                .iter()
                .map(|&i| Place::of_value(&members[i], "cluster.name", name.to_string()))
                .collect(),
        });
    }
    for (id, list) in by_id.into_iter().filter(|(_, l)| l.len() > 1) {
        out.push(FleetFinding {
            check: Check::DuplicateClusterId,
            message: format!(
                "{} clusters of one mesh ({}) set cluster.id {id}; each cluster of a mesh needs its own ID (it is part of every security identity the cluster allocates)",
                list.len(),
                list.iter()
                    .map(|&i| facts[i].name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            places: list
                .iter()
                .map(|&i| Place::of_value(&members[i], "cluster.id", id.to_string()))
                .collect(),
        });
    }
    out
}

/// Every cluster of a mesh sets the same `maxConnectedClusters` (the chart's values documentation
/// says so; Cilium refuses a remote whose value differs from an extended local one:
/// `ValidateRemoteConfig` in cilium/cilium pkg/clustermesh/types/option.go).
fn max_connected_clusters(
    members: &[FleetMember],
    facts: &[mesh::Facts],
    m: &Mesh,
) -> Option<FleetFinding> {
    let values: std::collections::BTreeSet<String> = m
        .members
        .iter()
        .map(|&i| facts[i].max_text.clone())
        .collect();
    if values.len() < 2 {
        return None;
    }
    Some(FleetFinding {
        check: Check::MaxConnectedClustersDiffer,
        message: format!(
            "the clusters of one mesh set different clustermesh.maxConnectedClusters ({}); all must set the same, and it cannot be changed on a running cluster",
            values.into_iter().collect::<Vec<_>>().join(", ")
        ),
        places: m
            .members
            .iter()
            .map(|&i| {
                Place::of_value(
                    &members[i],
                    "clustermesh.maxConnectedClusters",
                    facts[i].max_text.clone(),
                )
            })
            .collect(),
    })
}
