//! No repository-derived string can spoof review output. A repository (git, a base commit and a
//! change) whose folder names, values keys and values hold terminal escapes, BEL, CR/LF, GitHub
//! Actions workflow commands (`::error`, `::add-mask::`, `::stop-commands::`, the legacy
//! `##[error]`), Markdown links and images, `@mentions`, `#1`, HTML, backticks, pipes and bidi
//! overrides goes through `diff --base` (text, Markdown and JSON), `lock --check`, `fleet-check`
//! and `adopt-check` (with a live dump whose object names, keys and managers hold the same).
//! Every output is checked: no raw control or bidi character, no line a workflow command, and in
//! Markdown nothing active left once the code spans, `<code>` elements and fenced blocks are
//! taken out. Property tests drive the reports themselves with arbitrary names.

use crate::support::git::git;
use crate::support::harness;
use crate::support::scratch;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use cilium_cmp_gitops::adopt::compare::{Path as FieldPath, Step};
use cilium_cmp_gitops::adopt::live::ObjectKey;
use cilium_cmp_gitops::diff::consequences::{Consequence, Kind};
use cilium_cmp_gitops::diff::engine::{Change, FieldChange, ObjectDiff};
use cilium_cmp_gitops::diff::{Diff, FolderState, Outcome, Section};
use cilium_cmp_yaml::escape::{self, Prose};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use scratch::Scratch;
use serde_json::{json, Value};

pub fn tests() -> Vec<harness::Trial> {
    harness::group(
        file!(),
        vec![
            harness::test(
                "diff_of_a_hostile_repository_is_inert_as_text_markdown_and_json",
                diff_of_a_hostile_repository_is_inert_as_text_markdown_and_json,
            )
            .shared("charts"),
            harness::test(
                "lock_check_of_hostile_folders_is_inert",
                lock_check_of_hostile_folders_is_inert,
            )
            .shared("charts"),
            harness::test(
                "fleet_check_of_hostile_folders_and_peers_is_inert",
                fleet_check_of_hostile_folders_and_peers_is_inert,
            ),
            harness::test(
                "adopt_check_of_a_hostile_live_dump_is_inert",
                adopt_check_of_a_hostile_live_dump_is_inert,
            )
            .shared("charts"),
            harness::test(
                "the_checks_of_this_file_catch_each_attack",
                the_checks_of_this_file_catch_each_attack,
            ),
            harness::test(
                "any_names_in_a_text_report_are_inert",
                any_names_in_a_text_report_are_inert,
            ),
            harness::test(
                "any_names_in_a_markdown_report_are_inert",
                any_names_in_a_markdown_report_are_inert,
            ),
            harness::test(
                "the_text_escaper_hides_nothing_and_reads_back",
                the_text_escaper_hides_nothing_and_reads_back,
            ),
        ],
    )
}

/// One line holding every attack; a folder name cannot hold `/`, so links there use `https:`.
const ATTACKS: &str = "\u{1b}[31mred\u{1b}]0;title\u{7}\u{7} ::error file=x::pwned \
    \u{202e}gnp.exe\u{202c} \u{2066}iso\u{2069} [a](https:evil) ![x](y) @org_team #1 \
    <img src=x> `tick` ``two`` |cell| ##[error]legacy \u{9b}31m www.evil.example";

/// Folder names: the attacks in one line, and the attacks behind line breaks (legal on Linux).
fn hostile_folders() -> Vec<String> {
    vec![
        format!("::error file=x::pwned {ATTACKS}"),
        "ok\n::error file=x::pwned\r::add-mask::secret\n::stop-commands::tok\n  ::warning::w"
            .to_string(),
    ]
}

/// Values keys and values of a change (full links are possible here).
fn hostile_values() -> String {
    let key = format!(
        "::error file=x::pwned\n::add-mask::m\r\n::stop-commands::tok {ATTACKS} [l](https://evil.example/x) ![i](https://evil.example/i.png) @org/team"
    );
    let value = format!("v\u{1b}[2J\n::error::in-value\n{ATTACKS} <script>x</script>");
    format!(
        "extraConfig:\n  {}: {}\npodAnnotations:\n  {}: {}\n",
        json!(key),
        json!(value),
        json!(format!("note-{}", "\u{202e}x|y`z")),
        json!(format!("@org/team {ATTACKS}"))
    )
}

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_cilium-cmp"))
}

fn charts() -> PathBuf {
    harness::shared("charts")
}

fn run(cmd: &mut Command) -> (i32, String, String) {
    let o: Output = cmd.output().expect("runs");
    let text = |b: &[u8]| String::from_utf8(b.to_vec()).expect("output is UTF-8");
    (
        o.status.code().expect("exited"),
        text(&o.stdout),
        text(&o.stderr),
    )
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A repository of the Argo CD example's common values and one application folder per name under
/// `clusters/`, committed; `change` is then appended to each folder's values in the work tree.
fn repository(folders: &[String], change: &str) -> Scratch {
    let s = Scratch::new("untrusted");
    let example = root().join("examples/argocd");
    s.write(
        "common/values.yaml",
        &std::fs::read_to_string(example.join("common/values.yaml")).unwrap(),
    );
    for f in folders {
        let dir = s.0.join("clusters").join(f);
        std::fs::create_dir_all(&dir).unwrap();
        let settings = std::fs::read_to_string(example.join("cilium/cilium-cmp.yaml")).unwrap();
        std::fs::write(
            dir.join("cilium-cmp.yaml"),
            settings.replace("../common/", "../../common/"),
        )
        .unwrap();
        std::fs::copy(example.join("cilium/values.yaml"), dir.join("values.yaml")).unwrap();
    }
    git(&s.0, &["init", "-q"]);
    git(&s.0, &["add", "-A"]);
    git(&s.0, &["commit", "-qm", "base"]);
    for f in folders {
        let p = s.0.join("clusters").join(f).join("values.yaml");
        let text = std::fs::read_to_string(&p).unwrap();
        std::fs::write(&p, format!("{text}{change}")).unwrap();
    }
    s
}

/// Characters a terminal or log viewer acts on or that change how a line reads: C0 but the line
/// feed, DEL, C1, bidi controls and isolates, line and paragraph separators.
fn is_active_character(c: char) -> bool {
    (c < ' ' && c != '\n')
        || ('\u{7f}'..='\u{9f}').contains(&c)
        || matches!(
            c,
            '\u{61c}'
                | '\u{200e}'
                | '\u{200f}'
                | '\u{202a}'..='\u{202e}'
                | '\u{2066}'..='\u{2069}'
                | '\u{2028}'
                | '\u{2029}'
        )
}

/// What a terminal or a GitHub Actions log may be shown: no active character, no line that the
/// runner reads as a workflow command (`::` at its start after white space, or `##[` anywhere:
/// actions/runner `ActionCommand.TryParseV2` and `TryParse`). The runner splits lines at CR too,
/// which the first rule covers.
fn check_inert_text(what: &str, out: &str) -> Result<(), String> {
    if let Some(c) = out.chars().find(|c| is_active_character(*c)) {
        return Err(format!("{what}: U+{:04X} written raw:\n{out}", c as u32));
    }
    for line in out.lines() {
        if line.trim_start().starts_with("::") {
            return Err(format!("{what}: a workflow command line: {line:?}\n{out}"));
        }
        if line.contains("##[") {
            return Err(format!(
                "{what}: a legacy workflow command: {line:?}\n{out}"
            ));
        }
    }
    Ok(())
}

fn assert_inert_text(what: &str, out: &str) {
    check_inert_text(what, out).unwrap_or_else(|e| panic!("{e}"));
}

/// Inline code spans of one line taken out (CommonMark 6.1: a run of N backticks opens a span
/// that the next run of exactly N closes). Every span must close on its line: the escaper makes
/// names one line, so an unclosed run means a name broke out.
fn without_code_spans(line: &str) -> Result<String, String> {
    let chars: Vec<char> = line.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        if chars[i] != '`' {
            out.push(chars[i]);
            i += 1;
            continue;
        }
        let n = chars[i..].iter().take_while(|c| **c == '`').count();
        let mut j = i + n;
        let mut closed = None;
        while j < chars.len() {
            if chars[j] == '`' {
                let m = chars[j..].iter().take_while(|c| **c == '`').count();
                if m == n {
                    closed = Some(j + m);
                    break;
                }
                j += m;
            } else {
                j += 1;
            }
        }
        match closed {
            Some(end) => {
                out.push_str("CODE");
                i = end;
            }
            None => return Err(format!("an unclosed code span in {line:?}")),
        }
    }
    Ok(out)
}

/// `<code>…</code>` elements of raw HTML taken out; their content must hold no tag.
fn without_code_elements(line: &str) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = line;
    while let Some(start) = rest.find("<code>") {
        out.push_str(&rest[..start]);
        let after = &rest[start + "<code>".len()..];
        let end = after
            .find("</code>")
            .ok_or_else(|| format!("an unclosed <code> in {line:?}"))?;
        if after[..end].contains('<') || after[..end].contains('>') {
            return Err(format!("markup inside <code> in {line:?}"));
        }
        out.push_str("CODE");
        rest = &after[end + "</code>".len()..];
    }
    out.push_str(rest);
    Ok(out)
}

/// URLs the program writes itself (documentation it cites).
const OWN_URLS: &[&str] = &[
    "https://argo-cd.readthedocs.io/",
    "https://docs.cilium.io/",
    "https://kubernetes.io/",
];

/// A pull-request comment in which nothing from the repository is active, read conservatively:
/// fenced blocks, code spans and `<code>` elements are taken out, and what is left (the program's
/// own words and structure) must hold no link, image, autolink, mention, issue reference, HTML
/// but the report's own tags, heading but the report's, and the table's rows exactly their cells.
fn check_inert_markdown(md: &str) -> Result<(), String> {
    check_inert_text("markdown", md)?;
    let mut fence: Option<usize> = None;
    for line in md.lines() {
        let ticks = line.chars().take_while(|c| *c == '`').count();
        if let Some(n) = fence {
            // GFM: only a run at least as long as the opening one closes the block.
            if ticks >= n && line[ticks..].trim().is_empty() {
                fence = None;
            }
            continue;
        }
        if ticks >= 3 {
            fence = Some(ticks);
            continue;
        }
        if line.starts_with('|') {
            // GFM splits a row at every pipe not escaped by a backslash, before inlines.
            let bytes = line.as_bytes();
            let cells = (0..bytes.len())
                .filter(|&i| {
                    bytes[i] == b'|'
                        && bytes[..i].iter().rev().take_while(|b| **b == b'\\').count() % 2 == 0
                })
                .count();
            if cells != 10 {
                return Err(format!("a table row of other than 9 cells: {line:?}"));
            }
        }
        let prose = without_code_elements(line)
            .and_then(|l| without_code_spans(&l))
            .map_err(|e| format!("{e}\n{md}"))?;
        let mut words = prose.clone();
        for url in OWN_URLS {
            words = words.replace(url, "URL");
        }
        for tag in ["<details>", "</details>", "<summary>", "</summary>", "<br>"] {
            words = words.replace(tag, "");
        }
        for active in [
            "](", "![", "<", ">", "@", "http:", "https:", "www.", "evil", "pwned", "img", "script",
            "::", "\\",
        ] {
            if words.contains(active) {
                return Err(format!("{active:?} outside code in {line:?}\n{md}"));
            }
        }
        let hash_digit = words
            .char_indices()
            .any(|(i, c)| c == '#' && words[i + 1..].starts_with(|d: char| d.is_ascii_digit()));
        if hash_digit && !words.contains("cilium/cilium#") {
            return Err(format!("an issue reference outside code in {line:?}"));
        }
        if line.starts_with('#') && line != "### cilium-cmp diff" && !line.starts_with("#### `") {
            return Err(format!("a heading the report does not write: {line:?}"));
        }
    }
    match fence {
        Some(_) => Err(format!("a fenced block left open\n{md}")),
        None => Ok(()),
    }
}

fn assert_inert_markdown(md: &str) {
    check_inert_markdown(md).unwrap_or_else(|e| panic!("{e}"));
}

fn diff_in(repo: &Path, args: &[&str]) -> (i32, String, String) {
    run(bin()
        .current_dir(repo)
        .env("CILIUM_CMP_CHART_DIR", charts())
        .arg("diff")
        .args(args))
}

fn diff_of_a_hostile_repository_is_inert_as_text_markdown_and_json() {
    let folders = hostile_folders();
    let repo = repository(&folders, &hostile_values());
    let (code, text, err) = diff_in(&repo.0, &["--base", "HEAD"]);
    assert!(code == 1 || code == 3, "{code}: {err}");
    assert_inert_text("diff stdout", &text);
    assert_inert_text("diff stderr", &err);
    // The folder that renders was compared, and its hostile key is shown escaped.
    assert!(text.contains("Pods that restart:"), "{text}");
    assert!(text.contains("\\u{1b}[31mred"), "{text}");
    assert!(
        text.contains("== clusters/::error file=x::pwned \\u{1b}[31mred"),
        "{text}"
    );

    let (code, md, err) = diff_in(&repo.0, &["--base", "HEAD", "--output", "markdown"]);
    assert!(code == 1 || code == 3, "{code}: {err}");
    assert_inert_markdown(&md);
    assert!(md.contains("<details><summary>changed <code>"), "{md}");
    assert!(md.contains("**Pods that restart**"), "{md}");

    // JSON: the same strings, whole, and nothing a terminal or the runner acts on.
    let (code, out, err) = diff_in(&repo.0, &["--base", "HEAD", "--output", "json"]);
    assert!(code == 1 || code == 3, "{code}: {err}");
    assert_inert_text("diff json", &out);
    let doc: Value = serde_json::from_str(&out).expect("json");
    let names: Vec<&str> = doc["folders"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f["folder"].as_str())
        .collect();
    for f in &folders {
        let want = format!("clusters/{f}");
        assert!(names.contains(&want.as_str()), "{want:?} in {names:?}");
    }
}

fn lock_check_of_hostile_folders_is_inert() {
    let folders = hostile_folders();
    let repo = repository(&folders, &hostile_values());
    let lock_check = || {
        run(bin()
            .current_dir(&repo.0)
            .env("CILIUM_CMP_CHART_DIR", charts())
            .args([
                "lock",
                "--check",
                "--namespace",
                "kube-system",
                "--kube-version",
                "1.35.0",
            ]))
    };
    let (code, out, err) = lock_check();
    assert_eq!(code, 1, "no folder has a lock: {err}");
    assert!(out.is_empty(), "{out}");
    assert_inert_text("lock --check stderr", &err);
    assert!(
        err.contains("clusters/ok\\n::error file=x::pwned\\r::add-mask::secret"),
        "{err}"
    );
    // With locks written, then made stale: the summary names the lock and its objects.
    for f in &folders {
        let dir = repo.0.join("clusters").join(f);
        let (code, _, err) = run(bin()
            .current_dir(&repo.0)
            .env("CILIUM_CMP_CHART_DIR", charts())
            .arg("lock")
            .arg(&dir)
            .args(["--namespace", "kube-system", "--kube-version", "1.35.0"]));
        assert_eq!(code, 0, "{err}");
        assert_inert_text("lock stderr", &err);
        let p = dir.join("values.yaml");
        let text = std::fs::read_to_string(&p).unwrap();
        std::fs::write(&p, format!("{text}debug:\n  enabled: true\n")).unwrap();
    }
    let (code, out, err) = lock_check();
    assert_eq!(code, 1, "{err}");
    assert!(out.is_empty(), "{out}");
    assert!(err.contains(": stale"), "{err}");
    assert_inert_text("lock --check stderr (stale)", &err);
}

fn fleet_check_of_hostile_folders_and_peers_is_inert() {
    let s = Scratch::new("untrusted-fleet");
    let copy = |from: &Path, to: &Path| {
        for e in walk(from) {
            let target = to.join(e.strip_prefix(from).unwrap());
            std::fs::create_dir_all(target.parent().unwrap()).unwrap();
            std::fs::copy(&e, target).unwrap();
        }
    };
    copy(&root().join("examples/fleet"), &s.0);
    let [one, two] = [&hostile_folders()[0], &hostile_folders()[1]];
    std::fs::rename(s.0.join("clusters/eu-1"), s.0.join("clusters").join(one)).unwrap();
    std::fs::rename(s.0.join("clusters/eu-2"), s.0.join("clusters").join(two)).unwrap();
    // A duplicate cluster ID (a finding naming both folders) and a peer of a hostile name that
    // no folder is (a finding naming it).
    s.write(
        "clusters/us-1/values.yaml",
        "cluster:\n  name: us-1\n  id: 1\nipam:\n  mode: cluster-pool\n  operator:\n    clusterPoolIPv4PodCIDRList:\n      - 10.3.0.0/16\n",
    );
    let common = s.0.join("common/values.yaml");
    let text = std::fs::read_to_string(&common).unwrap();
    let peer = json!(format!("::error file=x::pwned {ATTACKS}"));
    let text = text.replace(
        "    clusters:\n",
        &format!("    clusters:\n      {peer}:\n        address: \"@org/team [a](https://evil.example)\"\n        port: 2379\n"),
    );
    std::fs::write(&common, text).unwrap();
    for output in ["text", "json"] {
        let (code, out, err) =
            run(bin()
                .current_dir(&s.0)
                .args(["fleet-check", "--output", output]));
        assert_inert_text("fleet-check stdout", &out);
        assert_inert_text("fleet-check stderr", &err);
        assert_eq!(code, 3, "findings expected: {out}{err}");
        if output == "json" {
            let doc: Value = serde_json::from_str(&out).expect("json");
            let all = doc.to_string();
            assert!(all.contains("duplicate-cluster-id"), "{all}");
        } else {
            assert!(out.contains("\\u{1b}[31mred"), "{out}");
        }
    }
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

fn adopt_check_of_a_hostile_live_dump_is_inert() {
    let s = Scratch::new("untrusted-adopt");
    let values = s.write("values.yaml", &hostile_values());
    let (code, render, err) = run(bin()
        .env("CILIUM_CMP_CHART_DIR", charts())
        .args(["render", "--cilium-version", "1.20.0", "-f"])
        .arg(&values));
    assert_eq!(code, 0, "{err}");
    assert_inert_text("render stderr", &err);
    // The live dump: the render, every object's fields owned by a hostile manager, the agent's
    // ConfigMap with one more hostile key, and two objects of hostile names (one the release's,
    // pruned; one not).
    let mut docs: Vec<String> = render
        .split("\n---\n")
        .map(|d| d.trim_start_matches("---\n").to_string())
        .filter(|d| !d.trim().is_empty())
        .collect();
    let manager = format!("kubectl\n::error::m {ATTACKS}");
    let extra = |name: &str, release: bool| {
        let mut meta = json!({
            "name": name,
            "namespace": "kube-system",
            "uid": "0b0e0b0e-0000-4000-8000-000000000001",
            "labels": {format!("x{ATTACKS}"): "y"},
            "managedFields": [{"manager": manager, "operation": "Apply",
                "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {}}}],
        });
        if release {
            meta["labels"]["app.kubernetes.io/managed-by"] = json!("Helm");
            meta["annotations"] = json!({
                "meta.helm.sh/release-name": "cilium",
                "meta.helm.sh/release-namespace": "kube-system",
            });
        }
        json!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": meta,
            "data": {format!("k {ATTACKS}\n::error::k"): format!("v {ATTACKS}")},
        })
        .to_string()
    };
    docs.push(extra(&format!("pruned\n::error::{ATTACKS}"), true));
    docs.push(extra(&format!("stranger\r::add-mask::{ATTACKS}"), false));
    let live = s.write("live.yaml", &docs.join("\n---\n"));
    // The render to compare differs in the hostile keys, so they are differences.
    let changed = s.write(
        "changed.yaml",
        &hostile_values().replace(
            "extraConfig:\n",
            "extraConfig:\n  \"other\\u001b\": \"x\"\n",
        ),
    );
    for output in ["text", "json"] {
        let (code, out, err) = run(bin()
            .env("CILIUM_CMP_CHART_DIR", charts())
            .args(["adopt-check", "--cilium-version", "1.20.0", "-f"])
            .arg(&changed)
            .arg("--live")
            .arg(&live)
            .args(["--output", output]));
        assert!(code == 0 || code == 3, "{code}: {err}");
        assert_inert_text("adopt-check stdout", &out);
        assert_inert_text("adopt-check stderr", &err);
        if output == "json" {
            let doc: Value = serde_json::from_str(&out).expect("json");
            assert!(doc.to_string().contains("stranger"), "{doc}");
        } else {
            assert!(
                out.contains("stranger\\r::add-mask::\\u{1b}[31mred"),
                "{out}"
            );
            assert!(out.contains("pruned\\n::error::"), "{out}");
        }
    }
}

/// The checks above are what the tests stand on: each must fail on the attack it is for.
fn the_checks_of_this_file_catch_each_attack() {
    for raw in [
        "a\u{1b}[31m",
        "bell\u{7}",
        "cr\rx",
        "x\u{202e}y",
        "x\u{9b}y",
        "ok\n::error::x",
        "  ::add-mask::x",
        "x ##[error]y",
    ] {
        assert!(check_inert_text("t", raw).is_err(), "{raw:?}");
        let shown = escape::lines(raw);
        assert_eq!(check_inert_text("t", &shown), Ok(()), "{raw:?}");
    }
    for raw in [
        "[a](https://evil)",
        "![x](y)",
        "@org/team",
        "see #1",
        "<img src=x>",
        "www.evil.example",
        "a `b",
        "| a | b |",
        "## heading",
        "```\nx",
    ] {
        assert!(check_inert_markdown(raw).is_err(), "{raw:?}");
        let quoted = format!("- {}", escape::md_code(raw));
        assert_eq!(check_inert_markdown(&quoted), Ok(()), "{quoted:?}");
    }
    let row = format!("| {} | x | | | | | | | |", escape::md_cell("a|b"));
    assert_eq!(check_inert_markdown(&row), Ok(()), "{row}");
    let row = "| `a|b` | x | | | | | | | |";
    assert!(check_inert_markdown(row).is_err(), "{row}");
}

/// Arbitrary text, biased to what breaks things.
fn hostile_text() -> impl Strategy<Value = String> {
    prop_oneof![
        "\\PC{0,24}",
        "[ `|\\\\:#\\[\\]()!@<>*_\n\r\t\u{1b}\u{7}\u{9b}\u{202e}\u{2066}\u{2028}a-z]{0,24}",
        Just(ATTACKS.to_string()),
        Just("::error file=x::pwned".to_string()),
    ]
}

fn report_of(names: &[String]) -> Vec<Section> {
    let v = cilium_cmp_render::versions::parse("1.20.0").unwrap();
    let key = |n: &str| ObjectKey {
        group: String::new(),
        kind: "ConfigMap".into(),
        namespace: Some(n.to_string()),
        name: n.to_string(),
    };
    let n = |i: usize| names[i % names.len()].clone();
    let diff = Diff {
        from: n(1),
        to: n(2),
        from_version: v,
        to_version: v,
        objects: vec![ObjectDiff {
            key: key(&n(3)),
            api_version: "v1".into(),
            change: Change::Changed,
            fields: vec![FieldChange {
                path: FieldPath(vec![Step::Key("data".into()), Step::Key(n(4))]),
                before: Some(Value::String(n(5))),
                after: Some(json!({ n(6): [n(7)] })),
                in_pod_template: false,
                inert: false,
            }],
        }],
        unchanged: 1,
        consequences: vec![Consequence {
            kind: Kind::Image,
            subject: n(8),
            what: Prose::of_name(&n(9)).words(" → ").name(&n(10)),
            why: Prose::new()
                .words("see `the docs` at https://docs.cilium.io/ for ")
                .name(&n(11)),
        }],
    };
    vec![
        Section {
            name: n(0),
            outcome: Outcome::Compared {
                state: FolderState::Changed,
                diff: Box::new(diff),
            },
        },
        Section {
            name: n(12),
            outcome: Outcome::Failed(format!("cannot read {}:\n  {}", n(13), n(14))),
        },
        Section {
            name: n(15),
            outcome: Outcome::Fleet(vec![n(16)]),
        },
        Section {
            name: n(17),
            outcome: Outcome::InputsUnchanged,
        },
    ]
}

fn runner() -> TestRunner {
    TestRunner::new(Config {
        cases: 300,
        failure_persistence: None,
        ..Config::default()
    })
}

fn any_names_in_a_text_report_are_inert() {
    runner()
        .run(&prop::collection::vec(hostile_text(), 1..20), |names| {
            let text = cilium_cmp_gitops::diff::report_text::render(&report_of(&names));
            assert_inert_text("text report", &text);
            let json = cilium_cmp_gitops::diff::report_json::render(&report_of(&names));
            assert_inert_text("json report", &json);
            let doc: Value = serde_json::from_str(&json).expect("json");
            prop_assert_eq!(
                doc["folders"][0]["folder"].as_str(),
                Some(names[0].as_str())
            );
            Ok(())
        })
        .unwrap();
}

fn any_names_in_a_markdown_report_are_inert() {
    runner()
        .run(&prop::collection::vec(hostile_text(), 1..20), |names| {
            // Markers no program word holds, so each one found is a name: inside code.
            let names: Vec<String> = names.iter().map(|n| format!("{n} evil")).collect();
            let md = cilium_cmp_gitops::diff::report_markdown::render(&report_of(&names));
            assert_inert_markdown(&md);
            Ok(())
        })
        .unwrap();
}

fn the_text_escaper_hides_nothing_and_reads_back() {
    runner()
        .run(&hostile_text(), |s| {
            let shown = escape::text(&s);
            prop_assert!(!shown.contains('\n'));
            assert_inert_text("escape::text", &shown);
            assert_inert_text("escape::text after a line break", &format!("x\n  {shown}"));
            prop_assert_eq!(escape::read_back(&shown), Some(s.clone()));
            let span = escape::md_code(&s);
            assert_inert_markdown(&format!("- {span}"));
            assert_inert_markdown(&format!("| {} | | | | | | | | |", escape::md_cell(&s)));
            assert_inert_markdown(&format!(
                "<details><summary>x {}</summary>",
                escape::md_html(&s)
            ));
            assert_inert_markdown(&escape::md_fenced("text", &s));
            Ok(())
        })
        .unwrap();
}
