//! Helm's `--set`, `--set-string`, `--set-json` and `--set-file` read by cilium-cmp exactly as
//! Helm's own parser (strvals, through the tests' helm-python-sdk) reads them: same tree for the
//! same argument, or both refuse it. Where cilium-cmp is stricter than Helm on purpose (trailing
//! text after a JSON value), the case is listed apart.

use crate::support::harness;
use crate::support::scratch;

use std::process::Command;

use cilium_cmp_render::setexpr::{self, Kind, SetArgs};
use serde_json::{Map, Value};

/// Reads [[kind, expr], ...] on stdin; prints, for each, {"ok": tree} or {"err": message} as
/// Helm's strvals parses it (files are read relative to the working directory).
const HELM_STRVALS: &str = r#"
import json, sys
from helm_python import _native
out = []
for kind, expr in json.load(sys.stdin):
    try:
        out.append({"ok": json.loads(_native.call_string("helm_strvals_" + kind, expr))})
    except Exception as e:
        out.append({"err": str(e)})
print(json.dumps(out))
"#;

pub fn tests() -> Vec<harness::Trial> {
    harness::group(
        file!(),
        vec![
            harness::test(
                "set_flags_parse_as_helm_parses_them",
                set_flags_parse_as_helm_parses_them,
            )
            .python(),
            harness::test(
                "stricter_than_helm_where_helm_guesses",
                stricter_than_helm_where_helm_guesses,
            )
            .python(),
        ],
    )
}

fn helm_parse(cases: &[(Kind, &str)], dir: &std::path::Path) -> Vec<Result<Value, String>> {
    let py = harness::python();
    let input: Vec<(&str, &str)> = cases
        .iter()
        .map(|(k, e)| {
            let f = match k {
                Kind::Typed => "parse",
                Kind::String => "parse_string",
                Kind::Json => "parse_json",
                Kind::File => "parse_file",
            };
            (f, *e)
        })
        .collect();
    let mut child = Command::new(py)
        .args(["-c", HELM_STRVALS])
        .current_dir(dir)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    serde_json::to_writer(child.stdin.take().unwrap(), &input).unwrap();
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "the Helm helper failed");
    let list: Vec<Value> = serde_json::from_slice(&o.stdout).unwrap();
    list.into_iter()
        .map(|r| match r.get("ok") {
            Some(v) => Ok(v.clone()),
            None => Err(r["err"].as_str().unwrap_or("").to_string()),
        })
        .collect()
}

fn ours(kind: Kind, expr: &str, dir: &std::path::Path) -> Result<Value, String> {
    let mut args = SetArgs::default();
    if kind == Kind::File {
        for name in setexpr::file_names(expr).map_err(|e| e.to_string())? {
            let text = std::fs::read_to_string(dir.join(&name)).map_err(|e| e.to_string())?;
            args.files.insert(name, text);
        }
    }
    match kind {
        Kind::Typed => args.typed.push(expr.into()),
        Kind::String => args.string.push(expr.into()),
        Kind::Json => args.json.push(expr.into()),
        Kind::File => args.file.push(expr.into()),
    }
    let mut root = Value::Object(Map::new());
    args.apply(&mut root).map_err(|(_, _, m)| m.to_string())?;
    Ok(root)
}

/// Numbers compared as numbers (Helm's int64 1 and float64 1 print alike in JSON).
fn normal(v: &Value) -> Value {
    match v {
        Value::Number(n) => serde_json::json!(n.as_f64().unwrap()),
        Value::Array(a) => Value::Array(a.iter().map(normal).collect()),
        Value::Object(m) => Value::Object(m.iter().map(|(k, v)| (k.clone(), normal(v))).collect()),
        v => v.clone(),
    }
}

fn set_flags_parse_as_helm_parses_them() {
    let dir = scratch::Scratch::new("strvals");
    dir.write("multi.txt", "line one\nline two, with a comma\n");
    dir.write("a.b", "dotted name");
    let cases: &[(Kind, &str)] = &[
        (Kind::Typed, "replicas=1"),
        (Kind::Typed, "a.b=1,c=true,d=x\\,y"),
        (Kind::Typed, "x=TRUE,y=Null,z=+5,w=-01,v=00,u=0,t=1.5"),
        (Kind::Typed, "l[1].n=z,m={p,q}"),
        (Kind::Typed, "k\\.dot=007,e="),
        (Kind::Typed, "name"),
        (Kind::Typed, "l={a,,b},m={},n={,x},o={y,}"),
        (Kind::Typed, "a=1,,b=2"),
        (Kind::Typed, ",a=1"),
        (Kind::Typed, "a=1,"),
        (Kind::String, "l={a,,1}"),
        (Kind::String, "replicas=1"),
        (Kind::String, "l={1,true},m.n=null"),
        (Kind::String, "a\\.b=c\\,d"),
        (Kind::Json, "a=[1,{\"b\":2}]"),
        (Kind::Json, "a=[1,{\"b\":2}],c.d=\"x,y\",e="),
        (Kind::Json, "a.b[1]=true,n=null, s=\"t\""),
        (Kind::Json, "o={\"k\":{\"l\":[1.5,-2,\"3\"]}}"),
        (Kind::Json, "a=[1,"),
        (Kind::Json, "a={"),
        (Kind::File, "conf=multi.txt"),
        (Kind::File, "x.y=multi.txt,z=a\\.b"),
        (Kind::File, "l={multi.txt,a.b}"),
    ];
    let helm = helm_parse(cases, &dir.0);
    let mut checked = 0;
    for ((kind, expr), helm) in cases.iter().zip(helm) {
        let mine = ours(*kind, expr, &dir.0);
        match (&helm, &mine) {
            (Ok(h), Ok(m)) => assert_eq!(normal(h), normal(m), "{kind:?} {expr}"),
            (Err(_), Err(_)) => {}
            _ => panic!("{kind:?} {expr}: Helm {helm:?}, cilium-cmp {mine:?}"),
        }
        checked += 1;
    }
    assert_eq!(checked, cases.len());
}

fn stricter_than_helm_where_helm_guesses() {
    let dir = scratch::Scratch::new("strvals-strict");
    // Helm reads the text after a JSON value as the next assignment even without a comma.
    let helm = helm_parse(&[(Kind::Json, "a=1x=2")], &dir.0);
    assert!(helm[0].is_ok(), "{helm:?}");
    assert!(ours(Kind::Json, "a=1x=2", &dir.0).is_err());
    // Helm drops an assignment whose list index is never closed, and sets nothing.
    let helm = helm_parse(&[(Kind::String, "x[0=1")], &dir.0);
    assert_eq!(helm[0], Ok(serde_json::json!({})));
    assert!(ours(Kind::String, "x[0=1", &dir.0).is_err());
}
