//! The `cilium-cmp` command line: a thin front end over the library.

// What needs unsafe code lives in the library, each use allowed where it is (`chart::shared`).
#![forbid(unsafe_code)]

// A render allocates tens of thousands of small, short-lived map nodes and strings; mimalloc
// serves them in about 60% of the system allocator's time (see ARCHITECTURE.md,
// "Dependencies, and why").
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod cli;

use std::process::ExitCode;

use clap::Parser;

use cilium_cmp_render::replace_file::Force;

use cli::args::{ChartCommand, Cli, Command, ErrorFormat};
use cli::io::ClosedStdout;

fn main() -> ExitCode {
    // The whole command runs on one thread with a render's stack, so the renders it makes run
    // on it too, in the heap its earlier work warmed, not on a thread each (`engine::stack`).
    cilium_cmp_render::engine::stack::on_deep_stack(command).unwrap_or_else(|e| {
        cli::io::to_stderr(&format!("error: {e}\n"));
        ExitCode::FAILURE
    })
}

/// What `main` does, on the render stack.
fn command() -> ExitCode {
    // Colour only on a terminal, and never with NO_COLOR set (https://no-color.org): Argo CD
    // shows the plugin's stderr verbatim.
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(cli::log::colour())
        .event_format(cli::log::Plain)
        .init();
    let (result, format) = match Cli::try_parse() {
        Ok(cli) => {
            let format = cli.error_format;
            (run(cli), format)
        }
        Err(e) => match cli::usage::bad_input(&e) {
            // clap stopped at a bad value, so the flags were not all read: the error format is
            // the one the arguments name, if any.
            Some(bad) => (Err(bad), cli::args::error_format_in(std::env::args_os())),
            None => return cli::usage::exit(e),
        },
    };
    match result {
        Ok(code) => code,
        // The reader of stdout went away (`| head`): nothing to report, see `ClosedStdout`.
        Err(e) if e.is::<ClosedStdout>() => ExitCode::SUCCESS,
        Err(e) => {
            print_error(&e, format);
            ExitCode::FAILURE
        }
    }
}

/// The one place an error is printed: as a diagnostic (its kind and the user's entries it points
/// at, `cilium_cmp_gitops::diagnose`), in the form `--error-format` asks for, on standard error.
fn print_error(e: &anyhow::Error, format: ErrorFormat) {
    let chain: Vec<&(dyn std::error::Error + 'static)> = e.chain().collect();
    let d = cilium_cmp_gitops::diagnose::diagnose(&chain, format!("{e:#}"));
    match format {
        ErrorFormat::Json => cli::io::to_stderr(&format!("{}\n", d.to_json())),
        // Errors quote folders, files and values of the repository (a CI log shows them): every
        // piece goes through the escaper before it is laid out, so colours, when on, survive.
        ErrorFormat::Human => cli::io::to_stderr(&cli::io::escaped(d).render(cli::log::colour())),
    }
}

/// One command, run: its status, or the error `main` prints.
fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    use cli::{adopt, chart, diff, fix_values, fleet, folder, import_application, lock, render};
    match cli.command {
        Command::Render(a) => render::run(&a),
        Command::Versions => render::versions(),
        Command::Verify { file } => cli::verify::run(&file),
        Command::Generate => folder::generate(),
        Command::RenderFolder { folder: a, argocd } => folder::render_folder(&a, &argocd),
        // No folder: every application folder of the repository.
        Command::Lock {
            folder,
            check: true,
            ..
        } if folder.app_dir.as_os_str().is_empty() => diff::lock_check_all(&folder),
        Command::Lock { folder, force, .. } if folder.app_dir.as_os_str().is_empty() => {
            lock::lock_all(&folder, Force::flag(force))
        }
        Command::Lock {
            folder: a,
            argocd,
            check,
            force,
        } => folder::lock(&a, &argocd, check, force),
        Command::TalosPatch {
            folder: a,
            name,
            output,
            force,
        } => folder::talos_patch(&a, &name, output.as_deref(), force),
        Command::TalosCheck {
            machine_config,
            folder,
            name,
            output,
            force,
        } => cli::talos_check::run(&cli::talos_check::Request {
            machine_config: &machine_config,
            folder: &folder,
            name: &name,
            output: output.as_deref(),
            force,
        }),
        Command::ImportApplication(a) => import_application::run(a),
        Command::FixValues(a) => fix_values::run(&a),
        Command::Completions { shell } => render::completions(shell),
        Command::AdoptCheck(a) => adopt::run(&a),
        Command::Diff(a) => diff::run(&a),
        Command::FleetCheck(a) => fleet::run(&a),
        Command::Schema {
            cilium_version,
            chart_archive,
        } => render::schema(&cilium_version, chart_archive.as_deref()),
        Command::Chart {
            command:
                ChartCommand::Fetch {
                    version,
                    dir,
                    repo,
                    sha256,
                },
        } => chart::fetch(&version, dir.as_deref(), repo, sha256.as_deref()),
        Command::ImportChart { archive, data_dir } => chart::import(&archive, &data_dir),
    }
}
