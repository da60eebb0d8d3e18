//! Every front-end refusal (usage mistakes, locks, `verify`, `talos-check`, ...) as the binary
//! prints it: its kind, status 1 and an empty stdout (checked here), and its human and JSON forms
//! as snapshots (tests/it/snapshots/). `every_kind_has_a_case` keeps the kinds table of
//! docs/diagnostics.md and these cases (with diagnostics.rs's) in step.

use crate::support::charts;
use crate::support::git::git;
use crate::support::harness;
use crate::support::refusal;
use crate::support::scratch::Scratch;

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::process::Command;

use serde_json::Value;

/// One case per kind it provokes.
const CASES: &[(&str, fn())] = &[
    ("usage.conflict", usage_conflict),
    ("usage.missing", usage_missing),
    ("usage.stdin", usage_stdin),
    ("usage.repeated", usage_repeated),
    ("usage.too-many", usage_too_many),
    ("usage.folder", usage_folder),
    ("usage.exists", usage_exists),
    ("usage.environment", usage_environment),
    ("lock.missing", lock_missing),
    ("lock.stale", lock_stale),
    ("lock.folders-failed", lock_folders_failed),
    ("lock.no-folders", lock_no_folders),
    ("verify.not-yaml", verify_not_yaml),
    ("verify.mismatch", verify_mismatch),
    ("verify.unstamped", verify_unstamped),
    ("talos.machine-config", talos_machine_config),
    ("kube-version.unsupported", kube_too_old),
    ("input.encoding", not_utf8_values),
    ("folder.values-file", absent_listed_values_file),
    ("argocd.environment", parameters_not_json),
    ("chart.unreadable", archive_not_gzip),
    ("chart.unlisted", unlisted_not_stored),
    ("input.too-large", values_file_too_large),
    ("input.file", verify_absent_file),
    ("version.unknown", render_unknown_version),
    ("argocd.parameter", unknown_plugin_parameter),
    ("folder.lock-mismatch", generate_against_another_lock),
    ("talos.inline-manifest", talos_inline_manifest_not_yaml),
    ("chart.repository", fetch_from_ftp),
    ("chart.fetch", fetch_from_closed_port),
    ("output.file", render_over_read_only_file),
    ("render.empty", render_of_a_chart_without_objects),
    ("application.syntax", import_not_yaml),
    ("application.refused", import_a_config_map),
    ("application.values", import_values_of_the_chart_package),
    ("live.syntax", adopt_live_not_yaml),
    ("live.dump", adopt_live_not_objects),
    ("diff.same-inputs", diff_of_the_same_inputs),
    ("diff.base", diff_of_a_folder_on_neither_side),
    ("git.failed", diff_against_no_such_revision),
    ("fix.refused", fix_values_of_an_umbrella_chart),
    ("chart.fail", a_chart_that_fails),
    ("chart.template", a_template_that_fails),
    ("chart.not-yaml", a_template_that_prints_no_yaml),
    ("chart.nondeterministic", a_template_that_mints_random_data),
    ("engine.limit", a_template_that_includes_itself),
];

/// Kinds whose case is in diagnostics.rs (checked there, with their spans).
const IN_DIAGNOSTICS: &[&str] = &[
    "values.syntax",
    "values.not-a-mapping",
    "values.unknown-key",
    "values.renamed-key",
    "values.repeated-key",
    "values.schema",
    "values.admission",
    "values.nondeterministic",
    "values.set-expression",
    "folder.settings",
    "kube-version.invalid",
    "chart.archive-missing",
    "input.file",
];

/// Kinds no command line can provoke, and why.
const NOT_PROVOKABLE: &[(&str, &str)] = &[
    (
        "lock.search",
        "needs a folder the walk cannot read; tests may run as root, which reads every folder",
    ),
    (
        "fix.render-changed",
        "it is a fault of fix-values itself, which its tests keep from happening",
    ),
    (
        "diff.compare",
        "both sides of a `diff` are the chart's renders, which are always objects",
    ),
    (
        "output.stamp",
        "a render that reads as YAML can always be stamped",
    ),
];

/// The fallbacks, for an error no kind above names: every refusal found to reach one gets a kind
/// of its own (and a case here) instead, so none has a case.
const NO_CASE_YET: &[&str] = &["io", "error"];

pub fn tests() -> Vec<harness::Trial> {
    let mut tests: Vec<harness::Test> = CASES
        .iter()
        .map(|(kind, body)| harness::test(&kind.replace(['.', '-'], "_"), *body).shared("charts"))
        .collect();
    tests.push(harness::test(
        "every_kind_has_a_case",
        every_kind_has_a_case,
    ));
    harness::group(file!(), tests)
}

/// Runs the binary in `dir` with `args`, once per `--error-format`: both must fail with status 1
/// and nothing on stdout; the JSON form must be one object on one line of kind `kind`. Both forms
/// are snapshotted as `name`, with the scratch folder and content hashes redacted.
fn refuse(kind: &str, dir: &Scratch, args: &[&str], env: &[(&str, OsString)]) {
    let (human, json_text) = refusal::both_forms(dir, args, env);
    // A repository-wide run says each folder's outcome first, as plain lines; the diagnostic is
    // the one JSON object, on the last line.
    let objects = json_text.lines().filter(|l| l.starts_with('{')).count();
    assert_eq!(objects, 1, "{json_text}");
    let json: Value = serde_json::from_str(json_text.lines().last().unwrap()).unwrap();
    assert_eq!(json["kind"], kind, "{json_text}");
    let name = kind.replace('.', "_");
    insta::assert_snapshot!(format!("{name}_human"), human);
    insta::assert_json_snapshot!(format!("{name}_json"), json);
}

/// Runs the binary in `dir` with `args`; it must succeed (the step before a refusal).
fn succeed(dir: &Scratch, args: &[&str]) {
    let mut c = Command::new(env!("CARGO_BIN_EXE_cilium-cmp"));
    charts::give(&mut c);
    let o = c.current_dir(&dir.0).args(args).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

/// A scratch folder with the application folder `app` naming Cilium 1.20.0.
fn with_app() -> Scratch {
    let dir = Scratch::new("refusal");
    dir.write("app/cilium-cmp.yaml", "ciliumVersion: \"1.20.0\"\n");
    dir.write("app/values.yaml", "{}\n");
    dir
}

fn usage_conflict() {
    let dir = Scratch::new("refusal");
    let args = ["diff", "--base", "main", "--cilium-version", "1.20.0"];
    refuse("usage.conflict", &dir, &args, &[]);
}

fn usage_missing() {
    let dir = Scratch::new("refusal");
    refuse("usage.missing", &dir, &["diff", "app"], &[]);
}

fn usage_stdin() {
    let dir = Scratch::new("refusal");
    let args = ["fix-values", "--cilium-version", "1.20.0", "-"];
    refuse("usage.stdin", &dir, &args, &[]);
}

fn usage_repeated() {
    let dir = Scratch::new("refusal");
    dir.write("a.yaml", "debug:\n  enabled: true\n");
    let args = [
        "fix-values",
        "--cilium-version",
        "1.20.0",
        "a.yaml",
        "a.yaml",
    ];
    refuse("usage.repeated", &dir, &args, &[]);
}

fn usage_too_many() {
    let dir = Scratch::new("refusal");
    dir.write("live.yaml", "{}\n");
    let mut args = vec!["adopt-check", "--cilium-version", "1.20.0"];
    for _ in 0..=cilium_cmp_yaml::limits::MAX_LIVE_FILES {
        args.extend(["--live", "live.yaml"]);
    }
    refuse("usage.too-many", &dir, &args, &[]);
}

fn usage_folder() {
    import_application_refused("usage.folder", Scratch::new("refusal"), "/absolute/app");
    // A --repo-root that names no folder is the same slip, in every command that takes one.
    let dir = Scratch::new("refusal");
    dir.write("file", "");
    for args in [
        &["lock", "--repo-root", "missing"][..],
        &["lock", "--check", "--repo-root", "file"],
        &["fleet-check", "--repo-root", "missing"],
    ] {
        let (_, json) = refusal::both_forms(&dir, args, &[] as &[(&str, &str)]);
        let d: Value = serde_json::from_str(json.trim_end()).unwrap();
        assert_eq!(d["kind"], "usage.folder", "{args:?}: {json}");
    }
}

fn usage_exists() {
    import_application_refused("usage.exists", with_app(), "app");
}

/// `import-application` of a minimal Application into `to`, below `dir`.
fn import_application_refused(kind: &str, dir: Scratch, to: &str) {
    import_refused(
        kind,
        dir,
        to,
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\n",
    );
}

/// `import-application` of the Application `app` into `to`, below `dir`.
fn import_refused(kind: &str, dir: Scratch, to: &str, app: &str) {
    dir.write("app.yaml", app);
    let args = [
        "import-application",
        "--to",
        to,
        "--repo-url",
        "https://git.example.com/r.git",
        "app.yaml",
    ];
    refuse(kind, &dir, &args, &[]);
}

fn import_not_yaml() {
    import_refused(
        "application.syntax",
        Scratch::new("refusal"),
        "app",
        "a: [\n",
    );
}

fn import_a_config_map() {
    let app = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cilium\n";
    import_refused("application.refused", Scratch::new("refusal"), "app", app);
}

/// A values file of the chart package itself, which only Helm's download has.
fn import_values_of_the_chart_package() {
    let app = "apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: cilium
  namespace: argocd
spec:
  destination:
    server: https://kubernetes.default.svc
    namespace: kube-system
  source:
    repoURL: https://helm.cilium.io/
    chart: cilium
    targetRevision: \"1.20.0\"
    helm:
      valueFiles: [values-prod.yaml]
";
    import_refused("application.values", Scratch::new("refusal"), "app", app);
}

/// `adopt-check` of the defaults against the dump `live`.
fn adopt_refused(kind: &str, live: &str) {
    let dir = Scratch::new("refusal");
    dir.write("values.yaml", "{}\n");
    dir.write("live.yaml", live);
    let args = [
        "adopt-check",
        "--cilium-version",
        "1.20.0",
        "-f",
        "values.yaml",
        "--live",
        "live.yaml",
    ];
    refuse(kind, &dir, &args, &[]);
}

fn adopt_live_not_yaml() {
    adopt_refused("live.syntax", "a: [\n");
}

fn adopt_live_not_objects() {
    adopt_refused("live.dump", "kind: DaemonSet\n");
}

fn diff_of_the_same_inputs() {
    let dir = Scratch::new("refusal");
    dir.write("values.yaml", "{}\n");
    let args = ["diff", "--cilium-version", "1.20.0", "-f", "values.yaml"];
    refuse("diff.same-inputs", &dir, &args, &[]);
}

/// A scratch folder that is a git work tree with one commit (of `values.yaml`).
fn committed() -> Scratch {
    let dir = Scratch::new("refusal");
    dir.write("values.yaml", "{}\n");
    git(&dir.0, &["init", "-q", "."]);
    git(&dir.0, &["add", "."]);
    git(&dir.0, &["commit", "-qm", "values"]);
    dir
}

fn diff_of_a_folder_on_neither_side() {
    refuse(
        "diff.base",
        &committed(),
        &["diff", "--base", "HEAD", "app"],
        &[],
    );
}

fn diff_against_no_such_revision() {
    let args = ["diff", "--base", "no-such-revision"];
    refuse("git.failed", &committed(), &args, &[]);
}

/// Values nested under `cilium:`, as an umbrella chart takes them: moving them is the user's
/// call, so the file is left as it was, with no patch.
fn fix_values_of_an_umbrella_chart() {
    let dir = Scratch::new("refusal");
    let text = "cilium:\n  debug:\n    enabled: true\n";
    let file = dir.write("values.yaml", text);
    let args = ["fix-values", "--cilium-version", "1.20.0", "values.yaml"];
    refuse("fix.refused", &dir, &args, &[]);
    assert_eq!(std::fs::read_to_string(file).unwrap(), text);
}

fn usage_environment() {
    // `generate`, as Argo CD runs it: in the application folder, reading its environment.
    let dir = Scratch::new("refusal");
    dir.write("cilium-cmp.yaml", "ciliumVersion: \"1.20.0\"\n");
    dir.write("values.yaml", "{}\n");
    let not_utf8 = OsString::from_vec(vec![b'a', 0xff]);
    refuse(
        "usage.environment",
        &dir,
        &["generate"],
        &[("ARGOCD_ENV_X", not_utf8)],
    );
}

fn lock_missing() {
    let dir = with_app();
    refuse("lock.missing", &dir, &["lock", "--check", "app"], &[]);
}

fn lock_stale() {
    let dir = with_app();
    succeed(&dir, &["lock", "app"]);
    dir.write("app/values.yaml", "operator:\n  replicas: 1\n");
    refuse("lock.stale", &dir, &["lock", "--check", "app"], &[]);
}

fn lock_folders_failed() {
    let dir = Scratch::new("refusal");
    std::fs::create_dir_all(dir.0.join(".git")).unwrap();
    dir.write("app/cilium-cmp.yaml", "ciliumVersion: 1.20\n");
    refuse("lock.folders-failed", &dir, &["lock"], &[]);
}

fn lock_no_folders() {
    let dir = Scratch::new("refusal");
    std::fs::create_dir_all(dir.0.join(".git")).unwrap();
    refuse("lock.no-folders", &dir, &["lock"], &[]);
}

fn verify_not_yaml() {
    let dir = Scratch::new("refusal");
    dir.write("render.yaml", "a: [\n");
    refuse("verify.not-yaml", &dir, &["verify", "render.yaml"], &[]);
}

/// A stamped render of Cilium 1.20.0's defaults, written as render.yaml.
fn stamped_render(dir: &Scratch) -> String {
    let mut c = Command::new(env!("CARGO_BIN_EXE_cilium-cmp"));
    charts::give(&mut c);
    let o = c
        .current_dir(&dir.0)
        .args(["render", "--cilium-version", "1.20.0"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap()
}

fn verify_mismatch() {
    let dir = Scratch::new("refusal");
    let edited = stamped_render(&dir).replacen("kube-system", "kube-systen", 1);
    dir.write("render.yaml", &edited);
    refuse("verify.mismatch", &dir, &["verify", "render.yaml"], &[]);
}

fn verify_unstamped() {
    let dir = Scratch::new("refusal");
    dir.write("render.yaml", "apiVersion: v1\nkind: ConfigMap\n");
    refuse("verify.unstamped", &dir, &["verify", "render.yaml"], &[]);
}

fn talos_inline_manifest_not_yaml() {
    let dir = with_app();
    succeed(&dir, &["lock", "app"]);
    dir.write(
        "machine.yaml",
        "version: v1alpha1\nmachine:\n  type: controlplane\ncluster:\n  inlineManifests:\n    - name: cilium\n      contents: \"a: [\\n\"\n",
    );
    refuse(
        "talos.inline-manifest",
        &dir,
        &["talos-check", "machine.yaml", "app"],
        &[],
    );
}

fn talos_machine_config() {
    let dir = with_app();
    dir.write("machine.yaml", "a: [\n");
    refuse(
        "talos.machine-config",
        &dir,
        &["talos-check", "machine.yaml", "app"],
        &[],
    );
}

/// The kinds of the table "Kinds" of docs/diagnostics.md.
fn documented_kinds() -> Vec<String> {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/diagnostics.md"))
        .unwrap();
    let table = doc.split("## Kinds").nth(1).expect("a section Kinds");
    let mut kinds = Vec::new();
    for row in table.lines().filter(|l| l.starts_with("| `")) {
        let first = row.split('|').nth(1).unwrap();
        kinds.extend(first.split('`').skip(1).step_by(2).map(str::to_string));
    }
    kinds
}

fn every_kind_has_a_case() {
    let kinds = documented_kinds();
    assert!(kinds.len() > 40, "{kinds:?}");
    let diagnostics = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/it/diagnostics.rs"
    ))
    .unwrap();
    for k in &kinds {
        // A kind may have a case here and one in diagnostics.rs (a command that reads its
        // input its own way), but not an entry besides a case.
        let listed = [
            CASES.iter().any(|(c, _)| c == k) || IN_DIAGNOSTICS.contains(&k.as_str()),
            NOT_PROVOKABLE.iter().any(|(n, _)| n == k),
            NO_CASE_YET.contains(&k.as_str()),
        ];
        assert_eq!(
            listed.iter().filter(|l| **l).count(),
            1,
            "{k}: needs exactly one case or entry here"
        );
    }
    for k in IN_DIAGNOSTICS {
        assert!(
            diagnostics.contains(&format!("\"{k}\".into()")),
            "{k} has no case in diagnostics.rs"
        );
    }
    // A case or entry for a kind the table no longer has is stale.
    let all = CASES
        .iter()
        .map(|(c, _)| *c)
        .chain(IN_DIAGNOSTICS.iter().copied());
    let all = all
        .chain(NOT_PROVOKABLE.iter().map(|(n, _)| *n))
        .chain(NO_CASE_YET.iter().copied());
    for k in all {
        assert!(
            kinds.iter().any(|d| d == k),
            "{k} is not in docs/diagnostics.md"
        );
    }
}

/// A release number the binary does not list, with no archive of it in the chart folder (the
/// scratch folder, so that the message names no machine path).
fn unlisted_not_stored() {
    let dir = Scratch::new("refusal");
    let args = ["render", "--cilium-version", "9.9.9"];
    let charts = [("CILIUM_CMP_CHART_DIR", dir.0.clone().into_os_string())];
    refuse("chart.unlisted", &dir, &args, &charts);
}

/// A values file one byte over the bound on any file read (1 MiB), refused before it is read.
fn values_file_too_large() {
    let dir = Scratch::new("refusal");
    let big = format!("# {}\n", "x".repeat((1 << 20) - 2));
    assert_eq!(big.len(), (1 << 20) + 1);
    dir.write("values.yaml", &big);
    let args = ["render", "--cilium-version", "1.20.0", "-f", "values.yaml"];
    refuse("input.too-large", &dir, &args, &[]);
}

fn kube_too_old() {
    let dir = Scratch::new("refusal");
    let args = [
        "render",
        "--cilium-version",
        "1.20.0",
        "--kube-version",
        "1.10.0",
    ];
    refuse("kube-version.unsupported", &dir, &args, &[]);
}

fn not_utf8_values() {
    let dir = Scratch::new("refusal");
    std::fs::write(dir.0.join("values.yaml"), b"a: \xff\n").unwrap();
    let args = ["render", "--cilium-version", "1.20.0", "-f", "values.yaml"];
    refuse("input.encoding", &dir, &args, &[]);
}

fn absent_listed_values_file() {
    let dir = Scratch::new("refusal");
    dir.write(
        "app/cilium-cmp.yaml",
        "ciliumVersion: \"1.20.0\"\nvaluesFiles: [absent.yaml]\n",
    );
    refuse("folder.values-file", &dir, &["render-folder", "app"], &[]);
}

fn parameters_not_json() {
    let dir = plugin_folder();
    refuse(
        "argocd.environment",
        &dir,
        &["generate"],
        &[("ARGOCD_APP_PARAMETERS", "nope".into())],
    );
}

/// A folder the plugin renders from its working directory, as Argo CD runs it.
fn plugin_folder() -> Scratch {
    let dir = Scratch::new("refusal");
    dir.write("cilium-cmp.yaml", "ciliumVersion: \"1.20.0\"\n");
    dir.write("values.yaml", "{}\n");
    dir
}

fn unknown_plugin_parameter() {
    refuse(
        "argocd.parameter",
        &plugin_folder(),
        &["generate"],
        &[(
            "ARGOCD_APP_PARAMETERS",
            r#"[{"name":"nope","string":"x"}]"#.into(),
        )],
    );
}

fn generate_against_another_lock() {
    let dir = plugin_folder();
    dir.write(
        "cilium-cmp.lock",
        &format!("contentHash: sha256:{}\n", "0".repeat(64)),
    );
    refuse("folder.lock-mismatch", &dir, &["generate"], &[]);
}

fn render_unknown_version() {
    let dir = Scratch::new("refusal");
    dir.write("values.yaml", "{}\n");
    let args = ["render", "--cilium-version", "1.2.3", "-f", "values.yaml"];
    refuse("version.unknown", &dir, &args, &[]);
}

/// `chart fetch` of 1.20.0 into an empty folder from `repo`.
fn fetch_refused(kind: &str, repo: &str) {
    let dir = Scratch::new("refusal");
    std::fs::create_dir_all(dir.0.join("charts")).unwrap();
    let args = [
        "chart", "fetch", "--dir", "charts", "--repo", repo, "1.20.0",
    ];
    refuse(kind, &dir, &args, &[]);
    assert_eq!(std::fs::read_dir(dir.0.join("charts")).unwrap().count(), 0);
}

fn fetch_from_ftp() {
    fetch_refused("chart.repository", "ftp://example.com/charts/");
}

/// Nothing listens on port 1 of this machine, so the connection is refused at once.
fn fetch_from_closed_port() {
    fetch_refused("chart.fetch", "http://127.0.0.1:1/");
}

/// The program's own refusal (the mode), so it holds when the tests run as root too.
fn render_over_read_only_file() {
    use std::os::unix::fs::PermissionsExt;
    let dir = Scratch::new("refusal");
    dir.write("values.yaml", "{}\n");
    let out = dir.write("out.yaml", "kept\n");
    std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o444)).unwrap();
    let args = [
        "render",
        "--cilium-version",
        "1.20.0",
        "-f",
        "values.yaml",
        "-o",
        "out.yaml",
    ];
    refuse("output.file", &dir, &args, &[]);
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "kept\n");
}

/// `render` with a chart of the test's own whose one template is `template`: the official
/// charts guard their templates (their `fail`s sit behind values the checks refuse first, they
/// always print objects), so these refusals need a chart that does not. It is of a release no
/// binary lists, as a listed one would be checked against its pin.
fn own_chart_refused(kind: &str, template: &str) {
    let dir = Scratch::new("refusal");
    dir.write(
        "chart/Chart.yaml",
        "apiVersion: v2\nname: cilium\nversion: 9.0.0\n",
    );
    dir.write("chart/values.yaml", "{}\n");
    dir.write("chart/values.schema.json", "{\"type\": \"object\"}\n");
    dir.write("chart/templates/only.yaml", template);
    dir.write("values.yaml", "{}\n");
    let args = [
        "render",
        "--cilium-version",
        "9.0.0",
        "--chart-archive",
        "chart",
        "-f",
        "values.yaml",
    ];
    refuse(kind, &dir, &args, &[]);
}

fn render_of_a_chart_without_objects() {
    own_chart_refused("render.empty", "# no object\n");
}

fn a_chart_that_fails() {
    own_chart_refused("chart.fail", "{{ fail \"these values are refused\" }}\n");
}

fn a_template_that_fails() {
    own_chart_refused("chart.template", "{{ .Values.absent.key }}\n");
}

fn a_template_that_prints_no_yaml() {
    own_chart_refused("chart.not-yaml", "a: [\n");
}

fn a_template_that_mints_random_data() {
    own_chart_refused("chart.nondeterministic", "token: {{ randAlphaNum 8 }}\n");
}

fn a_template_that_includes_itself() {
    own_chart_refused(
        "engine.limit",
        "{{ define \"again\" }}{{ include \"again\" . }}{{ end }}{{ include \"again\" . }}\n",
    );
}

fn archive_not_gzip() {
    let dir = Scratch::new("refusal");
    dir.write("cilium.tgz", "not an archive\n");
    let args = [
        "render",
        "--cilium-version",
        "1.20.0",
        "--chart-archive",
        "cilium.tgz",
    ];
    refuse("chart.unreadable", &dir, &args, &[]);
}

/// `verify` reads its file itself, not as a values file: an absent one is the same refusal.
fn verify_absent_file() {
    let dir = Scratch::new("refusal");
    refuse("input.file", &dir, &["verify", "absent.yaml"], &[]);
}
