//! The Envoy bootstrap configuration the chart ships (its `files/cilium-envoy/configmap/`),
//! built from the values with the JSON key names and structure of Envoy's v3 bootstrap API.

use serde_json::{Map, Value};

use super::{node_locality, xds_mode_is_ads};
use crate::changes::Change;
use crate::components::common::put;
use crate::components::Ctx;
use crate::error::RenderError;
use crate::tmpl::{bare, quote};

const HCM: &str =
    "type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager";
const HTTP_OPTIONS: &str =
    "type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions";
const HTTP_OPTIONS_KEY: &str = "envoy.extensions.upstreams.http.v3.HttpProtocolOptions";
const XDS_CLUSTER: &str = "xds-grpc-cilium";
/// The EDS cluster Envoy uses as its own locality for zone-aware load balancing.
const LOCALITY_CLUSTER: &str = "/cilium-locality-cluster";

/// A value the chart prints inside a double-quoted YAML string of the bootstrap; quotes,
/// backslashes and line breaks would change how that YAML reads, so they are refused.
fn inline(ctx: &Ctx, path: &str) -> Result<String, RenderError> {
    let s = quote(ctx.v(path));
    if s.contains(['"', '\\', '\n', '\r']) {
        return Err(ctx.invalid(
            path,
            "must not contain double quotes, backslashes or line breaks (the chart embeds it in a quoted YAML string of the Envoy bootstrap)",
        ));
    }
    Ok(s)
}

struct Listener<'a> {
    name: &'a str,
    /// Address with IPv4 on, address without, and the extra IPv6 address in dual stack.
    v4: &'a str,
    v6: &'a str,
    dual: &'a str,
    port: Value,
    /// The prometheus listener spells its route key in camel case, the others in snake case.
    hosts_key: &'a str,
    route: &'a str,
    prefix: &'a str,
    rewrite: &'a str,
}

/// The bootstrap as the chart's `fromYaml | toJson` sees it.
pub(super) fn bootstrap(ctx: &Ctx) -> Result<Value, RenderError> {
    // The chart resolves the xDS mode first, so a bad `upgradeCompatibility` fails here too.
    let ads = ctx.plan.has(Change::EnvoyXdsMode) && xds_mode_is_ads(ctx)?;
    let connect = format!("{}s", inline(ctx, "envoy.connectTimeoutSeconds")?);
    let mut out = tree!({
        "node": tree!({"id": "host~127.0.0.1~no-id~localdomain", "cluster": "ingress-cluster"}),
        "staticResources": tree!({"listeners": listeners(ctx)?, "clusters": clusters(ctx, &connect, ads)?}),
        "dynamicResources": dynamic_resources(ctx, ads)?,
        "bootstrapExtensions": tree!([{
            "name": "envoy.bootstrap.internal_listener",
            "typedConfig": {"@type": "type.googleapis.com/envoy.extensions.bootstrap.internal_listener.v3.InternalListener"},
        }]),
        "overloadManager": tree!({"resourceMonitors": [{
            "name": "envoy.resource_monitors.global_downstream_max_connections",
            "typedConfig": {
                "@type": "type.googleapis.com/envoy.extensions.resource_monitors.downstream_connections.v3.DownstreamConnectionsConfig",
                "max_active_downstream_connections": max_downstream_connections(ctx)?,
            },
        }]}),
        "applicationLogConfig": tree!({"logFormat": log_format(ctx)?}),
        "admin": tree!({"address": tree!({"pipe": admin_pipe(ctx)})}),
    });
    if node_locality(ctx) {
        put(
            &mut out,
            "clusterManager",
            Some(tree!({"localClusterName": LOCALITY_CLUSTER})),
        );
    }
    Ok(out)
}

fn max_downstream_connections(ctx: &Ctx) -> Result<String, RenderError> {
    if ctx.plan.has(Change::EnvoyGlobalDownstreamConnectionsValue) {
        inline(ctx, "envoy.maxGlobalDownstreamConnections")
    } else {
        Ok("50000".into())
    }
}

fn log_format(ctx: &Ctx) -> Result<Value, RenderError> {
    Ok(if ctx.on("envoy.log.format_json") {
        tree!({"jsonFormat": ctx.v("envoy.log.format_json").clone()})
    } else {
        tree!({"textFormat": inline(ctx, "envoy.log.format")?})
    })
}

fn admin_pipe(ctx: &Ctx) -> Value {
    let mut pipe = tree!({"path": "/var/run/cilium/envoy/sockets/admin.sock"});
    if ctx.plan.has(Change::EnvoyAdminSocketMode) {
        // Socket permissions 0660 (octal), which YAML reads as 432.
        put(&mut pipe, "mode", Some(tree!(432)));
    }
    pipe
}

/// The address ranges Envoy treats as internal: the private IPv4 ranges and loopback for each
/// enabled family; null when neither family is on, as the chart leaves the list empty.
fn internal_cidrs(ctx: &Ctx) -> Value {
    let mut cidrs = Vec::new();
    if ctx.on("ipv4.enabled") {
        for (p, l) in [
            ("10.0.0.0", 8),
            ("172.16.0.0", 12),
            ("192.168.0.0", 16),
            ("127.0.0.1", 32),
        ] {
            cidrs.push(tree!({"addressPrefix": p, "prefixLen": l}));
        }
    }
    if ctx.on("ipv6.enabled") {
        cidrs.push(tree!({"addressPrefix": "::1", "prefixLen": 128}));
    }
    if cidrs.is_empty() {
        Value::Null
    } else {
        Value::Array(cidrs)
    }
}

fn listeners(ctx: &Ctx) -> Result<Vec<Value>, RenderError> {
    let v4 = ctx.on("ipv4.enabled");
    let v6 = ctx.on("ipv6.enabled");
    let idle = format!(
        "{}s",
        inline(ctx, "envoy.streamIdleTimeoutDurationSeconds")?
    );
    let cidrs = internal_cidrs(ctx);
    let listener = |l: Listener| {
        let socket = |address: &str| tree!({"socketAddress": {"address": address, "portValue": l.port.clone()}});
        let mut hosts = Map::new();
        hosts.insert(
            l.hosts_key.into(),
            tree!([{
                "name": l.route,
                "domains": ["*"],
                "routes": [{
                    "name": l.route,
                    "match": {"prefix": l.prefix},
                    "route": {"cluster": "/envoy-admin", "prefixRewrite": l.rewrite},
                }],
            }]),
        );
        let typed_config = tree!({
            "@type": HCM,
            "statPrefix": l.name,
            "routeConfig": hosts,
            "httpFilters": tree!([{
                "name": "envoy.filters.http.router",
                "typedConfig": {"@type": "type.googleapis.com/envoy.extensions.filters.http.router.v3.Router"},
            }]),
            "internalAddressConfig": tree!({"cidrRanges": cidrs.clone()}),
            "streamIdleTimeout": idle.clone(),
        });
        let filter = tree!({
            "name": "envoy.filters.network.http_connection_manager",
            "typedConfig": typed_config,
        });
        let mut out = tree!({
            "name": l.name,
            "address": socket(if v4 { l.v4 } else { l.v6 }),
            "filterChains": vec![tree!({"filters": vec![filter]})],
        });
        if v4 && v6 {
            put(
                &mut out,
                "additionalAddresses",
                Some(tree!([{"address": socket(l.dual)}])),
            );
        }
        out
    };

    let mut out = Vec::new();
    if ctx.on("envoy.prometheus.enabled") {
        out.push(listener(Listener {
            name: "envoy-prometheus-metrics-listener",
            v4: "0.0.0.0",
            v6: "::",
            dual: "::",
            port: bare(ctx.v("envoy.prometheus.port")),
            hosts_key: "virtualHosts",
            route: "prometheus_metrics_route",
            prefix: "/metrics",
            rewrite: "/stats/prometheus",
        }));
    }
    if ctx.on("envoy.debug.admin.enabled") {
        out.push(listener(Listener {
            name: "envoy-admin-listener",
            v4: "127.0.0.1",
            v6: "::1",
            dual: "::1",
            port: bare(ctx.v("envoy.debug.admin.port")),
            hosts_key: "virtual_hosts",
            route: "admin_route",
            prefix: "/",
            rewrite: "/",
        }));
    }
    out.push(listener(Listener {
        name: "envoy-health-listener",
        v4: "127.0.0.1",
        v6: "::1",
        dual: "::1",
        port: bare(ctx.v("envoy.healthPort")),
        hosts_key: "virtual_hosts",
        route: "health",
        prefix: "/healthz",
        rewrite: "/ready",
    }));
    Ok(out)
}

/// The circuit breaker thresholds of the bootstrap's clusters: retries always, connections and
/// requests from 1.19.2 (1.18 never had them).
fn circuit_breakers(ctx: &Ctx) -> Value {
    let mut threshold = tree!({"maxRetries": bare(ctx.v("envoy.maxConcurrentRetries"))});
    if ctx.plan.has(Change::EnvoyClusterConnectionLimits) {
        put(
            &mut threshold,
            "maxConnections",
            Some(bare(ctx.v("envoy.clusterMaxConnections"))),
        );
        put(
            &mut threshold,
            "maxRequests",
            Some(bare(ctx.v("envoy.clusterMaxRequests"))),
        );
    }
    tree!({"thresholds": [threshold]})
}

fn http_protocol_options(options: Value) -> Value {
    let mut m = Map::new();
    m.insert(HTTP_OPTIONS_KEY.into(), options);
    Value::Object(m)
}

/// The gRPC source through which Envoy asks the agent for one kind of resource.
fn agent_grpc_source() -> Value {
    tree!({
        "apiType": "GRPC",
        "transportApiVersion": "V3",
        "grpcServices": [{"envoyGrpc": {"clusterName": XDS_CLUSTER}}],
        "setNodeOnFirstMessageOnly": true,
    })
}

fn clusters(ctx: &Ctx, connect: &str, ads: bool) -> Result<Vec<Value>, RenderError> {
    let cleanup = format!("{}.500s", inline(ctx, "envoy.connectTimeoutSeconds")?);
    let idle_conn = format!("{}s", inline(ctx, "envoy.idleTimeoutDurationSeconds")?);
    let max_duration = format!("{}s", inline(ctx, "envoy.maxConnectionDurationSeconds")?);
    let per_conn = bare(ctx.v("envoy.maxRequestsPerConnection"));
    let breakers = circuit_breakers(ctx);
    let original_dst = |name: &str, tls: bool| {
        let mut options = tree!({
            "@type": HTTP_OPTIONS,
            "commonHttpProtocolOptions": {
                "idleTimeout": &idle_conn,
                "maxConnectionDuration": &max_duration,
                "maxRequestsPerConnection": &per_conn,
            },
            "useDownstreamProtocolConfig": {},
        });
        if tls {
            put(&mut options, "upstreamHttpProtocolOptions", Some(tree!({})));
        }
        let mut c = tree!({
            "name": name,
            "type": "ORIGINAL_DST",
            "connectTimeout": connect,
            "circuitBreakers": breakers.clone(),
            "lbPolicy": "CLUSTER_PROVIDED",
            "typedExtensionProtocolOptions": http_protocol_options(options),
            "cleanupInterval": cleanup.as_str(),
        });
        if tls {
            put(
                &mut c,
                "transportSocket",
                Some(tree!({
                    "name": "cilium.tls_wrapper",
                    "typedConfig": {"@type": "type.googleapis.com/cilium.UpstreamTlsWrapperContext"},
                })),
            );
        }
        c
    };
    let pipe_cluster = |name: &str, socket: &str| {
        tree!({
            "name": name,
            "type": "STATIC",
            "connectTimeout": connect,
            "loadAssignment": {
                "clusterName": name,
                "endpoints": [{"lbEndpoints": [{"endpoint": {"address": {"pipe": {"path": socket}}}}]}],
            },
        })
    };
    let mut xds = pipe_cluster(XDS_CLUSTER, "/var/run/cilium/envoy/sockets/xds.sock");
    put(
        &mut xds,
        "typedExtensionProtocolOptions",
        Some(http_protocol_options(
            tree!({"@type": HTTP_OPTIONS, "explicitHttpConfig": {"http2ProtocolOptions": {}}}),
        )),
    );
    if ctx.plan.has(Change::EnvoyXdsClusterLimits) {
        put(&mut xds, "circuitBreakers", Some(breakers.clone()));
    }
    let mut out = vec![
        original_dst("ingress-cluster", false),
        original_dst("egress-cluster-tls", true),
        original_dst("egress-cluster", false),
        original_dst("ingress-cluster-tls", true),
        xds,
    ];
    if node_locality(ctx) {
        out.push(locality_cluster(connect, ads));
    }
    out.push(pipe_cluster(
        "/envoy-admin",
        "/var/run/cilium/envoy/sockets/admin.sock",
    ));
    Ok(out)
}

/// The cluster whose endpoints (fed by the agent over EDS) tell Envoy its own zone.
fn locality_cluster(connect: &str, ads: bool) -> Value {
    let eds = if ads {
        tree!({"ads": {}, "resourceApiVersion": "V3"})
    } else {
        tree!({"apiConfigSource": agent_grpc_source(), "resourceApiVersion": "V3"})
    };
    tree!({
        "name": LOCALITY_CLUSTER,
        "type": "EDS",
        "connectTimeout": connect,
        "edsClusterConfig": {"edsConfig": eds, "serviceName": LOCALITY_CLUSTER},
        "lbPolicy": "ROUND_ROBIN",
    })
}

/// Where Envoy gets its listeners and clusters: one gRPC stream per kind, or in the ADS modes
/// one aggregated stream the two kinds share.
fn dynamic_resources(ctx: &Ctx, ads: bool) -> Result<Value, RenderError> {
    let fetch = format!("{}s", inline(ctx, "envoy.initialFetchTimeoutSeconds")?);
    if ads {
        let source = tree!({"initialFetchTimeout": fetch, "ads": {}, "resourceApiVersion": "V3"});
        return Ok(tree!({
            "adsConfig": agent_grpc_source(),
            "ldsConfig": source.clone(),
            "cdsConfig": source,
        }));
    }
    let source = tree!({
        "initialFetchTimeout": fetch,
        "apiConfigSource": agent_grpc_source(),
        "resourceApiVersion": "V3",
    });
    Ok(tree!({"ldsConfig": source.clone(), "cdsConfig": source}))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::components::common::tests::with_release;
    use crate::tmpl::to_json;

    fn bootstrap_text(version: &str, values: &str) -> String {
        with_release(version, values, "1.35.0", |ctx| {
            to_json(&bootstrap(ctx).unwrap())
        })
    }

    #[test]
    fn admin_socket_mode_from_1_18_8_gone_in_1_19_0_back_in_1_19_2() {
        assert!(!bootstrap_text("1.18.7", "{}").contains("\"mode\""));
        assert!(bootstrap_text("1.18.8", "{}").contains("\"mode\":432"));
        assert!(!bootstrap_text("1.19.1", "{}").contains("\"mode\""));
        assert!(bootstrap_text("1.19.2", "{}").contains("\"mode\":432"));
    }

    #[test]
    fn dual_stack_adds_ipv6_addresses() {
        let text = bootstrap_text("1.18.12", "ipv6: {enabled: true}");
        assert!(text.contains("\"additionalAddresses\""));
        assert!(text.contains("{\"addressPrefix\":\"::1\",\"prefixLen\":128}"));
        assert!(!bootstrap_text("1.18.12", "{}").contains("additionalAddresses"));
    }

    #[test]
    fn quotes_in_inline_values_are_refused() {
        let r = with_release(
            "1.18.12",
            "envoy: {log: {format: 'a\"b'}}",
            "1.35.0",
            |ctx| bootstrap(ctx).is_err(),
        );
        assert!(r);
    }

    #[test]
    fn connection_limits_arrive_in_1_19_2() {
        let values = "envoy: {clusterMaxConnections: 7, maxGlobalDownstreamConnections: 9}";
        assert!(!bootstrap_text("1.19.1", values).contains("maxConnections"));
        assert!(bootstrap_text("1.19.1", values)
            .contains("\"max_active_downstream_connections\":\"9\""));
        assert!(bootstrap_text("1.19.2", values).contains("\"maxConnections\":7"));
        assert!(bootstrap_text("1.18.12", values).contains("\"50000\""));
    }

    #[test]
    fn ads_is_the_1_20_default_unless_compatibility_is_older() {
        assert!(bootstrap_text("1.20.0", "{}").contains("\"adsConfig\""));
        assert!(!bootstrap_text("1.20.0", "upgradeCompatibility: '1.19'").contains("adsConfig"));
        assert!(!bootstrap_text("1.20.0", "envoy: {xdsMode: split}").contains("adsConfig"));
        assert!(!bootstrap_text("1.19.6", "envoy: {xdsMode: ads}").contains("adsConfig"));
    }

    #[test]
    fn node_locality_adds_the_locality_cluster() {
        let text = bootstrap_text("1.20.0", "envoy: {nodeLocality: {enabled: true}}");
        assert!(text.contains("\"localClusterName\":\"/cilium-locality-cluster\""));
        assert!(text.contains("\"type\":\"EDS\""));
        assert!(
            !bootstrap_text("1.19.6", "envoy: {nodeLocality: {enabled: true}}").contains("EDS")
        );
    }
}
