//! The few Cilium facts cilium-cmp needs besides the chart's templates, which it evaluates
//! itself: what `diff`, the upgrade notes and admission's messages must name because no render
//! shows it. Each cites the template it comes from; the templates stay the authority for what is
//! rendered.

use crate::versions::CiliumVersion;

/// The `encryption.type` words the chart turns into a mechanism (its `enable-TYPE` key in
/// `cilium-configmap.yaml`), with the release that added each: `ztunnel` in 1.19.0. For the
/// message of a refused word only; whether a word works is read from the render.
const ENCRYPTION_TYPES: [(&str, (u32, u32)); 3] = [
    ("ipsec", (1, 0)),
    ("wireguard", (1, 0)),
    ("ztunnel", (1, 19)),
];

/// The encryption words release `cilium` knows, as its chart writes them.
pub fn encryption_types(cilium: CiliumVersion) -> Vec<&'static str> {
    ENCRYPTION_TYPES
        .iter()
        .filter(|(_, since)| (cilium.major, cilium.minor) >= *since)
        .map(|(word, _)| *word)
        .collect()
}

/// A default the chart chooses by `upgradeCompatibility`: new installations get the new
/// behaviour, an older `upgradeCompatibility` keeps the old one (the chart compares it with
/// `semverCompare ">=MAJOR.MINOR"` in `_helpers.tpl`). `cilium-cmp diff` names the gate when an
/// upgrade crosses it.
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

/// `envoy.xdsMode` unset: the aggregated xDS stream from 1.20 (chart 1.20.0, `_helpers.tpl`,
/// the helper that prints `envoy-xds-mode` for `cilium-configmap.yaml`).
pub const ENVOY_XDS_ADS: CompatDefault = CompatDefault {
    since: (1, 20),
    value: "envoy.xdsMode",
    new_install: "cilium-config gets envoy-xds-mode: ads (the agent and Envoy switch to the aggregated xDS stream)",
    kept: "envoy-xds-mode stays out of cilium-config and the agent keeps its split xDS mode",
};

/// The gates a supported upgrade can cross. Older ones (1.8's probes, 1.14's kube-proxy
/// replacement) are in effect for every supported release.
pub const COMPAT_DEFAULTS: &[CompatDefault] = &[ENVOY_XDS_ADS];
