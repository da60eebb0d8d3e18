//! The `cilium-cmp` command line: a thin front end over the library.

// A render allocates tens of thousands of small, short-lived map nodes and strings; mimalloc
// serves them in about 60% of the system allocator's time (see README, "Dependencies").
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Parser, Subcommand};

use cilium_cmp::argocd::{self, FolderRequest, GenerateError, Overrides};
use cilium_cmp::chart::ChartFiles;
use cilium_cmp::chart_fetch::{self, Fetched};
use cilium_cmp::chart_store;
use cilium_cmp::error::{archive_advice, ArchiveHint};
use cilium_cmp::render::{Inputs, DEFAULT_KUBE_VERSION, DEFAULT_NAMESPACE};
use cilium_cmp::RenderError;

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
    /// files bundled in the chart (scripts, dashboards) [default: the one `cilium-cmp chart
    /// fetch` stored, when the values need it]
    #[arg(long)]
    chart_archive: Option<PathBuf>,
    /// Warn about values the chart does not know (typos, values of other releases) instead of
    /// refusing them; for migrating old values files
    #[arg(long)]
    allow_unknown_keys: bool,
}

/// An application folder rendered outside Argo CD with the inputs Argo CD would pass.
#[derive(clap::Args, Debug, Clone)]
struct FolderArgs {
    /// The application folder (holding cilium-cmp.yaml), as Argo CD's `spec.source.path`
    app_dir: PathBuf,
    /// The repository root; values files may not leave it
    #[arg(long, default_value = ".")]
    repo_root: PathBuf,
    /// Release namespace: the Application's spec.destination.namespace
    #[arg(long)]
    namespace: String,
    /// Kubernetes version of the target cluster (Argo CD's KUBE_VERSION)
    #[arg(long)]
    kube_version: String,
    /// API versions the cluster serves, comma-separated, repeatable (Argo CD's KUBE_API_VERSIONS)
    #[arg(long)]
    api_versions: Vec<String>,
    /// Cilium version, overriding the folder's ciliumVersion (as the cilium-version parameter)
    #[arg(long)]
    cilium_version: Option<String>,
    /// Extra values file relative to the application folder, merged after the folder's own
    /// (as the values-files parameter); repeatable
    #[arg(short = 'f', long = "values")]
    values: Vec<String>,
    /// PATH=VALUE, applied after all values files (as the set parameter); repeatable
    #[arg(long)]
    set: Vec<String>,
    /// Folder holding the official cilium-VERSION.tgz archives [default: $CILIUM_CMP_CHART_DIR,
    /// else /opt/cilium-cmp/charts where it exists, else ~/.cache/cilium-cmp/charts, where
    /// `cilium-cmp chart fetch` stores them]
    #[arg(long)]
    chart_dir: Option<PathBuf>,
    /// Warn about values the chart does not know instead of refusing them (the plugin in Argo CD
    /// follows only the folder's `allowUnknownKeys: true` in cilium-cmp.yaml)
    #[arg(long)]
    allow_unknown_keys: bool,
}

#[derive(Subcommand)]
enum Command {
    /// Render the manifests to stdout
    Render(RenderArgs),
    /// List the supported Cilium versions, one per line
    Versions,
    /// Check a rendered stream's content hash (reads a file, or stdin when FILE is -)
    Verify { file: PathBuf },
    /// Argo CD plugin: render the application folder in the current directory from Argo CD's
    /// environment (ARGOCD_APP_NAMESPACE, KUBE_VERSION, KUBE_API_VERSIONS, ARGOCD_APP_PARAMETERS,
    /// ARGOCD_ENV_*, CILIUM_CMP_CHART_DIR) and check it against the folder's lock
    Generate,
    /// Render an application folder as the plugin would, print the render to stdout for review,
    /// and write the folder's lock (cilium-cmp.lock) with its content hash
    Lock(FolderArgs),
    /// Write an application folder's render as a Talos machine-config patch
    /// (cluster.inlineManifests), byte-identical to what the plugin generates
    TalosPatch {
        #[command(flatten)]
        folder: FolderArgs,
        /// Name of the inline manifest
        #[arg(long, default_value = "cilium")]
        name: String,
        /// Write the patch to this file instead of stdout
        #[arg(short, long)]
        output: Option<PathBuf>,
    },
    /// The official Cilium chart archives (files bundled in the chart, such as scripts and
    /// dashboards, come from them)
    Chart {
        #[command(subcommand)]
        command: ChartCommand,
    },
    /// Import an official chart archive's defaults, values schema and the value paths its templates
    /// read into the data folder (maintainers)
    ImportChart {
        archive: PathBuf,
        #[arg(long, default_value = "data")]
        data_dir: PathBuf,
    },
}

#[derive(Subcommand)]
enum ChartCommand {
    /// Download the official cilium-VERSION.tgz of a supported release, check it against the
    /// sha256 pinned in this binary, and store it where render, lock and talos-patch look for it;
    /// prints the stored file's path
    #[command(
        after_help = "Examples:\n  cilium-cmp chart fetch 1.20.0\n  cilium-cmp chart fetch 1.20.0 --dir ./charts --repo https://charts.example/cilium/"
    )]
    Fetch {
        /// Cilium release (see `cilium-cmp versions`)
        version: String,
        /// Folder to store the archive in [default: $CILIUM_CMP_CHART_DIR, else
        /// /opt/cilium-cmp/charts where it exists, else $XDG_CACHE_HOME/cilium-cmp/charts or
        /// ~/.cache/cilium-cmp/charts]
        #[arg(long)]
        dir: Option<PathBuf>,
        /// Chart repository (a mirror) holding cilium-VERSION.tgz; https, or http on this
        /// machine only
        #[arg(long, default_value = cilium_cmp::chart_fetch::DEFAULT_REPO)]
        repo: String,
    },
}

fn main() -> ExitCode {
    // Colour only on a terminal: Argo CD shows the plugin's stderr verbatim.
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
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
        let shown = f.display().to_string();
        let text = cilium_cmp::limits::read_text(f, &shown)?;
        inputs.values_files.push((shown, text));
    }
    inputs.set = a.set.clone();
    inputs.namespace = a.namespace.clone();
    inputs.kube_version = a.kube_version.clone();
    inputs.api_versions = a.api_versions.clone();
    inputs.allow_unknown_keys = a.allow_unknown_keys;
    if let Some(p) = &a.chart_archive {
        inputs.chart = Some(ChartFiles::open(p)?);
    }
    Ok(inputs)
}

fn run() -> anyhow::Result<()> {
    let cli = Cli::parse();
    match cli.command {
        Command::Render(a) => {
            let text = render_finding_archive(&a)?;
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
        Command::Generate => {
            let env = argocd_env()?;
            let dir = std::env::current_dir().context("cannot read the current directory")?;
            let r = argocd::generate(&env, &dir)?;
            write_stdout(&r.text)
        }
        Command::Lock(a) => {
            let req = folder_request(&a);
            let (r, previous) = argocd::update_lock(&req.env()?, &a.app_dir, a.allow_unknown_keys)
                .map_err(GenerateError::on_command_line)?;
            let lock = r
                .generation
                .repo
                .shown(&r.generation.repo.app_dir.join(argocd::LOCK_FILE));
            match previous {
                Some(p) if p == r.hash => tracing::info!("{lock} already holds {}", r.hash),
                Some(p) => tracing::info!(
                    "{lock}: {p} -> {}; review the render, then commit the lock",
                    r.hash
                ),
                None => tracing::info!(
                    "{lock}: wrote {}; review the render, then commit the lock",
                    r.hash
                ),
            }
            write_stdout(&r.text)
        }
        Command::TalosPatch {
            folder,
            name,
            output,
        } => {
            let req = folder_request(&folder);
            let r =
                argocd::generate_allowing(&req.env()?, &folder.app_dir, folder.allow_unknown_keys)
                    .map_err(GenerateError::on_command_line)?;
            let patch = cilium_cmp::talos::inline_manifest_patch(&name, &r.text, &r.hash);
            match output {
                Some(path) => std::fs::write(&path, patch)
                    .with_context(|| format!("cannot write {}", path.display())),
                None => write_stdout(&patch),
            }
        }
        Command::Chart {
            command: ChartCommand::Fetch { version, dir, repo },
        } => {
            let path = match chart_fetch::fetch(&version, &repo, dir.as_deref())? {
                Fetched::Downloaded(path) => {
                    tracing::info!(
                        "downloaded Cilium {version}'s chart archive; it matches its pinned sha256"
                    );
                    path
                }
                Fetched::AlreadyStored(path) => {
                    tracing::info!("Cilium {version}'s chart archive is already stored and matches its pinned sha256");
                    path
                }
            };
            write_stdout(&format!("{}\n", path.display()))
        }
        Command::ImportChart { archive, data_dir } => {
            let v = cilium_cmp::import::import(&archive, &data_dir)?;
            tracing::info!("imported Cilium {v} into {}", data_dir.display());
            Ok(())
        }
    }
}

/// `render`: when the values need a file bundled in the chart and no `--chart-archive` was
/// given, renders again with the archive `chart fetch` stored (checked against its pin); only
/// such values pay for finding and reading it.
fn render_finding_archive(a: &RenderArgs) -> anyhow::Result<String> {
    let mut inputs = render_inputs(a)?;
    match cilium_cmp::render(&inputs) {
        Err(e @ RenderError::NeedsChartArchive { .. }) if a.chart_archive.is_none() => {
            let dir = chart_store::default_dir();
            let version = cilium_cmp::versions::parse(&a.cilium_version)?.to_string();
            let stored = match &dir {
                Some(d) => chart_store::open_stored(d, &version)?,
                None => None,
            };
            let Some(chart) = stored else {
                let searched = dir.map(|d| d.display().to_string());
                anyhow::bail!(archive_advice(&e, &ArchiveHint::RenderFlag { searched }));
            };
            inputs.chart = Some(chart);
            Ok(cilium_cmp::render(&inputs)?)
        }
        other => Ok(other?),
    }
}

/// The variables Argo CD passes to a plugin command; the rest of the sidecar's environment is
/// left out so it cannot change a render.
fn argocd_env() -> anyhow::Result<BTreeMap<String, String>> {
    let mut env = BTreeMap::new();
    for (k, v) in std::env::vars_os() {
        let Some(k) = k.to_str() else { continue };
        if !argocd::is_relevant_var(k) {
            continue;
        }
        let v = v
            .into_string()
            .map_err(|_| anyhow::anyhow!("the environment variable {k} is not valid UTF-8"))?;
        env.insert(k.to_string(), v);
    }
    Ok(env)
}

fn folder_request(a: &FolderArgs) -> FolderRequest {
    FolderRequest {
        app_dir: a.app_dir.clone(),
        repo_root: a.repo_root.clone(),
        namespace: a.namespace.clone(),
        kube_version: a.kube_version.clone(),
        api_versions: a.api_versions.clone(),
        overrides: Overrides {
            cilium_version: a.cilium_version.clone(),
            values_files: a.values.clone(),
            set: a.set.clone(),
        },
        // The commands are run by people: the variable, the image's folder or the user's cache
        // (where `chart fetch` stores archives) is the default for the flag.
        chart_dir: a.chart_dir.clone().or_else(chart_store::default_dir),
    }
}

/// Writes all output at once, only after the render succeeded: never a partial stream.
fn write_stdout(text: &str) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(())
}
