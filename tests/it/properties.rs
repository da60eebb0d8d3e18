//! Nothing a user hands the program makes it panic: arbitrary bytes as a values file, arbitrary
//! `--set` strings, and arbitrary values trees (the chart's own value paths set to values of
//! every shape) either render or end in an error. Errors quote user input only up to a bound.

use proptest::prelude::*;
use serde_json::{Map, Value};

use cilium_cmp_render::render::Inputs;

use crate::support::charts;
use crate::support::harness;

pub fn tests() -> Vec<harness::Trial> {
    harness::group(
        file!(),
        vec![
            harness::test("arbitrary_bytes_never_panic", arbitrary_bytes_never_panic),
            harness::test(
                "arbitrary_yaml_like_text_never_panics",
                arbitrary_yaml_like_text_never_panics,
            ),
            harness::test(
                "arbitrary_set_strings_never_panic",
                arbitrary_set_strings_never_panic,
            ),
            harness::test(
                "arbitrary_set_flags_over_a_values_file_never_panic",
                arbitrary_set_flags_over_a_values_file_never_panic,
            ),
            harness::test(
                "arbitrary_values_trees_never_panic",
                arbitrary_values_trees_never_panic,
            )
            .shared("charts"),
        ],
    )
}

/// Render inputs of `version`, with the official archive when `../shared/charts` is there. Bad
/// input is refused before the archive is needed, so the properties of bad input hold (and run)
/// without it; the test that counts renders is registered as needing it.
fn inputs_for(version: &str) -> Inputs {
    let inputs = Inputs::new(version.parse().expect("a listed release"));
    if charts::dir().is_dir() {
        return charts::with_archive(inputs);
    }
    inputs
}

/// Every dotted path of the chart's defaults for `version` with its default, maps included.
fn value_paths(version: &str) -> Vec<(String, Value)> {
    fn walk(v: &Value, prefix: &str, out: &mut Vec<(String, Value)>) {
        if let Value::Object(m) = v {
            for (k, child) in m {
                let p = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                out.push((p.clone(), child.clone()));
                walk(child, &p, out);
            }
        }
    }
    let defaults =
        cilium_cmp_render::versions::defaults(cilium_cmp_render::versions::parse(version).unwrap());
    let mut out = Vec::new();
    walk(&defaults, "", &mut out);
    out
}

/// A value of the default's own shape (what a user usually writes), varied by `seed`.
fn like(default: &Value, seed: u32) -> Value {
    match default {
        Value::Bool(b) => Value::Bool(!b),
        Value::Number(n) => Value::from(n.as_f64().unwrap_or(0.0) + f64::from(seed % 7)),
        Value::String(s) if s.is_empty() => {
            Value::String(["x", "1", "true", "a-b"][seed as usize % 4].into())
        }
        Value::String(s) => Value::String(format!("{s}{}", ["", "-x", "0"][seed as usize % 3])),
        other => other.clone(),
    }
}

/// Values of every shape the chart may meet: scalars that YAML and Go templates treat
/// specially, lists, maps, nulls.
fn any_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i32>().prop_map(|i| Value::from(f64::from(i))),
        (-1e12f64..1e12).prop_map(Value::from),
        prop_oneof![
            Just(""),
            Just("true"),
            Just("0"),
            Just("-1"),
            Just("1e400"),
            Just("auto"),
            Just("disabled"),
            Just("a:b"),
            Just("{{ print .Values }}"),
            Just("\"quoted\""),
            Just("line\nbreak"),
            Just("10.0.0.0/8"),
            Just("1.2.3"),
            Just("*"),
        ]
        .prop_map(|s| Value::String(s.to_string())),
        "[ -~]{0,12}".prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 12, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
            prop::collection::btree_map("[a-z]{1,6}", inner, 0..3)
                .prop_map(|m| Value::Object(m.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

fn set_path(root: &mut Value, path: &str, value: Value) {
    let mut node = root;
    let mut keys = path.split('.').peekable();
    while let Some(k) = keys.next() {
        if !node.is_object() {
            *node = Value::Object(Map::new());
        }
        let m = node.as_object_mut().unwrap();
        if keys.peek().is_none() {
            m.insert(k.to_string(), value);
            return;
        }
        node = m
            .entry(k.to_string())
            .or_insert_with(|| Value::Object(Map::new()));
    }
}

fn render_yaml(version: &str, text: &str) -> Result<String, String> {
    let mut inputs = inputs_for(version);
    inputs
        .values_files
        .push(("values.yaml".into(), text.into()));
    cilium_cmp_render::render::render(&inputs).map_err(|e| e.to_string())
}

fn check_error(message: &str) {
    assert!(
        message.len() < 8000,
        "an error message stays bounded ({} bytes)",
        message.len()
    );
}

/// Runs `test` on `CASES` values of `strategy` (proptest's runner, as its macro would).
fn cases<S: Strategy>(
    strategy: S,
    test: impl Fn(S::Value) -> Result<(), proptest::test_runner::TestCaseError>,
) {
    use proptest::test_runner::{Config, TestRunner};
    TestRunner::new(Config {
        cases: 256,
        ..Config::default()
    })
    .run(&strategy, test)
    .unwrap();
}

fn arbitrary_bytes_never_panic() {
    cases(prop::collection::vec(any::<u8>(), 0..600), |bytes| {
        let text = String::from_utf8_lossy(&bytes);
        if let Err(e) = render_yaml("1.20.0", &text) {
            check_error(&e);
        }
        Ok(())
    });
}

fn arbitrary_yaml_like_text_never_panics() {
    let line = "( {0,4})([a-z]{1,5}|-|\\? |&a |\\*a|<<)(: )?([a-z0-9\\[\\]{},:'\"|>&*#!-]{0,8})";
    cases(prop::collection::vec(line, 0..20), |lines| {
        if let Err(e) = render_yaml("1.19.6", &lines.join("\n")) {
            check_error(&e);
        }
        Ok(())
    });
}

fn arbitrary_set_strings_never_panic() {
    cases(
        prop::collection::vec("[a-z.\\[\\]0-9={},\\\\]{0,30}", 0..4),
        |exprs| {
            let mut inputs = inputs_for("1.18.12");
            inputs.set = exprs;
            if let Err(e) = cilium_cmp_render::render::render(&inputs) {
                check_error(&e.to_string());
            }
            Ok(())
        },
    );
}

/// `--set-json` and `--set-string` too, laid over a values file with lists and maps that
/// the expressions may index into (Helm applies them to the files' tree).
fn arbitrary_set_flags_over_a_values_file_never_panic() {
    let json = prop::collection::vec(
        "(extraEnv|tolerations)?[a-z.\\[\\]0-9=]{0,12}[\\[\\]{}\":,0-9a-z ]{0,20}",
        0..3,
    );
    let string =
        prop::collection::vec("(extraEnv|tolerations)?[a-z.\\[\\]0-9={},\\\\]{0,30}", 0..3);
    cases((json, string), |(json, string)| {
        let mut inputs = inputs_for("1.20.0");
        inputs.values_files.push((
            "values.yaml".into(),
            "cni:\n  iptablesRemoveAWSRules: false\ntolerations:\n  - operator: Exists\n  - key: k\nextraEnv:\n  - name: A\n    value: \"1\"\n".into(),
        ));
        inputs.set_args.json = json;
        inputs.set_args.string = string;
        if let Err(e) = cilium_cmp_render::render::render(&inputs) {
            check_error(&e.to_string());
        }
        Ok(())
    });
}

/// The chart's own paths with values of every shape, on the newest release of each minor.
fn values_trees(version: &'static str) -> impl Strategy<Value = (&'static str, Value)> {
    let paths = value_paths(version);
    let assignment = (prop::sample::select(paths), any_value(), 0u32..8);
    prop::collection::vec(assignment, 1..6).prop_map(move |assignments| {
        let mut root = Value::Object(Map::new());
        set_path(&mut root, "cni.iptablesRemoveAWSRules", Value::Bool(false));
        for ((path, default), value, seed) in assignments {
            // Mostly values of the default's shape, the rest of any shape at all.
            let value = if seed < 6 {
                like(&default, seed)
            } else {
                value
            };
            set_path(&mut root, &path, value);
        }
        (version, root)
    })
}

/// Runs the values-tree strategy through render; counts renders that succeeded, so the test
/// cannot pass by refusing everything.
fn arbitrary_values_trees_never_panic() {
    use proptest::test_runner::{Config, TestRunner};
    let strategy = prop_oneof![
        values_trees("1.18.12"),
        values_trees("1.19.6"),
        values_trees("1.20.0"),
    ];
    let mut runner = TestRunner::new(Config {
        cases: 600,
        ..Config::default()
    });
    let rendered = std::cell::Cell::new(0);
    runner
        .run(&strategy, |(version, values)| {
            let mut inputs = inputs_for(version);
            let text = serde_json::to_string(&values).unwrap();
            inputs.values_files.push(("values.yaml".into(), text));
            match cilium_cmp_render::render::render(&inputs) {
                Ok(out) => {
                    prop_assert!(out.starts_with("---\n"), "a stream of documents");
                    rendered.set(rendered.get() + 1);
                }
                Err(e) => check_error(&e.to_string()),
            }
            Ok(())
        })
        .unwrap();
    eprintln!("{} of 600 arbitrary values trees rendered", rendered.get());
    assert!(
        rendered.get() >= 60,
        "most trees were refused: {}",
        rendered.get()
    );
}
