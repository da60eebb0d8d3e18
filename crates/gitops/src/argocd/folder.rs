//! The application folder a user commits: its settings file, its lock, and the boundary of the
//! repository that values files must stay inside.

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

use serde_json::Value;

use super::GenerateError;

/// The settings file that marks an application folder of this plugin (discovery matches it).
pub const SETTINGS_FILE: &str = "cilium-cmp.yaml";
/// The lock file: the content hash of the last reviewed render.
pub const LOCK_FILE: &str = "cilium-cmp.lock";
/// The values file used when the settings file does not list any.
pub const DEFAULT_VALUES_FILE: &str = "values.yaml";

const SETTINGS_KEYS: &[&str] = &[
    "ciliumVersion",
    "valuesFiles",
    "allowUnknownKeys",
    "namespace",
    "kubeVersion",
    "apiVersions",
    "clusterMesh",
];
const MESH_KEYS: &[&str] = &["externalPeers", "sharedCA"];
/// The one value of `clusterMesh.sharedCA`: the mesh's CA reaches each cluster outside the chart.
pub const SHARED_CA_PRE_CREATED: &str = "preCreated";

/// What the settings file says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    /// `ciliumVersion`, trimmed; None when absent or empty.
    pub cilium_version: Option<String>,
    /// Paths relative to the application folder, in merge order.
    pub values_files: Vec<String>,
    /// Values the chart does not know are warnings instead of errors (for values files written
    /// for older charts, while they are migrated).
    pub allow_unknown_keys: bool,
    /// The cluster facts Argo CD passes (the Application's destination namespace, KUBE_VERSION,
    /// KUBE_API_VERSIONS), written down so that commands run outside Argo CD render for the
    /// same cluster without flags; Argo CD's own values win in the plugin.
    pub cluster: ClusterSettings,
    /// What the fleet checks cannot read from the values (see `crate::fleet`); the render
    /// ignores it.
    pub cluster_mesh: MeshSettings,
}

/// The settings file's `namespace`, `kubeVersion` and `apiVersions`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClusterSettings {
    /// The release namespace (checked to be a namespace name when read).
    pub namespace: Option<String>,
    /// As written (a Kubernetes version such as 1.33 or 1.33.0, checked when read).
    pub kube_version: Option<String>,
    /// The API versions (or `GROUP/VERSION/Kind` resources) the cluster serves that the render
    /// depends on, as Argo CD's `KUBE_API_VERSIONS` lists them.
    pub api_versions: Option<Vec<String>>,
}

/// The `clusterMesh` key of the settings file: facts about this cluster's Cluster Mesh that live
/// outside the repository's values, each with the line it is written on (for findings).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MeshSettings {
    /// Peers named in `clustermesh.config.clusters` that are no application folder of this
    /// repository (clusters managed elsewhere): not reported as missing.
    pub external_peers: Vec<(String, Option<usize>)>,
    /// Set (with its line) when `sharedCA: preCreated` says the mesh's certificate authority
    /// reaches this cluster outside the chart: a `cilium-ca` Secret created beforehand from the
    /// mesh's one CA (certgen reuses it), or certificates issued by it.
    pub shared_ca_pre_created: Option<Option<usize>>,
}

/// The repository as the plugin sees it: Argo CD extracts the repository and runs the plugin in
/// the application folder, so the root is the folder minus `ARGOCD_APP_SOURCE_PATH`.
#[derive(Debug, Clone)]
pub struct Repo {
    /// The repository root, canonical: no values file may leave it.
    pub root: PathBuf,
    /// The application folder, canonical.
    pub app_dir: PathBuf,
    /// The application folder relative to the repository root, `/`-separated (`.` for the root
    /// itself), as the Application names it: what a reproducing command is given.
    pub app_rel: String,
    /// The folders from `root` down to `app_dir`.
    below_root: Vec<String>,
    /// Whether the root came from `ARGOCD_APP_SOURCE_PATH` (else it is the folder itself).
    pub root_known: bool,
}

fn clean_relative(path: &str) -> Result<Vec<String>, ()> {
    let mut parts: Vec<String> = Vec::new();
    for p in path.split('/') {
        match p {
            "" | "." => {}
            ".." => {
                parts.pop().ok_or(())?;
            }
            other => parts.push(other.to_string()),
        }
    }
    Ok(parts)
}

impl Repo {
    /// The repository around `app_dir`, found by walking up one folder per component of
    /// `source_path` (Argo CD's `ARGOCD_APP_SOURCE_PATH`); without it, the folder is its own
    /// root. Refused when the folder cannot be opened or the path leaves the repository or does
    /// not end in the folder.
    pub fn locate(app_dir: &Path, source_path: Option<&str>) -> Result<Repo, GenerateError> {
        let app_dir = app_dir.canonicalize().map_err(|e| GenerateError::Folder {
            span: None,
            path: app_dir.display().to_string(),
            message: format!("cannot open the application folder: {e}"),
        })?;
        let Some(source_path) = source_path else {
            return Ok(Repo {
                root: app_dir.clone(),
                app_dir,
                app_rel: ".".into(),
                below_root: Vec::new(),
                root_known: false,
            });
        };
        let bad = |why: &str| GenerateError::Env {
            var: "ARGOCD_APP_SOURCE_PATH".into(),
            value: source_path.to_string(),
            message: why.to_string(),
        };
        let parts = clean_relative(source_path)
            .map_err(|_| bad("the application path leaves the repository"))?;
        // Walk up one folder per path component while the names agree. Argo CD may send only a
        // subtree of the repository (reposerver.plugin.use.manifest.generate.paths), whose
        // extraction folder then ends the walk early: the boundary is what was extracted.
        let mut root = app_dir.as_path();
        let mut below_root = Vec::new();
        for part in parts.iter().rev() {
            if root.file_name().and_then(|n| n.to_str()) != Some(part.as_str()) {
                break;
            }
            below_root.insert(0, part.clone());
            root = root
                .parent()
                .ok_or_else(|| bad("too many path components"))?;
        }
        if below_root.is_empty() && !parts.is_empty() {
            return Err(bad(&format!(
                "it does not name the folder the plugin runs in ({})",
                app_dir.display()
            )));
        }
        Ok(Repo {
            root: root.to_path_buf(),
            app_rel: if parts.is_empty() {
                ".".into()
            } else {
                parts.join("/")
            },
            app_dir: app_dir.clone(),
            below_root,
            root_known: true,
        })
    }

    /// The path of a file relative to the repository root, for messages and commands.
    pub fn shown(&self, path: &Path) -> String {
        match path.strip_prefix(&self.root) {
            Ok(rel) => rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join("/"),
            Err(_) => path.display().to_string(),
        }
    }

    /// Resolves a values file named relative to the application folder, refusing anything that
    /// leaves the repository (Argo CD hands the plugin the repository and nothing else) and
    /// anything inside `.git`, named so or reached through a link (`is_git_dir_name`).
    pub fn values_file(&self, rel: &str, listed_in: &str) -> Result<PathBuf, GenerateError> {
        let fail = |message: String| GenerateError::ValuesFile {
            file: rel.to_string(),
            listed_in: listed_in.to_string(),
            message,
        };
        if rel.trim().is_empty() {
            return Err(fail("the path is empty".into()));
        }
        let as_path = Path::new(rel);
        if has_git_dir_name(as_path) {
            return Err(fail(format!("it names .git: {GIT_DIR_REFUSED}")));
        }
        if as_path.is_absolute() {
            return Err(fail(
                "absolute paths are refused; name it relative to the application folder, e.g. ../common/values.yaml".into(),
            ));
        }
        let boundary = if self.root_known {
            "the repository (Argo CD gives the plugin the repository only)"
        } else {
            "the application folder (ARGOCD_APP_SOURCE_PATH is not set, so the repository root is unknown)"
        };
        // Lexical check first, so the message does not depend on what exists outside.
        let mut depth: Vec<&std::ffi::OsStr> = Vec::new();
        let below_root = self.below_root.join("/");
        for c in Path::new(&below_root)
            .components()
            .chain(as_path.components())
        {
            match c {
                Component::Normal(n) => depth.push(n),
                Component::ParentDir if depth.pop().is_none() => {
                    return Err(fail(format!("it resolves to outside {boundary}")));
                }
                _ => {}
            }
        }
        let joined = self.app_dir.join(as_path);
        let real = joined.canonicalize().map_err(|e| {
            fail(format!(
                "cannot read {} ({})",
                self.shown(&lexical(&self.root, &depth)),
                cilium_cmp_yaml::limits::io_reason(&e)
            ))
        })?;
        if !real.starts_with(&self.root) {
            return Err(fail(format!("it is a symbolic link to outside {boundary}")));
        }
        if real.strip_prefix(&self.root).is_ok_and(has_git_dir_name) {
            return Err(fail(format!(
                "it resolves to {}, inside .git (through a symbolic link): {GIT_DIR_REFUSED}",
                self.shown(&real)
            )));
        }
        if !real.is_file() {
            return Err(fail(format!("{} is not a file", self.shown(&real))));
        }
        Ok(real)
    }
}

fn lexical(root: &Path, parts: &[&std::ffi::OsStr]) -> PathBuf {
    let mut p = root.to_path_buf();
    for part in parts {
        p.push(part);
    }
    p
}

/// Whether one name of a path names a git directory: `.git` in any case, and the names Windows
/// and macOS file systems open as `.git` (git refuses to track them for that reason: `.git`
/// followed by dots, spaces or an NTFS stream `:...`, the short name `git~1`, in
/// `is_ntfs_dotgit` of git's path.c; `.git` with code points HFS+ ignores, in `is_hfs_dotgit`
/// of git's utf8.c). The git directory holds the checkout's config, and in CI its credentials
/// (the authorization header a checkout action writes to `.git/config`): nothing inside it is an
/// input.
pub fn is_git_dir_name(name: &str) -> bool {
    // The code points `next_hfs_char` in git's utf8.c skips.
    const HFS_IGNORED: &[char] = &[
        '\u{200c}', '\u{200d}', '\u{200e}', '\u{200f}', '\u{202a}', '\u{202b}', '\u{202c}',
        '\u{202d}', '\u{202e}', '\u{206a}', '\u{206b}', '\u{206c}', '\u{206d}', '\u{206e}',
        '\u{206f}', '\u{feff}',
    ];
    let name: String = name
        .chars()
        .filter(|c| !HFS_IGNORED.contains(c))
        .map(|c| c.to_ascii_lowercase())
        .collect();
    let Some(rest) = name
        .strip_prefix(".git")
        .or_else(|| name.strip_prefix("git~1"))
    else {
        return false;
    };
    let before_stream = rest.split(':').next().unwrap_or("");
    before_stream.chars().all(|c| c == '.' || c == ' ')
}

/// Whether any name of `path` names a git directory (`is_git_dir_name`).
pub fn has_git_dir_name(path: &Path) -> bool {
    path.components().any(|c| match c {
        Component::Normal(n) => is_git_dir_name(&n.to_string_lossy()),
        _ => false,
    })
}

/// Why a path inside `.git` is refused, for messages.
pub const GIT_DIR_REFUSED: &str = "paths inside .git are never read (the git directory holds the checkout's config and, in CI, its credentials); name a values file of the repository's content";

/// Reads a file of the application folder (None when it does not exist), through the same
/// boundary as values files: a symbolic link that leaves the repository or leads into `.git` is
/// refused, and so is anything but a regular file within `limits::MAX_FILE_BYTES`.
fn read_text(repo: &Repo, path: &Path, shown: &str) -> Result<Option<String>, GenerateError> {
    let fail = |message: String| GenerateError::Folder {
        span: None,
        path: shown.to_string(),
        message,
    };
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(fail(cilium_cmp_yaml::limits::io_reason(&e))),
        Ok(_) => {}
    }
    let real = path
        .canonicalize()
        .map_err(|e| fail(cilium_cmp_yaml::limits::io_reason(&e)))?;
    if !real.starts_with(&repo.root) {
        return Err(fail(
            "it is a symbolic link to outside the repository; the plugin reads only the repository"
                .into(),
        ));
    }
    if real.strip_prefix(&repo.root).is_ok_and(has_git_dir_name) {
        return Err(fail(format!(
            "it resolves to {}, inside .git: {GIT_DIR_REFUSED}",
            repo.shown(&real)
        )));
    }
    cilium_cmp_yaml::limits::read_text(&real, shown)
        .map(Some)
        .map_err(|e| match e {
            cilium_cmp_yaml::limits::InputError::At {
                line,
                column,
                reason,
                ..
            } => GenerateError::Folder {
                span: None,
                path: format!("{shown}:{line}:{column}"),
                message: reason,
            },
            other => fail(other.reason()),
        })
}

/// Reads the settings file; its absence is an error because discovery selected the folder by it.
pub fn read_settings(repo: &Repo) -> Result<Settings, GenerateError> {
    let path = repo.app_dir.join(SETTINGS_FILE);
    let shown = repo.shown(&path);
    let fail = |message: String| GenerateError::Folder {
        span: None,
        path: shown.clone(),
        message,
    };
    let text = read_text(repo, &path, &shown)?.ok_or_else(|| {
        fail(format!(
            "missing: an application folder of cilium-cmp holds {SETTINGS_FILE} with at least `ciliumVersion: \"1.20.0\"` (or the Application sets the cilium-version parameter and the file is empty)"
        ))
    })?;
    parse_settings(&text, &shown)
}

/// The entry `path` (dotted, `[i]` for list items) of the settings file, for the excerpt.
fn entry_span(
    text: &str,
    lines: &BTreeMap<String, usize>,
    shown: &str,
    path: &str,
) -> Option<cilium_cmp_yaml::diagnostic::Span> {
    let key = path.rsplit('.').next().filter(|k| !k.ends_with(']'));
    cilium_cmp_yaml::diagnostic::Span::of_entry(shown, text, *lines.get(path)?, key)
}

/// A setting's value in a message: a string as written (quoted once), anything else as JSON.
fn shown_value(v: &Value) -> String {
    match v {
        Value::String(text) => cilium_cmp_yaml::limits::quoted(text),
        // A whole number as written: the reader keeps numbers as Helm does (float64), and
        // serde_json would show `5` as `5.0`.
        Value::Number(n) => cilium_cmp_yaml::limits::quoted(
            &n.as_f64()
                .map_or_else(|| n.to_string(), cilium_cmp_yaml::gofmt::go_json_float),
        ),
        other => cilium_cmp_yaml::limits::quoted(&other.to_string()),
    }
}

/// The settings file's text, read; `shown` names the file in errors.
pub fn parse_settings(text: &str, shown: &str) -> Result<Settings, GenerateError> {
    let doc = cilium_cmp_yaml::yaml::parse_values(text).map_err(|e| GenerateError::Folder {
        span: Some(Box::new(e.span_in(shown, text))),
        path: e.position_in(shown),
        message: e.message().to_string(),
    })?;
    let lines = doc.lines;
    let fail_at = |key: Option<&str>, message: String| GenerateError::Folder {
        span: key
            .and_then(|k| entry_span(text, &lines, shown, k))
            .map(Box::new),
        path: shown.to_string(),
        message,
    };
    let fail = |message: String| fail_at(None, message);
    let map = match doc.value {
        Value::Object(m) => m,
        Value::Null => Default::default(),
        _ => {
            return Err(fail(format!(
                "must be a YAML mapping with the keys {}",
                SETTINGS_KEYS.join(", ")
            )))
        }
    };
    for key in map.keys() {
        if !SETTINGS_KEYS.contains(&key.as_str()) {
            let meant = likely_meant(key, SETTINGS_KEYS)
                .map(|k| format!("did you mean {k}? "))
                .unwrap_or_default();
            return Err(fail_at(
                Some(key),
                format!(
                    "unknown key {}; {meant}valid keys: {}",
                    cilium_cmp_yaml::limits::quoted(key),
                    SETTINGS_KEYS.join(", ")
                ),
            ));
        }
    }
    let cilium_version = match map.get("ciliumVersion") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) if s.trim().is_empty() => None,
        Some(Value::String(s)) => Some(s.trim().to_string()),
        Some(other) => {
            return Err(fail_at(Some("ciliumVersion"), format!(
                "ciliumVersion must be a quoted string such as \"1.20.0\"; YAML reads the unquoted {} as a {}",
                shown_value(other),
                type_name(other)
            )))
        }
    };
    let values_files = match map.get("valuesFiles") {
        None => vec![DEFAULT_VALUES_FILE.to_string()],
        Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => {
            let mut out = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                match item {
                    Value::String(s) => out.push(s.clone()),
                    other => {
                        return Err(fail_at(Some(&format!("valuesFiles[{i}]")), format!(
                            "valuesFiles[{i}] must be a path (a string), not the {} {}",
                            type_name(other),
                            shown_value(other)
                        )))
                    }
                }
            }
            out
        }
        Some(other) => {
            return Err(fail_at(Some("valuesFiles"), format!(
                "valuesFiles must be a list of paths relative to the folder, e.g. [values.yaml], not the {} {}",
                type_name(other),
                shown_value(other)
            )))
        }
    };
    let allow_unknown_keys = match map.get("allowUnknownKeys") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(other) => {
            return Err(fail_at(
                Some("allowUnknownKeys"),
                format!(
                    "allowUnknownKeys must be true or false, not the {} {}",
                    type_name(other),
                    shown_value(other)
                ),
            ))
        }
    };
    let cluster_mesh = parse_mesh_settings(map.get("clusterMesh"), &lines, shown, text)?;
    let cluster = parse_cluster_settings(&map, &lines, shown, text)?;
    Ok(Settings {
        cilium_version,
        values_files,
        allow_unknown_keys,
        cluster,
        cluster_mesh,
    })
}

/// The valid key a mistyped one most likely meant: the same in another case or within two
/// edits (a missing `s`, as in `valuesFile`, or swapped letters), or None.
fn likely_meant(key: &str, valid: &[&'static str]) -> Option<&'static str> {
    let lower = key.to_ascii_lowercase();
    valid
        .iter()
        .map(|v| {
            (
                cilium_cmp_render::known_keys::edit_distance_of(&lower, &v.to_ascii_lowercase()),
                *v,
            )
        })
        .filter(|(d, _)| *d <= 2)
        .min_by_key(|(d, _)| *d)
        .map(|(_, v)| v)
}

/// Reads `namespace`, `kubeVersion` and `apiVersions`, checked as the plugin checks what Argo
/// CD passes for them.
fn parse_cluster_settings(
    map: &serde_json::Map<String, Value>,
    lines: &BTreeMap<String, usize>,
    shown: &str,
    source_text: &str,
) -> Result<ClusterSettings, GenerateError> {
    let fail = |key: &str, message: String| GenerateError::Folder {
        span: entry_span(source_text, lines, shown, key).map(Box::new),
        path: match lines.get(key) {
            Some(line) => format!("{shown}:{line}"),
            None => shown.to_string(),
        },
        message,
    };
    let text = |key: &str, example: &str| -> Result<Option<String>, GenerateError> {
        match map.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) if s.trim().is_empty() => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.trim().to_string())),
            Some(other) => Err(fail(
                key,
                format!(
                    "{key} must be a quoted string such as {example}; YAML reads the unquoted {} as a {}",
                    shown_value(other),
                    type_name(other)
                ),
            )),
        }
    };
    let namespace = text("namespace", "\"kube-system\"")?;
    if let Some(ns) = &namespace {
        if !super::valid_namespace(ns) {
            return Err(fail(
                "namespace",
                format!(
                    "namespace {} is {}",
                    cilium_cmp_yaml::limits::quoted(ns),
                    super::NOT_A_NAMESPACE
                ),
            ));
        }
    }
    let kube_version = text("kubeVersion", "\"1.33\"")?;
    if let Some(v) = &kube_version {
        if cilium_cmp_render::kube_version::helm_form(v).is_err() {
            return Err(fail(
                "kubeVersion",
                format!(
                    "kubeVersion {} is not a Kubernetes version such as \"1.33\" or \"1.33.2\"",
                    cilium_cmp_yaml::limits::quoted(v)
                ),
            ));
        }
    }
    let api_versions = match map.get("apiVersions") {
        None | Some(Value::Null) => None,
        Some(Value::Array(items)) => {
            let mut out = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                match item {
                    Value::String(s) if !s.trim().is_empty() => out.push(s.trim().to_string()),
                    other => {
                        return Err(fail(
                            &format!("apiVersions[{i}]"),
                            format!(
                                "apiVersions[{i}] must be an API version such as monitoring.coreos.com/v1 or a resource such as monitoring.coreos.com/v1/ServiceMonitor, not the {} {}",
                                type_name(other),
                                shown_value(other)
                            ),
                        ))
                    }
                }
            }
            Some(out)
        }
        Some(other) => {
            return Err(fail(
                "apiVersions",
                format!(
                    "apiVersions must be a list of the API versions the cluster serves (Argo CD's KUBE_API_VERSIONS), e.g. [monitoring.coreos.com/v1], not the {} {}",
                    type_name(other),
                    shown_value(other)
                ),
            ))
        }
    };
    Ok(ClusterSettings {
        namespace,
        kube_version,
        api_versions,
    })
}

/// Reads the `clusterMesh` mapping of the settings file.
fn parse_mesh_settings(
    value: Option<&Value>,
    lines: &BTreeMap<String, usize>,
    shown: &str,
    source_text: &str,
) -> Result<MeshSettings, GenerateError> {
    let at = |path: &str| match lines.get(path) {
        Some(line) => format!("{shown}:{line}"),
        None => shown.to_string(),
    };
    let fail = |path: &str, message: String| GenerateError::Folder {
        span: entry_span(source_text, lines, shown, path).map(Box::new),
        path: at(path),
        message,
    };
    let map = match value {
        None | Some(Value::Null) => return Ok(MeshSettings::default()),
        Some(Value::Object(m)) => m,
        Some(other) => {
            return Err(fail(
                "clusterMesh",
                format!(
                    "clusterMesh must be a mapping with the keys {}, not the {} {}",
                    MESH_KEYS.join(", "),
                    type_name(other),
                    shown_value(other)
                ),
            ))
        }
    };
    for key in map.keys() {
        if !MESH_KEYS.contains(&key.as_str()) {
            return Err(fail(
                &format!("clusterMesh.{key}"),
                format!(
                    "unknown key clusterMesh.{}; valid keys: {}",
                    cilium_cmp_yaml::limits::quoted(key),
                    MESH_KEYS.join(", ")
                ),
            ));
        }
    }
    let mut external_peers = Vec::new();
    match map.get("externalPeers") {
        None | Some(Value::Null) => {}
        Some(Value::Array(items)) => {
            for (i, item) in items.iter().enumerate() {
                let path = format!("clusterMesh.externalPeers[{i}]");
                match item {
                    Value::String(s) if !s.trim().is_empty() => {
                        external_peers.push((s.trim().to_string(), lines.get(&path).copied()))
                    }
                    other => {
                        return Err(fail(
                            &path,
                            format!(
                                "{path} must be a cluster name (a string, as in clustermesh.config.clusters), not the {} {}",
                                type_name(other),
                                shown_value(other)
                            ),
                        ))
                    }
                }
            }
        }
        Some(other) => {
            return Err(fail(
                "clusterMesh.externalPeers",
                format!(
                    "clusterMesh.externalPeers must be a list of cluster names, e.g. [legacy-dc], not the {} {}",
                    type_name(other),
                    shown_value(other)
                ),
            ))
        }
    }
    let shared_ca_pre_created = match map.get("sharedCA") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) if s == SHARED_CA_PRE_CREATED => {
            Some(lines.get("clusterMesh.sharedCA").copied())
        }
        Some(other) => {
            return Err(fail(
                "clusterMesh.sharedCA",
                format!(
                    "clusterMesh.sharedCA must be {SHARED_CA_PRE_CREATED} (the cilium-ca Secret, or the certificates, come from the mesh's one CA outside the chart) or absent, not {}",
                    shown_value(other)
                ),
            ))
        }
    };
    Ok(MeshSettings {
        external_peers,
        shared_ca_pre_created,
    })
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "list",
        Value::Object(_) => "mapping",
    }
}

/// The lock's expected content hash (`sha256:` + 64 hex), if the folder holds a lock.
pub fn read_lock(repo: &Repo) -> Result<Option<String>, GenerateError> {
    Ok(read_lock_file(repo)?.map(|l| l.hash))
}

/// What a lock records: the content hash the plugin enforces and, from locks written by this
/// version on, one short digest per object, so a preview can say which objects a change touches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LockFile {
    /// `contentHash`: `sha256:` and 64 hex digits.
    pub hash: String,
    /// `Kind/namespace/name` (or `Kind/name`) to `sha256:` and the first 16 hex digits of the
    /// sha256 of the object's canonical text; None in a lock written before the digests were recorded.
    pub objects: Option<BTreeMap<String, String>>,
}

/// Reads the folder's lock, if it holds one; anything but what `cilium-cmp lock` writes is an
/// error (the lock is the reviewed state, so a hand edit must not pass unnoticed).
pub fn read_lock_file(repo: &Repo) -> Result<Option<LockFile>, GenerateError> {
    let path = repo.app_dir.join(LOCK_FILE);
    let shown = repo.shown(&path);
    let Some(text) = read_text(repo, &path, &shown)? else {
        return Ok(None);
    };
    let fail = || {
        GenerateError::Folder {
span: None,
        path: shown.clone(),
        message: "a lock holds `contentHash: sha256:<64 hex digits>` and optionally `objects:` (one `sha256:<16 hex digits>` digest per object); write it with `cilium-cmp lock`".into(),
    }
    };
    let doc = cilium_cmp_yaml::yaml::parse_values(&text).map_err(|_| fail())?;
    let Value::Object(map) = doc.value else {
        return Err(fail());
    };
    if map.keys().any(|k| k != "contentHash" && k != "objects") {
        return Err(fail());
    }
    let hash = match map.get("contentHash") {
        Some(Value::String(h)) if is_content_hash(h) => h.clone(),
        _ => return Err(fail()),
    };
    let objects = match map.get("objects") {
        None => None,
        Some(Value::Object(objects)) => {
            let mut out = BTreeMap::new();
            for (k, v) in objects {
                match v {
                    Value::String(d) if is_object_digest(d) => out.insert(k.clone(), d.clone()),
                    _ => return Err(fail()),
                };
            }
            Some(out)
        }
        Some(_) => return Err(fail()),
    };
    Ok(Some(LockFile { hash, objects }))
}

/// Hex digits of an object's digest in the lock: 64 bits tell changed objects apart; the
/// content hash, not these, is what the plugin enforces.
pub const OBJECT_DIGEST_DIGITS: usize = 16;

/// `sha256:` and the first `OBJECT_DIGEST_DIGITS` hex digits (the prefix keeps the writer from
/// quoting digests that look like numbers).
fn is_object_digest(d: &str) -> bool {
    d.strip_prefix("sha256:").is_some_and(|hex| {
        hex.len() == OBJECT_DIGEST_DIGITS
            && hex
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    })
}

fn is_content_hash(h: &str) -> bool {
    h.strip_prefix("sha256:").is_some_and(|hex| {
        hex.len() == 64
            && hex
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    })
}

/// The text of a lock file for a content hash and the render's object digests.
pub fn lock_text(hash: &str, objects: &BTreeMap<String, String>) -> String {
    let mut text = format!(
        "# The content hash of the reviewed render of this folder (see cilium-config's\n\
         # cilium-cmp.io/content-hash). A render with another hash fails; update this file only\n\
         # with `cilium-cmp lock`, after reviewing what changes (`cilium-cmp render-folder`).\n\
         # The object digests let a preview name the objects a change touches.\n\
         contentHash: {hash}\n"
    );
    // Object names come from values, so the writer quotes whatever needs quoting.
    let map: serde_json::Map<String, Value> = objects
        .iter()
        .map(|(k, v)| (k.clone(), Value::String(v.clone())))
        .collect();
    let mut doc = serde_json::Map::new();
    doc.insert("objects".into(), Value::Object(map));
    text.push_str(&cilium_cmp_yaml::yaml::to_string(&Value::Object(doc)));
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn source_paths_are_cleaned_and_may_not_leave_the_repository() {
        assert_eq!(
            clean_relative("./apps//cilium/").unwrap(),
            ["apps", "cilium"]
        );
        assert_eq!(
            clean_relative("apps/x/../cilium").unwrap(),
            ["apps", "cilium"]
        );
        assert!(clean_relative("../cilium").is_err());
        assert!(clean_relative(".").unwrap().is_empty());
    }

    #[test]
    fn git_directory_names_are_recognised_as_git_recognises_them() {
        for name in [
            ".git",
            ".GIT",
            ".Git",
            ".git.",
            ".git. .",
            ".git::$INDEX_ALLOCATION",
            "git~1",
            "GIT~1",
            ".g\u{200c}it",
            "\u{feff}.git",
        ] {
            assert!(is_git_dir_name(name), "{name:?}");
        }
        for name in [
            ".github",
            ".gitignore",
            "git",
            ".gi",
            "x.git",
            "git~2",
            ".git-crypt",
        ] {
            assert!(!is_git_dir_name(name), "{name:?}");
        }
        assert!(has_git_dir_name(Path::new("../../.git/config")));
        assert!(has_git_dir_name(Path::new("a/.GIT/b")));
        assert!(!has_git_dir_name(Path::new("../common/values.yaml")));
    }

    #[test]
    fn allow_unknown_keys_is_a_boolean_setting_off_by_default() {
        let s = parse_settings("ciliumVersion: \"1.20.0\"\n", "cilium-cmp.yaml").unwrap();
        assert!(!s.allow_unknown_keys);
        let s = parse_settings("allowUnknownKeys: true\n", "cilium-cmp.yaml").unwrap();
        assert!(s.allow_unknown_keys);
        let e = parse_settings("allowUnknownKeys: \"yes\"\n", "cilium-cmp.yaml").unwrap_err();
        assert!(e.to_string().contains("true or false"), "{e}");
        // The string is quoted once, as the user wrote it.
        assert!(e.to_string().ends_with("not the string \"yes\""), "{e}");
        let e = parse_settings("valuesFiles: values.yaml\n", "cilium-cmp.yaml").unwrap_err();
        assert!(
            e.to_string().contains("not the string \"values.yaml\""),
            "{e}"
        );
    }

    #[test]
    fn cluster_mesh_settings_are_read_with_their_lines() {
        let text = "ciliumVersion: \"1.20.0\"\nclusterMesh:\n  externalPeers:\n    - legacy-dc\n    - lab\n  sharedCA: preCreated\n";
        let s = parse_settings(text, "cilium-cmp.yaml").unwrap();
        assert_eq!(
            s.cluster_mesh.external_peers,
            [
                ("legacy-dc".to_string(), Some(4)),
                ("lab".to_string(), Some(5))
            ]
        );
        assert_eq!(s.cluster_mesh.shared_ca_pre_created, Some(Some(6)));
        let none = parse_settings("ciliumVersion: \"1.20.0\"\n", "cilium-cmp.yaml").unwrap();
        assert_eq!(none.cluster_mesh, MeshSettings::default());
        for (bad, why) in [
            ("clusterMesh: yes\n", "clusterMesh must be a mapping"),
            (
                "clusterMesh:\n  peers: []\n",
                "unknown key clusterMesh.\"peers\"",
            ),
            ("clusterMesh:\n  sharedCA: certgen\n", "must be preCreated"),
            // A number is shown as written, not as the float YAML reads it into.
            (
                "namespace: 5\n",
                "YAML reads the unquoted \"5\" as a number",
            ),
            (
                "clusterMesh:\n  externalPeers: [\"\"]\n",
                "must be a cluster name",
            ),
        ] {
            let e = parse_settings(bad, "cilium-cmp.yaml")
                .unwrap_err()
                .to_string();
            assert!(e.contains(why), "{bad}: {e}");
            assert!(e.starts_with("cilium-cmp.yaml:"), "{bad}: {e}");
        }
    }

    #[test]
    fn content_hashes_are_checked() {
        let h = format!("sha256:{}", "a".repeat(64));
        assert!(is_content_hash(&h));
        assert!(!is_content_hash(&h.to_uppercase()));
        assert!(!is_content_hash("sha256:abc"));
        let objects = BTreeMap::from([(
            "ConfigMap/kube-system/cilium-config".to_string(),
            "sha256:0123456789abcdef".to_string(),
        )]);
        let text = lock_text(&h, &objects);
        assert!(text.contains(&format!("\ncontentHash: {h}\n")), "{text}");
        assert!(
            text.ends_with(
                "objects:\n  ConfigMap/kube-system/cilium-config: sha256:0123456789abcdef\n"
            ),
            "{text}"
        );
        assert!(is_object_digest("sha256:0123456789abcdef"));
        assert!(!is_object_digest("sha256:0123456789ABCDEF"));
        assert!(!is_object_digest("0123456789abcdef"));
    }
}
