//! Which live objects Argo CD tracks: the only ones a sync may prune.
//!
//! Argo CD prunes an object only when it counts the object as its Application's, which it reads
//! from the object itself with the tracking method of `argocd-cm`'s
//! `application.resourceTrackingMethod` (argoproj/argo-cd `docs/user-guide/resource_tracking.md`;
//! `util/argo/resource_tracking.go`):
//!
//! - `annotation` (the default since Argo CD 3.0) and `annotation+label`: the annotation
//!   `argocd.argoproj.io/tracking-id`, `APP:GROUP/KIND:NAMESPACE/NAME`. An annotation naming
//!   another object (copied along with its metadata, as a Deployment's annotations are copied to
//!   its ReplicaSets) does not make the copy the Application's.
//! - `label`: the instance label, `app.kubernetes.io/instance` unless `application.instanceLabelKey`
//!   names another, whose value is the Application's name.
//!
//! Helm's `meta.helm.sh/*` annotations and the chart's labels mean nothing to Argo CD: an object
//! only they mark is never pruned by a sync, it stays in the cluster unmanaged.

use serde_json::Value;

use super::live::Object;

/// `application.resourceTrackingMethod`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Method {
    #[default]
    Annotation,
    AnnotationAndLabel,
    Label,
}

/// How the Argo CD that syncs tells its objects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tracking {
    method: Method,
    /// The instance label label tracking reads.
    pub label_key: String,
}

/// Argo CD's default instance label (argoproj/argo-cd `common/common.go`, `LabelKeyAppInstance`).
pub const DEFAULT_INSTANCE_LABEL: &str = "app.kubernetes.io/instance";

/// The tracking annotation (argoproj/argo-cd `common/common.go`, `AnnotationKeyAppInstance`).
pub const TRACKING_ANNOTATION: &str = "argocd.argoproj.io/tracking-id";

impl Default for Tracking {
    fn default() -> Self {
        Tracking {
            method: Method::Annotation,
            label_key: DEFAULT_INSTANCE_LABEL.into(),
        }
    }
}

impl Tracking {
    /// From an `argocd-cm` ConfigMap's `data` (its two keys; absent ones keep the defaults). An
    /// unknown method is refused, naming the values Argo CD accepts.
    pub fn from_argocd_cm(cm: &Value, shown: &str) -> Result<Tracking, String> {
        let data = cm.get("data");
        let text = |k: &str| data.and_then(|d| d.get(k)).and_then(Value::as_str);
        let method = match text("application.resourceTrackingMethod").map(str::trim) {
            None | Some("") | Some("annotation") => Method::Annotation,
            Some("annotation+label") => Method::AnnotationAndLabel,
            Some("label") => Method::Label,
            Some(other) => {
                return Err(format!(
                    "{shown}: data.application.resourceTrackingMethod is {}; Argo CD knows \
                     annotation, annotation+label and label",
                    cilium_cmp_yaml::limits::quoted(other)
                ))
            }
        };
        let label_key = text("application.instanceLabelKey")
            .map(str::trim)
            .filter(|k| !k.is_empty())
            .unwrap_or(DEFAULT_INSTANCE_LABEL)
            .to_string();
        Ok(Tracking { method, label_key })
    }

    /// What an object this Argo CD does not track lacks, for a report.
    pub fn untracked(&self) -> String {
        match self.method {
            Method::Annotation | Method::AnnotationAndLabel => {
                format!("no {TRACKING_ANNOTATION} annotation naming it")
            }
            Method::Label => format!("no {} label (label tracking)", self.label_key),
        }
    }

    /// The Application that tracks `o`, and how, if one does.
    pub fn tracked_by(&self, o: &Object) -> Option<(String, String)> {
        let meta = o.value.get("metadata");
        match self.method {
            Method::Annotation | Method::AnnotationAndLabel => {
                let id = meta?
                    .get("annotations")?
                    .get(TRACKING_ANNOTATION)?
                    .as_str()?;
                let app = names_object(id, o)?;
                Some((
                    app.to_string(),
                    format!("its annotation {TRACKING_ANNOTATION}"),
                ))
            }
            Method::Label => {
                let app = meta?.get("labels")?.get(&self.label_key)?.as_str()?;
                (!app.is_empty()).then(|| {
                    (
                        app.to_string(),
                        format!("its label {} (label tracking)", self.label_key),
                    )
                })
            }
        }
    }
}

/// The Application a tracking id names, when the id names this very object (group, kind,
/// namespace and name).
fn names_object<'a>(id: &'a str, o: &Object) -> Option<&'a str> {
    let (app, rest) = id.split_once(':')?;
    let (group_kind, ns_name) = rest.split_once(':')?;
    let (group, kind) = group_kind.split_once('/')?;
    let (namespace, name) = ns_name.split_once('/')?;
    let same = group == o.key.group
        && kind == o.key.kind
        && name == o.key.name
        && namespace == o.key.namespace.as_deref().unwrap_or("");
    (same && !app.is_empty()).then_some(app)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adopt::live::ObjectKey;
    use serde_json::json;

    fn object(meta: Value) -> Object {
        Object {
            key: ObjectKey {
                group: String::new(),
                kind: "Secret".into(),
                namespace: Some("kube-system".into()),
                name: "cilium-ca".into(),
            },
            api_version: "v1".into(),
            value: json!({"apiVersion": "v1", "kind": "Secret", "metadata": meta}),
            source: "live.yaml".into(),
            in_manifest: None,
        }
    }

    #[test]
    fn the_annotation_must_name_the_object() {
        let t = Tracking::default();
        let own = object(
            json!({"annotations": {TRACKING_ANNOTATION: "cilium:/Secret:kube-system/cilium-ca"}}),
        );
        assert_eq!(t.tracked_by(&own).unwrap().0, "cilium");
        let copied = object(
            json!({"annotations": {TRACKING_ANNOTATION: "cilium:apps/Deployment:kube-system/x"}}),
        );
        assert!(t.tracked_by(&copied).is_none());
        let helm_only = object(json!({"annotations": {"meta.helm.sh/release-name": "cilium"}}));
        assert!(t.tracked_by(&helm_only).is_none());
    }

    #[test]
    fn label_tracking_reads_the_instance_label_only_when_configured() {
        let labelled = object(json!({"labels": {DEFAULT_INSTANCE_LABEL: "cilium"}}));
        assert!(Tracking::default().tracked_by(&labelled).is_none());
        let cm = json!({"data": {"application.resourceTrackingMethod": "label"}});
        let t = Tracking::from_argocd_cm(&cm, "argocd-cm.yaml").unwrap();
        assert_eq!(t.tracked_by(&labelled).unwrap().0, "cilium");
        let bad = json!({"data": {"application.resourceTrackingMethod": "uid"}});
        let err = Tracking::from_argocd_cm(&bad, "argocd-cm.yaml").unwrap_err();
        assert!(
            err.contains("argocd-cm.yaml") && err.contains("annotation+label"),
            "{err}"
        );
    }
}
