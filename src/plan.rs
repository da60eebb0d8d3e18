//! What to build, derived once from the values and the target cluster: version gates, the
//! cluster's Kubernetes version and API versions, and the few defaults this renderer changes so
//! that nothing random is ever minted.

use std::collections::BTreeSet;

use crate::changes::{Change, ChangeSet};
use crate::error::RenderError;
use crate::semver::parse_semver;
use crate::tmpl::{print, truthy};
use crate::values::Values;
use crate::versions::CiliumVersion;

/// The oldest Kubernetes every supported chart accepts (its Chart.yaml's `kubeVersion`,
/// `>= 1.21.0-0` in every release from 1.18.0 to 1.20.0); Helm refuses older clusters.
pub const MIN_KUBE: (u32, u32) = (1, 21);

/// The target cluster's Kubernetes version, as Helm's `.Capabilities.KubeVersion`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KubeVersion {
    pub major: u32,
    pub minor: u32,
    pub patch: u32,
}

impl KubeVersion {
    /// Accepts `1.35`, `1.35.0`, `v1.35.0` and pre-release/build suffixes (`1.35.0-gke.1`).
    pub fn parse(text: &str) -> Result<KubeVersion, RenderError> {
        let bad = || RenderError::KubeVersion(text.to_string());
        let t = text.trim().strip_prefix('v').unwrap_or(text.trim());
        let core = t.split(['-', '+']).next().unwrap_or("");
        let nums: Vec<&str> = core.split('.').collect();
        if !(2..=3).contains(&nums.len()) {
            return Err(bad());
        }
        let n = |s: &str| s.parse::<u32>().map_err(|_| bad());
        Ok(KubeVersion {
            major: n(nums[0])?,
            minor: n(nums[1])?,
            patch: if nums.len() == 3 { n(nums[2])? } else { 0 },
        })
    }

    pub fn at_least(&self, major: u32, minor: u32) -> bool {
        (self.major, self.minor) >= (major, minor)
    }

    // What the cluster's Kubernetes version changes in the render, each written once. The
    // chart compares `.Capabilities.KubeVersion` against these minors in its templates (e.g.
    // `cilium-agent/daemonset.yaml` and every `poddisruptionbudget.yaml` of chart 1.20.0); the
    // Kubernetes releases are the ones its documentation names for the fields.

    /// Kubernetes 1.27 and newer: a PodDisruptionBudget takes `unhealthyPodEvictionPolicy`
    /// (https://kubernetes.io/docs/tasks/run-application/configure-pdb/#unhealthy-pod-eviction-policy).
    pub fn pdb_unhealthy_pod_eviction_policy(&self) -> bool {
        self.at_least(1, 27)
    }

    /// Kubernetes 1.30 and newer: AppArmor is set with the security context's
    /// `appArmorProfile` field; before, the chart writes the per-container
    /// `container.apparmor.security.beta.kubernetes.io/*` annotations and drops the field
    /// (https://kubernetes.io/docs/tutorials/security/apparmor/).
    pub fn app_armor_profile_field(&self) -> bool {
        self.at_least(1, 30)
    }

    /// Kubernetes 1.33 and newer: user namespaces are on by default, so the chart pins
    /// `hostUsers` on the pods that need the host's (https://kubernetes.io/blog/2025/04/25/userns-enabled-by-default/,
    /// https://kubernetes.io/docs/concepts/workloads/pods/user-namespaces/).
    pub fn user_namespaces_by_default(&self) -> bool {
        self.at_least(1, 33)
    }
}

impl std::fmt::Display for KubeVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

/// Everything derived from several inputs, computed once.
#[derive(Debug, Clone)]
pub struct Plan {
    pub cilium: CiliumVersion,
    /// The Helm release namespace (`--namespace`).
    pub release_namespace: String,
    pub kube: KubeVersion,
    pub api_versions: BTreeSet<String>,
    /// The chart changes this Cilium release has (`changes.rs`).
    pub changes: ChangeSet,
    /// The chart's name and version as its `helm.sh/chart` label prints them (`cilium-1.20.0`).
    /// The only place a render shows the chart's version (the chart's `_helpers.tpl` prints
    /// `.Chart.Name-.Chart.Version`; its NOTES.txt is not rendered), so a release read from its
    /// archive (`chart::twin`) shows its own version here and its model's nowhere.
    pub chart_label: String,
    /// Where Hubble's certificates come from (`hubble.tls.auto`).
    pub hubble_certs: CertSource,
    /// Where the Cluster Mesh apiserver's certificates come from (`clustermesh.apiserver.tls.auto`).
    pub clustermesh_certs: CertSource,
    /// Hubble Relay runs: Hubble and the relay are both on.
    pub hubble_relay: bool,
    /// Hubble UI runs: the UI is on, with Hubble or standalone.
    pub hubble_ui: bool,
    /// `upgradeCompatibility` as (major, minor) when set (a pre-release counts as 0.0), or the
    /// text when it is no version: Helm fails only where a template compares it, so the error is
    /// made there (`common::upgrade_compat`), not here.
    pub upgrade_compat: Result<Option<(u64, u64)>, String>,
}

/// Where a component's TLS certificates come from, as its `tls.auto.enabled` and
/// `tls.auto.method` choose; each component still applies its own enable switches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CertSource {
    /// `auto.enabled` off: Secrets built from values, or made by the user.
    Values,
    /// `cronJob`: Cilium's certgen Job/CronJob issues them in the cluster.
    Certgen,
    /// `certmanager`: cert-manager Certificates.
    CertManager,
    /// `helm`: the chart mints them itself (refused wherever it would, see
    /// `apply_deterministic_defaults`).
    Helm,
    /// Any other method: the chart makes no certificates.
    Other,
}

impl CertSource {
    /// The source chosen by the values block `tls` (such as `hubble.tls`).
    fn of(values: &Values, tls: &str) -> CertSource {
        if !values.on(&format!("{tls}.auto.enabled")) {
            return CertSource::Values;
        }
        match values.get(&format!("{tls}.auto.method")).as_str() {
            Some("cronJob") => CertSource::Certgen,
            Some("certmanager") => CertSource::CertManager,
            Some("helm") => CertSource::Helm,
            _ => CertSource::Other,
        }
    }
}

impl Plan {
    /// The plan of one render from the resolved values (after `apply_deterministic_defaults`);
    /// the release's chart changes and the facts several components branch on are found here, once.
    pub fn new(
        cilium: CiliumVersion,
        release_namespace: &str,
        kube: KubeVersion,
        api_versions: BTreeSet<String>,
        values: &Values,
    ) -> Plan {
        let hubble = values.on("hubble.enabled");
        let compat = values.get("upgradeCompatibility");
        let upgrade_compat = if truthy(compat) {
            let text = print(compat);
            parse_semver(&text).map(Some).ok_or(text)
        } else {
            Ok(None)
        };
        Plan {
            cilium,
            release_namespace: release_namespace.to_string(),
            kube,
            api_versions,
            changes: ChangeSet::of(cilium),
            chart_label: format!("cilium-{cilium}"),
            hubble_certs: CertSource::of(values, "hubble.tls"),
            clustermesh_certs: CertSource::of(values, "clustermesh.apiserver.tls"),
            hubble_relay: hubble && values.on("hubble.relay.enabled"),
            hubble_ui: (hubble || values.on("hubble.ui.standalone.enabled"))
                && values.on("hubble.ui.enabled"),
            upgrade_compat,
        }
    }

    /// Whether this release's chart has the named change.
    pub fn has(&self, change: Change) -> bool {
        self.changes.has(change)
    }

    /// `.Capabilities.APIVersions.Has`: only what the caller declared (Argo CD passes the
    /// cluster's list), as `helm template --api-versions` does for custom resources.
    pub fn has_api(&self, group_version: &str) -> bool {
        self.api_versions.contains(group_version)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kube_versions_in_argo_cd_forms() {
        assert_eq!(KubeVersion::parse("1.35").unwrap().to_string(), "1.35.0");
        assert_eq!(
            KubeVersion::parse("v1.29.4+k3s1").unwrap().to_string(),
            "1.29.4"
        );
        assert!(KubeVersion::parse("latest").is_err());
    }

    fn plan_of(values: &str) -> Plan {
        let cilium = crate::versions::parse("1.19.0").expect("supported");
        let layer = crate::values::Layer::from_yaml("t.yaml", values).expect("valid YAML");
        let values = Values::resolve(crate::versions::defaults(cilium), &[layer]);
        let kube = KubeVersion::parse("1.35").expect("valid");
        Plan::new(cilium, "kube-system", kube, BTreeSet::new(), &values)
    }

    #[test]
    fn derived_facts() {
        let p = plan_of("hubble: {relay: {enabled: true}, tls: {auto: {method: certmanager}}}\nclustermesh: {apiserver: {tls: {auto: {enabled: false}}}}\nupgradeCompatibility: \"1.16.0-rc.1\"\n");
        assert!(p.hubble_relay && !p.hubble_ui);
        assert_eq!(p.hubble_certs, CertSource::CertManager);
        assert_eq!(p.clustermesh_certs, CertSource::Values);
        assert_eq!(p.upgrade_compat, Ok(Some((0, 0))));
        let p = plan_of("hubble: {enabled: false, relay: {enabled: true}, ui: {enabled: true, standalone: {enabled: true}}}\nupgradeCompatibility: soon\n");
        assert!(!p.hubble_relay && p.hubble_ui);
        assert_eq!(p.upgrade_compat, Err("soon".to_string()));
    }
}
