//! The Argo CD plugin contract: `generate` renders what `render` renders for the same inputs,
//! taken the Argo CD way; every error ends with a non-zero exit and nothing on stdout; the lock
//! stops unreviewed changes; the repository's own plugin.yaml runs through the shared emulator of
//! argocd-cmp-server (`../shared/tools/cmp_emulator.py`); the Talos patch carries the same bytes.
//!
//! Tests that need objects in the render check, while the renderer renders none, that the empty
//! stream is refused instead (the other half of the contract), and print a note.

use crate::support::harness;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use cilium_cmp_gitops::argocd::{self, GenerateError};
use serde_json::Value;

use crate::support::charts;
use crate::support::scratch;
use scratch::Scratch;

const EMULATOR: &str = "tools/cmp_emulator.py";

pub fn tests() -> Vec<harness::Trial> {
    harness::group(
        file!(),
        vec![
            harness::test(
                "the_unknown_values_refusal_names_the_fix_that_works",
                the_unknown_values_refusal_names_the_fix_that_works,
            )
            .shared("charts"),
            harness::test(
                "generate_renders_what_render_renders_from_argo_cd_inputs",
                generate_renders_what_render_renders_from_argo_cd_inputs,
            )
            .shared("charts"),
            harness::test(
                "generate_inputs_equal_the_render_flags",
                generate_inputs_equal_the_render_flags,
            )
            .shared("charts"),
            harness::test(
                "the_cilium_version_has_one_precedence",
                the_cilium_version_has_one_precedence,
            )
            .shared("charts"),
            harness::test(
                "every_error_names_the_value_and_prints_nothing",
                every_error_names_the_value_and_prints_nothing,
            )
            .shared("charts"),
            harness::test(
                "a_partial_extraction_bounds_values_files_by_what_was_extracted",
                a_partial_extraction_bounds_values_files_by_what_was_extracted,
            )
            .shared("charts"),
            harness::test(
                "a_lock_mismatch_names_both_hashes_and_the_command",
                a_lock_mismatch_names_both_hashes_and_the_command,
            )
            .shared("charts"),
            harness::test(
                "contract_through_the_argocd_cmp_server_emulator",
                contract_through_the_argocd_cmp_server_emulator,
            )
            .shared("charts")
            .shared(EMULATOR)
            .python(),
            harness::test(
                "discovery_matches_only_application_folders",
                discovery_matches_only_application_folders,
            )
            .shared("charts")
            .shared(EMULATOR)
            .python(),
            harness::test(
                "plugin_yaml_is_a_valid_config_management_plugin",
                plugin_yaml_is_a_valid_config_management_plugin,
            )
            .shared("charts"),
            harness::test(
                "talos_patch_contents_are_the_plugin_render",
                talos_patch_contents_are_the_plugin_render,
            )
            .shared("charts")
            .python(),
        ],
    )
}

const APP: &str = "examples/argocd/cilium";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_cilium-cmp"))
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for e in std::fs::read_dir(from).expect("read_dir") {
        let e = e.expect("entry");
        let p = e.path();
        if p.is_dir() {
            copy_dir(&p, &to.join(e.file_name()));
        } else {
            std::fs::copy(&p, to.join(e.file_name())).expect("copy");
        }
    }
}

/// A repository holding a copy of the example (apps/cilium + apps/common), to write locks in.
fn example_repo() -> Scratch {
    let s = Scratch::new("repo");
    copy_dir(&root().join("examples/argocd"), &s.0.join("apps"));
    s
}

/// The plugin's chart folder: a folder of the test's own holding links to the official
/// archives (`../shared/charts`), so a test may add archives without touching those.
fn empty_chart_dir() -> Scratch {
    let s = Scratch::new("charts");
    for entry in std::fs::read_dir(charts::dir()).expect("../shared/charts") {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|x| x == "tgz") {
            std::os::unix::fs::symlink(&path, s.0.join(path.file_name().unwrap())).unwrap();
        }
    }
    s
}

/// Argo CD's variables for the example, plus `extra`.
fn argocd_env(
    source_path: &str,
    charts: &Path,
    extra: &[(&str, &str)],
) -> BTreeMap<String, String> {
    let mut env: BTreeMap<String, String> = [
        ("ARGOCD_APP_NAME", "cilium"),
        ("ARGOCD_APP_NAMESPACE", "kube-system"),
        ("ARGOCD_APP_SOURCE_PATH", source_path),
        (
            "ARGOCD_APP_REVISION",
            "0123456789abcdef0123456789abcdef01234567",
        ),
        ("KUBE_VERSION", "1.35.0"),
        (
            "KUBE_API_VERSIONS",
            "apps/v1,apps/v1/Deployment,policy/v1,v1,v1/ConfigMap",
        ),
        ("ARGOCD_APP_PARAMETERS", "null"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    env.insert("CILIUM_CMP_CHART_DIR".into(), charts.display().to_string());
    for (k, v) in extra {
        env.insert(k.to_string(), v.to_string());
    }
    env
}

/// Runs `cilium-cmp generate` in `dir` with exactly `env` (plus a PATH), as argocd-cmp-server does.
fn generate(dir: &Path, env: &BTreeMap<String, String>) -> Output {
    Command::new(bin())
        .arg("generate")
        .current_dir(dir)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .envs(env)
        .output()
        .expect("runs")
}

fn render(args: &[&str]) -> Output {
    Command::new(bin())
        .arg("render")
        .args(args)
        .current_dir(root())
        .env_clear()
        .env("CILIUM_CMP_CHART_DIR", charts::dir())
        .output()
        .expect("runs")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A render of the example: it succeeded and holds the agent's DaemonSet, so a regression to an
/// empty or refused render fails every test that compares with it.
fn assert_renders(o: &Output, what: &str) {
    assert!(o.status.success(), "{what} failed: {}", stderr(o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("kind: DaemonSet") && text.contains("name: cilium\n"),
        "{what} holds no agent DaemonSet"
    );
}

/// `generate` and `render` both render, byte for byte the same.
fn assert_same(generated: &Output, rendered: &Output) {
    assert_renders(rendered, "render");
    assert_renders(generated, "generate");
    assert!(
        generated.stdout == rendered.stdout,
        "generate and render differ"
    );
}

fn generate_renders_what_render_renders_from_argo_cd_inputs() {
    let charts = empty_chart_dir();
    let app = root().join(APP);
    let api = "apps/v1,apps/v1/Deployment,policy/v1,v1,v1/ConfigMap";
    let reference = render(&[
        "--cilium-version",
        "1.18.11",
        "-f",
        "examples/argocd/common/values.yaml",
        "-f",
        "examples/argocd/cilium/values.yaml",
        "-f",
        "examples/argocd/common/values.yaml",
        "--set",
        "operator.replicas=2",
        "--set",
        "cluster.id=7,cluster.name=from-param",
        "--namespace",
        "cilium",
        "--kube-version",
        "1.34.2",
        "--api-versions",
        api,
    ]);
    let params = r#"[{"name":"cilium-version","string":"1.18.11"},{"array":["../common/values.yaml"],"name":"values-files"},{"array":["cluster.id=7,cluster.name=from-param"],"name":"set"}]"#;
    for kube in ["1.34.2", "v1.34.2"] {
        let env = argocd_env(
            APP,
            &charts.0,
            &[
                ("ARGOCD_APP_NAMESPACE", "cilium"),
                ("KUBE_VERSION", kube),
                ("KUBE_API_VERSIONS", api),
                ("ARGOCD_ENV_SET", "operator.replicas=2"),
                ("ARGOCD_APP_PARAMETERS", params),
            ],
        );
        assert_same(&generate(&app, &env), &reference);
    }
    // The PARAM_* variables alone (as a user reproducing a run by hand has them) give the same.
    let mut env = argocd_env(
        APP,
        &charts.0,
        &[
            ("ARGOCD_APP_NAMESPACE", "cilium"),
            ("KUBE_VERSION", "1.34.2"),
            ("KUBE_API_VERSIONS", api),
            ("ARGOCD_ENV_SET", "operator.replicas=2"),
            ("PARAM_CILIUM_VERSION", "1.18.11"),
            ("PARAM_VALUES_FILES_0", "../common/values.yaml"),
            ("PARAM_SET_0", "cluster.id=7,cluster.name=from-param"),
        ],
    );
    env.remove("ARGOCD_APP_PARAMETERS");
    assert_same(&generate(&app, &env), &reference);

    // Both Argo CD forms of KUBE_VERSION (before and after Argo CD 3.4) name the same cluster.
    let short = render(&[
        "--cilium-version",
        "1.20.0",
        "-f",
        "examples/argocd/common/values.yaml",
        "-f",
        "examples/argocd/cilium/values.yaml",
        "--kube-version",
        "1.35.0",
        "--api-versions",
        api,
    ]);
    for kube in ["1.35", "1.35.0"] {
        let env = argocd_env(APP, &charts.0, &[("KUBE_VERSION", kube)]);
        assert_same(&generate(&app, &env), &short);
    }
}

/// The inputs `generate` hands the renderer are exactly those `render` builds from its flags,
/// whatever the renderer's components do with them.
fn generate_inputs_equal_the_render_flags() {
    let charts = empty_chart_dir();
    let env = argocd_env(
        APP,
        &charts.0,
        &[
            ("KUBE_VERSION", "1.35"),
            ("ARGOCD_ENV_VALUES_FILES", "../common/values.yaml"),
            ("ARGOCD_ENV_SET", "a=1"),
            (
                "ARGOCD_APP_PARAMETERS",
                r#"[{"name":"set","array":["b=2","c=3"]},{"name":"values-files","array":["values.yaml"]}]"#,
            ),
        ],
    );
    let got = argocd::generate_inputs(&env, &root().join(APP)).expect("inputs");
    assert_eq!(got.cilium.to_string(), "1.20.0");
    assert_eq!(got.namespace, "kube-system");
    assert_eq!(got.kube_version.helm_form(), "1.35.0");
    assert_eq!(
        got.api_versions.as_slice(),
        [
            "apps/v1",
            "apps/v1/Deployment",
            "policy/v1",
            "v1",
            "v1/ConfigMap"
        ]
    );
    assert_eq!(got.set, ["a=1", "b=2", "c=3"]);
    let names: Vec<&str> = got.values_files.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "examples/argocd/common/values.yaml",
            "examples/argocd/cilium/values.yaml",
            "examples/argocd/common/values.yaml",
            "examples/argocd/cilium/values.yaml",
        ]
    );
    for (name, text) in &got.values_files {
        assert_eq!(
            *text,
            std::fs::read_to_string(root().join(name)).expect("read"),
            "{name}"
        );
    }
    assert!(
        got.chart.is_some(),
        "the archive of the release from the chart folder"
    );
}

fn the_cilium_version_has_one_precedence() {
    let charts = empty_chart_dir();
    let repo = example_repo();
    let app = repo.0.join("apps/cilium");
    let version = |extra: &[(&str, &str)]| -> Result<String, GenerateError> {
        let env = argocd_env("apps/cilium", &charts.0, extra);
        argocd::generate_inputs(&env, &app).map(|i| i.cilium.to_string())
    };
    let param = (
        "ARGOCD_APP_PARAMETERS",
        r#"[{"name":"cilium-version","string":"1.18.3"}]"#,
    );
    let plugin_env = ("ARGOCD_ENV_CILIUM_VERSION", "v1.18.2");
    assert_eq!(version(&[]).unwrap(), "1.20.0", "the settings file");
    assert_eq!(
        version(&[plugin_env]).unwrap(),
        "1.18.2",
        "plugin env over the file"
    );
    assert_eq!(
        version(&[plugin_env, param]).unwrap(),
        "1.18.3",
        "parameters over both"
    );

    std::fs::write(app.join("cilium-cmp.yaml"), "valuesFiles: [values.yaml]\n").unwrap();
    let err = version(&[]).unwrap_err().to_string();
    assert!(
        err.contains("no Cilium version") && err.contains("apps/cilium/cilium-cmp.yaml"),
        "{err}"
    );
    assert_eq!(version(&[param]).unwrap(), "1.18.3");
}

/// Each case: what to change, and a text the error must contain. Every one must exit non-zero
/// with nothing on stdout (Argo CD shows stderr; an empty stdout would be accepted and pruned).
fn every_error_names_the_value_and_prints_nothing() {
    let charts = empty_chart_dir();
    type Setup = fn(&Path);
    type Case<'a> = (&'a str, Setup, Vec<(&'a str, &'a str)>, &'a str);
    let none: Setup = |_| {};
    let cases: Vec<Case> = vec![
        (
            "no namespace",
            none,
            vec![("ARGOCD_APP_NAMESPACE", "")],
            "spec.destination.namespace",
        ),
        (
            "bad namespace",
            none,
            vec![("ARGOCD_APP_NAMESPACE", "Kube_System")],
            "not a namespace",
        ),
        (
            "no kube version",
            none,
            vec![("KUBE_VERSION", "")],
            "KUBE_VERSION",
        ),
        (
            "bad kube version",
            none,
            vec![("KUBE_VERSION", "latest")],
            "1.35.0",
        ),
        (
            "unknown parameter",
            none,
            vec![(
                "ARGOCD_APP_PARAMETERS",
                r#"[{"name":"values","array":["x"]}]"#,
            )],
            "valid parameters: cilium-version, values-files, set",
        ),
        (
            "parameter type",
            none,
            vec![(
                "ARGOCD_APP_PARAMETERS",
                r#"[{"name":"set","map":{"a":"1"}}]"#,
            )],
            "\"set\"",
        ),
        (
            "parameters json",
            none,
            vec![("ARGOCD_APP_PARAMETERS", "[{")],
            "ARGOCD_APP_PARAMETERS",
        ),
        (
            "unknown plugin env",
            none,
            vec![("ARGOCD_ENV_VERSION", "1.18.1")],
            "CILIUM_VERSION",
        ),
        (
            "unsupported version",
            none,
            vec![("ARGOCD_ENV_CILIUM_VERSION", "1.17.4")],
            "1.18.12",
        ),
        (
            "bad --set",
            none,
            vec![("ARGOCD_ENV_SET", "novalue")],
            "PATH=VALUE",
        ),
        (
            "escaping values file",
            none,
            vec![("ARGOCD_ENV_VALUES_FILES", "../../../etc/passwd")],
            "outside the repository",
        ),
        (
            "absolute values file",
            none,
            vec![("ARGOCD_ENV_VALUES_FILES", "/etc/hostname")],
            "relative to the application folder",
        ),
        (
            "missing values file",
            none,
            vec![("ARGOCD_ENV_VALUES_FILES", "../common/nope.yaml")],
            "apps/common/nope.yaml",
        ),
        (
            "wrong source path",
            none,
            vec![("ARGOCD_APP_SOURCE_PATH", "apps/other")],
            "ARGOCD_APP_SOURCE_PATH",
        ),
        (
            "symlink out of the repository",
            |app| {
                #[cfg(unix)]
                std::os::unix::fs::symlink("/etc/passwd", app.join("link.yaml")).unwrap();
            },
            vec![("ARGOCD_ENV_VALUES_FILES", "link.yaml")],
            "symbolic link to outside the repository",
        ),
        (
            "numeric version",
            |app| {
                std::fs::write(app.join("cilium-cmp.yaml"), "ciliumVersion: 1.18\n").unwrap();
            },
            vec![],
            "quoted string",
        ),
        (
            "unknown settings key",
            |app| {
                std::fs::write(
                    app.join("cilium-cmp.yaml"),
                    "ciliumVersion: \"1.18.12\"\nvalues: [values.yaml]\n",
                )
                .unwrap();
            },
            vec![],
            "valid keys: ciliumVersion, valuesFiles",
        ),
        (
            "no settings file",
            |app| {
                std::fs::remove_file(app.join("cilium-cmp.yaml")).unwrap();
            },
            vec![],
            "cilium-cmp.yaml",
        ),
        (
            "values not a mapping",
            |app| {
                std::fs::write(app.join("values.yaml"), "- a\n").unwrap();
            },
            vec![],
            "values.yaml",
        ),
        (
            "bad lock",
            |app| {
                std::fs::write(app.join("cilium-cmp.lock"), "contentHash: abc\n").unwrap();
            },
            vec![],
            "cilium-cmp lock",
        ),
        (
            "needs the chart archive",
            |app| {
                std::fs::write(
                    app.join("values.yaml"),
                    "cni:\n  iptablesRemoveAWSRules: true\n",
                )
                .unwrap();
            },
            vec![],
            "cilium-1.20.0.tgz",
        ),
    ];
    for (name, setup, extra, expect) in cases {
        let repo = example_repo();
        let app = repo.0.join("apps/cilium");
        setup(&app);
        let env = argocd_env("apps/cilium", &charts.0, &extra);
        let o = generate(&app, &env);
        let e = stderr(&o);
        if name == "needs the chart archive" && (o.status.success() || e.contains("no objects")) {
            // The component that embeds the bundled script is not in this build yet.
            assert!(!o.status.success() || !o.stdout.is_empty(), "{name}");
            continue;
        }
        assert!(!o.status.success(), "{name}: must fail");
        assert!(o.stdout.is_empty(), "{name}: stdout must stay empty");
        assert!(e.starts_with("error: "), "{name}: {e}");
        assert!(e.contains(expect), "{name}: {e:?} lacks {expect:?}");
    }
}

/// With `reposerver.plugin.use.manifest.generate.paths`, Argo CD extracts only a subtree: the
/// boundary for values files is then what was extracted, and commands still name the full path.
fn a_partial_extraction_bounds_values_files_by_what_was_extracted() {
    let charts = empty_chart_dir();
    let repo = example_repo();
    let app = repo.0.join("apps/cilium");
    let env = argocd_env("clusters/prod/apps/cilium", &charts.0, &[]);
    let g = argocd::plan(&env, &app).expect("plan");
    assert_eq!(g.repo.root, repo.0.canonicalize().unwrap());
    assert_eq!(g.repo.app_rel, "clusters/prod/apps/cilium");
    assert!(argocd::reproduce_command(&g).contains(" lock clusters/prod/apps/cilium "));
    let env = argocd_env(
        "clusters/prod/apps/cilium",
        &charts.0,
        &[("ARGOCD_ENV_VALUES_FILES", "../../../x.yaml")],
    );
    let err = argocd::plan(&env, &app).unwrap_err().to_string();
    assert!(err.contains("outside the repository"), "{err}");
}

fn a_lock_mismatch_names_both_hashes_and_the_command() {
    let charts = empty_chart_dir();
    let repo = example_repo();
    let app = repo.0.join("apps/cilium");
    let zero = format!("sha256:{}", "0".repeat(64));
    std::fs::write(
        app.join("cilium-cmp.lock"),
        format!("contentHash: {zero}\n"),
    )
    .unwrap();
    let env = argocd_env(
        "apps/cilium",
        &charts.0,
        &[
            ("KUBE_VERSION", "1.35"),
            ("ARGOCD_ENV_SET", "operator.replicas=2"),
            (
                "ARGOCD_APP_PARAMETERS",
                r#"[{"name":"values-files","array":["../common/values.yaml"]},{"name":"set","array":["podAnnotations.note=it's"]}]"#,
            ),
        ],
    );
    let g = argocd::plan(&env, &app).expect("plan");
    assert_eq!(g.lock.as_deref(), Some(zero.as_str()));
    let rendered = format!("sha256:{}", "1".repeat(64));
    let err = argocd::check_lock(&g, &rendered).unwrap_err().to_string();
    assert!(err.contains(&zero) && err.contains(&rendered), "{err}");
    let command = "cilium-cmp lock apps/cilium --cilium-version 1.20.0 --namespace kube-system --kube-version 1.35.0 --api-versions apps/v1,apps/v1/Deployment,policy/v1,v1,v1/ConfigMap --values ../common/values.yaml --set operator.replicas=2 --set 'podAnnotations.note=it'\\''s'";
    assert!(err.contains(command), "{err}");
    assert!(argocd::check_lock(&g, &zero).is_ok());

    // Through the binary: the mismatch fails; the printed command, run from the repository root,
    // reproduces the render and writes the lock; then the plugin renders the same bytes.
    let o = generate(&app, &env);
    assert!(!o.status.success() && o.stdout.is_empty());
    let e = stderr(&o);
    let line = e
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with("cilium-cmp lock "))
        .unwrap_or_else(|| panic!("the command is printed: {e}"))
        .to_string();
    let bin_dir = bin().parent().expect("bin dir").to_path_buf();
    let lock_run = Command::new("sh")
        .arg("-c")
        .arg(&line)
        .current_dir(&repo.0)
        .env("PATH", format!("{}:/usr/bin:/bin", bin_dir.display()))
        .env("CILIUM_CMP_CHART_DIR", &charts.0)
        .output()
        .expect("sh");
    assert!(lock_run.status.success(), "{}", stderr(&lock_run));
    assert!(lock_run.stdout.is_empty(), "lock prints no render");
    // The printed preview command, run the same way, prints what the plugin then generates.
    let preview_line = e
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with("cilium-cmp render-folder "))
        .unwrap_or_else(|| panic!("the preview command is printed: {e}"))
        .to_string();
    let preview_run = Command::new("sh")
        .arg("-c")
        .arg(&preview_line)
        .current_dir(&repo.0)
        .env("PATH", format!("{}:/usr/bin:/bin", bin_dir.display()))
        .env("CILIUM_CMP_CHART_DIR", &charts.0)
        .output()
        .expect("sh");
    assert!(preview_run.status.success(), "{}", stderr(&preview_run));
    let after = generate(&app, &env);
    assert!(after.status.success(), "{}", stderr(&after));
    assert!(
        after.stdout == preview_run.stdout,
        "render-folder prints the render the plugin generates"
    );
    let lock = std::fs::read_to_string(app.join("cilium-cmp.lock")).unwrap();
    let hash = lock
        .lines()
        .find_map(|l| l.strip_prefix("contentHash: "))
        .unwrap_or_else(|| panic!("no contentHash line: {lock}"))
        .to_string();
    assert!(String::from_utf8_lossy(&after.stdout)
        .contains(&format!("cilium-cmp.io/content-hash: {hash}")));

    // A values edit is now refused until the lock is updated.
    let values = app.join("values.yaml");
    let mut text = std::fs::read_to_string(&values).unwrap();
    text.push_str("image:\n  pullPolicy: Always\n");
    std::fs::write(&values, text).unwrap();
    let edited = generate(&app, &env);
    assert!(!edited.status.success() && edited.stdout.is_empty());
    assert!(stderr(&edited).contains(&hash));
}

/// Numbers compared as numbers (the project's reader keeps Helm's float64s, PyYAML/JSON ints).
fn normalise(v: &mut Value) {
    match v {
        Value::Number(n) => {
            if let Some(f) = n.as_f64() {
                *v = serde_json::json!(f);
            }
        }
        Value::Array(a) => a.iter_mut().for_each(normalise),
        Value::Object(m) => m.values_mut().for_each(normalise),
        _ => {}
    }
}

fn objects_of_stream(text: &str) -> Vec<Value> {
    cilium_cmp_yaml::yaml::parse_stream(text)
        .expect("stream parses")
        .into_iter()
        .map(|d| {
            let mut v = d.value;
            normalise(&mut v);
            v
        })
        .collect()
}

/// The shared emulator, for a test registered with `.shared(EMULATOR)`.
fn emulator() -> PathBuf {
    harness::shared(EMULATOR)
}

fn run_emulator(app_path: &str, charts: &Path, extra: &[&str]) -> (i32, Value) {
    let bin_dir = bin().parent().expect("bin dir").to_path_buf();
    let o = Command::new(python())
        .arg(emulator())
        .args(["--plugin-yaml"])
        .arg(root().join("plugin.yaml"))
        .arg("--repo")
        .arg(root())
        .args(["--app-path", app_path])
        .args(["--tar-exclude", ".git", "--tar-exclude", "target"])
        .args(["--isolate-env", "--show-manifests"])
        .arg("--sidecar-env")
        .arg(format!("CILIUM_CMP_CHART_DIR={}", charts.display()))
        .args(extra)
        // The emulator plays argocd-cmp-server: its PATH is the sidecar's, where `cilium-cmp` is.
        .env("PATH", format!("{}:/usr/bin:/bin", bin_dir.display()))
        .output()
        .expect("python runs");
    let code = o.status.code().unwrap_or(-1);
    let report: Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|_| {
        panic!(
            "emulator output is not JSON (exit {code}): {}{}",
            String::from_utf8_lossy(&o.stdout),
            stderr(&o)
        )
    });
    (code, report)
}

/// The repository's plugin.yaml, run like the repo-server and argocd-cmp-server run it, on the
/// example folder with parameters and plugin env set.
fn contract_through_the_argocd_cmp_server_emulator() {
    let charts = empty_chart_dir();
    let api = "apps/v1,policy/v1,v1";
    let (code, report) = run_emulator(
        APP,
        &charts.0,
        &[
            "--plugin-name",
            "cilium-cmp-v1",
            "--app-namespace",
            "kube-system",
            "--kube-version",
            "v1.35.0+talos",
            "--api-versions",
            api,
            "--env",
            "SET=operator.replicas=2",
            "--params-json",
            r#"[{"name":"cilium-version","string":"1.18.11"},{"name":"set","array":["cluster.id=3"]}]"#,
        ],
    );
    assert_eq!(report["discovered"], true, "{report}");
    assert_eq!(report["plugin_name"], "cilium-cmp-v1", "{report}");
    let reference = render(&[
        "--cilium-version",
        "1.18.11",
        "-f",
        "examples/argocd/common/values.yaml",
        "-f",
        "examples/argocd/cilium/values.yaml",
        "--set",
        "operator.replicas=2",
        "--set",
        "cluster.id=3",
        "--namespace",
        "kube-system",
        "--kube-version",
        "1.35.0",
        "--api-versions",
        api,
    ]);
    assert_renders(&reference, "render");
    {
        assert_eq!(code, 0, "{report}");
        assert!(report["error"].is_null(), "{report}");
        assert_eq!(report["warnings"], serde_json::json!([]), "{report}");
        let mut got: Vec<Value> = report["manifests"].as_array().expect("manifests").clone();
        for m in got.iter_mut() {
            if let Some(Value::Object(a)) = m.pointer_mut("/metadata/annotations") {
                a.remove("argocd.argoproj.io/tracking-id");
            }
            normalise(m);
        }
        let want = objects_of_stream(&String::from_utf8_lossy(&reference.stdout));
        assert_eq!(got.len(), want.len());
        assert!(
            got == want,
            "the emulator's objects differ from `cilium-cmp render`"
        );
    }
}

/// Discovery matches an application folder of this plugin and nothing else.
fn discovery_matches_only_application_folders() {
    let charts = empty_chart_dir();
    for app in ["examples/argocd/common", "src", "."] {
        let (code, report) = run_emulator(
            app,
            &charts.0,
            &[
                "--plugin-name",
                "cilium-cmp-v1",
                "--app-namespace",
                "kube-system",
            ],
        );
        assert_eq!(report["discovered"], false, "{app}: {report}");
        assert_eq!(code, 1, "{app}");
        let (_, auto) = run_emulator(app, &charts.0, &["--no-plugin-section"]);
        assert_eq!(auto["discovered"], false, "{app}: {auto}");
    }
    let (_, auto) = run_emulator(
        APP,
        &charts.0,
        &["--no-plugin-section", "--app-namespace", "kube-system"],
    );
    assert_eq!(auto["discovered"], true, "{auto}");
}

/// plugin.yaml as argocd-cmp-server reads it (YAML 1.1 into typed fields).
fn plugin_yaml_is_a_valid_config_management_plugin() {
    let text = std::fs::read_to_string(root().join("plugin.yaml")).unwrap();
    let p = cilium_cmp_yaml::yaml::parse_values(&text).unwrap().value;
    assert_eq!(p["kind"], "ConfigManagementPlugin");
    assert_eq!(p["apiVersion"], "argoproj.io/v1alpha1");
    // The name Applications select, by Argo CD 3.x's rule (metadata.name-spec.version when
    // spec.version is set, else metadata.name: cmpserver/plugin/config.go, Address()) and by
    // the proposed 4.0's (metadata.name; a plugin.yaml setting spec.version is refused,
    // argo-cd#16178 and upgrading/3.6-4.0.md): one name on both.
    let name = p["metadata"]["name"].as_str().expect("metadata.name");
    let version = p["spec"]["version"].as_str().unwrap_or("");
    let on_3x = if version.is_empty() {
        name.to_string()
    } else {
        format!("{name}-{version}")
    };
    assert_eq!(
        on_3x,
        cilium_cmp_gitops::import_application::PLUGIN_NAME,
        "the name on Argo CD 3.x"
    );
    assert!(
        p["spec"].get("version").is_none(),
        "Argo CD 4.0 refuses a plugin.yaml with spec.version"
    );
    assert_eq!(
        name,
        cilium_cmp_gitops::import_application::PLUGIN_NAME,
        "the name on Argo CD 4.0"
    );
    assert_eq!(
        p["spec"]["generate"]["command"],
        serde_json::json!(["cilium-cmp", "generate"])
    );
    assert_eq!(p["spec"]["discover"]["fileName"], argocd::SETTINGS_FILE);
    fn strings_only(v: &Value, path: &str) {
        match v {
            Value::Object(m) => m
                .iter()
                .for_each(|(k, v)| strings_only(v, &format!("{path}.{k}"))),
            Value::Array(a) => a
                .iter()
                .enumerate()
                .for_each(|(i, v)| strings_only(v, &format!("{path}[{i}]"))),
            Value::String(_) => {}
            other => panic!("{path} is {other}: every field of this plugin.yaml is a string"),
        }
    }
    strings_only(&p, "");
    let announced: Vec<(&str, &str)> = p["spec"]["parameters"]["static"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            (
                a["name"].as_str().unwrap(),
                a["collectionType"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        announced,
        [
            ("cilium-version", "string"),
            ("values-files", "array"),
            ("set", "array")
        ]
    );
}

/// The Talos patch carries the bytes the plugin generates for the same folder.
fn talos_patch_contents_are_the_plugin_render() {
    let charts = empty_chart_dir();
    let patch = Command::new(bin())
        .args([
            "talos-patch",
            APP,
            "--namespace",
            "kube-system",
            "--kube-version",
            "1.35.0",
        ])
        .args(["--api-versions", "v1,apps/v1"])
        .arg("--chart-dir")
        .arg(&charts.0)
        .current_dir(root())
        .env_clear()
        .output()
        .unwrap();
    let env = argocd_env(
        APP,
        &charts.0,
        &[
            ("KUBE_VERSION", "1.35"),
            ("KUBE_API_VERSIONS", "apps/v1,v1"),
        ],
    );
    let generated = generate(&root().join(APP), &env);
    assert_renders(&generated, "generate");
    assert!(patch.status.success(), "{}", stderr(&patch));
    let doc = cilium_cmp_yaml::yaml::parse_values(&String::from_utf8_lossy(&patch.stdout)).unwrap();
    let items = doc.value["cluster"]["inlineManifests"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(items.len(), 1);
    assert_eq!(items[0]["name"], "cilium");
    assert_eq!(
        items[0]["contents"].as_str().unwrap().as_bytes(),
        generated.stdout.as_slice()
    );
    // Also as another YAML reader sees it (PyYAML, which the emulator uses too).
    let s = Scratch::new("talos");
    let f = s.0.join("patch.yaml");
    std::fs::write(&f, &patch.stdout).unwrap();
    let py = Command::new(python())
        .args(["-c", "import sys,yaml; d=yaml.safe_load(open(sys.argv[1])); sys.stdout.write(d['cluster']['inlineManifests'][0]['contents'])"])
        .arg(&f)
        .output()
        .unwrap();
    assert!(py.status.success(), "{}", stderr(&py));
    assert!(py.stdout == generated.stdout, "PyYAML reads other contents");
}

/// The tests' Python (a venv under target/ with PyYAML, jsonschema and kubernetes-validate).
fn python() -> &'static Path {
    harness::python()
}

/// Values the chart does not know: the plugin's refusal names `fix-values` first, as the exact
/// command to run from the repository root; run there, it fixes the folder, which then generates
/// what the opt-out generated for it before.
fn the_unknown_values_refusal_names_the_fix_that_works() {
    let charts = empty_chart_dir();
    let repo = example_repo();
    let values = repo.0.join("apps/cilium/values.yaml");
    let original = std::fs::read_to_string(&values).unwrap();
    std::fs::write(&values, format!("{original}kubeProxyReplacment: true\n")).unwrap();
    let env = argocd_env("apps/cilium", &charts.0, &[]);
    let refused = generate(&repo.0.join("apps/cilium"), &env);
    assert!(!refused.status.success() && refused.stdout.is_empty());
    let err = stderr(&refused);
    let command = "cilium-cmp fix-values --cilium-version ";
    let at = err.find(command).unwrap_or_else(|| panic!("{err}"));
    assert!(at < err.find("allowUnknownKeys: true").unwrap(), "{err}");
    let line = err[at..].lines().next().unwrap();
    assert!(
        line.ends_with(" apps/common/values.yaml apps/cilium/values.yaml"),
        "{line}"
    );
    assert!(err.contains("relative to the repository root"), "{err}");
    // The library keeps the renderer's error to the end: callers match on its kind.
    match argocd::render_folder(&env, &repo.0.join("apps/cilium"), false) {
        Err(GenerateError::Render(e)) => match *e {
            cilium_cmp_render::error::RenderError::UnknownValues { report, .. } => {
                assert!(report
                    .lines()
                    .iter()
                    .any(|l| l.contains("kubeProxyReplacment")))
            }
            other => panic!("expected UnknownValues: {other}"),
        },
        Err(other) => panic!("expected the render's error: {other}"),
        Ok(_) => panic!("rendered values the chart does not know"),
    }
    // The opt-out's render, for comparison.
    let settings = repo.0.join("apps/cilium/cilium-cmp.yaml");
    let plain = std::fs::read_to_string(&settings).unwrap();
    std::fs::write(&settings, format!("{plain}allowUnknownKeys: true\n")).unwrap();
    let opted = generate(&repo.0.join("apps/cilium"), &env);
    assert_renders(&opted, "generate with allowUnknownKeys");
    std::fs::write(&settings, plain).unwrap();
    let fixed = Command::new(bin())
        .current_dir(&repo.0)
        .env("CILIUM_CMP_CHART_DIR", charts::dir())
        .args(line.split(' ').skip(1))
        .output()
        .unwrap();
    assert_eq!(fixed.status.code(), Some(2), "{}", stderr(&fixed));
    assert!(std::fs::read_to_string(&values)
        .unwrap()
        .starts_with(&original));
    let generated = generate(&repo.0.join("apps/cilium"), &env);
    assert_renders(&generated, "generate after fix-values");
    assert_eq!(generated.stdout, opted.stdout);
}
