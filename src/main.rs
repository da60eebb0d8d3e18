//! The `cilium-cmp` command line: a thin front end over the library.

// A render allocates tens of thousands of small, short-lived map nodes and strings; mimalloc
// serves them in about 60% of the system allocator's time (see ARCHITECTURE.md,
// "Dependencies, and why").
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod cli;

use std::process::ExitCode;

use clap::Parser;

use cilium_cmp::replace_file::Force;

use cli::args::{ChartCommand, Cli, Command};
use cli::io::ClosedStdout;

fn main() -> ExitCode {
    // Colour only on a terminal, and never with NO_COLOR set (https://no-color.org): Argo CD
    // shows the plugin's stderr verbatim.
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(cli::log::colour())
        .event_format(cli::log::Plain)
        .init();
    let result = match Cli::try_parse() {
        Ok(cli) => run(cli),
        Err(e) => match cli::usage::bad_input(&e) {
            Some(bad) => Err(bad),
            None => return cli::usage::exit(e),
        },
    };
    match result {
        Ok(code) => code,
        // The reader of stdout went away (`| head`): nothing to report, see `ClosedStdout`.
        Err(e) if e.is::<ClosedStdout>() => ExitCode::SUCCESS,
        Err(e) => {
            // Errors quote folders, files and values of the repository (a CI log shows them).
            cli::io::say(&format!("error: {e:#}"));
            ExitCode::FAILURE
        }
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
