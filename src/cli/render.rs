//! The commands that render or describe a release from flags alone: `render`, `versions`,
//! `schema`, `completions`.

use std::process::ExitCode;

use anyhow::Context;

use cilium_cmp_render::replace_file::Force;

use super::args::{Cli, RenderCommand};
use super::inputs::render_finding_archive;
use super::io::{self as cli_io, write_stdout};

/// `render`: the stream to stdout, or whole into `--output`.
pub fn run(a: &RenderCommand) -> anyhow::Result<ExitCode> {
    let text = render_finding_archive(&a.inputs)?;
    match &a.output {
        Some(path) => cli_io::write_file(path, &text, Force::flag(a.force))?,
        None => write_stdout(&text)?,
    }
    Ok(ExitCode::SUCCESS)
}

/// `versions`: the releases compiled in, one a line.
pub fn versions() -> anyhow::Result<ExitCode> {
    let list: String = cilium_cmp_render::versions::supported()
        .map(|v| format!("{v}\n"))
        .collect();
    write_stdout(&list)?;
    Ok(ExitCode::SUCCESS)
}

/// `schema`: the JSON Schema of a release's values for editors.
pub fn schema(
    cilium_version: &cilium_cmp_render::versions::Release,
    chart_archive: Option<&std::path::Path>,
) -> anyhow::Result<ExitCode> {
    let version = super::inputs::schema_release(cilium_version, chart_archive)?;
    let schema = cilium_cmp_render::editor_schema::values_schema(version)
        .with_context(|| format!("no values schema for Cilium {version}"))?;
    write_stdout(&format!("{}\n", serde_json::to_string_pretty(&schema)?))?;
    Ok(ExitCode::SUCCESS)
}

/// `completions SHELL`: clap's completion script, with the releases as candidates.
pub fn completions(shell: clap_complete::Shell) -> anyhow::Result<ExitCode> {
    let mut script = Vec::new();
    clap_complete::generate(
        shell,
        &mut super::usage::with_version_candidates(<Cli as clap::CommandFactory>::command()),
        "cilium-cmp",
        &mut script,
    );
    write_stdout(&String::from_utf8_lossy(&script))?;
    Ok(ExitCode::SUCCESS)
}
