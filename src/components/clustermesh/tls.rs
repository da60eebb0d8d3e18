//! The apiserver's certificates: Cilium's certgen CronJob/Job with its RBAC ("cronJob"),
//! cert-manager Certificates ("certmanager"), or Secrets from values (auto TLS off). The chart's
//! "helm" method mints random keys and is never used (see `plan`).

use serde_json::Value;

use super::{mesh_annotations, part_of_labels, State, API};
use crate::changes::Change;
use crate::components::certgen::{self, CertgenJob};
use crate::components::common::{
    self, common_labels, labels, merged, metadata, put, with_chart_label,
};
use crate::components::Ctx;
use crate::error::RenderError;
use crate::plan::CertSource;
use crate::tmpl::{bare, go_quote, quote, quote_text, range_items, to_int64, truthy, with};
use crate::yaml::go_emit::to_yaml;

const CERTGEN: &str = "clustermesh-apiserver-generate-certs";

fn p(key: &str) -> String {
    format!("{API}.tls.{key}")
}

pub(super) fn render(ctx: &Ctx, s: &State) -> Result<Vec<Value>, RenderError> {
    let mut out = Vec::new();
    if ctx.plan.clustermesh_certs == CertSource::Values {
        let provided = !ctx.plan.has(Change::ClustermeshProvidedTlsRemoved);
        if provided && s.internal && ctx.on(&p("enableSecrets")) {
            for cert in ["admin", "remote", "server"] {
                out.push(provided_secret(ctx, cert)?);
            }
        }
        return Ok(out);
    }
    match ctx.plan.clustermesh_certs {
        CertSource::Certgen => {
            if ctx.plan.has(Change::ClustermeshServerCertNames) {
                ServerNames::check(ctx)?;
            }
            if ctx.on(&p("auto.schedule")) {
                out.push(cron_job(ctx, s));
            }
            if s.internal {
                out.push(job(ctx));
            }
            if ctx.on("serviceAccounts.clustermeshcertgen.create") {
                out.push(role(ctx));
                out.push(role_binding(ctx));
                out.push(certgen_service_account(ctx));
            }
        }
        CertSource::CertManager if s.internal => {
            if ctx.plan.has(Change::ClustermeshServerCertNames) {
                ServerNames::check(ctx)?;
            }
            out.push(certificate(ctx, "admin", admin_cn(ctx)));
            if s.kvstoremesh {
                out.push(certificate(ctx, "local", local_cn(ctx)));
            }
            out.push(certificate(ctx, "remote", remote_cn(ctx)));
            out.push(server_certificate(ctx)?);
        }
        _ => {}
    }
    Ok(out)
}

fn admin_cn(ctx: &Ctx) -> String {
    format!("admin-{}", ctx.text("cluster.name"))
}

fn local_cn(ctx: &Ctx) -> String {
    format!("local-{}", ctx.text("cluster.name"))
}

/// With per-cluster users ("cluster" auth) the remote client names its own cluster.
fn remote_cn(ctx: &Ctx) -> String {
    if ctx.text(&p("authMode")) == "cluster" {
        format!("remote-{}", ctx.text("cluster.name"))
    } else {
        "remote".into()
    }
}

/// Days of validity, as the chart multiplies them into hours.
fn validity_hours(ctx: &Ctx) -> i64 {
    to_int64(ctx.v(&p("auto.certValidityDuration"))).wrapping_mul(24)
}

/// The server certificate's names from 1.20: the apiserver Service's DNS name, then the extra
/// names of `tls.auto.server`, or when those are empty, of the older `tls.server`.
struct ServerNames {
    common_name: String,
    dns: Vec<Value>,
    ips: Vec<Value>,
}

impl ServerNames {
    /// The names, once `check` has passed.
    fn new(ctx: &Ctx) -> ServerNames {
        let common_name = format!("clustermesh-apiserver.{}.svc", ctx.namespace());
        let mut dns = vec![
            Value::String(common_name.clone()),
            tree!("*.mesh.cilium.io"),
        ];
        dns.extend(extra_names(ctx, EXTRA_DNS));
        let mut ips = vec![tree!("127.0.0.1"), tree!("::1")];
        ips.extend(extra_names(ctx, EXTRA_IPS));
        ServerNames {
            common_name,
            dns,
            ips,
        }
    }

    /// The chart concatenates the extra names to its own list, which Sprig refuses for
    /// anything but a list.
    fn check(ctx: &Ctx) -> Result<(), RenderError> {
        for key in [EXTRA_DNS, EXTRA_IPS] {
            let path = extra_names_path(ctx, key);
            if !matches!(ctx.v(&path), Value::Null | Value::Array(_)) {
                return Err(ctx.invalid(&path, "must be a list (Helm fails too)"));
            }
        }
        Ok(())
    }
}

const EXTRA_DNS: &str = "extraDnsNames";
const EXTRA_IPS: &str = "extraIpAddresses";

/// `tls.auto.server.KEY` when set, else the older `tls.server.KEY`.
fn extra_names_path(ctx: &Ctx, key: &str) -> String {
    let current = p(&format!("auto.server.{key}"));
    if truthy(ctx.v(&current)) {
        current
    } else {
        p(&format!("server.{key}"))
    }
}

fn extra_names(ctx: &Ctx, key: &str) -> Vec<Value> {
    match ctx.v(&extra_names_path(ctx, key)) {
        Value::Array(a) => a.clone(),
        _ => Vec::new(),
    }
}

/// `toYaml` of `v`, each line indented by `pad`, ending in a newline.
fn indent_yaml(v: &Value, pad: &str) -> String {
    to_yaml(v)
        .split('\n')
        .map(|line| format!("{pad}{line}\n"))
        .collect()
}

/// certgen's configuration: which Secrets to issue, for which names, for how long.
fn certgen_config(ctx: &Ctx, ns: &str) -> String {
    let validity = format!("{}h", validity_hours(ctx));
    let mut t = String::from("certs:\n");
    t.push_str("- name: clustermesh-apiserver-server-cert\n");
    t.push_str(&format!("  namespace: {ns}\n"));
    if ctx.plan.has(Change::ClustermeshServerCertNames) {
        let names = ServerNames::new(ctx);
        t.push_str(&format!("  commonName: {}\n", names.common_name));
        t.push_str("  hosts:\n");
        for list in [names.dns, names.ips] {
            t.push_str(&indent_yaml(&Value::Array(list), "  "));
        }
    } else {
        t.push_str("  commonName: \"clustermesh-apiserver.cilium.io\"\n");
        t.push_str("  hosts:\n");
        t.push_str("  - \"clustermesh-apiserver.cilium.io\"\n");
        t.push_str("  - \"*.mesh.cilium.io\"\n");
        t.push_str(&format!("  - \"clustermesh-apiserver.{ns}.svc\"\n"));
        for dns in range_items(ctx.v(&p("server.extraDnsNames"))) {
            t.push_str(&format!("  - {}\n", quote_text(dns)));
        }
        t.push_str("  - \"127.0.0.1\"\n");
        t.push_str("  - \"::1\"\n");
        for ip in range_items(ctx.v(&p("server.extraIpAddresses"))) {
            t.push_str(&format!("  - {}\n", quote_text(ip)));
        }
    }
    t.push_str("  usage:\n  - signing\n  - key encipherment\n  - server auth\n");
    t.push_str(&format!("  validity: {validity}\n"));
    let client = |t: &mut String, name: &str, cn: &str| {
        t.push_str(&format!("- name: {name}\n"));
        t.push_str(&format!("  namespace: {ns}\n"));
        t.push_str(&format!("  commonName: {}\n", go_quote(cn)));
        t.push_str("  usage:\n  - signing\n  - key encipherment\n  - client auth\n");
        t.push_str(&format!("  validity: {validity}\n"));
    };
    client(&mut t, "clustermesh-apiserver-admin-cert", &admin_cn(ctx));
    if ctx.on("clustermesh.useAPIServer") {
        client(&mut t, "clustermesh-apiserver-remote-cert", &remote_cn(ctx));
        if ctx.on(&format!("{API}.kvstoremesh.enabled")) {
            client(&mut t, "clustermesh-apiserver-local-cert", &local_cn(ctx));
        }
    }
    t
}

/// The apiserver's certgen Job: Hubble's shape (certgen.rs applies the 1.19 hardening).
const CLUSTERMESH_CERTGEN: CertgenJob = CertgenJob {
    app: CERTGEN,
    pod_labels: "clustermesh.apiserver.podLabels",
    service_account: "serviceAccounts.clustermeshcertgen",
    hardened: false,
    host_network: true,
    config: |ctx| certgen_config(ctx, &ctx.namespace()),
};

fn cron_job(ctx: &Ctx, s: &State) -> Value {
    let labels = Some(labels(
        &with_chart_label(
            ctx,
            &[
                ("k8s-app", CERTGEN),
                ("app.kubernetes.io/part-of", "cilium"),
            ],
        ),
        &[ctx.v("commonLabels")],
    ));
    tree!({
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": metadata(CERTGEN, Some(&s.namespace), labels, mesh_annotations(ctx)),
        "spec": certgen::cron_job_spec(ctx, &CLUSTERMESH_CERTGEN, &p("auto.schedule")),
    })
}

fn job(ctx: &Ctx) -> Value {
    // The chart lists commonLabels before part-of, so part-of wins a clash.
    let own_last = with_chart_label(ctx, &[("app.kubernetes.io/part-of", "cilium")]);
    let labels = merged(&[
        &tree!({"k8s-app": CERTGEN}),
        ctx.v("commonLabels"),
        &common::labels(&own_last, &[]),
    ]);
    let annotations = [
        ctx.v("certgen.annotations.job"),
        ctx.v("clustermesh.annotations"),
    ];
    certgen::one_shot_job(ctx, &CLUSTERMESH_CERTGEN, labels, &annotations)
}

fn role(ctx: &Ctx) -> Value {
    let mut role = tree!({
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "Role",
        "metadata": metadata(CERTGEN, Some(&ctx.namespace()), part_of_labels(ctx), mesh_annotations(ctx)),
        "rules": [
            {"apiGroups": [""], "resources": ["secrets"], "verbs": ["create"]},
            {"apiGroups": [""], "resources": ["secrets"], "resourceNames": ["cilium-ca"],
             "verbs": ["get", "update"]},
            {"apiGroups": [""], "resources": ["secrets"], "resourceNames": [
                "clustermesh-apiserver-server-cert",
                "clustermesh-apiserver-admin-cert",
                "clustermesh-apiserver-remote-cert",
                "clustermesh-apiserver-local-cert",
            ], "verbs": ["update"]},
        ],
    });
    if !ctx
        .plan
        .has(Change::ClustermeshCertgenRoleWithoutClientCert)
    {
        // Until 1.19 the Role also named a client-cert Secret that nothing issues.
        if let Some(Value::Array(names)) = role.pointer_mut("/rules/2/resourceNames") {
            names.push(tree!("clustermesh-apiserver-client-cert"));
        }
    }
    role
}

fn role_binding(ctx: &Ctx) -> Value {
    tree!({
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": metadata(CERTGEN, Some(&ctx.namespace()), part_of_labels(ctx), mesh_annotations(ctx)),
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": CERTGEN},
        "subjects": [{
            "kind": "ServiceAccount",
            "name": ctx.text("serviceAccounts.clustermeshcertgen.name"),
            "namespace": ctx.namespace(),
        }],
    })
}

fn certgen_service_account(ctx: &Ctx) -> Value {
    // Here the account's own annotations come first, unlike the apiserver's account.
    let annotations = merged(&[
        ctx.v("serviceAccounts.clustermeshcertgen.annotations"),
        ctx.v("clustermesh.annotations"),
    ]);
    common::service_account(ctx, "clustermeshcertgen", annotations)
}

fn duration(ctx: &Ctx) -> String {
    format!("{}h0m0s", validity_hours(ctx))
}

fn certificate(ctx: &Ctx, which: &str, common_name: String) -> Value {
    let name = format!("clustermesh-apiserver-{which}-cert");
    let mut spec = tree!({
        "issuerRef": ctx.v(&p("auto.certManagerIssuerRef")).clone(),
        "secretName": &name,
        "commonName": bare(&Value::String(common_name)),
        "duration": duration(ctx),
    });
    put_subject_and_key(ctx, &mut spec);
    tree!({
        "apiVersion": "cert-manager.io/v1",
        "kind": "Certificate",
        "metadata": metadata(&name, Some(&ctx.namespace()), common_labels(ctx), mesh_annotations(ctx)),
        "spec": spec,
    })
}

/// From 1.20 the Certificates take the subject and private-key settings of `tls.auto`.
fn put_subject_and_key(ctx: &Ctx, spec: &mut Value) {
    if ctx.plan.has(Change::ClustermeshCertificateSubjectKey) {
        common::put_with(
            spec,
            ctx,
            &[
                ("subject", &p("auto.subject")),
                ("privateKey", &p("auto.privateKey")),
            ],
        );
    }
}

/// The server Certificate. Until 1.19.4 the chart looked its labels up inside
/// `clustermesh.annotations` (a scoping slip): with annotations set, Helm fails unless that map
/// happens to hold a `Values` map, whose `commonLabels` then become the labels.
fn server_certificate(ctx: &Ctx) -> Result<Value, RenderError> {
    let ns = ctx.namespace();
    let ann = mesh_annotations(ctx);
    let labels = match &ann {
        _ if ctx.plan.has(Change::ClustermeshServerCertificateMetadata) => common_labels(ctx),
        None => None,
        Some(a) if a["Values"].is_object() => with(&a["Values"]["commonLabels"]),
        Some(_) => {
            return Err(ctx.invalid(
                "clustermesh.annotations",
                "with tls.auto.method \"certmanager\", the chart's server Certificate template fails when clustermesh.annotations is set (Helm errors too); leave clustermesh.annotations empty, or use clustermesh.apiserver.tls.auto.method cronJob",
            ))
        }
    };
    let name = "clustermesh-apiserver-server-cert";
    if ctx.plan.has(Change::ClustermeshServerCertNames) {
        let names = ServerNames::new(ctx);
        let mut spec = tree!({
            "issuerRef": ctx.v(&p("auto.certManagerIssuerRef")).clone(),
            "secretName": name,
            "commonName": bare(&Value::String(names.common_name)),
            "dnsNames": names.dns,
            "ipAddresses": names.ips,
            "duration": duration(ctx),
        });
        put_subject_and_key(ctx, &mut spec);
        return Ok(tree!({
            "apiVersion": "cert-manager.io/v1",
            "kind": "Certificate",
            "metadata": metadata(name, Some(&ns), labels, ann),
            "spec": spec,
        }));
    }
    let quoted = |v: &Value| {
        if v.is_null() {
            Value::Null
        } else {
            Value::String(quote(v))
        }
    };
    let mut dns = vec![
        tree!("clustermesh-apiserver.cilium.io"),
        tree!("*.mesh.cilium.io"),
        Value::String(format!("clustermesh-apiserver.{ns}.svc")),
    ];
    dns.extend(
        range_items(ctx.v(&p("server.extraDnsNames")))
            .into_iter()
            .map(quoted),
    );
    let mut ips = vec![tree!("127.0.0.1"), tree!("::1")];
    ips.extend(
        range_items(ctx.v(&p("server.extraIpAddresses")))
            .into_iter()
            .map(quoted),
    );
    Ok(tree!({
        "apiVersion": "cert-manager.io/v1",
        "kind": "Certificate",
        "metadata": metadata(name, Some(&ns), labels, ann),
        "spec": {
            "issuerRef": ctx.v(&p("auto.certManagerIssuerRef")).clone(),
            "secretName": name,
            "commonName": "clustermesh-apiserver.cilium.io",
            "dnsNames": dns,
            "ipAddresses": ips,
            "duration": duration(ctx),
        },
    }))
}

/// A certificate Secret from values, for when automatic TLS is off.
fn provided_secret(ctx: &Ctx, which: &str) -> Result<Value, RenderError> {
    let required = |key: &str| -> Result<Value, RenderError> {
        let path = p(&format!("{which}.{key}"));
        let v = ctx.v(&path);
        if v.is_null() || v.as_str() == Some("") {
            return Err(ctx.invalid(
                &path,
                "is required when clustermesh.apiserver.tls.auto.enabled is false and tls.enableSecrets is true (or turn auto.enabled back on with method cronJob or certmanager)",
            ));
        }
        Ok(bare(v))
    };
    let mut data = tree!({"tls.crt": required("cert")?, "tls.key": required("key")?});
    put(&mut data, "ca.crt", Some(bare(ctx.v("tls.ca.cert"))));
    Ok(tree!({
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": metadata(
            &format!("clustermesh-apiserver-{which}-cert"),
            Some(&ctx.namespace()),
            common_labels(ctx),
            mesh_annotations(ctx),
        ),
        "type": "kubernetes.io/tls",
        "data": data,
    }))
}
