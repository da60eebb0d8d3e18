//! `cilium-cmp import-application`: Applications written the ways Argo CD's documentation shows
//! (values string, valuesObject, valueFiles of a `ref` source, parameters with and without
//! forceString, fileParameters) become a folder that renders what real Helm renders for the
//! original Application's values, merged in Argo CD's order (valueFiles, values, then --set,
//! --set-string, --set-file), compared with the referee's rules (`../shared/tools/parity.py`);
//! the printed Application validates against Argo CD's CRD schema. Bad input is refused with
//! nothing on stdout.

use crate::support::charts;
use crate::support::harness;
use crate::support::scratch;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use scratch::Scratch;
use serde_json::{json, Value};

const APPLICATION_CRD: &str = "schemas/argoproj.io-application-crd.yaml";

pub fn tests() -> Vec<harness::Trial> {
    harness::group(
        file!(),
        vec![
            harness::test(
                "an_oci_chart_with_its_own_ignore_differences_and_one_values_text",
                an_oci_chart_with_its_own_ignore_differences_and_one_values_text,
            )
            .shared("charts"),
            harness::test(
                "dead_values_are_left_out_and_listed_or_kept_with_the_opt_out",
                dead_values_are_left_out_and_listed_or_kept_with_the_opt_out,
            )
            .shared("charts"),
            harness::test(
                "imported_folders_render_what_helm_renders_for_the_original_application",
                imported_folders_render_what_helm_renders_for_the_original_application,
            )
            .shared("charts")
            .shared("tools/parity.py")
            .shared(APPLICATION_CRD)
            .shared("charts")
            .python(),
            harness::test(
                "bad_applications_are_refused_with_what_to_do",
                bad_applications_are_refused_with_what_to_do,
            )
            .shared("charts"),
        ],
    )
}

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_cilium-cmp"));
    charts::give(&mut c);
    c
}

/// A values file every case starts from: certificates from certgen (Helm's default mints random
/// keys, which no renderer can match) and a few values of each kind.
const BASE: &str = "hubble:\n  tls:\n    auto:\n      method: cronJob\n  relay:\n    enabled: true\ncluster:\n  name: prod\n  id: 3\n";

struct Case {
    name: &'static str,
    version: &'static str,
    /// The Application's chart source (`helm:` and all), as YAML lines under `- ` or `source:`.
    helm: &'static str,
    /// Whether a `ref: values` Git source comes with it (multi-source Application).
    with_ref: bool,
    /// Files of the `ref: values` repository: (path, text).
    ref_files: &'static [(&'static str, &'static str)],
    /// What Helm is given, in Argo CD's order: ("yaml", text), ("set", expr), ("set_string",
    /// expr), ("set_file", "key=path in the ref repository").
    helm_inputs: &'static [(&'static str, &'static str)],
}

const CASES: &[Case] = &[
    Case {
        name: "values-string",
        version: "1.20.0",
        helm: "      releaseName: cilium\n      values: |\n        hubble:\n          tls:\n            auto:\n              method: cronJob\n          relay:\n            enabled: true\n        cluster:\n          name: prod\n          id: 3\n        ipam:\n          mode: kubernetes\n",
        with_ref: false,
        ref_files: &[],
        helm_inputs: &[("yaml", "hubble:\n  tls:\n    auto:\n      method: cronJob\n  relay:\n    enabled: true\ncluster:\n  name: prod\n  id: 3\nipam:\n  mode: kubernetes\n")],
    },
    Case {
        name: "values-object",
        version: "1.19.6",
        helm: "      valuesObject:\n        hubble:\n          tls:\n            auto:\n              method: cronJob\n          ui:\n            enabled: true\n          relay:\n            enabled: true\n        kubeProxyReplacement: true\n        k8sServiceHost: localhost\n        k8sServicePort: 7445\n",
        with_ref: false,
        ref_files: &[],
        helm_inputs: &[("yaml", "hubble:\n  tls:\n    auto:\n      method: cronJob\n  ui:\n    enabled: true\n  relay:\n    enabled: true\nkubeProxyReplacement: true\nk8sServiceHost: localhost\nk8sServicePort: 7445\n")],
    },
    Case {
        name: "value-files-of-a-ref-source",
        version: "1.20.0",
        helm: "      ignoreMissingValueFiles: true\n      valueFiles:\n        - $values/cilium/base.yaml\n        - $values/cilium/prod.yaml\n        - $values/cilium/missing.yaml\n      values: |\n        operator:\n          replicas: 1\n",
        with_ref: true,
        ref_files: &[
            ("cilium/base.yaml", BASE),
            ("cilium/prod.yaml", "cluster:\n  name: prod-eu\nbandwidthManager:\n  enabled: true\n"),
        ],
        helm_inputs: &[
            ("yaml", BASE),
            ("yaml", "cluster:\n  name: prod-eu\nbandwidthManager:\n  enabled: true\n"),
            ("yaml", "operator:\n  replicas: 1\n"),
        ],
    },
    Case {
        name: "parameters-and-force-string",
        version: "1.18.12",
        helm: "      valueFiles:\n        - $values/base.yaml\n      parameters:\n        - name: cluster.id\n          value: \"5\"\n        - name: cluster.name\n          value: \"1234\"\n          forceString: true\n        - name: extraConfig.note\n          value: a,b\n          forceString: true\n        - name: operator.replicas\n          value: \"1\"\n",
        with_ref: true,
        ref_files: &[("base.yaml", BASE)],
        helm_inputs: &[
            ("yaml", BASE),
            ("set", "cluster.id=5"),
            ("set", "operator.replicas=1"),
            ("set_string", "cluster.name=1234"),
            ("set_string", "extraConfig.note=a\\,b"),
        ],
    },
    Case {
        name: "file-parameters",
        version: "1.20.0",
        helm: "      valueFiles: [$values/base.yaml]\n      fileParameters:\n        - name: extraConfig.custom\n          path: $values/files/custom.conf\n",
        with_ref: true,
        ref_files: &[
            ("base.yaml", BASE),
            ("files/custom.conf", "first line\nsecond, with a comma\n"),
        ],
        helm_inputs: &[("yaml", BASE), ("set_file", "extraConfig.custom=files/custom.conf")],
    },
    // Values Cilium 1.20 does not know, at several depths and in two layers: Helm ignores them,
    // and the folder leaves them out, so it renders what Helm rendered, without the opt-out.
    Case {
        name: "dead-keys",
        version: "1.20.0",
        helm: "      valueFiles: [$values/old.yaml]\n      values: |\n        externalIPs:\n          enabled: true\n        operator:\n          replicas: 1\n          prometheus:\n            replicas: 2\n",
        with_ref: true,
        ref_files: &[("old.yaml", DEAD)],
        helm_inputs: &[
            ("yaml", DEAD),
            ("yaml", "externalIPs:\n  enabled: true\noperator:\n  replicas: 1\n  prometheus:\n    replicas: 2\n"),
        ],
    },
];

/// BASE with values 1.20 does not know: a typo, a renamed value, one written for an umbrella
/// chart's subchart level and a capitalised key.
const DEAD: &str = "hubble:\n  tls:\n    auto:\n      method: cronJob\n  relay:\n    enabled: true\ncluster:\n  name: prod\n  id: 3\ncgroup:\n  automount:\n    enabled: false\nencryption:\n  strictMode:\n    enabled: true\n    cidr: 10.0.0.0/8\nPodDisruptionBudget:\n  enabled: true\n";

fn application(case: &Case) -> String {
    let chart = format!(
        "repoURL: https://helm.cilium.io/\n    chart: cilium\n    targetRevision: {}\n    helm:\n{}",
        case.version, case.helm
    );
    let source = if case.with_ref {
        format!(
            "  sources:\n  - {}\n  - repoURL: https://git.example.com/cluster-config.git\n    targetRevision: main\n    ref: values\n",
            chart
        )
    } else {
        format!("  source:\n    {chart}")
    };
    format!(
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: cilium\n  namespace: argocd\n  labels:\n    team: network\n  annotations:\n    note: kept\nspec:\n  project: platform\n  revisionHistoryLimit: 3\n{source}  destination:\n    server: https://kubernetes.default.svc\n    namespace: kube-system\n  syncPolicy:\n    syncOptions: [CreateNamespace=true]\n  info:\n    - name: owner\n      value: network-team\n"
    )
}

fn import(dir: &Path, app: &str, extra: &[&str]) -> Output {
    import_to(dir, app, "clusters/prod/cilium", extra)
}

fn import_to(dir: &Path, app: &str, to: &str, extra: &[&str]) -> Output {
    let file = dir.join("app.yaml");
    std::fs::write(&file, app).unwrap();
    bin()
        .current_dir(dir)
        .args(["import-application", "app.yaml", "--to", to])
        .args(["--repo-url", "https://git.example.com/clusters.git"])
        .args(["--target-revision", "main"])
        .args(extra)
        .output()
        .unwrap()
}

/// Renders every case's original values with real Helm and checks each folder's render against
/// it with parity.py; checks each printed Application against the CRD schema.
const CHECK: &str = r#"
import json, sys
sys.path.insert(0, sys.argv[1])
import yaml
import application_schema
from helm_python import _native
from helm_parity import merge, differs

jobs = json.load(open(sys.argv[2]))
validator = application_schema.validator(sys.argv[3])
failures = []
for job in jobs:
    values = {}
    for kind, text in job["inputs"]:
        if kind == "yaml":
            layer = json.loads(_native.call_string("helm_values_from_yaml", text)) or {}
        elif kind == "set_file":
            key, path = text.split("=", 1)
            layer = json.loads(_native.call_string("helm_strvals_parse_file", key + "=" + job["ref_root"] + "/" + path))
        else:
            layer = json.loads(_native.call_string("helm_strvals_" + {"set": "parse", "set_string": "parse_string"}[kind], text))
        values = merge(values, layer)
    report = differs(sys.argv[1], job["chart"], values, job["out"] + ".helm.yaml", job["candidate"])
    if report:
        failures.append("%s: render differs from Helm's:\n%s" % (job["name"], report))
    app = yaml.safe_load(open(job["application"]))
    for e in validator.iter_errors(app):
        failures.append("%s: Application schema: %s at %s" % (job["name"], e.message, "/".join(map(str, e.absolute_path))))
if failures:
    sys.exit("\n".join(failures))
print("checked %d" % len(jobs))
"#;

fn imported_folders_render_what_helm_renders_for_the_original_application() {
    let parity = harness::shared("tools/parity.py");
    let crd = harness::shared(APPLICATION_CRD);
    let charts = std::env::var_os("CILIUM_CMP_CHART_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| harness::shared("charts"));
    let python = harness::python();
    let mut jobs = Vec::new();
    let mut scratches = Vec::new();
    for case in CASES {
        let chart = charts.join(format!("cilium-{}.tgz", case.version));
        assert!(
            chart.is_file(),
            "{}: no such chart archive",
            chart.display()
        );
        let s = Scratch::new(case.name);
        std::fs::create_dir_all(s.0.join("cluster-config")).unwrap();
        for (path, text) in case.ref_files {
            s.write(&format!("cluster-config/{path}"), text);
        }
        let o = import(
            &s.0,
            &application(case),
            &["--values-root", "values=cluster-config"],
        );
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "{}: {stderr}", case.name);
        let app_text = String::from_utf8(o.stdout).unwrap();
        let app = cilium_cmp_yaml::yaml::parse_value(&app_text).unwrap();
        // The user's own fields are kept; the source is the plugin's; the recommended options.
        assert_eq!(app["metadata"]["labels"]["team"], "network", "{app_text}");
        assert_eq!(app["metadata"]["annotations"]["note"], "kept");
        // It synced client-side: the first server-side sync takes over argocd-controller's
        // Update fields (docs/adopt-check.md, "Moving from Helm").
        assert_eq!(
            app["metadata"]["annotations"]
                ["argocd.argoproj.io/client-side-apply-migration-manager"],
            "argocd-controller"
        );
        assert_eq!(app["spec"]["project"], "platform");
        assert_eq!(app["spec"]["info"][0]["value"], "network-team");
        assert_eq!(app["spec"]["revisionHistoryLimit"], json!(3.0));
        assert_eq!(
            app["spec"]["source"],
            json!({"repoURL": "https://git.example.com/clusters.git", "targetRevision": "main",
                   "path": "clusters/prod/cilium", "plugin": {"name": "cilium-cmp-v1"}}),
            "{app_text}"
        );
        assert!(app["spec"].get("sources").is_none());
        assert_eq!(
            app["spec"]["ignoreDifferences"],
            json!([{"group": "cilium.io", "kind": "CiliumIdentity"}])
        );
        assert_eq!(
            app["spec"]["syncPolicy"],
            json!({"automated": {"prune": true, "selfHeal": true},
                   "syncOptions": ["CreateNamespace=true", "ServerSideApply=true", "PruneLast=true"]})
        );
        let settings =
            std::fs::read_to_string(s.0.join("clusters/prod/cilium/cilium-cmp.yaml")).unwrap();
        assert!(settings.contains(&format!("ciliumVersion: \"{}\"", case.version)));
        // The folder rendered as the plugin renders it.
        let lock = bin()
            .current_dir(&s.0)
            .args([
                "render-folder",
                "clusters/prod/cilium",
                "--namespace",
                "kube-system",
            ])
            .args(["--kube-version", "1.35.0", "--chart-dir"])
            .arg(&charts)
            .output()
            .unwrap();
        assert!(
            lock.status.success(),
            "{}: {}",
            case.name,
            String::from_utf8_lossy(&lock.stderr)
        );
        let render = String::from_utf8(lock.stdout).unwrap();
        assert!(
            render.contains("kind: DaemonSet"),
            "{}: not a render",
            case.name
        );
        let candidate = s.0.join("render.yaml");
        std::fs::write(&candidate, &render).unwrap();
        let application = s.0.join("printed-application.yaml");
        std::fs::write(&application, &app_text).unwrap();
        jobs.push(json!({
            "name": case.name,
            "chart": chart,
            "inputs": case.helm_inputs,
            "ref_root": s.0.join("cluster-config"),
            "out": s.0.join("reference"),
            "candidate": candidate,
            "application": application,
        }));
        scratches.push(s);
    }
    let jobs_file = scratches[0].0.join("jobs.json");
    std::fs::write(&jobs_file, serde_json::to_string(&jobs).unwrap()).unwrap();
    let o = Command::new(python)
        .args(["-c", CHECK])
        .env(
            "PYTHONPATH",
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/support"),
        )
        .arg(parity.parent().unwrap())
        .arg(&jobs_file)
        .arg(&crd)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).trim(),
        format!("checked {}", CASES.len())
    );
}

/// `import-application` of `app` into `to` with `extra`, refused with a diagnostic of `kind`
/// whose message names every one of `needles`; nothing is written there.
fn refused_to(
    dir: &Path,
    app: &str,
    to: &str,
    extra: &[&str],
    kind: &str,
    needles: &[&str],
) -> serde_json::Value {
    let extra = [extra, &["--error-format", "json"]].concat();
    let o = import_to(dir, app, to, &extra);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(o.stdout.is_empty(), "stdout not empty on error");
    let d: serde_json::Value = serde_json::from_str(err.trim_end().lines().last().unwrap_or(""))
        .unwrap_or_else(|e| panic!("not one JSON diagnostic ({e}): {err}"));
    assert_eq!(d["kind"], kind, "{err}");
    let message = d["message"].as_str().unwrap_or_default();
    for n in needles {
        assert!(message.contains(n), "the message lacks {n:?}: {err}");
    }
    d
}

/// `refused_to` into the folder `import` writes.
fn refused(
    dir: &Path,
    app: &str,
    extra: &[&str],
    kind: &str,
    needles: &[&str],
) -> serde_json::Value {
    refused_to(dir, app, "clusters/prod/cilium", extra, kind, needles)
}

fn with_revision(rev: &str) -> String {
    application(&CASES[0]).replace("targetRevision: 1.20.0", &format!("targetRevision: {rev}"))
}

fn bad_applications_are_refused_with_what_to_do() {
    let s = Scratch::new("import-errors");
    refused(
        &s.0,
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n",
        &[],
        "application.refused",
        &["not an Argo CD Application"],
    );
    let d = refused(
        &s.0,
        "a: [\n",
        &[],
        "application.syntax",
        &["app.yaml:2:1: "],
    );
    let span = &d["spans"][0];
    assert_eq!(
        (&span["file"], &span["line"], &span["column"]),
        (&"app.yaml".into(), &2.into(), &1.into()),
        "{d}"
    );
    // The entry that makes it another kind of object is shown.
    let d = refused(
        &s.0,
        "apiVersion: v1\nkind: ConfigMap\n",
        &[],
        "application.refused",
        &["not an Argo CD Application"],
    );
    assert_eq!(d["spans"][0]["text"], "kind: ConfigMap", "{d}");
    let other_chart = application(&CASES[0])
        .replace("chart: cilium", "chart: ingress-nginx")
        .replace(
            "https://helm.cilium.io/",
            "https://kubernetes.github.io/ingress-nginx",
        );
    refused(
        &s.0,
        &other_chart,
        &[],
        "application.refused",
        &["ingress-nginx", "Cilium's chart"],
    );
    for range in ["1.19.x", "'>=1.19'", "'~1.20.0'", "'1.20'"] {
        refused(
            &s.0,
            &with_revision(range),
            &[],
            "application.refused",
            &["version range", "exact version"],
        );
    }
    refused(
        &s.0,
        &with_revision("1.17.0"),
        &[],
        "application.refused",
        &[
            "older than 1.18.0, the oldest release cilium-cmp renders",
            "upgrade this Application with Helm first",
            "then import the upgraded Application",
        ],
    );
    refused(
        &s.0,
        &with_revision("1.20"),
        &[],
        "application.refused",
        &["not a string", "quoted"],
    );
    // A file of the ref source without a checkout of it; then with one that lacks the file.
    let multi = application(&CASES[2]).replace(
        "ignoreMissingValueFiles: true",
        "ignoreMissingValueFiles: false",
    );
    refused(
        &s.0,
        &multi,
        &[],
        "application.values",
        &["--values-root", "values"],
    );
    std::fs::create_dir_all(s.0.join("cfg")).unwrap();
    refused(
        &s.0,
        &multi,
        &["--values-root", "cfg"],
        "application.values",
        &["valueFiles[0]", "does not exist"],
    );
    // A values file inside the chart package cannot be read.
    let in_chart = application(&CASES[0]).replace(
        "releaseName: cilium\n",
        "releaseName: cilium\n      valueFiles: [values-prod.yaml]\n",
    );
    refused(
        &s.0,
        &in_chart,
        &[],
        "application.values",
        &["values-prod.yaml", "chart package"],
    );
    let no_ns = application(&CASES[0]).replace("    namespace: kube-system\n", "");
    refused(
        &s.0,
        &no_ns,
        &[],
        "application.refused",
        &["destination.namespace"],
    );
    let typo = application(&CASES[0]).replace("releaseName:", "releaseNme:");
    refused(&s.0, &typo, &[], "application.refused", &["releaseNme"]);
    // A folder that exists already is never overwritten.
    let first = import(&s.0, &application(&CASES[0]), &[]);
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    refused(
        &s.0,
        &application(&CASES[0]),
        &[],
        "usage.exists",
        &["exists already"],
    );
    // A folder that would not render is not written (Helm would mint random keys here).
    let random = application(&CASES[0]).replace("method: cronJob", "method: helm");
    refused_to(
        &s.0,
        &random,
        "clusters/other",
        &[],
        "values.nondeterministic",
        &["nothing was written", "helm"],
    );
    assert!(!s.0.join("clusters/other").exists());
}

/// The dead values are listed with their reasons (typos flagged), left out, and the written
/// folder renders without the opt-out; `--keep-unknown-keys` keeps them and the opt-out.
fn dead_values_are_left_out_and_listed_or_kept_with_the_opt_out() {
    let case = CASES.iter().find(|c| c.name == "dead-keys").unwrap();
    let s = Scratch::new("import-dead");
    let cfg = s.0.join("cfg");
    std::fs::create_dir_all(&cfg).unwrap();
    std::fs::write(cfg.join("old.yaml"), DEAD).unwrap();
    // No chart archive needed: the one value that embeds a bundled file is off.
    let app = application(case).replace(
        "            replicas: 2\n",
        "            replicas: 2\n        cni:\n          iptablesRemoveAWSRules: false\n",
    );
    let o = import(&s.0, &app, &["--values-root", "cfg"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    for needle in [
        "cgroup.automount (set in cfg/old.yaml line 11): the chart has no such value; did you mean cgroup.autoMount?",
        "LIKELY A TYPO of cgroup.autoMount",
        "externalIPs (set in spec.source.helm.values line 1): removed from the chart",
        "operator.prometheus.replicas (set in spec.source.helm.values line 6)",
        "encryption.strictMode.enabled",
        "PodDisruptionBudget",
        "left out of values.yaml",
        "the comments of cfg/old.yaml, spec.source.helm.values are not kept",
    ] {
        assert!(err.contains(needle), "{needle:?} not in {err}");
    }
    let dir = s.0.join("clusters/prod/cilium");
    let values = std::fs::read_to_string(dir.join("values.yaml")).unwrap();
    for gone in [
        "automount",
        "externalIPs",
        "strictMode",
        "PodDisruptionBudget",
        "prometheus",
    ] {
        assert!(!values.contains(gone), "{gone} in {values}");
    }
    assert!(!std::fs::read_to_string(dir.join("cilium-cmp.yaml"))
        .unwrap()
        .contains("allowUnknownKeys"));
    let render = |to: &str| {
        bin()
            .current_dir(&s.0)
            .args([
                "render-folder",
                to,
                "--namespace",
                "kube-system",
                "--kube-version",
                "1.35.0",
            ])
            .output()
            .unwrap()
    };
    let clean = render("clusters/prod/cilium");
    assert!(
        clean.status.success(),
        "{}",
        String::from_utf8_lossy(&clean.stderr)
    );

    let o = import_to(
        &s.0,
        &app,
        "clusters/kept",
        &["--values-root", "cfg", "--keep-unknown-keys"],
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("allowUnknownKeys: true") && err.contains("kept"),
        "{err}"
    );
    let kept = s.0.join("clusters/kept");
    assert!(std::fs::read_to_string(kept.join("cilium-cmp.yaml"))
        .unwrap()
        .contains("\nallowUnknownKeys: true\n"));
    assert!(std::fs::read_to_string(kept.join("values.yaml"))
        .unwrap()
        .contains("automount"));
    let opted = render("clusters/kept");
    assert!(
        opted.status.success(),
        "{}",
        String::from_utf8_lossy(&opted.stderr)
    );
    assert_eq!(opted.stdout, clean.stdout);
}

/// Cilium's chart from its OCI registry, the user's own ignoreDifferences (one written twice, a
/// CiliumIdentity one with jqPathExpressions), and one values text: kept byte for byte, or, with
/// a key written twice, edited by lines (its comments stay) to what Helm read.
fn an_oci_chart_with_its_own_ignore_differences_and_one_values_text() {
    let s = Scratch::new("import-oci");
    let text = "# Production Cilium\ncni:\n  iptablesRemoveAWSRules: false   # no AWS\ncluster:\n  name: prod\n";
    let values_field = |t: &str| {
        let indented: String = t.lines().map(|l| format!("        {l}\n")).collect();
        format!("      values: |\n{indented}")
    };
    let ignore = "  ignoreDifferences:\n  - {group: apps, kind: Deployment, jsonPointers: [/spec/replicas]}\n  - {group: apps, kind: Deployment, jsonPointers: [/spec/replicas]}\n  - group: cilium.io\n    kind: CiliumIdentity\n    jqPathExpressions: ['.metadata.labels']\n";
    let app = |repo: &str, t: &str| {
        application(&CASES[0])
            .replace("https://helm.cilium.io/", repo)
            .replace(CASES[0].helm, &values_field(t))
            .replace("  destination:\n", &format!("{ignore}  destination:\n"))
    };
    for (i, repo) in ["quay.io/cilium/charts", "oci://quay.io/cilium/charts/"]
        .iter()
        .enumerate()
    {
        let to = format!("clusters/oci{i}");
        let o = import_to(&s.0, &app(repo, text), &to, &[]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "{repo}: {err}");
        assert!(!err.contains("not kept"), "{err}");
        let written = std::fs::read_to_string(s.0.join(&to).join("values.yaml")).unwrap();
        assert_eq!(written, text, "the one values text is kept as written");
        let printed: Value = serde_yaml_like(&o.stdout);
        assert_eq!(
            printed["spec"]["ignoreDifferences"],
            json!([
                {"group": "apps", "kind": "Deployment", "jsonPointers": ["/spec/replicas"]},
                {"group": "cilium.io", "kind": "CiliumIdentity", "jqPathExpressions": [".metadata.labels"]}
            ])
        );
    }
    // `envoy:` twice: Helm reads the second; the first goes, the comments stay.
    let repeated = format!("{text}envoy:\n  enabled: true\nenvoy:\n  enabled: false\n");
    let o = import_to(
        &s.0,
        &app("quay.io/cilium/charts", &repeated),
        "clusters/rep",
        &[],
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("envoy (set in spec.source.helm.values line 6): written again at spec.source.helm.values:8"),
        "{err}"
    );
    let written = std::fs::read_to_string(s.0.join("clusters/rep/values.yaml")).unwrap();
    assert_eq!(written, format!("{text}envoy:\n  enabled: false\n"));
    let render = bin()
        .current_dir(&s.0)
        .args(["render-folder", "clusters/rep"])
        .output()
        .unwrap();
    assert!(
        render.status.success(),
        "{}",
        String::from_utf8_lossy(&render.stderr)
    );
}

/// The printed Application, read with the project's reader.
fn serde_yaml_like(stdout: &[u8]) -> Value {
    cilium_cmp_yaml::yaml::parse_value(&String::from_utf8_lossy(stdout)).unwrap()
}
