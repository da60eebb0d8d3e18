//! `fix-values`: reads the files, runs the library's fix, reports on stderr, prints patches on
//! stdout, writes the edited files (each replaced whole), and sets the exit status.

use anyhow::Context;
use std::path::Path;
use std::process::ExitCode;

use cilium_cmp_gitops::fix_values::{self, Fix, FixError};
use cilium_cmp_render::error::RenderError;
use cilium_cmp_render::replace_file::Force;

use cilium_cmp_gitops::refusal::UsageError;

use super::args::FixValuesArgs;
use super::io::{self as cli_io, say, write_stdout};
use cilium_cmp_yaml::escape;

/// The exit status when files were changed, or would be with `--dry-run`: scripts and CI tell
/// "fixed, commit it" from "nothing to do" (0) and from a failure (1).
const CHANGED: u8 = 2;

pub fn run(a: &FixValuesArgs) -> anyhow::Result<ExitCode> {
    let mut files: Vec<(String, String)> = Vec::new();
    for f in &a.files {
        let shown = f.display().to_string();
        if cli_io::is_stdin(&shown) {
            return Err(UsageError::Stdin("fix-values edits files in place; '-' (standard input) is not a file: save the values to a file first".into()).into());
        }
        if files.iter().any(|(name, _)| *name == shown) {
            return Err(UsageError::Repeated(format!(
                "{shown} is given twice; name each values file once"
            ))
            .into());
        }
        let text = cilium_cmp_yaml::limits::read_text(f, &shown)?;
        files.push((shown, text));
    }
    // The other inputs of the render the check compares, as `render` reads them.
    let mut base = super::inputs::base_inputs(
        a.cilium_version.clone(),
        &a.set,
        &a.cluster,
        a.chart_archive.as_deref(),
        &mut cli_io::Stdin::default(),
    )?;
    let fix = match fix_values::fix(&base, &files, a.apply_renames) {
        // As `render`: the stored archive (downloaded on first use for a pinned release) when
        // the render asks for it, and the stored one only when the values embed a bundled file.
        Err(FixError::Render(RenderError::NoChartArchive { version }))
            if a.chart_archive.is_none() =>
        {
            base.chart = Some(super::inputs::obtained_archive(&version)?);
            fix_values::fix(&base, &files, a.apply_renames)?
        }
        other => other?,
    };
    report(&fix, &a.cilium_version.to_string());
    if fix.refused() {
        let mut patches = String::new();
        for f in &fix.files {
            if let Some(r) = &f.refused {
                say(&format!(
                    "{}: left as it was: {}",
                    escape::text(&f.name),
                    escape::message(&r.reason)
                ));
                if let Some(p) = &r.patch {
                    patches.push_str(p);
                }
            }
        }
        write_stdout(&patches)?;
        return Err(FixError::Refused {
            message: format!(
                "nothing was written; {}",
                if patches.is_empty() {
                    "fix what is named above by hand and run fix-values again"
                } else {
                    "the change is printed above as a patch (it rewrites the file without its comments): apply it by hand or with `git apply`, or rewrite the file in block style without anchors, then run fix-values again"
                }
            ),
            spans: fix
                .files
                .iter()
                .filter_map(|f| f.refused.as_ref()?.span.clone())
                .collect(),
        }
        .into());
    }
    if !fix.files.iter().any(|f| f.changed()) {
        say(&format!(
            "nothing to fix: Cilium {} knows every value of these files",
            a.cilium_version
        ));
        return Ok(ExitCode::SUCCESS);
    }
    if a.dry_run {
        let diff: String = fix
            .files
            .iter()
            .filter_map(|f| {
                let edited = f.edited.as_deref()?;
                Some(cilium_cmp_gitops::unified_diff::unified(
                    &f.name,
                    &f.original,
                    edited,
                ))
            })
            .collect();
        write_stdout(&diff)?;
        say("dry run: nothing was written");
    } else {
        // The paths as given (a shown name may have lost bytes that are not UTF-8).
        let force = Force::flag(a.force);
        let edited: Vec<(&Path, &str, &str)> = fix
            .files
            .iter()
            .zip(&a.files)
            .filter_map(|(f, path)| Some((path.as_path(), f.name.as_str(), f.edited.as_deref()?)))
            .collect();
        // Every file that is to change is checked before the first is written: a link or a
        // read-only file among them leaves all of them as they were.
        for (path, _, _) in &edited {
            // The refusal stays in the chain, so its kind is the one a single write gives.
            cli_io::check_writable(path, force).context("no file was written")?;
        }
        for (path, name, text) in edited {
            cli_io::write_file(path, text, force)?;
            say(&format!("{}: written", escape::text(name)));
        }
    }
    Ok(ExitCode::from(CHANGED))
}

/// What was removed or moved, and why, on stderr; likely typos stand out. File names and keys
/// are the repository's: each through the text escaper (`say` guards the line last).
fn report(fix: &Fix, version: &str) {
    let names = |list: &[String], separator: &str| {
        list.iter()
            .map(|n| escape::text(n))
            .collect::<Vec<_>>()
            .join(separator)
    };
    for f in &fix.files {
        let name = escape::text(&f.name);
        // Beyond the check's bound the values are counted, not listed (a flood helps nobody).
        let unlisted = f.removed.iter().filter(|r| r.explanation.is_none()).count();
        if unlisted > 0 {
            say(&format!(
                "{name}: removed {unlisted} more values the chart does not know (not listed)"
            ));
        }
        for r in &f.removed {
            let Some(why) = &r.explanation else {
                continue;
            };
            say(&format!("removed {}", escape::message(why)));
            if !r.likely_meant.is_empty() {
                say(&format!(
                    "  LIKELY A TYPO of {}: the setting {} meant never applied, and it is not applied now either; set {} yourself if it should",
                    names(&r.likely_meant, " or "),
                    escape::text(&r.path),
                    escape::text(&r.likely_meant[0])
                ));
            }
            if let Some(new) = &r.renamed_to {
                say(&format!(
                    "  for an upgrade, --apply-renames moves it to {} instead, so the setting keeps applying (the render then changes)",
                    escape::text(new)
                ));
            }
        }
        for (old, new, already) in &f.moved {
            let (old, new) = (escape::text(old), escape::text(new));
            if *already {
                say(&format!(
                    "{name}: removed {old}: Cilium {version} renamed it to {new}, which the file sets already (that value applies)"
                ));
            } else {
                say(&format!(
                    "{name}: moved {old} to {new} (Cilium {version}'s name for it)"
                ));
            }
        }
    }
    if !fix.render_changes.is_empty() {
        say("the render changes (renamed values apply again):");
        for line in &fix.render_changes {
            say(&format!("  {}", escape::message(line)));
        }
    }
}
