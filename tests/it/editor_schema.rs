//! The editor schema (`cilium-cmp schema`) is valid JSON Schema, accepts every scenario's values
//! that the render accepts, refuses those the unknown-values check refuses, and agrees with that
//! check key by key. The Renovate snippet of docs/application-folder.md finds the version line of the shipped
//! settings files.

use crate::support::charts;
use crate::support::harness;
use crate::support::scenario;
use crate::support::scratch;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock};

use cilium_cmp_render::editor_schema::values_schema;
use cilium_cmp_render::versions;
use proptest::prelude::*;
use scratch::Scratch;
use serde_json::{json, Value};

const SHARED_SCENARIOS: &str = "cilium-reference/scenarios";

pub fn tests() -> Vec<harness::Trial> {
    harness::group(
        file!(),
        vec![
            harness::test(
                "the_schema_command_prints_a_draft_07_schema",
                the_schema_command_prints_a_draft_07_schema,
            ),
            harness::test(
                "schemas_are_valid_and_refuse_a_typo",
                schemas_are_valid_and_refuse_a_typo,
            )
            .python(),
            harness::test(
                "every_scenario_the_render_accepts_fits_the_schema",
                every_scenario_the_render_accepts_fits_the_schema,
            )
            .shared(SHARED_SCENARIOS)
            .shared("charts")
            .python(),
            harness::test(
                "the_schema_agrees_with_the_check_key_by_key",
                the_schema_agrees_with_the_check_key_by_key,
            ),
            harness::test(
                "the_documented_renovate_snippet_finds_the_cilium_version",
                the_documented_renovate_snippet_finds_the_cilium_version,
            )
            .python(),
        ],
    )
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn python() -> &'static Path {
    harness::python()
}

/// Each release's schema, made once per test process (the property test asks often).
fn schema(v: &str) -> Value {
    static CACHE: OnceLock<Mutex<BTreeMap<String, Value>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let mut cache = cache.lock().unwrap_or_else(|e| e.into_inner());
    cache
        .entry(v.to_string())
        .or_insert_with(|| values_schema(versions::parse(v).unwrap()).expect("a schema"))
        .clone()
}

/// Validates `cases` (release, values, whether they must be valid) with Python's jsonschema
/// against each release's schema, after checking each schema itself against draft-07's
/// metaschema. Returns the number of cases checked; panics on any disagreement.
fn validate(cases: &[(String, Value, bool)]) -> usize {
    const SCRIPT: &str = r#"
import json, sys
import jsonschema
data = json.load(open(sys.argv[1]))
validators = {}
for v, s in data["schemas"].items():
    jsonschema.Draft7Validator.check_schema(s)
    validators[v] = jsonschema.Draft7Validator(s)
bad = []
for c in data["cases"]:
    errors = list(validators[c["version"]].iter_errors(c["values"]))
    if (not errors) != c["valid"]:
        bad.append({"name": c["name"], "version": c["version"], "expected valid": c["valid"],
                    "errors": [e.message[:200] + " at " + "/".join(map(str, e.absolute_path)) for e in errors[:3]]})
print(json.dumps(bad, indent=1))
print(len(data["cases"]), "checked", file=sys.stderr)
sys.exit(1 if bad else 0)
"#;
    let mut schemas = serde_json::Map::new();
    let mut list = Vec::new();
    for (i, (v, values, valid)) in cases.iter().enumerate() {
        schemas.entry(v.clone()).or_insert_with(|| schema(v));
        list.push(json!({"name": i, "version": v, "values": values, "valid": valid}));
    }
    let dir = Scratch::new("schema");
    let input = dir.write(
        "cases.json",
        &json!({"schemas": schemas, "cases": list}).to_string(),
    );
    let o = Command::new(python())
        .arg("-c")
        .arg(SCRIPT)
        .arg(&input)
        .output()
        .expect("python runs");
    assert!(
        o.status.success(),
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    cases.len()
}

fn the_schema_command_prints_a_draft_07_schema() {
    let o = Command::new(env!("CARGO_BIN_EXE_cilium-cmp"))
        .args(["schema", "--cilium-version", "1.20.0"])
        .env_clear()
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let printed: Value = serde_json::from_slice(&o.stdout).expect("JSON");
    assert_eq!(printed, schema("1.20.0"));
    assert_eq!(
        printed["$schema"],
        json!("http://json-schema.org/draft-07/schema#")
    );
    // A release it does not render; an archive named that cannot be read (a listed release's
    // schema is compiled in, but a path given is still checked).
    for (args, kind) in [
        (&["--cilium-version", "1.17.0"][..], "version.unknown"),
        (
            &[
                "--cilium-version",
                "1.20.0",
                "--chart-archive",
                "/nonexistent/cilium-1.20.0.tgz",
            ],
            "chart.unreadable",
        ),
    ] {
        let bad = Command::new(env!("CARGO_BIN_EXE_cilium-cmp"))
            .arg("schema")
            .args(args)
            .args(["--error-format", "json"])
            .env_clear()
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&bad.stderr);
        assert_eq!(bad.status.code(), Some(1), "{err}");
        assert!(bad.stdout.is_empty(), "{err}");
        let d: Value = serde_json::from_str(err.trim_end()).expect("one JSON diagnostic");
        assert_eq!(d["kind"], kind, "{err}");
    }
}

/// Every release's schema passes the metaschema; a typo is refused and its fix accepted.
fn schemas_are_valid_and_refuse_a_typo() {
    let mut cases = Vec::new();
    for v in versions::supported() {
        let typo = json!({"cgroup": {"automount": {"enabled": false}}});
        let fixed = json!({"cgroup": {"autoMount": {"enabled": false}}});
        cases.push((v.to_string(), typo, false));
        cases.push((v.to_string(), fixed, true));
        // Null removes a default: allowed wherever a value is typed.
        cases.push((
            v.to_string(),
            json!({"MTU": null, "cgroup": {"autoMount": null}}),
            true,
        ));
        // Free-form maps take any key; a wrong type is still refused.
        cases.push((
            v.to_string(),
            json!({"podAnnotations": {"any.key/x": "y"}}),
            true,
        ));
        cases.push((v.to_string(), json!({"MTU": "large"}), false));
    }
    assert_eq!(validate(&cases), cases.len());
}

/// Scenario files: the shared ones and the project's own.
fn scenario_files() -> Vec<PathBuf> {
    let mut files = Vec::new();
    let dirs = [
        root().join("tests/scenarios"),
        harness::shared(SHARED_SCENARIOS),
    ];
    for d in dirs {
        for e in std::fs::read_dir(d).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "yaml") {
                files.push(p);
            }
        }
    }
    files.sort();
    files
}

/// Each scenario's values, for each release: the schema accepts them where the render does, and
/// refuses them where the render refuses a value the release does not know.
fn every_scenario_the_render_accepts_fits_the_schema() {
    let mut cases = Vec::new();
    let (mut accepted, mut unknown) = (0, 0);
    for file in scenario_files() {
        let text = std::fs::read_to_string(&file).unwrap();
        let values = cilium_cmp_yaml::yaml::parse_values(&text).unwrap().value["values"].clone();
        for v in versions::supported() {
            let (inputs, _) = scenario::inputs_from_file(&file, v).expect("scenario");
            let inputs = charts::with_archive(inputs);
            let valid = match cilium_cmp_render::render::render(&inputs) {
                Ok(_) => true,
                Err(cilium_cmp_render::error::RenderError::UnknownValues { .. }) => false,
                // Refused for another reason (a template rule, the chart's schema on merged
                // values): nothing to say about keys.
                Err(_) => continue,
            };
            if valid {
                accepted += 1;
            } else {
                unknown += 1;
            }
            // The one documented difference (see `crates/render/src/editor_schema.rs`): the render accepts a
            // null on a key the release does not know, which the schema underlines. The null
            // scenarios hold such keys, so a render that accepts is checked without its nulls.
            let values = if valid {
                without_nulls(&values)
            } else {
                values.clone()
            };
            cases.push((v.to_string(), values, valid));
        }
    }
    assert!(accepted > 100, "only {accepted} accepted scenario renders");
    eprintln!("{accepted} accepted and {unknown} refused scenario values checked");
    validate(&cases);
}

/// The values with every null map entry left out.
fn without_nulls(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(_, c)| !c.is_null())
                .map(|(k, c)| (k.clone(), without_nulls(c)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// Whether the schema lets `path` (a chain of map keys, the last one set to a scalar) through, by
/// its `properties` and `additionalProperties` alone (types are the chart's business).
fn schema_takes(schema: &Value, path: &[String]) -> bool {
    let mut node = schema;
    for key in path {
        // The null-allowing wrapper: the real schema is the second alternative.
        if let Some(Value::Array(alts)) = node.get("anyOf") {
            if alts.len() == 2 && alts[0] == json!({"type": "null"}) {
                node = &alts[1];
            }
        }
        match node.get("properties").and_then(|p| p.get(key)) {
            Some(child) => node = child,
            None if node.get("additionalProperties") == Some(&json!(false)) => return false,
            None => return true,
        }
    }
    true
}

fn check_takes(version: &str, path: &[String]) -> bool {
    let v = versions::parse(version).unwrap();
    let mut values = json!(1);
    for k in path.iter().rev() {
        values = json!({ k: values });
    }
    let layer = cilium_cmp_render::values::Layer::from_yaml(
        "values.yaml",
        &cilium_cmp_yaml::yaml::to_string(&values),
    )
    .unwrap();
    let resolved = cilium_cmp_render::values::Values::resolve(versions::defaults(v), vec![layer]);
    cilium_cmp_render::known_keys::check(&resolved, v).is_empty()
}

/// Every map key path of a release's defaults and every path its templates read.
fn known_paths(version: &str) -> Vec<Vec<String>> {
    fn collect(node: &Value, prefix: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
        if let Value::Object(m) = node {
            for (k, v) in m {
                prefix.push(k.clone());
                out.push(prefix.clone());
                collect(v, prefix, out);
                prefix.pop();
            }
        }
    }
    let v = versions::parse(version).unwrap();
    let mut out = Vec::new();
    collect(&versions::defaults(v), &mut Vec::new(), &mut out);
    out.extend(
        versions::template_keys(v)
            .iter()
            .map(|k| k.split('.').map(String::from).collect()),
    );
    out.retain(|p| p.iter().all(|k| !k.is_empty() && !k.contains('.')));
    out.sort();
    out.dedup();
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    /// A known path, a typo of its last key, or a key added below it: the schema and the check
    /// give the same verdict.
    fn the_schema_agrees_with_the_check_key_by_key(
        release in 0usize..64,
        pick in any::<prop::sample::Index>(),
        edit in 0u8..4,
        at in any::<prop::sample::Index>(),
        letter in "[a-zA-Z]",
    ) {
        let all: Vec<&str> = versions::supported().collect();
        let version = all[release % all.len()];
        let paths = known_paths(version);
        let mut path = paths[pick.index(paths.len())].clone();
        let last = path.last_mut().unwrap();
        let mut chars: Vec<char> = last.chars().collect();
        let i = at.index(chars.len() + 1);
        match edit {
            0 => {}
            1 => chars.insert(i, letter.chars().next().unwrap()),
            2 if chars.len() > 1 => { chars.remove(i.min(chars.len() - 1)); }
            _ => {}
        }
        *last = chars.into_iter().collect();
        if edit == 3 {
            path.push(format!("x{letter}"));
        }
        let s = schema(version);
        prop_assert_eq!(
            schema_takes(&s, &path),
            check_takes(version, &path),
            "{} in {}", path.join("."), version
        );
    }
}

/// The Renovate snippet of docs/application-folder.md, applied as Renovate would (its file pattern and its regex, run
/// by Python's `re`, close enough to RE2 for this pattern), finds the version of every shipped
/// settings file and names the Cilium chart.
fn the_documented_renovate_snippet_finds_the_cilium_version() {
    let readme = std::fs::read_to_string(root().join("docs/application-folder.md")).unwrap();
    let start = readme
        .find("```json\n{\n  \"customManagers\"")
        .expect("the snippet");
    let body = &readme[start + "```json\n".len()..];
    let snippet: Value = serde_json::from_str(&body[..body.find("```").unwrap()]).expect("JSON");
    let manager = &snippet["customManagers"][0];
    assert_eq!(manager["customType"], "regex");
    assert_eq!(manager["datasourceTemplate"], "helm");
    assert_eq!(manager["depNameTemplate"], "cilium");
    assert_eq!(manager["registryUrlTemplate"], "https://helm.cilium.io/");
    let mut files = Vec::new();
    for dir in ["examples", "sidecar"] {
        find_settings(&root().join(dir), &mut files);
    }
    assert!(!files.is_empty());
    const SCRIPT: &str = r#"
import json, re, sys
m = json.loads(sys.argv[1])
def py(rx):  # RE2/ECMAScript named groups to Python's
    return re.sub(r"\(\?<([A-Za-z]\w*)>", r"(?P<\1>", rx)
files = [re.compile(py(p.strip("/"))) for p in m["managerFilePatterns"]]
rx = [re.compile(py(s)) for s in m["matchStrings"]]
for path in sys.argv[2:]:
    rel = path.split("/./", 1)[1]
    assert any(f.search(rel) for f in files), f"the file pattern misses {rel}"
    text = open(path).read()
    found = [x.groupdict()["currentValue"] for r in rx for x in r.finditer(text)]
    print(rel, found)
"#;
    let o = Command::new(python())
        .arg("-c")
        .arg(SCRIPT)
        .arg(manager.to_string())
        .args(files.iter().map(|f| {
            format!(
                "{}/./{}",
                root().display(),
                f.strip_prefix(root()).unwrap().display()
            )
        }))
        .output()
        .expect("python runs");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{out}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    for (file, line) in files.iter().zip(out.lines()) {
        let text = std::fs::read_to_string(file).unwrap();
        let settings = cilium_cmp_gitops::argocd::folder::parse_settings(&text, "x").unwrap();
        let version = settings.cilium_version.expect("a version");
        assert!(
            line.ends_with(&format!("['{version}']")),
            "{}: {line}",
            file.display()
        );
    }
}

fn find_settings(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            find_settings(&p, out);
        } else if p.file_name().is_some_and(|n| n == "cilium-cmp.yaml") {
            out.push(p);
        }
    }
}
