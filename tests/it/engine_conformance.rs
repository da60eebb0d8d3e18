//! Conformance of the template engine with real Helm on general Go `text/template`, Sprig and
//! Helm behaviour, beyond what the Cilium chart happens to use: every folder of
//! `tests/conformance/` is a small chart (one family of behaviour, several templates covering
//! its edge cases), rendered by Helm 4 (`../shared/tools/helm_ref.py`, all charts in one Python
//! process: tests/it/support/helm_conformance.py) and by `cilium_cmp_render::engine`, and compared per
//! template text, byte for byte. A chart Helm refuses (`fail`, `required`, a failing call) must
//! be refused by the engine too, with the same message for the chart's own `fail`/`required`.
//!
//! What Helm does not do deterministically (Go's random map order behind Sprig's `keys` and
//! `values`, the `rand*` functions, `uuidv4`, the clock) is not compared with Helm: the charts
//! only use `keys` through `sortAlpha`, and the engine's own choice (sorted keys; a refusal of
//! the random functions) is checked here without Helm.
//!
//! `CONFORMANCE_ONLY=NAME` compares one chart (still rendered by Helm with all the others).

use std::path::{Path, PathBuf};
use std::process::Command;

use cilium_cmp_render::chart::archive::ChartFiles;
use cilium_cmp_render::engine::helm::{coalesce, render_text, EngineError, RENDER_STACK_BYTES};
use cilium_cmp_render::engine::{ChartTemplates, ErrorKind, RenderOptions};
use serde_json::{json, Value as Json};

use crate::support::harness;
use crate::support::scratch;

pub fn tests() -> Vec<harness::Trial> {
    harness::group(
        file!(),
        vec![
            harness::test("templates_match_helm", templates_match_helm)
                .shared("tools/helm_ref.py")
                .python(),
            harness::test("random_functions_are_refused", random_functions_are_refused),
            harness::test("keys_are_sorted", keys_are_sorted),
        ],
    )
}

/// Charts where the engine knowingly differs from Helm, and why. Each must still differ (a
/// chart that starts matching fails the test until it leaves this list) and is reported apart.
const KNOWN_GAPS: &[(&str, &str)] = &[
    (
        "gap-int64",
        "Sprig's int64 returns Go's int64, which the engine holds as int: same value and \
         printing, but kindOf/typeOf/%T say int",
    ),
    (
        "strcase",
        "camelcase/snakecase/kebabcase (huandu/xstrings) are refused as unsupported: no Cilium \
         template calls them",
    ),
    (
        "toml",
        "toToml (BurntSushi/toml's encoder) is refused as unsupported: no Cilium template calls it",
    ),
];

/// Added to Helm's default API versions in both renders (`--api-versions`).
const API_VERSIONS: &[&str] = &["example.com/v1alpha1", "example.com/v1alpha1/Widget"];

fn charts_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance")
}

/// What one render of a chart gave: each template's text, or the error that stopped it
/// (whether it is the chart's own `fail`/`required`, and the message as printed).
enum Outcome {
    Templates(Vec<(String, String)>),
    Error {
        own: bool,
        parse: bool,
        message: String,
    },
}

fn engine_render(dir: &Path) -> Outcome {
    let dir = dir.to_path_buf();
    let run = move || -> Result<Vec<(String, String)>, EngineError> {
        let files = ChartFiles::open(&dir).map_err(|e| EngineError::Chart {
            path: dir.display().to_string(),
            message: e.to_string(),
        })?;
        let chart = ChartTemplates::parse(&files)?;
        let values = coalesce(&chart.default_values, &json!({}));
        let opts = RenderOptions {
            release_name: "cilium".into(),
            namespace: "kube-system".into(),
            kube_version: "1.35.0".into(),
            api_versions: API_VERSIONS.iter().map(|s| s.to_string()).collect(),
        };
        chart.render_files(&values, &opts)
    };
    // render_files runs on the calling thread: give it the stack `render` would.
    let result = std::thread::Builder::new()
        .stack_size(RENDER_STACK_BYTES)
        .spawn(run)
        .expect("a render thread")
        .join();
    match result {
        Ok(Ok(t)) => Outcome::Templates(t),
        Ok(Err(EngineError::Template(e))) => Outcome::Error {
            own: e.kind == ErrorKind::Fail,
            parse: e.kind == ErrorKind::Parse,
            message: e.to_string(),
        },
        Ok(Err(e)) => Outcome::Error {
            own: false,
            parse: false,
            message: e.to_string(),
        },
        Err(_) => Outcome::Error {
            own: false,
            parse: false,
            message: "the engine panicked".into(),
        },
    }
}

fn helm_outcome(v: &Json) -> Outcome {
    if let Some(e) = v.get("error").and_then(Json::as_str) {
        // Helm's engine.go `cleanupExecError` prints the chart's own `fail`/`required` (and only
        // those) as `execution error at (FILE:LINE:COL): MESSAGE`.
        // A template that does not parse is reported as `parse error at (FILE:LINE): ...`.
        return Outcome::Error {
            own: e.starts_with("execution error at ("),
            parse: e.starts_with("parse error at ("),
            message: e.to_string(),
        };
    }
    let mut t: Vec<(String, String)> = v
        .get("templates")
        .and_then(Json::as_object)
        .map(|m| {
            m.iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap_or("").to_string()))
                .collect()
        })
        .unwrap_or_default();
    t.sort();
    Outcome::Templates(t)
}

/// The first line where the two texts differ, Rust-quoted so whitespace shows.
fn first_difference(helm: &str, engine: &str) -> String {
    let (h, e): (Vec<&str>, Vec<&str>) = (
        helm.split_inclusive('\n').collect(),
        engine.split_inclusive('\n').collect(),
    );
    let i = (0..h.len().max(e.len()))
        .find(|&i| h.get(i) != e.get(i))
        .unwrap_or(0);
    format!(
        "line {}:\n  helm:   {:?}\n  engine: {:?}",
        i + 1,
        h.get(i).copied().unwrap_or("(end)"),
        e.get(i).copied().unwrap_or("(end)")
    )
}

fn templates_match_helm() {
    let dir = charts_dir();
    let mut charts: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .flatten()
        .filter(|e| e.path().join("Chart.yaml").is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    charts.sort();
    assert!(!charts.is_empty(), "no charts in {}", dir.display());

    let scratch = scratch::Scratch::new("conformance");
    let out = scratch.0.join("helm.json");
    let o = Command::new(harness::python())
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/support/helm_conformance.py"))
        .arg(harness::shared("tools"))
        .arg(&dir)
        .arg(&out)
        .arg(API_VERSIONS.join(","))
        .output()
        .expect("the tests' python runs");
    assert!(
        o.status.success(),
        "helm_conformance.py failed:\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let text = std::fs::read_to_string(&out).expect("helm_conformance.py wrote its output");
    let helm: Json = serde_json::from_str(&text).expect("the driver's JSON");

    let only = std::env::var("CONFORMANCE_ONLY").ok();
    let (mut compared, mut identical, mut refused_alike) = (0usize, 0usize, 0usize);
    let mut diffs = Vec::new();
    let mut counted = 0usize;
    let mut known = Vec::new();
    for name in &charts {
        if only.as_deref().is_some_and(|o| o != name) {
            continue;
        }
        counted += 1;
        let gap = KNOWN_GAPS
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, why)| *why);
        let before = diffs.len();
        let Some(h) = helm.get(name) else {
            diffs.push(format!("{name}: Helm rendered nothing for it"));
            continue;
        };
        match (helm_outcome(h), engine_render(&dir.join(name))) {
            (Outcome::Templates(h), Outcome::Templates(mut e)) => {
                e.sort();
                let mut names: Vec<&String> = h.iter().chain(e.iter()).map(|(n, _)| n).collect();
                names.sort();
                names.dedup();
                for n in names {
                    compared += 1;
                    let hv = h.iter().find(|(k, _)| k == n).map(|(_, v)| v);
                    let ev = e.iter().find(|(k, _)| k == n).map(|(_, v)| v);
                    match (hv, ev) {
                        (Some(a), Some(b)) if a == b => identical += 1,
                        (Some(a), Some(b)) => {
                            diffs.push(format!("{n}: {}", first_difference(a, b)))
                        }
                        (Some(_), None) => diffs.push(format!("{n}: the engine did not render it")),
                        (None, _) => diffs.push(format!("{n}: Helm did not render it")),
                    }
                }
            }
            (
                Outcome::Error {
                    own,
                    parse,
                    message: hm,
                },
                Outcome::Error {
                    own: eown,
                    parse: eparse,
                    message: em,
                },
            ) => {
                compared += 1;
                // The chart's own message must be the same; Go's own error texts are not
                // modelled word for word, only that the render stops, at parse time when Go's does.
                if (own && (!eown || hm != em)) || parse != eparse {
                    diffs.push(format!(
                        "{name}: refused differently\n  helm:   {hm}\n  engine: {em}"
                    ));
                } else {
                    identical += 1;
                    refused_alike += 1;
                }
            }
            (Outcome::Error { message, .. }, Outcome::Templates(_)) => {
                compared += 1;
                diffs.push(format!(
                    "{name}: Helm refused it ({message}), the engine rendered it"
                ));
            }
            (Outcome::Templates(_), Outcome::Error { message, .. }) => {
                compared += 1;
                diffs.push(format!(
                    "{name}: Helm rendered it, the engine refused it: {message}"
                ));
            }
        }
        if let Some(why) = gap {
            if diffs.len() == before {
                diffs.push(format!(
                    "{name}: listed in KNOWN_GAPS ({why}) but identical to Helm: remove it there"
                ));
            } else {
                let found: Vec<String> = diffs.drain(before..).collect();
                known.push(format!("{name}: {why}\n    {}", found.join("\n    ")));
            }
        }
    }
    for k in &known {
        eprintln!("known gap {k}");
    }
    eprintln!(
        "engine conformance: {identical}/{compared} templates identical ({counted} charts, \
         {refused_alike} refused alike, {} known gaps)",
        known.len()
    );
    assert!(
        diffs.is_empty(),
        "{} differences from Helm:\n{}",
        diffs.len(),
        diffs.join("\n")
    );
}

/// Helm's output of these is random; the engine refuses them, naming the function and place.
fn random_functions_are_refused() {
    for (text, function) in [
        ("{{ randAlphaNum 8 }}", "randAlphaNum"),
        ("{{ randInt 1 9 }}", "randInt"),
        ("{{ uuidv4 }}", "uuidv4"),
        ("{{ list 1 2 3 | shuffle }}", "shuffle"),
        ("{{ now | date \"2006\" }}", "date"),
        ("x\n{{ genCA \"x\" 3 }}", "genCA"),
    ] {
        match render_text("t/templates/r.yaml", text, &json!({})) {
            Err(e) => {
                assert_eq!(
                    e.kind,
                    ErrorKind::NonDeterministic {
                        function: function.into()
                    },
                    "{text}: {e}"
                );
                assert!(e.line > 0, "{text}: refusal without its line: {e}");
            }
            Ok(out) => panic!("{text} rendered {out:?}; it must be refused"),
        }
    }
    // The clock: `now` may be compared, never printed.
    let e = render_text("t/templates/n.yaml", "{{ now }}", &json!({}));
    assert!(
        matches!(&e, Err(e) if matches!(e.kind, ErrorKind::NonDeterministic { .. })),
        "printing now: {e:?}"
    );
}

/// Sprig's `keys` returns Go's map iteration order, random from run to run; the engine returns
/// the keys sorted (one of the orders Go may give, and the only one a reviewer can predict),
/// dict by dict in argument order. `values` follows the same sorted key order.
fn keys_are_sorted() {
    let v = json!({"m": {"zeta": 1, "alpha": 2, "Mid": 3, "beta": 4}, "n": {"b": 1, "a": 2}});
    let out = render_text(
        "t/templates/k.yaml",
        "{{ keys .Values.m }} {{ keys .Values.m .Values.n }} {{ values .Values.m }}",
        &v,
    )
    .expect("renders");
    assert_eq!(
        out,
        "[Mid alpha beta zeta] [Mid alpha beta zeta a b] [3 2 4 1]"
    );
}
