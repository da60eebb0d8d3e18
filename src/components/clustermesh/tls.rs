//! The apiserver's certificates: Cilium's certgen CronJob/Job with its RBAC ("cronJob"),
//! cert-manager Certificates ("certmanager"), or Secrets from values (auto TLS off). The chart's
//! "helm" method mints random keys and is never used (see `plan`).

use serde_json::Value;

use super::{mesh_annotations, part_of_labels, State, API};
use crate::components::certgen::{self, CertgenJob};
use crate::components::common::{self, common_labels, labels, merged, metadata, put};
use crate::components::Ctx;
use crate::error::RenderError;
use crate::tmpl::{bare, go_quote, quote, quote_text, range_items, to_int64, with};

const CERTGEN: &str = "clustermesh-apiserver-generate-certs";

fn p(key: &str) -> String {
    format!("{API}.tls.{key}")
}

pub(super) fn render(ctx: &Ctx, s: &State) -> Result<Vec<Value>, RenderError> {
    let mut out = Vec::new();
    if !ctx.on(&p("auto.enabled")) {
        if s.internal && ctx.on(&p("enableSecrets")) {
            for cert in ["admin", "remote", "server"] {
                out.push(provided_secret(ctx, cert)?);
            }
        }
        return Ok(out);
    }
    match ctx.v(&p("auto.method")).as_str() {
        Some("cronJob") => {
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
        Some("certmanager") if s.internal => {
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

/// certgen's configuration: which Secrets to issue, for which names, for how long.
fn certgen_config(ctx: &Ctx, ns: &str) -> String {
    let validity = format!("{}h", validity_hours(ctx));
    let mut t = String::from("certs:\n");
    t.push_str("- name: clustermesh-apiserver-server-cert\n");
    t.push_str(&format!("  namespace: {ns}\n"));
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

/// The apiserver's certgen Job: Hubble's shape, on the host network, without its hardening.
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
        &[
            ("k8s-app", CERTGEN),
            ("app.kubernetes.io/part-of", "cilium"),
        ],
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
    let labels = merged(&[
        &tree!({"k8s-app": CERTGEN}),
        ctx.v("commonLabels"),
        &tree!({"app.kubernetes.io/part-of": "cilium"}),
    ]);
    let annotations = [
        ctx.v("certgen.annotations.job"),
        ctx.v("clustermesh.annotations"),
    ];
    certgen::one_shot_job(ctx, &CLUSTERMESH_CERTGEN, labels, &annotations)
}

fn role(ctx: &Ctx) -> Value {
    tree!({
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
                "clustermesh-apiserver-client-cert",
            ], "verbs": ["update"]},
        ],
    })
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
    tree!({
        "apiVersion": "cert-manager.io/v1",
        "kind": "Certificate",
        "metadata": metadata(&name, Some(&ctx.namespace()), common_labels(ctx), mesh_annotations(ctx)),
        "spec": {
            "issuerRef": ctx.v(&p("auto.certManagerIssuerRef")).clone(),
            "secretName": name,
            "commonName": bare(&Value::String(common_name)),
            "duration": duration(ctx),
        },
    })
}

/// The server Certificate. The chart looks its labels up inside `clustermesh.annotations`
/// (a scoping slip): with annotations set, Helm fails unless that map happens to hold a
/// `Values` map, whose `commonLabels` then become the labels.
fn server_certificate(ctx: &Ctx) -> Result<Value, RenderError> {
    let ns = ctx.namespace();
    let ann = mesh_annotations(ctx);
    let labels = match &ann {
        None => None,
        Some(a) if a["Values"].is_object() => with(&a["Values"]["commonLabels"]),
        Some(_) => {
            return Err(ctx.invalid(
                "clustermesh.annotations",
                "with tls.auto.method \"certmanager\", the chart's server Certificate template fails when clustermesh.annotations is set (Helm errors too); leave clustermesh.annotations empty, or use clustermesh.apiserver.tls.auto.method cronJob",
            ))
        }
    };
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
    let name = "clustermesh-apiserver-server-cert";
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
