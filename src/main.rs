//! The `cilium-cmp` command line: a thin front end over the library.

// A render allocates tens of thousands of small, short-lived map nodes and strings; mimalloc
// serves them in about 60% of the system allocator's time (see README, "Dependencies").
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod cli_io;

use std::collections::BTreeMap;
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
use cilium_cmp::setexpr;

use cilium_cmp::RenderError;
use cli_io::{write_stdout, ClosedStdout, Stdin, STDIN_NAME};

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
#[command(after_help = RENDER_EXAMPLES)]
struct RenderArgs {
    /// Cilium release to render (see `cilium-cmp versions`), e.g. --cilium-version 1.20.0
    #[arg(long)]
    cilium_version: String,
    /// Values file; repeat to merge several, later files win (as Helm's -f). `-f -` reads
    /// standard input (once), e.g. -f values.yaml -f prod.yaml
    #[arg(short = 'f', long = "values")]
    values: Vec<PathBuf>,
    /// PATH=VALUE, as Helm's --set (true/false/null and integers are typed); repeatable,
    /// e.g. --set hubble.relay.enabled=true
    #[arg(long)]
    set: Vec<String>,
    /// PATH=VALUE whose value is always a string (as Helm's --set-string); repeatable,
    /// e.g. --set-string cluster.name=123
    #[arg(long)]
    set_string: Vec<String>,
    /// PATH=JSON whose value is JSON (as Helm's --set-json), or one JSON object merged at the
    /// top; repeatable, e.g. --set-json 'tolerations=[{"operator":"Exists"}]'
    #[arg(long)]
    set_json: Vec<String>,
    /// PATH=FILE whose value is the file's content as a string (as Helm's --set-file; `-` reads
    /// standard input); repeatable, e.g. --set-file extraConfig.custom=custom.conf
    #[arg(long)]
    set_file: Vec<String>,
    /// Release namespace, e.g. --namespace cilium
    #[arg(long, default_value = DEFAULT_NAMESPACE)]
    namespace: String,
    /// Kubernetes version of the target cluster (as Helm's --kube-version), e.g. --kube-version 1.33
    #[arg(long, default_value = DEFAULT_KUBE_VERSION)]
    kube_version: String,
    /// API versions the cluster serves, comma-separated, repeatable (as Helm's --api-versions),
    /// e.g. --api-versions monitoring.coreos.com/v1
    #[arg(long)]
    api_versions: Vec<String>,
    /// The official chart archive cilium-VERSION.tgz (or an unpacked chart folder), for the
    /// files bundled in the chart (scripts, dashboards), e.g. --chart-archive cilium-1.20.0.tgz
    /// [default: the one `cilium-cmp chart fetch` stored, when the values need it]
    #[arg(long)]
    chart_archive: Option<PathBuf>,
    /// Warn about values the chart does not know (typos, values of other releases) instead of
    /// refusing them; for migrating old values files
    #[arg(long)]
    allow_unknown_keys: bool,
}

/// `render`: the render inputs, and where the manifests go. (adopt-check shares the inputs but
/// not this flag: its `--output` is a report format.)
#[derive(clap::Args, Debug, Clone)]
struct RenderCommand {
    #[command(flatten)]
    inputs: RenderArgs,
    /// Write the render to FILE instead of stdout, only when the whole render succeeded (the
    /// file is replaced whole or left as it was), e.g. -o cilium.yaml
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
}

const RENDER_EXAMPLES: &str = "\
Examples:
  cilium-cmp render --cilium-version 1.20.0 -f values.yaml -o cilium.yaml
  cat values.yaml | cilium-cmp render --cilium-version 1.20.0 -f - --set-string cluster.name=123
  cilium-cmp render --cilium-version 1.20.0 --set-json 'tolerations=[{\"operator\":\"Exists\"}]'

Helm's order applies whatever the order on the command line: values files, then --set-json,
--set, --set-string and --set-file.";

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
    Render(RenderCommand),
    /// List the supported Cilium versions, one per line
    Versions,
    /// Check a rendered stream's content hash (reads a file, or stdin when FILE is -)
    Verify { file: PathBuf },
    /// Argo CD plugin: render the application folder in the current directory from Argo CD's
    /// environment (ARGOCD_APP_NAMESPACE, KUBE_VERSION, KUBE_API_VERSIONS, ARGOCD_APP_PARAMETERS,
    /// ARGOCD_ENV_*, CILIUM_CMP_CHART_DIR) and check it against the folder's lock
    Generate,
    /// Preview an application folder: print its render to stdout exactly as the plugin would
    /// generate it, and say on stderr whether it matches the folder's lock and which objects
    /// differ. Writes nothing.
    ///
    /// Example, from the repository root:
    ///   cilium-cmp render-folder clusters/prod/cilium --namespace kube-system --kube-version 1.35.0 | kubectl diff --server-side -f -
    #[command(verbatim_doc_comment)]
    RenderFolder(FolderArgs),
    /// Write an application folder's lock (cilium-cmp.lock) with the content hash of its render,
    /// after the render succeeded; prints no render (preview it with render-folder). With
    /// --check, write nothing and fail when the lock is missing or stale.
    ///
    /// Examples, from the repository root:
    ///   cilium-cmp lock clusters/prod/cilium --namespace kube-system --kube-version 1.35.0
    ///   cilium-cmp lock --check clusters/prod/cilium --namespace kube-system --kube-version 1.35.0
    #[command(verbatim_doc_comment)]
    Lock {
        #[command(flatten)]
        folder: FolderArgs,
        /// Write nothing; exit non-zero when the lock is missing or does not hold the render's
        /// hash (for CI)
        #[arg(long)]
        check: bool,
    },
    /// Write an application folder's render as a Talos machine-config patch
    /// (cluster.inlineManifests), byte-identical to what the plugin generates
    TalosPatch {
        #[command(flatten)]
        folder: FolderArgs,
        /// Name of the inline manifest
        #[arg(long, default_value = "cilium")]
        name: String,
        /// Write the patch to this file instead of stdout (replaced whole, or left as it was)
        #[arg(short, long, value_name = "FILE")]
        output: Option<PathBuf>,
    },
    /// Turn an Argo CD Application of Cilium's Helm chart into an application folder of this
    /// plugin (DIR/cilium-cmp.yaml, DIR/values.yaml with the merged values) and print the new
    /// Application, which renders that folder with the plugin
    #[command(after_help = IMPORT_EXAMPLES)]
    ImportApplication {
        /// The Application's YAML (`-` reads standard input), e.g. `kubectl -n argocd get
        /// application cilium -o yaml > cilium-app.yaml`
        app: PathBuf,
        /// The application folder to write (created; its cilium-cmp.yaml and values.yaml must not
        /// exist yet), e.g. --to clusters/prod/cilium
        #[arg(long, value_name = "DIR")]
        to: PathBuf,
        /// The Git repository holding DIR, for the new Application's source, e.g. --repo-url
        /// https://git.example.com/platform/clusters.git
        #[arg(long, value_name = "URL")]
        repo_url: String,
        /// DIR's path inside that repository [default: DIR as given, when relative], e.g.
        /// --path clusters/prod/cilium
        #[arg(long)]
        path: Option<String>,
        /// The Git revision the new Application follows [default: Argo CD's HEAD], e.g.
        /// --target-revision main
        #[arg(long)]
        target_revision: Option<String>,
        /// A checkout of the repository a `ref` source names, for `$ref/...` valueFiles and
        /// fileParameters: NAME=DIR for `ref: NAME`, or DIR for every ref; repeatable, e.g.
        /// --values-root values=../cluster-config
        #[arg(long, value_name = "[REF=]DIR")]
        values_root: Vec<String>,
    },
    /// Print a shell completion script, e.g. `cilium-cmp completions bash >
    /// /etc/bash_completion.d/cilium-cmp` or `cilium-cmp completions zsh > ~/.zfunc/_cilium-cmp`
    Completions {
        /// bash, zsh, fish, powershell or elvish
        shell: clap_complete::Shell,
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
    /// Print a JSON Schema (draft-07) of a release's values for editors: the chart's types, and
    /// only the keys cilium-cmp accepts, so an editor underlines a typo as it is typed.
    ///
    /// Example:
    ///   cilium-cmp schema --cilium-version 1.20.0 > cilium-values.schema.json
    /// then, as the first line of a values file:
    ///   # yaml-language-server: $schema=cilium-values.schema.json
    #[command(verbatim_doc_comment)]
    Schema {
        /// Cilium release (see `cilium-cmp versions`)
        #[arg(long)]
        cilium_version: String,
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
        // The reader of stdout went away (`| head`): nothing to report, see `ClosedStdout`.
        Err(e) if e.is::<ClosedStdout>() => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn render_inputs(a: &RenderArgs) -> anyhow::Result<Inputs> {
    let mut stdin = Stdin::default();
    let mut inputs = Inputs::new(&a.cilium_version);
    for f in &a.values {
        let shown = f.display().to_string();
        let text = if cli_io::is_stdin(&shown) {
            (STDIN_NAME.to_string(), stdin.read("-f -")?)
        } else {
            let text = cilium_cmp::limits::read_text(f, &shown)?;
            (shown, text)
        };
        inputs.values_files.push(text);
    }
    inputs.set = a.set.clone();
    inputs.set_args.json = a.set_json.clone();
    inputs.set_args.string = a.set_string.clone();
    inputs.set_args.file = a.set_file.clone();
    for expr in &a.set_file {
        let names = setexpr::file_names(expr)
            .map_err(|m| anyhow::anyhow!("--set-file {}: {m}", cilium_cmp::limits::quoted(expr)))?;
        for name in names {
            if inputs.set_args.files.contains_key(&name) {
                continue;
            }
            let text = if cli_io::is_stdin(&name) {
                stdin.read("--set-file with '-'")?
            } else {
                cilium_cmp::limits::read_text(std::path::Path::new(&name), &name)
                    .with_context(|| format!("--set-file {}", cilium_cmp::limits::quoted(expr)))?
            };
            inputs.set_args.files.insert(name, text);
        }
    }
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
            let text = render_finding_archive(&a.inputs)?;
            match &a.output {
                Some(path) => cli_io::write_file(path, &text),
                None => write_stdout(&text),
            }
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
        Command::RenderFolder(a) => {
            let req = folder_request(&a);
            let p = argocd::preview::preview(&req.env()?, &a.app_dir, a.allow_unknown_keys)
                .map_err(GenerateError::on_command_line)?;
            eprint!("{}", p.summary());
            write_stdout(&p.rendered.text)
        }
        Command::Lock { folder, check } => {
            let req = folder_request(&folder);
            let p =
                argocd::preview::preview(&req.env()?, &folder.app_dir, folder.allow_unknown_keys)
                    .map_err(GenerateError::on_command_line)?;
            if check {
                return match p.state() {
                    argocd::LockState::Fresh => {
                        eprint!("{}", p.summary());
                        Ok(())
                    }
                    argocd::LockState::Missing => anyhow::bail!(
                        "{} does not exist: the folder has no lock to check; write it with\n  {}\nand commit it",
                        p.lock_shown,
                        argocd::reproduce_command(&p.rendered.generation)
                    ),
                    argocd::LockState::Stale { .. } => anyhow::bail!(
                        "the lock is stale (nothing was written):\n{}preview with\n  {}\nthen update the lock with\n  {}",
                        p.summary(),
                        argocd::preview_command(&p.rendered.generation),
                        argocd::reproduce_command(&p.rendered.generation)
                    ),
                };
            }
            let summary = p.summary();
            if p.write_lock()? {
                eprintln!("{summary}{}: written; commit it", p.lock_shown);
            } else {
                eprintln!("{summary}{}: unchanged", p.lock_shown);
            }
            Ok(())
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
                Some(path) => cli_io::write_file(&path, &patch),
                None => write_stdout(&patch),
            }
        }
        Command::ImportApplication {
            app,
            to,
            repo_url,
            path,
            target_revision,
            values_root,
        } => import_application(app, to, repo_url, path, target_revision, values_root),
        Command::Completions { shell } => {
            let mut script = Vec::new();
            clap_complete::generate(
                shell,
                &mut <Cli as clap::CommandFactory>::command(),
                "cilium-cmp",
                &mut script,
            );
            write_stdout(&String::from_utf8_lossy(&script))
        }
        Command::AdoptCheck(a) => adopt_check(&a),
        Command::Schema { cilium_version } => {
            let version = cilium_cmp::versions::parse(&cilium_version)?;
            let schema = cilium_cmp::editor_schema::values_schema(version)
                .with_context(|| format!("no values schema for Cilium {version}"))?;
            write_stdout(&format!("{}\n", serde_json::to_string_pretty(&schema)?))
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

const IMPORT_EXAMPLES: &str = "\
Example:
  kubectl -n argocd get application cilium -o yaml > cilium-app.yaml
  cilium-cmp import-application cilium-app.yaml --to clusters/prod/cilium \\
    --repo-url https://git.example.com/platform/clusters.git --target-revision main \\
    --values-root values=../cluster-config > cilium-app.new.yaml

Values are merged in Argo CD's order: valueFiles, values (or valuesObject), parameters
(forceString ones as --set-string), fileParameters.";

fn import_application(
    app: PathBuf,
    to: PathBuf,
    repo_url: String,
    path: Option<String>,
    target_revision: Option<String>,
    values_root: Vec<String>,
) -> anyhow::Result<()> {
    use cilium_cmp::argocd::from_helm;
    let shown = app.display().to_string();
    let (app_shown, app_text) = if cli_io::is_stdin(&shown) {
        (
            STDIN_NAME.to_string(),
            Stdin::default().read("the Application")?,
        )
    } else {
        let text = cilium_cmp::limits::read_text(&app, &shown)?;
        (shown, text)
    };
    let path = match path {
        Some(p) => p,
        None if to.is_relative() => {
            let p = to.to_string_lossy().replace('\\', "/");
            p.trim_start_matches("./").trim_end_matches('/').to_string()
        }
        None => anyhow::bail!(
            "--to {} is an absolute path: give the folder's path inside the repository with --path",
            to.display()
        ),
    };
    let settings_path = to.join(argocd::SETTINGS_FILE);
    let values_path = to.join(argocd::folder::DEFAULT_VALUES_FILE);
    for p in [&settings_path, &values_path] {
        if p.exists() {
            anyhow::bail!(
                "{} exists already; import-application writes a new application folder: choose another --to",
                p.display()
            );
        }
    }
    let req = from_helm::ImportRequest {
        app_text,
        app_shown,
        ref_roots: from_helm::ref_roots(&values_root).map_err(anyhow::Error::msg)?,
        repo_url,
        target_revision,
        path,
    };
    let imported = from_helm::import(&req)?;
    std::fs::create_dir_all(&to).with_context(|| format!("cannot create {}", to.display()))?;
    cli_io::write_file(&values_path, &imported.values)?;
    cli_io::write_file(&settings_path, &imported.settings)?;
    for w in &imported.warnings {
        tracing::warn!("{w}");
    }
    tracing::info!(
        "wrote {} and {} (Cilium {}); review them, then render with `cilium-cmp lock {} --namespace ... --kube-version ...`",
        settings_path.display(),
        values_path.display(),
        imported.cilium_version,
        to.display()
    );
    write_stdout(&imported.application)
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
