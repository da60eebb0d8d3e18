//! Every kind of refusal as the binary prints it: the kind and the span it points at (checked
//! here), and its human and JSON forms as snapshots reviewed as files (tests/it/snapshots/,
//! `cargo insta review` or INSTA_UPDATE=always to accept a deliberate change). The inputs are
//! real values files and `cilium-cmp.yaml` settings run through the real binary and the official
//! chart archives.

use crate::support::harness;
use crate::support::refusal;
use crate::support::scratch;

use scratch::Scratch;
use serde_json::Value;

pub fn tests() -> Vec<harness::Trial> {
    let mut tests = Vec::new();
    for (name, body) in [
        ("syntax_error_points_at_the_character", syntax as fn()),
        ("a_list_at_the_top_is_not_a_mapping", not_a_mapping),
        ("an_unknown_key_points_at_its_key", unknown_key),
        ("a_renamed_key_points_at_its_key", renamed_key),
        ("a_repeated_key_points_at_both_entries", repeated_key),
        ("a_schema_refusal_points_at_the_value", schema),
        ("an_admission_refusal_points_at_the_value", admission),
        (
            "a_determinism_refusal_points_at_the_value",
            nondeterministic,
        ),
        ("a_set_expression_points_into_the_flag_text", set_expression),
        ("a_settings_file_points_at_the_setting", folder_settings),
        ("a_bad_kube_version_has_a_kind_and_no_span", kube_version),
        ("a_missing_archive_has_a_kind_and_no_span", missing_archive),
        ("a_missing_values_file_has_a_kind_and_no_span", missing_file),
    ] {
        tests.push(harness::test(name, body).shared("charts"));
    }
    harness::group(file!(), tests)
}

/// What one refusal printed in each form.
struct Refusal {
    human: String,
    json: Value,
}

/// Runs the binary in `dir` with `args` twice, once per `--error-format`; both must fail with
/// status 1 and print nothing on stdout, the JSON form one object on one line.
fn refuse(dir: &Scratch, args: &[&str], env: &[(&str, &str)]) -> Refusal {
    let (human, json_text) = refusal::both_forms(dir, args, env);
    assert_eq!(json_text.lines().count(), 1, "{json_text}");
    Refusal {
        human,
        json: serde_json::from_str(&json_text).unwrap(),
    }
}

/// A render of the values file `text` (written as values.yaml) with Cilium 1.20.0.
fn render(text: &str) -> Refusal {
    let dir = Scratch::new("diag");
    dir.write("values.yaml", text);
    refuse(
        &dir,
        &["render", "--cilium-version", "1.20.0", "-f", "values.yaml"],
        &[],
    )
}

/// A span as (file, line, column, byte start, byte end).
type Place = (String, u64, u64, u64, u64);

/// The kind, and each span, the primary first.
fn kind_and_spans(r: &Refusal) -> (String, Vec<Place>) {
    let spans = r.json["spans"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["file"].as_str().unwrap().to_string(),
                s["line"].as_u64().unwrap(),
                s["column"].as_u64().unwrap(),
                s["byte_start"].as_u64().unwrap(),
                s["byte_end"].as_u64().unwrap(),
            )
        })
        .collect();
    (r.json["kind"].as_str().unwrap().to_string(), spans)
}

fn snapshot(name: &str, r: &Refusal) {
    insta::assert_snapshot!(format!("{name}_human"), r.human);
    insta::assert_json_snapshot!(format!("{name}_json"), r.json);
}

fn span(file: &str, line: u64, column: u64, start: u64, end: u64) -> Place {
    (file.to_string(), line, column, start, end)
}

fn syntax() {
    let r = render("hubble:\n  relay: [unclosed\n");
    assert_eq!(
        kind_and_spans(&r),
        (
            "values.syntax".into(),
            vec![span("values.yaml", 3, 1, 27, 27)]
        )
    );
    snapshot("syntax", &r);
}

fn not_a_mapping() {
    let r = render("- a\n- b\n");
    assert_eq!(
        kind_and_spans(&r),
        (
            "values.not-a-mapping".into(),
            vec![span("values.yaml", 1, 1, 0, 1)]
        )
    );
    snapshot("not_a_mapping", &r);
}

fn unknown_key() {
    let r = render("hubble:\n  relay:\n    enabeld: true\n");
    assert_eq!(
        kind_and_spans(&r),
        (
            "values.unknown-key".into(),
            vec![span("values.yaml", 3, 5, 21, 28)]
        )
    );
    snapshot("unknown_key", &r);
}

fn renamed_key() {
    let r = render("clustermesh:\n  enableMCSAPISupport: true\n");
    assert_eq!(
        kind_and_spans(&r),
        (
            "values.renamed-key".into(),
            vec![span("values.yaml", 2, 3, 15, 34)]
        )
    );
    snapshot("renamed_key", &r);
}

fn repeated_key() {
    let r = render("debug:\n  enabled: true\ndebug:\n  enabled: false\n");
    assert_eq!(
        kind_and_spans(&r),
        (
            "values.repeated-key".into(),
            vec![
                span("values.yaml", 1, 1, 0, 5),
                span("values.yaml", 3, 1, 23, 28)
            ]
        )
    );
    snapshot("repeated_key", &r);
}

fn schema() {
    let r = render("operator:\n  replicas: \"x\"\n");
    assert_eq!(
        kind_and_spans(&r),
        (
            "values.schema".into(),
            vec![span("values.yaml", 2, 3, 12, 20)]
        )
    );
    snapshot("schema", &r);
}

fn admission() {
    let r = render("ipam:\n  mode: bogus\n");
    assert_eq!(
        kind_and_spans(&r),
        (
            "values.admission".into(),
            vec![span("values.yaml", 2, 3, 8, 12)]
        )
    );
    snapshot("admission", &r);
}

fn nondeterministic() {
    let r = render("k8sServiceHost: auto\n");
    assert_eq!(
        kind_and_spans(&r),
        (
            "values.nondeterministic".into(),
            vec![span("values.yaml", 1, 1, 0, 14)]
        )
    );
    snapshot("nondeterministic", &r);
}

fn set_expression() {
    let dir = Scratch::new("diag");
    let r = refuse(
        &dir,
        &["render", "--cilium-version", "1.20.0", "--set", "a[x=1"],
        &[],
    );
    // The span is in the flag's text as the message shows it: `--set "a[x=1"`.
    assert_eq!(
        kind_and_spans(&r),
        (
            "values.set-expression".into(),
            vec![span("--set", 1, 10, 9, 10)]
        )
    );
    snapshot("set_expression", &r);
}

fn folder_settings() {
    let dir = Scratch::new("diag");
    dir.write(
        "app/cilium-cmp.yaml",
        "# the release\nciliumVersion: 1.20\n",
    );
    dir.write("app/values.yaml", "{}\n");
    let r = refuse(&dir, &["render-folder", "app"], &[]);
    assert_eq!(
        kind_and_spans(&r),
        (
            "folder.settings".into(),
            vec![span("app/cilium-cmp.yaml", 2, 1, 14, 27)]
        )
    );
    snapshot("folder_settings", &r);
}

fn kube_version() {
    let dir = Scratch::new("diag");
    let r = refuse(
        &dir,
        &[
            "render",
            "--cilium-version",
            "1.20.0",
            "--kube-version",
            "banana",
        ],
        &[],
    );
    assert_eq!(kind_and_spans(&r), ("kube-version.invalid".into(), vec![]));
    snapshot("kube_version", &r);
}

fn missing_archive() {
    let dir = Scratch::new("diag");
    let home = dir.0.join("home");
    std::fs::create_dir_all(&home).unwrap();
    let empty = dir.0.join("charts");
    std::fs::create_dir_all(&empty).unwrap();
    let (home, empty) = (home.display().to_string(), empty.display().to_string());
    let r = refuse(
        &dir,
        &["render", "--cilium-version", "1.20.0"],
        &[
            ("HOME", &home),
            ("XDG_CACHE_HOME", &home),
            ("CILIUM_CMP_CHART_DIR", &empty),
            ("CILIUM_CMP_OFFLINE", "1"),
        ],
    );
    assert_eq!(kind_and_spans(&r), ("chart.archive-missing".into(), vec![]));
    snapshot("missing_archive", &r);
}

fn missing_file() {
    let dir = Scratch::new("diag");
    let r = refuse(
        &dir,
        &["render", "--cilium-version", "1.20.0", "-f", "absent.yaml"],
        &[],
    );
    assert_eq!(kind_and_spans(&r), ("input.file".into(), vec![]));
    snapshot("missing_file", &r);
}
