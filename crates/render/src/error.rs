//! Errors a render can end in. Each names the value, where it was written and what would work.

use crate::chart::ChartError;
use crate::known_keys::Report;
use crate::output::StampError;
use crate::values::ValuesError;
use crate::versions::UnknownVersion;
use cilium_cmp_yaml::diagnostic::Span;

/// Why a render stopped: what the user sees on stderr, each naming the value or file at fault and
/// what would work instead.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    /// A value this renderer refuses or that the chart would reject.
    #[error("{path} (set in {origin}): {message}")]
    Value {
        /// The value path at fault, dotted as in `--set` (`hubble.relay.enabled`).
        path: String,
        /// Where the value was set: a values file, `--set`, or the chart's default.
        origin: String,
        /// The entry in the user's file, for the excerpt (boxed: errors stay small).
        span: Option<Box<Span>>,
        /// Why the value is refused and what to write instead.
        message: String,
    },
    /// Every render evaluates the templates of the release's official chart archive, and none
    /// was given or found. The front end names how the command at hand takes one
    /// (`archive_advice`).
    #[error("{}", archive_advice(self, &ArchiveHint::Unspecified))]
    NoChartArchive {
        /// The Cilium release whose archive is missing (`1.18.0`).
        version: String,
    },
    /// Values the requested chart does not know (typos, values of other releases, values the
    /// chart dropped, an umbrella chart's nesting): all of them, one line each.
    #[error("{}", unknown_values_message(version, report, files))]
    UnknownValues {
        /// The Cilium release whose chart the values were checked against.
        version: String,
        /// The unknown values found, as the `known_keys` check lists them.
        report: Report,
        /// The render's values files in order, as named (what `fix-values` is to be given).
        files: Vec<String>,
    },
    /// Values Helm renders but the API server or Cilium would refuse later (`admission.rs`), one
    /// line each.
    #[error("Kubernetes or Cilium would refuse this render later (Helm renders it; cilium-cmp stops it before it reaches a cluster):\n{0}")]
    WouldBeRejected(Violations),
    /// Values the chart's schema rejects (Helm refuses them too), one line each.
    #[error("the values do not fit the Cilium chart's schema:\n{0}")]
    Schema(Violations),
    /// The chart archive could not be found, read or verified.
    #[error(transparent)]
    Chart(#[from] ChartError),
    /// The values files or `--set` flags could not be read or merged.
    #[error(transparent)]
    Values(#[from] ValuesError),
    /// The rendered output could not be stamped with its content hash.
    #[error(transparent)]
    Stamp(#[from] StampError),
    /// The requested Cilium release is not one this binary knows.
    #[error(transparent)]
    Version(#[from] UnknownVersion),
    /// An archive of a release this binary does not list that cannot be read as the release
    /// asked for (`chart::unlisted`).
    #[error(transparent)]
    Unlisted(#[from] Box<crate::chart::unlisted::UnlistedError>),
    /// The chart's templates stopped the render: the chart's own `fail` or `required`, a template
    /// error Helm meets as well, a bound of the engine, or a function this renderer never
    /// evaluates that no known value explains (`determinism::explain`).
    #[error("{}", template_message(.0))]
    Template(Box<crate::engine::TemplateError>),
    /// A template wrote text that is no YAML with these values (Helm prints it as it is, and
    /// applying it fails).
    #[error("with these values the chart's template {template} writes text that is not YAML, which no cluster can apply (Helm prints it as it is): {message}")]
    NotYaml {
        /// The chart template that wrote the text (`cilium/templates/...`).
        template: String,
        /// Why the YAML reader refused that text.
        message: String,
    },
    /// The values switch every object off; an empty stream is refused, as Argo CD would prune the
    /// whole release on it.
    #[error("these values render no objects at all; refusing to print an empty stream (it would make Argo CD prune everything); check `agent` and `preflight.enabled`")]
    Empty,
    /// `--kube-version` was given something that is no Kubernetes version (the text given).
    #[error("--kube-version {0:?} is not a Kubernetes version such as 1.35.0")]
    KubeVersion(String),
    /// `--kube-version` names a cluster the chart's `kubeVersion` constraint excludes; Helm refuses
    /// it as well.
    #[error("--kube-version {given}: the Cilium {cilium} chart requires Kubernetes {} (its Chart.yaml kubeVersion; Helm refuses to render it for another cluster)", kube_range(constraint))]
    KubeTooOld {
        /// The version given to `--kube-version`.
        given: String,
        /// The Cilium release rendered.
        cilium: String,
        /// The chart's `kubeVersion` constraint, as written in its Chart.yaml.
        constraint: String,
    },
    /// Input beyond the bounds of `limits` (refused before any work is done).
    #[error(transparent)]
    TooLarge(#[from] TooLarge),
}

/// One thing a check refuses: the values at fault, where each was written, and why. A finding
/// about an object of the render (`object`) names the values that wrote the field, when known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// The object of the render the finding is about ("Deployment cilium-operator"), or none
    /// when the finding is about a value itself.
    pub object: Option<String>,
    /// The value paths at fault, each with where it was set (`Values::describe_origin`).
    pub values: Vec<Origin>,
    /// Why the check refuses it, in words the user can act on.
    pub reason: String,
}

/// A value path and where its value was set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    /// The value path, dotted as in `--set`.
    pub path: String,
    /// Where it was set (`Values::describe_origin`): a file, `--set` or the chart default.
    pub origin: String,
    /// The entry in the user's file, for the excerpt (none for `--set` or a default).
    pub span: Option<Span>,
}

impl Origin {
    /// `path` with where the user set it in `values`.
    pub fn of(values: &crate::values::Values, path: &str) -> Origin {
        Origin {
            path: path.to_string(),
            origin: values.describe_origin(path),
            span: values.span_of(path),
        }
    }
}

impl Violation {
    /// A finding about one value.
    pub fn of_value(path: impl Into<String>, origin: impl Into<String>, reason: String) -> Self {
        Violation {
            object: None,
            values: vec![Origin {
                path: path.into(),
                origin: origin.into(),
                span: None,
            }],
            reason,
        }
    }

    /// A finding about the value at `path` of `values`, pointing at where it was written.
    pub fn of_written(values: &crate::values::Values, path: &str, reason: String) -> Self {
        Violation {
            object: None,
            values: vec![Origin::of(values, path)],
            reason,
        }
    }

    /// A finding about an object of the render, written by `values` (possibly none known).
    pub fn of_object(object: String, values: Vec<Origin>, reason: String) -> Self {
        Violation {
            object: Some(object),
            values,
            reason,
        }
    }

    /// The value paths at fault.
    pub fn paths(&self) -> impl Iterator<Item = &str> {
        self.values.iter().map(|v| v.path.as_str())
    }
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (&self.object, self.values.as_slice()) {
            (None, [one]) => write!(f, "{} (set in {})", one.path, one.origin)?,
            (None, many) => {
                let named: Vec<String> = many
                    .iter()
                    .map(|v| format!("{} (set in {})", v.path, v.origin))
                    .collect();
                f.write_str(&named.join(", "))?
            }
            (Some(object), values) => {
                f.write_str(object)?;
                if !values.is_empty() {
                    // Object findings name paths as the user may have typed them: escaped.
                    let named: Vec<String> = values
                        .iter()
                        .map(|v| {
                            format!(
                                "{}, set in {}",
                                cilium_cmp_yaml::limits::shown(&v.path),
                                v.origin
                            )
                        })
                        .collect();
                    write!(f, " (from {})", named.join("; "))?;
                }
            }
        }
        write!(f, ": {}", self.reason)
    }
}

/// The findings of one check, all of them (so one run lists everything to fix); shown one
/// indented line each.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Violations(pub Vec<Violation>);

impl Violations {
    /// The findings, in the order the check made them.
    pub fn iter(&self) -> std::slice::Iter<'_, Violation> {
        self.0.iter()
    }
}

impl std::fmt::Display for Violations {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, v) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            write!(f, "  {v}")?;
        }
        Ok(())
    }
}

/// Input beyond one of the bounds of `limits`, with the amount given and the bound.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TooLarge {
    /// More values files than `limits` allows.
    #[error("{given} values files are given; at most {limit} are allowed")]
    ValuesFiles {
        /// How many files were given.
        given: usize,
        /// The most files allowed.
        limit: usize,
    },
    /// The values input adds up to more bytes than `limits` allows.
    #[error("the values files, --set text and --set-file files add up to {given} bytes; at most {limit} are allowed")]
    ValuesBytes {
        /// The bytes given, all inputs together.
        given: usize,
        /// The most bytes allowed.
        limit: usize,
    },
}

impl RenderError {
    /// The render error for an engine error, as it stands (see `determinism::explain`).
    pub fn from_engine(e: crate::engine::helm::EngineError) -> RenderError {
        match e {
            crate::engine::helm::EngineError::Chart { path, message } => {
                RenderError::Chart(ChartError::Unreadable { path, message })
            }
            crate::engine::helm::EngineError::Template(t) => RenderError::Template(Box::new(t)),
        }
    }

    /// The values (and objects) a check refused, for a refusal that lists them; none otherwise.
    pub fn violations(&self) -> &[Violation] {
        match self {
            RenderError::Schema(found) | RenderError::WouldBeRejected(found) => &found.0,
            _ => &[],
        }
    }
}

/// How the command at hand is given the chart archive, for the error about a missing one.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum ArchiveHint {
    /// A caller of the library that did not say.
    #[default]
    Unspecified,
    /// `render`: `--chart-archive`, after the default folder (`chart::store`) was searched.
    RenderFlag {
        /// The default folder that was searched for the archive, if any.
        searched: Option<String>,
    },
    /// `lock`, `talos-patch`: the folder `--chart-archive` names (or the default one) was searched.
    ChartDirFlag {
        /// The folder that was searched.
        dir: String,
    },
    /// The plugin in Argo CD: `$CILIUM_CMP_CHART_DIR` (default /opt/cilium-cmp/charts).
    PluginDir {
        /// The plugin's chart folder, as configured.
        dir: String,
    },
}

impl ArchiveHint {
    fn remedy(&self, version: &str) -> String {
        let fetch = format!("cilium-cmp chart fetch {version}");
        let into = |dir: &str| format!("{fetch} --dir {}", crate::shell::shell_quote(dir));
        match self {
            ArchiveHint::Unspecified => format!("supply it (`{fetch}` downloads it)"),
            ArchiveHint::RenderFlag { searched: Some(dir) } => format!(
                "it is not in {dir}; download it there once with `{fetch}`, or pass --chart-archive cilium-{version}.tgz (or an unpacked chart folder)"
            ),
            ArchiveHint::RenderFlag { searched: None } => format!(
                "pass --chart-archive cilium-{version}.tgz (or an unpacked chart folder); `{fetch} --dir DIR` downloads it"
            ),
            ArchiveHint::ChartDirFlag { dir } => format!(
                "it is not in {dir}; download it there with `{}`, or pass --chart-archive with it or a folder holding it",
                into(dir)
            ),
            ArchiveHint::PluginDir { dir } => format!(
                "the plugin reads it from {dir} ({var}, default {default}) and it is not there; the sidecar image ships one per supported release (for another image: `{}`)",
                into(dir),
                var = crate::chart::store::CHART_DIR_VAR,
                default = crate::chart::store::DEFAULT_CHART_DIR,
            ),
        }
    }
}

/// The error's text with the missing-archive advice of the command at hand (`hint`); other
/// errors' text unchanged.
pub fn archive_advice(e: &RenderError, hint: &ArchiveHint) -> String {
    match e {
        RenderError::NoChartArchive { version } => format!(
            "cilium-cmp renders the templates of Cilium's official chart archive, cilium-{version}.tgz, and has none: {}",
            hint.remedy(version)
        ),
        other => other.to_string(),
    }
}

/// A chart's `kubeVersion` as a person reads it: `>= 1.21.0-0` (the `-0` lets pre-releases
/// match) is "1.21.0 or later"; any other constraint as written.
fn kube_range(constraint: &str) -> String {
    let c = constraint.trim();
    match c.strip_prefix(">=").map(str::trim) {
        Some(v) if !v.contains([',', '|', '<', '>', ' ']) => {
            format!("{} or later", v.trim_end_matches("-0"))
        }
        _ => c.to_string(),
    }
}

fn template_message(t: &crate::engine::TemplateError) -> String {
    use crate::engine::ErrorKind;
    // Line 0 is "no place known" (a call-depth bound, a template that is not there): the file
    // alone is named then, never a line 0 no editor shows.
    let at = match t.line {
        0 => t.file.clone(),
        line => format!("{}:{line}", t.file),
    };
    let at_column = match (t.line, t.column) {
        (0, _) => at.clone(),
        (_, column) => format!("{at}:{column}"),
    };
    match &t.kind {
        ErrorKind::Fail => format!(
            "the Cilium chart refuses these values (Helm refuses them too; {at}): {}",
            t.message
        ),
        ErrorKind::Parse | ErrorKind::Exec => format!(
            "the Cilium chart's template fails with these values, as it does under Helm ({at_column}): {}",
            t.message
        ),
        ErrorKind::NonDeterministic { function } => format!(
            "with these values the chart's template {at} calls {function}, which mints random data or reads the live cluster; cilium-cmp never does (its renders must be the same on every machine): {}",
            t.message
        ),
        ErrorKind::Limit => format!(
            "the render stopped at a bound of cilium-cmp's template engine ({at}): {}",
            t.message
        ),
    }
}

fn unknown_values_message(version: &str, report: &Report, files: &[String]) -> String {
    let repeated = report
        .values
        .iter()
        .any(|u| matches!(u.reason, crate::known_keys::Reason::Repeated { .. }));
    let mut text = if repeated {
        format!("these values do nothing in Cilium {version} (Helm would silently ignore them):")
    } else {
        format!("these values do not exist in Cilium {version} (Helm would silently ignore them):")
    };
    for line in report.lines() {
        text.push_str("\n  ");
        text.push_str(&line);
    }
    let from_set = report.values.iter().any(|u| u.origin.starts_with("--"));
    if !files.is_empty() {
        // Standard input has no file to edit: it is named FILE, to be saved first.
        let stdin = files.iter().any(|f| f == "<stdin>");
        let names: Vec<String> = files
            .iter()
            .map(|f| match f.as_str() {
                "<stdin>" => "FILE".to_string(),
                _ => crate::shell::shell_quote(f),
            })
            .collect();
        text.push_str(&format!(
            "\nTo remove them from the values files (the render stays exactly what it is with them ignored; --dry-run shows the change first), run:\n  cilium-cmp fix-values --cilium-version {version} {}",
            names.join(" ")
        ));
        if stdin {
            text.push_str(" (with standard input saved as FILE)");
        }
        let renamed = crate::versions::parse(version).is_ok_and(|v| {
            report
                .values
                .iter()
                .any(|u| crate::known_keys::moved_to(&u.keys, v).is_some())
        });
        if renamed {
            text.push_str("\n(for an upgrade, add --apply-renames to move the renamed ones to their new names instead, so they keep applying)");
        }
    }
    if from_set {
        text.push_str("\nRemove the ones set with --set (or the set parameter) from it.");
    }
    text.push_str("\nOr, to render anyway, leaving them out as Helm does, pass --allow-unknown-keys (in an application folder: allowUnknownKeys: true in cilium-cmp.yaml).");
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The findings read as they always did: a value with where it was set, or an object with
    /// the values that wrote it; one indented line each.
    #[test]
    fn violations_show_one_indented_line_each() {
        let found = Violations(vec![
            Violation::of_value("a.b", "v.yaml line 2", "too big".into()),
            Violation::of_object(
                "Deployment d".into(),
                vec![Origin {
                    path: "x.y".into(),
                    origin: "--set".into(),
                    span: None,
                }],
                "spec.replicas would be -1".into(),
            ),
            Violation::of_object("ConfigMap c".into(), Vec::new(), "too much data".into()),
        ]);
        assert_eq!(
            found.to_string(),
            "  a.b (set in v.yaml line 2): too big\n  Deployment d (from x.y, set in --set): spec.replicas would be -1\n  ConfigMap c: too much data"
        );
        let e = RenderError::TooLarge(TooLarge::ValuesFiles {
            given: 300,
            limit: 256,
        });
        assert_eq!(
            e.to_string(),
            "300 values files are given; at most 256 are allowed"
        );
    }
}
