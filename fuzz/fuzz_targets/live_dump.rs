//! Any text as an `adopt-check --live` dump: its objects or a clear error, never a panic; and
//! the same bytes through the comparison and ownership code a dump reaches: against a fixed small
//! render (list items matched by merge key, live-only items, managedFields), as render and dump
//! of itself, and as the `metadata.managedFields` of an object.
#![no_main]

use libfuzzer_sys::fuzz_target;

/// A small render with the shapes the comparison treats specially: a keyed container list,
/// env vars by name, ports by number and protocol, an atomic argument list, a quantity.
const RENDER: &str = r#"apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: cilium
  namespace: kube-system
spec:
  template:
    spec:
      containers:
      - name: cilium-agent
        args: ["--config-dir=/tmp/cilium/config-map"]
        env:
        - {name: K8S_NODE_NAME, valueFrom: {fieldRef: {fieldPath: spec.nodeName}}}
        - {name: A, value: "1"}
        - {name: A, value: "2"}
        ports:
        - {containerPort: 4244, protocol: TCP}
        - {containerPort: 4244, protocol: UDP}
        resources: {limits: {memory: 1Gi}}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: cilium-config
  namespace: kube-system
data: {debug: "false"}
"#;

fuzz_target!(|text: &str| {
    let live = "live.yaml".to_string();
    let _ = cilium_cmp_gitops::adopt::live::objects_of("live.yaml", text, "kube-system");
    // The fixed render against the bytes as a dump: keyed lists, ownership and fate.
    let _ = cilium_cmp_gitops::adopt::check(
        RENDER,
        &[(live.clone(), text.into())],
        "kube-system",
        "cilium",
    );
    // The whole comparison, managedFields included, on the text as render and as live dump.
    let _ = cilium_cmp_gitops::adopt::check(text, &[(live, text.into())], "kube-system", "cilium");
    // The bytes as managedFields: parsed, and every path of the render looked up in them.
    if let Ok(docs) = cilium_cmp_yaml::yaml::read::parse_stream_values(text) {
        for doc in docs.into_iter().take(4) {
            let object = serde_json::json!({"metadata": {"managedFields": doc}});
            if let Ok(Some(entries)) = cilium_cmp_gitops::adopt::ownership::entries(&object) {
                let render = cilium_cmp_gitops::adopt::live::objects_of("r", RENDER, "kube-system")
                    .expect("the fixed render reads");
                let mut steps = 100_000;
                for d in cilium_cmp_gitops::adopt::compare::differences(
                    &render[0].value,
                    &serde_json::json!({}),
                ) {
                    let value = d.render.unwrap_or_default();
                    if cilium_cmp_gitops::adopt::ownership::owners(&entries, &d.path, &value, &mut steps)
                        .is_err()
                    {
                        break;
                    }
                }
            }
        }
    }
});
