//! The engine's Go `text/template`, Sprig and Helm semantics on small templates, each
//! checked against what Go/Helm print (the expected texts are Helm 4's outputs for the same
//! template), and its refusals: functions that would make a render depend on randomness, the
//! clock or the cluster.

use cilium_cmp_render::engine::helm::render_text;
use cilium_cmp_render::engine::{ErrorKind, TemplateError};
use serde_json::json;

use crate::support::harness;

pub fn tests() -> Vec<harness::Trial> {
    harness::group(
        file!(),
        vec![
            harness::test("trim_markers_and_comments", trim_markers_and_comments),
            harness::test(
                "missing_keys_print_nothing_but_nil_fields_fail",
                missing_keys_print_nothing_but_nil_fields_fail,
            ),
            harness::test(
                "numbers_from_values_are_float64",
                numbers_from_values_are_float64,
            ),
            harness::test("control_structures", control_structures),
            harness::test("and_or_short_circuit", and_or_short_circuit),
            harness::test("sprig_edge_cases", sprig_edge_cases),
            harness::test(
                "required_and_fail_carry_the_charts_message",
                required_and_fail_carry_the_charts_message,
            ),
            harness::test(
                "tpl_sees_values_and_keeps_its_defines_to_itself",
                tpl_sees_values_and_keeps_its_defines_to_itself,
            ),
            harness::test(
                "random_and_cluster_functions_are_refused_with_their_place",
                random_and_cluster_functions_are_refused_with_their_place,
            ),
            harness::test(
                "the_clock_never_reaches_the_output",
                the_clock_never_reaches_the_output,
            ),
            harness::test("parse_errors_name_the_place", parse_errors_name_the_place),
        ],
    )
}

fn render(text: &str, values: serde_json::Value) -> Result<String, TemplateError> {
    render_text("t.yaml", text, &values)
}

fn ok(text: &str) -> String {
    render(text, json!({})).unwrap_or_else(|e| panic!("{text:?}: {e}"))
}

fn fails(text: &str) -> TemplateError {
    match render(text, json!({})) {
        Ok(out) => panic!("{text:?} rendered {out:?}, expected an error"),
        Err(e) => e,
    }
}

fn trim_markers_and_comments() {
    assert_eq!(ok("a  {{- 1 -}}  b"), "a1b");
    assert_eq!(ok("a {{/* c */}} b"), "a  b");
    assert_eq!(ok("a\n{{- /* c */ -}}\nb"), "ab");
    assert_eq!(ok("{{ -1 }}"), "-1");
}

fn missing_keys_print_nothing_but_nil_fields_fail() {
    // missingkey=zero prints `<no value>`, which Helm removes.
    assert_eq!(
        render("[{{ .Values.a.b }}]", json!({"a": {}})).unwrap(),
        "[]"
    );
    let e = render("{{ .Values.a.b.c }}", json!({"a": {}})).unwrap_err();
    assert!(
        e.message.contains("nil pointer evaluating interface {}.c"),
        "{e}"
    );
    // A nil through parentheses is an untyped nil: its fields are nil too.
    assert_eq!(
        render("[{{ (.Values.a.b).c }}]", json!({"a": {}})).unwrap(),
        "[]"
    );
}

fn numbers_from_values_are_float64() {
    let v = json!({"n": 1000000, "p": 7445, "f": 0.5});
    assert_eq!(
        render("{{ .Values.n }} {{ .Values.p }} {{ .Values.f }}", v.clone()).unwrap(),
        "1e+06 7445 0.5"
    );
    assert_eq!(
        render("{{ toYaml .Values.n }}", v.clone()).unwrap(),
        "1000000"
    );
    assert_eq!(
        render(
            "{{ .Values.n | int }} {{ typeOf .Values.p }} {{ typeOf 1 }}",
            v.clone()
        )
        .unwrap(),
        "1000000 float64 int"
    );
    // Go's eq refuses an int against a float64.
    let e = render("{{ eq .Values.p 7445 }}", v).unwrap_err();
    assert!(
        e.message.contains("incompatible types for comparison"),
        "{e}"
    );
}

fn control_structures() {
    assert_eq!(
        ok("{{ range $k, $v := dict \"b\" 2 \"a\" 1 }}{{ $k }}={{ $v }};{{ end }}"),
        "a=1;b=2;"
    );
    assert_eq!(ok("{{ range $i := until 10 }}{{ if eq $i 3 }}{{ break }}{{ end }}{{ if eq $i 1 }}{{ continue }}{{ end }}{{ $i }}{{ end }}"), "02");
    assert_eq!(ok("{{ range list }}x{{ else }}empty{{ end }}"), "empty");
    assert_eq!(ok("{{ range 3 }}{{ . }}{{ end }}"), "012");
    assert_eq!(
        ok("{{ with \"\" }}a{{ else with \"b\" }}{{ . }}{{ end }}"),
        "b"
    );
    assert_eq!(
        ok("{{ if false }}a{{ else if true }}b{{ else }}c{{ end }}"),
        "b"
    );
    assert_eq!(
        ok("{{ $x := 1 }}{{ if true }}{{ $x = 2 }}{{ $y := 3 }}{{ end }}{{ $x }}"),
        "2"
    );
    assert_eq!(ok("{{ define \"d\" }}<{{ . }}>{{ end }}{{ template \"d\" 5 }}{{ include \"d\" 6 | upper }}"), "<5><6>");
}

fn and_or_short_circuit() {
    assert_eq!(ok("{{ and false (fail \"never\") }}"), "false");
    assert_eq!(ok("{{ or 0 \"\" \"x\" (fail \"never\") }}"), "x");
}

fn sprig_edge_cases() {
    assert_eq!(ok("{{ default \"d\" \"\" }} {{ default \"d\" false }} {{ default \"d\" 0 }} {{ default \"d\" \"v\" }}"), "d d d v");
    assert_eq!(
        ok("[{{ quote nil }}] {{ quote 1 \"a\" }}"),
        "[] \"1\" \"a\""
    );
    assert_eq!(
        ok("{{ trunc 3 \"abcdef\" }} {{ trunc -2 \"abcdef\" }} {{ trimSuffix \"-\" \"a-\" }}"),
        "abc ef a"
    );
    assert_eq!(ok("{{ nindent 2 \"a\\nb\" }}"), "\n  a\n  b");
    assert_eq!(ok("{{ $d := dict \"a\" 1 }}{{ $_ := set $d \"b\" 2 }}{{ $_ := unset $d \"a\" }}{{ toJson $d }}"), "{\"b\":2}");
    // mergo: `merge` keeps the destination's values but fills its empty ones.
    assert_eq!(
        ok("{{ toJson (merge (dict \"a\" 1 \"e\" \"\") (dict \"a\" 2 \"e\" \"x\" \"n\" 3)) }}"),
        "{\"a\":1,\"e\":\"x\",\"n\":3}"
    );
    assert_eq!(
        ok("{{ toJson (mergeOverwrite (dict \"a\" 1) (dict \"a\" 2)) }}"),
        "{\"a\":2}"
    );
    assert_eq!(ok("{{ dig \"a\" \"b\" \"def\" (dict \"a\" (dict \"b\" 5)) }} {{ dig \"x\" \"def\" (dict) }}"), "5 def");
    assert_eq!(
        ok("{{ semverCompare \">=1.8\" \"1.10.0\" }} {{ (semver \"v1.35.2\").Minor }}"),
        "true 35"
    );
    assert_eq!(ok("{{ regexReplaceAll \"(a+)b\" \"xaab\" \"<$1>\" }} {{ regexMatch \"^[0-9]+$\" \"123\" }}"), "x<aa> true");
    assert_eq!(
        ok("{{ toJson \"<&>\" }} {{ toRawJson \"<&>\" }}"),
        "\"\\u003c\\u0026\\u003e\" \"<&>\""
    );
    assert_eq!(
        ok("{{ printf \"%s-%d-%v-%q\" \"a\" 1 2.5 \"b\" }}"),
        "a-1-2.5-\"b\""
    );
    assert_eq!(
        ok("{{ sha256sum \"abc\" }}"),
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
    assert_eq!(
        ok("{{ kindOf (list) }} {{ kindIs \"map\" (dict) }} {{ kindOf nil }}"),
        "slice true invalid"
    );
    assert_eq!(
        ok("{{ join \",\" (list 1 nil \"a\") }} {{ splitList \",\" \"a,b\" | len }}"),
        "1,a 2"
    );
    assert_eq!(
        ok("{{ ternary \"y\" \"n\" true }} {{ coalesce \"\" nil \"c\" }} {{ int \"0755\" }}"),
        "y c 493"
    );
}

fn required_and_fail_carry_the_charts_message() {
    let e = render("{{ required \"x is required\" .Values.x }}", json!({})).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Fail);
    assert_eq!(e.message, "x is required");
    assert_eq!((e.file.as_str(), e.line), ("t.yaml", 1));
    assert_eq!(fails("\n\n  {{ fail \"boom\" }}").line, 3);
}

fn tpl_sees_values_and_keeps_its_defines_to_itself() {
    let v = json!({"name": "x", "t": "{{ define \"in\" }}I{{ end }}{{ .Values.name }}-{{ include \"in\" . }}"});
    assert_eq!(render("{{ tpl .Values.t . }}", v.clone()).unwrap(), "x-I");
    let e = render("{{ tpl .Values.t . }}{{ include \"in\" . }}", v).unwrap_err();
    assert!(e.message.contains("no template \"in\""), "{e}");
}

/// Every function that mints randomness or reads the clock, the cluster, DNS or the
/// environment is refused where it is reached, with its name and the template position.
fn random_and_cluster_functions_are_refused_with_their_place() {
    for (call, function) in [
        ("genCA \"x\" 365", "genCA"),
        ("genPrivateKey \"rsa\"", "genPrivateKey"),
        ("randAlphaNum 10", "randAlphaNum"),
        ("uuidv4", "uuidv4"),
        ("lookup \"v1\" \"Secret\" \"ns\" \"n\"", "lookup"),
        ("env \"HOME\"", "env"),
        ("getHostByName \"example.com\"", "getHostByName"),
        ("date \"2006\" now", "date"),
    ] {
        let e = fails(&format!("line1\n  {{{{ {call} }}}}"));
        assert_eq!(
            e.kind,
            ErrorKind::NonDeterministic {
                function: function.into()
            },
            "{call}: {e}"
        );
        assert_eq!((e.file.as_str(), e.line), ("t.yaml", 2), "{call}");
    }
}

/// `now` is an opaque instant: comparing it with itself shifted by a duration (the chart's
/// `hasDuration`, `validateDuration`) is deterministic, printing it is refused.
fn the_clock_never_reaches_the_output() {
    assert_eq!(ok("{{ $n := now }}{{ ne $n ($n | dateModify \"0s\") }} {{ ne $n ($n | dateModify \"5m\") }}"), "false true");
    let e = fails("{{ now | mustDateModify \"5 minutes\" }}");
    assert!(
        e.message.contains("invalid duration") || e.message.contains("unknown unit"),
        "{e}"
    );
    for leak in [
        "{{ now }}",
        "{{ toString now }}",
        "{{ print (list now) }}",
        "{{ toJson (dict \"t\" now) }}",
        "{{ (now).Unix }}",
    ] {
        let e = fails(leak);
        assert_eq!(
            e.kind,
            ErrorKind::NonDeterministic {
                function: "now".into()
            },
            "{leak}: {e}"
        );
    }
}

fn parse_errors_name_the_place() {
    let e = fails("a\n{{ if }}");
    assert_eq!((e.kind, e.line), (ErrorKind::Parse, 2));
    assert!(fails("{{ $undefined }}")
        .message
        .contains("undefined variable"));
    assert!(fails("{{ nosuchfunction 1 }}")
        .message
        .contains("not defined"));
    assert_eq!(fails("{{ break }}").kind, ErrorKind::Parse);
}
