//! What the cluster would refuse only later: values Helm renders without a word, which the API
//! server rejects at apply time or Cilium's agent at start (after the old agents are gone). A CNI
//! renderer stops them before they reach a cluster.
//!
//! Every check here is of the render as the cluster would receive it (cilium-config's keys, the
//! objects' fields), never of a value on its own, so a value with no effect (a replica count of a
//! component that is off, a routing mode an override replaces) is never refused. Where the
//! accepted set depends on the Cilium release, a named change says so.

use serde_json::Value;

use crate::error::{Origin, RenderError, Violation, Violations};
use crate::tmpl::{print, truthy};
use crate::values::Values;
use crate::versions::CiliumVersion;

/// Kubernetes keeps at most this many bytes of data in one ConfigMap or Secret (the API
/// server's `MaxSecretSize`, which both kinds use).
pub const MAX_CONFIG_DATA_BYTES: usize = 1024 * 1024;

/// The cilium-config keys whose values the agent and operator accept from a fixed set, with the
/// value that writes each and the accepted words (Cilium 1.18 to 1.20 alike).
const CONFIG_WORDS: &[(&str, &str, &[&str], &str)] = &[
    (
        "routing-mode",
        "routingMode",
        &["tunnel", "native"],
        "the agent refuses to start (\"invalid routing mode\")",
    ),
    (
        "tunnel-protocol",
        "tunnelProtocol",
        &["vxlan", "geneve"],
        "the agent refuses to start (\"invalid tunnel protocol\")",
    ),
    (
        "ipam",
        "ipam.mode",
        &[
            "kubernetes",
            "cluster-pool",
            "multi-pool",
            "crd",
            "eni",
            "azure",
            "alibabacloud",
            "delegated-plugin",
        ],
        "the agent and the operator stop on an unsupported IPAM mode",
    ),
];

/// Refuses the render when the cluster would; all findings at once, one line each.
pub fn check(objects: &[Value], values: &Values, cilium: CiliumVersion) -> Result<(), RenderError> {
    let mut findings = Vec::new();
    let config = objects
        .iter()
        .find(|o| o["kind"] == "ConfigMap" && o["metadata"]["name"] == "cilium-config");
    if let Some(config) = config {
        config_words(config, values, &mut findings);
        encryption_type(config, values, cilium, &mut findings);
    }
    for object in objects {
        negative_replicas(object, values, &mut findings);
        shapes(object, values, &mut findings);
        resource_amounts(object, values, &mut findings);
        data_size(object, &mut findings);
    }
    if findings.is_empty() {
        return Ok(());
    }
    Err(RenderError::WouldBeRejected(Violations(
        one_line_per_cause(findings),
    )))
}

/// How many objects a grouped finding names before it counts the rest.
const OBJECTS_NAMED: usize = 3;

/// Findings with the same values and the same reason are one cause, whatever objects it reaches:
/// `commonLabels: {a: 1}` makes every object's `metadata.labels.a` a number, and the user needs
/// to read that once, not once per object (a long list also hides the other causes). The first
/// objects are named, the rest counted; the order is that of the first finding of each cause.
fn one_line_per_cause(findings: Vec<Violation>) -> Vec<Violation> {
    let mut causes: Vec<(Violation, Vec<String>)> = Vec::new();
    for finding in findings {
        let same = causes
            .iter_mut()
            .find(|(c, _)| c.values == finding.values && c.reason == finding.reason);
        match (same, finding.object.clone()) {
            (Some((_, objects)), Some(object)) => objects.push(object),
            // The same finding about a value twice says nothing new.
            (Some(_), None) => {}
            (None, object) => causes.push((finding, object.into_iter().collect())),
        }
    }
    causes
        .into_iter()
        .map(|(mut cause, objects)| {
            if objects.len() > 1 {
                let named = objects[..objects.len().min(OBJECTS_NAMED)].join(", ");
                cause.object = Some(match objects.len().saturating_sub(OBJECTS_NAMED) {
                    0 => named,
                    more => format!("{named} and {more} more objects"),
                });
            }
            cause
        })
        .collect()
}

fn config_words(config: &Value, values: &Values, findings: &mut Vec<Violation>) {
    for (key, path, accepted, consequence) in CONFIG_WORDS {
        let Some(word) = config["data"][*key].as_str() else {
            continue;
        };
        if accepted.contains(&word) {
            continue;
        }
        let source = written_by(values, path, key);
        findings.push(Violation::of_written(
            values,
            &source,
            format!(
                "cilium-config {key} would be {}; Cilium accepts {}: {consequence}",
                cilium_cmp_yaml::limits::quoted(word),
                accepted.join(", ")
            ),
        ));
    }
}

/// The value that wrote a cilium-config key: `extraConfig` when it sets the key (it wins),
/// else `path`, each with where the user set it.
fn written_by(values: &Values, path: &str, key: &str) -> String {
    let extra = format!("extraConfig.{key}");
    if values.user_set(&extra) {
        extra
    } else {
        path.to_string()
    }
}

/// With encryption on, the chart turns on the one mechanism `encryption.type` names by writing
/// its `enable-TYPE` key into cilium-config (`enable-ipsec`, `enable-wireguard`, from 1.19
/// `enable-ztunnel`, in every release's `cilium-configmap.yaml`); any other word writes none, and
/// Cilium runs unencrypted although encryption was asked for. Read from the render, so a
/// mechanism a new release adds is accepted on its day.
fn encryption_type(
    config: &Value,
    values: &Values,
    cilium: CiliumVersion,
    findings: &mut Vec<Violation>,
) {
    if !truthy(values.get("encryption.enabled")) {
        return;
    }
    let word = print(values.get("encryption.type"));
    if config["data"].get(format!("enable-{word}")).is_some() {
        return;
    }
    findings.push(Violation::of_written(
        values,
        "encryption.type",
        format!(
            "{} is no encryption Cilium {cilium} knows ({}); with it the chart turns no encryption on and the cluster runs unencrypted although encryption.enabled is true",
            cilium_cmp_yaml::limits::quoted(&word),
            crate::cilium_facts::encryption_types(cilium).join(", ")
        ),
    ));
}

fn object_name(object: &Value) -> String {
    cilium_cmp_yaml::limits::shown(&format!(
        "{} {}",
        object["kind"].as_str().unwrap_or("object"),
        object["metadata"]["name"].as_str().unwrap_or("")
    ))
}

/// The API server refuses a negative replica count.
fn negative_replicas(object: &Value, values: &Values, findings: &mut Vec<Violation>) {
    let Some(replicas) = object["spec"]["replicas"].as_f64() else {
        return;
    };
    if replicas >= 0.0 {
        return;
    }
    let hint = user_paths(values.user(), &|key, v| {
        key == "replicas" && v.as_f64().is_some_and(|n| n == replicas)
    });
    findings.push(Violation::of_object(
        object_name(object),
        from_values(values, &hint),
        format!(
            "spec.replicas would be {}; Kubernetes refuses a negative replica count (0 or more)",
            print(&object["spec"]["replicas"])
        ),
    ));
}

/// The fields a pod template, its containers, a workload and a Service must hold as a mapping
/// or as a list; the API server refuses the object otherwise (Helm writes whatever the values
/// hold, e.g. `nodeSelector: []`).
const POD_MAPS: &[&str] = &["nodeSelector", "affinity", "securityContext"];
const POD_LISTS: &[&str] = &[
    "tolerations",
    "containers",
    "initContainers",
    "volumes",
    "imagePullSecrets",
    "topologySpreadConstraints",
    "hostAliases",
];
const CONTAINER_MAPS: &[&str] = &[
    "resources",
    "securityContext",
    "livenessProbe",
    "readinessProbe",
    "startupProbe",
    "lifecycle",
];
const CONTAINER_LISTS: &[&str] = &["env", "envFrom", "ports", "volumeMounts", "args", "command"];
const METADATA_MAPS: &[&str] = &["labels", "annotations"];

#[derive(Clone, Copy, PartialEq)]
enum Shape {
    Map,
    List,
}

fn shapes(object: &Value, values: &Values, findings: &mut Vec<Violation>) {
    let mut wrong: Vec<(String, &str, Shape)> = Vec::new();
    let mut not_text: Vec<(String, String)> = Vec::new();
    let mut expect = |at: &str, node: &Value, fields: &[&'static str], shape: Shape| {
        for field in fields {
            let v = &node[*field];
            let bad = match shape {
                Shape::Map => !(v.is_null() || v.is_object()),
                Shape::List => !(v.is_null() || v.is_array()),
            };
            if bad {
                wrong.push((format!("{at}{field}"), *field, shape));
            }
        }
    };
    // Labels, annotations and selectors map text to text; a number or a boolean (`prometheus.io/
    // port: 9962`) is refused by the API server.
    let mut texts = |at: &str, node: &Value, fields: &[&str]| {
        for field in fields {
            for (key, v) in node[*field].as_object().into_iter().flatten() {
                if !v.is_string() {
                    not_text.push((format!("{at}{field}.{key}"), key.clone()));
                }
            }
        }
    };
    expect("metadata.", &object["metadata"], METADATA_MAPS, Shape::Map);
    texts("metadata.", &object["metadata"], METADATA_MAPS);
    if let Some((at, template)) = pod_template(object) {
        let meta = format!("{at}metadata.");
        expect(&meta, &template["metadata"], METADATA_MAPS, Shape::Map);
        texts(&meta, &template["metadata"], METADATA_MAPS);
        let spec = &template["spec"];
        expect(&format!("{at}spec."), spec, POD_MAPS, Shape::Map);
        expect(&format!("{at}spec."), spec, POD_LISTS, Shape::List);
        texts(&format!("{at}spec."), spec, &["nodeSelector"]);
        for list in ["containers", "initContainers"] {
            for container in spec[list].as_array().into_iter().flatten() {
                let name = container["name"].as_str().unwrap_or("?");
                let at = format!("{at}spec.{list}[{name}].");
                expect(&at, container, CONTAINER_MAPS, Shape::Map);
                expect(&at, container, CONTAINER_LISTS, Shape::List);
            }
        }
    }
    if object["kind"] == "Service" {
        expect("spec.", &object["spec"], &["selector"], Shape::Map);
        expect("spec.", &object["spec"], &["ports"], Shape::List);
        texts("spec.", &object["spec"], &["selector"]);
    }
    for (at, field, shape) in wrong {
        let (want, is_wrong): (&str, fn(&Value) -> bool) = match shape {
            Shape::Map => ("a mapping (key: value lines)", |v| {
                !v.is_object() && !v.is_null()
            }),
            Shape::List => ("a list (- item lines)", |v| !v.is_array() && !v.is_null()),
        };
        let hint = user_paths(values.user(), &|key, v| {
            (key == field || key.eq_ignore_ascii_case(&format!("pod{field}"))) && is_wrong(v)
        });
        findings.push(Violation::of_object(
            object_name(object),
            from_values(values, &hint),
            format!("{at} would not be {want}; the API server refuses the object"),
        ));
    }
    for (at, key) in not_text {
        let hint = user_paths(values.user(), &|k, v| {
            k == key && !v.is_string() && !v.is_object() && !v.is_array()
        });
        findings.push(Violation::of_object(
            object_name(object),
            from_values(values, &hint),
            format!(
                "{} would not be text; labels, annotations and selectors take strings only (quote the value in the values file), and the API server refuses the object",
                cilium_cmp_yaml::limits::shown(&at),
            ),
        ));
    }
}

/// The pod template of a workload, with the path that leads to it.
fn pod_template(object: &Value) -> Option<(&'static str, &Value)> {
    match object["kind"].as_str() {
        Some("CronJob") => Some((
            "spec.jobTemplate.spec.template.",
            &object["spec"]["jobTemplate"]["spec"]["template"],
        )),
        Some("DaemonSet" | "Deployment" | "StatefulSet" | "Job" | "ReplicaSet") => {
            Some(("spec.template.", &object["spec"]["template"]))
        }
        _ => None,
    }
}

/// A container's resource amounts as the API server reads them: each must be a quantity
/// (`resource.ParseQuantity`, k8s.io/apimachinery pkg/api/resource/quantity.go, or the object is
/// not even decoded), none negative, and no request above its limit
/// (`ValidateResourceRequirements`, kubernetes pkg/apis/core/validation/validation.go:
/// "must be greater than or equal to 0", "must be less than or equal to ... limit"). Helm
/// writes `cpu: lots` without a word; the DaemonSet is refused at apply, after the sync began.
fn resource_amounts(object: &Value, values: &Values, findings: &mut Vec<Violation>) {
    let Some((at, template)) = pod_template(object) else {
        return;
    };
    for list in ["containers", "initContainers"] {
        for container in template["spec"][list].as_array().into_iter().flatten() {
            let name = container["name"].as_str().unwrap_or("?");
            let resources = &container["resources"];
            for kind in ["limits", "requests"] {
                for (resource, amount) in resources[kind].as_object().into_iter().flatten() {
                    let field = format!("{at}spec.{list}[{name}].resources.{kind}.{resource}");
                    let problem = if !crate::quantity::is_quantity(amount) {
                        "which the API server does not read as a quantity (write one such as 100m, 1, 128Mi or 1Gi), so it refuses the object"
                    } else if crate::quantity::amount(amount).is_some_and(|n| n < 0) {
                        "and Kubernetes refuses a negative resource amount (0 or more)"
                    } else {
                        continue;
                    };
                    let hint = user_paths(values.user(), &|key, v| key == resource && v == amount);
                    findings.push(Violation::of_object(
                        object_name(object),
                        from_values(values, &hint),
                        format!(
                            "{} would be {}, {problem}",
                            cilium_cmp_yaml::limits::shown(&field),
                            written(amount),
                        ),
                    ));
                }
            }
            for (resource, request) in resources["requests"].as_object().into_iter().flatten() {
                let limit = &resources["limits"][resource];
                let (Some(r), Some(l)) = (
                    crate::quantity::amount(request),
                    crate::quantity::amount(limit),
                ) else {
                    continue;
                };
                if r > l && l >= 0 {
                    let hint = user_paths(values.user(), &|key, v| {
                        key == resource && (v == request || v == limit)
                    });
                    findings.push(Violation::of_object(
                        object_name(object),
                        from_values(values, &hint),
                        format!(
                            "{at}spec.{list}[{name}].resources would request {} {} with a limit of {}; Kubernetes refuses a request above its limit",
                            written(request),
                            cilium_cmp_yaml::limits::shown(resource),
                            written(limit),
                        ),
                    ));
                }
            }
        }
    }
}

/// A rendered value as a message shows it: text quoted, a number as Go prints it.
fn written(v: &Value) -> String {
    match v {
        Value::String(s) => format!("\"{}\"", cilium_cmp_yaml::limits::shown(s)),
        _ => cilium_cmp_yaml::limits::shown(&print(v)),
    }
}

/// A ConfigMap's or Secret's data beyond what Kubernetes stores in one object.
fn data_size(object: &Value, findings: &mut Vec<Violation>) {
    let kind = object["kind"].as_str().unwrap_or("");
    let fields: &[(&str, bool)] = match kind {
        "ConfigMap" => &[("data", false), ("binaryData", true)],
        "Secret" => &[("data", true), ("stringData", false)],
        _ => return,
    };
    // Base64 holds three bytes in four characters.
    let size = |value: &Value, base64: bool| {
        let chars = value.as_str().map_or_else(|| print(value).len(), str::len);
        if base64 {
            chars / 4 * 3
        } else {
            chars
        }
    };
    let entries = || {
        fields.iter().flat_map(|(field, base64)| {
            object[*field]
                .as_object()
                .into_iter()
                .flatten()
                .map(move |(key, value)| (key, size(value, *base64)))
        })
    };
    let total: usize = entries().map(|(_, n)| n).sum();
    if total <= MAX_CONFIG_DATA_BYTES {
        return;
    }
    let mut largest: Vec<(usize, &String)> = entries().map(|(k, n)| (n, k)).collect();
    largest.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(b.1)));
    let biggest: Vec<String> = largest
        .iter()
        .take(3)
        .map(|(n, k)| format!("{} ({n} bytes)", cilium_cmp_yaml::limits::quoted(k)))
        .collect();
    findings.push(Violation::of_object(
        object_name(object),
        Vec::new(),
        format!(
            "its data would be {total} bytes; Kubernetes stores at most {MAX_CONFIG_DATA_BYTES} bytes (1 MiB) in one {kind}; largest entries: {}",
            biggest.join(", ")
        ),
    ));
}

/// Paths of the user's values whose key and value match, for pointing from a rendered field
/// back at what the user wrote (a few at most).
fn user_paths(user: &Value, matches: &dyn Fn(&str, &Value) -> bool) -> Vec<String> {
    fn walk(
        node: &Value,
        path: &str,
        matches: &dyn Fn(&str, &Value) -> bool,
        out: &mut Vec<String>,
    ) {
        let Value::Object(map) = node else { return };
        for (key, value) in map {
            if out.len() >= 3 {
                return;
            }
            let here = if path.is_empty() {
                key.clone()
            } else {
                format!("{path}.{key}")
            };
            if matches(key, value) {
                out.push(here.clone());
            }
            walk(value, &here, matches, out);
        }
    }
    let mut out = Vec::new();
    walk(user, "", matches, &mut out);
    out
}

/// The values at `paths` with where each was set (`Violation` shows them after the object).
fn from_values(values: &Values, paths: &[String]) -> Vec<Origin> {
    paths.iter().map(|p| Origin::of(values, p)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn findings_of(object: Value) -> Vec<String> {
        let values = Values::resolve(json!({}), Vec::new());
        let mut findings = Vec::new();
        shapes(&object, &values, &mut findings);
        resource_amounts(&object, &values, &mut findings);
        data_size(&object, &mut findings);
        findings.iter().map(Violation::to_string).collect()
    }

    #[test]
    fn shapes_kubernetes_refuses_are_found() {
        let found = findings_of(json!({
            "kind": "Deployment",
            "metadata": {"name": "d", "labels": {"a": "b"}},
            "spec": {"template": {
                "metadata": {"annotations": {"port": 9962.0}},
                "spec": {
                    "nodeSelector": [],
                    "tolerations": {"key": "x"},
                    "containers": [{"name": "c", "resources": ["cpu"], "args": "--x"}]
                }
            }}
        }));
        let text = found.join("\n");
        for needle in [
            "spec.template.metadata.annotations.port would not be text",
            "spec.template.spec.nodeSelector would not be a mapping",
            "spec.template.spec.tolerations would not be a list",
            "spec.template.spec.containers[c].resources would not be a mapping",
            "spec.template.spec.containers[c].args would not be a list",
        ] {
            assert!(text.contains(needle), "{needle}: {text}");
        }
        assert_eq!(found.len(), 5, "{text}");
        // Lists of strings elsewhere (RBAC rules) are not pod fields.
        assert!(findings_of(json!({
            "kind": "ClusterRole",
            "metadata": {"name": "r"},
            "rules": [{"resources": ["pods"], "verbs": ["get"]}]
        }))
        .is_empty());
    }

    #[test]
    fn resource_amounts_the_api_server_refuses_are_found() {
        let with = |resources: Value| {
            findings_of(json!({
                "kind": "DaemonSet",
                "metadata": {"name": "cilium"},
                "spec": {"template": {"spec": {
                    "containers": [{"name": "agent", "resources": resources}]
                }}}
            }))
        };
        // What the API server reads: suffixes, exponents, a point, blanks around, numbers.
        assert!(with(json!({
            "limits": {"cpu": "1.5", "memory": "1Gi", "ephemeral-storage": 1e9, "x": " 2e3 "},
            "requests": {"cpu": "500m", "memory": "512Mi", "hugepages-2Mi": "0"}
        }))
        .is_empty());
        let text = with(json!({
            "limits": {"cpu": "lots", "memory": "1 Gi", "x": true},
            "requests": {"memory": "-1Gi"}
        }))
        .join("\n");
        for needle in [
            "containers[agent].resources.limits.cpu would be \"lots\", which the API server does not read",
            "limits.memory would be \"1 Gi\", which",
            "limits.x would be true, which",
            "requests.memory would be \"-1Gi\", and Kubernetes refuses a negative",
        ] {
            assert!(text.contains(needle), "{needle}: {text}");
        }
        let text = with(json!({"limits": {"cpu": "100m"}, "requests": {"cpu": 1.0}})).join("\n");
        assert!(
            text.contains("would request 1 cpu with a limit of \"100m\""),
            "{text}"
        );
        assert!(with(json!({"limits": {"cpu": "1"}, "requests": {"cpu": "1000m"}})).is_empty());
    }

    #[test]
    fn one_cause_in_many_objects_is_one_line() {
        let origin = vec![Origin {
            path: "commonLabels.a".into(),
            origin: "values.yaml line 1".into(),
            span: None,
        }];
        let label = "metadata.labels.a would not be text".to_string();
        let mut findings: Vec<Violation> = ["A", "B", "C", "D", "E"]
            .iter()
            .map(|n| Violation::of_object(format!("ConfigMap {n}"), origin.clone(), label.clone()))
            .collect();
        findings.insert(
            2,
            Violation::of_object("ConfigMap B".into(), origin.clone(), "other".into()),
        );
        findings.push(Violation::of_value("x", "values.yaml line 2", "bad".into()));
        findings.push(Violation::of_value("x", "values.yaml line 2", "bad".into()));
        let lines: Vec<String> = one_line_per_cause(findings)
            .iter()
            .map(Violation::to_string)
            .collect();
        assert_eq!(
            lines,
            [
                "ConfigMap A, ConfigMap B, ConfigMap C and 2 more objects (from commonLabels.a, set in values.yaml line 1): metadata.labels.a would not be text",
                "ConfigMap B (from commonLabels.a, set in values.yaml line 1): other",
                "x (set in values.yaml line 2): bad",
            ]
        );
    }

    #[test]
    fn config_data_beyond_one_mebibyte_is_found() {
        let big = "x".repeat(MAX_CONFIG_DATA_BYTES);
        let found = findings_of(json!({
            "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": big, "b": "y"}
        }));
        assert!(found[0].contains("1048577 bytes"), "{found:?}");
        let found = findings_of(json!({
            "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "x".repeat(MAX_CONFIG_DATA_BYTES)}
        }));
        assert!(found.is_empty(), "exactly the limit is accepted");
    }
}
