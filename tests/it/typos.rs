//! Values the chart does not know, as a user meets them on the command line: one refusal listing
//! every such value with its file and line (or `--set`), exit 1 and nothing on stdout; and the
//! opt-out that turns them into warnings, on `render` and on the application-folder commands.

use crate::support::charts;
use crate::support::harness;

pub fn tests() -> Vec<harness::Trial> {
    harness::group(
        file!(),
        vec![
            harness::test(
                "unknown_values_are_refused_all_at_once_with_file_and_line",
                unknown_values_are_refused_all_at_once_with_file_and_line,
            ),
            harness::test(
                "unknown_values_are_reported_before_any_other_refusal",
                unknown_values_are_reported_before_any_other_refusal,
            ),
            harness::test(
                "allow_unknown_keys_renders_with_one_warning_line_each",
                allow_unknown_keys_renders_with_one_warning_line_each,
            )
            .shared("charts"),
            harness::test(
                "application_folders_take_the_opt_out_from_settings_or_the_flag",
                application_folders_take_the_opt_out_from_settings_or_the_flag,
            )
            .shared("charts"),
            harness::test(
                "the_fix_for_standard_input_names_a_file_to_save_it_in",
                the_fix_for_standard_input_names_a_file_to_save_it_in,
            ),
        ],
    )
}

use std::path::Path;
use std::process::{Command, Output};

use crate::support::scratch;
use scratch::Scratch;

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_cilium-cmp"));
    charts::give(&mut c);
    c
}

const TYPOS: &str = "\
cni:
  iptablesRemoveAWSRules: false
hubble:
  relay:
    enabeld: true
cgroup:
  automount:
    enabled: false
externalIPs:
  enabled: true
";

fn render(values: &Path, extra: &[&str]) -> Output {
    bin()
        .args(["render", "--cilium-version", "1.20.0", "-f"])
        .arg(values)
        .args(extra)
        .output()
        .unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn unknown_values_are_refused_all_at_once_with_file_and_line() {
    let s = Scratch::new("refused");
    let f = s.write("values.yaml", TYPOS);
    let out = render(&f, &["--set", "operator.replica=2"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(out.stdout.is_empty());
    let err = stderr(&out);
    for needle in [
        "do not exist in Cilium 1.20.0",
        "hubble.relay.enabeld (set in ",
        "values.yaml line 5): the chart has no such value; did you mean hubble.relay.enabled?",
        "cgroup.automount (set in ",
        "values.yaml line 7): the chart has no such value; did you mean cgroup.autoMount",
        "externalIPs (set in ",
        "values.yaml line 9): removed from the chart; it has no effect",
        "operator.replica (set in --set): the chart has no such value; did you mean operator.replicas?",
        "--allow-unknown-keys",
        "Remove the ones set with --set",
    ] {
        assert!(err.contains(needle), "{needle:?} not in: {err}");
    }
    // The fix comes first, as the exact command to run; the opt-out after it.
    let command = format!(
        "cilium-cmp fix-values --cilium-version 1.20.0 {}",
        f.display()
    );
    let fix_at = err
        .find(&command)
        .unwrap_or_else(|| panic!("{command:?} not in: {err}"));
    assert!(fix_at < err.find("--allow-unknown-keys").unwrap(), "{err}");
    // No renamed value here, so no word about renames.
    assert!(!err.contains("--apply-renames"), "{err}");
}

/// Unknown values come before every other refusal, so one run lists them all: here the schema
/// would refuse a value and no chart archive is given.
fn unknown_values_are_reported_before_any_other_refusal() {
    let s = Scratch::new("first");
    let f = s.write(
        "values.yaml",
        "hubble:\n  tls:\n    auto:\n      method: nonsense\n  relay:\n    enabeld: true\n",
    );
    let out = render(&f, &[]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("hubble.relay.enabeld"), "{err}");
    assert!(
        !err.contains("nonsense") && !err.contains("iptablesRemoveAWSRules"),
        "{err}"
    );
}

fn allow_unknown_keys_renders_with_one_warning_line_each() {
    let s = Scratch::new("allowed");
    let f = s.write("values.yaml", TYPOS);
    let out = render(&f, &["--allow-unknown-keys"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    let warnings: Vec<&str> = err.lines().filter(|l| l.starts_with("warning: ")).collect();
    assert_eq!(warnings.len(), 3, "{err}");
    assert!(warnings
        .iter()
        .any(|l| l.contains("did you mean hubble.relay.enabled?")));
    // The unknown values change nothing: the same bytes as without them.
    let clean = s.write("clean.yaml", "cni:\n  iptablesRemoveAWSRules: false\n");
    let without = render(&clean, &[]);
    assert!(without.status.success(), "{}", stderr(&without));
    assert_eq!(out.stdout, without.stdout);
}

/// An application folder: refused without the opt-out; `allowUnknownKeys: true` in its settings
/// (what the plugin in Argo CD reads) or `--allow-unknown-keys` on `lock` renders it.
fn application_folders_take_the_opt_out_from_settings_or_the_flag() {
    let s = Scratch::new("folder");
    let app = s.0.join("app");
    std::fs::create_dir_all(&app).unwrap();
    std::fs::write(app.join("values.yaml"), TYPOS).unwrap();
    std::fs::write(app.join("cilium-cmp.yaml"), "ciliumVersion: \"1.20.0\"\n").unwrap();
    let talos = |extra: &[&str]| {
        bin()
            .current_dir(&s.0)
            .args([
                "talos-patch",
                "app",
                "--namespace",
                "kube-system",
                "--kube-version",
                "1.35.0",
            ])
            .args(extra)
            .output()
            .unwrap()
    };
    let refused = talos(&[]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(refused.stdout.is_empty());
    let err = stderr(&refused);
    assert!(err.contains("app/values.yaml line 5"), "{err}");
    let flagged = talos(&["--allow-unknown-keys"]);
    assert!(flagged.status.success(), "{}", stderr(&flagged));
    // The command the refusal names, run from the repository root as written, fixes the folder:
    // it then renders without the opt-out, the same bytes.
    let command = "cilium-cmp fix-values --cilium-version 1.20.0 app/values.yaml";
    assert!(err.contains(command), "{err}");
    let fixed = bin()
        .current_dir(&s.0)
        .args(command.split(' ').skip(1))
        .output()
        .unwrap();
    assert_eq!(fixed.status.code(), Some(2), "{}", stderr(&fixed));
    let clean = talos(&[]);
    assert!(clean.status.success(), "{}", stderr(&clean));
    assert_eq!(clean.stdout, flagged.stdout);
    std::fs::write(app.join("values.yaml"), TYPOS).unwrap();
    std::fs::write(
        app.join("cilium-cmp.yaml"),
        "ciliumVersion: \"1.20.0\"\nallowUnknownKeys: true\n",
    )
    .unwrap();
    let settled = talos(&[]);
    assert!(settled.status.success(), "{}", stderr(&settled));
    assert_eq!(settled.stdout, flagged.stdout);
    assert!(stderr(&settled).contains("hubble.relay.enabeld"));
}

/// Values from standard input have no file to edit: the command names FILE and says to save it.
fn the_fix_for_standard_input_names_a_file_to_save_it_in() {
    use std::io::Write;
    let mut child = bin()
        .args(["render", "--cilium-version", "1.20.0", "-f", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(TYPOS.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains(
            "cilium-cmp fix-values --cilium-version 1.20.0 FILE (with standard input saved as FILE)"
        ),
        "{err}"
    );
}
