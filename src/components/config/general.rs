//! Agent-wide keys: kvstore, identities, debugging and metrics, Envoy-backed features and their
//! secrets, address families, and the node/CNI settings.

use crate::changes::Change;
use serde_json::Value;

use super::text::{self, dquoted, duration, folded, text as txt};
use super::{has, on, set, Data, Derived};
use crate::components::Ctx;
use crate::error::RenderError;
use crate::tmpl::{self, join, map_to_string, to_int64, truthy};

/// From the kvstore through the Prometheus settings.
pub fn identity_and_agent(ctx: &Ctx, _d: &Derived, data: &mut Data) -> Result<(), RenderError> {
    if ctx.on("etcd.enabled") {
        data.s("kvstore", "etcd");
        data.s(
            "kvstore-opt",
            r#"{"etcd.config": "/var/lib/etcd-config/etcd.config"}"#,
        );
        data.s("etcd-config", etcd_config(ctx));
    }
    for (key, path) in [
        ("conntrack-gc-interval", "conntrackGCInterval"),
        ("conntrack-gc-max-interval", "conntrackGCMaxInterval"),
    ] {
        if ctx.on(path) {
            data.s(key, duration(ctx, path)?);
        }
    }
    data.qv_when(
        ctx,
        has,
        "disable-envoy-version-check",
        "disableEnvoyVersionCheck",
    );
    data.bare(ctx, "identity-allocation-mode", "identityAllocationMode")?;
    for (key, path) in [
        (
            "identity-heartbeat-timeout",
            "operator.identityHeartbeatTimeout",
        ),
        ("identity-gc-interval", "operator.identityGCInterval"),
        ("cilium-endpoint-gc-interval", "operator.endpointGCInterval"),
        ("nodes-gc-interval", "operator.nodeGCInterval"),
    ] {
        data.s(key, duration(ctx, path)?);
    }
    if ctx.v("disableEndpointCRD") == &Value::Bool(true) {
        data.s("disable-endpoint-crd", "true");
    }
    if ctx.on("identityChangeGracePeriod") {
        data.s(
            "identity-change-grace-period",
            duration(ctx, "identityChangeGracePeriod")?,
        );
    }
    data.qv_when(ctx, has, "labels", "labels");
    data.qv(ctx, "debug", "debug.enabled");
    if has(ctx, "debug.verbose") {
        data.dq(ctx, "debug-verbose", "debug.verbose")?;
    }
    if has(ctx, "debug.metricsSamplingInterval") {
        data.dq(
            ctx,
            "metrics-sampling-interval",
            "debug.metricsSamplingInterval",
        )?;
    }
    if to_int64(ctx.v("healthPort")) != 9879 {
        data.dq(ctx, "agent-health-port", "healthPort")?;
    }
    if has(ctx, "clusterHealthPort") {
        data.dq(ctx, "cluster-health-port", "clusterHealthPort")?;
    }
    if has(ctx, "policyEnforcementMode") {
        let mode = txt(ctx.v("policyEnforcementMode")).to_lowercase();
        data.put(
            "enable-policy",
            dquoted(ctx, "policyEnforcementMode", &mode)?,
        );
    }
    if has(ctx, "policyCIDRMatchMode") {
        data.s(
            "policy-cidr-match-mode",
            join(ctx.v("policyCIDRMatchMode"), " "),
        );
    }
    if ctx.on("prometheus.enabled") {
        let port = txt(ctx.v("prometheus.port"));
        data.put(
            "prometheus-serve-addr",
            dquoted(ctx, "prometheus.port", &format!(":{port}"))?,
        );
        for (key, path) in [
            ("metrics", "prometheus.metrics"),
            (
                "controller-group-metrics",
                "prometheus.controllerGroupMetrics",
            ),
        ] {
            if ctx.on(path) {
                data.put(key, folded(ctx, path, ctx.v(path))?);
            }
        }
    }
    Ok(())
}

/// The `etcd-config` file: the endpoints, and the client certificate paths with TLS.
fn etcd_config(ctx: &Ctx) -> String {
    let mut s = String::from("---\nendpoints:");
    if let Value::Array(endpoints) = ctx.v("etcd.endpoints") {
        for e in endpoints {
            s.push_str("\n  - ");
            s.push_str(&txt(e));
        }
    }
    if ctx.on("etcd.ssl") {
        s.push_str("\ntrusted-ca-file: '/var/lib/etcd-secrets/etcd-client-ca.crt'");
        s.push_str("\nkey-file: '/var/lib/etcd-secrets/etcd-client.key'");
        s.push_str("\ncert-file: '/var/lib/etcd-secrets/etcd-client.crt'");
    }
    s
}

/// Envoy metrics and admin ports, operator metrics, Envoy config / Ingress / Gateway API,
/// policy secrets, L7 load balancing, address families and state cleaning.
pub fn proxies_and_secrets(ctx: &Ctx, d: &Derived, data: &mut Data) -> Result<(), RenderError> {
    // With the standalone Envoy DaemonSet these ports live in its own config instead.
    if !d.envoy_ds() {
        if ctx.on("envoy.prometheus.enabled") {
            data.dq(ctx, "proxy-prometheus-port", "envoy.prometheus.port")?;
        }
        if ctx.on("envoy.debug.admin.enabled") && ctx.on("envoy.debug.admin.port") {
            data.dq(ctx, "proxy-admin-port", "envoy.debug.admin.port")?;
        }
    }
    if ctx.on("operator.prometheus.enabled") {
        let port = txt(ctx.v("operator.prometheus.port"));
        data.put(
            "operator-prometheus-serve-addr",
            dquoted(ctx, "operator.prometheus.port", &format!(":{port}"))?,
        );
        data.s("enable-metrics", "true");
    }
    if ctx.plan.has(Change::OperatorPrometheusTlsConfig)
        && ctx.on("operator.prometheus.enabled")
        && ctx.on("operator.prometheus.tls.enabled")
    {
        let dir = "/var/lib/cilium/tls/prometheus";
        data.s("operator-prometheus-enable-tls", "true");
        data.s(
            "operator-prometheus-tls-cert-file",
            format!("{dir}/server.crt"),
        );
        data.s(
            "operator-prometheus-tls-key-file",
            format!("{dir}/server.key"),
        );
        if ctx.on("operator.prometheus.tls.server.mtls.enabled") {
            data.s(
                "operator-prometheus-tls-client-ca-files",
                format!("{dir}/client-ca.crt"),
            );
        }
    }
    if ctx.on("operator.skipCRDCreation") {
        data.s("skip-crd-creation", "true");
    }
    let l7_envoy =
        has(ctx, "loadBalancer") && ctx.v("loadBalancer.l7.backend").as_str() == Some("envoy");
    if ctx.on("envoyConfig.enabled")
        || ctx.on("ingressController.enabled")
        || ctx.on("gatewayAPI.enabled")
        || l7_envoy
    {
        data.s("enable-envoy-config", "true");
        data.s(
            "envoy-config-retry-interval",
            duration(ctx, "envoyConfig.retryInterval")?,
        );
        if ctx.on("envoyConfig.enabled") {
            data.qv(
                ctx,
                "envoy-secrets-namespace",
                "envoyConfig.secretsNamespace.name",
            );
        }
    }
    if ctx.on("ingressController.enabled") {
        ingress(ctx, data)?;
    }
    if ctx.on("gatewayAPI.enabled") {
        gateway_api(ctx, data);
    }
    if d.read_secrets_only && d.secret_sync {
        data.s("enable-policy-secrets-sync", "true");
    }
    if d.read_secrets_only {
        data.s("policy-secrets-only-from-secrets-namespace", "true");
        data.qv(ctx, "policy-secrets-namespace", "tls.secretsNamespace.name");
    }
    if l7_envoy {
        data.s("loadbalancer-l7", "envoy");
        data.s(
            "loadbalancer-l7-ports",
            join(ctx.v("loadBalancer.l7.ports"), " "),
        );
        data.qv(
            ctx,
            "loadbalancer-l7-algorithm",
            "loadBalancer.l7.algorithm",
        );
    }
    data.qv(ctx, "enable-ipv4", "ipv4.enabled");
    data.qv(ctx, "enable-ipv6", "ipv6.enabled");
    if ctx.plan.has(Change::ConfigKeysAdded120) && prefer_ipv6(ctx)? {
        data.s("prefer-ipv6", "true");
    }
    if ctx.on("cleanState") {
        data.s("clean-cilium-state", "true");
    }
    if ctx.on("cleanBpfState") {
        data.s("clean-cilium-bpf-state", "true");
    }
    Ok(())
}

/// `eq .Values.preferIpv6 true`: only the boolean true counts, and Go refuses to compare any
/// other set value with a boolean.
pub(super) fn prefer_ipv6(ctx: &Ctx) -> Result<bool, RenderError> {
    match ctx.v("preferIpv6") {
        Value::Bool(b) => Ok(*b),
        Value::Null => Ok(false),
        _ => Err(ctx.invalid("preferIpv6", "must be true or false")),
    }
}

fn ingress(ctx: &Ctx, data: &mut Data) -> Result<(), RenderError> {
    let ic = |p: &str| format!("ingressController.{p}");
    data.s("enable-ingress-controller", "true");
    data.qv(ctx, "enforce-ingress-https", &ic("enforceHttps"));
    data.qv(
        ctx,
        "enable-ingress-proxy-protocol",
        &ic("enableProxyProtocol"),
    );
    data.qv(
        ctx,
        "enable-ingress-secrets-sync",
        &ic("secretsNamespace.sync"),
    );
    data.qv(
        ctx,
        "ingress-secrets-namespace",
        &ic("secretsNamespace.name"),
    );
    data.s(
        "ingress-lb-annotation-prefixes",
        join(ctx.v(&ic("ingressLBAnnotationPrefixes")), " "),
    );
    data.bare(ctx, "ingress-default-lb-mode", &ic("loadbalancerMode"))?;
    data.bare(ctx, "ingress-shared-lb-service-name", &ic("service.name"))?;
    if ctx.plan.has(Change::ConfigKeysAdded120) {
        data.qv(
            ctx,
            "ingress-default-xff-num-trusted-hops",
            &ic("xffNumTrustedHops"),
        );
        data.qv(ctx, "ingress-use-remote-address", &ic("useRemoteAddress"));
    }
    if ctx.on(&ic("defaultSecretNamespace")) && ctx.on(&ic("defaultSecretName")) {
        data.qv(
            ctx,
            "ingress-default-secret-namespace",
            &ic("defaultSecretNamespace"),
        );
        data.qv(ctx, "ingress-default-secret-name", &ic("defaultSecretName"));
    }
    data.qv(
        ctx,
        "ingress-hostnetwork-enabled",
        &ic("hostNetwork.enabled"),
    );
    data.qv(
        ctx,
        "ingress-hostnetwork-shared-listener-port",
        &ic("hostNetwork.sharedListenerPort"),
    );
    if ctx.plan.has(Change::ConfigKeysAdded120) {
        for (key, field) in [
            ("ingress-hostnetwork-http-listener-port", "httpPort"),
            ("ingress-hostnetwork-https-listener-port", "httpsPort"),
            (
                "ingress-hostnetwork-tls-passthrough-listener-port",
                "tlsPassthroughPort",
            ),
        ] {
            data.qv(ctx, key, &ic(&format!("hostNetwork.{field}")));
        }
    }
    data.s(
        "ingress-hostnetwork-nodelabelselector",
        map_to_string(ctx.v(&ic("hostNetwork.nodes.matchLabels"))),
    );
    Ok(())
}

fn gateway_api(ctx: &Ctx, data: &mut Data) {
    let gw = |p: &str| format!("gatewayAPI.{p}");
    data.s("enable-gateway-api", "true");
    data.qv(
        ctx,
        "enable-gateway-api-secrets-sync",
        &gw("secretsNamespace.sync"),
    );
    data.qv(
        ctx,
        "enable-gateway-api-proxy-protocol",
        &gw("enableProxyProtocol"),
    );
    // Go's `or` yields the first true operand, else the last one.
    let app = ctx.v(&gw("enableAppProtocol"));
    let alpn = ctx.v(&gw("enableAlpn"));
    data.q(
        "enable-gateway-api-app-protocol",
        if truthy(app) { app } else { alpn },
    );
    data.q("enable-gateway-api-alpn", alpn);
    data.qv(
        ctx,
        "gateway-api-xff-num-trusted-hops",
        &gw("xffNumTrustedHops"),
    );
    if ctx.plan.has(Change::ConfigKeysAdded120) {
        data.qv(
            ctx,
            "gateway-api-use-remote-address",
            &gw("useRemoteAddress"),
        );
    }
    data.qv(
        ctx,
        "gateway-api-service-externaltrafficpolicy",
        &gw("externalTrafficPolicy"),
    );
    data.qv(
        ctx,
        "gateway-api-secrets-namespace",
        &gw("secretsNamespace.name"),
    );
    data.qv(
        ctx,
        "gateway-api-hostnetwork-enabled",
        &gw("hostNetwork.enabled"),
    );
    data.s(
        "gateway-api-hostnetwork-nodelabelselector",
        map_to_string(ctx.v(&gw("hostNetwork.nodes.matchLabels"))),
    );
}

/// pprof, logging, Kubernetes client options, endpoint routes, the CNI configuration file,
/// health checking and node labels.
pub fn node_and_cni(ctx: &Ctx, d: &Derived, data: &mut Data) -> Result<(), RenderError> {
    for (prefix, path) in [("pprof", "pprof"), ("operator-pprof", "operator.pprof")] {
        if ctx.on(&format!("{path}.enabled")) {
            data.qv(ctx, prefix, &format!("{path}.enabled"));
            data.qv(
                ctx,
                &format!("{prefix}-address"),
                &format!("{path}.address"),
            );
            data.qv(ctx, &format!("{prefix}-port"), &format!("{path}.port"));
            if ctx.plan.has(Change::ConfigKeysAdded119) {
                for (key, field) in [
                    ("mutex-profile-fraction", "mutexProfileFraction"),
                    ("block-profile-rate", "blockProfileRate"),
                ] {
                    data.qv(ctx, &format!("{prefix}-{key}"), &format!("{path}.{field}"));
                }
            }
        }
    }
    data.qv_when(ctx, on, "log-system-load", "logSystemLoad");
    if ctx.on("logOptions") {
        data.s("log-opt", tmpl::to_json(ctx.v("logOptions")));
    }
    for (key, path) in [
        ("k8s-require-ipv4-pod-cidr", "k8s.requireIPv4PodCIDR"),
        ("k8s-require-ipv6-pod-cidr", "k8s.requireIPv6PodCIDR"),
        ("k8s-api-server-urls", "k8s.apiServerURLs"),
    ] {
        if has(ctx, path) {
            data.qv(ctx, key, path);
        }
    }
    if ctx.on("endpointRoutes") && ctx.on("endpointRoutes.enabled") {
        data.qv(ctx, "enable-endpoint-routes", "endpointRoutes.enabled");
    }
    // A true `ipam.installUplinkRoutesForDelegatedIPAM` implies a non-empty `ipam`; testing only
    // the leaf spares building the merged `ipam` map.
    data.qv_when(
        ctx,
        on,
        "install-uplink-routes-for-delegated-ipam",
        "ipam.installUplinkRoutesForDelegatedIPAM",
    );
    data.qv_when(
        ctx,
        has,
        "enable-k8s-networkpolicy",
        "k8sNetworkPolicy.enabled",
    );
    if ctx.plan.has(Change::ClusterNetworkPolicy) && ctx.on("k8sClusterNetworkPolicy.enabled") {
        data.s("enable-k8s-cluster-network-policy", "true");
    }
    data.qv(
        ctx,
        "enable-endpoint-lockdown-on-policy-overflow",
        "endpointLockdownOnMapOverflow",
    );
    cni_files(ctx, d, data)?;
    data.qv_when(ctx, on, "k8s-kubeconfig-path", "kubeConfigPath");
    // Other chained plugins own connectivity, so endpoint health checks would fail.
    let health = ctx.on("endpointHealthChecking.enabled")
        && (d.chaining_is("portmap") || d.chaining_is("none"));
    data.s("enable-endpoint-health-checking", health.to_string());
    data.qv_when(ctx, has, "enable-health-checking", "healthChecking");
    data.qv_when(
        ctx,
        on,
        "health-check-icmp-failure-threshold",
        "healthCheckICMPFailureThreshold",
    );
    data.s(
        "enable-well-known-identities",
        ctx.on("wellKnownIdentities.enabled").to_string(),
    );
    data.qv(ctx, "enable-node-selector-labels", "nodeSelectorLabels");
    for (key, path) in [
        ("node-labels", "nodeLabels"),
        ("synchronize-k8s-nodes", "synchronizeK8sNodes"),
        ("policy-audit-mode", "policyAuditMode"),
    ] {
        if has(ctx, path) {
            data.qv(ctx, key, path);
        }
    }
    if d.operator_api_addr != "localhost:9234" {
        data.s("operator-api-serve-addr", d.operator_api_addr);
    }
    Ok(())
}

/// Where the agent reads and writes its CNI configuration, and chaining details.
fn cni_files(ctx: &Ctx, _d: &Derived, data: &mut Data) -> Result<(), RenderError> {
    let write_path = || {
        format!(
            "{}/05-cilium.conflist",
            txt(ctx.v("cni.hostConfDirMountPath"))
        )
    };
    if ctx.on("cni.configMap") {
        let read = format!(
            "{}/{}",
            txt(ctx.v("cni.confFileMountPath")),
            txt(ctx.v("cni.configMapKey"))
        );
        data.put("read-cni-conf", text::bare(ctx, "cni.configMapKey", &read)?);
        if ctx.on("cni.customConf") {
            data.put(
                "write-cni-conf-when-ready",
                text::bare(ctx, "cni.hostConfDirMountPath", &write_path())?,
            );
        }
    } else if ctx.on("cni.readCniConf") {
        data.bare(ctx, "read-cni-conf", "cni.readCniConf")?;
    }
    if !ctx.on("cni.customConf") && ctx.on("cni.install") {
        data.put(
            "write-cni-conf-when-ready",
            text::bare(ctx, "cni.hostConfDirMountPath", &write_path())?,
        );
        data.qv(ctx, "cni-exclusive", "cni.exclusive");
        data.qv(ctx, "cni-log-file", "cni.logFile");
    }
    data.qv_each(
        ctx,
        &[
            (on, "cni-uninstall", "cni.uninstall"),
            (set, "cni-chaining-target", "cni.chainingTarget"),
            (set, "cni-external-routing", "cni.externalRouting"),
            (
                on,
                "enable-route-mtu-for-cni-chaining",
                "cni.enableRouteMTUForCNIChaining",
            ),
        ],
    );
    Ok(())
}
