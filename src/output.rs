//! The canonical output: objects in Helm's install order, canonical YAML, and the content hash.

use serde_json::Value;
use sha2::{Digest, Sha256};

/// The annotation carrying the sha256 of the render it belongs to.
pub const CONTENT_HASH_ANNOTATION: &str = "cilium-cmp.io/content-hash";

/// Helm's install order by kind; kinds not listed (custom resources) come after all of these.
const KIND_ORDER: &[&str] = &[
    "PriorityClass",
    "Namespace",
    "NetworkPolicy",
    "ResourceQuota",
    "LimitRange",
    "PodSecurityPolicy",
    "PodDisruptionBudget",
    "ServiceAccount",
    "Secret",
    "SecretList",
    "ConfigMap",
    "StorageClass",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "CustomResourceDefinition",
    "ClusterRole",
    "ClusterRoleList",
    "ClusterRoleBinding",
    "ClusterRoleBindingList",
    "Role",
    "RoleList",
    "RoleBinding",
    "RoleBindingList",
    "Service",
    "DaemonSet",
    "Pod",
    "ReplicationController",
    "ReplicaSet",
    "Deployment",
    "HorizontalPodAutoscaler",
    "StatefulSet",
    "Job",
    "CronJob",
    "IngressClass",
    "Ingress",
    "APIService",
    "MutatingWebhookConfiguration",
    "ValidatingWebhookConfiguration",
];

fn field<'a>(o: &'a Value, path: &[&str]) -> &'a str {
    let mut node = o;
    for k in path {
        node = &node[*k];
    }
    node.as_str().unwrap_or("")
}

/// Sort key: install-order rank, then kind name (for custom resources), namespace, name.
fn order_key(o: &Value) -> (usize, String, String, String) {
    let kind = field(o, &["kind"]);
    let rank = KIND_ORDER
        .iter()
        .position(|k| *k == kind)
        .unwrap_or(KIND_ORDER.len());
    (
        rank,
        kind.to_string(),
        field(o, &["metadata", "namespace"]).to_string(),
        field(o, &["metadata", "name"]).to_string(),
    )
}

/// Canonical text of one object (without the `---` line): the form every checksum is taken of.
pub fn canonical(o: &Value) -> String {
    crate::yaml::to_string(o)
}

/// sha256 of an object's canonical text, as 64 lowercase hex digits.
pub fn sha256_hex(o: &Value) -> String {
    hex(&Sha256::digest(canonical(o).as_bytes()))
}

/// sha256 of arbitrary bytes, as lowercase hex.
pub fn sha256_bytes(b: &[u8]) -> String {
    hex(&Sha256::digest(b))
}

fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(DIGITS[(b >> 4) as usize] as char);
        s.push(DIGITS[(b & 15) as usize] as char);
    }
    s
}

fn stream(objects: &[Value]) -> String {
    let mut out = String::with_capacity(objects.len() * 2048);
    for o in objects {
        crate::yaml::write_document(&mut out, o);
    }
    out
}

/// Orders the objects, hashes the stream and stamps the hash; returns the final text.
pub fn finish(mut objects: Vec<Value>) -> String {
    objects.sort_by_cached_key(order_key);
    for o in objects.iter_mut() {
        remove_content_hash(o);
    }
    // Each document is written once, into the stream itself; only the one that carries the hash
    // is written again, in place of its unstamped text.
    let mut out = String::with_capacity(objects.len() * 4096);
    let mut bounds = Vec::with_capacity(objects.len() + 1);
    bounds.push(0);
    for o in &objects {
        crate::yaml::write_document(&mut out, o);
        bounds.push(out.len());
    }
    let hash = hex(&Sha256::digest(out.as_bytes()));
    let target = objects
        .iter()
        .position(|o| {
            field(o, &["kind"]) == "ConfigMap" && field(o, &["metadata", "name"]) == "cilium-config"
        })
        .unwrap_or(0);
    if let Some(o) = objects.get_mut(target) {
        // The objects are ours and done with: stamp in place rather than copy.
        stamp(o, &hash);
        let tail = out.split_off(bounds[target + 1]);
        out.truncate(bounds[target]);
        crate::yaml::write_document(&mut out, o);
        out.push_str(&tail);
    }
    out
}

fn stamp(o: &mut Value, hash: &str) {
    let Value::Object(obj) = o else { return };
    let meta = obj
        .entry("metadata")
        .or_insert_with(|| Value::Object(Default::default()));
    if let Value::Object(meta) = meta {
        let ann = meta
            .entry("annotations")
            .or_insert_with(|| Value::Object(Default::default()));
        if let Value::Object(ann) = ann {
            ann.insert(
                CONTENT_HASH_ANNOTATION.to_string(),
                Value::String(format!("sha256:{hash}")),
            );
        }
    }
}

fn remove_content_hash(o: &mut Value) {
    if let Some(Value::Object(ann)) = o.pointer_mut("/metadata/annotations") {
        ann.remove(CONTENT_HASH_ANNOTATION);
        if ann.is_empty() {
            if let Some(Value::Object(meta)) = o.pointer_mut("/metadata") {
                meta.remove("annotations");
            }
        }
    }
}

/// Checks a stream's content hash: removes the annotation, re-serialises canonically, compares.
/// Returns the hash stamped and the hash computed.
pub fn verify(text: &str) -> Result<(Option<String>, String), String> {
    let docs = crate::yaml::parse_stream(text).map_err(|e| e.to_string())?;
    let mut stamped = None;
    let mut objects = Vec::new();
    for mut d in docs.into_iter().map(|d| d.value) {
        if let Some(Value::String(h)) = d.pointer(&format!(
            "/metadata/annotations/{}",
            CONTENT_HASH_ANNOTATION.replace('/', "~1")
        )) {
            stamped = Some(h.trim_start_matches("sha256:").to_string());
        }
        remove_content_hash(&mut d);
        objects.push(d);
    }
    objects.sort_by_cached_key(order_key);
    Ok((stamped, sha256_bytes(stream(&objects).as_bytes())))
}
