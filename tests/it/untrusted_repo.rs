//! The repository as a pull request writes it, read by `diff --base` in CI and by the plugin:
//! committed folders that look like bare repositories, hostile `.git/config` keys, embedded
//! repositories and gitdir links, a `git` committed at the top, tree bombs, values files inside
//! `.git`, and a killed diff's temporary folders. Each test runs the binary as a user would and
//! asserts the safe outcome: no program of the attacker's runs (every attack writes a marker file
//! when it does, and a control run of plain git proves the attack is live on this git), a clear
//! message and exit 1 (or a correct diff), nothing on stdout, nothing left behind.

use crate::support::charts;
use crate::support::harness;

pub fn tests() -> Vec<harness::Trial> {
    harness::group(
        file!(),
        vec![
            harness::test(
                "a_committed_bare_repository_in_the_folder_never_runs_its_upload_pack",
                a_committed_bare_repository_in_the_folder_never_runs_its_upload_pack,
            )
            .shared("charts"),
            harness::test(
                "the_real_git_config_cannot_make_the_plumbing_run_a_program",
                the_real_git_config_cannot_make_the_plumbing_run_a_program,
            )
            .shared("charts"),
            harness::test(
                "an_embedded_repository_above_or_below_the_folder_is_never_handed_to_git",
                an_embedded_repository_above_or_below_the_folder_is_never_handed_to_git,
            )
            .shared("charts"),
            harness::test(
                "a_gitdir_link_in_the_folder_is_content_and_refused",
                a_gitdir_link_in_the_folder_is_content_and_refused,
            ),
            harness::test(
                "a_worktree_top_level_gitdir_link_is_the_users_and_is_used",
                a_worktree_top_level_gitdir_link_is_the_users_and_is_used,
            )
            .shared("charts"),
            harness::test(
                "a_git_committed_to_the_repository_is_never_run",
                a_git_committed_to_the_repository_is_never_run,
            )
            .shared("charts"),
            harness::test(
                "a_tree_bomb_is_refused_quickly_in_bounded_memory",
                a_tree_bomb_is_refused_quickly_in_bounded_memory,
            )
            .shared("charts"),
            harness::test(
                "values_files_inside_dot_git_are_never_read",
                values_files_inside_dot_git_are_never_read,
            ),
            harness::test(
                "a_diff_ended_by_a_signal_removes_its_temporary_folders",
                a_diff_ended_by_a_signal_removes_its_temporary_folders,
            ),
            harness::test(
                "stale_temporary_folders_of_dead_runs_are_removed_and_nothing_else",
                stale_temporary_folders_of_dead_runs_are_removed_and_nothing_else,
            ),
            harness::test(
                "folders_outside_the_work_tree_and_folders_not_in_one_are_refused",
                folders_outside_the_work_tree_and_folders_not_in_one_are_refused,
            ),
            harness::test(
                "a_partial_clone_is_never_fetched_from_and_a_missing_base_file_is_named",
                a_partial_clone_is_never_fetched_from_and_a_missing_base_file_is_named,
            ),
        ],
    )
}

use crate::support::child;
use crate::support::scratch;

use std::collections::BTreeSet;
use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use child::{run, Outcome};
use scratch::Scratch;

const SETTINGS: &str = "ciliumVersion: \"1.20.0\"\n";
/// Values that render without the chart archive (no bundled file is embedded).
const VALUES: &str = "cni:\n  iptablesRemoveAWSRules: false\n";
/// A commit no repository here holds: reading it makes a partial clone fetch it.
const MISSING: &str = "1111111111111111111111111111111111111111";

fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_cilium-cmp"))
}

/// Plain git, as the test's setup and the control runs use it: no config of the machine's.
fn plain_git(dir: &Path) -> Command {
    let mut c = Command::new("git");
    c.current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args(["-c", "init.defaultBranch=main"]);
    c
}

fn git(dir: &Path, args: &[&str]) -> String {
    let o = plain_git(dir).args(args).output().expect("git runs");
    assert!(
        o.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

fn commit_all(dir: &Path, message: &str) {
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-qm", message]);
}

/// A repository made by the test: `s` initialised and its files committed.
fn init(s: &Scratch) {
    git(&s.0, &["init", "-q"]);
    commit_all(&s.0, "base");
}

/// Where an attack's command writes its marker, and a private temporary folder for the run.
struct Watch {
    markers: Scratch,
    tmp: Scratch,
    /// Hooks and scripts the attacks name.
    tools: Scratch,
}

impl Watch {
    fn new() -> Watch {
        Watch {
            markers: Scratch::new("markers"),
            tmp: Scratch::new("tmp"),
            tools: Scratch::new("tools"),
        }
    }

    fn marker(&self, name: &str) -> PathBuf {
        self.markers.0.join(name)
    }

    /// `cilium-cmp ARGS` in `cwd`, with the caller's environment.
    fn cilium_cmp(&self, cwd: &Path, args: &[&str]) -> Outcome {
        let mut c = child::command(bin());
        c.current_dir(cwd)
            .args(args)
            .env("CILIUM_CMP_CHART_DIR", charts::dir())
            .env("TMPDIR", &self.tmp.0);
        run(c)
    }

    fn assert_no_marker(&self) {
        let made: Vec<_> = std::fs::read_dir(&self.markers.0)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert!(made.is_empty(), "the attack ran: {made:?}");
    }

    /// The control: plain git on the same repository runs the attack (the test proves something).
    fn assert_attack_is_live(&self, name: &str, dir: &Path, args: &[&str]) {
        let _ = plain_git(dir)
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        assert!(
            self.marker(name).exists(),
            "plain `git {args:?}` did not run the attack {name}: the repository is not a working attack on this git"
        );
    }
}

/// Refused: exit 1, nothing on stdout, a message holding `needle`.
fn assert_refused(o: &Outcome, needle: &str) {
    assert_eq!(o.code, Some(1), "stderr: {}", o.stderr);
    assert!(o.stdout.is_empty(), "stdout: {}", o.stdout);
    assert!(
        o.stderr.contains(needle),
        "want {needle:?} in: {}",
        o.stderr
    );
}

/// Every path under `dir` (links not followed), to tell whether anything was created.
fn snapshot(dir: &Path) -> BTreeSet<PathBuf> {
    let mut out = BTreeSet::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            let p = e.path();
            if e.file_type().unwrap().is_dir() {
                stack.push(p.clone());
            }
            out.insert(p);
        }
    }
    out
}

/// A committed folder that looks like a bare repository whose config fetches lazily from a
/// "promisor" remote through `uploadpack`, a shell command (the report's repository).
fn bare_looking_folder(s: &Scratch, folder: &str, marker: &Path) {
    s.write(&format!("{folder}/HEAD"), "ref: refs/heads/main\n");
    s.write(&format!("{folder}/objects/info/.keep"), "");
    s.write(
        &format!("{folder}/refs/remotes/origin/main"),
        &format!("{MISSING}\n"),
    );
    s.write(
        &format!("{folder}/config"),
        &format!(
            "[core]\n\trepositoryformatversion = 1\n\tworktree = .\n[extensions]\n\tpartialClone = origin\n[remote \"origin\"]\n\tpromisor = true\n\tuploadpack = touch {}; git-upload-pack\n",
            marker.display()
        ),
    );
}

fn app_folder(s: &Scratch, folder: &str) {
    s.write(&format!("{folder}/cilium-cmp.yaml"), SETTINGS);
    s.write(&format!("{folder}/values.yaml"), VALUES);
}

fn a_committed_bare_repository_in_the_folder_never_runs_its_upload_pack() {
    let w = Watch::new();
    let repo = Scratch::new("bare-in-folder");
    let folder = "clusters/prod/cilium";
    app_folder(&repo, folder);
    bare_looking_folder(&repo, folder, &w.marker("uploadpack"));
    init(&repo);
    let before = snapshot(&repo.0);
    let inside = repo.0.join(folder);
    // The documented command, then the same from inside the folder and with the folder as
    // --repo-root, and the repository form.
    for (cwd, args) in [
        (&repo.0, vec!["diff", folder, "--base", "origin/main"]),
        (&inside, vec!["diff", ".", "--base", "origin/main"]),
        (&inside, vec!["diff", "--base", "origin/main"]),
        (
            &repo.0,
            vec!["diff", "--base", "origin/main", "--repo-root", folder],
        ),
        (&repo.0, vec!["diff", "--base", "origin/main"]),
    ] {
        let o = w.cilium_cmp(cwd, &args);
        assert_refused(&o, "--base \"origin/main\": no such revision in ");
        assert!(
            o.stderr.contains(&repo.0.display().to_string()),
            "the top level, not the folder: {}",
            o.stderr
        );
    }
    // A revision that exists compares the folder with itself.
    let o = w.cilium_cmp(&repo.0, &["diff", folder, "--base", "HEAD"]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert!(
        o.stdout.starts_with(&format!(
            "== {folder} (inputs unchanged): base HEAD (Cilium 1.20.0)"
        )),
        "{}",
        o.stdout
    );
    w.assert_no_marker();
    assert_eq!(
        snapshot(&repo.0),
        before,
        "nothing is created in the repository"
    );
    w.assert_attack_is_live(
        "uploadpack",
        &inside,
        &[
            "-c",
            "safe.bareRepository=all",
            "rev-parse",
            "--verify",
            "origin/main^{commit}",
        ],
    );
}

/// Keys of the top level's own `.git/config` that make git run a program, each with the plain
/// git command that runs it (None: no command of git's runs it without a network, and it is
/// checked only for not running).
fn real_config_attacks(w: &Watch) -> Vec<(&'static str, String, Option<Vec<&'static str>>)> {
    let touch = |name: &str| format!("touch {}", w.marker(name).display());
    let lazy_fetch = Some(vec!["rev-parse", "--verify", "origin/main^{commit}"]);
    let fsmonitor = w.tools.0.join("fsmonitor-hook");
    std::fs::write(&fsmonitor, format!("#!/bin/sh\n{}\n", touch("fsmonitor"))).unwrap();
    std::fs::set_permissions(&fsmonitor, std::fs::Permissions::from_mode(0o755)).unwrap();
    // Every hook git has, each writing the marker.
    let hooks = w.tools.0.join("hooks");
    std::fs::create_dir_all(&hooks).unwrap();
    for hook in [
        "reference-transaction",
        "post-checkout",
        "post-index-change",
        "pre-auto-gc",
        "fsmonitor-watchman",
        "post-rewrite",
    ] {
        let p = hooks.join(hook);
        std::fs::write(&p, format!("#!/bin/sh\n{}\n", touch("hooks"))).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let promisor = "[extensions]\n\tpartialClone = origin\n";
    vec![
        (
            "uploadpack",
            format!(
                "{promisor}[remote \"origin\"]\n\tpromisor = true\n\tuploadpack = {}; git-upload-pack\n",
                touch("uploadpack")
            ),
            lazy_fetch.clone(),
        ),
        (
            "sshcommand",
            format!(
                "{promisor}[core]\n\tsshCommand = {}; false\n[remote \"origin\"]\n\tpromisor = true\n\turl = ssh://example.invalid/cilium.git\n",
                touch("sshcommand")
            ),
            lazy_fetch.clone(),
        ),
        (
            "ext",
            format!(
                "{promisor}[protocol]\n\tallow = always\n[protocol \"ext\"]\n\tallow = always\n[remote \"origin\"]\n\tpromisor = true\n\turl = ext::sh -c {}\n",
                touch("ext").replace(' ', "% ")
            ),
            lazy_fetch,
        ),
        (
            "fsmonitor",
            format!("[core]\n\tfsmonitor = {}\n", fsmonitor.display()),
            Some(vec!["status", "--porcelain"]),
        ),
        (
            "credential",
            format!(
                "{promisor}[credential]\n\thelper = !{}\n[remote \"origin\"]\n\tpromisor = true\n\turl = https://127.0.0.1:9/cilium.git\n",
                touch("credential")
            ),
            None,
        ),
        (
            "others",
            format!(
                "[core]\n\tpager = {t}\n\thooksPath = {hooks}\n\talternateRefsCommand = {t}\n\taskPass = {t}\n[diff]\n\texternal = {t}\n[uploadpack]\n\tpackObjectsHook = {t}\n[pager]\n\tcat-file = {t}\n\tls-tree = {t}\n\trev-parse = {t}\n",
                t = touch("others"),
                hooks = hooks.display()
            ),
            None,
        ),
    ]
}

fn the_real_git_config_cannot_make_the_plumbing_run_a_program() {
    let count = real_config_attacks(&Watch::new()).len();
    for i in 0..count {
        // Each attack watched on its own: a control run's marker is no other attack's.
        let w = Watch::new();
        let (name, config, control) = real_config_attacks(&w).swap_remove(i);
        let repo = Scratch::new(name);
        app_folder(&repo, "cilium");
        init(&repo);
        let git_config = repo.0.join(".git/config");
        let mut text = std::fs::read_to_string(&git_config).unwrap();
        text.push_str(&config);
        std::fs::write(&git_config, text).unwrap();
        repo.write(".git/refs/remotes/origin/main", &format!("{MISSING}\n"));
        for args in [
            vec!["diff", "cilium", "--base", "origin/main"],
            vec!["diff", "--base", "origin/main"],
        ] {
            let o = w.cilium_cmp(&repo.0, &args);
            assert_refused(&o, "no such revision");
        }
        // A real change is diffed through the same config.
        repo.write(
            "cilium/values.yaml",
            &format!("{VALUES}operator:\n  replicas: 1\n"),
        );
        let o = w.cilium_cmp(&repo.0, &["diff", "cilium", "--base", "HEAD"]);
        assert_eq!(o.code, Some(2), "{name}: {}", o.stderr);
        assert!(
            o.stdout.contains("Deployment kube-system/cilium-operator"),
            "{name}: {}",
            o.stdout
        );
        let o = w.cilium_cmp(&repo.0, &["diff", "--base", "HEAD", "--output", "json"]);
        assert_eq!(o.code, Some(2), "{name}: {}", o.stderr);
        w.assert_no_marker();
        if let Some(args) = control {
            w.assert_attack_is_live(name, &repo.0, &args);
        }
    }
}

/// A bare repository made by git, its config the attacker's, not committed (git checks out
/// nothing named .git; an extracted archive or a tool may).
fn hostile_git_dir(at: &Path, w: &Watch) {
    let parent = at.parent().unwrap();
    std::fs::create_dir_all(parent).unwrap();
    git(parent, &["init", "-q", "--bare", at.to_str().unwrap()]);
    let config = at.join("config");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str(&format!(
        "[core]\n\tfsmonitor = true\n\thooksPath = {m}\n[extensions]\n\tpartialClone = origin\n[remote \"origin\"]\n\tpromisor = true\n\tuploadpack = touch {u}; git-upload-pack\n",
        m = w.markers.0.display(),
        u = w.marker("embedded").display()
    ));
    std::fs::write(&config, text).unwrap();
    std::fs::create_dir_all(at.join("refs/remotes/origin")).unwrap();
    std::fs::write(at.join("refs/remotes/origin/main"), format!("{MISSING}\n")).unwrap();
}

fn an_embedded_repository_above_or_below_the_folder_is_never_handed_to_git() {
    let w = Watch::new();
    let repo = Scratch::new("embedded");
    let folder = "clusters/prod/cilium";
    app_folder(&repo, folder);
    init(&repo);
    // Above the folder.
    hostile_git_dir(&repo.0.join("clusters/.git"), &w);
    let o = w.cilium_cmp(&repo.0, &["diff", folder, "--base", "HEAD"]);
    assert_refused(
        &o,
        "clusters/prod/cilium is inside an embedded repository: clusters/.git exists",
    );
    // From inside it, the search finds the embedded repository: its config runs nothing either.
    let o = w.cilium_cmp(
        &repo.0.join("clusters/prod"),
        &["diff", "cilium", "--base", "origin/main"],
    );
    assert_refused(&o, "no such revision");
    // The repository form reports the folder instead of comparing it as new.
    let o = w.cilium_cmp(&repo.0, &["diff", "--base", "HEAD", "--output", "json"]);
    assert_eq!(o.code, Some(1), "{}", o.stderr);
    assert!(
        o.stdout.contains("is inside an embedded repository"),
        "{}",
        o.stdout
    );
    std::fs::remove_dir_all(repo.0.join("clusters/.git")).unwrap();
    // Below the folder: not the folder's business; the diff is the folder's.
    hostile_git_dir(&repo.0.join(folder).join("vendored/.git"), &w);
    let o = w.cilium_cmp(&repo.0, &["diff", folder, "--base", "HEAD"]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert!(
        o.stdout.contains("0 created, 0 deleted, 0 changed"),
        "{}",
        o.stdout
    );
    let o = w.cilium_cmp(&repo.0, &["diff", "--base", "HEAD"]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    w.assert_no_marker();
    w.assert_attack_is_live(
        "embedded",
        &repo.0.join(folder).join("vendored/.git"),
        &["rev-parse", "--verify", "origin/main^{commit}"],
    );
}

fn a_gitdir_link_in_the_folder_is_content_and_refused() {
    let w = Watch::new();
    let repo = Scratch::new("gitdir-link");
    let folder = "clusters/prod/cilium";
    app_folder(&repo, folder);
    bare_looking_folder(&repo, "evil", &w.marker("uploadpack"));
    init(&repo);
    repo.write(&format!("{folder}/.git"), "gitdir: ../../../evil\n");
    let o = w.cilium_cmp(&repo.0, &["diff", folder, "--base", "origin/main"]);
    assert_refused(
        &o,
        "is inside a submodule or an embedded repository (a gitdir link): clusters/prod/cilium/.git exists",
    );
    // Started inside the folder, the search finds the link: a git directory in the content of
    // the repository holding it is never used.
    let inside = repo.0.join(folder);
    let o = w.cilium_cmp(&inside, &["diff", ".", "--base", "origin/main"]);
    assert_refused(&o, "inside the work tree");
    let o = w.cilium_cmp(&repo.0, &["diff", "--base", "origin/main"]);
    assert_refused(&o, "no such revision");
    w.assert_no_marker();
    w.assert_attack_is_live(
        "uploadpack",
        &inside,
        &["rev-parse", "--verify", "origin/main^{commit}"],
    );
}

fn a_worktree_top_level_gitdir_link_is_the_users_and_is_used() {
    let w = Watch::new();
    let parent = Scratch::new("worktrees");
    let repo = Scratch::inside(&parent.0, "main");
    let main = repo.0.clone();
    app_folder(&repo, "cilium");
    init(&repo);
    git(&main, &["worktree", "add", "-q", "../linked"]);
    let linked = parent.0.join("linked");
    assert!(linked.join(".git").is_file());
    std::fs::write(
        linked.join("cilium/values.yaml"),
        format!("{VALUES}operator:\n  replicas: 1\n"),
    )
    .unwrap();
    let o = w.cilium_cmp(&linked, &["diff", "cilium", "--base", "HEAD"]);
    assert_eq!(o.code, Some(2), "{}", o.stderr);
    assert!(o.stdout.contains("cilium-operator"), "{}", o.stdout);
}

fn a_git_committed_to_the_repository_is_never_run() {
    let w = Watch::new();
    let repo = Scratch::new("planted-git");
    app_folder(&repo, "cilium");
    let fake = repo.write(
        "git",
        &format!("#!/bin/sh\ntouch {}\n", w.marker("planted-git").display()),
    );
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    init(&repo);
    let path = std::env::var("PATH").unwrap();
    // A relative or empty PATH entry names the current folder, the repository's top.
    for path in [format!(".:{path}"), format!(":{path}")] {
        let mut c = child::command(bin());
        c.current_dir(&repo.0)
            .args(["diff", "cilium", "--base", "HEAD"])
            .env("PATH", &path)
            .env("CILIUM_CMP_CHART_DIR", charts::dir())
            .env("TMPDIR", &w.tmp.0);
        let o = run(c);
        assert_eq!(o.code, Some(0), "{}", o.stderr);
        w.assert_no_marker();
    }
}

fn a_tree_bomb_is_refused_quickly_in_bounded_memory() {
    let w = Watch::new();
    let repo = Scratch::new("tree-bomb");
    app_folder(&repo, "cilium");
    init(&repo);
    // 1000 x 1000 x 40 paths from three trees: 40 M paths in a few hundred kilobytes.
    let mktree = |lines: String| -> String {
        let mut child = plain_git(&repo.0)
            .arg("mktree")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(lines.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success());
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    };
    let blob = {
        let p = repo.write("leaf", "x\n");
        git(&repo.0, &["hash-object", "-w", p.to_str().unwrap()])
    };
    let t40: String = (0..40)
        .map(|i| format!("100644 blob {blob}\tf{i:02}\n"))
        .collect();
    let t40 = mktree(t40);
    let t1k = mktree(
        (0..1000)
            .map(|i| format!("040000 tree {t40}\td{i:04}\n"))
            .collect(),
    );
    let app = git(&repo.0, &["rev-parse", "HEAD:cilium"]);
    let mut root: String = (0..1000)
        .map(|i| format!("040000 tree {t1k}\te{i:04}\n"))
        .collect();
    root.push_str(&format!("040000 tree {app}\tcilium\n"));
    let root = mktree(root);
    let commit = git(&repo.0, &["commit-tree", "-p", "HEAD", "-m", "bomb", &root]);
    git(&repo.0, &["update-ref", "refs/heads/bomb", &commit]);
    let size: u64 = snapshot(&repo.0.join(".git"))
        .iter()
        .filter_map(|p| std::fs::symlink_metadata(p).ok())
        .map(|m| m.len())
        .sum();
    assert!(size < 2 << 20, ".git holds {size} bytes");

    let o = w.cilium_cmp(&repo.0, &["diff", "--base", "bomb"]);
    assert_refused(&o, "bomb holds more than 1000000 files");
    assert!(o.elapsed < Duration::from_secs(5), "took {:?}", o.elapsed);
    assert!(o.peak_kib < 100 * 1024, "peak {} KiB", o.peak_kib);
    // One folder is read by name, never by listing the tree.
    let o = w.cilium_cmp(&repo.0, &["diff", "cilium", "--base", "bomb"]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert!(o.elapsed < Duration::from_secs(5), "took {:?}", o.elapsed);
}

fn values_files_inside_dot_git_are_never_read() {
    let w = Watch::new();
    let secret = "c2VjcmV0LXRva2Vu";
    let folder = "clusters/prod/cilium";
    let plugin = |app: &Path| {
        let mut c = child::command(bin());
        c.arg("generate")
            .current_dir(app)
            .env_clear()
            .env("ARGOCD_APP_NAMESPACE", "kube-system")
            .env("ARGOCD_APP_SOURCE_PATH", folder)
            .env("KUBE_VERSION", "1.35.0")
            .env("KUBE_API_VERSIONS", "v1")
            .env("ARGOCD_APP_PARAMETERS", "null")
            .env("CILIUM_CMP_CHART_DIR", charts::dir());
        run(c)
    };
    let assert_no_secret = |o: &Outcome| {
        assert!(
            !o.stdout.contains(secret) && !o.stderr.contains(secret),
            "{}{}",
            o.stdout,
            o.stderr
        );
    };
    // Named in valuesFiles (in any case), or reached through a link to a file or to the folder.
    for (case, settings, link) in [
        ("named", "valuesFiles: [../../../.git/config]\n", None),
        ("cased", "valuesFiles: [../../../.GIT/config]\n", None),
        (
            "file-link",
            "valuesFiles: [values.yaml]\n",
            Some(("values.yaml", "../../../.git/config")),
        ),
        (
            "folder-link",
            "valuesFiles: [checkout/config]\n",
            Some(("checkout", "../../../.git")),
        ),
        (
            "settings-link",
            "",
            Some(("cilium-cmp.yaml", "../../../.git/config")),
        ),
    ] {
        let repo = Scratch::new(case);
        repo.write(
            &format!("{folder}/cilium-cmp.yaml"),
            &format!("{SETTINGS}{settings}"),
        );
        repo.write(&format!("{folder}/values.yaml"), VALUES);
        if let Some((name, target)) = link {
            let p = repo.0.join(folder).join(name);
            let _ = std::fs::remove_file(&p);
            std::os::unix::fs::symlink(target, &p).unwrap();
        }
        init(&repo);
        // What a checkout action writes (actions/checkout's persisted credentials).
        let config = repo.0.join(".git/config");
        let mut text = std::fs::read_to_string(&config).unwrap();
        text.push_str(&format!(
            "[http \"https://github.com/\"]\n\textraheader = AUTHORIZATION: basic {secret}\n"
        ));
        std::fs::write(&config, text).unwrap();

        let o = plugin(&repo.0.join(folder));
        assert_refused(&o, "paths inside .git are never read");
        assert_no_secret(&o);
        let o = w.cilium_cmp(&repo.0, &["diff", folder, "--base", "HEAD"]);
        assert_eq!(o.code, Some(1), "{case}: {}", o.stderr);
        assert!(o.stdout.is_empty(), "{case}: {}", o.stdout);
        assert!(
            o.stderr.contains("paths inside .git are never read")
                || o.stderr
                    .contains("a symbolic link that leaves the repository or resolves to nothing"),
            "{case}: {}",
            o.stderr
        );
        assert_no_secret(&o);
        let o = w.cilium_cmp(&repo.0, &["diff", "--base", "HEAD"]);
        assert_eq!(o.code, Some(1), "{case}: {}", o.stderr);
        assert_no_secret(&o);
    }
}

/// A repository of `n` folders whose values all change after the base commit.
fn changed_folders(n: usize) -> Scratch {
    let repo = Scratch::new("busy");
    for i in 0..n {
        app_folder(&repo, &format!("c{i}"));
    }
    init(&repo);
    for i in 0..n {
        repo.write(
            &format!("c{i}/values.yaml"),
            &format!("{VALUES}operator:\n  replicas: 1\n"),
        );
    }
    repo
}

fn leftovers(tmp: &Path) -> Vec<String> {
    std::fs::read_dir(tmp)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("cilium-cmp-diff-"))
        .collect()
}

fn a_diff_ended_by_a_signal_removes_its_temporary_folders() {
    let repo = changed_folders(8);
    for sig in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP] {
        let w = Watch::new();
        let mut c = Command::new(bin());
        c.current_dir(&repo.0)
            .args(["diff", "--base", "HEAD"])
            .env("CILIUM_CMP_CHART_DIR", charts::dir())
            .env("TMPDIR", &w.tmp.0)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        // SAFETY: signal(2) is async-signal-safe; a test runner started in the background may
        // ignore SIGINT, which the child would inherit.
        unsafe {
            c.pre_exec(move || {
                libc::signal(sig, libc::SIG_DFL);
                Ok(())
            });
        }
        // A run whose folders all come and go between two looks, or that ends before the
        // signal arrives, is run again.
        let mut attempts = 0;
        let (status, stdout) = loop {
            attempts += 1;
            assert!(attempts <= 5, "no run was seen holding a temporary folder");
            let started = Instant::now();
            let mut child = c.spawn().unwrap();
            let mut out = child.stdout.take().unwrap();
            let mut err = child.stderr.take().unwrap();
            // Read while it runs: a full pipe would hold the run still.
            let out = std::thread::spawn(move || {
                let mut s = String::new();
                out.read_to_string(&mut s).ok();
                s
            });
            let err = std::thread::spawn(move || {
                let mut s = String::new();
                err.read_to_string(&mut s).ok();
                s
            });
            let mut signalled = false;
            let status = loop {
                if !signalled {
                    if let Some(seen) = leftovers(&w.tmp.0).pop() {
                        if let Ok(meta) = std::fs::metadata(w.tmp.0.join(&seen)) {
                            assert_eq!(meta.permissions().mode() & 0o777, 0o700, "{seen}");
                        }
                        // SAFETY: signals our own child, not yet reaped (try_wait below reaps).
                        unsafe { libc::kill(child.id() as libc::pid_t, sig) };
                        signalled = true;
                    }
                }
                if let Some(status) = child.try_wait().unwrap() {
                    break status;
                }
                if started.elapsed() > Duration::from_secs(120) {
                    let _ = child.kill();
                    panic!("the diff did not end");
                }
                std::thread::sleep(Duration::from_millis(1));
            };
            let (stdout, stderr) = (out.join().unwrap(), err.join().unwrap());
            // A run may also have ended by itself between the look and the signal.
            if signalled && status.signal() == Some(sig) {
                break (status, stdout);
            }
            assert!(status.signal().is_none(), "{status:?}: {stderr}");
        };
        assert!(status.signal().is_some());
        assert!(stdout.is_empty(), "{stdout}");
        assert_eq!(leftovers(&w.tmp.0), Vec::<String>::new(), "signal {sig}");
    }
}

/// This process's start time, as the binary names its folders (proc(5), field 22).
fn own_start_time() -> String {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap();
    stat[stat.rfind(')').unwrap() + 1..]
        .split_whitespace()
        .nth(19)
        .unwrap()
        .to_string()
}

fn stale_temporary_folders_of_dead_runs_are_removed_and_nothing_else() {
    let w = Watch::new();
    let repo = Scratch::new("stale");
    app_folder(&repo, "cilium");
    init(&repo);
    let dead = {
        let mut c = Command::new("true").spawn().unwrap();
        let pid = c.id();
        c.wait().unwrap();
        pid
    };
    let me = std::process::id();
    let tmp = &w.tmp.0;
    let outside = Scratch::new("outside");
    let kept_target = outside.write("precious", "keep\n");
    let mk = |name: &str| {
        let d = tmp.join(name);
        std::fs::create_dir_all(d.join("cilium")).unwrap();
        std::fs::write(d.join("cilium/values.yaml"), "base\n").unwrap();
        d
    };
    let removed = [
        mk(&format!("cilium-cmp-diff-{dead}-12345-0")),
        mk(&format!("cilium-cmp-diff-{dead}-3")),
    ];
    let mut kept = vec![
        mk(&format!("cilium-cmp-diff-{me}-{}-0", own_start_time())),
        mk(&format!("cilium-cmp-other-{dead}-1-0")),
    ];
    // The PID is alive but another process's now: its start time differs.
    let reused = mk(&format!("cilium-cmp-diff-{me}-1-0"));
    let link = tmp.join(format!("cilium-cmp-diff-{dead}-9-0"));
    std::os::unix::fs::symlink(&outside.0, &link).unwrap();
    let file = tmp.join(format!("cilium-cmp-diff-{dead}-8-0"));
    std::fs::write(&file, "not a folder\n").unwrap();
    kept.push(link.clone());
    kept.push(file);

    let o = w.cilium_cmp(&repo.0, &["diff", "--base", "HEAD"]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    for d in removed.iter().chain([&reused]) {
        assert!(!d.exists(), "{} is stale", d.display());
    }
    for k in &kept {
        assert!(
            std::fs::symlink_metadata(k).is_ok(),
            "{} was removed",
            k.display()
        );
    }
    assert_eq!(std::fs::read_to_string(kept_target).unwrap(), "keep\n");
}

fn folders_outside_the_work_tree_and_folders_not_in_one_are_refused() {
    let w = Watch::new();
    let repo = Scratch::new("outside-folder");
    app_folder(&repo, "cilium");
    init(&repo);
    let elsewhere = Scratch::new("elsewhere");
    app_folder(&elsewhere, "cilium");
    let o = w.cilium_cmp(
        &repo.0,
        &[
            "diff",
            elsewhere.0.join("cilium").to_str().unwrap(),
            "--base",
            "HEAD",
        ],
    );
    assert_refused(&o, "is outside the git work tree");
    let o = w.cilium_cmp(&elsewhere.0, &["diff", "cilium", "--base", "HEAD"]);
    assert_refused(&o, "is not in a git work tree");
    let o = w.cilium_cmp(&repo.0, &["diff", ".git", "--base", "HEAD"]);
    assert_refused(&o, "paths inside .git are never read");
}

fn a_partial_clone_is_never_fetched_from_and_a_missing_base_file_is_named() {
    let w = Watch::new();
    let source = Scratch::new("partial-source");
    app_folder(&source, "cilium");
    init(&source);
    source.write("cilium/cilium-cmp.yaml", &format!("{SETTINGS}# two\n"));
    commit_all(&source.0, "two");
    git(&source.0, &["config", "uploadpack.allowFilter", "true"]);
    let parent = Scratch::new("partial");
    let url = format!("file://{}", source.0.display());
    git(
        &parent.0,
        &["clone", "-q", "--filter=blob:none", &url, "clone"],
    );
    let clone = parent.0.join("clone");
    // A fetch from the promisor remote would run this.
    git(
        &clone,
        &[
            "config",
            "remote.origin.uploadpack",
            &format!("touch {}; git-upload-pack", w.marker("fetched").display()),
        ],
    );
    for args in [
        vec!["diff", "cilium", "--base", "HEAD~1"],
        vec!["diff", "--base", "HEAD~1", "--output", "json"],
    ] {
        let o = w.cilium_cmp(&clone, &args);
        assert_eq!(o.code, Some(1), "{}", o.stderr);
        let said = format!("{}{}", o.stdout, o.stderr);
        assert!(
            said.contains("cilium/cilium-cmp.yaml at HEAD~1: its content is not in this clone"),
            "{said}"
        );
    }
    w.assert_no_marker();
    w.assert_attack_is_live(
        "fetched",
        &clone,
        &["cat-file", "-p", "HEAD~1:cilium/cilium-cmp.yaml"],
    );
}
