//! The reports people read, checked whole as snapshot files (`tests/it/snapshots/`, insta): every
//! output format of `adopt-check` (text, json), `diff` (text, markdown, json), `fleet-check`
//! (text, json) and `fix-values` (the dry run's patch, the written file, the renames of an
//! upgrade), each with its exit status and its stderr, from real renders of the shared
//! scenarios (Helm's own render of one as the live cluster). The tests of each command check
//! the meaning of a report; these show a reviewer what a change does to every line of it.
//!
//! Each command runs in a scratch folder with relative file names, and that folder, the chart
//! folder and the repository are redacted, so a snapshot holds no path of this machine.
//! Review or accept a change: CONTRIBUTING.md, "Snapshots of the reports and of every refusal".

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::support::charts;
use crate::support::harness;
use crate::support::scratch::Scratch;

pub fn tests() -> Vec<harness::Trial> {
    harness::group(
        file!(),
        vec![
            harness::test(
                "adopt_check_of_helms_render_in_every_format",
                adopt_check_of_helms_render_in_every_format,
            )
            .shared("charts")
            .shared("cilium-reference/scenarios")
            .shared("cilium-reference/rendered/1.20.0"),
            harness::test(
                "diff_of_two_scenarios_in_every_format",
                diff_of_two_scenarios_in_every_format,
            )
            .shared("charts")
            .shared("cilium-reference/scenarios"),
            harness::test(
                "fleet_check_with_findings_in_every_format",
                fleet_check_with_findings_in_every_format,
            )
            .shared("charts"),
            harness::test(
                "fix_values_dry_run_write_and_renames",
                fix_values_dry_run_write_and_renames,
            )
            .shared("charts")
            .shared("cilium-reference/scenarios"),
        ],
    )
}

const VERSION: &str = "1.20.0";

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// `cilium-cmp ARGS` in `dir`, with the official archives as its chart folder and nothing else
/// of this machine's environment that could change a report (time zone, locale, terminal).
fn run_in(dir: &Path, args: &[&str]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_cilium-cmp"));
    c.current_dir(dir)
        .args(args)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", dir)
        .stdin(Stdio::null());
    charts::give(&mut c);
    c.output().expect("cilium-cmp runs")
}

/// What a snapshot holds of one run: the command line, its exit status, stdout and stderr, with
/// the scratch folder, the chart folder and the repository redacted.
fn shown(dir: &Path, args: &[&str], o: &Output) -> String {
    let text = format!(
        "$ cilium-cmp {}\nexit status: {}\n--- stdout\n{}--- stderr\n{}",
        args.join(" "),
        o.status
            .code()
            .map_or("a signal".to_string(), |c| c.to_string()),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
    );
    redact(&text, dir)
}

fn redact(text: &str, dir: &Path) -> String {
    let mut out = text.to_string();
    for (path, mark) in [
        (dir.to_path_buf(), "[scratch]"),
        (charts::dir(), "[charts]"),
        (root().to_path_buf(), "[repo]"),
    ] {
        for form in [path.canonicalize().unwrap_or_else(|_| path.clone()), path] {
            out = out.replace(form.to_string_lossy().as_ref(), mark);
        }
    }
    without_embedded_texts(&out)
}

/// Every quoted string that holds an escaped line break becomes a mark of its length: such a
/// string is a whole text the chart embeds (a bundled script, a configuration file), which the
/// repository does not copy; the report's shape around it is what the snapshot checks.
fn without_embedded_texts(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('"') {
        out.push_str(&rest[..open]);
        let body = &rest[open + 1..];
        let mut end = None;
        let mut escaped = false;
        for (i, c) in body.char_indices() {
            match c {
                '\\' if !escaped => escaped = true,
                '"' if !escaped => {
                    end = Some(i);
                    break;
                }
                '\n' => break,
                // A report cuts a long value short with an ellipsis, before its closing quote.
                '…' => {
                    end = Some(i);
                    break;
                }
                _ => escaped = false,
            }
        }
        let Some(end) = end else {
            out.push('"');
            rest = body;
            continue;
        };
        if body[end..].starts_with('…') {
            if body[..end].contains("\\n") {
                out.push_str("\"[embedded text]");
            } else {
                out.push('"');
                out.push_str(&body[..end]);
            }
            rest = &body[end..];
            continue;
        }
        let string = &body[..end];
        if string.contains("\\n") {
            out.push_str(&format!("\"[embedded text, {} bytes]\"", string.len()));
        } else {
            out.push('"');
            out.push_str(string);
            out.push('"');
        }
        rest = &body[end + 1..];
    }
    out.push_str(rest);
    out
}

/// Runs `args` in `dir` and checks the run against the snapshot `name`.
fn snapshot(name: &str, dir: &Path, args: &[&str]) -> Output {
    let o = run_in(dir, args);
    insta::assert_snapshot!(name, shown(dir, args, &o));
    o
}

/// The values of a shared scenario as a values file, written as the canonical writer prints
/// them (a user's file would be hand-written; the report is the same).
fn scenario_values(name: &str) -> String {
    let file = harness::shared("cilium-reference/scenarios").join(format!("{name}.yaml"));
    let text = std::fs::read_to_string(&file).unwrap();
    let doc = cilium_cmp_yaml::yaml::parse_values(&text)
        .unwrap_or_else(|e| panic!("{}: {e}", file.display()))
        .value;
    cilium_cmp_yaml::yaml::to_string(&doc["values"])
}

/// adopt-check: Helm's own render of `default-cronjob` (1.20.0, the committed reference) as the
/// live cluster, and the values of `debug-and-probes` as the folder's: changed objects, pods that
/// restart, config read at start.
fn adopt_check_of_helms_render_in_every_format() {
    let s = Scratch::new("reports-adopt");
    s.write("values.yaml", &scenario_values("debug-and-probes"));
    let live = harness::shared("cilium-reference/rendered/1.20.0").join("default-cronjob.yaml");
    std::fs::copy(&live, s.0.join("live.yaml")).unwrap();
    for format in ["text", "json"] {
        let args = [
            "adopt-check",
            "--cilium-version",
            VERSION,
            "-f",
            "values.yaml",
            "--live",
            "live.yaml",
            "--output",
            format,
        ];
        let o = snapshot(&format!("adopt_check_{format}"), &s.0, &args);
        assert_eq!(o.status.code(), Some(3), "pods restart");
    }
}

/// diff: `default-cronjob` to `debug-and-probes` on one release.
fn diff_of_two_scenarios_in_every_format() {
    let s = Scratch::new("reports-diff");
    s.write("old.yaml", &scenario_values("default-cronjob"));
    s.write("new.yaml", &scenario_values("debug-and-probes"));
    for format in ["text", "markdown", "json"] {
        let args = [
            "diff",
            "--cilium-version",
            VERSION,
            "-f",
            "new.yaml",
            "--from-values",
            "old.yaml",
            "--output",
            format,
        ];
        let o = snapshot(&format!("diff_{format}"), &s.0, &args);
        assert_eq!(o.status.code(), Some(3), "changes with consequences");
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target: PathBuf = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), target).unwrap();
        }
    }
}

/// fleet-check: the example fleet (`examples/fleet`) with one cluster given another's name and
/// id and an overlapping pod CIDR.
fn fleet_check_with_findings_in_every_format() {
    let s = Scratch::new("reports-fleet");
    copy_dir(&root().join("examples/fleet"), &s.0);
    s.write(
        "clusters/us-1/values.yaml",
        "cluster:\n  name: eu-2\n  id: 2\nipam:\n  mode: cluster-pool\n  operator:\n    clusterPoolIPv4PodCIDRList:\n      - 10.2.0.0/17\n",
    );
    for format in ["text", "json"] {
        let args = ["fleet-check", "--output", format];
        let o = snapshot(&format!("fleet_check_{format}"), &s.0, &args);
        assert_eq!(o.status.code(), Some(3), "findings");
    }
}

/// The values of the `wireguard` scenario as a user of 1.19 would have them: a typo
/// (`cgroup.automount`), a value gone since 1.11 (`externalIPs`) and one 1.20 renamed
/// (`encryption.strictMode.enabled`).
fn wireguard_values_of_1_19() -> String {
    let values = scenario_values("wireguard");
    assert!(values.contains("  autoMount:\n") && values.contains("  nodeEncryption: true\n"));
    let values = values.replace("  autoMount:\n", "  automount:\n").replace(
        "  nodeEncryption: true\n",
        "  nodeEncryption: true\n  strictMode:\n    enabled: true\n    cidr: \"10.0.0.0/8\"\n",
    );
    format!("# Values of 1.19\nexternalIPs:\n  enabled: true\n{values}")
}

/// fix-values: the dry run's patch, the file it writes, and `--apply-renames` for an upgrade.
fn fix_values_dry_run_write_and_renames() {
    let s = Scratch::new("reports-fix");
    let values = wireguard_values_of_1_19();
    s.write("values.yaml", &values);
    let dry = [
        "fix-values",
        "--cilium-version",
        VERSION,
        "--dry-run",
        "values.yaml",
    ];
    let o = snapshot("fix_values_dry_run", &s.0, &dry);
    assert_eq!(o.status.code(), Some(2), "would change");
    let read = || std::fs::read_to_string(s.0.join("values.yaml")).unwrap();
    assert_eq!(read(), values, "a dry run writes nothing");

    let write = ["fix-values", "--cilium-version", VERSION, "values.yaml"];
    let o = snapshot("fix_values_write", &s.0, &write);
    assert_eq!(o.status.code(), Some(2), "changed");
    insta::assert_snapshot!("fix_values_write_file", read());

    s.write("values.yaml", &values);
    let renames = [
        "fix-values",
        "--cilium-version",
        VERSION,
        "--apply-renames",
        "values.yaml",
    ];
    let o = snapshot("fix_values_apply_renames", &s.0, &renames);
    assert_eq!(o.status.code(), Some(2), "changed");
    insta::assert_snapshot!("fix_values_apply_renames_file", read());
}
