//! Helm 4's render of a chart (`pkg/engine/engine.go` `render`, `allTemplates`;
//! `pkg/chart/common/util/values.go` `ToRenderValues`; `coalesce.go`), as `helm template`
//! runs it: every file of `templates/` parsed in Helm's order (deeper paths first, later
//! definitions of a name win), each non-partial executed with the render values, `<no value>`
//! removed, NOTES.txt left out, documents split as `releaseutil.SplitManifests` splits them.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use serde_json::{Map as JMap, Value as Json};

use super::exec::{Ctx, Templates};
use super::parse::{is_empty_tree, parse_file};
use super::value::{Map, Obj, Value};
use super::{funcs, ErrorKind, TemplateError};
use crate::chart::archive::ChartFiles;
use crate::chart::shared::SharedBytes;

/// The parsed templates of one chart archive, with what a render needs besides values;
/// parse once, render many times (and from many threads).
pub struct ChartTemplates {
    /// The chart's name (`cilium`): template names are `NAME/templates/...`.
    pub name: String,
    pub(super) templates: Templates,
    /// Template file names in Helm's order (engine.go `sortTemplates`).
    pub(super) order: Vec<String>,
    files: Arc<BTreeMap<String, SharedBytes>>,
    /// `.Chart`: Chart.yaml under Go's field names (`MetadataAsMap`).
    pub(super) chart: Json,
    /// The chart's `values.yaml`, read as Helm reads it.
    pub default_values: Json,
    /// The documents its renders printed, read back (kept for the texts seen more than once).
    read_back: super::read_back::ReadBack,
}

type ParseCache = std::sync::Mutex<HashMap<(String, String), Arc<ChartTemplates>>>;
/// The parsed templates of each archive a process has read, by path and chart version.
static PARSED: std::sync::OnceLock<ParseCache> = std::sync::OnceLock::new();

fn parse_cache_key(chart: &ChartFiles) -> (String, String) {
    (
        chart.path().to_string(),
        chart.version().unwrap_or_default(),
    )
}

/// What `helm template` is told besides values.
#[derive(Debug, Clone)]
pub struct RenderOptions {
    /// The release's name (`.Release.Name`).
    pub release_name: String,
    /// The release's namespace (`.Release.Namespace`).
    pub namespace: String,
    /// As `--kube-version` takes it (`1.35.0` or `v1.35.0`).
    pub kube_version: String,
    /// `--api-versions`, added to Helm's default set.
    pub api_versions: Vec<String>,
}

/// One document of the output: the template it came from and its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Manifest {
    /// The template file it was rendered from, as Helm names it (`cilium/templates/...`): the
    /// `# Source:` line of `helm template`.
    pub source: String,
    /// The document, trimmed, without its `---` separator.
    pub text: String,
}

/// What a caller learns when a chart cannot be read or rendered.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The chart cannot be used (its `Chart.yaml` or `values.yaml` is unreadable, a template
    /// file is missing), a rendered document is not YAML, or the render thread failed.
    #[error("the chart archive {path}: {message}")]
    Chart {
        /// The chart archive as opened, or for a rendered document its template's name.
        path: String,
        /// What went wrong.
        message: String,
    },
    /// A template did not parse or its evaluation stopped (see [`ErrorKind`]).
    #[error("{0}")]
    Template(TemplateError),
}

/// The group versions Helm's `DefaultVersionSet` holds (client-go's scheme,
/// `pkg/chart/common/capabilities.go` `allKnownVersions`), which `--api-versions` extends.
const DEFAULT_API_VERSIONS: &[&str] = &[
    "v1",
    "admissionregistration.k8s.io/v1",
    "admissionregistration.k8s.io/v1alpha1",
    "admissionregistration.k8s.io/v1beta1",
    "apiextensions.k8s.io/v1",
    "apiextensions.k8s.io/v1beta1",
    "apps/v1",
    "apps/v1beta1",
    "apps/v1beta2",
    "authentication.k8s.io/v1",
    "authentication.k8s.io/v1alpha1",
    "authentication.k8s.io/v1beta1",
    "authorization.k8s.io/v1",
    "authorization.k8s.io/v1beta1",
    "autoscaling/v1",
    "autoscaling/v2",
    "autoscaling/v2beta1",
    "autoscaling/v2beta2",
    "batch/v1",
    "batch/v1beta1",
    "certificates.k8s.io/v1",
    "certificates.k8s.io/v1alpha1",
    "certificates.k8s.io/v1beta1",
    "coordination.k8s.io/v1",
    "coordination.k8s.io/v1alpha2",
    "coordination.k8s.io/v1beta1",
    "discovery.k8s.io/v1",
    "discovery.k8s.io/v1beta1",
    "events.k8s.io/v1",
    "events.k8s.io/v1beta1",
    "extensions/v1beta1",
    "flowcontrol.apiserver.k8s.io/v1",
    "flowcontrol.apiserver.k8s.io/v1beta1",
    "flowcontrol.apiserver.k8s.io/v1beta2",
    "flowcontrol.apiserver.k8s.io/v1beta3",
    "internal.apiserver.k8s.io/v1alpha1",
    "networking.k8s.io/v1",
    "networking.k8s.io/v1alpha1",
    "networking.k8s.io/v1beta1",
    "node.k8s.io/v1",
    "node.k8s.io/v1alpha1",
    "node.k8s.io/v1beta1",
    "policy/v1",
    "policy/v1beta1",
    "rbac.authorization.k8s.io/v1",
    "rbac.authorization.k8s.io/v1alpha1",
    "rbac.authorization.k8s.io/v1beta1",
    "resource.k8s.io/v1",
    "resource.k8s.io/v1alpha3",
    "resource.k8s.io/v1beta1",
    "resource.k8s.io/v1beta2",
    "scheduling.k8s.io/v1",
    "scheduling.k8s.io/v1alpha1",
    "scheduling.k8s.io/v1beta1",
    "storage.k8s.io/v1",
    "storage.k8s.io/v1alpha1",
    "storage.k8s.io/v1beta1",
    "storagemigration.k8s.io/v1alpha1",
];

/// Helm's template order (engine.go `sortTemplates`): more path separators first; among
/// equals, reverse lexical order.
fn helm_order(names: &mut [String]) {
    names.sort_by(|a, b| {
        let (ca, cb) = (a.matches('/').count(), b.matches('/').count());
        cb.cmp(&ca).then_with(|| b.cmp(a))
    });
}

/// `.Chart`: Chart.yaml's fields under the Go names of `chart.Metadata` (zero values for those
/// it lacks), and `IsRoot`.
fn chart_metadata(meta: &Json) -> Json {
    let get = |k: &str| meta.get(k).cloned();
    let string = |k: &str| {
        get(k)
            .filter(|v| !v.is_null())
            .unwrap_or_else(|| Json::String(String::new()))
    };
    let list = |k: &str| get(k).filter(|v| v.is_array()).unwrap_or(Json::Null);
    let mut m = JMap::new();
    for (go, yaml) in [
        ("Name", "name"),
        ("Home", "home"),
        ("Version", "version"),
        ("Description", "description"),
        ("Icon", "icon"),
        ("APIVersion", "apiVersion"),
        ("Condition", "condition"),
        ("Tags", "tags"),
        ("AppVersion", "appVersion"),
        ("KubeVersion", "kubeVersion"),
        ("Type", "type"),
    ] {
        m.insert(go.into(), string(yaml));
    }
    m.insert("Sources".into(), list("sources"));
    m.insert("Keywords".into(), list("keywords"));
    let maintainers = match get("maintainers") {
        Some(Json::Array(a)) => Json::Array(
            a.iter()
                .map(|x| {
                    let f = |k: &str| {
                        x.get(k)
                            .cloned()
                            .unwrap_or_else(|| Json::String(String::new()))
                    };
                    serde_json::json!({"Name": f("name"), "Email": f("email"), "URL": f("url")})
                })
                .collect(),
        ),
        _ => Json::Null,
    };
    m.insert("Maintainers".into(), maintainers);
    m.insert(
        "Deprecated".into(),
        Json::Bool(get("deprecated").and_then(|v| v.as_bool()).unwrap_or(false)),
    );
    m.insert(
        "Annotations".into(),
        get("annotations")
            .filter(|v| v.is_object())
            .unwrap_or(Json::Null),
    );
    m.insert("Dependencies".into(), Json::Null);
    m.insert("IsRoot".into(), Json::Bool(true));
    Json::Object(m)
}

/// Helm 4's coalescing of the user's values over the chart's: the project's one copy.
pub use crate::merge::coalesce;

/// The `v`-prefixed version as given, the normalised one (`v` and the numeric components, as
/// k8s `Version.String` prints a generic version), and its major and minor (`ParseKubeVersion`,
/// k8s `ParseGeneric`).
fn kube_version(text: &str) -> Result<(String, String, String, String), String> {
    let t = text.strip_prefix('v').unwrap_or(text);
    let core = t.split(['-', '+']).next().unwrap_or("");
    let parts: Vec<&str> = core.split('.').collect();
    let ok = parts.len() >= 2
        && parts.len() <= 3
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
    if !ok {
        return Err(format!(
            "the Kubernetes version {text:?} is not a version like 1.35.0"
        ));
    }
    let num = |p: &str| {
        p.parse::<u64>()
            .map(|n| n.to_string())
            .map_err(|_| format!("the Kubernetes version {text:?} is out of range"))
    };
    // ParseGeneric reads each component as a number: `v1.035` normalises to `v1.35`.
    let normalized: Vec<String> = parts.iter().map(|p| num(p)).collect::<Result<_, _>>()?;
    Ok((
        format!("v{t}"),
        format!("v{}", normalized.join(".")),
        num(parts[0])?,
        num(parts[1])?,
    ))
}

impl ChartTemplates {
    /// Parses every template of the archive once.
    pub fn parse(chart: &ChartFiles) -> Result<ChartTemplates, EngineError> {
        let path = chart.path().to_string();
        let chart_err = |message: String| EngineError::Chart {
            path: path.clone(),
            message,
        };
        let meta_text = chart
            .text("Chart.yaml")
            .map_err(|e| chart_err(e.to_string()))?;
        let meta = cilium_cmp_yaml::yaml::read::parse_value(&meta_text)
            .map_err(|e| chart_err(e.in_file("Chart.yaml")))?;
        let name = meta
            .get("name")
            .and_then(|v| v.as_str())
            .unwrap_or("")
            .to_string();
        if name.is_empty() || name.contains('/') {
            return Err(chart_err("Chart.yaml has no valid name".into()));
        }
        let default_values = match chart.bytes("values.yaml") {
            Some(_) => {
                let text = chart
                    .text("values.yaml")
                    .map_err(|e| chart_err(e.to_string()))?;
                cilium_cmp_yaml::yaml::read::parse_value(&text)
                    .map_err(|e| chart_err(e.in_file("values.yaml")))?
            }
            None => Json::Object(JMap::new()),
        };
        let mut files = BTreeMap::new();
        let mut names = Vec::new();
        for f in chart.list("") {
            if let Some(rest) = f.strip_prefix("templates/") {
                if !rest.is_empty() {
                    names.push(f.to_string());
                }
                continue;
            }
            if !ChartTemplates::is_bundled_file(f) {
                continue;
            }
            if let Some(b) = chart.files().get(f) {
                files.insert(f.to_string(), b.clone());
            }
        }
        let mut order: Vec<String> = names.iter().map(|n| format!("{name}/{n}")).collect();
        helm_order(&mut order);
        let mut templates: Templates = HashMap::new();
        for full in &order {
            let inner = &full[name.len() + 1..];
            let text = chart.text(inner).map_err(|e| chart_err(e.to_string()))?;
            let trees =
                parse_file(full, &text, &funcs::is_function).map_err(EngineError::Template)?;
            for t in trees {
                // text/template `associate`: an empty redefinition keeps the earlier one.
                if is_empty_tree(&t) && templates.contains_key(&t.name) {
                    continue;
                }
                templates.insert(t.name.clone(), Arc::new(t));
            }
        }
        Ok(ChartTemplates {
            name,
            templates,
            order,
            files: Arc::new(files),
            chart: chart_metadata(&meta),
            default_values,
            read_back: Default::default(),
        })
    }

    /// Whether `.Files` holds the archive's file `f`: Helm keeps there every file but the
    /// templates, the chart's own metadata, values and schema, and subcharts
    /// (`pkg/chart/loader` `LoadFiles`).
    pub(crate) fn is_bundled_file(f: &str) -> bool {
        !(f.starts_with("templates/")
            || f.starts_with("charts/")
            || matches!(
                f,
                "Chart.yaml"
                    | "values.yaml"
                    | "values.schema.json"
                    | "Chart.lock"
                    | "requirements.yaml"
                    | "requirements.lock"
            ))
    }

    /// What `compiled::decode` read back.
    pub(super) fn from_parts(
        name: String,
        templates: Templates,
        order: Vec<String>,
        files: BTreeMap<String, SharedBytes>,
        chart: Json,
        default_values: Json,
    ) -> ChartTemplates {
        ChartTemplates {
            name,
            templates,
            order,
            files: Arc::new(files),
            chart,
            default_values,
            read_back: Default::default(),
        }
    }

    /// `parse`, once per archive path and process (as `ChartFiles::open_cached` reads each
    /// archive once): commands that render many folders reuse one parse.
    pub fn parse_cached(chart: &ChartFiles) -> Result<Arc<ChartTemplates>, EngineError> {
        let key = parse_cache_key(chart);
        let cache = PARSED.get_or_init(Default::default);
        if let Some(t) = cache.lock().ok().and_then(|m| m.get(&key).cloned()) {
            return Ok(t);
        }
        let parsed = match chart
            .parsed()
            .and_then(|s| super::compiled::decode(s, chart))
        {
            Some(compiled) => Arc::new(compiled),
            None => {
                let parsed = ChartTemplates::parse(chart)?;
                if let Some(digest) = chart.digest() {
                    crate::chart::compiled::store(
                        digest,
                        chart.files(),
                        &super::compiled::encode(&parsed),
                    );
                }
                Arc::new(parsed)
            }
        };
        if let Ok(mut m) = cache.lock() {
            m.insert(key, parsed.clone());
        }
        Ok(parsed)
    }

    /// Chart.yaml's `kubeVersion` constraint (empty when it has none).
    pub fn kube_version_constraint(&self) -> &str {
        self.chart["KubeVersion"].as_str().unwrap_or("")
    }

    /// `objects` of manifests this chart rendered: a document the process has read twice before
    /// is copied rather than read again (`read_back`).
    pub fn objects(&self, manifests: &[Manifest]) -> Result<Vec<Json>, EngineError> {
        self.read_back.objects(manifests)
    }

    /// The template files in Helm's order.
    pub fn template_names(&self) -> &[String] {
        &self.order
    }

    /// Renders with `values` already coalesced (see `coalesce`): the manifests in `helm
    /// template`'s order. Runs on a thread of its own with a stack deep enough for the nesting
    /// bounds.
    pub fn render(
        &self,
        values: &Json,
        opts: &RenderOptions,
    ) -> Result<Vec<Manifest>, EngineError> {
        self.render_values(RenderValues::Coalesced(values), opts)
    }

    /// `render`, from either kind of values: the user's alone are coalesced as Helm 4 does
    /// straight into the engine's values, which skips building the coalesced JSON. Runs in
    /// place on a thread with the stack it needs (`stack`), else on a new one.
    pub fn render_values(
        &self,
        values: RenderValues<'_>,
        opts: &RenderOptions,
    ) -> Result<Vec<Manifest>, EngineError> {
        super::stack::on_deep_stack(|| self.render_here_from(values, opts)).unwrap_or_else(|e| {
            Err(EngineError::Chart {
                path: self.name.clone(),
                message: e.to_string(),
            })
        })
    }

    /// `render` on the calling thread (whose stack must be deep enough: see `RENDER_STACK_BYTES`).
    pub fn render_here(
        &self,
        values: &Json,
        opts: &RenderOptions,
    ) -> Result<Vec<Manifest>, EngineError> {
        self.render_here_from(RenderValues::Coalesced(values), opts)
    }

    fn render_here_from(
        &self,
        values: RenderValues<'_>,
        opts: &RenderOptions,
    ) -> Result<Vec<Manifest>, EngineError> {
        let rendered = self.render_files_from(values, opts)?;
        Ok(split_manifests(&rendered))
    }

    /// Each non-partial template's output, `<no value>` removed, in Helm's order.
    pub fn render_files(
        &self,
        values: &Json,
        opts: &RenderOptions,
    ) -> Result<Vec<(String, String)>, EngineError> {
        self.render_files_from(RenderValues::Coalesced(values), opts)
    }

    fn render_files_from(
        &self,
        values: RenderValues<'_>,
        opts: &RenderOptions,
    ) -> Result<Vec<(String, String)>, EngineError> {
        let top = self.top_values(values, opts)?;
        let Value::Map(top_map) = &top else {
            unreachable!("top_values builds a map")
        };
        let mut ctx = Ctx::new(&self.templates);
        if let Some(Value::Map(v)) = top_map.borrow().get("Values") {
            ctx.values_root = Some(v.clone());
        }
        let base_path = format!("{}/templates", self.name);
        let mut out = Vec::new();
        for name in &self.order {
            let file = name.rsplit('/').next().unwrap_or(name);
            if file.starts_with('_') {
                continue;
            }
            let mut t = Map::new();
            t.insert("Name".into(), Value::str(name));
            t.insert("BasePath".into(), Value::str(&base_path));
            top_map
                .borrow_mut()
                .insert("Template".into(), Value::map(t));
            let mut buf = String::new();
            ctx.execute(name, &top, &mut buf)
                .map_err(EngineError::Template)?;
            out.push((name.clone(), buf.replace("<no value>", "")));
        }
        Ok(out)
    }

    fn top_values(
        &self,
        values: RenderValues<'_>,
        opts: &RenderOptions,
    ) -> Result<Value, EngineError> {
        let (git, normalized, major, minor) = kube_version(&opts.kube_version).map_err(|m| {
            EngineError::Template(TemplateError {
                kind: ErrorKind::Exec,
                file: "--kube-version".into(),
                line: 0,
                column: 0,
                message: m,
            })
        })?;
        let kv = Obj::KubeVersion {
            version: git,
            normalized,
            major,
            minor,
        };
        let mut apis: Vec<String> = DEFAULT_API_VERSIONS.iter().map(|s| s.to_string()).collect();
        apis.extend(opts.api_versions.iter().cloned());
        let mut hv = Map::new();
        hv.insert("Version".into(), Value::str("v4.2.3"));
        let mut caps = Map::new();
        caps.insert("KubeVersion".into(), Value::Obj(std::rc::Rc::new(kv)));
        caps.insert(
            "APIVersions".into(),
            Value::Obj(std::rc::Rc::new(Obj::ApiVersions(apis))),
        );
        caps.insert("HelmVersion".into(), Value::map(hv));
        let mut rel = Map::new();
        rel.insert("Name".into(), Value::str(&opts.release_name));
        rel.insert("Namespace".into(), Value::str(&opts.namespace));
        rel.insert("IsUpgrade".into(), Value::Bool(false));
        rel.insert("IsInstall".into(), Value::Bool(true));
        rel.insert("Revision".into(), Value::Int(1));
        rel.insert("Service".into(), Value::str("Helm"));
        let mut top = Map::new();
        top.insert("Chart".into(), Value::from_json_with(&self.chart, false));
        top.insert("Capabilities".into(), Value::map(caps));
        top.insert("Release".into(), Value::map(rel));
        let values = match values {
            RenderValues::Coalesced(v) => Value::from_values_json(v),
            RenderValues::User(u) => crate::merge::coalesce_as(&self.default_values, u),
        };
        top.insert("Values".into(), values);
        top.insert(
            "Files".into(),
            Value::Obj(std::rc::Rc::new(Obj::Files(self.files.clone()))),
        );
        top.insert("Subcharts".into(), Value::map(Map::new()));
        Ok(Value::map(top))
    }
}

/// The values a render starts from.
#[derive(Clone, Copy)]
pub enum RenderValues<'a> {
    /// Already coalesced over the chart's defaults (Helm 3's way, for adopt-check; tests).
    Coalesced(&'a Json),
    /// The user's alone, coalesced as Helm 4 does while the template values are built.
    User(&'a Json),
}

pub use super::stack::RENDER_STACK_BYTES;

/// Kinds in Helm's install order (`pkg/release/v1/util/kind_sorter.go` `InstallOrder`): one
/// table, the output's.
use crate::output::KIND_ORDER as INSTALL_ORDER;

/// `releaseutil.SplitManifests` per file (documents separated by `---` lines, trimmed, empty
/// ones dropped; NOTES.txt left out), then sorted by kind in install order, stably.
pub fn split_manifests(rendered: &[(String, String)]) -> Vec<Manifest> {
    let mut out = Vec::new();
    for (name, text) in rendered {
        if name.ends_with("NOTES.txt") {
            continue;
        }
        for doc in split_docs(text) {
            let doc = doc.trim();
            if !doc.is_empty() {
                out.push(Manifest {
                    source: name.clone(),
                    text: doc.to_string(),
                });
            }
        }
    }
    let rank = |m: &Manifest| {
        let kind = kind_of(&m.text);
        INSTALL_ORDER
            .iter()
            .position(|k| *k == kind)
            .unwrap_or(INSTALL_ORDER.len())
    };
    // Stable, and each document's kind is found once rather than at every comparison.
    out.sort_by_cached_key(rank);
    out
}

/// Splits on Helm's separator, the regexp `(?:^|\s*\n)---\s*`.
fn split_docs(text: &str) -> Vec<&str> {
    let b = text.as_bytes();
    let mut docs = Vec::new();
    let mut start = 0;
    // A separator is `---` at the start of the text or right after a line break that the
    // previous separator did not take (its trailing whitespace may have).
    let line_starts = std::iter::once(0).chain(memchr::memchr_iter(b'\n', b).map(|n| n + 1));
    for i in line_starts {
        if (i > 0 && i - 1 < start) || !b[i..].starts_with(b"---") {
            continue;
        }
        // The separator takes the whitespace before the line break and after the dashes.
        let mut s = if i == 0 { 0 } else { i - 1 };
        while s > start && b[s - 1].is_ascii_whitespace() {
            s -= 1;
        }
        let mut e = i + 3;
        while e < b.len() && b[e].is_ascii_whitespace() {
            e += 1;
        }
        docs.push(&text[start..s.max(start)]);
        start = e;
    }
    docs.push(&text[start..]);
    docs
}

fn kind_of(doc: &str) -> &str {
    for line in doc.lines() {
        if let Some(rest) = line.strip_prefix("kind:") {
            return rest.trim().trim_matches(['"', '\'']);
        }
    }
    ""
}

/// The stream `helm template` prints: `---`, a `# Source:` comment and the document, each.
pub fn to_stream(manifests: &[Manifest]) -> String {
    let mut s = String::new();
    for m in manifests {
        s.push_str("---\n# Source: ");
        s.push_str(&m.source);
        s.push('\n');
        s.push_str(&m.text);
        s.push('\n');
    }
    s
}

/// The manifests as JSON objects, read with the project's YAML 1.1 reader; empty documents
/// are skipped. `ChartTemplates::objects` reads a chart's renders with what it read before.
pub fn objects(manifests: &[Manifest]) -> Result<Vec<Json>, EngineError> {
    super::read_back::ReadBack::default().objects(manifests)
}

/// Renders one template text on its own, with `.Values` holding `values` (numbers as Helm's
/// values hold them, float64) and `.Release.Name` `release`: for callers that evaluate a
/// bundled file, and for tests of the engine's semantics. `<no value>` is removed as Helm
/// removes it. Runs on a thread with `RENDER_STACK_BYTES` of stack.
pub fn render_text(name: &str, text: &str, values: &Json) -> Result<String, TemplateError> {
    let run = || -> Result<String, TemplateError> {
        let trees = parse_file(name, text, &funcs::is_function)?;
        let mut templates: Templates = HashMap::new();
        for t in trees {
            if is_empty_tree(&t) && templates.contains_key(&t.name) {
                continue;
            }
            templates.insert(t.name.clone(), Arc::new(t));
        }
        let mut ctx = Ctx::new(&templates);
        let vals = Value::from_values_json(values);
        if let Value::Map(m) = &vals {
            ctx.values_root = Some(m.clone());
        }
        let mut rel = Map::new();
        rel.insert("Name".into(), Value::str("cilium"));
        let mut top = Map::new();
        top.insert("Values".into(), vals);
        top.insert("Release".into(), Value::map(rel));
        let mut out = String::new();
        ctx.execute(name, &Value::map(top), &mut out)?;
        Ok(out.replace("<no value>", ""))
    };
    super::stack::on_deep_stack(run).unwrap_or_else(|e| {
        Err(TemplateError {
            kind: match e {
                super::stack::StackError::Spawn(_) => ErrorKind::Limit,
                super::stack::StackError::Panicked => ErrorKind::Exec,
            },
            file: name.into(),
            line: 0,
            column: 0,
            message: e.to_string(),
        })
    })
}

#[cfg(test)]
mod tests {
    use super::split_docs;
    use proptest::prelude::*;

    proptest! {
        /// The split is Helm's: `regexp.Split` with `(?:^|\s*\n)---\s*` (releaseutil's
        /// `sep`), on texts made of the characters that matter to it.
        #[test]
        fn documents_split_where_helms_separator_matches(text in "[-\n \ta]{0,40}") {
            let sep = regex::Regex::new(r"(?:^|[\t\n\x0c\r ]*\n)---[\t\n\x0c\r ]*").unwrap();
            let helm: Vec<&str> = sep.split(&text).collect();
            prop_assert_eq!(split_docs(&text), helm);
        }
    }
}
