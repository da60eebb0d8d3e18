//! Mirrors the chart's templates: clustermesh-coredns-mcsapi/ (from 1.19)
//!
//! With the MCS-API on and `clustermesh.mcsapi.corednsAutoConfigure.enabled`, a post-install
//! Job patches the cluster's CoreDNS (its ConfigMap and Deployment) to serve the clusterset
//! domain. It needs two sets of RBAC: its own (read namespaces, patch the CoreDNS objects in
//! CoreDNS's namespace), and a grant that lets CoreDNS read ServiceImports. The latter is kept
//! on uninstall, since CoreDNS stays configured to use it.

use serde_json::Value;

use super::{mcs_api_enabled, mesh_annotations};
use crate::changes::Change;
use crate::components::common::{
    self, common_labels, image, list_items, merged, metadata, put, put_with, with_chart_label,
};
use crate::components::Ctx;
use crate::error::RenderError;
use crate::tmpl::{bare, quote, truthy};

const AUTO: &str = "clustermesh.mcsapi.corednsAutoConfigure";
/// The grant to CoreDNS itself.
const COREDNS_GRANT: &str = "coredns-mcsapi";
/// The Job, its account and its RBAC.
const JOB: &str = "cilium-coredns-mcsapi-autoconfig";
const ACCOUNT: &str = "serviceAccounts.corednsMCSAPI";

fn auto(key: &str) -> String {
    format!("{AUTO}.{key}")
}

/// A setting of the CoreDNS installation to configure, as the chart prints it.
fn coredns(ctx: &Ctx, key: &str) -> String {
    quote(ctx.v(&auto(&format!("coredns.{key}"))))
}

pub(super) fn render(ctx: &Ctx) -> Result<Vec<Value>, RenderError> {
    if !ctx.plan.has(Change::ClustermeshMcsApiBlock)
        || !mcs_api_enabled(ctx)
        || !ctx.on(&auto("enabled"))
    {
        return Ok(Vec::new());
    }
    let mut out = vec![
        coredns_cluster_role(ctx),
        coredns_cluster_role_binding(ctx),
        job_cluster_role(ctx),
        job_cluster_role_binding(ctx),
        job_role(ctx),
        job_role_binding(ctx),
        job(ctx)?,
    ];
    if ctx.on(&format!("{ACCOUNT}.create")) {
        let annotations = merged(&[
            ctx.v("clustermesh.annotations"),
            ctx.v(&format!("{ACCOUNT}.annotations")),
        ]);
        out.push(common::service_account(ctx, "corednsMCSAPI", annotations));
    }
    Ok(out)
}

/// Labels and annotations of the CoreDNS grant, which Helm must leave in place.
fn coredns_grant_metadata(ctx: &Ctx) -> Value {
    let labels = crate::components::common::part_of_labels(ctx, &[]);
    let annotations = merged(&[
        &tree!({"helm.sh/resource-policy": "keep"}),
        ctx.v("clustermesh.annotations"),
    ]);
    metadata(COREDNS_GRANT, None, Some(labels), annotations)
}

fn coredns_cluster_role(ctx: &Ctx) -> Value {
    tree!({
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": coredns_grant_metadata(ctx),
        "rules": [{
            "apiGroups": ["multicluster.x-k8s.io"],
            "resources": ["serviceimports"],
            "verbs": ["list", "watch"],
        }],
    })
}

fn coredns_cluster_role_binding(ctx: &Ctx) -> Value {
    tree!({
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": coredns_grant_metadata(ctx),
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": COREDNS_GRANT},
        "subjects": [{
            "kind": "ServiceAccount",
            "name": coredns(ctx, "serviceAccountName"),
            "namespace": coredns(ctx, "namespace"),
        }],
    })
}

/// The Job's RBAC objects carry only `commonLabels` and `clustermesh.annotations`, each when
/// set; `namespace` is CoreDNS's for the Role and its binding.
fn job_rbac_metadata(ctx: &Ctx, namespace: Option<Value>) -> Value {
    let mut m = metadata(JOB, None, common_labels(ctx), mesh_annotations(ctx));
    put(&mut m, "namespace", namespace);
    m
}

/// The Job's account as a subject.
fn job_subject(ctx: &Ctx) -> Value {
    tree!({
        "kind": "ServiceAccount",
        "name": quote(ctx.v(&format!("{ACCOUNT}.name"))),
        "namespace": ctx.namespace(),
    })
}

fn job_cluster_role(ctx: &Ctx) -> Value {
    tree!({
        "kind": "ClusterRole",
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "metadata": job_rbac_metadata(ctx, None),
        "rules": [{"apiGroups": [""], "resources": ["namespaces"], "verbs": ["get"]}],
    })
}

fn job_cluster_role_binding(ctx: &Ctx) -> Value {
    tree!({
        "kind": "ClusterRoleBinding",
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "metadata": job_rbac_metadata(ctx, None),
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": JOB},
        "subjects": [job_subject(ctx)],
    })
}

/// CoreDNS's namespace, printed bare into the Role's metadata.
fn coredns_namespace(ctx: &Ctx) -> Option<Value> {
    Some(bare(&Value::String(coredns(ctx, "namespace"))))
}

fn job_role(ctx: &Ctx) -> Value {
    tree!({
        "kind": "Role",
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "metadata": job_rbac_metadata(ctx, coredns_namespace(ctx)),
        "rules": [
            {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["update", "patch", "get"],
             "resourceNames": [coredns(ctx, "configMapName")]},
            {"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["patch", "update", "get"],
             "resourceNames": [coredns(ctx, "deploymentName")]},
        ],
    })
}

fn job_role_binding(ctx: &Ctx) -> Value {
    tree!({
        "kind": "RoleBinding",
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "metadata": job_rbac_metadata(ctx, coredns_namespace(ctx)),
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": JOB},
        "subjects": [job_subject(ctx)],
    })
}

/// The Job runs the clustermesh-apiserver image's CoreDNS configuration command once per
/// install and upgrade.
fn job(ctx: &Ctx) -> Result<Value, RenderError> {
    let api_image = ctx.v("clustermesh.apiserver.image");
    let mut args = vec![tree!("mcsapi-coredns-cfg")];
    for (flag, key) in [
        ("deployment-name", "deploymentName"),
        ("configmap-name", "configMapName"),
        ("namespace", "namespace"),
        ("cluster-domain", "clusterDomain"),
        ("clusterset-domain", "clustersetDomain"),
    ] {
        args.push(Value::String(format!(
            "--coredns-{flag}={}",
            coredns(ctx, key)
        )));
    }
    args.extend(list_items(ctx, &auto("extraArgs"))?);
    let mut container = tree!({
        "name": "autoconfig",
        "image": image(api_image),
        "imagePullPolicy": bare(&api_image["pullPolicy"]),
    });
    // The chart indents the resources block at the container's own level, so its keys
    // (limits, requests) land on the container and `resources` itself stays empty.
    if let (Value::Object(c), Value::Object(r)) = (&mut container, ctx.v(&auto("resources"))) {
        for (k, v) in r {
            c.insert(k.clone(), v.clone());
        }
    }
    put(
        &mut container,
        "command",
        Some(tree!(["/usr/bin/clustermesh-apiserver"])),
    );
    put(&mut container, "args", Some(Value::Array(args)));
    put_with(
        &mut container,
        ctx,
        &[("volumeMounts", &auto("extraVolumeMounts"))],
    );
    let mut pod = tree!({
        "containers": [container],
        "serviceAccountName": quote(ctx.v(&format!("{ACCOUNT}.name"))),
        "automountServiceAccountToken": true,
        "restartPolicy": "OnFailure",
    });
    put_with(
        &mut pod,
        ctx,
        &[
            ("nodeSelector", &auto("nodeSelector")),
            ("tolerations", &auto("tolerations")),
            ("imagePullSecrets", "imagePullSecrets"),
            ("volumes", &auto("extraVolumes")),
            ("affinity", &auto("affinity")),
        ],
    );
    let priority = ctx.v(&auto("priorityClassName"));
    if truthy(priority) {
        put(&mut pod, "priorityClassName", Some(bare(priority)));
    }
    // The chart lists commonLabels between its own labels, so part-of wins a clash.
    let labels = merged(&[
        &tree!({"k8s-app": JOB}),
        ctx.v("commonLabels"),
        &Value::Object(
            with_chart_label(ctx, &[("app.kubernetes.io/part-of", "cilium")])
                .into_iter()
                .map(|(k, v)| (k.to_string(), Value::String(v.to_string())))
                .collect(),
        ),
    ]);
    let annotations = merged(&[
        &tree!({"helm.sh/hook": "post-install,post-upgrade"}),
        ctx.v("clustermesh.annotations"),
        ctx.v(&auto("annotations")),
    ]);
    let pod_labels = merged(&[&tree!({"k8s-app": JOB}), ctx.v(&auto("podLabels"))]);
    Ok(tree!({
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": metadata(JOB, Some(&ctx.namespace()), labels, annotations),
        "spec": {
            "template": {"metadata": {"labels": pod_labels}, "spec": pod},
            "ttlSecondsAfterFinished": bare(ctx.v(&auto("ttlSecondsAfterFinished"))),
        },
    }))
}

#[cfg(test)]
mod tests {
    use crate::components::common::tests::with_release;

    const ON: &str =
        "clustermesh: {mcsapi: {enabled: true, corednsAutoConfigure: {enabled: true}}}\n";

    fn names(version: &str, values: &str) -> Vec<String> {
        with_release(version, values, "1.35.0", |ctx| {
            super::render(ctx)
                .unwrap()
                .iter()
                .map(|o| {
                    format!(
                        "{}/{}",
                        o["kind"].as_str().unwrap(),
                        o["metadata"]["name"].as_str().unwrap()
                    )
                })
                .collect()
        })
    }

    #[test]
    fn the_job_arrives_in_1_19_and_follows_the_mcs_api_switch() {
        assert!(names("1.18.12", ON).is_empty());
        assert_eq!(names("1.19.0", ON).len(), 8);
        let legacy = "clustermesh: {enableMCSAPISupport: true, mcsapi: {corednsAutoConfigure: {enabled: true}}}\n";
        assert_eq!(names("1.19.6", legacy).len(), 8);
        assert!(names("1.20.0", legacy).is_empty());
        assert!(names(
            "1.20.0",
            &ON.replace(
                "true}}}",
                "true}}}\nserviceAccounts: {corednsMCSAPI: {create: false}}"
            )
        )
        .iter()
        .all(|n| !n.starts_with("ServiceAccount/")));
    }
}
