//! The values the Kubernetes API server fills in when an object arrives without them, for the
//! kinds and fields a Cilium render holds: one table, used both to tell a default from a field
//! some tool left behind (`default_at`) and, in tests, to turn a rendered manifest into what the
//! API server stores (`apply`).
//!
//! Why the table is needed: a manager that writes with an Update (Helm 3, `kubectl apply`
//! client-side, Argo CD's client-side sync) comes to own the fields the API server defaulted on
//! that request. The create handler computes the managed set from the decoded object, and the
//! decoder has already run the defaulting functions
//! (kubernetes/kubernetes `staging/src/k8s.io/apiserver/pkg/endpoints/handlers/create.go`:
//! `scope.FieldManager.UpdateNoErrors(liveObj, obj, managerOrUserAgent(...))` on the decoded
//! `obj`, before admission and before the registry stores it; `update.go` and `patch.go` do the
//! same with the old object as `liveObj`). So ownership alone cannot tell a default from a value
//! the tool wrote: a field only the live object has, owned by an Update manager, is harmless
//! exactly when its value is the one the API server would fill in again, and is left behind
//! otherwise.
//!
//! Sources, all kubernetes/kubernetes: `pkg/apis/core/v1/defaults.go` (`SetDefaults_PodSpec`,
//! `SetDefaults_Container`, `SetDefaults_Probe`, `SetDefaults_HTTPGetAction`,
//! `SetDefaults_ContainerPort` via the ports loop, `SetDefaults_ConfigMapVolumeSource`,
//! `SetDefaults_SecretVolumeSource`, `SetDefaults_ProjectedVolumeSource`,
//! `SetDefaults_DownwardAPIVolumeSource`, `SetDefaults_HostPathVolumeSource`,
//! `SetDefaults_Namespace`, `SetDefaults_Secret`, `SetDefaults_ObjectFieldSelector`,
//! `SetDefaults_Service`), `pkg/apis/apps/v1/defaults.go`
//! (`SetDefaults_DaemonSet`, `SetDefaults_Deployment`), `pkg/apis/batch/v1/defaults.go`
//! (`SetDefaults_Job`, `SetDefaults_CronJob`). Fields the registry sets after the field manager
//! ran (a Service's `clusterIP`, `ipFamilies`, `ipFamilyPolicy`; a Job's selector and
//! controller labels) are owned by no manager and need no entry here.

use serde_json::{json, Value};

use super::compare::{Path, Step};

/// A path shape: map keys, `*` for any list item (by merge key or position).
type Shape = &'static [&'static str];

/// Shapes and the default at each, computed from the part of the object the table is about.
type Table = &'static [(Shape, fn(&Value) -> Value)];

/// Defaults by the part of an object they belong to.
const DAEMONSET: Table = &[
    (&["spec", "revisionHistoryLimit"], |_| json!(10)),
    (&["spec", "updateStrategy", "type"], |_| {
        json!("RollingUpdate")
    }),
    (
        &["spec", "updateStrategy", "rollingUpdate", "maxUnavailable"],
        |_| json!(1),
    ),
    (
        &["spec", "updateStrategy", "rollingUpdate", "maxSurge"],
        |_| json!(0),
    ),
];

const DEPLOYMENT: Table = &[
    (&["spec", "replicas"], |_| json!(1)),
    (&["spec", "revisionHistoryLimit"], |_| json!(10)),
    (&["spec", "progressDeadlineSeconds"], |_| json!(600)),
    (&["spec", "strategy", "type"], |_| json!("RollingUpdate")),
    (
        &["spec", "strategy", "rollingUpdate", "maxUnavailable"],
        |_| json!("25%"),
    ),
    (&["spec", "strategy", "rollingUpdate", "maxSurge"], |_| {
        json!("25%")
    }),
];

const JOB: Table = &[
    (&["spec", "completions"], |_| json!(1)),
    (&["spec", "parallelism"], |_| json!(1)),
    (&["spec", "backoffLimit"], |_| json!(6)),
    (&["spec", "completionMode"], |_| json!("NonIndexed")),
    (&["spec", "suspend"], |_| json!(false)),
    // `SetDefaults_Job`: TerminatingOrFailed unless a pod failure policy is set (then Failed).
    (&["spec", "podReplacementPolicy"], |job| {
        if job.pointer("/spec/podFailurePolicy").is_some() {
            json!("Failed")
        } else {
            json!("TerminatingOrFailed")
        }
    }),
];

const CRONJOB: Table = &[
    (&["spec", "concurrencyPolicy"], |_| json!("Allow")),
    (&["spec", "suspend"], |_| json!(false)),
    (&["spec", "successfulJobsHistoryLimit"], |_| json!(3)),
    (&["spec", "failedJobsHistoryLimit"], |_| json!(1)),
];

/// `SetDefaults_Namespace` labels every Namespace with its own name; `SetDefaults_Secret` types
/// a Secret `Opaque`.
const NAMESPACE: Table = &[(
    &["metadata", "labels", "kubernetes.io/metadata.name"],
    |ns| ns.pointer("/metadata/name").cloned().unwrap_or(Value::Null),
)];

const SECRET: Table = &[(&["type"], |_| json!("Opaque"))];

/// Relative to a Service; `*` is a port, whose `targetPort` defaults to its `port`.
const SERVICE: Table = &[
    (&["spec", "sessionAffinity"], |_| json!("None")),
    (&["spec", "type"], |_| json!("ClusterIP")),
    (&["spec", "internalTrafficPolicy"], |_| json!("Cluster")),
    (&["spec", "ports", "*", "protocol"], |_| json!("TCP")),
];

/// Relative to a pod spec.
const POD_SPEC: Table = &[
    (&["dnsPolicy"], |_| json!("ClusterFirst")),
    (&["restartPolicy"], |_| json!("Always")),
    (&["terminationGracePeriodSeconds"], |_| json!(30)),
    (&["schedulerName"], |_| json!("default-scheduler")),
    (&["securityContext"], |_| json!({})),
];

/// Relative to a container (or init container).
const CONTAINER: Table = &[
    (&["terminationMessagePath"], |_| {
        json!("/dev/termination-log")
    }),
    (&["terminationMessagePolicy"], |_| json!("File")),
    (&["resources"], |_| json!({})),
    (&["ports", "*", "protocol"], |_| json!("TCP")),
    (&["env", "*", "valueFrom", "fieldRef", "apiVersion"], |_| {
        json!("v1")
    }),
];

/// Relative to a probe.
const PROBE: Table = &[
    (&["timeoutSeconds"], |_| json!(1)),
    (&["periodSeconds"], |_| json!(10)),
    (&["successThreshold"], |_| json!(1)),
    (&["failureThreshold"], |_| json!(3)),
    (&["httpGet", "scheme"], |_| json!("HTTP")),
    (&["httpGet", "path"], |_| json!("/")),
];

/// Relative to a pod volume.
const VOLUME: Table = &[
    (&["configMap", "defaultMode"], |_| json!(420)),
    (&["secret", "defaultMode"], |_| json!(420)),
    (&["projected", "defaultMode"], |_| json!(420)),
    (&["downwardAPI", "defaultMode"], |_| json!(420)),
    (&["hostPath", "type"], |_| json!("")),
    (
        &["downwardAPI", "items", "*", "fieldRef", "apiVersion"],
        |_| json!("v1"),
    ),
    (
        &[
            "projected",
            "sources",
            "*",
            "downwardAPI",
            "items",
            "*",
            "fieldRef",
            "apiVersion",
        ],
        |_| json!("v1"),
    ),
];

/// Fields the API server's registry assigns when it stores the object, after the field manager
/// ran (kubernetes/kubernetes `pkg/registry/core/service/storage/alloc.go`: cluster IPs, IP
/// families, node ports; `pkg/registry/batch/job/strategy.go` `PrepareForCreate` /
/// `generateSelector`: a Job's selector and its pods' controller labels). They hold allocated
/// values, no default can be compared, and an apply cannot take them back.
pub fn assigned_by_server(kind: &str, path: &Path) -> bool {
    let keys: Vec<&str> = path
        .0
        .iter()
        .map(|s| match s {
            Step::Key(k) => k.as_str(),
            _ => "*",
        })
        .collect();
    match kind {
        "Service" => matches!(
            keys.as_slice(),
            ["spec", "clusterIP"]
                | ["spec", "clusterIPs", ..]
                | ["spec", "ipFamilies", ..]
                | ["spec", "ipFamilyPolicy"]
                | ["spec", "healthCheckNodePort"]
                | ["spec", "ports", "*", "nodePort"]
        ),
        "Job" | "CronJob" => {
            let rest: &[&str] = match keys.as_slice() {
                ["spec", "jobTemplate", rest @ ..] => rest,
                rest => rest,
            };
            matches!(
                rest,
                ["spec", "selector", ..]
                    | ["spec", "manualSelector"]
                    | [
                        "spec",
                        "template",
                        "metadata",
                        "labels",
                        "batch.kubernetes.io/controller-uid"
                            | "batch.kubernetes.io/job-name"
                            | "controller-uid"
                            | "job-name"
                    ]
            )
        }
        _ => false,
    }
}

const PROBES: &[&str] = &["livenessProbe", "readinessProbe", "startupProbe"];

/// The value the API server fills in at `path` of a `kind` object when it is absent, if it
/// fills one in. `object` is the live object (some defaults depend on a sibling field).
pub fn default_at(kind: &str, path: &Path, object: &Value) -> Option<Value> {
    default_at_with(kind, path, object, &ItemIndex::default())
}

/// Positions of list items by the names `port_item` finds them by, built once per list of one
/// object, so that looking up the fields of thousands of items is no scan of the list each time.
/// A list is known by its address: the object it belongs to is borrowed, unchanged, for as long
/// as the index lives.
#[derive(Default)]
pub struct ItemIndex<'a> {
    lists: std::cell::RefCell<
        std::collections::HashMap<usize, std::collections::HashMap<String, usize>>,
    >,
    object: std::marker::PhantomData<&'a Value>,
}

/// Lists shorter than this are searched in place.
const INDEXED_FROM: usize = 16;

impl ItemIndex<'_> {
    fn position(&self, items: &[Value], name: &str) -> Option<usize> {
        let key = items.as_ptr() as usize;
        let mut lists = self.lists.borrow_mut();
        let by_name = lists.entry(key).or_insert_with(|| {
            let mut m = std::collections::HashMap::new();
            for (i, item) in items.iter().enumerate() {
                for k in ITEM_KEYS {
                    let name = match item.get(*k) {
                        Some(Value::String(s)) => s.clone(),
                        Some(Value::Number(n)) => match n.as_f64() {
                            Some(f) => format!("{}", f as i64),
                            None => continue,
                        },
                        _ => continue,
                    };
                    // The first item that any key names wins, as `find` would have it.
                    m.entry(name).or_insert(i);
                }
            }
            m
        });
        by_name.get(name).copied()
    }
}

/// `default_at`, finding list items through `index` (built for `object`).
pub fn default_at_with<'a>(
    kind: &str,
    path: &Path,
    object: &'a Value,
    index: &ItemIndex<'a>,
) -> Option<Value> {
    let steps = &path.0;
    let kind_table = match kind {
        "DaemonSet" => DAEMONSET,
        "Deployment" => DEPLOYMENT,
        "Job" => JOB,
        "CronJob" => CRONJOB,
        "Service" => SERVICE,
        "Namespace" => NAMESPACE,
        "Secret" => SECRET,
        _ => &[],
    };
    // `SetDefaults_DaemonSet` / `SetDefaults_Deployment` fill in `rollingUpdate` only for the
    // RollingUpdate strategy (the type itself defaults to it).
    for strategy in ["updateStrategy", "strategy"] {
        if path.starts_with(&["spec", strategy, "rollingUpdate"]) {
            let t = object
                .get("spec")
                .and_then(|s| s.get(strategy))
                .and_then(|s| s.get("type"));
            if t.is_some_and(|t| t != "RollingUpdate") {
                return None;
            }
        }
    }
    if let Some(v) = lookup(kind_table, steps, object) {
        return Some(v);
    }
    if kind == "Service" {
        // `SetDefaults_Service`, by type: node-port and load-balancer Services route external
        // traffic cluster-wide and (load balancers) allocate node ports; client-IP affinity
        // sticks for three hours.
        let service_type = object
            .pointer("/spec/type")
            .and_then(Value::as_str)
            .unwrap_or("ClusterIP");
        let external = matches!(service_type, "NodePort" | "LoadBalancer");
        if path.0
            == [
                Step::Key("spec".into()),
                Step::Key("externalTrafficPolicy".into()),
            ]
        {
            return external.then(|| json!("Cluster"));
        }
        if path.0
            == [
                Step::Key("spec".into()),
                Step::Key("allocateLoadBalancerNodePorts".into()),
            ]
        {
            return (service_type == "LoadBalancer").then_some(json!(true));
        }
        if path.starts_with(&[
            "spec",
            "sessionAffinityConfig",
            "clientIP",
            "timeoutSeconds",
        ]) && path.0.len() == 4
        {
            let client_ip = object
                .pointer("/spec/sessionAffinity")
                .and_then(Value::as_str)
                == Some("ClientIP");
            return client_ip.then(|| json!(10800));
        }
        // `targetPort` defaults to the port's own `port`.
        if let [Step::Key(s), Step::Key(p), item, Step::Key(t)] = steps.as_slice() {
            if s == "spec" && p == "ports" && t == "targetPort" {
                return port_item(object.pointer("/spec/ports"), item, index)
                    .and_then(|p| p.get("port").cloned());
            }
        }
    }
    let template = super::rules::pod_template(kind)?;
    let rest = strip_keys(steps, template)?;
    let spec_steps = strip_keys(rest, &["spec"])?;
    let pod = template
        .iter()
        .try_fold(object, |v, k| v.get(*k))
        .and_then(|t| t.get("spec"))
        .unwrap_or(&Value::Null);
    pod_spec_default(spec_steps, pod, index)
}

fn pod_spec_default<'a>(steps: &[Step], pod: &'a Value, index: &ItemIndex<'a>) -> Option<Value> {
    if let Some(v) = lookup(POD_SPEC, steps, pod) {
        return Some(v);
    }
    match steps {
        // The deprecated alias of `serviceAccountName`, filled in when the object is converted
        // to v1 (kubernetes/kubernetes `pkg/apis/core/v1/conversion.go`,
        // `Convert_core_PodSpec_To_v1_PodSpec`), before the managed set is computed.
        [Step::Key(k)] if k == "serviceAccount" => pod.get("serviceAccountName").cloned(),
        [Step::Key(list), item, rest @ ..] if list == "containers" || list == "initContainers" => {
            let container = port_item(pod.get(list), item, index)?;
            container_default(rest, container, pod, index)
        }
        [Step::Key(list), _, rest @ ..] if list == "volumes" => lookup(VOLUME, rest, pod),
        _ => None,
    }
}

fn container_default<'a>(
    steps: &[Step],
    container: &'a Value,
    pod: &Value,
    index: &ItemIndex<'a>,
) -> Option<Value> {
    if let Some(v) = lookup(CONTAINER, steps, container) {
        return Some(v);
    }
    match steps {
        // `SetDefaults_Container`: Always for a `:latest` or untagged image, else IfNotPresent.
        [Step::Key(k)] if k == "imagePullPolicy" => {
            let image = container.get("image").and_then(Value::as_str)?;
            Some(json!(if image_is_latest(image) {
                "Always"
            } else {
                "IfNotPresent"
            }))
        }
        // `SetDefaults_PodSpec`: with host networking, a container port's hostPort defaults to
        // its containerPort.
        [Step::Key(p), item, Step::Key(h)] if p == "ports" && h == "hostPort" => {
            if pod.get("hostNetwork").and_then(Value::as_bool) != Some(true) {
                return None;
            }
            port_item(container.get("ports"), item, index)
                .and_then(|p| p.get("containerPort").cloned())
        }
        [Step::Key(probe), rest @ ..] if PROBES.contains(&probe.as_str()) => {
            lookup(PROBE, rest, container.get(probe.as_str())?)
        }
        _ => None,
    }
}

/// Whether kubelet-style defaulting treats the image as `:latest` (no tag, or the tag `latest`;
/// a digest is neither).
fn image_is_latest(image: &str) -> bool {
    if image.contains('@') {
        return false;
    }
    let last = image.rsplit('/').next().unwrap_or(image);
    match last.rsplit_once(':') {
        Some((_, tag)) => tag == "latest",
        None => true,
    }
}

/// The list item a path step names: by merge key (`name`, `port`, `containerPort`, ...) or by
/// position.
fn port_item<'a>(list: Option<&'a Value>, step: &Step, index: &ItemIndex<'a>) -> Option<&'a Value> {
    let items = list?.as_array()?;
    match step {
        Step::Index(i) => items.get(*i),
        Step::Item(name) if items.len() >= INDEXED_FROM => {
            index.position(items, name).and_then(|i| items.get(i))
        }
        Step::Item(name) => items.iter().find(|item| {
            ITEM_KEYS
                .iter()
                .any(|k| item.get(*k).is_some_and(|v| names(v, name)))
        }),
        Step::Key(_) | Step::More(_) => None,
    }
}

/// The fields a list item is named by in a path (`compare::list_map_keys`).
const ITEM_KEYS: &[&str] = &["name", "containerPort", "port", "mountPath"];

fn names(v: &Value, name: &str) -> bool {
    match v {
        Value::String(s) => s == name,
        Value::Number(n) => n.as_f64().is_some_and(|f| format!("{}", f as i64) == name),
        _ => false,
    }
}

fn strip_keys<'a>(steps: &'a [Step], prefix: &[&str]) -> Option<&'a [Step]> {
    if steps.len() < prefix.len() {
        return None;
    }
    let matches = steps
        .iter()
        .zip(prefix)
        .all(|(s, k)| matches!(s, Step::Key(x) if x == k));
    matches.then(|| &steps[prefix.len()..])
}

fn lookup(table: Table, steps: &[Step], context: &Value) -> Option<Value> {
    table.iter().find_map(|(shape, value)| {
        let fits = shape.len() == steps.len()
            && shape.iter().zip(steps).all(|(k, s)| match s {
                Step::Key(x) => *k == x,
                Step::Item(_) | Step::Index(_) => *k == "*",
                Step::More(_) => false,
            });
        fits.then(|| value(context))
    })
}

/// Fills in every default of the table that `object` lacks, as the API server does when it
/// stores the object (for tests that turn a render into a realistic live dump; value-dependent
/// defaults included).
pub fn apply(object: &mut Value) {
    let kind = object
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let mut missing = Vec::new();
    collect_missing(&kind, object, &Path::default(), object, &mut missing);
    if kind == "Namespace" {
        let label = Path(
            ["metadata", "labels", "kubernetes.io/metadata.name"]
                .iter()
                .map(|k| Step::Key(k.to_string()))
                .collect(),
        );
        if let Some(name) = default_at(&kind, &label, object) {
            missing.push((label, name));
        }
    }
    for (path, value) in missing {
        set(object, &path, value);
    }
}

/// Every default path the object lacks, found by walking the shapes of the tables over what
/// the object has.
fn collect_missing(kind: &str, root: &Value, at: &Path, v: &Value, out: &mut Vec<(Path, Value)>) {
    // Candidate leaf names to try under every map: the last key of every shape.
    const LEAVES: &[&str] = &[
        "revisionHistoryLimit",
        "updateStrategy",
        "strategy",
        "replicas",
        "progressDeadlineSeconds",
        "completions",
        "parallelism",
        "backoffLimit",
        "completionMode",
        "suspend",
        "podReplacementPolicy",
        "concurrencyPolicy",
        "successfulJobsHistoryLimit",
        "failedJobsHistoryLimit",
        "sessionAffinity",
        "type",
        "internalTrafficPolicy",
        "protocol",
        "targetPort",
        "dnsPolicy",
        "restartPolicy",
        "terminationGracePeriodSeconds",
        "schedulerName",
        "securityContext",
        "terminationMessagePath",
        "terminationMessagePolicy",
        "imagePullPolicy",
        "resources",
        "hostPort",
        "apiVersion",
        "timeoutSeconds",
        "periodSeconds",
        "successThreshold",
        "failureThreshold",
        "scheme",
        "path",
        "defaultMode",
        "rollingUpdate",
        "maxUnavailable",
        "maxSurge",
        "externalTrafficPolicy",
        "allocateLoadBalancerNodePorts",
        "serviceAccount",
    ];
    match v {
        Value::Object(map) => {
            for leaf in LEAVES {
                if map.contains_key(*leaf) {
                    continue;
                }
                let p = with(at, Step::Key((*leaf).to_string()));
                if let Some(d) = default_at(kind, &p, root) {
                    out.push((p, d));
                } else if (matches!(*leaf, "updateStrategy" | "strategy")
                    && at.0 == [Step::Key("spec".into())])
                    || (*leaf == "rollingUpdate"
                        && matches!(at.last_key(), Some("updateStrategy" | "strategy")))
                {
                    // A default inside a map the object lacks: walk an empty one.
                    collect_missing(kind, root, &p, &json!({}), out);
                }
            }
            for (k, child) in map {
                collect_missing(kind, root, &with(at, Step::Key(k.clone())), child, out);
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                collect_missing(kind, root, &with(at, Step::Index(i)), item, out);
            }
        }
        _ => {}
    }
}

fn with(p: &Path, s: Step) -> Path {
    let mut v = p.0.clone();
    v.push(s);
    Path(v)
}

fn set(root: &mut Value, path: &Path, value: Value) {
    let mut at = root;
    for step in &path.0 {
        at = match step {
            Step::Key(k) => {
                if !at.is_object() {
                    *at = json!({});
                }
                at.as_object_mut()
                    .expect("made a map above")
                    .entry(k.clone())
                    .or_insert(Value::Null)
            }
            Step::Index(i) => match at.get_mut(*i) {
                Some(v) => v,
                None => return,
            },
            Step::Item(_) | Step::More(_) => return,
        };
    }
    if at.is_null() {
        *at = value;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(steps: &[Step]) -> Path {
        Path(steps.to_vec())
    }

    fn key(k: &str) -> Step {
        Step::Key(k.into())
    }

    #[test]
    fn defaults_are_found_in_pod_templates_and_depend_on_siblings() {
        let ds = json!({"kind": "DaemonSet", "spec": {"template": {"spec": {"hostNetwork": true,
            "containers": [{"name": "a", "image": "quay.io/cilium/cilium:v1.20.0@sha256:00",
                "ports": [{"containerPort": 4244}],
                "livenessProbe": {"httpGet": {"port": 9879}}}]}}}});
        let container = [
            key("spec"),
            key("template"),
            key("spec"),
            key("containers"),
            Step::Item("a".into()),
        ];
        let at = |rest: &[Step]| {
            let mut p = container.to_vec();
            p.extend_from_slice(rest);
            default_at("DaemonSet", &path(&p), &ds)
        };
        assert_eq!(at(&[key("imagePullPolicy")]), Some(json!("IfNotPresent")));
        assert_eq!(
            at(&[key("ports"), Step::Item("4244".into()), key("hostPort")]),
            Some(json!(4244))
        );
        assert_eq!(
            at(&[key("livenessProbe"), key("periodSeconds")]),
            Some(json!(10))
        );
        assert_eq!(at(&[key("resources"), key("limits"), key("memory")]), None);
        assert_eq!(
            default_at(
                "DaemonSet",
                &path(&[key("spec"), key("revisionHistoryLimit")]),
                &ds
            ),
            Some(json!(10))
        );
        assert!(image_is_latest("nginx") && image_is_latest("r:5000/x:latest"));
        assert!(!image_is_latest("r:5000/x:v1"));
    }

    #[test]
    fn apply_fills_what_the_api_server_would() {
        let mut lb =
            json!({"kind": "Service", "spec": {"type": "LoadBalancer", "ports": [{"port": 80}]}});
        apply(&mut lb);
        assert_eq!(lb["spec"]["externalTrafficPolicy"], "Cluster");
        assert_eq!(lb["spec"]["allocateLoadBalancerNodePorts"], true);
        let mut svc = json!({"kind": "Service", "spec": {"ports": [{"port": 443}]}});
        apply(&mut svc);
        assert_eq!(
            svc["spec"],
            json!({"ports": [{"port": 443, "protocol": "TCP", "targetPort": 443}],
                "sessionAffinity": "None", "type": "ClusterIP", "internalTrafficPolicy": "Cluster"})
        );
        let mut dep = json!({"kind": "Deployment", "spec": {"template": {"spec": {"containers": [
            {"name": "a", "image": "x:v1"}]}}}});
        apply(&mut dep);
        assert_eq!(dep["spec"]["strategy"]["rollingUpdate"]["maxSurge"], "25%");
        assert_eq!(dep["spec"]["template"]["spec"]["dnsPolicy"], "ClusterFirst");
        let mut sa = json!({"kind": "DaemonSet", "spec": {"template": {"spec": {
            "serviceAccountName": "cilium", "containers": []}}}});
        apply(&mut sa);
        assert_eq!(sa["spec"]["template"]["spec"]["serviceAccount"], "cilium");
        assert_eq!(
            dep["spec"]["template"]["spec"]["containers"][0]["imagePullPolicy"],
            "IfNotPresent"
        );
    }
}
