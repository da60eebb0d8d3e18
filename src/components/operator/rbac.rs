//! The operator's ClusterRole, Roles and their bindings (cilium-operator/clusterrole.yaml,
//! clusterrolebinding.yaml, role.yaml, rolebinding.yaml).

use serde_json::Value;

use super::super::common::{self, listed, metadata, Listed};
use super::super::Ctx;
use super::mcsapi;
use crate::changes::Change;
use crate::error::RenderError;
use crate::tmpl::{has_duration, quote, to_int64, truthy, with};

pub(super) fn render(ctx: &Ctx) -> Result<Vec<Value>, RenderError> {
    let mut out = Vec::new();
    if !ctx.on("serviceAccounts.operator.create") {
        return Ok(out);
    }
    if ctx.on("rbac.create") {
        out.push(cluster_role(ctx)?);
        out.push(cluster_role_binding(ctx));
    }
    // The pre-flight check runs next to an existing installation, which has these already.
    if ctx.plan.has(Change::OperatorRolesSkippedInPreflight) && ctx.on("preflight.enabled") {
        return Ok(out);
    }
    out.extend(secret_roles(ctx)?);
    if ctx.plan.has(Change::OperatorZtunnelRole) {
        out.extend(role_and_binding(
            ctx,
            "cilium-operator-ztunnel",
            &ctx.namespace(),
            ztunnel_rules(ctx),
        ));
    }
    Ok(out)
}

/// The CRDs the operator may update, in the chart's order.
const UPDATED_CRDS: &[(&str, Listed)] = &[
    ("ciliumloadbalancerippools.cilium.io", Listed::Always),
    (
        "ciliumbgppeeringpolicies.cilium.io",
        Listed::Until(Change::BgpV1CrdUpdateDropped),
    ),
    ("ciliumbgpclusterconfigs.cilium.io", Listed::Always),
    ("ciliumbgppeerconfigs.cilium.io", Listed::Always),
    ("ciliumbgpadvertisements.cilium.io", Listed::Always),
    ("ciliumbgpnodeconfigs.cilium.io", Listed::Always),
    ("ciliumbgpnodeconfigoverrides.cilium.io", Listed::Always),
    ("ciliumclusterwideenvoyconfigs.cilium.io", Listed::Always),
    ("ciliumclusterwidenetworkpolicies.cilium.io", Listed::Always),
    ("ciliumegressgatewaypolicies.cilium.io", Listed::Always),
    ("ciliumendpoints.cilium.io", Listed::Always),
    ("ciliumendpointslices.cilium.io", Listed::Always),
    ("ciliumenvoyconfigs.cilium.io", Listed::Always),
    ("ciliumidentities.cilium.io", Listed::Always),
    ("ciliumlocalredirectpolicies.cilium.io", Listed::Always),
    ("ciliumnetworkpolicies.cilium.io", Listed::Always),
    ("ciliumnodes.cilium.io", Listed::Always),
    ("ciliumnodeconfigs.cilium.io", Listed::Always),
    ("ciliumcidrgroups.cilium.io", Listed::Always),
    ("ciliuml2announcementpolicies.cilium.io", Listed::Always),
    ("ciliumpodippools.cilium.io", Listed::Always),
    ("ciliumgatewayclassconfigs.cilium.io", Listed::Always),
    (
        "serviceimports.multicluster.x-k8s.io",
        Listed::McsapiCrds(Change::OperatorUpdatesMcsapiCrds),
    ),
    (
        "serviceexports.multicluster.x-k8s.io",
        Listed::McsapiCrds(Change::OperatorUpdatesMcsapiCrds),
    ),
    (
        "ciliumdatapathplugins.cilium.io",
        Listed::Since(Change::DatapathPluginCrd),
    ),
];

/// The BGP v2 CRDs whose status the operator updates.
const BGP_V2_CRDS: &[&str] = &[
    "ciliumbgpclusterconfigs.cilium.io",
    "ciliumbgppeerconfigs.cilium.io",
    "ciliumbgpadvertisements.cilium.io",
    "ciliumbgpnodeconfigs.cilium.io",
    "ciliumbgpnodeconfigoverrides.cilium.io",
];

fn updated_crds(ctx: &Ctx) -> Vec<&'static str> {
    let mcsapi_crds = mcsapi(ctx) && ctx.on("clustermesh.mcsapi.installCRDs");
    listed(ctx, UPDATED_CRDS, mcsapi_crds)
}

fn rule(groups: &[&str], resources: &[&str], verbs: &[&str]) -> Value {
    tree!({"apiGroups": groups, "resources": resources, "verbs": verbs})
}

/// Verbs that let the operator own objects of a kind outright.
const ALL_WRITE: &[&str] = &[
    "create", "update", "get", "list", "watch", "delete", "patch",
];

fn cluster_role(ctx: &Ctx) -> Result<Value, RenderError> {
    let mut rules = core_rules(ctx)?;
    rules.extend(cilium_rules(ctx));
    rules.extend(ingress_and_gateway_rules(ctx));
    rules.extend(mcsapi_rules(ctx));
    if ctx.plan.has(Change::OperatorEndpointSliceRules) {
        rules.push(rule(
            &["cilium.io"],
            &["ciliumendpointslices"],
            &["deletecollection"],
        ));
    }
    Ok(tree!({
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": metadata("cilium-operator", None, Some(common::part_of_labels(ctx, &[])), with(ctx.v("operator.annotations"))),
        "rules": rules,
    }))
}

/// Rules on Kubernetes' own objects: pods, nodes, services, endpoint slices, namespaces.
fn core_rules(ctx: &Ctx) -> Result<Vec<Value>, RenderError> {
    let ingress_or_gateway = ctx.on("ingressController.enabled") || ctx.on("gatewayAPI.enabled");
    let eps_sync = ctx.on("clustermesh.enableEndpointSliceSynchronization");
    let remove_taints = ctx.on("operator.removeNodeTaints");
    let node_status = ctx.on("operator.setNodeNetworkStatus");

    let mut rules = Vec::new();
    let mut pod_verbs = vec!["get", "list", "watch"];
    let disable_ep = ctx.v("disableEndpointCRD");
    if !disable_ep.is_null()
        && !truthy(disable_ep)
        && ctx.on("operator.unmanagedPodWatcher.restart")
        && to_int64(ctx.v("operator.unmanagedPodWatcher.intervalSeconds")) != 0
    {
        pod_verbs.push("delete");
    }
    rules.push(rule(&[""], &["pods"], &pod_verbs));
    rules.push(tree!({"apiGroups": [""], "resources": ["configmaps"], "resourceNames": ["cilium-config"], "verbs": ["patch"]}));
    if remove_taints || node_status || has_duration(ctx.v("operator.endpointGCInterval")) {
        rules.push(rule(&[""], &["nodes"], &["list", "watch"]));
    }
    if remove_taints || node_status {
        let mut res = Vec::new();
        if remove_taints {
            res.push("nodes");
        }
        if node_status {
            res.push("nodes/status");
        }
        rules.push(rule(&[""], &res, &["patch"]));
    }
    let mut eps_verbs = Vec::new();
    if eps_sync || mcsapi(ctx) {
        eps_verbs.extend(["create", "update", "delete", "deletecollection"]);
    }
    eps_verbs.extend(["get", "list", "watch"]);
    rules.push(rule(&["discovery.k8s.io"], &["endpointslices"], &eps_verbs));
    if eps_sync && ctx.plan.has(Change::OperatorFinalizers) {
        rules.push(rule(&[""], &["services/finalizers"], &["update"]));
    }
    rules.push(rule(&[""], &["services/status"], &["update", "patch"]));
    let mut ns_res = vec!["namespaces"];
    if ingress_or_gateway || ctx.on("bgpControlPlane.enabled") || common::secret_sync_enabled(ctx)?
    {
        ns_res.push("secrets");
    }
    if ctx.plan.has(Change::OperatorReadsServiceAccounts) {
        ns_res.push("serviceaccounts");
    }
    rules.push(rule(&[""], &ns_res, &["get", "list", "watch"]));
    let mut svc_verbs = vec!["get", "list", "watch"];
    if ingress_or_gateway {
        svc_verbs.extend(["create", "update", "delete", "patch"]);
    }
    let svc_res: &[&str] = if ctx.plan.has(Change::OperatorStopsReadingEndpoints) {
        &["services"]
    } else {
        &["services", "endpoints"]
    };
    rules.push(rule(&[""], svc_res, &svc_verbs));
    if ingress_or_gateway && ctx.plan.has(Change::OperatorEndpointSliceRules) {
        rules.push(rule(
            &["discovery.k8s.io"],
            &["endpointslices"],
            &[
                "get", "list", "watch", "create", "update", "delete", "patch",
            ],
        ));
    }
    if eps_sync {
        rules.push(rule(&[""], &["events"], &["patch", "create"]));
    }
    Ok(rules)
}

/// Rules on Cilium's objects and CRDs, and the leader-election lease.
fn cilium_rules(ctx: &Ctx) -> Vec<Value> {
    let c = &["cilium.io"];
    let mut rules = vec![
        rule(
            c,
            &["ciliumnetworkpolicies", "ciliumclusterwidenetworkpolicies"],
            &[
                "create",
                "update",
                "deletecollection",
                "patch",
                "get",
                "list",
                "watch",
            ],
        ),
        rule(
            c,
            &[
                "ciliumnetworkpolicies/status",
                "ciliumclusterwidenetworkpolicies/status",
            ],
            &["patch", "update"],
        ),
        rule(
            c,
            &["ciliumendpoints", "ciliumidentities"],
            &["delete", "list", "watch"],
        ),
    ];
    let mut id_verbs = vec!["update"];
    if matches!(
        ctx.v("identityManagementMode").as_str(),
        Some("operator" | "both")
    ) {
        id_verbs.push("create");
    }
    rules.push(rule(c, &["ciliumidentities"], &id_verbs));
    let mut node_verbs = vec!["create", "update", "get", "list", "watch"];
    if has_duration(ctx.v("operator.nodeGCInterval")) {
        node_verbs.push("delete");
    }
    rules.push(rule(c, &["ciliumnodes"], &node_verbs));
    rules.push(rule(c, &["ciliumnodes/status"], &["update"]));
    rules.push(rule(c, &owned_cilium_kinds(ctx), ALL_WRITE));
    rules.push(rule(
        c,
        &[
            "ciliumbgpclusterconfigs/status",
            "ciliumbgppeerconfigs/status",
        ],
        &["update"],
    ));
    let crd: &[&str] = &["apiextensions.k8s.io"];
    rules.push(rule(
        crd,
        &["customresourcedefinitions"],
        &["create", "get", "list", "watch"],
    ));
    rules.push(tree!({"apiGroups": crd, "resources": ["customresourcedefinitions"], "verbs": ["update"], "resourceNames": updated_crds(ctx)}));
    if ctx.plan.has(Change::OperatorBgpV2Managed) {
        rules.push(tree!({"apiGroups": crd, "resources": ["customresourcedefinitions/status"], "verbs": ["update"], "resourceNames": BGP_V2_CRDS}));
    }
    rules.push(rule(c, &read_cilium_kinds(ctx), &["get", "list", "watch"]));
    rules.push(rule(c, &["ciliumpodippools"], &["create"]));
    rules.push(rule(c, &["ciliumloadbalancerippools/status"], &["patch"]));
    rules.push(rule(
        &["coordination.k8s.io"],
        &["leases"],
        &["create", "get", "update"],
    ));
    rules
}

/// The Cilium kinds the operator fully manages.
fn owned_cilium_kinds(ctx: &Ctx) -> Vec<&'static str> {
    let bgp_v2 = ctx.plan.has(Change::OperatorBgpV2Managed);
    let mut kinds = vec!["ciliumendpointslices", "ciliumenvoyconfigs"];
    if bgp_v2 {
        kinds.extend(["ciliumbgpclusterconfigs", "ciliumbgpnodeconfigoverrides"]);
    }
    kinds.extend([
        "ciliumbgppeerconfigs",
        "ciliumbgpadvertisements",
        "ciliumbgpnodeconfigs",
    ]);
    if ctx.plan.has(Change::OperatorManagesCidrGroups) {
        kinds.push("ciliumcidrgroups");
    }
    kinds
}

/// The Cilium kinds the operator only reads.
fn read_cilium_kinds(ctx: &Ctx) -> Vec<&'static str> {
    let bgp_v2 = ctx.plan.has(Change::OperatorBgpV2Managed);
    let peering_policies = !ctx.plan.has(Change::BgpV1PeeringPoliciesUnread);
    let mut kinds = vec!["ciliumloadbalancerippools", "ciliumpodippools"];
    if peering_policies {
        kinds.push("ciliumbgppeeringpolicies");
    }
    if !bgp_v2 {
        kinds.extend(["ciliumbgpclusterconfigs", "ciliumbgpnodeconfigoverrides"]);
    }
    kinds.push("ciliumbgppeerconfigs");
    if ctx.plan.has(Change::DatapathPluginCrd) {
        kinds.push("ciliumdatapathplugins");
    }
    kinds
}

fn ingress_and_gateway_rules(ctx: &Ctx) -> Vec<Value> {
    let mut rules = Vec::new();
    if ctx.on("ingressController.enabled") {
        rules.push(rule(
            &["networking.k8s.io"],
            &["ingresses", "ingressclasses"],
            &["get", "list", "watch"],
        ));
        let mut res = vec!["ingresses/status"];
        if ctx.plan.has(Change::OperatorFinalizers) {
            res.push("ingresses/finalizers");
        }
        rules.push(rule(&["networking.k8s.io"], &res, &["update"]));
    }
    if !ctx.on("gatewayAPI.enabled") {
        return rules;
    }
    let more = ctx.plan.has(Change::OperatorGatewayApiMoreKinds);
    let g = &["gateway.networking.k8s.io"];
    let mut read = vec!["gatewayclasses", "gateways"];
    if more {
        read.extend(["tcproutes", "udproutes"]);
    }
    read.extend([
        "tlsroutes",
        "httproutes",
        "grpcroutes",
        "referencegrants",
        "referencepolicies",
    ]);
    if more {
        read.extend(["backendtlspolicies", "listenersets"]);
    }
    rules.push(rule(g, &read, &["get", "list", "watch"]));
    rules.push(rule(g, &["gatewayclasses"], &["patch"]));
    let mut status = vec![
        "gatewayclasses/status",
        "gateways/status",
        "httproutes/status",
        "grpcroutes/status",
        "tlsroutes/status",
    ];
    if more {
        status.extend([
            "backendtlspolicies/status",
            "tcproutes/status",
            "udproutes/status",
            "listenersets/status",
        ]);
    }
    rules.push(rule(g, &status, &["update", "patch"]));
    rules.push(rule(
        &["cilium.io"],
        &["ciliumgatewayclassconfigs"],
        &["get", "list", "watch"],
    ));
    rules.push(rule(
        &["cilium.io"],
        &["ciliumgatewayclassconfigs/status"],
        &["update", "patch"],
    ));
    if more {
        rules.push(rule(&[""], &["configmaps"], &["get", "list", "watch"]));
    }
    rules
}

fn mcsapi_rules(ctx: &Ctx) -> Vec<Value> {
    let mcs = mcsapi(ctx);
    let mc = &["multicluster.x-k8s.io"];
    let mut rules = Vec::new();
    if ctx.on("gatewayAPI.enabled") || mcs {
        let mut verbs = vec!["get", "list", "watch"];
        if mcs {
            verbs.extend(["create", "update", "patch", "delete"]);
        }
        rules.push(rule(mc, &["serviceimports"], &verbs));
    }
    if !mcs {
        return rules;
    }
    rules.push(rule(mc, &["serviceimports/status"], &["update", "patch"]));
    if ctx.plan.has(Change::OperatorServiceImportFinalizers) {
        rules.push(rule(mc, &["serviceimports/finalizers"], &["update"]));
    }
    rules.push(rule(mc, &["serviceexports"], &["get", "list", "watch"]));
    rules.push(rule(mc, &["serviceexports/status"], &["update", "patch"]));
    rules.push(rule(
        &[""],
        &["services"],
        &["create", "update", "patch", "delete"],
    ));
    rules
}

fn subject(ctx: &Ctx) -> Value {
    tree!([common::service_account_subject(ctx, "operator")])
}

fn cluster_role_binding(ctx: &Ctx) -> Value {
    tree!({
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": metadata("cilium-operator", None, Some(common::part_of_labels(ctx, &[])), with(ctx.v("operator.annotations"))),
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cilium-operator"},
        "subjects": subject(ctx),
    })
}

/// A Role in `namespace` with `rules`, and its binding to the operator's ServiceAccount.
fn role_and_binding(ctx: &Ctx, name: &str, namespace: &str, rules: Vec<Value>) -> [Value; 2] {
    let meta = metadata(
        name,
        Some(namespace),
        Some(common::part_of_labels(ctx, &[])),
        with(ctx.v("operator.annotations")),
    );
    [
        tree!({
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "Role",
            "metadata": &meta,
            "rules": rules,
        }),
        tree!({
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": meta,
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name},
            "subjects": subject(ctx),
        }),
    ]
}

/// Roles (and their bindings) that let the operator write synced TLS secrets into the
/// secrets namespaces of Ingress, Gateway API and TLS interception.
fn secret_roles(ctx: &Ctx) -> Result<Vec<Value>, RenderError> {
    let mut out = Vec::new();
    let wanted = [
        (
            "cilium-operator-ingress-secrets",
            ctx.on("ingressController.enabled")
                && ctx.on("ingressController.secretsNamespace.sync"),
            "ingressController.secretsNamespace.name",
        ),
        (
            "cilium-operator-gateway-secrets",
            ctx.on("gatewayAPI.enabled") && ctx.on("gatewayAPI.secretsNamespace.sync"),
            "gatewayAPI.secretsNamespace.name",
        ),
        (
            "cilium-operator-tlsinterception-secrets",
            common::secret_sync_enabled(ctx)?,
            "tls.secretsNamespace.name",
        ),
    ];
    for (name, on, ns_path) in wanted {
        if !on || !ctx.on(ns_path) {
            continue;
        }
        let rules = vec![rule(
            &[""],
            &["secrets"],
            &["create", "delete", "update", "patch"],
        )];
        out.extend(role_and_binding(ctx, name, &quote(ctx.v(ns_path)), rules));
    }
    Ok(out)
}

/// The operator creates and removes the ztunnel DaemonSet whatever the encryption setting, so
/// it can clean up after ztunnel is turned off.
fn ztunnel_rules(ctx: &Ctx) -> Vec<Value> {
    let mut rules = vec![rule(
        &["apps"],
        &["daemonsets"],
        &["create", "delete", "get", "list", "watch"],
    )];
    if ctx.plan.has(Change::OperatorReadsServiceAccounts) {
        rules.push(rule(&[""], &["serviceaccounts"], &["get", "list", "watch"]));
    }
    rules
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::components::common::tests::with_release;

    fn crds(version: &str, values: &str) -> Vec<&'static str> {
        with_release(version, values, "1.33.0", updated_crds)
    }

    #[test]
    fn the_crd_list_follows_each_release() {
        let peering = "ciliumbgppeeringpolicies.cilium.io";
        assert!(crds("1.18.12", "{}").contains(&peering));
        assert!(!crds("1.19.0", "{}").contains(&peering));
        let plugins = "ciliumdatapathplugins.cilium.io";
        assert!(!crds("1.19.6", "{}").contains(&plugins));
        assert_eq!(crds("1.20.0", "{}").last(), Some(&plugins));
    }

    #[test]
    fn mcsapi_crds_are_listed_only_where_the_chart_installs_them() {
        let on = "clustermesh: {mcsapi: {enabled: true, installCRDs: true}}";
        let imports = "serviceimports.multicluster.x-k8s.io";
        assert!(!crds("1.19.0", on).contains(&imports));
        assert!(crds("1.19.1", on).contains(&imports));
        let old_switch = "clustermesh: {enableMCSAPISupport: true, mcsapi: {installCRDs: true}}";
        assert!(crds("1.19.6", old_switch).contains(&imports));
        assert!(!crds("1.20.0", old_switch).contains(&imports));
    }

    #[test]
    fn peering_policies_are_read_again_from_1_19_4_until_1_20() {
        let reads = |v: &str| {
            with_release(v, "{}", "1.33.0", read_cilium_kinds).contains(&"ciliumbgppeeringpolicies")
        };
        assert!(reads("1.18.12"));
        assert!(!reads("1.19.3"));
        assert!(reads("1.19.4"));
        assert!(!reads("1.20.0"));
    }
}
