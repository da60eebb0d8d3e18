//! Mirrors the chart's templates: hubble/
//!
//! Also the PodDisruptionBudget builder of Hubble Relay and UI; the certgen Job spec its CronJob
//! shares with Cluster Mesh lives in `certgen`.

use serde_json::{Map, Value};

use super::certgen::{self, CertgenJob};
use super::common::{
    common_labels, dashboard_configmaps, labels_with_common, merged, metadata,
    pod_disruption_budget, put, scrape_endpoint, service_account, topology_spread,
    with_chart_label, Dashboards,
};
use super::Ctx;
use crate::changes::Change;
use crate::error::RenderError;
use crate::plan::CertSource;
use crate::tmpl::{bare, print, quote_text, range_items, to_int64, truthy, with};

pub fn render(ctx: &Ctx) -> Result<Vec<Value>, RenderError> {
    let mut out = Vec::new();
    let hubble = ctx.on("hubble.enabled");
    if ctx.on("agent") && hubble {
        out.push(peer_service(ctx));
    }
    let metrics = ctx.on("hubble.metrics.enabled") || ctx.on("hubble.metrics.dynamic.enabled");
    if hubble && metrics {
        out.push(metrics_service(ctx));
        if ctx.on("hubble.metrics.serviceMonitor.enabled") {
            out.push(service_monitor(ctx));
        }
    }
    if ctx.on("hubble.metrics.dashboards.enabled") {
        out.extend(dashboards(ctx)?);
    }
    let tls = hubble && ctx.on("hubble.tls.enabled");
    match ctx.plan.hubble_certs {
        CertSource::Certgen if tls => out.extend(certgen(ctx)),
        CertSource::CertManager if hubble => out.extend(cert_manager(ctx)),
        CertSource::Values if hubble => out.extend(provided(ctx)?),
        _ => {}
    }
    Ok(out)
}

/// The labels of Hubble's own metrics objects.
const HUBBLE_LABELS: [(&str, &str); 3] = super::common::app_labels("hubble");

/// `cluster.name` with dots replaced, as the certificates' names carry it.
fn cluster_dns(ctx: &Ctx) -> String {
    ctx.text("cluster.name").replace('.', "-")
}

/// The PodDisruptionBudget of Hubble Relay or UI (`app`), from the `values` block's
/// `podDisruptionBudget`, annotated with the block's `annotations`.
pub(crate) fn pdb(ctx: &Ctx, app: &str, values: &str) -> Value {
    pod_disruption_budget(
        ctx,
        app,
        ctx.v(&format!("{values}.podDisruptionBudget")),
        &[("k8s-app", app)],
        &with_chart_label(
            ctx,
            &[
                ("k8s-app", app),
                ("app.kubernetes.io/name", app),
                ("app.kubernetes.io/part-of", "cilium"),
            ],
        ),
        ctx.v(&format!("{values}.annotations")),
    )
}

/// Where the Relay or UI pod (`app`) may run, from its values `block`, plus the image pull
/// secrets: the pod spec fields both Deployments write the same way.
pub(crate) fn place_pod(ctx: &Ctx, pod: &mut Value, block: &str, app: &str) {
    let at = |key: &str| ctx.v(&format!("{block}.{key}"));
    put(pod, "imagePullSecrets", with(ctx.v("imagePullSecrets")));
    put(pod, "affinity", with(at("affinity")));
    put(
        pod,
        "topologySpreadConstraints",
        topology_spread(at("topologySpreadConstraints"), &[("k8s-app", app)]),
    );
    put(pod, "nodeSelector", with(at("nodeSelector")));
    put(pod, "tolerations", with(at("tolerations")));
}

/// The Deployment spec of Relay or UI (`app`) from its values `block`: replicas, its own pods
/// as selector, the pod template with `annotations` and the app labels then `podLabels`, and the
/// update strategy when set.
pub(crate) fn deployment_spec(
    ctx: &Ctx,
    block: &str,
    app: &str,
    pod: Value,
    annotations: Option<Value>,
) -> Value {
    let at = |key: &str| ctx.v(&format!("{block}.{key}"));
    let own = with_chart_label(
        ctx,
        &[
            ("k8s-app", app),
            ("app.kubernetes.io/name", app),
            ("app.kubernetes.io/part-of", "cilium"),
        ],
    );
    let mut spec = tree!({
        "replicas": bare(at("replicas")),
        "selector": tree!({"matchLabels": {"k8s-app": app}}),
        "template": tree!({
            "metadata": tree!({
                "annotations": annotations,
                "labels": labels_with_common(ctx, &own, &[at("podLabels")]),
            }),
            "spec": pod,
        }),
    });
    put(&mut spec, "strategy", with(at("updateStrategy")));
    spec
}

/// `hostUsers` of the Relay and UI pods: `hubble.hostUsers` when it is a boolean, on
/// Kubernetes versions that know the field.
pub(crate) fn host_users(ctx: &Ctx) -> Option<Value> {
    if !(ctx.plan.has(Change::HubbleHostUsers) && ctx.plan.kube.user_namespaces_by_default()) {
        return None;
    }
    match ctx.v("hubble.hostUsers") {
        Value::Bool(b) => Some(Value::Bool(*b)),
        _ => None,
    }
}

fn peer_service(ctx: &Ctx) -> Value {
    let ns = ctx.namespace();
    let port = if ctx.on("hubble.peerService.servicePort") {
        bare(ctx.v("hubble.peerService.servicePort"))
    } else if ctx.on("hubble.tls.enabled") {
        tree!(443)
    } else {
        tree!(80)
    };
    tree!({
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": metadata(
            "hubble-peer",
            Some(&ns),
            Some(labels_with_common(ctx, &with_chart_label(ctx, &[("k8s-app", "cilium"), ("app.kubernetes.io/part-of", "cilium"), ("app.kubernetes.io/name", "hubble-peer")]), &[])),
            with(ctx.v("hubble.annotations")),
        ),
        "spec": {
            "selector": {"k8s-app": "cilium"},
            "ports": [{
                "name": "peer-service",
                "port": port,
                "protocol": "TCP",
                "targetPort": bare(ctx.v("hubble.peerService.targetPort")),
            }],
            "internalTrafficPolicy": "Local",
        },
    })
}

fn metrics_service(ctx: &Ctx) -> Value {
    let ns = ctx.namespace();
    let scrape = if ctx.on("hubble.metrics.serviceMonitor.enabled") {
        Value::Null
    } else {
        tree!({
            "prometheus.io/scrape": "true",
            "prometheus.io/port": crate::tmpl::quote(ctx.v("hubble.metrics.port")),
        })
    };
    tree!({
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": metadata(
            "hubble-metrics",
            Some(&ns),
            Some(labels_with_common(ctx, &with_chart_label(ctx, &HUBBLE_LABELS), &[])),
            merged(&[ctx.v("hubble.annotations"), ctx.v("hubble.metrics.serviceAnnotations"), &scrape]),
        ),
        "spec": {
            "clusterIP": "None",
            "type": "ClusterIP",
            "ports": [{
                "name": "hubble-metrics",
                "port": bare(ctx.v("hubble.metrics.port")),
                "protocol": "TCP",
                "targetPort": "hubble-metrics",
            }],
            "selector": {"k8s-app": "cilium"},
        },
    })
}

fn service_monitor(ctx: &Ctx) -> Value {
    let sm = ctx.v("hubble.metrics.serviceMonitor");
    let own_ns = ctx.namespace();
    let ns = if ctx.on("prometheus.serviceMonitor.namespace") {
        ctx.text("prometheus.serviceMonitor.namespace")
    } else {
        own_ns.clone()
    };
    let fixed = &super::common::monitor_labels(ctx, "hubble", true);
    let mut endpoint = scrape_endpoint(sm, "hubble-metrics", true, true);
    if ctx.on("hubble.metrics.tls.enabled") {
        // Sprig's merge keeps the user's keys and only adds a missing serverName.
        let mut tls = match &sm["tlsConfig"] {
            Value::Object(m) => m.clone(),
            _ => Map::new(),
        };
        tls.entry("serverName").or_insert_with(|| {
            Value::String(format!("{}.hubble-metrics.cilium.io", cluster_dns(ctx)))
        });
        put(&mut endpoint, "tlsConfig", Some(Value::Object(tls)));
        put(&mut endpoint, "scheme", Some(tree!("https")));
    } else {
        put(&mut endpoint, "scheme", Some(tree!("http")));
    }
    let mut spec = tree!({
        "selector": {"matchLabels": {"k8s-app": "hubble"}},
        "namespaceSelector": {"matchNames": [own_ns]},
        "endpoints": [endpoint],
    });
    if truthy(&sm["jobLabel"]) {
        put(
            &mut spec,
            "jobLabel",
            Some(tree!(crate::tmpl::quote(&sm["jobLabel"]))),
        );
    }
    tree!({
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "ServiceMonitor",
        "metadata": metadata(
            "hubble",
            Some(&ns),
            Some(labels_with_common(ctx, fixed, &[&sm["labels"]])),
            merged(&[ctx.v("hubble.annotations"), &sm["annotations"]]),
        ),
        "spec": spec,
    })
}

fn dashboards(ctx: &Ctx) -> Result<Vec<Value>, RenderError> {
    dashboard_configmaps(
        ctx,
        &Dashboards {
            dir: "files/hubble/dashboards/",
            known_file: "hubble-dashboard.json",
            enabled: "hubble.metrics.dashboards.enabled",
            alternative: "false",
            values: "hubble.metrics.dashboards",
            app_labels: &HUBBLE_LABELS,
            annotations: &[
                ctx.v("hubble.annotations"),
                ctx.v("hubble.metrics.dashboards.annotations"),
            ],
        },
    )
}

/// The certgen CronJob, its first-run Job, and their RBAC.
fn certgen(ctx: &Ctx) -> Vec<Value> {
    let ns = ctx.namespace();
    let sa = ctx.v("serviceAccounts.hubblecertgen");
    let sa_name = crate::tmpl::quote(&sa["name"]);
    let ha = ctx.v("hubble.annotations");
    let own = with_chart_label(
        ctx,
        &[
            ("k8s-app", "hubble-generate-certs"),
            ("app.kubernetes.io/name", "hubble-generate-certs"),
            ("app.kubernetes.io/part-of", "cilium"),
        ],
    );
    let mut out = Vec::new();
    if truthy(ctx.v("hubble.tls.auto.schedule")) {
        out.push(tree!({
            "apiVersion": "batch/v1",
            "kind": "CronJob",
            "metadata": metadata(
                "hubble-generate-certs",
                Some(&ns),
                Some(labels_with_common(ctx, &own, &[])),
                merged(&[ha, ctx.v("certgen.annotations.cronJob")]),
            ),
            "spec": certgen::cron_job_spec(ctx, &HUBBLE_CERTGEN, "hubble.tls.auto.schedule"),
        }));
    }
    out.push(certgen::one_shot_job(
        ctx,
        &HUBBLE_CERTGEN,
        Some(labels_with_common(ctx, &own, &[])),
        &[ctx.v("certgen.annotations.job"), ha],
    ));
    if truthy(&sa["create"]) {
        if ctx.on("rbac.create") {
            let part_of = Some(super::common::part_of_labels(ctx, &[]));
            out.push(tree!({
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "Role",
                "metadata": metadata("hubble-generate-certs", Some(&ns), part_of.clone(), with(ha)),
                "rules": [
                    {"apiGroups": [""], "resources": ["secrets"], "verbs": ["create"]},
                    {"apiGroups": [""], "resources": ["secrets"], "resourceNames": [
                        "hubble-server-certs", "hubble-relay-client-certs", "hubble-relay-server-certs",
                        "hubble-metrics-server-certs", "hubble-ui-client-certs"], "verbs": ["update"]},
                    {"apiGroups": [""], "resources": ["secrets"], "resourceNames": ["cilium-ca"],
                        "verbs": ["get", "update"]},
                ],
            }));
            out.push(tree!({
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "RoleBinding",
                "metadata": metadata("hubble-generate-certs", Some(&ns), part_of, with(ha)),
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "hubble-generate-certs"},
                "subjects": [{"kind": "ServiceAccount", "name": sa_name, "namespace": ns}],
            }));
        }
        out.push(service_account(
            ctx,
            "hubblecertgen",
            merged(&[ha, &sa["annotations"]]),
        ));
    }
    out
}

const HUBBLE_CERTGEN: CertgenJob = CertgenJob {
    app: "hubble-generate-certs",
    pod_labels: "certgen.podLabels",
    service_account: "serviceAccounts.hubblecertgen",
    hardened: true,
    host_network: false,
    config: hubble_certgen_config,
};

/// `certValidityDuration` days as the hours certgen and cert-manager take.
fn validity_hours(ctx: &Ctx) -> i64 {
    to_int64(ctx.v("hubble.tls.auto.certValidityDuration")).wrapping_mul(24)
}

/// One certificate entry of certgen's configuration text.
fn certgen_entry(
    out: &mut String,
    ns: &str,
    name: &str,
    cn: &str,
    hosts: &[&Value],
    usage: &[&str],
    validity: &str,
) {
    out.push_str(&format!(
        "- name: {name}\n  namespace: {ns}\n  commonName: {cn}\n  hosts:\n  - {cn}\n"
    ));
    for h in hosts {
        for item in range_items(h) {
            out.push_str(&format!("  - {}\n", quote_text(item)));
        }
    }
    out.push_str("  usage:\n");
    for u in usage {
        out.push_str(&format!("  - {u}\n"));
    }
    out.push_str(&format!("  validity: {validity}\n"));
}

/// The certificates Hubble's certgen issues, as the YAML text certgen reads from its environment.
fn hubble_certgen_config(ctx: &Ctx) -> String {
    let ns = ctx.namespace();
    let validity = format!("{}h", validity_hours(ctx));
    let cl = cluster_dns(ctx);
    let relay = ctx.plan.hubble_relay;
    let relay_server = relay && ctx.on("hubble.relay.tls.server.enabled");
    let mut s = String::from("certs:\n");
    let grpc = format!("\"*.{cl}.hubble-grpc.cilium.io\"");
    certgen_entry(
        &mut s,
        &ns,
        "hubble-server-certs",
        &grpc,
        &[
            ctx.v("hubble.tls.server.extraDnsNames"),
            ctx.v("hubble.tls.server.extraIpAddresses"),
        ],
        &["signing", "key encipherment", "server auth", "client auth"],
        &validity,
    );
    let relay_cn = "\"*.hubble-relay.cilium.io\"";
    if relay {
        certgen_entry(
            &mut s,
            &ns,
            "hubble-relay-client-certs",
            relay_cn,
            &[],
            &["signing", "key encipherment", "client auth"],
            &validity,
        );
    }
    if relay_server {
        certgen_entry(
            &mut s,
            &ns,
            "hubble-relay-server-certs",
            relay_cn,
            &[
                ctx.v("hubble.relay.tls.server.extraDnsNames"),
                ctx.v("hubble.relay.tls.server.extraIpAddresses"),
            ],
            &["signing", "key encipherment", "server auth"],
            &validity,
        );
    }
    if ctx.on("hubble.metrics.enabled") && ctx.on("hubble.metrics.tls.enabled") {
        // The chart leaves a stray quote filter and closing braces after this name in the text
        // certgen receives, kept as is.
        let cn = format!("{cl}.hubble-metrics.cilium.io | quote }}}}");
        certgen_entry(
            &mut s,
            &ns,
            "hubble-metrics-server-certs",
            &cn,
            &[
                ctx.v("hubble.metrics.tls.server.extraDnsNames"),
                ctx.v("hubble.metrics.tls.server.extraIpAddresses"),
            ],
            &["signing", "key encipherment", "server auth"],
            &validity,
        );
    }
    if ctx.plan.hubble_ui && relay_server {
        certgen_entry(
            &mut s,
            &ns,
            "hubble-ui-client-certs",
            "\"*.hubble-ui.cilium.io\"",
            &[],
            &["signing", "key encipherment", "client auth"],
            &validity,
        );
    }
    s
}

/// cert-manager Certificates for each Hubble TLS endpoint.
fn cert_manager(ctx: &Ctx) -> Vec<Value> {
    let tls = ctx.on("hubble.tls.enabled");
    let relay = ctx.plan.hubble_relay;
    let relay_server = relay && ctx.on("hubble.relay.tls.server.enabled");
    let cl = cluster_dns(ctx);
    let mut out = Vec::new();
    if ctx.on("hubble.metrics.tls.enabled") {
        out.push(certificate(
            ctx,
            "hubble-metrics-server-certs",
            &format!("{cl}.hubble-metrics.cilium.io"),
            "hubble.metrics.tls.server",
            &["signing", "key encipherment", "server auth"],
        ));
    }
    if tls && relay {
        out.push(certificate(
            ctx,
            "hubble-relay-client-certs",
            "*.hubble-relay.cilium.io",
            "",
            &["signing", "key encipherment", "client auth"],
        ));
    }
    if tls && relay_server {
        out.push(certificate(
            ctx,
            "hubble-relay-server-certs",
            "*.hubble-relay.cilium.io",
            "hubble.relay.tls.server",
            &["signing", "key encipherment", "server auth"],
        ));
    }
    if tls {
        out.push(certificate(
            ctx,
            "hubble-server-certs",
            &format!("*.{cl}.hubble-grpc.cilium.io"),
            "hubble.tls.server",
            &["signing", "key encipherment", "server auth", "client auth"],
        ));
    }
    if tls && relay_server && ctx.plan.hubble_ui {
        out.push(certificate(
            ctx,
            "hubble-ui-client-certs",
            "*.hubble-ui.cilium.io",
            "",
            &["signing", "key encipherment", "client auth"],
        ));
    }
    out
}

/// One cert-manager Certificate; `extra` is the values block with extra DNS names and IPs.
fn certificate(ctx: &Ctx, name: &str, cn: &str, extra: &str, usages: &[&str]) -> Value {
    let ns = ctx.namespace();
    let mut dns = vec![tree!(cn)];
    let mut spec = Map::new();
    spec.insert(
        "issuerRef".into(),
        ctx.v("hubble.tls.auto.certManagerIssuerRef").clone(),
    );
    if ctx.plan.has(Change::HubbleCertManagerSubject) {
        // The chart writes `privateKey` a second time below, with the rotation policy; that
        // later key is the one a YAML reader keeps, so the value's own block never shows.
        if let Some(subject) = with(ctx.v("hubble.tls.auto.subject")) {
            spec.insert("subject".into(), subject);
        }
    }
    spec.insert("secretName".into(), tree!(name));
    spec.insert("commonName".into(), tree!(cn));
    if !extra.is_empty() {
        let block = ctx.v(extra);
        for d in range_items(&block["extraDnsNames"]) {
            dns.push(tree!(crate::tmpl::quote(d)));
        }
        if truthy(&block["extraIpAddresses"]) {
            let ips: Vec<Value> = range_items(&block["extraIpAddresses"])
                .into_iter()
                .map(|ip| tree!(crate::tmpl::quote(ip)))
                .collect();
            spec.insert("ipAddresses".into(), Value::Array(ips));
        }
    }
    spec.insert("dnsNames".into(), Value::Array(dns));
    spec.insert(
        "duration".into(),
        bare(&Value::String(format!("{}h0m0s", validity_hours(ctx)))),
    );
    spec.insert("privateKey".into(), tree!({"rotationPolicy": "Always"}));
    spec.insert("isCA".into(), tree!(false));
    spec.insert("usages".into(), tree!(usages));
    tree!({
        "apiVersion": "cert-manager.io/v1",
        "kind": "Certificate",
        "metadata": metadata(name, Some(&ns), common_labels(ctx), with(ctx.v("hubble.annotations"))),
        "spec": spec,
    })
}

/// TLS Secrets from certificates given in values (auto TLS off), unless an existing secret is named.
fn provided(ctx: &Ctx) -> Result<Vec<Value>, RenderError> {
    let tls = ctx.on("hubble.tls.enabled");
    let relay = ctx.plan.hubble_relay;
    let relay_server = relay && ctx.on("hubble.relay.tls.server.enabled");
    let agent = ctx.on("agent");
    let mut out = Vec::new();
    if agent
        && ctx.on("hubble.metrics.tls.enabled")
        && !ctx.on("hubble.metrics.tls.server.existingSecret")
    {
        out.push(tls_secret(
            ctx,
            "hubble-metrics-server-certs",
            "hubble.metrics.tls.server",
        )?);
    }
    if tls && relay && !ctx.on("hubble.relay.tls.client.existingSecret") {
        out.push(tls_secret(
            ctx,
            "hubble-relay-client-certs",
            "hubble.relay.tls.client",
        )?);
    }
    if tls && relay_server && !ctx.on("hubble.relay.tls.server.existingSecret") {
        out.push(tls_secret(
            ctx,
            "hubble-relay-server-certs",
            "hubble.relay.tls.server",
        )?);
    }
    if agent && tls && !ctx.on("hubble.tls.server.existingSecret") {
        out.push(tls_secret(ctx, "hubble-server-certs", "hubble.tls.server")?);
    }
    if tls && relay_server && ctx.plan.hubble_ui && !ctx.on("hubble.ui.tls.client.existingSecret") {
        out.push(tls_secret(
            ctx,
            "hubble-ui-client-certs",
            "hubble.ui.tls.client",
        )?);
    }
    Ok(out)
}

fn tls_secret(ctx: &Ctx, name: &str, block: &str) -> Result<Value, RenderError> {
    let ns = ctx.namespace();
    let mut data = Map::new();
    data.insert(
        "ca.crt".into(),
        bare(&Value::String(ctx.text("tls.ca.cert"))),
    );
    for (key, field) in [("tls.crt", "cert"), ("tls.key", "key")] {
        let path = format!("{block}.{field}");
        let v = ctx.v(&path);
        if matches!(v, Value::Null) || v.as_str() == Some("") {
            return Err(ctx.invalid(
                &path,
                format!(
                    "missing {path}: with hubble.tls.auto.enabled false the chart builds the {name} Secret from {block}.cert and {block}.key (base64 PEM); set both, name an existing Secret in {block}.existingSecret, or turn hubble.tls.auto.enabled back on"
                ),
            ));
        }
        data.insert(key.into(), bare(&Value::String(print(v))));
    }
    Ok(tree!({
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": metadata(name, Some(&ns), common_labels(ctx), with(ctx.v("hubble.annotations"))),
        "type": "kubernetes.io/tls",
        "data": data,
    }))
}
