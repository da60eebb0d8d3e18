//! The Job spec of Cilium's certgen, shared by Hubble's and Cluster Mesh's certificate Jobs and
//! CronJobs (hubble/tls-cronjob/, clustermesh-apiserver/tls-cronjob/), whose templates have the
//! same shape and differ only in the fields of `CertgenJob`.

use crate::changes::Change;
use serde_json::Value;

use super::common::{image, merged, metadata, put};
use super::Ctx;
use crate::tmpl::{bare, quote, truthy, with};

/// What differs between the certgen Jobs of Hubble and of ClusterMesh, which share their shape
/// (including the pre-1.18.4 resources indentation).
pub struct CertgenJob {
    /// The pod label `k8s-app`.
    pub app: &'static str,
    /// Value path of the extra pod labels.
    pub pod_labels: &'static str,
    /// Value path of the service account block (`serviceAccounts.x`).
    pub service_account: &'static str,
    /// Whether the pod runs with RuntimeDefault seccomp and a capability-less container before
    /// 1.19; from 1.19 every certgen pod does (`ClustermeshCertgenHardened`).
    pub hardened: bool,
    /// Whether the pod is on the host network before 1.19; from 1.19 no certgen pod is.
    pub host_network: bool,
    /// Builds the `CILIUM_CERTGEN_CONFIG` text (the certificates to issue).
    pub config: fn(&Ctx) -> String,
}

/// The Job spec certgen runs with (shared by the Job and the CronJob's job template).
pub fn job_spec(ctx: &Ctx, job: &CertgenJob) -> Value {
    let cg = ctx.v("certgen");
    let ns = ctx.namespace();
    let mut args = Vec::new();
    if ctx.on("debug.enabled") {
        args.push(tree!("--debug"));
    }
    args.push(tree!(format!(
        "--ca-generate={}",
        ctx.text("certgen.generateCA")
    )));
    args.push(tree!("--ca-reuse-secret"));
    args.push(tree!(format!("--ca-secret-namespace={ns}")));
    args.push(tree!("--ca-secret-name=cilium-ca"));
    args.push(tree!("--ca-common-name=Cilium CA"));
    if ctx.plan.has(Change::CertgenEnforceCaValidity) {
        args.push(tree!(format!(
            "--ca-enforce-validity-throughout-leaves-duration={}",
            ctx.text("certgen.enforceCAValidityThroughoutLeavesDuration")
        )));
    }
    let mut container = tree!({
        "name": "certgen",
        "image": image(&cg["image"]),
        "imagePullPolicy": bare(&Value::String(quote(&cg["image"]["pullPolicy"]))),
        "command": ["/usr/bin/cilium-certgen"],
        "args": args,
        "env": [{"name": "CILIUM_CERTGEN_CONFIG", "value": (job.config)(ctx)}],
    });
    if truthy(&cg["resources"]) {
        if ctx.plan.has(Change::CertgenResourcesInContainer) {
            put(&mut container, "resources", Some(cg["resources"].clone()));
        } else if let (Value::Object(c), Value::Object(r)) = (&mut container, &cg["resources"]) {
            // Before 1.18.4 the chart indented the resources block one level too shallow, so its
            // keys (limits, requests) land on the container itself.
            for (k, v) in r {
                c.insert(k.clone(), v.clone());
            }
        }
    }
    let hardened = job.hardened || ctx.plan.has(Change::ClustermeshCertgenHardened);
    if hardened {
        put(
            &mut container,
            "securityContext",
            Some(tree!({"capabilities": {"drop": ["ALL"]}, "allowPrivilegeEscalation": false})),
        );
    }
    put(
        &mut container,
        "volumeMounts",
        with(&cg["extraVolumeMounts"]),
    );
    let sa = ctx.v(job.service_account);
    let sa_name = quote(&sa["name"]);
    let host_network = job.host_network && !ctx.plan.has(Change::ClustermeshCertgenHardened);
    let mut pod = tree!({
        "containers": vec![container],
        "hostNetwork": host_network,
        "serviceAccountName": sa_name.as_str(),
        "automountServiceAccountToken": bare(&Value::String(quote(&sa["automount"]))),
        "restartPolicy": "OnFailure",
    });
    if !ctx.plan.has(Change::CertgenWithoutServiceAccountField) {
        put(&mut pod, "serviceAccount", Some(Value::String(sa_name)));
    }
    if hardened {
        put(
            &mut pod,
            "securityContext",
            Some(tree!({"seccompProfile": {"type": "RuntimeDefault"}})),
        );
    }
    put(&mut pod, "nodeSelector", with(&cg["nodeSelector"]));
    if truthy(&cg["priorityClassName"]) {
        put(
            &mut pod,
            "priorityClassName",
            Some(bare(&cg["priorityClassName"])),
        );
    }
    put(&mut pod, "tolerations", with(&cg["tolerations"]));
    put(
        &mut pod,
        "imagePullSecrets",
        with(ctx.v("imagePullSecrets")),
    );
    put(&mut pod, "volumes", with(&cg["extraVolumes"]));
    put(&mut pod, "affinity", with(&cg["affinity"]));
    let pod_labels = merged(&[&tree!({"k8s-app": job.app}), ctx.v(job.pod_labels)]);
    let ttl = &cg["ttlSecondsAfterFinished"];
    let ttl = if ctx.plan.has(Change::CertgenTtlWhenSet) {
        with(ttl).map(|t| bare(&t))
    } else {
        Some(bare(ttl))
    };
    let mut spec = tree!({
        "template": tree!({
            "metadata": tree!({"labels": pod_labels}),
            "spec": pod,
        }),
    });
    put(&mut spec, "ttlSecondsAfterFinished", ttl);
    spec
}

/// The install-time certgen Job. Before 1.19 it is a Helm hook run after every install and
/// upgrade; from 1.19 a plain Job whose name ends in the first 10 hex digits of the sha256 of
/// our canonical text of its spec, so the name changes exactly when the (immutable) spec does.
/// `annotations` are the user's maps in the template's order (later keys win).
pub fn one_shot_job(
    ctx: &Ctx,
    job: &CertgenJob,
    labels: Option<Value>,
    annotations: &[&Value],
) -> Value {
    let spec = job_spec(ctx, job);
    let hook = tree!({"helm.sh/hook": "post-install,post-upgrade"});
    let mut maps: Vec<&Value> = Vec::new();
    let name = if ctx.plan.has(Change::CertgenJobNamedBySpec) {
        let hash = crate::output::sha256_hex(&spec);
        format!("{}-{}", job.app, &hash[..10])
    } else {
        maps.push(&hook);
        job.app.to_string()
    };
    maps.extend_from_slice(annotations);
    tree!({
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": metadata(&name, Some(&ctx.namespace()), labels, merged(&maps)),
        "spec": spec,
    })
}

/// The spec of certgen's CronJob, run on `schedule` (a value path).
pub fn cron_job_spec(ctx: &Ctx, job: &CertgenJob, schedule: &str) -> Value {
    let mut spec = tree!({
        "schedule": quote(ctx.v(schedule)),
        "concurrencyPolicy": "Forbid",
        "jobTemplate": {"spec": job_spec(ctx, job)},
    });
    if ctx.plan.has(Change::CertgenJobHistoryLimits) {
        for key in ["successfulJobsHistoryLimit", "failedJobsHistoryLimit"] {
            let v = bare(ctx.v(&format!("certgen.cronJob.{key}")));
            put(&mut spec, key, Some(v));
        }
    }
    spec
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::components::common::tests::with_release;
    use serde_json::json;

    fn config(_: &Ctx) -> String {
        "certs: []\n".into()
    }

    const JOB: CertgenJob = CertgenJob {
        app: "x-certs",
        pod_labels: "certgen.podLabels",
        service_account: "serviceAccounts.hubblecertgen",
        hardened: false,
        host_network: true,
        config,
    };

    #[test]
    fn resources_sat_on_the_container_before_1_18_4() {
        let values = "certgen: {resources: {limits: {cpu: 1}}, podLabels: {p: q}}\n";
        let container = |v: &str| {
            with_release(v, values, "1.35.0", |ctx| {
                job_spec(ctx, &JOB)["template"]["spec"]["containers"][0].clone()
            })
        };
        let old = container("1.18.3");
        assert!(old.get("resources").is_none());
        assert_eq!(old["limits"]["cpu"], json!(1.0));
        let new = container("1.18.4");
        assert_eq!(new["resources"]["limits"]["cpu"], json!(1.0));
        assert!(new.get("securityContext").is_none());
        assert_eq!(new["env"][0]["value"], "certs: []\n");
        let spec = with_release("1.18.12", values, "1.35.0", |ctx| job_spec(ctx, &JOB));
        assert_eq!(spec["template"]["spec"]["hostNetwork"], true);
        assert_eq!(
            spec["template"]["metadata"]["labels"],
            json!({"k8s-app": "x-certs", "p": "q"})
        );
    }

    fn job_named(version: &str, values: &str) -> Value {
        with_release(version, values, "1.35.0", |ctx| {
            one_shot_job(ctx, &JOB, None, &[ctx.v("certgen.annotations.job")])
        })
    }

    #[test]
    fn the_job_is_a_hook_before_1_19_and_named_by_its_spec_after() {
        let old = job_named("1.18.12", "{}");
        assert_eq!(old["metadata"]["name"], "x-certs");
        assert_eq!(
            old["metadata"]["annotations"]["helm.sh/hook"],
            "post-install,post-upgrade"
        );
        let new = job_named("1.19.0", "certgen: {annotations: {job: {a: b}}}");
        let name = new["metadata"]["name"].as_str().unwrap();
        let hash = name.strip_prefix("x-certs-").unwrap();
        assert_eq!(hash.len(), 10);
        assert!(hash
            .bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()));
        assert_eq!(new["metadata"]["annotations"], json!({"a": "b"}));
        // Annotations are not part of the spec; the name follows the spec alone.
        assert_eq!(job_named("1.19.0", "{}")["metadata"]["name"], name);
        let other = job_named("1.19.0", "certgen: {podLabels: {p: q}}");
        assert_ne!(other["metadata"]["name"], name);
    }

    #[test]
    fn the_cron_job_keeps_its_history_limits_from_1_19() {
        let values = "certgen: {cronJob: {successfulJobsHistoryLimit: 4}}\nx: {s: \"0 0 * * *\"}\n";
        let spec =
            |v: &str| with_release(v, values, "1.35.0", |ctx| cron_job_spec(ctx, &JOB, "x.s"));
        let old = spec("1.18.12");
        assert!(old.get("successfulJobsHistoryLimit").is_none());
        let new = spec("1.19.0");
        assert_eq!(new["schedule"], "0 0 * * *");
        assert_eq!(new["successfulJobsHistoryLimit"].as_f64(), Some(4.0));
        assert_eq!(new["failedJobsHistoryLimit"].as_f64(), Some(1.0));
    }
}
