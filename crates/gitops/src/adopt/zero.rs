//! Zero values (`false`, `0`) the render writes: whether the API server stores them.
//!
//! A built-in kind is decoded into Go structs. A plain field with `omitempty` (`bool`, `int32`)
//! cannot hold "unset" apart from its zero value, so a `false` or `0` the render sends is never
//! stored and the live object has no such field: that absence is no difference. A pointer field
//! (`*bool`, `*int32`, `*intstr.IntOrString`) stores the zero value, so its absence live is a real
//! difference (the apply sets it). A custom resource is stored as JSON, as sent: its zero values
//! are kept like a pointer's.
//!
//! The table holds exactly the fields a Cilium render can write with a zero value (a test walks
//! the render of every scenario on every release and fails on an unclassified one), from the Go
//! types: k8s.io/api `core/v1/types.go` (`PodSpec.HostNetwork bool`, `HostPID`, `HostIPC`,
//! `PodSpec.AutomountServiceAccountToken *bool`, `PodSpec.TerminationGracePeriodSeconds *int64`,
//! `SecurityContext.AllowPrivilegeEscalation *bool`, `Privileged *bool`,
//! `ReadOnlyRootFilesystem *bool`, `RunAsUser *int64`, `RunAsGroup *int64`, `RunAsNonRoot *bool`,
//! `PodSecurityContext.FSGroup *int64`, `Probe.InitialDelaySeconds int32` and the other probe
//! counts, `VolumeMount.ReadOnly bool`, `Container.Stdin`/`TTY bool`,
//! `ServiceAccount.AutomountServiceAccountToken *bool`, `ServiceSpec.PublishNotReadyAddresses
//! bool`, `ServiceSpec.AllocateLoadBalancerNodePorts *bool`), `apps/v1/types.go`
//! (`RollingUpdateDeployment.MaxUnavailable`/`MaxSurge *intstr.IntOrString`,
//! `RollingUpdateDaemonSet` likewise, `DeploymentSpec.Replicas *int32`, `MinReadySeconds int32`),
//! `batch/v1/types.go` (`JobSpec.BackoffLimit *int32`, `TTLSecondsAfterFinished *int32`,
//! `CronJobSpec.Suspend *bool`), `policy/v1/types.go` (`PodDisruptionBudgetSpec.MaxUnavailable`
//! / `MinAvailable *intstr.IntOrString`).

use super::compare::{Path, Step};

/// How the API server treats a zero value at a field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Zero {
    /// A plain `omitempty` field: the zero value is never stored.
    Dropped,
    /// A pointer field, or a custom resource: the zero value is stored.
    Stored,
}

/// Shapes relative to a pod spec; `*` is a list item.
const POD_SPEC: &[(&[&str], Zero)] = &[
    (&["hostNetwork"], Zero::Dropped),
    (&["hostPID"], Zero::Dropped),
    (&["hostIPC"], Zero::Dropped),
    (&["automountServiceAccountToken"], Zero::Stored),
    (&["shareProcessNamespace"], Zero::Stored),
    (&["enableServiceLinks"], Zero::Stored),
    (&["terminationGracePeriodSeconds"], Zero::Stored),
    (&["securityContext", "runAsUser"], Zero::Stored),
    (&["securityContext", "runAsGroup"], Zero::Stored),
    (&["securityContext", "runAsNonRoot"], Zero::Stored),
    (&["securityContext", "fsGroup"], Zero::Stored),
];

/// Shapes relative to a container.
const CONTAINER: &[(&[&str], Zero)] = &[
    (
        &["securityContext", "allowPrivilegeEscalation"],
        Zero::Stored,
    ),
    (&["securityContext", "privileged"], Zero::Stored),
    (&["securityContext", "readOnlyRootFilesystem"], Zero::Stored),
    (&["securityContext", "runAsUser"], Zero::Stored),
    (&["securityContext", "runAsGroup"], Zero::Stored),
    (&["securityContext", "runAsNonRoot"], Zero::Stored),
    (&["volumeMounts", "*", "readOnly"], Zero::Dropped),
    (&["stdin"], Zero::Dropped),
    (&["tty"], Zero::Dropped),
];

const PROBE_COUNTS: &[&str] = &[
    "initialDelaySeconds",
    "timeoutSeconds",
    "periodSeconds",
    "successThreshold",
    "failureThreshold",
];

/// Shapes of whole objects, by kind.
const OBJECT: &[(&str, &[&str], Zero)] = &[
    (
        "ServiceAccount",
        &["automountServiceAccountToken"],
        Zero::Stored,
    ),
    ("Deployment", &["spec", "replicas"], Zero::Stored),
    ("Deployment", &["spec", "minReadySeconds"], Zero::Dropped),
    (
        "Deployment",
        &["spec", "strategy", "rollingUpdate", "maxUnavailable"],
        Zero::Stored,
    ),
    (
        "Deployment",
        &["spec", "strategy", "rollingUpdate", "maxSurge"],
        Zero::Stored,
    ),
    ("DaemonSet", &["spec", "minReadySeconds"], Zero::Dropped),
    (
        "DaemonSet",
        &["spec", "updateStrategy", "rollingUpdate", "maxUnavailable"],
        Zero::Stored,
    ),
    (
        "DaemonSet",
        &["spec", "updateStrategy", "rollingUpdate", "maxSurge"],
        Zero::Stored,
    ),
    ("Job", &["spec", "backoffLimit"], Zero::Stored),
    ("Job", &["spec", "ttlSecondsAfterFinished"], Zero::Stored),
    ("CronJob", &["spec", "suspend"], Zero::Stored),
    (
        "CronJob",
        &["spec", "jobTemplate", "spec", "backoffLimit"],
        Zero::Stored,
    ),
    (
        "CronJob",
        &["spec", "jobTemplate", "spec", "ttlSecondsAfterFinished"],
        Zero::Stored,
    ),
    (
        "Service",
        &["spec", "publishNotReadyAddresses"],
        Zero::Dropped,
    ),
    (
        "Service",
        &["spec", "allocateLoadBalancerNodePorts"],
        Zero::Stored,
    ),
    (
        "PodDisruptionBudget",
        &["spec", "maxUnavailable"],
        Zero::Stored,
    ),
    (
        "PodDisruptionBudget",
        &["spec", "minAvailable"],
        Zero::Stored,
    ),
];

/// API groups of the built-in kinds (decoded into Go structs); every other group is a custom
/// resource, stored as sent.
const BUILT_IN_GROUPS: &[&str] = &[
    "",
    "apps",
    "batch",
    "policy",
    "rbac.authorization.k8s.io",
    "networking.k8s.io",
    "discovery.k8s.io",
    "scheduling.k8s.io",
    "admissionregistration.k8s.io",
    "apiregistration.k8s.io",
    "coordination.k8s.io",
];

/// How the API server treats a zero value at `path` of an object of `group` and `kind`, when the
/// table knows the field.
pub fn classify(group: &str, kind: &str, path: &Path) -> Option<Zero> {
    if !BUILT_IN_GROUPS.contains(&group) {
        return Some(Zero::Stored);
    }
    let keys: Vec<&str> = path
        .0
        .iter()
        .map(|s| match s {
            Step::Key(k) => k.as_str(),
            Step::Item(_) | Step::Index(_) => "*",
            Step::More(_) => "",
        })
        .collect();
    if let Some((_, _, z)) = OBJECT
        .iter()
        .find(|(k, shape, _)| *k == kind && *shape == keys.as_slice())
    {
        return Some(*z);
    }
    let template = super::rules::pod_template(kind)?;
    let rest = keys.strip_prefix(template)?.strip_prefix(&["spec"])?;
    if let Some((_, z)) = POD_SPEC.iter().find(|(shape, _)| *shape == rest) {
        return Some(*z);
    }
    let container = match rest {
        ["containers" | "initContainers", "*", container @ ..] => container,
        _ => return None,
    };
    if let Some((_, z)) = CONTAINER.iter().find(|(shape, _)| *shape == container) {
        return Some(*z);
    }
    match container {
        [probe, count] if probe.ends_with("Probe") && PROBE_COUNTS.contains(count) => {
            Some(Zero::Dropped)
        }
        _ => None,
    }
}

/// Maps whose values are free-form strings (Go `map[string]string`, or `[]byte` for a Secret's
/// `data`): an entry whose value is `""` is stored as it is sent, so its absence from the live
/// object is a real difference (a ConfigMap key `devices: ""` is kept, and Argo CD shows it
/// OutOfSync until it is applied). Only a typed string field with `omitempty` drops `""`.
/// k8s.io/api `core/v1/types.go` (`ConfigMap.Data`, `BinaryData`, `Secret.Data`, `StringData`,
/// `PodSpec.NodeSelector`), k8s.io/apimachinery `pkg/apis/meta/v1/types.go`
/// (`ObjectMeta.Labels`, `Annotations`, `LabelSelector.MatchLabels`).
const STRING_MAPS: &[&str] = &["labels", "annotations", "matchLabels", "nodeSelector"];
const TOP_LEVEL_STRING_MAPS: &[&str] = &["data", "binaryData", "stringData"];

/// Whether an empty string at `path` is a value the API server keeps: an entry of a free-form
/// string map (`STRING_MAPS`, anywhere; `data`, `binaryData`, `stringData` at the top of the
/// object).
pub fn keeps_empty_string(path: &[Step]) -> bool {
    let parent = match path.len().checked_sub(2).map(|i| &path[i]) {
        Some(Step::Key(k)) => k.as_str(),
        _ => return false,
    };
    STRING_MAPS.contains(&parent) || (path.len() == 2 && TOP_LEVEL_STRING_MAPS.contains(&parent))
}

/// Whether `value` is a zero value a plain field would drop.
pub fn is_zero(value: &serde_json::Value) -> bool {
    match value {
        serde_json::Value::Bool(b) => !b,
        serde_json::Value::Number(n) => n.as_f64() == Some(0.0),
        _ => false,
    }
}

/// Integers as the API server prints them. The YAML reader gives every number as a float, so a
/// `replicas: 2` would print as `2.0`; the fields a Cilium render writes whole numbers to are
/// integers (`int32`, `int64`, `intstr.IntOrString` in k8s.io/api), and the API server writes
/// them back without a fraction. A number with a fraction stays as it is.
pub fn integers_as_integers(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::Number(n) => {
            if let Some(f) = n.as_f64() {
                // 2^53: beyond it a float no longer holds every integer exactly.
                if n.is_f64() && f.fract() == 0.0 && f.abs() < 9_007_199_254_740_992.0 {
                    *v = serde_json::Value::from(f as i64);
                }
            }
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(integers_as_integers),
        serde_json::Value::Object(m) => m.values_mut().for_each(integers_as_integers),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(keys: &[&str]) -> Path {
        Path(
            keys.iter()
                .map(|k| match *k {
                    "*" => Step::Item("x".into()),
                    k => Step::Key(k.into()),
                })
                .collect(),
        )
    }

    #[test]
    fn empty_strings_of_string_maps_are_kept() {
        let p = |keys: &[&str]| path(keys).0;
        assert!(keeps_empty_string(&p(&["data", "devices"])));
        assert!(keeps_empty_string(&p(&["metadata", "annotations", "a"])));
        assert!(keeps_empty_string(&p(&[
            "spec", "template", "metadata", "labels", "x"
        ])));
        assert!(!keeps_empty_string(&p(&["spec", "data", "x"])));
        assert!(!keeps_empty_string(&p(&[
            "spec", "template", "spec", "volumes", "*", "hostPath", "type"
        ])));
    }

    #[test]
    fn plain_fields_drop_zero_and_pointers_keep_it() {
        let job = path(&["spec", "template", "spec", "hostNetwork"]);
        assert_eq!(classify("batch", "Job", &job), Some(Zero::Dropped));
        let ape = path(&[
            "spec",
            "template",
            "spec",
            "containers",
            "*",
            "securityContext",
            "allowPrivilegeEscalation",
        ]);
        assert_eq!(classify("apps", "Deployment", &ape), Some(Zero::Stored));
        let probe = path(&[
            "spec",
            "template",
            "spec",
            "containers",
            "*",
            "readinessProbe",
            "initialDelaySeconds",
        ]);
        assert_eq!(classify("apps", "DaemonSet", &probe), Some(Zero::Dropped));
        assert_eq!(
            classify("cert-manager.io", "Certificate", &path(&["spec", "isCA"])),
            Some(Zero::Stored)
        );
        assert_eq!(
            classify("apps", "DaemonSet", &path(&["spec", "other"])),
            None
        );
    }
}
