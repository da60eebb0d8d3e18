//! Configuration that running pods read only when they start.
//!
//! A changed ConfigMap reaches a program in one of two ways, and neither restarts anything:
//!
//! - as environment variables (`env[].valueFrom.configMapKeyRef`, `envFrom[].configMapRef`): the
//!   kubelet sets them when the container starts and never updates them
//!   (<https://kubernetes.io/docs/concepts/configuration/configmap/>, "ConfigMaps consumed as
//!   environment variables are not updated automatically and require a pod restart");
//! - as files of a volume: the kubelet refreshes the files in running pods (same page, "Mounted
//!   ConfigMaps are updated automatically"; never through a `subPath` mount), but whether the
//!   program reads them again is the program's business. Cilium's agent and operator read
//!   `cilium-config` once, at start (<https://docs.cilium.io/en/stable/configuration/>, "Making
//!   Changes": "pods must be deleted manually to pick up any changes"; the drift checker page,
//!   <https://docs.cilium.io/en/stable/configuration/configmap-drift-detection/>, calls the active
//!   settings "the values the agent was started with"); Envoy reads its bootstrap, Hubble relay
//!   its config file and nginx its configuration at start as well (cilium/cilium#24772 is the
//!   trap this module names).
//!
//! The chart's answer is a checksum of the ConfigMap in the pod template's annotations, turned on
//! by one value per workload (`rollOutCiliumPods`, `operator.rollOutPods`, ...): a changed
//! ConfigMap then changes the template and the workload rolls. [`readers`] says, for a ConfigMap
//! of the render, which workloads read it at start, whether the render rolls them, and which value
//! would. `adopt-check` and `diff` share it.

use serde_json::Value;

use super::live::{Object, ObjectKey};

/// How a workload's pods read the ConfigMap.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Reading {
    /// Environment variables, set once when the container starts.
    Environment,
    /// Files of a volume, which the program named in [`ROLLED_BY_CHECKSUM`] reads at start.
    Files,
}

/// When the pods see a change of the ConfigMap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TakesEffect {
    /// The render's pod template carries the ConfigMap's checksum: a change rolls the pods.
    RolledByChecksum,
    /// Only when each pod restarts for another reason (on a DaemonSet: node by node, whenever
    /// that happens).
    AtNextRestart,
    /// Mounted as files the kubelet refreshes; nothing here says whether the program reads them
    /// again, so nothing is promised.
    Unknown,
}

/// One workload that reads a ConfigMap.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reader {
    /// The workload (a DaemonSet, Deployment, ...) whose pod template reads the ConfigMap.
    pub workload: ObjectKey,
    /// How its pods read it.
    pub reading: Reading,
    /// When its pods see a change.
    pub takes_effect: TakesEffect,
    /// The chart value that puts the ConfigMap's checksum into this workload's pod template,
    /// when the chart has one.
    pub roll_value: Option<&'static str>,
}

impl Reader {
    /// What a change of the ConfigMap does to this workload, in one sentence for people.
    pub fn consequence(&self, configmap: &str) -> String {
        match (self.takes_effect, self.roll_value) {
            (TakesEffect::RolledByChecksum, Some(v)) => format!(
                "{} rolls: its pod template carries the checksum of {configmap} ({v} is on)",
                self.workload
            ),
            (TakesEffect::RolledByChecksum, None) => format!(
                "{} rolls: its pod template carries the checksum of {configmap}",
                self.workload
            ),
            (TakesEffect::AtNextRestart, Some(v)) => format!(
                "{} reads {configmap} only at start and nothing restarts it: the change takes \
                 effect in each pod when it next restarts for another reason (possibly days \
                 later, on one node and not the others); set {v}: true to roll it with the change, \
                 or restart it yourself",
                self.workload
            ),
            (TakesEffect::AtNextRestart, None) => format!(
                "{} reads {configmap} only at start ({}) and nothing restarts it: the change takes \
                 effect in each pod when it next restarts; restart it yourself",
                self.workload,
                match self.reading {
                    Reading::Environment => "environment variables",
                    Reading::Files => "its configuration file",
                }
            ),
            (TakesEffect::Unknown, _) => format!(
                "{} mounts {configmap}; the kubelet updates the files in running pods, whether the \
                 program reads them again is not known here",
                self.workload
            ),
        }
    }
}

/// The pairs the chart can roll through a checksum annotation: ConfigMap, workload kind and
/// name, the annotation, the value that turns it on (chart templates `cilium-agent/daemonset.yaml`,
/// `cilium-operator/deployment.yaml`, `cilium-envoy/daemonset.yaml`,
/// `hubble-relay/deployment.yaml`, `hubble-ui/deployment.yaml`,
/// `standalone-dns-proxy/daemonset.yaml` of 1.18–1.20). These programs read the file at start.
pub const ROLLED_BY_CHECKSUM: &[(&str, &str, &str, &str, &str)] = &[
    (
        "cilium-config",
        "DaemonSet",
        "cilium",
        "cilium.io/cilium-configmap-checksum",
        "rollOutCiliumPods",
    ),
    (
        "cilium-config",
        "Deployment",
        "cilium-operator",
        "cilium.io/cilium-configmap-checksum",
        "operator.rollOutPods",
    ),
    (
        "cilium-envoy-config",
        "DaemonSet",
        "cilium-envoy",
        "cilium.io/cilium-envoy-configmap-checksum",
        "envoy.rollOutPods",
    ),
    (
        "hubble-relay-config",
        "Deployment",
        "hubble-relay",
        "cilium.io/hubble-relay-configmap-checksum",
        "hubble.relay.rollOutPods",
    ),
    (
        "hubble-ui-nginx",
        "Deployment",
        "hubble-ui",
        "cilium.io/hubble-ui-nginx-configmap-checksum",
        "hubble.ui.rollOutPods",
    ),
    (
        "standalone-dns-proxy-config",
        "DaemonSet",
        "standalone-dns-proxy",
        "cilium.io/standalone-dns-proxy-configmap-checksum",
        "standaloneDnsProxy.rollOutPods",
    ),
];

/// The checksum annotation and roll value the chart has for this workload and ConfigMap.
pub fn checksum_of(
    configmap: &str,
    kind: &str,
    workload: &str,
) -> Option<(&'static str, &'static str)> {
    ROLLED_BY_CHECKSUM
        .iter()
        .find(|(c, k, w, _, _)| *c == configmap && *k == kind && *w == workload)
        .map(|(_, _, _, a, v)| (*a, *v))
}

/// Every workload of `render` whose pods read the ConfigMap `configmap` (kind ConfigMap, its
/// namespace and name), with when they see a change. Workloads in another namespace cannot
/// reference it and are skipped.
pub fn readers<'a>(
    configmap: &ObjectKey,
    render: impl IntoIterator<Item = &'a Object>,
) -> Vec<Reader> {
    let mut out = Vec::new();
    for o in render {
        let Some(template) = super::rules::pod_template(&o.key.kind) else {
            continue;
        };
        if o.key.namespace != configmap.namespace {
            continue;
        }
        let mut at = &o.value;
        for k in template {
            match at.get(*k) {
                Some(v) => at = v,
                None => break,
            }
        }
        let Some(pod) = at.get("spec") else {
            continue;
        };
        let Some(reading) = reading_of(pod, &configmap.name) else {
            continue;
        };
        let chart = checksum_of(&configmap.name, &o.key.kind, &o.key.name);
        let annotated = chart.is_some_and(|(a, _)| {
            at.pointer("/metadata/annotations")
                .and_then(|m| m.get(a))
                .is_some()
        });
        let takes_effect = if annotated {
            TakesEffect::RolledByChecksum
        } else if reading == Reading::Environment || chart.is_some() {
            TakesEffect::AtNextRestart
        } else {
            TakesEffect::Unknown
        };
        out.push(Reader {
            workload: o.key.clone(),
            reading,
            takes_effect,
            roll_value: chart.map(|(_, v)| v),
        });
    }
    out
}

/// How a pod spec reads the ConfigMap `name`: environment variables win (they are never
/// refreshed), then volume files; None when it does not reference it.
fn reading_of(pod: &Value, name: &str) -> Option<Reading> {
    let named =
        |v: Option<&Value>| v.and_then(|n| n.get("name")).and_then(Value::as_str) == Some(name);
    let containers = ["initContainers", "containers"]
        .iter()
        .filter_map(|f| pod.get(*f).and_then(Value::as_array))
        .flatten();
    for c in containers {
        let env = c.get("env").and_then(Value::as_array).into_iter().flatten();
        let by_key = env
            .into_iter()
            .any(|e| named(e.pointer("/valueFrom/configMapKeyRef")));
        let env_from = c
            .get("envFrom")
            .and_then(Value::as_array)
            .into_iter()
            .flatten();
        let whole = env_from.into_iter().any(|e| named(e.get("configMapRef")));
        if by_key || whole {
            return Some(Reading::Environment);
        }
    }
    let volumes = pod
        .get("volumes")
        .and_then(Value::as_array)
        .into_iter()
        .flatten();
    for v in volumes {
        if named(v.get("configMap")) {
            return Some(Reading::Files);
        }
        let sources = v
            .pointer("/projected/sources")
            .and_then(Value::as_array)
            .into_iter()
            .flatten();
        if sources.into_iter().any(|s| named(s.get("configMap"))) {
            return Some(Reading::Files);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn object(v: Value) -> Object {
        super::super::live::object(v, "kube-system", "test").unwrap()
    }

    fn agent(annotations: Value) -> Object {
        object(json!({"apiVersion": "apps/v1", "kind": "DaemonSet",
            "metadata": {"name": "cilium", "namespace": "kube-system"},
            "spec": {"template": {"metadata": {"annotations": annotations},
                "spec": {"containers": [{"name": "cilium-agent"}],
                    "volumes": [{"name": "cilium-config-path", "configMap": {"name": "cilium-config"}}]}}}}))
    }

    fn config() -> ObjectKey {
        ObjectKey {
            group: String::new(),
            kind: "ConfigMap".into(),
            namespace: Some("kube-system".into()),
            name: "cilium-config".into(),
        }
    }

    #[test]
    fn the_agent_without_its_checksum_waits_for_a_restart() {
        let r = readers(&config(), &[agent(json!({}))]);
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].takes_effect, TakesEffect::AtNextRestart);
        assert_eq!(r[0].roll_value, Some("rollOutCiliumPods"));
        assert!(r[0]
            .consequence("cilium-config")
            .contains("rollOutCiliumPods: true"));
    }

    #[test]
    fn the_checksum_rolls_the_agent() {
        let r = readers(
            &config(),
            &[agent(json!({"cilium.io/cilium-configmap-checksum": "x"}))],
        );
        assert_eq!(r[0].takes_effect, TakesEffect::RolledByChecksum);
    }

    #[test]
    fn environment_variables_are_read_at_start_and_unknown_mounts_promise_nothing() {
        let job = object(json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "other"},
            "spec": {"template": {"spec": {"containers": [{"name": "a",
                "env": [{"name": "X", "valueFrom": {"configMapKeyRef": {"name": "cilium-config", "key": "k"}}}]}]}}}}));
        let mount = object(json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "mounter"},
            "spec": {"template": {"spec": {"containers": [{"name": "a"}],
                "volumes": [{"name": "p", "projected": {"sources": [{"configMap": {"name": "cilium-config"}}]}}]}}}}));
        let other_ns = object(json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "elsewhere", "namespace": "x"},
            "spec": {"template": {"spec": {"containers": [{"name": "a", "envFrom": [{"configMapRef": {"name": "cilium-config"}}]}]}}}}));
        let r = readers(&config(), &[job, mount, other_ns]);
        assert_eq!(r.len(), 2, "{r:?}");
        assert_eq!(r[0].reading, Reading::Environment);
        assert_eq!(r[0].takes_effect, TakesEffect::AtNextRestart);
        assert_eq!(r[1].takes_effect, TakesEffect::Unknown);
    }
}
