//! Mirrors the chart's templates: cilium-envoy/

use crate::changes::Change;
use serde_json::{Map, Value};

use super::common::{
    self, host_path_mounts, labels, list_items, metadata, priority_class_name, put,
    service_monitor, MonitorSpec,
};
use super::operator::{loopback, metadata_pod, service_account_object, HOST_PATH_NOT_A_MAP};
use super::Ctx;
use crate::error::RenderError;
use crate::tmpl::{bare, print, quote, quoted, to_int64, to_json, truthy, with};

pub fn render(ctx: &Ctx) -> Result<Vec<Value>, RenderError> {
    if !common::envoy_daemonset_enabled(ctx)? {
        return Ok(Vec::new());
    }
    let preflight = ctx.on("preflight.enabled");
    let mut out = Vec::new();
    let configmap = config_map(ctx)?;
    // 1.18.1 to 1.18.5 rendered the bootstrap ConfigMap during pre-flight checks too.
    let cm_despite_preflight = ctx.plan.has(Change::EnvoyConfigMapInPreflight)
        && !ctx.plan.has(Change::PreflightWithoutEnvoyBootstrap);
    if !preflight || cm_despite_preflight {
        out.push(configmap.clone());
    }
    if preflight {
        return Ok(out);
    }
    out.push(daemon_set(ctx, &configmap)?);
    if ctx.on("serviceAccounts.envoy.create") {
        out.push(service_account_object(
            ctx,
            "envoy",
            ctx.v("envoy.annotations"),
            None,
        ));
    }
    if ctx.on("envoy.prometheus.enabled") {
        out.push(service(ctx));
        if ctx.on("envoy.prometheus.serviceMonitor.enabled") {
            out.push(service_monitor(
                ctx,
                MonitorSpec {
                    name: "cilium-envoy",
                    values: "envoy.prometheus.serviceMonitor",
                    annotations: "envoy.annotations",
                    selector: &[("k8s-app", "cilium-envoy")],
                    port: "envoy-metrics",
                    target_label: "k8s-app",
                    job_label: false,
                },
            ));
        }
    }
    Ok(out)
}

fn config_map(ctx: &Ctx) -> Result<Value, RenderError> {
    let mut text = to_json(&bootstrap(ctx)?);
    text.push('\n');
    Ok(tree!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": metadata(
            "cilium-envoy-config",
            Some(&ctx.namespace()),
            common::common_labels(ctx),
            with(ctx.v("envoy.annotations")),
        ),
        "data": {"bootstrap-config.json": text},
    }))
}

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

const HCM: &str =
    "type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager";
const HTTP_OPTIONS: &str =
    "type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions";
const HTTP_OPTIONS_KEY: &str = "envoy.extensions.upstreams.http.v3.HttpProtocolOptions";

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

/// The Envoy bootstrap configuration the chart ships, built from the values (JSON key names and
/// structure as Envoy's v3 bootstrap API has them).
fn bootstrap(ctx: &Ctx) -> Result<Value, RenderError> {
    let v4 = ctx.on("ipv4.enabled");
    let v6 = ctx.on("ipv6.enabled");
    let idle = format!(
        "{}s",
        inline(ctx, "envoy.streamIdleTimeoutDurationSeconds")?
    );
    let mut cidrs = Vec::new();
    if v4 {
        for (p, l) in [
            ("10.0.0.0", 8),
            ("172.16.0.0", 12),
            ("192.168.0.0", 16),
            ("127.0.0.1", 32),
        ] {
            cidrs.push(tree!({"addressPrefix": p, "prefixLen": l}));
        }
    }
    if v6 {
        cidrs.push(tree!({"addressPrefix": "::1", "prefixLen": 128}));
    }
    let cidrs = if cidrs.is_empty() {
        Value::Null
    } else {
        Value::Array(cidrs)
    };
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

    let mut listeners = Vec::new();
    if ctx.on("envoy.prometheus.enabled") {
        listeners.push(listener(Listener {
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
        listeners.push(listener(Listener {
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
    listeners.push(listener(Listener {
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

    let connect = format!("{}s", inline(ctx, "envoy.connectTimeoutSeconds")?);
    let cleanup = format!("{}.500s", inline(ctx, "envoy.connectTimeoutSeconds")?);
    let idle_conn = format!("{}s", inline(ctx, "envoy.idleTimeoutDurationSeconds")?);
    let max_duration = format!("{}s", inline(ctx, "envoy.maxConnectionDurationSeconds")?);
    let retries = bare(ctx.v("envoy.maxConcurrentRetries"));
    let per_conn = bare(ctx.v("envoy.maxRequestsPerConnection"));
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
        let mut protocol = Map::new();
        protocol.insert(HTTP_OPTIONS_KEY.into(), options);
        let mut c = tree!({
            "name": name,
            "type": "ORIGINAL_DST",
            "connectTimeout": connect.as_str(),
            "circuitBreakers": tree!({"thresholds": [{"maxRetries": &retries}]}),
            "lbPolicy": "CLUSTER_PROVIDED",
            "typedExtensionProtocolOptions": protocol,
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
            "connectTimeout": &connect,
            "loadAssignment": {
                "clusterName": name,
                "endpoints": [{"lbEndpoints": [{"endpoint": {"address": {"pipe": {"path": socket}}}}]}],
            },
        })
    };
    let mut xds = pipe_cluster("xds-grpc-cilium", "/var/run/cilium/envoy/sockets/xds.sock");
    let mut xds_options = Map::new();
    xds_options.insert(
        HTTP_OPTIONS_KEY.into(),
        tree!({"@type": HTTP_OPTIONS, "explicitHttpConfig": {"http2ProtocolOptions": {}}}),
    );
    put(
        &mut xds,
        "typedExtensionProtocolOptions",
        Some(Value::Object(xds_options)),
    );
    let clusters = vec![
        original_dst("ingress-cluster", false),
        original_dst("egress-cluster-tls", true),
        original_dst("egress-cluster", false),
        original_dst("ingress-cluster-tls", true),
        xds,
        pipe_cluster("/envoy-admin", "/var/run/cilium/envoy/sockets/admin.sock"),
    ];

    let fetch = format!("{}s", inline(ctx, "envoy.initialFetchTimeoutSeconds")?);
    let xds_source = tree!({
        "initialFetchTimeout": fetch,
        "apiConfigSource": {
            "apiType": "GRPC",
            "transportApiVersion": "V3",
            "grpcServices": [{"envoyGrpc": {"clusterName": "xds-grpc-cilium"}}],
            "setNodeOnFirstMessageOnly": true,
        },
        "resourceApiVersion": "V3",
    });

    let log_format = if ctx.on("envoy.log.format_json") {
        tree!({"jsonFormat": ctx.v("envoy.log.format_json").clone()})
    } else {
        tree!({"textFormat": inline(ctx, "envoy.log.format")?})
    };

    let mut admin_pipe = tree!({"path": "/var/run/cilium/envoy/sockets/admin.sock"});
    if ctx.plan.has(Change::EnvoyAdminSocketMode) {
        // Socket permissions 0660 (octal), which YAML reads as 432.
        put(&mut admin_pipe, "mode", Some(tree!(432)));
    }

    Ok(tree!({
        "node": tree!({"id": "host~127.0.0.1~no-id~localdomain", "cluster": "ingress-cluster"}),
        "staticResources": tree!({"listeners": listeners, "clusters": clusters}),
        "dynamicResources": tree!({"ldsConfig": xds_source.clone(), "cdsConfig": xds_source}),
        "bootstrapExtensions": tree!([{
            "name": "envoy.bootstrap.internal_listener",
            "typedConfig": {"@type": "type.googleapis.com/envoy.extensions.bootstrap.internal_listener.v3.InternalListener"},
        }]),
        "overloadManager": tree!({"resourceMonitors": [{
            "name": "envoy.resource_monitors.global_downstream_max_connections",
            "typedConfig": {
                "@type": "type.googleapis.com/envoy.extensions.resource_monitors.downstream_connections.v3.DownstreamConnectionsConfig",
                "max_active_downstream_connections": "50000",
            },
        }]}),
        "applicationLogConfig": tree!({"logFormat": log_format}),
        "admin": tree!({"address": tree!({"pipe": admin_pipe})}),
    }))
}

fn daemon_set(ctx: &Ctx, configmap: &Value) -> Result<Value, RenderError> {
    let ns = ctx.namespace();
    let common_labels = ctx.v("commonLabels");
    let privileged = ctx.on("envoy.securityContext.privileged");
    let old_kube = !ctx.plan.kube.at_least(1, 30);

    let mut pod_annotations = Map::new();
    if ctx.on("envoy.rollOutPods") && !ctx.on("envoy.bootstrapConfigMap") {
        pod_annotations.insert(
            "cilium.io/cilium-envoy-configmap-checksum".into(),
            Value::from(crate::output::sha256_hex(configmap)),
        );
    }
    if !privileged && old_kube {
        pod_annotations.insert(
            "container.apparmor.security.beta.kubernetes.io/cilium-envoy".into(),
            Value::from("unconfined"),
        );
    }
    let pod_annotations = common::merged(&[
        &Value::Object(pod_annotations),
        ctx.v("envoy.podAnnotations"),
    ]);

    // Kubernetes before 1.30 has no appArmorProfile field; the chart drops it there.
    let mut pod_security = ctx.v("envoy.podSecurityContext").clone();
    if old_kube {
        if let Value::Object(m) = &mut pod_security {
            m.remove("appArmorProfile");
        }
    }

    let mut args = Vec::new();
    if ctx.on("envoy.securityContext.capabilities.keepCapNetBindService") {
        args.push(Value::from("--keep-cap-net-bind-service"));
    }
    args.push(Value::from("--"));
    args.push(Value::from(
        "-c /var/run/cilium/envoy/bootstrap-config.json",
    ));
    args.push(Value::from(format!(
        "--base-id {}",
        to_int64(ctx.v("envoy.baseID"))
    )));
    let verbose = ctx.v("debug.verbose");
    let verbose_has = |word: &str| {
        ctx.on("debug.enabled") && truthy(verbose) && print(verbose).split(' ').any(|w| w == word)
    };
    let level = if verbose_has("envoy") {
        "trace".to_string()
    } else if verbose_has("flow") {
        "debug".to_string()
    } else if ctx.on("envoy.log.defaultLevel") {
        print(ctx.v("envoy.log.defaultLevel"))
    } else {
        "info".to_string()
    };
    args.push(Value::from(format!("--log-level {level}")));
    if ctx.on("envoy.log.path") {
        args.push(Value::from(format!(
            "--log-path {}",
            print(ctx.v("envoy.log.path"))
        )));
    }
    args.extend(list_items(ctx, "envoy.extraArgs")?);

    let health = bare(ctx.v("envoy.healthPort"));
    let http_get = tree!({
        "host": loopback(ctx),
        "path": "/healthz",
        "port": health,
        "scheme": "HTTP",
    });

    let mut env = vec![
        tree!({"name": "K8S_NODE_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "spec.nodeName"}}}),
        tree!({"name": "CILIUM_K8S_NAMESPACE", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}}),
    ];
    env.extend(common::k8s_service_env(ctx)?);
    env.extend(list_items(ctx, "envoy.extraEnv")?);

    let security = if privileged {
        tree!({"privileged": true})
    } else {
        let mut caps = tree!({"drop": ["ALL"]});
        put(
            &mut caps,
            "add",
            with(ctx.v("envoy.securityContext.capabilities.envoy")),
        );
        let mut s = tree!({"capabilities": caps});
        put(
            &mut s,
            "seLinuxOptions",
            with(ctx.v("envoy.securityContext.seLinuxOptions")),
        );
        s
    };

    let run_path = quote(ctx.v("daemon.runPath"));
    let bpf_mount = ctx.on("bpf.autoMount.enabled");
    let mut mounts = vec![
        tree!({"name": "envoy-sockets", "mountPath": "/var/run/cilium/envoy/sockets", "readOnly": false}),
        tree!({"name": "envoy-artifacts", "mountPath": "/var/run/cilium/envoy/artifacts", "readOnly": true}),
        tree!({"name": "envoy-config", "mountPath": "/var/run/cilium/envoy/", "readOnly": true}),
    ];
    let cm_name = if ctx.on("envoy.bootstrapConfigMap") {
        print(ctx.v("envoy.bootstrapConfigMap"))
    } else {
        "cilium-envoy-config".to_string()
    };
    let mut volumes = vec![
        tree!({"name": "envoy-sockets", "hostPath": {"path": format!("{run_path}/envoy/sockets"), "type": "DirectoryOrCreate"}}),
        tree!({"name": "envoy-artifacts", "hostPath": {"path": format!("{run_path}/envoy/artifacts"), "type": "DirectoryOrCreate"}}),
        tree!({"name": "envoy-config", "configMap": {
            "name": cm_name,
            "defaultMode": 256,
            "items": [{"key": "bootstrap-config.json", "path": "bootstrap-config.json"}],
        }}),
    ];
    if bpf_mount {
        mounts.push(tree!({"name": "bpf-maps", "mountPath": "/sys/fs/bpf", "mountPropagation": "HostToContainer"}));
        volumes.push(tree!({"name": "bpf-maps", "hostPath": {"path": "/sys/fs/bpf", "type": "DirectoryOrCreate"}}));
    }
    let (extra_mounts, extra_volumes) =
        host_path_mounts(ctx, "envoy.extraHostPathMounts", HOST_PATH_NOT_A_MAP)?;
    mounts.extend(extra_mounts);
    mounts.extend(list_items(ctx, "envoy.extraVolumeMounts")?);
    volumes.extend(extra_volumes);
    volumes.extend(list_items(ctx, "envoy.extraVolumes")?);

    let readiness = tree!({
        "httpGet": &http_get,
        "periodSeconds": bare(ctx.v("envoy.readinessProbe.periodSeconds")),
        "successThreshold": 1,
        "failureThreshold": bare(ctx.v("envoy.readinessProbe.failureThreshold")),
        "timeoutSeconds": 5,
    });
    let mut container = tree!({
        "name": "cilium-envoy",
        "image": common::image(ctx.v("envoy.image")),
        "imagePullPolicy": bare(ctx.v("envoy.image.pullPolicy")),
        "command": tree!(["/usr/bin/cilium-envoy-starter"]),
        "args": args,
        "readinessProbe": readiness,
        "env": env,
        "securityContext": security,
        "terminationMessagePolicy": "FallbackToLogsOnError",
        "volumeMounts": mounts,
    });
    if ctx.on("envoy.startupProbe.enabled") {
        put(
            &mut container,
            "startupProbe",
            Some(tree!({
                "httpGet": &http_get,
                "failureThreshold": bare(ctx.v("envoy.startupProbe.failureThreshold")),
                "periodSeconds": bare(ctx.v("envoy.startupProbe.periodSeconds")),
                "successThreshold": 1,
                "initialDelaySeconds": 5,
            })),
        );
    }
    if ctx.on("envoy.livenessProbe.enabled") {
        put(
            &mut container,
            "livenessProbe",
            Some(tree!({
                "httpGet": http_get,
                "periodSeconds": bare(ctx.v("envoy.livenessProbe.periodSeconds")),
                "successThreshold": 1,
                "failureThreshold": bare(ctx.v("envoy.livenessProbe.failureThreshold")),
                "timeoutSeconds": 5,
            })),
        );
    }
    put(&mut container, "resources", with(ctx.v("envoy.resources")));
    if ctx.on("envoy.prometheus.enabled") {
        let port = bare(ctx.v("envoy.prometheus.port"));
        let mut ports = vec![tree!({
            "name": "envoy-metrics", "containerPort": &port, "hostPort": port, "protocol": "TCP",
        })];
        if ctx.on("envoy.debug.admin.enabled") && ctx.on("envoy.debug.admin.port") {
            let admin = bare(ctx.v("envoy.debug.admin.port"));
            ports.push(tree!({
                "name": "envoy-admin", "containerPort": &admin, "hostPort": admin, "protocol": "TCP",
            }));
        }
        put(&mut container, "ports", Some(Value::Array(ports)));
    }

    let mut containers = vec![container];
    containers.extend(list_items(ctx, "envoy.extraContainers")?);

    let mut spec = tree!({
        "containers": containers,
        "restartPolicy": "Always",
        "priorityClassName": priority_class_name(ctx, ctx.v("envoy.priorityClassName"), "system-node-critical"),
        "serviceAccountName": quote(ctx.v("serviceAccounts.envoy.name")),
        "automountServiceAccountToken": bare(ctx.v("serviceAccounts.envoy.automount")),
        "terminationGracePeriodSeconds": bare(ctx.v("envoy.terminationGracePeriodSeconds")),
        "hostNetwork": true,
        "volumes": volumes,
    });
    put(
        &mut spec,
        "imagePullSecrets",
        with(ctx.v("imagePullSecrets")),
    );
    put(&mut spec, "securityContext", with(&pod_security));
    if ctx.on("envoy.dnsPolicy") {
        put(&mut spec, "dnsPolicy", Some(bare(ctx.v("envoy.dnsPolicy"))));
    }
    put(&mut spec, "affinity", with(ctx.v("envoy.affinity")));
    put(&mut spec, "nodeSelector", with(ctx.v("envoy.nodeSelector")));
    put(&mut spec, "tolerations", with(ctx.v("envoy.tolerations")));

    let mut ds_spec = tree!({
        "selector": tree!({"matchLabels": {"k8s-app": "cilium-envoy"}}),
        "template": tree!({
            "metadata": metadata_pod(
                labels(
                    &[
                        ("k8s-app", "cilium-envoy"),
                        ("name", "cilium-envoy"),
                        ("app.kubernetes.io/name", "cilium-envoy"),
                        ("app.kubernetes.io/part-of", "cilium"),
                    ],
                    &[common_labels, ctx.v("envoy.podLabels")],
                ),
                pod_annotations,
            ),
            "spec": spec,
        }),
    });
    put(
        &mut ds_spec,
        "updateStrategy",
        with(ctx.v("envoy.updateStrategy")),
    );

    Ok(tree!({
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": metadata(
            "cilium-envoy",
            Some(&ns),
            Some(labels(
                &[
                    ("k8s-app", "cilium-envoy"),
                    ("app.kubernetes.io/part-of", "cilium"),
                    ("app.kubernetes.io/name", "cilium-envoy"),
                    ("name", "cilium-envoy"),
                ],
                &[common_labels],
            )),
            with(ctx.v("envoy.annotations")),
        ),
        "spec": ds_spec,
    }))
}

fn service(ctx: &Ctx) -> Value {
    let mut own = Map::new();
    if !ctx.on("envoy.prometheus.serviceMonitor.enabled") {
        own.insert("prometheus.io/scrape".into(), Value::from("true"));
        own.insert(
            "prometheus.io/port".into(),
            quoted(ctx.v("envoy.prometheus.port")),
        );
    }
    let annotations = common::merged(&[&Value::Object(own), ctx.v("envoy.annotations")]);
    tree!({
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": metadata(
            "cilium-envoy",
            Some(&ctx.namespace()),
            Some(labels(
                &[
                    ("k8s-app", "cilium-envoy"),
                    ("app.kubernetes.io/name", "cilium-envoy"),
                    ("app.kubernetes.io/part-of", "cilium"),
                    ("io.cilium/app", "proxy"),
                ],
                &[ctx.v("commonLabels")],
            )),
            annotations,
        ),
        "spec": {
            "clusterIP": "None",
            "type": "ClusterIP",
            "selector": {"k8s-app": "cilium-envoy"},
            "ports": [{
                "name": "envoy-metrics",
                "port": bare(ctx.v("envoy.prometheus.port")),
                "protocol": "TCP",
                "targetPort": "envoy-metrics",
            }],
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::components::common::tests::with_release;

    fn with_ctx<T>(version: &str, values: &str, f: impl FnOnce(&Ctx) -> T) -> T {
        with_release(version, values, "1.35.0", f)
    }

    fn bootstrap_text(version: &str, values: &str) -> String {
        with_ctx(version, values, |ctx| to_json(&bootstrap(ctx).unwrap()))
    }

    #[test]
    fn admin_socket_mode_from_1_18_8() {
        assert!(!bootstrap_text("1.18.7", "{}").contains("\"mode\""));
        assert!(bootstrap_text("1.18.8", "{}").contains("\"mode\":432"));
    }

    #[test]
    fn dual_stack_adds_ipv6_addresses() {
        let text = bootstrap_text("1.18.12", "ipv6: {enabled: true}");
        assert!(text.contains("\"additionalAddresses\""));
        assert!(text.contains("{\"addressPrefix\":\"::1\",\"prefixLen\":128}"));
        assert!(!bootstrap_text("1.18.12", "{}").contains("additionalAddresses"));
    }

    #[test]
    fn preflight_keeps_the_configmap_only_in_1_18_1_to_5() {
        let count = |v: &str| {
            with_ctx(v, "preflight: {enabled: true}", |ctx| {
                render(ctx).unwrap().len()
            })
        };
        assert_eq!(count("1.18.0"), 0);
        assert_eq!(count("1.18.3"), 1);
        assert_eq!(count("1.18.6"), 0);
    }

    #[test]
    fn quotes_in_inline_values_are_refused() {
        let r = with_ctx("1.18.12", "envoy: {log: {format: 'a\"b'}}", |ctx| {
            bootstrap(ctx).is_err()
        });
        assert!(r);
    }
}
