//! What moving a folder from one Cilium release to another asks of its values, found offline:
//! values the new release renamed or removed (the known-keys table), chart defaults that change
//! because the values do not set them, defaults the new chart changes only for new installations
//! (`upgradeCompatibility`), and what Cilium's upgrade guide asks to check
//! (<https://docs.cilium.io/en/stable/operations/upgrade/>: one minor release at a time, the latest
//! patch of the current release first, the pre-flight check, the release's upgrade notes).

use cilium_cmp_render::cilium_facts::COMPAT_DEFAULTS;
use serde_json::Value;

use super::consequences::{Consequence, Kind};
use cilium_cmp_render::values::Values;
use cilium_cmp_render::versions::{self, CiliumVersion};
use cilium_cmp_yaml::escape::Prose;

/// The URL of a release's upgrade notes (Cilium's documentation is versioned by minor).
pub fn upgrade_notes_url(to: CiliumVersion) -> String {
    format!(
        "https://docs.cilium.io/en/v{}.{}/operations/upgrade/#upgrade-notes",
        to.major, to.minor
    )
}

/// Default value paths that change every release without changing behaviour: the images of the
/// release itself.
fn is_release_image(path: &str) -> bool {
    path.split('.')
        .any(|p| p == "image" || p.ends_with("Image") || p == "digest" || p == "tag")
}

/// Leaves of a defaults tree (maps walked, anything else a leaf), as dotted paths.
fn leaves<'a>(v: &'a Value, prefix: &str, out: &mut Vec<(String, &'a Value)>) {
    match v {
        Value::Object(m) if !m.is_empty() => {
            for (k, child) in m {
                let p = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                leaves(child, &p, out);
            }
        }
        other => out.push((prefix.to_string(), other)),
    }
}

fn yaml_scalar(v: &Value) -> String {
    match v {
        Value::Number(n) => match n.as_f64() {
            Some(f) if f.fract() == 0.0 && f.abs() < 1e15 => format!("{}", f as i64),
            _ => n.to_string(),
        },
        Value::String(s) => serde_json::to_string(s).unwrap_or_default(),
        other => other.to_string(),
    }
}

/// Whether the user's values set `path` or any map above it to something that is not a map
/// (then the default below it does not apply either).
fn user_decides(values: &Values, path: &str) -> bool {
    if values.user_set(path) {
        return true;
    }
    let parts: Vec<&str> = path.split('.').collect();
    (1..parts.len()).any(|n| {
        let above = parts[..n].join(".");
        values.user_set(&above)
            && !cilium_cmp_render::values::lookup(values.user(), &above).is_object()
    })
}

/// Everything an upgrade from `from` to `to` asks of these values (`values`: the user's values
/// resolved over `to`'s defaults).
pub fn consequences(from: CiliumVersion, to: CiliumVersion, values: &Values) -> Vec<Consequence> {
    let mut out = Vec::new();
    // Renamed and removed values: the render refuses them until they are rewritten. Only those
    // the old release knew are the move's doing: a value neither release knows did nothing
    // before and does nothing after (a patch upgrade does not make it stop working).
    let unknown_before = cilium_cmp_render::known_keys::check(values, from);
    let unknown_before: std::collections::BTreeSet<Vec<String>> = unknown_before
        .values
        .iter()
        .map(|u| u.keys.clone())
        .chain(unknown_before.unlisted.iter().cloned())
        .collect();
    let known_before = |keys: &[String]| {
        // The old check names the topmost unknown key: a value below it was unknown too.
        !(1..=keys.len()).any(|n| unknown_before.contains(&keys[..n]))
    };
    for u in cilium_cmp_render::known_keys::check(values, to).values {
        if !known_before(&u.keys) {
            continue;
        }
        if let cilium_cmp_render::known_keys::Reason::OtherRelease { .. }
        | cilium_cmp_render::known_keys::Reason::Removed { .. } = u.reason
        {
            out.push(Consequence {
                kind: Kind::RenamedValue,
                subject: u.path.clone(),
                // known_keys' sentence names the user's key: a name whole.
                what: u.to_string().into(),
                why: Prose::new().words(&format!("Cilium {to}'s chart does not know it: the plugin refuses the folder until the value is rewritten, and Helm would ignore it silently")),
            });
        }
    }
    // Defaults that change under the user's feet.
    let old_defaults = versions::defaults(from);
    let new_defaults = versions::defaults(to);
    let mut new_leaves = Vec::new();
    leaves(&new_defaults, "", &mut new_leaves);
    for (path, new) in new_leaves {
        if path.is_empty() || is_release_image(&path) || user_decides(values, &path) {
            continue;
        }
        let old = cilium_cmp_render::values::lookup(&old_defaults, &path);
        if old.is_null() && !old_defaults_has(&old_defaults, &path) {
            continue;
        }
        if same(old, new) {
            continue;
        }
        out.push(Consequence {
            kind: Kind::DefaultChanged,
            subject: path.clone(),
            what: Prose::of_name(&yaml_scalar(old))
                .words(" → ")
                .name(&yaml_scalar(new)),
            why: Prose::new()
                .words(&format!("the values do not set it, so Cilium {to}'s default applies; to keep Cilium {from}'s, add "))
                .name(&format!("{path}: {}", yaml_scalar(old)))
                .words(" (as nested keys) to the values"),
        });
    }
    // Defaults the new chart keeps for older installations only.
    let compat_set = values.user_set("upgradeCompatibility");
    for gate in COMPAT_DEFAULTS {
        let (major, minor) = gate.since;
        let at = |v: CiliumVersion| (u64::from(v.major), u64::from(v.minor));
        let arrives = at(from) < gate.since && at(to) >= gate.since;
        if !arrives || compat_set || user_decides(values, gate.value) {
            continue;
        }
        out.push(Consequence {
            kind: Kind::UpgradeCompatibility,
            subject: gate.value.to_string(),
            // The gate's texts are the program's (cilium_facts::COMPAT_DEFAULTS).
            what: Prose::new().words(&format!("without upgradeCompatibility, {}", gate.new_install)),
            why: Prose::new().words(&format!("Cilium {major}.{minor}'s chart changes this default for new installations; `upgradeCompatibility: \"{}.{}\"` in the values keeps the old behaviour ({}), as does setting {} yourself", from.major, from.minor, gate.kept, gate.value)),
        });
    }
    out.extend(guide(from, to));
    out
}

fn old_defaults_has(defaults: &Value, path: &str) -> bool {
    let mut node = defaults;
    for k in path.split('.') {
        match node.get(k) {
            Some(n) => node = n,
            None => return false,
        }
    }
    true
}

fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        _ => a == b,
    }
}

/// What the upgrade guide asks that can be known without a cluster.
fn guide(from: CiliumVersion, to: CiliumVersion) -> Vec<Consequence> {
    let mut out = Vec::new();
    // Versions and the guide's words only: the program's own.
    let notes = |what: String, why: &str| Consequence {
        kind: Kind::UpgradeNotes,
        subject: format!("Cilium {from} → {to}"),
        what: Prose::new().words(&what),
        why: Prose::new().words(why),
    };
    let minors = i64::from(to.minor) - i64::from(from.minor);
    if to.major != from.major || minors.abs() > 1 {
        out.push(notes(
            format!("this skips a minor release ({}.{} to {}.{}): upgrade and roll back one minor release at a time", from.major, from.minor, to.major, to.minor),
            "Cilium tests only upgrades and rollbacks between consecutive minor releases (upgrade guide)",
        ));
    }
    if to < from {
        out.push(notes(
            format!(
                "a downgrade: read the rollback steps of Cilium {}.{}'s upgrade guide",
                from.major, from.minor
            ),
            "the rollback path is tested only between consecutive minor releases",
        ));
    }
    let latest_patch = versions::supported()
        .filter_map(|v| versions::parse(v).ok())
        .filter(|v| v.major == from.major && v.minor == from.minor)
        .max();
    if let Some(latest) = latest_patch {
        if latest > from && (to.major, to.minor) != (from.major, from.minor) {
            out.push(notes(
                format!("Cilium {from} is not the latest patch of {}.{} ({latest} is): upgrade to it first", from.major, from.minor),
                "the upgrade guide asks for the latest patch release of the current minor before a minor upgrade",
            ));
        }
    }
    out.push(notes(
        format!("read the upgrade notes before syncing: {}", upgrade_notes_url(to)),
        "each release lists required steps there; the guide also asks for its pre-flight check (pre-pulling the new images on every node) before the upgrade",
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(version: CiliumVersion, yaml: &str) -> Values {
        let layer = cilium_cmp_render::values::Layer::from_yaml("values.yaml", yaml).unwrap();
        Values::resolve(versions::defaults(version), vec![layer])
    }

    #[test]
    fn renamed_values_and_compatibility_gates_of_1_20() {
        let from = versions::parse("1.19.6").unwrap();
        let to = versions::parse("1.20.0").unwrap();
        let c = consequences(
            from,
            to,
            &values(to, "clustermesh:\n  enableMCSAPISupport: true\n"),
        );
        let renamed: Vec<&str> = c
            .iter()
            .filter(|c| c.kind == Kind::RenamedValue)
            .map(|c| c.subject.as_str())
            .collect();
        assert_eq!(renamed, ["clustermesh.enableMCSAPISupport"]);
        assert!(c
            .iter()
            .any(|c| c.kind == Kind::UpgradeCompatibility && c.subject == "envoy.xdsMode"));
        let kept = consequences(from, to, &values(to, "upgradeCompatibility: \"1.19\"\n"));
        assert!(!kept.iter().any(|c| c.kind == Kind::UpgradeCompatibility));
        assert!(c
            .iter()
            .any(|c| c.kind == Kind::UpgradeNotes
                && c.what.contains("https://docs.cilium.io/en/v1.20/")));
    }

    #[test]
    fn values_neither_release_knows_are_not_renamed_by_the_move() {
        // nodePort.enabled is gone from every 1.19 release: a patch upgrade within 1.19 changes
        // nothing for it, the move from 1.18 (which knew it) does.
        let yaml = "nodePort:\n  enabled: true\n";
        let renamed = |from: &str, to: &str| -> Vec<String> {
            let (from, to) = (versions::parse(from).unwrap(), versions::parse(to).unwrap());
            consequences(from, to, &values(to, yaml))
                .into_iter()
                .filter(|c| c.kind == Kind::RenamedValue)
                .map(|c| c.subject)
                .collect()
        };
        assert!(renamed("1.19.0", "1.19.6").is_empty());
        assert_eq!(renamed("1.18.12", "1.19.6"), ["nodePort.enabled"]);
    }

    #[test]
    fn changed_defaults_are_named_unless_the_values_set_them() {
        let from = versions::parse("1.19.6").unwrap();
        let to = versions::parse("1.20.0").unwrap();
        let path = "clustermesh.apiserver.tls.auto.certValidityDuration";
        let c = consequences(from, to, &values(to, "{}\n"));
        let d = c
            .iter()
            .find(|c| c.kind == Kind::DefaultChanged && c.subject == path);
        let d = d.expect("the validity default changed in 1.20");
        assert_eq!(d.what, "1095 → 365");
        assert!(d.why.contains(&format!("add {path}: 1095 (")), "{}", d.why);
        // In a comment the value to write is a code span, as any name is.
        assert!(
            d.why.markdown().contains(&format!("`{path}: 1095`")),
            "{}",
            d.why.markdown()
        );
        let set = values(
            to,
            "clustermesh:\n  apiserver:\n    tls:\n      auto:\n        certValidityDuration: 30\n",
        );
        assert!(!consequences(from, to, &set)
            .iter()
            .any(|c| c.subject == path));
        assert!(!c
            .iter()
            .any(|c| c.kind == Kind::DefaultChanged && is_release_image(&c.subject)));
    }

    #[test]
    fn skipping_a_minor_and_old_patches_are_named() {
        let from = versions::parse("1.18.0").unwrap();
        let to = versions::parse("1.20.0").unwrap();
        let c = guide(from, to);
        assert!(c[0].what.contains("skips a minor"), "{:?}", c);
        assert!(c.iter().any(|c| c.what.contains("1.18.12")));
    }
}
