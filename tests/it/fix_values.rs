//! `cilium-cmp fix-values`: values files with values the release does not know become files that
//! render without `--allow-unknown-keys`, and render exactly what the opt-out renders for the
//! files as they were; only the dead keys' lines change (comments, order and quoting stay).

use crate::support::charts;
use crate::support::harness;
use crate::support::scratch;

pub fn tests() -> Vec<harness::Trial> {
    harness::group(
        file!(),
        vec![
            harness::test(
                "every_scenario_with_dead_keys_fixes_to_the_opt_out_render",
                every_scenario_with_dead_keys_fixes_to_the_opt_out_render,
            )
            .shared("charts")
            .shared("cilium-reference/scenarios"),
            harness::test(
                "dry_run_prints_a_diff_writes_nothing_and_exits_2",
                dry_run_prints_a_diff_writes_nothing_and_exits_2,
            )
            .shared("charts"),
            harness::test(
                "apply_renames_moves_values_for_an_upgrade",
                apply_renames_moves_values_for_an_upgrade,
            )
            .shared("charts"),
            harness::test(
                "files_that_cannot_be_edited_by_lines_get_a_patch",
                files_that_cannot_be_edited_by_lines_get_a_patch,
            )
            .shared("charts"),
            harness::test(
                "bad_input_is_refused_with_nothing_on_stdout",
                bad_input_is_refused_with_nothing_on_stdout,
            )
            .shared("charts"),
            harness::test(
                "several_files_are_fixed_together",
                several_files_are_fixed_together,
            )
            .shared("charts"),
            harness::test(
                "a_flood_of_dead_keys_is_fixed_and_counted",
                a_flood_of_dead_keys_is_fixed_and_counted,
            )
            .shared("charts"),
            harness::test(
                "the_opt_out_turns_the_refusal_into_warnings",
                the_opt_out_turns_the_refusal_into_warnings,
            )
            .shared("charts"),
            harness::test(
                "a_typo_is_removed_and_commented_and_the_render_is_the_opt_out_one",
                a_typo_is_removed_and_commented_and_the_render_is_the_opt_out_one,
            )
            .shared("charts"),
            harness::test(
                "a_map_of_dead_keys_only_goes_whole",
                a_map_of_dead_keys_only_goes_whole,
            )
            .shared("charts"),
            harness::test("nothing_to_fix_is_no_edit", nothing_to_fix_is_no_edit).shared("charts"),
            harness::test(
                "anchors_and_flow_mappings_are_refused_with_a_patch",
                anchors_and_flow_mappings_are_refused_with_a_patch,
            )
            .shared("charts"),
            harness::test(
                "a_repeated_key_is_refused_rendered_as_helm_reads_it_and_fixed",
                a_repeated_key_is_refused_rendered_as_helm_reads_it_and_fixed,
            )
            .shared("charts")
            .python(),
            harness::test(
                "renames_move_values_and_report_the_render_change",
                renames_move_values_and_report_the_render_change,
            )
            .shared("charts"),
        ],
    )
}

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use cilium_cmp_gitops::fix_values::{self, locate};
use cilium_cmp_render::chart::ChartFiles;
use cilium_cmp_render::render::Inputs;
use scratch::Scratch;
use serde_json::Value;

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_cilium-cmp"));
    charts::give(&mut c);
    c
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A scenario's values block as its author wrote it (comments and quoting kept), dedented.
fn values_text(scenario: &str) -> Option<String> {
    let mut lines = scenario.lines().skip_while(|l| *l != "values:").skip(1);
    let mut out = String::new();
    for line in lines.by_ref() {
        if line.trim().is_empty() {
            out.push('\n');
            continue;
        }
        let Some(rest) = line.strip_prefix("  ") else {
            break;
        };
        out.push_str(rest);
        out.push('\n');
    }
    (!out.trim().is_empty()).then_some(out)
}

/// `values` with dead values inserted: a block at the top (with a comment inside and odd
/// quoting), a typo and a nested dead block as the first keys of up to three block maps at
/// depths 1–3, and a capitalised key at the end (the file then lacking its final newline when
/// `no_final_newline`).
fn with_dead_keys(values: &str, no_final_newline: bool) -> String {
    let layout = locate::layout(values).expect("the scenario's values parse");
    let lines: Vec<&str> = values.split_inclusive('\n').collect();
    // Line (1-based) → text to insert before it.
    let mut before: std::collections::BTreeMap<usize, String> = Default::default();
    before.insert(
        1,
        "# kept: a comment before the dead block\nexternalIPs:   # dead since 1.11\n  # a comment inside a dead block\n  enabled: true\n  'odd key': \"x: y\"\n".into(),
    );
    let mut depths_done = Vec::new();
    for (path, e) in &layout.entries {
        if !e.block_map || path.len() > 3 || depths_done.contains(&path.len()) {
            continue;
        }
        // The first child's line and column.
        let Some(child) = layout
            .entries
            .iter()
            .filter(|(p, _)| p.len() == path.len() + 1 && p.starts_with(path))
            .map(|(_, c)| c)
            .min_by_key(|c| c.line)
        else {
            continue;
        };
        if before.contains_key(&child.line) {
            continue;
        }
        let pad = " ".repeat(child.column);
        before.insert(
            child.line,
            format!(
                "{pad}\"enabeld\": 'yes' # typo\n{pad}zzNoSuchValue:\n{pad}  # inside\n{pad}  deeper: |\n{pad}    text\n\n{pad}    more\n{pad}  other: [1, 2]\n"
            ),
        );
        depths_done.push(path.len());
    }
    let mut out = String::new();
    for (i, line) in lines.iter().enumerate() {
        if let Some(text) = before.get(&(i + 1)) {
            out.push_str(text);
        }
        out.push_str(line);
    }
    if !out.ends_with('\n') {
        out.push('\n');
    }
    out.push_str("PodDisruptionBudget:\n  enabled: true");
    if !no_final_newline {
        out.push('\n');
    }
    out
}

fn scenario_files() -> Vec<(String, String)> {
    let dirs = vec![
        root().join("tests/scenarios"),
        harness::shared("cilium-reference/scenarios"),
    ];
    let mut out = Vec::new();
    for dir in dirs {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
            .collect();
        entries.sort();
        for p in entries {
            let name = p.file_stem().unwrap().to_string_lossy().into_owned();
            out.push((name, std::fs::read_to_string(&p).unwrap()));
        }
    }
    out
}

fn inputs(version: &str, scenario: &str) -> Inputs {
    let doc = cilium_cmp_yaml::yaml::parse_value(scenario).unwrap();
    let mut inputs = Inputs::new(version.parse().unwrap());
    inputs.namespace = doc["namespace"].as_str().unwrap_or("kube-system").into();
    if let Some(k) = doc["kubeVersion"].as_str() {
        inputs.kube_version = k.parse().unwrap();
    }
    if let Value::Array(list) = &doc["apiVersions"] {
        inputs.api_versions = cilium_cmp_render::kube_version::ApiVersions::from_lists(
            list.iter().filter_map(|v| v.as_str()),
        );
    }
    let archive = root().join(format!("../shared/charts/cilium-{version}.tgz"));
    if archive.is_file() {
        inputs.chart = Some(ChartFiles::open(&archive).unwrap());
    }
    inputs
}

fn render(base: &Inputs, name: &str, text: &str, allow: bool) -> Result<String, String> {
    let mut i = base.clone();
    i.values_files = vec![(name.to_string(), text.to_string())];
    i.allow_unknown_keys = allow;
    cilium_cmp_render::render::render(&i).map_err(|e| e.to_string())
}

/// Whether `small`'s lines appear in `big` in order (each once).
fn is_subsequence(small: &[&str], big: &[&str]) -> bool {
    let mut it = big.iter();
    small.iter().all(|s| it.any(|b| b == s))
}

fn every_scenario_with_dead_keys_fixes_to_the_opt_out_render() {
    let scenarios = scenario_files();
    assert!(scenarios.len() >= 30, "{} scenarios", scenarios.len());
    let mut checked = 0;
    let mut removed = 0;
    for (i, (name, scenario)) in scenarios.iter().enumerate() {
        let Some(values) = values_text(scenario) else {
            continue;
        };
        if locate::layout(&values).and_then(|l| l.obstacle).is_some() {
            continue;
        }
        let text = with_dead_keys(&values, i % 3 == 0);
        for version in ["1.18.12", "1.19.6", "1.20.0"] {
            let base = inputs(version, scenario);
            let Ok(reference) = render(&base, "values.yaml", &text, true) else {
                // Refused with the opt-out too (a value this release cannot render): nothing
                // to compare with.
                continue;
            };
            let fix = fix_values::fix(&base, &[("values.yaml".into(), text.clone())], false)
                .unwrap_or_else(|e| panic!("{version}/{name}: {e}"));
            let file = &fix.files[0];
            assert!(
                file.refused.is_none(),
                "{version}/{name}: {:?}\n{text}",
                file.refused
            );
            let edited = file.edited.as_deref().expect("dead keys were inserted");
            let rendered = render(&base, "values.yaml", edited, false)
                .unwrap_or_else(|e| panic!("{version}/{name}: {e}\n{edited}"));
            assert!(
                rendered == reference,
                "{version}/{name}: the render changed\n{edited}"
            );
            // Only the dead keys' lines changed: the rest, comments included, in order.
            let kept: Vec<&str> = edited
                .lines()
                .filter(|l| !l.trim_start().starts_with("# cilium-cmp fix-values:"))
                .collect();
            let all: Vec<&str> = text.lines().collect();
            assert!(is_subsequence(&kept, &all), "{version}/{name}:\n{edited}");
            for comment in values.lines().filter(|l| l.trim_start().starts_with('#')) {
                assert!(
                    edited.lines().any(|l| l == comment),
                    "{version}/{name}: {comment:?} lost"
                );
            }
            assert!(edited.contains("# kept: a comment before the dead block"));
            // (A key inserted in a map of the user's own, such as extraConfig, is kept: the
            // strict render above shows every dead one is gone.)
            assert!(!edited.contains("dead since") && !edited.contains("PodDisruptionBudget"));
            // The typo is named where it was.
            if file.removed.iter().any(|r| !r.likely_meant.is_empty()) {
                assert!(
                    edited.contains("# cilium-cmp fix-values: removed "),
                    "{edited}"
                );
            }
            removed += file.removed.len();
            checked += 1;
        }
    }
    eprintln!(
        "{} scenarios: {checked} renders checked, {removed} dead values removed",
        scenarios.len()
    );
    assert!(
        checked >= 90,
        "only {checked} scenario renders were checked"
    );
    assert!(
        removed >= checked * 3,
        "{removed} removals in {checked} checks"
    );
}

fn fix_cli(dir: &Path, args: &[&str]) -> Output {
    bin()
        .current_dir(dir)
        .arg("fix-values")
        .args(args)
        .output()
        .unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

const OLD: &str = "\
# Values of 1.19
cni:
  iptablesRemoveAWSRules: false
cgroup:
  automount:
    enabled: false
encryption:
  enabled: true
  type: wireguard
  strictMode:
    enabled: true        # the setting
    cidr: \"10.0.0.0/8\"
    allowRemoteNodeIdentities: true
clustermesh:
  enableMCSAPISupport: true
  useAPIServer: true
";

fn dry_run_prints_a_diff_writes_nothing_and_exits_2() {
    let s = Scratch::new("fix-dry");
    let f = s.write("values.yaml", OLD);
    let o = fix_cli(
        &s.0,
        &["--cilium-version", "1.20.0", "--dry-run", "values.yaml"],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let diff = String::from_utf8_lossy(&o.stdout);
    assert!(
        diff.starts_with("--- a/values.yaml\n+++ b/values.yaml\n@@ "),
        "{diff}"
    );
    // cgroup held only the dead key: it goes whole, the comment at its place.
    assert!(
        diff.contains("\n-cgroup:\n-  automount:\n-    enabled: false\n+# cilium-cmp fix-values: removed cgroup.automount"),
        "{diff}"
    );
    assert_eq!(std::fs::read_to_string(&f).unwrap(), OLD);
    let err = stderr(&o);
    assert!(err.contains("LIKELY A TYPO of cgroup.autoMount"), "{err}");
    assert!(
        err.contains("--apply-renames moves it to encryption.strictMode.egress.enabled"),
        "{err}"
    );
    // The diff applies: `git apply` makes the file the command would write.
    let git = Command::new("git")
        .current_dir(&s.0)
        .args(["apply", "--unidiff-zero", "-"])
        .stdin(std::process::Stdio::piped())
        .spawn();
    if let Ok(mut child) = git {
        use std::io::Write;
        child.stdin.take().unwrap().write_all(&o.stdout).unwrap();
        assert!(child.wait().unwrap().success());
        let applied = std::fs::read_to_string(&f).unwrap();
        std::fs::write(&f, OLD).unwrap();
        let o = fix_cli(&s.0, &["--cilium-version", "1.20.0", "values.yaml"]);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert_eq!(std::fs::read_to_string(&f).unwrap(), applied);
    }
    // Fixed: nothing more to do, exit 0, and it renders without the opt-out.
    let o = fix_cli(&s.0, &["--cilium-version", "1.20.0", "values.yaml"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stderr(&o).contains("nothing to fix"));
    let r = bin()
        .current_dir(&s.0)
        .args(["render", "--cilium-version", "1.20.0", "-f", "values.yaml"])
        .output()
        .unwrap();
    assert!(r.status.success(), "{}", stderr(&r));
}

/// 1.19 → 1.20: the renamed values move, the render changes, and the change is reported.
fn apply_renames_moves_values_for_an_upgrade() {
    let s = Scratch::new("fix-renames");
    let f = s.write("values.yaml", OLD);
    // Valid for 1.19 as it is (but for the typo).
    let o = fix_cli(
        &s.0,
        &["--cilium-version", "1.19.6", "--dry-run", "values.yaml"],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(!String::from_utf8_lossy(&o.stdout).contains("strictMode"));
    let o = fix_cli(
        &s.0,
        &[
            "--cilium-version",
            "1.20.0",
            "--apply-renames",
            "values.yaml",
        ],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let fixed = std::fs::read_to_string(&f).unwrap();
    assert!(
        fixed.contains("  strictMode:\n    egress:\n      enabled: true        # the setting\n      cidr: \"10.0.0.0/8\"\n      allowRemoteNodeIdentities: true\nclustermesh:\n  mcsapi:\n    enabled: true\n  useAPIServer: true\n"),
        "{fixed}"
    );
    let err = stderr(&o);
    for needle in [
        "moved encryption.strictMode.enabled to encryption.strictMode.egress.enabled",
        "moved clustermesh.enableMCSAPISupport to clustermesh.mcsapi.enabled",
        "the render changes",
        "ConfigMap kube-system/cilium-config: data.enable-encryption-strict-mode-egress: (absent) → \"true\"",
        "ConfigMap kube-system/cilium-config: data.clustermesh-enable-mcs-api: \"false\" → \"true\"",
    ] {
        assert!(err.contains(needle), "{needle:?} not in {err}");
    }
    // What 1.19 rendered for the old names, 1.20 now renders for the new ones.
    let render = |version: &str, file: &str| {
        let o = bin()
            .current_dir(&s.0)
            .args(["render", "--cilium-version", version, "-f", file])
            .arg("--allow-unknown-keys")
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        let text = String::from_utf8(o.stdout).unwrap();
        let docs = cilium_cmp_yaml::yaml::parse_stream_values(&text).unwrap();
        docs.into_iter()
            .find(|d| d["metadata"]["name"] == "cilium-config")
            .unwrap()["data"]
            .clone()
    };
    s.write("old.yaml", OLD);
    let (before, after) = (
        render("1.19.6", "old.yaml"),
        render("1.20.0", "values.yaml"),
    );
    for key in [
        "enable-encryption-strict-mode-egress",
        "encryption-strict-egress-cidr",
        "encryption-strict-egress-allow-remote-node-identities",
    ] {
        assert_eq!(before[key], after[key], "{key}");
        assert!(!after[key].is_null(), "{key}");
    }
    assert_eq!(
        before["clustermesh-enable-mcs-api"],
        after["clustermesh-enable-mcs-api"]
    );
}

/// Anchors, merge keys, flow mappings and several documents: the file stays as it was, the change
/// is printed as a patch, exit 1.
fn files_that_cannot_be_edited_by_lines_get_a_patch() {
    let s = Scratch::new("fix-refused");
    for (text, why) in [
        (
            "cni: &c\n  iptablesRemoveAWSRules: false\nexternalIPs: *c\n",
            "anchors",
        ),
        (
            "base: &b {enabled: true}\ncni:\n  <<: *b\n  iptablesRemoveAWSRules: false\n",
            "anchors",
        ),
        (
            "cni: {iptablesRemoveAWSRules: false, nosuch: 1}\n",
            "block mapping",
        ),
    ] {
        let f = s.write("values.yaml", text);
        let o = fix_cli(&s.0, &["--cilium-version", "1.20.0", "values.yaml"]);
        assert_eq!(o.status.code(), Some(1), "{text}: {}", stderr(&o));
        let patch = String::from_utf8_lossy(&o.stdout);
        assert!(patch.starts_with("--- a/values.yaml\n"), "{text}: {patch}");
        let err = stderr(&o);
        assert!(
            err.contains(why) && err.contains("nothing was written"),
            "{err}"
        );
        assert_eq!(std::fs::read_to_string(&f).unwrap(), text);
    }
    // Several documents: a values file holds one (Helm's reader too), so it is bad input.
    s.write(
        "values.yaml",
        "cni:\n  iptablesRemoveAWSRules: false\n---\nexternalIPs: {}\n",
    );
    let o = fix_cli(&s.0, &["--cilium-version", "1.20.0", "values.yaml"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(o.stdout.is_empty());
    assert!(
        stderr(&o).contains("values.yaml:4:1: a values file holds one YAML document"),
        "{}",
        stderr(&o)
    );
}

fn bad_input_is_refused_with_nothing_on_stdout() {
    let s = Scratch::new("fix-bad");
    s.write("values.yaml", "cni: [\n");
    for args in [
        &["--cilium-version", "1.20.0", "values.yaml"][..],
        &["--cilium-version", "1.17.0", "values.yaml"],
        &["--cilium-version", "1.20.0", "missing.yaml"],
        &["--cilium-version", "1.20.0", "-"],
        &["--cilium-version", "1.20.0", "values.yaml", "values.yaml"],
    ] {
        let o = fix_cli(&s.0, args);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {}", stderr(&o));
        assert!(o.stdout.is_empty(), "{args:?}");
        assert!(!stderr(&o).contains("panicked"));
    }
}

/// Several files: each keeps its own lines; the render of all of them together is what counts.
fn several_files_are_fixed_together() {
    let s = Scratch::new("fix-several");
    let a = s.write(
        "a.yaml",
        "cni:\n  iptablesRemoveAWSRules: false\nhubble:\n  relay:\n    enabeld: true\n",
    );
    let b = s.write(
        "b.yaml",
        "hubble:\n  relay:\n    enabled: true\n    enabeld: false\nexternalIPs:\n  enabled: true\n",
    );
    let o = fix_cli(&s.0, &["--cilium-version", "1.20.0", "a.yaml", "b.yaml"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(
        std::fs::read_to_string(&a).unwrap(),
        "cni:\n  iptablesRemoveAWSRules: false\n# cilium-cmp fix-values: removed hubble.relay.enabeld, unknown to Cilium 1.20.0 (it never applied); did you mean hubble.relay.enabled?\n"
    );
    assert_eq!(
        std::fs::read_to_string(&b).unwrap(),
        "hubble:\n  relay:\n    enabled: true\n    # cilium-cmp fix-values: removed hubble.relay.enabeld, unknown to Cilium 1.20.0 (it never applied); did you mean hubble.relay.enabled?\n"
    );
}

/// A file of tens of thousands of dead keys (the 1 MiB bound): removed in one run, reported in a
/// bounded number of lines.
fn a_flood_of_dead_keys_is_fixed_and_counted() {
    let s = Scratch::new("fix-flood");
    let mut text = String::from("cni:\n  iptablesRemoveAWSRules: false\n");
    let mut n = 0;
    while text.len() < 1_000_000 {
        text.push_str(&format!("dead{n:06}:\n  x: 1\n  # c\n"));
        n += 1;
    }
    let f = s.write("values.yaml", &text);
    let started = std::time::Instant::now();
    let o = fix_cli(&s.0, &["--cilium-version", "1.20.0", "values.yaml"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(started.elapsed().as_secs() < 60);
    assert!(
        stderr(&o).lines().count() < 300,
        "{} lines",
        stderr(&o).lines().count()
    );
    assert!(stderr(&o).contains(&format!("removed {} more values", n - 200)));
    // The comments after each block's last line stay (they may be about what follows).
    let fixed = std::fs::read_to_string(&f).unwrap();
    let content: Vec<&str> = fixed
        .lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .collect();
    assert!(
        content == ["cni:", "  iptablesRemoveAWSRules: false"],
        "{:?}",
        &content[..content.len().min(5)]
    );
}

// The fixes of single files (moved from the library when every render came to need the chart
// archive).

/// Fixes `values.yaml` (the last file); the first keeps the render free of bundled files.
fn fix_last(version: &str, text: &str, renames: bool) -> fix_values::Fix {
    let base = charts::with_archive(Inputs::new(version.parse().unwrap()));
    let files = [
        (
            "base.yaml".into(),
            "cni:\n  iptablesRemoveAWSRules: false\n".into(),
        ),
        ("values.yaml".into(), text.into()),
    ];
    let mut f = fix_values::fix(&base, &files, renames).unwrap();
    assert!(!f.files.remove(0).changed());
    f
}

fn a_typo_is_removed_and_commented_and_the_render_is_the_opt_out_one() {
    let text = "# mine\ncgroup:\n  automount:\n    enabled: false\n  hostRoot: /run/cilium/cgroupv2\nexternalIPs:\n  enabled: true\nipam:\n  mode: kubernetes # keep\n";
    let f = fix_last("1.20.0", text, false);
    let file = &f.files[0];
    assert!(file.refused.is_none(), "{:?}", file.refused);
    assert_eq!(
        file.edited.as_deref().unwrap(),
        "# mine\ncgroup:\n  # cilium-cmp fix-values: removed cgroup.automount, unknown to Cilium 1.20.0 (it never applied); did you mean cgroup.autoMount?\n  hostRoot: /run/cilium/cgroupv2\nipam:\n  mode: kubernetes # keep\n"
    );
    let paths: Vec<&str> = file.removed.iter().map(|r| r.path.as_str()).collect();
    assert_eq!(paths, ["cgroup.automount", "externalIPs"]);
    assert_eq!(file.removed[0].likely_meant, ["cgroup.autoMount"]);
    assert!(f.render_changes.is_empty());
}

fn a_map_of_dead_keys_only_goes_whole() {
    let text = "operator:\n  prometheus:\n    replicas: 2\n    serviceMonitor:\n      replicas: 1\n  replicas: 1\n";
    let f = fix_last("1.20.0", text, false);
    let edited = f.files[0].edited.as_deref();
    assert!(f.files[0].refused.is_none(), "{:?}", f.files[0].refused);
    assert!(edited.unwrap().ends_with("  replicas: 1\n"), "{edited:?}");
}

fn nothing_to_fix_is_no_edit() {
    let f = fix_last("1.20.0", "ipam:\n  mode: kubernetes\n", false);
    assert!(!f.files[0].changed() && f.files[0].refused.is_none());
}

fn anchors_and_flow_mappings_are_refused_with_a_patch() {
    for text in [
        "base: &b\n  x: 1\nexternalIPs: *b\n",
        "hubble: {relay: {enabeld: true}}\n",
    ] {
        let f = fix_last("1.20.0", text, false);
        let r = f.files[0].refused.as_ref().expect(text);
        let patch = r.patch.as_deref().unwrap();
        assert!(patch.starts_with("--- a/values.yaml\n"), "{patch}");
        assert!(!f.files[0].changed());
    }
}

fn renames_move_values_and_report_the_render_change() {
    let text = "encryption:\n  enabled: true\n  type: wireguard\n  strictMode:\n    enabled: true\n    cidr: 10.0.0.0/8\n    allowRemoteNodeIdentities: true\n";
    let f = fix_last("1.20.0", text, true);
    let file = &f.files[0];
    assert!(file.refused.is_none(), "{:?}", file.refused);
    assert_eq!(
        file.edited.as_deref().unwrap(),
        "encryption:\n  enabled: true\n  type: wireguard\n  strictMode:\n    egress:\n      enabled: true\n      cidr: 10.0.0.0/8\n      allowRemoteNodeIdentities: true\n"
    );
    assert_eq!(file.moved.len(), 3);
    // Only what the user's values change: not cilium-cmp's own content hash (it changes with
    // any object), not a list shown as `[...] -> [...]`.
    for line in &f.render_changes {
        assert!(
            !line.contains("content-hash") && !line.contains("[...]") && !line.contains(".0 "),
            "{line}"
        );
    }
    assert!(
        f.render_changes
            .iter()
            .any(|l| l.starts_with("ConfigMap kube-system/cilium-config: data.")),
        "{:?}",
        f.render_changes
    );
    // Without renames they are only dead values: removed, render unchanged.
    let f = fix_last("1.20.0", text, false);
    assert_eq!(
        f.files[0].edited.as_deref().unwrap(),
        "encryption:\n  enabled: true\n  type: wireguard\n"
    );
}

/// `--allow-unknown-keys` renders what the values render without the unknown ones.
fn the_opt_out_turns_the_refusal_into_warnings() {
    let mut inputs = charts::with_archive(Inputs::new("1.20.0".parse().unwrap()));
    inputs.values_files.push((
        "values.yaml".into(),
        "cni:\n  iptablesRemoveAWSRules: false\nhubble:\n  relay:\n    enabeld: true\n".into(),
    ));
    match cilium_cmp_render::render::render(&inputs) {
        Err(cilium_cmp_render::error::RenderError::UnknownValues {
            version, report, ..
        }) => {
            assert_eq!(version, "1.20.0");
            assert_eq!(report.values.len(), 1);
        }
        other => panic!("not refused: {:?}", other.map(|s| s.len())),
    }
    inputs.allow_unknown_keys = true;
    let with = cilium_cmp_render::render::render(&inputs).unwrap();
    inputs.values_files[0].1 = "cni:\n  iptablesRemoveAWSRules: false\n".into();
    assert_eq!(
        with,
        cilium_cmp_render::render::render(&inputs).unwrap(),
        "the value is ignored"
    );
}

/// A values file that writes `envoy:` twice at the top level and a nested key twice, as a live
/// repository's file did.
const REPEATED: &str = "\
cni:
  iptablesRemoveAWSRules: false
envoy:
  enabled: true   # first, ignored by Helm
  log:
    defaultLevel: debug
hubble:
  relay:
    enabled: true
    enabled: false
envoy:
  enabled: false
";

/// Helm's own reading of a values file (Helm v4's values reader, through helm-python-sdk).
fn helm_reads(text: &str) -> Value {
    let out = Command::new(harness::python())
        .args([
            "-c",
            "import sys; from helm_python import _native; print(_native.call_string('helm_values_from_yaml', sys.stdin.read()))",
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write;
            child.stdin.take().unwrap().write_all(text.as_bytes())?;
            child.wait_with_output()
        })
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn a_repeated_key_is_refused_rendered_as_helm_reads_it_and_fixed() {
    let helm = helm_reads(REPEATED);
    assert_eq!(
        helm["envoy"],
        serde_json::json!({"enabled": false}),
        "{helm}"
    );
    assert_eq!(
        helm["hubble"]["relay"]["enabled"],
        Value::Bool(false),
        "{helm}"
    );

    let s = Scratch::new("fix-repeated");
    s.write("values.yaml", REPEATED);
    // Helm's reading written out as a file with no repetition: what the opt-out must render.
    s.write("helm.json", &helm.to_string());
    let render = |file: &str, allow: bool| {
        let mut c = bin();
        c.current_dir(s.0.as_path())
            .args(["render", "--cilium-version", "1.20.0", "-f", file]);
        if allow {
            c.arg("--allow-unknown-keys");
        }
        c.output().unwrap()
    };
    let refused = render("values.yaml", false);
    assert_eq!(refused.status.code(), Some(1), "{}", stderr(&refused));
    assert!(refused.stdout.is_empty());
    let err = stderr(&refused);
    for needle in [
        "envoy (set in values.yaml line 3): written again at values.yaml:11",
        "the values at values.yaml:3 do nothing",
        "hubble.relay.enabled (set in values.yaml line 9): written again at values.yaml:10",
        "cilium-cmp fix-values --cilium-version 1.20.0 values.yaml",
        "--allow-unknown-keys",
    ] {
        assert!(err.contains(needle), "{needle:?} not in {err}");
    }
    let allowed = render("values.yaml", true);
    assert!(allowed.status.success(), "{}", stderr(&allowed));
    assert!(stderr(&allowed).contains("warning: envoy (set in values.yaml line 3)"));
    let as_helm = render("helm.json", false);
    assert!(as_helm.status.success(), "{}", stderr(&as_helm));
    assert_eq!(
        String::from_utf8_lossy(&allowed.stdout),
        String::from_utf8_lossy(&as_helm.stdout),
        "the opt-out renders what Helm reads"
    );

    let fixed = fix_cli(
        s.0.as_path(),
        &["--cilium-version", "1.20.0", "values.yaml"],
    );
    assert_eq!(fixed.status.code(), Some(2), "{}", stderr(&fixed));
    let text = std::fs::read_to_string(s.0.as_path().join("values.yaml")).unwrap();
    assert_eq!(
        text,
        "cni:\n  iptablesRemoveAWSRules: false\nhubble:\n  relay:\n    enabled: false\nenvoy:\n  enabled: false\n"
    );
    let after = render("values.yaml", false);
    assert!(after.status.success(), "{}", stderr(&after));
    assert_eq!(after.stdout, allowed.stdout, "the render is unchanged");
}
