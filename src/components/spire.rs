//! Mirrors the chart's templates: spire/ (the SPIRE server and agent the chart installs for
//! mutual authentication, with their namespace, accounts, RBAC and configuration). Only when
//! the chart installs SPIRE itself; pointing Cilium at an existing SPIRE server renders nothing
//! here. The init scripts are chart files evaluated as templates, read from the official
//! archive (`common::bundled_script`).

use crate::components::common::mount_ro;
use serde_json::{Map, Value};

use super::common::{
    self, bundled_script, labels, merged, metadata, priority_class_name, put, put_with,
};
use super::Ctx;
use crate::changes::Change;
use crate::error::RenderError;
use crate::tmpl::{bare, quote_text, truthy, with};

const SERVER: &str = "spire-server";
const AGENT: &str = "spire-agent";
const SERVER_INIT: &str = "files/spire/init.bash";
const AGENT_INIT: &str = "files/spire/wait-for-spire.bash";
/// The value that turns the installation on, named by errors about its scripts.
const INSTALL: &str = "authentication.mutual.spire.install.enabled";

/// `authentication.mutual.spire.` + `rest`.
fn p(rest: &str) -> String {
    format!("authentication.mutual.spire.{rest}")
}

pub fn render(ctx: &Ctx) -> Result<Vec<Value>, RenderError> {
    if !(ctx.on(&p("enabled")) && ctx.on(&p("install.enabled"))) {
        return Ok(Vec::new());
    }
    let rbac = ctx.on("rbac.create");
    let mut out = vec![config_map(ctx, "spire-bundle", None)];
    if !ctx.on(&p("install.existingNamespace")) {
        out.push(tree!({
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": plain_metadata(ctx, &namespace(ctx), false),
        }));
    }
    if ctx.on(&p("install.agent.serviceAccount.create")) {
        if rbac {
            out.push(cluster_role(ctx, "agent", agent_rules()));
            out.push(cluster_role_binding(ctx, "agent", &account(ctx, "agent")));
        }
        out.push(service_account(ctx, "agent"));
    }
    out.push(config_map(
        ctx,
        AGENT,
        Some(("agent.conf", agent_conf(ctx))),
    ));
    out.push(agent_daemon_set(ctx)?);
    if ctx.on(&p("install.server.serviceAccount.create")) {
        if rbac {
            out.push(cluster_role(ctx, "server", server_rules()));
            out.push(cluster_role_binding(ctx, "server", SERVER));
        }
        out.push(tree!({
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "Role",
            "metadata": plain_metadata(ctx, &account(ctx, "server"), true),
            "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["patch", "get", "list"]}],
        }));
        out.push(service_account(ctx, "server"));
    }
    out.push(config_map(
        ctx,
        SERVER,
        Some(("server.conf", server_conf(ctx))),
    ));
    out.extend(role_bindings(ctx));
    out.push(service(ctx));
    out.push(stateful_set(ctx)?);
    Ok(out)
}

/// The namespace SPIRE is installed in, as the templates print it.
fn namespace(ctx: &Ctx) -> String {
    ctx.text(&p("install.namespace"))
}

/// The name of the server's or agent's ServiceAccount (`which`: "server" or "agent").
fn account(ctx: &Ctx, which: &str) -> String {
    ctx.text(&p(&format!("install.{which}.serviceAccount.name")))
}

/// Metadata of most SPIRE objects: `commonLabels` and SPIRE's annotations.
fn plain_metadata(ctx: &Ctx, name: &str, namespaced: bool) -> Value {
    metadata(
        name,
        namespaced.then(|| namespace(ctx)).as_deref(),
        common::common_labels(ctx),
        with(ctx.v(&p("annotations"))),
    )
}

fn config_map(ctx: &Ctx, name: &str, data: Option<(&str, String)>) -> Value {
    let mut cm = tree!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": plain_metadata(ctx, name, true),
    });
    if let Some((key, text)) = data {
        put(&mut cm, "data", Some(tree!({ key: text })));
    }
    cm
}

fn service_account(ctx: &Ctx, which: &str) -> Value {
    tree!({
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": plain_metadata(ctx, &account(ctx, which), true),
    })
}

fn rule(group: &str, resources: &[&str], verbs: &[&str]) -> Value {
    tree!({"apiGroups": [group], "resources": resources.to_vec(), "verbs": verbs.to_vec()})
}

/// The agent reads pods and nodes to attest workloads.
fn agent_rules() -> Vec<Value> {
    vec![rule("", &["pods", "nodes", "nodes/proxy"], &["get"])]
}

/// The server reviews tokens and reads pods and nodes to attest agents.
fn server_rules() -> Vec<Value> {
    vec![
        rule("authentication.k8s.io", &["tokenreviews"], &["create"]),
        rule("", &["pods"], &["get"]),
        rule("", &["nodes", "nodes/proxy"], &["get"]),
    ]
}

fn cluster_role(ctx: &Ctx, which: &str, rules: Vec<Value>) -> Value {
    tree!({
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": plain_metadata(ctx, &account(ctx, which), false),
        "rules": rules,
    })
}

/// The binding of a ClusterRole to the account; the server's binding names the role
/// `spire-server` whatever its account is called, the agent's names it after the account.
fn cluster_role_binding(ctx: &Ctx, which: &str, role: &str) -> Value {
    tree!({
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": plain_metadata(ctx, &account(ctx, which), false),
        "roleRef": {"kind": "ClusterRole", "name": role, "apiGroup": "rbac.authorization.k8s.io"},
        "subjects": [subject(ctx, which)],
    })
}

fn subject(ctx: &Ctx, which: &str) -> Value {
    tree!({"kind": "ServiceAccount", "name": account(ctx, which), "namespace": namespace(ctx)})
}

/// The server's two RoleBindings: to its Role, and (without `commonLabels`) to a ClusterRole
/// named after its account with `-pod`, which the chart does not create.
fn role_bindings(ctx: &Ctx) -> Vec<Value> {
    let server = account(ctx, "server");
    let ns = namespace(ctx);
    let binding = |meta: Value, kind: &str, role: &str| {
        tree!({
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": meta,
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": kind, "name": role},
            "subjects": [subject(ctx, "server")],
        })
    };
    let pod = format!("{server}-pod");
    vec![
        binding(plain_metadata(ctx, &server, true), "Role", SERVER),
        binding(
            metadata(&pod, Some(&ns), None, with(ctx.v(&p("annotations")))),
            "ClusterRole",
            &pod,
        ),
    ]
}

fn service(ctx: &Ctx) -> Value {
    let svc = |k: &str| p(&format!("install.server.service.{k}"));
    let annotations = annotations_if_any(ctx, ctx.v(&svc("annotations")));
    tree!({
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": metadata(
            SERVER,
            Some(&namespace(ctx)),
            Some(labels(&[], &[ctx.v("commonLabels"), ctx.v(&svc("labels"))])),
            annotations,
        ),
        "spec": {
            "type": bare(ctx.v(&svc("type"))),
            "ports": [{"name": "grpc", "port": 8081, "targetPort": "grpc", "protocol": "TCP"}],
            "selector": {"app": SERVER},
        },
    })
}

/// SPIRE's annotations then `own`, written only when either is set.
fn annotations_if_any(ctx: &Ctx, own: &Value) -> Option<Value> {
    let spire = ctx.v(&p("annotations"));
    if truthy(own) || truthy(spire) {
        merged(&[spire, own])
    } else {
        None
    }
}

/// `{{ value }}` in a config text: Go's printing, nothing for nil.
fn plain(ctx: &Ctx, path: &str) -> String {
    ctx.text(path)
}

/// `{{ value | quote }}` in a config text.
fn quoted(ctx: &Ctx, path: &str) -> String {
    quote_text(ctx.v(path))
}

fn agent_conf(ctx: &Ctx) -> String {
    let domain = plain(ctx, &p("trustDomain"));
    let mut t = String::new();
    t += "agent {\n";
    t += "  data_dir = \"/run/spire\"\n  log_level = \"ERROR\"\n";
    t += "  server_address = \"spire-server\"\n  server_port = \"8081\"\n";
    t += &format!("  socket_path = {}\n", quoted(ctx, &p("agentSocketPath")));
    t += &format!(
        "  admin_socket_path = {}\n",
        quoted(ctx, &p("adminSocketPath"))
    );
    t += "  trust_bundle_path = \"/run/spire/bundle/bundle.crt\"\n";
    t += &format!("  trust_domain = {}\n", quoted(ctx, &p("trustDomain")));
    t += &format!(
        "  authorized_delegates = [\n    \"spiffe://{domain}/cilium-agent\",\n  ]\n}}\n\n"
    );
    t += "plugins {\n";
    t += &format!(
        "  NodeAttestor \"k8s_psat\" {{\n    plugin_data {{\n      cluster = {}\n    }}\n  }}\n\n",
        quoted(ctx, "cluster.name")
    );
    t += "  KeyManager \"memory\" {\n    plugin_data {\n    }\n  }\n\n";
    t += &format!(
        "  WorkloadAttestor \"k8s\" {{\n    plugin_data {{\n      skip_kubelet_verification = {}\n    }}\n  }}\n}}\n\n",
        plain(ctx, &p("install.agent.skipKubeletVerification"))
    );
    t += &health_checks("4251");
    t
}

fn health_checks(port: &str) -> String {
    format!(
        "health_checks {{\n  listener_enabled = true\n  bind_address = \"0.0.0.0\"\n  bind_port = \"{port}\"\n  live_path = \"/live\"\n  ready_path = \"/ready\"\n}}\n"
    )
}

fn server_conf(ctx: &Ctx) -> String {
    let ca = |k: &str| quoted(ctx, &p(&format!("install.server.ca.{k}")));
    let domain = plain(ctx, &p("trustDomain"));
    let ns = plain(ctx, &p("install.namespace"));
    let mut t = String::new();
    t += "server {\n";
    t += "  bind_address = \"0.0.0.0\"\n  bind_port = \"8081\"\n";
    t += "  socket_path = \"/tmp/spire-server/private/api.sock\"\n";
    t += &format!("  trust_domain = {}\n", quoted(ctx, &p("trustDomain")));
    t += "  data_dir = \"/run/spire/data\"\n  log_level = \"INFO\"\n";
    t += &format!("  ca_key_type = {}\n\n", ca("keyType"));
    t += &format!(
        "  ca_subject = {{\n    country = [{}],\n    organization = [{}],\n    common_name = {},\n  }}\n\n",
        ca("subject.country"),
        ca("subject.organization"),
        ca("subject.commonName")
    );
    t += &format!("  admin_ids = [\n    \"spiffe://{domain}/cilium-operator\",\n  ]\n}}\n\n");
    t += "plugins {\n";
    t += "  DataStore \"sql\" {\n    plugin_data {\n      database_type = \"sqlite3\"\n      connection_string = \"/run/spire/data/datastore.sqlite3\"\n    }\n  }\n\n";
    t += &format!(
        "  NodeAttestor \"k8s_psat\" {{\n    plugin_data {{\n      clusters = {{\n        {} = {{\n          use_token_review_api_validation = true\n          service_account_allow_list = [\"{ns}:{}\"]\n        }}\n      }}\n    }}\n  }}\n\n",
        quoted(ctx, "cluster.name"),
        plain(ctx, &p("install.agent.serviceAccount.name"))
    );
    t += "  KeyManager \"disk\" {\n    plugin_data {\n      keys_path = \"/run/spire/data/keys.json\"\n    }\n  }\n\n";
    t += &format!(
        "  Notifier \"k8sbundle\" {{\n    plugin_data {{\n      namespace = {}\n    }}\n  }}\n}}\n\n",
        quoted(ctx, &p("install.namespace"))
    );
    t += &health_checks("8080");
    t
}

/// The image of the server or agent: written as given when it is text, else built from its
/// image block (with the pull policy).
fn put_image(ctx: &Ctx, container: &mut Value, which: &str) {
    let image = ctx.v(&p(&format!("install.{which}.image")));
    if let Value::String(_) = image {
        put(container, "image", Some(bare(image)));
    } else {
        put(
            container,
            "image",
            Some(Value::String(common::image(image))),
        );
        put(
            container,
            "imagePullPolicy",
            Some(bare(&image["pullPolicy"])),
        );
    }
}

/// A probe of the health endpoint: by the port's name from 1.20, by its number before.
fn probe(ctx: &Ctx, path: &str, port: u16, liveness: bool) -> Value {
    let port = if ctx.plan.has(Change::SpirePods120) {
        Value::String("http".into())
    } else {
        Value::from(port)
    };
    if liveness {
        tree!({"httpGet": {"path": path, "port": port}, "failureThreshold": 2, "initialDelaySeconds": 15, "periodSeconds": 60, "timeoutSeconds": 3})
    } else {
        tree!({"httpGet": {"path": path, "port": port}, "initialDelaySeconds": 5, "periodSeconds": 5})
    }
}

/// The container that runs `file` (an init script) with the init image.
fn init_container(ctx: &Ctx, name: &str, file: &str) -> Result<Value, RenderError> {
    let script = bundled_script(ctx, INSTALL, file, "false")?;
    Ok(tree!({
        "name": name,
        "image": common::image(ctx.v(&p("install.initImage"))),
        "imagePullPolicy": bare(ctx.v(&p("install.initImage.pullPolicy"))),
        "command": ["/bin/sh", "-c", script],
    }))
}

/// The workload's own labels: `app`, `commonLabels`, then the server's or agent's labels.
fn app_labels(ctx: &Ctx, app: &str, which: &str) -> Value {
    labels(
        &[("app", app)],
        &[
            ctx.v("commonLabels"),
            ctx.v(&p(&format!("install.{which}.labels"))),
        ],
    )
}

fn agent_daemon_set(ctx: &Ctx) -> Result<Value, RenderError> {
    let a = |k: &str| p(&format!("install.agent.{k}"));
    let mut container = tree!({
        "name": AGENT,
        "args": ["-config", "/run/spire/config/agent.conf"],
        "volumeMounts": [
            {"name": "spire-config", "mountPath": "/run/spire/config", "readOnly": true},
            {"name": "spire-bundle", "mountPath": "/run/spire/bundle"},
            {"name": "spire-agent-socket", "mountPath": "/run/spire/sockets", "readOnly": false},
            {"name": AGENT, "mountPath": "/var/run/secrets/tokens"},
        ],
        "env": [super::common::field_env_without_api_version("MY_NODE_NAME", "status.hostIP")],
        "livenessProbe": probe(ctx, "/live", 4251, true),
        "readinessProbe": probe(ctx, "/ready", 4251, false),
    });
    put_image(ctx, &mut container, "agent");
    if ctx.plan.has(Change::SpirePods120) {
        put(
            &mut container,
            "ports",
            Some(tree!([{"name": "http", "containerPort": 4251}])),
        );
    }
    put_with(
        &mut container,
        ctx,
        &[
            ("securityContext", &a("securityContext")),
            ("resources", &a("resources")),
        ],
    );
    let mut tolerations = common::list_items(ctx, &a("tolerations"))?;
    let taint = match ctx.v("agentNotReadyTaintKey") {
        v if truthy(v) => bare(v),
        _ => Value::String("node.cilium.io/agent-not-ready".into()),
    };
    tolerations.push(tree!({"key": taint, "effect": "NoSchedule"}));
    let mut spec = tree!({
        "hostPID": true,
        "hostNetwork": true,
        "dnsPolicy": "ClusterFirstWithHostNet",
        "serviceAccountName": bare(ctx.v(&a("serviceAccount.name"))),
        "initContainers": [init_container(ctx, "init", AGENT_INIT)?],
        "containers": [container],
        "tolerations": tolerations,
        "volumes": [
            {"name": "spire-config", "configMap": {"name": AGENT}},
            {"name": "spire-bundle", "configMap": {"name": "spire-bundle"}},
            {"name": "spire-agent-socket", "hostPath": {"path": "/run/spire/sockets", "type": "DirectoryOrCreate"}},
            {"name": AGENT, "projected": {"sources": [{"serviceAccountToken": {
                "path": AGENT, "expirationSeconds": 600, "audience": SERVER,
            }}]}},
        ],
    });
    put(
        &mut spec,
        "priorityClassName",
        priority_class_name(ctx, ctx.v(&a("priorityClassName")), "system-node-critical"),
    );
    put_with(
        &mut spec,
        ctx,
        &[
            ("securityContext", &a("podSecurityContext")),
            ("imagePullSecrets", "imagePullSecrets"),
            ("affinity", &a("affinity")),
            ("nodeSelector", &a("nodeSelector")),
        ],
    );
    let ns = namespace(ctx);
    let meta = metadata(
        AGENT,
        Some(&ns),
        Some(app_labels(ctx, AGENT, "agent")),
        // The chart writes the server's annotations on the agent too.
        annotations_if_any(ctx, ctx.v(&p("install.server.annotations"))),
    );
    let spec = tree!({
        "selector": {"matchLabels": {"app": AGENT}},
        "template": {
            "metadata": {"namespace": ns, "labels": app_labels(ctx, AGENT, "agent")},
            "spec": spec,
        },
    });
    Ok(super::common::workload("DaemonSet", meta, spec))
}

/// `initContainers` as the chart splices them when `len` of the value is above 0 (Go's `len`
/// fails on nil, numbers and booleans).
fn server_init_containers(ctx: &Ctx) -> Result<Option<Value>, RenderError> {
    let path = p("install.server.initContainers");
    match ctx.v(&path) {
        v @ (Value::Array(_) | Value::Object(_) | Value::String(_)) => Ok(with(v)),
        _ => Err(ctx.invalid(&path, "must be a list of containers")),
    }
}

fn stateful_set(ctx: &Ctx) -> Result<Value, RenderError> {
    let s = |k: &str| p(&format!("install.server.{k}"));
    let storage = ctx.on(&s("dataStorage.enabled"));
    let mut mounts = vec![mount_ro("spire-config", "/run/spire/config")];
    if storage {
        mounts
            .push(tree!({"name": "spire-data", "mountPath": "/run/spire/data", "readOnly": false}));
    }
    mounts.push(tree!({"name": "spire-server-socket", "mountPath": "/tmp/spire-server/private", "readOnly": false}));
    let mut ports = vec![tree!({"name": "grpc", "containerPort": 8081})];
    if ctx.plan.has(Change::SpirePods120) {
        ports.push(tree!({"name": "http", "containerPort": 8080}));
    }
    let mut server = tree!({
        "name": SERVER,
        "args": ["-config", "/run/spire/config/server.conf"],
        "ports": ports,
        "volumeMounts": mounts,
        "livenessProbe": probe(ctx, "/live", 8080, true),
        "readinessProbe": probe(ctx, "/ready", 8080, false),
    });
    put_image(ctx, &mut server, "server");
    put_with(
        &mut server,
        ctx,
        &[
            ("resources", &s("resources")),
            ("securityContext", &s("securityContext")),
        ],
    );
    let mut spec = tree!({
        "serviceAccountName": bare(ctx.v(&s("serviceAccount.name"))),
        "shareProcessNamespace": true,
        "containers": [init_container(ctx, "cilium-init", SERVER_INIT)?, server],
        "volumes": [
            {"name": "spire-config", "configMap": {"name": SERVER}},
            {"name": "spire-server-socket", "hostPath": {"path": "/var/run/spire-server/sockets", "type": "DirectoryOrCreate"}},
        ],
    });
    put(
        &mut spec,
        "priorityClassName",
        priority_class_name(ctx, ctx.v(&s("priorityClassName")), "system-node-critical"),
    );
    if ctx.plan.has(Change::SpirePods120) && ctx.plan.kube.user_namespaces_by_default() {
        put(&mut spec, "hostUsers", Some(Value::Bool(true)));
    }
    put(&mut spec, "initContainers", server_init_containers(ctx)?);
    put_with(
        &mut spec,
        ctx,
        &[
            ("securityContext", &s("podSecurityContext")),
            ("imagePullSecrets", "imagePullSecrets"),
            ("affinity", &s("affinity")),
            ("nodeSelector", &s("nodeSelector")),
            ("tolerations", &s("tolerations")),
        ],
    );
    let mut set_spec = tree!({
        "replicas": 1,
        "selector": {"matchLabels": {"app": SERVER}},
        "serviceName": SERVER,
        "template": {
            "metadata": {
                "annotations": {"kubectl.kubernetes.io/default-container": SERVER},
                "labels": app_labels(ctx, SERVER, "server"),
            },
            "spec": spec,
        },
    });
    if storage {
        put(
            &mut set_spec,
            "volumeClaimTemplates",
            Some(Value::Array(vec![claim(ctx)])),
        );
    }
    let meta = metadata(
        SERVER,
        Some(&namespace(ctx)),
        Some(app_labels(ctx, SERVER, "server")),
        annotations_if_any(ctx, ctx.v(&s("annotations"))),
    );
    Ok(super::common::workload("StatefulSet", meta, set_spec))
}

/// The server's data volume claim (`dataStorage`); the access mode defaults to ReadWriteOnce.
fn claim(ctx: &Ctx) -> Value {
    let d = |k: &str| ctx.v(&p(&format!("install.server.dataStorage.{k}")));
    let mode = match d("accessMode") {
        v if truthy(v) => bare(v),
        _ => Value::String("ReadWriteOnce".into()),
    };
    let mut spec = Map::new();
    spec.insert("accessModes".into(), Value::Array(vec![mode]));
    spec.insert(
        "resources".into(),
        tree!({"requests": {"storage": bare(d("size"))}}),
    );
    spec.insert("storageClassName".into(), bare(d("storageClass")));
    tree!({"metadata": {"name": "spire-data"}, "spec": spec})
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::components::common::tests::with_release;

    #[test]
    fn installing_spire_needs_the_archive_and_says_so() {
        let values = "authentication: {enabled: true, mutual: {spire: {enabled: true}}}";
        with_release("1.19.6", values, "1.35.0", |ctx| {
            let err = render(ctx).unwrap_err().to_string();
            assert!(err.contains(INSTALL), "{err}");
            assert!(
                err.contains(
                    "chart archive cilium-1.19.6.tgz: supply it (`cilium-cmp chart fetch 1.19.6`"
                ),
                "{err}"
            );
        });
        let external = "authentication: {enabled: true, mutual: {spire: {enabled: true, install: {enabled: false}}}}";
        with_release("1.19.6", external, "1.35.0", |ctx| {
            assert!(render(ctx).unwrap().is_empty());
        });
    }

    #[test]
    fn probes_name_the_port_from_1_20() {
        with_release("1.20.0", "{}", "1.35.0", |ctx| {
            assert_eq!(probe(ctx, "/live", 8080, true)["httpGet"]["port"], "http");
        });
        with_release("1.19.6", "{}", "1.35.0", |ctx| {
            assert_eq!(probe(ctx, "/live", 8080, true)["httpGet"]["port"], 8080);
        });
    }
}
