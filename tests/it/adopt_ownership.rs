//! adopt-check against live dumps built the way the API server writes them: Helm's references of
//! every scenario on 1.18, 1.19 and 1.20, with the API server's defaults filled in and the
//! managedFields a `helm` Update, a `kubectl-client-side-apply` Update or an `argocd-controller`
//! Apply leaves (an Update owns what it sent plus what the API server defaulted on that request;
//! an Apply owns only what it applied: `crates/gitops/src/adopt/defaults.rs` cites the source). No false alarm
//! on any of them; a value the old release set and the render drops is left behind, never a
//! default; Argo CD's client-side-apply migration turns it into a removal.
use crate::support::harness;

pub fn tests() -> Vec<harness::Trial> {
    harness::group(
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
            harness::test(
                "a_controllers_finalizer_is_kept_never_left_behind",
                a_controllers_finalizer_is_kept_never_left_behind,
            )
            .shared("cilium-reference/README.md"),
            harness::test(
                "only_what_argo_cd_tracks_is_pruned",
                only_what_argo_cd_tracks_is_pruned,
            )
            .shared("cilium-reference/README.md"),
            harness::test(
                "a_dump_of_every_namespace_leaves_other_objects_alone",
                a_dump_of_every_namespace_leaves_other_objects_alone,
            )
            .shared("cilium-reference/README.md"),
            harness::test(
                "argo_cd_client_side_fields_name_the_migration_fix",
                argo_cd_client_side_fields_name_the_migration_fix,
            )
            .shared("cilium-reference/README.md"),
            harness::test(
                "empty_strings_of_cilium_config_are_values",
                empty_strings_of_cilium_config_are_values,
            )
            .shared("cilium-reference/README.md"),
        ],
    )
}

use cilium_cmp_gitops::adopt::{self, defaults, ownership, Class, SyncModel};
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
    /// Argo CD's default client-side sync: an Update by its manager, owning the defaults too.
    ArgoClientSide,
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
        Writer::ArgoClientSide => (
            "argocd-controller",
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
    if matches!(writer, Writer::KubectlClientSide | Writer::ArgoClientSide) {
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
    cilium_cmp_yaml::yaml::to_string(&json!({"apiVersion": "v1", "kind": "List", "items": items}))
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
            let ns = cilium_cmp_yaml::yaml::parse_values(&scenario)
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
    cilium_cmp_yaml::yaml::parse_stream_values(text)
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
            .map(cilium_cmp_yaml::yaml::to_string)
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
                    ..Default::default()
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
                ..Default::default()
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
/// or a pointer it stores; a new one fails here until `crates/gitops/src/adopt/zero.rs` names it.
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
    use cilium_cmp_gitops::argocd::exclusions::{excluded_in_stream, Filter};
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
    use cilium_cmp_gitops::adopt::startup::TakesEffect;
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
                .map(cilium_cmp_yaml::yaml::to_string)
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
    let dump = cilium_cmp_yaml::yaml::to_string(
        &json!({"apiVersion": "v1", "kind": "List", "items": live}),
    );
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

/// `objects` as the recommended Application's first syncs leave them: each carries Argo CD's
/// tracking annotation naming Application `app` and the object itself.
fn tracked_by(objects: &[Value], app: &str, ns: &str) -> Vec<Value> {
    objects
        .iter()
        .map(|o| {
            let mut o = o.clone();
            let api = o["apiVersion"].as_str().unwrap_or("");
            let group = api
                .rsplit_once('/')
                .map(|(g, _)| g)
                .unwrap_or("")
                .to_string();
            let kind = o["kind"].as_str().unwrap().to_string();
            let name = o["metadata"]["name"].as_str().unwrap().to_string();
            let namespace = if adopt::live::is_cluster_scoped(&kind) {
                String::new()
            } else {
                o["metadata"]["namespace"]
                    .as_str()
                    .unwrap_or(ns)
                    .to_string()
            };
            let meta = o["metadata"].as_object_mut().unwrap();
            let annotations = meta.entry("annotations").or_insert_with(|| json!({}));
            if !annotations.is_object() {
                *annotations = json!({});
            }
            annotations.as_object_mut().unwrap().insert(
                "argocd.argoproj.io/tracking-id".into(),
                json!(format!("{app}:{group}/{kind}:{namespace}/{name}")),
            );
            o
        })
        .collect()
}

/// `objects` as Helm stores its release's: its ownership annotations and managed-by label
/// (helm/helm `pkg/action/validate.go` checks the annotations, `pkg/action/install.go` sets them).
fn marked_by_helm(objects: &[Value], ns: &str) -> Vec<Value> {
    objects
        .iter()
        .map(|o| {
            let mut o = o.clone();
            let meta = o["metadata"].as_object_mut().unwrap();
            let annotations = meta.entry("annotations").or_insert_with(|| json!({}));
            if !annotations.is_object() {
                *annotations = json!({});
            }
            let a = annotations.as_object_mut().unwrap();
            a.insert("meta.helm.sh/release-name".into(), json!("cilium"));
            a.insert("meta.helm.sh/release-namespace".into(), json!(ns));
            let labels = meta.entry("labels").or_insert_with(|| json!({}));
            if !labels.is_object() {
                *labels = json!({});
            }
            labels
                .as_object_mut()
                .unwrap()
                .insert("app.kubernetes.io/managed-by".into(), json!("Helm"));
            o
        })
        .collect()
}

fn object_named<'a>(report: &'a adopt::Report, kind: &str, name: &str) -> &'a adopt::ObjectReport {
    report
        .objects
        .iter()
        .find(|o| o.key.kind == kind && o.key.name == name)
        .unwrap_or_else(|| panic!("no {kind} {name}"))
}

/// The service controller's `service.kubernetes.io/load-balancer-cleanup` finalizer on the
/// ingress controller's LoadBalancer Service, owned by kube-controller-manager: kept (the sync
/// leaves it, and must), never left behind, exit 0, on every release. The same finalizer owned
/// by a deploy tool is left behind.
fn a_controllers_finalizer_is_kept_never_left_behind() {
    let refs = references();
    for version in VERSIONS {
        let (name, ns, text) = reference(&refs, version, "ingress-controller");
        for writer in [Writer::Helm, Writer::ArgoServerSide] {
            let mut live: Vec<Value> = objects(text).iter().map(|o| as_stored(o, writer)).collect();
            let service = live
                .iter_mut()
                .find(|o| o["kind"] == "Service" && o["spec"]["type"] == "LoadBalancer")
                .unwrap_or_else(|| panic!("{name}: a LoadBalancer Service"));
            let finalizer = "service.kubernetes.io/load-balancer-cleanup";
            service["metadata"]["finalizers"] = json!([finalizer]);
            service["metadata"]["managedFields"]
                .as_array_mut()
                .unwrap()
                .push(json!({
                "apiVersion": "v1", "fieldsType": "FieldsV1", "manager": "kube-controller-manager",
                "operation": "Update", "time": "2026-01-12T09:14:06Z",
                "fieldsV1": {"f:metadata": {"f:finalizers": {".": {},
                    format!("v:{}", json!(finalizer)): {}}}}}));
            let service_name = service["metadata"]["name"].as_str().unwrap().to_string();
            let dump = cilium_cmp_yaml::yaml::to_string(
                &json!({"apiVersion": "v1", "kind": "List", "items": live.clone()}),
            );
            let report = adopt::check(text, &[("live.yaml".into(), dump)], ns, "cilium").unwrap();
            let o = object_named(&report, "Service", &service_name);
            assert!(
                o.left_behind.is_empty(),
                "{name} {writer:?}: {:?}",
                o.left_behind
            );
            assert_eq!(o.class, Class::ToolingOnly, "{name} {writer:?}");
            assert_eq!(o.kept.len(), 1, "{name} {writer:?}: {:?}", o.kept);
            assert_eq!(o.kept[0].path.to_string(), "metadata.finalizers");
            assert_eq!(o.kept[0].owners, ["kube-controller-manager (Update)"]);
            assert!(!report.disruptive(), "{name} {writer:?}");
            // Written by a person's tool instead, it is the old configuration: left behind.
            let service = live
                .iter_mut()
                .find(|o| o["metadata"]["name"] == service_name.as_str())
                .unwrap();
            let entries = service["metadata"]["managedFields"].as_array_mut().unwrap();
            entries.last_mut().unwrap()["manager"] = json!("kubectl-edit");
            let dump = cilium_cmp_yaml::yaml::to_string(
                &json!({"apiVersion": "v1", "kind": "List", "items": live}),
            );
            let report = adopt::check(text, &[("live.yaml".into(), dump)], ns, "cilium").unwrap();
            let o = object_named(&report, "Service", &service_name);
            assert_eq!(o.class, Class::LeftBehind, "{name} {writer:?}");
            assert!(report.disruptive(), "{name} {writer:?}");
        }
    }
}

/// The render drops Hubble Relay (its objects taken out of the real render): Argo CD prunes
/// only what it tracks. Objects only Helm marks stay unmanaged, with the command that deletes
/// them, and are no prunes (exit 0); tracked by the Application's annotation they are pruned
/// (exit 3); label tracking counts the instance label only when argocd-cm says so.
fn only_what_argo_cd_tracks_is_pruned() {
    let refs = references();
    for version in VERSIONS {
        let (name, ns, text) = reference(&refs, version, "hubble-full");
        let all = objects(text);
        let is_relay = |o: &Value| {
            o["metadata"]["name"]
                .as_str()
                .is_some_and(|n| n.starts_with("hubble-relay"))
                && o["kind"] != "Secret"
        };
        let dropped: Vec<String> = all
            .iter()
            .filter(|o| is_relay(o))
            .map(|o| {
                format!(
                    "{} {}",
                    o["kind"].as_str().unwrap(),
                    o["metadata"]["name"].as_str().unwrap()
                )
            })
            .collect();
        assert!(dropped.len() >= 3, "{name}: {dropped:?}");
        let render = all
            .iter()
            .filter(|o| !is_relay(o))
            .map(cilium_cmp_yaml::yaml::to_string)
            .collect::<Vec<_>>()
            .join("---\n");
        let check = |live: &[Value], sync: &SyncModel| {
            adopt::check_with(
                &render,
                &[("live.yaml".into(), dump(live, Writer::Helm))],
                ns,
                "cilium",
                sync,
            )
            .unwrap()
        };
        let gone = |report: &adopt::Report, class: Class| -> Vec<String> {
            report
                .objects
                .iter()
                .filter(|o| o.class == class)
                .map(|o| format!("{} {}", o.key.kind, o.key.name))
                .collect()
        };
        // helm install: Helm's marks only.
        let report = check(&marked_by_helm(&all, ns), &SyncModel::default());
        let mut unmanaged = gone(&report, Class::Unmanaged);
        unmanaged.sort();
        let mut want = dropped.clone();
        want.sort();
        assert_eq!(unmanaged, want, "{name}");
        assert!(gone(&report, Class::Pruned).is_empty(), "{name}");
        assert!(
            !report.disruptive(),
            "{name}: unmanaged objects are no prunes"
        );
        let relay = object_named(&report, "Deployment", "hubble-relay");
        assert!(
            relay.notes[0].contains(&format!(
                "kubectl delete -n {ns} deployment.apps hubble-relay"
            )),
            "{name}: {:?}",
            relay.notes
        );
        // Argo CD's Helm source: every object carries the tracking annotation.
        let tracked = tracked_by(&marked_by_helm(&all, ns), "cilium", ns);
        let report = check(&tracked, &SyncModel::default());
        let mut pruned = gone(&report, Class::Pruned);
        pruned.sort();
        assert_eq!(pruned, want, "{name}");
        assert!(report.disruptive(), "{name}");
        // Tracked by another Application: not this one's to prune.
        let other = SyncModel {
            application: Some("cilium-cmp".into()),
            ..Default::default()
        };
        let report = check(&tracked, &other);
        assert!(gone(&report, Class::Pruned).is_empty(), "{name}");
        // Label tracking: the instance label counts only when argocd-cm asks for it.
        let labelled: Vec<Value> = all
            .iter()
            .map(|o| {
                let mut o = o.clone();
                o["metadata"]["labels"]["app.kubernetes.io/instance"] = json!("cilium");
                o
            })
            .collect();
        let report = check(&labelled, &SyncModel::default());
        assert_eq!(gone(&report, Class::Pruned).len(), 0, "{name}");
        let label = adopt::tracking::Tracking::from_argocd_cm(
            &json!({"data": {"application.resourceTrackingMethod": "label"}}),
            "argocd-cm.yaml",
        )
        .unwrap();
        let report = check(
            &labelled,
            &SyncModel {
                tracking: label,
                ..Default::default()
            },
        );
        assert_eq!(gone(&report, Class::Pruned).len(), want.len(), "{name}");
    }
}

/// `kubectl get -A`: objects in namespaces the render does not use are left alone and said to
/// be, not refused; one there that the Application tracks is still pruned.
fn a_dump_of_every_namespace_leaves_other_objects_alone() {
    let refs = references();
    for version in VERSIONS {
        let (name, ns, text) = reference(&refs, version, "hubble-full");
        let mut live: Vec<Value> = objects(text);
        live.push(json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {
            "name": "grafana", "namespace": "monitoring",
            "annotations": {"meta.helm.sh/release-name": "grafana",
                "meta.helm.sh/release-namespace": "monitoring"},
            "labels": {"app.kubernetes.io/part-of": "cilium"}},
            "spec": {"template": {"spec": {"containers": [{"name": "grafana", "image": "grafana/grafana:12.0.0"}]}}}}));
        live.push(
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {
            "name": "kube-root-ca.crt", "namespace": "default"}, "data": {"ca.crt": "x"}}),
        );
        let mut stray = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {
            "name": "cilium-dashboard", "namespace": "monitoring"}, "data": {"a": "b"}});
        stray = tracked_by(&[stray], "cilium", ns).remove(0);
        live.push(stray);
        let report = adopt::check(
            text,
            &[("live.yaml".into(), dump(&live, Writer::Helm))],
            ns,
            "cilium",
        )
        .unwrap_or_else(|e| panic!("{name}: a dump of every namespace is refused: {e}"));
        for n in ["grafana", "kube-root-ca.crt"] {
            let o = report.objects.iter().find(|o| o.key.name == n).unwrap();
            assert_eq!(o.class, Class::NotInRelease, "{name} {n}");
            assert!(
                o.notes[0].contains("which the render does not use"),
                "{:?}",
                o.notes
            );
        }
        let o = object_named(&report, "ConfigMap", "cilium-dashboard");
        assert_eq!(o.class, Class::Pruned, "{name}");
        assert!(report.disruptive());
    }
}

/// Objects an Argo CD Helm-source Application synced client-side (argocd-controller's
/// Update): a value the render drops is left behind, and the report names the fix, the
/// migration annotation naming argocd-controller; with that migration the sync removes it.
fn argo_cd_client_side_fields_name_the_migration_fix() {
    let refs = references();
    for version in VERSIONS {
        let (name, ns, text) = reference(&refs, version, "hubble-full");
        let live = dump(&with_memory_limit(&objects(text)), Writer::ArgoClientSide);
        let report =
            adopt::check(text, &[("live.yaml".into(), live.clone())], ns, "cilium").unwrap();
        let agent = object_named(&report, "DaemonSet", "cilium");
        assert_eq!(agent.class, Class::LeftBehind, "{name}");
        assert_eq!(
            agent.left_behind.len(),
            1,
            "{name}: {:?}",
            agent.left_behind
        );
        let fix = agent.left_behind[0].fix.as_deref().unwrap_or_default();
        assert!(
            fix.contains(
                "argocd.argoproj.io/client-side-apply-migration-manager: argocd-controller"
            ) && fix.contains("ServerSideApply=true"),
            "{name}: {fix}"
        );
        let human = adopt::report::human(&report);
        assert!(
            human.contains("fix: set the Application annotation"),
            "{human}"
        );
        let migrated = SyncModel {
            migrated_manager: Some("argocd-controller".into()),
            ..Default::default()
        };
        let report =
            adopt::check_with(text, &[("live.yaml".into(), live)], ns, "cilium", &migrated)
                .unwrap();
        let agent = object_named(&report, "DaemonSet", "cilium");
        assert!(agent.left_behind.is_empty(), "{name}");
        assert_eq!(agent.class, Class::RestartsPods, "{name}");
    }
}

/// cilium-config keys valued `""` are values the API server keeps: a live object without them
/// differs (the sync writes them), on every release; with them it is the same.
fn empty_strings_of_cilium_config_are_values() {
    let refs = references();
    for version in VERSIONS {
        let (name, ns, text) = reference(&refs, version, "hubble-full");
        let mut live = objects(text);
        let config = live
            .iter_mut()
            .find(|o| o["kind"] == "ConfigMap" && o["metadata"]["name"] == "cilium-config")
            .unwrap();
        let empty: Vec<String> = config["data"]
            .as_object()
            .unwrap()
            .iter()
            .filter(|(_, v)| v.as_str() == Some(""))
            .map(|(k, _)| k.clone())
            .collect();
        assert!(empty.len() >= 5, "{name}: {empty:?}");
        let data = config["data"].as_object_mut().unwrap();
        for k in &empty {
            data.remove(k);
        }
        let report = adopt::check(
            text,
            &[("live.yaml".into(), dump(&live, Writer::Helm))],
            ns,
            "cilium",
        )
        .unwrap();
        let o = object_named(&report, "ConfigMap", "cilium-config");
        assert_eq!(o.class, Class::Changed, "{name}");
        let mut paths: Vec<String> = o
            .findings
            .iter()
            .map(|f| f.difference.path.to_string())
            .collect();
        paths.sort();
        let mut want: Vec<String> = empty
            .iter()
            .map(|k| {
                adopt::compare::Path(vec![
                    adopt::compare::Step::Key("data".into()),
                    adopt::compare::Step::Key(k.clone()),
                ])
                .to_string()
            })
            .collect();
        want.sort();
        assert_eq!(paths, want, "{name}");
        assert!(o
            .findings
            .iter()
            .all(|f| f.difference.render == Some(json!(""))));
        // The workloads that read it only at start are named.
        assert!(!o.read_at_start.is_empty(), "{name}");
    }
}
