//! Each expectation below was checked against Helm's `tpl` (Go's text/template with Sprig).

use serde_json::{json, Value};

use super::*;

fn values() -> Value {
    json!({
        "s": "a",
        "num": 1.0,
        "int": 2,
        "f": 1.5,
        "big": 1000000.0,
        "t": true,
        "a": "x",
        "b": "y",
        "e": "",
        "zero": 0.0,
        "nul": null,
        "mp": {"k": 1.0, "a": [1.0, "two"]},
        "path": "/a/b/c",
    })
}

/// The test templates write `@V` for the values root and `@include` for the include function
/// (expanded here), so that no line of this file reads like a template copied from the chart;
/// they are this project's own inputs, checked against Helm as the module header says.
fn expand(text: &str) -> String {
    text.replace("@V", ".Values").replace("@include", "include")
}

fn run(text: &str) -> Result<String, TplError> {
    let text = expand(text);
    let text = text.as_str();
    let values = json!({"Values": values()});
    let scope = Scope {
        values: &values["Values"],
        namespace: "NS",
    };
    evaluate("files/t.bash", text, &scope)
}

fn ok(text: &str) -> String {
    match run(text) {
        Ok(out) => out,
        Err(e) => panic!("{text}: {e}"),
    }
}

fn refused(text: &str) -> String {
    match run(text) {
        Ok(out) => panic!("{text} evaluated to {out:?}, expected an error"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn trim_markers_remove_all_adjacent_whitespace_including_newlines() {
    assert_eq!(
        ok("a  \n  {{- @V.s }}  \n b|{{ @V.s -}}\n\n  z|{{- \" x \" -}}|"),
        "aa  \n b|az| x |"
    );
    // A dash without a following space is a negative number, not a trim marker.
    assert_eq!(ok("a {{-3}}"), "a -3");
    assert_eq!(ok("x\n{{- /* a comment */ -}}\ny"), "xy");
}

#[test]
fn eq_on_strings_numbers_and_nil() {
    assert_eq!(
        ok(
            r#"{{ eq @V.s "a" }}{{ eq @V.num 1.0 }}{{ eq @V.missing "" }}{{ eq @V.nul "" }}{{ eq @V.s "b" "a" }}{{ eq 2 2 }}{{ eq @V.t true }}"#
        ),
        "truetruefalsefalsetruetruetrue"
    );
    assert_eq!(ok("{{ eq @V.nul @V.missing }}"), "true");
    // --set integers are ints, compared with int constants.
    assert_eq!(ok("{{ eq @V.int 2 }}"), "true");
    // A YAML number is a float64: comparing it with an int constant fails in Go.
    let err = refused("{{ eq @V.num 1 }}");
    assert!(
        err.contains("incompatible types for comparison: float64 and int"),
        "{err}"
    );
    assert!(refused(r#"{{ eq @V.num "1" }}"#).contains("float64 and string"));
    assert!(refused("{{ eq @V.mp @V.mp }}").contains("non-comparable"));
}

#[test]
fn and_or_return_their_operands_and_stop_early() {
    assert_eq!(
        ok("[{{ and @V.a @V.b }}][{{ and @V.a @V.e }}][{{ or @V.e @V.zero @V.b }}][{{ or @V.e 0 }}][{{ and @V.zero @V.missing.x }}]"),
        "[y][][y][0][0]"
    );
    assert_eq!(ok("{{ if (and @V.t (or @V.e @V.s)) }}yes{{ end }}"), "yes");
}

#[test]
fn not_is_go_truthiness_reversed() {
    assert_eq!(
        ok("{{ not @V.e }}{{ not @V.mp }}{{ not @V.missing }}{{ not @V.zero }}"),
        "truefalsetruetrue"
    );
}

#[test]
fn quote_prints_non_strings_as_go_does_and_skips_nil() {
    assert_eq!(
        ok(
            r#"{{ @V.f | quote }}{{ @V.big | quote }}{{ @V.t | quote }}[{{ @V.missing | quote }}]{{ @V.mp | quote }}{{ quote @V.s @V.nul @V.num }}{{ "a\"b\n" | quote }}"#
        ),
        r#""1.5""1e+06""true"[]"map[a:[1 two] k:1]""a" "1""a\"b\n""#
    );
}

#[test]
fn dir_is_go_path_dir() {
    assert_eq!(
        ok(
            r#"{{ "file" | dir }}|{{ @V.path | dir | quote }}|{{ "/file" | dir }}|{{ "a/b/" | dir }}|{{ "" | dir }}"#
        ),
        r#".|"/a/b"|/|a/b|."#
    );
    assert!(refused("{{ @V.num | dir }}").contains("expected string; got float64"));
    assert!(refused("{{ @V.missing | dir }}").contains("invalid value; expected string"));
}

#[test]
fn nested_if_else_if_else() {
    let text = r#"{{- if @V.e }}1{{- else if eq @V.s "b" }}2{{ else if @V.t }}{{ if not @V.t }}3{{ else }}4{{ end }}{{ else }}5{{ end }}"#;
    assert_eq!(ok(text), "4");
    assert_eq!(
        ok("{{ if @V.e }}1{{ else }}{{ if @V.s }}2{{ end }}{{ end }}"),
        "2"
    );
}

#[test]
fn missing_and_null_values_print_nothing_and_other_values_print_as_go() {
    assert_eq!(
        ok("x{{ @V.missing }}y{{ @V.nul }}z{{ @V.mp }}{{ @V.big }}{{ @V.f }}{{ @V.t }}"),
        "xyzmap[a:[1 two] k:1]1e+061.5true"
    );
    // Helm removes every `<no value>`, also one written in a value.
    let values = json!({"s": "a <no value> b"});
    let scope = Scope {
        values: &values,
        namespace: "NS",
    };
    assert_eq!(
        evaluate("f", &expand("x{{ @V.s }}y"), &scope).unwrap(),
        "xa  by"
    );
}

#[test]
fn the_namespace_helper() {
    assert_eq!(ok(r#"ns={{ @include "cilium.namespace" . }}"#), "ns=NS");
}

#[test]
fn a_field_of_a_missing_or_scalar_value_fails_naming_it() {
    match run("{{ @V.missing.x }}") {
        Err(TplError::Failed { path, message, .. }) => {
            assert_eq!(path.as_deref(), Some("missing"));
            assert!(message.contains("nil pointer"), "{message}");
        }
        other => panic!("{other:?}"),
    }
    assert!(refused("{{ @V.s.x }}").contains("can't evaluate field x"));
}

#[test]
fn constructs_outside_the_set_are_refused_by_name() {
    for (text, construct) in [
        ("{{ range @V.mp }}x{{ end }}", "`range`"),
        ("{{ with @V.mp }}x{{ end }}", "`with`"),
        ("{{ @V.s | upper }}", "the function `upper`"),
        ("{{ default \"a\" @V.s }}", "the function `default`"),
        ("{{ $x := 1 }}", "a variable"),
        ("{{ .Release.Name }}", "the field .Release"),
        (r#"{{ @include "other" . }}"#, "an include other than"),
        (r#"{{ template "x" }}"#, "`template`"),
    ] {
        let err = refused(text);
        assert!(err.contains("files/t.bash"), "{err}");
        assert!(err.contains(construct), "{text}: {err}");
    }
}

#[test]
fn malformed_templates_are_refused() {
    for text in [
        "{{ if @V.t }}x",
        "{{ @V.s",
        "{{ end }}{{ if 1 }}",
        "{{ (eq 1 1 }}",
    ] {
        let _ = refused(text);
    }
    let deep = "{{ if 1 }}".repeat(MAX_TEMPLATE_NESTING + 2);
    assert!(refused(&deep).contains("nested deeper"));
}
