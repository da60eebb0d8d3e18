//! `adopt-check`: the render (flags or folder) against dumps of what runs now.

use cilium_cmp::argocd::{self, GenerateError};

use super::args::{AdoptCheckArgs, FolderArgs};
use super::inputs::{folder_request, render_finding_archive};
use super::io::write_stdout;

/// Renders (flags or folder), compares with the live dumps, prints the report; exits 3 when the
/// switch would restart pods or prune objects.
pub fn adopt_check(a: &AdoptCheckArgs) -> anyhow::Result<()> {
    let text = match &a.folder {
        None => {
            if a.render.cilium_version.is_empty() {
                anyhow::bail!("adopt-check needs --cilium-version (or --folder DIR, an application folder naming it)");
            }
            render_finding_archive(&a.render)?
        }
        Some(dir) => {
            if a.render.chart_archive.is_some() {
                anyhow::bail!("with --folder the chart archive comes from $CILIUM_CMP_CHART_DIR (a folder of cilium-VERSION.tgz), as for the plugin; --chart-archive is for the flag form");
            }
            let folder = FolderArgs {
                app_dir: dir.clone(),
                repo_root: a.repo_root.clone(),
                namespace: a.render.namespace.clone(),
                kube_version: a.render.kube_version.clone(),
                api_versions: a.render.api_versions.clone(),
                cilium_version: Some(a.render.cilium_version.clone()).filter(|v| !v.is_empty()),
                values: a
                    .render
                    .values
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect(),
                set: a.render.set.clone(),
                chart_dir: None,
                allow_unknown_keys: a.render.allow_unknown_keys,
            };
            let req = folder_request(&folder);
            argocd::render_folder(&req.env()?, dir, folder.allow_unknown_keys)
                .map_err(GenerateError::on_command_line)?
                .text
        }
    };
    if a.live.len() > cilium_cmp::limits::MAX_LIVE_FILES {
        anyhow::bail!(
            "{} --live files are given; at most {} are allowed",
            a.live.len(),
            cilium_cmp::limits::MAX_LIVE_FILES
        );
    }
    let mut budget = cilium_cmp::limits::MAX_LIVE_TOTAL_BYTES;
    let mut dumps = Vec::new();
    for f in &a.live {
        dumps.push(cilium_cmp::adopt::live::read_dump(f, &mut budget)?);
    }
    let report = cilium_cmp::adopt::check(&text, &dumps, &a.render.namespace, &a.release)?;
    let out = match a.output.as_str() {
        "json" => cilium_cmp::adopt::report::json(&report),
        _ => cilium_cmp::adopt::report::human(&report),
    };
    write_stdout(&out)?;
    if report.disruptive() {
        std::process::exit(3);
    }
    Ok(())
}
