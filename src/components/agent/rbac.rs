//! The agent's identity and permissions: ServiceAccount, ClusterRole(Binding), and the Roles
//! (with their bindings) in Cilium's own namespace and in each feature's secrets namespace.

use crate::changes::Change;
use serde_json::Value;

use super::agent_on;
use crate::components::common::{
    self, labels, listed, merged, metadata, read_secrets_only_from_secrets_namespace, Listed,
};
use crate::components::Ctx;
use crate::error::RenderError;
use crate::tmpl::{quote, with};

pub fn render(ctx: &Ctx) -> Result<Vec<Value>, RenderError> {
    let mut out = Vec::new();
    let on = agent_on(ctx);
    let sa_create = ctx.on("serviceAccounts.cilium.create");
    if on && sa_create {
        out.push(service_account(ctx));
    }
    if on && ctx.on("rbac.create") {
        out.push(cluster_role(ctx));
        if sa_create {
            out.push(cluster_role_binding(ctx));
        }
    }
    if on {
        out.push(config_role(ctx));
        out.push(config_role_binding(ctx));
    }
    out.extend(secret_roles(ctx));
    Ok(out)
}

fn sa_subject(ctx: &Ctx) -> Value {
    tree!([common::service_account_subject(ctx, "cilium")])
}

fn service_account(ctx: &Ctx) -> Value {
    let annotations = merged(&[
        ctx.v("annotations"),
        ctx.v("serviceAccounts.cilium.annotations"),
    ]);
    common::service_account(ctx, "cilium", annotations)
}

fn rule(groups: &[&str], resources: &[&str], verbs: &[&str]) -> Value {
    tree!({"apiGroups": groups, "resources": resources, "verbs": verbs})
}

/// The rules of the agent's ClusterRole, which the pre-flight check's ClusterRole repeats: the
/// two differ only in when they may read Secrets, which the caller says.
/// The Cilium kinds the agent lists and watches, in the chart's order (see `common::crds` for
/// why the operator keeps its own table).
const LISTED_KINDS: &[(&str, Listed)] = &[
    ("ciliumloadbalancerippools", Listed::Always),
    (
        "ciliumbgppeeringpolicies",
        Listed::Until(Change::BgpV1PeeringPoliciesUnread),
    ),
    ("ciliumbgpnodeconfigs", Listed::Always),
    ("ciliumbgpadvertisements", Listed::Always),
    ("ciliumbgppeerconfigs", Listed::Always),
    ("ciliumclusterwideenvoyconfigs", Listed::Always),
    ("ciliumclusterwidenetworkpolicies", Listed::Always),
    ("ciliumegressgatewaypolicies", Listed::Always),
    ("ciliumendpoints", Listed::Always),
    ("ciliumendpointslices", Listed::Always),
    ("ciliumenvoyconfigs", Listed::Always),
    ("ciliumidentities", Listed::Always),
    ("ciliumlocalredirectpolicies", Listed::Always),
    ("ciliumnetworkpolicies", Listed::Always),
    ("ciliumnodes", Listed::Always),
    ("ciliumnodeconfigs", Listed::Always),
    ("ciliumcidrgroups", Listed::Always),
    ("ciliuml2announcementpolicies", Listed::Always),
    ("ciliumpodippools", Listed::Always),
    (
        "ciliumdatapathplugins",
        Listed::Since(Change::DatapathPluginCrd),
    ),
];

pub(crate) fn agent_rules(ctx: &Ctx, read_secrets: bool) -> Vec<Value> {
    // From 1.18.5 Secrets are listed and watched with the other core objects; before, they could
    // only be got, in a rule of their own further down.
    let secrets_in_core_rule = ctx.plan.has(Change::AgentSecretsInCoreRule);
    let rbac_120 = ctx.plan.has(Change::AgentRbac120);
    let mut core = vec!["namespaces", "services", "pods"];
    if !rbac_120 {
        core.push("endpoints");
    }
    core.push("nodes");
    if read_secrets && secrets_in_core_rule {
        core.push("secrets");
    }
    let mut rules = vec![
        rule(
            &["networking.k8s.io"],
            &["networkpolicies"],
            &["get", "list", "watch"],
        ),
        rule(
            &["discovery.k8s.io"],
            &["endpointslices"],
            &["get", "list", "watch"],
        ),
        rule(&[""], &core, &["get", "list", "watch"]),
    ];
    if ctx.on("hubble.enabled") && ctx.on("hubble.dropEventEmitter.enabled") {
        rules.push(rule(&[""], &["events"], &["create", "patch"]));
    }
    if ctx.on("annotateK8sNode") {
        rules.push(rule(&[""], &["nodes/status"], &["patch"]));
    }
    if ctx.on("l2announcements.enabled") {
        rules.push(rule(
            &["coordination.k8s.io"],
            &["leases"],
            &["create", "get", "update", "list", "delete"],
        ));
    }
    rules.push(rule(
        &["apiextensions.k8s.io"],
        &["customresourcedefinitions"],
        &["list", "watch", "get"],
    ));
    if read_secrets && !secrets_in_core_rule {
        rules.push(rule(&[""], &["secrets"], &["get"]));
    }
    rules.push(rule(
        &["cilium.io"],
        &listed(ctx, LISTED_KINDS, false),
        &["list", "watch"],
    ));
    rules.push(rule(
        &["cilium.io"],
        &["ciliumidentities", "ciliumendpoints", "ciliumnodes"],
        &["create"],
    ));
    rules.push(rule(&["cilium.io"], &["ciliumidentities"], &["update"]));
    rules.push(rule(
        &["cilium.io"],
        &["ciliumendpoints"],
        &["delete", "get"],
    ));
    rules.push(rule(
        &["cilium.io"],
        &["ciliumnodes", "ciliumnodes/status"],
        &["get", "update"],
    ));
    rules.push(rule(
        &["cilium.io"],
        &[
            "ciliumendpoints/status",
            "ciliumendpoints",
            "ciliuml2announcementpolicies/status",
            "ciliumbgpnodeconfigs/status",
        ],
        &["patch"],
    ));
    if ctx.plan.has(Change::ClusterNetworkPolicy) && ctx.on("k8sClusterNetworkPolicy.enabled") {
        rules.push(rule(
            &["policy.networking.k8s.io"],
            &["clusternetworkpolicies"],
            &["get", "list", "watch"],
        ));
    }
    rules
}

fn cluster_role(ctx: &Ctx) -> Value {
    let rules = agent_rules(ctx, !read_secrets_only_from_secrets_namespace(ctx));
    tree!({
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": metadata(
            "cilium",
            None,
            Some(common::part_of_labels(ctx, &[])),
            with(ctx.v("annotations")),
        ),
        "rules": rules,
    })
}

fn cluster_role_binding(ctx: &Ctx) -> Value {
    tree!({
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": metadata(
            "cilium",
            None,
            Some(common::part_of_labels(ctx, &[])),
            with(ctx.v("annotations")),
        ),
        "roleRef": {
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": "ClusterRole",
            "name": "cilium",
        },
        "subjects": sa_subject(ctx),
    })
}

fn config_role(ctx: &Ctx) -> Value {
    tree!({
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "Role",
        "metadata": metadata(
            "cilium-config-agent",
            Some(&ctx.namespace()),
            Some(common::part_of_labels(ctx, &[])),
            with(ctx.v("annotations")),
        ),
        "rules": [rule(&[""], &["configmaps"], &["get", "list", "watch"])],
    })
}

fn config_role_binding(ctx: &Ctx) -> Value {
    tree!({
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": metadata(
            "cilium-config-agent",
            Some(&ctx.namespace()),
            Some(common::part_of_labels(ctx, &[])),
            with(ctx.v("annotations")),
        ),
        "roleRef": {
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": "Role",
            "name": "cilium-config-agent",
        },
        "subjects": sa_subject(ctx),
    })
}

/// One feature's read access to Secrets in its secrets namespace.
struct SecretAccess {
    role: &'static str,
    binding: &'static str,
    namespace: String,
    role_annotations: bool,
    binding_annotations: bool,
}

fn secret_roles(ctx: &Ctx) -> Vec<Value> {
    let on = agent_on(ctx) && ctx.on("serviceAccounts.cilium.create");
    let mut grants: Vec<(bool, bool, SecretAccess)> = Vec::new();
    let mut feature = |enabled: &str,
                       ns_path: &str,
                       role: &'static str,
                       binding: &'static str,
                       annotated: bool| {
        let wanted = on && ctx.on(enabled) && ctx.on(ns_path);
        grants.push((
            wanted,
            wanted,
            SecretAccess {
                role,
                binding,
                namespace: quote(ctx.v(ns_path)),
                role_annotations: annotated,
                binding_annotations: annotated,
            },
        ));
    };
    feature(
        "ingressController.enabled",
        "ingressController.secretsNamespace.name",
        "cilium-ingress-secrets",
        "cilium-secrets",
        true,
    );
    feature(
        "gatewayAPI.enabled",
        "gatewayAPI.secretsNamespace.name",
        "cilium-gateway-secrets",
        "cilium-gateway-secrets",
        true,
    );
    feature(
        "envoyConfig.enabled",
        "envoyConfig.secretsNamespace.name",
        "cilium-envoy-config-secrets",
        "cilium-envoy-config-secrets",
        true,
    );
    feature(
        "bgpControlPlane.enabled",
        "bgpControlPlane.secretsNamespace.name",
        "cilium-bgp-control-plane-secrets",
        "cilium-bgp-control-plane-secrets",
        false,
    );

    // TLS interception: before 1.18.7 (and again in 1.19.0 alone) the Role followed the
    // operator's settings and the binding only preflight, so both could render without the
    // agent.
    let tls = read_secrets_only_from_secrets_namespace(ctx) && ctx.on("tls.secretsNamespace.name");
    let (role_on, binding_on) = if ctx.plan.has(Change::TlsInterceptionRbacFollowsAgent) {
        (on && tls, on && tls)
    } else {
        (
            ctx.on("operator.enabled") && ctx.on("serviceAccounts.operator.create") && tls,
            !ctx.on("preflight.enabled") && tls,
        )
    };
    grants.push((
        role_on,
        binding_on,
        SecretAccess {
            role: "cilium-tlsinterception-secrets",
            binding: "cilium-tlsinterception-secrets",
            namespace: quote(ctx.v("tls.secretsNamespace.name")),
            role_annotations: true,
            binding_annotations: false,
        },
    ));

    let mut out = Vec::new();
    for (role_on, binding_on, g) in grants {
        if role_on {
            out.push(tree!({
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "Role",
                "metadata": metadata(
                    g.role,
                    Some(&g.namespace),
                    Some(labels(&common::with_chart_label(ctx, &[common::PART_OF_CILIUM]), &[])),
                    g.role_annotations.then(|| ctx.v("annotations").clone()),
                ),
                "rules": [rule(&[""], &["secrets"], &["get", "list", "watch"])],
            }));
        }
        if binding_on {
            out.push(tree!({
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "RoleBinding",
                "metadata": metadata(
                    g.binding,
                    Some(&g.namespace),
                    Some(common::part_of_labels(ctx, &[])),
                    g.binding_annotations.then(|| ctx.v("annotations").clone()),
                ),
                "roleRef": {
                    "apiGroup": "rbac.authorization.k8s.io",
                    "kind": "Role",
                    "name": g.role,
                },
                "subjects": sa_subject(ctx),
            }));
        }
    }
    out
}
