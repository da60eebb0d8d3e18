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

use cilium_cmp::argocd::{self, FolderRequest, Overrides};
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
    /// else /opt/cilium-cmp/charts]
    #[arg(long)]
    chart_dir: Option<PathBuf>,
    /// Warn about values the chart does not know instead of refusing them (the plugin in Argo CD
    /// follows only the folder's `allowUnknownKeys: true` in cilium-cmp.yaml)
    #[arg(long)]
    allow_unknown_keys: bool,
}

/// `adopt-check`: the render's inputs (as `render`, or an application folder) and live dumps.
#[derive(clap::Args, Debug, Clone)]
struct AdoptCheckArgs {
    #[command(flatten)]
    render: RenderArgs,
    /// Render this application folder as the plugin does instead (its cilium-cmp.yaml names the
    /// version and values files; --cilium-version, -f (relative to the folder) and --set then
    /// override as the plugin's parameters do)
    #[arg(long, value_name = "DIR")]
    folder: Option<PathBuf>,
    /// With --folder: the repository root (values files may not leave it)
    #[arg(long, default_value = ".", requires = "folder")]
    repo_root: PathBuf,
    /// A dump of the live objects: `helm get manifest RELEASE -n NS` or `kubectl get -n NS -o
    /// yaml KINDS`; `-` reads stdin; repeatable
    #[arg(long, required = true, value_name = "FILE")]
    live: Vec<PathBuf>,
    /// Helm release name, to recognise the release's objects by Helm's annotations
    #[arg(long, default_value = "cilium")]
    release: String,
    /// Report format: text for people, json for scripts (shape in the README)
    #[arg(long, default_value = "text", value_parser = ["text", "json"])]
    output: String,
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
    /// Before switching a running Cilium to cilium-cmp: compare the render with dumps of the
    /// live objects and say what the first sync would change, restart, create and prune.
    /// Exit status 0: nothing restarts or is pruned; 3: something would; 1: bad input.
    // In folder mode the version comes from the folder, so the flag is optional here.
    #[command(
        mut_arg("cilium_version", |a| a.required(false).default_value("").hide_default_value(true)),
        after_help = "Examples:\n  helm get manifest cilium -n kube-system > live.yaml\n  cilium-cmp adopt-check --cilium-version 1.20.0 -f values.yaml --live live.yaml\n  cilium-cmp adopt-check --folder clusters/prod/cilium --namespace kube-system --live live.yaml --output json"
    )]
    AdoptCheck(AdoptCheckArgs),
    /// Import an official chart archive's defaults, values schema and the value paths its templates
    /// read into the data folder (maintainers)
    ImportChart {
        archive: PathBuf,
        #[arg(long, default_value = "data")]
        data_dir: PathBuf,
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
        Command::Generate => {
            let env = argocd_env()?;
            let dir = std::env::current_dir().context("cannot read the current directory")?;
            let r = argocd::generate(&env, &dir)?;
            write_stdout(&r.text)
        }
        Command::Lock(a) => {
            let req = folder_request(&a);
            let (r, previous) = argocd::update_lock(&req.env()?, &a.app_dir, a.allow_unknown_keys)?;
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
                argocd::generate_allowing(&req.env()?, &folder.app_dir, folder.allow_unknown_keys)?;
            let patch = cilium_cmp::talos::inline_manifest_patch(&name, &r.text, &r.hash);
            match output {
                Some(path) => std::fs::write(&path, patch)
                    .with_context(|| format!("cannot write {}", path.display())),
                None => write_stdout(&patch),
            }
        }
        Command::AdoptCheck(a) => adopt_check(&a),
        Command::ImportChart { archive, data_dir } => {
            let v = cilium_cmp::import::import(&archive, &data_dir)?;
            tracing::info!("imported Cilium {v} into {}", data_dir.display());
            Ok(())
        }
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
        // The commands are run by people, so the variable is a default for the flag.
        chart_dir: a
            .chart_dir
            .clone()
            .or_else(|| std::env::var_os(argocd::CHART_DIR_VAR).map(PathBuf::from)),
    }
}

/// Renders (flags or folder), compares with the live dumps, prints the report; exits 3 when the
/// switch would restart pods or prune objects.
fn adopt_check(a: &AdoptCheckArgs) -> anyhow::Result<()> {
    let text = match &a.folder {
        None => {
            if a.render.cilium_version.is_empty() {
                anyhow::bail!("adopt-check needs --cilium-version (or --folder DIR, an application folder naming it)");
            }
            cilium_cmp::render(&render_inputs(&a.render)?)?
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
            argocd::render_folder(&req.env()?, dir, folder.allow_unknown_keys)?.text
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

/// Writes all output at once, only after the render succeeded: never a partial stream.
fn write_stdout(text: &str) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(())
}
