//! Facts the chart's helpers derive from values: the Envoy DaemonSet switch, `upgradeCompatibility` and Masterminds-style versions, the identity store, and the API server address.

use serde_json::Value;

pub use crate::semver::{parse_semver, semver};

use crate::components::Ctx;
use crate::error::RenderError;
use crate::tmpl::{bare, print};

/// What the chart's `envoyDaemonSetEnabled` helper prints: `false` without L7 proxying, else
/// `envoy.enabled` as written, else whether `upgradeCompatibility` allows the 1.16 default.
pub fn envoy_daemonset_text(ctx: &Ctx) -> Result<String, RenderError> {
    if !ctx.on("l7Proxy") {
        return Ok("false".into());
    }
    written_or_compat(ctx, "envoy.enabled", 1, 16)
}

/// A switch whose default follows `upgradeCompatibility`, as the chart's helpers print it: the
/// value at `path` as written when set, else whether the compatibility version is at least
/// `major.minor`.
pub fn written_or_compat(
    ctx: &Ctx,
    path: &str,
    major: u64,
    minor: u64,
) -> Result<String, RenderError> {
    let own = ctx.v(path);
    if !own.is_null() {
        return Ok(print(own));
    }
    Ok(upgrade_compat_at_least(ctx, major, minor)?.to_string())
}

/// The standalone Envoy DaemonSet runs: the chart compares the helper's text with "true".
pub fn envoy_daemonset_enabled(ctx: &Ctx) -> Result<bool, RenderError> {
    Ok(envoy_daemonset_text(ctx)? == "true")
}

/// `semverCompare ">=MAJOR.MINOR" (default "MAJOR.MINOR" .upgradeCompatibility)`: true when
/// unset; a value that is not a version fails, as Helm's comparison fails the render.
pub fn upgrade_compat_at_least(ctx: &Ctx, major: u64, minor: u64) -> Result<bool, RenderError> {
    Ok(upgrade_compat(ctx)?.is_none_or(|v| v >= (major, minor)))
}

/// A default the chart chooses by `upgradeCompatibility`: new installations get the new
/// behaviour, an older `upgradeCompatibility` keeps the old one. The component asks
/// `upgrade_compat_at_least` with `since`; `cilium-cmp diff` names the gate when an upgrade
/// crosses it.
pub struct CompatDefault {
    /// The release whose chart changed the default.
    pub since: (u64, u64),
    /// The value that, when set, decides instead.
    pub value: &'static str,
    /// What a new installation gets.
    pub new_install: &'static str,
    /// What an older `upgradeCompatibility` keeps.
    pub kept: &'static str,
}

/// `envoy.xdsMode` unset: the aggregated xDS stream from 1.20 (the 1.20 chart's `_helpers.tpl`).
pub const ENVOY_XDS_ADS: CompatDefault = CompatDefault {
    since: (1, 20),
    value: "envoy.xdsMode",
    new_install: "cilium-config gets envoy-xds-mode: ads (the agent and Envoy switch to the aggregated xDS stream)",
    kept: "envoy-xds-mode stays out of cilium-config and the agent keeps its split xDS mode",
};

/// The gates a supported upgrade can cross. Older ones (1.8's probes, 1.14's kube-proxy
/// replacement) are in effect for every supported release.
pub const COMPAT_DEFAULTS: &[CompatDefault] = &[ENVOY_XDS_ADS];

/// `upgradeCompatibility` as (major, minor) when set, parsed once in the plan. Helm's semver
/// comparison fails on text that is not a version, so the error is made here, where a template
/// compares it; a pre-release (`1.16.0-rc.1`) never satisfies `>=1.X`, modelled as version 0.0.
pub fn upgrade_compat(ctx: &Ctx) -> Result<Option<(u64, u64)>, RenderError> {
    ctx.plan.upgrade_compat.clone().map_err(|text| {
        ctx.invalid(
            "upgradeCompatibility",
            format!("{text:?} is not a version; write the Cilium version first installed, such as \"1.16\" or \"1.17.3\""),
        )
    })
}

/// `identityAllocationCRD`: identities are stored as CRDs in these modes.
pub fn identity_allocation_crd(ctx: &Ctx) -> bool {
    matches!(
        ctx.text("identityAllocationMode").as_str(),
        "crd" | "doublewrite-readkvstore" | "doublewrite-readcrd"
    )
}

/// `k8sServiceHost` / `k8sServicePort`: `auto` needs a `lookup` in a live cluster, which a
/// deterministic render cannot do, so it is refused.
pub fn k8s_service_host(ctx: &Ctx) -> Result<String, RenderError> {
    let host = ctx.text("k8sServiceHost");
    if host == "auto" {
        return Err(ctx.invalid(
            "k8sServiceHost",
            "\"auto\" makes the chart look the API server up in the live cluster (kube-public/cluster-info), which a deterministic render cannot do; write the API server's host name or address (and k8sServicePort) instead",
        ));
    }
    Ok(host)
}

/// The API server port as the chart prints it (see `k8s_service_host` for `auto`).
pub fn k8s_service_port(ctx: &Ctx) -> Result<String, RenderError> {
    k8s_service_host(ctx)?;
    Ok(ctx.text("k8sServicePort"))
}

/// The `KUBERNETES_SERVICE_HOST`/`PORT` variables of the containers that must reach the API
/// server before kube-proxy (or Cilium itself) serves the Service: from `k8sServiceHostRef`
/// (a ConfigMap key) and from `k8sServiceHost`, each when set.
pub fn k8s_service_env(ctx: &Ctx) -> Result<Vec<Value>, RenderError> {
    let mut env = Vec::new();
    if ctx.on("k8sServiceHostRef.name") && ctx.on("k8sServiceHostRef.key") {
        env.push(tree!({
            "name": "KUBERNETES_SERVICE_HOST",
            "valueFrom": {"configMapKeyRef": {
                "name": bare(ctx.v("k8sServiceHostRef.name")),
                "key": bare(ctx.v("k8sServiceHostRef.key")),
            }},
        }));
        env.push(tree!({"name": "KUBERNETES_SERVICE_PORT", "value": k8s_service_port(ctx)?}));
    }
    if ctx.on("k8sServiceHost") {
        env.push(tree!({"name": "KUBERNETES_SERVICE_HOST", "value": k8s_service_host(ctx)?}));
        env.push(tree!({"name": "KUBERNETES_SERVICE_PORT", "value": k8s_service_port(ctx)?}));
    }
    Ok(env)
}

#[cfg(test)]
mod tests {
    use super::super::secret_sync_text;
    use super::super::tests::with_release;
    use super::*;

    /// Helm's `semverCompare` fails the render on an `upgradeCompatibility` that is no version,
    /// wherever a template asks; the pre-flight check alone asks through the Envoy helper.
    #[test]
    fn a_compatibility_version_that_is_no_version_fails_wherever_it_is_read() {
        let values = "preflight: {enabled: true}\nupgradeCompatibility: perturbed\ncni: {iptablesRemoveAWSRules: false}\nhubble: {tls: {auto: {method: cronJob}}}\n";
        with_release("1.18.3", values, "1.35.0", |ctx| {
            assert!(envoy_daemonset_text(ctx).is_err());
            assert!(secret_sync_text(ctx).is_err());
            let err = crate::components::render_all(ctx).unwrap_err().to_string();
            assert!(err.contains("upgradeCompatibility"), "{err}");
        });
        with_release(
            "1.18.3",
            "upgradeCompatibility: \"1.15\"\n",
            "1.35.0",
            |ctx| {
                assert_eq!(envoy_daemonset_text(ctx).unwrap(), "false");
                assert!(!upgrade_compat_at_least(ctx, 1, 16).unwrap());
                assert!(upgrade_compat_at_least(ctx, 1, 14).unwrap());
            },
        );
    }
}
