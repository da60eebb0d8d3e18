//! Mirrors the chart's templates: hubble-ui/

use crate::changes::Change;
use crate::components::common::{mount, mount_ro};
use serde_json::{Map, Value};

use super::common::{
    self, cert_sources, common_labels, image, labels_with_common, list_items, merged, metadata,
    put, with_chart_label,
};
use super::Ctx;
use crate::error::RenderError;
use crate::tmpl::{bare, print, quote, range_items, truthy, with};

const APP: &str = "hubble-ui";
const APP_LABELS: [(&str, &str); 3] = common::app_labels(APP);

pub fn render(ctx: &Ctx) -> Result<Vec<Value>, RenderError> {
    if !ctx.plan.hubble_ui {
        return Ok(Vec::new());
    }
    let config = configmap(ctx);
    let mut out = vec![deployment(ctx, &config)?, service(ctx)];
    out.push(config);
    let sa = ctx.on("serviceAccounts.ui.create");
    if sa && ctx.on("rbac.create") {
        out.extend(rbac(ctx));
    }
    if sa {
        out.push(service_account(ctx));
    }
    if ctx.on("hubble.ui.ingress.enabled") {
        out.push(ingress(ctx));
    }
    if ctx.on("hubble.ui.podDisruptionBudget.enabled") {
        out.push(super::hubble::pdb(ctx, APP, "hubble.ui"));
    }
    Ok(out)
}

/// The nginx server configuration of the UI frontend: serves the app under `baseUrl` and proxies
/// its API calls to the backend container.
pub(crate) fn nginx_conf(base: &str, ipv6: bool) -> String {
    let root = base == "/";
    let trimmed = base.strip_suffix('/').unwrap_or(base);
    let rewrite = format!("rewrite ^{trimmed}(/.*)$ $1 break;");
    let mut l: Vec<String> = vec!["server {".into(), "    listen       8081;".into()];
    if ipv6 {
        l.push("    listen       [::]:8081;".into());
    }
    for s in [
        "    server_name  localhost;",
        "    root /app;",
        "    index index.html;",
        "    client_max_body_size 1G;",
        "",
        "    location / {",
        "        proxy_set_header Host $host;",
        "        proxy_set_header X-Real-IP $remote_addr;",
        "",
    ] {
        l.push(s.into());
    }
    l.push(format!("        location {base}api {{"));
    if !root {
        l.push(format!("            {rewrite}"));
    }
    l.push("            proxy_http_version 1.1;".into());
    l.push("            proxy_pass_request_headers on;".into());
    l.push(if root {
        "            proxy_pass http://127.0.0.1:8090;".into()
    } else {
        "            proxy_pass http://127.0.0.1:8090/;".into()
    });
    l.push("        }".into());
    if !root {
        l.push("        sub_filter_once on;".into());
        l.push(format!(
            "        sub_filter '<base href=\"/\"/>' '<base href=\"{base}\"/>';"
        ));
    }
    l.push(format!("        location {base} {{"));
    l.push("            if ($http_user_agent ~* \"kube-probe\") { access_log off; }".into());
    if !root {
        l.push(format!("            {rewrite}"));
    }
    for s in [
        "            # double `/index.html` is required here",
        "            try_files $uri $uri/ /index.html /index.html;",
        "        }",
        "",
        "        # Liveness probe",
        "        location /healthz {",
        "            access_log off;",
        "            add_header Content-Type text/plain;",
        "            return 200 'ok';",
        "        }",
        "    }",
        "}",
    ] {
        l.push(s.into());
    }
    l.join("\n")
}

fn configmap(ctx: &Ctx) -> Value {
    let ns = ctx.namespace();
    let conf = nginx_conf(
        &ctx.text("hubble.ui.baseUrl"),
        ctx.on("hubble.ui.frontend.server.ipv6.enabled"),
    );
    tree!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": metadata("hubble-ui-nginx", Some(&ns), common_labels(ctx), with(ctx.v("hubble.ui.annotations"))),
        "data": {"nginx.conf": conf.trim()},
    })
}

fn deployment(ctx: &Ctx, config: &Value) -> Result<Value, RenderError> {
    let ns = ctx.namespace();
    let relay_tls = ctx.on("hubble.relay.tls.server.enabled");
    let fe = uv(ctx, "frontend");
    let be = uv(ctx, "backend");

    let mut fe_mounts = vec![
        tree!({"name": "hubble-ui-nginx-conf", "mountPath": "/etc/nginx/conf.d/default.conf", "subPath": "nginx.conf"}),
        mount("tmp-dir", "/tmp"),
    ];
    fe_mounts.extend(list_items(ctx, "hubble.ui.frontend.extraVolumeMounts")?);
    let frontend_port = if ctx.plan.has(Change::UiProbesByPortName) {
        tree!("http")
    } else {
        tree!(8081)
    };
    let mut frontend = tree!({
        "name": "frontend",
        "image": image(&fe["image"]),
        "imagePullPolicy": bare(&Value::String(quote(&fe["image"]["pullPolicy"]))),
        "ports": [{"name": "http", "containerPort": 8081}],
        "livenessProbe": {"httpGet": {"path": "/healthz", "port": frontend_port.clone()}},
        "readinessProbe": {"httpGet": {"path": "/", "port": frontend_port}},
        "volumeMounts": fe_mounts,
        "terminationMessagePolicy": "FallbackToLogsOnError",
    });
    put(&mut frontend, "env", with(&fe["extraEnv"]));
    put(&mut frontend, "resources", with(&fe["resources"]));
    put(
        &mut frontend,
        "securityContext",
        with(&fe["securityContext"]),
    );

    let mut env = vec![tree!({"name": "EVENTS_SERVER_PORT", "value": "8090"})];
    if relay_tls {
        env.push(tree!({"name": "FLOWS_API_ADDR", "value": "hubble-relay:443"}));
        env.push(tree!({"name": "TLS_TO_RELAY_ENABLED", "value": "true"}));
        env.push(tree!({"name": "TLS_RELAY_SERVER_NAME", "value": bare(&Value::String(ctx.text("hubble.relay.tls.server.relayName")))}));
        env.push(tree!({"name": "TLS_RELAY_CA_CERT_FILES", "value": "/var/lib/hubble-ui/certs/hubble-relay-ca.crt"}));
        env.push(tree!({"name": "TLS_RELAY_CLIENT_CERT_FILE", "value": "/var/lib/hubble-ui/certs/client.crt"}));
        env.push(tree!({"name": "TLS_RELAY_CLIENT_KEY_FILE", "value": "/var/lib/hubble-ui/certs/client.key"}));
    } else {
        env.push(tree!({"name": "FLOWS_API_ADDR", "value": "hubble-relay:80"}));
    }
    env.extend(list_items(ctx, "hubble.ui.backend.extraEnv")?);
    let mut be_mounts = Vec::new();
    if relay_tls {
        be_mounts.push(mount_ro(
            "hubble-ui-client-certs",
            "/var/lib/hubble-ui/certs",
        ));
    }
    be_mounts.extend(list_items(ctx, "hubble.ui.backend.extraVolumeMounts")?);
    let mut backend = tree!({
        "name": "backend",
        "image": image(&be["image"]),
        "imagePullPolicy": bare(&Value::String(quote(&be["image"]["pullPolicy"]))),
        "env": env,
        "ports": [{"name": "grpc", "containerPort": 8090}],
        "terminationMessagePolicy": "FallbackToLogsOnError",
    });
    let probes = !ctx.plan.has(Change::UiBackendWithoutProbes);
    if probes && truthy(&be["livenessProbe"]["enabled"]) {
        put(
            &mut backend,
            "livenessProbe",
            Some(tree!({"httpGet": {"path": "/healthz", "port": 8090}})),
        );
    }
    if probes && truthy(&be["readinessProbe"]["enabled"]) {
        put(
            &mut backend,
            "readinessProbe",
            Some(tree!({"httpGet": {"path": "/healthz", "port": 8090}})),
        );
    }
    put(&mut backend, "resources", with(&be["resources"]));
    if !be_mounts.is_empty() {
        put(&mut backend, "volumeMounts", Some(Value::Array(be_mounts)));
    }
    put(
        &mut backend,
        "securityContext",
        with(&be["securityContext"]),
    );

    let mut volumes = vec![
        tree!({"configMap": {"defaultMode": 420, "name": "hubble-ui-nginx"}, "name": "hubble-ui-nginx-conf"}),
        tmp_volume(ctx)?,
    ];
    if relay_tls {
        let mut vol = Map::new();
        vol.insert("name".into(), tree!("hubble-ui-client-certs"));
        if truthy(uv(ctx, "standalone.enabled")) {
            if let Value::Object(m) = uv(ctx, "standalone.tls.certsVolume") {
                for (k, v) in m {
                    vol.insert(k.clone(), v.clone());
                }
            }
        } else {
            let secret = if truthy(uv(ctx, "tls.client.existingSecret")) {
                print(uv(ctx, "tls.client.existingSecret"))
            } else {
                "hubble-ui-client-certs".into()
            };
            let sources = cert_sources(
                ctx,
                &secret,
                vec![
                    tree!({"key": "tls.crt", "path": "client.crt"}),
                    tree!({"key": "tls.key", "path": "client.key"}),
                ],
                "hubble-relay-ca.crt",
                false,
            );
            // defaultMode 0400 (octal) as YAML 1.1 reads it.
            vol.insert(
                "projected".into(),
                tree!({"defaultMode": 256, "sources": sources}),
            );
        }
        volumes.push(Value::Object(vol));
    }
    volumes.extend(list_items(ctx, "hubble.ui.frontend.extraVolumes")?);
    volumes.extend(list_items(ctx, "hubble.ui.backend.extraVolumes")?);

    let mut pod = tree!({
        "priorityClassName": bare(&Value::String(quote(uv(ctx, "priorityClassName")))),
        "serviceAccountName": quote(ctx.v("serviceAccounts.ui.name")),
        "automountServiceAccountToken": bare(&Value::String(quote(ctx.v("serviceAccounts.ui.automount")))),
        "containers": vec![frontend, backend],
        "volumes": volumes,
    });
    if truthy(uv(ctx, "securityContext")) {
        let mut sc = uv(ctx, "securityContext").clone();
        if let Value::Object(m) = &mut sc {
            m.remove("enabled");
        }
        put(&mut pod, "securityContext", Some(sc));
    }
    super::hubble::place_pod(ctx, &mut pod, "hubble.ui", APP);
    put(&mut pod, "hostUsers", super::hubble::host_users(ctx));

    let checksum = if truthy(uv(ctx, "rollOutPods")) {
        tree!({"cilium.io/hubble-ui-nginx-configmap-checksum": crate::output::sha256_hex(config)})
    } else {
        Value::Null
    };
    let spec = super::hubble::deployment_spec(
        ctx,
        "hubble.ui",
        APP,
        pod,
        merged(&[&checksum, uv(ctx, "podAnnotations")]),
    );
    let labels = labels_with_common(
        ctx,
        &with_chart_label(ctx, &APP_LABELS),
        &[uv(ctx, "labels")],
    );
    let meta = metadata(APP, Some(&ns), Some(labels), with(uv(ctx, "annotations")));
    Ok(super::common::workload("Deployment", meta, spec))
}

fn service(ctx: &Ctx) -> Value {
    let svc = uv(ctx, "service");
    let ns = ctx.namespace();
    let mut port = tree!({"name": "http", "port": 80, "targetPort": 8081});
    if svc["type"].as_str() == Some("NodePort") && truthy(&svc["nodePort"]) {
        put(&mut port, "nodePort", Some(bare(&svc["nodePort"])));
    }
    tree!({
        "kind": "Service",
        "apiVersion": "v1",
        "metadata": metadata(
            APP,
            Some(&ns),
            Some(labels_with_common(ctx, &with_chart_label(ctx, &APP_LABELS), &[&svc["labels"]])),
            merged(&[uv(ctx, "annotations"), &svc["annotations"]]),
        ),
        "spec": {
            "type": quote(&svc["type"]),
            "selector": {"k8s-app": APP},
            "ports": [port],
        },
    })
}

fn ingress(ctx: &Ctx) -> Value {
    let ing = uv(ctx, "ingress");
    let ns = ctx.namespace();
    let base = quote(uv(ctx, "baseUrl"));
    let rules: Vec<Value> = range_items(&ing["hosts"])
        .into_iter()
        .map(|h| {
            tree!({
                "host": bare(&Value::String(quote(h))),
                "http": {"paths": [{
                    "path": &base,
                    "pathType": "Prefix",
                    "backend": {"service": {"name": APP, "port": {"name": "http"}}},
                }]},
            })
        })
        .collect();
    let mut spec = Map::new();
    if truthy(&ing["className"]) {
        spec.insert("ingressClassName".into(), bare(&ing["className"]));
    }
    if truthy(&ing["tls"]) {
        spec.insert("tls".into(), ing["tls"].clone());
    }
    if !rules.is_empty() {
        spec.insert("rules".into(), Value::Array(rules));
    }
    tree!({
        "apiVersion": "networking.k8s.io/v1",
        "kind": "Ingress",
        "metadata": metadata(
            APP,
            Some(&ns),
            Some(labels_with_common(ctx, &with_chart_label(ctx, &APP_LABELS), &[&ing["labels"]])),
            merged(&[uv(ctx, "annotations"), &ing["annotations"]]),
        ),
        "spec": spec,
    })
}

fn rbac(ctx: &Ctx) -> Vec<Value> {
    let part_of = Some(super::common::part_of_labels(ctx, &[]));
    let ann = with(ctx.v("hubble.ui.annotations"));
    vec![
        tree!({
            "kind": "ClusterRole",
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "metadata": metadata(APP, None, part_of.clone(), ann.clone()),
            "rules": cluster_role_rules(ctx),
        }),
        tree!({
            "kind": "ClusterRoleBinding",
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "metadata": metadata(APP, None, part_of, ann),
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": APP},
            "subjects": [super::common::service_account_subject(ctx, "ui")],
        }),
    ]
}

/// What the UI backend may read: core objects and CRDs; before 1.19 also NetworkPolicies and
/// all of Cilium's resources, before 1.20 also Endpoints.
fn cluster_role_rules(ctx: &Ctx) -> Value {
    let read = tree!(["get", "list", "watch"]);
    let policies = !ctx.plan.has(Change::UiRbacWithoutPolicies);
    let mut core = vec!["componentstatuses"];
    if !ctx.plan.has(Change::UiRbacWithoutEndpoints) {
        core.push("endpoints");
    }
    core.extend(["namespaces", "nodes", "pods", "services"]);
    let mut rules = Vec::new();
    if policies {
        rules.push(tree!({"apiGroups": ["networking.k8s.io"], "resources": ["networkpolicies"], "verbs": read.clone()}));
    }
    rules.push(tree!({"apiGroups": [""], "resources": core, "verbs": read.clone()}));
    rules.push(tree!({"apiGroups": ["apiextensions.k8s.io"], "resources": ["customresourcedefinitions"], "verbs": read.clone()}));
    if policies {
        rules.push(tree!({"apiGroups": ["cilium.io"], "resources": ["*"], "verbs": read}));
    }
    Value::Array(rules)
}

/// The frontend's `/tmp`: an emptyDir (limited to 256Mi from 1.20), or from 1.19 the volume
/// source the user gives in `hubble.ui.tmpVolume`, spliced next to the volume's name.
fn tmp_volume(ctx: &Ctx) -> Result<Value, RenderError> {
    let path = "hubble.ui.tmpVolume";
    let custom = ctx.v(path);
    let mut vol = Map::new();
    vol.insert("name".into(), tree!("tmp-dir"));
    if ctx.plan.has(Change::UiTmpVolume) && truthy(custom) {
        let Value::Object(source) = custom else {
            return Err(ctx.invalid(path, "must be a map: a volume source such as emptyDir"));
        };
        for (k, v) in source {
            vol.insert(k.clone(), v.clone());
        }
    } else if ctx.plan.has(Change::UiTmpSizeLimit) {
        vol.insert("emptyDir".into(), tree!({"sizeLimit": "256Mi"}));
    } else {
        vol.insert("emptyDir".into(), tree!({}));
    }
    Ok(Value::Object(vol))
}

fn service_account(ctx: &Ctx) -> Value {
    let annotations = merged(&[
        ctx.v("hubble.ui.annotations"),
        ctx.v("serviceAccounts.ui.annotations"),
    ]);
    common::service_account(ctx, "ui", annotations)
}

/// `.Values.hubble.ui.<key>`, read by path: taking the `hubble.ui` map whole would make the values
/// overlay build a merged copy of it.
fn uv<'a>(ctx: &Ctx<'a>, key: &str) -> &'a Value {
    ctx.v(&format!("hubble.ui.{key}"))
}

#[cfg(test)]
mod tests {
    use super::nginx_conf;

    #[test]
    fn sub_path_rewrites_and_proxies_with_trailing_slash() {
        let c = nginx_conf("/hubble/", false);
        assert!(c.contains("location /hubble/api {"));
        assert!(c.contains("rewrite ^/hubble(/.*)$ $1 break;"));
        assert!(c.contains("proxy_pass http://127.0.0.1:8090/;"));
        assert!(!c.contains("[::]"));
        let root = nginx_conf("/", true);
        assert!(!root.contains("rewrite"));
        assert!(root.contains("listen       [::]:8081;"));
    }
}
