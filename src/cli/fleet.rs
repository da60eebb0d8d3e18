//! `fleet-check`: the Cluster Mesh checks over the repository's application folders.

use std::process::ExitCode;

use anyhow::Context;

use cilium_cmp_gitops::fleet;
use cilium_cmp_gitops::refusal::UsageError;
use cilium_cmp_render::versions::Release;

use super::args::FleetCheckArgs;
use super::io::write_stdout;

/// Reads every folder of the repository, prints the report of the meshes asked for; exits 3
/// when there are findings.
pub fn run(a: &FleetCheckArgs) -> anyhow::Result<ExitCode> {
    let root = super::inputs::real_repository_root(a.repo_root.as_deref())?;
    // The folders are read with the releases this binary lists.
    let version = match &a.cilium_version {
        Some(Release::FromArchive(name)) => Err(cilium_cmp_render::versions::UnknownVersion {
            requested: name.to_string(),
        })
        .context("--cilium-version")?,
        other => other.as_ref().map(ToString::to_string),
    };
    let members = fleet::load_repo(&root, version.as_deref())?;
    let mut report = fleet::report(&members);
    if !a.folders.is_empty() {
        let mut wanted = Vec::new();
        for dir in &a.folders {
            // A folder argument that names no member is the user's slip (usage.folder), as
            // the other commands' folder arguments are.
            let real = dir.canonicalize().map_err(|e| {
                UsageError::Folder(format!(
                    "cannot open the application folder {}: {}",
                    dir.display(),
                    cilium_cmp_yaml::limits::io_reason(&e)
                ))
            })?;
            let i = members
                .iter()
                .position(|m| root.join(&m.folder).canonicalize().ok().as_ref() == Some(&real))
                .ok_or_else(|| {
                    UsageError::Folder(format!(
                        "{} is not an application folder (holding cilium-cmp.yaml) under the repository root {}",
                        dir.display(),
                        root.display()
                    ))
                })?;
            wanted.push(members[i].folder.clone());
        }
        report.meshes.retain(|m| {
            m.members
                .iter()
                .any(|&i| wanted.contains(&members[i].folder))
        });
        report.findings.retain(|f| {
            f.places.iter().any(|p| {
                report
                    .meshes
                    .iter()
                    .any(|m| m.members.iter().any(|&i| members[i].folder == p.folder))
                    || wanted.contains(&p.folder)
            })
        });
    }
    let out = match a.output.as_str() {
        "json" => fleet::report::json(&members, &report),
        _ => fleet::report::text(&members, &report),
    };
    write_stdout(&out)?;
    Ok(if report.findings.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(super::FINDINGS)
    })
}
