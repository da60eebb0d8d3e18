//! Release day: a Cilium release this binary does not list, rendered from its official archive
//! when its chart templates are those of a listed one.
//!
//! Many patch releases change only `values.yaml` (image tags and digests) and the values schema.
//! Every supported release's `data/VERSION/chart-files.json` holds the sha256 of each file under
//! its chart's `templates/` and `files/` (facts, written by `import-chart`). When an archive's
//! files have exactly the digests of one supported release, the objects it renders from given
//! values are that release's: the renderer takes that release's model (its named changes, see
//! `changes.rs`) and the archive's own defaults, schema, template keys and chart version, read
//! by the same code `import-chart` runs (`import::facts`). Otherwise the archive is refused with
//! the template files added, removed and changed against the nearest supported release.
//!
//! Trust is the caller's: this module reads only an archive it is handed (`--chart-archive`,
//! the chart folder, the plugin's `CILIUM_CMP_CHART_DIR`).

use std::collections::BTreeMap;

use super::archive::ChartFiles;
use crate::versions::{self, CiliumVersion};

/// Why an archive is not rendered as the twin of a supported release.
#[derive(Debug, thiserror::Error)]
pub enum TwinError {
    #[error("the chart archive {path} is Cilium {found}, but the requested version is {wanted}; supply cilium-{wanted}.tgz")]
    WrongVersion {
        path: String,
        found: String,
        wanted: String,
    },
    #[error(
        "the chart archive {path} is version {found}, which is not a Cilium release number (X.Y.Z)"
    )]
    NotARelease { path: String, found: String },
    #[error("{}", differs_message(self))]
    Differs {
        path: String,
        version: String,
        nearest: String,
        added: Vec<String>,
        removed: Vec<String>,
        changed: Vec<String>,
    },
    #[error("the chart archive {path} cannot be read as a Cilium chart: {message}")]
    Unreadable { path: String, message: String },
}

/// At most this many files of each kind are named; the count says how many more.
const MAX_LISTED: usize = 20;

fn differs_message(e: &TwinError) -> String {
    let TwinError::Differs {
        path,
        version,
        nearest,
        added,
        removed,
        changed,
    } = e
    else {
        return String::new();
    };
    let mut text = format!(
        "Cilium {version} (the chart archive {path}) is not a release this cilium-cmp knows, and its chart templates differ from those of every release it knows, so it cannot be rendered: a newer cilium-cmp is needed for it. Against the nearest known release, {nearest}:"
    );
    for (what, files) in [("added", added), ("removed", removed), ("changed", changed)] {
        if files.is_empty() {
            continue;
        }
        let shown: Vec<&str> = files.iter().take(MAX_LISTED).map(String::as_str).collect();
        text.push_str(&format!("\n  {what}: {}", shown.join(", ")));
        if files.len() > MAX_LISTED {
            text.push_str(&format!(" and {} more", files.len() - MAX_LISTED));
        }
    }
    text
}

/// How one archive's files compare with a supported release's.
#[derive(Debug, Default)]
struct Comparison {
    added: Vec<String>,
    removed: Vec<String>,
    changed: Vec<String>,
}

impl Comparison {
    fn of(archive: &BTreeMap<String, String>, release: &BTreeMap<String, String>) -> Comparison {
        let mut c = Comparison::default();
        for (file, digest) in archive {
            match release.get(file) {
                None => c.added.push(file.clone()),
                Some(d) if d != digest => c.changed.push(file.clone()),
                Some(_) => {}
            }
        }
        c.removed = release
            .keys()
            .filter(|f| !archive.contains_key(*f))
            .cloned()
            .collect();
        c
    }

    fn size(&self) -> usize {
        self.added.len() + self.removed.len() + self.changed.len()
    }
}

/// The release numbers as a tuple, for nearness.
fn numbers(version: &str) -> (u32, u32, u32) {
    versions::numbers(version).unwrap_or_default()
}

/// How far a supported release is from `version` when both have equal template digests (or
/// equally many differing files): the same minor first, then the closest patch, older before
/// newer.
fn distance(version: (u32, u32, u32), other: &str) -> (u32, u32, bool) {
    let o = numbers(other);
    let minor = if (o.0, o.1) == (version.0, version.1) {
        0
    } else {
        1 + version.1.abs_diff(o.1) + 100 * version.0.abs_diff(o.0)
    };
    (minor, version.2.abs_diff(o.2), o > version)
}

/// Reads `chart` as the release `requested` (a version this binary does not list, or one it
/// lists that is to be treated as unknown: the replay tests), matching its templates to another
/// supported release. On success the release's facts are the archive's and its
/// model the matched release's; the match is said on stderr.
pub fn open(chart: &ChartFiles, requested: &str) -> Result<CiliumVersion, Box<TwinError>> {
    let path = chart.path().to_string();
    let unreadable = |message: String| {
        Box::new(TwinError::Unreadable {
            path: path.clone(),
            message,
        })
    };
    let found = chart.version().map_err(|e| unreadable(e.to_string()))?;
    let wanted = requested.strip_prefix('v').unwrap_or(requested);
    if found != wanted {
        return Err(Box::new(TwinError::WrongVersion {
            path,
            found,
            wanted: wanted.to_string(),
        }));
    }
    let Some(version) = versions::numbers(&found) else {
        return Err(Box::new(TwinError::NotARelease { path, found }));
    };
    let digests = super::import::chart_file_digests(chart);
    let mut best: Option<(&str, Comparison)> = None;
    // The release itself is passed over: a listed release is read as a twin only when the
    // replay tests ask, and then must match another.
    for other in versions::supported().filter(|v| *v != found) {
        let known: BTreeMap<String, String> = versions::chart_files_text(other)
            .and_then(|t| serde_json::from_str(t).ok())
            .unwrap_or_default();
        let c = Comparison::of(&digests, &known);
        let better = match &best {
            None => true,
            Some((b, bc)) => {
                (c.size(), distance(version, other)) < (bc.size(), distance(version, b))
            }
        };
        if better {
            best = Some((other, c));
        }
    }
    let Some((nearest, comparison)) = best else {
        return Err(unreadable("no supported release to compare with".into()));
    };
    if comparison.size() > 0 {
        return Err(Box::new(TwinError::Differs {
            path,
            version: found,
            nearest: nearest.to_string(),
            added: comparison.added,
            removed: comparison.removed,
            changed: comparison.changed,
        }));
    }
    let facts = super::import::facts(chart).map_err(|e| unreadable(format!("{e:#}")))?;
    // What the twin is read from: its facts (the templates are the model's).
    let mut key = String::new();
    for part in [
        &facts.version,
        &facts.values,
        &facts.schema,
        &facts.keys,
        &facts.files,
    ] {
        key.push_str(&super::store::sha256_hex(part.as_bytes()));
    }
    let twin = versions::register_twin(&key, facts, nearest)
        .ok_or_else(|| unreadable("its version is not a release number".into()))?;
    tracing::info!(
        "Cilium {found} is not a release this cilium-cmp lists; its chart templates are those of Cilium {nearest}, so it is rendered with {nearest}'s model and the defaults, schema and version of {path}"
    );
    Ok(twin)
}

/// Each supported patch release whose chart templates and bundled files equal its predecessor's
/// on the same minor line, with that predecessor: the releases the twin path would have rendered
/// on their release day (the tests replay them).
pub fn replayable() -> Vec<(&'static str, &'static str)> {
    let all: Vec<&'static str> = versions::supported().collect();
    all.windows(2)
        .filter(|w| {
            let (a, b) = (numbers(w[0]), numbers(w[1]));
            (a.0, a.1) == (b.0, b.1)
                && versions::chart_files_text(w[0]) == versions::chart_files_text(w[1])
        })
        .map(|w| (w[1], w[0]))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearness_prefers_the_same_minor_then_the_closest_older_patch() {
        let v = (1, 18, 13);
        assert!(distance(v, "1.18.12") < distance(v, "1.18.11"));
        assert!(distance(v, "1.18.0") < distance(v, "1.19.0"));
        assert!(distance((1, 18, 3), "1.18.2") < distance((1, 18, 3), "1.18.4"));
    }

    #[test]
    fn comparison_names_added_removed_and_changed_files() {
        let a: BTreeMap<String, String> = [("t/a", "1"), ("t/b", "2"), ("t/new", "3")]
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let b: BTreeMap<String, String> = [("t/a", "1"), ("t/b", "9"), ("t/old", "4")]
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let c = Comparison::of(&a, &b);
        assert_eq!(c.added, ["t/new"]);
        assert_eq!(c.removed, ["t/old"]);
        assert_eq!(c.changed, ["t/b"]);
        assert_eq!(c.size(), 3);
    }

    #[test]
    fn the_replayable_releases_are_those_that_changed_no_template() {
        // Computed from the fingerprints; `diff -r` of the unpacked archives agrees.
        assert_eq!(
            replayable(),
            [
                ("1.18.3", "1.18.2"),
                ("1.18.10", "1.18.9"),
                ("1.18.11", "1.18.10"),
                ("1.18.12", "1.18.11")
            ]
        );
    }

    #[test]
    fn every_release_has_fingerprints_of_its_templates() {
        for v in versions::supported() {
            let files: BTreeMap<String, String> =
                serde_json::from_str(versions::chart_files_text(v).unwrap()).unwrap();
            assert!(files.contains_key("templates/_helpers.tpl"), "{v}");
            assert!(files
                .keys()
                .all(|f| f.starts_with("templates/") || f.starts_with("files/")));
        }
    }
}
