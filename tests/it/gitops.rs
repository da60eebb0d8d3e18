//! The GitOps paths besides Argo CD's plain plugin source, each through its shipped example:
//! Argo CD's source hydrator (`examples/hydrator/application.yaml`, its drySource run through
//! the argocd-cmp-server emulator), rendered manifests for Flux and kubectl
//! (`examples/flux/render-manifests.yml`, its steps run in a scratch repository), and Talos'
//! inline manifest checked against the folder (`talos-check`, with machine configs shaped as
//! `talosctl gen config` and `talosctl get machineconfig -o yaml` write them).

use crate::support::charts;
use crate::support::git::git;
use crate::support::harness;
use crate::support::scratch;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

use scratch::Scratch;

const EMULATOR: &str = "tools/cmp_emulator.py";

pub fn tests() -> Vec<harness::Trial> {
    harness::group(
        file!(),
        vec![
            harness::test(
                "the_hydrator_example_renders_its_dry_source_as_the_plugin_does",
                the_hydrator_example_renders_its_dry_source_as_the_plugin_does,
            )
            .shared("charts")
            .shared(EMULATOR)
            .python(),
            harness::test(
                "the_flux_workflow_renders_every_folder_and_refuses_a_stale_lock",
                the_flux_workflow_renders_every_folder_and_refuses_a_stale_lock,
            )
            .shared("charts"),
            harness::test(
                "talos_check_passes_a_current_inline_manifest_in_both_shapes",
                talos_check_passes_a_current_inline_manifest_in_both_shapes,
            )
            .shared("charts"),
            harness::test(
                "talos_check_names_a_stale_release_and_prints_the_patch",
                talos_check_names_a_stale_release_and_prints_the_patch,
            )
            .shared("charts"),
            harness::test(
                "talos_check_without_the_inline_manifest_and_with_bad_input",
                talos_check_without_the_inline_manifest_and_with_bad_input,
            )
            .shared("charts"),
        ],
    )
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_cilium-cmp"))
}

fn cmd(dir: &Path, args: &[&str]) -> Output {
    let mut c = Command::new(bin());
    charts::give(&mut c);
    c.args(args).current_dir(dir).output().expect("runs")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn ok(o: &Output) -> String {
    assert!(o.status.success(), "{}", text(&o.stderr));
    text(&o.stdout)
}

fn yaml(path: &Path) -> Value {
    let t = std::fs::read_to_string(path).unwrap();
    cilium_cmp_yaml::yaml::parse_values(&t)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .value
}

/// The objects of a stream without Argo CD's tracking annotation (the hydrator does not write
/// it to git either: source-hydrator.md, "Make Hydration Deterministic"), numbers as floats
/// (the emulator's JSON and our YAML reader type whole numbers differently).
fn objects(mut list: Vec<Value>) -> Vec<Value> {
    fn numbers(v: &mut Value) {
        match v {
            Value::Number(n) => {
                if let Some(f) = n.as_f64() {
                    *v = serde_json::json!(f);
                }
            }
            Value::Array(a) => a.iter_mut().for_each(numbers),
            Value::Object(m) => m.values_mut().for_each(numbers),
            _ => {}
        }
    }
    for m in list.iter_mut() {
        if let Some(Value::Object(a)) = m.pointer_mut("/metadata/annotations") {
            a.remove("argocd.argoproj.io/tracking-id");
        }
        numbers(m);
    }
    list
}

// ---------------------------------------------------------------------------------------------
// The source hydrator

fn the_hydrator_example_renders_its_dry_source_as_the_plugin_does() {
    let app = yaml(&root().join("examples/hydrator/application.yaml"));
    let hydrator = &app["spec"]["sourceHydrator"];
    let dry = &hydrator["drySource"];
    let path = dry["path"].as_str().expect("drySource.path");
    let plugin = &dry["plugin"];
    let name = plugin["name"].as_str().expect("plugin.name");
    assert!(hydrator["syncSource"]["targetBranch"].is_string());
    assert!(hydrator["syncSource"]["path"].is_string());
    let namespace = app["spec"]["destination"]["namespace"].as_str().unwrap();
    let params = plugin.get("parameters").cloned().unwrap_or(Value::Null);
    // The example's parameters, as the render-folder flags they are.
    let mut flags = vec!["render-folder".to_string(), path.to_string()];
    flags.extend(["--namespace".into(), namespace.into()]);
    for p in params.as_array().into_iter().flatten() {
        match p["name"].as_str().unwrap() {
            "set" => {
                for s in p["array"].as_array().unwrap() {
                    flags.extend(["--set".into(), s.as_str().unwrap().into()]);
                }
            }
            "cilium-version" => flags.extend([
                "--cilium-version".into(),
                p["string"].as_str().unwrap().into(),
            ]),
            other => panic!("the test does not know parameter {other}"),
        }
    }
    let args: Vec<&str> = flags.iter().map(String::as_str).collect();
    let want = ok(&cmd(&root(), &args));
    let want = objects(cilium_cmp_yaml::yaml::parse_stream_values(&want).unwrap());
    assert!(want.len() > 10, "the render has the chart's objects");

    // Hydration must be deterministic: two revisions of the same dry source hydrate the same.
    let mut seen = Vec::new();
    for revision in [
        "1111111111111111111111111111111111111111",
        "2222222222222222222222222222222222222222",
    ] {
        let bin_dir = bin().parent().unwrap().to_path_buf();
        let mut c = Command::new(harness::python());
        c.arg(harness::shared(EMULATOR))
            .arg("--plugin-yaml")
            .arg(root().join("plugin.yaml"))
            .arg("--repo")
            .arg(root())
            .args([
                "--app-path",
                path,
                "--plugin-name",
                name,
                "--app-namespace",
                namespace,
            ])
            .args(["--revision", revision])
            .args(["--tar-exclude", ".git", "--tar-exclude", "target"])
            .args(["--isolate-env", "--show-manifests"])
            .arg("--sidecar-env")
            .arg(format!("CILIUM_CMP_CHART_DIR={}", charts::dir().display()))
            .args(["--params-json", &params.to_string()])
            .env("PATH", format!("{}:/usr/bin:/bin", bin_dir.display()));
        for e in plugin
            .get("env")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            c.arg("--env").arg(format!(
                "{}={}",
                e["name"].as_str().unwrap(),
                e["value"].as_str().unwrap()
            ));
        }
        let o = c.output().expect("python runs");
        let report: Value = serde_json::from_slice(&o.stdout)
            .unwrap_or_else(|_| panic!("{}{}", text(&o.stdout), text(&o.stderr)));
        assert_eq!(o.status.code(), Some(0), "{report}");
        assert_eq!(report["discovered"], true, "{report}");
        let got = objects(report["manifests"].as_array().expect("manifests").clone());
        assert_eq!(got.len(), want.len());
        assert!(
            got == want,
            "the hydrated objects differ from render-folder's"
        );
        seen.push(got);
    }
    assert_eq!(seen[0], seen[1]);
}

// ---------------------------------------------------------------------------------------------
// Rendered manifests for Flux and kubectl

/// The `run:` scripts of the workflow's steps with these ids, in the workflow's order, and the
/// workflow's `env`.
/// Names and values (environment variables, or step ids and their scripts).
type Pairs = Vec<(String, String)>;

fn workflow_steps(ids: &[&str]) -> (Pairs, Pairs) {
    let wf = yaml(&root().join("examples/flux/render-manifests.yml"));
    let env = wf["env"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_string()))
        .collect();
    let steps = wf["jobs"]["render"]["steps"].as_array().unwrap();
    let found: Pairs = steps
        .iter()
        .filter_map(|s| {
            let id = s.get("id")?.as_str()?;
            ids.contains(&id)
                .then(|| (id.to_string(), s["run"].as_str().unwrap().to_string()))
        })
        .collect();
    assert_eq!(found.len(), ids.len(), "steps {ids:?} in the workflow");
    (env, found)
}

fn run_step(repo: &Path, temp: &Path, env: &[(String, String)], script: &str) -> Output {
    let bin_dir = bin().parent().unwrap().to_path_buf();
    let mut c = Command::new("bash");
    c.args(["-e", "-c", script])
        .current_dir(repo)
        .env("PATH", format!("{}:/usr/bin:/bin", bin_dir.display()))
        .env("RUNNER_TEMP", temp)
        .env("GITHUB_SHA", "0123456789abcdef0123456789abcdef01234567")
        .env("CILIUM_CMP_CHART_DIR", charts::dir())
        .env("CILIUM_CMP_OFFLINE", "1");
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("bash runs")
}

fn folder(repo: &Path, rel: &str, version: &str, values: &str) {
    let d = repo.join(rel);
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(
        d.join("cilium-cmp.yaml"),
        format!("ciliumVersion: \"{version}\"\nnamespace: kube-system\nkubeVersion: \"1.35.0\"\n"),
    )
    .unwrap();
    std::fs::write(d.join("values.yaml"), values).unwrap();
}

fn the_flux_workflow_renders_every_folder_and_refuses_a_stale_lock() {
    let (env, steps) = workflow_steps(&["charts", "lock-check", "render", "publish"]);
    let s = Scratch::new("flux");
    let origin = s.0.join("origin.git");
    let repo = s.0.join("repo");
    let temp = s.0.join("runner-temp");
    std::fs::create_dir_all(&temp).unwrap();
    std::fs::create_dir_all(&repo).unwrap();
    git(
        &s.0,
        &["init", "--quiet", "--bare", origin.to_str().unwrap()],
    );
    git(&repo, &["init", "--quiet", "-b", "main"]);
    git(
        &repo,
        &["remote", "add", "origin", origin.to_str().unwrap()],
    );
    folder(
        &repo,
        "clusters/eu/cilium",
        "1.20.0",
        "cluster:\n  name: eu\n  id: 1\n",
    );
    folder(
        &repo,
        "clusters/us/cilium",
        "1.19.6",
        "cluster:\n  name: us\n  id: 2\n",
    );
    std::fs::write(repo.join("README.md"), "clusters\n").unwrap();
    ok(&cmd(&repo, &["lock"]));
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "--quiet", "-m", "two clusters"]);

    let step = |id: &str| -> Output {
        let script = &steps.iter().find(|(i, _)| i == id).unwrap().1;
        run_step(&repo, &temp, &env, script)
    };
    for id in ["charts", "lock-check", "render", "publish"] {
        let o = step(id);
        assert!(
            o.status.success(),
            "step {id}: {}{}",
            text(&o.stdout),
            text(&o.stderr)
        );
    }
    // The rendered files are what render-folder prints, one per folder.
    let branch = env
        .iter()
        .find(|(k, _)| k == "RENDERED_BRANCH")
        .unwrap()
        .1
        .clone();
    let listed = git(&origin, &["ls-tree", "-r", "--name-only", &branch]);
    assert_eq!(
        listed,
        "clusters/eu/cilium/cilium.yaml\nclusters/us/cilium/cilium.yaml\n"
    );
    for f in ["clusters/eu/cilium", "clusters/us/cilium"] {
        let want = ok(&cmd(&repo, &["render-folder", f]));
        let got = git(&origin, &["show", &format!("{branch}:{f}/cilium.yaml")]);
        assert!(
            got == want,
            "{f}: the published file is not render-folder's output"
        );
    }
    let first = git(&origin, &["rev-parse", &branch]);
    // Publishing the same render again commits nothing.
    let o = step("publish");
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("unchanged"), "{}", text(&o.stdout));
    assert_eq!(git(&origin, &["rev-parse", &branch]), first);

    // A values change without its lock: the check fails, naming the folder's stale lock.
    std::fs::write(
        repo.join("clusters/us/cilium/values.yaml"),
        "cluster:\n  name: us\n  id: 3\n",
    )
    .unwrap();
    git(&repo, &["commit", "--quiet", "-am", "us: id 3"]);
    let o = step("lock-check");
    assert!(!o.status.success());
    let err = text(&o.stderr);
    assert!(err.contains("clusters/us/cilium"), "{err}");
    // Locked again, it passes and the next publish is a child commit with the new render.
    ok(&cmd(&repo, &["lock", "clusters/us/cilium"]));
    git(&repo, &["commit", "--quiet", "-am", "us: lock"]);
    for id in ["lock-check", "render", "publish"] {
        let o = step(id);
        assert!(o.status.success(), "step {id}: {}", text(&o.stderr));
    }
    assert_eq!(
        git(&origin, &["rev-parse", &format!("{branch}^")]),
        first,
        "the new render's commit has the previous one as parent"
    );
    let got = git(
        &origin,
        &["show", &format!("{branch}:clusters/us/cilium/cilium.yaml")],
    );
    assert!(got == ok(&cmd(&repo, &["render-folder", "clusters/us/cilium"])));
}

// ---------------------------------------------------------------------------------------------
// Talos drift

/// A scratch repository holding the Talos example folder at `cilium` with `version`, locked.
fn talos_repo(version: &str) -> Scratch {
    let s = Scratch::new("talos");
    std::fs::create_dir_all(s.0.join(".git")).unwrap();
    let settings = std::fs::read_to_string(root().join("examples/talos/cilium-cmp.yaml"))
        .unwrap()
        .replace(
            "ciliumVersion: \"1.20.0\"",
            &format!("ciliumVersion: \"{version}\""),
        );
    assert!(settings.contains(version));
    s.write("cilium/cilium-cmp.yaml", &settings);
    s.write(
        "cilium/values.yaml",
        &std::fs::read_to_string(root().join("examples/talos/values.yaml")).unwrap(),
    );
    ok(&cmd(&s.0, &["lock", "cilium"]));
    s
}

/// The `talos-patch` of the folder, and its lines from `- name:` on (the inline manifest entry,
/// indented for `cluster.inlineManifests` at two spaces).
fn inline_entry(repo: &Path) -> String {
    let patch = ok(&cmd(repo, &["talos-patch", "cilium"]));
    let at = patch.find("    - name:").expect("the entry");
    patch[at..].to_string()
}

/// A controlplane config as `talosctl gen config` writes it (v1alpha1 document, then another
/// document), with `entry` under cluster.inlineManifests when given.
fn machine_config(entry: Option<&str>) -> String {
    let manifests = match entry {
        Some(e) => format!("  inlineManifests:\n{e}"),
        None => "  inlineManifests: []\n".to_string(),
    };
    const CONFIG: &str = r#"version: v1alpha1 # Indicates the schema used to decode the contents.
debug: false
persist: true
machine:
  type: controlplane
  token: abcdef.0123456789abcdef
  ca:
    crt: LS0tLS1CRUdJTg==
    key: LS0tLS1CRUdJTg==
  certSANs: []
  kubelet:
    image: ghcr.io/siderolabs/kubelet:v1.35.0
    defaultRuntimeSeccompProfileEnabled: true
  network: {}
  install:
    disk: /dev/sda
    image: ghcr.io/siderolabs/installer:v1.11.5
    wipe: false
cluster:
  id: bW9jaw==
  secret: bW9jaw==
  controlPlane:
    endpoint: https://prod.example:6443
  clusterName: prod
  network:
    cni:
      name: none
    dnsDomain: cluster.local
    podSubnets:
      - 10.244.0.0/16
    serviceSubnets:
      - 10.96.0.0/12
  proxy:
    disabled: true
MANIFESTS---
apiVersion: v1alpha1
kind: HostnameConfig
auto: stable
"#;
    CONFIG.replace("MANIFESTS", &manifests)
}

fn indent(text: &str, n: usize) -> String {
    let pad = " ".repeat(n);
    text.lines()
        .map(|l| {
            if l.is_empty() {
                String::new()
            } else {
                format!("{pad}{l}")
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

/// `talosctl get machineconfig -o yaml` for two nodes: the spec as a mapping (a config of one
/// document) and as the text of a multi-document config.
fn talosctl_get(config: &str) -> String {
    let v1alpha1 = config.split("\n---\n").next().unwrap();
    let meta = |node: &str| {
        format!(
            "node: {node}\nmetadata:\n    namespace: config\n    type: MachineConfigs.config.talos.dev\n    id: v1alpha1\n    version: 3\n    owner:\n    phase: running\n    created: 2026-12-01T09:12:44Z\n    updated: 2026-12-01T09:12:44Z\n"
        )
    };
    format!(
        "{}spec:\n{}---\n{}spec: |\n{}",
        meta("10.5.0.2"),
        indent(v1alpha1, 4),
        meta("10.5.0.3"),
        indent(config, 4)
    )
}

fn talos_check(repo: &Path, config: &str, extra: &[&str]) -> Output {
    std::fs::write(repo.join("mc.yaml"), config).unwrap();
    let mut args = vec!["talos-check", "mc.yaml", "cilium"];
    args.extend(extra);
    cmd(repo, &args)
}

fn talos_check_passes_a_current_inline_manifest_in_both_shapes() {
    let repo = talos_repo("1.20.0");
    let config = machine_config(Some(&inline_entry(&repo.0)));
    // The config as Talos reads it holds the render byte for byte (the test's own check).
    let parsed = cilium_cmp_render::talos_config::read(&config).unwrap();
    let render = ok(&cmd(&repo.0, &["render-folder", "cilium"]));
    assert_eq!(parsed[0].inline_manifests[0].1, render);
    for shape in [config.clone(), talosctl_get(&config)] {
        let o = talos_check(&repo.0, &shape, &[]);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
        assert!(o.stdout.is_empty());
        let err = text(&o.stderr);
        assert!(err.contains("is the folder's render"), "{err}");
    }
    let o = talos_check(&repo.0, &talosctl_get(&config), &[]);
    let err = text(&o.stderr);
    assert!(
        err.contains("node 10.5.0.2") && err.contains("node 10.5.0.3"),
        "{err}"
    );
    // `-` reads standard input, as `talosctl get machineconfig -o yaml | cilium-cmp talos-check -`.
    let mut c = Command::new(bin());
    charts::give(&mut c);
    let mut child = c
        .args(["talos-check", "-", "cilium"])
        .current_dir(&repo.0)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write as _;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(talosctl_get(&config).as_bytes())
        .unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("node 10.5.0.3"));
    // A stale lock is refused before anything is compared.
    std::fs::write(
        repo.0.join("cilium/values.yaml"),
        "debug:\n  enabled: true\n",
    )
    .unwrap();
    let o = talos_check(&repo.0, &config, &[]);
    assert_eq!(o.status.code(), Some(1));
    assert!(o.stdout.is_empty());
    assert!(
        text(&o.stderr).contains("lock is stale"),
        "{}",
        text(&o.stderr)
    );
}

fn talos_check_names_a_stale_release_and_prints_the_patch() {
    // Bootstrapped with 1.19.6; the folder has moved to 1.20.0 since.
    let repo = talos_repo("1.19.6");
    let old_entry = inline_entry(&repo.0);
    let settings = repo.0.join("cilium/cilium-cmp.yaml");
    let s = std::fs::read_to_string(&settings).unwrap();
    std::fs::write(&settings, s.replace("\"1.19.6\"", "\"1.20.0\"")).unwrap();
    ok(&cmd(&repo.0, &["lock", "cilium"]));
    let patch = ok(&cmd(&repo.0, &["talos-patch", "cilium"]));
    for shape in [
        machine_config(Some(&old_entry)),
        talosctl_get(&machine_config(Some(&old_entry))),
    ] {
        let o = talos_check(&repo.0, &shape, &[]);
        let err = text(&o.stderr);
        // Applying 1.19.6 over 1.20.0 changes images and restarts pods: diff's status 3.
        assert_eq!(o.status.code(), Some(3), "{err}");
        assert!(
            err.contains(
                "release: Cilium 1.19.6 in the machine config, Cilium 1.20.0 in the folder"
            ),
            "{err}"
        );
        assert!(err.contains("content hash: sha256:"), "{err}");
        assert!(
            err.contains("DaemonSet"),
            "the objects that differ are named: {err}"
        );
        assert_eq!(text(&o.stdout), patch, "stdout is talos-patch's output");
    }
    // -o writes the patch; the config with it applied is in line.
    let o = talos_check(
        &repo.0,
        &machine_config(Some(&old_entry)),
        &["-o", "fix.yaml"],
    );
    assert_eq!(o.status.code(), Some(3));
    assert!(o.stdout.is_empty());
    assert_eq!(
        std::fs::read_to_string(repo.0.join("fix.yaml")).unwrap(),
        patch
    );
    let fixed = machine_config(Some(&patch[patch.find("    - name:").unwrap()..]));
    let o = talos_check(&repo.0, &fixed, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
}

fn talos_check_without_the_inline_manifest_and_with_bad_input() {
    let repo = talos_repo("1.20.0");
    // None at all, or only another one: nothing for Talos to roll back.
    let other = "    - name: namespaces\n      contents: |\n        apiVersion: v1\n        kind: Namespace\n        metadata:\n          name: apps\n";
    for config in [machine_config(None), machine_config(Some(other))] {
        let o = talos_check(&repo.0, &config, &[]);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
        assert!(o.stdout.is_empty());
        let err = text(&o.stderr);
        assert!(err.contains("no inline manifest named cilium"), "{err}");
    }
    let o = talos_check(&repo.0, &machine_config(Some(other)), &[]);
    assert!(text(&o.stderr).contains("it has namespaces"));
    // Malformed: a clear error naming the file, nothing on stdout, exit 1, no panic.
    for (bad, says) in [
        ("version: v1alpha1\ncluster: [\n", "mc.yaml"),
        ("apiVersion: v1\nkind: ConfigMap\n", "no Talos v1alpha1 machine config"),
        (
            "version: v1alpha1\ncluster:\n  inlineManifests: {cilium: x}\n",
            "cluster.inlineManifests is not a list",
        ),
        (
            "version: v1alpha1\ncluster:\n  inlineManifests:\n    - name: cilium\n      contents: 7\n",
            "inlineManifests[0]",
        ),
        (
            "version: v1alpha1\ncluster:\n  inlineManifests:\n    - name: cilium\n      contents: \"a: [\"\n",
            "not a YAML stream",
        ),
    ] {
        let o = talos_check(&repo.0, bad, &[]);
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{bad}: {err}");
        assert!(o.stdout.is_empty(), "{bad}");
        assert!(err.contains(says), "{bad}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
    let o = cmd(&repo.0, &["talos-check", "missing.yaml", "cilium"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o.stderr).contains("missing.yaml"));
    let o = cmd(&repo.0, &["talos-check", "mc.yaml"]);
    assert_eq!(
        o.status.code(),
        Some(64),
        "a missing folder is a usage error"
    );
}
