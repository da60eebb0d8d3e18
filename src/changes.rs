//! The chart's changelog as this renderer needs it: every template change between supported
//! releases has a name here, with the release it arrived in on each minor line. Components ask
//! the plan by name (`ctx.plan.has(Change::ConfigDriftDetection)`), never by version number.
//!
//! A change lists, per minor line, the first patch release that has it. A release of a listed
//! minor has the change from that patch on; a release of a minor newer than every listed one
//! has it always (it was carried forward); a release older than every listed minor never has
//! it. So a fix that reached 1.18 in 1.18.9 and 1.19 in 1.19.3 is `["1.18.9", "1.19.3"]`, and
//! is on for 1.20.0 without saying so.

use crate::versions::CiliumVersion;

/// Declares the changes and their table together, so the two cannot drift apart.
macro_rules! changes {
    ($( $(#[doc = $doc:literal])+ $name:ident => [$($since:literal),+ $(,)?], )+) => {
        /// A named difference between chart releases; see the table in this module.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        #[repr(u8)]
        pub enum Change { $( $(#[doc = $doc])+ $name, )+ }

        /// Every change with the first release that has it on each minor line.
        pub const TABLE: &[(Change, &[&str])] = &[ $( (Change::$name, &[$($since),+]), )+ ];
    };
}

changes! {
    // ---- 1.18 ----
    /// The clustermesh-apiserver's `extraEnv` lands in the container's env (before, the chart
    /// wrote it after the readiness probe, where it broke the YAML).
    ClustermeshExtraEnvInPlace => ["1.18.1"],
    /// The Envoy bootstrap ConfigMap is rendered during pre-flight checks too.
    EnvoyConfigMapInPreflight => ["1.18.1"],
    /// ServiceMonitors carry `app.kubernetes.io/part-of` and `name` labels.
    MonitorPartOfLabels => ["1.18.2"],
    /// `bgpControlPlane.legacyOriginAttribute` reaches cilium-config.
    BgpLegacyOriginAttribute => ["1.18.2"],
    /// The agent takes `--k8s-api-server-urls` from `k8s.apiServerURLs`.
    AgentApiServerUrls => ["1.18.2"],
    /// The ingress Service writes node ports only when they are set.
    IngressNodePortsWhenSet => ["1.18.2"],
    /// certgen's resources are indented under the container (before, one level too shallow).
    CertgenResourcesInContainer => ["1.18.4"],
    /// `envoy.streamIdleTimeoutDurationSeconds` reaches cilium-config.
    EnvoyStreamIdleTimeout => ["1.18.4"],
    /// The agent lists and watches Secrets with the other core objects.
    AgentSecretsInCoreRule => ["1.18.5"],
    /// The clustermesh etcd listens on every address instead of the pod IP.
    ClustermeshEtcdListensEverywhere => ["1.18.5"],
    /// KVStoreMesh's etcd client volume takes the CA bundle option.
    KvstoremeshCaBundle => ["1.18.5"],
    /// The pre-flight Envoy check no longer mounts the bootstrap ConfigMap, and pre-flight no
    /// longer renders it.
    PreflightWithoutEnvoyBootstrap => ["1.18.6"],
    /// Hubble relay's config carries `log-format` and `log-level`.
    RelayLogOptions => ["1.18.7"],
    /// The TLS-interception Role and binding follow the agent (before, the operator's settings
    /// and pre-flight).
    TlsInterceptionRbacFollowsAgent => ["1.18.7"],
    /// The operator may update `services/finalizers` and `ingresses/finalizers`.
    OperatorFinalizers => ["1.18.7"],
    /// Envoy's admin socket is created with mode 0660.
    EnvoyAdminSocketMode => ["1.18.8", "1.19.2"],
    /// cilium-config carries the config-drift detection keys.
    ConfigDriftDetection => ["1.18.9", "1.19.3"],
    /// cilium-config carries `endpoint-policy-update-timeout`.
    EndpointPolicyUpdateTimeout => ["1.18.9", "1.19.3"],
    // ---- 1.20, shared by most components ----
    /// Most templates label their objects (and pod templates) with `helm.sh/chart`; each
    /// component says which of its objects do (`common::with_chart_label`).
    HelmChartLabel => ["1.20.0"],
    // ---- 1.19 and 1.20: the agent and cilium-config ----
    // ---- 1.19 and 1.20: the operator, pre-flight, ingress and Gateway API ----
    // ---- 1.19 and 1.20: Hubble, relay, UI, certgen and the CA ----
    /// The install-time certgen Job is no Helm hook any more; its name ends in a hash of its
    /// spec, so an upgrade that changes the spec replaces it instead of patching it.
    CertgenJobNamedBySpec => ["1.19.0"],
    /// certgen's CronJob keeps `certgen.cronJob`'s numbers of finished Jobs.
    CertgenJobHistoryLimits => ["1.19.0"],
    /// certgen's pods name their account only by `serviceAccountName`.
    CertgenWithoutServiceAccountField => ["1.19.0"],
    /// certgen's `ttlSecondsAfterFinished` is written only when set (and not zero).
    CertgenTtlWhenSet => ["1.19.0"],
    /// Cluster Mesh's certgen runs like Hubble's: RuntimeDefault seccomp, no capabilities, off
    /// the host network.
    ClustermeshCertgenHardened => ["1.19.0"],
    /// The `cilium-ca` Secret is labelled as not idempotent and takes
    /// `nonIdempotentAnnotations`.
    CaSecretNonIdempotentMarks => ["1.19.0"],
    /// Relay's config passes pprof's mutex and block profile rates.
    RelayPprofProfileRates => ["1.19.0"],
    /// The UI's ClusterRole no longer reads NetworkPolicies nor Cilium's resources.
    UiRbacWithoutPolicies => ["1.19.0"],
    /// The UI frontend's probes name the `http` port instead of its number.
    UiProbesByPortName => ["1.19.0"],
    /// `hubble.ui.tmpVolume` replaces the UI's `/tmp` emptyDir.
    UiTmpVolume => ["1.19.0"],
    /// certgen takes `--ca-enforce-validity-throughout-leaves-duration`.
    CertgenEnforceCaValidity => ["1.20.0"],
    /// Hubble's cert-manager Certificates take `hubble.tls.auto.subject` and `privateKey`.
    HubbleCertManagerSubject => ["1.20.0"],
    /// Relay and UI pods set `hostUsers` from `hubble.hostUsers` (Kubernetes 1.33+).
    HubbleHostUsers => ["1.20.0"],
    /// Relay mounts an emptyDir at `/tmp`.
    RelayTmpVolume => ["1.20.0"],
    /// The UI's ClusterRole no longer reads Endpoints.
    UiRbacWithoutEndpoints => ["1.20.0"],
    /// The UI backend has no probes any more (its `livenessProbe`/`readinessProbe` values are
    /// ignored).
    UiBackendWithoutProbes => ["1.20.0"],
    /// The UI's default `/tmp` emptyDir is limited to 256Mi.
    UiTmpSizeLimit => ["1.20.0"],
    // ---- 1.19 and 1.20: clustermesh and its CoreDNS MCS-API job ----
    // ---- 1.19 and 1.20: Envoy, ztunnel, the standalone DNS proxy ----
}

/// Whether `version` has the change whose first releases per minor line are `since`.
fn arrived(since: &[&str], version: CiliumVersion) -> bool {
    let mut older_minor_listed = false;
    for entry in since {
        let Some((minor, patch)) = minor_patch(entry) else {
            continue;
        };
        if minor == version.minor {
            return version.patch >= patch;
        }
        older_minor_listed |= minor < version.minor;
    }
    older_minor_listed
}

fn minor_patch(version: &str) -> Option<(u32, u32)> {
    let mut parts = version.split('.').skip(1).map(|p| p.parse::<u32>().ok());
    Some((parts.next()??, parts.next()??))
}

/// The changes one release has, computed once per render.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ChangeSet(u128);

impl ChangeSet {
    pub fn of(version: CiliumVersion) -> ChangeSet {
        let mut bits = 0u128;
        for (change, since) in TABLE {
            if arrived(since, version) {
                bits |= 1 << (*change as u8);
            }
        }
        ChangeSet(bits)
    }

    pub fn has(&self, change: Change) -> bool {
        self.0 & (1 << (change as u8)) != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(text: &str) -> CiliumVersion {
        crate::versions::parse(text).unwrap()
    }

    #[test]
    fn a_backport_is_on_only_from_its_release_on_each_line() {
        let since = ["1.18.9", "1.19.3"];
        assert!(!arrived(&since, v("1.18.8")));
        assert!(arrived(&since, v("1.18.9")));
        assert!(!arrived(&since, v("1.19.2")));
        assert!(arrived(&since, v("1.19.3")));
        assert!(arrived(&since, v("1.20.0")));
    }

    #[test]
    fn a_change_is_carried_forward_and_never_back() {
        assert!(arrived(&["1.18.2"], v("1.19.0")));
        assert!(!arrived(&["1.19.3"], v("1.18.12")));
        assert!(!arrived(&["1.20.0"], v("1.19.6")));
    }

    #[test]
    fn the_table_is_well_formed() {
        assert!(TABLE.len() <= 128, "ChangeSet holds 128 changes");
        for (i, (change, since)) in TABLE.iter().enumerate() {
            assert_eq!(*change as usize, i);
            let parsed: Vec<_> = since.iter().map(|s| minor_patch(s).unwrap()).collect();
            assert!(
                parsed.windows(2).all(|w| w[0].0 < w[1].0),
                "{change:?}: one release per minor line, oldest first"
            );
            for s in *since {
                assert!(
                    crate::versions::parse(s).is_ok(),
                    "{change:?}: {s} is not a supported release"
                );
            }
        }
    }
}
