//! `adopt-check` against real Helm output and hand-written cluster dumps: Helm's render of the
//! same values differs only in the documented differences of the move, what the API server adds
//! is never a change, a changed value restarts the pods it reaches, a dropped component is
//! pruned, and bad input is refused with exit 1 and nothing on stdout.

use crate::support::charts;
use crate::support::harness;
use crate::support::scratch;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use scratch::Scratch;
use serde_json::{json, Value};

const VERSION: &str = "1.20.0";
const ARCHIVE: &str = "charts/cilium-1.20.0.tgz";

pub fn tests() -> Vec<harness::Trial> {
    harness::group(
        file!(),
        vec![
            harness::test(
                "config_read_only_at_start_names_the_roll_value",
                config_read_only_at_start_names_the_roll_value,
            )
            .shared("charts"),
            harness::test(
                "excluded_objects_are_named_with_effect_and_fix",
                excluded_objects_are_named_with_effect_and_fix,
            )
            .shared("charts")
            .shared("cilium-reference/scenarios/ingress-controller.yaml"),
            harness::test(
                "a_dropped_memory_limit_is_left_behind_and_exits_3",
                a_dropped_memory_limit_is_left_behind_and_exits_3,
            )
            .shared("charts"),
            harness::test(
                "malformed_managed_fields_are_refused",
                malformed_managed_fields_are_refused,
            )
            .shared("charts"),
            harness::test(
                "helm_references_differ_only_as_documented",
                helm_references_differ_only_as_documented,
            )
            .shared("charts")
            .shared("cilium-reference/scenarios")
            .shared("cilium-reference/rendered/1.20.0"),
            harness::test(
                "helm_minted_certificates_are_expected_differences",
                helm_minted_certificates_are_expected_differences,
            )
            .shared("charts")
            .shared("tools/helm_ref.py")
            .shared(ARCHIVE)
            .python(),
            harness::test(
                "server_filled_fields_restart_nothing",
                server_filled_fields_restart_nothing,
            )
            .shared("charts"),
            harness::test(
                "a_changed_agent_argument_restarts_the_agent",
                a_changed_agent_argument_restarts_the_agent,
            )
            .shared("charts"),
            harness::test(
                "a_removed_component_is_pruned",
                a_removed_component_is_pruned,
            )
            .shared("charts"),
            harness::test("bad_live_input_is_refused", bad_live_input_is_refused).shared("charts"),
            harness::test(
                "a_helm_3_install_names_the_nulls_that_render_differently",
                a_helm_3_install_names_the_nulls_that_render_differently,
            )
            .shared("charts")
            .shared("cilium-reference/scenarios/hubble-full.yaml")
            .shared("cilium-reference/rendered"),
            harness::test(
                "a_dump_of_every_namespace_is_read",
                a_dump_of_every_namespace_is_read,
            )
            .shared("charts"),
            harness::test(
                "folder_form_and_several_dumps_as_in_the_readme",
                folder_form_and_several_dumps_as_in_the_readme,
            )
            .shared("charts"),
        ],
    )
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// One command line of the binary, built up as a test needs it (the release, values files,
/// `--set`s, live dumps, the output format), so that each test says only what sets it apart.
#[derive(Clone)]
struct Cli {
    args: Vec<String>,
    stdin: Option<String>,
    dir: Option<PathBuf>,
}

/// `adopt-check --cilium-version VERSION`.
fn adopt_check() -> Cli {
    Cli::new("adopt-check").release(VERSION)
}

impl Cli {
    fn new(command: &str) -> Cli {
        Cli {
            args: vec![command.to_string()],
            stdin: None,
            dir: None,
        }
    }

    fn args(mut self, args: &[&str]) -> Cli {
        self.args.extend(args.iter().map(|a| a.to_string()));
        self
    }

    fn path(self, flag: &str, p: &Path) -> Cli {
        self.args(&[flag, p.to_str().unwrap()])
    }

    /// `--cilium-version V`.
    fn release(self, v: &str) -> Cli {
        self.args(&["--cilium-version", v])
    }

    /// `-f FILE`.
    fn values(self, p: &Path) -> Cli {
        self.path("-f", p)
    }

    /// `--set PATH=VALUE`.
    fn set(self, s: &str) -> Cli {
        self.args(&["--set", s])
    }

    /// `--live FILE`.
    fn live(self, p: &Path) -> Cli {
        self.path("--live", p)
    }

    /// `--live -`, the dump on standard input.
    fn live_stdin(mut self, text: &str) -> Cli {
        self.stdin = Some(text.to_string());
        self.args(&["--live", "-"])
    }

    /// `--output FORMAT`.
    fn output(self, format: &str) -> Cli {
        self.args(&["--output", format])
    }

    /// Run from `dir` (a folder named relative to it).
    fn in_dir(mut self, dir: &Path) -> Cli {
        self.dir = Some(dir.to_path_buf());
        self
    }

    /// Runs the binary with the official archives as its chart folder.
    fn run(&self) -> Output {
        let mut c = Command::new(env!("CARGO_BIN_EXE_cilium-cmp"));
        charts::give(&mut c);
        if let Some(dir) = &self.dir {
            c.current_dir(dir);
        }
        c.args(&self.args)
            .stdin(if self.stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = c.spawn().expect("runs");
        if let Some(text) = &self.stdin {
            use std::io::Write;
            child
                .stdin
                .take()
                .unwrap()
                .write_all(text.as_bytes())
                .unwrap();
        }
        child.wait_with_output().expect("finishes")
    }

    /// Runs with `--output json`; the exit code (0 or 3) and the report, which lists objects.
    fn json(&self) -> (i32, Value) {
        let o = self.clone().output("json").run();
        let code = o.status.code().expect("exited");
        assert!(
            code == 0 || code == 3,
            "adopt-check failed ({code}): {}",
            stderr(&o)
        );
        let report: Value = serde_json::from_slice(&o.stdout).expect("JSON report");
        assert!(
            report["objects"].as_array().is_some_and(|a| !a.is_empty()),
            "an empty report proves nothing"
        );
        (code, report)
    }
}

/// `cilium-cmp render` of the test release's `values` and `--set`s: the live dump of a release
/// installed from them.
fn render(values: &Path, set: &[&str]) -> String {
    let mut cli = Cli::new("render").release(VERSION).values(values);
    for s in set {
        cli = cli.set(s);
    }
    let o = cli.run();
    assert!(o.status.success(), "{}", stderr(&o));
    String::from_utf8(o.stdout).unwrap()
}
fn objects_of<'a>(report: &'a Value, class: &str) -> Vec<&'a Value> {
    report["objects"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|o| o["class"] == class)
        .collect()
}

/// Every object that is not identical has a documented reason: each difference is an expected
/// one, and each created or pruned object says why the move brings it.
fn only_expected_differences(report: &Value, what: &str) {
    for o in report["objects"].as_array().unwrap() {
        let name = format!("{what}: {} {}", o["kind"], o["name"]);
        match o["class"].as_str().unwrap() {
            "identical" => {}
            "created" | "pruned" | "unmanaged" => {
                assert!(o["expected"].is_string(), "{name} is {}", o)
            }
            "no-runtime-effect" | "restarts-pods" => {
                for d in o["differences"].as_array().unwrap() {
                    assert!(d["expected"].is_string(), "{name}: unexpected {d}");
                }
            }
            other => panic!("{name} is {other}: {o}"),
        }
    }
    let identical = objects_of(report, "identical").len();
    assert!(
        identical >= 20,
        "{what}: only {identical} identical objects"
    );
}

const BASE_VALUES: &str = "cni:\n  iptablesRemoveAWSRules: false\nhubble:\n  relay:\n    enabled: true\n  ui:\n    enabled: true\n";

/// (a) Helm's committed references: rendering their values with cilium-cmp differs only in the
/// content hash cilium-cmp stamps.
fn helm_references_differ_only_as_documented() {
    let scenarios = harness::shared("cilium-reference/scenarios");
    let rendered = harness::shared("cilium-reference/rendered").join(VERSION);
    let s = Scratch::new("adopt-refs");
    for name in [
        "hubble-full",
        "rollout-on-config-change",
        "clustermesh-apiserver",
        "scheduling-and-resources",
    ] {
        let scenario = std::fs::read_to_string(scenarios.join(format!("{name}.yaml"))).unwrap();
        let doc = cilium_cmp_yaml::yaml::parse_values(&scenario)
            .unwrap()
            .value;
        let values = s.write(&format!("{name}.json"), &doc["values"].to_string());
        let live = rendered.join(format!("{name}.yaml"));
        let (code, report) = adopt_check().values(&values).live(&live).json();
        only_expected_differences(&report, name);
        // The engine renders Helm's objects, checksum annotations and certgen Job names
        // included: the switch prunes nothing and restarts nothing, with `rollOutCiliumPods`
        // and `operator.rollOutPods` on (rollout-on-config-change) as without.
        assert_eq!(code, 0, "{name}: {report}");
        for class in ["pruned", "restarts-pods", "created"] {
            let found = objects_of(&report, class);
            assert!(found.is_empty(), "{name}: {class}: {found:?}");
        }
    }
}

/// (a) A fresh Helm render with the chart's default `hubble.tls.auto.method: helm`: the minted
/// certificate Secrets are expected differences and certgen's objects expected creations. As
/// `helm install` leaves them (Helm's marks only) Argo CD does not track them: they stay
/// unmanaged, no prune, exit 0. As Argo CD's Helm source leaves them (tracked) they are pruned,
/// exit 3, and the report says what certgen and the prune then do, with and without PruneLast.
fn helm_minted_certificates_are_expected_differences() {
    let tools = harness::shared("tools/helm_ref.py");
    let archive = harness::shared(ARCHIVE);
    let python = harness::python();
    let s = Scratch::new("adopt-minted");
    let scenario = s.write(
        "scenario.yaml",
        &format!(
            "kubeVersion: 1.35.0\napiVersions: []\nnamespace: kube-system\nvalues:\n{}",
            indent(BASE_VALUES)
        ),
    );
    let out = s.0.join("helm");
    let jobs = s.write(
        "jobs.json",
        &json!([{"chart": archive, "scenario": scenario, "out": out}]).to_string(),
    );
    let o = Command::new(python)
        .arg(root().join("tests/it/support/helm_render.py"))
        .arg(tools.parent().unwrap())
        .arg(&jobs)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let live = PathBuf::from(format!("{}.yaml", out.display()));
    let values = s.write("values.yaml", BASE_VALUES);
    let (code, report) = adopt_check().values(&values).live(&live).json();
    only_expected_differences(&report, "minted");
    assert_eq!(code, 0, "unmanaged objects are no prunes: {report}");
    let minted = [
        "cilium-ca",
        "hubble-relay-client-certs",
        "hubble-server-certs",
    ];
    let names = |report: &Value, class: &str| -> Vec<String> {
        objects_of(report, class)
            .iter()
            .map(|o| o["name"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(names(&report, "unmanaged"), minted);
    assert!(names(&report, "pruned").is_empty());
    let ca = objects_of(&report, "unmanaged")[0];
    assert!(
        ca["notes"][0]
            .as_str()
            .unwrap()
            .contains("kubectl delete -n kube-system secret cilium-ca"),
        "{ca}"
    );
    assert!(objects_of(&report, "created")
        .iter()
        .any(|o| o["kind"] == "CronJob" && o["name"] == "hubble-generate-certs"));
    // Tracked by the Application that synced Helm's render.
    let text = std::fs::read_to_string(&live).unwrap();
    let tracked: Vec<String> = cilium_cmp_yaml::yaml::parse_stream_values(&text)
        .unwrap()
        .into_iter()
        .filter(|o| o.is_object())
        .map(|mut o| {
            let id = format!(
                "cilium:{}/{}:{}/{}",
                o["apiVersion"]
                    .as_str()
                    .unwrap()
                    .rsplit_once('/')
                    .map_or("", |(g, _)| g),
                o["kind"].as_str().unwrap(),
                o["metadata"]["namespace"].as_str().unwrap_or(""),
                o["metadata"]["name"].as_str().unwrap()
            );
            o["metadata"]["annotations"]["argocd.argoproj.io/tracking-id"] = json!(id);
            cilium_cmp_yaml::yaml::to_string(&o)
        })
        .collect();
    let tracked_live = s.write("tracked.yaml", &tracked.join("---\n"));
    let (code, report) = adopt_check().values(&values).live(&tracked_live).json();
    only_expected_differences(&report, "minted and tracked");
    assert_eq!(code, 3);
    assert_eq!(names(&report, "pruned"), minted);
    for o in objects_of(&report, "pruned") {
        let why = o["expected"].as_str().unwrap();
        assert!(
            why.contains("without PruneLast") && why.contains("With PruneLast=true"),
            "{why}"
        );
        // certgen rewrites the leaf certificates without the tracking annotation; it leaves
        // cilium-ca as it is, which is then pruned.
        if o["name"] == "cilium-ca" {
            assert!(why.contains("deletes the CA"), "{why}");
        } else {
            assert!(why.contains("it is not deleted"), "{why}");
        }
    }
    // Without Hubble Relay the render's certgen no longer writes the relay's client
    // certificate: that Secret is pruned whatever the sync options.
    let (_, report) = adopt_check()
        .values(&values)
        .set("hubble.relay.enabled=false")
        .set("hubble.ui.enabled=false")
        .live(&tracked_live)
        .json();
    let relay = objects_of(&report, "pruned")
        .into_iter()
        .find(|o| o["name"] == "hubble-relay-client-certs")
        .expect("the relay's certificate is pruned");
    let why = relay["expected"].as_str().unwrap();
    assert!(
        why.contains("does not write hubble-relay-client-certs")
            && why.contains("with PruneLast or without"),
        "{why}"
    );
}

fn indent(text: &str) -> String {
    text.lines().map(|l| format!("  {l}\n")).collect()
}

/// Adds `defaults`' fields where `target` has none (maps merge, nothing is overwritten).
fn fill(target: &mut Value, defaults: &Value) {
    let (Some(t), Some(d)) = (target.as_object_mut(), defaults.as_object()) else {
        return;
    };
    for (k, dv) in d {
        match t.get_mut(k) {
            Some(tv) => fill(tv, dv),
            None => {
                t.insert(k.clone(), dv.clone());
            }
        }
    }
}

/// The render as `kubectl get -o yaml` would return it after Helm installed it: every field of
/// the hand-written fixture added, wrapped in a `kind: List`.
fn as_cluster_returns_it(render: &str) -> String {
    let fixture =
        std::fs::read_to_string(root().join("tests/fixtures/adopt/server-defaults.yaml")).unwrap();
    let d = cilium_cmp_yaml::yaml::parse_values(&fixture).unwrap().value;
    let mut items = Vec::new();
    for mut o in cilium_cmp_yaml::yaml::parse_stream_values(render).unwrap() {
        let kind = o["kind"].as_str().unwrap().to_string();
        fill(&mut o, &json!({"metadata": d["metadata"]}));
        if let Some(k) = d["kinds"].get(&kind) {
            fill(&mut o, k);
        }
        let template = match kind.as_str() {
            "CronJob" => Some("/spec/jobTemplate/spec/template"),
            "DaemonSet" | "Deployment" | "Job" => Some("/spec/template"),
            _ => None,
        };
        if let Some(t) = template.and_then(|p| o.pointer_mut(p)) {
            fill(t, &d["template"]);
            if kind == "Job" || kind == "CronJob" {
                fill(t, &json!({"metadata": {"labels": d["jobTemplateLabels"]}}));
            }
            let spec = &mut t["spec"];
            for list in ["containers", "initContainers"] {
                for c in spec[list].as_array_mut().into_iter().flatten() {
                    fill(c, &d["container"]);
                    for p in c["ports"].as_array_mut().into_iter().flatten() {
                        fill(p, &d["port"]);
                    }
                    for e in c["env"].as_array_mut().into_iter().flatten() {
                        if let Some(f) = e.pointer_mut("/valueFrom/fieldRef") {
                            fill(f, &json!({"apiVersion": d["fieldRefApiVersion"]}));
                        }
                    }
                }
            }
            for v in spec["volumes"].as_array_mut().into_iter().flatten() {
                for source in ["configMap", "secret"] {
                    if let Some(s) = v.get_mut(source) {
                        fill(s, &json!({"defaultMode": d["volumeDefaultMode"]}));
                    }
                }
                if let Some(h) = v.get_mut("hostPath") {
                    fill(h, &json!({"type": d["hostPathType"]}));
                }
            }
        }
        if kind == "Service" {
            for p in o["spec"]["ports"].as_array_mut().into_iter().flatten() {
                let port = p["port"].clone();
                fill(
                    p,
                    &json!({"protocol": d["port"]["protocol"], "targetPort": port}),
                );
            }
        }
        items.push(o);
    }
    // A pod the DaemonSet made: in a dump of the namespace, never the release's to prune.
    items.push(
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "cilium-x7k2p",
        "namespace": "kube-system", "uid": "1", "labels": {"k8s-app": "cilium"},
        "ownerReferences": [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "cilium",
            "uid": "2", "controller": true}]}}),
    );
    let list = json!({"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": items});
    cilium_cmp_yaml::yaml::to_string(&list)
}

/// (b) What the API server and Helm add (defaults, status, managedFields, tracking, a List
/// wrapper) is never a change and restarts nothing.
fn server_filled_fields_restart_nothing() {
    let s = Scratch::new("adopt-defaults");
    let values = s.write("values.yaml", BASE_VALUES);
    let live = s.write("live.yaml", &as_cluster_returns_it(&render(&values, &[])));
    let (code, report) = adopt_check().values(&values).live(&live).json();
    assert_eq!(code, 0, "{report}");
    let counts = &report["counts"];
    for class in [
        "restarts-pods",
        "changed",
        "created",
        "pruned",
        "no-runtime-effect",
    ] {
        assert_eq!(counts[class], 0, "{class}: {report}");
    }
    // Objects whose only additions are tracking metadata are identical; those with defaulted
    // fields (every workload and Service here) differ only in what the cluster adds.
    let tooling = objects_of(&report, "tooling-only");
    assert!(tooling.len() >= 8, "{report}");
    assert!(objects_of(&report, "identical").len() >= 20, "{report}");
    let ds = tooling
        .iter()
        .find(|o| o["kind"] == "DaemonSet" && o["name"] == "cilium")
        .expect("the agent");
    let only_live = ds["liveOnly"].to_string();
    assert!(
        only_live.contains("revisionHistoryLimit") && only_live.contains("dnsPolicy"),
        "{only_live}"
    );
    assert_eq!(objects_of(&report, "not-in-release").len(), 1, "the pod");
}

/// (c) One value that reaches the agent's pod template restarts the DaemonSet's pods.
fn a_changed_agent_argument_restarts_the_agent() {
    let s = Scratch::new("adopt-restart");
    let values = s.write("values.yaml", BASE_VALUES);
    let live = s.write("live.yaml", &render(&values, &[]));
    let o = adopt_check()
        .values(&values)
        .set("extraArgs={--enable-debug-logging}")
        .live(&live)
        .run();
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let text = String::from_utf8(o.stdout).unwrap();
    let restarts = text.split("Restarts:").nth(1).expect("restart lines");
    assert!(
        restarts.contains("DaemonSet kube-system/cilium: its pods restart")
            && restarts.contains("spec.template.spec.containers[\"cilium-agent\"].args"),
        "{text}"
    );
    assert!(
        !restarts.contains("Deployment kube-system/cilium-operator"),
        "{text}"
    );
}

/// (d) A component the render drops is pruned when Argo CD tracks it; here from a stdin dump.
fn a_removed_component_is_pruned() {
    let s = Scratch::new("adopt-prune");
    let values = s.write("values.yaml", BASE_VALUES);
    let live = tracked_by_argo_cd(&render(&values, &[]), "cilium");
    let o = adopt_check()
        .values(&values)
        .set("hubble.relay.enabled=false")
        .set("hubble.ui.enabled=false")
        .live_stdin(&live)
        .output("json")
        .run();
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let report: Value = serde_json::from_slice(&o.stdout).unwrap();
    let pruned: Vec<String> = objects_of(&report, "pruned")
        .iter()
        .map(|o| {
            format!(
                "{} {}",
                o["kind"].as_str().unwrap(),
                o["name"].as_str().unwrap()
            )
        })
        .collect();
    for expected in [
        "Deployment hubble-relay",
        "Service hubble-relay",
        "ConfigMap hubble-relay-config",
        "ServiceAccount hubble-relay",
    ] {
        assert!(
            pruned.iter().any(|p| p == expected),
            "{expected} not in {pruned:?}"
        );
    }
    assert_eq!(report["disruptive"], true);
    assert!(objects_of(&report, "unmanaged").is_empty(), "{report}");
}

/// A render's objects as an Application named `app` leaves them: its tracking annotation on
/// each.
fn tracked_by_argo_cd(render: &str, app: &str) -> String {
    cilium_cmp_yaml::yaml::parse_stream_values(render)
        .unwrap()
        .into_iter()
        .filter(|o| o.is_object())
        .map(|mut o| {
            let id = format!(
                "{app}:{}/{}:{}/{}",
                o["apiVersion"]
                    .as_str()
                    .unwrap()
                    .rsplit_once('/')
                    .map_or("", |(g, _)| g),
                o["kind"].as_str().unwrap(),
                o["metadata"]["namespace"].as_str().unwrap_or(""),
                o["metadata"]["name"].as_str().unwrap()
            );
            o["metadata"]["annotations"]["argocd.argoproj.io/tracking-id"] = json!(id);
            cilium_cmp_yaml::yaml::to_string(&o)
        })
        .collect::<Vec<_>>()
        .join("---\n")
}

/// (e) Bad input: exit 1, a message naming the file and what is wrong, nothing on stdout.
fn bad_live_input_is_refused() {
    let s = Scratch::new("adopt-bad");
    let values = s.write("values.yaml", BASE_VALUES);
    let cases: Vec<(&str, String, &str)> = vec![
        (
            "text.yaml",
            "just some words\n".into(),
            "not a Kubernetes object",
        ),
        ("syntax.yaml", "a: [1, 2\n".into(), "syntax.yaml:2:1: "),
        ("empty.yaml", "# nothing\n".into(), "holds no objects"),
        (
            "nokind.yaml",
            "apiVersion: v1\nmetadata:\n  name: x\n".into(),
            "no kind",
        ),
        (
            "noname.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {}\n".into(),
            "metadata.name",
        ),
        (
            "list.yaml",
            "apiVersion: v1\nkind: List\nitems: [1, 2]\n".into(),
            "item 1",
        ),
        (
            "listnoitems.yaml",
            "apiVersion: v1\nkind: List\n".into(),
            "items",
        ),
        ("binary.yaml", "kind: \u{0}\u{1}".into(), "binary.yaml"),
    ];
    for (file, text, expected) in cases {
        let live = s.write(file, &text);
        let o = adopt_check().values(&values).live(&live).run();
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{file}: {err}");
        assert!(o.stdout.is_empty(), "{file}: stdout not empty");
        assert!(!err.contains("panicked"), "{file}: {err}");
        assert!(
            err.contains(file) && err.contains(expected),
            "{file}: {err}"
        );
    }
    for (args, expected) in [
        (vec!["--live", "/dev/zero"], "not a regular file"),
        (vec!["--live", "/nonexistent/live.yaml"], "cannot be read"),
    ] {
        let o = adopt_check().values(&values).args(&args).run();
        assert_eq!(o.status.code(), Some(1));
        assert!(
            o.stdout.is_empty() && stderr(&o).contains(expected),
            "{}",
            stderr(&o)
        );
    }
    let o = Cli::new("adopt-check").args(&["--live", "x.yaml"]).run();
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("--cilium-version"), "{}", stderr(&o));
}

/// (e) `kubectl get -A -o yaml`: what is in namespaces the release does not use is reported as
/// left alone, not refused; nothing restarts or is pruned, exit 0.
fn a_dump_of_every_namespace_is_read() {
    let s = Scratch::new("adopt-all-namespaces");
    let values = s.write("values.yaml", BASE_VALUES);
    let live = s.write(
        "live.yaml",
        &format!(
            "{}---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app-config\n  namespace: default\n  uid: '7'\n---\napiVersion: v1\nkind: Service\nmetadata:\n  name: grafana\n  namespace: monitoring\n  uid: '8'\n  annotations:\n    meta.helm.sh/release-name: grafana\n    meta.helm.sh/release-namespace: monitoring\nspec:\n  ports:\n  - port: 80\n",
            render(&values, &[])
        ),
    );
    let o = adopt_check().values(&values).live(&live).run();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = String::from_utf8(o.stdout).unwrap();
    for object in ["ConfigMap default/app-config", "Service monitoring/grafana"] {
        let details = text
            .split(&format!("{object} [not-in-release]"))
            .nth(1)
            .unwrap_or_else(|| panic!("{object} not reported as left alone: {text}"));
        assert!(
            details
                .lines()
                .nth(1)
                .unwrap()
                .contains("which the render does not use"),
            "{details}"
        );
    }
}

/// The README's folder form (with Argo CD's inputs spelled out, JSON output) and several dumps:
/// an object in both a manifest export and a cluster dump is compared as the cluster returned it,
/// and the export still marks it as the release's.
fn folder_form_and_several_dumps_as_in_the_readme() {
    let s = Scratch::new("adopt-folder");
    let render = Cli::new("render")
        .release(VERSION)
        .values(&root().join("examples/argocd/common/values.yaml"))
        .values(&root().join("examples/argocd/cilium/values.yaml"))
        .run()
        .stdout;
    let render = String::from_utf8(render).unwrap();
    let manifest = s.write("live-helm.yaml", &render);
    let cluster = s.write("live-ns.yaml", &as_cluster_returns_it(&render));
    let extra = s.write(
        "live-extra.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: leftover\n  namespace: kube-system\n  uid: \"9\"\n  labels:\n    app.kubernetes.io/part-of: cilium\n",
    );
    let folder = Cli::new("adopt-check").in_dir(root()).args(&[
        "--folder",
        "examples/argocd/cilium",
        "--namespace",
        "kube-system",
    ]);
    let o = folder
        .clone()
        .args(&["--kube-version", "1.35.0", "--api-versions", "v1,apps/v1"])
        .live(&manifest)
        .live(&cluster)
        .live(&extra)
        .output("json")
        .run();
    // The leftover carries the chart's label but no Argo CD tracking: it stays, unmanaged, and
    // is no prune.
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let report: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(objects_of(&report, "pruned").is_empty(), "{report}");
    let unmanaged = objects_of(&report, "unmanaged");
    assert_eq!(unmanaged.len(), 1, "{report}");
    assert_eq!(unmanaged[0]["name"], "leftover");
    let why = unmanaged[0]["notes"][0].as_str().unwrap();
    assert!(
        why.contains("part-of") && why.contains("kubectl delete -n kube-system configmap leftover"),
        "{why}"
    );
    // Compared as the cluster returned them: defaults show, nothing changes.
    assert!(!objects_of(&report, "tooling-only").is_empty(), "{report}");
    for class in ["restarts-pods", "changed", "created"] {
        assert_eq!(report["counts"][class], 0, "{class}: {report}");
    }
    // Without the leftover: nothing restarts or is pruned, exit 0, as the README says.
    let o = folder.live(&manifest).live(&cluster).run();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(
        text.contains("Restarts: none.") && text.contains("Prunes: none."),
        "{text}"
    );
}

/// (e) A cilium-config change that restarts nothing is named with the value that would roll the
/// pods reading it; with that value on, the agent rolls through its checksum annotation.
fn config_read_only_at_start_names_the_roll_value() {
    let s = Scratch::new("adopt-startup");
    let values = s.write("values.yaml", BASE_VALUES);
    let live = s.write("live.yaml", &render(&values, &[]));
    let plain = adopt_check()
        .values(&values)
        .set("debug.enabled=true")
        .live(&live);
    let (_, report) = plain.json();
    let config = report["objects"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["kind"] == "ConfigMap" && o["name"] == "cilium-config")
        .expect("cilium-config");
    assert_eq!(config["class"], "changed", "{config}");
    let readers = config["readAtStart"].as_array().unwrap();
    let agent = readers
        .iter()
        .find(|r| r["kind"] == "DaemonSet" && r["name"] == "cilium")
        .expect("the agent reads cilium-config");
    assert_eq!(agent["takesEffect"], "at-next-restart", "{agent}");
    assert_eq!(agent["rollValue"], "rollOutCiliumPods", "{agent}");
    let operator = readers
        .iter()
        .find(|r| r["name"] == "cilium-operator")
        .expect("the operator reads cilium-config");
    assert_eq!(operator["rollValue"], "operator.rollOutPods");
    let human = plain.run();
    let text = String::from_utf8_lossy(&human.stdout);
    assert!(
        text.contains("Read only at start") && text.contains("set rollOutCiliumPods: true"),
        "{text}"
    );
    let (code, report) = plain.set("rollOutCiliumPods=true").json();
    assert_eq!(code, 3, "the agent's template changes");
    let config = report["objects"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["kind"] == "ConfigMap" && o["name"] == "cilium-config")
        .unwrap();
    let agent = config["readAtStart"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "cilium")
        .unwrap();
    assert_eq!(agent["takesEffect"], "rolled-by-checksum", "{agent}");
}

/// (f) Argo CD's default exclusions skip the ingress's EndpointSlice: adopt-check names it with
/// its effect and fix on stderr and in the report; an argocd-cm without exclusions names nothing
/// and says CiliumIdentity's ignoreDifferences entry is then needed.
fn excluded_objects_are_named_with_effect_and_fix() {
    let scenario = harness::shared("cilium-reference/scenarios/ingress-controller.yaml");
    let doc = cilium_cmp_yaml::yaml::parse_values(&std::fs::read_to_string(&scenario).unwrap())
        .unwrap()
        .value;
    let s = Scratch::new("adopt-exclusions");
    let values = s.write("values.json", &doc["values"].to_string());
    let live = root()
        .join("../shared/cilium-reference/rendered")
        .join(VERSION)
        .join("ingress-controller.yaml");
    let base = adopt_check().output("json").values(&values).live(&live);
    let o = base.run();
    let err = stderr(&o);
    assert!(
        err.contains("EndpointSlice kube-system/cilium-ingress")
            && err.contains("no backends")
            && err.contains(r#"kinds: ["Endpoints"]"#),
        "{err}"
    );
    let report: Value = serde_json::from_slice(&o.stdout).unwrap();
    let slice = report["objects"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["kind"] == "EndpointSlice" && o["name"] == "cilium-ingress")
        .expect("the ingress EndpointSlice");
    assert!(
        slice["notes"].to_string().contains("Argo CD excludes it"),
        "{slice}"
    );
    let cm = s.write(
        "argocd-cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: argocd-cm}\ndata: {}\n",
    );
    let o = base.clone().path("--argocd-cm", &cm).run();
    let err = stderr(&o);
    assert!(!err.contains("cilium-ingress"), "{err}");
    assert!(
        err.contains("does not exclude CiliumIdentity: keep"),
        "{err}"
    );
    let bad = s.write("bad-cm.yaml", "data:\n  resource.exclusions: 'x: 1'\n");
    let o = base.path("--argocd-cm", &bad).run();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(o.stdout.is_empty());
    assert!(stderr(&o).contains("bad-cm.yaml"), "{}", stderr(&o));
}

/// (g) The issue's case through the command: Helm's render with a memory limit against values
/// without it exits 3 with the field left behind; with the Application's migration of `helm`
/// the first sync removes it (and restarts the agent).
fn a_dropped_memory_limit_is_left_behind_and_exits_3() {
    let s = Scratch::new("adopt-left-behind");
    let values = s.write("values.yaml", BASE_VALUES);
    let with_limit = s.write(
        "with-limit.yaml",
        &format!("{BASE_VALUES}resources:\n  limits:\n    memory: 1Gi\n"),
    );
    let live = s.write("live.yaml", &render(&with_limit, &[]));
    let (code, report) = adopt_check().values(&values).live(&live).json();
    assert_eq!(code, 3, "{report}");
    let agent = report["objects"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["kind"] == "DaemonSet" && o["name"] == "cilium")
        .unwrap();
    assert_eq!(agent["class"], "left-behind", "{agent}");
    assert_eq!(
        agent["leftBehind"][0]["path"],
        "spec.template.spec.containers[\"cilium-agent\"].resources.limits.memory"
    );
    assert!(!agent["liveOnly"].to_string().contains("memory"), "{agent}");
    assert_eq!(report["adoptCheck"], 3);
    let app = s.write(
        "app.yaml",
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: cilium\n  annotations:\n    argocd.argoproj.io/client-side-apply-migration-manager: helm\nspec:\n  syncPolicy:\n    syncOptions: [ServerSideApply=true]\n",
    );
    // The same objects as the cluster holds them after `helm install`: defaults filled in, all
    // owned by helm's Update.
    let items: Vec<Value> = cilium_cmp_yaml::yaml::parse_stream_values(&render(&with_limit, &[]))
        .unwrap()
        .into_iter()
        .map(|mut o| {
            cilium_cmp_gitops::adopt::defaults::apply(&mut o);
            let fields = cilium_cmp_gitops::adopt::ownership::fields_v1_of(&o);
            o["metadata"]["uid"] = json!("1");
            o["metadata"]["managedFields"] = json!([{"manager": "helm", "operation": "Update",
                "fieldsType": "FieldsV1", "fieldsV1": fields}]);
            o
        })
        .collect();
    let cluster = s.write(
        "cluster.yaml",
        &cilium_cmp_yaml::yaml::to_string(
            &json!({"apiVersion": "v1", "kind": "List", "items": items}),
        ),
    );
    let agent_of = |report: &Value| {
        report["objects"]
            .as_array()
            .unwrap()
            .iter()
            .find(|o| o["kind"] == "DaemonSet" && o["name"] == "cilium")
            .unwrap()
            .clone()
    };
    let on_cluster = adopt_check().values(&values).live(&cluster);
    let (code, report) = on_cluster.json();
    assert_eq!(code, 3, "{report}");
    let agent = agent_of(&report);
    assert_eq!(agent["class"], "left-behind", "{agent}");
    assert_eq!(
        agent["leftBehind"][0]["owners"][0], "helm (Update)",
        "{agent}"
    );
    assert!(
        agent["leftBehind"][0]["fix"]
            .as_str()
            .is_some_and(|f| f.contains("client-side-apply-migration-manager: helm")),
        "{agent}"
    );
    let (code, report) = on_cluster.path("--argocd-application", &app).json();
    assert_eq!(code, 3, "the agent restarts: {report}");
    let agent = agent_of(&report);
    assert_eq!(agent["class"], "restarts-pods", "{agent}");
    assert!(
        agent["leftBehind"].as_array().unwrap().is_empty(),
        "{agent}"
    );
    let removed: Vec<&Value> = agent["differences"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["removedBy"] == "migrated from manager helm")
        .collect();
    assert_eq!(removed.len(), 1, "{agent}");
}

/// (h) Malformed managedFields in a cluster dump: exit 1 naming the file, the object and the
/// entry, nothing on stdout, never a panic.
fn malformed_managed_fields_are_refused() {
    let s = Scratch::new("adopt-bad-fields");
    let values = s.write("values.yaml", BASE_VALUES);
    for (what, fields) in [
        ("bad key", r#"{"x:odd": {}}"#.to_string()),
        (
            "bad item key",
            r#"{"f:spec": {"k:{not json": {}}}"#.to_string(),
        ),
        ("not a map", r#"{"f:spec": 3}"#.to_string()),
        (
            "too deep",
            format!("{}{{}}{}", r#"{"f:a": "#.repeat(100), "}".repeat(100)),
        ),
    ] {
        let live = s.write(
            "live.yaml",
            &format!(
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cilium-config\n  namespace: kube-system\n  uid: '1'\n  managedFields:\n  - manager: helm\n    operation: Update\n    fieldsV1: {fields}\n"
            ),
        );
        let o = adopt_check().values(&values).live(&live).run();
        assert_eq!(o.status.code(), Some(1), "{what}: {}", stderr(&o));
        assert!(o.stdout.is_empty(), "{what}");
        let e = stderr(&o);
        // Nesting past the bound is refused by the YAML reader before managedFields are read.
        assert!(
            e.contains("live.yaml")
                && ((e.contains("managedFields[0]") && e.contains("cilium-config"))
                    || (what == "too deep" && e.contains("nested too deeply"))),
            "{what}: {e}"
        );
    }
}

/// (i) A release Helm 3 rendered. Helm 3 keeps the chart's null defaults where Helm 4 drops them;
/// on a live fleet rendered by Argo CD 3.4's Helm 3, cilium-config held `debug-verbose`,
/// `nodeport-addresses` and `policy-cidr-match-mode` as `""` where Helm 4 renders none
/// (sholdee/drydock#157). On 1.18, 1.19 and 1.20, Helm's reference render stored as Helm 3 stores
/// it (helm's Update) names those three values; stored by Helm 4 (helm's Apply) with Helm 4's
/// content nothing is named; a manifest export holding Helm 3's keys is recognised by them.
fn a_helm_3_install_names_the_nulls_that_render_differently() {
    let scenario = harness::shared("cilium-reference/scenarios/hubble-full.yaml");
    let doc = cilium_cmp_yaml::yaml::parse_values(&std::fs::read_to_string(&scenario).unwrap())
        .unwrap()
        .value;
    let s = Scratch::new("adopt-helm3");
    let values = s.write("values.json", &doc["values"].to_string());
    let helm3_keys = [
        ("debug.verbose", "debug-verbose"),
        ("nodePort.addresses", "nodeport-addresses"),
        ("policyCIDRMatchMode", "policy-cidr-match-mode"),
    ];
    for version in ["1.18.12", "1.19.6", "1.20.0"] {
        let reference = harness::shared("cilium-reference/rendered")
            .join(version)
            .join("hubble-full.yaml");
        let objects: Vec<Value> = cilium_cmp_yaml::yaml::parse_stream_values(
            &std::fs::read_to_string(&reference).unwrap(),
        )
        .unwrap()
        .into_iter()
        .filter(|o| o.is_object())
        .collect();
        let stored = |operation: &str, helm3_content: bool| -> String {
            let items: Vec<Value> = objects
                .iter()
                .map(|o| {
                    let mut o = o.clone();
                    if helm3_content
                        && o["kind"] == "ConfigMap"
                        && o["metadata"]["name"] == "cilium-config"
                    {
                        for (_, key) in helm3_keys {
                            o["data"][key] = json!("");
                        }
                    }
                    if operation.is_empty() {
                        return o;
                    }
                    cilium_cmp_gitops::adopt::defaults::apply(&mut o);
                    let fields = cilium_cmp_gitops::adopt::ownership::fields_v1_of(&o);
                    o["metadata"]["uid"] = json!("1");
                    o["metadata"]["managedFields"] = json!([{"manager": "helm",
                        "operation": operation, "fieldsType": "FieldsV1", "fieldsV1": fields}]);
                    o
                })
                .collect();
            cilium_cmp_yaml::yaml::to_string(
                &json!({"apiVersion": "v1", "kind": "List", "items": items}),
            )
        };
        let check = |file: &str, text: String| {
            let live = s.write(file, &text);
            Cli::new("adopt-check")
                .release(version)
                .values(&values)
                .live(&live)
                .json()
                .1
        };
        // helm install with Helm 3: its Update, its content (Helm 4's reference plus the keys
        // only Helm 3 renders).
        let report = check("helm3.yaml", stored("Update", true));
        let helm3 = &report["helm3"];
        assert!(
            helm3["evidence"]
                .as_str()
                .unwrap_or("")
                .contains("helm writing with Update"),
            "{version}: {helm3}"
        );
        let named: Vec<&str> = helm3["nulls"]
            .as_array()
            .unwrap_or_else(|| panic!("{version}: no nulls named: {report}"))
            .iter()
            .map(|n| n["value"].as_str().unwrap())
            .collect();
        for (value, key) in helm3_keys {
            let n = helm3["nulls"]
                .as_array()
                .unwrap()
                .iter()
                .find(|n| n["value"] == value)
                .unwrap_or_else(|| panic!("{version}: {value} not in {named:?}"));
            let d = n["differences"].to_string();
            assert!(
                d.contains("ConfigMap kube-system/cilium-config")
                    && d.contains(&format!(
                        "data.{key}: Helm 3 renders \\\"\\\", Helm 4 nothing"
                    )),
                "{version} {value}: {d}"
            );
        }
        // Helm 4's server-side apply of Helm 4's render: nothing to name.
        let report = check("helm4.yaml", stored("Apply", false));
        assert!(report["helm3"].is_null(), "{version}: {}", report["helm3"]);
        // A manifest export of what Argo CD 3.4's Helm 3 rendered: recognised by its content.
        let report = check("export.yaml", stored("", true));
        let evidence = report["helm3"]["evidence"].as_str().unwrap_or("");
        assert!(
            evidence.contains("ConfigMap kube-system/cilium-config")
                && evidence.contains("which only Helm 3 renders"),
            "{version}: {}",
            report["helm3"]
        );
    }
}
