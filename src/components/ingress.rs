//! Mirrors the chart's templates: cilium-ingress-class.yaml, cilium-ingress-service.yaml, cilium-gateway-api-class.yaml

use crate::changes::Change;
use serde_json::Value;

use super::common::{common_labels, labels, merged, metadata, put, with_chart_label};
use super::Ctx;
use crate::error::RenderError;
use crate::tmpl::{bare, print, truthy, with};

pub fn render(ctx: &Ctx) -> Result<Vec<Value>, RenderError> {
    let mut out = Vec::new();
    if ctx.on("ingressController.enabled") {
        out.push(ingress_class(ctx));
        out.push(service(ctx));
        out.push(endpoints(ctx));
    }
    if creates_gateway_class(ctx) {
        out.push(gateway_class(ctx));
    }
    Ok(out)
}

/// Whether the chart creates the cilium GatewayClass: with Gateway API on, when asked to, or
/// on "auto" where the cluster already serves the GatewayClass kind.
pub(super) fn creates_gateway_class(ctx: &Ctx) -> bool {
    if !ctx.on("gatewayAPI.enabled") {
        return false;
    }
    match print(ctx.v("gatewayAPI.gatewayClass.create")).as_str() {
        "true" => true,
        "auto" => ctx
            .plan
            .has_api("gateway.networking.k8s.io/v1/GatewayClass"),
        _ => false,
    }
}

fn ingress_class(ctx: &Ctx) -> Value {
    let annotations = ctx
        .on("ingressController.default")
        .then(|| tree!({"ingressclass.kubernetes.io/is-default-class": "true"}));
    tree!({
        "apiVersion": "networking.k8s.io/v1",
        "kind": "IngressClass",
        "metadata": metadata("cilium", None, common_labels(ctx), annotations),
        "spec": {"controller": "cilium.io/ingress-controller"},
    })
}

fn service(ctx: &Ctx) -> Value {
    let ns = ctx.namespace();
    let svc = "ingressController.service";
    let host_network = ctx.on("ingressController.hostNetwork.enabled");
    // Before 1.18.2 the node ports were always written, so an empty value became null but a
    // zero stayed; later releases write them only when set.
    let always_node_ports = !ctx.plan.has(Change::IngressNodePortsWhenSet);
    let port = |name: &str, number: u16, node_port: &Value| {
        let mut p = tree!({"name": name, "port": number, "protocol": "TCP"});
        if always_node_ports || truthy(node_port) {
            put(&mut p, "nodePort", Some(bare(node_port)));
        }
        p
    };
    let mut spec = tree!({
        "ports": [
            port("http", 80, ctx.v("ingressController.service.insecureNodePort")),
            port("https", 443, ctx.v("ingressController.service.secureNodePort")),
        ],
        "type": if host_network { tree!("ClusterIP") } else { bare(ctx.v(&format!("{svc}.type"))) },
    });
    put(
        &mut spec,
        "loadBalancerClass",
        with(ctx.v(&format!("{svc}.loadBalancerClass"))).map(|v| bare(&v)),
    );
    let alloc = ctx.v(&format!("{svc}.allocateLoadBalancerNodePorts"));
    if !alloc.is_null() {
        put(
            &mut spec,
            "allocateLoadBalancerNodePorts",
            Some(bare(alloc)),
        );
    }
    put(
        &mut spec,
        "loadBalancerIP",
        with(ctx.v(&format!("{svc}.loadBalancerIP"))).map(|v| bare(&v)),
    );
    if !host_network {
        put(
            &mut spec,
            "externalTrafficPolicy",
            with(ctx.v(&format!("{svc}.externalTrafficPolicy"))).map(|v| bare(&v)),
        );
    }
    let labels = labels(
        &with_chart_label(
            ctx,
            &[
                ("cilium.io/ingress", "true"),
                ("app.kubernetes.io/part-of", "cilium"),
            ],
        ),
        &[ctx.v(&format!("{svc}.labels")), ctx.v("commonLabels")],
    );
    tree!({
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": metadata(
            &ctx.text(&format!("{svc}.name")),
            Some(&ns),
            Some(labels),
            with(ctx.v(&format!("{svc}.annotations"))),
        ),
        "spec": spec,
    })
}

/// A placeholder backend so the Service is never selector-less and empty; the operator
/// programs the real backends through Envoy. From 1.19 an EndpointSlice, before Endpoints.
fn endpoints(ctx: &Ctx) -> Value {
    let ns = ctx.namespace();
    let svc = "ingressController.service";
    let name = ctx.text(&format!("{svc}.name"));
    let annotations = with(ctx.v(&format!("{svc}.annotations")));
    let user_labels = [ctx.v("commonLabels"), ctx.v(&format!("{svc}.labels"))];
    if !ctx.plan.has(Change::IngressEndpointSlice) {
        return tree!({
            "apiVersion": "v1",
            "kind": "Endpoints",
            "metadata": metadata(&name, Some(&ns), merged(&user_labels), annotations),
            "subsets": [{"addresses": [{"ip": "192.192.192.192"}], "ports": [{"port": 9999}]}],
        });
    }
    let linked = ctx.plan.has(Change::IngressEndpointSliceLinked);
    let mut own = Vec::new();
    if linked {
        own.push(("kubernetes.io/service-name", name.as_str()));
    }
    let mut endpoint = tree!({"addresses": ["192.192.192.192"]});
    if linked {
        put(&mut endpoint, "conditions", Some(tree!({"ready": true})));
    }
    tree!({
        "apiVersion": "discovery.k8s.io/v1",
        "kind": "EndpointSlice",
        "metadata": metadata(&name, Some(&ns), Some(labels(&own, &user_labels)).filter(truthy), annotations),
        "addressType": "IPv4",
        "endpoints": [endpoint],
        "ports": [{"port": 9999}],
    })
}

fn gateway_class(ctx: &Ctx) -> Value {
    tree!({
        "apiVersion": "gateway.networking.k8s.io/v1",
        "kind": "GatewayClass",
        "metadata": metadata("cilium", None, common_labels(ctx), None),
        "spec": {
            "controllerName": "io.cilium/gateway-controller",
            "description": "The default Cilium GatewayClass",
        },
    })
}
