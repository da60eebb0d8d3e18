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
        && path.key_at(2) == Some(cilium_cmp_render::output::CONTENT_HASH_ANNOTATION)
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
/// `tracked`: Argo CD tracks the live object (a sync with prune deletes it).
pub(crate) fn expected_alone(
    o: &Object,
    in_render: bool,
    tracked: bool,
    certgen: &Certgen,
) -> Option<String> {
    let kind = o.key.kind.as_str();
    let name = o.key.name.as_str();
    if kind == "Secret" && !in_render && minted_by_helm(&o.value) {
        return Some(if tracked {
            minted_and_tracked(name, certgen)
        } else {
            "a certificate the chart minted with random keys (tls.auto.method: helm); cilium-cmp \
             never mints certificates, certgen issues them in the cluster instead. Argo CD does \
             not track it, so no sync deletes it: certgen's Job writes its certificates under the \
             same name (it creates the Secret, or replaces it whole when it exists), reusing the \
             CA in cilium-ca when that Secret exists"
                .into()
        });
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

/// What the first sync with prune does to a minted certificate Secret Argo CD tracks, found in
/// the sources:
///
/// - certgen (cilium/certgen `cmd/certgen.go`, `internal/generate/generate.go`) runs with
///   `--ca-generate --ca-reuse-secret`: when `cilium-ca` exists it keeps it untouched and signs
///   with it, otherwise it generates a new CA and creates `cilium-ca`; each certificate Secret is
///   created, or, when it exists, replaced by an Update of a new object that carries only name,
///   namespace, type and data: the Argo CD tracking annotation (and every label) is gone after it.
/// - Argo CD recomputes what to prune on every pass of the operation from what it then tracks
///   (argoproj/argo-cd `controller/sync.go`, `SyncAppState` compares afresh), deletes by name
///   (argoproj/gitops-engine `pkg/sync/sync_context.go`, `pruneObject`), and within one wave runs
///   the prunes before the applies ("prune first" in `runTasks`). `PruneLast=true` moves prunes
///   to a wave after every other Sync-phase wave, run once those are healthy, and a Job is healthy
///   when it completed (`pkg/health/health_job.go`).
/// - The certgen Job is a plain Sync-phase object from 1.19 on; on 1.18 it carries
///   `helm.sh/hook: post-install,post-upgrade`, which Argo CD runs as a PostSync hook
///   (gitops-engine `pkg/sync/hook/helm/type.go`), after the whole Sync phase, prunes included.
///
/// So a Secret certgen has rewritten is never pruned (Argo CD no longer tracks it), and which one
/// Argo CD deletes depends on the order.
fn minted_and_tracked(name: &str, certgen: &Certgen) -> String {
    let ca = certgen.ca.contains(name);
    if !ca && !certgen.certs.contains(name) {
        return format!(
            "a certificate the chart minted with random keys (tls.auto.method: helm), tracked by \
             Argo CD; the render's certgen does not write {name} (its certificate list does not \
             name it), so the first sync with prune deletes it, with PruneLast or without. Take it \
             out of Argo CD's tracking first (remove the annotation argocd.argoproj.io/tracking-id) \
             if something still mounts it"
        );
    }
    format!(
        "a certificate the chart minted with random keys (tls.auto.method: helm), tracked by Argo \
         CD; cilium-cmp never mints certificates, certgen issues them in the cluster. On the first \
         sync with prune: without PruneLast (and always on 1.18, whose certgen Job is a PostSync \
         hook) Argo CD deletes it before certgen runs, so certgen finds no cilium-ca, generates a \
         new CA and issues every certificate anew: the Secret is missing until certgen has run \
         (new Hubble and clustermesh pods cannot mount it meanwhile), and everything that trusted \
         the old CA (Hubble clients outside the cluster, the other clusters of a clustermesh) \
         must be given the new one. With PruneLast=true (1.19 and later) certgen runs first: {}. \
         To keep the Helm-minted CA and certificates, take the Secrets out of Argo CD's tracking \
         before the first sync (remove the annotation argocd.argoproj.io/tracking-id, or add \
         argocd.argoproj.io/sync-options: Prune=false to them)",
        if ca {
            "it reuses this CA and leaves the Secret as it is, still tracked, so the prune at the \
             end deletes the CA; the certificates it signed keep working, and certgen's next run \
             (the CronJob) generates a new CA and re-issues every certificate"
        } else {
            "it signs with the existing cilium-ca and replaces this Secret under the same name \
             without Argo CD's tracking annotation, so the prune at the end no longer sees it: it \
             is not deleted (cilium-ca, which certgen leaves as it is, is)"
        }
    )
}

/// The Secrets the render's certgen writes: its CA (`--ca-secret-name=`) and the certificates its
/// `CILIUM_CERTGEN_CONFIG` lists (`certs: - name: ...`), in the certgen Jobs and CronJobs.
#[derive(Debug, Clone, Default)]
pub(crate) struct Certgen {
    /// The CA Secrets' names.
    ca: std::collections::BTreeSet<String>,
    /// The certificate Secrets' names.
    certs: std::collections::BTreeSet<String>,
}

impl Certgen {
    /// Read from the render's certgen workloads.
    pub(crate) fn of(rendered: &[Object]) -> Certgen {
        let mut out = Certgen::default();
        for o in rendered.iter().filter(|o| is_certgen(&o.key.name)) {
            let Some(t) = pod_template(&o.key.kind) else {
                continue;
            };
            let pointer = format!("/{}/spec/containers", t.join("/"));
            for c in o
                .value
                .pointer(&pointer)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                for a in c
                    .get("args")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    if let Some(ca) = a.as_str().and_then(|a| a.strip_prefix("--ca-secret-name=")) {
                        out.ca.insert(ca.to_string());
                    }
                }
                for e in c.get("env").and_then(Value::as_array).into_iter().flatten() {
                    if e.get("name").and_then(Value::as_str) != Some("CILIUM_CERTGEN_CONFIG") {
                        continue;
                    }
                    let config = e.get("value").and_then(Value::as_str).unwrap_or("");
                    if let Ok(v) = cilium_cmp_yaml::yaml::parse_value(config) {
                        for cert in v
                            .get("certs")
                            .and_then(Value::as_array)
                            .into_iter()
                            .flatten()
                        {
                            if let Some(n) = cert.get("name").and_then(Value::as_str) {
                                out.certs.insert(n.to_string());
                            }
                        }
                    }
                }
            }
        }
        out
    }
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
    let label = |k: &str| {
        v.get("metadata")
            .and_then(|m| m.get("labels"))
            .and_then(|a| a.get(k))
            .and_then(Value::as_str)
    };
    if let Some(why) = helm_release_marker(o, release, namespace) {
        return Some(why);
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

/// Helm's own mark of a release's object: its `meta.helm.sh/release-name` and
/// `release-namespace` annotations (helm/helm `pkg/action/validate.go`, the ownership check
/// Helm makes before adopting an object).
pub fn helm_release_marker(o: &Object, release: &str, namespace: &str) -> Option<String> {
    let annotation = |k: &str| {
        o.value
            .get("metadata")
            .and_then(|m| m.get("annotations"))
            .and_then(|a| a.get(k))
            .and_then(Value::as_str)
    };
    (annotation("meta.helm.sh/release-name") == Some(release)
        && annotation("meta.helm.sh/release-namespace").is_none_or(|ns| ns == namespace))
    .then(|| format!("Helm release {release:?} installed it"))
}

/// The kubectl command that deletes `key`.
pub fn delete_command(key: &super::live::ObjectKey) -> String {
    let resource = if key.group.is_empty() {
        key.kind.to_lowercase()
    } else {
        format!("{}.{}", key.kind.to_lowercase(), key.group)
    };
    let mut words = vec!["kubectl".to_string(), "delete".into()];
    if let Some(ns) = &key.namespace {
        words.extend(["-n".into(), ns.clone()]);
    }
    words.extend([resource, key.name.clone()]);
    words
        .iter()
        .map(|w| cilium_cmp_render::shell::shell_quote(w))
        .collect::<Vec<_>>()
        .join(" ")
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
