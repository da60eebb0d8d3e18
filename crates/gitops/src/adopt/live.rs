//! Reading what runs: the live dumps a user can make without write access (`helm get manifest`,
//! `kubectl get -o yaml`), and the identity of every object in them and in the render.

use std::fmt;
use std::io::Read;
use std::path::Path;

use serde_json::Value;

use super::{bounds, AdoptError};
use cilium_cmp_yaml::limits;

/// How Kubernetes identifies an object: API group (not version: `apps/v1` and a later version
/// name the same object), kind, namespace (none when cluster-scoped) and name.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ObjectKey {
    /// The API group, `apiVersion` without its version; empty for the core group (`v1`).
    pub group: String,
    /// The kind (`DaemonSet`).
    pub kind: String,
    /// None for a cluster-scoped kind (`is_cluster_scoped`); for any other, the object's own
    /// namespace or, when it names none, the release namespace it was read with.
    pub namespace: Option<String>,
    /// `metadata.name`.
    pub name: String,
}

impl fmt::Display for ObjectKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.namespace {
            Some(ns) => write!(f, "{} {ns}/{}", self.kind, self.name),
            None => write!(f, "{} {}", self.kind, self.name),
        }
    }
}

/// One object and where it was read.
#[derive(Debug, Clone)]
pub struct Object {
    /// Its identity.
    pub key: ObjectKey,
    /// Its `apiVersion` as written (`apps/v1`).
    pub api_version: String,
    /// The whole object as read.
    pub value: Value,
    /// The file (or `-`) it came from; `render` for the render.
    pub source: String,
    /// A manifest export (no uid: not read from the cluster, e.g. `helm get manifest`) that lists
    /// the object, even when a cluster read of it is what is compared.
    pub in_manifest: Option<String>,
}

impl Object {
    /// Read from the API server (it has a uid), as opposed to an export of a manifest such as
    /// `helm get manifest`, which holds only what the release applied.
    pub fn from_cluster(&self) -> bool {
        self.value
            .pointer("/metadata/uid")
            .is_some_and(Value::is_string)
    }
}

/// Kinds without a namespace among those the chart renders or a dump of its objects may hold;
/// every other kind is namespaced, so a missing namespace means the release namespace (as Helm
/// and kubectl apply it).
const CLUSTER_SCOPED: &[&str] = &[
    "APIService",
    "CiliumBGPClusterConfig",
    "CiliumBGPAdvertisement",
    "CiliumBGPPeerConfig",
    "CiliumClusterwideEnvoyConfig",
    "CiliumClusterwideNetworkPolicy",
    "CiliumExternalWorkload",
    "CiliumIdentity",
    "CiliumLoadBalancerIPPool",
    "CiliumNode",
    "CiliumNodeConfig",
    "ClusterIssuer",
    "ClusterRole",
    "ClusterRoleBinding",
    "CustomResourceDefinition",
    "GatewayClass",
    "IngressClass",
    "MutatingWebhookConfiguration",
    "Namespace",
    "Node",
    "PersistentVolume",
    "PriorityClass",
    "RuntimeClass",
    "StorageClass",
    "ValidatingAdmissionPolicy",
    "ValidatingAdmissionPolicyBinding",
    "ValidatingWebhookConfiguration",
];

/// Whether objects of `kind` have no namespace (among the kinds a Cilium render or a dump of
/// its objects holds).
pub fn is_cluster_scoped(kind: &str) -> bool {
    CLUSTER_SCOPED.contains(&kind)
}

/// Reads one `--live` argument (a file, or stdin for `-`) within `limits::MAX_LIVE_FILE_BYTES`;
/// `budget` is what all live dumps may still take together.
pub fn read_dump(arg: &Path, budget: &mut u64) -> Result<(String, String), AdoptError> {
    let shown = if arg.as_os_str() == "-" {
        "stdin".to_string()
    } else {
        arg.display().to_string()
    };
    let fail = |reason: String| AdoptError::Live {
        file: shown.clone(),
        message: reason,
    };
    let limit = limits::MAX_LIVE_FILE_BYTES.min(*budget);
    let mut bytes = Vec::new();
    if arg.as_os_str() == "-" {
        limits::check_stdin().map_err(|e| fail(e.to_string()))?;
        std::io::stdin()
            .lock()
            .take(limit + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| fail(format!("cannot be read: {e}")))?;
    } else {
        let (file, _) = limits::open_regular(arg).map_err(|e| fail(e.to_string()))?;
        file.take(limit + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| fail(format!("cannot be read: {e}")))?;
    }
    if bytes.len() as u64 > limit {
        return Err(fail(format!(
            "is larger than {limit} bytes; a live dump may hold {} bytes, all of them together {} \
             (dump only the chart's kinds in the release namespace, as the README shows)",
            limits::MAX_LIVE_FILE_BYTES,
            limits::MAX_LIVE_TOTAL_BYTES
        )));
    }
    *budget -= bytes.len() as u64;
    let text = limits::text_of(bytes).map_err(|(line, column)| AdoptError::Live {
        file: format!("{shown}:{line}:{column}"),
        message: "not UTF-8 text (YAML files must be UTF-8)".into(),
    })?;
    Ok((shown, text))
}

/// The objects of a dump: a stream of objects, or `kind: List` wrappers (what `kubectl get -o
/// yaml` prints) whose `items` are objects. The text may build what `bounds` allows one text.
pub fn objects_of(shown: &str, text: &str, namespace: &str) -> Result<Vec<Object>, AdoptError> {
    objects_within(shown, text, namespace, &mut bounds::Budget::default())
}

/// `objects_of`, taking what the text builds from `budget` (shared by the dumps of one run); the
/// bounds are checked on the text before it is parsed.
pub fn objects_within(
    shown: &str,
    text: &str,
    namespace: &str,
    budget: &mut bounds::Budget,
) -> Result<Vec<Object>, AdoptError> {
    let fail = |message: String| AdoptError::Live {
        file: shown.to_string(),
        message,
    };
    bounds::scan(text, budget).map_err(fail)?;
    let docs =
        cilium_cmp_yaml::yaml::parse_stream_values(text).map_err(|e| AdoptError::LiveSyntax {
            span: Box::new(e.span_in(shown, text)),
            message: e.message().to_string(),
        })?;
    if docs.is_empty() {
        return Err(fail(
            "holds no objects (expected the output of `helm get manifest` or `kubectl get -o yaml`)"
                .into(),
        ));
    }
    objects_from_documents(shown, docs, namespace)
}

/// The objects of documents already read (a List's items each on its own), keyed with
/// `namespace` where an object names none: what `objects_within` does once the text is parsed,
/// for streams that are already trees (the diff's own renders, `output::Keep::Objects`).
pub fn objects_from_documents(
    shown: &str,
    docs: Vec<Value>,
    namespace: &str,
) -> Result<Vec<Object>, AdoptError> {
    let fail = |message: String| AdoptError::Live {
        file: shown.to_string(),
        message,
    };
    let mut out = Vec::new();
    for (i, doc) in docs.into_iter().enumerate() {
        let at = format!("document {}", i + 1);
        if is_list(&doc) {
            let kind = kind_of(&doc);
            // The items are moved out of the document, never copied: a dump is most of a run's
            // memory.
            let Value::Object(mut map) = doc else {
                return Err(fail(format!(
                    "{at} is a {kind} without an `items` list of objects"
                )));
            };
            let Some(Value::Array(items)) = map.remove("items") else {
                return Err(fail(format!(
                    "{at} is a {kind} without an `items` list of objects"
                )));
            };
            for (j, item) in items.into_iter().enumerate() {
                let at = format!("{at}, item {}", j + 1);
                if is_list(&item) {
                    return Err(fail(format!("{at} is a List inside a List")));
                }
                out.push(object(item, namespace, shown).map_err(|m| fail(format!("{at}: {m}")))?);
            }
        } else {
            out.push(object(doc, namespace, shown).map_err(|m| fail(format!("{at}: {m}")))?);
        }
    }
    Ok(out)
}

fn kind_of(v: &Value) -> String {
    v.get("kind")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string()
}

/// `List`, or a typed list such as `DaemonSetList` (what the API returns for a collection).
fn is_list(v: &Value) -> bool {
    let kind = kind_of(v);
    kind == "List" || (kind.ends_with("List") && v.get("items").is_some())
}

/// Checks that `value` is a Kubernetes object and finds its key.
pub fn object(value: Value, namespace: &str, source: &str) -> Result<Object, String> {
    let Value::Object(map) = &value else {
        return Err(
            "not a Kubernetes object (expected a mapping with apiVersion, kind and metadata.name)"
                .into(),
        );
    };
    let text = |key: &str| map.get(key).and_then(Value::as_str).unwrap_or("");
    let api_version = text("apiVersion").to_string();
    let kind = text("kind").to_string();
    let meta = map.get("metadata");
    let meta_text = |key: &str| {
        meta.and_then(|m| m.get(key))
            .and_then(Value::as_str)
            .unwrap_or("")
    };
    let name = meta_text("name").to_string();
    let mut missing = Vec::new();
    for (field, v) in [
        ("apiVersion", &api_version),
        ("kind", &kind),
        ("metadata.name", &name),
    ] {
        if v.is_empty() {
            missing.push(field);
        }
    }
    if !missing.is_empty() {
        return Err(format!(
            "not a Kubernetes object: it has no {} (every object needs apiVersion, kind and metadata.name)",
            missing.join(", ")
        ));
    }
    let group = match api_version.rsplit_once('/') {
        Some((g, _)) => g.to_string(),
        None => String::new(),
    };
    let namespace = if is_cluster_scoped(&kind) {
        None
    } else {
        match meta_text("namespace") {
            "" => Some(namespace.to_string()),
            ns => Some(ns.to_string()),
        }
    };
    Ok(Object {
        key: ObjectKey {
            group,
            kind,
            namespace,
            name,
        },
        api_version,
        in_manifest: (value.pointer("/metadata/uid").is_none()).then(|| source.to_string()),
        value,
        source: source.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_and_streams_give_the_same_objects() {
        let stream = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\napiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: b, namespace: x}\n";
        let list = "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: a}\n- apiVersion: apps/v1\n  kind: DaemonSet\n  metadata: {name: b, namespace: x}\n";
        let keys = |t: &str| {
            objects_of("f", t, "kube-system")
                .unwrap()
                .into_iter()
                .map(|o| o.key.to_string())
                .collect::<Vec<_>>()
        };
        assert_eq!(keys(stream), ["ConfigMap kube-system/a", "DaemonSet x/b"]);
        assert_eq!(keys(stream), keys(list));
    }

    #[test]
    fn cluster_scoped_objects_have_no_namespace() {
        let o = object(
            serde_json::json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "cilium"}}),
            "kube-system",
            "f",
        )
        .unwrap();
        assert_eq!(o.key.namespace, None);
        assert_eq!(o.key.group, "rbac.authorization.k8s.io");
    }

    #[test]
    fn bad_documents_are_named() {
        let err = objects_of("f", "- a\n- b\n", "ns").unwrap_err().to_string();
        assert!(
            err.contains("document 1") && err.contains("not a Kubernetes object"),
            "{err}"
        );
        let err = objects_of("f", "kind: List\nitems: [1, 2]\n", "ns")
            .unwrap_err()
            .to_string();
        assert!(err.contains("item 1"), "{err}");
        let err = objects_of("f", "apiVersion: v1\nkind: Secret\nmetadata: {}\n", "ns")
            .unwrap_err()
            .to_string();
        assert!(err.contains("metadata.name"), "{err}");
    }
}
