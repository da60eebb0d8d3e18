//! What a difference means for a running Cilium: the rules that sort differences into
//! "added by the cluster or tooling", "changes nothing that runs", "restarts pods" and the rest,
//! and the differences that moving from Helm to cilium-cmp brings by design.

use serde_json::Value;

use super::compare::{Path, Step};
use super::live::Object;

/// Fields the API server writes into every object; never part of what was applied.
const SERVER_METADATA: &[&str] = &[
    "creationTimestamp",
    "deletionGracePeriodSeconds",
    "deletionTimestamp",
    "generation",
    "managedFields",
    "resourceVersion",
    "selfLink",
    "uid",
];

/// Annotations written by Helm, kubectl, Argo CD and the workload controllers, not by the chart.
fn is_tooling_annotation(key: &str) -> bool {
    key.starts_with("meta.helm.sh/")
        || key.starts_with("argocd.argoproj.io/")
        || key == "kubectl.kubernetes.io/last-applied-configuration"
        // Set by the Deployment and DaemonSet controllers on the object they manage.
        || key == "deployment.kubernetes.io/revision"
        || key == "deprecated.daemonset.template.generation"
}

/// Labels tooling adds: Helm's `managed-by` (from the release, not the chart's templates) and
/// Argo CD's label tracking. They count as tooling only where the render does not set them
/// itself (the comparison never sees them otherwise: the render's own value must match).
const TOOLING_LABELS: &[&str] = &["app.kubernetes.io/managed-by", "app.kubernetes.io/instance"];

/// Whether the entry at `path` of a live object is what the cluster and the tools that applied
/// it add, for telling "identical" from "differs only in what the cluster or tooling adds": the
/// comparison walks the live object as if these entries were not there (`compare::each_difference`'s
/// `skip`), which needs no copy of it.
pub fn is_tooling(path: &[Step], render: &Value) -> bool {
    match path {
        [Step::Key(k)] => k == "status",
        [Step::Key(m), Step::Key(k)] if m == "metadata" => {
            SERVER_METADATA.contains(&k.as_str())
                || (k == "namespace" && render.pointer("/metadata/namespace").is_none())
        }
        [Step::Key(m), Step::Key(a), Step::Key(k)] if m == "metadata" && a == "annotations" => {
            is_tooling_annotation(k)
        }
        [Step::Key(m), Step::Key(l), Step::Key(k)] if m == "metadata" && l == "labels" => {
            TOOLING_LABELS.contains(&k.as_str())
                && render
                    .pointer("/metadata/labels")
                    .and_then(|r| r.get(k))
                    .is_none()
        }
        _ => false,
    }
}

/// Where a workload keeps its pod template: a change there rolls (or, for Jobs and CronJobs,
/// re-creates) its pods.
pub fn pod_template(kind: &str) -> Option<&'static [&'static str]> {
    match kind {
        "DaemonSet" | "Deployment" | "StatefulSet" | "ReplicaSet" | "Job" => {
            Some(&["spec", "template"])
        }
        "CronJob" => Some(&["spec", "jobTemplate", "spec", "template"]),
        _ => None,
    }
}

/// What a pod-template change does to that kind of workload.
pub fn restart_effect(kind: &str) -> &'static str {
    match kind {
        "DaemonSet" => "its pods restart on every node, one node at a time (rolling update)",
        "Deployment" | "StatefulSet" | "ReplicaSet" => "its pods are replaced (rolling update)",
        "Job" => "a Job's template cannot change: the Job is replaced and runs again",
        "CronJob" => "nothing running restarts; its next scheduled run uses the new template",
        _ => "its pods are replaced",
    }
}

/// Kinds whose own labels and annotations (outside any pod template) nothing selects on or
/// reads at run time, so a metadata-only difference changes nothing that runs. Not in the list,
/// on purpose: Services (monitoring selects them by label, load balancers and Cilium read their
/// annotations), ClusterRoles (aggregation selects by label), Namespaces (policies and webhooks
/// select by namespace label), and custom resources (their controllers may read anything).
const INERT_METADATA_KINDS: &[&str] = &[
    "ConfigMap",
    "CronJob",
    "DaemonSet",
    "Deployment",
    "Job",
    "PodDisruptionBudget",
    "Role",
    "RoleBinding",
    "ClusterRoleBinding",
    "Secret",
    "ServiceAccount",
    "StatefulSet",
];

/// Whether a difference at `path` of a `kind` object changes nothing that runs.
pub fn is_inert(kind: &str, path: &Path) -> bool {
    INERT_METADATA_KINDS.contains(&kind)
        && (path.starts_with(&["metadata", "labels"])
            || path.starts_with(&["metadata", "annotations"]))
}

/// A difference that moving from Helm to cilium-cmp brings by design, and what it means.
pub fn expected_difference(path: &Path) -> Option<String> {
    if path.starts_with(&["metadata", "annotations"])
        && path.key_at(2) == Some(crate::output::CONTENT_HASH_ANNOTATION)
    {
        return Some(
            "cilium-cmp stamps the content hash of the whole render on cilium-config (on the \
             first object when there is none; docs/parity.md, \"How the output relates to the chart's\"); \
             nothing reads it at run time"
                .into(),
        );
    }
    // The checksum annotations and the certgen Job names are Helm's own (the chart's templates
    // are evaluated), so a difference in them is a real change, not one of the move.
    None
}

/// The one-shot certgen Jobs, whose names end in a hash of their spec (from Cilium 1.19).
fn is_certgen(name: &str) -> bool {
    name.starts_with("hubble-generate-certs")
        || name.starts_with("clustermesh-apiserver-generate-certs")
}

/// Why an object that only one side has is an expected difference of the move, if it is one.
pub fn expected_alone(o: &Object, in_render: bool) -> Option<String> {
    let kind = o.key.kind.as_str();
    let name = o.key.name.as_str();
    if kind == "Secret" && !in_render && minted_by_helm(&o.value) {
        return Some(
            "a certificate the chart minted with random keys (tls.auto.method: helm); cilium-cmp \
             never mints certificates, certgen issues them in the cluster instead. Take it out of \
             Argo CD's tracking before the first sync (docs/moving-from-helm.md, \"Moving from a \
             Helm Application\", step 3) so a prune does not delete it before certgen replaces it"
                .into(),
        );
    }
    if kind == "Job" && is_certgen(name) {
        return Some(if in_render {
            "the certgen Job, which issues the TLS certificates in the cluster (the install being \
             replaced minted them at render time, or ran certgen with another Job spec: its name \
             ends in a hash of the spec); it runs once"
                .into()
        } else {
            "a finished certgen Job of another Job spec (its name ends in a hash of the spec); \
             deleting it stops nothing"
                .into()
        });
    }
    if in_render && is_certgen(name) {
        return Some(
            "certgen, which issues the TLS certificates in the cluster where the chart minted \
             them at render time"
                .into(),
        );
    }
    None
}

/// The chart labels every Secret it fills with keys it generated at render time.
pub fn minted_by_helm(v: &Value) -> bool {
    v.pointer("/metadata/labels/cilium.io~1helm-template-non-idempotent")
        .and_then(Value::as_str)
        == Some("true")
}

/// Why a live object the render lacks belongs to the release (so Argo CD would prune it, or it
/// would be left running unmanaged); None when nothing says it does.
pub fn release_marker(o: &Object, release: &str, namespace: &str) -> Option<String> {
    let v = &o.value;
    let annotation = |k: &str| {
        v.get("metadata")
            .and_then(|m| m.get("annotations"))
            .and_then(|a| a.get(k))
            .and_then(Value::as_str)
    };
    let label = |k: &str| {
        v.get("metadata")
            .and_then(|m| m.get("labels"))
            .and_then(|a| a.get(k))
            .and_then(Value::as_str)
    };
    if annotation("meta.helm.sh/release-name") == Some(release)
        && annotation("meta.helm.sh/release-namespace").is_none_or(|ns| ns == namespace)
    {
        return Some(format!("Helm release {release:?} installed it"));
    }
    if let Some(id) = annotation("argocd.argoproj.io/tracking-id") {
        let app = id.split(':').next().unwrap_or("");
        return Some(format!("Argo CD Application {app:?} tracks it"));
    }
    if minted_by_helm(v) {
        return Some("the chart minted it".into());
    }
    if label("app.kubernetes.io/part-of") == Some("cilium") {
        return Some("it carries the chart's label app.kubernetes.io/part-of=cilium".into());
    }
    if let Some(manifest) = &o.in_manifest {
        return Some(format!(
            "it is in {manifest}, an export of the release's manifest (no uid: not read from the cluster)"
        ));
    }
    None
}

/// The controller that made a live object, if one did (then nobody applied it: it is never
/// pruned by an apply).
pub fn owner(v: &Value) -> Option<String> {
    let refs = v.pointer("/metadata/ownerReferences")?.as_array()?;
    refs.iter()
        .find(|r| r.get("controller").and_then(Value::as_bool) == Some(true))
        .map(|r| {
            format!(
                "{} {}",
                r.get("kind").and_then(Value::as_str).unwrap_or("?"),
                r.get("name").and_then(Value::as_str).unwrap_or("?")
            )
        })
}
