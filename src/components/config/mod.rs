//! Mirrors the chart's templates: cilium-configmap.yaml
//!
//! The `cilium-config` ConfigMap holds the agent's and operator's flags as strings. The keys are
//! filled in the chart's order, section by section, so a key written twice (the chart does that
//! for `enable-endpoint-routes`, and `extraConfig` may override anything) keeps its last value,
//! as a YAML reader does.

mod datapath;
mod features;
mod general;
mod hubble;
mod text;

use super::common::{
    envoy_daemonset_text, read_secrets_only_from_secrets_namespace, secret_sync_enabled,
    upgrade_compat,
};
use serde_json::{Map, Value};

use super::common;
use super::Ctx;
use crate::changes::Change;
use crate::error::RenderError;
use crate::tmpl::{self, print, truthy};

/// sha256 of `cilium_config` (of null when it is not rendered), computed once per render.
pub fn cilium_config_checksum(ctx: &Ctx) -> Result<String, RenderError> {
    if let Some(sum) = ctx.config_checksum.get() {
        return Ok(sum.clone());
    }
    let config = cilium_config(ctx)?;
    let sum = crate::output::sha256_hex(config.as_ref().unwrap_or(&Value::Null));
    ctx.config_map.set(config);
    Ok(ctx.config_checksum.get_or_init(|| sum).clone())
}

/// The `cilium-config` ConfigMap, when the chart renders it. Other components hash it for their
/// `cilium.io/cilium-configmap-checksum` annotation (see `cilium_config_checksum`).
pub fn cilium_config(ctx: &Ctx) -> Result<Option<Value>, RenderError> {
    let wanted =
        ctx.on("agent") || ctx.on("operator.enabled") || ctx.on("clustermesh.useAPIServer");
    if !wanted || ctx.on("preflight.enabled") {
        return Ok(None);
    }
    let derived = Derived::new(ctx)?;
    let mut data = Data::default();
    general::identity_and_agent(ctx, &derived, &mut data)?;
    general::proxies_and_secrets(ctx, &derived, &mut data)?;
    datapath::bpf(ctx, &derived, &mut data)?;
    datapath::routing(ctx, &derived, &mut data)?;
    datapath::masquerade_and_encryption(ctx, &derived, &mut data)?;
    datapath::services(ctx, &derived, &mut data)?;
    general::node_and_cni(ctx, &derived, &mut data)?;
    hubble::hubble(ctx, &derived, &mut data)?;
    features::ipam(ctx, &derived, &mut data)?;
    features::networking(ctx, &derived, &mut data)?;
    features::operator_and_dns(ctx, &derived, &mut data)?;
    features::auth_envoy_and_mesh(ctx, &derived, &mut data)?;
    features::extra_config(ctx, &mut data)?;

    let metadata = common::metadata(
        "cilium-config",
        Some(&ctx.namespace()),
        common::common_labels(ctx),
        None,
    );
    Ok(Some(tree!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": metadata,
        "data": data.finish(),
    })))
}

pub fn render(ctx: &Ctx) -> Result<Vec<Value>, RenderError> {
    let config = match ctx.config_map.take() {
        Some(built) => Some(built),
        None => cilium_config(ctx)?,
    };
    let mut out: Vec<Value> = config.into_iter().collect();
    out.extend(ip_masq_agent(ctx));
    Ok(out)
}

/// The `ip-masq-agent` ConfigMap the same template renders when the agent's masquerading
/// configuration is given in values.
fn ip_masq_agent(ctx: &Ctx) -> Option<Value> {
    if !(ctx.on("ipMasqAgent.enabled") && ctx.on("ipMasqAgent.config")) {
        return None;
    }
    Some(tree!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": common::metadata("ip-masq-agent", Some(&ctx.namespace()), None, None),
        "data": { "config": tmpl::to_json(ctx.v("ipMasqAgent.config")) },
    }))
}

/// The ConfigMap's `data`, filled in the chart's order; a later write of a key wins.
#[derive(Default)]
pub(crate) struct Data {
    map: Map<String, Value>,
}

impl Data {
    /// A value as the YAML reader sees it (null means the key ends up absent).
    fn put(&mut self, key: &str, value: Value) {
        self.map.insert(key.to_string(), value);
    }

    /// A fixed string.
    fn s(&mut self, key: &str, value: impl Into<String>) {
        self.put(key, Value::String(value.into()));
    }

    /// `{{ x | quote }}`: the printed value as a string; nil prints nothing, leaving the key null.
    fn q(&mut self, key: &str, value: &Value) {
        let v = if value.is_null() {
            Value::Null
        } else {
            Value::String(print(value))
        };
        self.put(key, v);
    }

    /// The value at `path`, quoted by the chart (always a string).
    fn qv(&mut self, ctx: &Ctx, key: &str, path: &str) {
        self.q(key, ctx.v(path));
    }

    /// The chart's commonest line, table-driven: for each (condition, key, path) whose
    /// condition holds for `path`, `qv` of that path, in the order given.
    fn qv_each(&mut self, ctx: &Ctx, rows: &[(Cond, &str, &str)]) {
        for (when, key, path) in rows {
            self.qv_when(ctx, *when, key, path);
        }
    }

    /// `qv` of every (key, path) whose value is set, in the order given.
    fn qv_set(&mut self, ctx: &Ctx, rows: &[(&str, &str)]) {
        for (key, path) in rows {
            self.qv_when(ctx, on, key, path);
        }
    }

    /// One row of `qv_each`: `qv` of `path` when `when` holds for it.
    fn qv_when(&mut self, ctx: &Ctx, when: Cond, key: &str, path: &str) {
        if when(ctx, path) {
            self.qv(ctx, key, path);
        }
    }

    /// The value at `path` printed without quotes, so YAML re-types it.
    fn bare(&mut self, ctx: &Ctx, key: &str, path: &str) -> Result<(), RenderError> {
        let v = text::bare(ctx, path, &text::text(ctx.v(path)))?;
        self.put(key, v);
        Ok(())
    }

    /// The value at `path` printed inside double quotes the chart writes itself.
    fn dq(&mut self, ctx: &Ctx, key: &str, path: &str) -> Result<(), RenderError> {
        let v = text::dquoted(ctx, path, &text::text(ctx.v(path)))?;
        self.put(key, v);
        Ok(())
    }

    fn finish(mut self) -> Value {
        self.map.retain(|_, v| !v.is_null());
        Value::Object(self.map)
    }
}

/// A test on the value at a path: `on` (`if`) or `has` (`hasKey`).
type Cond = fn(&Ctx, &str) -> bool;

/// `if` on the value at `path` (Go-template truth).
fn on(ctx: &Ctx, path: &str) -> bool {
    ctx.on(path)
}

/// `hasKey` on the value's parent map: true for a null the merged values keep (`Values::present`).
fn has(ctx: &Ctx, path: &str) -> bool {
    ctx.values.present(path)
}

/// `not (kindIs "invalid" X)`: the value is there and not null (a kept null fails this test,
/// where it passes `has`).
fn set(ctx: &Ctx, path: &str) -> bool {
    !ctx.v(path).is_null()
}

/// The chart's computed settings: defaults that depend on `upgradeCompatibility` and the
/// variables it derives once at the top of the template.
pub(crate) struct Derived {
    /// The IPAM mode (`ipam.mode`, else cluster-pool).
    ipam: Value,
    /// "true" or "false" (anything else is refused).
    kube_proxy_replacement: String,
    /// The CNI chaining mode: the configured one, `generic-veth` with a chaining target, else `none`.
    chaining: Value,
    /// What the `envoyDaemonSetEnabled` helper prints.
    envoy_ds_text: String,
    read_secrets_only: bool,
    secret_sync: bool,
    default_map_ratio: f64,
    default_bpf_masquerade: bool,
    default_clock_probe: bool,
    operator_api_addr: &'static str,
    ct_tcp_max: Value,
    ct_any_max: Value,
    azure_use_primary_address: Value,
    socket_lb: Value,
    default_dns_transparent: &'static str,
    default_ipv4_masquerade: &'static str,
}

impl Derived {
    fn new(ctx: &Ctx) -> Result<Derived, RenderError> {
        let compat = upgrade_compat(ctx)?;
        let since = |minor: u64| compat.is_none_or(|(major, m)| (major, m) >= (1, minor));
        let since_1_8 = since(8);
        let mut kpr_default = "false";
        // The pre-1.14 defaults (which the chart then refuses) are gone from 1.19.
        if !ctx.plan.has(Change::KprLegacyDefaultsDropped) {
            if since_1_8 {
                kpr_default = "probe";
            }
            if since(12) {
                kpr_default = "disabled";
            }
        }
        if since(14) {
            kpr_default = "false";
        }
        let kpr_value = ctx.v("kubeProxyReplacement");
        let kpr_text = if kpr_value.is_null() {
            String::new()
        } else {
            print(kpr_value)
        };
        let kube_proxy_replacement = if kpr_text.is_empty() {
            kpr_default.to_string()
        } else {
            kpr_text
        };
        if kube_proxy_replacement != "true" && kube_proxy_replacement != "false" {
            return Err(ctx.invalid(
                "kubeProxyReplacement",
                format!("{kube_proxy_replacement:?} is not accepted by the chart; set kubeProxyReplacement to true or false (with upgradeCompatibility below 1.14 it has no usable default)"),
            ));
        }

        let chaining = if set(ctx, "cni.chainingMode") {
            ctx.v("cni.chainingMode").clone()
        } else if set(ctx, "cni.chainingTarget") {
            tree!("generic-veth")
        } else {
            tree!("none")
        };

        let azure_default = if since(12) && ctx.on("azure.enabled") {
            "false"
        } else {
            "true"
        };
        let mut ipam = coalesce(&[ctx.v("ipam.mode")]).unwrap_or_else(|| tree!("cluster-pool"));
        if ctx.plan.has(Change::CloudNodeSpecConfig) && ctx.on("eni.enabled") {
            ipam = tree!("eni");
        }
        Ok(Derived {
            ipam,
            kube_proxy_replacement,
            chaining,
            envoy_ds_text: envoy_daemonset_text(ctx)?,
            read_secrets_only: read_secrets_only_from_secrets_namespace(ctx),
            secret_sync: secret_sync_enabled(ctx)?,
            default_map_ratio: if since_1_8 { 0.0025 } else { 0.0 },
            default_bpf_masquerade: since_1_8 && !since(10),
            default_clock_probe: since_1_8,
            operator_api_addr: match (since_1_8, ctx.on("ipv4.enabled")) {
                (false, _) => "localhost:9234",
                (true, true) => "127.0.0.1:9234",
                (true, false) => "[::1]:9234",
            },
            ct_tcp_max: coalesce(&[ctx.v("bpf.ctTcpMax")])
                .unwrap_or_else(|| tree!(if since_1_8 { 0 } else { 524288 })),
            ct_any_max: coalesce(&[ctx.v("bpf.ctAnyMax")])
                .unwrap_or_else(|| tree!(if since_1_8 { 0 } else { 262144 })),
            azure_use_primary_address: coalesce(&[ctx.v("azure.usePrimaryAddress")])
                .unwrap_or_else(|| tree!(azure_default)),
            socket_lb: coalesce(&[ctx.v("socketLB"), ctx.v("hostServices")]).unwrap_or(Value::Null),
            default_dns_transparent: if since(12) { "true" } else { "false" },
            default_ipv4_masquerade: if since(18) && ctx.on("eni.enabled") {
                "false"
            } else {
                "true"
            },
        })
    }

    /// The chaining mode as the chart compares it.
    fn chaining_is(&self, mode: &str) -> bool {
        self.chaining.as_str() == Some(mode)
    }

    fn envoy_ds(&self) -> bool {
        self.envoy_ds_text == "true"
    }
}

/// Sprig's `coalesce`: the first value that is not empty.
fn coalesce(values: &[&Value]) -> Option<Value> {
    values.iter().find(|v| truthy(v)).map(|v| (*v).clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::components::common::tests::with_release;
    use serde_json::json;

    /// The checksum is shared within one `render_all` only: a later render with other values
    /// gets its own.
    #[test]
    fn config_checksum_memo_lives_for_one_render() {
        let sums = |user: &str| {
            with_release("1.18.12", user, "1.35.0", |ctx| {
                let objects = crate::components::render_all(ctx).unwrap();
                let own = crate::output::sha256_hex(&cilium_config(ctx).unwrap().unwrap());
                let stamped: Vec<String> = objects
                    .iter()
                    .filter_map(|o| {
                        o.pointer("/spec/template/metadata/annotations")?
                            .get("cilium.io/cilium-configmap-checksum")?
                            .as_str()
                            .map(String::from)
                    })
                    .collect();
                (own, stamped)
            })
        };
        let base = "cni: {iptablesRemoveAWSRules: false}\nhubble: {tls: {auto: {method: cronJob}}}\nrollOutCiliumPods: true\noperator: {rollOutPods: true}\n";
        let (own1, stamped1) = sums(base);
        let (own2, stamped2) = sums(&format!("{base}debug: {{enabled: true}}\n"));
        assert_eq!(stamped1, vec![own1.clone(), own1.clone()]);
        assert_eq!(stamped2, vec![own2.clone(), own2.clone()]);
        assert_ne!(own1, own2);
    }

    fn render_with(version: &str, user: &str) -> Result<Option<Value>, RenderError> {
        with_release(version, user, "1.35.0", cilium_config)
    }

    fn data(version: &str, user: &str) -> Value {
        render_with(version, user).unwrap().unwrap()["data"].clone()
    }

    #[test]
    fn extra_config_overrides_and_keeps_types() {
        let d = data("1.18.0", "extraConfig: {debug: \"yes\", num: 1}\n");
        assert_eq!(d["debug"], json!("yes"));
        assert_eq!(d["num"], json!(1.0));
        assert_eq!(d["enable-ipv4"], json!("true"));
    }

    #[test]
    fn patch_gated_keys() {
        let user = "bgpControlPlane: {enabled: true}\n";
        assert!(data("1.18.1", user)
            .get("enable-bgp-legacy-origin-attribute")
            .is_none());
        assert_eq!(
            data("1.18.2", user)["enable-bgp-legacy-origin-attribute"],
            json!("false")
        );
        assert!(data("1.18.3", "").get("http-stream-idle-timeout").is_none());
        assert!(data("1.18.4", "").get("http-stream-idle-timeout").is_some());
    }

    #[test]
    fn chart_failures_become_value_errors() {
        for (user, path) in [
            ("kubeProxyReplacement: strict\n", "kubeProxyReplacement"),
            ("gke: {enabled: true}\nroutingMode: tunnel\n", "routingMode"),
            (
                "operator: {setNodeTaints: true, removeNodeTaints: false}\n",
                "operator.setNodeTaints",
            ),
            ("bpf: {monitorInterval: 5x}\n", "bpf.monitorInterval"),
            ("upgradeCompatibility: soon\n", "upgradeCompatibility"),
        ] {
            match render_with("1.18.12", user) {
                Err(RenderError::Value { path: p, .. }) => assert_eq!(p, path, "{user}"),
                other => panic!("{user}: {other:?}"),
            }
        }
    }

    #[test]
    fn multi_pool_and_folded_lists() {
        let d = data(
            "1.18.12",
            "ipam: {mode: multi-pool, operator: {autoCreateCiliumPodIPPools: {b: {ipv4: {cidrs: [10.1.0.0/16, 10.2.0.0/16], maskSize: 24}}, a: {ipv6: {cidrs: [\"fd00::/104\"]}}}}}\nprometheus: {enabled: true, metrics: [\"+a\", \"-b\"]}\n",
        );
        assert_eq!(
            d["auto-create-cilium-pod-ip-pools"],
            json!("a=ipv6-cidrs:fd00::/104;ipv6-mask-size:<nil>,b=ipv4-cidrs:10.1.0.0/16,10.2.0.0/16;ipv4-mask-size:24")
        );
        assert_eq!(d["metrics"], json!("+a -b"));
    }

    #[test]
    fn unmanaged_pod_watcher_interval_per_release() {
        let interval =
            |v: &str, user: &str| data(v, user)["unmanaged-pod-watcher-interval"].clone();
        assert_eq!(interval("1.18.12", ""), json!("15"));
        assert_eq!(interval("1.19.0", ""), json!("15s"));
        let text = "operator: {unmanagedPodWatcher: {intervalSeconds: \"20\"}}\n";
        assert_eq!(interval("1.19.1", text), json!("20"));
        assert_eq!(interval("1.19.2", text), json!("20s"));
    }

    #[test]
    fn tunnel_big_tcp_lived_in_1_19_0_to_1_19_2() {
        let has_key = |v: &str| data(v, "").get("enable-tunnel-big-tcp").is_some();
        assert!(!has_key("1.18.12"));
        assert!(has_key("1.19.2"));
        assert!(!has_key("1.19.3"));
    }

    #[test]
    fn strict_mode_directions() {
        let user = "encryption: {strictMode: {enabled: true, cidr: 10.0.0.0/8, egress: {enabled: true, cidr: 10.1.0.0/16}}}\n";
        assert_eq!(
            data("1.18.12", user)["encryption-strict-mode-cidr"],
            json!("10.0.0.0/8")
        );
        // The egress settings are written after the deprecated ones and win.
        assert_eq!(
            data("1.19.6", user)["encryption-strict-egress-cidr"],
            json!("10.1.0.0/16")
        );
        let legacy_only = "encryption: {strictMode: {enabled: true, cidr: 10.0.0.0/8}}\n";
        assert_eq!(
            data("1.19.6", legacy_only)["encryption-strict-egress-cidr"],
            json!("10.0.0.0/8")
        );
        assert!(data("1.20.0", legacy_only)
            .get("encryption-strict-egress-cidr")
            .is_none());
    }

    #[test]
    fn envoy_xds_mode_follows_upgrade_compatibility() {
        assert_eq!(data("1.20.0", "")["envoy-xds-mode"], json!("ads"));
        assert!(data("1.20.0", "upgradeCompatibility: \"1.19\"\n")
            .get("envoy-xds-mode")
            .is_none());
        assert!(data("1.19.6", "").get("envoy-xds-mode").is_none());
    }

    #[test]
    fn semver_forms() {
        assert_eq!(super::super::common::parse_semver("1.16"), Some((1, 16)));
        assert_eq!(
            super::super::common::parse_semver("v1.17.3+build.1"),
            Some((1, 17))
        );
        assert_eq!(
            super::super::common::parse_semver("1.16.0-rc.1"),
            Some((0, 0))
        );
        assert_eq!(super::super::common::parse_semver("1..2"), None);
        assert_eq!(super::super::common::parse_semver("latest"), None);
    }

    #[test]
    fn preflight_renders_no_config() {
        assert!(render_with("1.18.0", "preflight: {enabled: true}\n")
            .unwrap()
            .is_none());
    }
}
