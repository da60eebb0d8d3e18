//! A Go `text/template` engine with Sprig's and Helm's functions, rendering the official Cilium
//! chart archive exactly as Helm 4 (`helm template`) does.
//!
//! Why our own engine and not the `gotmpl` crate (0.6.1, tried on the 1.20.0 archive first):
//! - Its values are immutable (`Arc<BTreeMap>` maps, `Arc<[Value]>` lists). Helm's are Go maps,
//!   shared by reference, and the chart mutates them through Sprig: `unset
//!   .Values.podSecurityContext "appArmorProfile"` in the agent DaemonSet changes what every
//!   later template sees, `set $secretNamespaces ...` and `set . "commonCA" $ca` fill maps a
//!   caller reads afterwards. With immutable maps `set` can only return a copy, and those
//!   templates render differently from Helm. This alone decides it.
//! - Its functions are `Fn(&[Value])`, registered before parsing, with no access to the
//!   executing template set: `include` and `tpl` (which parse and run text against the current
//!   set, Helm's `pkg/engine/engine.go` `includeFun`/`tplFun`) and an error naming the template
//!   file:line of a refused function would need a side channel around the library.
//! - Its nesting bound (200) is not Helm's (1000 per included name), and its output and loop
//!   bounds are not ours to set for untrusted values.
//!
//! Determinism: functions that mint randomness or read the cluster, DNS or the environment are
//! known to the parser but refused when reached (`ErrorKind::NonDeterministic`, with the
//! template file:line). `now` is the one exception, because every Cilium release calls it on
//! its default path (`_helpers.tpl` `hasDuration`/`validateDuration`: `ne $now ($now |
//! dateModify D)` asks only whether D is zero, and `mustDateModify` validates D): it yields an
//! opaque instant, and a render in which that instant would be printed or encoded is refused.
//!
//! So the engine is written here: `lex` and `parse` follow Go's `text/template/parse`, `exec`
//! Go's `exec.go` and `funcs.go`, `funcs` Sprig v3 and Helm's `funcs.go`/`files.go`, `helm`
//! Helm's `engine.go` render loop and `releaseutil`'s manifest splitting.

pub mod compiled;
pub(crate) mod exec;
pub(crate) mod fmt;
pub mod funcs;
pub mod helm;
pub(crate) mod json;
pub mod lex;
pub(crate) mod parse;
pub(crate) mod read_back;
pub(crate) mod semver;
pub mod stack;
pub(crate) mod value;

pub use helm::{ChartTemplates, Manifest, RenderOptions};

/// Why a parse or a render stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ErrorKind {
    /// The template text is not a valid Go template.
    Parse,
    /// An action failed as it would in Go (wrong types, nil pointers, a bad call).
    Exec,
    /// The chart's own `fail` or `required`: the message is the chart's.
    Fail,
    /// A function that mints randomness or reads the clock, the cluster or the environment
    /// was reached; this engine never evaluates those (the value that led there must change).
    NonDeterministic {
        /// The refused function's name, as the template calls it.
        function: String,
    },
    /// A bound of this engine (nesting, output size, loop iterations) was reached.
    Limit,
}

/// An error with the template file, line and column it happened at (Go's `template: NAME:LINE:COL:`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateError {
    /// What kind of failure it is, which decides how a caller reports it.
    pub kind: ErrorKind,
    /// The template file as Helm names it (`cilium/templates/cilium-agent/daemonset.yaml`).
    pub file: String,
    /// 1-based line in that file.
    pub line: usize,
    /// 0-based byte column in that line, as Go counts it.
    pub column: usize,
    /// The reason, without the position.
    pub message: String,
}

impl TemplateError {
    /// A parse error at byte `pos` of `src`, the text of `file`.
    pub(crate) fn parse(file: &str, src: &str, pos: usize, message: String) -> TemplateError {
        let (line, column) = line_col(src, pos);
        TemplateError {
            kind: ErrorKind::Parse,
            file: file.to_string(),
            line,
            column,
            message,
        }
    }
}

/// 1-based line and Go's 0-based byte column of `pos` in `src` (parse.go `ErrorContext`).
pub fn line_col(src: &str, pos: usize) -> (usize, usize) {
    let pos = pos.min(src.len());
    let before = &src.as_bytes()[..pos];
    let line = 1 + before.iter().filter(|&&b| b == b'\n').count();
    let col = pos
        - before
            .iter()
            .rposition(|&b| b == b'\n')
            .map(|i| i + 1)
            .unwrap_or(0);
    (line, col)
}

impl std::fmt::Display for TemplateError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let what = match &self.kind {
            ErrorKind::Parse => "parse error",
            ErrorKind::Exec | ErrorKind::Fail => "execution error",
            ErrorKind::NonDeterministic { .. } => "refused",
            ErrorKind::Limit => "limit reached",
        };
        write!(
            f,
            "{what} at ({}:{}:{}): {}",
            self.file, self.line, self.column, self.message
        )
    }
}

impl std::error::Error for TemplateError {}
