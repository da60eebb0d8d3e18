//! The chart's changelog as this renderer needs it: every template change between supported
//! releases has a name here, with the releases that have it on each minor line. Components ask
//! the plan by name (`ctx.plan.has(Change::ConfigDriftDetection)`), never by version number.
//!
//! An entry lists, per minor line, the span of patch releases that have the change, and then
//! says what every minor newer than the listed ones does (`later: on` or `later: off`); nothing
//! is inherited silently. A span reads like a Rust range over one minor line:
//!
//! - `"1.19.3.."`: from 1.19.3 to the end of the 1.19 line;
//! - `"1.19.0..1.19.4"`: from 1.19.0 up to, not including, 1.19.4 (the release that undid it).
//!
//! A release of a listed minor has the change when its patch is inside that minor's span; a
//! release of a minor newer than every listed one has it when the entry says `later: on`; a
//! release of a minor older than every listed one never has it. Listed minors leave no gap, so
//! no minor falls between two spans. A fix that reached 1.18 in 1.18.9 and 1.19 in 1.19.3 and
//! stays is `["1.18.9..", "1.19.3.."], later: on`; a key 1.19.0 added and 1.19.3 removed, never
//! seen again, is `["1.19.0..1.19.3"], later: off`. A new minor therefore gets exactly the
//! entries marked `later: on`: when adding a minor, review the `later: off` ones (they are the
//! changes it does not inherit) and list its own span where it differs.
//!
//! The values a release renamed or removed are the other part of the changelog (`VALUES`,
//! spans read the same way), so one file holds a release's whole history.

use crate::versions::CiliumVersion;

/// Declares the changes and their table together, so the two cannot drift apart.
macro_rules! changes {
    ($( $(#[doc = $doc:literal])+
        $name:ident => [$($span:literal),+ $(,)?], later: $later:ident, )+) => {
        /// A named difference between chart releases; see the table in this module.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        #[repr(u16)]
        pub enum Change { $( $(#[doc = $doc])+ $name, )+ }

        /// Every change with its spans per minor line and whether newer minors keep it.
        pub const TABLE: &[Entry] = &[ $( Entry {
            change: Change::$name,
            spans: &[$($span),+],
            later: later!($later),
        }, )+ ];
    };
}

/// `on` or `off`: whether minors newer than every listed one have the change.
macro_rules! later {
    (on) => {
        true
    };
    (off) => {
        false
    };
}

/// One row of the changelog.
pub struct Entry {
    pub change: Change,
    /// Per minor line, oldest first: `"1.M.P.."` or `"1.M.P..1.M.Q"` (see the module comment).
    pub spans: &'static [&'static str],
    /// Whether a minor newer than every listed one has the change.
    pub later: bool,
}

changes! {
    // ---- 1.18 ----
    /// The clustermesh-apiserver's `extraEnv` lands in the container's env (before, the chart
    /// wrote it after the readiness probe, where it broke the YAML).
    ClustermeshExtraEnvInPlace => ["1.18.1.."], later: on,
    /// The Envoy bootstrap ConfigMap is rendered during pre-flight checks too.
    EnvoyConfigMapInPreflight => ["1.18.1.."], later: on,
    /// ServiceMonitors carry `app.kubernetes.io/part-of` and `name` labels.
    MonitorPartOfLabels => ["1.18.2.."], later: on,
    /// `bgpControlPlane.legacyOriginAttribute` reaches cilium-config.
    BgpLegacyOriginAttribute => ["1.18.2.."], later: on,
    /// The agent takes `--k8s-api-server-urls` from `k8s.apiServerURLs`.
    AgentApiServerUrls => ["1.18.2.."], later: on,
    /// The ingress Service writes node ports only when they are set.
    IngressNodePortsWhenSet => ["1.18.2.."], later: on,
    /// certgen's resources are indented under the container (before, one level too shallow).
    CertgenResourcesInContainer => ["1.18.4.."], later: on,
    /// `envoy.streamIdleTimeoutDurationSeconds` reaches cilium-config.
    EnvoyStreamIdleTimeout => ["1.18.4.."], later: on,
    /// The agent lists and watches Secrets with the other core objects.
    AgentSecretsInCoreRule => ["1.18.5.."], later: on,
    /// The clustermesh etcd listens on every address instead of the pod IP.
    ClustermeshEtcdListensEverywhere => ["1.18.5.."], later: on,
    /// KVStoreMesh's etcd client volume takes the CA bundle option.
    KvstoremeshCaBundle => ["1.18.5.."], later: on,
    /// The pre-flight Envoy check no longer mounts the bootstrap ConfigMap, and pre-flight no
    /// longer renders it.
    PreflightWithoutEnvoyBootstrap => ["1.18.6.."], later: on,
    /// Hubble relay's config carries `log-format` and `log-level`.
    RelayLogOptions => ["1.18.7.."], later: on,
    /// The TLS-interception Role and binding follow the agent (before, the operator's settings
    /// and pre-flight).
    TlsInterceptionRbacFollowsAgent => ["1.18.7..", "1.19.1.."], later: on,
    /// The operator may update `services/finalizers` and `ingresses/finalizers`.
    OperatorFinalizers => ["1.18.7.."], later: on,
    /// Envoy's admin socket is created with mode 0660.
    EnvoyAdminSocketMode => ["1.18.8..", "1.19.2.."], later: on,
    /// cilium-config carries the config-drift detection keys.
    ConfigDriftDetection => ["1.18.9..", "1.19.3.."], later: on,
    /// cilium-config carries `endpoint-policy-update-timeout`.
    EndpointPolicyUpdateTimeout => ["1.18.9..", "1.19.3.."], later: on,
    // ---- 1.20, shared by most components ----
    /// Most templates label their objects (and pod templates) with `helm.sh/chart`; each
    /// component says which of its objects do (`common::with_chart_label`).
    HelmChartLabel => ["1.20.0.."], later: on,
    // ---- 1.19 and 1.20, shared by cilium-config, the operator and Cluster Mesh ----
    /// `clustermesh.mcsapi.enabled` turns the MCS-API on, beside `enableMCSAPISupport`.
    McsApiEnabledValue => ["1.19.0.."], later: on,
    /// `clustermesh.enableMCSAPISupport` no longer has an effect; only `mcsapi.enabled` does.
    McsApiLegacyFlagRetired => ["1.20.0.."], later: on,
    // ---- 1.19 and 1.20: the agent and cilium-config ----
    /// The agent container declares its health port, the probes reach it by the name `health`,
    /// and Hubble's peer port is declared whenever Hubble is on (not only with metrics).
    AgentHealthPortNamed => ["1.19.0.."], later: on,
    /// A `daemon.configSources` naming exactly one ConfigMap is mounted as the agent's config
    /// directory; the `config` init container and the `tmp` volume are then left out.
    AgentConfigMapSource => ["1.19.0.."], later: on,
    /// The `config` init container runs with a security context (privileged, or NET_ADMIN only).
    AgentConfigInitSecurityContext => ["1.19.0.."], later: on,
    /// `mount-cgroup` takes `initResources` when `cgroup.autoMount.resources` is empty.
    AgentMountCgroupInitResources => ["1.19.0.."], later: on,
    /// `tmpVolume` replaces the `tmp` volume's emptyDir.
    AgentTmpVolume => ["1.19.0.."], later: on,
    /// ztunnel encryption: the agent mounts `cilium-ztunnel-secrets` and cilium-config turns
    /// `enable-ztunnel` on.
    ZtunnelEncryption => ["1.19.0.."], later: on,
    /// The operator no longer updates the BGP v1 CRD's (`ciliumbgppeeringpolicies`) definition.
    BgpV1CrdUpdateDropped => ["1.19.0.."], later: on,
    /// The agent stops listing BGP v1 peering policies and the operator stops reading them;
    /// 1.19.4 brings the reading back on the 1.19 line and 1.20 drops it for good.
    BgpV1PeeringPoliciesUnread => ["1.19.0..1.19.4"], later: on,
    /// The init containers' shell scripts run with bash instead of sh.
    AgentInitScriptsBash => ["1.19.3.."], later: on,
    /// The agent's ClusterRole no longer reads Endpoints.
    AgentRbac120 => ["1.20.0.."], later: on,
    /// The DaemonSet takes `minReadySeconds`, pins `hostUsers: true` on Kubernetes 1.33+, and
    /// `clustermesh.disableKubernetesHostAliases` turns the host aliases off.
    AgentPodSpec120 => ["1.20.0.."], later: on,
    /// `k8sClusterNetworkPolicy.enabled`: the agent may read ClusterNetworkPolicies and
    /// cilium-config enables them.
    ClusterNetworkPolicy => ["1.20.0.."], later: on,
    /// cilium-config carries the datapath-plugin switches.
    DatapathPlugins => ["1.20.0.."], later: on,
    /// An `upgradeCompatibility` below 1.14 no longer gives kube-proxy replacement an old
    /// default (`probe`, `disabled`) that the chart then refused.
    KprLegacyDefaultsDropped => ["1.19.0.."], later: on,
    /// `eni.enabled` forces the `eni` IPAM mode and native routing by default, and the
    /// `nodeSpec` blocks of ENI, Azure, Alibaba Cloud and IPAM reach cilium-config.
    CloudNodeSpecConfig => ["1.19.0.."], later: on,
    /// cilium-config carries the operator's metrics TLS settings.
    OperatorPrometheusTlsConfig => ["1.19.0.."], later: on,
    /// The standalone DNS proxy: its cilium-config keys, and the refusal without a DNS proxy port.
    StandaloneDnsProxyConfig => ["1.19.0.."], later: on,
    /// cilium-config carries `enable-tunnel-big-tcp`, only from 1.19.0 until 1.19.3 dropped it.
    TunnelBigTcp => ["1.19.0..1.19.3"], later: off,
    /// Encryption strict mode is split into ingress and egress; the old `strictMode` settings
    /// feed the egress keys.
    StrictModeDirections => ["1.19.0.."], later: on,
    /// cilium-config stops writing `enable-node-port`, `bpf-lb-proto-diff`,
    /// `enable-session-affinity`, `enable-svc-source-range-check`, `enable-k8s-endpoint-slice`,
    /// `enable-custom-calls` and `enable-internal-traffic-policy`, and stops refusing the
    /// single-CIDR cluster-pool keys.
    ConfigKeysRetired119 => ["1.19.0.."], later: on,
    /// The plain keys 1.19 adds to cilium-config (policy-map pressure, deny response,
    /// unroutable services, IP tracing, profiling rates, Hubble lost events and aggregation,
    /// PMTUD mode, pod restart selector, Envoy connection limits, clustermesh cache and MCS-API).
    ConfigKeysAdded119 => ["1.19.0.."], later: on,
    /// The unmanaged-pod watcher interval is written in seconds (`15s`) when it is a number.
    UnmanagedPodWatcherSeconds => ["1.19.0.."], later: on,
    /// ... and whatever its type (a non-number counts as 0).
    UnmanagedPodWatcherSecondsAlways => ["1.19.2.."], later: on,
    /// The chart refuses `bpf.tproxy` with a netkit datapath.
    TproxyNetkitRefused => ["1.19.0.."], later: on,
    /// cilium-config stops writing `bpf-lb-only` and `l2-pod-announcements-interface`.
    LbOnlyAndL2InterfaceRetired => ["1.19.5.."], later: on,
    /// `enable-host-firewall` is written whatever `hostFirewall` holds.
    HostFirewallAlwaysWritten => ["1.19.6.."], later: on,
    /// The plain keys 1.20 adds to cilium-config (Ingress and Gateway API remote address and
    /// host-network ports, `prefer-ipv6`, dynamic source lookup, LB reflector wait, ztunnel CA
    /// type, multi-pool first/last IP, Envoy pending requests, locality and access log, global
    /// namespace default).
    ConfigKeysAdded120 => ["1.20.0.."], later: on,
    /// cilium-config stops writing `encrypt-interface`, `enable-ipsec-encrypted-overlay`, the
    /// deprecated strict-mode keys, `hubble-redact-kafka-apikey` and the legacy MCS-API switch.
    ConfigKeysRetired120 => ["1.20.0.."], later: on,
    /// With Gateway API on, the LB algorithm annotation and host-namespace-only socket LB are
    /// forced on.
    GatewayApiForcesLbAnnotations => ["1.20.0.."], later: on,
    /// `nativeRoutingCIDRFromClusterPool` takes the native-routing CIDRs from the single
    /// cluster-pool CIDR.
    NativeRoutingCidrFromClusterPool => ["1.20.0.."], later: on,
    /// The chart refuses clustermesh certificates given as values, and `ipam.mode: eni` without
    /// `eni.enabled`.
    ValidateChecks120 => ["1.20.0.."], later: on,
    // ---- 1.19 and 1.20: the operator, pre-flight, ingress and Gateway API ----
    /// With Ingress or Gateway API the operator writes EndpointSlices, and it may delete
    /// CiliumEndpointSlice collections.
    OperatorEndpointSliceRules => ["1.19.0.."], later: on,
    /// The operator writes BGP cluster configs and node config overrides (no longer only reads
    /// them, nor peering policies) and updates the status of the BGP v2 CRDs.
    OperatorBgpV2Managed => ["1.20.0.."], later: on,
    /// The operator may update the MCS-API CRDs when the chart has it install them.
    OperatorUpdatesMcsapiCrds => ["1.19.1.."], later: on,
    /// The operator may update ServiceImport finalizers.
    OperatorServiceImportFinalizers => ["1.19.2.."], later: on,
    /// Role and RoleBinding `cilium-operator-ztunnel`: the operator manages the ztunnel
    /// DaemonSet.
    OperatorZtunnelRole => ["1.19.0.."], later: on,
    /// The operator reads ServiceAccounts (cluster-wide and in the ztunnel Role).
    OperatorReadsServiceAccounts => ["1.20.0.."], later: on,
    /// The operator no longer reads Endpoints.
    OperatorStopsReadingEndpoints => ["1.20.0.."], later: on,
    /// The operator writes CiliumCIDRGroups.
    OperatorManagesCidrGroups => ["1.20.0.."], later: on,
    /// The CiliumDatapathPlugin CRD in the ClusterRoles: the agent lists its objects, the
    /// operator updates its definition and reads its objects.
    DatapathPluginCrd => ["1.20.0.."], later: on,
    /// With Gateway API the operator also reads TCP/UDP routes, BackendTLSPolicies,
    /// ListenerSets (and writes their status) and ConfigMaps.
    OperatorGatewayApiMoreKinds => ["1.20.0.."], later: on,
    /// The Azure Secret and the operator's Azure credentials need `azure.clientID`.
    AzureCredentialsNeedClientId => ["1.19.0.."], later: on,
    /// The operator declares a `health` port (9234, also as host port) and its probes name it.
    OperatorHealthPort => ["1.19.0.."], later: on,
    /// The health port is a host port only with host networking.
    OperatorHealthHostPortWithHostNetwork => ["1.19.4.."], later: on,
    /// The operator mounts its Prometheus TLS secret with `operator.prometheus.tls.enabled`.
    OperatorPrometheusTls => ["1.19.0.."], later: on,
    /// `clustermesh.disableKubernetesHostAliases` drops the operator's host aliases.
    OperatorHostAliasesCanBeDisabled => ["1.20.0.."], later: on,
    /// The operator's tolerations are written for `agentNotReadyTaintKey` alone too.
    OperatorTaintTolerationAlone => ["1.19.0.."], later: on,
    /// The operator and pre-flight pods set `hostUsers` on Kubernetes 1.33 and newer.
    OperatorAndPreflightHostUsers => ["1.20.0.."], later: on,
    /// The operator's Roles and RoleBindings are not rendered during pre-flight.
    OperatorRolesSkippedInPreflight => ["1.20.0.."], later: on,
    /// The pre-flight DaemonSet no longer runs the FQDN pre-cache container.
    PreflightWithoutFqdnPrecache => ["1.20.0.."], later: on,
    /// The Ingress placeholder backend is an EndpointSlice instead of Endpoints.
    IngressEndpointSlice => ["1.19.0.."], later: on,
    /// The Ingress EndpointSlice names its Service in a label and marks its endpoint ready.
    IngressEndpointSliceLinked => ["1.19.5.."], later: on,
    /// Secrets namespaces carry `secretsNamespaceLabels`.
    SecretsNamespaceLabels => ["1.19.0.."], later: on,
    /// No secrets namespace is created during pre-flight.
    SecretsNamespacesSkippedInPreflight => ["1.20.0.."], later: on,
    /// With the Gateway API GatewayClass, a ValidatingAdmissionPolicy (and binding) checks
    /// the TLS certificate references of cilium Gateways.
    GatewayAdmissionPolicy => ["1.20.0.."], later: on,
    // ---- 1.19 and 1.20: Hubble, relay, UI, certgen and the CA ----
    /// The install-time certgen Job is no Helm hook any more; its name ends in a hash of its
    /// spec, so an upgrade that changes the spec replaces it instead of patching it.
    CertgenJobNamedBySpec => ["1.19.0.."], later: on,
    /// certgen's CronJob keeps `certgen.cronJob`'s numbers of finished Jobs.
    CertgenJobHistoryLimits => ["1.19.0.."], later: on,
    /// certgen's pods name their account only by `serviceAccountName`.
    CertgenWithoutServiceAccountField => ["1.19.0.."], later: on,
    /// certgen's `ttlSecondsAfterFinished` is written only when set (and not zero).
    CertgenTtlWhenSet => ["1.19.0.."], later: on,
    /// Cluster Mesh's certgen runs like Hubble's: RuntimeDefault seccomp, no capabilities, off
    /// the host network.
    ClustermeshCertgenHardened => ["1.19.0.."], later: on,
    /// The `cilium-ca` Secret is labelled as not idempotent and takes
    /// `nonIdempotentAnnotations`.
    CaSecretNonIdempotentMarks => ["1.19.0.."], later: on,
    /// Relay's config passes pprof's mutex and block profile rates.
    RelayPprofProfileRates => ["1.19.0.."], later: on,
    /// The UI's ClusterRole no longer reads NetworkPolicies nor Cilium's resources.
    UiRbacWithoutPolicies => ["1.19.0.."], later: on,
    /// The UI frontend's probes name the `http` port instead of its number.
    UiProbesByPortName => ["1.19.0.."], later: on,
    /// `hubble.ui.tmpVolume` replaces the UI's `/tmp` emptyDir.
    UiTmpVolume => ["1.19.0.."], later: on,
    /// certgen takes `--ca-enforce-validity-throughout-leaves-duration`.
    CertgenEnforceCaValidity => ["1.20.0.."], later: on,
    /// Hubble's cert-manager Certificates take `hubble.tls.auto.subject` and `privateKey`.
    HubbleCertManagerSubject => ["1.20.0.."], later: on,
    /// Relay and UI pods set `hostUsers` from `hubble.hostUsers` (Kubernetes 1.33+).
    HubbleHostUsers => ["1.20.0.."], later: on,
    /// Relay mounts an emptyDir at `/tmp`.
    RelayTmpVolume => ["1.20.0.."], later: on,
    /// The UI's ClusterRole no longer reads Endpoints.
    UiRbacWithoutEndpoints => ["1.20.0.."], later: on,
    /// The UI backend has no probes any more (its `livenessProbe`/`readinessProbe` values are
    /// ignored).
    UiBackendWithoutProbes => ["1.20.0.."], later: on,
    /// The UI's default `/tmp` emptyDir is limited to 256Mi.
    UiTmpSizeLimit => ["1.20.0.."], later: on,
    // ---- 1.19 and 1.20: clustermesh and its CoreDNS MCS-API job ----
    /// The clustermesh etcd runs with `--enable-grpc-gateway=false`.
    ClustermeshEtcdNoGrpcGateway => ["1.19.0.."], later: on,
    /// `clustermesh.mcsapi.corednsAutoConfigure` adds a Job (with its RBAC) that sets up
    /// CoreDNS for the MCS-API.
    ClustermeshMcsApiBlock => ["1.19.0.."], later: on,
    /// KVStoreMesh takes `--clustermesh-cache-ttl` from `clustermesh.cacheTTL`.
    ClustermeshCacheTtl => ["1.19.0.."], later: on,
    /// `clustermesh.config.clusters` may be a map keyed by name as well as a list; entries with
    /// `enabled: false` are skipped, and clusters are used in name order, one per name (one
    /// chart helper, read by Cluster Mesh and by the agent's and operator's host aliases).
    ClustermeshClustersMap => ["1.19.0.."], later: on,
    /// `clustermesh.apiserver.service.externallyCreated` leaves the apiserver Service out.
    ClustermeshServiceExternallyCreated => ["1.19.0.."], later: on,
    /// The apiserver's certgen Role no longer names the client-cert Secret nothing issues (its
    /// Job and CronJob take Hubble's shape through the certgen entries).
    ClustermeshCertgenRoleWithoutClientCert => ["1.19.0.."], later: on,
    /// The remote-users ConfigMap needs `clustermesh.config.enabled` too.
    ClustermeshUsersNeedConfig => ["1.19.0.."], later: on,
    /// The cert-manager server Certificate writes commonLabels and annotations each under its
    /// own condition (before, labels were looked up inside `clustermesh.annotations`).
    ClustermeshServerCertificateMetadata => ["1.19.4.."], later: on,
    /// The apiserver's ClusterRole no longer reads `endpoints`.
    ClustermeshRbacWithoutEndpoints => ["1.20.0.."], later: on,
    /// The apiserver's and KVStoreMesh's etcd QPS come from `etcdQPS` values.
    ClustermeshEtcdQpsValues => ["1.20.0.."], later: on,
    /// The apiserver passes `--clustermesh-default-global-namespace`.
    ClustermeshDefaultGlobalNamespace => ["1.20.0.."], later: on,
    /// Remote clusters given by IP get `cilium-host-aliases` in their etcd config, and the
    /// apiserver's pod host aliases can be turned off (`disableKubernetesHostAliases`).
    ClustermeshConfigHostAliases => ["1.20.0.."], later: on,
    /// The server certificate is named after the apiserver Service, and its extra names come
    /// from `tls.auto.server` (falling back to the older `tls.server` lists).
    ClustermeshServerCertNames => ["1.20.0.."], later: on,
    /// cert-manager Certificates take `tls.auto.subject` and `tls.auto.privateKey`.
    ClustermeshCertificateSubjectKey => ["1.20.0.."], later: on,
    /// Certificates can no longer be given in values: no Secrets from them, and setting them
    /// with automatic TLS off fails.
    ClustermeshProvidedTlsRemoved => ["1.20.0.."], later: on,
    // ---- 1.19 and 1.20: Envoy, ztunnel, the standalone DNS proxy ----
    /// The Envoy metrics Service targets the metrics port by number (before, by its name).
    EnvoyServiceTargetPortNumber => ["1.19.0.."], later: on,
    /// The Envoy bootstrap's global downstream connection limit comes from
    /// `envoy.maxGlobalDownstreamConnections` (before, a fixed 50000).
    EnvoyGlobalDownstreamConnectionsValue => ["1.19.0.."], later: on,
    /// The bootstrap's original-destination clusters also cap connections and requests
    /// (`envoy.clusterMaxConnections`, `envoy.clusterMaxRequests`).
    EnvoyClusterConnectionLimits => ["1.19.2.."], later: on,
    /// The standalone DNS proxy's ConfigMap and DaemonSet (`standaloneDnsProxy.enabled`).
    StandaloneDnsProxy => ["1.19.0.."], later: on,
    /// ztunnel's DaemonSet, ServiceAccount and bootstrap-certificate Secret for
    /// `encryption.type: ztunnel`.
    Ztunnel => ["1.19.2.."], later: on,
    /// The bootstrap's xDS cluster gets the same circuit breakers as the proxy clusters.
    EnvoyXdsClusterLimits => ["1.20.0.."], later: on,
    /// `envoy.xdsMode` (by default `ads` unless `upgradeCompatibility` is below 1.20) reaches
    /// cilium-config, and in the ADS modes the bootstrap fetches listeners and clusters over one
    /// aggregated stream.
    EnvoyXdsMode => ["1.20.0.."], later: on,
    /// `envoy.nodeLocality.enabled`: an init container looks the node's zone up for Envoy,
    /// with a locality cluster in the bootstrap and a ClusterRole to read nodes.
    EnvoyNodeLocality => ["1.20.0.."], later: on,
    /// Envoy's probes take their initial delay and timeout from the values (before, fixed).
    EnvoyProbeTimings => ["1.20.0.."], later: on,
    /// The Envoy, ztunnel and standalone DNS proxy DaemonSets take `minReadySeconds` from their
    /// values, written only when non-zero (the DNS proxy's was a fixed 5).
    MinReadySecondsFromValues => ["1.20.0.."], later: on,
    /// The Envoy and standalone DNS proxy pods ask for the host's user namespace
    /// (`hostUsers: true`) on Kubernetes 1.33 and later.
    EnvoyDnsProxyHostUsers => ["1.20.0.."], later: on,
    // ---- 1.19 and 1.20: node-init and the SPIRE installation ----
    /// Without its own ServiceAccount the node-init pod does not mount an API token.
    NodeinitNoTokenWithoutAccount => ["1.19.0.."], later: on,
    /// node-init asks for the host's user namespace on Kubernetes 1.33 and later (its
    /// `minReadySeconds` follows the shared `MinReadySecondsFromValues`).
    NodeinitPodSpec120 => ["1.20.0.."], later: on,
    /// The SPIRE agent and server declare an `http` port their probes name, and the server pod
    /// asks for the host's user namespace on Kubernetes 1.33 and later.
    SpirePods120 => ["1.20.0.."], later: on,
}

/// A value a release renamed or removed, with what the newer chart offers instead (from the
/// charts' values.yaml). `gone` and `later` say which releases no longer have it, read like a
/// change's spans (see the module comment); a value a render is refused for there is explained
/// by `hint` (`known_keys`).
pub struct ValueChange {
    pub path: &'static str,
    pub gone: &'static [&'static str],
    pub later: bool,
    /// The new path when the value only moved, keeping its meaning: `fix-values
    /// --apply-renames` carries the value over as written.
    pub moved_to: Option<&'static str>,
    pub hint: &'static str,
}

impl ValueChange {
    /// Whether `version` no longer has the value.
    pub fn gone_in(&self, version: CiliumVersion) -> bool {
        within(self.gone, self.later, version)
    }

    /// The first release without the value (the start of its first span).
    pub fn first_release_without(&self) -> &'static str {
        let first = self.gone.first().copied().unwrap_or_default();
        first.split_once("..").map_or(first, |(from, _)| from)
    }
}

/// The renamed and removed values, by release. 1.19 lists both `clustermesh.enableMCSAPISupport`
/// and `clustermesh.mcsapi.enabled`, 1.20 only the latter; 1.20 moved `encryption.strictMode`'s
/// keys under `egress`: those are moves.
pub const VALUES: &[ValueChange] = &[
    // ---- 1.19 ----
    removed(
        "customCalls",
        &["1.19.0.."],
        true,
        "removed in 1.19 (no replacement)",
    ),
    removed(
        "nodePort.enabled",
        &["1.19.0.."],
        true,
        "removed in 1.19: the NodePort service implementation follows kubeProxyReplacement",
    ),
    removed(
        "svcSourceRangeCheck",
        &["1.19.0.."],
        true,
        "removed in 1.19 (service source ranges are always checked)",
    ),
    removed(
        "l2podAnnouncements.interface",
        &["1.19.5.."],
        true,
        "1.19.5 replaced it by l2podAnnouncements.interfacePattern (a regular expression)",
    ),
    // ---- 1.20 ----
    moved(
        "clustermesh.enableMCSAPISupport",
        "clustermesh.mcsapi.enabled",
        &["1.20.0.."],
        true,
        "1.20 renamed it to clustermesh.mcsapi.enabled",
    ),
    moved(
        "encryption.strictMode.enabled",
        "encryption.strictMode.egress.enabled",
        &["1.20.0.."],
        true,
        "1.20 renamed it to encryption.strictMode.egress.enabled",
    ),
    moved(
        "encryption.strictMode.cidr",
        "encryption.strictMode.egress.cidr",
        &["1.20.0.."],
        true,
        "1.20 renamed it to encryption.strictMode.egress.cidr",
    ),
    moved(
        "encryption.strictMode.allowRemoteNodeIdentities",
        "encryption.strictMode.egress.allowRemoteNodeIdentities",
        &["1.20.0.."],
        true,
        "1.20 renamed it to encryption.strictMode.egress.allowRemoteNodeIdentities",
    ),
    removed(
        "encryption.ipsec.encryptedOverlay",
        &["1.20.0.."],
        true,
        "removed in 1.20 (no replacement)",
    ),
    removed(
        "hubble.redact.kafka",
        &["1.20.0.."],
        true,
        "removed in 1.20 (Kafka API key redaction is gone)",
    ),
    removed(
        "preflight.tofqdnsPreCache",
        &["1.20.0.."],
        true,
        "removed in 1.20; the agent's DNS cache preload file is dnsProxy.preCache",
    ),
    removed(
        "hubble.ui.backend.livenessProbe",
        &["1.20.0.."],
        true,
        "removed in 1.20: the backend's probes are always on",
    ),
    removed(
        "hubble.ui.backend.readinessProbe",
        &["1.20.0.."],
        true,
        "removed in 1.20: the backend's probes are always on",
    ),
    removed(
        "clustermesh.apiserver.tls.server",
        &["1.20.0.."],
        true,
        PROVIDED_TLS_GONE,
    ),
    removed(
        "clustermesh.apiserver.tls.admin",
        &["1.20.0.."],
        true,
        PROVIDED_TLS_GONE,
    ),
    removed(
        "clustermesh.apiserver.tls.remote",
        &["1.20.0.."],
        true,
        PROVIDED_TLS_GONE,
    ),
    removed(
        "clustermesh.apiserver.tls.enableSecrets",
        &["1.20.0.."],
        true,
        PROVIDED_TLS_GONE,
    ),
];

const PROVIDED_TLS_GONE: &str = "removed in 1.20: clustermesh-apiserver certificates are no longer provided by values; use clustermesh.apiserver.tls.auto";

const fn removed(
    path: &'static str,
    gone: &'static [&'static str],
    later: bool,
    hint: &'static str,
) -> ValueChange {
    ValueChange {
        path,
        gone,
        later,
        moved_to: None,
        hint,
    }
}

const fn moved(
    path: &'static str,
    to: &'static str,
    gone: &'static [&'static str],
    later: bool,
    hint: &'static str,
) -> ValueChange {
    ValueChange {
        path,
        gone,
        later,
        moved_to: Some(to),
        hint,
    }
}

/// Whether `version` has the change of `entry`.
fn holds(entry: &Entry, version: CiliumVersion) -> bool {
    within(entry.spans, entry.later, version)
}

/// Whether `version` is in `spans` or, past every listed minor, whether `later` says it is.
fn within(spans: &[&str], later: bool, version: CiliumVersion) -> bool {
    let mut newest_listed = None;
    for text in spans {
        let Some(span) = Span::parse(text) else {
            // The table test refuses malformed spans; a release never has such a change.
            return false;
        };
        if span.minor == version.minor {
            return span.contains(version.patch);
        }
        newest_listed = newest_listed.max(Some(span.minor));
    }
    later && newest_listed.is_some_and(|minor| minor < version.minor)
}

/// The patch releases of one minor line that have a change.
#[derive(Debug, PartialEq, Eq)]
struct Span {
    minor: u32,
    from: u32,
    /// The first patch that no longer has it; `None` to the end of the line.
    until: Option<u32>,
}

impl Span {
    fn parse(text: &str) -> Option<Span> {
        let (from, until) = text.split_once("..")?;
        let (minor, from) = minor_patch(from)?;
        let until = match until {
            "" => None,
            end => {
                let (end_minor, end) = minor_patch(end)?;
                if end_minor != minor || end <= from {
                    return None;
                }
                Some(end)
            }
        };
        Some(Span { minor, from, until })
    }

    fn contains(&self, patch: u32) -> bool {
        patch >= self.from && self.until.is_none_or(|end| patch < end)
    }
}

fn minor_patch(version: &str) -> Option<(u32, u32)> {
    let mut parts = version.split('.');
    if parts.next()? != "1" {
        return None;
    }
    let minor = parts.next()?.parse().ok()?;
    let patch = parts.next()?.parse().ok()?;
    parts.next().is_none().then_some((minor, patch))
}

/// Words of the set: one bit per change in the table.
const WORDS: usize = TABLE.len().div_ceil(64);

/// The changes one release has, computed once per render.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChangeSet([u64; WORDS]);

impl ChangeSet {
    pub fn of(version: CiliumVersion) -> ChangeSet {
        let mut words = [0u64; WORDS];
        for entry in TABLE {
            if holds(entry, version) {
                let bit = entry.change as usize;
                words[bit / 64] |= 1 << (bit % 64);
            }
        }
        ChangeSet(words)
    }

    pub fn has(&self, change: Change) -> bool {
        let bit = change as usize;
        self.0[bit / 64] & (1 << (bit % 64)) != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(text: &str) -> CiliumVersion {
        crate::versions::parse(text).unwrap()
    }

    fn entry(spans: &'static [&'static str], later: bool) -> Entry {
        Entry {
            change: Change::HelmChartLabel,
            spans,
            later,
        }
    }

    #[test]
    fn a_backport_is_on_only_from_its_release_on_each_line() {
        let e = entry(&["1.18.9..", "1.19.3.."], true);
        assert!(!holds(&e, v("1.18.8")));
        assert!(holds(&e, v("1.18.9")));
        assert!(!holds(&e, v("1.19.2")));
        assert!(holds(&e, v("1.19.3")));
        assert!(holds(&e, v("1.20.0")));
    }

    #[test]
    fn a_change_reaches_newer_minors_only_when_it_says_so() {
        assert!(holds(&entry(&["1.18.2.."], true), v("1.19.0")));
        assert!(!holds(&entry(&["1.18.2.."], false), v("1.19.0")));
        assert!(holds(&entry(&["1.18.2.."], false), v("1.18.12")));
        assert!(!holds(&entry(&["1.19.3.."], true), v("1.18.12")));
        assert!(!holds(&entry(&["1.20.0.."], true), v("1.19.6")));
    }

    #[test]
    fn a_span_can_end_inside_its_line() {
        let e = entry(&["1.19.0..1.19.3"], false);
        assert!(!holds(&e, v("1.18.12")));
        assert!(holds(&e, v("1.19.0")));
        assert!(holds(&e, v("1.19.2")));
        assert!(!holds(&e, v("1.19.3")));
        assert!(!holds(&e, v("1.20.0")));
        // Off, back on, and on for newer minors.
        let e = entry(&["1.19.0..1.19.4"], true);
        assert!(holds(&e, v("1.19.3")));
        assert!(!holds(&e, v("1.19.4")));
        assert!(holds(&e, v("1.20.0")));
    }

    #[test]
    fn malformed_spans_are_refused() {
        for bad in [
            "1.19.0",
            "1.19..",
            "1.19.3..1.19.3",
            "1.19.3..1.19.1",
            "1.19.0..1.20.0",
            "2.0.0..",
            "1.19.0.1..",
        ] {
            assert_eq!(Span::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn the_value_table_is_well_formed() {
        for value in VALUES {
            let spans: Vec<Span> = value
                .gone
                .iter()
                .map(|s| Span::parse(s).unwrap_or_else(|| panic!("{}: bad span {s}", value.path)))
                .collect();
            assert!(!spans.is_empty(), "{}", value.path);
            assert!(spans.windows(2).all(|w| w[1].minor == w[0].minor + 1));
            let first = crate::versions::parse(value.first_release_without()).unwrap();
            assert!(value.gone_in(first), "{}", value.path);
            if let Some(to) = value.moved_to {
                assert!(
                    value.hint.contains(to),
                    "{}: the hint names {to}",
                    value.path
                );
            }
        }
        let l2 = VALUES
            .iter()
            .find(|value| value.path == "l2podAnnouncements.interface")
            .unwrap();
        assert!(!l2.gone_in(v("1.18.12")) && !l2.gone_in(v("1.19.4")));
        assert!(l2.gone_in(v("1.19.5")) && l2.gone_in(v("1.20.0")));
    }

    /// The on/off/on histories that used to take two or three entries, release by release.
    #[test]
    fn histories_with_gaps_are_one_entry() {
        // Releases up to 1.20.0, so adding a release does not break this test.
        let releases = || crate::versions::supported().filter(|r| v(r) <= v("1.20.0"));
        let unread: Vec<&str> = releases()
            .filter(|r| ChangeSet::of(v(r)).has(Change::BgpV1PeeringPoliciesUnread))
            .collect();
        assert_eq!(unread, ["1.19.0", "1.19.1", "1.19.2", "1.19.3", "1.20.0"]);
        let big_tcp: Vec<&str> = releases()
            .filter(|r| ChangeSet::of(v(r)).has(Change::TunnelBigTcp))
            .collect();
        assert_eq!(big_tcp, ["1.19.0", "1.19.1", "1.19.2"]);
    }

    #[test]
    fn the_table_is_well_formed() {
        for (i, entry) in TABLE.iter().enumerate() {
            let change = entry.change;
            assert_eq!(change as usize, i);
            let spans: Vec<Span> = entry
                .spans
                .iter()
                .map(|s| Span::parse(s).unwrap_or_else(|| panic!("{change:?}: bad span {s}")))
                .collect();
            assert!(
                spans.windows(2).all(|w| w[1].minor == w[0].minor + 1),
                "{change:?}: one span per minor line, oldest first, no minor left out"
            );
            for s in entry.spans {
                let (from, until) = s.split_once("..").unwrap();
                for release in [from, until].into_iter().filter(|r| !r.is_empty()) {
                    assert!(
                        crate::versions::parse(release).is_ok(),
                        "{change:?}: {release} is not a supported release"
                    );
                }
            }
        }
    }
}
