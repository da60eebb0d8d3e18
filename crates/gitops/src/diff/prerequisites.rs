//! CRDs the cluster must already serve for the new render to work, which no Cilium component
//! installs: the kinds of other projects the render creates (a ServiceMonitor is the Prometheus
//! Operator's), and the Gateway API CRDs that Cilium's Gateway API support reads.
//!
//! Argo CD applies a custom resource only when the cluster serves its kind; otherwise the apply
//! (and its dry run) fails with "the server could not find the requested resource" and the sync
//! fails with it. The sync option `SkipDryRunOnMissingResource=true` only helps when the CRD comes
//! in the same sync (<https://argo-cd.readthedocs.io/en/stable/user-guide/sync-options/#skip-dry-run-for-new-custom-resources-types>).

use std::collections::BTreeMap;

use super::consequences::{Consequence, Kind};
use super::engine::{Change, ObjectDiff, Renders};
use cilium_cmp_render::versions::CiliumVersion;
use cilium_cmp_yaml::escape::Prose;

/// Groups whose kinds the Cilium operator registers itself: never a prerequisite.
const CILIUM_GROUPS: &[&str] = &["cilium.io", "isovalent.com"];

const GATEWAY_API_GROUP: &str = "gateway.networking.k8s.io";

/// The page of Cilium's documentation, per minor release, that names the Gateway API version
/// that release supports and the CRDs to install for it.
fn gateway_api_docs(v: CiliumVersion) -> String {
    format!(
        "https://docs.cilium.io/en/v{}.{}/network/servicemesh/gateway-api/gateway-api/#prerequisites",
        v.major, v.minor
    )
}

/// What a created object of another project's group needs, and how to provide it.
fn fix_for(group: &str, to: CiliumVersion) -> String {
    match group {
        // The chart renders ServiceMonitors only when the cluster advertises monitoring.coreos.com/v1
        // (Argo CD passes the API versions it sees), or when prometheus.serviceMonitor.trustCRDsExist
        // is set, which skips that check (the chart's validation of service monitors).
        "monitoring.coreos.com" => "install the Prometheus Operator's CRDs before the sync (the Prometheus Operator, kube-prometheus-stack, or its CRDs alone: https://github.com/prometheus-operator/prometheus-operator/tree/main/example/prometheus-operator-crd). The chart checks only that the cluster advertises monitoring.coreos.com/v1 among the API versions Argo CD passes, and prometheus.serviceMonitor.trustCRDsExist: true skips even that".to_string(),
        GATEWAY_API_GROUP => format!(
            "install the Gateway API CRDs of the version Cilium {}.{} supports before the sync ({})",
            to.major,
            to.minor,
            gateway_api_docs(to)
        ),
        "cert-manager.io" => "install cert-manager before the sync (https://cert-manager.io/docs/installation/)".to_string(),
        _ => "install the CRD of this kind before the sync".to_string(),
    }
}

/// The prerequisites of the new render: one consequence per kind of another project it creates,
/// and the Gateway API CRDs when Gateway API support turns on or moves to another release.
pub fn of_renders(
    objects: &[ObjectDiff],
    r: &Renders,
    from: CiliumVersion,
    to: CiliumVersion,
    namespace: &str,
) -> Vec<Consequence> {
    let mut out = Vec::new();
    // (group, kind) → (apiVersion, objects created).
    let mut created: BTreeMap<(&str, &str), (&str, usize)> = BTreeMap::new();
    for o in objects.iter().filter(|o| o.change == Change::Created) {
        let group = o.key.group.as_str();
        if super::empty_strings::is_built_in(group) || CILIUM_GROUPS.contains(&group) {
            continue;
        }
        let entry = created
            .entry((group, o.key.kind.as_str()))
            .or_insert((o.api_version.as_str(), 0));
        entry.1 += 1;
    }
    for ((group, kind), (api_version, n)) in created {
        out.push(Consequence {
            kind: Kind::CrdPrerequisite,
            subject: format!("{kind} ({api_version})"),
            what: Prose::new().words(&format!(
                "the sync creates {n} object{} of this kind: the cluster must serve its CRD, or Argo CD's apply of {} fails and the sync with it",
                if n == 1 { "" } else { "s" },
                if n == 1 { "it" } else { "them" }
            )),
            why: Prose::new().words(&format!(
                "no Cilium component installs this CRD; {}",
                fix_for(group, to)
            )),
        });
    }
    let gateway_on = |side: &BTreeMap<_, crate::adopt::live::Object>| {
        side.iter()
            .any(|(k, o): (&crate::adopt::live::ObjectKey, _)| {
                k.kind == "ConfigMap"
                    && k.name == "cilium-config"
                    && o.value
                        .pointer("/data/enable-gateway-api")
                        .and_then(|v| v.as_str())
                        == Some("true")
            })
    };
    let (before, after) = (gateway_on(&r.old), gateway_on(&r.new));
    let moves = before && (from.major, from.minor) != (to.major, to.minor);
    if after && (!before || moves) {
        let what = if before {
            format!("Gateway API support moves from Cilium {from} to {to}: the operator of {to} expects the Gateway API CRDs of the version Cilium {}.{} supports, which may not be the version installed", to.major, to.minor)
        } else {
            "Gateway API support turns on (enable-gateway-api): the operator runs its Gateway API controller only when the Gateway API CRDs are installed before it starts; without them Gateway API stays off, and the sync itself shows no error".to_string()
        };
        out.push(Consequence {
            kind: Kind::CrdPrerequisite,
            subject: "Gateway API CRDs (gateway.networking.k8s.io)".into(),
            what: Prose::new().words(&what),
            why: Prose::new().words(&format!(
                "Cilium's Gateway API documentation: the CRDs must be pre-installed; {}; CRDs installed after the operator started take effect when it restarts (kubectl -n {namespace} rollout restart deployment/cilium-operator)",
                fix_for(GATEWAY_API_GROUP, to)
            )),
        });
    }
    out
}
