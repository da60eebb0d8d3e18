//! Every function any template of any release in `../shared/charts/` calls, found with the
//! engine's own lexer, is either implemented or deliberately refused as non-deterministic; the
//! list is kept here so a release that starts calling a new function fails this test until the
//! engine learns it. It needs `../shared/charts`: ignored with the reason without it, a failure
//! under CI (tests/it/support/harness.rs).

use std::collections::BTreeSet;

use crate::support::harness;

pub fn tests() -> Vec<harness::Trial> {
    harness::group(
        file!(),
        vec![harness::test(
            "every_function_the_charts_call_is_known",
            every_function_the_charts_call_is_known,
        )
        .shared("charts")],
    )
}

use cilium_cmp_render::chart::archive::ChartFiles;
use cilium_cmp_render::engine::funcs::{IMPLEMENTED, REFUSED};
use cilium_cmp_render::engine::lex::{lex, Tok};

/// What the Cilium 1.18.0 to 1.20.0 archives call, and how the engine takes each.
const CALLED: &[&str] = &[
    "and",
    "append",
    "b64enc",
    "base",
    "buildCustomCert",
    "coalesce",
    "concat",
    "contains",
    "dateModify",
    "deepCopy",
    "default",
    "dict",
    "dig",
    "dir",
    "empty",
    "eq",
    "fail",
    "first",
    "float64",
    "fromJson",
    "fromYaml",
    "fromYamlArray",
    "ge",
    "genCA",
    "genSignedCert",
    "get",
    "gt",
    "has",
    "hasKey",
    "include",
    "indent",
    "index",
    "int",
    "int64",
    "join",
    "kindIs",
    "kindOf",
    "le",
    "len",
    "list",
    "lookup",
    "lower",
    "merge",
    "mul",
    "mustDateModify",
    "mustFirst",
    "ne",
    "nindent",
    "not",
    "now",
    "omit",
    "or",
    "prepend",
    "print",
    "printf",
    "quote",
    "regexMatch",
    "regexReplaceAll",
    "replace",
    "required",
    "semver",
    "semverCompare",
    "set",
    "sha256sum",
    "split",
    "splitList",
    "ternary",
    "title",
    "toJson",
    "toRawJson",
    "toString",
    "toYaml",
    "tpl",
    "trim",
    "trimPrefix",
    "trimSuffix",
    "trunc",
    "tuple",
    "typeOf",
    "unset",
];

const REFUSED_CALLED: &[&str] = &["genCA", "genSignedCert", "lookup"];

fn every_function_the_charts_call_is_known() {
    let dir = harness::shared("charts");
    let entries = std::fs::read_dir(&dir).expect("../shared/charts is a folder");
    let mut archives: Vec<_> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "tgz"))
        .collect();
    archives.sort();
    assert!(!archives.is_empty(), "no archives in {}", dir.display());
    let mut called: BTreeSet<String> = BTreeSet::new();
    for a in &archives {
        let chart = ChartFiles::open(a).unwrap_or_else(|e| panic!("{e}"));
        for f in chart.list("templates") {
            let text = chart.text(f).unwrap();
            let toks = lex(f, &text).unwrap_or_else(|e| panic!("{}: {e}", a.display()));
            for t in toks {
                if let Tok::Ident(name) = t.tok {
                    called.insert(name.to_string());
                }
            }
        }
    }
    let expected: BTreeSet<String> = CALLED.iter().map(|s| s.to_string()).collect();
    assert_eq!(
        called, expected,
        "the functions the archives call changed; update CALLED and the engine"
    );
    for f in &called {
        assert!(
            IMPLEMENTED.contains(&f.as_str()) || REFUSED.contains(&f.as_str()),
            "{f} is neither implemented nor refused"
        );
    }
    let refused: Vec<&str> = CALLED
        .iter()
        .copied()
        .filter(|f| REFUSED.contains(f))
        .collect();
    assert_eq!(refused, REFUSED_CALLED);
    eprintln!(
        "{} functions called by {} archives; {} refused: {refused:?}",
        called.len(),
        archives.len(),
        refused.len()
    );
}
