//! Comparisons on input an attacker sized: `diff` of values files and `adopt-check` of live dumps
//! made to be as costly as their byte bounds allow. Each run ends with a result or a clear
//! refusal (exit 1, nothing on stdout, the file, object, list and bound named) within a time and
//! peak-RSS bound. The bounds are generous for a debug build on a shared machine, yet far below
//! what the quadratic comparison took: 41 s for a diff of 10,000 `extraEnv` items, hours for
//! 100,000; 1.2 GB for a 16 MiB dump.

use crate::support::charts;
use crate::support::harness;

pub fn tests() -> Vec<harness::Trial> {
    harness::group(
        file!(),
        vec![
            harness::test(
                "a_diff_of_100k_extra_env_items_is_refused_naming_the_list",
                a_diff_of_100k_extra_env_items_is_refused_naming_the_list,
            )
            .shared("charts"),
            harness::test(
                "a_diff_just_within_the_list_bound_is_linear_and_its_report_bounded",
                a_diff_just_within_the_list_bound_is_linear_and_its_report_bounded,
            )
            .shared("charts"),
            harness::test(
                "adopt_check_of_a_16_mib_dump_with_a_huge_list_is_refused_before_parsing",
                adopt_check_of_a_16_mib_dump_with_a_huge_list_is_refused_before_parsing,
            )
            .shared("charts"),
            harness::test(
                "adopt_check_just_within_the_bounds_is_linear",
                adopt_check_just_within_the_bounds_is_linear,
            )
            .shared("charts"),
            harness::test(
                "managed_fields_with_too_many_entries_are_refused_naming_the_object",
                managed_fields_with_too_many_entries_are_refused_naming_the_object,
            )
            .shared("charts"),
            harness::test(
                "many_small_lists_exhaust_the_run_budget_with_a_clear_refusal",
                many_small_lists_exhaust_the_run_budget_with_a_clear_refusal,
            )
            .shared("charts"),
            harness::test(
                "more_objects_than_the_bound_are_refused",
                more_objects_than_the_bound_are_refused,
            )
            .shared("charts"),
        ],
    )
}

use crate::support::child;
use crate::support::scratch;

use std::process::Command;
use std::time::Duration;

use child::{run, Outcome};
use scratch::Scratch;

fn bin() -> Command {
    let mut c = child::command(env!("CARGO_BIN_EXE_cilium-cmp"));
    // No chart archive: the values below turn off the one value of 1.20.0 that needs it.
    c.env_clear();
    charts::give(&mut c);
    c
}

const NO_ARCHIVE: &str = "cni:\n  iptablesRemoveAWSRules: false\n";

/// A values file with `n` `extraEnv` items named from `letters` in turn (so names repeat, as
/// the chart allows), block style: ten bytes an item, 100,000 of them in 1 MB.
fn extra_env(n: usize, letters: &str) -> String {
    let letters: Vec<char> = letters.chars().collect();
    let mut s = String::from(NO_ARCHIVE);
    s.push_str("extraEnv:\n");
    for i in 0..n {
        s.push_str("- name: ");
        s.push(letters[i % letters.len()]);
        s.push('\n');
    }
    s
}

fn diff(new: &std::path::Path, old: &std::path::Path) -> Outcome {
    let mut c = bin();
    c.args(["diff", "--cilium-version", "1.20.0", "-f"])
        .arg(new)
        .arg("--from-values")
        .arg(old);
    run(c)
}

fn adopt_check(live: &std::path::Path) -> Outcome {
    let mut c = bin();
    c.args([
        "adopt-check",
        "--cilium-version",
        "1.20.0",
        "--set",
        "cni.iptablesRemoveAWSRules=false",
        "--output",
        "json",
        "--live",
    ])
    .arg(live);
    run(c)
}

fn within(o: &Outcome, secs: u64, mb: i64) {
    assert!(
        o.elapsed < Duration::from_secs(secs),
        "took {:?} (bound {secs} s): {}",
        o.elapsed,
        o.stderr
    );
    assert!(
        o.peak_mb() < mb,
        "peak {} MB (bound {mb} MB): {}",
        o.peak_mb(),
        o.stderr
    );
}

fn refused(o: &Outcome, needles: &[&str]) {
    assert_eq!(o.code, Some(1), "exit code; stderr: {}", o.stderr);
    assert!(o.stdout.is_empty(), "nothing on stdout");
    for n in needles {
        assert!(
            o.stderr.contains(n),
            "stderr should name {n:?}: {}",
            o.stderr
        );
    }
    assert!(o.stderr.len() < 2000, "one bounded message: {}", o.stderr);
}

fn a_diff_of_100k_extra_env_items_is_refused_naming_the_list() {
    let s = Scratch::new("env100k");
    // No `y`, `n`, `Y` or `N`: YAML 1.1 reads them as booleans, and the chart's `validate.yaml`
    // compares every `extraEnv` name with a string, which fails on a boolean (as under Helm).
    let new = s.write("new.yaml", &extra_env(100_000, "abcdefghijklmopqrstuvwxz"));
    let old = s.write("old.yaml", &extra_env(100_000, "ABCDEFGHIJKLMOPQRSTUVWXZ"));
    assert!(std::fs::metadata(&new).unwrap().len() <= 1 << 20);
    let o = diff(&new, &old);
    refused(
        &o,
        &[
            "the old render",
            "DaemonSet kube-system/cilium",
            "spec.template.spec.containers[0].env holds more than 10,000 items",
        ],
    );
    // Both renders of 100,000 items happen before the comparison refuses: most of this is theirs.
    within(&o, 30, 700);
}

fn a_diff_just_within_the_list_bound_is_linear_and_its_report_bounded() {
    let s = Scratch::new("env9900");
    // 9,900 items plus the chart's own env vars of the agent stay under 10,000. No `y` or `n`:
    // YAML 1.1 reads those as booleans, which would pair across the two sides.
    let new = s.write("new.yaml", &extra_env(9_900, "abcdefghijklmopqrstuvwxz"));
    let old = s.write("old.yaml", &extra_env(9_900, "ABCDEFGHIJKLMOPQRSTUVWXZ"));
    let o = diff(&new, &old);
    assert_eq!(o.code, Some(3), "pods restart: {}", o.stderr);
    let text = o.stdout.clone();
    // 19,800 differences per container (9,900 set, 9,900 dropped): 1,000 listed per object, the
    // rest counted where they are.
    assert!(
        text.contains(
            "spec.template.spec.containers[\"cilium-agent\"].env[… 18,800 more differences, not listed]"
        ),
        "{}",
        &text[..text.len().min(3000)]
    );
    assert!(
        text.lines().count() < 1_200,
        "{} lines",
        text.lines().count()
    );
    within(&o, 15, 300);
}

/// A `kubectl get -o yaml` style List holding the agent's DaemonSet with `n` extra env items in
/// its cilium-agent container, each owned by helm through a `k:` entry of managedFields, spread
/// over `entries` entries. Block style, as kubectl prints it.
fn agent_dump(n: usize, entries: usize) -> String {
    let mut s = String::from(
        "apiVersion: v1\nkind: List\nitems:\n- apiVersion: apps/v1\n  kind: DaemonSet\n  metadata:\n    name: cilium\n    namespace: kube-system\n    uid: 8e0f\n    managedFields:\n",
    );
    let per = n.div_ceil(entries.max(1));
    for e in 0..entries {
        s.push_str(&format!(
            "    - manager: helm-{e}\n      operation: Update\n      fieldsV1:\n        f:spec:\n          f:template:\n            f:spec:\n              f:containers:\n                k:{{\"name\":\"cilium-agent\"}}:\n                  f:env:\n"
        ));
        for i in (e * per)..((e + 1) * per).min(n) {
            s.push_str(&format!(
                "                    k:{{\"name\":\"E{i}\"}}:\n                      .: {{}}\n                      f:name: {{}}\n                      f:value: {{}}\n"
            ));
        }
    }
    s.push_str("  spec:\n    template:\n      spec:\n        containers:\n        - name: cilium-agent\n          env:\n");
    for i in 0..n {
        s.push_str(&format!("          - name: E{i}\n            value: v\n"));
    }
    s
}

fn adopt_check_of_a_16_mib_dump_with_a_huge_list_is_refused_before_parsing() {
    let s = Scratch::new("dump16");
    let mut n = 150_000;
    let mut text = agent_dump(n, 10);
    while text.len() > 16 << 20 {
        n -= 10_000;
        text = agent_dump(n, 10);
    }
    assert!(text.len() > 12 << 20, "{} bytes", text.len());
    let live = s.write("live.yaml", &text);
    let o = adopt_check(&live);
    refused(
        &o,
        &[
            "live.yaml",
            "DaemonSet kube-system/cilium",
            "spec.template.spec.containers[0].env holds more than 10,000 items",
        ],
    );
    // Refused on the parser's events: no tree of the dump is built.
    within(&o, 20, 150);
}

fn adopt_check_just_within_the_bounds_is_linear() {
    let s = Scratch::new("dump9k");
    // 9,000 env items only the live agent has, each owned by a manager: every one is looked up
    // in managedFields, and every one is left behind.
    let live = s.write("live.yaml", &agent_dump(9_000, 3));
    let o = adopt_check(&live);
    assert_eq!(o.code, Some(3), "left behind: {}", o.stderr);
    let report: serde_json::Value = serde_json::from_str(&o.stdout).unwrap();
    let agent = report["objects"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["kind"] == "DaemonSet" && o["name"] == "cilium")
        .expect("the agent is compared");
    // The dump holds nothing else of the render's agent: its pod template differs as well.
    assert_eq!(agent["class"], "restarts-pods", "{}", agent["notes"]);
    // 18,000 fields (name and value of each item): 1,000 kept, the rest counted.
    assert_eq!(agent["leftBehind"].as_array().unwrap().len(), 1_000);
    let notes = agent["notes"].to_string();
    assert!(
        notes.contains(
            "and 17,000 more differences in spec.template.spec.containers[\\\"cilium-agent\\\"].env"
        ) && notes.contains("left behind"),
        "{notes}"
    );
    within(&o, 15, 300);
}

fn managed_fields_with_too_many_entries_are_refused_naming_the_object() {
    let s = Scratch::new("entries");
    let live = s.write("live.yaml", &agent_dump(100, 100));
    let o = adopt_check(&live);
    refused(
        &o,
        &[
            "live.yaml",
            "DaemonSet kube-system/cilium",
            "metadata.managedFields holds 100 entries; at most 64",
        ],
    );
    within(&o, 10, 200);
}

fn many_small_lists_exhaust_the_run_budget_with_a_clear_refusal() {
    let s = Scratch::new("budget");
    // 30 objects, each within the list bounds, 300,000 one-key mappings together: more than a
    // comparison may parse (~640 bytes each once parsed).
    let mut text = String::new();
    for c in 0..30 {
        text.push_str(&format!(
            "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c{c}\n  namespace: kube-system\n  uid: u{c}\nx:\n"
        ));
        for _ in 0..10_000 {
            text.push_str("- a: 1\n");
        }
    }
    let live = s.write("live.yaml", &text);
    let o = adopt_check(&live);
    refused(
        &o,
        &[
            "live.yaml",
            "ConfigMap kube-system/c",
            "250,000 non-empty mappings",
        ],
    );
    within(&o, 10, 200);
}

fn more_objects_than_the_bound_are_refused() {
    let s = Scratch::new("objects");
    let mut text = String::from("apiVersion: v1\nkind: List\nitems:\n");
    for c in 0..20_001 {
        text.push_str(&format!(
            "- {{apiVersion: v1, kind: ConfigMap, metadata: {{name: c{c}, namespace: kube-system}}}}\n"
        ));
    }
    let live = s.write("live.yaml", &text);
    let o = adopt_check(&live);
    refused(&o, &["live.yaml", "more than 20,000 objects"]);
    within(&o, 15, 300);
}
