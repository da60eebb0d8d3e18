//! The bootstrap hand-over: a render written as a Talos machine-config patch
//! (`cluster.inlineManifests`), whose contents are the very bytes the Argo CD plugin generates.

use serde_json::Value;

/// The patch for one inline manifest named `name` holding `contents` byte for byte.
///
/// The contents are written as a literal block scalar, which keeps a manifest readable in the
/// machine config; the patch is read back before it is returned and, should the block form not
/// reproduce the contents exactly (control characters, unusual line ends), a double-quoted
/// scalar is used instead, which represents any text.
pub fn inline_manifest_patch(name: &str, contents: &str, content_hash: &str) -> String {
    let head = format!(
        "# Talos machine-config patch written by cilium-cmp: the render whose content hash is\n\
         # {content_hash}. Apply with `talosctl gen config --config-patch @FILE` or\n\
         # `talosctl patch machineconfig --patch @FILE`.\n\
         cluster:\n  inlineManifests:\n    - name: {}\n      contents: ",
        json_string(name)
    );
    let block = format!("{head}{}", literal_block(contents, 8));
    if reads_back(&block, contents) {
        return block;
    }
    format!("{head}{}\n", json_string(contents))
}

/// The inline manifests of a Talos machine-config patch or machine config (`cluster:
/// inlineManifests:`, each `name` and `contents`), for `verify`; None when `text` is not one.
/// Read as `talos-check` reads a machine config (`talos_config`).
pub fn inline_manifests(text: &str) -> Option<Vec<(String, String)>> {
    let doc = cilium_cmp_yaml::yaml::parse_values(text).ok()?;
    let manifests = crate::talos_config::inline_manifests_of(&doc.value, "").ok()?;
    (!manifests.is_empty()).then_some(manifests)
}

fn json_string(s: &str) -> String {
    Value::String(s.to_string()).to_string()
}

/// A literal block scalar (`|`, `|-` or `|+` by the text's trailing newlines) indented by `n`.
fn literal_block(text: &str, n: usize) -> String {
    let trailing = text.len() - text.trim_end_matches('\n').len();
    let chomp = match trailing {
        0 => "-",
        1 => "",
        _ => "+",
    };
    let body = text.strip_suffix('\n').unwrap_or(text);
    let pad = " ".repeat(n);
    let mut out = format!("|{chomp}\n");
    for line in body.split('\n') {
        if !line.is_empty() {
            out.push_str(&pad);
            out.push_str(line);
        }
        out.push('\n');
    }
    out
}

fn reads_back(patch: &str, contents: &str) -> bool {
    let Ok(doc) = cilium_cmp_yaml::yaml::parse_values(patch) else {
        return false;
    };
    doc.value
        .pointer("/cluster/inlineManifests/0/contents")
        .and_then(Value::as_str)
        == Some(contents)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn contents_of(patch: &str) -> String {
        let doc = cilium_cmp_yaml::yaml::parse_values(patch).expect("patch parses");
        doc.value["cluster"]["inlineManifests"][0]["contents"]
            .as_str()
            .expect("contents is a string")
            .to_string()
    }

    #[test]
    fn contents_survive_byte_for_byte() {
        for text in [
            "---\napiVersion: v1\nkind: ConfigMap\n",
            "---\na: |\n  x\n\n  y\n",
            "no newline",
            "two\n\n",
            "  leading spaces\n",
            "tab\there\r\n",
            "bell\u{7}\n",
        ] {
            let p = inline_manifest_patch("cilium", text, "sha256:0");
            assert_eq!(contents_of(&p), text, "{p}");
        }
        let p = inline_manifest_patch("cilium", "---\nkind: A\n", "sha256:0");
        assert!(
            p.contains("contents: |\n        ---\n        kind: A\n"),
            "{p}"
        );
    }
}
