//! The library's errors as diagnostics (`diagnostic::Diagnostic`): each refusal gets a stable
//! kind (docs/diagnostics.md lists them) and points at the user's entries it is about. The
//! message stays the error's own text, word for word.

use crate::argocd::GenerateError;
use crate::refusal::{LockError, NotStored, TalosError, UsageError, VerifyError};
use cilium_cmp_render::error::{RenderError, Violation};
use cilium_cmp_render::known_keys::Reason;
use cilium_cmp_render::values::ValuesError;
use cilium_cmp_yaml::diagnostic::{Diagnostic, Span};

/// The diagnostic of the first error of `chain` (an error and its sources) this crate knows, or
/// a diagnostic of kind `error` with no span for any other (I/O, a usage mistake, ...). The
/// message is `message`, the text the front end prints for the whole chain.
pub fn diagnose(chain: &[&(dyn std::error::Error + 'static)], message: String) -> Diagnostic {
    for e in chain {
        let found = if let Some(d) = of_command(*e, &message) {
            Some(d)
        } else if let Some(r) = e.downcast_ref::<RenderError>() {
            Some(of_render(r, &message))
        } else if let Some(g) = e.downcast_ref::<GenerateError>() {
            Some(of_generate(g, &message))
        } else if let Some(v) = e.downcast_ref::<ValuesError>() {
            Some(of_values(v, &message))
        } else if let Some(o) = e.downcast_ref::<cilium_cmp_render::chart::obtain::ObtainError>() {
            use cilium_cmp_render::chart::obtain::ObtainError as O;
            Some(Diagnostic::error(
                match o {
                    O::Unavailable { .. } => "chart.archive-missing",
                    O::Name { .. } => "version.unknown",
                    O::Repo { .. } => "chart.repository",
                    O::Stored(_) => "chart.unreadable",
                },
                message.clone(),
            ))
        } else if let Some(i) = e.downcast_ref::<cilium_cmp_yaml::limits::InputError>() {
            use cilium_cmp_yaml::limits::InputError as I;
            Some(match i {
                I::File { .. } => Diagnostic::error("input.file", message.clone()),
                I::TooLarge { .. } => Diagnostic::error("input.too-large", message.clone()),
                // The bytes are no text, so there is no line to show; the place is still named.
                I::At {
                    file,
                    line,
                    column,
                    reason,
                } => Diagnostic::error("input.encoding", message.clone()).at(
                    Some(Span {
                        column: *column,
                        ..Span::line_only(file, *line)
                    }),
                    reason.clone(),
                ),
            })
        } else if e.is::<cilium_cmp_render::versions::UnknownVersion>() {
            // The front end reads `--cilium-version` before any render, so the render's own
            // `RenderError::Version` is not in the chain there.
            Some(Diagnostic::error("version.unknown", message.clone()))
        } else if let Some(d) = of_tool(*e, &message) {
            Some(d)
        } else if e.is::<cilium_cmp_render::replace_file::ReplaceError>() {
            Some(Diagnostic::error("output.file", message.clone()))
        } else if e.is::<cilium_cmp_render::chart::ChartError>() {
            Some(Diagnostic::error("chart.unreadable", message.clone()))
        } else if let Some(f) = e.downcast_ref::<cilium_cmp_render::chart::fetch::FetchError>() {
            use cilium_cmp_render::chart::fetch::FetchError as F;
            // The same refusals as a render's download gives them (ObtainError above).
            Some(Diagnostic::error(
                match f {
                    F::Version(_) => "version.unknown",
                    F::Repo { .. } => "chart.repository",
                    _ => "chart.fetch",
                },
                message.clone(),
            ))
        } else {
            None
        };
        if let Some(d) = found {
            return bounded(d);
        }
    }
    let kind = if chain.iter().any(|e| e.is::<std::io::Error>()) {
        "io"
    } else {
        "error"
    };
    Diagnostic::error(kind, message)
}

/// The refusals of this crate's tools (adopt-check's dumps, fix-values, diff, git,
/// import-application), or None when `e` is none of theirs.
fn of_tool(e: &(dyn std::error::Error + 'static), message: &str) -> Option<Diagnostic> {
    let d = |kind: &str| Diagnostic::error(kind, message);
    if let Some(a) = e.downcast_ref::<crate::adopt::AdoptError>() {
        use crate::adopt::AdoptError as A;
        return Some(match a {
            A::LiveSyntax { span, .. } => {
                d("live.syntax").at(Some(span.as_ref().clone()), "the YAML reader stopped here")
            }
            A::Live { .. } => d("live.dump"),
        });
    }
    if let Some(f) = e.downcast_ref::<crate::fix_values::FixError>() {
        use crate::fix_values::FixError as F;
        return Some(match f {
            F::Render(r) => of_render(r, message),
            F::RenderChanged(_) => d("fix.render-changed"),
            F::Refused { spans, .. } => spans.iter().fold(d("fix.refused"), |d, span| {
                d.at(Some(span.clone()), "left as it was because of this entry")
            }),
        });
    }
    if let Some(s) = e.downcast_ref::<crate::diff::error::SideError>() {
        use crate::diff::error::SideError as S;
        return Some(match s {
            S::Render(r) => of_render(r, message),
            S::TooLarge(_) => d("input.too-large"),
        });
    }
    if let Some(x) = e.downcast_ref::<crate::diff::error::DiffError>() {
        use crate::diff::error::DiffError as D;
        return Some(d(match x {
            D::SameInputs(_) => "diff.same-inputs",
            D::Base(_) => "diff.base",
            D::Compare(_) => "diff.compare",
        }));
    }
    if e.is::<crate::git_rev::GitError>() {
        return Some(d("git.failed"));
    }
    let i = e.downcast_ref::<crate::import_application::ImportError>()?;
    use crate::import_application::ImportKind as K;
    let (kind, label) = match i.kind {
        K::Syntax => ("application.syntax", "the YAML reader stopped here"),
        K::Application => ("application.refused", "this entry"),
        K::Values => ("application.values", "this entry"),
    };
    Some(d(kind).at(i.span.as_deref().cloned(), label))
}

/// The most places one diagnostic shows with an excerpt: a file of hundreds of unknown keys
/// still gives a message Argo CD can show (the message lists them all, one line each).
const MAX_PLACES: usize = 5;

/// `d` with at most `MAX_PLACES` places, the others counted in a help line.
fn bounded(mut d: Diagnostic) -> Diagnostic {
    let keep = MAX_PLACES.saturating_sub(usize::from(d.primary.is_some()));
    if d.labels.len() > keep {
        let more = d.labels.len() - keep;
        d.labels.truncate(keep);
        d.help.push(format!(
            "{more} more {} in the list above",
            if more == 1 { "place is" } else { "places are" }
        ));
    }
    d
}

/// A value path in a label, bounded as messages bound it.
fn path(p: &str) -> String {
    cilium_cmp_yaml::limits::shown(p)
}

/// A render's refusal.
pub fn of_render(e: &RenderError, message: &str) -> Diagnostic {
    use cilium_cmp_render::engine::ErrorKind;
    let d = |kind: &str| Diagnostic::error(kind, message);
    match e {
        RenderError::Value { span, path, .. } => d("values.nondeterministic").at(
            span.as_deref().cloned(),
            format!("{} is set here", self::path(path)),
        ),
        RenderError::NoChartArchive { .. } => d("chart.archive-missing"),
        RenderError::UnknownValues { report, .. } => {
            let repeated = |u: &&cilium_cmp_render::known_keys::UnknownValue| {
                matches!(u.reason, Reason::Repeated { .. })
            };
            let kind = if report.values.iter().all(|u| repeated(&u)) {
                "values.repeated-key"
            } else if report
                .values
                .iter()
                .all(|u| matches!(u.reason, Reason::OtherRelease { hint: Some(_), .. }))
            {
                "values.renamed-key"
            } else {
                "values.unknown-key"
            };
            let mut out = d(kind);
            for u in &report.values {
                let label = match &u.reason {
                    Reason::Repeated { .. } => format!("{} is written again later", path(&u.path)),
                    Reason::Unknown { suggestions } if !suggestions.is_empty() => {
                        format!(
                            "{}: did you mean {}?",
                            path(&u.path),
                            suggestions.join(", ")
                        )
                    }
                    Reason::OtherRelease { known_in, .. } => {
                        format!("{} exists only in Cilium {known_in}", path(&u.path))
                    }
                    _ => format!("{} does not exist in this release", path(&u.path)),
                };
                out = out.at(u.span.clone(), label);
                if u.replaced_by.is_some() {
                    out = out.at(
                        u.replaced_by.clone(),
                        "this later entry is the one Helm keeps",
                    );
                }
            }
            out
        }
        RenderError::WouldBeRejected(found) => with_violations(d("values.admission"), &found.0),
        RenderError::Schema(found) => with_violations(d("values.schema"), &found.0),
        RenderError::Chart(_) => d("chart.unreadable"),
        RenderError::Values(v) => of_values(v, message),
        RenderError::Stamp(_) => d("output.stamp"),
        RenderError::Version(_) => d("version.unknown"),
        RenderError::Unlisted(_) => d("chart.unlisted"),
        RenderError::Template(t) => d(match t.kind {
            ErrorKind::Fail => "chart.fail",
            ErrorKind::Parse | ErrorKind::Exec => "chart.template",
            ErrorKind::NonDeterministic { .. } => "chart.nondeterministic",
            ErrorKind::Limit => "engine.limit",
        }),
        RenderError::NotYaml { .. } => d("chart.not-yaml"),
        RenderError::Empty => d("render.empty"),
        RenderError::KubeVersion(_) => d("kube-version.invalid"),
        RenderError::KubeTooOld { .. } => d("kube-version.unsupported"),
        RenderError::TooLarge(_) => d("input.too-large"),
    }
}

/// One label per value a check refused, at the entry the user wrote (first one primary).
fn with_violations(mut d: Diagnostic, found: &[Violation]) -> Diagnostic {
    for v in found {
        for o in &v.values {
            // The message says why; the label says which value of the list this line is.
            let label = match &v.object {
                Some(object) => format!("{} is set here ({object})", path(&o.path)),
                None => format!("{} is set here", path(&o.path)),
            };
            d = d.at(o.span.clone(), label);
        }
    }
    d
}

/// A values file that cannot be read, or a `--set` expression that cannot be applied.
pub fn of_values(e: &ValuesError, message: &str) -> Diagnostic {
    match e {
        ValuesError::Parse { span, message: why } => {
            let kind = if why.contains("must be a YAML mapping") {
                "values.not-a-mapping"
            } else {
                "values.syntax"
            };
            Diagnostic::error(kind, message).at(Some(span.as_ref().clone()), why.clone())
        }
        ValuesError::Set { expr, message: why } => {
            Diagnostic::error("values.set-expression", message)
                .at(Some(set_span(expr, why)), why.to_string())
        }
    }
}

/// The part of a `--set` flag's text (`--set a=b`, as `ValuesError::Set` names it) an error is
/// about: the piece the error quotes when it can be found there, else the whole expression.
fn set_span(expr: &str, why: &cilium_cmp_render::setexpr::SetExprError) -> Span {
    use cilium_cmp_render::setexpr::SetExprError as E;
    let flag_end = expr.find(' ').unwrap_or(expr.len());
    let source = &expr[..flag_end];
    let piece = match why {
        E::NotAnAssignment { part, .. } => Some(part.as_str()),
        E::ListNotClosed { list } => Some(list.as_str()),
        E::IndexNotClosed { digits } | E::IndexNotANumber { digits } => Some(digits.as_str()),
        E::FileNotRead { name } => Some(name.as_str()),
        _ => None,
    };
    let whole = (flag_end + 1).min(expr.len())..expr.len();
    let range = piece
        .filter(|p| !p.is_empty())
        .and_then(|p| {
            expr[whole.start..]
                .find(p)
                .map(|i| whole.start + i..whole.start + i + p.len())
        })
        .unwrap_or(whole);
    Span::in_text(source, expr, range)
}

/// A folder's or the plugin's refusal.
pub fn of_generate(e: &GenerateError, message: &str) -> Diagnostic {
    let d = |kind: &str| Diagnostic::error(kind, message);
    match e {
        GenerateError::Render(r) => of_render(r, message),
        GenerateError::NeedsChartArchive { .. } => d("chart.archive-missing"),
        GenerateError::Env { .. } => d("argocd.environment"),
        GenerateError::Parameter { .. } => d("argocd.parameter"),
        GenerateError::Folder { span, .. } => {
            d("folder.settings").at(span.as_deref().cloned(), "this setting")
        }
        GenerateError::ValuesFile { .. } => d("folder.values-file"),
        GenerateError::Version(_) => d("version.unknown"),
        GenerateError::Chart(_) => d("chart.unreadable"),
        GenerateError::TooManyValuesFiles { .. } => d("input.too-large"),
        GenerateError::LockMismatch { .. } => d("folder.lock-mismatch"),
        GenerateError::Write { .. } => d("output.file"),
    }
}

/// A refusal of a command's front end (`refusal`), or None when `e` is none of them.
pub fn of_command(e: &(dyn std::error::Error + 'static), message: &str) -> Option<Diagnostic> {
    let d = |kind: &str| Diagnostic::error(kind, message);
    if let Some(u) = e.downcast_ref::<UsageError>() {
        return Some(d(match u {
            UsageError::Conflict(_) => "usage.conflict",
            UsageError::Missing(_) => "usage.missing",
            UsageError::Stdin(_) => "usage.stdin",
            UsageError::Repeated(_) => "usage.repeated",
            UsageError::TooMany(_) => "usage.too-many",
            UsageError::Folder(_) => "usage.folder",
            UsageError::Exists(_) => "usage.exists",
            UsageError::Environment(_) => "usage.environment",
        }));
    }
    if let Some(l) = e.downcast_ref::<LockError>() {
        return Some(d(match l {
            LockError::Missing(_) => "lock.missing",
            LockError::Stale(_) => "lock.stale",
            LockError::FoldersFailed(_) => "lock.folders-failed",
            LockError::NoFolders(_) => "lock.no-folders",
            LockError::Search(_) => "lock.search",
        }));
    }
    if let Some(v) = e.downcast_ref::<VerifyError>() {
        return Some(match v {
            VerifyError::NotYaml { span, .. } => {
                d("verify.not-yaml").at(span.as_deref().cloned(), "the YAML reader stopped here")
            }
            VerifyError::Mismatch(_) => d("verify.mismatch"),
            VerifyError::Unstamped(_) => d("verify.unstamped"),
        });
    }
    if let Some(t) = e.downcast_ref::<TalosError>() {
        return Some(match t {
            TalosError::MachineConfig { span, .. } => {
                d("talos.machine-config").at(span.as_deref().cloned(), "Talos would not read this")
            }
            TalosError::InlineManifest(_) => d("talos.inline-manifest"),
        });
    }
    if e.is::<NotStored>() {
        return Some(d("chart.unlisted"));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind_of(e: &(dyn std::error::Error + 'static)) -> (String, Option<usize>) {
        let d = diagnose(&[e], e.to_string());
        (d.kind, d.primary.map(|l| l.span.line))
    }

    #[test]
    fn a_front_end_refusal_keeps_its_kind_and_place_under_context() {
        // A context above the refusal (an I/O error, say) does not hide it.
        let outer = std::io::Error::other("lock --check");
        let stale = LockError::Stale("stale".into());
        let chain: [&(dyn std::error::Error + 'static); 2] = [&outer, &stale];
        assert_eq!(diagnose(&chain, String::new()).kind, "lock.stale");
        let text = "a: 1\nb: [\n";
        let not_yaml = VerifyError::NotYaml {
            message: "2:4: not closed".into(),
            span: crate::refusal::syntax_span("m.yaml", text, "2:4: not closed"),
        };
        assert_eq!(kind_of(&not_yaml), ("verify.not-yaml".into(), Some(2)));
        let talos = TalosError::MachineConfig {
            message: "no".into(),
            span: None,
        };
        assert_eq!(kind_of(&talos), ("talos.machine-config".into(), None));
        assert_eq!(
            kind_of(&UsageError::Environment("x".into())).0,
            "usage.environment"
        );
        let io = std::io::Error::other("gone");
        assert_eq!(kind_of(&io).0, "io");
    }
}
