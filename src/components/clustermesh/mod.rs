//! Mirrors the chart's templates: clustermesh-apiserver/, clustermesh-config/
//!
//! The apiserver Deployment lives in `deployment`, its certificates (certgen CronJob/Job,
//! cert-manager Certificates, provided Secrets) in `tls`, and the `cilium-clustermesh` /
//! `cilium-kvstoremesh` Secrets in `config`. The remaining small objects are built here.

mod config;
mod coredns_mcsapi;
mod deployment;
mod tls;

use serde_json::Value;

use super::common::{
    self, identity_allocation_crd, labels, merged, metadata, pod_disruption_budget, put,
    scrape_endpoint, with_chart_label,
};
use super::Ctx;
use crate::changes::Change;
use crate::error::RenderError;
use crate::plan::CertSource;
use crate::tmpl::{bare, print, quote, to_int64, truthy, with};

const API: &str = "clustermesh.apiserver";
const APP: &str = "clustermesh-apiserver";

pub fn render(ctx: &Ctx) -> Result<Vec<Value>, RenderError> {
    validate(ctx)?;
    let mut out = Vec::new();
    out.extend(config::render(ctx)?);
    out.extend(coredns_mcsapi::render(ctx)?);
    if !ctx.on("clustermesh.useAPIServer") {
        return Ok(out);
    }
    let s = State::new(ctx);
    out.push(deployment::render(ctx, &s)?);
    out.extend(tls::render(ctx, &s)?);
    let external_service = ctx.plan.has(Change::ClustermeshServiceExternallyCreated)
        && ctx.on(&format!("{API}.service.externallyCreated"));
    if s.internal && !external_service {
        out.push(service(ctx)?);
    }
    if let Some(m) = metrics_service(ctx, &s) {
        out.push(m);
    }
    if let Some(m) = service_monitor(ctx, &s)? {
        out.push(m);
    }
    if ctx.on("clustermesh.apiserver.podDisruptionBudget.enabled") {
        out.push(pod_disruption_budget(
            ctx,
            APP,
            ctx.v(&format!("{API}.podDisruptionBudget")),
            &[("k8s-app", APP)],
            &with_chart_label(ctx, &APP_LABELS),
            ctx.v("clustermesh.annotations"),
        ));
    }
    let sa_create = ctx.on("serviceAccounts.clustermeshApiserver.create");
    if sa_create {
        out.push(service_account(ctx));
    }
    if sa_create && ctx.on("rbac.create") && s.internal && s.crd {
        out.push(cluster_role(ctx));
        out.push(cluster_role_binding(ctx));
    }
    let users_need_config = ctx.plan.has(Change::ClustermeshUsersNeedConfig);
    if s.internal
        && s.crd
        && (ctx.on("clustermesh.config.enabled") || !users_need_config)
        && ctx.text("clustermesh.apiserver.tls.authMode") != "legacy"
    {
        out.push(users_config_map(ctx)?);
    }
    Ok(out)
}

/// Facts several templates branch on, read once.
pub(crate) struct State {
    /// kvstoreMode "internal": the Pod runs its own etcd.
    internal: bool,
    /// kvstoreMode "external": KVStoreMesh writes into the cluster's existing etcd.
    external: bool,
    /// Identities live in CRDs, so the apiserver container mirrors them into etcd.
    crd: bool,
    kvstoremesh: bool,
    namespace: String,
}

impl State {
    fn new(ctx: &Ctx) -> State {
        let mode = ctx.v("clustermesh.apiserver.kvstoremesh.kvstoreMode");
        State {
            internal: mode.as_str() == Some("internal"),
            external: mode.as_str() == Some("external"),
            crd: identity_allocation_crd(ctx),
            kvstoremesh: ctx.on("clustermesh.apiserver.kvstoremesh.enabled"),
            namespace: ctx.namespace(),
        }
    }

    /// KVStoreMesh runs and exposes metrics.
    fn kvstoremesh_metrics(&self, ctx: &Ctx) -> bool {
        self.kvstoremesh && ctx.on("clustermesh.apiserver.metrics.kvstoremesh.enabled")
    }

    /// Any of the three metrics endpoints is on, so the metrics Service (and monitor) exist.
    fn any_metrics(&self, ctx: &Ctx) -> bool {
        ctx.on("clustermesh.apiserver.metrics.enabled")
            || self.kvstoremesh_metrics(ctx)
            || ctx.on("clustermesh.apiserver.metrics.etcd.enabled")
    }
}

/// Whether the MCS-API is on: `enableMCSAPISupport` until 1.19 added `mcsapi.enabled`, which
/// alone counts from 1.20.
pub(crate) fn mcs_api_enabled(ctx: &Ctx) -> bool {
    let block = ctx.plan.has(Change::McsApiEnabledValue) && ctx.on("clustermesh.mcsapi.enabled");
    let legacy =
        !ctx.plan.has(Change::McsApiLegacyFlagRetired) && ctx.on("clustermesh.enableMCSAPISupport");
    block || legacy
}

/// The chart's `fail` checks made by the Cluster Mesh templates themselves; those of
/// validate.yaml (kvstore modes, endpoint CRD, replicas, maxConnectedClusters, the
/// cert-manager issuer) live in `extras::validate`.
fn validate(ctx: &Ctx) -> Result<(), RenderError> {
    if ctx.plan.has(Change::ClustermeshProvidedTlsRemoved)
        && ctx.on("clustermesh.useAPIServer")
        && ctx.plan.clustermesh_certs == CertSource::Values
    {
        for cert in ["server", "admin", "remote"] {
            let path = format!("{API}.tls.{cert}.cert");
            if truthy(ctx.v(&path)) {
                return Err(ctx.invalid(
                    &path,
                    format!(
                        "Cilium {}'s chart no longer takes Cluster Mesh certificates from values (Helm fails too): turn clustermesh.apiserver.tls.auto.enabled on, or create the clustermesh-apiserver-*-cert Secrets yourself",
                        ctx.plan.cilium
                    ),
                ));
            }
        }
    }
    if ctx.on("clustermesh.useAPIServer") {
        let auth = ctx.v("clustermesh.apiserver.tls.authMode").as_str();
        if !matches!(auth, Some("legacy" | "migration" | "cluster")) {
            return Err(ctx.invalid(
                "clustermesh.apiserver.tls.authMode",
                "must be one of legacy, migration, cluster",
            ));
        }
    }
    Ok(())
}

/// The apiserver's own labels, which most of its objects carry before `commonLabels`.
pub(crate) const APP_LABELS: [(&str, &str); 3] = common::app_labels(APP);

/// Part of cilium (and from 1.20 the chart label), then `commonLabels`.
/// The labels of the apiserver's cluster-wide and certificate objects.
fn part_of_labels(ctx: &Ctx) -> Option<Value> {
    Some(common::part_of_labels(ctx, &[]))
}

/// `clustermesh.annotations`, when set.
fn mesh_annotations(ctx: &Ctx) -> Option<Value> {
    with(ctx.v("clustermesh.annotations"))
}

fn service(ctx: &Ctx) -> Result<Value, RenderError> {
    let p = |k: &str| format!("{API}.service.{k}");
    let ty = ctx.v(&p("type"));
    let ty_s = ty.as_str().unwrap_or_default();
    let lb = ty_s == "LoadBalancer";
    let mut port = tree!({"port": 2379});
    if ty_s == "NodePort" && ctx.on(&p("nodePort")) {
        put(&mut port, "nodePort", Some(bare(ctx.v(&p("nodePort")))));
    }
    let mut spec = tree!({
        "type": bare(ty),
        "selector": {"k8s-app": APP},
        "ports": [port],
    });
    for key in ["loadBalancerClass", "loadBalancerIP"] {
        if lb && ctx.on(&p(key)) {
            put(&mut spec, key, Some(bare(ctx.v(&p(key)))));
        }
    }
    if lb && ctx.on(&p("loadBalancerSourceRanges")) {
        put(
            &mut spec,
            "loadBalancerSourceRanges",
            with(ctx.v(&p("loadBalancerSourceRanges"))),
        );
    }
    for key in ["externalTrafficPolicy", "internalTrafficPolicy"] {
        if ctx.on(&p(key)) {
            put(&mut spec, key, Some(bare(ctx.v(&p(key)))));
        }
    }
    let affinity = ctx.v(&p("enableSessionAffinity")).as_str();
    if affinity == Some("Always")
        || (affinity == Some("HAOnly") && to_int64(ctx.v(&format!("{API}.replicas"))) > 1)
    {
        put(
            &mut spec,
            "sessionAffinity",
            Some(Value::String("ClientIP".into())),
        );
    }
    let labels = Some(labels(
        &with_chart_label(ctx, &APP_LABELS),
        &[ctx.v("commonLabels"), ctx.v(&p("labels"))],
    ));
    let annotations = merged(&[ctx.v("clustermesh.annotations"), ctx.v(&p("annotations"))]);
    Ok(tree!({
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": metadata(APP, Some(&ctx.namespace()), labels, annotations),
        "spec": spec,
    }))
}

fn metrics_service(ctx: &Ctx, s: &State) -> Option<Value> {
    if !s.any_metrics(ctx) {
        return None;
    }
    let m = |k: &str| format!("{API}.metrics.{k}");
    let port = |name: &str, path: &str| tree!({"name": name, "port": bare(ctx.v(path)), "protocol": "TCP", "targetPort": name});
    let mut ports = Vec::new();
    if s.internal && s.crd && ctx.on(&m("enabled")) {
        ports.push(port("apiserv-metrics", &m("port")));
    }
    if s.kvstoremesh_metrics(ctx) {
        ports.push(port("kvmesh-metrics", &m("kvstoremesh.port")));
    }
    if s.internal && ctx.on(&m("etcd.enabled")) {
        ports.push(port("etcd-metrics", &m("etcd.port")));
    }
    let mut fixed = APP_LABELS.to_vec();
    fixed.push(("app.kubernetes.io/component", "metrics"));
    let labels = Some(labels(
        &with_chart_label(ctx, &fixed),
        &[ctx.v("commonLabels")],
    ));
    let mut spec = tree!({
        "clusterIP": "None",
        "type": "ClusterIP",
        "selector": {"k8s-app": APP},
    });
    if !ports.is_empty() {
        put(&mut spec, "ports", Some(Value::Array(ports)));
    }
    Some(tree!({
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": metadata(
            "clustermesh-apiserver-metrics",
            Some(&ctx.namespace()),
            labels,
            mesh_annotations(ctx),
        ),
        "spec": spec,
    }))
}

fn service_monitor(ctx: &Ctx, s: &State) -> Result<Option<Value>, RenderError> {
    let sm = |k: &str| format!("{API}.metrics.serviceMonitor.{k}");
    if !s.any_metrics(ctx) || !ctx.on(&sm("enabled")) {
        return Ok(None);
    }
    // One scrape endpoint per metrics port; `prefix` picks the per-endpoint settings block.
    let endpoint = |port: &str, block: &str| {
        scrape_endpoint(ctx.v(sm(block).trim_end_matches('.')), port, true, true)
    };
    let mut endpoints = Vec::new();
    if ctx.on(&format!("{API}.metrics.enabled")) && s.internal && s.crd {
        endpoints.push(endpoint("apiserv-metrics", ""));
    }
    if s.kvstoremesh_metrics(ctx) {
        endpoints.push(endpoint("kvmesh-metrics", "kvstoremesh"));
    }
    if ctx.on(&format!("{API}.metrics.etcd.enabled")) && s.internal {
        endpoints.push(endpoint("etcd-metrics", "etcd"));
    }
    let ns = ctx.v(&sm("namespace"));
    let ns = if truthy(ns) {
        print(ns)
    } else {
        s.namespace.clone()
    };
    let labels = Some(labels(
        &super::common::monitor_labels(ctx, APP, true),
        &[ctx.v("commonLabels"), ctx.v(&sm("labels"))],
    ));
    let annotations = merged(&[ctx.v("clustermesh.annotations"), ctx.v(&sm("annotations"))]);
    let mut spec = tree!({
        "selector": {"matchLabels": {
            "app.kubernetes.io/name": APP,
            "app.kubernetes.io/component": "metrics",
        }},
        "namespaceSelector": {"matchNames": [&s.namespace]},
    });
    if !endpoints.is_empty() {
        put(&mut spec, "endpoints", Some(Value::Array(endpoints)));
    }
    Ok(Some(tree!({
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "ServiceMonitor",
        "metadata": metadata(APP, Some(&ns), labels, annotations),
        "spec": spec,
    })))
}

fn service_account(ctx: &Ctx) -> Value {
    let annotations = merged(&[
        ctx.v("clustermesh.annotations"),
        ctx.v("serviceAccounts.clustermeshApiserver.annotations"),
    ]);
    common::service_account(ctx, "clustermeshApiserver", annotations)
}

fn cluster_role(ctx: &Ctx) -> Value {
    let read = tree!(["get", "list", "watch"]);
    let mut rules = vec![
        tree!({"apiGroups": ["cilium.io"], "resources": [
            "ciliumidentities", "ciliumendpoints", "ciliumnodes", "ciliumendpointslices",
        ], "verbs": &read}),
        tree!({"apiGroups": ["apiextensions.k8s.io"], "resources": ["customresourcedefinitions"], "verbs": &read}),
        if ctx.plan.has(Change::ClustermeshRbacWithoutEndpoints) {
            tree!({"apiGroups": [""], "resources": ["namespaces", "services"], "verbs": &read})
        } else {
            tree!({"apiGroups": [""], "resources": ["endpoints", "namespaces", "services"], "verbs": &read})
        },
        tree!({"apiGroups": ["discovery.k8s.io"], "resources": ["endpointslices"], "verbs": &read}),
    ];
    if mcs_api_enabled(ctx) {
        rules.push(tree!({"apiGroups": ["multicluster.x-k8s.io"], "resources": ["serviceexports"], "verbs": &read}));
    }
    tree!({
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": metadata(APP, None, part_of_labels(ctx), mesh_annotations(ctx)),
        "rules": rules,
    })
}

fn cluster_role_binding(ctx: &Ctx) -> Value {
    tree!({
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": metadata(APP, None, part_of_labels(ctx), mesh_annotations(ctx)),
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": APP},
        "subjects": [{
            "kind": "ServiceAccount",
            "name": ctx.text("serviceAccounts.clustermeshApiserver.name"),
            "namespace": ctx.namespace(),
        }],
    })
}

/// The etcd users the remote clusters log in as, one per configured cluster.
fn users_config_map(ctx: &Ctx) -> Result<Value, RenderError> {
    let mut users = String::from("users:\n");
    for c in common::mesh_clusters(ctx)? {
        users.push_str(&format!(
            "- name: remote-{}\n  role: remote\n",
            quote(&c["name"])
        ));
    }
    Ok(tree!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": metadata(
            "clustermesh-remote-users",
            Some(&ctx.namespace()),
            part_of_labels(ctx),
            mesh_annotations(ctx),
        ),
        "data": {"users.yaml": users},
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn render_with(version: &str, values: &str) -> Result<Vec<Value>, RenderError> {
        let cilium = crate::versions::parse(version).unwrap();
        let layer = crate::values::Layer::from_yaml("t.yaml", values).unwrap();
        let mut vals = crate::values::Values::resolve(crate::versions::defaults(cilium), &[layer]);
        crate::determinism::apply_defaults(&mut vals).unwrap();
        let plan = crate::plan::Plan::new(
            cilium,
            "kube-system",
            crate::plan::KubeVersion::parse("1.35.0").unwrap(),
            Default::default(),
            &vals,
        );
        render(&Ctx::new(&vals, &plan, None))
    }

    fn find<'a>(objs: &'a [Value], kind: &str, name: &str) -> Option<&'a Value> {
        objs.iter()
            .find(|o| o["kind"] == kind && o["metadata"]["name"] == name)
    }

    #[test]
    fn external_kvstore_points_agents_at_kvstoremesh() {
        let objs = render_with(
            "1.18.12",
            "identityAllocationMode: kvstore\nclustermesh:\n  useAPIServer: true\n  config:\n    enabled: true\n    clusters: [{name: b, address: b.example, port: 2379}]\n  apiserver:\n    kvstoremesh: {kvstoreMode: external}\n",
        )
        .unwrap();
        let d = find(&objs, "Deployment", APP).unwrap();
        assert_eq!(d["spec"]["strategy"], json!({"type": "Recreate"}));
        // No own etcd: neither its Service nor the install-time certgen Job.
        assert!(find(&objs, "Service", APP).is_none());
        assert!(find(&objs, "Job", "clustermesh-apiserver-generate-certs").is_none());
        let s = find(&objs, "Secret", "cilium-kvstoremesh").unwrap();
        assert_eq!(
            s["data"]["b"],
            "ZW5kcG9pbnRzOgotIGh0dHBzOi8vYi5leGFtcGxlOjIzNzkKdHJ1c3RlZC1jYS1maWxlOiAvdmFyL2xpYi9jaWxpdW0vY2x1c3Rlcm1lc2gvY29tbW9uLWV0Y2QtY2xpZW50LWNhLmNydAprZXktZmlsZTogL3Zhci9saWIvY2lsaXVtL2NsdXN0ZXJtZXNoL2NvbW1vbi1ldGNkLWNsaWVudC5rZXkKY2VydC1maWxlOiAvdmFyL2xpYi9jaWxpdW0vY2x1c3Rlcm1lc2gvY29tbW9uLWV0Y2QtY2xpZW50LmNydA=="
        );
    }

    #[test]
    fn etcd_urls_follow_the_patch_release() {
        let args = |v: &str| {
            let objs = render_with(v, "clustermesh: {useAPIServer: true}\n").unwrap();
            find(&objs, "Deployment", APP).unwrap()["spec"]["template"]["spec"]["containers"][0]
                ["args"]
                .clone()
        };
        assert!(args("1.18.4").to_string().contains("HOSTNAME_IP"));
        assert!(!args("1.18.5").to_string().contains("HOSTNAME_IP"));
    }

    #[test]
    fn clusters_may_be_a_map_from_1_19() {
        let values = "clustermesh:\n  config:\n    enabled: true\n    clusters:\n      z: {address: z.example, port: 2379}\n      a: {ips: [10.0.0.1], port: 2379}\n      off: {address: o.example, port: 1, enabled: false}\n";
        let objs = render_with("1.19.0", values).unwrap();
        let data = &find(&objs, "Secret", "cilium-clustermesh").unwrap()["data"];
        let keys: Vec<_> = data.as_object().unwrap().keys().cloned().collect();
        assert_eq!(keys, ["a", "z"]);
        // From 1.20 a cluster given by IP carries its own host aliases.
        let objs = render_with("1.20.0", values).unwrap();
        let a = &find(&objs, "Secret", "cilium-clustermesh").unwrap()["data"]["a"];
        let text = "endpoints:\n- https://a.mesh.cilium.io:2379\ntrusted-ca-file: /var/lib/cilium/clustermesh/common-etcd-client-ca.crt\nkey-file: /var/lib/cilium/clustermesh/common-etcd-client.key\ncert-file: /var/lib/cilium/clustermesh/common-etcd-client.crt\ncilium-host-aliases:\n- hostname: a.mesh.cilium.io\n  ips: \n    - 10.0.0.1";
        assert_eq!(a, &json!(crate::tmpl::b64enc(text.as_bytes())));
        assert!(render_with(
            "1.19.0",
            "clustermesh: {config: {enabled: true, clusters: 3}}\n"
        )
        .is_err());
    }

    #[test]
    fn certgen_takes_hubbles_shape_in_1_19() {
        let values =
            "clustermesh: {useAPIServer: true, apiserver: {tls: {auto: {method: cronJob}}}}\n";
        let pod = |v: &str| {
            // From 1.19 the Job's name carries a hash of its spec, so find it by its label.
            let objs = render_with(v, values).unwrap();
            objs.into_iter()
                .find(|o| {
                    o["kind"] == "Job"
                        && o["metadata"]["labels"]["k8s-app"]
                            == "clustermesh-apiserver-generate-certs"
                })
                .unwrap()
        };
        let old = pod("1.18.12");
        assert_eq!(old["spec"]["template"]["spec"]["hostNetwork"], true);
        assert!(old["metadata"]["annotations"]["helm.sh/hook"].is_string());
        let new = pod("1.19.0");
        assert_eq!(new["spec"]["template"]["spec"]["hostNetwork"], false);
        assert!(new["metadata"].get("annotations").is_none());
    }

    #[test]
    fn refusals_name_the_value() {
        let e = render_with(
            "1.18.0",
            "clustermesh: {useAPIServer: true, apiserver: {extraEnv: [{name: A, value: b}]}}\n",
        )
        .unwrap_err();
        assert!(e.to_string().contains("clustermesh.apiserver.extraEnv"));
        assert!(render_with(
            "1.18.1",
            "clustermesh: {useAPIServer: true, apiserver: {extraEnv: [{name: A, value: b}]}}\n",
        )
        .is_ok());
    }
}
