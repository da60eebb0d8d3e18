//! Every Kubernetes YAML the repository ships is valid, and the sidecar's pieces agree.
//!
//! Built-in kinds are validated against the Kubernetes OpenAPI schemas of PyPI's
//! `kubernetes-validate` (strict: unknown fields are errors); Applications against Argo CD's own
//! CRD schema (`../shared/schemas/argoproj.io-application-crd.yaml`) with `jsonschema`, made
//! strict the way the API server prunes (unknown fields are errors). A Deployment patch is
//! validated merged into a minimal argocd-repo-server Deployment, the argo-cd chart's
//! `extraContainers` inside a Pod. No container engine runs here, so the image itself is not
//! built: the test checks what agrees across plugin.yaml, the Dockerfile, the kustomize overlay
//! and the Helm values, and that each pinned sha256 is that of the official archive.

use crate::support::harness;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};
use sha2::{Digest, Sha256};

const APPLICATION_CRD: &str = "schemas/argoproj.io-application-crd.yaml";

pub fn tests() -> Vec<harness::Trial> {
    harness::group(
        file!(),
        vec![
            harness::test(
                "shipped_kubernetes_yaml_is_valid",
                shipped_kubernetes_yaml_is_valid,
            )
            .shared(APPLICATION_CRD)
            .python(),
            harness::test(
                "the_validator_rejects_broken_manifests",
                the_validator_rejects_broken_manifests,
            )
            .shared(APPLICATION_CRD)
            .python(),
            harness::test("sidecar_pieces_agree", sidecar_pieces_agree),
            harness::test("pinned_chart_archives", pinned_chart_archives),
            harness::test(
                "the_pins_are_the_official_archives",
                the_pins_are_the_official_archives,
            )
            .shared("charts"),
        ],
    )
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(root().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

fn yaml(rel: &str) -> Value {
    cilium_cmp_yaml::yaml::parse_values(&read(rel))
        .unwrap_or_else(|e| panic!("{rel}: {e}"))
        .value
}

/// The validator the tests run (a file beside the support modules, with application_schema.py).
fn validator() -> PathBuf {
    root().join("tests/it/support/validate_manifests.py")
}

fn shipped_kubernetes_yaml_is_valid() {
    let crd = harness::shared(APPLICATION_CRD);
    let o = Command::new(python())
        .arg(validator())
        .env("PYTHONPATH", root().join("tests/it/support"))
        .arg(root())
        .arg(&crd)
        .arg(plugin_name())
        .arg("1.35.0")
        .output()
        .expect("python runs");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{out}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    for f in [
        "sidecar/argocd/application.yaml",
        "sidecar/argocd/app-of-apps-child.yaml",
        "sidecar/kustomize/component/kustomization.yaml",
        "sidecar/kustomize/component/argocd-repo-server-patch.yaml",
        "sidecar/kustomize/new-cluster/kustomization.yaml",
        "sidecar/helm/values.yaml",
    ] {
        assert!(out.contains(f), "{f} was not validated: {out}");
    }
}

/// The validator itself rejects what it must (so a green run means something).
fn the_validator_rejects_broken_manifests() {
    let crd = harness::shared(APPLICATION_CRD);
    let tmp = std::env::temp_dir().join(format!("cilium-cmp-manifests-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(tmp.join("sidecar/argocd")).unwrap();
    let app = read("sidecar/argocd/application.yaml")
        .replace("selfHeal: true", "selfHeal: true\n      allowEmpty: false")
        .replace("      - PruneLast=true\n", "")
        .replace("plugin:", "plugn:");
    std::fs::write(tmp.join("sidecar/argocd/app.yaml"), app).unwrap();
    std::fs::write(
        tmp.join("svc.yaml"),
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: x\nspec:\n  portz: []\n",
    )
    .unwrap();
    let o = Command::new(python())
        .arg(validator())
        .env("PYTHONPATH", root().join("tests/it/support"))
        .arg(&tmp)
        .arg(&crd)
        .arg(plugin_name())
        .arg("1.35.0")
        .output()
        .expect("python runs");
    let _ = std::fs::remove_dir_all(&tmp);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(!o.status.success(), "{out}");
    for needle in [
        "allowEmpty is a zero value",
        "lacks PruneLast=true",
        "plugn",
        "source.plugin.name",
        "svc.yaml: Service x",
    ] {
        assert!(out.contains(needle), "{needle:?} not reported: {out}");
    }
}

fn plugin_name() -> String {
    // metadata.name: plugin.yaml sets no spec.version (Argo CD 3.x would append it, 4.0
    // refuses it; tests/it/plugin.rs checks both rules).
    let p = yaml("plugin.yaml");
    assert!(p["spec"].get("version").is_none());
    p["metadata"]["name"].as_str().expect("name").to_string()
}

fn container(v: &Value) -> &Value {
    v.as_array()
        .and_then(|cs| cs.iter().find(|c| c["name"] == "cilium-cmp"))
        .expect("a cilium-cmp container")
}

/// The Dockerfile's final stage, as (instruction, rest) pairs with continuation lines joined.
fn final_stage(dockerfile: &str) -> Vec<(String, String)> {
    let joined = dockerfile.replace("\\\n", " ");
    let mut stage = Vec::new();
    for line in joined.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (ins, rest) = line.split_once(' ').unwrap_or((line, ""));
        if ins.eq_ignore_ascii_case("FROM") {
            stage.clear();
        }
        stage.push((ins.to_uppercase(), rest.trim().to_string()));
    }
    stage
}

fn sidecar_pieces_agree() {
    let plugin = yaml("plugin.yaml");
    let command = plugin["spec"]["generate"]["command"][0].as_str().unwrap();
    let dockerfile = read("sidecar/Dockerfile");
    // Every base image but the empty one is pinned by digest.
    for line in dockerfile.lines().filter(|l| l.starts_with("FROM ")) {
        let image = line.split_whitespace().nth(1).unwrap_or("");
        assert!(
            image == "scratch" || image.contains("@sha256:"),
            "not pinned by digest: {line}"
        );
    }
    let stage = final_stage(&dockerfile);
    assert_eq!(
        stage[0],
        ("FROM".into(), "scratch".into()),
        "a minimal final image"
    );

    // plugin.yaml's command is found on the image's PATH, and the binary is where PATH says.
    let env: Vec<&str> = stage
        .iter()
        .filter(|(i, _)| i == "ENV")
        .flat_map(|(_, r)| r.split_whitespace())
        .collect();
    let path_dirs: Vec<&str> = env
        .iter()
        .find_map(|e| e.strip_prefix("PATH="))
        .expect("ENV PATH")
        .split(':')
        .collect();
    let copies: Vec<&str> = stage
        .iter()
        .filter(|(i, _)| i == "COPY")
        .map(|(_, r)| r.as_str())
        .collect();
    let bin_dest = copies
        .iter()
        .find(|c| c.contains("target/release/cilium-cmp"))
        .and_then(|c| c.split_whitespace().last())
        .expect("the binary is copied");
    let (bin_dir, bin_name) = bin_dest.rsplit_once('/').unwrap();
    assert_eq!(
        bin_name, command,
        "plugin.yaml runs the binary the image holds"
    );
    assert!(
        path_dirs.contains(&bin_dir),
        "{bin_dir} is on PATH {path_dirs:?}"
    );
    assert!(
        copies.contains(&"plugin.yaml /home/argocd/cmp-server/config/plugin.yaml"),
        "plugin.yaml is baked in where argocd-cmp-server reads it"
    );
    assert!(env.contains(
        &format!(
            "CILIUM_CMP_CHART_DIR={}",
            cilium_cmp_gitops::argocd::DEFAULT_CHART_DIR
        )
        .as_str()
    ));
    assert!(copies.iter().any(|c| c.ends_with(&format!(
        "{}/",
        cilium_cmp_gitops::argocd::DEFAULT_CHART_DIR
    ))));
    assert!(stage.contains(&("USER".into(), "999:999".into())));
    assert!(
        dockerfile.contains("COPY sidecar/charts.sha256") && dockerfile.contains("sha256sum -c")
    );

    // The kustomize patch and the Helm values describe the same container and volumes.
    let patch = yaml("sidecar/kustomize/component/argocd-repo-server-patch.yaml");
    let helm = yaml("sidecar/helm/values.yaml");
    let kc = container(&patch["spec"]["template"]["spec"]["containers"]);
    let hc = container(&helm["repoServer"]["extraContainers"]);
    assert_eq!(kc, hc, "kustomize and Helm add the same sidecar");
    assert_eq!(
        patch["spec"]["template"]["spec"]["volumes"],
        helm["repoServer"]["volumes"]
    );
    assert_eq!(kc["command"], json!(["/var/run/argocd/argocd-cmp-server"]));
    assert_eq!(kc["securityContext"]["runAsUser"], json!(999.0));
    assert_eq!(kc["securityContext"]["runAsGroup"], json!(999.0));
    let tmp = &patch["spec"]["template"]["spec"]["volumes"][0];
    assert_eq!(tmp["name"], json!("cilium-cmp-tmp"));
    assert!(
        tmp["emptyDir"]["sizeLimit"].is_string(),
        "the scratch space is bounded"
    );
    assert_eq!(kc["securityContext"]["runAsNonRoot"], json!(true));
    let mounts: Vec<(String, String)> = kc["volumeMounts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["name"].as_str().unwrap().to_string(),
                m["mountPath"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    for (name, path) in [
        ("var-files", "/var/run/argocd"),
        ("plugins", "/home/argocd/cmp-server/plugins"),
    ] {
        assert!(
            mounts.contains(&(name.into(), path.into())),
            "{name} at {path}"
        );
    }
    let tmp = mounts
        .iter()
        .find(|(_, p)| p == "/tmp")
        .map(|(n, _)| n.clone())
        .expect("a /tmp mount");
    assert!(
        patch["spec"]["template"]["spec"]["volumes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|v| v["name"] == tmp.as_str() && v["emptyDir"].is_object()),
        "/tmp is the sidecar's own emptyDir"
    );
    assert!(
        !mounts
            .iter()
            .any(|(_, p)| p.starts_with("/home/argocd/cmp-server/config")),
        "nothing hides the baked plugin.yaml"
    );
    let image = kc["image"].as_str().unwrap();
    assert!(
        dockerfile.contains(&format!("-t {image} ")),
        "the Dockerfile's build command tags {image}"
    );

    // Applications select this plugin by its socket name.
    for f in [
        "sidecar/argocd/application.yaml",
        "sidecar/argocd/app-of-apps-child.yaml",
    ] {
        assert_eq!(
            yaml(f)["spec"]["source"]["plugin"]["name"],
            plugin_name().as_str(),
            "{f}"
        );
    }
    let component = yaml("sidecar/kustomize/component/kustomization.yaml");
    assert_eq!(
        component["patches"][0]["path"],
        "argocd-repo-server-patch.yaml"
    );
}

/// `sidecar/charts.sha256`: (sha256, archive file name) per line.
fn pins() -> Vec<(String, String)> {
    read("sidecar/charts.sha256")
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let (sum, file) = l
                .split_once("  ")
                .expect("sha256sum format: HASH two spaces FILE");
            (sum.to_string(), file.to_string())
        })
        .collect()
}

/// The pinned sha256 of every supported release's official chart archive.
fn pinned_chart_archives() {
    let pinned = pins();
    let files: Vec<&str> = pinned.iter().map(|(_, f)| f.as_str()).collect();
    let wanted: Vec<String> = cilium_cmp_render::versions::supported()
        .map(|v| format!("cilium-{v}.tgz"))
        .collect();
    assert_eq!(files, wanted, "one archive per supported version, in order");
    // The binary's pins are this file, compiled in; the image's build stage must have it.
    let compiled: Vec<(String, String)> = cilium_cmp_render::chart::pins::pins()
        .map(|(v, sum)| (sum.to_string(), format!("cilium-{v}.tgz")))
        .collect();
    assert_eq!(
        compiled, pinned,
        "the binary's pins are sidecar/charts.sha256"
    );
    assert!(
        read("sidecar/Dockerfile").contains("COPY sidecar/charts.sha256 ./sidecar/charts.sha256"),
        "the Dockerfile's build stage copies the pins the binary compiles in"
    );
    for (sum, _) in &pinned {
        assert!(
            sum.len() == 64
                && sum
                    .bytes()
                    .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
        );
    }
}

/// Each pin is the sha256 of the official archive (all of them are in ../shared/charts).
fn the_pins_are_the_official_archives() {
    let pinned = pins();
    // Where the official archives are on this machine, the pins must be their hashes.
    let dirs: Vec<PathBuf> = [
        std::env::var_os("CILIUM_CMP_CHART_DIR").map(PathBuf::from),
        Some(Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/charts")),
        std::env::var_os("HOME").map(|h| Path::new(&h).join("cilium-charts")),
        Some(root().join("../shared/charts")),
    ]
    .into_iter()
    .flatten()
    .collect();
    let mut compared = 0;
    for (sum, file) in &pinned {
        if let Some(path) = dirs.iter().map(|d| d.join(file)).find(|p| p.is_file()) {
            let bytes = std::fs::read(&path).unwrap();
            let got: String = Sha256::digest(&bytes)
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect();
            assert_eq!(&got, sum, "{}", path.display());
            compared += 1;
        }
    }
    assert_eq!(
        compared,
        pinned.len(),
        "every pin is compared with its archive"
    );
}

/// The tests' Python (a venv under target/ with PyYAML, jsonschema and kubernetes-validate).
fn python() -> &'static Path {
    harness::python()
}
