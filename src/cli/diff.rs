//! `diff` and `lock --check` over every folder: the front ends of `cilium_cmp_gitops::diff`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use cilium_cmp_gitops::diff::error::DiffError;
use cilium_cmp_gitops::diff::repo::{self, Target};
use cilium_cmp_gitops::diff::{self, Outcome, Section};
use cilium_cmp_gitops::git_rev::{Revision, WorkTree};
use cilium_cmp_gitops::refusal::{LockError, UsageError};
use cilium_cmp_render::render::Inputs;
use cilium_cmp_render::versions::Release;

use super::args::{DiffArgs, FolderArgs};
use super::inputs::folder_request;
use super::io::{say, write_stdout};
use cilium_cmp_yaml::escape;

fn target(a: &DiffArgs) -> Target {
    // A flag not given leaves each folder's own cilium-cmp.yaml to say (empty: `argocd::plan`).
    let (kube_version, api_versions) = a.cluster.as_argocd_passes();
    Target {
        namespace: a.cluster.namespace.clone().unwrap_or_default(),
        kube_version,
        api_versions,
        chart_dir: a
            .chart_dir
            .clone()
            .or_else(cilium_cmp_render::chart::store::default_dir),
        allow_unknown_keys: a.allow_unknown_keys,
    }
}

/// Runs `diff`, prints the report, and exits with its status (0, 2 or 3; errors are 1).
pub fn run(a: &DiffArgs) -> anyhow::Result<ExitCode> {
    let sections = match (&a.folder, &a.base) {
        (Some(folder), Some(base)) => {
            refuse_flag_form(a, "FOLDER --base")?;
            // The work tree is found from where the user is (or --repo-root), never from the
            // folder: the folder is the repository's content (git_rev's module docs).
            let tree = WorkTree::find(a.repo_root.as_deref().unwrap_or(Path::new(".")))?;
            let rel = tree.folder_inside(folder)?;
            let rev = Revision::open(&tree, base)?;
            let outcome =
                repo::diff_folder(&target(a), &rev, &rel, true).map_err(DiffError::Base)?;
            vec![Section { name: rel, outcome }]
        }
        (None, Some(base)) => {
            refuse_flag_form(a, "--base")?;
            let tree = WorkTree::find(a.repo_root.as_deref().unwrap_or(Path::new(".")))?;
            let rev = Revision::open(&tree, base)?;
            repo::diff_repository(&target(a), &rev, &super::progress::Shown::default())
                .map_err(DiffError::Base)?
        }
        (Some(_), None) => return Err(UsageError::Missing(
            "diff FOLDER needs --base REV (the git revision to compare the folder with, e.g. --base origin/main)".into()
        ).into()),
        (None, None) => vec![flag_form(a)?],
    };
    let text = match a.output.as_str() {
        "json" => diff::report_json::render(&sections),
        "markdown" => diff::report_markdown::render(&sections),
        _ => diff::report_text::render(&sections),
    };
    write_stdout(&text)?;
    Ok(super::exit_code(diff::exit_code(&sections)))
}

fn refuse_flag_form(a: &DiffArgs, form: &str) -> anyhow::Result<()> {
    let used = [
        (a.cilium_version.is_some(), "--cilium-version"),
        (a.from_version.is_some(), "--from-version"),
        (!a.values.is_empty(), "-f/--values"),
        (!a.from_values.is_empty(), "--from-values"),
        (!a.set.is_empty(), "--set"),
        (!a.from_set.is_empty(), "--from-set"),
    ];
    if let Some((_, flag)) = used.iter().find(|(on, _)| *on) {
        return Err(UsageError::Conflict(format!(
            "{flag} is for comparing two sets of inputs without a folder; with {form} both sides come from the folder's files (change them in the work tree)"
        )).into());
    }
    Ok(())
}

/// `--cilium-version B [--from-version A] -f new [--from-values old] [--set ..] [--from-set ..]`.
fn flag_form(a: &DiffArgs) -> anyhow::Result<Section> {
    let Some(to) = &a.cilium_version else {
        return Err(UsageError::Missing(
            "diff needs what to compare: FOLDER --base REV, --base REV (every folder of the repository), or --cilium-version (with --from-version, --from-values or --from-set)".into()
        ).into());
    };
    let from = a.from_version.clone().unwrap_or_else(|| to.clone());
    let (to, from) = (to.clone(), from);
    // Which side each input is on (docs/diff.md): values files are the configuration both
    // sides start from unless --from-values gives the old side its own; a --set is an edit,
    // so it is the new side's alone, and the old side has only its --from-set. A reviewer
    // trying `-f v.yaml --set debug.enabled=true` sees what the flip does, never the same
    // edit on both sides.
    let old_values = if a.from_values.is_empty() {
        &a.values
    } else {
        &a.from_values
    };
    let old_set = &a.from_set;
    let inputs = |version: &Release, files: &[PathBuf], set: &[String]| -> anyhow::Result<Inputs> {
        // Both sides are releases this binary lists: a diff reads their facts compiled in.
        let v = match version {
            Release::Known(v) => v.to_string(),
            Release::FromArchive(name) => Err(cilium_cmp_render::versions::UnknownVersion {
                requested: name.to_string(),
            })?,
        };
        let mut i = Inputs::new(version.clone());
        for f in files {
            let shown = f.display().to_string();
            i.values_files.push((
                shown.clone(),
                cilium_cmp_yaml::limits::read_text(f, &shown)?,
            ));
        }
        i.set = set.to_vec();
        i.namespace = a.cluster.namespace_or_default();
        i.kube_version = a.cluster.kube_version_or_default();
        i.api_versions = a.cluster.api_versions();
        i.allow_unknown_keys = a.allow_unknown_keys;
        if let Some(dir) = target(a).chart_dir {
            i.chart = cilium_cmp_render::chart::store::open_stored(&dir, &v)?;
        }
        Ok(i)
    };
    let new_inputs = inputs(&to, &a.values, &a.set)?;
    let old_inputs = inputs(&from, old_values, old_set)?;
    let upgrade = new_inputs.cilium != old_inputs.cilium;
    let same_files = old_inputs.values_files.len() == new_inputs.values_files.len()
        && old_inputs
            .values_files
            .iter()
            .zip(&new_inputs.values_files)
            .all(|((_, a), (_, b))| a == b);
    if !upgrade && same_files && old_inputs.set == new_inputs.set {
        return Err(DiffError::SameInputs(format!(
            "both sides of the diff have the same inputs (Cilium {to}, the same values files and --set), so nothing could change; give the old side its own with --from-values FILE or --from-set PATH=VALUE, or another release with --from-version (a --set applies to the new side only)"
        )).into());
    }
    let label = |files: &[PathBuf], set: &[String]| {
        let mut parts: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
        parts.extend(set.iter().map(|s| format!("--set {s}")));
        if parts.is_empty() {
            "the chart's defaults".to_string()
        } else {
            parts.join(" ")
        }
    };
    let old = repo::render_inputs(&old_inputs, &label(old_values, old_set), false)
        .map_err(|e| anyhow::Error::new(e).context(format!("the old render ({from})")))?;
    let new = repo::render_inputs(&new_inputs, &label(&a.values, &a.set), upgrade)
        .map_err(|e| anyhow::Error::new(e).context(format!("the new render ({to})")))?;
    let values = if upgrade {
        Some(cilium_cmp_render::render::resolve_values(
            &new_inputs,
            new.version,
        )?)
    } else {
        None
    };
    let d = diff::diff(old, new, &a.cluster.namespace_or_default(), values.as_ref())
        .map_err(DiffError::Compare)?;
    Ok(Section {
        name: if upgrade {
            format!("Cilium {from} → {to}")
        } else {
            "values".into()
        },
        outcome: Outcome::Compared {
            state: diff::FolderState::Changed,
            diff: Box::new(d),
        },
    })
}

/// `lock --check` with no folder: every application folder under the repository root, in
/// parallel; one line per folder on stderr; fails when any lock is missing or stale.
pub fn lock_check_all(folder: &FolderArgs) -> anyhow::Result<ExitCode> {
    let (root, folders) = super::lock::application_folders(folder, "")?;
    let results = cilium_cmp_render::parallel::map(
        &folders,
        "lock --check",
        &super::progress::Shown::default(),
        |rel| {
            // Each line starts with the folder's name (the repository's).
            let shown = escape::text(rel);
            let args = super::lock::for_folder(folder, &root, rel);
            let req = folder_request(&args);
            let checked = req.env().and_then(|env| {
                cilium_cmp_gitops::argocd::preview::preview(
                    &env,
                    &args.app_dir,
                    args.allow_unknown_keys,
                )
            });
            match checked {
                Err(e) => (false, format!("{shown}: {}", e.on_command_line())),
                Ok(p) => match p.state() {
                    cilium_cmp_gitops::argocd::LockState::Fresh => {
                        (true, format!("{shown}: ok {}", p.hash()))
                    }
                    cilium_cmp_gitops::argocd::LockState::Missing => (
                        false,
                        format!(
                            "{shown}: no lock; write it with\n  {}",
                            cilium_cmp_gitops::argocd::reproduce_command(&p.rendered.generation)
                        ),
                    ),
                    cilium_cmp_gitops::argocd::LockState::Stale { .. } => (
                        false,
                        format!(
                            "{shown}: stale\n{}  update it with\n  {}",
                            p.summary(),
                            cilium_cmp_gitops::argocd::reproduce_command(&p.rendered.generation)
                        ),
                    ),
                },
            }
        },
    );
    let failed = results.iter().filter(|(ok, _)| !ok).count();
    for (_, line) in &results {
        say(line);
    }
    // The Cluster Mesh of the folders is checked with the locks: a broken mesh does not merge.
    let fleet = match repo::fleet_findings(&root) {
        // A finding is one line that quotes the folders and values involved.
        Outcome::Fleet(findings) => findings.iter().map(|f| escape::message(f)).collect(),
        Outcome::Failed(e) => vec![e],
        _ => Vec::new(),
    };
    for f in &fleet {
        say(f);
    }
    if failed > 0 || !fleet.is_empty() {
        return Err(LockError::FoldersFailed(format!(
            "{failed} of {} application folders fail the lock check; {} Cluster Mesh finding(s) (cilium-cmp fleet-check explains them)",
            results.len(),
            fleet.len()
        )).into());
    }
    say(&format!(
        "all {} application folders match their locks; the Cluster Mesh checks found nothing",
        results.len()
    ));
    Ok(ExitCode::SUCCESS)
}
