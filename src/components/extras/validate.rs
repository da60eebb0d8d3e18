//! The chart's own refusals (validate.yaml): values Helm will not render, refused here too, each
//! with what would be accepted instead.

use crate::changes::Change;
use serde_json::Value;

use super::super::common::{semver, upgrade_compat_at_least};
use super::super::Ctx;
use crate::error::RenderError;
use crate::plan::CertSource;
use crate::tmpl::{print, to_int64 as go_int};

/// Removed options: the chart refuses them even when set to a harmless value.
fn removed_options(ctx: &Ctx) -> Result<(), RenderError> {
    let removed: &[(&str, &str)] = &[
        (
            "enableCiliumEndpointSlice",
            "was removed in Cilium 1.18; use ciliumEndpointSlice.enabled",
        ),
        (
            "ciliumEndpointSlice.sliceMode",
            "was removed in Cilium 1.18; delete it",
        ),
        (
            "encryption.keyFile",
            "was removed in Cilium 1.16; use encryption.ipsec.keyFile",
        ),
        (
            "encryption.mountPath",
            "was removed in Cilium 1.16; use encryption.ipsec.mountPath",
        ),
        (
            "encryption.secretName",
            "was removed in Cilium 1.16; use encryption.ipsec.secretName",
        ),
        (
            "encryption.interface",
            "was removed in Cilium 1.16; use encryption.ipsec.interface",
        ),
        (
            "proxy.prometheus.port",
            "was removed in Cilium 1.16; use envoy.prometheus.port",
        ),
        ("endpointStatus", "was removed in Cilium 1.16; delete it"),
        (
            "remoteNodeIdentity",
            "was removed in Cilium 1.16; delete it",
        ),
        (
            "containerRuntime.integration",
            "was removed in Cilium 1.16; delete it",
        ),
        ("etcd.managed", "was removed in Cilium 1.16; delete it"),
        (
            "tunnel",
            "was removed in Cilium 1.15; use routingMode and tunnelProtocol",
        ),
        (
            "clustermesh.apiserver.tls.ca.cert",
            "was removed in Cilium 1.15; use tls.ca.cert",
        ),
        (
            "clustermesh.apiserver.tls.ca.key",
            "was removed in Cilium 1.15; use tls.ca.key",
        ),
        (
            "enableK8sEventHandover",
            "was removed in Cilium 1.15; delete it",
        ),
        (
            "enableCnpStatusUpdates",
            "was removed in Cilium 1.15; delete it",
        ),
    ];
    // The chart looks these up with `dig` through `.Values`, which fails on a step that is
    // there but no map (a null the user wrote where the chart has no default, or a scalar).
    for (path, _) in removed {
        let mut end = 0;
        while let Some(dot) = path[end..].find('.') {
            end += dot;
            let step = &path[..end];
            if ctx.values.present(step) {
                ctx.map_read_below(step, &path[end + 1..])?;
            }
            end += 1;
        }
    }
    for (path, why) in removed {
        if ctx.on(path) {
            return Err(ctx.invalid(path, *why));
        }
    }
    // Any value at all counts here, `false` included, as the chart tests its printed form
    // (`dig … | toString`); a null the user wrote is kept and prints as "<nil>".
    let enabled = ctx.v("proxy.prometheus.enabled");
    if ctx.values.present("proxy.prometheus.enabled")
        && (enabled.is_null() || !print(enabled).is_empty())
    {
        return Err(ctx.invalid(
            "proxy.prometheus.enabled",
            "was removed in Cilium 1.16 (whatever its value); delete it and use envoy.prometheus.enabled",
        ));
    }
    Ok(())
}

fn hubble_checks(ctx: &Ctx) -> Result<(), RenderError> {
    if ctx.on("hubble.ui.enabled")
        && !ctx.on("hubble.ui.standalone.enabled")
        && !ctx.on("hubble.relay.enabled")
    {
        return Err(ctx.invalid(
            "hubble.ui.enabled",
            "Hubble UI needs Hubble Relay: set hubble.relay.enabled to true, or run the UI with hubble.ui.standalone.enabled",
        ));
    }
    if ctx.on("hubble.ui.enabled")
        && ctx.on("hubble.ui.standalone.enabled")
        && ctx.on("hubble.relay.tls.server.enabled")
        && !ctx.on("hubble.ui.standalone.tls.certsVolume")
    {
        return Err(ctx.invalid(
            "hubble.ui.standalone.tls.certsVolume",
            "a standalone Hubble UI talking to a TLS-enabled Hubble Relay needs a volume with its client certificates here",
        ));
    }
    if ctx.on("hubble.relay.enabled") && !ctx.on("hubble.enabled") {
        return Err(ctx.invalid(
            "hubble.relay.enabled",
            "Hubble Relay needs Hubble: set hubble.enabled to true, or disable the relay",
        ));
    }
    let monitors = [
        ("prometheus.enabled", "prometheus.serviceMonitor.enabled"),
        (
            "operator.prometheus.enabled",
            "operator.prometheus.serviceMonitor.enabled",
        ),
        (
            "envoy.prometheus.enabled",
            "envoy.prometheus.serviceMonitor.enabled",
        ),
        (
            "hubble.relay.prometheus.enabled",
            "hubble.relay.prometheus.serviceMonitor.enabled",
        ),
    ];
    if let Some((_, path)) = monitors.iter().find(|(a, b)| ctx.on(a) && ctx.on(b)) {
        if !ctx.plan.has_api("monitoring.coreos.com/v1")
            && !ctx.on("prometheus.serviceMonitor.trustCRDsExist")
        {
            return Err(ctx.invalid(
                path,
                "ServiceMonitors need the Prometheus Operator CRDs: declare the API with --api-versions monitoring.coreos.com/v1 (Argo CD passes the cluster's APIs), or set prometheus.serviceMonitor.trustCRDsExist to true",
            ));
        }
    }
    if ctx.on("hubble.enabled")
        && ctx.on("hubble.tls.enabled")
        && ctx.plan.hubble_certs == CertSource::CertManager
        && !ctx.on("hubble.tls.auto.certManagerIssuerRef")
    {
        return Err(ctx.invalid(
            "hubble.tls.auto.certManagerIssuerRef",
            "the certmanager TLS method needs the cert-manager issuer to use (group, kind, name)",
        ));
    }
    if ctx.on("hubble.redact.http.headers.allow") && ctx.on("hubble.redact.http.headers.deny") {
        return Err(ctx.invalid(
            "hubble.redact.http.headers.deny",
            "set either an allow list or a deny list of HTTP headers to redact, not both",
        ));
    }
    if ctx.on("hubble.ui.enabled") {
        let backend = ctx.v("hubble.ui.backend.image.tag");
        let frontend = ctx.v("hubble.ui.frontend.image.tag");
        let is_latest = |v: &Value| v.as_str() == Some("latest");
        if !is_latest(backend) && !is_latest(frontend) {
            for path in [
                "hubble.ui.backend.image.tag",
                "hubble.ui.frontend.image.tag",
            ] {
                ui_tag_check(ctx, path)?;
            }
        }
    }
    Ok(())
}

/// Hubble UI images older than 0.9.0 do not work with this chart; the tag must read as a
/// version (a digest suffix and a leading `v` are ignored).
fn ui_tag_check(ctx: &Ctx, path: &str) -> Result<(), RenderError> {
    let text = print(ctx.v(path));
    let text = match text.find('@') {
        Some(i) => &text[..i],
        None => &text[..],
    };
    let text = text.strip_prefix('v').unwrap_or(text);
    match semver(text) {
        None => Err(ctx.invalid(
            path,
            format!("{text:?} is not a version the chart can compare: use a release tag such as v0.13.3 (or \"latest\")"),
        )),
        Some((v, false)) if v < (0, 9, 0) => Err(ctx.invalid(
            path,
            "Hubble UI images before v0.9.0 are not supported by this chart: use v0.9.0 or later",
        )),
        Some(_) => Ok(()),
    }
}

fn l7_checks(ctx: &Ctx) -> Result<(), RenderError> {
    let ingress = ctx.on("ingressController.enabled");
    let gateway = ctx.on("gatewayAPI.enabled");
    let envoy_lb = ctx.text("loadBalancer.l7.backend") == "envoy";
    if (ingress || gateway || envoy_lb) && ctx.values.present("l7Proxy") && !ctx.on("l7Proxy") {
        return Err(ctx.invalid(
            "l7Proxy",
            "Ingress, Gateway API and the Envoy L7 load balancer need the L7 proxy: set l7Proxy to true",
        ));
    }
    let policy_ok = |path: &str| matches!(ctx.v(path).as_str(), Some("Cluster" | "Local"));
    let svc_type = ctx.text("ingressController.service.type");
    if ingress
        && (svc_type == "LoadBalancer" || svc_type == "NodePort")
        && !policy_ok("ingressController.service.externalTrafficPolicy")
    {
        return Err(ctx.invalid(
            "ingressController.service.externalTrafficPolicy",
            "an Ingress service of type LoadBalancer or NodePort needs \"Cluster\" or \"Local\" here",
        ));
    }
    if gateway && !policy_ok("gatewayAPI.externalTrafficPolicy") {
        return Err(ctx.invalid(
            "gatewayAPI.externalTrafficPolicy",
            "must be \"Cluster\" or \"Local\"",
        ));
    }
    if ctx.on("envoyConfig.enabled") || ingress || gateway {
        let kpr = ctx.v("kubeProxyReplacement");
        let disabled = print(kpr) == "disabled";
        let unset_old =
            !ctx.values.present("kubeProxyReplacement") && !upgrade_compat_at_least(ctx, 1, 14)?;
        if disabled || unset_old {
            return Err(ctx.invalid(
                "kubeProxyReplacement",
                "Ingress, Gateway API and CiliumEnvoyConfig need kubeProxyReplacement set explicitly to true or false (\"disabled\" is no longer accepted)",
            ));
        }
    }
    Ok(())
}

fn cluster_checks(ctx: &Ctx) -> Result<(), RenderError> {
    if ctx.on("authentication.mutual.spire.enabled") && !ctx.on("authentication.enabled") {
        return Err(ctx.invalid(
            "authentication.enabled",
            "SPIRE mutual authentication needs authentication.enabled set to true as well",
        ));
    }
    if ctx.on("ciliumEndpointSlice.enabled") && ctx.v("disableEndpointCRD") == &Value::Bool(true) {
        return Err(ctx.invalid(
            "disableEndpointCRD",
            "CiliumEndpointSlices need the CiliumEndpoint CRD: set disableEndpointCRD to false or ciliumEndpointSlice.enabled to false",
        ));
    }
    let name_rule = "the cluster name must be 1 to 32 characters of lower-case letters, digits and '-', starting and ending with a letter or digit";
    let Value::String(name) = ctx.v("cluster.name") else {
        return Err(ctx.invalid("cluster.name", name_rule));
    };
    let b = name.as_bytes();
    let valid_chars = b
        .iter()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-');
    let alnum = |c: Option<&u8>| c.is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
    if b.is_empty() || b.len() > 32 || !valid_chars || !alnum(b.first()) || !alnum(b.last()) {
        return Err(ctx.invalid("cluster.name", name_rule));
    }
    let id = go_int(ctx.v("cluster.id"));
    if name == "default" && id != 0 {
        return Err(ctx.invalid(
            "cluster.name",
            "\"default\" may only be used with cluster.id 0: give the cluster a unique name",
        ));
    }
    let unsafe_ok = ctx.v("extraConfig").get("allow-unsafe-policy-skb-usage")
        == Some(&Value::String("true".into()));
    let affected_id = (128..=255).contains(&id) || (384..=511).contains(&id);
    let eni_like = ctx.on("eni.enabled")
        || ctx.on("alibabacloud.enabled")
        || ctx.text("cni.chainingMode") == "aws-cni";
    if !unsafe_ok && affected_id && eni_like {
        return Err(ctx.invalid(
            "cluster.id",
            "cluster IDs 128-255 and 384-511 hit a known Cilium bug (cilium/cilium#21330) with ENI, AlibabaCloud or aws-cni chaining, where policy-matched traffic is dropped: use another cluster.id",
        ));
    }
    Ok(())
}

fn clustermesh_checks(ctx: &Ctx) -> Result<(), RenderError> {
    let mode = ctx.v("clustermesh.apiserver.kvstoremesh.kvstoreMode");
    let mode = mode.as_str().unwrap_or_default();
    if mode != "internal" && mode != "external" {
        return Err(ctx.invalid(
            "clustermesh.apiserver.kvstoremesh.kvstoreMode",
            "must be \"internal\" or \"external\"",
        ));
    }
    let use_api = ctx.on("clustermesh.useAPIServer");
    let kvstoremesh = ctx.on("clustermesh.apiserver.kvstoremesh.enabled");
    let alloc = ctx.text("identityAllocationMode");
    if use_api {
        if super::super::common::identity_allocation_crd(ctx) {
            if ctx.on("disableEndpointCRD") {
                return Err(ctx.invalid(
                    "disableEndpointCRD",
                    "the clustermesh-apiserver needs the CiliumEndpoint CRD: set disableEndpointCRD to false",
                ));
            }
        } else if !kvstoremesh {
            return Err(ctx.invalid(
                "clustermesh.apiserver.kvstoremesh.enabled",
                format!("KVStoreMesh must stay enabled with identityAllocationMode {alloc:?}; to reach remote kvstores directly, configure clustermesh.config instead of the clustermesh-apiserver"),
            ));
        }
    }
    if mode == "external" {
        if !use_api {
            return Err(ctx.invalid(
                "clustermesh.apiserver.kvstoremesh.kvstoreMode",
                "\"external\" needs clustermesh.useAPIServer set to true",
            ));
        }
        if !kvstoremesh {
            return Err(ctx.invalid(
                "clustermesh.apiserver.kvstoremesh.kvstoreMode",
                "\"external\" needs clustermesh.apiserver.kvstoremesh.enabled set to true",
            ));
        }
        if print(ctx.v("clustermesh.apiserver.replicas")) != "1" {
            return Err(ctx.invalid(
                "clustermesh.apiserver.replicas",
                "must be 1 when kvstoremesh.kvstoreMode is \"external\"",
            ));
        }
        if !matches!(
            alloc.as_str(),
            "kvstore" | "doublewrite-readkvstore" | "doublewrite-readcrd"
        ) {
            return Err(ctx.invalid(
                "identityAllocationMode",
                "KVStoreMesh with an external etcd needs identityAllocationMode kvstore, doublewrite-readkvstore or doublewrite-readcrd",
            ));
        }
    }
    if use_api
        && ctx.plan.clustermesh_certs == CertSource::CertManager
        && !ctx.on("clustermesh.apiserver.tls.auto.certManagerIssuerRef")
    {
        return Err(ctx.invalid(
            "clustermesh.apiserver.tls.auto.certManagerIssuerRef",
            "the certmanager TLS method needs the cert-manager issuer to use (group, kind, name)",
        ));
    }
    let max = go_int(ctx.v("clustermesh.maxConnectedClusters"));
    if max != 255 && max != 511 {
        return Err(ctx.invalid("clustermesh.maxConnectedClusters", "must be 255 or 511"));
    }
    Ok(())
}

fn misc_checks(ctx: &Ctx) -> Result<(), RenderError> {
    if ctx.on("k8sServiceHostRef.name")
        && ctx.on("k8sServiceHostRef.key")
        && ctx.on("k8sServiceHost")
    {
        return Err(ctx.invalid(
            "k8sServiceHost",
            "set either k8sServiceHost or k8sServiceHostRef (name and key), not both",
        ));
    }
    let base_id = go_int(ctx.v("envoy.baseID"));
    if !(0..=4_294_967_295).contains(&base_id) {
        return Err(ctx.invalid("envoy.baseID", "must be an integer from 0 to 4294967295"));
    }
    if ctx.on("k8sClientExponentialBackoff.enabled") {
        if let Value::Array(env) = ctx.v("extraEnv") {
            let clash = env.iter().any(|e| {
                matches!(
                    e.get("name").and_then(Value::as_str),
                    Some("KUBE_CLIENT_BACKOFF_BASE" | "KUBE_CLIENT_BACKOFF_DURATION")
                )
            });
            if clash {
                return Err(ctx.invalid(
                    "extraEnv",
                    "KUBE_CLIENT_BACKOFF_BASE and KUBE_CLIENT_BACKOFF_DURATION are set by k8sClientExponentialBackoff: remove them from extraEnv or set k8sClientExponentialBackoff.enabled to false",
                ));
            }
        }
    }
    Ok(())
}

/// The checks 1.19 and 1.20 added.
fn newer_checks(ctx: &Ctx) -> Result<(), RenderError> {
    if ctx.plan.has(Change::StandaloneDnsProxyConfig)
        && ctx.on("standaloneDnsProxy.enabled")
        && go_int(ctx.v("dnsProxy.proxyPort")) == 0
    {
        return Err(ctx.invalid(
            "dnsProxy.proxyPort",
            "the standalone DNS proxy shares the agent's DNS proxy port: set it to a non-zero port such as 10094",
        ));
    }
    if ctx.plan.has(Change::TproxyNetkitRefused)
        && ctx.on("bpf.tproxy")
        && matches!(
            ctx.v("bpf.datapathMode").as_str(),
            Some("netkit" | "netkit-l2")
        )
    {
        return Err(ctx.invalid(
            "bpf.tproxy",
            "transparent proxying does not work with the netkit datapath (cilium/cilium#39892): turn bpf.tproxy off or use bpf.datapathMode veth",
        ));
    }
    if !ctx.plan.has(Change::ValidateChecks120) {
        return Ok(());
    }
    let tls = "clustermesh.apiserver.tls";
    if ctx.on("clustermesh.useAPIServer") && ctx.plan.clustermesh_certs == CertSource::Values {
        for cert in ["server", "admin", "remote"] {
            let path = format!("{tls}.{cert}.cert");
            if ctx.on(&path) {
                return Err(ctx.invalid(
                    &path,
                    "certificates and keys can no longer be given as values: enable clustermesh.apiserver.tls.auto or create the Secrets yourself",
                ));
            }
        }
    }
    if ctx.v("ipam.mode").as_str() == Some("eni") && !ctx.on("eni.enabled") {
        return Err(ctx.invalid("ipam.mode", "\"eni\" needs eni.enabled set to true"));
    }
    Ok(())
}

/// Every check of validate.yaml; the first failing one is reported.
pub(super) fn validate(ctx: &Ctx) -> Result<(), RenderError> {
    removed_options(ctx)?;
    misc_checks(ctx)?;
    hubble_checks(ctx)?;
    l7_checks(ctx)?;
    cluster_checks(ctx)?;
    clustermesh_checks(ctx)?;
    newer_checks(ctx)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn semver_is_lenient_like_the_chart() {
        assert_eq!(semver("0.13.3"), Some(((0, 13, 3), false)));
        assert_eq!(semver("1"), Some(((1, 0, 0), false)));
        assert_eq!(semver("0.8.0-rc1"), Some(((0, 8, 0), true)));
        assert_eq!(semver("main"), None);
    }

    #[test]
    fn int_cast_like_sprig() {
        assert_eq!(go_int(&json!(128.7)), 128);
        assert_eq!(go_int(&json!("0x10")), 16);
        assert_eq!(go_int(&json!("abc")), 0);
        assert_eq!(go_int(&json!(null)), 0);
    }
}
