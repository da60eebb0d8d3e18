//! The command line's flags and subcommands (clap), with the examples `--help` shows.
//!
//! The flags several commands share are declared once (`SetArgs`, `ClusterArgs`) and flattened
//! into each command, so a flag has one name, one short form and one help text everywhere.

use std::path::PathBuf;

use clap::{Parser, Subcommand};

use cilium_cmp_render::kube_version::{ApiVersions, KubeVersion};
use cilium_cmp_render::render::{DEFAULT_KUBE_VERSION, DEFAULT_NAMESPACE};
use cilium_cmp_render::versions::{Release, UnknownVersion};

/// `--cilium-version`, read once: a listed release, or a newer one rendered from its archive.
/// A bad one is bad input (status 1, with the releases there are), not a usage error:
/// `usage::bad_input` finds this error inside clap's.
fn release(text: &str) -> Result<Release, UnknownVersion> {
    text.parse()
}

/// `--kube-version`, read once in Helm's form (`kube_version`).
fn kube_version(text: &str) -> Result<KubeVersion, cilium_cmp_render::error::RenderError> {
    text.parse()
}

/// `--namespace`, read once: a name the API server takes for a namespace, as the folder's
/// `namespace` setting must be (a render into another would be refused at apply).
fn namespace(text: &str) -> Result<String, String> {
    if cilium_cmp_gitops::argocd::valid_namespace(text) {
        Ok(text.to_string())
    } else {
        Err(format!(
            "{} is {}",
            cilium_cmp_yaml::limits::quoted(text),
            cilium_cmp_gitops::argocd::NOT_A_NAMESPACE
        ))
    }
}

#[derive(Parser)]
#[command(
    name = "cilium-cmp",
    version,
    about = "Render Cilium's Kubernetes manifests like its Helm chart, deterministically",
    // Help wraps to the terminal, and to 100 columns at most (also when it is not a terminal).
    max_term_width = 100,
    after_help = EXIT_STATUS
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    /// How an error is printed on standard error: human (the message, then the line of the
    /// values file at fault with a caret under it) or json (one JSON object per error, for CI
    /// and tools; its fields: docs/diagnostics.md)
    #[arg(long, global = true, value_enum, default_value_t = ErrorFormat::Human)]
    pub error_format: ErrorFormat,
}

/// The forms `--error-format` takes.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorFormat {
    Human,
    Json,
}

/// The `--error-format` the arguments name, read without clap: for an error clap found while
/// parsing them, before it had read every flag. The last one named wins, as clap's would.
pub fn error_format_in(args: impl IntoIterator<Item = std::ffi::OsString>) -> ErrorFormat {
    let mut format = ErrorFormat::Human;
    let mut next_is_value = false;
    for arg in args {
        let arg = arg.to_string_lossy();
        let value = if next_is_value {
            next_is_value = false;
            Some(arg.as_ref())
        } else if arg == "--error-format" {
            next_is_value = true;
            None
        } else {
            arg.strip_prefix("--error-format=")
        };
        match value {
            Some("json") => format = ErrorFormat::Json,
            Some("human") => format = ErrorFormat::Human,
            _ => {}
        }
    }
    format
}

/// The exit status a usage error gets: sysexits.h's EX_USAGE. Not clap's default 2, which
/// `diff` and `fix-values` give a result ("changes found"), so CI cannot take a typo in a flag
/// for a finding.
pub const EX_USAGE: u8 = 64;

pub const EXIT_STATUS: &str = "\
Exit status: 0 success; 1 bad input (a values file, a folder, a release); 64 a usage error (an
unknown flag or subcommand, a bad flag value, a missing argument), in every command. diff and
fix-values exit 2 and 3 for results, talos-check 2 and 3, adopt-check and fleet-check 3 (see each
command's --help).";

/// Helm's `--set` family, in the order Helm applies them after the values files.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct SetArgs {
    /// PATH=VALUE, as Helm's --set (true/false/null and integers are typed); repeatable,
    /// e.g. --set hubble.relay.enabled=true
    #[arg(long)]
    pub set: Vec<String>,
    /// PATH=VALUE whose value is always a string (as Helm's --set-string); repeatable,
    /// e.g. --set-string cluster.name=123
    #[arg(long)]
    pub set_string: Vec<String>,
    /// PATH=JSON whose value is JSON (as Helm's --set-json), or one JSON object merged at the
    /// top; repeatable, e.g. --set-json 'tolerations=[{"operator":"Exists"}]'
    #[arg(long)]
    pub set_json: Vec<String>,
    /// PATH=FILE whose value is the file's content as a string (as Helm's --set-file; `-` reads
    /// standard input); repeatable, e.g. --set-file extraConfig.custom=custom.conf
    #[arg(long)]
    pub set_file: Vec<String>,
}

/// What Argo CD passes about the target cluster (and Helm's flags of the same names). Unset, a
/// folder command takes the folder's `namespace`, `kubeVersion` and `apiVersions` from
/// cilium-cmp.yaml, and where the folder names none, Helm's defaults, as a command without a
/// folder does.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct ClusterArgs {
    /// Release namespace (as Helm's -n; the Application's spec.destination.namespace), e.g.
    /// -n kube-system [default: the folder's `namespace` in cilium-cmp.yaml, else kube-system]
    #[arg(short = 'n', long, value_parser = namespace)]
    pub namespace: Option<String>,
    #[arg(long, help = kube_version_help(), value_parser = kube_version)]
    pub kube_version: Option<KubeVersion>,
    /// API versions the cluster serves, comma-separated, repeatable (as Helm's --api-versions;
    /// Argo CD's KUBE_API_VERSIONS; '' for none), e.g. --api-versions monitoring.coreos.com/v1
    /// [default: the folder's `apiVersions`, else none]
    #[arg(long)]
    pub api_versions: Vec<ApiVersions>,
}

/// `--kube-version`'s help, naming the default the program renders with.
fn kube_version_help() -> String {
    format!(
        "Kubernetes version of the target cluster (as Helm's --kube-version; Argo CD's \
         KUBE_VERSION), e.g. --kube-version 1.33 [default: the folder's `kubeVersion`, else \
         {DEFAULT_KUBE_VERSION}]"
    )
}

impl ClusterArgs {
    /// The namespace of a render without a folder: the flag, else Helm's default.
    pub fn namespace_or_default(&self) -> String {
        self.namespace
            .clone()
            .unwrap_or_else(|| DEFAULT_NAMESPACE.to_string())
    }

    /// The Kubernetes version of a render without a folder: the flag, else Helm's default.
    pub fn kube_version_or_default(&self) -> KubeVersion {
        self.kube_version.clone().unwrap_or_default()
    }

    /// Every `--api-versions` given, as one list.
    pub fn api_versions(&self) -> ApiVersions {
        self.api_versions
            .iter()
            .fold(ApiVersions::default(), |all, one| all.extended(one))
    }

    /// What the folder commands pass on as Argo CD's variables (`FolderRequest`): the Kubernetes
    /// version as given (empty: not given), and each `--api-versions` (none: not given; one
    /// empty: the cluster serves none of the folder's).
    pub fn as_argocd_passes(&self) -> (String, Vec<String>) {
        (
            self.kube_version
                .as_ref()
                .map(|k| k.as_given().to_string())
                .unwrap_or_default(),
            self.api_versions.iter().map(ToString::to_string).collect(),
        )
    }
}

/// `--chart-archive`'s help for the commands that render one release from flags.
pub const CHART_ARCHIVE_HELP: &str = "The official chart archive cilium-VERSION.tgz (or an \
unpacked chart folder, or a folder holding cilium-VERSION.tgz), for the files bundled in the \
chart (scripts, dashboards), e.g. --chart-archive cilium-1.20.0.tgz [default: the one `cilium-cmp \
chart fetch` stored, when the values need it]";

/// `--chart-archive`'s help for the commands that render folders (each its own release).
pub const CHART_FOLDER_HELP: &str = "Folder holding the official cilium-VERSION.tgz archives (or \
one such archive: its folder is used) [default: $CILIUM_CMP_CHART_DIR, else \
/opt/cilium-cmp/charts where it exists, else ~/.cache/cilium-cmp/charts, where `cilium-cmp chart \
fetch` stores them]";

#[derive(clap::Args, Debug, Clone)]
#[command(after_help = RENDER_EXAMPLES)]
pub struct RenderArgs {
    /// Cilium release to render (see `cilium-cmp versions`), e.g. --cilium-version 1.20.0
    #[arg(long, required = true, value_parser = release)]
    pub cilium_version: Option<Release>,
    /// Values file; repeat to merge several, later files win (as Helm's -f). `-f -` reads
    /// standard input (once), e.g. -f values.yaml -f prod.yaml
    #[arg(short = 'f', long = "values")]
    pub values: Vec<PathBuf>,
    #[command(flatten)]
    pub set: SetArgs,
    #[command(flatten)]
    pub cluster: ClusterArgs,
    #[arg(long, help = CHART_ARCHIVE_HELP, value_name = "PATH")]
    pub chart_archive: Option<PathBuf>,
    /// Warn about values the chart does not know (typos, values of other releases, the earlier
    /// occurrence of a key written twice) instead of refusing them, rendering as Helm does; for
    /// migrating old values files
    #[arg(long)]
    pub allow_unknown_keys: bool,
}

/// `render`: the render inputs, and where the manifests go. (adopt-check shares the inputs but
/// not this flag: its `--output` is a report format.)
#[derive(clap::Args, Debug, Clone)]
pub struct RenderCommand {
    #[command(flatten)]
    pub inputs: RenderArgs,
    /// Write the render to FILE instead of stdout, only when the whole render succeeded (the
    /// file is replaced whole or left as it was, keeping its mode and owner), e.g. -o cilium.yaml
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    #[arg(long, help = FORCE_HELP, requires = "output")]
    pub force: bool,
}

/// `--force`, the same for every command that replaces a user's file (`-o`, `lock`,
/// `fix-values`): `replace_file`'s `Force::Yes`, which replaces the name and never writes
/// through it.
pub const FORCE_HELP: &str = "Replace a file that is a symbolic link (the link becomes a regular \
file; the file it points to is left as it is), has other hard links (only this name gets the new \
content) or is read-only (the new file is read-only too); without it such a file is refused";

pub const RENDER_EXAMPLES: &str = "\
Examples:
  cilium-cmp render --cilium-version 1.20.0 -f values.yaml -o cilium.yaml
  cat values.yaml | cilium-cmp render --cilium-version 1.20.0 -f - --set-string cluster.name=123
  cilium-cmp render --cilium-version 1.20.0 --set-json 'tolerations=[{\"operator\":\"Exists\"}]'

Helm's order applies whatever the order on the command line: values files, then --set-json,
--set, --set-string and --set-file.";

/// An application folder rendered outside Argo CD with the inputs Argo CD would pass.
#[derive(clap::Args, Debug, Clone)]
pub struct FolderArgs {
    /// The application folder (holding cilium-cmp.yaml), as Argo CD's `spec.source.path`
    pub app_dir: PathBuf,
    #[arg(long, help = REPO_ROOT_HELP, value_name = "DIR")]
    pub repo_root: Option<PathBuf>,
    #[command(flatten)]
    pub cluster: ClusterArgs,
    /// Cilium version, overriding the folder's ciliumVersion (as the cilium-version parameter)
    #[arg(long, value_parser = release)]
    pub cilium_version: Option<Release>,
    /// Extra values file relative to the application folder, merged after the folder's own
    /// (as the values-files parameter); repeatable
    #[arg(short = 'f', long = "values")]
    pub values: Vec<String>,
    /// PATH=VALUE, applied after all values files (as the set parameter); repeatable
    #[arg(long)]
    pub set: Vec<String>,
    #[arg(long, alias = "chart-dir", help = CHART_FOLDER_HELP, value_name = "PATH")]
    pub chart_archive: Option<PathBuf>,
    /// Warn about values the chart does not know instead of refusing them (the plugin in Argo CD
    /// follows only the folder's `allowUnknownKeys: true` in cilium-cmp.yaml)
    #[arg(long)]
    pub allow_unknown_keys: bool,
}

/// `--repo-root`'s help, for every command that reads application folders.
pub const REPO_ROOT_HELP: &str = "The repository root: values files may not leave it, and folders are named from it [default: the top level of the git work tree holding the current folder (the nearest folder upwards holding .git, found without running git), else the current folder]";

/// `render-folder` and `lock`: Argo CD's settings that decide what it applies.
#[derive(clap::Args, Debug, Clone)]
pub struct ArgocdSettingsArgs {
    /// Argo CD's argocd-cm ConfigMap (YAML): name on stderr the rendered objects its
    /// resource.exclusions / resource.inclusions keep Argo CD from applying [default: Argo CD 3.0
    /// or later with its default exclusions]
    #[arg(long, value_name = "FILE")]
    pub argocd_cm: Option<PathBuf>,
}

/// `adopt-check`: the render's inputs (as `render`, or an application folder) and live dumps.
#[derive(clap::Args, Debug, Clone)]
pub struct AdoptCheckArgs {
    #[command(flatten)]
    pub render: RenderArgs,
    /// Render this application folder as the plugin does instead (its cilium-cmp.yaml names the
    /// version and values files; --cilium-version, -f (relative to the folder) and --set then
    /// override as the plugin's parameters do)
    #[arg(long, value_name = "DIR")]
    pub folder: Option<PathBuf>,
    /// With --folder: the repository root (values files may not leave it) [default: the top
    /// level of the git work tree holding the current folder, else the current folder]
    #[arg(long, requires = "folder", value_name = "DIR")]
    pub repo_root: Option<PathBuf>,
    /// A dump of the live objects: `helm get manifest RELEASE -n NS` or `kubectl get -n NS -o
    /// yaml KINDS` (or `-A`: other namespaces' objects are left alone); `-` reads stdin;
    /// repeatable
    #[arg(long, required = true, value_name = "FILE")]
    pub live: Vec<PathBuf>,
    /// Helm release name, to recognise the release's objects by Helm's annotations
    #[arg(long, default_value = "cilium")]
    pub release: String,
    /// Report format: text for people, json for scripts (shape in docs/adopt-check.md)
    #[arg(long, default_value = "text", value_parser = ["text", "json"])]
    pub output: String,
    /// The Argo CD Application that will sync the folder (YAML): with ServerSideApply=true its
    /// client-side-apply migration (on unless ClientSideApplyMigration=false; the manager named by
    /// the argocd.argoproj.io/client-side-apply-migration-manager annotation, default
    /// kubectl-client-side-apply) decides which left-behind fields the first sync removes; an
    /// object another Application tracks is not this one's to prune
    #[arg(long, value_name = "FILE")]
    pub argocd_application: Option<PathBuf>,
    /// Argo CD's argocd-cm ConfigMap (YAML): name on stderr the rendered objects its
    /// resource.exclusions / resource.inclusions keep Argo CD from applying, and read its
    /// application.resourceTrackingMethod (which live objects Argo CD tracks, the only ones it
    /// prunes) [default: Argo CD 3.0 or later with its default exclusions and annotation
    /// tracking]
    #[arg(long, value_name = "FILE")]
    pub argocd_cm: Option<PathBuf>,
}

/// `fix-values`: the values files to edit, and how.
#[derive(clap::Args, Debug, Clone)]
pub struct FixValuesArgs {
    /// Cilium release the files are for (see `cilium-cmp versions`), e.g. --cilium-version 1.20.0
    #[arg(long, value_parser = release)]
    pub cilium_version: Release,
    /// Print the changes as a unified diff on stdout and write nothing
    #[arg(long)]
    pub dry_run: bool,
    /// For an upgrade: move each value the release renamed to its new name (e.g.
    /// encryption.strictMode.enabled to encryption.strictMode.egress.enabled in 1.20), so it keeps
    /// applying; the render then changes, and what changes is printed
    #[arg(long)]
    pub apply_renames: bool,
    #[arg(long, help = CHART_ARCHIVE_HELP, value_name = "PATH")]
    pub chart_archive: Option<PathBuf>,
    /// The other render inputs, as render takes them: the check renders the files with them
    #[command(flatten)]
    pub set: SetArgs,
    #[command(flatten)]
    pub cluster: ClusterArgs,
    /// The values files, in the order they are rendered (as render's -f)
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    #[arg(long, help = FORCE_HELP, conflicts_with = "dry_run")]
    pub force: bool,
}

pub const FIX_VALUES_EXAMPLES: &str = "\
Examples:
  cilium-cmp fix-values --cilium-version 1.20.0 --dry-run values.yaml
  cilium-cmp fix-values --cilium-version 1.20.0 values.yaml prod.yaml
  cilium-cmp fix-values --cilium-version 1.20.0 --apply-renames values.yaml";
/// `diff`: two renders of Cilium and what syncing the second over the first does.
#[derive(clap::Args, Debug, Clone)]
pub struct DiffArgs {
    /// An application folder (holding cilium-cmp.yaml), compared with itself at --base
    #[arg(value_name = "FOLDER")]
    pub folder: Option<PathBuf>,
    /// The git revision to compare the work tree with (a branch, tag or commit), e.g. --base
    /// origin/main; with no FOLDER, every application folder of the repository is compared
    #[arg(long, value_name = "REV")]
    pub base: Option<String>,
    /// The git work tree --base reads (its top level, holding `.git`); FOLDER must lie inside it,
    /// and without FOLDER all its application folders are compared. The repository is never
    /// looked up from FOLDER [default: the git work tree holding the current folder]
    #[arg(long, value_name = "DIR")]
    pub repo_root: Option<PathBuf>,
    /// Without FOLDER or --base: the Cilium release of the new render, e.g. --cilium-version 1.20.0
    #[arg(long, value_parser = release)]
    pub cilium_version: Option<Release>,
    /// The Cilium release of the old render [default: --cilium-version], e.g. --from-version 1.19.6
    #[arg(long, value_parser = release)]
    pub from_version: Option<Release>,
    /// Values file of the new render; repeatable (as Helm's -f)
    #[arg(short = 'f', long = "values")]
    pub values: Vec<PathBuf>,
    /// Values file of the old render; repeatable [default: the files of -f]
    #[arg(long)]
    pub from_values: Vec<PathBuf>,
    /// PATH=VALUE of the new render only (as Helm's --set; the old render has --from-set);
    /// repeatable
    #[arg(long)]
    pub set: Vec<String>,
    /// PATH=VALUE of the old render; repeatable [default: none; repeat a --set here to apply it
    /// to both sides]
    #[arg(long)]
    pub from_set: Vec<String>,
    #[command(flatten)]
    pub cluster: ClusterArgs,
    #[arg(long = "chart-archive", alias = "chart-dir", help = CHART_FOLDER_HELP, value_name = "PATH")]
    pub chart_dir: Option<PathBuf>,
    /// Warn about values the chart does not know instead of refusing them
    #[arg(long)]
    pub allow_unknown_keys: bool,
    /// Report format: text for people, markdown for a pull-request comment, json for scripts
    /// (versioned: {"ciliumCmpDiff": 1, ...})
    #[arg(long, default_value = "text", value_parser = ["text", "markdown", "json"])]
    pub output: String,
}

pub const DIFF_HELP: &str = "\
Examples:
  cilium-cmp diff examples/argocd/cilium --base origin/main
  cilium-cmp diff --base origin/main --output markdown > diff.md
  cilium-cmp diff --cilium-version 1.20.0 --from-version 1.19.6 -f values.yaml
  cilium-cmp diff --cilium-version 1.20.0 -f new.yaml --from-values old.yaml
  cilium-cmp diff --cilium-version 1.20.0 -f values.yaml --set debug.enabled=true

-f files are both sides' unless --from-values is given; --set is the new side's only (the old
side has --from-set). Two sides with the same inputs are refused (exit 1).

Exit status: 0 nothing changes; 2 objects change without consequences; 3 something restarts,
is pruned, loses a permission, may hang at start, or a value the new release renamed is set;
1 bad input; 64 a usage error (an unknown flag, a bad flag value such as --output markdwn).";

/// `fleet-check`: the repository, the folders to report on, the format.
#[derive(clap::Args, Debug, Clone)]
pub struct FleetCheckArgs {
    /// Report only the meshes these application folders belong to [default: every mesh]; the
    /// whole repository is read either way, to find their peers
    pub folders: Vec<PathBuf>,
    #[arg(long, help = REPO_ROOT_HELP, value_name = "DIR")]
    pub repo_root: Option<PathBuf>,
    /// Cilium version for folders whose cilium-cmp.yaml names none (their Applications pass the
    /// cilium-version parameter), e.g. --cilium-version 1.20.0
    #[arg(long, value_parser = release)]
    pub cilium_version: Option<Release>,
    /// Report format: text for people, json for scripts (versioned)
    #[arg(long, default_value = "text", value_parser = ["text", "json"])]
    pub output: String,
}

#[derive(Subcommand)]
pub enum Command {
    /// Render the manifests to stdout (`template` is an alias, as in Helm)
    #[command(visible_alias = "template")]
    Render(RenderCommand),
    /// List the supported Cilium versions, one per line
    Versions,
    /// Check a rendered stream's content hash (reads a file, or stdin when FILE is -)
    Verify { file: PathBuf },
    /// Argo CD plugin: render the application folder in the current directory from Argo CD's
    /// environment (ARGOCD_APP_NAMESPACE, KUBE_VERSION, KUBE_API_VERSIONS, ARGOCD_APP_PARAMETERS,
    /// ARGOCD_ENV_*, CILIUM_CMP_CHART_DIR) and check it against the folder's lock
    Generate,
    /// Preview an application folder: print its render to stdout exactly as the plugin would generate it, and say on stderr whether it matches the folder's lock and which objects differ. Writes nothing.
    ///
    /// Example, anywhere in the repository (the folder's cilium-cmp.yaml may name the namespace,
    /// kubeVersion and apiVersions Argo CD passes; the flags override them):
    ///   cilium-cmp render-folder examples/argocd/cilium -n kube-system --kube-version 1.35.0 \
    ///     | kubectl diff --server-side -f -
    #[command(verbatim_doc_comment)]
    RenderFolder {
        #[command(flatten)]
        folder: FolderArgs,
        #[command(flatten)]
        argocd: ArgocdSettingsArgs,
    },
    /// Write an application folder's lock (cilium-cmp.lock) with the content hash of its render, after the render succeeded; prints no render (preview it with render-folder). With --check, write nothing and fail when the lock is missing or stale.
    ///
    /// Examples:
    ///   cilium-cmp lock examples/argocd/cilium -n kube-system --kube-version 1.35.0
    ///   cilium-cmp lock --check examples/argocd/cilium -n kube-system --kube-version 1.35.0
    ///   cilium-cmp lock --check
    ///
    /// With no folder, every application folder of the repository is locked (or, with --check,
    /// checked), each with its own cilium-cmp.yaml's namespace, kubeVersion and apiVersions.
    #[command(
        verbatim_doc_comment,
        mut_arg("app_dir", |a| a
            .required(false)
            .default_value("")
            .hide_default_value(true)
            // The path parser refuses an empty value; the empty default means "every folder".
            .value_parser(clap::builder::ValueParser::new(|s: &str| {
                Ok::<PathBuf, std::convert::Infallible>(PathBuf::from(s))
            })))
    )]
    Lock {
        #[command(flatten)]
        folder: FolderArgs,
        #[command(flatten)]
        argocd: ArgocdSettingsArgs,
        /// Write nothing; exit non-zero when the lock is missing or does not hold the render's
        /// hash (for CI)
        #[arg(long)]
        check: bool,
        #[arg(long, help = FORCE_HELP, conflicts_with = "check")]
        force: bool,
    },
    /// Write an application folder's render as a Talos machine-config patch
    /// (cluster.inlineManifests), byte-identical to what the plugin generates
    TalosPatch {
        #[command(flatten)]
        folder: FolderArgs,
        /// Name of the inline manifest
        #[arg(long, default_value = "cilium")]
        name: String,
        /// Write the patch to this file instead of stdout (replaced whole, or left as it was,
        /// keeping its mode and owner)
        #[arg(short, long, value_name = "FILE")]
        output: Option<PathBuf>,
        #[arg(long, help = FORCE_HELP, requires = "output")]
        force: bool,
    },
    /// Check a Talos machine config against an application folder: is the inline manifest Talos
    /// applies again on every `talosctl upgrade-k8s` the folder's current render (its locked
    /// content hash, byte for byte)? If not, say what differs (release, objects) on stderr and
    /// print the patch that brings it in line (talos-patch's output). Exit status 0: in line, or
    /// no inline manifest of that name; 2: it differs, without consequences; 3: applying it would
    /// restart, prune or downgrade something; 1: bad input or a stale lock; 64: a usage error.
    #[command(after_help = TALOS_CHECK_EXAMPLES)]
    TalosCheck {
        /// The machine config: a file as `talosctl gen config` writes it, or the output of
        /// `talosctl get machineconfig -o yaml` (one document per node); `-` reads standard input
        #[arg(value_name = "MACHINECONFIG")]
        machine_config: PathBuf,
        #[command(flatten)]
        folder: FolderArgs,
        /// Name of the inline manifest
        #[arg(long, default_value = "cilium")]
        name: String,
        /// Write the patch to this file instead of stdout (only when something differs)
        #[arg(short, long, value_name = "FILE")]
        output: Option<PathBuf>,
        #[arg(long, help = FORCE_HELP, requires = "output")]
        force: bool,
    },
    /// Edit values files so that they render without --allow-unknown-keys: remove every value
    /// the release does not know (it does nothing), leaving a comment where one looks like a typo
    /// of a real value. The render of the edited files is checked to be byte for byte the one
    /// --allow-unknown-keys gives for the files as they were before anything is written. Only
    /// the lines of removed or moved keys change. Exit status 0: nothing to fix; 2: files were
    /// (with --dry-run: would be) changed; 1: bad input, or a file that cannot be edited by lines
    /// (its change is printed as a patch and nothing is written); 64: a usage error (an unknown flag
    /// such as --dryrun).
    #[command(after_help = FIX_VALUES_EXAMPLES)]
    FixValues(FixValuesArgs),
    /// Turn an Argo CD Application of Cilium's Helm chart into an application folder of this
    /// plugin (DIR/cilium-cmp.yaml, DIR/values.yaml with the merged values) and print the new
    /// Application, which renders that folder with the plugin
    #[command(after_help = IMPORT_EXAMPLES)]
    ImportApplication(ImportApplicationArgs),
    /// Print a shell completion script, e.g. `cilium-cmp completions bash >
    /// /etc/bash_completion.d/cilium-cmp` or `cilium-cmp completions zsh > ~/.zfunc/_cilium-cmp`
    Completions {
        /// bash, zsh, fish, powershell or elvish
        shell: clap_complete::Shell,
    },
    /// Before switching a running Cilium to cilium-cmp: compare the render with dumps of the
    /// live objects and say what the first sync would change, restart, create and prune.
    /// Exit status 0: nothing restarts, is pruned or is left behind; 3: something would, expected
    /// differences of the move included; 1: bad input; 64: a usage error.
    // In folder mode the version comes from the folder, so the flag is optional here.
    #[command(
        mut_arg("cilium_version", |a| a.required(false)),
        after_help = "Examples:\n  helm get manifest cilium -n kube-system > live.yaml\n  cilium-cmp adopt-check --cilium-version 1.20.0 -f values.yaml --live live.yaml\n  cilium-cmp adopt-check --folder examples/argocd/cilium -n kube-system --live live.yaml --output json"
    )]
    AdoptCheck(AdoptCheckArgs),
    /// Compare two renders (a folder against a git revision, every folder of the repository,
    /// two releases or two sets of values) and say what syncing the change does: what is
    /// created, pruned and changed, which pods restart and how, configuration read only at
    /// start, permissions gained and lost, and for an upgrade the values it renamed and the
    /// defaults it changes.
    #[command(after_help = DIFF_HELP)]
    Diff(DiffArgs),
    /// Check the Cluster Mesh of every application folder in the repository: meshed clusters need unique cluster.name and cluster.id (within maxConnectedClusters), one maxConnectedClusters, peers that exist, pod CIDRs apart and one certificate authority. Exit status 0: no findings; 3: findings; 1: bad input; 64: a usage error.
    ///
    /// Examples, from the repository root:
    ///   cilium-cmp fleet-check
    ///   cilium-cmp fleet-check examples/fleet/clusters/eu-1 --output json
    #[command(verbatim_doc_comment)]
    FleetCheck(FleetCheckArgs),
    /// Print a JSON Schema (draft-07) of a release's values for editors: the chart's types, and only the keys cilium-cmp accepts, so an editor underlines a typo as it is typed.
    ///
    /// Example:
    ///   cilium-cmp schema --cilium-version 1.20.0 > cilium-values.schema.json
    /// then, as the first line of a values file:
    ///   # yaml-language-server: $schema=cilium-values.schema.json
    #[command(verbatim_doc_comment)]
    Schema {
        /// Cilium release (see `cilium-cmp versions`; a newer patch reads its archive from the
        /// chart folder, as `render` does)
        #[arg(long, value_parser = release)]
        cilium_version: Release,
        /// The release's official chart archive cilium-VERSION.tgz (or a folder holding it), for
        /// a release this binary does not list [default: the chart folder `chart fetch` fills]
        #[arg(long, value_name = "PATH")]
        chart_archive: Option<PathBuf>,
    },
    /// The official Cilium chart archives (files bundled in the chart, such as scripts and
    /// dashboards, come from them)
    Chart {
        #[command(subcommand)]
        command: ChartCommand,
    },
    /// Import an official chart archive's defaults, values schema and the value paths its templates
    /// read into the data folder (maintainers; hidden from users' help)
    #[command(hide = true)]
    ImportChart {
        archive: PathBuf,
        #[arg(long, default_value = "data")]
        data_dir: PathBuf,
    },
}

#[derive(Subcommand)]
pub enum ChartCommand {
    /// Download the official cilium-VERSION.tgz, check its sha256 and store it where render,
    /// lock and talos-patch look for it; prints the stored file's path. A release this binary
    /// lists is checked against the sha256 pinned in it; a newer release or a pre-release named
    /// exactly, against its digest in the repository's index.yaml (or --sha256)
    #[command(
        after_help = "Examples:\n  cilium-cmp chart fetch 1.20.0\n  cilium-cmp chart fetch 1.20.0 --dir ./charts --repo https://charts.example/cilium/\n  cilium-cmp chart fetch 1.20.1   (a release this binary does not list: checked against https://helm.cilium.io/index.yaml)\n  cilium-cmp chart fetch 1.21.0-pre.1   (a pre-release: only when named exactly)\n  cilium-cmp chart fetch 1.20.1 --sha256 DIGEST   (the index is not read; DIGEST must match)"
    )]
    Fetch {
        /// Cilium release: one of `cilium-cmp versions`, a newer X.Y.Z, or a pre-release
        /// X.Y.Z-PRE named exactly
        version: String,
        /// Folder to store the archive in [default: $CILIUM_CMP_CHART_DIR, else
        /// /opt/cilium-cmp/charts where it exists, else $XDG_CACHE_HOME/cilium-cmp/charts or
        /// ~/.cache/cilium-cmp/charts]
        #[arg(long)]
        dir: Option<PathBuf>,
        /// Chart repository (a mirror) holding index.yaml and cilium-VERSION.tgz; https, or
        /// http on this machine only [default: $CILIUM_CMP_CHART_REPO, else
        /// https://helm.cilium.io/]
        #[arg(long)]
        repo: Option<String>,
        /// The archive's sha256 (64 hex digits), for a release this binary does not list: the
        /// index is then not read; a listed release's must equal its pin
        #[arg(long)]
        sha256: Option<String>,
    },
}

pub const IMPORT_EXAMPLES: &str = "\
Example:
  kubectl -n argocd get application cilium -o yaml > cilium-app.yaml
  cilium-cmp import-application cilium-app.yaml --to clusters/prod/cilium \\
    --repo-url https://git.example.com/platform/clusters.git --target-revision main \\
    --values-root values=../cluster-config > cilium-app.new.yaml

Values are merged in Argo CD's order: valueFiles, values (or valuesObject), parameters
(forceString ones as --set-string), fileParameters.";

/// `import-application`'s arguments.
#[derive(clap::Args, Debug, Clone)]
pub struct ImportApplicationArgs {
    /// The Application's YAML (`-` reads standard input), e.g. `kubectl -n argocd get
    /// application cilium -o yaml > cilium-app.yaml`
    pub app: PathBuf,
    /// The application folder to write (created; its cilium-cmp.yaml and values.yaml must not
    /// exist yet), e.g. --to clusters/prod/cilium
    #[arg(long, value_name = "DIR")]
    pub to: PathBuf,
    /// The Git repository holding DIR, for the new Application's source, e.g. --repo-url
    /// https://git.example.com/platform/clusters.git
    #[arg(long, value_name = "URL")]
    pub repo_url: String,
    /// DIR's path inside that repository [default: DIR as given, when relative], e.g.
    /// --path clusters/prod/cilium
    #[arg(long)]
    pub path: Option<String>,
    /// The Git revision the new Application follows [default: Argo CD's HEAD], e.g.
    /// --target-revision main
    #[arg(long)]
    pub target_revision: Option<String>,
    /// A checkout of the repository a `ref` source names, for `$ref/...` valueFiles and
    /// fileParameters: NAME=DIR for `ref: NAME`, or DIR for every ref; repeatable, e.g.
    /// --values-root values=../cluster-config
    #[arg(long, value_name = "[REF=]DIR")]
    pub values_root: Vec<String>,
    /// Keep values the Cilium release does not know in values.yaml (and write
    /// allowUnknownKeys: true in cilium-cmp.yaml) instead of leaving them out; they do
    /// nothing either way
    #[arg(long)]
    pub keep_unknown_keys: bool,
}

const TALOS_CHECK_EXAMPLES: &str = "Examples:
  cilium-cmp talos-check controlplane.yaml clusters/prod/cilium
  talosctl -n 10.5.0.2,10.5.0.3 get machineconfig -o yaml > mc.yaml
  cilium-cmp talos-check mc.yaml clusters/prod/cilium -o cilium-patch.yaml
  talosctl -n 10.5.0.2 patch machineconfig --patch @cilium-patch.yaml";
