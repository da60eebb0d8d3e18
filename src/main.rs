//! The `cilium-cmp` command line: a thin front end over the library.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Parser, Subcommand};

use cilium_cmp::chart::ChartFiles;
use cilium_cmp::render::{Inputs, DEFAULT_KUBE_VERSION, DEFAULT_NAMESPACE};

#[derive(Parser)]
#[command(
    name = "cilium-cmp",
    version,
    about = "Render Cilium's Kubernetes manifests like its Helm chart, deterministically"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Args, Debug, Clone)]
struct RenderArgs {
    /// Cilium release to render (see `cilium-cmp versions`)
    #[arg(long)]
    cilium_version: String,
    /// Values file; repeat to merge several, later files win (as Helm's -f)
    #[arg(short = 'f', long = "values")]
    values: Vec<PathBuf>,
    /// PATH=VALUE, as Helm's --set; repeatable
    #[arg(long)]
    set: Vec<String>,
    /// Release namespace
    #[arg(long, default_value = DEFAULT_NAMESPACE)]
    namespace: String,
    /// Kubernetes version of the target cluster (as Helm's --kube-version)
    #[arg(long, default_value = DEFAULT_KUBE_VERSION)]
    kube_version: String,
    /// API versions the cluster serves, comma-separated, repeatable (as Helm's --api-versions)
    #[arg(long)]
    api_versions: Vec<String>,
    /// The official chart archive cilium-VERSION.tgz (or an unpacked chart folder), for the
    /// files bundled in the chart (scripts, dashboards)
    #[arg(long)]
    chart_archive: Option<PathBuf>,
}

#[derive(Subcommand)]
enum Command {
    /// Render the manifests to stdout
    Render(RenderArgs),
    /// List the supported Cilium versions, one per line
    Versions,
    /// Check a rendered stream's content hash (reads a file, or stdin when FILE is -)
    Verify { file: PathBuf },
    /// Import an official chart archive's defaults into the data folder (maintainers)
    ImportChart {
        archive: PathBuf,
        #[arg(long, default_value = "data")]
        data_dir: PathBuf,
    },
}

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_target(false)
        .without_time()
        .init();
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn render_inputs(a: &RenderArgs) -> anyhow::Result<Inputs> {
    let mut inputs = Inputs::new(&a.cilium_version);
    for f in &a.values {
        let text = std::fs::read_to_string(f)
            .with_context(|| format!("cannot read values file {}", f.display()))?;
        inputs.values_files.push((f.display().to_string(), text));
    }
    inputs.set = a.set.clone();
    inputs.namespace = a.namespace.clone();
    inputs.kube_version = a.kube_version.clone();
    inputs.api_versions = a.api_versions.clone();
    if let Some(p) = &a.chart_archive {
        inputs.chart = Some(ChartFiles::open(p)?);
    }
    Ok(inputs)
}

fn run() -> anyhow::Result<()> {
    let cli = Cli::parse();
    match cli.command {
        Command::Render(a) => {
            let inputs = render_inputs(&a)?;
            let text = cilium_cmp::render(&inputs)?;
            write_stdout(&text)
        }
        Command::Versions => {
            let list: String = cilium_cmp::versions::supported()
                .map(|v| format!("{v}\n"))
                .collect();
            write_stdout(&list)
        }
        Command::Verify { file } => {
            let text = if file.as_os_str() == "-" {
                std::io::read_to_string(std::io::stdin())?
            } else {
                std::fs::read_to_string(&file)
                    .with_context(|| format!("cannot read {}", file.display()))?
            };
            let (stamped, computed) =
                cilium_cmp::output::verify(&text).map_err(anyhow::Error::msg)?;
            match stamped {
                Some(s) if s == computed => write_stdout(&format!("ok sha256:{computed}\n")),
                Some(s) => anyhow::bail!("content hash mismatch: stamped sha256:{s}, content is sha256:{computed}"),
                None => anyhow::bail!("no cilium-cmp.io/content-hash annotation in the stream (content is sha256:{computed})"),
            }
        }
        Command::ImportChart { archive, data_dir } => {
            let v = cilium_cmp::import::import(&archive, &data_dir)?;
            tracing::info!("imported Cilium {v} into {}", data_dir.display());
            Ok(())
        }
    }
}

/// Writes all output at once, only after the render succeeded: never a partial stream.
fn write_stdout(text: &str) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(())
}
