//! The documentation's commands and links, held to the program and to each other so they cannot
//! drift apart.
//!
//! Every markdown file of the repository (README.md, docs/, ARCHITECTURE.md, CONTRIBUTING.md, the
//! examples' and the sidecar's pages) is read. Every `cilium-cmp` command in one of their shell
//! blocks must name a subcommand and flags the program has (checked against its `--help`). Every
//! one that needs no cluster, network or placeholder input then runs, page by page, in a scratch
//! repository holding the documented example folder, and must succeed. The others are listed with
//! why they cannot run here and which test covers what they do. Every relative link must point
//! at a file that exists, and at a heading of it when it names one; so must every section named
//! in prose or code (`page.md#anchor`, `README, "Heading"`, also in the program's messages and
//! comments), and every path into `examples/` (the README's commands use only folders the
//! repository ships).

use crate::support::charts;
use crate::support::harness;

pub fn tests() -> Vec<harness::Trial> {
    harness::group(
        file!(),
        vec![
            harness::test(
                "the_markdown_files_are_all_found",
                the_markdown_files_are_all_found,
            )
            .shared("charts"),
            harness::test(
                "every_documented_command_exists_and_the_runnable_ones_succeed",
                every_documented_command_exists_and_the_runnable_ones_succeed,
            )
            .shared("charts"),
            harness::test("a_drifted_command_is_caught", a_drifted_command_is_caught)
                .shared("charts"),
            harness::test(
                "the_kustomize_install_applies_server_side",
                the_kustomize_install_applies_server_side,
            )
            .shared("charts"),
            harness::test(
                "the_readme_starts_with_what_the_project_is",
                the_readme_starts_with_what_the_project_is,
            )
            .shared("charts"),
            harness::test(
                "every_docs_page_is_in_the_index",
                every_docs_page_is_in_the_index,
            )
            .shared("charts"),
            harness::test("every_relative_link_resolves", every_relative_link_resolves)
                .shared("charts"),
            harness::test("a_broken_link_is_caught", a_broken_link_is_caught).shared("charts"),
            harness::test(
                "every_named_section_reference_resolves",
                every_named_section_reference_resolves,
            ),
            harness::test(
                "a_wrong_section_reference_is_caught",
                a_wrong_section_reference_is_caught,
            ),
            harness::test("every_example_path_exists", every_example_path_exists),
        ],
    )
}

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::scratch;
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
    ("kubectl", "needs a cluster (the command's own behaviour: tests/it/folder_preview.rs, tests/it/adopt_check.rs)"),
    ("helm ", "needs a Helm release (tests/it/adopt_check.rs reads such dumps)"),
    ("argocd ", "needs Argo CD (tests/it/adopt_check.rs)"),
    ("--live", "reads live dumps of a cluster (tests/it/adopt_check.rs)"),
    ("cilium-app.yaml", "reads an Application from a cluster (tests/it/import_application.rs)"),
    ("chart fetch", "downloads from the network (tests/it/chart_fetch.rs, against a local server)"),
    ("[", "a synopsis with optional parts"),
    ("1.20.1", "a release this binary does not list, from its archive (tests/it/release_day.rs)"),
    ("talos-check", "reads a node's machine config (tests/it/gitops.rs runs it on configs shaped as Talos writes them)"),
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

/// The scratch repository the documented runnable commands work in: the shipped example folders
/// (`examples/talos`, `examples/argocd`), a user's folder as the pages name it
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
    // The example folders the repository ships, which the README's quick starts render.
    for rel in [
        "examples/talos/values.yaml",
        "examples/talos/cilium-cmp.yaml",
        "examples/argocd/cilium/cilium-cmp.yaml",
        "examples/argocd/cilium/values.yaml",
        "examples/argocd/common/values.yaml",
    ] {
        s.write(rel, &read(rel));
    }
    let out = Command::new(bin())
        .current_dir(&s.0)
        .env("CILIUM_CMP_CHART_DIR", charts::dir())
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
    // A lock, as the folder pages assume one was written before `lock --check`.
    let out = Command::new(bin())
        .current_dir(&s.0)
        .env("CILIUM_CMP_CHART_DIR", charts::dir())
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

/// How many documented commands run at least: the README alone ran 12 before its text moved into
/// docs/; with every page's runnable commands run, 20 did when the pages were split.
const RUN_AT_LEAST: usize = 20;

/// Pages whose commands need another layout than the example repository, with the test that
/// runs them there. Their commands are still checked against `--help`.
const RUN_ELSEWHERE: &[(&str, &str)] = &[
    (
        "docs/fleet.md",
        "needs the example fleet's several folders; tests/it/fleet.rs runs every command of the page",
    ),
    (
        "docs/review.md",
        "needs a git repository with two revisions and files of two releases; tests/it/diff.rs runs \
         every form of the page (folder and repository against --base, two releases, two values \
         files, --set against --from-set) in a repository it makes",
    ),
    (
        "docs/diff.md",
        "its commands report changes, so they exit 2 or 3 by design; tests/it/diff.rs runs both \
         (a_set_applies_to_the_new_side_and_identical_sides_are_refused, the upgrade of the \
         examples)",
    ),
];

/// Every markdown file of the repository, relative to it, sorted: build output, Git's folder and
/// hidden folders left out.
fn markdown_files() -> Vec<PathBuf> {
    fn walk(dir: &Path, found: &mut Vec<PathBuf>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for path in entries {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if path.is_dir() {
                if !name.starts_with('.') && name != "target" && name != "node_modules" {
                    walk(&path, found);
                }
            } else if name.ends_with(".md") {
                found.push(path.strip_prefix(root()).unwrap().to_path_buf());
            }
        }
    }
    let mut found = Vec::new();
    walk(root(), &mut found);
    found
}

fn read(rel: &Path) -> String {
    std::fs::read_to_string(root().join(rel)).unwrap()
}

fn the_markdown_files_are_all_found() {
    let files = markdown_files();
    for expected in [
        "README.md",
        "ARCHITECTURE.md",
        "CONTRIBUTING.md",
        "docs/README.md",
        "docs/command-line.md",
    ] {
        assert!(
            files.iter().any(|f| f == Path::new(expected)),
            "{expected} not among {files:?}"
        );
    }
}

fn every_documented_command_exists_and_the_runnable_ones_succeed() {
    let repo = example_repository();
    let path_var = format!(
        "{}:{}",
        bin().parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut failures = Vec::new();
    let (mut ran, mut checked, mut in_readme) = (0, 0, 0);
    for page in markdown_files() {
        let name = page.to_string_lossy().into_owned();
        let elsewhere = RUN_ELSEWHERE.iter().any(|(p, _)| *p == name);
        for line in shell_lines(&read(&page)) {
            let Some(words) = cilium_cmp_words(&line) else {
                continue;
            };
            checked += 1;
            if name == "README.md" {
                in_readme += 1;
            }
            if let Err(e) = check_flags(&words) {
                failures.push(format!("{name}: {line}\n    {e}"));
                continue;
            }
            if elsewhere || NOT_RUN_HERE.iter().any(|(word, _)| line.contains(word)) {
                continue;
            }
            let line = line.replace("cargo run --release -- ", "cilium-cmp ");
            let out = Command::new("sh")
                .arg("-c")
                .arg(&line)
                .current_dir(&repo.0)
                .env("PATH", &path_var)
                .env("HOME", &repo.0)
                // The archives every render evaluates, and never a download.
                .env("CILIUM_CMP_CHART_DIR", charts::dir())
                .env("CILIUM_CMP_OFFLINE", "1")
                .output()
                .unwrap();
            ran += 1;
            if !out.status.success() {
                failures.push(format!(
                    "{name}: {line}\n    exit {:?}: {}",
                    out.status.code(),
                    String::from_utf8_lossy(&out.stderr)
                ));
            }
        }
    }
    eprintln!("markdown: {checked} commands checked against --help, {ran} of them run");
    assert!(
        in_readme >= 4,
        "found only {in_readme} commands in README.md"
    );
    assert!(checked >= 39, "found only {checked} commands");
    assert!(ran >= RUN_AT_LEAST, "only {ran} documented commands ran");
    assert!(
        failures.is_empty(),
        "documented commands that drifted:\n{}",
        failures.join("\n")
    );
}

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

/// Argo CD's CRDs exceed what a client-side apply can keep in its annotation: the documented
/// kustomize install of the sidecar must apply server-side.
fn the_kustomize_install_applies_server_side() {
    let installs: Vec<String> = markdown_files()
        .iter()
        .flat_map(|page| shell_lines(&read(page)))
        .filter(|l| l.contains("kubectl apply") && l.contains("sidecar/kustomize"))
        .collect();
    assert!(
        !installs.is_empty(),
        "the documentation installs the sidecar with kustomize"
    );
    for l in installs {
        assert!(
            l.contains("--server-side") && l.contains("--force-conflicts"),
            "{l}"
        );
    }
}

/// The README is the five-minute page: it says what the project is before any command, and its
/// set-up commands are exactly the two a fresh clone runs.
fn the_readme_starts_with_what_the_project_is() {
    let readme = read(Path::new("README.md"));
    let first_block = readme.find("```").expect("a shell block");
    assert!(
        readme[..first_block].contains("renders the Kubernetes manifests of the"),
        "the first paragraph says what cilium-cmp is"
    );
    let first: Vec<String> = shell_lines(&readme[first_block..])
        .into_iter()
        .take(2)
        .collect();
    assert_eq!(
        first,
        [
            "cargo run --release -- render --cilium-version 1.20.0 -f examples/talos/values.yaml",
            "cargo test --no-fail-fast",
        ]
    );
    let lines = readme.lines().count();
    assert!(
        lines <= 150,
        "README.md has {lines} lines; move detail into docs/"
    );
}

/// The `[text](target)` targets of a markdown text, outside fenced blocks and code spans.
fn link_targets(text: &str) -> Vec<String> {
    let mut targets = Vec::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        // Text between backticks is code, not a link.
        let prose: String = line.split('`').step_by(2).collect::<Vec<_>>().join(" ");
        let mut rest = prose.as_str();
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let end = after.find([')', ' ']).unwrap_or(after.len());
            targets.push(after[..end].to_string());
            rest = &after[end..];
        }
    }
    targets
}

/// The anchors GitHub gives a page's headings: lower case, spaces to `-`, punctuation other
/// than `-` and `_` dropped, a repeated heading suffixed `-1`, `-2`, ...
fn heading_anchors(text: &str) -> Vec<String> {
    let mut anchors: Vec<String> = Vec::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        let Some(title) = line.strip_prefix('#') else {
            continue;
        };
        if fenced {
            continue;
        }
        let title = title.trim_start_matches('#');
        if !title.starts_with(' ') {
            continue;
        }
        let slug: String = title
            .trim()
            .to_lowercase()
            .chars()
            .filter_map(|c| match c {
                ' ' => Some('-'),
                c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
                _ => None,
            })
            .collect();
        let repeats = anchors
            .iter()
            .filter(|a| **a == slug || a.starts_with(&format!("{slug}-")))
            .count();
        anchors.push(if repeats == 0 {
            slug
        } else {
            format!("{slug}-{repeats}")
        });
    }
    anchors
}

/// Whether the link `target` written in the page `from` (relative to the repository) resolves.
fn check_link(from: &Path, target: &str) -> Result<(), String> {
    if target.contains("://") || target.starts_with("mailto:") {
        return Ok(());
    }
    let (file, anchor) = target.split_once('#').unwrap_or((target, ""));
    let path = if file.is_empty() {
        root().join(from)
    } else {
        root().join(from.parent().unwrap()).join(file)
    };
    if !path.exists() {
        return Err(format!("{target}: no file {}", path.display()));
    }
    if !anchor.is_empty() && path.extension().is_some_and(|e| e == "md") {
        let anchors = heading_anchors(&std::fs::read_to_string(&path).unwrap());
        if !anchors.iter().any(|a| a == anchor) {
            return Err(format!(
                "{target}: no heading #{anchor} in {}",
                path.display()
            ));
        }
    }
    Ok(())
}

/// docs/README.md is the index a newcomer reads in order: every page under docs/ is on it.
fn every_docs_page_is_in_the_index() {
    let index = read(Path::new("docs/README.md"));
    let linked = link_targets(&index);
    let missing: Vec<PathBuf> = markdown_files()
        .into_iter()
        .filter(|f| f.starts_with("docs") && f != Path::new("docs/README.md"))
        .filter(|f| {
            let rel = f
                .strip_prefix("docs")
                .unwrap()
                .to_string_lossy()
                .into_owned();
            !linked
                .iter()
                .any(|t| t.split('#').next() == Some(rel.as_str()))
        })
        .collect();
    assert!(
        missing.is_empty(),
        "pages missing from docs/README.md: {missing:?}"
    );
}

fn every_relative_link_resolves() {
    let mut failures = Vec::new();
    let mut checked = 0;
    for page in markdown_files() {
        for target in link_targets(&read(&page)) {
            checked += 1;
            if let Err(e) = check_link(&page, &target) {
                failures.push(format!("{}: {e}", page.display()));
            }
        }
    }
    eprintln!("markdown: {checked} links checked");
    assert!(checked >= 30, "found only {checked} links");
    assert!(
        failures.is_empty(),
        "broken links:\n{}",
        failures.join("\n")
    );
}

fn a_broken_link_is_caught() {
    // The checker itself: a missing file or heading is reported, code is not read as a link.
    assert_eq!(
        link_targets("see [a](b.md#c) and `[x](y)`\n```\n[p](q)\n```\n[d](https://e/)"),
        ["b.md#c", "https://e/"]
    );
    assert_eq!(
        heading_anchors("# The command line\n## Upgrades: `--apply-renames`\n## Tests\n## Tests"),
        [
            "the-command-line",
            "upgrades---apply-renames",
            "tests",
            "tests-1"
        ]
    );
    let readme = Path::new("README.md");
    assert!(check_link(readme, "docs/no-such-page.md").is_err());
    assert!(check_link(readme, "docs/README.md#no-such-heading").is_err());
    assert!(check_link(readme, "CONTRIBUTING.md#tests").is_ok());
    assert!(check_link(readme, "https://cilium.io").is_ok());
}

/// A section a text names: the file (as written), the anchor or heading title, and whether it is
/// a title (`README, "Heading"`) rather than an anchor (`page.md#anchor`).
#[derive(Debug, PartialEq)]
struct SectionRef {
    file: String,
    section: String,
    title: bool,
}

/// The sections `text` names, in any of the forms the repository writes: `page.md#anchor`
/// (links, code spans, messages) and a page followed by a quoted heading, `README, "Heading"`,
/// `the README ("Heading")`, `docs/x.md, "Heading"` (with `\"` in Rust string literals).
fn section_refs(text: &str) -> Vec<SectionRef> {
    let mut found = Vec::new();
    let is_path = |c: char| c.is_ascii_alphanumeric() || "/._-".contains(c);
    let is_anchor = |c: char| c.is_ascii_alphanumeric() || "_-".contains(c);
    // `page.md#anchor`.
    let mut rest = text;
    while let Some(at) = rest.find(".md#") {
        let start = rest[..at].rfind(|c: char| !is_path(c)).map_or(0, |i| i + 1);
        let after = &rest[at + 4..];
        let end = after.find(|c: char| !is_anchor(c)).unwrap_or(after.len());
        if start < at && end > 0 {
            found.push(SectionRef {
                file: format!("{}.md", &rest[start..at]),
                section: after[..end].to_string(),
                title: false,
            });
        }
        rest = &after[end..];
    }
    // A page name, then `, "` or ` ("`, then the title up to the closing quote.
    let words: Vec<(usize, &str)> = text
        .match_indices(|c: char| !is_path(c))
        .scan(0, |from, (i, sep)| {
            let w = (*from, &text[*from..i]);
            *from = i + sep.len();
            Some(w)
        })
        .collect();
    for (at, word) in words {
        let page = word.trim_end_matches('.');
        let named = matches!(page, "README" | "ARCHITECTURE" | "CONTRIBUTING")
            || (page.ends_with(".md") && page.len() > 3);
        if !named {
            continue;
        }
        let after = &text[at + word.len()..];
        let Some(quoted) = [", \"", " (\"", ", \\\"", " (\\\"", " section \""]
            .iter()
            .find_map(|open| after.strip_prefix(open))
        else {
            continue;
        };
        let Some(end) = quoted.find(['"', '\\']) else {
            continue;
        };
        let file = if page.ends_with(".md") {
            page.to_string()
        } else {
            format!("{page}.md")
        };
        found.push(SectionRef {
            file,
            section: quoted[..end].trim().to_string(),
            title: true,
        });
    }
    found
}

/// The headings of a markdown text, as written (code marks dropped).
fn heading_titles(text: &str) -> Vec<String> {
    let mut titles = Vec::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced || !line.starts_with('#') {
            continue;
        }
        let title = line.trim_start_matches('#');
        if title.starts_with(' ') {
            titles.push(title.trim().replace('`', ""));
        }
    }
    titles
}

/// Whether `r`, named in the file `from` (relative to the repository), resolves: the file, found
/// beside `from` or else from the repository root (the bare `README` is the root's), holds a
/// heading of that anchor, or a heading that starts with that title (a title may be cut where a
/// message's line continues).
fn check_section(from: &Path, r: &SectionRef) -> Result<(), String> {
    let candidates = [
        root()
            .join(from.parent().unwrap_or(Path::new("")))
            .join(&r.file),
        root().join(&r.file),
    ];
    let top_level = matches!(
        r.file.as_str(),
        "README.md" | "ARCHITECTURE.md" | "CONTRIBUTING.md"
    );
    let path = if top_level && r.title {
        root().join(&r.file)
    } else {
        match candidates.iter().find(|p| p.is_file()) {
            Some(p) => p.clone(),
            None => return Err(format!("{}: no such page", r.file)),
        }
    };
    let text = std::fs::read_to_string(&path).unwrap();
    let ok = if r.title {
        let wanted = r.section.replace('`', "");
        heading_titles(&text)
            .iter()
            .any(|t| t.starts_with(&wanted) && !wanted.is_empty())
    } else {
        heading_anchors(&text).contains(&r.section)
    };
    if ok {
        Ok(())
    } else {
        Err(format!(
            "{} names the section {:?} of {}, which has no such heading",
            from.display(),
            r.section,
            path.strip_prefix(root()).unwrap_or(&path).display()
        ))
    }
}

/// The repository's texts that name sections: every markdown page, and the program's sources
/// (messages and comments cite the pages) and Cargo.toml.
fn texts_naming_sections() -> Vec<PathBuf> {
    fn walk(dir: &Path, found: &mut Vec<PathBuf>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for path in entries {
            if path.is_dir() {
                walk(&path, found);
            } else if path.extension().is_some_and(|e| e == "rs") {
                found.push(path.strip_prefix(root()).unwrap().to_path_buf());
            }
        }
    }
    let mut files = markdown_files();
    walk(&root().join("src"), &mut files);
    walk(&root().join("crates"), &mut files);
    files.push(PathBuf::from("Cargo.toml"));
    files
}

fn every_named_section_reference_resolves() {
    let mut failures = Vec::new();
    let mut checked = 0;
    for file in texts_naming_sections() {
        for r in section_refs(&read(&file)) {
            checked += 1;
            if let Err(e) = check_section(&file, &r) {
                failures.push(e);
            }
        }
    }
    eprintln!("{checked} section references checked");
    assert!(checked >= 20, "found only {checked} section references");
    assert!(
        failures.is_empty(),
        "sections named that do not exist:\n{}",
        failures.join("\n")
    );
}

fn a_wrong_section_reference_is_caught() {
    assert_eq!(
        section_refs("see `docs/parity.md#bad-input` and the README (\"Performance\"); README, \\\"Install\\\""),
        [
            SectionRef {
                file: "docs/parity.md".into(),
                section: "bad-input".into(),
                title: false
            },
            SectionRef {
                file: "README.md".into(),
                section: "Performance".into(),
                title: true
            },
            SectionRef {
                file: "README.md".into(),
                section: "Install".into(),
                title: true
            },
        ]
    );
    let from = Path::new("docs/review.md");
    let refs =
        section_refs("the README (\"Performance\"), README, \"Install\", parity.md#nothing-here");
    assert!(check_section(from, &refs[0]).is_err(), "{refs:?}");
    assert!(check_section(from, &refs[2]).is_ok(), "{refs:?}");
    assert!(check_section(from, &refs[1]).is_err(), "{refs:?}");
    let refs = section_refs("[x](command-line.md#chart-archives)");
    assert!(check_section(from, &refs[0]).is_ok(), "{refs:?}");
}

/// The paths into `examples/` that README.md and docs/ name, and the folders the README's
/// commands render: each must exist in the repository (a quick start that names a folder the
/// reader does not have fails at its first step).
fn every_example_path_exists() {
    let mut failures = Vec::new();
    let mut checked = 0;
    let is_path = |c: char| c.is_ascii_alphanumeric() || "/._-".contains(c);
    for page in markdown_files() {
        let name = page.to_string_lossy().into_owned();
        if name != "README.md" && !name.starts_with("docs/") {
            continue;
        }
        let text = read(&page);
        for (at, _) in text.match_indices("examples/") {
            if at > 0 && is_path(text[..at].chars().last().unwrap()) {
                continue;
            }
            let path: String = text[at..].chars().take_while(|c| is_path(*c)).collect();
            let path = path.trim_end_matches('.');
            checked += 1;
            if !root().join(path).exists() {
                failures.push(format!("{name}: {path} does not exist"));
            }
        }
        if name != "README.md" {
            continue;
        }
        // The folder each folder command of the README's shell blocks renders.
        for line in shell_lines(&text) {
            let Some(words) = cilium_cmp_words(&line) else {
                continue;
            };
            let Some(cmd) = words.get(1) else { continue };
            if !["render-folder", "lock", "talos-patch", "diff"].contains(&cmd.as_str()) {
                continue;
            }
            let mut i = 2;
            while i < words.len() {
                let w = &words[i];
                if w.starts_with('-') {
                    // Flags with a value (all of these commands' flags but the switches).
                    let switch = ["--check", "--force", "--allow-unknown-keys"]
                        .contains(&w.as_str())
                        || w.contains('=');
                    i += if switch { 1 } else { 2 };
                    continue;
                }
                checked += 1;
                if !root().join(w).is_dir() {
                    failures.push(format!(
                        "README.md: `{line}` renders {w}, which the repository does not ship"
                    ));
                }
                break;
            }
        }
    }
    eprintln!("{checked} example paths checked");
    assert!(checked >= 5, "found only {checked} example paths");
    assert!(
        failures.is_empty(),
        "example paths that do not exist:\n{}",
        failures.join("\n")
    );
}
