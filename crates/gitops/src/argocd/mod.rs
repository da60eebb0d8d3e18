//! The Argo CD Config Management Plugin front end: the plugin's whole contract is a pure function
//! of an environment map and the application folder, so it is tested without a cluster and the
//! commands that reproduce a render outside Argo CD (`lock`, `talos-patch`) run the same code.
//!
//! Inputs, lowest precedence first (a later layer's Cilium version wins; values files and `--set`
//! expressions of every layer are applied in this order, so later ones win as in Helm):
//! 1. the folder's settings file `cilium-cmp.yaml` (`ciliumVersion`, `valuesFiles`, and
//!    `allowUnknownKeys`, which turns values the chart does not know into warnings);
//! 2. the Application's plugin env (`ARGOCD_ENV_CILIUM_VERSION`, `_VALUES_FILES`, `_SET`);
//! 3. the Application's plugin parameters (`cilium-version`, `values-files`, `set`).
//!
//! The cluster facts come from Argo CD: `ARGOCD_APP_NAMESPACE` (release namespace),
//! `KUBE_VERSION`, `KUBE_API_VERSIONS`; the settings file may write them down (`namespace`,
//! `kubeVersion`, `apiVersions`) for the commands run outside Argo CD, and serves where Argo CD
//! passes nothing; where both say and differ, Argo CD's are rendered and the difference is
//! reported (`Generation::cluster_differs`). The chart archive for bundled files is
//! `$CILIUM_CMP_CHART_DIR/cilium-VERSION.tgz`.

pub mod discover;
pub mod exclusions;
pub mod folder;
pub mod params;
pub mod preview;

use cilium_cmp_yaml::limits;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use cilium_cmp_render::chart::ChartFiles;
use cilium_cmp_render::error::{ArchiveHint, RenderError};
use cilium_cmp_render::output::Keep;
use cilium_cmp_render::render::Inputs;

pub use folder::{Repo, LOCK_FILE, SETTINGS_FILE};
pub use params::Overrides;
pub use preview::{LockState, Preview};

pub use cilium_cmp_render::chart::store::{CHART_DIR_VAR, DEFAULT_CHART_DIR};
pub use cilium_cmp_render::shell::shell_quote;

/// The environment variables `generate` reads (everything else in the environment is ignored,
/// so the sidecar's own variables cannot change a render).
pub fn is_relevant_var(name: &str) -> bool {
    name.starts_with("ARGOCD_ENV_")
        || name.starts_with("PARAM_")
        || matches!(
            name,
            "ARGOCD_APP_PARAMETERS"
                | "ARGOCD_APP_NAMESPACE"
                | "ARGOCD_APP_SOURCE_PATH"
                | "KUBE_VERSION"
                | "KUBE_API_VERSIONS"
                | CHART_DIR_VAR
        )
}

/// Why a folder cannot be rendered (or its lock written): what Argo CD passed, the folder's
/// files, the chart or the render refused, each naming the input at fault.
#[derive(Debug, thiserror::Error)]
pub enum GenerateError {
    /// A variable of the environment has a value the plugin cannot use: a namespace or
    /// Kubernetes version that is malformed or empty with nothing in the folder to fall back on,
    /// an unknown `ARGOCD_ENV_*` or `PARAM_*` variable, `ARGOCD_APP_PARAMETERS` that is not a
    /// JSON list of named parameters, an `ARGOCD_APP_SOURCE_PATH` that leaves the repository.
    #[error("{var}={value:?}: {message}")]
    Env {
        /// The variable (or, for a fact the folder supplies, the setting and its file).
        var: String,
        /// Its value, as given.
        value: String,
        /// What is wrong with it.
        message: String,
    },
    /// A plugin parameter that is unknown or of the wrong type (a map, a list for
    /// `cilium-version`, a string for `values-files`).
    #[error("plugin parameter {name:?}: {message}")]
    Parameter {
        /// The parameter's name, as the Application wrote it.
        name: String,
        /// What is wrong with it.
        message: String,
    },
    /// The application folder or one of its files (settings file, lock) cannot be opened or
    /// read, or says what the plugin does not accept. `span` points at the entry of the folder's
    /// file at fault (`cilium-cmp.yaml`), if any.
    #[error("{path}: {message}")]
    Folder {
        /// The folder or file, relative to the repository root where known, with `:LINE` (and
        /// `:COLUMN`) when the fault has a place.
        path: String,
        /// What is wrong.
        message: String,
        /// Where in the file, for the diagnostic that quotes it.
        span: Option<Box<cilium_cmp_yaml::diagnostic::Span>>,
    },
    /// A listed values file that is refused (empty, absolute, outside the repository, in
    /// `.git`), cannot be read, or takes the values files past their size bound.
    #[error("values file {file:?} (listed in {listed_in}): {message}")]
    ValuesFile {
        /// The path as listed, relative to the application folder.
        file: String,
        /// The list that names it: the settings file, the plugin env or the plugin parameter.
        listed_in: String,
        /// What is wrong.
        message: String,
    },
    /// No Cilium version is given anywhere, or the one given is no release this binary renders
    /// and its archive is not in the chart folder; the message says where the version came from.
    #[error("{0}")]
    Version(String),
    /// The render refused the values; the error as the renderer gave it.
    #[error("{}", render_message(.0))]
    Render(Box<RenderError>),
    /// The chart archive of the chart folder cannot be opened or read.
    #[error(transparent)]
    Chart(#[from] cilium_cmp_render::chart::ChartError),
    /// The settings file, plugin env and parameters list more values files together than
    /// `limits::MAX_VALUES_FILES`.
    #[error("{listed} values files are listed; at most {limit} are allowed")]
    TooManyValuesFiles {
        /// How many are listed, all layers together.
        listed: usize,
        /// How many are allowed.
        limit: usize,
    },
    /// Values need a file bundled in the chart and the archive is not in the chart folder; the
    /// advice names the plugin's folder (`on_command_line` turns it into `--chart-archive`'s).
    #[error("{}", cilium_cmp_render::error::archive_advice(error, hint))]
    NeedsChartArchive {
        /// The renderer's refusal, naming the file the values need.
        error: Box<RenderError>,
        /// Where the archive goes: the plugin's chart folder, or `--chart-archive`.
        hint: ArchiveHint,
    },
    /// The render's content hash is not the one the folder's lock holds: the plugin refuses to
    /// hand Argo CD a render nobody reviewed.
    #[error("the render of {folder} does not match its lock {lock}:\n  locked:   {locked}\n  rendered: {rendered}\nNothing was changed in the cluster. If the change is intended (a Cilium upgrade, a values edit, another cilium-cmp, another cluster version or API list), preview the render and the objects it changes from the repository root (this writes nothing; review it, for example piped into `kubectl diff --server-side -f -`):\n  {}\nthen update the lock with:\n  {}\nand commit {lock}.", .commands[0], .commands[1])]
    LockMismatch {
        /// The application folder, relative to the repository root.
        folder: String,
        /// The lock file, relative to the repository root.
        lock: String,
        /// The hash the lock holds.
        locked: String,
        /// The render's hash.
        rendered: String,
        /// The preview command and the command that updates the lock (boxed: errors stay small).
        commands: Box<[String; 2]>,
    },
    /// The lock cannot be written, or is refused as a link, a file with other hard links or a
    /// read-only one (without `force`).
    #[error("cannot write {path}: {message}")]
    Write {
        /// The lock, relative to the repository root.
        path: String,
        /// Why.
        message: String,
    },
}

/// A render's error as the plugin reports it: values files are named from the repository root,
/// so the advice to remove unknown values says to run the fix there.
fn render_message(e: &RenderError) -> String {
    match e {
        RenderError::UnknownValues { .. } => {
            format!("{e}\n(The paths are relative to the repository root: run fix-values there.)")
        }
        e => e.to_string(),
    }
}

impl From<RenderError> for GenerateError {
    fn from(e: RenderError) -> Self {
        GenerateError::Render(Box::new(e))
    }
}

impl GenerateError {
    /// The same error as the commands that render a folder outside Argo CD (`lock`,
    /// `talos-patch`) report it: a missing archive's advice names `--chart-archive`.
    pub fn on_command_line(self) -> GenerateError {
        match self {
            GenerateError::NeedsChartArchive {
                error,
                hint: ArchiveHint::PluginDir { dir },
            } => GenerateError::NeedsChartArchive {
                error,
                hint: ArchiveHint::ChartDirFlag { dir },
            },
            other => other,
        }
    }
}

/// Everything one generation uses, resolved from the environment and the folder.
#[derive(Debug, Clone)]
pub struct Generation {
    /// What the renderer is given: release, cluster facts, values files and `--set`
    /// expressions of every layer in order, and the chart archive when the chart folder has it.
    pub inputs: Inputs,
    /// The repository and the application folder in it.
    pub repo: Repo,
    /// The content hash the folder's lock expects, if it holds one.
    pub lock: Option<String>,
    /// Inputs that do not come from the folder (the resolved Cilium version, and the values
    /// files and `--set` expressions of plugin env and parameters, in order): what a command
    /// reproducing this render must pass.
    pub outside_folder: Overrides,
    /// The folder's own `namespace`, `kubeVersion` and `apiVersions` (cilium-cmp.yaml).
    pub folder_cluster: folder::ClusterSettings,
    /// Where what Argo CD passed differs from what the folder says, one sentence each (the
    /// plugin renders what Argo CD passed and says so on stderr).
    pub cluster_differs: Vec<String>,
}

/// The cluster a generation renders for.
struct ClusterFacts {
    namespace: String,
    kube_version: cilium_cmp_render::kube_version::KubeVersion,
    api_versions: cilium_cmp_render::kube_version::ApiVersions,
    differs: Vec<String>,
}

/// The cluster facts, each from Argo CD's variable when it is set and not empty, else from the
/// folder's settings file. A variable that is absent (not merely empty: Argo CD always passes
/// them, `lock` and the other folder commands leave out the flags not given) falls back last to
/// Helm's default, as `helm template` does; Argo CD's empty one is an error instead, since the
/// chart depends on it and the plugin does not guess.
fn cluster_facts(
    env: &BTreeMap<String, String>,
    folder: &folder::ClusterSettings,
    settings_shown: &str,
) -> Result<ClusterFacts, GenerateError> {
    let given = |name: &str| var(env, name).map(str::trim).filter(|v| !v.is_empty());
    let mut differs = Vec::new();
    let namespace = match (given("ARGOCD_APP_NAMESPACE"), &folder.namespace) {
        (Some(ns), mine) => {
            if !valid_namespace(ns) {
                return Err(GenerateError::Env {
                    var: "ARGOCD_APP_NAMESPACE".into(),
                    value: ns.into(),
                    message: NOT_A_NAMESPACE.into(),
                });
            }
            if let Some(mine) = mine.as_deref().filter(|m| *m != ns) {
                differs.push(format!(
                    "the Application's destination namespace {ns} differs from namespace {mine} in {settings_shown}"
                ));
            }
            ns.to_string()
        }
        (None, Some(mine)) => mine.clone(),
        (None, None) if var(env, "ARGOCD_APP_NAMESPACE").is_none() => {
            cilium_cmp_render::render::DEFAULT_NAMESPACE.to_string()
        }
        (None, None) => {
            return Err(GenerateError::Env {
                var: "ARGOCD_APP_NAMESPACE".into(),
                value: String::new(),
                message: format!(
                    "the release namespace comes from the Application's spec.destination.namespace, else `namespace:` in {settings_shown}; set one of them to the namespace Cilium runs in (usually kube-system)"
                ),
            })
        }
    };
    let helm_form = |raw: &str, source: &str| {
        raw.parse::<cilium_cmp_render::kube_version::KubeVersion>()
            .map_err(|_| GenerateError::Env {
                var: source.into(),
                value: raw.into(),
                message: "not a Kubernetes version such as 1.35 or 1.35.0".into(),
            })
    };
    let mine = match &folder.kube_version {
        Some(v) => Some(helm_form(v, &format!("kubeVersion in {settings_shown}"))?),
        None => None,
    };
    let kube_version = match (given("KUBE_VERSION"), mine) {
        (Some(raw), mine) => {
            let theirs = helm_form(raw, "KUBE_VERSION")?;
            if let Some(mine) = mine.filter(|m| *m != theirs) {
                differs.push(format!(
                    "Argo CD's KUBE_VERSION {raw} differs from kubeVersion {} in {settings_shown}",
                    folder.kube_version.as_deref().unwrap_or(mine.as_given())
                ));
            }
            theirs
        }
        (None, Some(mine)) => mine,
        (None, None) if var(env, "KUBE_VERSION").is_none() => {
            cilium_cmp_render::kube_version::KubeVersion::default()
        }
        (None, None) => {
            return Err(GenerateError::Env {
                var: "KUBE_VERSION".into(),
                value: String::new(),
                message: format!(
                    "Argo CD did not pass the cluster's Kubernetes version (it is empty until Argo CD has connected to the cluster) and {settings_shown} names no kubeVersion; the chart depends on it, so cilium-cmp does not guess"
                ),
            })
        }
    };
    let split = |list: &str| -> Vec<String> {
        list.split(',')
            .map(str::trim)
            .filter(|a| !a.is_empty())
            .map(str::to_string)
            .collect()
    };
    let api_versions = match (var(env, "KUBE_API_VERSIONS"), &folder.api_versions) {
        (Some(list), mine) => {
            let theirs = split(list);
            // Argo CD lists every API the cluster serves, the folder those its values depend
            // on: only a listed one the cluster does not serve is a difference worth a warning.
            let missing: Vec<&str> = mine
                .iter()
                .flatten()
                .filter(|m| !theirs.contains(m))
                .map(String::as_str)
                .collect();
            if !missing.is_empty() {
                differs.push(format!(
                    "Argo CD's KUBE_API_VERSIONS lack {} of apiVersions in {settings_shown}",
                    missing.join(", ")
                ));
            }
            theirs
        }
        (None, Some(mine)) => mine.clone(),
        (None, None) => Vec::new(),
    };
    let api_versions = cilium_cmp_render::kube_version::ApiVersions::from_lists(
        api_versions.iter().map(String::as_str),
    );
    Ok(ClusterFacts {
        namespace,
        kube_version,
        api_versions,
        differs,
    })
}

/// A finished render: the stream and its content hash (`sha256:HEX`).
#[derive(Debug, Clone)]
pub struct Rendered {
    /// The manifest stream, as the plugin prints it.
    pub text: String,
    /// Its content hash, `sha256:HEX`, as a lock records it.
    pub hash: String,
    /// Each object's digest, when the render was asked for them (`render_folder_with`).
    pub objects: Vec<cilium_cmp_render::output::ObjectDigest>,
    /// What was rendered, for the messages and commands that name the inputs.
    pub generation: Generation,
}

fn var<'a>(env: &'a BTreeMap<String, String>, name: &str) -> Option<&'a str> {
    env.get(name).map(String::as_str)
}

/// What a refused namespace is told, wherever it came from.
pub const NOT_A_NAMESPACE: &str =
    "not a namespace name (lowercase letters, digits and '-', at most 63)";

/// Whether `ns` is a Kubernetes namespace name (an RFC 1123 label), as the API server requires
/// of a namespace: the folder's setting, Argo CD's destination and `--namespace` are all held to it.
pub fn valid_namespace(ns: &str) -> bool {
    let b = ns.as_bytes();
    !b.is_empty()
        && b.len() <= 63
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
        && b[0] != b'-'
        && b[b.len() - 1] != b'-'
}

/// Resolves every input of a generation; reads the folder, its values files and the chart
/// archive, but renders nothing.
pub fn plan(env: &BTreeMap<String, String>, app_dir: &Path) -> Result<Generation, GenerateError> {
    let repo = Repo::locate(app_dir, var(env, "ARGOCD_APP_SOURCE_PATH"))?;
    let settings = folder::read_settings(&repo)?;
    let from_env = params::plugin_env(env)?;
    let from_params = params::parameters(env)?;

    let settings_shown = repo.shown(&repo.app_dir.join(SETTINGS_FILE));
    let cluster = cluster_facts(env, &settings.cluster, &settings_shown)?;
    let (version, version_source) = match (
        &from_params.cilium_version,
        &from_env.cilium_version,
        &settings.cilium_version,
    ) {
        (Some(v), _, _) => (v.clone(), "the Application's plugin parameter cilium-version".to_string()),
        (None, Some(v), _) => (v.clone(), "the Application's plugin env CILIUM_VERSION".to_string()),
        (None, None, Some(v)) => (v.clone(), format!("ciliumVersion in {settings_shown}")),
        (None, None, None) => {
            return Err(GenerateError::Version(format!(
                "no Cilium version: write `ciliumVersion: \"{}\"` in {settings_shown} (or set the Application's plugin parameter cilium-version); supported versions: {}",
                cilium_cmp_render::versions::supported().last().unwrap_or("1.18.12"),
                cilium_cmp_render::versions::supported().collect::<Vec<_>>().join(", ")
            )))
        }
    };
    let chart_dir = PathBuf::from(var(env, CHART_DIR_VAR).unwrap_or(DEFAULT_CHART_DIR));
    let cilium = match cilium_cmp_render::versions::parse(&version) {
        Ok(v) => cilium_cmp_render::versions::Release::Known(v),
        // A release this binary does not list renders from its archive in the chart folder
        // (`chart::unlisted`); the name is checked to be a release name before it names a file.
        Err(e) => match cilium_cmp_render::release_name::release_name(&version)
            .filter(|_| cilium_cmp_render::versions::is_newer_than_listed(&version))
        {
            Some(name) if chart_dir.join(name.archive_name()).is_file() => {
                cilium_cmp_render::versions::Release::FromArchive(name)
            }
            number => {
                let looked = number.map_or(String::new(), |name| {
                    format!(
                        "; the plugin found no {} in {} ({CHART_DIR_VAR})",
                        name.archive_name(),
                        chart_dir.display()
                    )
                });
                return Err(GenerateError::Version(format!(
                    "{e} (the version comes from {version_source}){looked}"
                )));
            }
        },
    };

    let mut inputs = Inputs::new(cilium);
    inputs.namespace = cluster.namespace;
    inputs.kube_version = cluster.kube_version;
    inputs.api_versions = cluster.api_versions;
    inputs.allow_unknown_keys = settings.allow_unknown_keys;
    let layers: [(&[String], String); 3] = [
        (&settings.values_files, settings_shown.clone()),
        (&from_env.values_files, "the plugin env VALUES_FILES".into()),
        (
            &from_params.values_files,
            "the plugin parameter values-files".into(),
        ),
    ];
    let listed: usize = layers.iter().map(|(files, _)| files.len()).sum();
    if listed > limits::MAX_VALUES_FILES {
        return Err(GenerateError::TooManyValuesFiles {
            listed,
            limit: limits::MAX_VALUES_FILES,
        });
    }
    let mut total = 0;
    for (files, listed_in) in layers {
        for rel in files {
            let path = repo.values_file(rel, &listed_in)?;
            let shown = repo.shown(&path);
            let fail = |message: String| GenerateError::ValuesFile {
                file: rel.clone(),
                listed_in: listed_in.clone(),
                message,
            };
            let text = limits::read_text(&path, &shown).map_err(|e| fail(e.reason()))?;
            total += text.len();
            if total > limits::MAX_TOTAL_BYTES {
                return Err(fail(format!(
                    "the values files add up to more than {} bytes",
                    limits::MAX_TOTAL_BYTES
                )));
            }
            inputs.values_files.push((shown, text));
        }
    }
    inputs.set = from_env
        .set
        .iter()
        .chain(&from_params.set)
        .cloned()
        .collect();

    let archive = chart_dir.join(cilium_cmp_render::chart::store::archive_name(
        &inputs.cilium.to_string(),
    ));
    // A missing archive is not an error here: the render says what is missing and where the
    // plugin looked (`GenerateError::NeedsChartArchive`).
    if archive.is_file() {
        inputs.chart = Some(ChartFiles::open_cached(&archive)?);
    }

    let lock = folder::read_lock(&repo)?;
    let cilium_version = Some(inputs.cilium.to_string());
    Ok(Generation {
        inputs,
        repo,
        lock,
        folder_cluster: settings.cluster,
        cluster_differs: cluster.differs,
        outside_folder: Overrides {
            cilium_version,
            values_files: from_env
                .values_files
                .iter()
                .chain(&from_params.values_files)
                .cloned()
                .collect(),
            set: from_env
                .set
                .iter()
                .chain(&from_params.set)
                .cloned()
                .collect(),
        },
    })
}

/// The render inputs of a generation (the pure part of the contract).
pub fn generate_inputs(
    env: &BTreeMap<String, String>,
    app_dir: &Path,
) -> Result<Inputs, GenerateError> {
    Ok(plan(env, app_dir)?.inputs)
}

/// Renders a folder without consulting its lock; never returns an empty stream.
/// `allow_unknown_keys` is the command line's opt-out (`lock`, `talos-patch`), over the folder's
/// `allowUnknownKeys`; the plugin passes false.
pub fn render_folder(
    env: &BTreeMap<String, String>,
    app_dir: &Path,
    allow_unknown_keys: bool,
) -> Result<Rendered, GenerateError> {
    render_folder_with(env, app_dir, allow_unknown_keys, Keep::Text)
}

/// `render_folder`, keeping what `keep` asks besides the text (a lock records the digests).
pub fn render_folder_with(
    env: &BTreeMap<String, String>,
    app_dir: &Path,
    allow_unknown_keys: bool,
    keep: Keep,
) -> Result<Rendered, GenerateError> {
    let mut generation = plan(env, app_dir)?;
    generation.inputs.allow_unknown_keys |= allow_unknown_keys;
    let stream = cilium_cmp_render::render::render_stream(&generation.inputs, keep).map_err(
        |e| match e {
            RenderError::NoChartArchive { .. } => GenerateError::NeedsChartArchive {
                error: Box::new(e),
                hint: ArchiveHint::PluginDir {
                    dir: var(env, CHART_DIR_VAR)
                        .unwrap_or(DEFAULT_CHART_DIR)
                        .to_string(),
                },
            },
            e => e.into(),
        },
    )?;
    // The hash is the one `finish` stamped, taken over the text it wrote: the stream is not read
    // back to check it (`output::finish` says why they agree, and its tests check it).
    match stream.hash {
        // The renderer refuses an empty render; one without the stamp holds no object either.
        None => Err(RenderError::Empty.into()),
        Some(hash) => Ok(Rendered {
            text: stream.text,
            hash: format!("sha256:{hash}"),
            objects: stream.digests,
            generation,
        }),
    }
}

/// What `cilium-cmp generate` prints: the render, after the lock (if any) agreed.
pub fn generate(env: &BTreeMap<String, String>, app_dir: &Path) -> Result<Rendered, GenerateError> {
    generate_allowing(env, app_dir, false)
}

/// `generate` with the command line's opt-out for values the chart does not know (see
/// `render_folder`).
pub fn generate_allowing(
    env: &BTreeMap<String, String>,
    app_dir: &Path,
    allow_unknown_keys: bool,
) -> Result<Rendered, GenerateError> {
    let r = render_folder(env, app_dir, allow_unknown_keys)?;
    check_lock(&r.generation, &r.hash)?;
    Ok(r)
}

/// Refuses a render whose content hash differs from the folder's lock, naming both hashes and
/// the command that reproduces the render and updates the lock.
pub fn check_lock(g: &Generation, hash: &str) -> Result<(), GenerateError> {
    match &g.lock {
        Some(locked) if locked != hash => Err(GenerateError::LockMismatch {
            folder: g.repo.app_rel.clone(),
            lock: g.repo.shown(&g.repo.app_dir.join(LOCK_FILE)),
            locked: locked.clone(),
            rendered: hash.to_string(),
            commands: Box::new([preview_command(g), reproduce_command(g)]),
        }),
        _ => Ok(()),
    }
}

/// Renders the folder and writes its lock with the render's hash (only after the render
/// succeeded, and not at all when the lock already holds it); returns the render and the hash
/// the lock held before.
pub fn update_lock(
    env: &BTreeMap<String, String>,
    app_dir: &Path,
    allow_unknown_keys: bool,
    force: cilium_cmp_render::replace_file::Force,
) -> Result<(Rendered, Option<String>), GenerateError> {
    let p = preview::preview(env, app_dir, allow_unknown_keys)?;
    p.write_lock(force)?;
    let previous = p.lock.map(|l| l.hash);
    Ok((p.rendered, previous))
}

/// Replaces the lock at `path` with `text` whole or not at all, keeping its mode and owner
/// (`replace_file`), an error naming it as `shown`. A lock that is a symbolic link (a pull
/// request can commit one pointing anywhere), has other hard links or is read-only is refused
/// unless `force` (`lock --force`), which replaces the name and never writes through it.
pub(crate) fn write_aside(
    path: &Path,
    shown: &str,
    text: &str,
    force: cilium_cmp_render::replace_file::Force,
) -> Result<(), GenerateError> {
    use cilium_cmp_render::replace_file::ReplaceError;
    let write = |e: ReplaceError| GenerateError::Write {
        path: shown.to_string(),
        message: match &e {
            ReplaceError::Io(e) => cilium_cmp_yaml::limits::io_reason(e),
            ReplaceError::Refused(m) => m.clone(),
        },
    };
    cilium_cmp_render::replace_file::replace(path, text.as_bytes(), force).map_err(write)
}

/// The one command, run from the repository root, that reproduces this render with every input
/// spelled out and writes the folder's lock.
pub fn reproduce_command(g: &Generation) -> String {
    folder_command(g, "lock")
}

/// The same inputs for the preview, which writes nothing.
pub fn preview_command(g: &Generation) -> String {
    folder_command(g, "render-folder")
}

fn folder_command(g: &Generation, subcommand: &str) -> String {
    let mut args: Vec<String> = vec![
        "cilium-cmp".into(),
        subcommand.into(),
        g.repo.app_rel.clone(),
    ];
    let mut flag = |name: &str, value: &str| {
        args.push(name.to_string());
        args.push(value.to_string());
    };
    flag("--cilium-version", &g.inputs.cilium.to_string());
    // What the folder's settings file says already is left out: the command stays the one to
    // type, and it keeps following the folder when the file changes.
    let folder = &g.folder_cluster;
    if folder.namespace.as_deref() != Some(g.inputs.namespace.as_str()) {
        flag("--namespace", &g.inputs.namespace);
    }
    let folder_kube = folder
        .kube_version
        .as_deref()
        .and_then(|v| cilium_cmp_render::kube_version::helm_form(v).ok());
    if folder_kube.as_deref() != Some(g.inputs.kube_version.helm_form()) {
        flag("--kube-version", g.inputs.kube_version.helm_form());
    }
    match &folder.api_versions {
        Some(mine) if mine.as_slice() == g.inputs.api_versions.as_slice() => {}
        // The folder lists some and this render used none: only an empty flag says so.
        Some(_) if g.inputs.api_versions.is_empty() => flag("--api-versions", ""),
        _ if g.inputs.api_versions.is_empty() => {}
        _ => flag("--api-versions", &g.inputs.api_versions.to_string()),
    }
    for f in &g.outside_folder.values_files {
        flag("--values", f);
    }
    for s in &g.outside_folder.set {
        flag("--set", s);
    }
    args.iter()
        .map(|a| shell_quote(a))
        .collect::<Vec<_>>()
        .join(" ")
}

/// A render request made outside Argo CD (by `render-folder`, `lock` and `talos-patch`), turned into the
/// environment Argo CD would pass, so both run exactly the code path of `generate`.
#[derive(Debug, Clone)]
pub struct FolderRequest {
    /// The application folder, as given (it must be inside `repo_root`).
    pub app_dir: PathBuf,
    /// The repository root, which values files must stay inside.
    pub repo_root: PathBuf,
    /// The release namespace; empty: the folder's `namespace` (else Helm's default).
    pub namespace: String,
    /// The Kubernetes version; empty: the folder's `kubeVersion` (else Helm's default).
    pub kube_version: String,
    /// Empty: the folder's `apiVersions`; a list of one empty string: none.
    pub api_versions: Vec<String>,
    /// Command-line overrides, with the precedence of plugin parameters.
    pub overrides: Overrides,
    /// The folder of chart archives; None: the plugin's default (`DEFAULT_CHART_DIR`).
    pub chart_dir: Option<PathBuf>,
}

impl FolderRequest {
    /// The environment map and the application folder to pass to `generate`.
    pub fn env(&self) -> Result<BTreeMap<String, String>, GenerateError> {
        let outside = |what: &str| GenerateError::Folder {
            span: None,
            path: self.app_dir.display().to_string(),
            message: what.to_string(),
        };
        let app = self.app_dir.canonicalize().map_err(|e| {
            outside(&format!(
                "cannot open the application folder ({})",
                cilium_cmp_yaml::limits::io_reason(&e)
            ))
        })?;
        let root = self
            .repo_root
            .canonicalize()
            .map_err(|e| GenerateError::Folder {
                span: None,
                path: self.repo_root.display().to_string(),
                message: format!(
                    "cannot open the repository root ({})",
                    cilium_cmp_yaml::limits::io_reason(&e)
                ),
            })?;
        let rel = app.strip_prefix(&root).map_err(|_| {
            outside(&format!(
                "the application folder is not inside the repository root {} (run from the repository root, or pass --repo-root)",
                root.display()
            ))
        })?;
        let rel: Vec<String> = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        let mut env = BTreeMap::new();
        env.insert(
            "ARGOCD_APP_SOURCE_PATH".to_string(),
            if rel.is_empty() {
                ".".to_string()
            } else {
                rel.join("/")
            },
        );
        // A fact not given is left out, so the folder's settings file supplies it (`plan`).
        if !self.namespace.trim().is_empty() {
            env.insert("ARGOCD_APP_NAMESPACE".into(), self.namespace.clone());
        }
        if !self.kube_version.trim().is_empty() {
            env.insert("KUBE_VERSION".into(), self.kube_version.clone());
        }
        if !self.api_versions.is_empty() {
            env.insert(
                "KUBE_API_VERSIONS".into(),
                self.api_versions
                    .iter()
                    .flat_map(|a| a.split(','))
                    .map(str::trim)
                    .filter(|a| !a.is_empty())
                    .collect::<Vec<_>>()
                    .join(","),
            );
        }
        env.insert(
            "ARGOCD_APP_PARAMETERS".into(),
            params::to_json(&self.overrides),
        );
        if let Some(d) = &self.chart_dir {
            env.insert(CHART_DIR_VAR.into(), d.display().to_string());
        }
        Ok(env)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_quoting() {
        assert_eq!(shell_quote("apps/cilium"), "apps/cilium");
        assert_eq!(shell_quote(""), "''");
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
        assert_eq!(shell_quote("x={a,b}"), "'x={a,b}'");
    }

    #[test]
    fn namespaces() {
        assert!(valid_namespace("kube-system"));
        assert!(!valid_namespace("Kube"));
        assert!(!valid_namespace("-a"));
        assert!(!valid_namespace(&"a".repeat(64)));
    }
}
