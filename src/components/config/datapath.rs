//! Datapath keys: BPF maps and features, routing and tunnelling, cloud IPAM integrations, CNI
//! chaining, masquerading, encryption, and kube-proxy replacement / load balancing.

use crate::changes::Change;
use serde_json::Value;

use super::text::{self, duration, text as txt};
use super::{has, on, set, Data, Derived};
use crate::components::Ctx;
use crate::error::RenderError;
use crate::tmpl::{self, join, print, to_float64, to_int64, truthy};

/// BPF programs and map sizing, from the clock probe to map pre-allocation.
pub fn bpf(ctx: &Ctx, d: &Derived, data: &mut Data) -> Result<(), RenderError> {
    if has(ctx, "cni.customConf") {
        data.dq(ctx, "custom-cni-conf", "cni.customConf")?;
    }
    if has(ctx, "bpfClockProbe") {
        data.qv(ctx, "enable-bpf-clock-probe", "bpfClockProbe");
    } else if d.default_clock_probe {
        data.s("enable-bpf-clock-probe", "true");
    }
    data.qv_when(ctx, set, "enable-bpf-tproxy", "bpf.tproxy");
    data.bare(ctx, "monitor-aggregation", "bpf.monitorAggregation")?;
    data.s(
        "monitor-aggregation-interval",
        duration(ctx, "bpf.monitorInterval")?,
    );
    data.bare(ctx, "monitor-aggregation-flags", "bpf.monitorFlags")?;
    data.qv_set(
        ctx,
        &[
            (
                "bpf-events-default-rate-limit",
                "bpf.events.default.rateLimit",
            ),
            (
                "bpf-events-default-burst-limit",
                "bpf.events.default.burstLimit",
            ),
        ],
    );
    if to_float64(ctx.v("bpf.mapDynamicSizeRatio")) != 0.0 {
        data.qv(ctx, "bpf-map-dynamic-size-ratio", "bpf.mapDynamicSizeRatio");
    } else if d.default_map_ratio != 0.0 {
        data.s(
            "bpf-map-dynamic-size-ratio",
            crate::tmpl::go_g_float(d.default_map_ratio),
        );
    }
    if set(ctx, "bpf.hostLegacyRouting") {
        data.qv(ctx, "enable-host-legacy-routing", "bpf.hostLegacyRouting");
    } else if !d.chaining_is("none") {
        // The chained plugin owns connectivity, so BPF host routing cannot be used.
        data.s("enable-host-legacy-routing", "true");
    }
    data.qv_when(ctx, on, "bpf-node-map-max", "bpf.nodeMapMax");
    let int_text = |path: &str| to_int64(ctx.v(path)).to_string();
    if ctx.on("bpf.authMapMax") {
        data.s("bpf-auth-map-max", int_text("bpf.authMapMax"));
    }
    if truthy(&d.ct_tcp_max) {
        data.s("bpf-ct-global-tcp-max", to_int64(&d.ct_tcp_max).to_string());
    }
    if truthy(&d.ct_any_max) {
        data.s("bpf-ct-global-any-max", to_int64(&d.ct_any_max).to_string());
    }
    for (key, path) in [
        ("bpf-conntrack-accounting", "bpf.ctAccounting"),
        ("bpf-nat-global-max", "bpf.natMax"),
        ("bpf-neigh-global-max", "bpf.neighMax"),
    ] {
        if ctx.on(path) {
            data.s(key, int_text(path));
        }
    }
    if has(ctx, "bpf.policyMapMax") {
        data.s("bpf-policy-map-max", int_text("bpf.policyMapMax"));
    }
    if ctx.plan.has(Change::ConfigKeysAdded119)
        && ctx.v("bpf.policyMapPressureMetricsThreshold").is_number()
    {
        data.qv(
            ctx,
            "bpf-policy-map-pressure-metrics-threshold",
            "bpf.policyMapPressureMetricsThreshold",
        );
    }
    if ctx.plan.has(Change::EndpointPolicyUpdateTimeout)
        && ctx.on("endpointPolicyUpdateTimeoutDuration")
    {
        data.qv(
            ctx,
            "endpoint-policy-update-timeout",
            "endpointPolicyUpdateTimeoutDuration",
        );
    }
    for (key, path) in [
        ("bpf-policy-stats-map-max", "bpf.policyStatsMapMax"),
        ("bpf-lb-map-max", "bpf.lbMapMax"),
    ] {
        if has(ctx, path) {
            data.s(key, int_text(path));
        }
    }
    for (key, path) in [
        ("bpf-lb-external-clusterip", "bpf.lbExternalClusterIP"),
        ("bpf-lb-source-range-all-types", "bpf.lbSourceRangeAllTypes"),
        ("bpf-lb-algorithm-annotation", "bpf.lbAlgorithmAnnotation"),
        ("bpf-lb-mode-annotation", "bpf.lbModeAnnotation"),
    ] {
        if has(ctx, path) {
            data.qv(ctx, key, path);
        }
    }
    // Gateway API's weighted TCP/UDP routes need Maglev to honour the annotation.
    if gateway_api_forces_lb(ctx) {
        data.s("bpf-lb-algorithm-annotation", "true");
    }
    data.qv(ctx, "bpf-distributed-lru", "bpf.distributedLRU.enabled");
    data.qv(ctx, "bpf-events-drop-enabled", "bpf.events.drop.enabled");
    data.qv(
        ctx,
        "bpf-events-policy-verdict-enabled",
        "bpf.events.policyVerdict.enabled",
    );
    data.qv(ctx, "bpf-events-trace-enabled", "bpf.events.trace.enabled");
    data.dq(ctx, "preallocate-bpf-maps", "bpf.preallocateMaps")?;
    Ok(())
}

/// From 1.20 Gateway API forces the LB algorithm annotation and host-namespace-only socket LB.
fn gateway_api_forces_lb(ctx: &Ctx) -> bool {
    ctx.plan.has(Change::GatewayApiForcesLbAnnotations) && ctx.on("gatewayAPI.enabled")
}

/// Cluster identity, routing and tunnelling, cloud IPAM integrations and CNI chaining.
pub fn routing(ctx: &Ctx, d: &Derived, data: &mut Data) -> Result<(), RenderError> {
    data.qv(ctx, "cluster-name", "cluster.name");
    if has(ctx, "cluster.id") {
        data.dq(ctx, "cluster-id", "cluster.id")?;
    }
    let routing_mode = ctx.v("routingMode");
    let gke = ctx.on("gke.enabled");
    if gke {
        if truthy(routing_mode) && print(routing_mode) != "native" {
            return Err(ctx.invalid(
                "routingMode",
                "with gke.enabled=true the chart requires routingMode \"native\" (or leaving it unset)",
            ));
        }
        data.s("enable-endpoint-routes", "true");
    } else if ctx.on("aksbyocni.enabled") && truthy(routing_mode) && print(routing_mode) != "tunnel"
    {
        return Err(ctx.invalid(
            "routingMode",
            "with aksbyocni.enabled=true the chart requires routingMode \"tunnel\" (or leaving it unset)",
        ));
    }
    // From 1.19 ENI mode routes natively by default, as GKE does.
    let native_default =
        gke || (ctx.plan.has(Change::CloudNodeSpecConfig) && ctx.on("eni.enabled"));
    if truthy(routing_mode) {
        data.q("routing-mode", routing_mode);
    } else {
        data.s(
            "routing-mode",
            if native_default { "native" } else { "tunnel" },
        );
    }
    let tunnel = ctx.v("tunnelProtocol");
    if truthy(tunnel) {
        data.q("tunnel-protocol", tunnel);
    } else {
        data.s("tunnel-protocol", "vxlan");
    }
    if routing_mode.as_str() == Some("native") {
        native_routing_checks(ctx, d)?;
    }
    data.qv_set(
        ctx,
        &[
            ("tunnel-port", "tunnelPort"),
            ("tunnel-source-port-range", "tunnelSourcePortRange"),
            ("underlay-protocol", "underlayProtocol"),
        ],
    );
    if ctx.on("serviceNoBackendResponse") {
        data.dq(
            ctx,
            "service-no-backend-response",
            "serviceNoBackendResponse",
        )?;
    }
    if ctx.plan.has(Change::ConfigKeysAdded119) && ctx.on("policyDenyResponse") {
        data.dq(ctx, "policy-deny-response", "policyDenyResponse")?;
    }
    data.qv_when(ctx, on, "mtu", "MTU");
    eni(ctx, data);
    if ctx.on("azure.enabled") {
        data.s("enable-endpoint-routes", "true");
        data.s("auto-create-cilium-node-resource", "true");
        data.qv_when(
            ctx,
            on,
            "azure-user-assigned-identity-id",
            "azure.userAssignedIdentityID",
        );
        data.q("azure-use-primary-address", &d.azure_use_primary_address);
    }
    let node_spec = ctx.plan.has(Change::CloudNodeSpecConfig);
    if node_spec && ctx.on("azure.nodeSpec.azureInterfaceName") {
        data.qv(
            ctx,
            "azure-interface-name",
            "azure.nodeSpec.azureInterfaceName",
        );
    }
    if ctx.on("alibabacloud.enabled") {
        data.s("enable-endpoint-routes", "true");
        data.s("auto-create-cilium-node-resource", "true");
    }
    if node_spec {
        join_when_set(
            ctx,
            data,
            "alibabacloud.nodeSpec",
            &[
                ("alibabacloud-vswitches", "vSwitches"),
                ("alibabacloud-vswitch-tags", "vSwitchTags"),
                ("alibabacloud-security-groups", "securityGroups"),
                ("alibabacloud-security-group-tags", "securityGroupTags"),
            ],
        );
    }
    data.qv_when(ctx, has, "enable-l7-proxy", "l7Proxy");
    if ctx.plan.has(Change::StandaloneDnsProxyConfig) && ctx.on("standaloneDnsProxy.enabled") {
        data.qv(
            ctx,
            "enable-standalone-dns-proxy",
            "standaloneDnsProxy.enabled",
        );
        data.qv(
            ctx,
            "standalone-dns-proxy-server-port",
            "standaloneDnsProxy.serverPort",
        );
    }
    if !d.chaining_is("none") {
        data.put(
            "cni-chaining-mode",
            text::bare(ctx, "cni.chainingMode", &txt(&d.chaining))?,
        );
        data.qv_when(ctx, has, "enable-identity-mark", "enableIdentityMark");
        // Chained plugins route pod traffic themselves (portmap only adds host ports).
        if !d.chaining_is("portmap") {
            data.s("enable-local-node-route", "false");
        }
    }
    Ok(())
}

/// Each `(key, field)` of the map at `base` whose value is set, joined with commas.
fn join_when_set(ctx: &Ctx, data: &mut Data, base: &str, rows: &[(&str, &str)]) {
    for (key, field) in rows {
        let path = format!("{base}.{field}");
        if ctx.on(&path) {
            data.s(key, join(ctx.v(&path), ","));
        }
    }
}

/// Native routing with masquerading needs the CIDR that is routable without masquerading.
fn native_routing_checks(ctx: &Ctx, d: &Derived) -> Result<(), RenderError> {
    let agent_masq = ctx.on("ipMasqAgent.enabled");
    let cloud_ipam = matches!(d.ipam.as_str(), Some("eni" | "alibabacloud"));
    // From 1.20 the cluster pool itself can supply the CIDR.
    let from_pool = ctx.plan.has(Change::NativeRoutingCidrFromClusterPool)
        && d.ipam.as_str() == Some("cluster-pool")
        && ctx.on("nativeRoutingCIDRFromClusterPool");
    if ctx.on("ipv4.enabled")
        && ctx.on("enableIPv4Masquerade")
        && !agent_masq
        && !cloud_ipam
        && !ctx.on("ipv4NativeRoutingCIDR")
        && !from_pool
    {
        return Err(ctx.invalid(
            "ipv4NativeRoutingCIDR",
            "must be set when routingMode is native and IPv4 masquerading is on (or use ipMasqAgent, or set enableIPv4Masquerade: false)",
        ));
    }
    if ctx.on("ipv6.enabled")
        && ctx.on("enableIPv6Masquerade")
        && !agent_masq
        && !ctx.on("ipv6NativeRoutingCIDR")
        && !from_pool
    {
        return Err(ctx.invalid(
            "ipv6NativeRoutingCIDR",
            "must be set when routingMode is native and IPv6 masquerading is on (or use ipMasqAgent, or set enableIPv6Masquerade: false)",
        ));
    }
    Ok(())
}

/// AWS ENI mode; the garbage-collection keys are written even when ENI mode is off.
fn eni(ctx: &Ctx, data: &mut Data) {
    if ctx.on("eni.enabled") {
        if !ctx.on("endpointRoutes.enabled") {
            data.s("enable-endpoint-routes", "true");
        }
        data.s("auto-create-cilium-node-resource", "true");
        if ctx.on("eni.awsReleaseExcessIPs") {
            data.s("aws-release-excess-ips", "true");
        }
        if ctx.on("eni.awsEnablePrefixDelegation") {
            data.s("aws-enable-prefix-delegation", "true");
        }
        data.qv(ctx, "ec2-api-endpoint", "eni.ec2APIEndpoint");
        data.s("eni-tags", tmpl::to_raw_json(ctx.v("eni.eniTags")));
        if ctx.plan.has(Change::CloudNodeSpecConfig) && ctx.on("eni.nodeSpec") {
            eni_node_spec(ctx, data);
        }
        for (key, path, sep) in [
            ("subnet-ids-filter", "eni.subnetIDsFilter", " "),
            ("subnet-tags-filter", "eni.subnetTagsFilter", ","),
            ("instance-tags-filter", "eni.instanceTagsFilter", ","),
        ] {
            if ctx.on(path) {
                data.s(key, join(ctx.v(path), sep));
            }
        }
    }
    data.qv_when(ctx, on, "eni-gc-interval", "eni.gcInterval");
    if ctx.on("eni.gcTags") {
        data.s("eni-gc-tags", tmpl::to_raw_json(ctx.v("eni.gcTags")));
    }
}

/// The ENI node defaults the operator applies to every node.
fn eni_node_spec(ctx: &Ctx, data: &mut Data) {
    if set(ctx, "eni.nodeSpec.firstInterfaceIndex") {
        data.qv(
            ctx,
            "eni-first-interface-index",
            "eni.nodeSpec.firstInterfaceIndex",
        );
    }
    join_when_set(
        ctx,
        data,
        "eni.nodeSpec",
        &[
            ("eni-subnet-ids", "subnetIDs"),
            ("eni-subnet-tags", "subnetTags"),
            ("eni-security-groups", "securityGroups"),
            ("eni-security-group-tags", "securityGroupTags"),
            ("eni-exclude-interface-tags", "excludeInterfaceTags"),
        ],
    );
    for (key, field) in [
        ("eni-use-primary-address", "usePrimaryAddress"),
        ("eni-disable-prefix-delegation", "disablePrefixDelegation"),
    ] {
        if ctx.on(&format!("eni.nodeSpec.{field}")) {
            data.s(key, "true");
        }
    }
    if set(ctx, "eni.nodeSpec.deleteOnTermination") {
        data.qv(
            ctx,
            "eni-delete-on-termination",
            "eni.nodeSpec.deleteOnTermination",
        );
    }
}

/// Masquerading, TCX / datapath mode, encryption, iptables and direct routing.
pub fn masquerade_and_encryption(
    ctx: &Ctx,
    d: &Derived,
    data: &mut Data,
) -> Result<(), RenderError> {
    if set(ctx, "enableIPv4Masquerade") {
        data.qv(ctx, "enable-ipv4-masquerade", "enableIPv4Masquerade");
    } else {
        data.s("enable-ipv4-masquerade", d.default_ipv4_masquerade);
    }
    data.qv(ctx, "enable-ipv4-big-tcp", "enableIPv4BIGTCP");
    data.qv(ctx, "enable-ipv6-big-tcp", "enableIPv6BIGTCP");
    data.qv(ctx, "enable-ipv6-masquerade", "enableIPv6Masquerade");
    if ctx.plan.has(Change::TunnelBigTcp) {
        data.qv(ctx, "enable-tunnel-big-tcp", "enableTunnelBIGTCP");
    }
    data.qv_when(ctx, has, "enable-tcx", "bpf.enableTCX");
    data.qv_when(ctx, has, "datapath-mode", "bpf.datapathMode");
    if set(ctx, "bpf.masquerade") {
        data.qv(ctx, "enable-bpf-masquerade", "bpf.masquerade");
    } else if d.default_bpf_masquerade {
        data.s("enable-bpf-masquerade", "true");
    }
    data.qv(
        ctx,
        "enable-masquerade-to-route-source",
        "enableMasqueradeRouteSource",
    );
    if has(ctx, "egressMasqueradeInterfaces") {
        data.bare(
            ctx,
            "egress-masquerade-interfaces",
            "egressMasqueradeInterfaces",
        )?;
    }
    if ctx.on("ipMasqAgent") && ctx.on("ipMasqAgent.enabled") {
        data.s("enable-ip-masq-agent", "true");
    }
    if ctx.on("encryption.enabled") {
        encryption(ctx, data)?;
    }
    strict_mode(ctx, data);
    data.qv(ctx, "enable-xt-socket-fallback", "enableXTSocketFallback");
    // Managed and chained setups keep conntrack for pod traffic.
    if ctx.on("azure.enabled")
        || ctx.on("eni.enabled")
        || ctx.on("gke.enabled")
        || !d.chaining_is("none")
    {
        data.s("install-no-conntrack-iptables-rules", "false");
    } else {
        data.qv(
            ctx,
            "install-no-conntrack-iptables-rules",
            "installNoConntrackIptablesRules",
        );
    }
    for (key, path) in [
        ("iptables-random-fully", "iptablesRandomFully"),
        ("iptables-lock-timeout", "iptablesLockTimeout"),
    ] {
        if has(ctx, path) {
            data.qv(ctx, key, path);
        }
    }
    data.qv(ctx, "auto-direct-node-routes", "autoDirectNodeRoutes");
    data.qv(
        ctx,
        "direct-routing-skip-unreachable",
        "directRoutingSkipUnreachable",
    );
    Ok(())
}

/// Encryption strict mode. Before 1.19 one direction with its own key names; 1.19 split it into
/// ingress and egress and fed the old settings to the egress keys (later `egress` settings
/// win), and 1.20 dropped the old settings.
fn strict_mode(ctx: &Ctx, data: &mut Data) {
    let sm = |p: &str| format!("encryption.strictMode.{p}");
    if !ctx.plan.has(Change::StrictModeDirections) {
        if ctx.on(&sm("enabled")) {
            data.qv(ctx, "enable-encryption-strict-mode", &sm("enabled"));
            data.qv(ctx, "encryption-strict-mode-cidr", &sm("cidr"));
            data.qv(
                ctx,
                "encryption-strict-mode-allow-remote-node-identities",
                &sm("allowRemoteNodeIdentities"),
            );
        }
        return;
    }
    let egress_keys = |data: &mut Data, prefix: &str| {
        data.qv(
            ctx,
            "enable-encryption-strict-mode-egress",
            &sm(&format!("{prefix}enabled")),
        );
        data.qv(
            ctx,
            "encryption-strict-egress-cidr",
            &sm(&format!("{prefix}cidr")),
        );
        data.qv(
            ctx,
            "encryption-strict-egress-allow-remote-node-identities",
            &sm(&format!("{prefix}allowRemoteNodeIdentities")),
        );
    };
    if !ctx.plan.has(Change::ConfigKeysRetired120) && ctx.on(&sm("enabled")) {
        egress_keys(data, "");
    }
    if ctx.on(&sm("ingress.enabled")) {
        data.qv(
            ctx,
            "enable-encryption-strict-mode-ingress",
            &sm("ingress.enabled"),
        );
    }
    if ctx.on(&sm("egress.enabled")) {
        egress_keys(data, "egress.");
    }
}

/// IPsec or WireGuard, and node-to-node encryption.
fn encryption(ctx: &Ctx, data: &mut Data) -> Result<(), RenderError> {
    match ctx.v("encryption.type").as_str() {
        Some("ipsec") => {
            data.qv(ctx, "enable-ipsec", "encryption.enabled");
            if ctx.on("encryption.ipsec.mountPath") && ctx.on("encryption.ipsec.keyFile") {
                let file = format!(
                    "{}/{}",
                    txt(ctx.v("encryption.ipsec.mountPath")),
                    txt(ctx.v("encryption.ipsec.keyFile"))
                );
                data.put(
                    "ipsec-key-file",
                    text::bare(ctx, "encryption.ipsec.keyFile", &file)?,
                );
            }
            let retired = ctx.plan.has(Change::ConfigKeysRetired120);
            if !retired && ctx.on("encryption.ipsec.interface") {
                data.bare(ctx, "encrypt-interface", "encryption.ipsec.interface")?;
            }
            data.qv_when(
                ctx,
                has,
                "enable-ipsec-key-watcher",
                "encryption.ipsec.keyWatcher",
            );
            if ctx.on("encryption.ipsec.keyRotationDuration") {
                data.s(
                    "ipsec-key-rotation-duration",
                    duration(ctx, "encryption.ipsec.keyRotationDuration")?,
                );
            }
            if !retired {
                data.qv(
                    ctx,
                    "enable-ipsec-encrypted-overlay",
                    "encryption.ipsec.encryptedOverlay",
                );
            }
        }
        Some("wireguard") => {
            data.qv(ctx, "enable-wireguard", "encryption.enabled");
            data.qv_when(
                ctx,
                on,
                "wireguard-persistent-keepalive",
                "encryption.wireguard.persistentKeepalive",
            );
        }
        Some("ztunnel") if ctx.plan.has(Change::ZtunnelEncryption) => {
            data.qv(ctx, "enable-ztunnel", "encryption.enabled");
            if ctx.plan.has(Change::ConfigKeysAdded120) {
                data.qv(ctx, "ztunnel-ca-type", "encryption.ztunnel.ca.type");
            }
        }
        _ => {}
    }
    data.qv_when(ctx, on, "encrypt-node", "encryption.nodeEncryption");
    Ok(())
}

/// Bandwidth manager, local redirect policies, native-routing CIDRs, kube-proxy replacement,
/// socket LB, NodePort and the BPF load balancer.
pub fn services(ctx: &Ctx, d: &Derived, data: &mut Data) -> Result<(), RenderError> {
    if ctx.on("bandwidthManager.enabled") {
        data.qv(ctx, "enable-bandwidth-manager", "bandwidthManager.enabled");
        data.qv(ctx, "enable-bbr", "bandwidthManager.bbr");
        data.qv(
            ctx,
            "enable-bbr-hostns-only",
            "bandwidthManager.bbrHostNamespaceOnly",
        );
    }
    if ctx.on("localRedirectPolicies.enabled") || ctx.on("localRedirectPolicy") {
        data.s("enable-local-redirect-policy", "true");
    }
    if ctx.on("localRedirectPolicies.addressMatcherCIDRs") {
        data.s(
            "lrp-address-matcher-cidrs",
            join(ctx.v("localRedirectPolicies.addressMatcherCIDRs"), ","),
        );
    }
    for (key, path) in [
        ("ipv4-native-routing-cidr", "ipv4NativeRoutingCIDR"),
        ("ipv6-native-routing-cidr", "ipv6NativeRoutingCIDR"),
    ] {
        if ctx.on(path) {
            data.bare(ctx, key, path)?;
        }
    }
    data.qv_when(
        ctx,
        has,
        "enable-ipv4-fragment-tracking",
        "fragmentTracking",
    );
    data.qv_when(
        ctx,
        on,
        "enable-nat46x64-gateway",
        "nat46x64Gateway.enabled",
    );
    if ctx.plan.has(Change::HostFirewallAlwaysWritten) {
        ctx.map_read_below("hostFirewall", "enabled")?;
        data.qv(ctx, "enable-host-firewall", "hostFirewall.enabled");
    } else if ctx.on("hostFirewall") && ctx.on("hostFirewall.enabled") {
        data.qv(ctx, "enable-host-firewall", "hostFirewall.enabled");
    }
    if has(ctx, "devices") {
        data.s("devices", join(ctx.v("devices"), " "));
    }
    if ctx.on("forceDeviceDetection") {
        data.s("force-device-detection", "true");
    }
    let kpr = d.kube_proxy_replacement.as_str();
    data.s("kube-proxy-replacement", kpr);
    if kpr == "true" {
        // `default ""`: any empty value prints as an empty string.
        let addr = ctx.v("kubeProxyReplacementHealthzBindAddr");
        let addr = if truthy(addr) {
            print(addr)
        } else {
            String::new()
        };
        data.s("kube-proxy-replacement-healthz-bind-address", addr);
    }
    if ctx.plan.has(Change::ConfigKeysAdded119) {
        data.qv_when(
            ctx,
            has,
            "enable-no-service-endpoints-routable",
            "enableNoServiceEndpointsRoutable",
        );
    }
    socket_lb(&d.socket_lb, gateway_api_forces_lb(ctx), data);
    if has(ctx, "nodePort") {
        node_port(ctx, kpr, data);
    }
    if has(ctx, "loadBalancer") {
        load_balancer(ctx, data)?;
    }
    data.qv_each(
        ctx,
        &[
            (has, "bpf-lb-maglev-table-size", "maglev.tableSize"),
            (has, "bpf-lb-maglev-hash-seed", "maglev.hashSeed"),
        ],
    );
    if ctx.plan.has(Change::ConfigKeysAdded119) {
        data.qv_when(
            ctx,
            on,
            "ip-tracing-option-type",
            "bpf.monitorTraceIPOption",
        );
    }
    if !ctx.plan.has(Change::ConfigKeysRetired119) {
        data.qv_each(
            ctx,
            &[
                (on, "enable-session-affinity", "sessionAffinity"),
                (on, "enable-svc-source-range-check", "svcSourceRangeCheck"),
            ],
        );
    }
    data.qv_when(
        ctx,
        has,
        "enable-l2-neigh-discovery",
        "l2NeighDiscovery.enabled",
    );
    Ok(())
}

/// `socketLB` (or its old name `hostServices`); Gateway API may force host-namespace-only
/// socket LB, though only when a socket LB block is given at all.
fn socket_lb(socket_lb: &Value, force_host_ns_only: bool, data: &mut Data) {
    for (key, field) in [
        ("bpf-lb-sock", "enabled"),
        ("bpf-lb-sock-hostns-only", "hostNamespaceOnly"),
        (
            "bpf-lb-sock-terminate-pod-connections",
            "terminatePodConnections",
        ),
        ("trace-sock", "tracing"),
    ] {
        let v = &socket_lb[field];
        if field == "hostNamespaceOnly" && force_host_ns_only && truthy(socket_lb) {
            data.s(key, "true");
        } else if !v.is_null() {
            data.q(key, v);
        }
    }
}

fn node_port(ctx: &Ctx, kpr: &str, data: &mut Data) {
    if kpr == "false" && !ctx.plan.has(Change::ConfigKeysRetired119) {
        data.qv(ctx, "enable-node-port", "nodePort.enabled");
    }
    data.qv_when(ctx, has, "node-port-range", "nodePort.range");
    if has(ctx, "nodePort.addresses") {
        data.s("nodeport-addresses", join(ctx.v("nodePort.addresses"), ","));
    }
    data.qv_when(
        ctx,
        has,
        "direct-routing-device",
        "nodePort.directRoutingDevice",
    );
    data.qv_when(
        ctx,
        has,
        "enable-health-check-nodeport",
        "nodePort.enableHealthCheck",
    );
    if ctx.plan.has(Change::ConfigKeysAdded120) {
        data.qv_when(
            ctx,
            has,
            "enable-dynamic-source-lookup-nodeport",
            "nodePort.enableDynamicSourceLookup",
        );
    }
    if ctx.on("gke.enabled") {
        data.s("enable-health-check-loadbalancer-ip", "true");
    } else {
        data.qv_when(
            ctx,
            has,
            "enable-health-check-loadbalancer-ip",
            "nodePort.enableHealthCheckLoadBalancerIP",
        );
    }
    data.qv(ctx, "node-port-bind-protection", "nodePort.bindProtection");
    data.qv(
        ctx,
        "enable-auto-protect-node-port-range",
        "nodePort.autoProtectPortRange",
    );
}

fn load_balancer(ctx: &Ctx, data: &mut Data) -> Result<(), RenderError> {
    if !ctx.plan.has(Change::LbOnlyAndL2InterfaceRetired) {
        data.qv_when(ctx, on, "bpf-lb-only", "loadBalancer.standalone");
    }
    for (key, path) in [
        ("bpf-lb-mode", "loadBalancer.mode"),
        ("bpf-lb-algorithm", "loadBalancer.algorithm"),
        ("bpf-lb-acceleration", "loadBalancer.acceleration"),
        ("bpf-lb-dsr-dispatch", "loadBalancer.dsrDispatch"),
        ("enable-service-topology", "loadBalancer.serviceTopology"),
    ] {
        if has(ctx, path) {
            data.qv(ctx, key, path);
        }
    }
    if ctx.plan.has(Change::ConfigKeysAdded120) {
        data.qv_when(
            ctx,
            has,
            "lb-reflector-wait-time",
            "loadBalancer.reflectorWaitTime",
        );
    }
    if !ctx.plan.has(Change::ConfigKeysRetired119)
        && has(ctx, "loadBalancer.protocolDifferentiation")
    {
        // `hasKey` passes a null the user wrote (1.18 has no default here); `.enabled` below
        // it does not.
        ctx.map_read_below("loadBalancer.protocolDifferentiation", "enabled")?;
        data.qv(
            ctx,
            "bpf-lb-proto-diff",
            "loadBalancer.protocolDifferentiation.enabled",
        );
    }
    Ok(())
}
