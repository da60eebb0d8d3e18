//! Usage errors (clap's): printed as clap prints them, with Helm users' hints, and ended with
//! `EX_USAGE` (64) in every command, never 2, which `diff` and `fix-values` use for a result.

use std::process::ExitCode;

use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::CommandFactory;

use cilium_cmp_render::versions::UnknownVersion;

use super::args::{Cli, EX_USAGE};

/// Prints `e` and returns the exit status: 0 for `--help` and `--version`, which clap reports
/// as errors too, else `EX_USAGE`.
pub fn exit(e: clap::Error) -> ExitCode {
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            // Help goes to stdout; a closed pipe (`--help | head`) is nothing to report.
            let _ = e.print();
            ExitCode::SUCCESS
        }
        _ => {
            let e = with_helm_hints(e, std::env::args().skip(1));
            let _ = e.print();
            ExitCode::from(EX_USAGE)
        }
    }
}

/// A bad `--cilium-version` or `--kube-version` found while parsing: bad input (status 1, as
/// the exit-status table says: "a release", "a Kubernetes version"), with the library's own
/// message (the releases there are; the form a version takes) and its diagnostic kind, as when
/// the same value comes from cilium-cmp.yaml or Argo CD; not a usage error. clap keeps the value
/// parser's error as its source.
pub fn bad_input(e: &clap::Error) -> Option<anyhow::Error> {
    if e.kind() != ErrorKind::ValueValidation {
        return None;
    }
    let source = std::error::Error::source(e)?;
    if let Some(unknown) = source.downcast_ref::<UnknownVersion>() {
        return Some(anyhow::Error::new(unknown.clone()));
    }
    match source.downcast_ref::<cilium_cmp_render::error::RenderError>()? {
        cilium_cmp_render::error::RenderError::KubeVersion(text) => Some(anyhow::Error::new(
            cilium_cmp_render::error::RenderError::KubeVersion(text.clone()),
        )),
        _ => None,
    }
}

/// Helm names the chart's version `--version`; here it is `--cilium-version` (the program's own
/// `--version` is cilium-cmp's). clap's own guess for `--version` is the closest spelling
/// (`--kube-version`), which is never what a Helm user meant.
pub fn with_helm_hints(mut e: clap::Error, args: impl Iterator<Item = String>) -> clap::Error {
    let unknown = match e.get(ContextKind::InvalidArg) {
        Some(ContextValue::String(s)) => s.clone(),
        _ => return e,
    };
    let flag = unknown.split('=').next().unwrap_or_default();
    if e.kind() != ErrorKind::UnknownArgument || flag != "--version" {
        return e;
    }
    if subcommand_takes(args, "cilium_version") {
        e.insert(
            ContextKind::SuggestedArg,
            ContextValue::String("--cilium-version".into()),
        );
    }
    e
}

/// Whether the subcommand named first among `args` (the words before it being flags) has the
/// argument `id`.
fn subcommand_takes(mut args: impl Iterator<Item = String>, id: &str) -> bool {
    let Some(name) = args.find(|a| !a.starts_with('-')) else {
        return false;
    };
    let cmd = Cli::command();
    cmd.find_subcommand(&name)
        .is_some_and(|sub| sub.get_arguments().any(|a| a.get_id() == id))
}

/// The command as the completion scripts describe it: `--cilium-version` offers the supported
/// releases. Only for the scripts: parsing still takes any release, since a newer one renders
/// from its archive (docs/release-day.md).
pub fn with_version_candidates(cmd: clap::Command) -> clap::Command {
    let versions: Vec<&'static str> = cilium_cmp_render::versions::supported().collect();
    let names: Vec<String> = cmd
        .get_subcommands()
        .filter(|s| s.get_arguments().any(|a| a.get_id() == "cilium_version"))
        .map(|s| s.get_name().to_string())
        .collect();
    let mut cmd = cmd;
    for name in names {
        let versions = versions.clone();
        cmd = cmd.mut_subcommand(name, move |sub| {
            sub.mut_arg("cilium_version", move |a| {
                a.value_parser(clap::builder::PossibleValuesParser::new(versions))
            })
        });
    }
    cmd
}
