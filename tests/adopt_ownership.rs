//! adopt-check against live dumps built the way the API server writes them: Helm's references of
//! every scenario on 1.18, 1.19 and 1.20, with the API server's defaults filled in and the
//! managedFields a `helm` Update, a `kubectl-client-side-apply` Update or an `argocd-controller`
//! Apply leaves (an Update owns what it sent plus what the API server defaulted on that request;
//! an Apply owns only what it applied: `src/adopt/defaults.rs` cites the source). No false alarm
//! on any of them; a value the old release set and the render drops is left behind, never a
//! default; Argo CD's client-side-apply migration turns it into a removal.
#[path = "support/harness.rs"]
mod harness;

fn main() -> std::process::ExitCode {
    harness::run(
        file!(),
        vec![
            harness::test(
                "realistic_dumps_of_every_reference_give_no_false_alarm",
                realistic_dumps_of_every_reference_give_no_false_alarm,
            )
            .shared("cilium-reference/README.md"),
            harness::test(
                "a_dropped_value_is_left_behind_never_a_default",
                a_dropped_value_is_left_behind_never_a_default,
            )
            .shared("cilium-reference/README.md"),
            harness::test(
                "every_zero_value_of_every_render_is_classified",
                every_zero_value_of_every_render_is_classified,
            )
            .shared("cilium-reference/README.md"),
            harness::test(
                "zero_values_of_plain_fields_are_no_difference",
                zero_values_of_plain_fields_are_no_difference,
            ),
            harness::test(
                "the_ingress_endpoints_are_excluded_on_every_release",
                the_ingress_endpoints_are_excluded_on_every_release,
            )
            .shared("cilium-reference/README.md"),
            harness::test(
                "config_read_at_start_on_every_release",
                config_read_at_start_on_every_release,
            )
            .shared("cilium-reference/README.md"),
            harness::test(
                "a_rollout_restart_stamp_is_harmless",
                a_rollout_restart_stamp_is_harmless,
            )
            .shared("cilium-reference/README.md"),
            harness::test(
                "a_field_only_argo_cd_applied_is_removed_by_the_sync",
                a_field_only_argo_cd_applied_is_removed_by_the_sync,
            )
            .shared("cilium-reference/README.md"),
        ],
    )
}

use cilium_cmp::adopt::{self, defaults, ownership, Class, SyncModel};
use serde_json::{json, Value};

const VERSIONS: &[&str] = &["1.18.12", "1.19.6", "1.20.0"];

/// How the objects came to be in the cluster.
#[derive(Clone, Copy, Debug)]
enum Writer {
    /// `helm install` (Helm 3): an Update with the manager name from Helm's user agent.
    Helm,
    /// `kubectl apply` client-side: an Update, plus the last-applied annotation.
    KubectlClientSide,
    /// A server-side apply by Argo CD: owns what it applied, not the defaults.
    ArgoServerSide,
    /// `kubectl get -o yaml` without `--show-managed-fields`.
    NoManagedFields,
}

/// `object` as `kubectl get --show-managed-fields -o yaml` returns it after `writer` created it.
fn as_stored(object: &Value, writer: Writer) -> Value {
    let mut stored = object.clone();
    defaults::apply(&mut stored);
    let (manager, operation, fields) = match writer {
        Writer::Helm => ("helm", "Update", ownership::fields_v1_of(&stored)),
        Writer::KubectlClientSide => (
            "kubectl-client-side-apply",
            "Update",
            ownership::fields_v1_of(&stored),
        ),
        Writer::ArgoServerSide | Writer::NoManagedFields => (
            "argocd-controller",
            "Apply",
            ownership::fields_v1_of(object),
        ),
    };
    let meta = stored["metadata"].as_object_mut().expect("metadata");
    meta.insert("uid".into(), json!("0c6e1a52-1f6d-4b55-9a0f-5d2b8f1e7c11"));
    meta.insert("resourceVersion".into(), json!("4180233"));
    meta.insert("creationTimestamp".into(), json!("2026-01-12T09:14:03Z"));
    if !matches!(writer, Writer::NoManagedFields) {
        meta.insert(
            "managedFields".into(),
            json!([{"apiVersion": object["apiVersion"], "fieldsType": "FieldsV1",
                "fieldsV1": fields, "manager": manager, "operation": operation,
                "time": "2026-01-12T09:14:03Z"},
                // The workload controllers write status through the subresource.
                {"apiVersion": object["apiVersion"], "fieldsType": "FieldsV1",
                "fieldsV1": {"f:status": {"f:observedGeneration": {}}},
                "manager": "kube-controller-manager", "operation": "Update",
                "subresource": "status", "time": "2026-01-12T09:14:05Z"}]),
        );
    }
    if matches!(writer, Writer::KubectlClientSide) {
        let annotations = meta.entry("annotations").or_insert_with(|| json!({}));
        if !annotations.is_object() {
            *annotations = json!({});
        }
        let annotations = annotations.as_object_mut().unwrap();
        annotations.insert(
            "kubectl.kubernetes.io/last-applied-configuration".into(),
            json!(object.to_string()),
        );
    }
    // Set after the field manager ran (registry, controllers): owned by nobody.
    match stored["kind"].as_str() {
        Some("Service") => {
            // A headless Service keeps its `None`.
            let ip = stored["spec"]["clusterIP"]
                .as_str()
                .unwrap_or("10.96.112.7")
                .to_string();
            stored["spec"]["clusterIP"] = json!(ip);
            stored["spec"]["clusterIPs"] = json!([ip]);
            stored["spec"]["ipFamilies"] = json!(["IPv4"]);
            stored["spec"]["ipFamilyPolicy"] = json!("SingleStack");
        }
        Some("DaemonSet" | "Deployment") => {
            stored["status"] = json!({"observedGeneration": 1});
        }
        _ => {}
    }
    stored
}

fn dump(objects: &[Value], writer: Writer) -> String {
    let items: Vec<Value> = objects.iter().map(|o| as_stored(o, writer)).collect();
    cilium_cmp::yaml::to_string(&json!({"apiVersion": "v1", "kind": "List", "items": items}))
}

/// The reference of `scenario` for `version` among `references()`.
fn reference<'a>(
    refs: &'a [(String, String, String)],
    version: &str,
    scenario: &str,
) -> &'a (String, String, String) {
    let name = format!("{version}/{scenario}");
    refs.iter()
        .find(|(n, _, _)| *n == name)
        .unwrap_or_else(|| panic!("no reference {name}"))
}

fn references() -> Vec<(String, String, String)> {
    let readme = harness::shared("cilium-reference/README.md");
    let rendered = readme.parent().unwrap().join("rendered");
    let scenarios = readme.parent().unwrap().join("scenarios");
    let mut out = Vec::new();
    for version in VERSIONS {
        let dir = rendered.join(version);
        let mut names: Vec<_> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| e.unwrap().path())
            .collect();
        names.sort();
        for file in names {
            let name = file.file_stem().unwrap().to_string_lossy().to_string();
            let scenario =
                std::fs::read_to_string(scenarios.join(format!("{name}.yaml"))).unwrap_or_default();
            let ns = cilium_cmp::yaml::parse_values(&scenario)
                .ok()
                .and_then(|d| d.value["namespace"].as_str().map(String::from))
                .unwrap_or_else(|| "kube-system".into());
            out.push((
                format!("{version}/{name}"),
                ns,
                std::fs::read_to_string(&file).unwrap(),
            ));
        }
    }
    assert!(out.len() >= 60, "only {} references", out.len());
    out
}

fn objects(text: &str) -> Vec<Value> {
    cilium_cmp::yaml::parse_stream_values(text)
        .unwrap()
        .into_iter()
        .filter(|o| o.is_object())
        .collect()
}

/// Every reference of every release, dumped as each writer leaves it, against itself: nothing
/// is left behind, changed or removed; only defaults and server fields are "only live".
fn realistic_dumps_of_every_reference_give_no_false_alarm() {
    let refs = references();
    let mut defaults_seen = 0;
    for (name, ns, text) in &refs {
        let objs = objects(text);
        for writer in [
            Writer::Helm,
            Writer::KubectlClientSide,
            Writer::ArgoServerSide,
            Writer::NoManagedFields,
        ] {
            let live = dump(&objs, writer);
            let report = adopt::check(text, &[("live.yaml".into(), live)], ns, "cilium")
                .unwrap_or_else(|e| panic!("{name} {writer:?}: {e}"));
            for o in &report.objects {
                assert!(
                    matches!(o.class, Class::Identical | Class::ToolingOnly),
                    "{name} {writer:?}: {} is {:?}: {:?} {:?}",
                    o.key,
                    o.class,
                    o.findings
                        .iter()
                        .map(|f| f.difference.path.to_string())
                        .collect::<Vec<_>>(),
                    o.left_behind
                        .iter()
                        .map(|f| format!("{} {:?}", f.path, f.owners))
                        .collect::<Vec<_>>()
                );
                defaults_seen += o.live_only.len();
            }
            assert!(!report.disruptive(), "{name} {writer:?}");
            assert_eq!(
                report.warnings.is_empty(),
                !matches!(writer, Writer::NoManagedFields),
                "{name} {writer:?}: {:?}",
                report.warnings
            );
        }
    }
    assert!(
        defaults_seen > 1000,
        "the dumps hold defaults: {defaults_seen}"
    );
}

/// The agent's container in a reference, given a memory limit as `resources.limits.memory: 1Gi`
/// in the values puts it (chart template `cilium-agent/daemonset.yaml`: `.Values.resources`).
fn with_memory_limit(objs: &[Value]) -> Vec<Value> {
    let mut objs = objs.to_vec();
    let agent = objs
        .iter_mut()
        .find(|o| o["kind"] == "DaemonSet" && o["metadata"]["name"] == "cilium")
        .expect("the agent");
    let container = agent["spec"]["template"]["spec"]["containers"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|c| c["name"] == "cilium-agent")
        .unwrap();
    container["resources"] = json!({"limits": {"memory": "1Gi"}});
    objs
}

const MEMORY: &str = "spec.template.spec.containers[\"cilium-agent\"].resources.limits.memory";

/// The case, on every release: the old release set a memory limit the render drops.
/// From a manifest export, a Helm-owned cluster dump, a kubectl one and one without
/// managedFields it is left behind (never a default); with Argo CD's migration of the manager
/// that owns it, the first sync removes it and the agent restarts.
fn a_dropped_value_is_left_behind_never_a_default() {
    let refs = references();
    for version in VERSIONS {
        let (name, ns, text) = reference(&refs, version, "hubble-full");
        let live_objs = with_memory_limit(&objects(text));
        let manifest = live_objs
            .iter()
            .map(cilium_cmp::yaml::to_string)
            .collect::<Vec<_>>()
            .join("---\n");
        let cases = [
            (
                "manifest",
                manifest,
                "manifest export",
                SyncModel::default(),
            ),
            (
                "helm",
                dump(&live_objs, Writer::Helm),
                "helm (Update)",
                SyncModel::default(),
            ),
            (
                "kubectl",
                dump(&live_objs, Writer::KubectlClientSide),
                "kubectl-client-side-apply (Update)",
                // Argo CD's default migration names kubectl's manager, not Helm's.
                SyncModel {
                    migrated_manager: Some("kubectl-client-side-apply".into()),
                },
            ),
            (
                "no managedFields",
                dump(&live_objs, Writer::NoManagedFields),
                "no managedFields",
                SyncModel::default(),
            ),
        ];
        for (what, live, owner, sync) in cases {
            let report =
                adopt::check_with(text, &[("live.yaml".into(), live)], ns, "cilium", &sync)
                    .unwrap();
            let agent = report
                .objects
                .iter()
                .find(|o| o.key.kind == "DaemonSet" && o.key.name == "cilium")
                .unwrap();
            if what == "kubectl" {
                // Migrated: the first sync removes it, and that restarts the agent.
                let removed = agent
                    .findings
                    .iter()
                    .find(|f| f.difference.path.to_string() == MEMORY)
                    .unwrap_or_else(|| panic!("{name}: {agent:?}"));
                assert_eq!(
                    removed.removed_by.as_deref(),
                    Some("migrated from manager kubectl-client-side-apply")
                );
                assert_eq!(agent.class, Class::RestartsPods);
                assert!(report.disruptive());
                continue;
            }
            assert!(
                !agent.live_only.iter().any(|p| p == MEMORY),
                "{name} {what}: a left-behind field is reported as a default"
            );
            let behind: Vec<String> = agent
                .left_behind
                .iter()
                .map(|f| f.path.to_string())
                .collect();
            assert_eq!(behind, [MEMORY], "{name} {what}");
            assert!(
                agent.left_behind[0].owners.join(" ").contains(owner),
                "{name} {what}: {:?}",
                agent.left_behind[0].owners
            );
            assert_eq!(agent.class, Class::LeftBehind, "{name} {what}");
            assert!(report.disruptive(), "{name} {what}: exit 3");
        }
        // Migrating `helm` (the manager that owns it) removes it too.
        let report = adopt::check_with(
            text,
            &[("live.yaml".into(), dump(&live_objs, Writer::Helm))],
            ns,
            "cilium",
            &SyncModel {
                migrated_manager: Some("helm".into()),
            },
        )
        .unwrap();
        let agent = report
            .objects
            .iter()
            .find(|o| o.key.kind == "DaemonSet" && o.key.name == "cilium")
            .unwrap();
        assert!(agent.left_behind.is_empty(), "{name}");
        assert!(agent
            .findings
            .iter()
            .any(|f| f.removed_by.as_deref() == Some("migrated from manager helm")));
        // Nothing else of the object changes: the migrated defaults come back as defaults.
        assert_eq!(agent.findings.len(), 1, "{name}: {:?}", agent.findings);
    }
}

/// Every `false` or `0` the render of any scenario on any release writes (outside labels,
/// annotations and ConfigMap or Secret data) is classified as a plain field the API server drops
/// or a pointer it stores; a new one fails here until `src/adopt/zero.rs` names it.
fn every_zero_value_of_every_render_is_classified() {
    let refs = references();
    fn walk(
        v: &Value,
        path: &mut Vec<adopt::compare::Step>,
        out: &mut Vec<(adopt::compare::Path, Value)>,
    ) {
        match v {
            Value::Object(m) => {
                for (k, x) in m {
                    if matches!(k.as_str(), "labels" | "annotations" | "matchLabels") {
                        continue;
                    }
                    path.push(adopt::compare::Step::Key(k.clone()));
                    walk(x, path, out);
                    path.pop();
                }
            }
            Value::Array(a) => {
                for (i, x) in a.iter().enumerate() {
                    path.push(adopt::compare::Step::Index(i));
                    walk(x, path, out);
                    path.pop();
                }
            }
            _ if adopt::zero::is_zero(v) => {
                out.push((adopt::compare::Path(path.clone()), v.clone()))
            }
            _ => {}
        }
    }
    let mut unclassified = std::collections::BTreeSet::new();
    let mut seen = 0;
    for (name, _, text) in &refs {
        for o in objects(text) {
            let kind = o["kind"].as_str().unwrap_or("").to_string();
            if matches!(kind.as_str(), "ConfigMap" | "Secret") {
                continue;
            }
            let api = o["apiVersion"].as_str().unwrap_or("");
            let group = api.rsplit_once('/').map(|(g, _)| g).unwrap_or("");
            let mut zeros = Vec::new();
            walk(&o, &mut Vec::new(), &mut zeros);
            for (path, _) in zeros {
                seen += 1;
                if adopt::zero::classify(group, &kind, &path).is_none() {
                    unclassified.insert(format!("{kind} {path} ({name})"));
                }
            }
        }
    }
    assert!(seen > 100, "zero values seen: {seen}");
    assert!(
        unclassified.is_empty(),
        "unclassified zero values: {unclassified:#?}"
    );
}

/// A plain field's zero value absent live is no difference; a pointer's is one.
fn zero_values_of_plain_fields_are_no_difference() {
    let render = "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j, namespace: kube-system}\nspec:\n  template:\n    spec:\n      hostNetwork: false\n      containers:\n      - name: a\n        image: x:v1\n        securityContext: {allowPrivilegeEscalation: false}\n";
    let live = "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j, namespace: kube-system}\nspec:\n  template:\n    spec:\n      containers:\n      - name: a\n        image: x:v1\n";
    let report = adopt::check(
        render,
        &[("live.yaml".into(), live.into())],
        "kube-system",
        "cilium",
    )
    .unwrap();
    let paths: Vec<String> = report.objects[0]
        .findings
        .iter()
        .map(|f| f.difference.path.to_string())
        .collect();
    assert_eq!(
        paths,
        ["spec.template.spec.containers[\"a\"].securityContext.allowPrivilegeEscalation"]
    );
}

/// On every release, Argo CD's default exclusions name the ingress controller's object: the
/// `cilium-ingress` Endpoints on 1.18, its EndpointSlice on 1.19 and 1.20.
fn the_ingress_endpoints_are_excluded_on_every_release() {
    use cilium_cmp::argocd::exclusions::{excluded_in_stream, Filter};
    let refs = references();
    for version in VERSIONS {
        let (_, _, text) = reference(&refs, version, "ingress-controller");
        let found: Vec<String> = excluded_in_stream(&Filter::argocd_defaults(), text)
            .unwrap()
            .into_iter()
            .map(|e| e.object)
            .collect();
        let kind = if version.starts_with("1.18") {
            "Endpoints"
        } else {
            "EndpointSlice"
        };
        assert_eq!(
            found,
            [format!("{kind} kube-system/cilium-ingress")],
            "{version}"
        );
    }
}

/// On every release, a changed cilium-config names the agent and the operator as reading it only
/// at start, and says the checksum rolls them when the scenario turns the rollout values on.
fn config_read_at_start_on_every_release() {
    use cilium_cmp::adopt::startup::TakesEffect;
    let refs = references();
    for version in VERSIONS {
        for (scenario, expected) in [
            ("hubble-full", TakesEffect::AtNextRestart),
            ("rollout-on-config-change", TakesEffect::RolledByChecksum),
        ] {
            let (name, ns, text) = reference(&refs, version, scenario);
            let mut live = objects(text);
            let config = live
                .iter_mut()
                .find(|o| o["kind"] == "ConfigMap" && o["metadata"]["name"] == "cilium-config")
                .unwrap();
            config["data"]["debug"] = json!("true");
            let live_text = live
                .iter()
                .map(cilium_cmp::yaml::to_string)
                .collect::<Vec<_>>()
                .join("---\n");
            let report =
                adopt::check(text, &[("live.yaml".into(), live_text)], ns, "cilium").unwrap();
            let config = report
                .objects
                .iter()
                .find(|o| o.key.kind == "ConfigMap" && o.key.name == "cilium-config")
                .unwrap();
            assert_eq!(config.class, Class::Changed, "{name}");
            for workload in ["cilium", "cilium-operator"] {
                let reader = config
                    .read_at_start
                    .iter()
                    .find(|r| r.workload.name == workload)
                    .unwrap_or_else(|| panic!("{name}: {workload} reads cilium-config"));
                assert_eq!(reader.takes_effect, expected, "{name} {workload}");
            }
        }
    }
}

/// `kubectl rollout restart` leaves its stamp in the pod template, owned by `kubectl-rollout`:
/// the sync keeps it, and keeping it restarts nothing, so it is no left-behind field.
fn a_rollout_restart_stamp_is_harmless() {
    let refs = references();
    let (_, ns, text) = refs
        .iter()
        .find(|(n, _, _)| n == "1.20.0/hubble-full")
        .unwrap();
    let mut live: Vec<Value> = objects(text)
        .iter()
        .map(|o| as_stored(o, Writer::Helm))
        .collect();
    let agent = live
        .iter_mut()
        .find(|o| o["kind"] == "DaemonSet" && o["metadata"]["name"] == "cilium")
        .unwrap();
    agent["spec"]["template"]["metadata"]["annotations"]["kubectl.kubernetes.io/restartedAt"] =
        json!("2026-01-20T10:00:00Z");
    agent["metadata"]["managedFields"]
        .as_array_mut()
        .unwrap()
        .push(json!({"manager": "kubectl-rollout", "operation": "Update",
            "fieldsV1": {"f:spec": {"f:template": {"f:metadata": {"f:annotations": {
                "f:kubectl.kubernetes.io/restartedAt": {}}}}}}}));
    let dump =
        cilium_cmp::yaml::to_string(&json!({"apiVersion": "v1", "kind": "List", "items": live}));
    let report = adopt::check(text, &[("live.yaml".into(), dump)], ns, "cilium").unwrap();
    assert!(
        !report.disruptive(),
        "{:?}",
        report
            .objects
            .iter()
            .filter(|o| !o.left_behind.is_empty())
            .map(|o| &o.left_behind)
            .collect::<Vec<_>>()
    );
}

/// A field Argo CD's own server-side apply wrote before (an earlier plugin render with the
/// limit) and the render now lacks: Argo CD's manager is its only owner, so the sync removes it.
fn a_field_only_argo_cd_applied_is_removed_by_the_sync() {
    let refs = references();
    for version in VERSIONS {
        let (name, ns, text) = reference(&refs, version, "hubble-full");
        let live = dump(&with_memory_limit(&objects(text)), Writer::ArgoServerSide);
        let report = adopt::check(text, &[("live.yaml".into(), live)], ns, "cilium").unwrap();
        let agent = report
            .objects
            .iter()
            .find(|o| o.key.kind == "DaemonSet" && o.key.name == "cilium")
            .unwrap();
        assert!(agent.left_behind.is_empty(), "{name}");
        let removed: Vec<String> = agent
            .findings
            .iter()
            .filter(|f| f.removed_by.is_some())
            .map(|f| f.difference.path.to_string())
            .collect();
        assert_eq!(removed, [MEMORY], "{name}");
        assert_eq!(agent.class, Class::RestartsPods, "{name}");
    }
}
