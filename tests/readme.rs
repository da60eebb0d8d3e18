//! The README's commands, held to the program so the two cannot drift apart.
//!
//! Every `cilium-cmp` command in a shell block of README.md must name a subcommand and flags the
//! program has (checked against its `--help`). Every one that needs no cluster, network or
//! placeholder input then runs, in README order, in a scratch repository holding the README's
//! example folder, and must succeed. The others are listed with why they cannot run here and
//! which test covers what they do.

use std::path::{Path, PathBuf};
use std::process::Command;

#[path = "support/scratch.rs"]
mod scratch;
use scratch::Scratch;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_cilium-cmp"))
}

/// Commands that read what only a cluster, a network or a person supplies, by a word in their
/// line, with the test that exercises the same command on stand-in input.
const NOT_RUN_HERE: &[(&str, &str)] = &[
    ("kubectl", "needs a cluster (the command's own behaviour: tests/folder_preview.rs, tests/adopt_check.rs)"),
    ("helm ", "needs a Helm release (tests/adopt_check.rs reads such dumps)"),
    ("argocd ", "needs Argo CD (tests/adopt_check.rs)"),
    ("--live", "reads live dumps of a cluster (tests/adopt_check.rs)"),
    ("cilium-app.yaml", "reads an Application from a cluster (tests/import_application.rs)"),
    ("chart fetch", "downloads from the network (tests/chart_fetch.rs, against a local server)"),
    ("[", "a synopsis with optional parts"),
];

/// One command line of a shell block: continuation lines joined, the comment cut off.
fn shell_lines(readme: &str) -> Vec<String> {
    let mut lines = Vec::new();
    let mut in_sh = false;
    let mut pending = String::new();
    for line in readme.lines() {
        if let Some(lang) = line.trim_start().strip_prefix("```") {
            in_sh = !in_sh && (lang == "sh" || lang == "bash");
            continue;
        }
        if !in_sh {
            continue;
        }
        if let Some(head) = line.strip_suffix('\\') {
            pending.push_str(head);
            pending.push(' ');
            continue;
        }
        pending.push_str(line);
        let full = cut_comment(&std::mem::take(&mut pending));
        if !full.trim().is_empty() {
            lines.push(full.trim().to_string());
        }
    }
    lines
}

/// The line without a trailing `# comment` (a `#` after a space, outside quotes).
fn cut_comment(line: &str) -> String {
    let mut quote = None;
    let mut prev = ' ';
    for (i, c) in line.char_indices() {
        match (quote, c) {
            (None, '\'' | '"') => quote = Some(c),
            (Some(q), _) if c == q => quote = None,
            (None, '#') if prev.is_whitespace() => return line[..i].to_string(),
            _ => {}
        }
        prev = c;
    }
    line.to_string()
}

/// The `cilium-cmp ...` part of a shell line (up to a pipe, `&&`, `;` or a redirection), split
/// into words as the shell would for these simple lines.
fn cilium_cmp_words(line: &str) -> Option<Vec<String>> {
    let line = line.replace("cargo run --release -- ", "cilium-cmp ");
    let start = line.find("cilium-cmp ")?;
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quote = None;
    let mut depth = 0;
    for c in line[start..].chars() {
        match (quote, c) {
            (None, '\'' | '"') if depth == 0 => quote = Some(c),
            (Some(q), _) if c == q => quote = None,
            (None, '(') => {
                depth += 1;
                word.push(c);
            }
            (None, ')') => {
                depth -= 1;
                word.push(c);
            }
            (None, '|' | ';' | '>' | '&') if depth == 0 => break,
            (None, ' ') if depth == 0 => {
                if !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                }
            }
            _ => word.push(c),
        }
    }
    if !word.is_empty() {
        words.push(word);
    }
    Some(words)
}

fn help(path: &[&str]) -> String {
    let out = Command::new(bin())
        .args(path)
        .arg("--help")
        .output()
        .unwrap();
    assert!(out.status.success(), "cilium-cmp {} --help", path.join(" "));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The subcommand path of `words` and every flag it uses exist in the program's help.
fn check_flags(words: &[String]) -> Result<(), String> {
    let words: Vec<String> = words
        .iter()
        .map(|w| w.trim_matches(|c| c == '[' || c == ']').to_string())
        .filter(|w| !w.is_empty() && w != "...")
        .collect();
    let mut path: Vec<&str> = Vec::new();
    let mut rest = &words[1..];
    // Walk down subcommands while the help lists them.
    while let Some(first) = rest.first() {
        let text = help(&path);
        if !text.contains("Commands:") || first.starts_with('-') {
            break;
        }
        let listed = text
            .lines()
            .skip_while(|l| !l.starts_with("Commands:"))
            .any(|l| l.split_whitespace().next() == Some(first.as_str()));
        if !listed {
            return Err(format!(
                "no subcommand {first:?} in `cilium-cmp {}`",
                path.join(" ")
            ));
        }
        path.push(first);
        rest = &rest[1..];
    }
    let text = help(&path);
    for w in rest.iter().filter(|w| w.starts_with('-') && w.len() > 1) {
        let flag = w.split('=').next().unwrap();
        let known = if flag.starts_with("--") {
            text.contains(&format!("{flag} ")) || text.contains(&format!("{flag}\n"))
        } else {
            text.contains(&format!("{flag}, "))
        };
        if !known {
            return Err(format!(
                "`cilium-cmp {}` has no flag {flag}",
                path.join(" ")
            ));
        }
    }
    Ok(())
}

/// The scratch repository the README's runnable commands work in: its example folder
/// (`clusters/prod/cilium` with the shared `clusters/common/values.yaml`), a `values.yaml`, and a
/// rendered `out.yaml`.
fn example_repository() -> Scratch {
    let s = Scratch::new("readme");
    let read = |rel: &str| std::fs::read_to_string(root().join(rel)).unwrap();
    s.write("values.yaml", &read("examples/talos/values.yaml"));
    s.write("more.yaml", "operator:\n  replicas: 1\n");
    s.write(
        "clusters/prod/cilium/cilium-cmp.yaml",
        "ciliumVersion: \"1.20.0\"\nvaluesFiles:\n  - ../../common/values.yaml\n  - values.yaml\n",
    );
    s.write(
        "clusters/prod/cilium/values.yaml",
        &read("examples/argocd/cilium/values.yaml"),
    );
    s.write(
        "clusters/common/values.yaml",
        &read("examples/argocd/common/values.yaml"),
    );
    std::fs::create_dir_all(s.0.join("examples/talos")).unwrap();
    std::fs::copy(
        root().join("examples/talos/values.yaml"),
        s.0.join("examples/talos/values.yaml"),
    )
    .unwrap();
    let out = Command::new(bin())
        .current_dir(&s.0)
        .args([
            "render",
            "--cilium-version",
            "1.20.0",
            "-f",
            "values.yaml",
            "-o",
            "out.yaml",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // A lock, as the folder sections assume one was written before `lock --check`.
    let out = Command::new(bin())
        .current_dir(&s.0)
        .args(["lock", "clusters/prod/cilium", "--namespace", "kube-system"])
        .args(["--kube-version", "1.35.0"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    s
}

#[test]
fn every_readme_command_exists_and_the_runnable_ones_succeed() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let lines: Vec<String> = shell_lines(&readme)
        .into_iter()
        .filter(|l| cilium_cmp_words(l).is_some())
        .collect();
    assert!(lines.len() >= 20, "found only {} commands", lines.len());
    let repo = example_repository();
    let path_var = format!(
        "{}:{}",
        bin().parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut failures = Vec::new();
    let (mut ran, mut checked) = (0, 0);
    for line in &lines {
        let words = cilium_cmp_words(line).unwrap();
        checked += 1;
        if let Err(e) = check_flags(&words) {
            failures.push(format!("{line}\n    {e}"));
            continue;
        }
        if NOT_RUN_HERE.iter().any(|(word, _)| line.contains(word)) {
            continue;
        }
        let line = line.replace("cargo run --release -- ", "cilium-cmp ");
        let out = Command::new("sh")
            .arg("-c")
            .arg(&line)
            .current_dir(&repo.0)
            .env("PATH", &path_var)
            .env("HOME", &repo.0)
            .env_remove("CILIUM_CMP_CHART_DIR")
            .output()
            .unwrap();
        ran += 1;
        if !out.status.success() {
            failures.push(format!(
                "{line}\n    exit {:?}: {}",
                out.status.code(),
                String::from_utf8_lossy(&out.stderr)
            ));
        }
    }
    eprintln!("README: {checked} commands checked against --help, {ran} of them run");
    assert!(ran >= 10, "only {ran} README commands ran");
    assert!(
        failures.is_empty(),
        "README commands that drifted:\n{}",
        failures.join("\n")
    );
}

#[test]
fn a_drifted_command_is_caught() {
    // The checker itself: a flag or subcommand the program lacks is reported.
    let words = |l: &str| cilium_cmp_words(l).unwrap();
    assert!(check_flags(&words(
        "cilium-cmp render --cilium-version 1.20.0 --no-such-flag"
    ))
    .is_err());
    assert!(check_flags(&words("cilium-cmp chart fletch 1.20.0")).is_err());
    assert!(check_flags(&words("cilium-cmp chart fetch 1.20.0 --dir x")).is_ok());
    assert_eq!(
        shell_lines("```sh\ncilium-cmp render \\\n  -f a.yaml  # note\n```\n"),
        vec!["cilium-cmp render    -f a.yaml".to_string()]
    );
}

/// Argo CD's CRDs exceed what a client-side apply can keep in its annotation: the README's
/// kustomize install of the sidecar must apply server-side.
#[test]
fn the_kustomize_install_applies_server_side() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let installs: Vec<String> = shell_lines(&readme)
        .into_iter()
        .filter(|l| l.contains("kubectl apply") && l.contains("sidecar/kustomize"))
        .collect();
    assert!(
        !installs.is_empty(),
        "the README installs the sidecar with kustomize"
    );
    for l in installs {
        assert!(
            l.contains("--server-side") && l.contains("--force-conflicts"),
            "{l}"
        );
    }
}

/// The pages under docs/ are held to the program as the README is: every `cilium-cmp` command in
/// their shell blocks names a subcommand and flags that exist (they need live clusters or dumps,
/// so they are checked, not run).
#[test]
fn every_docs_command_exists() {
    let mut checked = 0;
    let mut failures = Vec::new();
    let mut pages: Vec<_> = std::fs::read_dir(root().join("docs"))
        .expect("docs/ exists")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    pages.sort();
    for page in pages {
        let text = std::fs::read_to_string(&page).unwrap();
        for line in shell_lines(&text) {
            let Some(words) = cilium_cmp_words(&line) else {
                continue;
            };
            checked += 1;
            if let Err(e) = check_flags(&words) {
                failures.push(format!("{}: {line}\n    {e}", page.display()));
            }
        }
    }
    assert!(checked >= 2, "only {checked} docs commands found");
    assert!(
        failures.is_empty(),
        "docs commands that drifted:\n{}",
        failures.join("\n")
    );
}
