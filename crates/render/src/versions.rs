//! The Cilium releases this renderer knows, and each one's chart defaults (imported facts).

use std::sync::{Mutex, OnceLock};

use crate::schema::LazySchema;
use crate::values::PathIndex;

/// A Cilium release. What changes between releases for the policy layers is named in
/// `changes.rs`; the objects come from each release's own templates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct CiliumVersion {
    /// The first number of `MAJOR.MINOR.PATCH`.
    pub major: u32,
    /// The second number.
    pub minor: u32,
    /// The third number.
    pub patch: u32,
    /// Set for a release read at run time from its archive (`chart::unlisted`): its slot among
    /// those of this process. None for a compiled-in release.
    slot: Option<u32>,
}

impl std::fmt::Display for CiliumVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.slot.and_then(|_| data(*self)) {
            // A pre-release's name carries its tag (`1.21.0-pre.1`).
            Some(d) => f.write_str(d.version),
            None => write!(f, "{}.{}.{}", self.major, self.minor, self.patch),
        }
    }
}

impl CiliumVersion {
    /// Whether this release was read at run time from its archive rather than compiled in.
    pub fn is_unlisted(&self) -> bool {
        self.slot.is_some()
    }
}

/// The release a render is asked for, checked once where it is named (a flag, `ciliumVersion`
/// in cilium-cmp.yaml): a release whose facts are at hand, or one whose facts are read from the
/// chart archive the render is given (`chart::unlisted`, docs/release-day.md).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Release {
    /// Facts compiled in, or already read from its archive (`chart::unlisted::open`).
    Known(CiliumVersion),
    /// Facts read from the render's chart archive: a release newer than those listed, or a
    /// listed one read as if it were not (how the tests replay release day with a release
    /// whose Helm render is known).
    FromArchive(crate::release_name::ReleaseName),
}

impl std::str::FromStr for Release {
    type Err = UnknownVersion;

    /// A listed release (`1.20.0`, a leading `v` allowed), else one newer than those listed
    /// (`X.Y.Z` or `X.Y.Z-PRE` from the 1.18 line on); anything else is refused with the
    /// releases there are, and the one meant for a line named without its patch (`1.20`).
    fn from_str(text: &str) -> Result<Release, UnknownVersion> {
        match parse(text) {
            Ok(v) => Ok(Release::Known(v)),
            Err(e) if is_newer_than_listed(text) => crate::release_name::release_name(text)
                .map(Release::FromArchive)
                .ok_or(e),
            Err(e) => Err(e),
        }
    }
}

impl std::fmt::Display for Release {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Release::Known(v) => v.fmt(f),
            Release::FromArchive(name) => name.fmt(f),
        }
    }
}

impl Release {
    /// The release when its facts are at hand already (no archive to read).
    pub fn known(&self) -> Option<CiliumVersion> {
        match self {
            Release::Known(v) => Some(*v),
            Release::FromArchive(_) => None,
        }
    }
}

impl From<CiliumVersion> for Release {
    fn from(v: CiliumVersion) -> Release {
        Release::Known(v)
    }
}

/// One release's facts: the texts `import-chart` wrote, and each parsed once per process when
/// first needed (so a long-running caller, the benchmark or a server, pays for it once).
struct ReleaseData {
    version: &'static str,
    values: &'static str,
    schema: &'static str,
    keys: &'static str,
    tree: OnceLock<serde_json::Value>,
    defaults: OnceLock<Defaults>,
    parsed_keys: OnceLock<Vec<String>>,
    lazy_schema: OnceLock<LazySchema>,
    #[cfg(test)]
    whole_schema: OnceLock<serde_json::Value>,
}

impl ReleaseData {
    const fn new(
        version: &'static str,
        values: &'static str,
        schema: &'static str,
        keys: &'static str,
    ) -> ReleaseData {
        ReleaseData {
            version,
            values,
            schema,
            keys,
            tree: OnceLock::new(),
            defaults: OnceLock::new(),
            parsed_keys: OnceLock::new(),
            lazy_schema: OnceLock::new(),
            #[cfg(test)]
            whole_schema: OnceLock::new(),
        }
    }
}

/// One supported release: its version and the files `import-chart` generated for it.
macro_rules! release {
    ($v:literal) => {
        ReleaseData::new(
            $v,
            include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../data/",
                $v,
                "/values.json"
            )),
            include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../data/",
                $v,
                "/values.schema.json"
            )),
            include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../data/",
                $v,
                "/template-keys.json"
            )),
        )
    };
}

// Every supported release with its chart defaults (generated by `cilium-cmp import-chart`):
// `RELEASES`, one `release!` per line of `sidecar/charts.sha256`, oldest first, written by
// `build.rs` so the pins and the compiled-in releases are one list.
include!(concat!(env!("OUT_DIR"), "/releases.rs"));

/// The releases read from archives in this process (`chart::unlisted`), each kept for the
/// process's life with the digest of what it was read from, so an archive read twice is one slot.
static UNLISTED: Mutex<Vec<(String, &'static ReleaseData)>> = Mutex::new(Vec::new());

/// The newest supported release.
pub fn newest() -> CiliumVersion {
    let last = RELEASES
        .last()
        .expect("charts.sha256 lists at least one release");
    parse(last.version).expect("a listed release parses")
}

/// The supported versions, oldest first.
pub fn supported() -> impl Iterator<Item = &'static str> {
    RELEASES.iter().map(|r| r.version)
}

#[derive(Debug, Clone, thiserror::Error)]
#[error("{}", unknown_message(requested))]
/// A `--cilium-version` that is no release this binary can render.
pub struct UnknownVersion {
    /// The version as the user wrote it.
    pub requested: String,
}

/// Why a version is not rendered without its archive, and the ways to give it one.
fn unknown_message(requested: &str) -> String {
    let all = supported().collect::<Vec<_>>().join(", ");
    let shown = cilium_cmp_yaml::limits::quoted(requested);
    if !is_newer_than_listed(requested) {
        return format!(
            "Cilium {shown} is not a Cilium release cilium-cmp renders (X.Y.Z from 1.18.0 on, or X.Y.Z-PRE for a pre-release); {}releases with their defaults compiled in: {all}",
            meant_release(requested)
                .map(|m| format!("did you mean {m}? "))
                .unwrap_or_default()
        );
    }
    let name = release_number(requested).unwrap_or_default();
    format!(
        "Cilium {shown} is not compiled into this cilium-cmp, which renders it from its official chart archive: `cilium-cmp chart fetch {name}` downloads it (checked against Cilium's Helm repository index) into the chart folder, or pass --chart-archive cilium-{name}.tgz. Releases compiled in: {all}"
    )
}

/// For a release line named without its patch (`1.20`, as Helm's `--version 1.20` is read as a
/// constraint), the release meant: its `.0`, and the newest listed patch when that is another,
/// e.g. `1.19.0 (the newest listed 1.19 is 1.19.6)`. None when no listed release is of that line.
fn meant_release(requested: &str) -> Option<String> {
    let line = requested
        .trim()
        .strip_prefix('v')
        .unwrap_or(requested.trim());
    let (major, minor) = line.split_once('.')?;
    if minor.contains('.') || numbers(&format!("{major}.{minor}.0")).is_none() {
        return None;
    }
    let prefix = format!("{major}.{minor}.");
    let newest = supported().filter(|v| v.starts_with(&prefix)).last()?;
    let first = format!("{prefix}0");
    Some(if newest == first {
        first
    } else {
        format!("{first} (the newest listed {major}.{minor} is {newest})")
    })
}

/// `X.Y.Z` (a leading `v` allowed) as numbers; None for anything else. A version the binary does
/// not list must have this form before it names a file (`cilium-X.Y.Z.tgz`).
pub fn numbers(text: &str) -> Option<(u32, u32, u32)> {
    let text = text.strip_prefix('v').unwrap_or(text);
    let mut parts = text.split('.').map(|p| {
        // Digits only: `+1`, ` 1` and `01` are not release numbers.
        let plain = !p.is_empty()
            && p.bytes().all(|b| b.is_ascii_digit())
            && (p == "0" || !p.starts_with('0'));
        plain.then(|| p.parse::<u32>().ok()).flatten()
    });
    match (parts.next(), parts.next(), parts.next(), parts.next()) {
        (Some(Some(a)), Some(Some(b)), Some(Some(c)), None) => Some((a, b, c)),
        _ => None,
    }
}

/// The oldest release line cilium-cmp renders: the policy layers' facts (`upgradeCompatibility`
/// gates, renamed values) start there.
pub const OLDEST_LINE: (u32, u32) = (1, 18);

/// Whether `text` names a release this binary does not list but renders from its archive
/// (`chart::unlisted`): `X.Y.Z` or a pre-release `X.Y.Z-PRE`, on the 1.18 line or a later one.
pub fn is_newer_than_listed(text: &str) -> bool {
    let Some(v) = crate::release_name::release_name(text) else {
        return false;
    };
    let listed = supported().any(|l| release_number(l) == release_number(text));
    !listed && (v.major, v.minor) >= OLDEST_LINE
}

/// A release's name as `release_name` reads it, printed without a `v` (`1.20.1`,
/// `1.21.0-pre.1`): the name of a release, listed or not, and of its archive `cilium-NAME.tgz`.
pub fn release_number(text: &str) -> Option<String> {
    crate::release_name::release_name(text).map(|r| r.to_string())
}

/// Parses a supported version (`1.18.3`, a leading `v` allowed) into its gate form.
pub fn parse(requested: &str) -> Result<CiliumVersion, UnknownVersion> {
    let unknown = || UnknownVersion {
        requested: requested.to_string(),
    };
    let text = requested.strip_prefix('v').unwrap_or(requested);
    if !RELEASES.iter().any(|r| r.version == text) {
        return Err(unknown());
    }
    let (major, minor, patch) = numbers(text).ok_or_else(unknown)?;
    Ok(CiliumVersion {
        major,
        minor,
        patch,
        slot: None,
    })
}

/// Registers a release read from an archive, from the texts `import::facts` made; `digest`
/// identifies what it was read from (the same digest gives the same release back). The texts
/// stay for the process's life: a process renders one release, and a test process a few.
pub(crate) fn register_archive(
    digest: &str,
    facts: crate::chart::import::Facts,
) -> Option<CiliumVersion> {
    let name = crate::release_name::release_name(&facts.version)?;
    let mut slots = UNLISTED.lock().unwrap_or_else(|e| e.into_inner());
    let slot = match slots.iter().position(|(d, _)| d == digest) {
        Some(slot) => slot,
        None => {
            let leak = |s: String| -> &'static str { Box::leak(s.into_boxed_str()) };
            let data = ReleaseData::new(
                leak(facts.version),
                leak(facts.values),
                leak(facts.schema),
                leak(facts.keys),
            );
            slots.push((digest.to_string(), Box::leak(Box::new(data))));
            slots.len() - 1
        }
    };
    Some(CiliumVersion {
        major: name.major,
        minor: name.minor,
        patch: name.patch,
        slot: Some(u32::try_from(slot).ok()?),
    })
}

/// A release's facts: compiled in, or read from its archive.
fn data(version: CiliumVersion) -> Option<&'static ReleaseData> {
    match version.slot {
        Some(slot) => {
            let twins = UNLISTED.lock().unwrap_or_else(|e| e.into_inner());
            twins.get(slot as usize).map(|(_, d)| *d)
        }
        None => {
            let key = version.to_string();
            RELEASES.iter().find(|r| r.version == key)
        }
    }
}

/// A release's defaults, read once per process, with every node indexed by its dotted path.
struct Defaults {
    tree: &'static serde_json::Value,
    index: PathIndex,
}

/// Parses a release's defaults once per process. The files are generated by this project and
/// tested to parse.
fn loaded(version: CiliumVersion) -> Option<&'static Defaults> {
    let d = data(version)?;
    Some(d.defaults.get_or_init(|| {
        let tree: &'static serde_json::Value = d
            .tree
            .get_or_init(|| crate::data_json::parse(d.values).unwrap_or_default());
        Defaults {
            tree,
            index: PathIndex::new(tree),
        }
    }))
}

/// The chart's default values for a supported release.
pub fn defaults(version: CiliumVersion) -> serde_json::Value {
    loaded(version).map(|d| d.tree.clone()).unwrap_or_default()
}

/// The chart's default values for a supported release, read once per process and indexed, for
/// `Values::resolve_indexed`. None for an unsupported release.
pub fn defaults_indexed(
    version: CiliumVersion,
) -> Option<(&'static serde_json::Value, &'static PathIndex)> {
    loaded(version).map(|d| (d.tree, &d.index))
}

/// A supported release's defaults as the JSON text `import-chart` wrote.
pub(crate) fn defaults_text(version: &str) -> Option<&'static str> {
    RELEASES
        .iter()
        .find(|r| r.version == version)
        .map(|r| r.values)
}

/// A supported release's template keys as the JSON text `import-chart` wrote.
pub(crate) fn template_keys_text(version: &str) -> Option<&'static str> {
    RELEASES
        .iter()
        .find(|r| r.version == version)
        .map(|r| r.keys)
}

/// The value paths a supported release's templates read (sorted), whether or not its
/// values.yaml lists them.
pub fn template_keys(version: CiliumVersion) -> &'static [String] {
    match data(version) {
        Some(d) => d
            .parsed_keys
            .get_or_init(|| serde_json::from_str(d.keys).unwrap_or_default()),
        None => &[],
    }
}

/// The text of the chart's values schema for a supported release (the editor schema starts
/// from it).
pub fn schema_text(version: CiliumVersion) -> Option<&'static str> {
    data(version).map(|d| d.schema)
}

/// The chart's values schema for a supported release, whole (renders read it lazily; tests hold
/// that to this).
#[cfg(test)]
pub(crate) fn schema(version: CiliumVersion) -> &'static serde_json::Value {
    static EMPTY: serde_json::Value = serde_json::Value::Null;
    match data(version) {
        Some(d) => d
            .whole_schema
            .get_or_init(|| crate::data_json::parse(d.schema).unwrap_or_default()),
        None => &EMPTY,
    }
}

/// The chart's values schema for a supported release, read lazily: a render reads the schema
/// of the top-level values the user wrote, and nothing else.
pub fn schema_lazy(version: CiliumVersion) -> &'static LazySchema {
    static EMPTY: OnceLock<LazySchema> = OnceLock::new();
    match data(version) {
        Some(d) => d
            .lazy_schema
            .get_or_init(|| LazySchema::from_json(d.schema)),
        None => EMPTY.get_or_init(|| LazySchema::from_json("{}")),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_fast_reader_reads_exactly_what_serde_json_reads() {
        for r in &super::RELEASES {
            let v = r.version;
            for text in [r.values, r.schema] {
                let want: serde_json::Value = serde_json::from_str(text).unwrap();
                // Through `parse`'s own path, without its fallback to serde_json.
                let mut r = crate::data_json::Reader { text, i: 0 };
                let got = r.value().expect(v);
                assert_eq!(got, want, "{v}");
                // Same number kinds (integer or float), not only equal values.
                assert_eq!(got.to_string(), want.to_string(), "{v}");
            }
        }
        let tricky = r#" {"a\"b": "x\u00e9\n", "n": [-1, 1.5e3, 18446744073709551616, 0, -0.0],
            "e": {}, "l": [], "t": true, "f": false, "z": null} "#;
        let want: serde_json::Value = serde_json::from_str(tricky).unwrap();
        let mut r = crate::data_json::Reader { text: tricky, i: 0 };
        assert_eq!(r.value().unwrap().to_string(), want.to_string());
        let m = crate::data_json::members(tricky).unwrap();
        let keys: Vec<&str> = m.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["a\"b", "n", "e", "l", "t", "f", "z"]);
        assert_eq!(m[1].1, "[-1, 1.5e3, 18446744073709551616, 0, -0.0]");
        assert_eq!(m[6].1, "null");
    }

    #[test]
    fn every_release_has_parseable_defaults() {
        for v in super::supported() {
            let parsed = super::parse(v).unwrap();
            let d = super::defaults(parsed);
            assert_eq!(d["image"]["tag"], format!("v{v}"), "{v}");
            assert!(
                super::schema(parsed)["properties"]["image"].is_object(),
                "{v}"
            );
        }
        assert!(super::parse("1.17.0")
            .unwrap_err()
            .to_string()
            .contains("1.18.12"));
        for (v, newer) in [
            ("1.18.13", true),
            ("v1.19.7", true),
            ("1.21.0", true),
            ("1.18.12", false),
            ("1.17.9", false),
            ("1.20", false),
            ("1.20.01", false),
        ] {
            assert_eq!(super::is_newer_than_listed(v), newer, "{v}");
        }
        assert!(super::is_newer_than_listed("1.21.0-pre.1"));
        assert!(!super::is_newer_than_listed("1.21.0-pre..1"));
        assert_eq!(
            super::release_number("v1.21.0-rc.2").unwrap(),
            "1.21.0-rc.2"
        );
        let msg = super::parse("1.19.7").unwrap_err().to_string();
        assert!(msg.contains("chart fetch 1.19.7"), "{msg}");
    }
}
