//! Values Helm renders but the cluster would refuse later (the API server at apply time, Cilium's
//! agent at start): refused before they reach a cluster, naming the value and what is accepted,
//! while every value Cilium accepts, and every value with no effect, still renders.

use crate::support::charts;
use crate::support::harness;

pub fn tests() -> Vec<harness::Trial> {
    harness::group(
        file!(),
        vec![
            harness::test(
                "the_refusal_lists_each_violation_with_its_values",
                the_refusal_lists_each_violation_with_its_values,
            )
            .shared("charts"),
            harness::test(
                "unknown_modes_are_refused_with_what_cilium_accepts",
                unknown_modes_are_refused_with_what_cilium_accepts,
            )
            .shared("charts"),
            harness::test(
                "every_mode_cilium_accepts_renders",
                every_mode_cilium_accepts_renders,
            )
            .shared("charts"),
            harness::test(
                "an_unknown_encryption_type_is_refused_per_release",
                an_unknown_encryption_type_is_refused_per_release,
            )
            .shared("charts"),
            harness::test(
                "negative_replicas_are_refused_only_where_they_are_rendered",
                negative_replicas_are_refused_only_where_they_are_rendered,
            )
            .shared("charts"),
            harness::test(
                "labels_and_annotations_that_are_not_text_are_refused",
                labels_and_annotations_that_are_not_text_are_refused,
            )
            .shared("charts"),
            harness::test(
                "a_config_map_beyond_one_mebibyte_is_refused",
                a_config_map_beyond_one_mebibyte_is_refused,
            )
            .shared("charts"),
            harness::test(
                "messages_quote_user_keys_boundedly",
                messages_quote_user_keys_boundedly,
            )
            .shared("charts"),
        ],
    )
}

use std::path::PathBuf;
use std::process::{Command, Output};

use crate::support::scratch;
use scratch::Scratch;

/// Renders `values` (after a line that spares the render the chart archive).
fn render(version: &str, values: &str) -> Output {
    let s = Scratch::new("admission");
    let file = s.write(
        "values.yaml",
        &format!("cni:\n  iptablesRemoveAWSRules: false\n{values}"),
    );
    Command::new(PathBuf::from(env!("CARGO_BIN_EXE_cilium-cmp")))
        .env("CILIUM_CMP_CHART_DIR", charts::dir())
        .args(["render", "--cilium-version", version, "-f"])
        .arg(&file)
        .output()
        .expect("runs")
}

fn refused(version: &str, values: &str, needles: &[&str]) {
    let out = render(version, values);
    let values: String = values.chars().take(200).collect();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{values}: {err}");
    assert!(out.stdout.is_empty(), "{values}: stdout not empty");
    assert!(
        err.contains("Kubernetes or Cilium would refuse this render later"),
        "{values}: {err}"
    );
    for n in needles {
        assert!(err.contains(n), "{values}: stderr lacks {n:?}: {err}");
    }
}

/// The library's refusal is typed: one violation per finding, naming the values at fault and,
/// for a finding about an object, the object.
fn the_refusal_lists_each_violation_with_its_values() {
    let mut inputs = charts::with_archive(cilium_cmp_render::render::Inputs::new(
        "1.19.6".parse().unwrap(),
    ));
    inputs.values_files.push((
        "values.yaml".into(),
        "cni:\n  iptablesRemoveAWSRules: false\nroutingMode: natve\noperator:\n  replicas: -1\n"
            .into(),
    ));
    let found = match cilium_cmp_render::render::render(&inputs) {
        Err(cilium_cmp_render::error::RenderError::WouldBeRejected(found)) => found,
        Err(other) => panic!("refused for another reason: {other}"),
        Ok(_) => panic!("rendered values the cluster refuses"),
    };
    let found: Vec<_> = found.iter().collect();
    assert_eq!(found.len(), 2, "{found:?}");
    assert_eq!(found[0].object, None);
    assert_eq!(found[0].paths().collect::<Vec<_>>(), ["routingMode"]);
    assert_eq!(found[0].values[0].origin, "values.yaml line 3");
    assert!(found[0].reason.contains("tunnel, native"), "{found:?}");
    assert_eq!(
        found[1].object.as_deref(),
        Some("Deployment cilium-operator")
    );
    assert_eq!(found[1].paths().collect::<Vec<_>>(), ["operator.replicas"]);
}

fn renders(version: &str, values: &str) {
    let out = render(version, values);
    let values: String = values.chars().take(200).collect();
    assert!(
        out.status.success(),
        "{values}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("kind: DaemonSet"));
}

fn unknown_modes_are_refused_with_what_cilium_accepts() {
    for version in ["1.18.12", "1.19.6", "1.20.0"] {
        refused(
            version,
            "routingMode: natve\n",
            &[
                "routingMode (set in",
                "values.yaml line 3",
                "routing-mode would be \"natve\"",
                "tunnel, native",
            ],
        );
        refused(
            version,
            "tunnelProtocol: gre\n",
            &["tunnelProtocol (set in", "vxlan, geneve"],
        );
        refused(
            version,
            "ipam:\n  mode: clusterpool\n",
            &["ipam.mode (set in", "values.yaml line 4", "cluster-pool"],
        );
        refused(
            version,
            "extraConfig:\n  routing-mode: tunel\n",
            &["extraConfig.routing-mode (set in"],
        );
        // All findings in one run.
        refused(
            version,
            "routingMode: a\ntunnelProtocol: b\n",
            &["routingMode (set in", "tunnelProtocol (set in"],
        );
    }
}

fn every_mode_cilium_accepts_renders() {
    for version in ["1.18.12", "1.19.6", "1.20.0"] {
        renders(version, "routingMode: tunnel\ntunnelProtocol: geneve\n");
        renders(
            version,
            "routingMode: native\nipv4NativeRoutingCIDR: 10.0.0.0/8\ntunnelProtocol: vxlan\n",
        );
        for mode in [
            "kubernetes",
            "cluster-pool",
            "multi-pool",
            "crd",
            "delegated-plugin",
        ] {
            renders(version, &format!("ipam:\n  mode: {mode}\n"));
        }
        renders(version, "encryption:\n  enabled: true\n  type: wireguard\n");
        renders(version, "encryption:\n  enabled: true\n  type: ipsec\n");
        // Without encryption the type has no effect, so any word passes.
        renders(version, "encryption:\n  type: wirguard\n");
    }
}

fn an_unknown_encryption_type_is_refused_per_release() {
    refused(
        "1.20.0",
        "encryption:\n  enabled: true\n  type: wirguard\n",
        &[
            "encryption.type (set in",
            "ipsec, wireguard, ztunnel",
            "unencrypted",
        ],
    );
    // ztunnel encryption arrived in 1.19.0.
    refused(
        "1.18.12",
        "encryption:\n  enabled: true\n  type: ztunnel\n",
        &["Cilium 1.18.12 knows (ipsec, wireguard)"],
    );
    renders("1.19.0", "encryption:\n  enabled: true\n  type: ztunnel\n");
}

fn negative_replicas_are_refused_only_where_they_are_rendered() {
    refused(
        "1.20.0",
        "operator:\n  replicas: -1\n",
        &[
            "Deployment cilium-operator",
            "operator.replicas, set in",
            "negative replica count",
        ],
    );
    // The relay is off: its replica count reaches no object.
    renders("1.20.0", "hubble:\n  relay:\n    replicas: -2\n");
}

/// The chart's schema already refuses most lists where a mapping belongs (`nodeSelector: []`);
/// a number or a boolean as a label or annotation it lets through, Kubernetes does not.
fn labels_and_annotations_that_are_not_text_are_refused() {
    refused(
        "1.20.0",
        "podAnnotations:\n  prometheus.io/port: 9962\noperator:\n  podLabels:\n    tier: 1\n",
        &[
            "DaemonSet cilium (from podAnnotations.prometheus.io/port, set in",
            "spec.template.metadata.annotations.prometheus.io/port would not be text",
            "Deployment cilium-operator (from operator.podLabels.tier, set in",
        ],
    );
    renders(
        "1.20.0",
        "podAnnotations:\n  prometheus.io/port: \"9962\"\n",
    );
}

fn a_config_map_beyond_one_mebibyte_is_refused() {
    let big = "x".repeat(1_040_000);
    refused(
        "1.20.0",
        &format!(
            "extraConfig:\n  big: {big}\n  more: {}\n",
            "y".repeat(8_000)
        ),
        &[
            "ConfigMap cilium-config",
            "at most 1048576 bytes (1 MiB)",
            "\"big\" (1040000 bytes)",
        ],
    );
}

/// A hostile key cannot flood the message (Argo CD shows stderr in its UI).
fn messages_quote_user_keys_boundedly() {
    let key = "k".repeat(1_000);
    let out = render("1.20.0", &format!("podAnnotations:\n  {key}: 1\n"));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1));
    assert!(err.contains("would not be text"), "{:.300}", err);
    assert!(err.len() < 2_000, "{} bytes of error", err.len());
}
