//! An Argo CD Application that deploys Cilium's Helm chart, turned into an application folder of
//! this plugin (settings and one values file holding the merged values) and the Application that
//! renders that folder with the plugin.
//!
//! The values are merged the way Argo CD hands them to Helm (`helmTemplate` in Argo CD's
//! repo-server): `valueFiles` in order, then `values`/`valuesObject` as one more values file, then
//! `parameters` as `--set` (or `--set-string` with `forceString`), then `fileParameters` as
//! `--set-file`; Helm applies `--set`, `--set-string` and `--set-file` in that order. Parameter
//! values are passed with their commas escaped (Argo CD's `cleanSetParameters`), unless the value
//! is a `{a,b}` list.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};

use cilium_cmp_render::setexpr::SetArgs;
use cilium_cmp_render::values::{Layer, Values};
use cilium_cmp_yaml::limits;

/// The plugin's name as Applications select it (`plugin.yaml`'s metadata.name; no spec.version).
pub const PLUGIN_NAME: &str = "cilium-cmp-v1";
/// The Helm repository Cilium's chart is published in.
const CILIUM_HELM_REPO: &str = "helm.cilium.io";
/// The OCI repository Cilium's chart is published in too.
const CILIUM_OCI_REPO: &str = "quay.io/cilium/charts";

/// What `import-application` needs besides the Application.
#[derive(Debug, Clone, Default)]
pub struct ImportRequest {
    /// The Application's YAML.
    pub app_text: String,
    /// The Application's name for errors (its file, or `-`).
    pub app_shown: String,
    /// Checkouts of the repositories that `ref` sources name: ref name → folder. The ref `""`
    /// stands for every ref (one `--values-root DIR` without a name).
    pub ref_roots: BTreeMap<String, PathBuf>,
    /// The Git repository the new Application's source points at.
    pub repo_url: String,
    /// Its revision (none: the Application's default, HEAD).
    pub target_revision: Option<String>,
    /// The application folder within it.
    pub path: String,
    /// Keep values the release does not know (and write `allowUnknownKeys: true`) instead of
    /// leaving them out.
    pub keep_unknown_keys: bool,
}

/// The new folder's files and the new Application.
#[derive(Debug, Clone)]
pub struct Imported {
    /// The release the Application installs.
    pub cilium_version: String,
    /// The folder's `cilium-cmp.yaml`.
    pub settings: String,
    /// The folder's `values.yaml`.
    pub values: String,
    /// The Application, as YAML.
    pub application: String,
    /// Things of the old Application that the plugin does not carry over (stderr, one each).
    pub warnings: Vec<String>,
    /// Values the release does not know (they did nothing under Helm either), one line each
    /// with where they were written and why; left out of values.yaml unless kept.
    pub unknown: Vec<String>,
    /// The destination namespace, which the plugin renders into.
    pub namespace: String,
}

/// Why an Application cannot be imported.
#[derive(Debug, thiserror::Error)]
#[error("{app}: {message}")]
pub struct ImportError {
    /// Which part of the input is refused.
    pub kind: ImportKind,
    /// The Application's name for errors.
    pub app: String,
    /// What is wrong, and what would do.
    pub message: String,
    /// Where in the Application's file, when the refusal is about a place in it.
    pub span: Option<Box<cilium_cmp_yaml::diagnostic::Span>>,
}

/// The part of an import that is refused, for the diagnostic's kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImportKind {
    /// The Application's file is not YAML.
    Syntax,
    /// The Application is not one the plugin can take over: another kind or chart, a version
    /// range or an older release, a field Argo CD does not know, a namespace that differs.
    Application,
    /// A values file, values text or file parameter it names cannot be read or used.
    Values,
}

/// The `spec.source.helm` fields Argo CD knows; an unknown one is a typo or a newer Argo CD, and
/// is refused rather than silently dropped.
const HELM_FIELDS: &[&str] = &[
    "valueFiles",
    "values",
    "valuesObject",
    "parameters",
    "fileParameters",
    "releaseName",
    "namespace",
    "ignoreMissingValueFiles",
    "kubeVersion",
    "apiVersions",
    "skipCrds",
    "skipSchemaValidation",
    "skipTests",
    "passCredentials",
    "version",
];

/// Metadata the API server writes; an Application exported with `kubectl get -o yaml` has them,
/// and they must not be applied back.
const SERVER_METADATA: &[&str] = &[
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "managedFields",
    "selfLink",
];

/// The application folder and the Application that render what the Helm Application `req`
/// names, as Argo CD's Helm rendered it.
pub fn import(req: &ImportRequest) -> Result<Imported, ImportError> {
    let fail = |message: String| ImportError {
        kind: ImportKind::Application,
        app: req.app_shown.clone(),
        message,
        span: None,
    };
    let fail_values = |message: String| ImportError {
        kind: ImportKind::Values,
        ..fail(message)
    };
    let app = cilium_cmp_yaml::yaml::parse_value(&req.app_text).map_err(|e| ImportError {
        kind: ImportKind::Syntax,
        app: e.position_in(&req.app_shown),
        message: e.message().to_string(),
        span: Some(Box::new(e.span_in(&req.app_shown, &req.app_text))),
    })?;
    let kind_ok = app["kind"] == "Application"
        && app["apiVersion"]
            .as_str()
            .is_some_and(|v| v.starts_with("argoproj.io/"));
    if !kind_ok {
        let span = crate::refusal::entry_span(&req.app_shown, &req.app_text, "kind")
            .or_else(|| crate::refusal::entry_span(&req.app_shown, &req.app_text, "apiVersion"));
        return Err(ImportError {
            span,
            ..fail(
                "not an Argo CD Application (apiVersion argoproj.io/v1alpha1, kind Application)"
                    .into(),
            )
        });
    }
    let spec = app["spec"]
        .as_object()
        .ok_or_else(|| fail("the Application has no spec".into()))?;

    let sources: Vec<&Value> = match (spec.get("source"), spec.get("sources")) {
        (Some(s), None) if s.is_object() => vec![s],
        (None, Some(Value::Array(list))) if !list.is_empty() => list.iter().collect(),
        _ => {
            return Err(fail(
                "spec.source or spec.sources (a list) must be set".into(),
            ))
        }
    };
    let chart_sources: Vec<&&Value> = sources
        .iter()
        .filter(|s| s.get("chart").is_some())
        .collect();
    let chart = match chart_sources.as_slice() {
        [one] => **one,
        [] => {
            return Err(fail(
                "no source deploys a Helm chart (spec.source.chart); import-application moves an Application of Cilium's Helm chart".into(),
            ))
        }
        _ => return Err(fail("more than one source deploys a Helm chart; import-application moves an Application whose only chart is Cilium's".into())),
    };
    let chart_name = chart["chart"].as_str().unwrap_or("");
    let repo = chart["repoURL"].as_str().unwrap_or("");
    if chart_name != "cilium" || !is_cilium_repo(repo) {
        return Err(fail(format!(
            "the chart is {} from {}; import-application moves Cilium's chart (chart: cilium, repoURL: https://{CILIUM_HELM_REPO}/ or {CILIUM_OCI_REPO})",
            limits::quoted(chart_name),
            limits::quoted(repo)
        )));
    }
    let version = match &chart["targetRevision"] {
        Value::String(rev) => exact_version(rev).map_err(fail)?,
        Value::Null => exact_version("").map_err(fail)?,
        other => {
            return Err(fail(format!(
                "the chart's targetRevision {} is not a string (YAML read it as a number); write the exact Cilium release quoted, e.g. \"1.20.0\"",
                cilium_cmp_render::tmpl::print(other)
            )))
        }
    };

    // Sources that only lend files (`ref:` without `path:`) are what `$ref/...` names.
    let refs: Vec<String> = sources
        .iter()
        .filter_map(|s| s["ref"].as_str().map(str::to_string))
        .collect();

    let helm = match chart.get("helm") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(m)) => m.clone(),
        Some(_) => return Err(fail("spec.source.helm must be a mapping".into())),
    };
    if let Some(k) = helm.keys().find(|k| !HELM_FIELDS.contains(&k.as_str())) {
        return Err(fail(format!(
            "unknown field spec.source.helm.{}; Argo CD knows {}",
            limits::quoted(k),
            HELM_FIELDS.join(", ")
        )));
    }
    let mut warnings = Vec::new();
    for (field, why) in [
        (
            "kubeVersion",
            "the plugin renders for the cluster's own version (Argo CD's KUBE_VERSION)",
        ),
        (
            "apiVersions",
            "the plugin renders for the cluster's own API list (Argo CD's KUBE_API_VERSIONS)",
        ),
        (
            "skipSchemaValidation",
            "cilium-cmp always checks the chart's values schema",
        ),
        ("skipCrds", "Cilium's chart has no crds/ folder"),
        ("skipTests", "Cilium's chart has no tests"),
        ("passCredentials", "the plugin reads no chart repository"),
        ("version", "the plugin does not run Helm"),
    ] {
        if helm.get(field).is_some_and(|v| !is_default(v)) {
            warnings.push(format!(
                "spec.source.helm.{field} is not carried over: {why}"
            ));
        }
    }
    let destination_ns = spec
        .get("destination")
        .and_then(|d| d["namespace"].as_str())
        .filter(|s| !s.is_empty())
        .ok_or_else(|| fail("spec.destination.namespace must be set: the plugin renders into the Application's destination namespace".into()))?;
    if let Some(ns) = helm
        .get("namespace")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
    {
        if ns != destination_ns {
            return Err(fail(format!(
                "spec.source.helm.namespace {} differs from spec.destination.namespace {}; the plugin renders into the destination namespace: set destination.namespace to {}, or set namespaceOverride in the values",
                limits::quoted(ns),
                limits::quoted(destination_ns),
                limits::quoted(ns)
            )));
        }
    }
    // The release name needs no check: no template of any supported Cilium chart reads
    // .Release.Name (only .Release.Namespace), so every release name renders the same objects.

    let ignore_missing = helm.get("ignoreMissingValueFiles") == Some(&Value::Bool(true));
    let mut layers = Vec::new();
    // The values texts as the user wrote them (files and `values`), by name.
    let mut texts: Vec<(String, String)> = Vec::new();
    for (i, entry) in string_list(&helm, "valueFiles")
        .map_err(fail)?
        .iter()
        .enumerate()
    {
        let field = format!("spec.source.helm.valueFiles[{i}]");
        match read_ref_file(req, &refs, entry, &field) {
            Ok((shown, text)) => {
                layers
                    .push(Layer::from_yaml(&shown, &text).map_err(|e| fail_values(e.to_string()))?);
                texts.push((shown, text));
            }
            Err(Missing::File(why)) if ignore_missing => warnings.push(format!(
                "{field} is skipped (ignoreMissingValueFiles): {why}"
            )),
            Err(Missing::File(why)) | Err(Missing::Other(why)) => {
                // The entry is shown where it can be found (a single source; with `sources`
                // its path in the file is another).
                return Err(ImportError {
                    span: crate::refusal::entry_span(&req.app_shown, &req.app_text, &field),
                    ..fail_values(why)
                });
            }
        }
    }
    match (helm.get("valuesObject"), helm.get("values")) {
        (Some(obj @ Value::Object(_)), _) => {
            // Argo CD hands valuesObject to Helm as YAML; it wins over `values`.
            let text = cilium_cmp_yaml::yaml::write::to_string(obj);
            layers.push(
                Layer::from_yaml("spec.source.helm.valuesObject", &text)
                    .map_err(|e| fail_values(e.to_string()))?,
            );
        }
        (Some(Value::Null) | None, Some(Value::String(text))) if !text.trim().is_empty() => {
            layers.push(
                Layer::from_yaml("spec.source.helm.values", text)
                    .map_err(|e| fail_values(e.to_string()))?,
            );
            texts.push(("spec.source.helm.values".into(), text.clone()));
        }
        (Some(Value::Null) | None, Some(Value::String(_)) | Some(Value::Null) | None) => {}
        _ => {
            return Err(fail(
                "spec.source.helm.values must be a string and valuesObject a mapping".into(),
            ))
        }
    }

    let mut set = SetArgs::default();
    for (i, p) in object_list(&helm, "parameters")
        .map_err(fail)?
        .iter()
        .enumerate()
    {
        let name = p["name"]
            .as_str()
            .filter(|n| !n.is_empty())
            .ok_or_else(|| fail(format!("spec.source.helm.parameters[{i}] has no name")))?;
        let value = match &p["value"] {
            Value::String(s) => s.clone(),
            Value::Null => String::new(),
            _ => {
                return Err(fail(format!(
                    "spec.source.helm.parameters[{i}].value must be a string (Argo CD's schema): quote it"
                )))
            }
        };
        let expr = format!("{name}={}", escape_commas(&value));
        if p["forceString"] == Value::Bool(true) {
            set.string.push(expr);
        } else {
            set.typed.push(expr);
        }
    }
    for (i, p) in object_list(&helm, "fileParameters")
        .map_err(fail)?
        .iter()
        .enumerate()
    {
        let field = format!("spec.source.helm.fileParameters[{i}]");
        let name = p["name"]
            .as_str()
            .filter(|n| !n.is_empty())
            .ok_or_else(|| fail(format!("{field} has no name")))?;
        let path = p["path"].as_str().unwrap_or("");
        let (_, text) =
            read_ref_file(req, &refs, path, &format!("{field}.path")).map_err(|m| match m {
                Missing::File(w) | Missing::Other(w) => fail_values(w),
            })?;
        // The file's content goes in under a key of its own; `--set-file` reads it from there.
        let key = format!("#{i}");
        set.file.push(format!("{}={}", name, key));
        set.files.insert(key, text);
    }
    if !set.is_empty() {
        layers.push(
            Layer::from_set_args_over(&set, &layers).map_err(|e| fail_values(e.to_string()))?,
        );
    }
    let bytes: usize = req.app_text.len() + set.byte_len();
    if bytes > limits::MAX_TOTAL_BYTES {
        return Err(fail(format!(
            "the Application and the files it names add up to {bytes} bytes; at most {} are allowed",
            limits::MAX_TOTAL_BYTES
        )));
    }
    let cilium = cilium_cmp_render::versions::parse(&version).map_err(|e| fail(e.to_string()))?;
    // Checked over the layers as the Application wrote them, so each line names the field or
    // file it came from.
    let layers_count = layers.len();
    let report = cilium_cmp_render::known_keys::check(
        &Values::resolve(
            cilium_cmp_render::versions::defaults(cilium),
            layers.clone(),
        ),
        cilium,
    );
    let mut merged = Values::resolve(Value::Object(Map::new()), layers)
        .user()
        .clone();
    let unknown = crate::fix_values::describe_unknown(&report);
    // The one values text as written, when it alone makes the values: kept byte for byte (its
    // comments too), or edited by lines as fix-values edits, when values that do nothing go.
    let single = match (layers_count, texts.as_slice()) {
        (1, [(name, text)]) => Some((name.as_str(), text.as_str())),
        _ => None,
    };
    let kept_text = match single {
        Some((_, text)) if req.keep_unknown_keys || report.is_empty() => Some(text.to_string()),
        Some((name, text)) => crate::fix_values::without_dead_values(name, text, cilium),
        None => None,
    };
    if !req.keep_unknown_keys {
        // They do nothing in Helm's render either, so the folder renders what Helm rendered.
        // An ignored occurrence of a repeated key is not in the merged values at all.
        for keys in report
            .values
            .iter()
            .filter(|u| {
                !matches!(
                    u.reason,
                    cilium_cmp_render::known_keys::Reason::Repeated { .. }
                )
            })
            .map(|u| &u.keys)
            .chain(&report.unlisted)
        {
            crate::fix_values::take_path(&mut merged, keys);
        }
    } else if !report.is_empty() {
        warnings.push(format!(
            "kept {} values Cilium {version} does not know and wrote allowUnknownKeys: true in cilium-cmp.yaml, so the folder renders; remove them later with `cilium-cmp fix-values --cilium-version {version} VALUES.yaml` and drop the setting",
            report.values.len() + report.more
        ));
    }

    let values = match kept_text {
        Some(text) => text,
        None => {
            if !texts.is_empty() {
                warnings.push(format!(
                    "values.yaml holds the merged values written anew: the comments of {} are not kept",
                    texts
                        .iter()
                        .map(|(name, _)| name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
            format!(
                "# Cilium values of the Argo CD Application {}, merged in Argo CD's order by cilium-cmp\n# import-application.\n{}",
                app["metadata"]["name"].as_str().unwrap_or("?"),
                if merged.as_object().is_some_and(|m| !m.is_empty()) {
                    cilium_cmp_yaml::yaml::write::to_string(&merged)
                } else {
                    "{}\n".into()
                }
            )
        }
    };
    let mut settings = format!(
        "# The application folder of the Cilium plugin (cilium-cmp); its values are in values.yaml.\nciliumVersion: \"{version}\"\n"
    );
    if req.keep_unknown_keys && !report.is_empty() {
        settings.push_str("# values.yaml holds values this Cilium release does not know (they do nothing);\n# `cilium-cmp fix-values` removes them, then this line can go.\nallowUnknownKeys: true\n");
    }
    let application = cilium_cmp_yaml::yaml::write::to_string(&plugin_application(
        &app,
        &sources,
        req,
        &mut warnings,
    ));
    Ok(Imported {
        cilium_version: version,
        settings,
        values,
        application,
        warnings,
        unknown,
        namespace: destination_ns.to_string(),
    })
}

/// Whether `url` is a repository Cilium publishes its chart in: the Helm repository, or the OCI
/// registry (Cilium's install docs: `oci://quay.io/cilium/charts/cilium`), which Argo CD takes as
/// `repoURL: quay.io/cilium/charts` (or with `oci://`) and `chart: cilium` (Argo CD's
/// "Helm OCI" repositories, docs/user-guide/helm.md).
fn is_cilium_repo(url: &str) -> bool {
    let rest = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"))
        .or_else(|| url.strip_prefix("oci://"))
        .unwrap_or(url);
    let rest = rest.trim_end_matches('/');
    rest == CILIUM_HELM_REPO || rest == CILIUM_OCI_REPO
}

/// The chart's `targetRevision`, which must name one supported release: a range would let the
/// chart move under the folder, which pins one version.
fn exact_version(rev: &str) -> Result<String, String> {
    let supported = cilium_cmp_render::versions::supported().collect::<Vec<_>>();
    let newest = supported.last().copied().unwrap_or("");
    let text = rev.trim();
    if text.is_empty() {
        return Err(format!(
            "the chart source has no targetRevision; cilium-cmp needs the exact Cilium release it deploys, e.g. {newest}"
        ));
    }
    let is_range = text.contains(['x', 'X', '*', '^', '~', '>', '<', '=', ' ', '|', ','])
        || text.split('.').count() != 3;
    if is_range {
        return Err(format!(
            "targetRevision {} is a version range; the application folder pins one Cilium release: write the exact version the cluster runs now (`kubectl -n kube-system get ds cilium -o jsonpath='{{.spec.template.spec.containers[0].image}}'`) as the chart's targetRevision and import again. Supported: {}",
            limits::quoted(text),
            supported.join(", ")
        ));
    }
    let bare = text.strip_prefix('v').unwrap_or(text);
    if let Some(oldest) = older_than_supported(bare, &supported) {
        // Cilium upgrades one minor release at a time (docs.cilium.io, "Upgrade Guide"), and
        // the chart the cluster runs now is what the folder must start from.
        let newest_first = supported
            .iter()
            .copied()
            .rfind(|v| v.starts_with("1.18."))
            .unwrap_or(oldest);
        return Err(format!(
            "Cilium {} is older than {oldest}, the oldest release cilium-cmp renders. The way forward: upgrade this Application with Helm first (set its chart's targetRevision to a supported release, e.g. {newest_first}, following Cilium's upgrade guide one minor release at a time, and let Argo CD sync), then import the upgraded Application. Supported: {}",
            limits::quoted(text),
            supported.join(", ")
        ));
    }
    cilium_cmp_render::versions::parse(text).map_err(|e| e.to_string())?;
    Ok(bare.to_string())
}

/// The oldest supported release, when `version` (X.Y.Z) is older than it.
fn older_than_supported<'a>(version: &str, supported: &[&'a str]) -> Option<&'a str> {
    let key = |v: &str| -> Option<(u64, u64, u64)> {
        let mut parts = v.split(['.', '-']).map(|p| p.parse::<u64>().ok());
        Some((parts.next()??, parts.next()??, parts.next()??))
    };
    let oldest = *supported.first()?;
    (key(version)? < key(oldest)?).then_some(oldest)
}

enum Missing {
    /// The file does not exist (ignoreMissingValueFiles may skip it).
    File(String),
    Other(String),
}

/// A `$ref/path` file of a `ref` source, read from the checkout the user named for that ref.
fn read_ref_file(
    req: &ImportRequest,
    refs: &[String],
    entry: &str,
    field: &str,
) -> Result<(String, String), Missing> {
    let other = |m: String| Missing::Other(format!("{field} {}: {m}", limits::quoted(entry)));
    if entry.contains("://") {
        return Err(other(
            "a URL; download the file into the Git repository and list it there".into(),
        ));
    }
    let Some(rest) = entry.strip_prefix('$') else {
        return Err(other(
            "a path inside the chart package, which cilium-cmp does not read; move its values into a file of a `ref` source ($values/...) or into spec.source.helm.values, and import again".into(),
        ));
    };
    let (name, rel) = rest.split_once('/').unwrap_or((rest, ""));
    if !refs.iter().any(|r| r == name) {
        return Err(other(format!(
            "no source has `ref: {name}` (refs: {})",
            if refs.is_empty() {
                "none".into()
            } else {
                refs.join(", ")
            }
        )));
    }
    if rel.contains(['*', '?', '[']) {
        return Err(other("a glob; list the files one by one".into()));
    }
    let root = req
        .ref_roots
        .get(name)
        .or_else(|| req.ref_roots.get(""))
        .ok_or_else(|| {
            other(format!(
                "the file is in the repository of the `ref: {name}` source; pass a checkout of it: --values-root {name}=DIR (or --values-root DIR)"
            ))
        })?;
    let mut parts = Vec::new();
    for p in rel.split('/') {
        match p {
            "" | "." => {}
            ".." => {
                if parts.pop().is_none() {
                    return Err(other("the path leaves the repository".into()));
                }
            }
            p => parts.push(p),
        }
    }
    let path = parts.iter().fold(root.clone(), |acc, p| acc.join(p));
    let shown = format!("{}", path.display());
    if !path.exists() {
        return Err(Missing::File(format!(
            "{field} {}: {shown} does not exist",
            limits::quoted(entry)
        )));
    }
    // A link inside the checkout may not lead out of it, as Argo CD refuses too.
    let (Ok(real), Ok(real_root)) = (path.canonicalize(), root.canonicalize()) else {
        return Err(other(format!("{shown} cannot be opened")));
    };
    if !real.starts_with(&real_root) {
        return Err(other(format!(
            "{shown} is a symbolic link to outside the repository"
        )));
    }
    let text = limits::read_text(&path, &shown).map_err(|e| other(e.to_string()))?;
    Ok((shown, text))
}

fn string_list(helm: &Map<String, Value>, field: &str) -> Result<Vec<String>, String> {
    match helm.get(field) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(a)) => a
            .iter()
            .map(|v| {
                v.as_str()
                    .map(str::to_string)
                    .ok_or_else(|| format!("spec.source.helm.{field} must be a list of strings"))
            })
            .collect(),
        Some(_) => Err(format!("spec.source.helm.{field} must be a list")),
    }
}

fn object_list(helm: &Map<String, Value>, field: &str) -> Result<Vec<Value>, String> {
    match helm.get(field) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(a)) if a.iter().all(Value::is_object) => Ok(a.clone()),
        Some(_) => Err(format!(
            "spec.source.helm.{field} must be a list of mappings"
        )),
    }
}

/// Argo CD escapes the commas of a parameter's value, so the value stays one value, except in a
/// `{a,b}` list (`cleanSetParameters`); a comma already escaped stays as it is.
fn escape_commas(value: &str) -> String {
    if value.starts_with('{') && value.ends_with('}') {
        return value.to_string();
    }
    let mut out = String::with_capacity(value.len());
    let mut prev = '\0';
    for c in value.chars() {
        if c == ',' && prev != '\\' {
            out.push('\\');
        }
        out.push(c);
        prev = c;
    }
    out
}

fn is_default(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(m) => m.is_empty(),
        Value::Number(_) => false,
    }
}

/// The Application with the chart source replaced by the plugin source, and the sync options a
/// CNI rendered by the plugin wants; every other field the user wrote is kept.
fn plugin_application(
    app: &Value,
    sources: &[&Value],
    req: &ImportRequest,
    warnings: &mut Vec<String>,
) -> Value {
    let mut out = app.clone();
    let root = out.as_object_mut().expect("checked to be a mapping");
    root.remove("status");
    root.remove("operation");
    if let Some(Value::Object(md)) = root.get_mut("metadata") {
        for k in SERVER_METADATA {
            md.remove(*k);
        }
        if let Some(Value::Object(a)) = md.get_mut("annotations") {
            a.remove("kubectl.kubernetes.io/last-applied-configuration");
            if a.is_empty() {
                md.remove("annotations");
            }
        }
        if let Some(Value::Array(f)) = md.get("finalizers") {
            if f.iter().any(|x| {
                x.as_str()
                    .is_some_and(|s| s.starts_with("resources-finalizer.argocd.argoproj.io"))
            }) {
                warnings.push("metadata.finalizers keeps Argo CD's resources finalizer: deleting this Application deletes the CNI; consider removing it".into());
            }
        }
    }
    let spec = root
        .get_mut("spec")
        .and_then(Value::as_object_mut)
        .expect("checked to be a mapping");
    let mut source = json!({
        "repoURL": req.repo_url,
        "path": req.path,
        "plugin": {"name": PLUGIN_NAME},
    });
    if let Some(rev) = req
        .target_revision
        .as_deref()
        .filter(|r| !r.is_empty() && *r != "HEAD")
    {
        source["targetRevision"] = json!(rev);
    }
    // Sources that render something themselves stay; the chart and the sources that only lent
    // values files (`ref` without `path`) go, their values being in the folder now.
    let kept: Vec<Value> = sources
        .iter()
        .filter(|s| {
            s.get("chart").is_none() && !(s.get("ref").is_some() && s.get("path").is_none())
        })
        .map(|s| (*s).clone())
        .collect();
    spec.remove("source");
    spec.remove("sources");
    if kept.is_empty() {
        spec.insert("source".into(), source);
    } else {
        let mut all = vec![source];
        all.extend(kept);
        spec.insert("sources".into(), Value::Array(all));
    }
    if spec.get("revisionHistoryLimit").and_then(Value::as_f64) == Some(10.0) {
        spec.remove("revisionHistoryLimit");
    }

    let sync = spec.entry("syncPolicy").or_insert_with(|| json!({}));
    if !sync.is_object() {
        *sync = json!({});
    }
    let sync = sync.as_object_mut().expect("made a mapping");
    let automated = sync.entry("automated").or_insert_with(|| json!({}));
    if !automated.is_object() {
        *automated = json!({});
    }
    let automated = automated.as_object_mut().expect("made a mapping");
    automated.insert("prune".into(), json!(true));
    automated.insert("selfHeal".into(), json!(true));
    if automated.get("allowEmpty") == Some(&json!(false)) {
        automated.remove("allowEmpty");
    }
    if automated.get("enabled") == Some(&json!(true)) {
        automated.remove("enabled");
    }
    let mut options: Vec<Value> = match sync.get("syncOptions") {
        Some(Value::Array(a)) => a.clone(),
        _ => Vec::new(),
    };
    let synced_server_side = options.iter().any(|o| o == "ServerSideApply=true");
    for wanted in ["ServerSideApply=true", "PruneLast=true"] {
        let key = wanted.split('=').next().expect("has a key");
        options.retain(|o| o.as_str().is_none_or(|s| s.split('=').next() != Some(key)));
        options.push(json!(wanted));
    }
    sync.insert("syncOptions".into(), Value::Array(options));
    if !synced_server_side {
        migrate_client_side_fields(root, warnings);
    }
    let spec = root
        .get_mut("spec")
        .and_then(Value::as_object_mut)
        .expect("checked to be a mapping");

    // Cilium creates CiliumIdentity objects at run time: Argo CD is told to leave them be.
    let ignore: Vec<Value> = match spec.get("ignoreDifferences") {
        Some(Value::Array(a)) => a.clone(),
        _ => Vec::new(),
    };
    // The user's entries stay as written (once each); the plugin's is added unless one of
    // theirs already concerns CiliumIdentity, whose paths (jqPathExpressions, jsonPointers) are
    // theirs to choose.
    let mut unique: Vec<Value> = Vec::new();
    for d in ignore {
        if !unique.contains(&d) {
            unique.push(d);
        }
    }
    let mut ignore = unique;
    if !ignore
        .iter()
        .any(|d| d["group"] == "cilium.io" && d["kind"] == "CiliumIdentity")
    {
        ignore.push(json!({"group": "cilium.io", "kind": "CiliumIdentity"}));
    }
    spec.insert("ignoreDifferences".into(), Value::Array(ignore));
    drop_zero_values(spec);
    out
}

/// The Application's annotation naming the manager whose fields Argo CD's client-side-apply
/// migration moves to its server-side manager on the first server-side sync
/// (argoproj/argo-cd `docs/user-guide/sync-options.md`, "Client-Side Apply Migration").
pub const MIGRATION_ANNOTATION: &str = "argocd.argoproj.io/client-side-apply-migration-manager";

/// The Helm-source Application synced client-side: Argo CD's client-side syncs write as
/// `argocd-controller` with an Update (argoproj/gitops-engine `pkg/sync/sync_context.go`
/// `applyObject` passes the same manager to kubectl's apply for both kinds of sync), while the
/// migration's default manager is `kubectl-client-side-apply`
/// (`pkg/sync/common/types.go`), which owns nothing here. Naming `argocd-controller` makes the
/// first server-side sync take over those fields, so it removes the ones the render lacks
/// instead of leaving them behind. A user's own annotation is kept.
fn migrate_client_side_fields(root: &mut Map<String, Value>, warnings: &mut Vec<String>) {
    let md = root.entry("metadata").or_insert_with(|| json!({}));
    let Some(md) = md.as_object_mut() else {
        return;
    };
    let annotations = md.entry("annotations").or_insert_with(|| json!({}));
    if !annotations.is_object() {
        *annotations = json!({});
    }
    let annotations = annotations.as_object_mut().expect("made a mapping");
    if annotations.contains_key(MIGRATION_ANNOTATION) {
        return;
    }
    annotations.insert(
        MIGRATION_ANNOTATION.into(),
        json!(crate::adopt::ARGOCD_MANAGER),
    );
    warnings.push(format!(
        "metadata.annotations[{MIGRATION_ANNOTATION:?}] is set to {:?}: the old Application synced \
         client-side, so its fields belong to that manager's Update; the first server-side sync \
         takes them over and removes every field the render lacks (values the old release set \
         and the folder drops). Without it those fields stay in the cluster, unseen by Argo CD's \
         diff. Check the owners first: adopt-check on a dump made with kubectl get \
         --show-managed-fields lists them (a release installed by the helm command instead: name \
         `helm`)",
        crate::adopt::ARGOCD_MANAGER
    ));
}

/// Argo CD drops zero values (false, "", 0, empty lists and maps) when it stores an Application,
/// so an App-of-Apps parent holding one would show it OutOfSync forever: none is written.
fn drop_zero_values(map: &mut Map<String, Value>) {
    map.retain(|_, v| {
        match v {
            Value::Object(m) => drop_zero_values(m),
            Value::Array(a) => a.iter_mut().for_each(|x| {
                if let Value::Object(m) = x {
                    drop_zero_values(m)
                }
            }),
            _ => {}
        }
        !(is_default(v) || v.as_f64() == Some(0.0))
    });
}

/// Parses `--values-root` arguments: `NAME=DIR` for the `ref: NAME` source, or `DIR` for all.
pub fn ref_roots(args: &[String]) -> Result<BTreeMap<String, PathBuf>, String> {
    let mut out = BTreeMap::new();
    for a in args {
        let (name, dir) = match a.split_once('=') {
            Some((n, d)) if !n.is_empty() && !n.contains('/') => (n.to_string(), d),
            _ => (String::new(), a.as_str()),
        };
        if !Path::new(dir).is_dir() {
            return Err(format!("--values-root {}: not a folder", limits::quoted(a)));
        }
        out.insert(name, PathBuf::from(dir));
    }
    Ok(out)
}
