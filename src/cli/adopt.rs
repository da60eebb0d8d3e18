//! `adopt-check`: the render (flags or folder) against dumps of what runs now.

use std::process::ExitCode;

use cilium_cmp_gitops::adopt::error::ArgoFileError;
use cilium_cmp_gitops::argocd::{self, GenerateError};
use cilium_cmp_gitops::refusal::{self, UsageError};

use super::args::{AdoptCheckArgs, FolderArgs};
use super::inputs::{folder_request, inputs_finding_archive};
use super::io::{say, say_part, write_stdout};

/// Renders (flags or folder), compares with the live dumps, prints the report; the status is 3
/// when the switch would restart pods or prune objects.
pub fn run(a: &AdoptCheckArgs) -> anyhow::Result<ExitCode> {
    let (inputs, text) = match &a.folder {
        None => {
            if a.render.cilium_version.is_none() {
                return Err(UsageError::Missing("adopt-check needs --cilium-version (or --folder DIR, an application folder naming it)".into()).into());
            }
            inputs_finding_archive(&a.render)?
        }
        Some(dir) => {
            let folder = FolderArgs {
                app_dir: dir.clone(),
                repo_root: a.repo_root.clone(),
                cluster: a.render.cluster.clone(),
                cilium_version: a.render.cilium_version.clone(),
                values: a
                    .render
                    .values
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect(),
                set: a.render.set.set.clone(),
                chart_archive: a.render.chart_archive.clone(),
                allow_unknown_keys: a.render.allow_unknown_keys,
            };
            let req = folder_request(&folder);
            let rendered = argocd::render_folder(&req.env()?, dir, folder.allow_unknown_keys)
                .map_err(GenerateError::on_command_line)?;
            (rendered.generation.inputs, rendered.text)
        }
    };
    if a.live.len() > cilium_cmp_yaml::limits::MAX_LIVE_FILES {
        return Err(UsageError::TooMany(format!(
            "{} --live files are given; at most {} are allowed",
            a.live.len(),
            cilium_cmp_yaml::limits::MAX_LIVE_FILES
        ))
        .into());
    }
    let mut budget = cilium_cmp_yaml::limits::MAX_LIVE_TOTAL_BYTES;
    let mut dumps = Vec::new();
    for f in &a.live {
        dumps.push(cilium_cmp_gitops::adopt::live::read_dump(f, &mut budget)?);
    }
    let mut sync = match &a.argocd_application {
        Some(file) => sync_model(file)?,
        None => cilium_cmp_gitops::adopt::SyncModel::default(),
    };
    if let Some(file) = &a.argocd_cm {
        sync.tracking = tracking_of(file)?;
    }
    let filter = argocd_filter(a.argocd_cm.as_deref())?;
    let namespace = inputs.namespace.clone();
    let mut report =
        cilium_cmp_gitops::adopt::check_with(&text, &dumps, &namespace, &a.release, &sync)?;
    // A release Helm 3 rendered differs from the Helm 4 render where the chart's nulls are read.
    match cilium_cmp_gitops::adopt::helm3::assess(&inputs, &text, &dumps, &namespace) {
        Ok(found) => report.helm3 = found,
        Err(e) => report.warnings.push(format!(
            "the render as Helm 3 would coalesce the values failed, so the nulls whose render \
             differs under Helm 3 are not named: {e}"
        )),
    }
    print_exclusions(&filter, &text)?;
    let excluded = argocd::exclusions::excluded_in_stream(&filter, &text)
        .map_err(ArgoFileError::Exclusions)?;
    for e in excluded {
        if let Some(o) = report
            .objects
            .iter_mut()
            .find(|o| o.key.to_string() == e.object)
        {
            o.notes.push(format!(
                "Argo CD excludes it (resource.exclusions): it is never applied; {}; fix: {}",
                e.effect, e.fix
            ));
        }
    }
    if a.argocd_cm.is_some() {
        say(if argocd::exclusions::identity_ignore_needed(&filter) {
            "note: this argocd-cm does not exclude CiliumIdentity: keep the recommended \
                 Application's ignoreDifferences entry for it"
        } else {
            "note: this argocd-cm excludes CiliumIdentity: the recommended Application's \
                 ignoreDifferences entry for it is not needed"
        });
    }
    let out = match a.output.as_str() {
        "json" => cilium_cmp_gitops::adopt::report::json(&report),
        _ => cilium_cmp_gitops::adopt::report::human(&report),
    };
    write_stdout(&out)?;
    Ok(if report.disruptive() {
        ExitCode::from(super::FINDINGS)
    } else {
        ExitCode::SUCCESS
    })
}

/// What the Application's sync does to fields only the live objects have: Argo CD migrates a
/// client-side manager's fields only on a server-side apply sync (argoproj/argo-cd
/// `docs/user-guide/sync-options.md`, "Client-Side Apply Migration"; `controller/sync.go` reads
/// the annotation, default `kubectl-client-side-apply` from argoproj/gitops-engine
/// `pkg/sync/common/types.go` `DefaultClientSideApplyMigrationManager`).
fn sync_model(file: &std::path::Path) -> anyhow::Result<cilium_cmp_gitops::adopt::SyncModel> {
    let shown = file.display().to_string();
    let text = cilium_cmp_yaml::limits::read_text(file, &shown)?;
    let app =
        cilium_cmp_yaml::yaml::parse_value(&text).map_err(|e| ArgoFileError::Application {
            message: format!("{shown}: {e}"),
            span: Some(Box::new(e.span_in(&shown, &text))),
        })?;
    if app.get("kind").and_then(|k| k.as_str()) != Some("Application") {
        return Err(ArgoFileError::Application {
            message: format!("{shown}: not an Argo CD Application (kind: Application expected)"),
            span: refusal::entry_span(&shown, &text, "kind"),
        }
        .into());
    }
    let options: Vec<&str> = app
        .pointer("/spec/syncPolicy/syncOptions")
        .and_then(|o| o.as_array())
        .into_iter()
        .flatten()
        .filter_map(|o| o.as_str())
        .collect();
    let server_side = options.contains(&"ServerSideApply=true");
    let migration = !options.contains(&"ClientSideApplyMigration=false");
    let manager = app
        .pointer("/metadata/annotations/argocd.argoproj.io~1client-side-apply-migration-manager")
        .and_then(|m| m.as_str())
        .filter(|m| !m.is_empty())
        .unwrap_or("kubectl-client-side-apply");
    Ok(cilium_cmp_gitops::adopt::SyncModel {
        migrated_manager: (server_side && migration).then(|| manager.to_string()),
        application: app
            .pointer("/metadata/name")
            .and_then(|n| n.as_str())
            .map(String::from),
        ..Default::default()
    })
}

/// How the user's Argo CD tracks its objects (`argocd-cm`'s resource tracking keys).
fn tracking_of(
    file: &std::path::Path,
) -> anyhow::Result<cilium_cmp_gitops::adopt::tracking::Tracking> {
    let shown = file.display().to_string();
    let text = cilium_cmp_yaml::limits::read_text(file, &shown)?;
    let cm = cilium_cmp_yaml::yaml::parse_value(&text).map_err(|e| ArgoFileError::ConfigMap {
        message: format!("{shown}: {e}"),
        span: Some(Box::new(e.span_in(&shown, &text))),
    })?;
    Ok(
        cilium_cmp_gitops::adopt::tracking::Tracking::from_argocd_cm(&cm, &shown).map_err(
            |message| ArgoFileError::ConfigMap {
                message,
                span: None,
            },
        )?,
    )
}

/// The resource filter of the user's argocd-cm, or Argo CD's defaults.
pub fn argocd_filter(file: Option<&std::path::Path>) -> anyhow::Result<argocd::exclusions::Filter> {
    Ok(match file {
        None => argocd::exclusions::Filter::argocd_defaults(),
        Some(f) => {
            let shown = f.display().to_string();
            let text = cilium_cmp_yaml::limits::read_text(f, &shown)?;
            argocd::exclusions::Filter::from_argocd_cm(&text, &shown).map_err(|message| {
                // The reader's position follows the file's name when the text is no YAML.
                let span = message
                    .strip_prefix(&format!("{shown}: "))
                    .and_then(|rest| refusal::syntax_span(&shown, &text, rest));
                ArgoFileError::ConfigMap { message, span }
            })?
        }
    })
}

/// Names on stderr the rendered objects Argo CD would not apply (the render is unchanged).
pub fn print_exclusions(filter: &argocd::exclusions::Filter, render: &str) -> anyhow::Result<()> {
    let found = argocd::exclusions::excluded_in_stream(filter, render)
        .map_err(ArgoFileError::Exclusions)?;
    // The report names rendered objects and the argocd-cm's rules.
    say_part(&argocd::exclusions::report(filter, &found));
    Ok(())
}
