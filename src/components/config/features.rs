//! Feature keys after Hubble: IPAM, egress gateway, VTEP, L2 announcements and BGP, operator
//! behaviour, the DNS proxy, mutual authentication, Envoy tuning, Cluster Mesh and
//! `extraConfig`.

use crate::changes::Change;
use serde_json::Value;

use super::text::{self, duration, text as txt};
use super::{has, on, set, Data, Derived};
use crate::components::Ctx;
use crate::error::RenderError;
use crate::tmpl::{self, join, print, truthy};

/// Feeder rules, the IPAM mode and its pools, and LB IPAM defaults.
pub fn ipam(ctx: &Ctx, d: &Derived, data: &mut Data) -> Result<(), RenderError> {
    if has(ctx, "disableIptablesFeederRules") {
        data.s(
            "disable-iptables-feeder-rules",
            join(ctx.v("disableIptablesFeederRules"), " "),
        );
    }
    if ctx.on("aksbyocni.enabled") {
        aks_byocni_ipam(ctx, data)?;
    } else {
        data.q("ipam", &d.ipam);
    }
    if ctx.plan.has(Change::CloudNodeSpecConfig) && ctx.on("ipam.nodeSpec") {
        ipam_node_spec(ctx, data);
    }
    data.qv_when(
        ctx,
        on,
        "ipam-multi-pool-pre-allocation",
        "ipam.multiPoolPreAllocation",
    );
    if ctx.on("ipam.ciliumNodeUpdateRate") {
        data.s(
            "ipam-cilium-node-update-rate",
            duration(ctx, "ipam.ciliumNodeUpdateRate")?,
        );
    }
    match d.ipam.as_str() {
        Some("cluster-pool") => cluster_pool(ctx, data)?,
        Some("multi-pool") => data.s("auto-create-cilium-pod-ip-pools", multi_pools(ctx)),
        _ => {}
    }
    data.qv_set(
        ctx,
        &[
            (
                "limit-ipam-api-burst",
                "ipam.operator.externalAPILimitBurstSize",
            ),
            ("limit-ipam-api-qps", "ipam.operator.externalAPILimitQPS"),
        ],
    );
    if ctx.on("nodeIPAM.enabled") {
        data.s("enable-node-ipam", "true");
    }
    data.dq(ctx, "default-lb-service-ipam", "defaultLBServiceIPAM")?;
    data.qv_when(ctx, on, "api-rate-limit", "apiRateLimit");
    Ok(())
}

/// With Azure's BYO CNI only cluster-pool and multi-pool are written (1.19 added multi-pool;
/// before, cluster-pool was written whatever the mode).
fn aks_byocni_ipam(ctx: &Ctx, data: &mut Data) -> Result<(), RenderError> {
    if !ctx.plan.has(Change::CloudNodeSpecConfig) {
        data.s("ipam", "cluster-pool");
        return Ok(());
    }
    let mode = ctx.v("ipam.mode");
    if !truthy(mode) || mode_is(ctx, "cluster-pool")? {
        data.s("ipam", "cluster-pool");
    } else if mode_is(ctx, "multi-pool")? {
        data.s("ipam", "multi-pool");
    }
    Ok(())
}

/// `eq .Values.ipam.mode TEXT`, which Helm refuses for a mode that is not text.
fn mode_is(ctx: &Ctx, text: &str) -> Result<bool, RenderError> {
    tmpl::eq_text(ctx.v("ipam.mode"), text)
        .ok_or_else(|| ctx.invalid("ipam.mode", "must be a string"))
}

/// The IPAM node defaults the operator applies to every node.
fn ipam_node_spec(ctx: &Ctx, data: &mut Data) {
    for (key, field) in [
        ("ipam-min-allocate", "ipamMinAllocate"),
        ("ipam-pre-allocate", "ipamPreAllocate"),
        ("ipam-max-allocate", "ipamMaxAllocate"),
    ] {
        data.qv_when(ctx, has, key, &format!("ipam.nodeSpec.{field}"));
    }
    if ctx.on("ipam.nodeSpec.ipamStaticIPTags") {
        data.s(
            "ipam-static-ip-tags",
            join(ctx.v("ipam.nodeSpec.ipamStaticIPTags"), ","),
        );
    }
}

fn cluster_pool(ctx: &Ctx, data: &mut Data) -> Result<(), RenderError> {
    for (family, enabled) in [("IPv4", "ipv4.enabled"), ("IPv6", "ipv6.enabled")] {
        if !ctx.on(enabled) {
            continue;
        }
        let removed = format!("ipam.operator.clusterPool{family}PodCIDR");
        if !ctx.plan.has(Change::ConfigKeysRetired119) && has(ctx, &removed) {
            return Err(ctx.invalid(
                &removed,
                format!("this value was removed; use ipam.operator.clusterPool{family}PodCIDRList (a list of CIDRs) instead"),
            ));
        }
        let lower = family.to_lowercase();
        data.s(
            &format!("cluster-pool-{lower}-cidr"),
            join(
                ctx.v(&format!("ipam.operator.clusterPool{family}PodCIDRList")),
                " ",
            ),
        );
        data.qv(
            ctx,
            &format!("cluster-pool-{lower}-mask-size"),
            &format!("ipam.operator.clusterPool{family}MaskSize"),
        );
        native_routing_cidr_from_pool(ctx, family, data)?;
    }
    Ok(())
}

/// From 1.20 `nativeRoutingCIDRFromClusterPool` makes the only pool CIDR of a family its
/// native-routing CIDR, unless one is set.
fn native_routing_cidr_from_pool(
    ctx: &Ctx,
    family: &str,
    data: &mut Data,
) -> Result<(), RenderError> {
    let own = format!("{}NativeRoutingCIDR", family.to_lowercase());
    if !ctx.plan.has(Change::NativeRoutingCidrFromClusterPool)
        || !ctx.on("nativeRoutingCIDRFromClusterPool")
        || ctx.on(&own)
    {
        return Ok(());
    }
    let path = format!("ipam.operator.clusterPool{family}PodCIDRList");
    let pools: Vec<Value> = match ctx.v(&path) {
        Value::String(text) => text.split(' ').map(|p| Value::String(p.into())).collect(),
        Value::Array(items) => items.clone(),
        Value::Null => Vec::new(),
        _ => return Err(ctx.invalid(&path, "must be a list of CIDRs")),
    };
    if pools.len() != 1 {
        return Err(ctx.invalid(
            &path,
            format!(
                "nativeRoutingCIDRFromClusterPool needs exactly one CIDR here; set {own} instead"
            ),
        ));
    }
    data.q(
        &format!("{}-native-routing-cidr", family.to_lowercase()),
        &pools[0],
    );
    Ok(())
}

/// `name=ipv4-cidrs:a,b;ipv4-mask-size:N;ipv6-...` per pool, pools sorted by name.
fn multi_pools(ctx: &Ctx) -> String {
    let first_last_ip = ctx.plan.has(Change::ConfigKeysAdded120);
    let Value::Object(pools) = ctx.v("ipam.operator.autoCreateCiliumPodIPPools") else {
        return String::new();
    };
    pools
        .iter()
        .map(|(name, spec)| {
            let mut attrs = Vec::new();
            for family in ["ipv4", "ipv6"] {
                let f = &spec[family];
                if f.is_null() {
                    continue;
                }
                attrs.push(format!("{family}-cidrs:{}", join(&f["cidrs"], ",")));
                attrs.push(format!("{family}-mask-size:{}", print(&f["maskSize"])));
            }
            if first_last_ip {
                for (attr, field) in [
                    ("allow-first-ip", "allowFirstIP"),
                    ("allow-last-ip", "allowLastIP"),
                ] {
                    if !spec[field].is_null() {
                        attrs.push(format!("{attr}:{}", print(&spec[field])));
                    }
                }
            }
            format!("{name}={}", attrs.join(";"))
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// Egress gateway through the identity-management and SCTP settings.
pub fn networking(ctx: &Ctx, _d: &Derived, data: &mut Data) -> Result<(), RenderError> {
    if ctx.on("egressGateway.enabled") {
        data.s("enable-egress-gateway", "true");
    }
    data.qv_when(
        ctx,
        has,
        "egress-gateway-reconciliation-trigger-interval",
        "egressGateway.reconciliationTriggerInterval",
    );
    data.qv_when(
        ctx,
        on,
        "egress-gateway-policy-map-max",
        "egressGateway.maxPolicyEntries",
    );
    if has(ctx, "vtep") {
        data.qv(ctx, "enable-vtep", "vtep.enabled");
        for field in ["endpoint", "cidr", "mask", "mac"] {
            let path = format!("vtep.{field}");
            if has(ctx, &path) {
                data.qv(ctx, &format!("vtep-{field}"), &path);
            }
        }
    }
    if ctx.on("crdWaitTimeout") {
        data.s("crd-wait-timeout", duration(ctx, "crdWaitTimeout")?);
    }
    let retired_119 = ctx.plan.has(Change::ConfigKeysRetired119);
    if !retired_119 {
        data.qv_when(
            ctx,
            on,
            "enable-k8s-endpoint-slice",
            "enableK8sEndpointSlice",
        );
    }
    data.qv_when(ctx, has, "k8s-service-proxy-name", "k8s.serviceProxyName");
    if !retired_119 && ctx.on("customCalls") && ctx.on("customCalls.enabled") {
        data.qv(ctx, "enable-custom-calls", "customCalls.enabled");
    }
    if ctx.on("l2announcements.enabled") {
        data.qv(ctx, "enable-l2-announcements", "l2announcements.enabled");
        for (key, field) in [
            ("l2-announcements-lease-duration", "leaseDuration"),
            ("l2-announcements-renew-deadline", "leaseRenewDeadline"),
            ("l2-announcements-retry-period", "leaseRetryPeriod"),
        ] {
            let path = format!("l2announcements.{field}");
            if ctx.on(&path) {
                data.qv(ctx, key, &path);
            }
        }
    }
    if ctx.on("l2podAnnouncements.enabled") {
        data.qv(
            ctx,
            "enable-l2-pod-announcements",
            "l2podAnnouncements.enabled",
        );
        if ctx.on("l2podAnnouncements.interfacePattern") {
            data.qv(
                ctx,
                "l2-pod-announcements-interface-pattern",
                "l2podAnnouncements.interfacePattern",
            );
        } else if !ctx.plan.has(Change::LbOnlyAndL2InterfaceRetired) {
            data.qv(
                ctx,
                "l2-pod-announcements-interface",
                "l2podAnnouncements.interface",
            );
        }
    }
    if ctx.on("bgpControlPlane.enabled") {
        bgp(ctx, data);
    }
    if ctx.on("pmtuDiscovery.enabled") {
        data.s("enable-pmtu-discovery", "true");
    }
    if ctx.plan.has(Change::ConfigKeysAdded119) {
        data.qv(
            ctx,
            "packetization-layer-pmtud-mode",
            "pmtuDiscovery.packetizationLayerPMTUDMode",
        );
    }
    if !ctx.on("securityContext.privileged") {
        data.s("procfs", "/host/proc");
    }
    data.qv_when(ctx, has, "bpf-root", "bpf.root");
    data.qv_when(ctx, has, "cgroup-root", "cgroup.hostRoot");
    if ctx.on("bpf.vlanBypass") {
        data.s("vlan-bpf-bypass", join(ctx.v("bpf.vlanBypass"), " "));
    }
    data.qv_when(
        ctx,
        on,
        "disable-external-ip-mitigation",
        "bpf.disableExternalIPMitigation",
    );
    if ctx.on("ciliumEndpointSlice.enabled") {
        data.s("enable-cilium-endpoint-slice", "true");
        if ctx.on("ciliumEndpointSlice.rateLimits") {
            data.s(
                "ces-rate-limits",
                tmpl::to_json(ctx.v("ciliumEndpointSlice.rateLimits")),
            );
        }
    }
    data.qv(ctx, "identity-management-mode", "identityManagementMode");
    data.qv_when(ctx, has, "enable-sctp", "sctp.enabled");
    data.qv_when(
        ctx,
        has,
        "dns-policy-unload-on-shutdown",
        "dnsPolicyUnloadOnShutdown",
    );
    Ok(())
}

fn bgp(ctx: &Ctx, data: &mut Data) {
    data.s("enable-bgp-control-plane", "true");
    data.qv(
        ctx,
        "bgp-secrets-namespace",
        "bgpControlPlane.secretsNamespace.name",
    );
    data.qv(
        ctx,
        "enable-bgp-control-plane-status-report",
        "bgpControlPlane.statusReport.enabled",
    );
    data.qv(
        ctx,
        "bgp-router-id-allocation-mode",
        "bgpControlPlane.routerIDAllocation.mode",
    );
    data.qv(
        ctx,
        "bgp-router-id-allocation-ip-pool",
        "bgpControlPlane.routerIDAllocation.ipPool",
    );
    if ctx.plan.has(Change::BgpLegacyOriginAttribute) {
        data.qv(
            ctx,
            "enable-bgp-legacy-origin-attribute",
            "bgpControlPlane.legacyOriginAttribute.enabled",
        );
    }
}

/// Node annotation, client rate limits, node taints, the unmanaged-pod watcher, the DNS proxy.
pub fn operator_and_dns(ctx: &Ctx, d: &Derived, data: &mut Data) -> Result<(), RenderError> {
    if ctx.on("annotateK8sNode") {
        data.s("annotate-k8s-node", "true");
    }
    data.qv_set(
        ctx,
        &[
            ("k8s-client-qps", "k8sClientRateLimit.qps"),
            ("k8s-client-burst", "k8sClientRateLimit.burst"),
            ("operator-k8s-client-qps", "k8sClientRateLimit.operator.qps"),
            (
                "operator-k8s-client-burst",
                "k8sClientRateLimit.operator.burst",
            ),
        ],
    );
    let set_taints = ctx.v("operator.setNodeTaints");
    let remove_taints = ctx.on("operator.removeNodeTaints");
    if truthy(set_taints) && !remove_taints {
        return Err(ctx.invalid(
            "operator.setNodeTaints",
            "the chart refuses operator.setNodeTaints: true while operator.removeNodeTaints is false; enable operator.removeNodeTaints or drop setNodeTaints",
        ));
    }
    if remove_taints {
        data.s("remove-cilium-node-taints", "true");
    }
    if truthy(set_taints) || (set_taints.is_null() && remove_taints) {
        data.s("set-cilium-node-taints", "true");
    }
    if ctx.on("operator.setNodeNetworkStatus") {
        data.s("set-cilium-is-up-condition", "true");
    }
    if ctx.on("operator.unmanagedPodWatcher.restart") {
        unmanaged_pod_watcher_interval(ctx, data);
    } else {
        data.s("unmanaged-pod-watcher-interval", "0");
    }
    if ctx.plan.has(Change::ConfigKeysAdded119) && set(ctx, "operator.unmanagedPodWatcher.selector")
    {
        data.bare(
            ctx,
            "pod-restart-selector",
            "operator.unmanagedPodWatcher.selector",
        )?;
    }
    if ctx.on("dnsProxy") {
        dns_proxy(ctx, d, data);
    }
    data.qv_when(
        ctx,
        has,
        "agent-not-ready-taint-key",
        "agentNotReadyTaintKey",
    );
    Ok(())
}

/// The interval as given before 1.19; from 1.19 whole seconds with a unit (`15s`), at first only
/// for numbers, from 1.19.2 for anything (Sprig's `int` makes other text 0).
fn unmanaged_pod_watcher_interval(ctx: &Ctx, data: &mut Data) {
    let key = "unmanaged-pod-watcher-interval";
    let path = "operator.unmanagedPodWatcher.intervalSeconds";
    let v = ctx.v(path);
    let in_seconds = ctx.plan.has(Change::UnmanagedPodWatcherSecondsAlways)
        || (ctx.plan.has(Change::UnmanagedPodWatcherSeconds) && v.is_number());
    if in_seconds {
        data.s(key, format!("{}s", tmpl::to_int64(v)));
    } else {
        data.qv(ctx, key, path);
    }
}

fn dns_proxy(ctx: &Ctx, d: &Derived, data: &mut Data) {
    if has(ctx, "dnsProxy.enableTransparentMode") {
        data.qv(
            ctx,
            "dnsproxy-enable-transparent-mode",
            "dnsProxy.enableTransparentMode",
        );
    } else if d.chaining_is("none") {
        data.s(
            "dnsproxy-enable-transparent-mode",
            d.default_dns_transparent,
        );
    }
    data.qv_each(
        ctx,
        &[
            (
                set,
                "dnsproxy-socket-linger-timeout",
                "dnsProxy.socketLingerTimeout",
            ),
            (
                on,
                "tofqdns-dns-reject-response-code",
                "dnsProxy.dnsRejectResponseCode",
            ),
            (
                has,
                "tofqdns-enable-dns-compression",
                "dnsProxy.enableDnsCompression",
            ),
        ],
    );
    for (key, field) in [
        (
            "tofqdns-endpoint-max-ip-per-hostname",
            "endpointMaxIpPerHostname",
        ),
        (
            "tofqdns-idle-connection-grace-period",
            "idleConnectionGracePeriod",
        ),
        (
            "tofqdns-max-deferred-connection-deletes",
            "maxDeferredConnectionDeletes",
        ),
        ("tofqdns-min-ttl", "minTtl"),
        ("tofqdns-pre-cache", "preCache"),
        ("tofqdns-proxy-port", "proxyPort"),
        ("tofqdns-proxy-response-max-delay", "proxyResponseMaxDelay"),
    ] {
        let path = format!("dnsProxy.{field}");
        if ctx.on(&path) {
            data.qv(ctx, key, &path);
        }
    }
    data.qv(
        ctx,
        "tofqdns-preallocate-identities",
        "dnsProxy.preAllocateIdentities",
    );
}

/// Mutual authentication, Envoy proxy tuning, Cluster Mesh, NAT stats and the last toggles.
pub fn auth_envoy_and_mesh(ctx: &Ctx, d: &Derived, data: &mut Data) -> Result<(), RenderError> {
    data.qv(ctx, "mesh-auth-enabled", "authentication.enabled");
    data.qv(ctx, "mesh-auth-queue-size", "authentication.queueSize");
    data.qv(
        ctx,
        "mesh-auth-rotated-identities-queue-size",
        "authentication.rotatedIdentitiesQueueSize",
    );
    data.s(
        "mesh-auth-gc-interval",
        duration(ctx, "authentication.gcInterval")?,
    );
    if ctx.on("authentication.mutual.spire.enabled") {
        spire(ctx, data)?;
    }
    for (key, field) in envoy_proxy_keys(ctx) {
        data.qv(ctx, key, &format!("envoy.{field}"));
    }
    data.s("external-envoy-proxy", d.envoy_ds_text.clone());
    data.qv(ctx, "envoy-base-id", "envoy.baseID");
    data.qv_set(
        ctx,
        &[
            (
                "envoy-http-upstream-linger-timeout",
                "envoy.httpUpstreamLingerTimeout",
            ),
            (
                "envoy-policy-restore-timeout",
                "envoy.policyRestoreTimeoutDuration",
            ),
            ("envoy-log", "envoy.log.path"),
            ("envoy-default-log-level", "envoy.log.defaultLevel"),
            (
                "envoy-access-log-buffer-size",
                "envoy.log.accessLogBufferSize",
            ),
        ],
    );
    if ctx.plan.has(Change::ConfigKeysAdded120) {
        data.qv(
            ctx,
            "envoy-access-log-enabled",
            "envoy.log.accessLogEnabled",
        );
    }
    data.qv(
        ctx,
        "envoy-keep-cap-netbindservice",
        "envoy.securityContext.capabilities.keepCapNetBindService",
    );
    if let Some(mode) = envoy_xds_mode(ctx)? {
        data.s("envoy-xds-mode", mode);
    }
    data.qv_when(
        ctx,
        has,
        "max-connected-clusters",
        "clustermesh.maxConnectedClusters",
    );
    clustermesh(ctx, data);
    let mut rest = vec![
        ("nat-map-stats-entries", "nat.mapStatsEntries"),
        ("nat-map-stats-interval", "nat.mapStatsInterval"),
    ];
    if !ctx.plan.has(Change::ConfigKeysRetired119) {
        rest.push((
            "enable-internal-traffic-policy",
            "enableInternalTrafficPolicy",
        ));
    }
    rest.extend([
        ("enable-lb-ipam", "enableLBIPAM"),
        (
            "enable-non-default-deny-policies",
            "enableNonDefaultDenyPolicies",
        ),
    ]);
    for (key, path) in rest {
        data.qv(ctx, key, path);
    }
    data.qv_when(
        ctx,
        has,
        "enable-source-ip-verification",
        "daemon.enableSourceIPVerification",
    );
    if ctx.v("connectivityProbeFrequencyRatio").is_number() {
        data.qv(
            ctx,
            "connectivity-probe-frequency-ratio",
            "connectivityProbeFrequencyRatio",
        );
    }
    if ctx.plan.has(Change::ConfigDriftDetection) && has(ctx, "configDriftDetection") {
        data.qv(ctx, "enable-dynamic-config", "configDriftDetection.enabled");
        data.qv(
            ctx,
            "enable-drift-checker",
            "configDriftDetection.driftChecker",
        );
        if ctx.on("configDriftDetection.ignoredKeys") {
            data.s(
                "ignore-flags-drift-checker",
                join(ctx.v("configDriftDetection.ignoredKeys"), ","),
            );
        }
    }
    if ctx.plan.has(Change::DatapathPlugins) {
        data.qv(ctx, "enable-datapath-plugins", "datapathPlugins.enabled");
        data.qv(
            ctx,
            "datapath-plugins-state-dir",
            "datapathPlugins.stateDir",
        );
    }
    Ok(())
}

/// The Envoy proxy limits and timeouts, each `envoy.FIELD` under its key, as the release has
/// them.
fn envoy_proxy_keys(ctx: &Ctx) -> Vec<(&'static str, &'static str)> {
    let added_119 = ctx.plan.has(Change::ConfigKeysAdded119);
    let added_120 = ctx.plan.has(Change::ConfigKeysAdded120);
    let mut keys = vec![
        (
            "proxy-xff-num-trusted-hops-ingress",
            "xffNumTrustedHopsL7PolicyIngress",
        ),
        (
            "proxy-xff-num-trusted-hops-egress",
            "xffNumTrustedHopsL7PolicyEgress",
        ),
        ("proxy-connect-timeout", "connectTimeoutSeconds"),
        ("proxy-initial-fetch-timeout", "initialFetchTimeoutSeconds"),
    ];
    if added_119 {
        keys.push((
            "proxy-max-active-downstream-connections",
            "maxGlobalDownstreamConnections",
        ));
    }
    keys.extend([
        (
            "proxy-max-requests-per-connection",
            "maxRequestsPerConnection",
        ),
        (
            "proxy-max-connection-duration-seconds",
            "maxConnectionDurationSeconds",
        ),
        ("proxy-idle-timeout-seconds", "idleTimeoutDurationSeconds"),
        ("proxy-max-concurrent-retries", "maxConcurrentRetries"),
    ]);
    if added_119 {
        keys.extend([
            (
                "proxy-use-original-source-address",
                "useOriginalSourceAddress",
            ),
            ("proxy-cluster-max-connections", "clusterMaxConnections"),
        ]);
        if added_120 {
            keys.push((
                "proxy-cluster-max-pending-requests",
                "clusterMaxPendingRequests",
            ));
        }
        keys.push(("proxy-cluster-max-requests", "clusterMaxRequests"));
    }
    keys.push(("http-retry-count", "httpRetryCount"));
    if ctx.plan.has(Change::EnvoyStreamIdleTimeout) {
        keys.push((
            "http-stream-idle-timeout",
            "streamIdleTimeoutDurationSeconds",
        ));
    }
    if added_120 {
        keys.push(("envoy-node-locality-enabled", "nodeLocality.enabled"));
    }
    keys
}

/// The chart's `envoyXdsMode` helper (1.20): the configured mode when set, else `ads` for
/// installs that started on 1.20 or later; nothing when that leaves it empty.
fn envoy_xds_mode(ctx: &Ctx) -> Result<Option<String>, RenderError> {
    if !ctx.plan.has(Change::EnvoyXdsMode) {
        return Ok(None);
    }
    let mode = crate::components::envoy::xds_mode(ctx)?;
    Ok((!mode.is_empty()).then_some(mode))
}

/// The Cluster Mesh keys.
fn clustermesh(ctx: &Ctx, data: &mut Data) {
    let added_119 = ctx.plan.has(Change::ConfigKeysAdded119);
    if added_119 {
        data.qv(ctx, "clustermesh-cache-ttl", "clustermesh.cacheTTL");
    }
    data.qv(
        ctx,
        "clustermesh-enable-endpoint-sync",
        "clustermesh.enableEndpointSliceSynchronization",
    );
    // 1.19 added `mcsapi.enabled` beside the older switch (Go's `or` yields the first true
    // operand, else the last); 1.20 reads only the new one.
    let legacy = ctx.v("clustermesh.enableMCSAPISupport");
    let mcs = if !ctx.plan.has(Change::McsApiEnabledValue) {
        legacy
    } else if ctx.plan.has(Change::McsApiLegacyFlagRetired) {
        ctx.v("clustermesh.mcsapi.enabled")
    } else {
        let new = ctx.v("clustermesh.mcsapi.enabled");
        if truthy(new) {
            new
        } else {
            legacy
        }
    };
    data.q("clustermesh-enable-mcs-api", mcs);
    if added_119 {
        data.qv(
            ctx,
            "clustermesh-mcs-api-install-crds",
            "clustermesh.mcsapi.installCRDs",
        );
    }
    if ctx.plan.has(Change::ConfigKeysAdded120) {
        data.qv(
            ctx,
            "clustermesh-default-global-namespace",
            "clustermesh.defaultGlobalNamespace",
        );
    }
    data.qv(
        ctx,
        "policy-default-local-cluster",
        "clustermesh.policyDefaultLocalCluster",
    );
}

fn spire(ctx: &Ctx, data: &mut Data) -> Result<(), RenderError> {
    let spire = |p: &str| format!("authentication.mutual.spire.{p}");
    data.s("mesh-auth-mutual-enabled", "true");
    data.qv(
        ctx,
        "mesh-auth-mutual-listener-port",
        "authentication.mutual.port",
    );
    data.qv(
        ctx,
        "mesh-auth-spire-agent-socket",
        &spire("agentSocketPath"),
    );
    data.s(
        "mesh-auth-mutual-connect-timeout",
        duration(ctx, "authentication.mutual.connectTimeout")?,
    );
    if ctx.on(&spire("serverAddress")) {
        data.qv(
            ctx,
            "mesh-auth-spire-server-address",
            &spire("serverAddress"),
        );
    } else {
        let ns = txt(ctx.v(&spire("install.namespace")));
        data.put(
            "mesh-auth-spire-server-address",
            text::dquoted(
                ctx,
                &spire("install.namespace"),
                &format!("spire-server.{ns}.svc:8081"),
            )?,
        );
    }
    data.bare(
        ctx,
        "mesh-auth-spire-server-connection-timeout",
        &spire("connectionTimeout"),
    )?;
    data.qv(
        ctx,
        "mesh-auth-spire-admin-socket",
        &spire("adminSocketPath"),
    );
    data.qv(ctx, "mesh-auth-spiffe-trust-domain", &spire("trustDomain"));
    Ok(())
}

/// `extraConfig` entries go in last, as written, and override keys set above.
pub fn extra_config(ctx: &Ctx, data: &mut Data) -> Result<(), RenderError> {
    match ctx.v("extraConfig") {
        Value::Object(extra) => {
            for (k, v) in extra {
                data.put(k, v.clone());
            }
            Ok(())
        }
        other if truthy(other) => Err(ctx.invalid(
            "extraConfig",
            "must be a map of cilium-config keys to string values; the chart inserts it into the ConfigMap's data, where anything else is invalid YAML",
        )),
        _ => Ok(()),
    }
}
