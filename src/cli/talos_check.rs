//! `talos-check`: is the Cilium a Talos machine config re-applies the folder's current render?
//!
//! Talos applies `cluster.inlineManifests` again on every `talosctl upgrade-k8s` and reconcile,
//! and never deletes what it applied (siderolabs/talos#5640), so an inline manifest left behind
//! after the lock moved on rolls Cilium back. The objects are compared with `diff`'s comparison
//! (`cilium_cmp_gitops::diff::diff`), the inline manifest as the old side and the folder's render as the
//! new one: what bringing the machine config in line changes, in `diff`'s words and exit status.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Context;

use cilium_cmp_gitops::argocd::{self, GenerateError, LockState};
use cilium_cmp_gitops::diff::{self, FolderState, Outcome, Section, Side, SideStream, Status};
use cilium_cmp_gitops::refusal::{self, LockError, TalosError};
use cilium_cmp_render::replace_file::Force;
use cilium_cmp_render::talos_config::{self, MachineConfig};
use cilium_cmp_render::versions::CiliumVersion;
use cilium_cmp_yaml::escape;

use super::args::FolderArgs;
use super::inputs::folder_request;
use super::io::{self as cli_io, say, write_stdout};

/// What `talos-check` was asked.
pub struct Request<'a> {
    pub machine_config: &'a Path,
    pub folder: &'a FolderArgs,
    pub name: &'a str,
    pub output: Option<&'a Path>,
    pub force: bool,
}

/// Runs the check; the status is 2 or 3 when something differs (as `diff`'s), after the patch
/// was written.
pub fn run(r: &Request) -> anyhow::Result<ExitCode> {
    let shown_file = escape::text(&r.machine_config.display().to_string());
    let text = read_input(r.machine_config)?;
    let configs = talos_config::read(&text).map_err(|e| TalosError::MachineConfig {
        message: format!("{shown_file}: {}", escape::message(&e)),
        span: refusal::syntax_span(&shown_file, &text, &e),
    })?;

    let req = folder_request(r.folder);
    let p = argocd::preview::preview(&req.env()?, &r.folder.app_dir, r.folder.allow_unknown_keys)
        .map_err(GenerateError::on_command_line)?;
    // The patch must be what Argo CD will accept: a render the lock holds.
    match p.state() {
        LockState::Fresh => {}
        LockState::Missing => return Err(LockError::Missing(format!(
            "{} does not exist: lock the folder first (the inline manifest is checked against the render the lock holds)\n  {}",
            escape::text(&p.lock_shown),
            argocd::reproduce_command(&p.rendered.generation)
        )).into()),
        LockState::Stale { .. } => return Err(LockError::Stale(format!(
            "the folder's lock is stale, so its current render is not decided yet:\n{}review with\n  {}\nand update the lock with\n  {}\nthen check again",
            p.summary(),
            argocd::preview_command(&p.rendered.generation),
            argocd::reproduce_command(&p.rendered.generation)
        )).into()),
    }
    let render = &p.rendered;
    let version = render.generation.inputs.cilium.to_string();
    let namespace = render.generation.inputs.namespace.clone();
    let name = escape::text(r.name);

    let mut worst: Option<Status> = None;
    let mut report = String::new();
    for (i, config) in configs.iter().enumerate() {
        let whose = whose(config, i, configs.len(), &shown_file);
        let Some((_, contents)) = config.inline_manifests.iter().find(|(n, _)| n == r.name) else {
            let names: Vec<String> = config
                .inline_manifests
                .iter()
                .map(|(n, _)| escape::text(n))
                .collect();
            report.push_str(&format!(
                "{whose}: no inline manifest named {name} ({}): Talos applies no Cilium on upgrade-k8s, nothing can roll it back\n",
                if names.is_empty() {
                    "it has none".to_string()
                } else {
                    format!("it has {}", names.join(", "))
                }
            ));
            continue;
        };
        if contents == &render.text {
            report.push_str(&format!(
                "{whose}: inline manifest {name} is the folder's render ({}, Cilium {version})\n",
                render.hash
            ));
            worst = worst.max(Some(Status::Same));
            continue;
        }
        let status = compare(
            contents,
            render,
            &version,
            &namespace,
            &whose,
            &name,
            &mut report,
        )?;
        worst = worst.max(Some(status));
    }
    say(report.trim_end());

    let Some(status) = worst.filter(|s| *s != Status::Same) else {
        return Ok(ExitCode::SUCCESS);
    };
    let patch = cilium_cmp_render::talos::inline_manifest_patch(r.name, &render.text, &render.hash);
    match r.output {
        Some(path) => {
            cli_io::write_file(path, &patch, Force::flag(r.force))?;
            say(&format!(
                "wrote the patch that brings it in line to {}; apply it with `talosctl patch machineconfig --patch @{}` on each node named above",
                escape::text(&path.display().to_string()),
                escape::text(&path.display().to_string())
            ));
        }
        None => {
            say("the patch that brings it in line follows on stdout (talosctl patch machineconfig --patch @FILE)");
            write_stdout(&patch)?;
        }
    }
    Ok(super::exit_code(status.exit_code()))
}

/// Which machine config a line is about: the node, else the file (and its place in it).
fn whose(config: &MachineConfig, i: usize, count: usize, file: &str) -> String {
    match &config.node {
        Some(node) => format!("node {}", escape::text(node)),
        None if count > 1 => format!("{file} (document {})", i + 1),
        None => file.to_string(),
    }
}

/// Reports how the inline manifest `contents` differs from the render; returns the status it
/// amounts to (never `Same`: the bytes differ, which Talos' re-apply would write).
fn compare(
    contents: &str,
    render: &argocd::Rendered,
    version: &str,
    namespace: &str,
    whose: &str,
    name: &str,
    report: &mut String,
) -> anyhow::Result<Status> {
    let new_version: CiliumVersion = cilium_cmp_render::versions::parse(version)
        .map_err(|e| anyhow::anyhow!("{e}"))
        .context("the folder's release")?;
    let inline_release = talos_config::release_of(contents);
    let old_version = inline_release
        .as_deref()
        .and_then(|v| cilium_cmp_render::versions::parse(v).ok())
        .unwrap_or(new_version);
    report.push_str(&format!(
        "{whose}: inline manifest {name} is not the folder's render\n"
    ));
    let release = match &inline_release {
        Some(v) if v == version => format!("  release: Cilium {version} in both\n"),
        Some(v) => format!(
            "  release: Cilium {} in the machine config, Cilium {version} in the folder\n",
            escape::text(v)
        ),
        None => format!("  release: not known for the machine config's (no helm.sh/chart label), Cilium {version} in the folder\n"),
    };
    report.push_str(&release);
    // The content hash says which render it is, and whether it was edited after rendering.
    let hash = match cilium_cmp_render::output::verify(contents) {
        Ok((Some(stamped), computed)) if stamped == computed => {
            format!("  content hash: sha256:{stamped} in the machine config, {} in the lock\n", render.hash)
        }
        Ok((Some(stamped), computed)) => format!(
            "  content hash: stamped sha256:{stamped} in the machine config, but its content hashes to sha256:{computed} (edited after rendering); {} in the lock\n",
            render.hash
        ),
        Ok((None, computed)) => format!(
            "  content hash: none stamped in the machine config (not a cilium-cmp render; its content hashes to sha256:{computed}); {} in the lock\n",
            render.hash
        ),
        Err(e) => return Err(TalosError::InlineManifest(format!(
            "{whose}: inline manifest {name} is not a YAML stream of objects: {}",
            escape::message(&e.to_string())
        )).into()),
    };
    report.push_str(&hash);
    let old = Side {
        label: format!("{whose} inline manifest {name}"),
        version: old_version,
        stream: SideStream::Text(contents.to_string()),
    };
    let new = Side {
        label: "the folder's render".into(),
        version: new_version,
        stream: SideStream::Text(render.text.clone()),
    };
    let d = diff::diff(old, new, namespace, None).map_err(|e| {
        TalosError::InlineManifest(format!(
            "{whose}: inline manifest {name}: {}",
            escape::message(&e)
        ))
    })?;
    let status = d.status().max(Status::Changes);
    if d.objects.is_empty() {
        report
            .push_str("  objects: the same; only the text differs (Talos would still write it)\n");
    }
    let section = Section {
        name: format!("{whose}: from the machine config to the folder's render"),
        outcome: Outcome::Compared {
            state: FolderState::Changed,
            diff: Box::new(d),
        },
    };
    for line in diff::report_text::render(&[section]).lines() {
        report.push_str(&format!("  {line}\n"));
    }
    Ok(status)
}

/// The machine config's text: a regular file, or standard input for `-`, bounded as every
/// input file is.
fn read_input(path: &Path) -> anyhow::Result<String> {
    Ok(if path.as_os_str() == "-" {
        cilium_cmp_yaml::limits::read_stdin(cli_io::STDIN_NAME)?
    } else {
        cilium_cmp_yaml::limits::read_text(path, &path.display().to_string())?
    })
}
