//! The values Cilium's chart renamed or removed between releases, with the releases that no
//! longer have each (`known_keys` names them, `fix-values --apply-renames` moves them). The
//! templates decide what a value does; this is what a person upgrading needs told.
//!
//! An entry lists, per minor line, the span of patch releases without the value, and then says
//! what every minor newer than the listed ones does (`later: on` or `later: off`); nothing is
//! inherited silently. A span reads like a Rust range over one minor line:
//!
//! - `"1.19.3.."`: from 1.19.3 to the end of the 1.19 line;
//! - `"1.19.0..1.19.4"`: from 1.19.0 up to, not including, 1.19.4 (the release that undid it).
//!
//! A release of a listed minor is without the value when its patch is inside that minor's span; a
//! release of a minor newer than every listed one is without it when the entry says `later: on`; a
//! release of a minor older than every listed one always has it. Listed minors leave no gap, so
//! no minor falls between two spans. A value removed in 1.18.9 and 1.19.3 for good is
//! `["1.18.9..", "1.19.3.."], later: on`; one gone from 1.19.0 until 1.19.3 brought it back,
//! and there since, is `["1.19.0..1.19.3"], later: off`.

use crate::versions::CiliumVersion;

/// A value a release renamed or removed, with what the newer chart offers instead (from the
/// charts' values.yaml). `gone` and `later` say which releases no longer have it, read like a
/// span (see the module comment); a value a render is refused for there is explained
/// by `hint` (`known_keys`).
pub struct ValueChange {
    /// The dotted value path as the older charts wrote it.
    pub path: &'static str,
    /// The `MAJOR.MINOR` lines that no longer have it.
    pub gone: &'static [&'static str],
    /// Whether every line after the last of `gone` lacks it too.
    pub later: bool,
    /// The new path when the value only moved, keeping its meaning: `fix-values
    /// --apply-renames` carries the value over as written.
    pub moved_to: Option<&'static str>,
    /// What to write instead, shown with a refusal of the old value.
    pub hint: &'static str,
}

impl ValueChange {
    /// Whether `version` no longer has the value.
    pub fn gone_in(&self, version: CiliumVersion) -> bool {
        within(self.gone, self.later, version)
    }

    /// The first release without the value (the start of its first span).
    pub fn first_release_without(&self) -> &'static str {
        let first = self.gone.first().copied().unwrap_or_default();
        first.split_once("..").map_or(first, |(from, _)| from)
    }
}

/// The renamed and removed values, by release. 1.19 lists both `clustermesh.enableMCSAPISupport`
/// and `clustermesh.mcsapi.enabled`, 1.20 only the latter; 1.20 moved `encryption.strictMode`'s
/// keys under `egress`: those are moves.
pub const VALUES: &[ValueChange] = &[
    // ---- 1.19 ----
    removed(
        "customCalls",
        &["1.19.0.."],
        true,
        "removed in 1.19 (no replacement)",
    ),
    removed(
        "nodePort.enabled",
        &["1.19.0.."],
        true,
        "removed in 1.19: the NodePort service implementation follows kubeProxyReplacement",
    ),
    removed(
        "svcSourceRangeCheck",
        &["1.19.0.."],
        true,
        "removed in 1.19 (service source ranges are always checked)",
    ),
    removed(
        "l2podAnnouncements.interface",
        &["1.19.5.."],
        true,
        "1.19.5 replaced it by l2podAnnouncements.interfacePattern (a regular expression)",
    ),
    // ---- 1.20 ----
    moved(
        "clustermesh.enableMCSAPISupport",
        "clustermesh.mcsapi.enabled",
        &["1.20.0.."],
        true,
        "1.20 renamed it to clustermesh.mcsapi.enabled",
    ),
    moved(
        "encryption.strictMode.enabled",
        "encryption.strictMode.egress.enabled",
        &["1.20.0.."],
        true,
        "1.20 renamed it to encryption.strictMode.egress.enabled",
    ),
    moved(
        "encryption.strictMode.cidr",
        "encryption.strictMode.egress.cidr",
        &["1.20.0.."],
        true,
        "1.20 renamed it to encryption.strictMode.egress.cidr",
    ),
    moved(
        "encryption.strictMode.allowRemoteNodeIdentities",
        "encryption.strictMode.egress.allowRemoteNodeIdentities",
        &["1.20.0.."],
        true,
        "1.20 renamed it to encryption.strictMode.egress.allowRemoteNodeIdentities",
    ),
    removed(
        "encryption.ipsec.encryptedOverlay",
        &["1.20.0.."],
        true,
        "removed in 1.20 (no replacement)",
    ),
    removed(
        "hubble.redact.kafka",
        &["1.20.0.."],
        true,
        "removed in 1.20 (Kafka API key redaction is gone)",
    ),
    removed(
        "preflight.tofqdnsPreCache",
        &["1.20.0.."],
        true,
        "removed in 1.20; the agent's DNS cache preload file is dnsProxy.preCache",
    ),
    removed(
        "hubble.ui.backend.livenessProbe",
        &["1.20.0.."],
        true,
        "removed in 1.20: the backend's probes are always on",
    ),
    removed(
        "hubble.ui.backend.readinessProbe",
        &["1.20.0.."],
        true,
        "removed in 1.20: the backend's probes are always on",
    ),
    removed(
        "clustermesh.apiserver.tls.server",
        &["1.20.0.."],
        true,
        PROVIDED_TLS_GONE,
    ),
    removed(
        "clustermesh.apiserver.tls.admin",
        &["1.20.0.."],
        true,
        PROVIDED_TLS_GONE,
    ),
    removed(
        "clustermesh.apiserver.tls.remote",
        &["1.20.0.."],
        true,
        PROVIDED_TLS_GONE,
    ),
    removed(
        "clustermesh.apiserver.tls.enableSecrets",
        &["1.20.0.."],
        true,
        PROVIDED_TLS_GONE,
    ),
];

const PROVIDED_TLS_GONE: &str = "removed in 1.20: clustermesh-apiserver certificates are no longer provided by values; use clustermesh.apiserver.tls.auto";

const fn removed(
    path: &'static str,
    gone: &'static [&'static str],
    later: bool,
    hint: &'static str,
) -> ValueChange {
    ValueChange {
        path,
        gone,
        later,
        moved_to: None,
        hint,
    }
}

const fn moved(
    path: &'static str,
    to: &'static str,
    gone: &'static [&'static str],
    later: bool,
    hint: &'static str,
) -> ValueChange {
    ValueChange {
        path,
        gone,
        later,
        moved_to: Some(to),
        hint,
    }
}

/// Whether `version` is in `spans` or, past every listed minor, whether `later` says it is.
fn within(spans: &[&str], later: bool, version: CiliumVersion) -> bool {
    let mut newest_listed = None;
    for text in spans {
        let Some(span) = Span::parse(text) else {
            // The table test refuses malformed spans; a release never has such a change.
            return false;
        };
        if span.minor == version.minor {
            return span.contains(version.patch);
        }
        newest_listed = newest_listed.max(Some(span.minor));
    }
    later && newest_listed.is_some_and(|minor| minor < version.minor)
}

/// The patch releases of one minor line that have a change.
#[derive(Debug, PartialEq, Eq)]
struct Span {
    minor: u32,
    from: u32,
    /// The first patch that no longer has it; `None` to the end of the line.
    until: Option<u32>,
}

impl Span {
    fn parse(text: &str) -> Option<Span> {
        let (from, until) = text.split_once("..")?;
        let (minor, from) = minor_patch(from)?;
        let until = match until {
            "" => None,
            end => {
                let (end_minor, end) = minor_patch(end)?;
                if end_minor != minor || end <= from {
                    return None;
                }
                Some(end)
            }
        };
        Some(Span { minor, from, until })
    }

    fn contains(&self, patch: u32) -> bool {
        patch >= self.from && self.until.is_none_or(|end| patch < end)
    }
}

fn minor_patch(version: &str) -> Option<(u32, u32)> {
    let mut parts = version.split('.');
    if parts.next()? != "1" {
        return None;
    }
    let minor = parts.next()?.parse().ok()?;
    let patch = parts.next()?.parse().ok()?;
    parts.next().is_none().then_some((minor, patch))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(text: &str) -> CiliumVersion {
        crate::versions::parse(text).unwrap()
    }

    /// A history as the table writes it: spans per minor line, and what newer minors do.
    struct History(&'static [&'static str], bool);

    fn entry(spans: &'static [&'static str], later: bool) -> History {
        History(spans, later)
    }

    fn holds(h: &History, version: CiliumVersion) -> bool {
        within(h.0, h.1, version)
    }

    #[test]
    fn a_backport_is_on_only_from_its_release_on_each_line() {
        let e = entry(&["1.18.9..", "1.19.3.."], true);
        assert!(!holds(&e, v("1.18.8")));
        assert!(holds(&e, v("1.18.9")));
        assert!(!holds(&e, v("1.19.2")));
        assert!(holds(&e, v("1.19.3")));
        assert!(holds(&e, v("1.20.0")));
    }

    #[test]
    fn a_change_reaches_newer_minors_only_when_it_says_so() {
        assert!(holds(&entry(&["1.18.2.."], true), v("1.19.0")));
        assert!(!holds(&entry(&["1.18.2.."], false), v("1.19.0")));
        assert!(holds(&entry(&["1.18.2.."], false), v("1.18.12")));
        assert!(!holds(&entry(&["1.19.3.."], true), v("1.18.12")));
        assert!(!holds(&entry(&["1.20.0.."], true), v("1.19.6")));
    }

    #[test]
    fn a_span_can_end_inside_its_line() {
        let e = entry(&["1.19.0..1.19.3"], false);
        assert!(!holds(&e, v("1.18.12")));
        assert!(holds(&e, v("1.19.0")));
        assert!(holds(&e, v("1.19.2")));
        assert!(!holds(&e, v("1.19.3")));
        assert!(!holds(&e, v("1.20.0")));
        // Off, back on, and on for newer minors.
        let e = entry(&["1.19.0..1.19.4"], true);
        assert!(holds(&e, v("1.19.3")));
        assert!(!holds(&e, v("1.19.4")));
        assert!(holds(&e, v("1.20.0")));
    }

    #[test]
    fn malformed_spans_are_refused() {
        for bad in [
            "1.19.0",
            "1.19..",
            "1.19.3..1.19.3",
            "1.19.3..1.19.1",
            "1.19.0..1.20.0",
            "2.0.0..",
            "1.19.0.1..",
        ] {
            assert_eq!(Span::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn the_value_table_is_well_formed() {
        for value in VALUES {
            let spans: Vec<Span> = value
                .gone
                .iter()
                .map(|s| Span::parse(s).unwrap_or_else(|| panic!("{}: bad span {s}", value.path)))
                .collect();
            assert!(!spans.is_empty(), "{}", value.path);
            assert!(spans.windows(2).all(|w| w[1].minor == w[0].minor + 1));
            let first = crate::versions::parse(value.first_release_without()).unwrap();
            assert!(value.gone_in(first), "{}", value.path);
            if let Some(to) = value.moved_to {
                assert!(
                    value.hint.contains(to),
                    "{}: the hint names {to}",
                    value.path
                );
            }
        }
        let l2 = VALUES
            .iter()
            .find(|value| value.path == "l2podAnnouncements.interface")
            .unwrap();
        assert!(!l2.gone_in(v("1.18.12")) && !l2.gone_in(v("1.19.4")));
        assert!(l2.gone_in(v("1.19.5")) && l2.gone_in(v("1.20.0")));
    }
}
