//! The combination test's cases (`tests/it/combinations.rs`): random, realistic changes to a
//! release's own value paths over a scenario's values, drawn from a seeded generator so that a
//! case is the same on every machine and can be run alone.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};

/// The Kubernetes version of a case whose base scenario names none.
const KUBE_VERSION: &str = "1.35.0";

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

// ---------------------------------------------------------------------------------------------
// A small seeded generator (splitmix64): the same seed gives the same cases on every machine.

struct Rng(u64);

impl Rng {
    fn new(parts: &[u64]) -> Rng {
        let mut r = Rng(0x9e37_79b9_7f4a_7c15);
        for p in parts {
            r.0 ^= p.wrapping_mul(0xbf58_476d_1ce4_e5b9);
            r.next();
        }
        r
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}

fn text_hash(s: &str) -> u64 {
    // FNV-1a: stable across Rust versions, unlike the standard library's hasher.
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
    })
}

// ---------------------------------------------------------------------------------------------
// Realistic values

/// Realistic values for paths whose kind the schema does not say (enums written as free
/// strings, numbers with a meaning), by full path. `tls.auto.method` lacks `helm` by rule.
const CURATED: &[(&str, &[&str])] = &[
    ("routingMode", &["\"native\"", "\"tunnel\""]),
    ("tunnelProtocol", &["\"vxlan\"", "\"geneve\""]),
    ("kubeProxyReplacement", &["\"true\"", "\"false\"", "true"]),
    ("ipam.mode", &["\"kubernetes\"", "\"cluster-pool\""]),
    ("loadBalancer.mode", &["\"snat\"", "\"dsr\"", "\"hybrid\""]),
    ("loadBalancer.algorithm", &["\"random\"", "\"maglev\""]),
    (
        "loadBalancer.acceleration",
        &["\"disabled\"", "\"native\"", "\"best-effort\""],
    ),
    ("loadBalancer.l7.backend", &["\"disabled\"", "\"envoy\""]),
    (
        "loadBalancer.l7.algorithm",
        &["\"round_robin\"", "\"least_request\"", "\"random\""],
    ),
    ("encryption.type", &["\"wireguard\"", "\"ipsec\""]),
    (
        "hubble.tls.auto.method",
        &["\"cronJob\"", "\"certmanager\""],
    ),
    (
        "clustermesh.apiserver.tls.auto.method",
        &["\"cronJob\"", "\"certmanager\""],
    ),
    (
        "clustermesh.apiserver.tls.authMode",
        &["\"legacy\"", "\"migration\"", "\"cluster\""],
    ),
    (
        "clustermesh.apiserver.kvstoremesh.kvstoreMode",
        &["\"internal\"", "\"external\""],
    ),
    (
        "clustermesh.apiserver.metrics.etcd.mode",
        &["\"basic\"", "\"extensive\""],
    ),
    (
        "clustermesh.apiserver.service.type",
        &["\"NodePort\"", "\"LoadBalancer\"", "\"ClusterIP\""],
    ),
    ("identityAllocationMode", &["\"crd\"", "\"kvstore\""]),
    (
        "policyEnforcementMode",
        &["\"default\"", "\"always\"", "\"never\""],
    ),
    ("policyDenyResponse", &["\"none\"", "\"icmp\""]),
    ("serviceNoBackendResponse", &["\"reject\"", "\"drop\""]),
    (
        "bpf.datapathMode",
        &["\"veth\"", "\"netkit\"", "\"netkit-l2\""],
    ),
    (
        "bpf.monitorAggregation",
        &["\"none\"", "\"low\"", "\"medium\"", "\"maximum\""],
    ),
    (
        "cni.chainingMode",
        &["\"none\"", "\"generic-veth\"", "\"portmap\""],
    ),
    ("cni.exclusive", &["true", "false"]),
    (
        "ingressController.loadbalancerMode",
        &["\"dedicated\"", "\"shared\""],
    ),
    (
        "ingressController.service.type",
        &["\"LoadBalancer\"", "\"NodePort\""],
    ),
    (
        "gatewayAPI.gatewayClass.create",
        &["\"auto\"", "\"true\"", "\"false\""],
    ),
    (
        "hubble.relay.service.type",
        &["\"ClusterIP\"", "\"NodePort\""],
    ),
    ("hubble.ui.service.type", &["\"ClusterIP\"", "\"NodePort\""]),
    (
        "hubble.metrics.enabled",
        &[
            "[\"dns\",\"drop\",\"tcp\",\"flow\",\"icmp\",\"http\"]",
            "[\"drop\",\"flow:sourceContext=pod;destinationContext=pod\"]",
        ],
    ),
    (
        "debug.verbose",
        &["\"flow\"", "\"kvstore envoy\"", "\"datapath\""],
    ),
    (
        "k8sServiceHost",
        &["\"api.cluster.example\"", "\"10.0.0.1\""],
    ),
    ("k8sServicePort", &["6443", "\"7445\""]),
    ("ipv4NativeRoutingCIDR", &["\"10.0.0.0/8\""]),
    (
        "pmtuDiscovery.packetizationLayerPMTUDMode",
        &["\"blackhole\"", "\"always\"", "\"disabled\""],
    ),
    (
        "bgpControlPlane.routerIDAllocation.mode",
        &["\"default\"", "\"ip-pool\""],
    ),
    (
        "defaultLBServiceIPAM",
        &["\"lbipam\"", "\"nodeipam\"", "\"none\""],
    ),
    (
        "dnsProxy.dnsRejectResponseCode",
        &["\"refused\"", "\"nameError\""],
    ),
    ("cluster.name", &["\"prod-eu-1\"", "\"homelab\""]),
    ("cluster.id", &["1", "7", "255"]),
    ("priorityClassName", &["\"system-node-critical\""]),
    (
        "operator.priorityClassName",
        &["\"system-cluster-critical\""],
    ),
    ("dnsPolicy", &["\"ClusterFirstWithHostNet\""]),
    ("operator.replicas", &["1", "3"]),
    ("hubble.relay.replicas", &["2"]),
    ("clustermesh.apiserver.replicas", &["2", "3"]),
    ("updateStrategy.type", &["\"OnDelete\""]),
    ("image.pullPolicy", &["\"Always\"", "\"IfNotPresent\""]),
    ("imagePullSecrets", &["[{\"name\":\"regcred\"}]"]),
    ("extraArgs", &["[\"--enable-l7-proxy=false\"]"]),
    (
        "operator.extraArgs",
        &["[\"--unmanaged-pod-watcher-interval=30\"]"],
    ),
    (
        "extraEnv",
        &["[{\"name\":\"GOMEMLIMIT\",\"value\":\"1GiB\"}]"],
    ),
    (
        "operator.extraEnv",
        &["[{\"name\":\"GOMEMLIMIT\",\"value\":\"512MiB\"}]"],
    ),
    (
        "extraConfig",
        &["{\"enable-envoy-config\":\"true\",\"mtu\":\"1450\"}"],
    ),
    ("MTU", &["1450", "9000"]),
];

/// Map keys whose empty default takes a string map (labels, annotations, node selectors).
fn takes_string_map(key: &str) -> bool {
    let k = key.to_ascii_lowercase();
    k.ends_with("labels") || k.ends_with("annotations") || k == "nodeselector"
}

fn curated(path: &str) -> Option<&'static [&'static str]> {
    CURATED.iter().find(|(p, _)| *p == path).map(|(_, v)| *v)
}

/// The schema node of a path (following `properties`), if the schema has one.
fn schema_at<'a>(schema: &'a Value, path: &[String]) -> Option<&'a Value> {
    let mut node = schema;
    for k in path {
        node = node.get("properties")?.get(k)?;
    }
    Some(node)
}

fn schema_enum(node: Option<&Value>) -> Vec<Value> {
    let Some(node) = node else { return Vec::new() };
    let mut out: Vec<Value> = node
        .get("enum")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for k in ["anyOf", "oneOf"] {
        for alt in node.get(k).and_then(Value::as_array).into_iter().flatten() {
            out.extend(
                alt.get("enum")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .cloned(),
            );
        }
    }
    out
}

/// A realistic new value for the path (dotted, and as keys) whose default is `default`, or None
/// when its kind has none.
fn realistic(
    dotted: &str,
    keys: &[String],
    default: &Value,
    schema: &Value,
    rng: &mut Rng,
) -> Option<Value> {
    if let Some(values) = curated(dotted) {
        let text = rng.pick(values);
        return Some(serde_json::from_str(text).expect("CURATED holds JSON"));
    }
    let allowed = schema_enum(schema_at(schema, keys));
    if !allowed.is_empty() {
        let others: Vec<Value> = allowed.into_iter().filter(|v| v != default).collect();
        return (!others.is_empty()).then(|| rng.pick(&others).clone());
    }
    let key = keys.last().map(String::as_str).unwrap_or("");
    match default {
        Value::Bool(b) => Some(Value::Bool(!b)),
        Value::Number(n) => {
            let n = n.as_f64()?;
            if n.fract() != 0.0 || n < 0.0 {
                return None;
            }
            let n = n as u64;
            let v = match rng.below(3) {
                0 if n > 1 => n / 2,
                1 => n * 2,
                _ if n == 0 => 1 + rng.below(5) as u64,
                _ => n + 1,
            };
            Some(json!(v))
        }
        Value::String(s) if !s.is_empty() => {
            if key.eq_ignore_ascii_case("pullPolicy") {
                return Some(json!(if s == "Always" {
                    "IfNotPresent"
                } else {
                    "Always"
                }));
            }
            // Durations as the chart's defaults write them ("5m0s", "30s", "100ms").
            if is_duration(s) {
                return Some(json!(rng.pick(&["10s", "2m", "1h0m0s", "250ms"])));
            }
            if let Some(q) = doubled_quantity(s) {
                return Some(json!(q));
            }
            if s.starts_with('/') {
                return Some(json!(format!("{s}-alt")));
            }
            // A name or label value: another one of the same shape.
            if s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.')
                && s.as_bytes()[0].is_ascii_lowercase()
            {
                return Some(json!(format!("{s}-b")));
            }
            None
        }
        Value::String(_) => {
            // An empty string is an optional feature's setting; only names are guessable.
            let k = key.to_ascii_lowercase();
            (k.ends_with("name") || k.ends_with("classname"))
                .then(|| json!(format!("custom-{}", k.trim_end_matches("name"))))
        }
        // Written out as null, as a copy of the chart's values.yaml does: Helm keeps that null
        // (below the top level), and the chart's `hasKey` tests see it.
        Value::Null if rng.chance(25) => Some(Value::Null),
        Value::Null => {
            let types = schema_at(schema, keys)
                .and_then(|n| n.get("type"))
                .cloned()
                .unwrap_or(Value::Null);
            let has =
                |t: &str| types == t || types.as_array().is_some_and(|a| a.iter().any(|x| x == t));
            if has("boolean") {
                Some(json!(rng.chance(50)))
            } else if has("integer") {
                Some(json!(1 + rng.below(30)))
            } else if has("object") && takes_string_map(key) {
                Some(json!({"example.com/owner": "platform"}))
            } else {
                None
            }
        }
        Value::Object(m) if m.is_empty() => {
            if takes_string_map(key) {
                Some(json!({"example.com/team": "network", "tier": "infra"}))
            } else if key == "resources" {
                Some(
                    json!({"requests": {"cpu": "100m", "memory": "128Mi"}, "limits": {"memory": "1Gi"}}),
                )
            } else {
                None
            }
        }
        Value::Array(a) if a.is_empty() && key == "extraArgs" => {
            Some(json!(["--log-driver-options=format=json"]))
        }
        Value::Array(a) if a.is_empty() && key == "extraEnv" => {
            Some(json!([{"name": "GOMAXPROCS", "value": "2"}]))
        }
        Value::Array(a) if a.is_empty() && key == "imagePullSecrets" => {
            Some(json!([{"name": "registry-credentials"}]))
        }
        Value::Array(a) => {
            if key == "tolerations" {
                Some(if a.is_empty() {
                    json!([{"key": "node-role.kubernetes.io/control-plane", "operator": "Exists", "effect": "NoSchedule"}])
                } else {
                    json!([])
                })
            } else if !a.is_empty() && a.iter().all(Value::is_string) && rng.chance(50) {
                Some(json!([a[0].clone()]))
            } else if !a.is_empty() {
                Some(json!([]))
            } else {
                None
            }
        }
        _ => None,
    }
}

/// A Kubernetes quantity as the chart's defaults write them ("100m", "128Mi", "10"), doubled.
fn doubled_quantity(s: &str) -> Option<String> {
    let n = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let unit = &s[n..];
    if n == 0 || !matches!(unit, "m" | "Ki" | "Mi" | "Gi" | "k" | "M" | "G") {
        return None;
    }
    let v: u64 = s[..n].parse().ok()?;
    Some(format!("{}{unit}", v * 2))
}

fn is_duration(s: &str) -> bool {
    let mut rest = s;
    let mut parts = 0;
    while !rest.is_empty() {
        let n = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        if n == 0 {
            return false;
        }
        rest = &rest[n..];
        let u = rest
            .find(|c: char| c.is_ascii_digit())
            .unwrap_or(rest.len());
        if !matches!(&rest[..u], "ms" | "s" | "m" | "h") {
            return false;
        }
        rest = &rest[u..];
        parts += 1;
    }
    parts > 0
}

/// Every leaf path of the defaults (scalars, lists, empty maps), in order.
fn leaves(node: &Value, prefix: &mut Vec<String>, out: &mut Vec<(Vec<String>, Value)>) {
    match node {
        Value::Object(m) if !m.is_empty() => {
            for (k, v) in m {
                prefix.push(k.clone());
                leaves(v, prefix, out);
                prefix.pop();
            }
        }
        _ => out.push((prefix.clone(), node.clone())),
    }
}

fn set_path(root: &mut Value, keys: &[String], value: Value) {
    let mut node = root;
    for (i, k) in keys.iter().enumerate() {
        if !node.is_object() {
            *node = Value::Object(Map::new());
        }
        let m = node.as_object_mut().unwrap();
        if i + 1 == keys.len() {
            m.insert(k.clone(), value);
            return;
        }
        node = m
            .entry(k.clone())
            .or_insert_with(|| Value::Object(Map::new()));
    }
}

fn get_path<'a>(root: &'a Value, keys: &[&str]) -> Option<&'a Value> {
    keys.iter().try_fold(root, |n, k| n.get(k))
}

// ---------------------------------------------------------------------------------------------
// Cases

/// What one release offers the generator: its changeable paths and its schema.
pub struct Release {
    pub version: &'static str,
    candidates: Vec<(Vec<String>, Value)>,
    schema: Value,
}

impl Release {
    pub fn load(version: &'static str) -> Release {
        let read = |f: &str| -> Value {
            let p = root().join("data").join(version).join(f);
            serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap()
        };
        let mut all = Vec::new();
        leaves(&read("values.json"), &mut Vec::new(), &mut all);
        Release {
            version,
            candidates: all,
            schema: read("values.schema.json"),
        }
    }
}

/// A base scenario: its file name (for messages) and document.
pub struct Base {
    name: String,
    doc: Value,
}

pub fn bases() -> Vec<Base> {
    let mut out = Vec::new();
    for dir in [
        root().join("../shared/cilium-reference/scenarios"),
        root().join("tests/scenarios"),
    ] {
        let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
            .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
            .unwrap_or_default();
        files.retain(|p| p.extension().is_some_and(|x| x == "yaml"));
        files.sort();
        for f in files {
            let text = std::fs::read_to_string(&f).unwrap();
            let doc = cilium_cmp_yaml::yaml::parse_values(&text)
                .unwrap_or_else(|e| panic!("{}: {e}", f.display()))
                .value;
            // The committed references of a scenario that needs the chart archive are made
            // with it; these cases always have it.
            out.push(Base {
                name: f.file_stem().unwrap().to_string_lossy().into_owned(),
                doc,
            });
        }
    }
    out
}

pub struct Case {
    pub name: String,
    pub version: &'static str,
    /// The scenario document (kubeVersion, apiVersions, namespace, values) as JSON text.
    pub text: String,
    /// What was drawn, for the failure message: base scenario and changed paths.
    pub drawn: String,
}

/// Case `index` of `release` for `seed`.
pub fn make_case(seed: u64, release: &Release, bases: &[Base], index: usize) -> Case {
    let mut rng = Rng::new(&[seed, text_hash(release.version), index as u64]);
    let base = rng.pick(bases);
    let mut values = base.doc["values"].clone();
    if !values.is_object() {
        values = json!({});
    }
    let n = 4 + rng.below(37);
    let mut changed = Vec::new();
    let mut tries = 0;
    while changed.len() < n && tries < n * 20 {
        tries += 1;
        let (keys, default) = rng.pick(&release.candidates);
        let dotted = keys.join(".");
        if changed.iter().any(|(p, _): &(String, Value)| p == &dotted) {
            continue;
        }
        let Some(v) = realistic(&dotted, keys, default, &release.schema, &mut rng) else {
            continue;
        };
        set_path(&mut values, keys, v.clone());
        changed.push((dotted, v));
    }
    // By rule (see the top of this file): certificates are never minted at render time.
    for method in [
        &["hubble", "tls", "auto", "method"][..],
        &["clustermesh", "apiserver", "tls", "auto", "method"],
    ] {
        let keys: Vec<String> = method.iter().map(|s| s.to_string()).collect();
        if get_path(&values, method).is_none_or(|v| v == "helm") {
            set_path(&mut values, &keys, json!("cronJob"));
        }
    }
    let mut api_versions: Vec<Value> = base.doc["apiVersions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    // A values file that turns a ServiceMonitor on is usually meant for a cluster with the
    // Prometheus operator's API; without it the chart refuses (compared too, less often).
    let wants_monitors = changed
        .iter()
        .any(|(p, v)| p.ends_with("serviceMonitor.enabled") && *v == json!(true));
    for (extra, percent) in [
        (
            "monitoring.coreos.com/v1",
            if wants_monitors { 80 } else { 20 },
        ),
        ("cert-manager.io/v1", 20),
        ("gateway.networking.k8s.io/v1", 20),
    ] {
        if rng.chance(percent) && !api_versions.iter().any(|a| a == extra) {
            api_versions.push(json!(extra));
        }
    }
    let doc = json!({
        "kubeVersion": base.doc["kubeVersion"].as_str().unwrap_or(KUBE_VERSION),
        "apiVersions": api_versions,
        "namespace": base.doc["namespace"].as_str().unwrap_or("kube-system"),
        "values": values,
    });
    let drawn = format!(
        "base scenario {}; changed: {}",
        base.name,
        changed
            .iter()
            .map(|(p, v)| format!("{p}={v}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    Case {
        name: format!("{}/{index:04}", release.version),
        version: release.version,
        text: serde_json::to_string_pretty(&doc).unwrap() + "\n",
        drawn,
    }
}

/// The newest patch of each supported minor line.
pub fn newest_patches() -> Vec<&'static str> {
    let mut newest: BTreeMap<String, &'static str> = BTreeMap::new();
    for v in cilium_cmp_render::versions::supported() {
        let mut parts = v.split('.');
        let minor = format!("{}.{}", parts.next().unwrap(), parts.next().unwrap());
        let patch: u32 = parts.next().unwrap().parse().unwrap();
        let keep = newest
            .get(&minor)
            .is_none_or(|old| old.rsplit('.').next().unwrap().parse::<u32>().unwrap() < patch);
        if keep {
            newest.insert(minor, v);
        }
    }
    newest.into_values().collect()
}
