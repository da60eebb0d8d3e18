//! From flags and environment to what the library takes: render inputs, the stored chart
//! archive, Argo CD's variables, a folder request.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::Context;
use cilium_cmp_gitops::refusal::UsageError;

use cilium_cmp_gitops::argocd::{self, FolderRequest, Overrides};
use cilium_cmp_render::chart::obtain::{self, Download};
use cilium_cmp_render::chart::store;
use cilium_cmp_render::chart::ChartFiles;
use cilium_cmp_render::error::RenderError;
use cilium_cmp_render::render::Inputs;
use cilium_cmp_render::setexpr;
use cilium_cmp_render::versions::Release;

use super::args::{ClusterArgs, FolderArgs, RenderArgs, SetArgs};
use super::io::{self as cli_io, Stdin, STDIN_NAME};

pub fn render_inputs(a: &RenderArgs) -> anyhow::Result<Inputs> {
    let mut stdin = Stdin::default();
    let cilium = a
        .cilium_version
        .clone()
        .ok_or_else(|| UsageError::Missing("--cilium-version is needed".into()))?;
    let mut inputs = base_inputs(
        cilium,
        &a.set,
        &a.cluster,
        a.chart_archive.as_deref(),
        &mut stdin,
    )?;
    for f in &a.values {
        let shown = f.display().to_string();
        let text = if cli_io::is_stdin(&shown) {
            (STDIN_NAME.to_string(), stdin.read("-f -")?)
        } else {
            let text = cilium_cmp_yaml::limits::read_text(f, &shown)?;
            (shown, text)
        };
        inputs.values_files.push(text);
    }
    inputs.allow_unknown_keys = a.allow_unknown_keys;
    Ok(inputs)
}

/// The render inputs every command without a folder shares (`render`, `fix-values`): the
/// release, the `--set` family, the cluster and the chart archive; no values files.
pub fn base_inputs(
    cilium: Release,
    set: &SetArgs,
    cluster: &ClusterArgs,
    chart_archive: Option<&Path>,
    stdin: &mut Stdin,
) -> anyhow::Result<Inputs> {
    let mut inputs = Inputs::new(cilium);
    inputs.set = set.set.clone();
    inputs.set_args.json = set.set_json.clone();
    inputs.set_args.string = set.set_string.clone();
    inputs.set_args.file = set.set_file.clone();
    for expr in &set.set_file {
        // The error `--set` gives for the same mistake, with its place in the flag.
        let names = setexpr::file_names(expr).map_err(|message| {
            cilium_cmp_render::values::ValuesError::Set {
                expr: format!("--set-file {}", cilium_cmp_yaml::limits::quoted(expr)),
                message,
            }
        })?;
        for name in names {
            if inputs.set_args.files.contains_key(&name) {
                continue;
            }
            let text = if cli_io::is_stdin(&name) {
                stdin.read("--set-file with '-'")?
            } else {
                cilium_cmp_yaml::limits::read_text(Path::new(&name), &name).with_context(|| {
                    format!("--set-file {}", cilium_cmp_yaml::limits::quoted(expr))
                })?
            };
            inputs.set_args.files.insert(name, text);
        }
    }
    inputs.namespace = cluster.namespace_or_default();
    inputs.kube_version = cluster.kube_version_or_default();
    inputs.api_versions = cluster.api_versions();
    if let Some(p) = chart_archive {
        inputs.chart = Some(open_chart_archive(p, &inputs.cilium.to_string())?);
    }
    Ok(inputs)
}

/// `--chart-archive PATH`: an archive, an unpacked chart, or a folder of archives as `chart
/// fetch` fills one (the flag means the same on every command), whose cilium-VERSION.tgz is read.
pub fn open_chart_archive(path: &Path, cilium_version: &str) -> anyhow::Result<ChartFiles> {
    if path.is_dir() && !path.join("Chart.yaml").exists() {
        let version = cilium_cmp_render::versions::release_number(cilium_version)
            .unwrap_or_else(|| cilium_version.to_string());
        return store::open_stored(path, &version)?.with_context(|| {
            format!(
                "--chart-archive {}: the folder holds neither a chart (Chart.yaml) nor {}",
                path.display(),
                store::archive_name(&version)
            )
        });
    }
    Ok(ChartFiles::open(path)?)
}

/// The archive a render asked for (`RenderError::NoChartArchive`) when no `--chart-archive`
/// was given: the stored one, or on first use the pinned release's, downloaded into the store
/// (`chart::obtain`).
pub fn obtained_archive(version: &str) -> anyhow::Result<ChartFiles> {
    Ok(obtain::obtain(
        version,
        None,
        Download::IfPinned(&super::http::Ureq),
    )?)
}

/// `render`: when the render needs the chart archive and no `--chart-archive` was given,
/// renders again with the stored one (checked against its pin), downloaded first on first use
/// for a pinned release; only renders that ask pay for finding and reading it.
pub fn render_finding_archive(a: &RenderArgs) -> anyhow::Result<String> {
    Ok(inputs_finding_archive(a)?.1)
}

/// `render_finding_archive`, with the inputs that rendered (the archive found included).
pub fn inputs_finding_archive(a: &RenderArgs) -> anyhow::Result<(Inputs, String)> {
    let mut inputs = render_inputs(a)?;
    let text = render_found(a, &mut inputs)?;
    Ok((inputs, text))
}

fn render_found(a: &RenderArgs, inputs: &mut Inputs) -> anyhow::Result<String> {
    match cilium_cmp_render::render::render(inputs) {
        Err(RenderError::NoChartArchive { version }) if a.chart_archive.is_none() => {
            inputs.chart = Some(obtained_archive(&version)?);
            Ok(cilium_cmp_render::render::render(inputs)?)
        }
        // A release this binary does not list: its archive in the chart folder, placed there by
        // the user (or `chart fetch VERSION`), is read with its own facts (`chart::unlisted`).
        Err(RenderError::Version(e))
            if a.chart_archive.is_none() && matches!(inputs.cilium, Release::FromArchive(_)) =>
        {
            let (_, chart) = stored_unlisted(&inputs.cilium.to_string(), e)?;
            inputs.chart = Some(chart);
            Ok(cilium_cmp_render::render::render(inputs)?)
        }
        other => Ok(other?),
    }
}

/// The archive of a release newer than the listed ones, from the chart folder, with its release
/// number; without it, `listed_error` (why the release is not listed) and where it was looked for.
pub fn stored_unlisted(
    requested: &str,
    listed_error: cilium_cmp_render::versions::UnknownVersion,
) -> anyhow::Result<(String, ChartFiles)> {
    let Some(version) = cilium_cmp_render::versions::release_number(requested) else {
        return Err(listed_error.into());
    };
    let dir = store::default_dir();
    let stored = match &dir {
        Some(d) => store::open_stored(d, &version)?,
        None => None,
    };
    let Some(chart) = stored else {
        let searched = dir.map_or(
            "no chart folder (neither CILIUM_CMP_CHART_DIR nor HOME is set)".to_string(),
            |d| format!("{} has no {}", d.display(), store::archive_name(&version)),
        );
        return Err(
            cilium_cmp_gitops::refusal::NotStored(format!("{listed_error} ({searched})")).into(),
        );
    };
    Ok((version, chart))
}

/// The release `schema` describes: a listed one, or an unlisted one read from its archive in the
/// chart folder, as `render` reads it.
pub fn schema_release(
    requested: &Release,
    chart_archive: Option<&Path>,
) -> anyhow::Result<cilium_cmp_render::versions::CiliumVersion> {
    match requested {
        Release::Known(v) => {
            // The schema of a listed release is compiled in, so the archive adds nothing; one
            // named that cannot be read, or of another release, is still a mistake to report.
            if let Some(path) = chart_archive {
                open_chart_archive(path, &v.to_string())?.check_version(&v.to_string())?;
            }
            Ok(*v)
        }
        Release::FromArchive(name) => {
            let name = name.to_string();
            let (version, chart) = match chart_archive {
                Some(path) => (name.clone(), open_chart_archive(path, &name)?),
                None => stored_unlisted(
                    &name,
                    cilium_cmp_render::versions::UnknownVersion {
                        requested: name.clone(),
                    },
                )?,
            };
            Ok(cilium_cmp_render::chart::unlisted::open(&chart, &version)
                .map_err(RenderError::from)?)
        }
    }
}

/// The variables Argo CD passes to a plugin command; the rest of the sidecar's environment is
/// left out so it cannot change a render.
pub fn argocd_env() -> anyhow::Result<BTreeMap<String, String>> {
    let mut env = BTreeMap::new();
    for (k, v) in std::env::vars_os() {
        let Some(k) = k.to_str() else { continue };
        if !argocd::is_relevant_var(k) {
            continue;
        }
        let v = v.into_string().map_err(|_| {
            UsageError::Environment(format!("the environment variable {k} is not valid UTF-8"))
        })?;
        env.insert(k.to_string(), v);
    }
    Ok(env)
}

pub fn folder_request(a: &FolderArgs) -> FolderRequest {
    let (kube_version, api_versions) = a.cluster.as_argocd_passes();
    FolderRequest {
        app_dir: a.app_dir.clone(),
        repo_root: repository_root(a.repo_root.as_deref()),
        // Not given: the folder's cilium-cmp.yaml says (`argocd::plan`).
        namespace: a.cluster.namespace.clone().unwrap_or_default(),
        kube_version,
        api_versions,
        overrides: Overrides {
            cilium_version: a.cilium_version.as_ref().map(ToString::to_string),
            values_files: a.values.clone(),
            set: a.set.clone(),
        },
        // The commands are run by people: the variable, the image's folder or the user's cache
        // (where `chart fetch` stores archives) is the default for the flag.
        chart_dir: a
            .chart_archive
            .as_deref()
            .map(chart_folder)
            .or_else(store::default_dir),
    }
}

/// `--chart-archive` of a folder command: a folder of archives, or one archive, whose folder the
/// plugin then reads (it finds cilium-VERSION.tgz there by the folder's release).
pub fn chart_folder(path: &Path) -> PathBuf {
    if path.is_file() {
        match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        }
    } else {
        path.to_path_buf()
    }
}

/// `repository_root`, resolved: a `--repo-root` that names no folder is the user's slip
/// (usage.folder), not a failure of the system.
pub fn real_repository_root(flag: Option<&Path>) -> anyhow::Result<PathBuf> {
    let given = repository_root(flag);
    let refuse = |why: String| {
        cilium_cmp_gitops::refusal::UsageError::Folder(format!(
            "cannot open the repository root {}: {why}",
            given.display()
        ))
    };
    let real = given
        .canonicalize()
        .map_err(|e| refuse(cilium_cmp_yaml::limits::io_reason(&e)))?;
    if !real.is_dir() {
        return Err(refuse("not a folder".into()).into());
    }
    Ok(real)
}

/// The repository root of the folder commands: `--repo-root`, else the top level of the git work
/// tree holding the current folder, found as git finds it (the nearest folder upwards holding
/// `.git`, a folder or a gitdir file) but without running git, which would read the
/// repository's config (see `git_rev`'s module docs); else, outside any work tree, the current
/// folder.
pub fn repository_root(flag: Option<&Path>) -> PathBuf {
    if let Some(root) = flag {
        return root.to_path_buf();
    }
    let here = PathBuf::from(".");
    let Ok(start) = here.canonicalize() else {
        return here;
    };
    let mut dir = start.as_path();
    loop {
        if std::fs::symlink_metadata(dir.join(".git")).is_ok() {
            return dir.to_path_buf();
        }
        match dir.parent() {
            Some(up) => dir = up,
            None => return here,
        }
    }
}
