//! The canonical output: objects in Helm's install order, canonical YAML, and the content hash.

use serde_json::Value;
use sha2::{Digest, Sha256};

/// The annotation carrying the sha256 of the render it belongs to.
pub const CONTENT_HASH_ANNOTATION: &str = "cilium-cmp.io/content-hash";

/// Helm's install order by kind (`pkg/release/v1/util/kind_sorter.go` `InstallOrder`); kinds not
/// listed (custom resources) come after all of these. The engine sorts by it too.
pub const KIND_ORDER: &[&str] = &[
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
fn order_key(o: &Value) -> (usize, &str, &str, &str) {
    let kind = field(o, &["kind"]);
    let rank = KIND_ORDER
        .iter()
        .position(|k| *k == kind)
        .unwrap_or(KIND_ORDER.len());
    (
        rank,
        kind,
        field(o, &["metadata", "namespace"]),
        field(o, &["metadata", "name"]),
    )
}

/// The objects in install order (a stable sort: equal keys keep the components' order).
fn sorted(objects: Vec<Value>) -> Vec<Value> {
    let keys: Vec<_> = objects.iter().map(order_key).collect();
    let mut order: Vec<usize> = (0..objects.len()).collect();
    order.sort_by_key(|&i| keys[i]);
    drop(keys);
    let mut slots: Vec<Option<Value>> = objects.into_iter().map(Some).collect();
    order.iter().filter_map(|&i| slots[i].take()).collect()
}

/// Canonical text of one object (without the `---` line): the form every checksum is taken of.
pub fn canonical(o: &Value) -> String {
    cilium_cmp_yaml::yaml::to_string(o)
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
        cilium_cmp_yaml::yaml::write_document(&mut out, o);
    }
    out
}

/// What stands in for the hash until it is known: the same length, so the text around it
/// never moves.
const PLACEHOLDER: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// What `finish` keeps besides the text: each object's digest (what `lock` records), or the
/// objects themselves (what `diff` compares), so that neither reads the stream back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keep {
    /// Only the text.
    Text,
    /// Each object's digest as well (`ObjectDigest`).
    Digests,
    /// Each object as a JSON tree as well.
    Objects,
}

/// One object of a finished stream and the sha256 of its canonical text, the content-hash
/// annotation left out (so that a change elsewhere does not show as a change of its carrier).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectDigest {
    /// The object's `kind`.
    pub kind: String,
    /// Its `metadata.namespace`, empty for a cluster-scoped object.
    pub namespace: String,
    /// Its `metadata.name`.
    pub name: String,
    /// 64 lowercase hex digits.
    pub sha256: String,
}

/// A finished render.
#[derive(Debug, Clone)]
pub struct Stream {
    /// The canonical stream, hash stamped.
    pub text: String,
    /// The content hash stamped (64 hex digits): None only when no object could carry it, a
    /// stream `verify` would reject.
    pub hash: Option<String>,
    /// Each object's digest, in stream order; empty unless `Keep::Digests` was asked for.
    pub digests: Vec<ObjectDigest>,
    /// The objects as written, without the content-hash annotation, in stream order; empty
    /// unless `Keep::Objects` was asked for.
    pub objects: Vec<Value>,
}

/// Orders the objects, hashes the stream and stamps the hash.
///
/// Each document is written once, the carrier of the hash with a placeholder in its place. The
/// hash is taken over the stream without the annotation (the lines that only it brings), as
/// `verify` recomputes it, and then written over the placeholder. An object's digest is taken of
/// the text just written, which is its canonical text; the carrier's, of its text before it was
/// stamped. The hash, the digests and the objects kept equal what reading the stream back gives
/// (`verify`, the lock's digests of older streams, `adopt::live`), as the writer and the reader
/// round-trip; the parity suite checks that on every scenario (`tests/it/support/helm_compare.rs`).
pub fn finish(objects: Vec<Value>, keep: Keep) -> Result<Stream, StampError> {
    let objects = sorted(objects);
    // cilium-config carries the hash; without it (a preflight-only render), the first object
    // that can: one whose annotations are a map or absent. The chart writes `annotations: null`
    // on some (the cilium-secrets Namespace), and turning that null into a map would change the
    // object.
    let target = objects
        .iter()
        .position(|o| {
            field(o, &["kind"]) == "ConfigMap"
                && field(o, &["metadata", "name"]) == "cilium-config"
                && can_carry(o)
        })
        .or_else(|| objects.iter().position(can_carry))
        .unwrap_or(0);
    let mut out = String::with_capacity(objects.len() * 4096);
    let mut carrier = 0..0;
    let mut stamped = false;
    let (mut digests, mut kept) = (Vec::new(), Vec::new());
    for (i, mut o) in objects.into_iter().enumerate() {
        remove_content_hash(&mut o);
        let start = out.len();
        let mut digest = None;
        if i == target {
            if keep == Keep::Digests {
                digest = Some(sha256_hex(&o));
            }
            stamped = stamp(&mut o, PLACEHOLDER);
        }
        // Written and dropped at once, while its memory is still in cache.
        cilium_cmp_yaml::yaml::write_document(&mut out, &o);
        if i == target {
            carrier = start..out.len();
        }
        match keep {
            Keep::Text => {}
            Keep::Digests => {
                // The document's text after its `---` line is its canonical text.
                let digest =
                    digest.unwrap_or_else(|| hex(&Sha256::digest(&out.as_bytes()[start + 4..])));
                digests.push(ObjectDigest {
                    kind: field(&o, &["kind"]).to_string(),
                    namespace: field(&o, &["metadata", "namespace"]).to_string(),
                    name: field(&o, &["metadata", "name"]).to_string(),
                    sha256: digest,
                });
            }
            Keep::Objects => {
                if i == target {
                    remove_content_hash(&mut o);
                }
                kept.push(o);
            }
        }
    }
    // Only a carrier whose metadata or annotations are no map is left unstamped.
    let hash = if stamped {
        Some(write_hash(&mut out, carrier)?)
    } else {
        None
    };
    Ok(Stream {
        text: out,
        hash,
        digests,
        objects: kept,
    })
}

/// The stamped placeholder was not found where the carrier was written: the stream would carry
/// an all-zero hash that `verify` rejects, so no stream is returned.
#[derive(Debug, thiserror::Error)]
#[error("internal error: the content-hash annotation was not found in the written {carrier}; no stream is printed rather than one with a placeholder hash")]
pub struct StampError {
    carrier: String,
}

/// Hashes the stream without the annotation's lines and writes the hash over the placeholder in
/// the carrier (`out[carrier]`); returns the hash.
fn write_hash(out: &mut String, carrier: std::ops::Range<usize>) -> Result<String, StampError> {
    let Some((from, to, digits)) = annotation_lines(&out[carrier.clone()]) else {
        let first = out[carrier].lines().find(|l| l.starts_with("kind:"));
        return Err(StampError {
            carrier: first.unwrap_or("document").to_string(),
        });
    };
    let (from, to, digits) = (
        carrier.start + from,
        carrier.start + to,
        carrier.start + digits,
    );
    let mut hasher = Sha256::new();
    hasher.update(&out.as_bytes()[..from]);
    hasher.update(&out.as_bytes()[to..]);
    let hash = hex(&hasher.finalize());
    out.replace_range(digits..digits + hash.len(), &hash);
    Ok(hash)
}

/// In one written document stamped with the placeholder: the byte range of the lines the
/// annotation alone brings (its own, and `annotations:` when it is the only one), and where the
/// placeholder's digits start. Found by the document's structure (top-level `metadata:`, its
/// `annotations:`, the keys at that level), so text inside values can never be taken for it.
fn annotation_lines(doc: &str) -> Option<(usize, usize, usize)> {
    let ours = format!("    {CONTENT_HASH_ANNOTATION}: sha256:{PLACEHOLDER}");
    // (start, line) of every line.
    let mut lines = doc
        .split_inclusive('\n')
        .scan(0, |at, line| {
            let start = *at;
            *at += line.len();
            Some((start, line.trim_end_matches('\n')))
        })
        .skip_while(|(_, line)| *line != "metadata:")
        .skip(1)
        .take_while(|(_, line)| line.starts_with("  "))
        .skip_while(|(_, line)| *line != "  annotations:");
    let (parent, _) = lines.next()?;
    let (mut found, mut keys) = (None, 0);
    for (start, line) in lines.take_while(|(_, line)| line.starts_with("    ")) {
        // Deeper lines continue a value; lines at this depth are keys.
        if line.as_bytes().get(4) == Some(&b' ') {
            continue;
        }
        keys += 1;
        if line == ours {
            found = Some((start, start + line.len() + 1));
        }
    }
    let (from, to) = found?;
    let digits = to - 1 - PLACEHOLDER.len();
    Some(if keys == 1 {
        (parent, to, digits)
    } else {
        (from, to, digits)
    })
}

/// Whether `stamp` can put the hash on `o`: an object whose metadata is a map or absent, and
/// whose annotations are a map or absent.
fn can_carry(o: &Value) -> bool {
    let Value::Object(obj) = o else { return false };
    match obj.get("metadata") {
        None => true,
        Some(Value::Object(meta)) => {
            matches!(meta.get("annotations"), None | Some(Value::Object(_)))
        }
        Some(_) => false,
    }
}

/// Puts the hash annotation on `o`; false where its metadata or annotations are no map.
fn stamp(o: &mut Value, hash: &str) -> bool {
    let Value::Object(obj) = o else { return false };
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
            return true;
        }
    }
    false
}

/// Takes the content-hash annotation (and an annotations map it leaves empty) off an object.
pub fn remove_content_hash(o: &mut Value) {
    let Some(Value::Object(meta)) = o.get_mut("metadata") else {
        return;
    };
    let Some(Value::Object(ann)) = meta.get_mut("annotations") else {
        return;
    };
    ann.remove(CONTENT_HASH_ANNOTATION);
    if ann.is_empty() {
        meta.remove("annotations");
    }
}

/// Checks a stream's content hash: removes the annotation, re-serialises canonically, compares.
/// Returns the hash stamped and the hash computed.
pub fn verify(text: &str) -> Result<(Option<String>, String), cilium_cmp_yaml::yaml::ReadError> {
    let docs = cilium_cmp_yaml::yaml::parse_stream(text)?;
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
    let objects = sorted(objects);
    Ok((stamped, sha256_bytes(stream(&objects).as_bytes())))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn config_map(name: &str, annotations: Option<Value>) -> Value {
        let mut o = json!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": "kube-system", "labels": {"a": "b"}},
            "data": {"k": "v"},
        });
        if let Some(a) = annotations {
            o["metadata"]["annotations"] = a;
        }
        o
    }

    fn objects(carrier_annotations: Option<Value>) -> Vec<Value> {
        vec![
            json!({"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "cilium"}}),
            config_map("cilium-config", carrier_annotations),
            json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "cilium"}}),
        ]
    }

    /// The stamped hash is the one `verify` recomputes: the hash of the stream without it.
    #[test]
    fn the_stamped_hash_is_the_hash_of_the_unstamped_stream() {
        let cases = [
            None,
            Some(json!({"z-last": "1"})),
            Some(json!({"a-first": "1"})),
            Some(json!({"a-first": "1", "z-last": "2"})),
            // A stale stamp of ours is replaced, not kept.
            Some(json!({CONTENT_HASH_ANNOTATION: "sha256:stale"})),
        ];
        for annotations in cases {
            let text = finish(objects(annotations.clone()), Keep::Text)
                .unwrap()
                .text;
            let (stamped, computed) = verify(&text).unwrap();
            assert_eq!(
                stamped.as_deref(),
                Some(computed.as_str()),
                "{annotations:?}"
            );
            assert_eq!(text.matches(CONTENT_HASH_ANNOTATION).count(), 1);
            let mut unstamped = sorted(objects(annotations));
            unstamped.iter_mut().for_each(remove_content_hash);
            assert_eq!(computed, sha256_bytes(stream(&unstamped).as_bytes()));
        }
    }

    /// The hash and the digests `finish` takes while writing are those of the stream read back.
    #[test]
    fn the_hash_and_digests_taken_while_writing_are_those_of_the_stream_read_back() {
        for annotations in [None, Some(json!({"a-first": "1"}))] {
            let objs = || {
                let mut objs = objects(annotations.clone());
                objs.push(json!({"kind": "Namespace", "metadata": {"name": "n"}}));
                objs
            };
            let s = finish(objs(), Keep::Digests).unwrap();
            let (stamped, computed) = verify(&s.text).unwrap();
            assert_eq!(s.hash.as_deref(), Some(computed.as_str()));
            assert_eq!(stamped, s.hash);
            let read: Vec<ObjectDigest> = cilium_cmp_yaml::yaml::parse_stream(&s.text)
                .unwrap()
                .into_iter()
                .map(|d| {
                    let mut o = d.value;
                    remove_content_hash(&mut o);
                    ObjectDigest {
                        kind: field(&o, &["kind"]).to_string(),
                        namespace: field(&o, &["metadata", "namespace"]).to_string(),
                        name: field(&o, &["metadata", "name"]).to_string(),
                        sha256: sha256_hex(&o),
                    }
                })
                .collect();
            assert_eq!(s.digests, read);
            assert_eq!(s.digests[0].kind, "Namespace");
            assert!(s.objects.is_empty());
            let kept = finish(objs(), Keep::Objects).unwrap();
            assert_eq!(kept.text, s.text);
            let read: Vec<Value> = cilium_cmp_yaml::yaml::parse_stream_values(&s.text)
                .unwrap()
                .into_iter()
                .map(|mut o| {
                    remove_content_hash(&mut o);
                    o
                })
                .collect();
            assert_eq!(kept.objects, read);
        }
        let plain = finish(objects(None), Keep::Text).unwrap();
        assert!(plain.digests.is_empty() && plain.objects.is_empty());
    }

    /// Text inside values that looks like the stamped line is never taken for it.
    #[test]
    fn the_hash_goes_where_the_annotation_is_not_where_text_looks_like_it() {
        let decoy = format!("x\n{CONTENT_HASH_ANNOTATION}: sha256:{PLACEHOLDER}\ny\n");
        let mut carrier = config_map("cilium-config", Some(json!({"a-first": decoy})));
        carrier["data"]["k"] = json!(decoy);
        let mut objects = objects(None);
        objects[1] = carrier.clone();
        let text = finish(objects, Keep::Text).unwrap().text;
        let (stamped, computed) = verify(&text).unwrap();
        assert_eq!(stamped, Some(computed));
        // The decoys were left as they were, in data and in the other annotation.
        assert_eq!(text.matches(PLACEHOLDER).count(), 2, "{text}");
        stamp(&mut carrier, PLACEHOLDER);
        let doc = cilium_cmp_yaml::yaml::to_string(&carrier);
        let (from, to, digits) = annotation_lines(&doc).unwrap();
        assert!(doc[from..to].starts_with("    cilium-cmp.io/content-hash: sha256:"));
        assert!(
            doc[..from].contains("metadata:\n  annotations:\n    a-first:"),
            "{doc}"
        );
        assert_eq!(&doc[digits..digits + PLACEHOLDER.len()], PLACEHOLDER);
    }

    /// Without cilium-config, an object whose annotations are null is passed over for the next.
    #[test]
    fn an_object_with_null_annotations_is_passed_over_for_the_stamp() {
        let s = finish(
            vec![
                json!({"kind": "Namespace", "metadata": {"name": "n", "annotations": null}}),
                json!({"kind": "ServiceAccount", "metadata": {"name": "a"}}),
            ],
            Keep::Text,
        )
        .unwrap();
        let (stamped, computed) = verify(&s.text).unwrap();
        assert_eq!(stamped.as_deref(), Some(computed.as_str()));
        assert_eq!(s.hash, stamped);
        let first = s.text.split("\n---\n").next().unwrap();
        assert!(first.contains("annotations: null"), "{}", s.text);
    }

    /// A carrier whose metadata is no map cannot carry the hash: the stream is left unstamped.
    #[test]
    fn a_carrier_without_a_metadata_map_is_left_unstamped() {
        let text = finish(
            vec![json!({"kind": "Namespace", "metadata": "odd"})],
            Keep::Text,
        )
        .unwrap()
        .text;
        assert_eq!(verify(&text).unwrap().0, None);
        assert!(!text.contains(PLACEHOLDER));
    }

    #[test]
    fn without_cilium_config_the_first_object_carries_the_hash() {
        let mut objs = objects(None);
        objs.remove(1);
        objs.push(config_map("other", None));
        let text = finish(objs, Keep::Text).unwrap().text;
        let first = text.split("\n---\n").next().unwrap();
        assert!(first.contains("kind: ServiceAccount"), "{text}");
        assert!(first.contains(CONTENT_HASH_ANNOTATION), "{text}");
        let (stamped, computed) = verify(&text).unwrap();
        assert_eq!(stamped, Some(computed));
    }

    #[test]
    fn objects_are_in_install_order_and_stable_among_equals() {
        let text = finish(
            vec![
                json!({"kind": "Deployment", "metadata": {"name": "b"}}),
                json!({"kind": "ServiceAccount", "metadata": {"name": "z"}}),
                json!({"kind": "Deployment", "metadata": {"name": "a"}}),
                json!({"kind": "Widget", "metadata": {"name": "a"}, "spec": 1}),
                json!({"kind": "Widget", "metadata": {"name": "a"}, "spec": 2}),
            ],
            Keep::Text,
        )
        .unwrap()
        .text;
        let kinds: Vec<&str> = text
            .lines()
            .filter(|l| l.starts_with("kind:") || l.starts_with("spec:"))
            .collect();
        assert_eq!(
            kinds,
            [
                "kind: ServiceAccount",
                "kind: Deployment",
                "kind: Deployment",
                "kind: Widget",
                "spec: 1",
                "kind: Widget",
                "spec: 2"
            ]
        );
        assert!(text.find("name: a").unwrap() < text.find("name: b").unwrap());
    }

    /// A stamped carrier in which the placeholder line cannot be found is an error, never a
    /// stream with the all-zero placeholder left in it.
    #[test]
    fn a_stamp_that_cannot_be_found_is_an_error() {
        let mut out = String::from("kind: ConfigMap\nmetadata:\n  name: cilium-config\n");
        let all = 0..out.len();
        let err = write_hash(&mut out, all).unwrap_err();
        assert!(err.to_string().contains("kind: ConfigMap"), "{err}");
    }
}
