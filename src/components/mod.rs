//! One module per Cilium component, mirroring the chart's `templates/` folders. Each returns the
//! Kubernetes objects its templates would render, built as JSON trees.

use serde_json::Value;

use crate::chart::ChartFiles;
use crate::error::RenderError;
use crate::plan::Plan;
use crate::values::Values;

#[macro_use]
pub mod tree;

pub mod agent;
pub mod ca;
pub mod certgen;
pub mod clustermesh;
pub mod common;
pub mod config;
pub mod dns_proxy;
pub mod envoy;
pub mod extras;
pub mod gateway_policy;
pub mod hubble;
pub mod hubble_relay;
pub mod hubble_ui;
pub mod ingress;
pub mod nodeinit;
pub mod operator;
pub mod preflight;
pub mod spire;
pub mod ztunnel;

/// What every component reads: resolved values, the plan, and the chart archive if supplied.
/// One `Ctx` serves one render, so it also carries what several components need and is costly to
/// build.
pub struct Ctx<'a> {
    pub values: &'a Values,
    pub plan: &'a Plan,
    pub chart: Option<&'a ChartFiles>,
    /// `config::cilium_config_checksum`, computed on first use.
    pub(crate) config_checksum: std::cell::OnceCell<String>,
    /// The `cilium-config` ConfigMap built for that checksum, kept for the config component to
    /// take, so the largest ConfigMap is built once per render.
    pub(crate) config_map: std::cell::Cell<Option<Value>>,
    /// `namespace()`, which nearly every object's metadata reads.
    namespace: String,
}

impl<'a> Ctx<'a> {
    pub fn new(values: &'a Values, plan: &'a Plan, chart: Option<&'a ChartFiles>) -> Ctx<'a> {
        Ctx {
            values,
            plan,
            chart,
            config_checksum: std::cell::OnceCell::new(),
            config_map: std::cell::Cell::new(None),
            namespace: match crate::tmpl::quote(values.get("namespaceOverride")) {
                over if !over.is_empty() => over,
                _ => plan.release_namespace.clone(),
            },
        }
    }

    /// `.Values.path` (null when absent).
    pub fn v(&self, path: &str) -> &'a Value {
        self.values.get(path)
    }

    /// Go-template truth of `.Values.path`.
    pub fn on(&self, path: &str) -> bool {
        self.values.on(path)
    }

    /// The value at `path` as the chart prints it ("" for null).
    pub fn text(&self, path: &str) -> String {
        self.values.text(path)
    }

    /// The namespace of Cilium's objects: `namespaceOverride`, else the release namespace.
    pub fn namespace(&self) -> String {
        self.namespace.clone()
    }

    /// An error about one value, naming where the user set it.
    pub fn invalid(&self, path: &str, message: impl Into<String>) -> RenderError {
        RenderError::Value {
            path: path.to_string(),
            origin: self.values.describe_origin(path),
            message: message.into(),
        }
    }

    /// The chart reads `below` (a field or a path) under `path` with nothing to guard it, so
    /// anything there but a map (null or absent too) fails in Helm: refused the same way.
    pub fn map_read_below(&self, path: &str, below: &str) -> Result<(), RenderError> {
        if self.v(path).is_object() {
            return Ok(());
        }
        Err(self.invalid(
            path,
            format!(
                "must be a map: the chart reads {below} below it, and Helm fails on anything else"
            ),
        ))
    }

    /// A file bundled in the official chart, needed because `path` is on; without an archive the
    /// error names the value, the archive to supply, and the value that avoids the file.
    pub fn bundled(
        &self,
        path: &str,
        file: &str,
        alternative: &str,
    ) -> Result<String, RenderError> {
        match self.chart {
            Some(chart) => Ok(chart.text(file)?),
            None => Err(RenderError::NeedsChartArchive {
                path: path.to_string(),
                origin: self.values.describe_origin(path),
                file: file.to_string(),
                version: self.plan.cilium.to_string(),
                alternative: alternative.to_string(),
            }),
        }
    }
}

type Component = fn(&Ctx) -> Result<Vec<Value>, RenderError>;

/// Every component, in the chart's folder order (output order is decided later, in `output`).
const COMPONENTS: &[Component] = &[
    agent::render,
    ca::render,
    config::render,
    envoy::render,
    extras::render,
    gateway_policy::render,
    ingress::render,
    nodeinit::render,
    operator::render,
    preflight::render,
    clustermesh::render,
    hubble::render,
    hubble_relay::render,
    hubble_ui::render,
    spire::render,
    ztunnel::render,
    dns_proxy::render,
];

/// All objects of a render, unordered.
pub fn render_all(ctx: &Ctx) -> Result<Vec<Value>, RenderError> {
    let mut out = Vec::with_capacity(64);
    for component in COMPONENTS {
        out.extend(component(ctx)?);
    }
    Ok(out)
}
