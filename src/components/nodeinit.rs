//! Mirrors the chart's templates: cilium-nodeinit/ (the node preparation DaemonSet and its
//! ServiceAccount). Its startup and pre-stop scripts are chart files evaluated as templates,
//! read from the official archive (`common::bundled_script`).

use crate::components::common::namespaced_workload;
use serde_json::{Map, Value};

use super::common::{
    self, bundled_script, labels, list_items, merged, metadata, node_component_labels,
    priority_class_name, put,
};
use super::Ctx;
use crate::changes::Change;
use crate::error::RenderError;
use crate::tmpl::{bare, quote, truthy, with};

const NAME: &str = "cilium-node-init";
const STARTUP: &str = "files/nodeinit/startup.bash";
const PRESTOP: &str = "files/nodeinit/prestop.bash";

pub fn render(ctx: &Ctx) -> Result<Vec<Value>, RenderError> {
    if !ctx.on("nodeinit.enabled") {
        return Ok(Vec::new());
    }
    let mut out = vec![daemon_set(ctx)?];
    if ctx.on("serviceAccounts.nodeinit.enabled") && ctx.on("serviceAccounts.nodeinit.create") {
        out.push(service_account(ctx));
    }
    Ok(out)
}

/// The account carries `commonLabels` and annotations only when there are annotations (the
/// chart writes both inside that one condition).
fn service_account(ctx: &Ctx) -> Value {
    let own = ctx.v("serviceAccounts.nodeinit.annotations");
    let component = ctx.v("nodeinit.annotations");
    let (labels, annotations) = if truthy(own) || truthy(component) {
        (common::common_labels(ctx), merged(&[component, own]))
    } else {
        (None, None)
    };
    tree!({
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": metadata(
            &quote(ctx.v("serviceAccounts.nodeinit.name")),
            Some(&ctx.namespace()),
            labels,
            annotations,
        ),
    })
}

fn own_labels<'a>(ctx: &'a Ctx) -> Vec<(&'a str, &'a str)> {
    node_component_labels(ctx, NAME)
}

fn daemon_set(ctx: &Ctx) -> Result<Value, RenderError> {
    let common_labels = ctx.v("commonLabels");
    let mut spec = tree!({
        "selector": {"matchLabels": {"app": NAME}},
        "template": {
            "metadata": {
                "labels": labels(&own_labels(ctx), &[common_labels, ctx.v("nodeinit.podLabels")]),
            },
            "spec": pod_spec(ctx)?,
        },
    });
    if let Some(annotations) = pod_annotations(ctx) {
        spec["template"]["metadata"]["annotations"] = annotations;
    }
    super::common::min_ready_seconds_from(ctx, &mut spec, "nodeinit.minReadySeconds");
    put(
        &mut spec,
        "updateStrategy",
        with(ctx.v("nodeinit.updateStrategy")),
    );
    Ok(namespaced_workload(
        ctx,
        "DaemonSet",
        NAME,
        &own_labels(ctx),
        ctx.v("nodeinit.annotations"),
        spec,
    ))
}

/// `podAnnotations`, then (before Kubernetes 1.30, which has no pod field for it) the
/// annotation that runs the container unconfined by AppArmor, unless Cilium runs privileged.
fn pod_annotations(ctx: &Ctx) -> Option<Value> {
    let mut m = match ctx.v("nodeinit.podAnnotations") {
        Value::Object(m) => m.clone(),
        _ => Map::new(),
    };
    if !ctx.on("securityContext.privileged") && !ctx.plan.kube.app_armor_profile_field() {
        m.insert(
            "container.apparmor.security.beta.kubernetes.io/node-init".into(),
            Value::String("unconfined".into()),
        );
    }
    (!m.is_empty()).then_some(Value::Object(m))
}

/// The pod security context; before Kubernetes 1.30 the chart drops `appArmorProfile` from it
/// (Sprig's `unset`, which fails on anything but a map).
fn pod_security_context(ctx: &Ctx) -> Result<Option<Value>, RenderError> {
    let path = "nodeinit.podSecurityContext";
    let mut psc = ctx.v(path).clone();
    if !ctx.plan.kube.app_armor_profile_field() {
        match &mut psc {
            Value::Object(m) => {
                m.remove("appArmorProfile");
            }
            Value::Null => {}
            _ => return Err(ctx.invalid(path, "must be a map (the pod's securityContext)")),
        }
    }
    Ok(with(&psc))
}

fn pod_spec(ctx: &Ctx) -> Result<Value, RenderError> {
    let mut spec = tree!({
        "containers": [container(ctx)?],
        "hostPID": true,
        "hostNetwork": true,
    });
    put(&mut spec, "securityContext", pod_security_context(ctx)?);
    if ctx.plan.has(Change::NodeinitPodSpec120) && ctx.plan.kube.user_namespaces_by_default() {
        put(&mut spec, "hostUsers", Some(Value::Bool(true)));
    }
    put(
        &mut spec,
        "priorityClassName",
        priority_class_name(
            ctx,
            ctx.v("nodeinit.priorityClassName"),
            "system-node-critical",
        ),
    );
    if ctx.on("serviceAccounts.nodeinit.enabled") {
        put(
            &mut spec,
            "serviceAccountName",
            Some(Value::String(quote(ctx.v("serviceAccounts.nodeinit.name")))),
        );
        put(
            &mut spec,
            "automountServiceAccountToken",
            Some(bare(ctx.v("serviceAccounts.nodeinit.automount"))),
        );
    } else if ctx.plan.has(Change::NodeinitNoTokenWithoutAccount) {
        put(
            &mut spec,
            "automountServiceAccountToken",
            Some(Value::Bool(false)),
        );
    }
    let volumes = list_items(ctx, "nodeinit.extraVolumes")?;
    if !volumes.is_empty() {
        put(&mut spec, "volumes", Some(Value::Array(volumes)));
    }
    common::put_with(
        &mut spec,
        ctx,
        &[
            ("imagePullSecrets", "imagePullSecrets"),
            ("affinity", "nodeinit.affinity"),
            ("nodeSelector", "nodeinit.nodeSelector"),
            ("tolerations", "nodeinit.tolerations"),
        ],
    );
    Ok(spec)
}

fn container(ctx: &Ctx) -> Result<Value, RenderError> {
    let mut env = list_items(ctx, "nodeinit.extraEnv")?;
    env.push(tree!({
        "name": "STARTUP_SCRIPT",
        "value": bundled_script(ctx, "nodeinit.enabled", STARTUP, "false")?,
    }));
    let mut c = tree!({
        "name": "node-init",
        "image": common::image(ctx.v("nodeinit.image")),
        "imagePullPolicy": bare(ctx.v("nodeinit.image.pullPolicy")),
        "env": env,
        "terminationMessagePolicy": "FallbackToLogsOnError",
    });
    if ctx.on("nodeinit.revertReconfigureKubelet") {
        let script = bundled_script(ctx, "nodeinit.revertReconfigureKubelet", PRESTOP, "false")?;
        put(
            &mut c,
            "lifecycle",
            Some(tree!({"preStop": {"exec": {"command": [
                "nsenter", "--target=1", "--mount", "--", "/bin/bash", "-c", script,
            ]}}})),
        );
    }
    let mounts = list_items(ctx, "nodeinit.extraVolumeMounts")?;
    if !mounts.is_empty() {
        put(&mut c, "volumeMounts", Some(Value::Array(mounts)));
    }
    common::put_with(
        &mut c,
        ctx,
        &[
            ("resources", "nodeinit.resources"),
            ("securityContext", "nodeinit.securityContext"),
        ],
    );
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::components::common::tests::with_release;

    #[test]
    fn without_an_archive_the_error_names_the_value_and_the_archive() {
        with_release("1.20.0", "nodeinit: {enabled: true}", "1.35.0", |ctx| {
            let err = render(ctx).unwrap_err().to_string();
            assert!(err.contains("nodeinit.enabled"), "{err}");
            assert!(
                err.contains(
                    "chart archive cilium-1.20.0.tgz: supply it (`cilium-cmp chart fetch 1.20.0`"
                ),
                "{err}"
            );
            assert!(err.contains(STARTUP), "{err}");
        });
        with_release("1.20.0", "{}", "1.35.0", |ctx| {
            assert!(render(ctx).unwrap().is_empty());
        });
    }

    /// A chart whose script uses a construct the evaluator does not know is refused, naming the
    /// file and the construct, instead of rendering something else than Helm would.
    #[test]
    fn an_unknown_construct_in_the_archive_is_refused_by_name() {
        let dir = std::env::temp_dir().join(format!("cilium-cmp-nodeinit-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("files/nodeinit")).unwrap();
        std::fs::write(dir.join("Chart.yaml"), "version: 1.20.0\n").unwrap();
        std::fs::write(
            dir.join(STARTUP),
            "#!/bin/bash\n{{- range .Values.nodeinit.extraEnv }}x{{ end }}\n",
        )
        .unwrap();
        let chart = crate::chart::ChartFiles::open(&dir).unwrap();
        let cilium = crate::versions::parse("1.20.0").unwrap();
        let layer = crate::values::Layer::from_yaml("v.yaml", "nodeinit: {enabled: true}").unwrap();
        let values = crate::values::Values::resolve(crate::versions::defaults(cilium), &[layer]);
        let kube = crate::plan::KubeVersion::parse("1.35.0").unwrap();
        let plan = crate::plan::Plan::new(cilium, "kube-system", kube, Default::default(), &values);
        let err = render(&Ctx::new(&values, &plan, Some(&chart)))
            .unwrap_err()
            .to_string();
        std::fs::remove_dir_all(&dir).ok();
        assert!(err.contains(STARTUP), "{err}");
        assert!(err.contains("`range`"), "{err}");
        assert!(err.contains("nodeinit.enabled"), "{err}");
    }

    #[test]
    fn the_account_has_labels_only_with_annotations() {
        let values = "commonLabels: {team: net}\nserviceAccounts: {nodeinit: {enabled: true}}";
        with_release("1.19.0", values, "1.35.0", |ctx| {
            assert!(service_account(ctx)["metadata"].get("labels").is_none());
        });
        let values = "commonLabels: {team: net}\nnodeinit: {annotations: {a: b}}";
        with_release("1.19.0", values, "1.35.0", |ctx| {
            let sa = service_account(ctx);
            assert_eq!(sa["metadata"]["labels"]["team"], "net");
            assert_eq!(sa["metadata"]["annotations"]["a"], "b");
        });
    }
}
