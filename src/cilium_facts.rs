//! The few Cilium facts cilium-cmp needs besides the chart's templates, which evaluates them
//! itself: what `diff` and the upgrade notes must name because no render shows it. Each cites
//! the template it comes from; the templates stay the authority for what is rendered.

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
