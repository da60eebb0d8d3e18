//! Reading a Talos machine config for `talos-check`: the inline manifests Talos applies again on
//! every `talosctl upgrade-k8s` and reconcile (siderolabs/talos#5640).
//!
//! Two shapes are read, as Talos writes them:
//!
//! - **A machine-config file** (`talosctl gen config`, `talosctl read /system/state/config.yaml`):
//!   one or more YAML documents separated by `---`; the `v1alpha1` document (`version: v1alpha1`,
//!   no `kind`) holds `cluster.inlineManifests`, a list of `name` and `contents`; the other
//!   documents (`apiVersion`/`kind`, e.g. `HostnameConfig`) hold no manifests
//!   (<https://www.talos.dev/v1.11/reference/configuration/> and
//!   pkg/machinery/config/types/v1alpha1/v1alpha1_types.go, `ClusterInlineManifest`).
//! - **`talosctl get machineconfig -o yaml`**: one document per node, `node`, `metadata` (type
//!   `MachineConfigs.config.talos.dev`, id `v1alpha1`) and `spec`. The spec is the config as the
//!   node stores it (pkg/machinery/resources/config/machine_config.go: the spec marshals as the
//!   config's own bytes): a mapping (the v1alpha1 document) or, when the config holds several
//!   documents, a string of the whole multi-document text; both are read.

use serde_json::Value;

/// The resource type of `talosctl get machineconfig` (Talos' `config.MachineConfigType`).
pub const MACHINE_CONFIG_TYPE: &str = "MachineConfigs.config.talos.dev";

/// One machine config found in the input: whose it is, and its inline manifests in order.
#[derive(Debug, Clone, PartialEq)]
pub struct MachineConfig {
    /// `node` of a `talosctl get` document (`172.20.0.2`); None for a machine-config file.
    pub node: Option<String>,
    /// `(name, contents)` of each `cluster.inlineManifests` entry.
    pub inline_manifests: Vec<(String, String)>,
}

/// The machine configs of `text`, one per node of a `talosctl get machineconfig` output or one
/// for a machine-config file. An error says what the text is not, for a message naming the file.
pub fn read(text: &str) -> Result<Vec<MachineConfig>, String> {
    let docs = cilium_cmp_yaml::yaml::parse_stream_values(text).map_err(|e| e.to_string())?;
    if docs.iter().any(is_resource) {
        return docs
            .iter()
            .enumerate()
            .filter(|(_, d)| !d.is_null())
            .map(|(i, d)| resource_config(i + 1, d))
            .collect();
    }
    Ok(vec![MachineConfig {
        node: None,
        inline_manifests: config_documents(&docs, "")?,
    }])
}

fn is_resource(doc: &Value) -> bool {
    doc.pointer("/metadata/type").and_then(Value::as_str) == Some(MACHINE_CONFIG_TYPE)
}

/// One document of `talosctl get machineconfig -o yaml`.
fn resource_config(n: usize, doc: &Value) -> Result<MachineConfig, String> {
    if !is_resource(doc) {
        return Err(format!(
            "document {n} is not a {MACHINE_CONFIG_TYPE} resource, while others are (expected the output of `talosctl get machineconfig -o yaml`)"
        ));
    }
    let node = doc.get("node").and_then(Value::as_str).map(str::to_string);
    let whose = match &node {
        Some(node) => format!(" (node {})", cilium_cmp_yaml::escape::text(node)),
        None => format!(" (document {n})"),
    };
    let inline_manifests = match doc.get("spec") {
        Some(Value::String(config)) => {
            let docs = cilium_cmp_yaml::yaml::parse_stream_values(config)
                .map_err(|e| format!("the spec{whose} is not YAML: {e}"))?;
            config_documents(&docs, &whose)?
        }
        Some(spec @ Value::Object(_)) => config_documents(std::slice::from_ref(spec), &whose)?,
        _ => {
            return Err(format!(
                "the resource{whose} has no spec holding a machine config (a mapping, or the config's text)"
            ))
        }
    };
    Ok(MachineConfig {
        node,
        inline_manifests,
    })
}

/// The inline manifests of a machine config's documents: those of its one v1alpha1 document.
fn config_documents(docs: &[Value], whose: &str) -> Result<Vec<(String, String)>, String> {
    let v1alpha1: Vec<&Value> = docs.iter().filter(|d| is_v1alpha1(d)).collect();
    match v1alpha1.as_slice() {
        [] => Err(format!(
            "no Talos v1alpha1 machine config{whose}: expected a document with `version: v1alpha1` and `machine`/`cluster` sections, or the output of `talosctl get machineconfig -o yaml`"
        )),
        [doc] => inline_manifests_of(doc, whose),
        _ => Err(format!(
            "{} v1alpha1 documents{whose}; a machine config holds one",
            v1alpha1.len()
        )),
    }
}

/// The v1alpha1 document: `version: v1alpha1` and no `kind` (the other documents have one).
fn is_v1alpha1(doc: &Value) -> bool {
    doc.is_object()
        && doc.get("kind").is_none()
        && (doc.get("version").and_then(Value::as_str) == Some("v1alpha1")
            || doc.get("machine").is_some()
            || doc.get("cluster").is_some())
}

pub(crate) fn inline_manifests_of(
    doc: &Value,
    whose: &str,
) -> Result<Vec<(String, String)>, String> {
    let Some(list) = doc.pointer("/cluster/inlineManifests") else {
        return Ok(Vec::new());
    };
    let Some(list) = list.as_array() else {
        if list.is_null() {
            return Ok(Vec::new());
        }
        return Err(format!(
            "cluster.inlineManifests{whose} is not a list (Talos expects a list of name and contents)"
        ));
    };
    list.iter()
        .enumerate()
        .map(|(i, m)| {
            let name = m.get("name").and_then(Value::as_str);
            let contents = m.get("contents").and_then(Value::as_str);
            match (name, contents) {
                (Some(name), Some(contents)) => Ok((name.to_string(), contents.to_string())),
                (Some(name), None) if m.get("contents").is_none_or(Value::is_null) => {
                    Ok((name.to_string(), String::new()))
                }
                _ => Err(format!(
                    "cluster.inlineManifests[{i}]{whose} needs a string `name` and a string `contents`"
                )),
            }
        })
        .collect()
}

/// The Cilium release a render is of: the chart label where an object carries it
/// (`helm.sh/chart: cilium-1.19.6`), else the tag of the agent's image (DaemonSet `cilium`,
/// container `cilium-agent`: `quay.io/cilium/cilium:v1.19.6@sha256:…`, the chart's default
/// `image.tag`). None when neither says (an image pinned by digest alone, say).
pub fn release_of(stream: &str) -> Option<String> {
    let docs = cilium_cmp_yaml::yaml::parse_stream_values(stream).ok()?;
    let label = docs.iter().find_map(|d| {
        d.pointer("/metadata/labels/helm.sh~1chart")
            .and_then(Value::as_str)
            .and_then(|c| c.strip_prefix("cilium-"))
            .map(str::to_string)
    });
    label.or_else(|| {
        let agent = docs.iter().find(|d| {
            d.get("kind").and_then(Value::as_str) == Some("DaemonSet")
                && d.pointer("/metadata/name").and_then(Value::as_str) == Some("cilium")
        })?;
        let containers = agent
            .pointer("/spec/template/spec/containers")?
            .as_array()?;
        let image = containers
            .iter()
            .find(|c| c.get("name").and_then(Value::as_str) == Some("cilium-agent"))?
            .get("image")?
            .as_str()?;
        let name = image.split('@').next()?;
        let (repo, tag) = name.rsplit_once(':')?;
        // A registry port (`host:5000/cilium`) is not a tag.
        (!tag.contains('/') && !repo.is_empty()).then(|| tag.trim_start_matches('v').to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "version: v1alpha1\nmachine:\n  type: controlplane\ncluster:\n  inlineManifests:\n    - name: cilium\n      contents: |\n        ---\n        kind: A\n---\napiVersion: v1alpha1\nkind: HostnameConfig\nhostname: cp-1\n";

    #[test]
    fn a_file_with_several_documents() {
        let c = read(FILE).unwrap();
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].node, None);
        assert_eq!(
            c[0].inline_manifests,
            vec![("cilium".to_string(), "---\nkind: A\n".to_string())]
        );
    }

    #[test]
    fn talosctl_get_with_a_mapping_and_with_text() {
        let mapping = "node: 10.5.0.2\nmetadata:\n    namespace: config\n    type: MachineConfigs.config.talos.dev\n    id: v1alpha1\nspec:\n    version: v1alpha1\n    cluster:\n        inlineManifests:\n            - name: cilium\n              contents: \"x\\n\"\n";
        let text = format!(
            "node: 10.5.0.3\nmetadata:\n    namespace: config\n    type: MachineConfigs.config.talos.dev\n    id: v1alpha1\nspec: {}\n",
            serde_json::to_string(FILE).unwrap()
        );
        let c = read(&format!("{mapping}---\n{text}")).unwrap();
        assert_eq!(c.len(), 2);
        assert_eq!(c[0].node.as_deref(), Some("10.5.0.2"));
        assert_eq!(c[0].inline_manifests[0].1, "x\n");
        assert_eq!(c[1].node.as_deref(), Some("10.5.0.3"));
        assert_eq!(c[1].inline_manifests[0].1, "---\nkind: A\n");
    }

    #[test]
    fn what_is_not_a_machine_config() {
        assert!(read("apiVersion: v1\nkind: ConfigMap\n")
            .unwrap_err()
            .contains("no Talos v1alpha1 machine config"));
        assert!(
            read("version: v1alpha1\ncluster:\n  inlineManifests: {a: 1}\n")
                .unwrap_err()
                .contains("is not a list")
        );
        assert!(
            read("version: v1alpha1\ncluster:\n  inlineManifests:\n    - contents: x\n")
                .unwrap_err()
                .contains("inlineManifests[0]")
        );
        assert!(read("version: v1alpha1\ncluster: [\n").is_err());
    }

    #[test]
    fn the_release_from_the_agent_image() {
        let ds = "kind: DaemonSet\nmetadata:\n  name: cilium\nspec:\n  template:\n    spec:\n      containers:\n        - name: cilium-agent\n          image: quay.io/cilium/cilium:v1.19.6@sha256:0d\n";
        assert_eq!(release_of(ds).as_deref(), Some("1.19.6"));
        let port = ds.replace(
            "quay.io/cilium/cilium:v1.19.6@sha256:0d",
            "reg:5000/cilium@sha256:0d",
        );
        assert_eq!(release_of(&port), None);
    }
}
