//! Helpers the chart shares between components (its `_helpers.tpl`), in one place.

use crate::changes::Change;
use serde_json::{Map, Value};

use super::Ctx;
use crate::error::RenderError;
use crate::tmpl::{bare, percent_s, print, quote, range_items, truthy, with};

/// An image reference from an image block (`repository`, `tag`, `digest`, `useDigest`,
/// `override`): `override` wins, else `repository[:tag][@digest]`, each part printed with
/// `printf "%s"` as the chart's helper does (so an unset digest prints Go's `%!s(<nil>)`).
pub fn image(block: &Value) -> String {
    let over = &block["override"];
    if truthy(over) {
        return percent_s(over);
    }
    let mut s = percent_s(&block["repository"]);
    let tag = &block["tag"];
    if truthy(tag) {
        s.push(':');
        s.push_str(&print(tag));
    }
    if truthy(&block["useDigest"]) {
        s.push('@');
        s.push_str(&percent_s(&block["digest"]));
    }
    s
}

/// `commonLabels` as an object's labels, or nothing when empty.
pub fn common_labels(ctx: &Ctx) -> Option<Value> {
    let l = ctx.v("commonLabels");
    truthy(l).then(|| l.clone())
}

/// Merges maps left to right (later keys win), as consecutive `toYaml` blocks do when their keys
/// differ; absent and empty maps are skipped. Returns None when the result is empty.
pub fn merged(maps: &[&Value]) -> Option<Value> {
    let mut out = Map::new();
    for m in maps {
        if let Value::Object(m) = m {
            for (k, v) in m {
                out.insert(k.clone(), v.clone());
            }
        }
    }
    (!out.is_empty()).then_some(Value::Object(out))
}

/// Inserts `key: value` into an object unless value is None.
pub fn put(obj: &mut Value, key: &str, value: Option<Value>) {
    if let (Value::Object(m), Some(v)) = (obj, value) {
        m.insert(key.to_string(), v);
    }
}

/// A run of the chart's `with VALUE` blocks that insert the value under a key: each
/// (key, value path) inserted only when the value is Go-template true.
pub fn put_with(obj: &mut Value, ctx: &Ctx, pairs: &[(&str, &str)]) {
    for (key, path) in pairs {
        put(obj, key, with(ctx.v(path)));
    }
}

/// `cilium.priorityClass`: the component's own class, else the critical class when
/// `enableCriticalPriorityClass` is on.
pub fn priority_class(ctx: &Ctx, own: &Value, critical: &str) -> Option<String> {
    if truthy(own) {
        Some(print(own))
    } else if ctx.on("enableCriticalPriorityClass") && !critical.is_empty() {
        Some(critical.to_string())
    } else {
        None
    }
}

/// What the chart's `envoyDaemonSetEnabled` helper prints: `false` without L7 proxying, else
/// `envoy.enabled` as written, else whether `upgradeCompatibility` allows the 1.16 default.
pub fn envoy_daemonset_text(ctx: &Ctx) -> Result<String, RenderError> {
    if !ctx.on("l7Proxy") {
        return Ok("false".into());
    }
    let e = ctx.v("envoy.enabled");
    if !e.is_null() {
        return Ok(print(e));
    }
    Ok(upgrade_compat_at_least(ctx, 1, 16)?.to_string())
}

/// The standalone Envoy DaemonSet runs: the chart compares the helper's text with "true".
pub fn envoy_daemonset_enabled(ctx: &Ctx) -> Result<bool, RenderError> {
    Ok(envoy_daemonset_text(ctx)? == "true")
}

/// What the chart's `readSecretsOnlyFromSecretsNamespace` helper prints.
pub fn read_secrets_only_text(ctx: &Ctx) -> String {
    let own = ctx.v("tls.readSecretsOnlyFromSecretsNamespace");
    if !own.is_null() {
        return print(own);
    }
    let backend = ctx.v("tls.secretsBackend");
    if !backend.is_null() {
        return (backend.as_str() == Some("local")).to_string();
    }
    "true".into()
}

/// Secrets are read only from the secrets namespace: the chart compares the text with "true".
pub fn read_secrets_only_from_secrets_namespace(ctx: &Ctx) -> bool {
    read_secrets_only_text(ctx) == "true"
}

/// What the chart's `secretSyncEnabled` helper prints.
pub fn secret_sync_text(ctx: &Ctx) -> Result<String, RenderError> {
    let own = ctx.v("tls.secretSync.enabled");
    if !own.is_null() {
        return Ok(print(own));
    }
    Ok(upgrade_compat_at_least(ctx, 1, 17)?.to_string())
}

/// Secret synchronisation is on: the chart compares the helper's text with "true".
pub fn secret_sync_enabled(ctx: &Ctx) -> Result<bool, RenderError> {
    Ok(secret_sync_text(ctx)? == "true")
}

/// `semverCompare ">=MAJOR.MINOR" (default "MAJOR.MINOR" .upgradeCompatibility)`: true when
/// unset; a value that is not a version fails, as Helm's comparison fails the render.
pub fn upgrade_compat_at_least(ctx: &Ctx, major: u64, minor: u64) -> Result<bool, RenderError> {
    Ok(upgrade_compat(ctx)?.is_none_or(|v| v >= (major, minor)))
}

/// `upgradeCompatibility` as (major, minor) when set. Helm's semver comparison fails on text
/// that is not a version, and never lets a pre-release (`1.16.0-rc.1`) satisfy `>=1.X`, which
/// is modelled as version 0.0.
pub fn upgrade_compat(ctx: &Ctx) -> Result<Option<(u64, u64)>, RenderError> {
    let v = ctx.v("upgradeCompatibility");
    if !truthy(v) {
        return Ok(None);
    }
    let text = print(v);
    parse_semver(&text).map(Some).ok_or_else(|| {
        ctx.invalid(
            "upgradeCompatibility",
            format!("{text:?} is not a version; write the Cilium version first installed, such as \"1.16\" or \"1.17.3\""),
        )
    })
}

/// Masterminds semver's loose form: `v?MAJOR(.MINOR(.PATCH)?)?(-PRE)?(+BUILD)?`; returns
/// (major, minor), or (0, 0) for a pre-release.
pub fn parse_semver(text: &str) -> Option<(u64, u64)> {
    semver(text).map(|((major, minor, _), pre)| if pre { (0, 0) } else { (major, minor) })
}

/// Masterminds semver's loose form (`v?1`, `1.2`, `1.2.3`, optional pre-release and build):
/// the core numbers and whether a pre-release is present.
pub fn semver(s: &str) -> Option<((u64, u64, u64), bool)> {
    let s = s.strip_prefix('v').unwrap_or(s);
    let (s, build) = match s.split_once('+') {
        Some((a, b)) => (a, Some(b)),
        None => (s, None),
    };
    let (core, pre) = match s.split_once('-') {
        Some((a, b)) => (a, Some(b)),
        None => (s, None),
    };
    let ident_ok = |x: &str| {
        x.split('.')
            .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'))
    };
    if !pre.is_none_or(ident_ok) || !build.is_none_or(ident_ok) {
        return None;
    }
    let parts: Vec<&str> = core.split('.').collect();
    if parts.is_empty() || parts.len() > 3 {
        return None;
    }
    let mut nums = [0u64; 3];
    for (i, p) in parts.iter().enumerate() {
        if p.is_empty() || !p.chars().all(|c| c.is_ascii_digit()) {
            return None;
        }
        nums[i] = p.parse().ok()?;
    }
    Some(((nums[0], nums[1], nums[2]), pre.is_some()))
}

/// `identityAllocationCRD`: identities are stored as CRDs in these modes.
pub fn identity_allocation_crd(ctx: &Ctx) -> bool {
    matches!(
        ctx.text("identityAllocationMode").as_str(),
        "crd" | "doublewrite-readkvstore" | "doublewrite-readcrd"
    )
}

/// `k8sServiceHost` / `k8sServicePort`: `auto` needs a `lookup` in a live cluster, which a
/// deterministic render cannot do, so it is refused.
pub fn k8s_service_host(ctx: &Ctx) -> Result<String, RenderError> {
    let host = ctx.text("k8sServiceHost");
    if host == "auto" {
        return Err(ctx.invalid(
            "k8sServiceHost",
            "\"auto\" makes the chart look the API server up in the live cluster (kube-public/cluster-info), which a deterministic render cannot do; write the API server's host name or address (and k8sServicePort) instead",
        ));
    }
    Ok(host)
}

/// The API server port as the chart prints it (see `k8s_service_host` for `auto`).
pub fn k8s_service_port(ctx: &Ctx) -> Result<String, RenderError> {
    k8s_service_host(ctx)?;
    Ok(ctx.text("k8sServicePort"))
}

/// Object metadata with name, optional namespace, and labels/annotations when non-empty.
pub fn metadata(
    name: &str,
    namespace: Option<&str>,
    labels: Option<Value>,
    annotations: Option<Value>,
) -> Value {
    let mut m = Map::new();
    m.insert("name".into(), Value::String(name.to_string()));
    if let Some(ns) = namespace {
        m.insert("namespace".into(), Value::String(ns.to_string()));
    }
    if let Some(l) = labels.filter(truthy) {
        m.insert("labels".into(), l);
    }
    if let Some(a) = annotations.filter(truthy) {
        m.insert("annotations".into(), a);
    }
    Value::Object(m)
}

/// A label map as the chart writes it: its fixed pairs, then each user map's `toYaml` block in
/// order (later keys win, as the last of duplicate YAML keys does; non-maps add nothing). Always
/// a map; `metadata` leaves an empty one out.
pub fn labels(fixed: &[(&str, &str)], maps: &[&Value]) -> Value {
    let mut m: Map<String, Value> = fixed
        .iter()
        .map(|(k, v)| ((*k).to_string(), Value::String((*v).to_string())))
        .collect();
    for extra in maps {
        if let Value::Object(e) = extra {
            for (k, v) in e {
                m.insert(k.clone(), v.clone());
            }
        }
    }
    Value::Object(m)
}

/// The labels a component's own objects carry in the chart: `k8s-app` and
/// `app.kubernetes.io/name` both the component's name, and part of cilium.
pub const fn app_labels(app: &'static str) -> [(&'static str, &'static str); 3] {
    [
        ("k8s-app", app),
        ("app.kubernetes.io/name", app),
        ("app.kubernetes.io/part-of", "cilium"),
    ]
}

/// `fixed` plus `helm.sh/chart` where the release writes it (from 1.20, on most objects; each
/// caller is an object whose template has the label).
pub fn with_chart_label<'a>(ctx: &'a Ctx, fixed: &[(&'a str, &'a str)]) -> Vec<(&'a str, &'a str)> {
    let mut out = fixed.to_vec();
    if ctx.plan.has(Change::HelmChartLabel) {
        out.push(("helm.sh/chart", ctx.plan.chart_label.as_str()));
    }
    out
}

/// `labels` with `commonLabels` right after the fixed pairs and before `extra`, the order in
/// which most of the chart's objects write them.
pub fn labels_with_common(ctx: &Ctx, fixed: &[(&str, &str)], extra: &[&Value]) -> Value {
    let mut maps: Vec<&Value> = vec![ctx.v("commonLabels")];
    maps.extend_from_slice(extra);
    labels(fixed, &maps)
}

/// What sets the chart's three Grafana dashboard ConfigMap templates (agent, operator,
/// Hubble) apart; the templates are otherwise the same.
pub struct Dashboards<'a> {
    /// The chart folder whose top-level `*.json` files become one ConfigMap each.
    pub dir: &'a str,
    /// A file every 1.18 chart has in `dir`, named in the error when there is no archive.
    pub known_file: &'a str,
    /// The value that turns the dashboards on, and what to set it to instead of giving the
    /// archive.
    pub enabled: &'a str,
    pub alternative: &'a str,
    /// The values block holding `namespace`, `label`, `labelValue` and `annotations`.
    pub values: &'a str,
    pub app_labels: &'a [(&'a str, &'a str)],
    /// Annotation maps in the order the template writes them (later keys win).
    pub annotations: &'a [&'a Value],
}

/// One ConfigMap per dashboard the chart bundles, named after its file, the JSON text read
/// from the chart archive (never copied into this repository).
pub fn dashboard_configmaps(ctx: &Ctx, spec: &Dashboards) -> Result<Vec<Value>, RenderError> {
    let Some(chart) = ctx.chart else {
        // Without the archive, `bundled` explains what is missing and how to avoid it.
        ctx.bundled(
            spec.enabled,
            &format!("{}{}", spec.dir, spec.known_file),
            spec.alternative,
        )?;
        return Ok(Vec::new());
    };
    let d = ctx.v(spec.values);
    let ns = if truthy(&d["namespace"]) {
        quote(&bare(&d["namespace"]))
    } else {
        ctx.namespace()
    };
    let mut extra = Map::new();
    if truthy(&d["label"]) {
        let value = if truthy(&d["labelValue"]) {
            print(&d["labelValue"])
        } else {
            "1".into()
        };
        // The label name is printed bare as a YAML key, so YAML re-types it.
        extra.insert(print(&bare(&d["label"])), Value::from(value));
    }
    let labels = labels_with_common(ctx, spec.app_labels, &[&Value::Object(extra)]);
    let annotations = merged(spec.annotations);
    let mut out = Vec::new();
    for path in chart.list(spec.dir) {
        let Some(stem) = path
            .strip_prefix(spec.dir)
            .and_then(|f| f.strip_suffix(".json"))
        else {
            continue;
        };
        if stem.contains('/') {
            continue;
        }
        let text = ctx.bundled(spec.enabled, path, spec.alternative)?;
        let name: String = stem.chars().take(63).collect();
        let name = name.strip_suffix('-').unwrap_or(&name);
        out.push(tree!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": metadata(name, Some(&ns), Some(labels.clone()), annotations.clone()),
            "data": { format!("{stem}.json"): text },
        }));
    }
    Ok(out)
}

/// The items of a user list that the chart splices into one of its own lists with `toYaml`
/// (extra args, env, volumes, containers). Anything but a list would not produce list items
/// in Helm's output either, so it is refused; unset and empty values add nothing.
pub fn list_items(ctx: &Ctx, path: &str) -> Result<Vec<Value>, RenderError> {
    match ctx.v(path) {
        v if !truthy(v) => Ok(Vec::new()),
        Value::Array(a) => Ok(a.clone()),
        _ => Err(ctx.invalid(path, "must be a list")),
    }
}

/// The `KUBERNETES_SERVICE_HOST`/`PORT` variables of the containers that must reach the API
/// server before kube-proxy (or Cilium itself) serves the Service: from `k8sServiceHostRef`
/// (a ConfigMap key) and from `k8sServiceHost`, each when set.
pub fn k8s_service_env(ctx: &Ctx) -> Result<Vec<Value>, RenderError> {
    let mut env = Vec::new();
    if ctx.on("k8sServiceHostRef.name") && ctx.on("k8sServiceHostRef.key") {
        env.push(tree!({
            "name": "KUBERNETES_SERVICE_HOST",
            "valueFrom": {"configMapKeyRef": {
                "name": bare(ctx.v("k8sServiceHostRef.name")),
                "key": bare(ctx.v("k8sServiceHostRef.key")),
            }},
        }));
        env.push(tree!({"name": "KUBERNETES_SERVICE_PORT", "value": k8s_service_port(ctx)?}));
    }
    if ctx.on("k8sServiceHost") {
        env.push(tree!({"name": "KUBERNETES_SERVICE_HOST", "value": k8s_service_host(ctx)?}));
        env.push(tree!({"name": "KUBERNETES_SERVICE_PORT", "value": k8s_service_port(ctx)?}));
    }
    Ok(env)
}

/// `priorityClassName:` as a pod spec gets it: `priority_class` printed bare into the YAML,
/// and nothing when no class applies.
pub fn priority_class_name(ctx: &Ctx, own: &Value, critical: &str) -> Option<Value> {
    priority_class(ctx, own, critical).map(|c| bare(&Value::String(c)))
}

/// The ServiceAccount `serviceAccounts.<account>`: its `name`, Cilium's namespace,
/// `commonLabels`, and the given annotations (callers merge the component's and the account's
/// own maps in the order their template writes them, which differs between components).
pub fn service_account(ctx: &Ctx, account: &str, annotations: Option<Value>) -> Value {
    tree!({
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": metadata(
            &quote(ctx.v(&format!("serviceAccounts.{account}.name"))),
            Some(&ctx.namespace()),
            common_labels(ctx),
            annotations,
        ),
    })
}

/// A component's PodDisruptionBudget, built from its `podDisruptionBudget` values `block`:
/// the budget fields only when set, and the eviction policy only where Kubernetes (1.27+)
/// knows the field. `own_labels` come before `commonLabels` in its metadata.
pub fn pod_disruption_budget(
    ctx: &Ctx,
    name: &str,
    block: &Value,
    selector: &[(&str, &str)],
    own_labels: &[(&str, &str)],
    annotations: &Value,
) -> Value {
    let mut spec = Map::new();
    for key in ["maxUnavailable", "minAvailable"] {
        if truthy(&block[key]) {
            spec.insert(key.into(), bare(&block[key]));
        }
    }
    let policy = &block["unhealthyPodEvictionPolicy"];
    if ctx.plan.kube.at_least(1, 27) && truthy(policy) {
        spec.insert("unhealthyPodEvictionPolicy".into(), bare(policy));
    }
    spec.insert(
        "selector".into(),
        tree!({"matchLabels": labels(selector, &[])}),
    );
    tree!({
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": metadata(
            name,
            Some(&ctx.namespace()),
            Some(labels_with_common(ctx, own_labels, &[])),
            with(annotations),
        ),
        "spec": spec,
    })
}

/// `topologySpreadConstraints` as the chart writes them: each constraint as given, and one
/// without a label selector gets the component's own pods (`selector`) as its selector.
/// None when there are none.
pub fn topology_spread(constraints: &Value, selector: &[(&str, &str)]) -> Option<Value> {
    if !truthy(constraints) {
        return None;
    }
    let items = range_items(constraints)
        .into_iter()
        .map(|c| {
            let mut c = c.clone();
            if !truthy(&c["labelSelector"]) {
                put(
                    &mut c,
                    "labelSelector",
                    Some(tree!({"matchLabels": labels(selector, &[])})),
                );
            }
            c
        })
        .collect();
    Some(Value::Array(items))
}

/// The volume mounts and the hostPath volumes of an `extraHostPathMounts` list (`path`), in
/// the same order. Each entry must be a map; `not_a_map` says so in the component's words.
pub fn host_path_mounts(
    ctx: &Ctx,
    path: &str,
    not_a_map: &str,
) -> Result<(Vec<Value>, Vec<Value>), RenderError> {
    let entries = list_items(ctx, path)?;
    if entries.iter().any(|m| !m.is_object()) {
        return Err(ctx.invalid(path, not_a_map));
    }
    let mut mounts = Vec::new();
    let mut volumes = Vec::new();
    for m in entries {
        let mut mount = tree!({
            "name": bare(&m["name"]),
            "mountPath": bare(&m["mountPath"]),
            "readOnly": bare(&m["readOnly"]),
        });
        if truthy(&m["mountPropagation"]) {
            put(
                &mut mount,
                "mountPropagation",
                Some(bare(&m["mountPropagation"])),
            );
        }
        mounts.push(mount);
        let mut host = tree!({"path": bare(&m["hostPath"])});
        if truthy(&m["hostPathType"]) {
            put(&mut host, "type", Some(bare(&m["hostPathType"])));
        }
        volumes.push(tree!({"name": bare(&m["name"]), "hostPath": host}));
    }
    Ok((mounts, volumes))
}

/// The projected-volume source of the CA bundle (`tls.caBundle`), a Secret or a ConfigMap,
/// mounted as `path`; used instead of a certificate Secret's own `ca.crt` when the bundle is on.
pub fn ca_bundle_source(ctx: &Ctx, path: &str, optional: bool) -> Value {
    let kind = if ctx.on("tls.caBundle.useSecret") {
        "secret"
    } else {
        "configMap"
    };
    let mut src = tree!({
        "name": bare(ctx.v("tls.caBundle.name")),
        "items": [{"key": bare(ctx.v("tls.caBundle.key")), "path": path}],
    });
    if optional {
        put(&mut src, "optional", Some(Value::Bool(true)));
    }
    tree!({ kind: src })
}

/// The sources of a projected TLS volume: the certificate Secret's key pair (`items`, already
/// pointing at their file names) and its CA as `ca_path`, taken from the Secret's own `ca.crt`
/// or, with `tls.caBundle.enabled`, from the CA bundle. `optional` marks both sources.
pub fn cert_sources(
    ctx: &Ctx,
    secret: &str,
    mut items: Vec<Value>,
    ca_path: &str,
    optional: bool,
) -> Vec<Value> {
    let bundle = ctx.on("tls.caBundle.enabled");
    if !bundle {
        items.push(tree!({"key": "ca.crt", "path": ca_path}));
    }
    let mut secret = tree!({"name": secret, "items": items});
    if optional {
        put(&mut secret, "optional", Some(Value::Bool(true)));
    }
    let mut out = vec![tree!({ "secret": secret })];
    if bundle {
        out.push(ca_bundle_source(ctx, ca_path, optional));
    }
    out
}

/// One scrape endpoint of a ServiceMonitor from its values `block`: the port, `interval`, the
/// `scrapeTimeout` where the template has one and it is set, `honorLabels` where the template
/// writes it, the metrics path, and the relabelings when set.
pub fn scrape_endpoint(
    block: &Value,
    port: &str,
    honor_labels: bool,
    scrape_timeout: bool,
) -> Value {
    let mut e = tree!({
        "port": port,
        "interval": quote(&block["interval"]),
        "path": "/metrics",
    });
    if scrape_timeout && truthy(&block["scrapeTimeout"]) {
        put(
            &mut e,
            "scrapeTimeout",
            Some(Value::String(quote(&block["scrapeTimeout"]))),
        );
    }
    if honor_labels {
        put(&mut e, "honorLabels", Some(Value::Bool(true)));
    }
    for key in ["relabelings", "metricRelabelings"] {
        put(&mut e, key, with(&block[key]));
    }
    e
}

/// What differs between the components' Prometheus Operator ServiceMonitors of one shape
/// (a single scrape endpoint on a metrics Service).
pub struct MonitorSpec<'a> {
    pub name: &'a str,
    /// Path of the `serviceMonitor` values block.
    pub values: &'a str,
    /// Path of the component's annotations.
    pub annotations: &'a str,
    pub selector: &'a [(&'a str, &'a str)],
    pub port: &'a str,
    pub target_label: &'a str,
    pub job_label: bool,
}

/// The chart's own labels on the agent, Hubble, Hubble Relay and clustermesh ServiceMonitors:
/// Cilium 1.18.2 added `app.kubernetes.io/name` to all four (and `part-of` to Relay's, which had
/// none before), so the change lives here once.
pub fn monitor_labels<'a>(
    ctx: &Ctx,
    name: &'a str,
    part_of_before: bool,
) -> Vec<(&'a str, &'a str)> {
    if ctx.plan.has(Change::MonitorPartOfLabels) {
        vec![
            ("app.kubernetes.io/part-of", "cilium"),
            ("app.kubernetes.io/name", name),
        ]
    } else if part_of_before {
        vec![("app.kubernetes.io/part-of", "cilium")]
    } else {
        Vec::new()
    }
}

/// A ServiceMonitor for a component's metrics Service, in the `MonitorSpec` shape.
pub fn service_monitor(ctx: &Ctx, s: MonitorSpec) -> Value {
    let v = |k: &str| ctx.v(&format!("{}.{k}", s.values));
    let ns_value = v("namespace");
    let namespace = if truthy(ns_value) {
        print(ns_value)
    } else {
        ctx.namespace()
    };
    let meta_labels = labels_with_common(
        ctx,
        &[
            ("app.kubernetes.io/part-of", "cilium"),
            ("app.kubernetes.io/name", s.name),
        ],
        &[v("labels")],
    );
    let annotations = merged(&[ctx.v(s.annotations), v("annotations")]);
    let endpoint = scrape_endpoint(ctx.v(s.values), s.port, true, true);
    let mut spec = tree!({
        "selector": {"matchLabels": labels(s.selector, &[])},
        "namespaceSelector": {"matchNames": [ctx.namespace()]},
        "endpoints": [endpoint],
        "targetLabels": [s.target_label],
    });
    if s.job_label && truthy(v("jobLabel")) {
        put(
            &mut spec,
            "jobLabel",
            Some(crate::tmpl::quoted(v("jobLabel"))),
        );
    }
    tree!({
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "ServiceMonitor",
        "metadata": metadata(s.name, Some(&namespace), Some(meta_labels), annotations),
        "spec": spec,
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn image_references() {
        assert_eq!(
            image(
                &json!({"repository": "quay.io/cilium/cilium", "tag": "v1.18.0", "useDigest": true, "digest": "sha256:ab"})
            ),
            "quay.io/cilium/cilium:v1.18.0@sha256:ab"
        );
        assert_eq!(
            image(&json!({"repository": "r", "tag": "", "useDigest": false})),
            "r"
        );
        assert_eq!(
            image(&json!({"override": "x/y:z", "repository": "r"})),
            "x/y:z"
        );
    }

    /// Runs `f` on a context with the given values over the 1.18.12 defaults.
    fn with_ctx<T>(values: &str, kube: &str, f: impl FnOnce(&Ctx) -> T) -> T {
        with_release("1.18.12", values, kube, f)
    }

    /// Runs `f` on a context with the given values over one release's defaults, without a
    /// chart archive (for unit tests of any component).
    pub(crate) fn with_release<T>(
        version: &str,
        values: &str,
        kube: &str,
        f: impl FnOnce(&Ctx) -> T,
    ) -> T {
        let cilium = crate::versions::parse(version).expect("supported version");
        let layer = crate::values::Layer::from_yaml("test.yaml", values).expect("valid YAML");
        let values = crate::values::Values::resolve(crate::versions::defaults(cilium), &[layer]);
        let plan = crate::plan::Plan::new(
            cilium,
            "kube-system",
            crate::plan::KubeVersion::parse(kube).expect("valid"),
            Default::default(),
        );
        f(&Ctx::new(&values, &plan, None))
    }

    #[test]
    fn labels_merge_in_order() {
        let l = labels(
            &[("a", "1"), ("b", "2")],
            &[
                &json!({"b": "x", "c": "3"}),
                &Value::Null,
                &json!("s"),
                &json!({"c": "y"}),
            ],
        );
        assert_eq!(l, json!({"a": "1", "b": "x", "c": "y"}));
        assert_eq!(labels(&[], &[]), json!({}));
        with_ctx("commonLabels: {team: net, a: common}", "1.35.0", |ctx| {
            let l = labels_with_common(ctx, &[("a", "own")], &[&json!({"team": "user"})]);
            assert_eq!(l, json!({"a": "common", "team": "user"}));
        });
    }

    #[test]
    fn spliced_lists() {
        with_ctx("extraArgs: [--a]\nextraEnv: {A: b}\n", "1.35.0", |ctx| {
            assert_eq!(list_items(ctx, "extraArgs").ok(), Some(vec![json!("--a")]));
            assert!(list_items(ctx, "extraVolumes").is_ok_and(|v| v.is_empty()));
            assert!(list_items(ctx, "extraEnv").is_err());
        });
    }

    #[test]
    fn pod_disruption_budgets() {
        let block = json!({"maxUnavailable": 1.0, "minAvailable": null, "unhealthyPodEvictionPolicy": "AlwaysAllow"});
        let pdb = |kube: &str| {
            with_ctx("{}", kube, |ctx| {
                pod_disruption_budget(
                    ctx,
                    "x",
                    &block,
                    &[("k8s-app", "x")],
                    &[("k8s-app", "x")],
                    &Value::Null,
                )
            })
        };
        let new = pdb("1.35.0");
        assert_eq!(new["spec"]["maxUnavailable"], json!(1.0));
        assert!(new["spec"].get("minAvailable").is_none());
        assert_eq!(new["spec"]["unhealthyPodEvictionPolicy"], "AlwaysAllow");
        assert_eq!(
            new["spec"]["selector"]["matchLabels"],
            json!({"k8s-app": "x"})
        );
        assert!(new["metadata"].get("annotations").is_none());
        assert!(pdb("1.26.0")["spec"]
            .get("unhealthyPodEvictionPolicy")
            .is_none());
    }

    #[test]
    fn spread_constraints_default_to_own_pods() {
        let c =
            json!([{"maxSkew": 1}, {"maxSkew": 2, "labelSelector": {"matchLabels": {"a": "b"}}}]);
        let out = topology_spread(&c, &[("k8s-app", "hubble-ui")]).unwrap_or_default();
        assert_eq!(
            out[0]["labelSelector"]["matchLabels"],
            json!({"k8s-app": "hubble-ui"})
        );
        assert_eq!(out[1]["labelSelector"]["matchLabels"]["a"], "b");
        assert!(topology_spread(&json!([]), &[("k8s-app", "x")]).is_none());
    }

    #[test]
    fn host_path_mounts_pair_up() {
        let values = "extraHostPathMounts: [{name: a, mountPath: /a, hostPath: /h, hostPathType: Directory}]\n";
        with_ctx(values, "1.35.0", |ctx| {
            let (m, v) = host_path_mounts(ctx, "extraHostPathMounts", "bad").unwrap_or_default();
            assert_eq!(m[0]["mountPath"], "/a");
            assert!(m[0].get("mountPropagation").is_none());
            assert_eq!(
                v[0],
                json!({"name": "a", "hostPath": {"path": "/h", "type": "Directory"}})
            );
        });
        with_ctx("extraHostPathMounts: [a]\n", "1.35.0", |ctx| {
            let e = host_path_mounts(ctx, "extraHostPathMounts", "entries must be maps");
            assert!(e.is_err_and(|e| e.to_string().contains("entries must be maps")));
        });
    }

    #[test]
    fn cert_sources_take_the_ca_from_the_bundle_when_on() {
        let items = || vec![json!({"key": "tls.crt", "path": "c.crt"})];
        with_ctx("{}", "1.35.0", |ctx| {
            let s = cert_sources(ctx, "sec", items(), "ca.crt", false);
            assert_eq!(s.len(), 1);
            assert_eq!(
                s[0]["secret"]["items"][1],
                json!({"key": "ca.crt", "path": "ca.crt"})
            );
            assert!(s[0]["secret"].get("optional").is_none());
        });
        let bundle = "tls: {caBundle: {enabled: true, useSecret: true, name: b, key: k}}\n";
        with_ctx(bundle, "1.35.0", |ctx| {
            let s = cert_sources(ctx, "sec", items(), "ca.crt", true);
            assert_eq!(s[0]["secret"]["items"].as_array().map(Vec::len), Some(1));
            assert_eq!(s[0]["secret"]["optional"], true);
            assert_eq!(
                s[1],
                json!({"secret": {"name": "b", "optional": true, "items": [{"key": "k", "path": "ca.crt"}]}})
            );
        });
    }

    /// Helm's `semverCompare` fails the render on an `upgradeCompatibility` that is no version,
    /// wherever a template asks; the pre-flight check alone asks through the Envoy helper.
    #[test]
    fn a_compatibility_version_that_is_no_version_fails_wherever_it_is_read() {
        let values = "preflight: {enabled: true}\nupgradeCompatibility: perturbed\ncni: {iptablesRemoveAWSRules: false}\nhubble: {tls: {auto: {method: cronJob}}}\n";
        with_release("1.18.3", values, "1.35.0", |ctx| {
            assert!(envoy_daemonset_text(ctx).is_err());
            assert!(secret_sync_text(ctx).is_err());
            let err = crate::components::render_all(ctx).unwrap_err().to_string();
            assert!(err.contains("upgradeCompatibility"), "{err}");
        });
        with_release(
            "1.18.3",
            "upgradeCompatibility: \"1.15\"\n",
            "1.35.0",
            |ctx| {
                assert_eq!(envoy_daemonset_text(ctx).unwrap(), "false");
                assert!(!upgrade_compat_at_least(ctx, 1, 16).unwrap());
                assert!(upgrade_compat_at_least(ctx, 1, 14).unwrap());
            },
        );
    }

    #[test]
    fn service_accounts_and_monitors() {
        let values = "commonLabels: {t: net}\nserviceAccounts: {envoy: {name: my-envoy}}\nenvoy: {prometheus: {serviceMonitor: {namespace: mon, interval: 10s, jobLabel: j}}}\n";
        with_ctx(values, "1.35.0", |ctx| {
            let sa = service_account(ctx, "envoy", Some(json!({"a": "b"})));
            assert_eq!(sa["metadata"]["name"], "my-envoy");
            assert_eq!(sa["metadata"]["labels"], json!({"t": "net"}));
            let sm = service_monitor(
                ctx,
                MonitorSpec {
                    job_label: false,
                    name: "test",
                    port: "metrics",
                    selector: &[("app", "test")],
                    target_label: "app",
                    annotations: "envoy.annotations",
                    values: "envoy.prometheus.serviceMonitor",
                },
            );
            assert_eq!(sm["metadata"]["namespace"], "mon");
            assert_eq!(
                sm["spec"]["namespaceSelector"]["matchNames"],
                json!(["kube-system"])
            );
            assert_eq!(sm["spec"]["endpoints"][0]["interval"], "10s");
            assert!(sm["spec"].get("jobLabel").is_none());
        });
    }
}
