//! Hostile input against the engine's bounds: text that `tpl` would evaluate from a values
//! file (recursion, exponential branching, runaway loops and strings, deep nesting, maps that
//! contain themselves) must end in a clear error, never a hang, a stack overflow or a panic.

use std::time::{Duration, Instant};

use cilium_cmp_render::engine::helm::render_text;
use cilium_cmp_render::engine::{ErrorKind, TemplateError};
use serde_json::json;

use crate::support::harness;

pub fn tests() -> Vec<harness::Trial> {
    harness::group(
        file!(),
        vec![
            harness::test(
                "recursive_include_stops_at_helms_bound",
                recursive_include_stops_at_helms_bound,
            ),
            harness::test("recursive_template_stops", recursive_template_stops),
            harness::test(
                "exponential_branching_stops_at_the_step_bound",
                exponential_branching_stops_at_the_step_bound,
            ),
            harness::test("runaway_loops_stop", runaway_loops_stop),
            harness::test(
                "runaway_strings_and_lists_stop",
                runaway_strings_and_lists_stop,
            ),
            harness::test(
                "deep_nesting_is_a_parse_error_not_a_stack_overflow",
                deep_nesting_is_a_parse_error_not_a_stack_overflow,
            ),
            harness::test(
                "a_map_that_contains_itself_does_not_overflow",
                a_map_that_contains_itself_does_not_overflow,
            ),
            harness::test(
                "garbage_templates_are_errors_not_panics",
                garbage_templates_are_errors_not_panics,
            ),
        ],
    )
}

/// Renders `text` through `tpl`, as a chart would evaluate a value, and must fail quickly.
fn hostile(text: &str) -> TemplateError {
    let start = Instant::now();
    let r = render_text(
        "t.yaml",
        "{{ tpl .Values.evil . }}",
        &json!({ "evil": text }),
    );
    let took = start.elapsed();
    assert!(took < Duration::from_secs(60), "{text:?} took {took:?}");
    match r {
        Ok(out) => panic!("{text:?} rendered {} bytes, expected a refusal", out.len()),
        Err(e) => {
            assert!(!e.message.contains("panicked"), "{text:?}: {e}");
            e
        }
    }
}

fn recursive_include_stops_at_helms_bound() {
    let e = hostile("{{ define \"x\" }}{{ include \"x\" . }}{{ end }}{{ include \"x\" . }}");
    assert_eq!(e.kind, ErrorKind::Limit, "{e}");
    assert!(e.message.contains("nest"), "{e}");
}

fn recursive_template_stops() {
    let e = hostile("{{ define \"x\" }}{{ template \"x\" . }}{{ end }}{{ template \"x\" . }}");
    assert_eq!(e.kind, ErrorKind::Limit, "{e}");
}

fn exponential_branching_stops_at_the_step_bound() {
    // Each level calls the next twice: 2^60 calls, within every depth bound.
    let mut t = String::new();
    for i in 0..60 {
        t.push_str(&format!("{{{{ define \"l{i}\" }}}}{{{{ include \"l{}\" . }}}}{{{{ include \"l{}\" . }}}}{{{{ end }}}}", i + 1, i + 1));
    }
    t.push_str("{{ define \"l60\" }}x{{ end }}{{ include \"l0\" . }}");
    let e = hostile(&t);
    assert_eq!(e.kind, ErrorKind::Limit, "{e}");
}

fn runaway_loops_stop() {
    let e = hostile("{{ range until 100000000 }}x{{ end }}");
    assert_eq!(e.kind, ErrorKind::Limit, "{e}");
    let e = hostile("{{ range $i := until 1000 }}{{ range until 1000 }}{{ range until 1000 }}{{ end }}{{ end }}{{ end }}");
    assert_eq!(e.kind, ErrorKind::Limit, "{e}");
    let e = hostile("{{ range 100000000000 }}{{ end }}");
    assert_eq!(e.kind, ErrorKind::Limit, "{e}");
}

fn runaway_strings_and_lists_stop() {
    let e = hostile("{{ repeat 1000000000 \"x\" }}");
    assert_eq!(e.kind, ErrorKind::Limit, "{e}");
    let e = hostile("{{ $s := \"xxxxxxxxxxxxxxxx\" }}{{ range until 64 }}{{ $s = print $s $s }}{{ end }}{{ len $s }}");
    assert_eq!(e.kind, ErrorKind::Limit, "{e}");
    let e = hostile(
        "{{ $l := list 1 }}{{ range until 64 }}{{ $l = concat $l $l }}{{ end }}{{ len $l }}",
    );
    assert_eq!(e.kind, ErrorKind::Limit, "{e}");
    let e = hostile("{{ nindent 1000000000 \"a\" }}");
    assert_eq!(e.kind, ErrorKind::Limit, "{e}");
    let e = hostile("{{ $s := repeat 1000000 \"x\" }}{{ range until 100 }}{{ $s }}{{ end }}");
    assert_eq!(e.kind, ErrorKind::Limit, "{e}");
}

fn deep_nesting_is_a_parse_error_not_a_stack_overflow() {
    let deep = format!("{}1{}", "(".repeat(100_000), ")".repeat(100_000));
    let e = hostile(&format!("{{{{ {deep} }}}}"));
    assert_eq!(e.kind, ErrorKind::Parse, "{e}");
    let ifs = format!(
        "{}{}",
        "{{ if true }}".repeat(50_000),
        "{{ end }}".repeat(50_000)
    );
    let e = hostile(&ifs);
    assert_eq!(e.kind, ErrorKind::Parse, "{e}");
}

fn a_map_that_contains_itself_does_not_overflow() {
    // `set` shares maps as Go does, so a map can hold itself; encoding it must end.
    let start = Instant::now();
    for f in ["toYaml", "toJson", "deepCopy", "print", "toString"] {
        let t =
            format!("{{{{ $d := dict }}}}{{{{ $_ := set $d \"self\" $d }}}}{{{{ {f} $d | len }}}}");
        if let Err(e) = render_text("t.yaml", &t, &json!({})) {
            assert!(!e.message.contains("panicked"), "{f}: {e}");
        }
    }
    assert!(start.elapsed() < Duration::from_secs(60));
    let e = render_text(
        "t.yaml",
        "{{ $d := dict }}{{ $_ := set $d \"s\" $d }}{{ deepCopy $d }}",
        &json!({}),
    )
    .unwrap_err();
    assert!(e.message.contains("deeper"), "{e}");
}

fn garbage_templates_are_errors_not_panics() {
    for t in [
        "{{",
        "}}",
        "{{ end }}",
        "{{ else }}",
        "{{ if }}",
        "{{ range $a, $b, $c := . }}{{ end }}",
        "{{ 'ab' }}",
        "{{ \"unterminated }}",
        "{{ `raw }}",
        "{{ 0x }}",
        "{{ 1e }}",
        "{{ .a.b.. }}",
        "{{ $x := }}",
        "{{ ( }}",
        "{{ ) }}",
        "{{ | }}",
        "{{ define \"a\" }}",
        "{{ template }}",
        "{{ index }}",
        "{{ index . 1 }}",
        "{{ slice \"abc\" 2 1 }}",
        "{{ printf }}",
        "{{ printf 1 }}",
        "{{ len 1 }}",
        "{{ 1 | 2 }}",
        "{{ nil }}",
        "{{ .Values.x 1 }}",
        "{{ (1).x }}",
        "{{ div 1 0 }}",
        "{{ mod 1 0 }}",
        "{{ regexMatch \"(\" \"x\" }}",
        "{{ regexReplaceAll \"(\" \"x\" \"y\" }}",
        "{{ semver \"x\" }}",
        "{{ semverCompare \"~~\" \"1.0.0\" }}",
        "{{ b64dec \"%%%\" }}",
        "{{ fromYaml \": : :\" }}",
        "{{ fromJson \"{\" }}",
        "{{ dig 1 2 3 }}",
        "{{ dig \"a\" \"b\" \"c\" (dict \"a\" 1) }}",
        "{{ trunc 99999999999 \"é\" }}",
        "{{ trunc 1 \"é\" }}",
        "{{ substr 1 1 \"é\" }}",
        "{{ printf \"%*d\" 9999999999 1 }}",
        "{{ until -5 }}",
        "{{ untilStep 0 10 -1 }}",
        "{{ append nil 1 }}",
        "{{ concat 1 }}",
        "{{ first 1 }}",
        "{{ \"\\xff\" }}",
        "{{ '\\U0010ffff' }}",
        "{{ 9223372036854775808 }}",
        "{{ -9223372036854775808 }}",
    ] {
        let start = Instant::now();
        for r in [
            render_text("t.yaml", t, &json!({"x": 1})),
            render_text("t.yaml", "{{ tpl .Values.t . }}", &json!({ "t": t })),
        ] {
            if let Err(e) = r {
                assert!(!e.message.contains("panicked"), "{t:?}: {e}");
            }
        }
        assert!(start.elapsed() < Duration::from_secs(10), "{t:?}");
    }
}
