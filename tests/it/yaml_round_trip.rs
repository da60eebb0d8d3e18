//! The YAML stack reads back what it writes: arbitrary values trees (maps, lists, every scalar
//! type, strings that YAML 1.1 or 1.2 could take for another type, control characters, line
//! breaks, indentation, long lines) written by the canonical writer (`yaml::write`) and by
//! go-yaml v2's emitter (`yaml::go_emit`, Helm's `toYaml`) and parsed by `yaml::read` give the
//! same tree. Numbers compare by value: Helm holds every number as a float64 (Go's
//! `encoding/json` into `interface{}`), so `1` and `1.0` are one value.

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use serde_json::{Map, Number, Value};

use crate::support::harness;

pub fn tests() -> Vec<harness::Trial> {
    harness::group(
        file!(),
        vec![
            harness::test(
                "the_canonical_writer_reads_back_as_the_same_tree",
                the_canonical_writer_reads_back_as_the_same_tree,
            ),
            harness::test(
                "helms_to_yaml_reads_back_as_the_same_tree",
                helms_to_yaml_reads_back_as_the_same_tree,
            ),
            harness::test(
                "the_comparison_tells_trees_apart",
                the_comparison_tells_trees_apart,
            ),
        ],
    )
}

/// Texts a YAML reader could take for something else, or that need quoting or escapes: the
/// scalars of YAML 1.1 (go-yaml v2, PyYAML) and 1.2, indicators, document markers, blanks.
const TRICKY: &[&str] = &[
    "",
    " ",
    "  ",
    "null",
    "Null",
    "NULL",
    "~",
    "true",
    "True",
    "FALSE",
    "yes",
    "No",
    "on",
    "OFF",
    "y",
    "n",
    "Y",
    "0",
    "-0",
    "+1",
    "007",
    "0x1F",
    "0o17",
    "0b101",
    "1_000",
    "1e3",
    "1E-3",
    ".5",
    "5.",
    "-.inf",
    ".Inf",
    ".NaN",
    "nan",
    "1:20",
    "190:20:30",
    "2001-12-14",
    "2001-12-14t21:59:43.10-05:00",
    "- a",
    "-",
    "--",
    "---",
    "...",
    "a: b",
    "a:b",
    ":",
    "? a",
    "?",
    "#",
    "a #b",
    "a# b",
    "'",
    "''",
    "\"",
    "\\",
    "@a",
    "`a",
    "%a",
    "&a",
    "*a",
    "!a",
    "!!str",
    "|",
    ">",
    "|-",
    "[",
    "]",
    "{",
    "}",
    "[]",
    "{}",
    ",",
    "a,b",
    "<<",
    "=",
    "\t",
    "a\tb",
    "\n",
    "\n\n",
    "a\n",
    "\na",
    "a\nb",
    "a \nb",
    "a\n b",
    " a",
    "a ",
    "a  b",
    "\r",
    "a\r\nb",
    "\u{0}",
    "\u{7}",
    "\u{1b}[31m",
    "\u{7f}",
    "\u{85}",
    "\u{a0}",
    "\u{2028}",
    "\u{feff}",
    "é",
    "日本",
    "😀",
    "\u{ffff}",
];

fn tricky() -> impl Strategy<Value = String> {
    prop::sample::select(TRICKY).prop_map(str::to_string)
}

/// Strings: tricky ones, tricky ones joined, arbitrary Unicode, and long lines of words (the
/// emitter folds plain and quoted scalars beyond 80 columns).
fn strings() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => tricky(),
        2 => prop::collection::vec(tricky(), 1..4).prop_map(|p| p.concat()),
        2 => any::<String>(),
        1 => "[a-z]{1,12}",
        1 => prop::collection::vec("[a-z0-9:#-]{1,9}", 8..30).prop_map(|w| w.join(" ")),
        1 => prop::collection::vec("[a-z ]{0,20}", 1..6).prop_map(|l| l.join("\n")),
    ]
}

fn numbers() -> impl Strategy<Value = Value> {
    prop_oneof![
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        (-1000i64..1000).prop_map(Value::from),
        any::<f64>()
            .prop_filter("JSON has no NaN or infinity", |f| f.is_finite())
            .prop_map(|f| Value::Number(Number::from_f64(f).unwrap())),
        (-1.0e6f64..1.0e6).prop_map(|f| Value::Number(Number::from_f64(f).unwrap())),
    ]
}

fn scalars() -> impl Strategy<Value = Value> {
    prop_oneof![
        1 => Just(Value::Null),
        1 => any::<bool>().prop_map(Value::Bool),
        2 => numbers(),
        5 => strings().prop_map(Value::String),
    ]
}

/// Trees of up to four levels: maps keyed by any string, lists, empty ones of each.
fn trees() -> impl Strategy<Value = Value> {
    scalars().prop_recursive(4, 64, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map(strings(), inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// A values file's root: a map.
fn documents() -> impl Strategy<Value = Value> {
    prop::collection::btree_map(strings(), trees(), 0..6)
        .prop_map(|m| Value::Object(m.into_iter().collect()))
}

/// One tree, numbers by value (as float64 where either side is not an integer).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(i), Some(j)) => i == j,
            _ => match (x.as_u64(), y.as_u64()) {
                (Some(i), Some(j)) => i == j,
                _ => x.as_f64() == y.as_f64(),
            },
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

fn runner(cases: u32) -> TestRunner {
    TestRunner::new(Config {
        cases,
        // The harness reports a failure with the input; no file of regressions beside the tests.
        failure_persistence: None,
        ..Config::default()
    })
}

fn the_canonical_writer_reads_back_as_the_same_tree() {
    runner(3000)
        .run(&documents(), |tree| {
            let text = cilium_cmp_yaml::yaml::to_string(&tree);
            let back = cilium_cmp_yaml::yaml::parse_value(&text)
                .map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
            prop_assert!(same(&tree, &back), "{tree}\n{text}\nread back: {back}");
            // A stream of such documents, as the renderer writes its output.
            let mut stream = String::new();
            cilium_cmp_yaml::yaml::write_document(&mut stream, &tree);
            cilium_cmp_yaml::yaml::write_document(&mut stream, &tree);
            let docs = cilium_cmp_yaml::yaml::parse_stream_values(&stream)
                .map_err(|e| TestCaseError::fail(format!("{e}\n{stream}")))?;
            // An empty map is written `{}`: a document, never an empty one (which is dropped).
            prop_assert_eq!(docs.len(), 2, "{}", stream);
            for d in &docs {
                prop_assert!(same(&tree, d), "{tree}\n{stream}\nread back: {d}");
            }
            Ok(())
        })
        .unwrap();
}

/// Whether a map of `v` has the key `<<`: go-yaml v2 writes it plain (Helm 4 renders
/// `podAnnotations: {"<<": x}` as `<<: x`, checked with ../shared/tools/helm_ref.py) and then
/// takes it for a merge key on reading, refusing a value that is no mapping; the reader does as
/// go-yaml does, so such a tree has no round trip through `toYaml`, in Helm either.
fn has_merge_key(v: &Value) -> bool {
    match v {
        Value::Object(m) => m.contains_key("<<") || m.values().any(has_merge_key),
        Value::Array(a) => a.iter().any(has_merge_key),
        _ => false,
    }
}

fn helms_to_yaml_reads_back_as_the_same_tree() {
    let documents = documents().prop_filter("no merge key", |t| !has_merge_key(t));
    runner(3000)
        .run(&documents, |tree| {
            // `toYaml` trims the document's final line break (Helm's pkg/engine/funcs.go,
            // toYAML: strings.TrimSuffix), which a kept-chomping block scalar at the very end
            // (`|2+`) needs; the template writes a line break after it, as this does.
            let text = cilium_cmp_yaml::yaml::go_emit::to_yaml(&tree) + "\n";
            let back = cilium_cmp_yaml::yaml::parse_value(&text)
                .map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
            prop_assert!(same(&tree, &back), "{tree}\n{text}\nread back: {back}");
            Ok(())
        })
        .unwrap();
}

/// `same` is no test that cannot fail: it tells apart trees that differ in one scalar's type,
/// value or place.
fn the_comparison_tells_trees_apart() {
    let pairs = [
        (serde_json::json!({"a": "1"}), serde_json::json!({"a": 1})),
        (serde_json::json!({"a": 1}), serde_json::json!({"a": 1.5})),
        (serde_json::json!({"a": null}), serde_json::json!({})),
        (
            serde_json::json!({"a": [1, 2]}),
            serde_json::json!({"a": [2, 1]}),
        ),
        (
            serde_json::json!({"a": "x "}),
            serde_json::json!({"a": "x"}),
        ),
    ];
    for (a, b) in pairs {
        assert!(!same(&a, &b), "{a} and {b}");
    }
    assert!(same(
        &serde_json::json!({"a": 1, "b": [true]}),
        &serde_json::json!({"b": [true], "a": 1.0})
    ));
}
