//! Application folders at two revisions: the work tree (read from disk, as the plugin reads its
//! checkout) and a git revision (read with `git_rev`, materialised in a private temporary folder
//! so the one folder code path, `argocd::plan`, renders both). A folder is rendered only when
//! one of its inputs changed: its settings file or any values file it names, wherever in the
//! repository. No input is read from `.git` on either side (`argocd::folder::is_git_dir_name`):
//! a values path naming it, or a link into it, fails the folder with a message.
//!
//! The temporary folders (`scratch`) are private (mode 0700) and named for the process that
//! made them, its start time and a counter; they are removed when done, on SIGINT, SIGTERM and
//! SIGHUP, and, when a run was killed outright, by the next `diff --base`, which removes the
//! folders of this naming whose process is gone.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::argocd::folder::{has_git_dir_name, GIT_DIR_REFUSED};
use crate::argocd::{self, FolderRequest, SETTINGS_FILE};
use crate::git_rev::Revision;
use cilium_cmp_render::error::RenderError;
use cilium_cmp_render::output::Keep;
use cilium_cmp_render::render::render_stream;
use cilium_cmp_render::versions::CiliumVersion;

use super::{FolderState, Outcome, Section, Side, SideStream};

use scratch::Scratch;

/// Folders one repository may hold; discovery stops with an error beyond.
pub use crate::argocd::discover::MAX_FOLDERS;

/// The application folders under `top`, relative and `/`-separated, sorted.
pub fn folders_in_work_tree(top: &Path) -> Result<Vec<String>, String> {
    argocd::discover::app_folders(top).map_err(|e| e.to_string())
}

/// The application folders of a revision: its settings files, from a bounded listing (a tree
/// bomb is refused at `git_rev::MAX_TREE_FILES` entries, whatever it expands to).
pub fn folders_at(rev: &Revision) -> Result<Vec<String>, String> {
    // As the work tree's discovery: nothing below a folder whose name starts with a dot or that
    // a file system opens as `.git`.
    let visible = |p: &str| {
        !p.split('/')
            .any(|c| c.starts_with('.') || argocd::folder::is_git_dir_name(c))
    };
    let mut out: Vec<String> = rev
        .files_named(SETTINGS_FILE, visible, MAX_FOLDERS)
        .map_err(|e| e.to_string())?
        .into_iter()
        .map(|p| match p.strip_suffix(&format!("/{SETTINGS_FILE}")) {
            Some(folder) => folder.to_string(),
            None => ".".to_string(),
        })
        .collect();
    out.sort();
    if out.len() > MAX_FOLDERS {
        return Err(format!(
            "more than {MAX_FOLDERS} application folders at {}",
            rev.name
        ));
    }
    Ok(out)
}

/// `a/b` joined with `../c/d.yaml` as a path inside the repository; None when it leaves it.
fn join_inside(folder: &str, rel: &str) -> Option<String> {
    let mut parts: Vec<&str> = Vec::new();
    let base = if folder == "." { "" } else { folder };
    for p in base.split('/').chain(rel.split('/')) {
        match p {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            other => parts.push(other),
        }
    }
    Some(parts.join("/"))
}

/// Reads files of one side: the work tree, or a revision.
enum Source<'a> {
    /// The work tree with this top folder, read from disk.
    WorkTree(&'a Path),
    /// A git revision.
    Git(&'a Revision),
}

impl Source<'_> {
    fn read(&self, paths: &[String]) -> Result<Vec<Option<String>>, String> {
        match self {
            Source::Git(rev) => rev.read(paths).map_err(|e| e.to_string()),
            Source::WorkTree(top) => paths
                .iter()
                .map(|p| {
                    let path = top.join(p);
                    if !path.is_file() {
                        return Ok(None);
                    }
                    // A link that leaves the repository is not read (the plan refuses it with
                    // the plugin's message); it only counts as a changed input.
                    let real = path.canonicalize().ok().zip(top.canonicalize().ok());
                    let Some(inside) = real
                        .as_ref()
                        .and_then(|(real, top)| real.strip_prefix(top).ok())
                    else {
                        return Ok(Some(format!("\0outside the repository: {p}")));
                    };
                    if has_git_dir_name(inside) {
                        return Err(format!(
                            "{p} is a symbolic link to {}, inside .git: {GIT_DIR_REFUSED}",
                            inside.display()
                        ));
                    }
                    cilium_cmp_yaml::limits::read_text(&path, p)
                        .map(Some)
                        .map_err(|e| e.to_string())
                })
                .collect(),
        }
    }
}

/// A folder's inputs on one side: each file (repository path) and its text; None when the folder
/// does not exist there. A values file that leaves the repository is kept as a marker; the plan
/// refuses it with the plugin's message.
fn inputs(
    source: &Source,
    folder: &str,
) -> Result<Option<BTreeMap<String, Option<String>>>, String> {
    let settings_path = join_inside(folder, SETTINGS_FILE).unwrap_or_default();
    let Some(settings) = source
        .read(std::slice::from_ref(&settings_path))?
        .pop()
        .flatten()
    else {
        return Ok(None);
    };
    let mut out = BTreeMap::new();
    let listed = argocd::folder::parse_settings(&settings, &settings_path)
        .map(|s| s.values_files)
        .unwrap_or_default();
    if let Some(rel) = listed.iter().find(|rel| has_git_dir_name(Path::new(rel))) {
        return Err(format!(
            "{settings_path} lists the values file {} in valuesFiles: {GIT_DIR_REFUSED}",
            cilium_cmp_yaml::limits::quoted(rel)
        ));
    }
    out.insert(settings_path, Some(settings));
    let paths: Vec<String> = listed
        .iter()
        .filter_map(|rel| join_inside(folder, rel))
        .take(cilium_cmp_yaml::limits::MAX_VALUES_FILES)
        .collect();
    for (p, text) in paths.iter().zip(source.read(&paths)?) {
        out.insert(p.clone(), text);
    }
    Ok(Some(out))
}

/// What every folder render shares: the flags of `diff` that Argo CD would pass.
#[derive(Debug, Clone)]
pub struct Target {
    /// The namespace to render into; empty: each folder's own (`argocd::FolderRequest`).
    pub namespace: String,
    /// The Kubernetes version the renders see; empty: each folder's own.
    pub kube_version: String,
    /// The API versions the cluster serves; empty: each folder's own; one empty string: none.
    pub api_versions: Vec<String>,
    /// Where the official chart archives are; None: where the plugin looks by default.
    pub chart_dir: Option<PathBuf>,
    /// Values the chart does not know are warnings, not a refusal, for every folder (as
    /// `Inputs::allow_unknown_keys`).
    pub allow_unknown_keys: bool,
}

/// A folder planned on one side: the generation (inputs resolved as the plugin resolves them).
struct Planned {
    generation: argocd::Generation,
    _scratch: Option<Scratch>,
}

fn plan(
    target: &Target,
    root: &Path,
    folder: &str,
    scratch: Option<Scratch>,
) -> Result<Planned, String> {
    let req = FolderRequest {
        app_dir: root.join(if folder == "." { "" } else { folder }),
        repo_root: root.to_path_buf(),
        namespace: target.namespace.clone(),
        kube_version: target.kube_version.clone(),
        api_versions: target.api_versions.clone(),
        overrides: Default::default(),
        chart_dir: target.chart_dir.clone(),
    };
    let env = req.env().map_err(|e| e.on_command_line().to_string())?;
    let mut generation =
        argocd::plan(&env, &req.app_dir).map_err(|e| e.on_command_line().to_string())?;
    generation.inputs.allow_unknown_keys |= target.allow_unknown_keys;
    Ok(Planned {
        generation,
        _scratch: scratch,
    })
}

/// Plans a folder at a revision: its inputs written into a private folder, then planned there.
fn plan_at(
    target: &Target,
    files: &BTreeMap<String, Option<String>>,
    folder: &str,
) -> Result<Planned, String> {
    let scratch = Scratch::new()?;
    scratch.fill(|root| {
        std::fs::create_dir_all(root.join(if folder == "." { "" } else { folder }))
            .map_err(|e| format!("cannot write a temporary folder: {e}"))?;
        for (path, text) in files {
            if let Some(text) = text {
                let p = root.join(path);
                if let Some(parent) = p.parent() {
                    std::fs::create_dir_all(parent)
                        .map_err(|e| format!("cannot write a temporary folder: {e}"))?;
                }
                std::fs::write(&p, text)
                    .map_err(|e| format!("cannot write a temporary file: {e}"))?;
            }
        }
        Ok(())
    })?;
    let root = scratch.path().to_path_buf();
    plan(target, &root, folder, Some(scratch))
}

/// Renders a planned folder.
fn render(p: &Planned, label: &str, upgrade: bool) -> Result<Side, String> {
    render_inputs(&p.generation.inputs, label, upgrade).map_err(|e| e.to_string())
}

/// Renders inputs as one side of a diff. `upgrade`: the other side runs another release, so
/// values this release renamed or removed are reported by the upgrade rules (and the render
/// goes on without them) instead of refusing the render; any other unknown value still refuses.
pub fn render_inputs(
    inputs: &cilium_cmp_render::render::Inputs,
    label: &str,
    upgrade: bool,
) -> Result<Side, super::error::SideError> {
    let version = cilium_cmp_render::render::release_of(inputs)?;
    let renamed_only = |report: &cilium_cmp_render::known_keys::Report| {
        report.values.iter().all(|u| {
            u.is_other_release()
                || matches!(
                    u.reason,
                    cilium_cmp_render::known_keys::Reason::Removed { .. }
                )
        })
    };
    // The objects as the render wrote them: a diff compares trees, and need not read its own
    // renders back.
    let stream = match render_stream(inputs, Keep::Objects) {
        Err(RenderError::UnknownValues { report, .. }) if upgrade && renamed_only(&report) => {
            let mut allowing = inputs.clone();
            allowing.allow_unknown_keys = true;
            render_stream(&allowing, Keep::Objects)?
        }
        other => other?,
    };
    // The comparison is bounded as it is for a stream read back (`bounds::scan`), and a side
    // past the bounds is refused before the other side is rendered.
    crate::adopt::bounds::check_trees(&stream.objects)
        .map_err(super::error::SideError::TooLarge)?;
    Ok(Side {
        label: label.to_string(),
        version,
        stream: SideStream::Objects(stream.objects),
    })
}

fn empty_side(label: &str, version: CiliumVersion) -> Side {
    Side {
        label: label.to_string(),
        version,
        stream: SideStream::Objects(Vec::new()),
    }
}

/// Diffs one folder between a revision and the work tree. `must_exist`: the single-folder form,
/// where a folder on one side only is an error rather than "added" or "removed".
pub fn diff_folder(
    target: &Target,
    base: &Revision,
    folder: &str,
    must_exist: bool,
) -> Result<Outcome, String> {
    scratch::prepare();
    let old_files = inputs(&Source::Git(base), folder)?;
    let new_files = inputs(&Source::WorkTree(&base.top), folder)?;
    let base_label = format!("base {}", base.name);
    let now_label = "work tree".to_string();
    match (&old_files, &new_files) {
        (None, None) => {
            return Err(format!(
                "{folder} is not an application folder ({SETTINGS_FILE} is missing) at {} nor in the work tree",
                base.name
            ))
        }
        (None, Some(_)) if must_exist => {
            return Err(format!(
                "{folder} does not exist at {} (no {SETTINGS_FILE} there): the folder is new in this change; `cilium-cmp diff --repo-root . --base {}` reports it as added",
                base.name, base.name
            ))
        }
        (Some(_), None) if must_exist => {
            return Err(format!(
                "{folder} has no {SETTINGS_FILE} in the work tree: the change removes the folder; `cilium-cmp diff --repo-root . --base {}` reports it as removed",
                base.name
            ))
        }
        (Some(a), Some(b)) if a == b && !must_exist => return Ok(Outcome::InputsUnchanged),
        _ => {}
    }
    let old = old_files
        .as_ref()
        .map(|files| plan_at(target, files, folder))
        .transpose()?;
    let new = new_files
        .as_ref()
        .map(|_| plan(target, &base.top, folder, None))
        .transpose()?;
    let version_of =
        |p: &Option<Planned>| p.as_ref().and_then(|p| p.generation.inputs.cilium.known());
    let (old_v, new_v) = (version_of(&old), version_of(&new));
    let upgrade = old_v.is_some() && new_v.is_some() && old_v != new_v;
    let old_side = match &old {
        Some(p) => render(p, &base_label, false).map_err(|e| format!("at {}: {e}", base.name))?,
        None => empty_side(
            &base_label,
            new_v.unwrap_or(cilium_cmp_render::versions::newest()),
        ),
    };
    let new_side = match &new {
        Some(p) => render(p, &now_label, upgrade)?,
        None => empty_side(&now_label, old_side.version),
    };
    let values = match (&new, upgrade) {
        (Some(p), true) => Some(
            cilium_cmp_render::render::resolve_values(
                &p.generation.inputs,
                new_v.unwrap_or(old_side.version),
            )
            .map_err(|e| e.to_string())?,
        ),
        _ => None,
    };
    let identical = matches!((&old_files, &new_files), (Some(a), Some(b)) if a == b);
    let state = match (&old, &new) {
        _ if identical => FolderState::Unchanged,
        (None, _) => FolderState::Added,
        (_, None) => FolderState::Removed,
        _ => FolderState::Changed,
    };
    let diff = super::diff(old_side, new_side, &target.namespace, values.as_ref())?;
    Ok(Outcome::Compared {
        state,
        diff: Box::new(diff),
    })
}

/// Every folder of both sides, diffed where its inputs changed, in parallel; how far it is goes
/// to `progress`.
pub fn diff_repository(
    target: &Target,
    base: &Revision,
    progress: &dyn cilium_cmp_render::parallel::Progress,
) -> Result<Vec<Section>, String> {
    scratch::prepare();
    let mut folders = folders_at(base)?;
    folders.extend(folders_in_work_tree(&base.top)?);
    folders.sort();
    folders.dedup();
    let mut sections = cilium_cmp_render::parallel::map(&folders, "diff", progress, |folder| {
        // A folder inside an embedded repository or a submodule is not in the base's tree:
        // reported, never compared as if it were new.
        let checked = base
            .work_tree()
            .folder_inside(&base.top.join(folder))
            .map_err(|e| e.to_string());
        Section {
            name: folder.clone(),
            outcome: checked
                .and_then(|_| diff_folder(target, base, folder, false))
                .unwrap_or_else(Outcome::Failed),
        }
    });
    sections.push(Section {
        name: FLEET_SECTION.into(),
        outcome: fleet_findings(&base.top),
    });
    Ok(sections)
}

/// The name of the report's Cluster Mesh section.
pub const FLEET_SECTION: &str = "Cluster Mesh (fleet checks)";

/// The fleet checks over the work tree's folders (the state the change merges), one line per
/// finding naming the folders, files and lines involved.
pub fn fleet_findings(top: &Path) -> Outcome {
    let members = match crate::fleet::load_repo(top, None) {
        Ok(m) => m,
        Err(e) => return Outcome::Failed(format!("the fleet checks cannot read the folders: {e}")),
    };
    let report = crate::fleet::report(&members);
    Outcome::Fleet(
        report
            .findings
            .iter()
            .map(|f| {
                let places: Vec<String> = f
                    .places
                    .iter()
                    .map(|p| {
                        format!(
                            "{}: {} = {} (folder {})",
                            p.location(),
                            p.path,
                            p.value,
                            p.folder
                        )
                    })
                    .collect();
                format!("{}: {} [{}]", f.check.name(), f.message, places.join("; "))
            })
            .collect(),
    )
}

/// The private folders holding a revision's files while they are planned.
mod scratch {
    use std::path::{Path, PathBuf};
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Mutex, MutexGuard, Once, PoisonError};

    /// What names the folders: `cilium-cmp-diff-PID-START-N`, START being the process's start
    /// time (so a later process given the same PID does not take the folder for its own).
    const PREFIX: &str = "cilium-cmp-diff-";

    /// The folders this process holds, removed by the signal handler's thread; `ending` once
    /// it has: no folder is made after.
    struct Live {
        folders: Vec<PathBuf>,
        ending: bool,
    }

    static LIVE: Mutex<Live> = Mutex::new(Live {
        folders: Vec::new(),
        ending: false,
    });

    fn live() -> MutexGuard<'static, Live> {
        LIVE.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Once a process: removes the stale folders of killed runs and removes this run's folders
    /// on SIGINT, SIGTERM and SIGHUP.
    pub fn prepare() {
        static ONCE: Once = Once::new();
        ONCE.call_once(|| {
            remove_stale(&std::env::temp_dir());
            signals::install();
        });
    }

    /// A private folder removed when dropped.
    pub struct Scratch(PathBuf);

    impl Scratch {
        pub fn new() -> Result<Scratch, String> {
            prepare();
            static N: AtomicUsize = AtomicUsize::new(0);
            let base = std::env::temp_dir();
            let token = own_token();
            // Made while holding the list, so the signal handler's thread sees every folder.
            let mut live = live();
            if live.ending {
                return Err("interrupted".into());
            }
            for _ in 0..1000 {
                let n = N.fetch_add(1, Ordering::Relaxed);
                let dir = base.join(format!("{PREFIX}{}-{token}-{n}", std::process::id()));
                match create_private(&dir) {
                    Ok(()) => {
                        live.folders.push(dir.clone());
                        return Ok(Scratch(dir));
                    }
                    // Taken by someone else (another user may make any name in /tmp).
                    Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                    Err(e) => {
                        return Err(format!(
                            "cannot create a temporary folder {}: {e}",
                            dir.display()
                        ))
                    }
                }
            }
            Err(format!(
                "cannot create a temporary folder in {}: every name is taken",
                base.display()
            ))
        }

        pub fn path(&self) -> &Path {
            &self.0
        }

        /// Writes into the folder while no signal can remove it: once the signal handler's
        /// thread has removed the folders, a write would make the folder again (`create_dir_all`)
        /// after the removal, and it would be left behind.
        pub fn fill(&self, write: impl FnOnce(&Path) -> Result<(), String>) -> Result<(), String> {
            let live = live();
            if live.ending {
                return Err("interrupted".into());
            }
            let written = write(&self.0);
            drop(live);
            written
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
            live().folders.retain(|d| d != &self.0);
        }
    }

    /// Removes every folder of this process (the signal handler's thread, then the process
    /// ends): the list stays locked, so none is made after.
    fn remove_all_and_end() -> MutexGuard<'static, Live> {
        let mut live = live();
        live.ending = true;
        for dir in &live.folders {
            let _ = std::fs::remove_dir_all(dir);
        }
        live
    }

    #[cfg(unix)]
    fn create_private(dir: &Path) -> std::io::Result<()> {
        use std::os::unix::fs::DirBuilderExt;
        // Only the owner may enter: the folder holds the base revision's files.
        std::fs::DirBuilder::new().mode(0o700).create(dir)
    }

    #[cfg(not(unix))]
    fn create_private(dir: &Path) -> std::io::Result<()> {
        std::fs::create_dir(dir)
    }

    /// This process's start token.
    fn own_token() -> String {
        static TOKEN: std::sync::OnceLock<String> = std::sync::OnceLock::new();
        TOKEN
            .get_or_init(|| {
                start_time(std::process::id()).unwrap_or_else(|| {
                    // Without /proc: the time of the first folder, which only this process has.
                    let t = std::time::SystemTime::now()
                        .duration_since(std::time::UNIX_EPOCH)
                        .map(|d| d.as_nanos())
                        .unwrap_or(0);
                    format!("t{t:x}")
                })
            })
            .clone()
    }

    /// A process's start time in clock ticks since boot (`starttime`, field 22 of
    /// /proc/PID/stat, proc(5)), where /proc has it.
    fn start_time(pid: u32) -> Option<String> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        // The command name (field 2) is in parentheses and may hold spaces and parentheses.
        let after_name = &stat[stat.rfind(')')? + 1..];
        let ticks = after_name.split_whitespace().nth(19)?;
        ticks
            .bytes()
            .all(|b| b.is_ascii_digit())
            .then(|| ticks.to_string())
    }

    /// `PID-START-N` (or `PID-N`, as versions before the start token named them).
    fn parse_name(name: &str) -> Option<(u32, Option<&str>)> {
        let rest = name.strip_prefix(PREFIX)?;
        let parts: Vec<&str> = rest.split('-').collect();
        let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        let token = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric());
        match parts.as_slice() {
            [pid, n] if digits(pid) && digits(n) => Some((pid.parse().ok()?, None)),
            [pid, start, n] if digits(pid) && token(start) && digits(n) => {
                Some((pid.parse().ok()?, Some(*start)))
            }
            _ => None,
        }
    }

    /// Removes the folders of this naming left by runs that were killed: a real folder (never a
    /// link), owned by this user, whose process is gone (or whose PID another process has now,
    /// told by the start time). Anything else is left alone.
    fn remove_stale(base: &Path) {
        let Ok(entries) = std::fs::read_dir(base) else {
            return;
        };
        let own = (std::process::id(), own_token());
        // A full temporary folder is not read to its end.
        for entry in entries.take(100_000).flatten() {
            let name = entry.file_name();
            let Some((pid, start)) = name.to_str().and_then(parse_name) else {
                continue;
            };
            if pid == own.0 && start == Some(own.1.as_str()) {
                continue;
            }
            let path = entry.path();
            let Ok(meta) = std::fs::symlink_metadata(&path) else {
                continue;
            };
            if !meta.file_type().is_dir() || !owned_by_me(&meta) {
                continue;
            }
            let gone = match (alive(pid), start) {
                (false, _) => true,
                (true, Some(start)) => start_time(pid).is_some_and(|now| now != start),
                (true, None) => false,
            };
            if gone {
                // remove_dir_all does not follow links inside the folder.
                let _ = std::fs::remove_dir_all(&path);
            }
        }
    }

    #[cfg(unix)]
    fn owned_by_me(meta: &std::fs::Metadata) -> bool {
        use std::os::unix::fs::MetadataExt;
        meta.uid() == rustix::process::geteuid().as_raw()
    }

    #[cfg(not(unix))]
    fn owned_by_me(_: &std::fs::Metadata) -> bool {
        false
    }

    /// Whether a process with this PID exists (kill(2) with signal 0 checks without sending;
    /// EPERM means it exists and is another user's).
    #[cfg(unix)]
    fn alive(pid: u32) -> bool {
        let Ok(pid) = i32::try_from(pid) else {
            return false;
        };
        // PID 0 names no process of its own (kill(2) would signal the process group).
        let Some(pid) = rustix::process::Pid::from_raw(pid) else {
            return true;
        };
        match rustix::process::test_kill_process(pid) {
            Ok(()) | Err(rustix::io::Errno::PERM) => true,
            Err(_) => false,
        }
    }

    #[cfg(not(unix))]
    fn alive(_: u32) -> bool {
        true
    }

    /// SIGINT, SIGTERM and SIGHUP remove this run's folders, then end the process by the same
    /// signal. signal-hook's handler only writes to a pipe (async-signal-safe, signal-safety(7));
    /// a thread reading it does the removal, then `emulate_default_handler` restores the default
    /// action and raises the signal again, so the process ends as the signal asked (the status a
    /// shell shows).
    #[cfg(unix)]
    mod signals {
        use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};

        pub fn install() {
            // A signal the caller ignores (nohup's SIGHUP) stays ignored.
            let ignored = ignored_signals();
            let wanted: Vec<i32> = [SIGINT, SIGTERM, SIGHUP]
                .into_iter()
                .filter(|sig| ignored & (1u64 << (sig - 1)) == 0)
                .collect();
            let Ok(mut signals) = signal_hook::iterator::Signals::new(&wanted) else {
                return;
            };
            let _ = std::thread::Builder::new()
                .name("signals".into())
                .spawn(move || {
                    if let Some(sig) = signals.forever().next() {
                        let _held = super::remove_all_and_end();
                        let _ = signal_hook::low_level::emulate_default_handler(sig);
                        // Only if the signal could not end the process itself.
                        std::process::exit(128 + sig);
                    }
                });
        }

        /// The signals this process ignores, bit `n - 1` for signal `n`: the `SigIgn` mask of
        /// /proc/self/status (proc_pid_status(5)), which says so without changing any action.
        /// Elsewhere none is taken as ignored.
        fn ignored_signals() -> u64 {
            ignored_in(&std::fs::read_to_string("/proc/self/status").unwrap_or_default())
        }

        fn ignored_in(status: &str) -> u64 {
            status
                .lines()
                .find_map(|l| l.strip_prefix("SigIgn:"))
                .and_then(|mask| u64::from_str_radix(mask.trim(), 16).ok())
                .unwrap_or(0)
        }

        #[cfg(all(test, target_os = "linux"))]
        #[test]
        fn a_signal_ignored_by_the_caller_is_seen_as_ignored() {
            // An ignored signal stays ignored across exec (signal(7)), as under nohup.
            let out = std::process::Command::new("sh")
                .args(["-c", "trap '' HUP; exec cat /proc/self/status"])
                .output()
                .expect("sh runs");
            let mask = ignored_in(&String::from_utf8_lossy(&out.stdout));
            assert_ne!(mask & (1 << (SIGHUP - 1)), 0, "{mask:x}");
            assert_eq!(mask & (1 << (SIGTERM - 1)), 0, "{mask:x}");
        }
    }

    #[cfg(not(unix))]
    mod signals {
        pub fn install() {}
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn only_this_naming_is_taken_for_a_scratch_folder() {
            assert_eq!(
                parse_name("cilium-cmp-diff-12-345-0"),
                Some((12, Some("345")))
            );
            assert_eq!(parse_name("cilium-cmp-diff-12-0"), Some((12, None)));
            for other in [
                "cilium-cmp-diff-",
                "cilium-cmp-diff-x-1",
                "cilium-cmp-diff-1-2-3-4",
                "cilium-cmp-diff-1--2",
                "cilium-cmp-test-1-2",
                "cilium-cmp-diff-1-a.b-2",
            ] {
                assert_eq!(parse_name(other), None, "{other}");
            }
        }

        #[cfg(target_os = "linux")]
        #[test]
        fn the_start_token_tells_processes_apart() {
            let own = start_time(std::process::id()).expect("/proc/self/stat");
            assert!(own.bytes().all(|b| b.is_ascii_digit()));
            assert!(alive(std::process::id()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_paths_stay_inside_the_repository() {
        assert_eq!(
            join_inside("a/b", "../c/v.yaml").as_deref(),
            Some("a/c/v.yaml")
        );
        assert_eq!(join_inside(".", "v.yaml").as_deref(), Some("v.yaml"));
        assert_eq!(join_inside("a", "../../v.yaml"), None);
    }
}
