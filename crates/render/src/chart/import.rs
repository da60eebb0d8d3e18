//! Turns an official chart archive into this project's facts for that Cilium release: the
//! chart's default values, its values schema and the value paths its templates read, as plain
//! JSON (no comments, no template text). Adding a patch release is: run `cilium-cmp import-chart
//! cilium-X.Y.Z.tgz`, add the version to `versions.rs`, run the parity tests.

use anyhow::Context;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use super::archive::ChartFiles;

/// A release's facts as `import-chart` writes them, one text per file of `data/VERSION/`. An
/// unlisted release (`chart::unlisted`) is read into the same texts in memory from its archive,
/// so a release read at run time is read exactly as a compiled-in one.
#[derive(Debug, Clone)]
pub struct Facts {
    /// The chart's version, from Chart.yaml.
    pub version: String,
    /// `values.json`: the chart's defaults.
    pub values: String,
    /// `values.schema.json`: the values schema, compact.
    pub schema: String,
    /// `template-keys.json`: the value paths the templates read.
    pub keys: String,
}

/// The files of `data/VERSION/` and the fact each holds.
pub const DATA_FILES: [&str; 3] = ["values.json", "values.schema.json", "template-keys.json"];

impl Facts {
    /// The text of one of `DATA_FILES`.
    pub fn text(&self, file: &str) -> Option<&str> {
        match file {
            "values.json" => Some(&self.values),
            "values.schema.json" => Some(&self.schema),
            "template-keys.json" => Some(&self.keys),
            _ => None,
        }
    }
}

/// Reads a chart's facts (nothing is written).
pub fn facts(chart: &ChartFiles) -> anyhow::Result<Facts> {
    let version = chart.version()?;
    let text = chart.text("values.yaml")?;
    let doc = cilium_cmp_yaml::yaml::parse_values(&text)
        .map_err(|e| anyhow::anyhow!("values.yaml of {}: {e}", chart.path()))?;
    let mut values = serde_json::to_string_pretty(&doc.value)?;
    values.push('\n');
    // The values schema: types and enumerations Helm checks values against before rendering.
    let schema: serde_json::Value = serde_json::from_str(&chart.text("values.schema.json")?)
        .map_err(|e| anyhow::anyhow!("values.schema.json of {}: {e}", chart.path()))?;
    let mut schema = serde_json::to_string(&schema)?;
    schema.push('\n');
    // The paths the templates read: some values work without being listed in values.yaml.
    let mut keys = serde_json::to_string_pretty(&template_keys(chart))?;
    keys.push('\n');
    Ok(Facts {
        version,
        values,
        schema,
        keys,
    })
}

/// Writes `DATA_DIR/VERSION/` (the `DATA_FILES`) and returns the version imported.
pub fn import(archive: &Path, data_dir: &Path) -> anyhow::Result<String> {
    let chart = ChartFiles::open(archive)?;
    let facts = facts(&chart)?;
    let dir = data_dir.join(&facts.version);
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    for file in DATA_FILES {
        let path = dir.join(file);
        // Whole or not at all, as every file the program writes (output.file when refused).
        crate::replace_file::replace(
            &path,
            facts.text(file).unwrap_or_default().as_bytes(),
            crate::replace_file::Force::No,
        )
        .with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(facts.version)
}

/// Every value path the chart's templates read (`hubble.relay.enabled`), sorted. Found where a
/// template names `.Values` followed by keys, through `index`/`get`/`dig` with quoted keys, and
/// through a variable that holds a values subtree (`$lb := .Values.loadBalancer` then `$lb.mode`).
/// A path read relative to `with .Values.x` is not seen; such keys are listed in values.yaml.
/// The bundled files count too: the chart runs some through `tpl` (node-init's scripts read
/// `nodeinit.reconfigureKubelet`, which values.yaml does not list).
pub fn template_keys(chart: &ChartFiles) -> BTreeSet<String> {
    let mut keys = BTreeSet::new();
    let files = chart
        .list("templates/")
        .into_iter()
        .chain(chart.list("files/"));
    for file in files {
        if let Ok(text) = chart.text(file) {
            scan_template(&text, &mut keys);
        }
    }
    keys
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// The `.a.b.c` chain starting at `i` (keys without the dots) and the index past it.
fn key_chain(b: &[u8], mut i: usize) -> (Vec<String>, usize) {
    let mut keys = Vec::new();
    while b.get(i) == Some(&b'.') && b.get(i + 1).is_some_and(|&c| is_ident(c)) {
        let start = i + 1;
        i = start;
        while b.get(i).is_some_and(|&c| is_ident(c)) {
            i += 1;
        }
        keys.push(String::from_utf8_lossy(&b[start..i]).into_owned());
    }
    (keys, i)
}

/// The values path an operand at `i` stands for (`.Values.a`, `$.Values.a`, `$var.b`), and the
/// index past it.
fn operand(
    b: &[u8],
    i: usize,
    vars: &BTreeMap<String, Vec<String>>,
) -> Option<(Vec<String>, usize)> {
    let rest = &b[i..];
    for prefix in [
        &b"$.Values"[..],
        b".Values",
        b"$root.Values",
        b".Root.Values",
    ] {
        if rest.starts_with(prefix) && !rest.get(prefix.len()).is_some_and(|&c| is_ident(c)) {
            let (mut keys, end) = key_chain(b, i + prefix.len());
            // `.Values.AsMap` is the values themselves, as a plain map.
            if keys.first().is_some_and(|k| k == "AsMap") {
                keys.remove(0);
            }
            return Some((keys, end));
        }
    }
    if rest.first() == Some(&b'$') {
        let mut j = i + 1;
        while b.get(j).is_some_and(|&c| is_ident(c)) {
            j += 1;
        }
        let name = String::from_utf8_lossy(&b[i + 1..j]).into_owned();
        let base = vars.get(&name)?;
        let (more, end) = key_chain(b, j);
        return Some((base.iter().cloned().chain(more).collect(), end));
    }
    None
}

/// The quoted keys following `i` (`"a" "b"`), stopping at anything else.
fn quoted_keys(b: &[u8], mut i: usize) -> Vec<String> {
    let mut keys = Vec::new();
    loop {
        while b.get(i) == Some(&b' ') {
            i += 1;
        }
        if b.get(i) != Some(&b'"') {
            return keys;
        }
        let start = i + 1;
        let Some(len) = b[start..].iter().position(|&c| c == b'"') else {
            return keys;
        };
        keys.push(String::from_utf8_lossy(&b[start..start + len]).into_owned());
        i = start + len + 1;
    }
}

/// `index X "a" "b"`, `hasKey X "a"` or `get X "a"` at `i`: lists the path reached and returns the index past X.
fn keyed_access(
    b: &[u8],
    i: usize,
    vars: &BTreeMap<String, Vec<String>>,
    keys: &mut BTreeSet<String>,
) -> Option<usize> {
    if i > 0 && is_ident(b[i - 1]) {
        return None;
    }
    let word = [&b"index "[..], b"hasKey ", b"get "]
        .into_iter()
        .find(|w| b[i..].starts_with(w))?;
    let mut k = i + word.len();
    while matches!(b.get(k), Some(b' ') | Some(b'(')) {
        k += 1;
    }
    let (mut path, end) = operand(b, k, vars)?;
    // `hasKey` only asks whether the key is there; a key that matters is read elsewhere, and
    // listing it would pass every key below it too.
    if word.starts_with(b"hasKey") {
        return Some(end);
    }
    let more = quoted_keys(b, end);
    let take = if word.starts_with(b"index") {
        more.len()
    } else {
        1
    };
    path.extend(more.into_iter().take(take));
    if !path.is_empty() {
        keys.insert(path.join("."));
    }
    Some(end)
}

/// `dig "a" "b" DEFAULT X` at `i` (sprig: the keys, a default, then the map): lists X's path with
/// the keys and returns the index past X.
fn dig_access(
    b: &[u8],
    i: usize,
    vars: &BTreeMap<String, Vec<String>>,
    keys: &mut BTreeSet<String>,
) -> Option<usize> {
    if !b[i..].starts_with(b"dig ") || (i > 0 && is_ident(b[i - 1])) {
        return None;
    }
    let mut k = i + 4;
    // The arguments before the map: quoted keys, the last of them possibly the default.
    let mut quoted = Vec::new();
    let mut last_was_quoted = false;
    // `dig` takes a few keys; a bound on the arguments read keeps a hostile archive (one long
    // line of `dig dig dig ...`) from costing time quadratic in its size.
    for _ in 0..MAX_DIG_ARGUMENTS {
        while b.get(k) == Some(&b' ') {
            k += 1;
        }
        if let Some((mut path, end)) = operand(b, k, vars) {
            if last_was_quoted {
                quoted.pop();
            }
            path.extend(quoted);
            if !path.is_empty() {
                keys.insert(path.join("."));
            }
            return Some(end);
        }
        match b.get(k)? {
            b'"' => {
                let len = b[k + 1..].iter().position(|&c| c == b'"')?;
                quoted.push(String::from_utf8_lossy(&b[k + 1..k + 1 + len]).into_owned());
                k += len + 2;
                last_was_quoted = true;
            }
            b'(' => {
                let len = b[k..].iter().position(|&c| c == b')')?;
                k += len + 1;
                last_was_quoted = false;
            }
            b'}' | b'\n' => return None,
            _ => {
                let len = b[k..].iter().position(|&c| c == b' ' || c == b'}')?;
                k += len;
                last_was_quoted = false;
            }
        }
    }
    None
}

/// The most arguments of one `dig` call read when looking for its map.
const MAX_DIG_ARGUMENTS: usize = 32;

fn scan_template(text: &str, keys: &mut BTreeSet<String>) {
    let b = text.as_bytes();
    let mut vars: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut i = 0;
    while i < b.len() {
        // `$name :=` / `$name =` followed by a values operand: remember what it holds.
        if b[i] == b'$' && (i == 0 || !is_ident(b[i - 1])) {
            let mut j = i + 1;
            while b.get(j).is_some_and(|&c| is_ident(c)) {
                j += 1;
            }
            let name = String::from_utf8_lossy(&b[i + 1..j]).into_owned();
            let mut k = j;
            while b.get(k) == Some(&b' ') {
                k += 1;
            }
            let assigns = b[k..].starts_with(b":=")
                || (b.get(k) == Some(&b'=') && b.get(k + 1) != Some(&b'='));
            if assigns && !name.is_empty() {
                k += if b[k] == b':' { 2 } else { 1 };
                while matches!(b.get(k), Some(b' ') | Some(b'(')) {
                    k += 1;
                }
                if let Some((path, _)) = operand(b, k, &vars) {
                    if !path.is_empty() {
                        vars.insert(name, path);
                    }
                }
            }
        }
        // `index X "a" "b"`, `hasKey X "a"` and `get X "a"` reach below X by quoted keys (X itself is not
        // read whole, so it is not listed).
        if let Some(end) = keyed_access(b, i, &vars, keys).or_else(|| dig_access(b, i, &vars, keys))
        {
            i = end;
            continue;
        }
        if let Some((path, end)) = operand(b, i, &vars) {
            if !path.is_empty() {
                keys.insert(path.join("."));
            }
            i = end.max(i + 1);
            continue;
        }
        i += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan(text: &str) -> Vec<String> {
        let mut keys = BTreeSet::new();
        scan_template(text, &mut keys);
        keys.into_iter().collect()
    }

    #[test]
    fn any_text_scans_without_panicking_and_in_linear_time() {
        // Pieces of template syntax in a fixed pseudo-random order (no dependency on a crate).
        let pieces = [
            "dig ", "\"a\" ", "index ", "get ", "hasKey ", ".Values", ".x", "$v := ", "$v", "$",
            "(", ")", "}", "\n", "\"", " ", "$.Values", "é", "=",
        ];
        let mut state = 0x2545_f491_u64;
        let mut text = String::new();
        for _ in 0..20_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            text.push_str(pieces[(state % pieces.len() as u64) as usize]);
        }
        scan(&text);
        let started = std::time::Instant::now();
        scan(&"dig ".repeat(200_000));
        assert!(started.elapsed().as_secs() < 5);
    }

    #[test]
    fn finds_paths_however_a_template_reaches_them() {
        let text = r#"
{{- if .Values.hubble.relay.enabled }}
{{- $lb := .Values.loadBalancer }}{{ $lb.mode }}{{ index $lb "acceleration" }}
{{ $.Values.commonLabels }} {{ $root.Values.tls.caBundle.content }}
{{ index .Values.extraConfig "allow-unsafe" }} {{ hasKey .Values.hubble "export" }}
{{ index .Values "kubeProxyReplacement" }}
{{ get .Values.nodePort "range" }} {{ dig "proxy" "prometheus" "enabled" "" .Values.AsMap }}
{{ dig "server" "extraDnsNames" (list) .Values.clustermesh.apiserver.tls }}
{{ if eq $x "a" }}{{ print .Valuesque }}{{ print .Values }}
"#;
        assert_eq!(
            scan(text),
            [
                "clustermesh.apiserver.tls.server.extraDnsNames",
                "commonLabels",
                "extraConfig.allow-unsafe",
                "hubble.relay.enabled",
                "kubeProxyReplacement",
                "loadBalancer",
                "loadBalancer.acceleration",
                "loadBalancer.mode",
                "nodePort.range",
                "proxy.prometheus.enabled",
                "tls.caBundle.content",
            ]
        );
    }
}
