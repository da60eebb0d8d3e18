//! The library's entry point: inputs in, canonical manifest stream out.

use crate::chart::ChartFiles;
use crate::engine::helm::RenderValues;
use crate::engine::{self, ChartTemplates, RenderOptions};
use crate::error::{RenderError, TooLarge, Violation, Violations};
use crate::kube_version::{ApiVersions, KubeVersion};
use crate::output::{Keep, Stream};
use crate::setexpr::SetArgs;
use crate::values::{Layer, Values};
use crate::versions;
use cilium_cmp_yaml::limits;

/// Everything a render depends on; nothing else (no clock, environment or file system) is read.
#[derive(Debug, Clone)]
pub struct Inputs {
    /// The release, checked where it was named (`versions::Release`'s `FromStr`).
    pub cilium: versions::Release,
    /// Values files in order, already read: (name for errors, text).
    pub values_files: Vec<(String, String)>,
    /// `--set` expressions in order.
    pub set: Vec<String>,
    /// `--set-json`, `--set-string` and `--set-file` arguments, and the files the latter name
    /// (read by the front end). Helm's order applies: `--set-json`, `--set`, `--set-string`,
    /// `--set-file`.
    pub set_args: SetArgs,
    /// The release namespace (`--namespace`, Helm's `.Release.Namespace`).
    pub namespace: String,
    /// The Kubernetes version the templates see (`--kube-version`, `.Capabilities.KubeVersion`).
    pub kube_version: KubeVersion,
    /// API versions the cluster is taken to serve beyond the built-in ones (`--api-versions`).
    pub api_versions: ApiVersions,
    /// The chart's files, read from its archive; none makes the render refuse.
    pub chart: Option<ChartFiles>,
    /// Values the chart does not know become warnings (stderr, one line each) instead of
    /// refusing the render: for values files written for older charts, while they are migrated.
    pub allow_unknown_keys: bool,
    /// Whether renders the cluster would refuse later are refused (`admission.rs`): always, but
    /// for the parity tests, which compare such a render with Helm's all the same through
    /// `testing::render_as_helm` (the `test-support` feature only). Not public, so no front end
    /// can turn it off.
    refuse_what_the_cluster_would: bool,
}

/// The Kubernetes version assumed when none is given (the newest the reference was made for).
pub const DEFAULT_KUBE_VERSION: &str = "1.35.0";
/// The release namespace assumed when none is given, as Cilium is usually installed.
pub const DEFAULT_NAMESPACE: &str = "kube-system";

impl Inputs {
    /// The inputs of a render of `cilium` with the chart's defaults, for the default cluster.
    pub fn new(cilium: versions::Release) -> Inputs {
        Inputs {
            cilium,
            values_files: Vec::new(),
            set: Vec::new(),
            set_args: SetArgs::default(),
            namespace: DEFAULT_NAMESPACE.to_string(),
            kube_version: KubeVersion::default(),
            api_versions: ApiVersions::default(),
            chart: None,
            allow_unknown_keys: false,
            refuse_what_the_cluster_would: true,
        }
    }
}

/// Renders the manifests for the inputs: the canonical stream with its content hash stamped.
pub fn render(inputs: &Inputs) -> Result<String, RenderError> {
    render_stream(inputs, Keep::Text).map(|s| s.text)
}

/// `render` with the stream's content hash, and what `keep` asks besides: each object's digest
/// (what a lock records) or the objects (what `diff` compares), taken while the stream is written
/// instead of by reading it back.
pub fn render_stream(inputs: &Inputs, keep: Keep) -> Result<Stream, RenderError> {
    render_with(inputs, None, keep)
}

/// A coalescing of the user's values (the second argument) over the chart's (the first).
pub type Coalescing<'a> = dyn Fn(&serde_json::Value, &serde_json::Value) -> serde_json::Value + 'a;

/// `render` with another coalescing of the user's values over the chart's (`coalesce` is
/// Helm 4's, what every front end renders with); `adopt::helm3` renders as Helm 3 coalesces.
pub fn render_coalesced(
    inputs: &Inputs,
    coalescing: &Coalescing<'_>,
) -> Result<String, RenderError> {
    render_with(inputs, Some(coalescing), Keep::Text).map(|s| s.text)
}

fn render_with(
    inputs: &Inputs,
    coalescing: Option<&Coalescing<'_>>,
    keep: Keep,
) -> Result<Stream, RenderError> {
    check_bounds(inputs)?;
    let cilium = release_of(inputs)?;
    let values = resolve_values(inputs, cilium)?;
    // First of the refusals about values, so that one run lists everything to clean up.
    let unknown = crate::known_keys::check(&values, cilium);
    if !unknown.is_empty() && !inputs.allow_unknown_keys {
        return Err(RenderError::UnknownValues {
            version: cilium.to_string(),
            report: unknown,
            files: inputs
                .values_files
                .iter()
                .map(|(name, _)| name.clone())
                .collect(),
        });
    }
    let result = render_known(inputs, cilium, values, coalescing, keep);
    // A render stopped for want of the chart archive is run again with it (`render` without
    // `--chart-archive` finds the stored one): its warnings are printed by that second run only.
    if !matches!(result, Err(RenderError::NoChartArchive { .. })) {
        for line in unknown.lines() {
            // The lines name the user's files; tracing escapes ESC but not line breaks or a
            // workflow command.
            tracing::warn!("{}", cilium_cmp_yaml::escape::message(&line));
        }
    }
    result
}

/// `render` once the values' keys are known (or allowed): the checks, the components, the stream.
fn render_known(
    inputs: &Inputs,
    cilium: versions::CiliumVersion,
    mut values: Values,
    coalescing: Option<&Coalescing<'_>>,
    keep: Keep,
) -> Result<Stream, RenderError> {
    let violations =
        crate::schema::check_lazy(&values, values.user(), versions::schema_lazy(cilium));
    if !violations.is_empty() {
        return Err(RenderError::Schema(Violations(
            violations
                .iter()
                .map(|v| Violation::of_written(&values, &v.path, v.message.clone()))
                .collect(),
        )));
    }
    crate::determinism::apply_defaults(&mut values)?;
    let kube_version = inputs.kube_version.helm_form().to_string();
    let Some(chart) = &inputs.chart else {
        return Err(RenderError::NoChartArchive {
            version: cilium.to_string(),
        });
    };
    chart.check_version(&cilium.to_string())?;
    let api_versions = inputs.api_versions.as_slice().to_vec();
    let templates = ChartTemplates::parse_cached(chart).map_err(RenderError::from_engine)?;
    check_kube_version(&templates, &kube_version, inputs, cilium)?;
    let options = RenderOptions {
        release_name: RELEASE_NAME.to_string(),
        namespace: inputs.namespace.clone(),
        kube_version,
        api_versions,
    };
    // Helm 4's coalescing builds the engine's values directly; another one builds JSON first.
    let coalesced;
    let start = match coalescing {
        None => RenderValues::User(values.overlay()),
        Some(coalescing) => {
            coalesced = coalescing(&templates.default_values, values.overlay());
            RenderValues::Coalesced(&coalesced)
        }
    };
    let manifests = templates
        .render_values(start, &options)
        .map_err(|e| crate::determinism::explain(e, &values))?;
    let objects = templates.objects(&manifests).map_err(|e| match e {
        engine::helm::EngineError::Chart { path, message } => RenderError::NotYaml {
            template: path,
            message,
        },
        other => RenderError::from_engine(other),
    })?;
    if inputs.refuse_what_the_cluster_would {
        crate::admission::check(&objects, &values, cilium)?;
    }
    // An empty stream would make Argo CD prune the whole CNI: never return one.
    if objects.is_empty() {
        return Err(RenderError::Empty);
    }
    Ok(crate::output::finish(objects, keep)?)
}

/// Helm's check of the chart's `kubeVersion` (Chart.yaml) against the target cluster
/// (`pkg/action/install.go`: `chartutil.IsCompatibleRange`, a Masterminds semver constraint),
/// which refuses `helm template` for a cluster the chart excludes.
fn check_kube_version(
    templates: &ChartTemplates,
    kube_version: &str,
    inputs: &Inputs,
    cilium: versions::CiliumVersion,
) -> Result<(), RenderError> {
    let constraint = templates.kube_version_constraint();
    if constraint.is_empty() {
        return Ok(());
    }
    match engine::semver::satisfies(constraint, kube_version) {
        Ok(true) => Ok(()),
        // A constraint the chart itself gets wrong refuses every cluster under Helm as well.
        Ok(false) | Err(_) => Err(RenderError::KubeTooOld {
            given: inputs.kube_version.as_given().to_string(),
            cilium: cilium.to_string(),
            constraint: constraint.to_string(),
        }),
    }
}

/// The Helm release name the chart is rendered under: Cilium's documented install name, which
/// `helm template` is given in the reference renders (the chart's objects do not depend on it).
pub const RELEASE_NAME: &str = "cilium";

/// The values a render of release `cilium` reads: the inputs' values files and `--set`-like
/// flags, merged over the release's defaults with Helm's rules, nothing checked yet. The fleet
/// checks and `diff` read the same values without rendering.
pub fn resolve_values(
    inputs: &Inputs,
    cilium: versions::CiliumVersion,
) -> Result<Values, RenderError> {
    check_bounds(inputs)?;
    let mut layers = Vec::with_capacity(inputs.values_files.len() + 1);
    for (name, text) in &inputs.values_files {
        layers.push(Layer::from_yaml(name, text)?);
    }
    if !inputs.set.is_empty() || !inputs.set_args.is_empty() {
        let mut args = inputs.set_args.clone();
        args.typed.splice(0..0, inputs.set.iter().cloned());
        let set = Layer::from_set_args_over(&args, &layers)?;
        layers.push(set);
    }
    let values = match versions::defaults_indexed(cilium) {
        Some((tree, index)) => Values::resolve_indexed(tree, index, layers),
        None => Values::resolve(versions::defaults(cilium), layers),
    };
    Ok(values)
}

/// The release to render: one whose facts are at hand, or one read from the archive the
/// caller gave (`chart::unlisted`); without an archive, the latter is refused as a release this
/// binary does not list, with the releases it does.
pub fn release_of(inputs: &Inputs) -> Result<versions::CiliumVersion, RenderError> {
    match (&inputs.cilium, &inputs.chart) {
        (versions::Release::Known(v), _) => Ok(*v),
        (versions::Release::FromArchive(name), Some(chart)) => {
            Ok(crate::chart::unlisted::open(chart, &name.to_string())?)
        }
        (versions::Release::FromArchive(name), None) => Err(versions::UnknownVersion {
            requested: name.to_string(),
        }
        .into()),
    }
}

/// What only the tests may do (the `test-support` feature, which the crate's own dev-dependency
/// on itself turns on): nothing here is part of the public API.
#[cfg(feature = "test-support")]
pub mod testing {
    use super::*;

    /// `render` without the refusals of what the cluster would refuse later (`admission.rs`):
    /// how the parity suite compares such a render with Helm's all the same.
    pub fn render_as_helm(inputs: &Inputs) -> Result<String, RenderError> {
        let mut inputs = inputs.clone();
        inputs.refuse_what_the_cluster_would = false;
        render(&inputs)
    }
}

/// The bounds of `limits` that hold for every front end: how many values files, and how many
/// bytes of values and `--set` text, one render takes.
fn check_bounds(inputs: &Inputs) -> Result<(), RenderError> {
    let files = inputs.values_files.len();
    if files > limits::MAX_VALUES_FILES {
        return Err(TooLarge::ValuesFiles {
            given: files,
            limit: limits::MAX_VALUES_FILES,
        }
        .into());
    }
    let bytes: usize = inputs
        .values_files
        .iter()
        .map(|(_, t)| t.len())
        .sum::<usize>()
        + inputs.set.iter().map(String::len).sum::<usize>()
        + inputs.set_args.byte_len();
    if bytes > limits::MAX_TOTAL_BYTES {
        return Err(TooLarge::ValuesBytes {
            given: bytes,
            limit: limits::MAX_TOTAL_BYTES,
        }
        .into());
    }
    Ok(())
}
