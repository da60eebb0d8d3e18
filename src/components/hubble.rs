//! Mirrors the chart's templates: hubble/
//!
//! Also holds the small builders the Hubble Relay and Hubble UI modules share with it (labels,
//! Sprig's `quote` inside text blocks, PodDisruptionBudget and topology spread rules).

use serde_json::{json, Map, Value};

use super::common::{common_labels, image, merged, metadata, put};
use super::Ctx;
use crate::error::RenderError;
use crate::tmpl::{bare, print, truthy};

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
    let auto = ctx.on("hubble.tls.auto.enabled");
    let method = ctx.v("hubble.tls.auto.method");
    if tls && auto && method.as_str() == Some("cronJob") {
        out.extend(certgen(ctx));
    }
    if hubble && auto && method.as_str() == Some("certmanager") {
        out.extend(cert_manager(ctx));
    }
    if hubble && !auto {
        out.extend(provided(ctx)?);
    }
    Ok(out)
}

/// A fixed label set followed by `commonLabels` and any further label maps, as consecutive
/// `toYaml` blocks under one `labels:` key produce.
pub(crate) fn labels(ctx: &Ctx, fixed: &[(&str, &str)], extra: &[&Value]) -> Option<Value> {
    let own: Map<String, Value> = fixed
        .iter()
        .map(|(k, v)| (k.to_string(), Value::String(v.to_string())))
        .collect();
    let own = Value::Object(own);
    let common = common_labels(ctx).unwrap_or(Value::Null);
    let mut maps: Vec<&Value> = vec![&own, &common];
    maps.extend_from_slice(extra);
    merged(&maps)
}

/// `cluster.name` with dots replaced, as the certificates' names carry it.
fn cluster_dns(ctx: &Ctx) -> String {
    ctx.text("cluster.name").replace('.', "-")
}

/// Sprig's `quote` as it lands in a text block: Go's `%q` of the printed value, nothing for nil.
pub(crate) fn quote_text(v: &Value) -> String {
    if v.is_null() {
        return String::new();
    }
    let s = print(v);
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Sprig's integer conversion (`mul`, `int`): numbers truncate, integer text parses, else 0.
pub(crate) fn to_int64(v: &Value) -> i64 {
    match v {
        Value::Number(n) => n
            .as_i64()
            .unwrap_or_else(|| n.as_f64().map(|f| f as i64).unwrap_or(0)),
        Value::String(s) => parse_int_text(s),
        Value::Bool(b) => i64::from(*b),
        _ => 0,
    }
}

fn parse_int_text(s: &str) -> i64 {
    let (neg, body) = match s.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    let lower = body.to_ascii_lowercase();
    let parsed = if let Some(h) = lower.strip_prefix("0x") {
        i64::from_str_radix(&h.replace('_', ""), 16).ok()
    } else if let Some(b) = lower.strip_prefix("0b") {
        i64::from_str_radix(&b.replace('_', ""), 2).ok()
    } else if let Some(o) = lower.strip_prefix("0o") {
        i64::from_str_radix(&o.replace('_', ""), 8).ok()
    } else if lower.len() > 1 && lower.starts_with('0') {
        i64::from_str_radix(&lower[1..].replace('_', ""), 8).ok()
    } else {
        lower.parse::<i64>().ok()
    };
    match parsed {
        Some(n) if neg => -n,
        Some(n) => n,
        None => 0,
    }
}

/// The items `range` visits: a list's elements, or a map's values in key order.
pub(crate) fn range_items(v: &Value) -> Vec<&Value> {
    match v {
        Value::Array(a) => a.iter().collect(),
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            keys.into_iter().filter_map(|k| m.get(k)).collect()
        }
        _ => Vec::new(),
    }
}

/// `v` cloned when Go-template true (the `with x` + `toYaml` pattern).
pub(crate) fn with(v: &Value) -> Option<Value> {
    truthy(v).then(|| v.clone())
}

/// Appends list items that a `toYaml` block writes at a list's own indentation.
pub(crate) fn extend_list(list: &mut Vec<Value>, extra: &Value) {
    if let Value::Array(items) = extra {
        list.extend(items.iter().cloned());
    }
}

/// `topologySpreadConstraints` where each constraint without a label selector gets the
/// component's own pods as selector.
pub(crate) fn topology_spread(constraints: &Value, app: &str) -> Option<Value> {
    if !truthy(constraints) {
        return None;
    }
    let items = range_items(constraints)
        .into_iter()
        .map(|c| {
            let mut c = c.clone();
            if !truthy(&c["labelSelector"]) {
                if let Value::Object(m) = &mut c {
                    m.insert(
                        "labelSelector".into(),
                        json!({"matchLabels": {"k8s-app": app}}),
                    );
                }
            }
            c
        })
        .collect();
    Some(Value::Array(items))
}

/// A PodDisruptionBudget of one component (`block` is its `podDisruptionBudget` values).
pub(crate) fn pdb(
    ctx: &Ctx,
    app: &str,
    block: &Value,
    annotations: &Value,
) -> Result<Value, RenderError> {
    let mut spec = Map::new();
    for key in ["maxUnavailable", "minAvailable"] {
        if truthy(&block[key]) {
            spec.insert(key.into(), bare(&block[key]));
        }
    }
    if ctx.plan.kube.at_least(1, 27) && truthy(&block["unhealthyPodEvictionPolicy"]) {
        spec.insert(
            "unhealthyPodEvictionPolicy".into(),
            bare(&block["unhealthyPodEvictionPolicy"]),
        );
    }
    spec.insert("selector".into(), json!({"matchLabels": {"k8s-app": app}}));
    let ns = ctx.namespace();
    Ok(json!({
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": metadata(
            app,
            Some(&ns),
            labels(ctx, &[("k8s-app", app), ("app.kubernetes.io/name", app), ("app.kubernetes.io/part-of", "cilium")], &[]),
            with(annotations),
        ),
        "spec": spec,
    }))
}

/// The CA bundle source the Relay and UI mount instead of the certificate secret's `ca.crt`.
pub(crate) fn ca_bundle_source(ctx: &Ctx, path: &str) -> Value {
    let kind = if ctx.on("tls.caBundle.useSecret") {
        "secret"
    } else {
        "configMap"
    };
    json!({kind: {
        "name": bare(&Value::String(ctx.text("tls.caBundle.name"))),
        "items": [{"key": bare(&Value::String(ctx.text("tls.caBundle.key"))), "path": path}],
    }})
}

fn peer_service(ctx: &Ctx) -> Value {
    let ns = ctx.namespace();
    let port = if ctx.on("hubble.peerService.servicePort") {
        bare(ctx.v("hubble.peerService.servicePort"))
    } else if ctx.on("hubble.tls.enabled") {
        json!(443)
    } else {
        json!(80)
    };
    json!({
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": metadata(
            "hubble-peer",
            Some(&ns),
            labels(ctx, &[("k8s-app", "cilium"), ("app.kubernetes.io/part-of", "cilium"), ("app.kubernetes.io/name", "hubble-peer")], &[]),
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
        json!({
            "prometheus.io/scrape": "true",
            "prometheus.io/port": crate::tmpl::quote(ctx.v("hubble.metrics.port")),
        })
    };
    json!({
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": metadata(
            "hubble-metrics",
            Some(&ns),
            labels(ctx, &[("k8s-app", "hubble"), ("app.kubernetes.io/name", "hubble"), ("app.kubernetes.io/part-of", "cilium")], &[]),
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
    let fixed: &[(&str, &str)] = if ctx.plan.cilium.at_least(1, 18, 2) {
        &[
            ("app.kubernetes.io/part-of", "cilium"),
            ("app.kubernetes.io/name", "hubble"),
        ]
    } else {
        &[("app.kubernetes.io/part-of", "cilium")]
    };
    let mut endpoint = Map::new();
    endpoint.insert("port".into(), json!("hubble-metrics"));
    endpoint.insert(
        "interval".into(),
        json!(crate::tmpl::quote(&sm["interval"])),
    );
    if truthy(&sm["scrapeTimeout"]) {
        endpoint.insert(
            "scrapeTimeout".into(),
            json!(crate::tmpl::quote(&sm["scrapeTimeout"])),
        );
    }
    endpoint.insert("honorLabels".into(), json!(true));
    endpoint.insert("path".into(), json!("/metrics"));
    if ctx.on("hubble.metrics.tls.enabled") {
        // Sprig's merge keeps the user's keys and only adds a missing serverName.
        let mut tls = match &sm["tlsConfig"] {
            Value::Object(m) => m.clone(),
            _ => Map::new(),
        };
        tls.entry("serverName").or_insert_with(|| {
            Value::String(format!("{}.hubble-metrics.cilium.io", cluster_dns(ctx)))
        });
        endpoint.insert("tlsConfig".into(), Value::Object(tls));
        endpoint.insert("scheme".into(), json!("https"));
    } else {
        endpoint.insert("scheme".into(), json!("http"));
    }
    for key in ["relabelings", "metricRelabelings"] {
        if let Some(v) = with(&sm[key]) {
            endpoint.insert(key.into(), v);
        }
    }
    let mut spec = json!({
        "selector": {"matchLabels": {"k8s-app": "hubble"}},
        "namespaceSelector": {"matchNames": [own_ns]},
        "endpoints": [endpoint],
    });
    if truthy(&sm["jobLabel"]) {
        put(
            &mut spec,
            "jobLabel",
            Some(json!(crate::tmpl::quote(&sm["jobLabel"]))),
        );
    }
    json!({
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "ServiceMonitor",
        "metadata": metadata(
            "hubble",
            Some(&ns),
            labels(ctx, fixed, &[&sm["labels"]]),
            merged(&[ctx.v("hubble.annotations"), &sm["annotations"]]),
        ),
        "spec": spec,
    })
}

const DASHBOARDS: &str = "files/hubble/dashboards/";

/// One ConfigMap per Grafana dashboard bundled in the chart, named after its file.
fn dashboards(ctx: &Ctx) -> Result<Vec<Value>, RenderError> {
    const VALUE: &str = "hubble.metrics.dashboards.enabled";
    let Some(chart) = ctx.chart else {
        return Err(ctx
            .bundled(
                VALUE,
                "files/hubble/dashboards/hubble-dashboard.json",
                "false",
            )
            .err()
            .unwrap_or_else(|| ctx.invalid(VALUE, "needs the chart archive")));
    };
    let d = ctx.v("hubble.metrics.dashboards");
    let ns = if truthy(&d["namespace"]) {
        print(&d["namespace"])
    } else {
        ctx.namespace()
    };
    let extra = if truthy(&d["label"]) {
        let value = if truthy(&d["labelValue"]) {
            print(&d["labelValue"])
        } else {
            "1".to_string()
        };
        json!({ print(&d["label"]): value })
    } else {
        Value::Null
    };
    let mut out = Vec::new();
    for path in chart.list(DASHBOARDS) {
        let Some(file) = path.strip_prefix(DASHBOARDS) else {
            continue;
        };
        let Some(stem) = file.strip_suffix(".json") else {
            continue;
        };
        if stem.contains('/') {
            continue;
        }
        let text = ctx.bundled(VALUE, path, "false")?;
        let name: String = stem.chars().take(63).collect();
        let name = name.strip_suffix('-').unwrap_or(&name).to_string();
        out.push(json!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": metadata(
                &name,
                Some(&ns),
                labels(ctx, &[("k8s-app", "hubble"), ("app.kubernetes.io/name", "hubble"), ("app.kubernetes.io/part-of", "cilium")], &[&extra]),
                merged(&[ctx.v("hubble.annotations"), &d["annotations"]]),
            ),
            "data": { format!("{stem}.json"): text },
        }));
    }
    Ok(out)
}

/// The certgen CronJob, its first-run Job, and their RBAC.
fn certgen(ctx: &Ctx) -> Vec<Value> {
    let ns = ctx.namespace();
    let sa = ctx.v("serviceAccounts.hubblecertgen");
    let sa_name = crate::tmpl::quote(&sa["name"]);
    let ha = ctx.v("hubble.annotations");
    let own = [
        ("k8s-app", "hubble-generate-certs"),
        ("app.kubernetes.io/name", "hubble-generate-certs"),
        ("app.kubernetes.io/part-of", "cilium"),
    ];
    let spec = certgen_job_spec(ctx, &HUBBLE_CERTGEN);
    let mut out = Vec::new();
    if truthy(ctx.v("hubble.tls.auto.schedule")) {
        out.push(json!({
            "apiVersion": "batch/v1",
            "kind": "CronJob",
            "metadata": metadata(
                "hubble-generate-certs",
                Some(&ns),
                labels(ctx, &own, &[]),
                merged(&[ha, ctx.v("certgen.annotations.cronJob")]),
            ),
            "spec": {
                "schedule": crate::tmpl::quote(ctx.v("hubble.tls.auto.schedule")),
                "concurrencyPolicy": "Forbid",
                "jobTemplate": {"spec": spec.clone()},
            },
        }));
    }
    let hook = json!({"helm.sh/hook": "post-install,post-upgrade"});
    out.push(json!({
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": metadata(
            "hubble-generate-certs",
            Some(&ns),
            labels(ctx, &own, &[]),
            merged(&[&hook, ctx.v("certgen.annotations.job"), ha]),
        ),
        "spec": spec,
    }));
    if truthy(&sa["create"]) {
        if ctx.on("rbac.create") {
            let part_of = labels(ctx, &[("app.kubernetes.io/part-of", "cilium")], &[]);
            out.push(json!({
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
            out.push(json!({
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "RoleBinding",
                "metadata": metadata("hubble-generate-certs", Some(&ns), part_of, with(ha)),
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "hubble-generate-certs"},
                "subjects": [{"kind": "ServiceAccount", "name": sa_name, "namespace": ns}],
            }));
        }
        out.push(json!({
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": metadata(&sa_name, Some(&ns), common_labels(ctx), merged(&[ha, &sa["annotations"]])),
        }));
    }
    out
}

/// What differs between the certgen Jobs of Hubble and of ClusterMesh, which share their shape
/// (including the pre-1.18.4 resources indentation).
pub(crate) struct CertgenJob {
    /// The pod label `k8s-app`.
    pub app: &'static str,
    /// Value path of the extra pod labels.
    pub pod_labels: &'static str,
    /// Value path of the service account block (`serviceAccounts.x`).
    pub service_account: &'static str,
    /// Whether the pod runs with RuntimeDefault seccomp and a capability-less container.
    pub hardened: bool,
    pub host_network: bool,
    /// Builds the `CILIUM_CERTGEN_CONFIG` text (the certificates to issue).
    pub config: fn(&Ctx) -> String,
}

const HUBBLE_CERTGEN: CertgenJob = CertgenJob {
    app: "hubble-generate-certs",
    pod_labels: "certgen.podLabels",
    service_account: "serviceAccounts.hubblecertgen",
    hardened: true,
    host_network: false,
    config: hubble_certgen_config,
};

/// The Job spec certgen runs with (shared by the Job and the CronJob's job template).
pub(crate) fn certgen_job_spec(ctx: &Ctx, job: &CertgenJob) -> Value {
    let cg = ctx.v("certgen");
    let ns = ctx.namespace();
    let mut args = Vec::new();
    if ctx.on("debug.enabled") {
        args.push(json!("--debug"));
    }
    args.push(json!(format!(
        "--ca-generate={}",
        ctx.text("certgen.generateCA")
    )));
    args.push(json!("--ca-reuse-secret"));
    args.push(json!(format!("--ca-secret-namespace={ns}")));
    args.push(json!("--ca-secret-name=cilium-ca"));
    args.push(json!("--ca-common-name=Cilium CA"));
    let mut container = json!({
        "name": "certgen",
        "image": image(&cg["image"]),
        "imagePullPolicy": bare(&Value::String(crate::tmpl::quote(&cg["image"]["pullPolicy"]))),
        "command": ["/usr/bin/cilium-certgen"],
        "args": args,
        "env": [{"name": "CILIUM_CERTGEN_CONFIG", "value": (job.config)(ctx)}],
    });
    if truthy(&cg["resources"]) {
        if ctx.plan.cilium.at_least(1, 18, 4) {
            put(&mut container, "resources", Some(cg["resources"].clone()));
        } else if let (Value::Object(c), Value::Object(r)) = (&mut container, &cg["resources"]) {
            // Before 1.18.4 the chart indented the resources block one level too shallow, so its
            // keys (limits, requests) land on the container itself.
            for (k, v) in r {
                c.insert(k.clone(), v.clone());
            }
        }
    }
    if job.hardened {
        put(
            &mut container,
            "securityContext",
            Some(json!({"capabilities": {"drop": ["ALL"]}, "allowPrivilegeEscalation": false})),
        );
    }
    put(
        &mut container,
        "volumeMounts",
        with(&cg["extraVolumeMounts"]),
    );
    let sa = ctx.v(job.service_account);
    let sa_name = crate::tmpl::quote(&sa["name"]);
    let mut pod = json!({
        "containers": [container],
        "hostNetwork": job.host_network,
        "serviceAccount": sa_name,
        "serviceAccountName": sa_name,
        "automountServiceAccountToken": bare(&Value::String(crate::tmpl::quote(&sa["automount"]))),
        "restartPolicy": "OnFailure",
    });
    if job.hardened {
        put(
            &mut pod,
            "securityContext",
            Some(json!({"seccompProfile": {"type": "RuntimeDefault"}})),
        );
    }
    put(&mut pod, "nodeSelector", with(&cg["nodeSelector"]));
    if truthy(&cg["priorityClassName"]) {
        put(
            &mut pod,
            "priorityClassName",
            Some(bare(&cg["priorityClassName"])),
        );
    }
    put(&mut pod, "tolerations", with(&cg["tolerations"]));
    put(
        &mut pod,
        "imagePullSecrets",
        with(ctx.v("imagePullSecrets")),
    );
    put(&mut pod, "volumes", with(&cg["extraVolumes"]));
    put(&mut pod, "affinity", with(&cg["affinity"]));
    let pod_labels = merged(&[&json!({"k8s-app": job.app}), ctx.v(job.pod_labels)]);
    json!({
        "template": {
            "metadata": {"labels": pod_labels},
            "spec": pod,
        },
        "ttlSecondsAfterFinished": bare(&cg["ttlSecondsAfterFinished"]),
    })
}

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
    let relay = ctx.on("hubble.relay.enabled");
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
    if ctx.on("hubble.ui.enabled") && relay_server {
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
    let relay = ctx.on("hubble.relay.enabled");
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
    if tls && relay_server && ctx.on("hubble.ui.enabled") {
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
    let mut dns = vec![json!(cn)];
    let mut spec = Map::new();
    spec.insert(
        "issuerRef".into(),
        ctx.v("hubble.tls.auto.certManagerIssuerRef").clone(),
    );
    spec.insert("secretName".into(), json!(name));
    spec.insert("commonName".into(), json!(cn));
    if !extra.is_empty() {
        let block = ctx.v(extra);
        for d in range_items(&block["extraDnsNames"]) {
            dns.push(json!(crate::tmpl::quote(d)));
        }
        if truthy(&block["extraIpAddresses"]) {
            let ips: Vec<Value> = range_items(&block["extraIpAddresses"])
                .into_iter()
                .map(|ip| json!(crate::tmpl::quote(ip)))
                .collect();
            spec.insert("ipAddresses".into(), Value::Array(ips));
        }
    }
    spec.insert("dnsNames".into(), Value::Array(dns));
    spec.insert(
        "duration".into(),
        bare(&Value::String(format!("{}h0m0s", validity_hours(ctx)))),
    );
    spec.insert("privateKey".into(), json!({"rotationPolicy": "Always"}));
    spec.insert("isCA".into(), json!(false));
    spec.insert("usages".into(), json!(usages));
    json!({
        "apiVersion": "cert-manager.io/v1",
        "kind": "Certificate",
        "metadata": metadata(name, Some(&ns), common_labels(ctx), with(ctx.v("hubble.annotations"))),
        "spec": spec,
    })
}

/// TLS Secrets from certificates given in values (auto TLS off), unless an existing secret is named.
fn provided(ctx: &Ctx) -> Result<Vec<Value>, RenderError> {
    let tls = ctx.on("hubble.tls.enabled");
    let relay = ctx.on("hubble.relay.enabled");
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
    if tls
        && relay_server
        && ctx.on("hubble.ui.enabled")
        && !ctx.on("hubble.ui.tls.client.existingSecret")
    {
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
    Ok(json!({
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": metadata(name, Some(&ns), common_labels(ctx), with(ctx.v("hubble.annotations"))),
        "type": "kubernetes.io/tls",
        "data": data,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sprig_int_conversion() {
        assert_eq!(to_int64(&json!(365.0)), 365);
        assert_eq!(to_int64(&json!(1.9)), 1);
        assert_eq!(to_int64(&json!("1095")), 1095);
        assert_eq!(to_int64(&json!("1.5")), 0);
        assert_eq!(to_int64(&Value::Null), 0);
    }

    #[test]
    fn spread_constraints_default_to_own_pods() {
        let c =
            json!([{"maxSkew": 1}, {"maxSkew": 2, "labelSelector": {"matchLabels": {"a": "b"}}}]);
        let out = topology_spread(&c, "hubble-ui").unwrap_or_default();
        assert_eq!(
            out[0]["labelSelector"]["matchLabels"]["k8s-app"],
            "hubble-ui"
        );
        assert_eq!(out[1]["labelSelector"]["matchLabels"]["a"], "b");
        assert!(topology_spread(&json!([]), "x").is_none());
    }

    #[test]
    fn quoting_inside_text() {
        assert_eq!(quote_text(&json!("a\"b")), "\"a\\\"b\"");
        assert_eq!(quote_text(&json!(1.0)), "\"1\"");
        assert_eq!(quote_text(&Value::Null), "");
    }
}
