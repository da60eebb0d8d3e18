//! Mirrors the chart's templates: hubble-relay/

use crate::changes::Change;
use crate::components::common::namespaced_workload;
use crate::components::common::{mount, mount_ro};
use serde_json::{Map, Value};

use super::common::{
    self, cert_sources, common_labels, image, labels_with_common, list_items, merged, metadata,
    put, scrape_endpoint, with_chart_label,
};
use super::Ctx;
use crate::error::RenderError;
use crate::tmpl::{bare, print, quote, quote_text, truthy, with};

const APP: &str = "hubble-relay";
const APP_LABELS: [(&str, &str); 3] = common::app_labels(APP);

pub fn render(ctx: &Ctx) -> Result<Vec<Value>, RenderError> {
    if !ctx.plan.hubble_relay {
        return Ok(Vec::new());
    }
    let config = configmap(ctx);
    let mut out = vec![deployment(ctx, &config)?, service(ctx)];
    out.push(config);
    let prometheus = ctx.on("hubble.relay.prometheus.enabled");
    if prometheus {
        out.push(metrics_service(ctx));
        if ctx.on("hubble.relay.prometheus.serviceMonitor.enabled") {
            out.push(service_monitor(ctx));
        }
    }
    if ctx.on("hubble.relay.podDisruptionBudget.enabled") {
        out.push(super::hubble::pdb(ctx, APP, "hubble.relay"));
    }
    if ctx.on("serviceAccounts.relay.create") {
        out.push(service_account(ctx));
    }
    Ok(out)
}

/// Relay's configuration file, as the lines of `config.yaml`.
fn config_text(ctx: &Ctx) -> String {
    let ns = ctx.namespace();
    let tls = ctx.on("hubble.tls.enabled");
    let peer_port = if ctx.on("hubble.peerService.servicePort") {
        ctx.text("hubble.peerService.servicePort")
    } else if tls {
        "443".into()
    } else {
        "80".into()
    };
    let mut l = vec![
        format!("cluster-name: {}", ctx.text("cluster.name")),
        format!(
            "peer-service: \"hubble-peer.{ns}.svc.{}.:{peer_port}\"",
            ctx.text("hubble.peerService.clusterDomain")
        ),
        format!(
            "listen-address: {}:{}",
            ctx.text("hubble.relay.listenHost"),
            ctx.text("hubble.relay.listenPort")
        ),
        format!("gops: {}", ctx.text("hubble.relay.gops.enabled")),
        format!("gops-port: {}", quote_text(ctx.v("hubble.relay.gops.port"))),
    ];
    if ctx.on("hubble.relay.pprof.enabled") {
        let mut keys = vec![
            ("pprof", "enabled"),
            ("pprof-address", "address"),
            ("pprof-port", "port"),
        ];
        if ctx.plan.has(Change::RelayPprofProfileRates) {
            keys.push(("pprof-mutex-profile-fraction", "mutexProfileFraction"));
            keys.push(("pprof-block-profile-rate", "blockProfileRate"));
        }
        for (key, path) in keys {
            let v = ctx.v(&format!("hubble.relay.pprof.{path}"));
            l.push(format!("{key}: {}", quote_text(v)));
        }
    }
    if ctx.on("hubble.relay.prometheus.enabled") {
        l.push(format!(
            "metrics-listen-address: \":{}\"",
            ctx.text("hubble.relay.prometheus.port")
        ));
    }
    for (key, path) in [
        ("retry-timeout", "retryTimeout"),
        ("sort-buffer-len-max", "sortBufferLenMax"),
        ("sort-buffer-drain-timeout", "sortBufferDrainTimeout"),
    ] {
        l.push(format!(
            "{key}: {}",
            ctx.text(&format!("hubble.relay.{path}"))
        ));
    }
    if tls {
        l.push("tls-hubble-client-cert-file: /var/lib/hubble-relay/tls/client.crt".into());
        l.push("tls-hubble-client-key-file: /var/lib/hubble-relay/tls/client.key".into());
        l.push("tls-hubble-server-ca-files: /var/lib/hubble-relay/tls/hubble-server-ca.crt".into());
    } else {
        l.push("disable-client-tls: true".into());
    }
    // The chart's server-TLS block starts with an empty line.
    l.push(String::new());
    if tls && ctx.on("hubble.relay.tls.server.enabled") {
        l.push("tls-relay-server-cert-file: /var/lib/hubble-relay/tls/server.crt".into());
        l.push("tls-relay-server-key-file: /var/lib/hubble-relay/tls/server.key".into());
        if ctx.on("hubble.relay.tls.server.mtls") {
            l.push(
                "tls-relay-client-ca-files: /var/lib/hubble-relay/tls/hubble-server-ca.crt".into(),
            );
        }
    } else {
        l.push("disable-server-tls: true".into());
    }
    if ctx.plan.has(Change::RelayLogOptions) {
        for (key, path) in [("log-format", "format"), ("log-level", "level")] {
            let p = format!("hubble.relay.logOptions.{path}");
            if ctx.on(&p) {
                l.push(format!("{key}: {}", ctx.text(&p)));
            }
        }
    }
    let mut s = l.join("\n");
    s.push('\n');
    s
}

fn configmap(ctx: &Ctx) -> Value {
    let ns = ctx.namespace();
    tree!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": metadata("hubble-relay-config", Some(&ns), common_labels(ctx), with(ctx.v("hubble.relay.annotations"))),
        "data": {"config.yaml": config_text(ctx)},
    })
}

/// The Prometheus scrape annotations, used when no ServiceMonitor scrapes Relay.
fn scrape_annotations(ctx: &Ctx) -> Value {
    if ctx.on("hubble.relay.prometheus.enabled")
        && !ctx.on("hubble.relay.prometheus.serviceMonitor.enabled")
    {
        tree!({
            "prometheus.io/port": quote(ctx.v("hubble.relay.prometheus.port")),
            "prometheus.io/scrape": "true",
        })
    } else {
        Value::Null
    }
}

fn deployment(ctx: &Ctx, config: &Value) -> Result<Value, RenderError> {
    let tls = ctx.on("hubble.tls.enabled");
    let checksum = if truthy(rv(ctx, "rollOutPods")) {
        tree!({"cilium.io/hubble-relay-configmap-checksum": crate::output::sha256_hex(config)})
    } else {
        Value::Null
    };
    let mut args = vec![tree!("serve")];
    if ctx.on("debug.enabled") {
        args.push(tree!("--debug"));
    }
    let mut ports = vec![tree!({"name": "grpc", "containerPort": bare(rv(ctx, "listenPort"))})];
    if truthy(rv(ctx, "prometheus.enabled")) {
        ports.push(super::common::tcp_port(
            "prometheus",
            bare(rv(ctx, "prometheus.port")),
        ));
    }
    let mut mounts = Vec::new();
    if ctx.plan.has(Change::RelayTmpVolume) {
        mounts.push(mount("tmp-volume", "/tmp"));
    }
    mounts.push(mount_ro("config", "/etc/hubble-relay"));
    if tls {
        mounts.push(mount_ro("tls", "/var/lib/hubble-relay/tls"));
    }
    mounts.extend(list_items(ctx, "hubble.relay.extraVolumeMounts")?);
    let mut container = tree!({
        "name": "hubble-relay",
        "image": image(rv(ctx, "image")),
        "imagePullPolicy": bare(&Value::String(quote(rv(ctx, "image.pullPolicy")))),
        "command": ["hubble-relay"],
        "args": args,
        "ports": ports,
        "readinessProbe": {"grpc": {"port": 4222}, "timeoutSeconds": 3},
        "livenessProbe": {"grpc": {"port": 4222}, "timeoutSeconds": 10, "initialDelaySeconds": 10, "periodSeconds": 10, "failureThreshold": 12},
        "startupProbe": {"grpc": {"port": 4222}, "initialDelaySeconds": 10, "failureThreshold": 20, "periodSeconds": 3},
        "volumeMounts": mounts,
        "terminationMessagePolicy": "FallbackToLogsOnError",
    });
    put(
        &mut container,
        "securityContext",
        with(rv(ctx, "securityContext")),
    );
    put(&mut container, "env", with(rv(ctx, "extraEnv")));
    put(&mut container, "resources", with(rv(ctx, "resources")));

    let mut volumes = Vec::new();
    if ctx.plan.has(Change::RelayTmpVolume) {
        volumes.push(tree!({"name": "tmp-volume", "emptyDir": {}}));
    }
    volumes.push(tree!({
        "name": "config",
        "configMap": {"name": "hubble-relay-config", "items": [{"key": "config.yaml", "path": "config.yaml"}]},
    }));
    if tls {
        let client = if truthy(rv(ctx, "tls.client.existingSecret")) {
            print(rv(ctx, "tls.client.existingSecret"))
        } else {
            "hubble-relay-client-certs".into()
        };
        let mut sources = cert_sources(
            ctx,
            &client,
            vec![
                tree!({"key": "tls.crt", "path": "client.crt"}),
                tree!({"key": "tls.key", "path": "client.key"}),
            ],
            "hubble-server-ca.crt",
            false,
        );
        if truthy(rv(ctx, "tls.server.enabled")) {
            let server = if truthy(rv(ctx, "tls.server.existingSecret")) {
                print(rv(ctx, "tls.server.existingSecret"))
            } else {
                "hubble-relay-server-certs".into()
            };
            sources.push(tree!({"secret": {"name": server, "items": [
                {"key": "tls.crt", "path": "server.crt"},
                {"key": "tls.key", "path": "server.key"},
            ]}}));
        }
        // defaultMode 0400 (octal) as YAML 1.1 reads it.
        volumes.push(tree!({"name": "tls", "projected": {"defaultMode": 256, "sources": sources}}));
    }
    volumes.extend(list_items(ctx, "hubble.relay.extraVolumes")?);

    let mut pod = tree!({
        "containers": vec![container],
        "restartPolicy": "Always",
        "priorityClassName": bare(&Value::String(quote(rv(ctx, "priorityClassName")))),
        "serviceAccountName": quote(ctx.v("serviceAccounts.relay.name")),
        "automountServiceAccountToken": bare(&Value::String(quote(ctx.v("serviceAccounts.relay.automount")))),
        "terminationGracePeriodSeconds": bare(rv(ctx, "terminationGracePeriodSeconds")),
        "volumes": volumes,
    });
    put(
        &mut pod,
        "securityContext",
        with(rv(ctx, "podSecurityContext")),
    );
    super::hubble::place_pod(ctx, &mut pod, "hubble.relay", APP);
    put(&mut pod, "hostUsers", super::hubble::host_users(ctx));

    let spec = super::hubble::deployment_spec(
        ctx,
        "hubble.relay",
        APP,
        pod,
        merged(&[
            &checksum,
            rv(ctx, "podAnnotations"),
            &scrape_annotations(ctx),
        ]),
    );
    Ok(namespaced_workload(
        ctx,
        "Deployment",
        APP,
        &with_chart_label(ctx, &APP_LABELS),
        rv(ctx, "annotations"),
        spec,
    ))
}

fn service(ctx: &Ctx) -> Value {
    let ns = ctx.namespace();
    let mut port = Map::new();
    port.insert("protocol".into(), tree!("TCP"));
    let p = if truthy(rv(ctx, "servicePort")) {
        bare(rv(ctx, "servicePort"))
    } else if truthy(rv(ctx, "tls.server.enabled")) {
        tree!(443)
    } else {
        tree!(80)
    };
    port.insert("port".into(), p);
    port.insert("targetPort".into(), tree!("grpc"));
    let svc = rv(ctx, "service");
    if svc["type"].as_str() == Some("NodePort") && truthy(&svc["nodePort"]) {
        port.insert("nodePort".into(), bare(&svc["nodePort"]));
    }
    tree!({
        "kind": "Service",
        "apiVersion": "v1",
        "metadata": metadata(
            APP,
            Some(&ns),
            Some(labels_with_common(ctx, &with_chart_label(ctx, &APP_LABELS), &[])),
            merged(&[rv(ctx, "annotations"), &scrape_annotations(ctx)]),
        ),
        "spec": {
            "type": quote(&svc["type"]),
            "selector": {"k8s-app": APP},
            "ports": [port],
        },
    })
}

fn metrics_service(ctx: &Ctx) -> Value {
    let ns = ctx.namespace();
    tree!({
        "kind": "Service",
        "apiVersion": "v1",
        "metadata": metadata(
            "hubble-relay-metrics",
            Some(&ns),
            Some(labels_with_common(ctx, &[("k8s-app", APP)], &[])),
            with(ctx.v("hubble.relay.annotations")),
        ),
        "spec": {
            "clusterIP": "None",
            "type": "ClusterIP",
            "selector": {"k8s-app": APP},
            "ports": [{
                "name": "metrics",
                "port": bare(ctx.v("hubble.relay.prometheus.port")),
                "protocol": "TCP",
                "targetPort": "prometheus",
            }],
        },
    })
}

fn service_monitor(ctx: &Ctx) -> Value {
    let sm = ctx.v("hubble.relay.prometheus.serviceMonitor");
    let own_ns = ctx.namespace();
    let ns = if truthy(&sm["namespace"]) {
        print(&sm["namespace"])
    } else {
        own_ns.clone()
    };
    let fixed = &super::common::monitor_labels(ctx, APP, false);
    let endpoint = scrape_endpoint(sm, "metrics", false, true);
    tree!({
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "ServiceMonitor",
        "metadata": metadata(
            APP,
            Some(&ns),
            Some(labels_with_common(ctx, fixed, &[&sm["labels"]])),
            merged(&[ctx.v("hubble.relay.annotations"), &sm["annotations"]]),
        ),
        "spec": {
            "selector": {"matchLabels": {"k8s-app": APP}},
            "namespaceSelector": {"matchNames": [own_ns]},
            "endpoints": [endpoint],
        },
    })
}

fn service_account(ctx: &Ctx) -> Value {
    let sa = ctx.v("serviceAccounts.relay");
    let annotations = merged(&[ctx.v("hubble.relay.annotations"), &sa["annotations"]]);
    let mut account = common::service_account(ctx, "relay", annotations);
    // Relay's template also sets the token automount on the account itself.
    put(
        &mut account,
        "automountServiceAccountToken",
        Some(bare(&Value::String(quote(&sa["automount"])))),
    );
    account
}

/// `.Values.hubble.relay.<key>`, read by path: taking the `hubble.relay` map whole would make the values
/// overlay build a merged copy of it.
fn rv<'a>(ctx: &Ctx<'a>, key: &str) -> &'a Value {
    ctx.v(&format!("hubble.relay.{key}"))
}
