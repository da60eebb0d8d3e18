//! One certificate authority for a mesh. A clustermesh-apiserver accepts only client
//! certificates signed by the CA it trusts, so the clusters of a mesh need certificates from one
//! CA; with the chart's defaults each cluster mints its own and peers refuse each other
//! (cilium/cilium#22872, #32076).
//!
//! What the chart does, per `clustermesh.apiserver.tls.auto.method` (chart templates
//! `clustermesh-apiserver/tls-*` and `cilium-ca-secret.yaml`):
//! - `cronJob`: certgen signs with the `cilium-ca` Secret of the release namespace, reusing it
//!   when it exists (`--ca-reuse-secret --ca-secret-name=cilium-ca`) and creating a new CA when it
//!   does not (`--ca-generate`, unless `certgen.generateCA: false`). The chart renders that Secret
//!   itself from `tls.ca.cert` and `tls.ca.key` when both are set: the same pair in every
//!   member (a values file they share) is one CA. A `cilium-ca` Secret created in every cluster
//!   beforehand from one CA works too; the values cannot show it, so the folder declares it
//!   (`clusterMesh: {sharedCA: preCreated}` in `cilium-cmp.yaml`).
//! - `certmanager`: cert-manager issues the certificates from
//!   `clustermesh.apiserver.tls.auto.certManagerIssuerRef`: the same issuer in every member (and,
//!   outside what the repository shows, that issuer backed by the same CA in every cluster).
//! - `helm`: the chart generates a CA on every render; cilium-cmp renders the chart's default
//!   `helm` as `cronJob` (see `determinism::apply_defaults`) and refuses an explicit one.
//! - `auto.enabled: false`, or `kvstoremesh.kvstoreMode: external` (the chart's certificate
//!   templates need the internal kvstore): the certificates are created outside the chart;
//!   declared as above.

use std::collections::BTreeMap;

use serde_json::Value;
use sha2::{Digest, Sha256};

use super::mesh::{Facts, Mesh};
use super::{Check, FleetFinding, FleetMember, Place};

const METHOD: &str = "clustermesh.apiserver.tls.auto.method";

/// How one member's Cluster Mesh certificates get their CA.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum CaSetup {
    /// `clusterMesh.sharedCA: preCreated`: the folder says the mesh's CA reaches the cluster
    /// outside the chart.
    Declared(Place),
    /// Every peer entry of `clustermesh.config.clusters` carries its own client certificate
    /// (`tls.cert`, `tls.key`, and `tls.caCert`): connections need no shared CA (deprecated
    /// by the chart in favour of one).
    PerPeer(Place),
    /// `tls.ca.cert` and `tls.ca.key` from values; the key is the pair's sha256.
    ValuesCa { digest: String, place: Place },
    /// cert-manager with this issuer reference (canonical JSON), shown as `KIND/NAME`.
    CertManager {
        issuer: String,
        shown: String,
        place: Place,
    },
    /// No shared CA: why, and the value that decides it.
    Missing { reason: String, place: Place },
}

impl CaSetup {
    pub(crate) fn of(m: &FleetMember, f: &Facts) -> CaSetup {
        let v = &m.values;
        if let Some(line) = m.mesh.shared_ca_pre_created {
            return CaSetup::Declared(Place::of_setting(
                m,
                "clusterMesh.sharedCA",
                line,
                crate::argocd::folder::SHARED_CA_PRE_CREATED,
            ));
        }
        if f.peers_bring_certificates {
            let (_, place) = &f.peers[0];
            return CaSetup::PerPeer(place.clone());
        }
        let declare = "when it holds the mesh's one CA, say so with `clusterMesh: {sharedCA: preCreated}` in the folder's cilium-cmp.yaml";
        if !f.use_api_server {
            return CaSetup::Missing {
                reason: format!(
                    "clustermesh.useAPIServer is off, so the chart makes no Cluster Mesh certificates for this cluster; they come from outside the chart: {declare}"
                ),
                place: Place::of_value(m, "clustermesh.useAPIServer", "false".into()),
            };
        }
        // The chart makes the apiserver's certificates only with the kvstore inside it.
        let kvstore_mode = "clustermesh.apiserver.kvstoremesh.kvstoreMode";
        if v.text(kvstore_mode) == "external" {
            return CaSetup::Missing {
                reason: format!(
                    "{kvstore_mode} is external, so the chart makes no clustermesh-apiserver certificates; they come from outside the chart: {declare}"
                ),
                place: Place::of_value(m, kvstore_mode, "external".into()),
            };
        }
        if !v.on("clustermesh.apiserver.tls.auto.enabled") {
            return CaSetup::Missing {
                reason: format!(
                    "clustermesh.apiserver.tls.auto.enabled is false, so the certificates are created outside the chart: {declare}"
                ),
                place: Place::of_value(
                    m,
                    "clustermesh.apiserver.tls.auto.enabled",
                    "false".into(),
                ),
            };
        }
        let written = v.text(METHOD);
        let method = if written == "helm" && !v.user_set(METHOD) {
            "cronJob".to_string()
        } else {
            written
        };
        let method_place = || Place::of_value(m, METHOD, method.clone());
        let ca_cert = v.text("tls.ca.cert");
        let ca_key = v.text("tls.ca.key");
        match method.as_str() {
            "certmanager" => {
                let path = "clustermesh.apiserver.tls.auto.certManagerIssuerRef";
                let issuer = v.get(path);
                let text = serde_json::to_string(issuer).unwrap_or_default();
                let place = Place::of_value(m, path, text.clone());
                match issuer {
                    Value::Object(map) if !map.is_empty() => CaSetup::CertManager {
                        issuer: text,
                        // cert-manager's default kind of an issuerRef is Issuer.
                        shown: format!(
                            "{}/{}",
                            map.get("kind").and_then(Value::as_str).unwrap_or("Issuer"),
                            map.get("name").and_then(Value::as_str).unwrap_or("")
                        ),
                        place,
                    },
                    _ => CaSetup::Missing {
                        reason: "clustermesh.apiserver.tls.auto.method is certmanager but certManagerIssuerRef names no issuer".into(),
                        place,
                    },
                }
            }
            "cronJob" | "helm" if !ca_cert.is_empty() && !ca_key.is_empty() => {
                let digest = hex(&Sha256::digest(format!("{ca_cert}\n{ca_key}")));
                let short = format!("CA sha256:{}", &digest[..12]);
                CaSetup::ValuesCa {
                    digest,
                    place: Place::of_value(m, "tls.ca.cert", short),
                }
            }
            "cronJob" if !v.on("certgen.generateCA") => CaSetup::Missing {
                reason: format!(
                    "certgen.generateCA is false, so certgen signs with a cilium-ca Secret created beforehand: {declare}"
                ),
                place: Place::of_value(m, "certgen.generateCA", "false".into()),
            },
            "cronJob" => CaSetup::Missing {
                reason: "certgen (clustermesh.apiserver.tls.auto.method cronJob) creates a CA of its own in every cluster where no cilium-ca Secret exists, so peers refuse each other's certificates (cilium/cilium#22872, #32076)".into(),
                place: method_place(),
            },
            "helm" => CaSetup::Missing {
                reason: "the helm method generates a new CA on every render (cilium-cmp refuses it)".into(),
                place: method_place(),
            },
            other => CaSetup::Missing {
                reason: format!(
                    "{} is not a method the chart knows (cronJob, certmanager, helm)",
                    cilium_cmp_yaml::limits::quoted(other)
                ),
                place: method_place(),
            },
        }
    }
}

impl CaSetup {
    /// A short label for reports: where the member's CA comes from.
    pub(crate) fn label(&self) -> String {
        match self {
            CaSetup::Declared(_) => "cilium-ca created beforehand (declared)".into(),
            CaSetup::PerPeer(_) => "certificates per peer in clustermesh.config.clusters".into(),
            CaSetup::ValuesCa { place, .. } => format!("tls.ca in values ({})", place.value),
            CaSetup::CertManager { shown, .. } => format!("cert-manager {shown}"),
            CaSetup::Missing { .. } => "none shared".into(),
        }
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// What every mesh must have: the setups that work, named in each finding.
const SHARED_CA_SETUPS: &str = "give the mesh one CA: tls.ca.cert and tls.ca.key in a values file every member uses (certgen then signs with it), method certmanager with one issuer backed by the same CA in every cluster, or a cilium-ca Secret created beforehand from one CA and declared with `clusterMesh: {sharedCA: preCreated}` in the folder's cilium-cmp.yaml";

/// Members without a shared CA, and members whose CAs differ.
pub(crate) fn check(members: &[FleetMember], facts: &[Facts], m: &Mesh) -> Vec<FleetFinding> {
    let mut out = Vec::new();
    // Kind and identity of each non-declared setup that names a CA, with its places.
    let mut named: BTreeMap<String, (String, Vec<Place>)> = BTreeMap::new();
    // Members without one, grouped by the reason (usually one shared values file decides it).
    let mut missing: BTreeMap<String, (Vec<&str>, Vec<Place>)> = BTreeMap::new();
    for &i in &m.members {
        match CaSetup::of(&members[i], &facts[i]) {
            CaSetup::Declared(_) | CaSetup::PerPeer(_) => {}
            CaSetup::ValuesCa { digest, place } => named
                .entry(format!("values {digest}"))
                .or_insert_with(|| (format!("the values' {}", place.value), Vec::new()))
                .1
                .push(place),
            CaSetup::CertManager {
                issuer,
                shown,
                place,
            } => named
                .entry(format!("cert-manager {issuer}"))
                .or_insert_with(|| (format!("cert-manager issuer {shown}"), Vec::new()))
                .1
                .push(place),
            CaSetup::Missing { reason, place } => {
                let entry = missing.entry(reason).or_default();
                entry.0.push(facts[i].name.as_str());
                entry.1.push(place);
            }
        }
    }
    for (reason, (names, places)) in missing {
        out.push(FleetFinding {
            check: Check::NoSharedCa,
            message: format!(
                "no certificate authority shared with the mesh for {} {}: {reason}; {SHARED_CA_SETUPS}",
                if names.len() == 1 { "cluster" } else { "clusters" },
                names.join(", ")
            ),
            places,
        });
    }
    if named.len() > 1 {
        out.push(FleetFinding {
            check: Check::DifferentCas,
            message: format!(
                "the clusters of one mesh name {} different certificate authorities, so some peers refuse each other's certificates; every member must use the same CA ({})",
                named.len(),
                named
                    .values()
                    .map(|(label, _)| label.as_str())
                    .collect::<Vec<_>>()
                    .join("; ")
            ),
            places: named.into_values().flat_map(|(_, p)| p).collect(),
        });
    }
    out
}
