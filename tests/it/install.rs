//! The sidecar install of docs/argocd-install.md adds the plugin to an Argo CD and changes
//! nothing else of it.
//!
//! kustomize: the component is built (`kubectl kustomize`, offline) against a stand-in of an
//! existing `argocd-repo-server` Deployment (`fixtures/argocd-install/`, shaped as Argo CD v3.5's
//! `manifests/base/repo-server` has it, with a user's own changes on top), and the result must be
//! the stand-in plus exactly the sidecar container and its volume. The new-cluster example's
//! remote `install.yaml` cannot be fetched here: its kustomization's structure is checked.
//!
//! Helm: the argo-cd chart (argo-helm `charts/argo-cd`, up to 10.1.1) ships no
//! `values.schema.json` (the one version of that file in argo-helm's history, commit 42c9ba0,
//! describes only `region` and `notifications.enabled`), so the values' structure is checked
//! instead: `repoServer.extraContainers`
//! and `repoServer.volumes` are the chart's lists, which Helm replaces whole on merge; the
//! documented values and `sidecar/helm/add-sidecar.py` keep the user's entries. Each resulting
//! Pod spec is validated with `kubernetes-validate` (strict).
//!
//! Every YAML snippet of the install pages (`<!-- snippet: NAME -->` before its block) is one of
//! these inputs, so the docs cannot drift from what is tested.

use crate::support::harness;
use crate::support::scratch;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{json, Value};

use scratch::Scratch;

pub fn tests() -> Vec<harness::Trial> {
    harness::group(
        file!(),
        vec![
            harness::test(
                "the_component_adds_only_the_sidecar",
                the_component_adds_only_the_sidecar,
            )
            .needs(kubectl_missing),
            harness::test(
                "a_component_changing_more_is_caught",
                a_component_changing_more_is_caught,
            )
            .needs(kubectl_missing),
            harness::test(
                "the_patch_applies_without_kustomize",
                the_patch_applies_without_kustomize,
            )
            .needs(kubectl_missing),
            harness::test(
                "the_release_day_patch_adds_only_the_mount",
                the_release_day_patch_adds_only_the_mount,
            )
            .needs(kubectl_missing),
            harness::test(
                "the_new_cluster_example_pins_argo_cd_and_uses_the_component",
                the_new_cluster_example_pins_argo_cd_and_uses_the_component,
            ),
            harness::test(
                "add_sidecar_appends_to_the_users_lists",
                add_sidecar_appends_to_the_users_lists,
            )
            .python(),
            harness::test(
                "add_sidecar_refuses_a_values_file_it_cannot_read",
                add_sidecar_refuses_a_values_file_it_cannot_read,
            )
            .python(),
            harness::test(
                "the_documented_helm_values_are_the_users_plus_the_sidecar",
                the_documented_helm_values_are_the_users_plus_the_sidecar,
            )
            .python(),
            harness::test(
                "the_release_day_helm_values_add_only_the_mount",
                the_release_day_helm_values_add_only_the_mount,
            )
            .python(),
        ],
    )
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(root().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

fn yaml(text: &str) -> Value {
    cilium_cmp_yaml::yaml::parse_value(text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

const COMPONENT: &str = "sidecar/kustomize/component";
const PATCH: &str = "sidecar/kustomize/component/argocd-repo-server-patch.yaml";
const STAND_IN: &str = "tests/fixtures/argocd-install/argocd-repo-server.yaml";
const HELM_VALUES: &str = "sidecar/helm/values.yaml";

/// kubectl with its built-in kustomize (`kubectl kustomize`, kustomize v5 since kubectl 1.27).
fn kubectl_missing() -> Option<String> {
    match Command::new("kubectl")
        .args(["version", "--client"])
        .output()
    {
        Ok(o) if o.status.success() => None,
        _ => Some("needs kubectl (its built-in kustomize) on PATH; CI's machines have it".into()),
    }
}

/// The YAML block after `<!-- snippet: NAME -->` in the page `page`.
fn snippet(page: &str, name: &str) -> String {
    let text = read(page);
    let marker = format!("<!-- snippet: {name} -->\n");
    let at = text
        .find(&marker)
        .unwrap_or_else(|| panic!("{page} has no snippet {name}"));
    let rest = &text[at + marker.len()..];
    let body = rest
        .strip_prefix("```yaml\n")
        .unwrap_or_else(|| panic!("{page}: snippet {name} is not a yaml block"));
    body[..body.find("```").expect("a closed block")].to_string()
}

/// The Argo CD folder of a user: the stand-in Deployment, a kustomization holding it and the
/// documented `components:` lines, and a copy of this repository's component where those lines
/// point. `extra` is appended to the kustomization.
fn user_folder(dir: &Path, component_patch: &str, extra: &str) -> PathBuf {
    let argocd = dir.join("argocd");
    let component = dir.join("cilium-cmp").join(COMPONENT);
    std::fs::create_dir_all(&argocd).unwrap();
    std::fs::create_dir_all(&component).unwrap();
    std::fs::write(
        component.join("kustomization.yaml"),
        read(&format!("{COMPONENT}/kustomization.yaml")),
    )
    .unwrap();
    std::fs::write(
        component.join("argocd-repo-server-patch.yaml"),
        component_patch,
    )
    .unwrap();
    std::fs::write(argocd.join("argocd-repo-server.yaml"), read(STAND_IN)).unwrap();
    let kustomization = format!(
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - argocd-repo-server.yaml\n{}{extra}",
        snippet("docs/argocd-install.md", "kustomize-existing")
    );
    std::fs::write(argocd.join("kustomization.yaml"), kustomization).unwrap();
    argocd
}

fn stdout_objects(o: &Output, what: &str) -> Vec<Value> {
    assert!(
        o.status.success(),
        "{what}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    cilium_cmp_yaml::yaml::parse_stream_values(&String::from_utf8_lossy(&o.stdout))
        .unwrap_or_else(|e| panic!("{what}: {e}"))
}

fn build(folder: &Path) -> Value {
    let o = Command::new("kubectl")
        .arg("kustomize")
        .arg(folder)
        .output()
        .expect("kubectl runs");
    let objects = stdout_objects(&o, "kubectl kustomize");
    assert_eq!(objects.len(), 1, "only the Deployment: {objects:?}");
    objects.into_iter().next().unwrap()
}

/// The paths at which two values differ (for a failure message that says where).
fn differences(a: &Value, b: &Value, path: &str, out: &mut Vec<String>) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for k in x.keys().chain(y.keys().filter(|k| !x.contains_key(*k))) {
                differences(
                    x.get(k).unwrap_or(&Value::Null),
                    y.get(k).unwrap_or(&Value::Null),
                    &format!("{path}.{k}"),
                    out,
                );
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (p, q)) in x.iter().zip(y).enumerate() {
                differences(p, q, &format!("{path}[{i}]"), out);
            }
        }
        _ if a != b => out.push(format!("{path}: {a} became {b}")),
        _ => {}
    }
}

/// Lists of named entries in name order: kustomize's strategic merge may put a new entry first.
fn by_name(list: &Value) -> Vec<Value> {
    let mut v = list.as_array().cloned().unwrap_or_default();
    v.sort_by(|a, b| {
        let key = |x: &Value| {
            x["name"]
                .as_str()
                .or(x["mountPath"].as_str())
                .unwrap_or("")
                .to_string()
        };
        key(a).cmp(&key(b))
    });
    v
}

/// `after` is `before` plus exactly the container `sidecar` and the `volumes`, nothing else.
fn only_added(
    before: &Value,
    after: &Value,
    sidecar: &Value,
    volumes: &[Value],
) -> Result<(), String> {
    let mut rest = after.clone();
    let spec = rest
        .pointer_mut("/spec/template/spec")
        .ok_or("no pod template")?;
    let containers = spec["containers"].as_array_mut().ok_or("no containers")?;
    let at = containers
        .iter()
        .position(|c| c["name"] == sidecar["name"])
        .ok_or("no cilium-cmp container")?;
    let mut got = containers.remove(at);
    let mut want = sidecar.clone();
    for c in [&mut got, &mut want] {
        c["volumeMounts"] = Value::Array(by_name(&c["volumeMounts"]));
    }
    if got != want {
        let mut d = Vec::new();
        differences(&want, &got, "cilium-cmp", &mut d);
        return Err(format!("the sidecar is not the patch's: {d:?}"));
    }
    let vols = spec["volumes"].as_array_mut().ok_or("no volumes")?;
    for v in volumes {
        let at = vols
            .iter()
            .position(|x| x["name"] == v["name"])
            .ok_or(format!("no volume {}", v["name"]))?;
        let got = vols.remove(at);
        if &got != v {
            return Err(format!("volume {} is {got}, not {v}", v["name"]));
        }
    }
    let mut d = Vec::new();
    differences(before, &rest, "", &mut d);
    if d.is_empty() {
        Ok(())
    } else {
        Err(format!("more than the sidecar changed: {d:?}"))
    }
}

fn patch_parts() -> (Value, Vec<Value>) {
    let patch = yaml(&read(PATCH));
    let spec = &patch["spec"]["template"]["spec"];
    let sidecar = spec["containers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "cilium-cmp")
        .expect("the patch adds cilium-cmp")
        .clone();
    (sidecar, spec["volumes"].as_array().unwrap().clone())
}

fn the_component_adds_only_the_sidecar() {
    let dir = Scratch::new("component");
    let folder = user_folder(&dir.0, &read(PATCH), "");
    let before = yaml(&read(STAND_IN));
    let after = build(&folder);
    let (sidecar, volumes) = patch_parts();
    only_added(&before, &after, &sidecar, &volumes).unwrap();
    // What the user had is still there, as they had it.
    assert_eq!(after["spec"]["replicas"], before["spec"]["replicas"]);
    let names: Vec<&str> = after["spec"]["template"]["spec"]["containers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    for c in ["argocd-repo-server", "my-plugin", "cilium-cmp"] {
        assert!(names.contains(&c), "{c} in {names:?}");
    }
}

/// The check above fails for a component that also changes the user's Deployment.
fn a_component_changing_more_is_caught() {
    let dir = Scratch::new("component-more");
    let greedy = read(PATCH).replace("spec:\n  template:", "spec:\n  replicas: 1\n  template:");
    assert_ne!(greedy, read(PATCH));
    let folder = user_folder(&dir.0, &greedy, "");
    let (sidecar, volumes) = patch_parts();
    let err = only_added(&yaml(&read(STAND_IN)), &build(&folder), &sidecar, &volumes)
        .expect_err("replicas changed");
    assert!(err.contains(".spec.replicas"), "{err}");
}

/// `kubectl patch` with the component's patch (an Argo CD without a kustomization), run locally.
fn the_patch_applies_without_kustomize() {
    let o = Command::new("kubectl")
        .args(["patch", "--local", "-o", "yaml", "-f"])
        .arg(root().join(STAND_IN))
        .arg("--patch-file")
        .arg(root().join(PATCH))
        .output()
        .expect("kubectl runs");
    let after = stdout_objects(&o, "kubectl patch --local").remove(0);
    let (sidecar, volumes) = patch_parts();
    only_added(&yaml(&read(STAND_IN)), &after, &sidecar, &volumes).unwrap();
    let doc = read("docs/argocd-install.md");
    assert!(doc.contains(&format!(
        "kubectl -n argocd patch deployment argocd-repo-server --patch-file {PATCH}"
    )));
}

fn the_release_day_patch_adds_only_the_mount() {
    let dir = Scratch::new("release-day");
    let extra = snippet("docs/release-day.md", "release-day-kustomize");
    let folder = user_folder(&dir.0, &read(PATCH), &extra);
    let after = build(&folder);
    // The snippet's own mount and volume, read from its inline patch.
    let inline = yaml(yaml(&extra)["patches"][0]["patch"].as_str().unwrap());
    let spec = &inline["spec"]["template"]["spec"];
    let mount = spec["containers"][0]["volumeMounts"][0].clone();
    assert_eq!(mount["subPath"], "cilium-1.20.1.tgz");
    let (mut sidecar, mut volumes) = patch_parts();
    sidecar["volumeMounts"].as_array_mut().unwrap().push(mount);
    volumes.push(spec["volumes"][0].clone());
    only_added(&yaml(&read(STAND_IN)), &after, &sidecar, &volumes).unwrap();
}

fn the_new_cluster_example_pins_argo_cd_and_uses_the_component() {
    let k = yaml(&read("sidecar/kustomize/new-cluster/kustomization.yaml"));
    assert_eq!(k["apiVersion"], "kustomize.config.k8s.io/v1beta1");
    assert_eq!(k["kind"], "Kustomization");
    assert_eq!(k["namespace"], "argocd");
    assert_eq!(
        k["resources"],
        json!(["https://raw.githubusercontent.com/argoproj/argo-cd/v3.5.6/manifests/install.yaml"]),
        "Argo CD's own install.yaml, pinned at the release the docs name"
    );
    assert_eq!(k["components"], json!(["../component"]));
    assert!(
        k.get("patches").is_none(),
        "the sidecar comes from the component alone"
    );
    let c = yaml(&read(&format!("{COMPONENT}/kustomization.yaml")));
    assert_eq!(c["apiVersion"], "kustomize.config.k8s.io/v1alpha1");
    assert_eq!(c["kind"], "Component");
    assert!(
        c.get("resources").is_none(),
        "the component brings no Argo CD manifests of its own"
    );
    assert_eq!(c["patches"][0]["target"]["name"], "argocd-repo-server");
    let doc = read("docs/argocd-install.md");
    assert!(doc.contains(
        "kubectl apply --server-side --force-conflicts -k sidecar/kustomize/new-cluster"
    ));
    assert!(doc.contains("v3.5.6"));
}

/// `python3 sidecar/helm/add-sidecar.py FILE`, with the tests' Python (PyYAML).
fn add_sidecar(values: &Path) -> Output {
    Command::new(harness::python())
        .arg(root().join("sidecar/helm/add-sidecar.py"))
        .arg(values)
        .output()
        .expect("python runs")
}

fn add_sidecar_value(dir: &Scratch, name: &str, text: &str) -> Value {
    let path = dir.write(name, text);
    let o = add_sidecar(&path);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    yaml(&String::from_utf8_lossy(&o.stdout))
}

fn ours(key: &str) -> Vec<Value> {
    yaml(&read(HELM_VALUES))["repoServer"][key]
        .as_array()
        .unwrap_or_else(|| panic!("repoServer.{key} is a list, as in the chart"))
        .clone()
}

fn list(v: &Value, key: &str) -> Vec<Value> {
    v["repoServer"][key].as_array().cloned().unwrap_or_default()
}

/// The Pod the chart makes of these values is valid: the chart's own repo-server container and
/// its var-files and plugins volumes (argo-helm templates/argocd-repo-server/deployment.yaml),
/// then `extraContainers` and `volumes`; every mount names a volume.
fn assert_valid_pod(values: &Value) {
    let mut containers =
        vec![json!({"name": "repo-server", "image": "quay.io/argoproj/argocd:v3.5.6"})];
    containers.extend(list(values, "extraContainers"));
    let mut volumes = vec![
        json!({"name": "var-files", "emptyDir": {}}),
        json!({"name": "plugins", "emptyDir": {}}),
    ];
    volumes.extend(list(values, "volumes"));
    let names: Vec<&Value> = volumes.iter().map(|v| &v["name"]).collect();
    for c in &containers {
        for m in c["volumeMounts"].as_array().into_iter().flatten() {
            assert!(
                names.contains(&&m["name"]),
                "{} mounts an undefined volume {}",
                c["name"],
                m["name"]
            );
        }
    }
    let pod = json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "argocd-repo-server", "namespace": "argocd"},
        "spec": {"containers": containers, "volumes": volumes}});
    let o = Command::new(harness::python())
        .arg("-c")
        .arg("import json, sys, kubernetes_validate\nkubernetes_validate.validate(json.loads(sys.argv[1]), '1.35.0', strict=True)")
        .arg(pod.to_string())
        .output()
        .expect("python runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

fn add_sidecar_appends_to_the_users_lists() {
    let dir = Scratch::new("add-sidecar");
    let mine_text = read("tests/fixtures/argocd-install/helm-values.yaml");
    let mine = yaml(&mine_text);
    let got = add_sidecar_value(&dir, "mine.yaml", &mine_text);
    for key in ["extraContainers", "volumes"] {
        let mut want = list(&mine, key);
        want.extend(ours(key));
        assert_eq!(
            list(&got, key),
            want,
            "repoServer.{key}: the user's entries, then ours"
        );
    }
    // Nothing else of the user's values changed.
    let strip = |v: &Value| {
        let mut v = v.clone();
        let rs = v["repoServer"].as_object_mut().unwrap();
        rs.remove("extraContainers");
        rs.remove("volumes");
        v
    };
    assert_eq!(strip(&got), strip(&mine));
    assert_valid_pod(&got);
    // Run again (after an image update, say): the same values, no second sidecar.
    let again = add_sidecar_value(&dir, "again.yaml", &serde_json::to_string(&got).unwrap());
    assert_eq!(again, got);
    // An older cilium-cmp entry in the middle of the user's list is replaced where it stands.
    let older = mine_text.replace(
        "  extraContainers:\n",
        "  extraContainers:\n    - name: cilium-cmp\n      image: registry.example/cilium-cmp:0.0.9\n",
    );
    let replaced = add_sidecar_value(&dir, "older.yaml", &older);
    let names: Vec<Value> = list(&replaced, "extraContainers")
        .iter()
        .map(|c| c["name"].clone())
        .collect();
    assert_eq!(names, vec![json!("cilium-cmp"), json!("my-plugin")]);
    assert_eq!(
        list(&replaced, "extraContainers")[0],
        ours("extraContainers")[0]
    );
    // A values file without the lists gets them.
    let empty = add_sidecar_value(&dir, "empty.yaml", "server:\n  replicas: 2\n");
    assert_eq!(list(&empty, "extraContainers"), ours("extraContainers"));
    assert_eq!(empty["server"]["replicas"], json!(2.0));
}

fn add_sidecar_refuses_a_values_file_it_cannot_read() {
    let dir = Scratch::new("add-sidecar-bad");
    for (name, text, needle) in [
        (
            "list.yaml",
            "repoServer:\n  volumes: tmp\n",
            "repoServer.volumes must be a list",
        ),
        ("scalar.yaml", "just text\n", "a values file is a map"),
        ("broken.yaml", "repoServer: [\n", "broken.yaml"),
    ] {
        let path = dir.write(name, text);
        let o = add_sidecar(&path);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{name}");
        assert!(o.stdout.is_empty(), "{name}: nothing on stdout");
        assert!(err.contains(needle) && err.contains(name), "{name}: {err}");
    }
    let o = add_sidecar(&dir.0.join("absent.yaml"));
    assert!(!o.status.success() && o.stdout.is_empty());
}

/// The docs' appended values are the user's own entries followed by exactly ours: what
/// add-sidecar.py makes of the user's part.
fn the_documented_helm_values_are_the_users_plus_the_sidecar() {
    let documented = yaml(&snippet("docs/argocd-install.md", "helm-appended"));
    let mut theirs = documented.clone();
    for key in ["extraContainers", "volumes"] {
        let names: Vec<Value> = ours(key).iter().map(|e| e["name"].clone()).collect();
        let kept: Vec<Value> = list(&documented, key)
            .into_iter()
            .filter(|e| !names.contains(&e["name"]))
            .collect();
        assert!(
            !kept.is_empty(),
            "the example has entries of the user's own in {key}"
        );
        theirs["repoServer"][key] = Value::Array(kept);
    }
    let dir = Scratch::new("helm-doc");
    let got = add_sidecar_value(
        &dir,
        "theirs.yaml",
        &serde_json::to_string(&theirs).unwrap(),
    );
    assert_eq!(
        got, documented,
        "the documented values are not add-sidecar.py's result"
    );
    assert_valid_pod(&documented);
}

/// Merges `extra` into `base` as a user adds entries to their lists: maps key by key, lists of
/// named entries by name (new names appended), anything else replaced.
fn add_entries(base: &Value, extra: &Value) -> Value {
    match (base, extra) {
        (Value::Object(b), Value::Object(e)) => {
            let mut out = b.clone();
            for (k, v) in e {
                let merged = b.get(k).map_or(v.clone(), |x| add_entries(x, v));
                out.insert(k.clone(), merged);
            }
            Value::Object(out)
        }
        (Value::Array(b), Value::Array(e)) => {
            let mut out = b.clone();
            for item in e {
                let key = |x: &Value| x.get("name").or(x.get("mountPath")).cloned();
                match out
                    .iter()
                    .position(|x| key(x).is_some() && key(x) == key(item))
                {
                    Some(i) => out[i] = add_entries(&out[i], item),
                    None => out.push(item.clone()),
                }
            }
            Value::Array(out)
        }
        _ => extra.clone(),
    }
}

fn the_release_day_helm_values_add_only_the_mount() {
    let extra = yaml(&snippet("docs/release-day.md", "release-day-helm"));
    let values = add_entries(&yaml(&read(HELM_VALUES)), &extra);
    let sidecar = &list(&values, "extraContainers")[0];
    let mut want = ours("extraContainers")[0].clone();
    let mount = extra["repoServer"]["extraContainers"][0]["volumeMounts"][0].clone();
    assert_eq!(
        mount["mountPath"],
        "/opt/cilium-cmp/charts/cilium-1.20.1.tgz"
    );
    want["volumeMounts"].as_array_mut().unwrap().push(mount);
    assert_eq!(sidecar, &want, "only the mount is added to the sidecar");
    let mut volumes = ours("volumes");
    volumes.push(extra["repoServer"]["volumes"][0].clone());
    assert_eq!(list(&values, "volumes"), volumes);
    assert_valid_pod(&values);
    // The same mount and volume as the kustomize snippet's.
    let k = yaml(&snippet("docs/release-day.md", "release-day-kustomize"));
    let inline = yaml(k["patches"][0]["patch"].as_str().unwrap());
    let spec = &inline["spec"]["template"]["spec"];
    assert_eq!(
        spec["containers"][0]["volumeMounts"],
        extra["repoServer"]["extraContainers"][0]["volumeMounts"]
    );
    assert_eq!(spec["volumes"], extra["repoServer"]["volumes"]);
}
