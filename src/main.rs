//! The `cilium-cmp` command line: a thin front end over the library.

// A render allocates tens of thousands of small, short-lived map nodes and strings; mimalloc
// serves them in about 60% of the system allocator's time (see ARCHITECTURE.md,
// "Dependencies, and why").
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod cli;

use std::process::ExitCode;

use anyhow::Context;
use clap::Parser;

use cilium_cmp::argocd::{self, GenerateError};
use cilium_cmp::replace_file::Force;

use cli::args::{ChartCommand, Cli, Command, ErrorFormat};
use cli::inputs::{argocd_env, folder_request, render_finding_archive};
use cli::io::{self as cli_io, write_stdout, ClosedStdout};

fn main() -> ExitCode {
    // Colour only on a terminal, and never with NO_COLOR set (https://no-color.org): Argo CD
    // shows the plugin's stderr verbatim.
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(cli::log::colour())
        .event_format(cli::log::Plain)
        .init();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return cli::usage::exit(e),
    };
    let format = cli.error_format;
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        // The reader of stdout went away (`| head`): nothing to report, see `ClosedStdout`.
        Err(e) if e.is::<ClosedStdout>() => ExitCode::SUCCESS,
        Err(e) => {
            print_error(&e, format);
            ExitCode::FAILURE
        }
    }
}

/// The one place an error is printed: as a diagnostic (its kind and the user's entries it points
/// at, `cilium_cmp::diagnose`), in the form `--error-format` asks for, on standard error.
fn print_error(e: &anyhow::Error, format: ErrorFormat) {
    let chain: Vec<&(dyn std::error::Error + 'static)> = e.chain().collect();
    let d = cilium_cmp::diagnose::diagnose(&chain, format!("{e:#}"));
    match format {
        ErrorFormat::Json => eprintln!("{}", d.to_json()),
        // Errors quote folders, files and values of the repository (a CI log shows them): every
        // piece goes through the escaper before it is laid out, so colours, when on, survive.
        ErrorFormat::Human => eprint!("{}", cli::io::escaped(d).render(cli::log::colour())),
    }
}

fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Render(a) => {
            let text = render_finding_archive(&a.inputs)?;
            match &a.output {
                Some(path) => cli_io::write_file(path, &text, Force::flag(a.force)),
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
                cilium_cmp::limits::check_stdin()
                    .map_err(|e| anyhow::anyhow!("{}: {e}", cli_io::STDIN_NAME))?;
                std::io::read_to_string(std::io::stdin())?
            } else {
                let (f, _) = cilium_cmp::limits::open_regular(&file)
                    .map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))?;
                std::io::read_to_string(f)
                    .with_context(|| format!("cannot read {}", file.display()))?
            };
            // A Talos patch (`talos-patch`) holds the render in its inline manifests: each is
            // checked as the stream it is.
            if let Some(manifests) = cilium_cmp::talos::inline_manifests(&text) {
                return cli::verify::inline_manifests(&manifests);
            }
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
            let r = argocd::generate(&env, &dir);
            // Said before the render or its error: a lock mismatch is often this difference.
            let differs = match &r {
                Ok(r) => r.generation.cluster_differs.clone(),
                Err(_) => argocd::plan(&env, &dir)
                    .map(|g| g.cluster_differs)
                    .unwrap_or_default(),
            };
            for d in differs {
                tracing::warn!(
                    "{}; rendering for what Argo CD passed (update the folder's cilium-cmp.yaml, or the Application, so they agree)",
                    cilium_cmp::escape::message(&d)
                );
            }
            write_stdout(&r?.text)
        }
        Command::RenderFolder { folder: a, argocd } => {
            let req = folder_request(&a);
            let p = argocd::preview::preview(&req.env()?, &a.app_dir, a.allow_unknown_keys)
                .map_err(GenerateError::on_command_line)?;
            eprint!("{}", cilium_cmp::escape::lines(&p.summary()));
            let filter = cli::adopt::argocd_filter(argocd.argocd_cm.as_deref())?;
            cli::adopt::print_exclusions(&filter, &p.rendered.text)?;
            write_stdout(&p.rendered.text)
        }
        Command::Lock {
            folder,
            check,
            force,
            ..
        } if folder.app_dir.as_os_str().is_empty() => {
            if check {
                cli::diff::lock_check_all(&folder)
            } else {
                cli::lock::lock_all(&folder, Force::flag(force))
            }
        }
        Command::Lock {
            folder,
            argocd,
            check,
            force,
        } => {
            let req = folder_request(&folder);
            let p =
                argocd::preview::preview(&req.env()?, &folder.app_dir, folder.allow_unknown_keys)
                    .map_err(GenerateError::on_command_line)?;
            let filter = cli::adopt::argocd_filter(argocd.argocd_cm.as_deref())?;
            cli::adopt::print_exclusions(&filter, &p.rendered.text)?;
            if check {
                return match p.state() {
                    argocd::LockState::Fresh => {
                        eprint!("{}", cilium_cmp::escape::lines(&p.summary()));
                        Ok(())
                    }
                    argocd::LockState::Missing => anyhow::bail!(
                        "{} does not exist: the folder has no lock to check; write it with\n  {}\nand commit it",
                        cilium_cmp::escape::text(&p.lock_shown),
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
            let lock = cilium_cmp::escape::text(&p.lock_shown);
            if p.write_lock(Force::flag(force))? {
                cli::io::say(&format!("{summary}{lock}: written; commit it"));
            } else {
                cli::io::say(&format!("{summary}{lock}: unchanged"));
            }
            Ok(())
        }
        Command::TalosPatch {
            folder,
            name,
            output,
            force,
        } => {
            let req = folder_request(&folder);
            let r =
                argocd::generate_allowing(&req.env()?, &folder.app_dir, folder.allow_unknown_keys)
                    .map_err(GenerateError::on_command_line)?;
            let patch = cilium_cmp::talos::inline_manifest_patch(&name, &r.text, &r.hash);
            match output {
                Some(path) => cli_io::write_file(&path, &patch, Force::flag(force)),
                None => write_stdout(&patch),
            }
        }
        Command::TalosCheck {
            machine_config,
            folder,
            name,
            output,
            force,
        } => cli::talos_check::talos_check(&cli::talos_check::Request {
            machine_config: &machine_config,
            folder: &folder,
            name: &name,
            output: output.as_deref(),
            force,
        }),
        Command::ImportApplication(a) => cli::import_application::import_application(a),
        Command::FixValues(a) => cli::fix_values::fix_values(&a),
        Command::Completions { shell } => {
            let mut script = Vec::new();
            clap_complete::generate(
                shell,
                &mut cli::usage::with_version_candidates(<Cli as clap::CommandFactory>::command()),
                "cilium-cmp",
                &mut script,
            );
            write_stdout(&String::from_utf8_lossy(&script))
        }
        Command::AdoptCheck(a) => cli::adopt::adopt_check(&a),
        Command::Diff(a) => cli::diff::diff(&a),
        Command::FleetCheck(a) => cli::fleet::fleet_check(&a),
        Command::Schema {
            cilium_version,
            chart_archive,
        } => {
            let version = cli::inputs::schema_release(&cilium_version, chart_archive.as_deref())?;
            let schema = cilium_cmp::editor_schema::values_schema(version)
                .with_context(|| format!("no values schema for Cilium {version}"))?;
            write_stdout(&format!("{}\n", serde_json::to_string_pretty(&schema)?))
        }
        Command::Chart {
            command:
                ChartCommand::Fetch {
                    version,
                    dir,
                    repo,
                    sha256,
                },
        } => cli::chart::fetch(&version, dir.as_deref(), repo, sha256.as_deref()),
        Command::ImportChart { archive, data_dir } => {
            let v = cilium_cmp::chart::import::import(&archive, &data_dir)?;
            tracing::info!("imported Cilium {v} into {}", data_dir.display());
            Ok(())
        }
    }
}
