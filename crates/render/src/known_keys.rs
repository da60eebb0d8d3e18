//! Values the requested chart does not know. Helm ignores them silently (Cilium's schema allows
//! any key), so a typo, a value renamed or removed between releases, or a values file written
//! for an umbrella chart quietly does nothing. This check finds all of them in one pass and says,
//! for each, where it was written and what is meant instead.
//!
//! A user's path is known to a release when the release's defaults list it or one of its
//! templates reads it (`data/VERSION/template-keys.json`: the chart reads more values than its
//! values.yaml shows). Below some paths the keys are the user's own and never checked:
//! - a default that is a list (list items are data) or an empty map (`annotations: {}`);
//! - maps named like Kubernetes pass-through fields (labels, annotations, selectors,
//!   `resources`, `affinity`, security contexts, update strategies, `extraConfig`);
//! - a map the templates read whole and none of whose keys they read one by one (it is handed to
//!   Kubernetes as written, e.g. `hubble.relay.affinity`);
//! - a default that is null or a scalar, unless the templates read only keys below it.
//!
//! Where in doubt a subtree is left unchecked: a missed typo is better than a refused render.

use std::cell::OnceCell;

use serde_json::{Map, Value};

use crate::changes::ValueChange;
use crate::values::Values;
use crate::versions::{self, CiliumVersion};

/// One value the requested release does not know.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownValue {
    /// The dotted path as the user wrote it (the topmost key the chart does not know).
    pub path: String,
    /// The same path as keys (a key may hold dots), for tools that edit the file.
    pub keys: Vec<String>,
    /// Where it was written (file and line, or `--set`).
    pub origin: String,
    /// The entry in the file, for the excerpt (none for `--set`).
    pub span: Option<cilium_cmp_yaml::diagnostic::Span>,
    /// For a repeated key: the later entry that replaced it.
    pub replaced_by: Option<cilium_cmp_yaml::diagnostic::Span>,
    /// Why the check flags it.
    pub reason: Reason,
}

/// Why a value is unknown, and what to write instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reason {
    /// Other supported releases know it (renamed, removed or not yet there).
    OtherRelease {
        /// `1.18` (every supported patch of that minor) or `1.19.2–1.19.6`.
        known_in: String,
        /// What to write instead, where the chart renamed or replaced it.
        hint: Option<&'static str>,
    },
    /// The chart dropped it before the oldest supported release.
    Removed {
        /// What the chart offers instead, when it offers something.
        hint: Option<&'static str>,
    },
    /// A top-level `cilium:` map: values written for a chart that has Cilium as a dependency.
    Umbrella,
    /// One key whose name holds dots, where the chart knows the nested path.
    DottedKey {
        /// The nested path the chart reads (`a.b` for the key `"a.b"`).
        nested: String,
    },
    /// No release knows it: a typo, most likely.
    Unknown {
        /// Known paths spelled close to it, the user's likely meaning.
        suggestions: Vec<String>,
    },
    /// The key is written again later in the same mapping of the same file, and Helm keeps only
    /// the last (`yaml::read::Duplicate`): this occurrence, at `line`, does nothing.
    Repeated {
        /// The 1-based line of this occurrence.
        line: usize,
        /// `FILE:LINE` of both occurrences: the one ignored ...
        ignored: String,
        /// ... and the one Helm keeps.
        kept: String,
    },
}

impl UnknownValue {
    /// Whether the value exists in another supported release (the only kind Helm's references
    /// can hold, since the scenarios are written for some release).
    pub fn is_other_release(&self) -> bool {
        matches!(self.reason, Reason::OtherRelease { .. })
    }
}

impl std::fmt::Display for UnknownValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let dotted = self.keys.iter().any(|k| k.contains('.'));
        let path = match self.reason {
            Reason::DottedKey { .. } => cilium_cmp_yaml::limits::quoted(&self.path),
            _ if dotted => cilium_cmp_yaml::limits::quoted(&self.path),
            _ => shown_path(&self.path),
        };
        write!(f, "{path} (set in {}): ", self.origin)?;
        // A key holding dots whose nested path the release does not know either: say both, or
        // the user reads the explanation of the nested path as being about what they wrote.
        if dotted && !matches!(self.reason, Reason::DottedKey { .. }) {
            write!(
                f,
                "YAML reads this as one key whose name holds dots, which the chart never reads; as nested maps, {}: ",
                shown_path(&self.path)
            )?;
        }
        match &self.reason {
            Reason::OtherRelease { known_in, hint } => {
                write!(f, "exists only in Cilium {known_in}")?;
                if let Some(h) = hint {
                    write!(f, "; {h}")?;
                }
                Ok(())
            }
            Reason::Removed { hint } => {
                f.write_str("removed from the chart; it has no effect")?;
                if let Some(h) = hint {
                    write!(f, "; {h}")?;
                }
                Ok(())
            }
            Reason::Umbrella => f.write_str(
                "the values are nested under `cilium:` as for an umbrella chart; move them to the top level",
            ),
            Reason::DottedKey { nested } => write!(
                f,
                "YAML reads this as one key whose name holds dots; write {nested} as nested maps"
            ),
            Reason::Repeated { ignored, kept, .. } => write!(
                f,
                "written again at {kept}, and Helm keeps only the last occurrence of a key in a mapping, so the values at {ignored} do nothing; remove one of the two"
            ),
            Reason::Unknown { suggestions } => {
                f.write_str("the chart has no such value")?;
                match suggestions.as_slice() {
                    [] => Ok(()),
                    [one] => write!(f, "; did you mean {one}?"),
                    [init @ .., last] => write!(f, "; did you mean {} or {last}?", init.join(", ")),
                }
            }
        }
    }
}

/// A path as the user wrote it: bare when it is a plain, short dotted name, else quoted within
/// bounds (keys can hold anything).
fn shown_path(path: &str) -> String {
    let plain = path.len() <= 120
        && path
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._-/".contains(&b));
    if plain {
        path.to_string()
    } else {
        cilium_cmp_yaml::limits::quoted(path)
    }
}

/// Values renamed or removed between supported minors, with what the newer chart offers
/// instead: the values part of the changelog (`changes::VALUES`), kept here under its old name
/// for the modules that explain unknown values.
pub const RENAMED: &[ValueChange] = crate::changes::VALUES;

/// Renames that keep the value's meaning, which `fix-values --apply-renames` carries out: (old
/// path, new path, first release without the old one), the `RENAMED` entries with a new path.
pub fn moves() -> impl Iterator<Item = (&'static str, &'static str, &'static str)> {
    RENAMED.iter().filter_map(|value| {
        let to = value.moved_to?;
        Some((value.path, to, value.first_release_without()))
    })
}

/// The new path of a renamed value (as keys), where `version` is past the rename.
pub fn moved_to(keys: &[String], version: CiliumVersion) -> Option<Vec<String>> {
    let dotted = keys.join(".");
    RENAMED.iter().find_map(|value| {
        let new = value.moved_to?;
        (value.gone_in(version) && dotted == value.path)
            .then(|| new.split('.').map(str::to_string).collect())
    })
}

/// Values older charts had and no supported release has (neither in its defaults nor read by its
/// templates, but for the refusal of `containerRuntime.integration`; a test holds the table to
/// that), found in values files that outlived them: (path, what to use instead).
const REMOVED: &[(&str, Option<&str>)] = &[
    ("externalIPs", None),
    ("hostPort", None),
    ("bgp", Some("BGP is configured with bgpControlPlane")),
    ("bpf.hostRouting", Some("see bpf.hostLegacyRouting")),
    ("containerRuntime", None),
    ("nativeRoutingCIDR", Some("use ipv4NativeRoutingCIDR")),
    (
        "ipam.operator.clusterPoolIPv4PodCIDR",
        Some("use ipam.operator.clusterPoolIPv4PodCIDRList (a list)"),
    ),
    (
        "ipam.operator.clusterPoolIPv6PodCIDR",
        Some("use ipam.operator.clusterPoolIPv6PodCIDRList (a list)"),
    ),
];

/// Unknown values beyond this many are only counted: each listed one is looked up in every other
/// release, compared with every known path and located in its file, which a hostile file with
/// thousands of keys must not multiply (nor flood the message).
pub const MAX_LISTED: usize = 200;

/// What `check` found: every value the user wrote that the release does not know, sorted by
/// path, the first `MAX_LISTED` of them explained.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    /// The values flagged, each with where it was written and why (at most a screenful).
    pub values: Vec<UnknownValue>,
    /// How many more unknown values there are beyond those listed.
    pub more: usize,
    /// Their paths, unexplained (`fix-values` removes them all the same).
    pub unlisted: Vec<Vec<String>>,
}

impl Report {
    /// True when no value was flagged.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// One line per unknown value, and one for those beyond the listed ones.
    pub fn lines(&self) -> Vec<String> {
        let mut lines: Vec<String> = self.values.iter().map(ToString::to_string).collect();
        if self.more > 0 {
            lines.push(format!(
                "and {} more values the chart does not know (only the first {MAX_LISTED} are listed)",
                self.more
            ));
        }
        lines
    }
}

/// Every value the user wrote that `version` does not know. Empty for the usual values file;
/// the requested release's template keys are read only when a user key is absent from its
/// defaults, and other releases only when a key is unknown.
pub fn check(values: &Values, version: CiliumVersion) -> Report {
    let mut report = check_keys(values, version);
    report.values.extend(repeated(values));
    report
}

/// Each earlier occurrence of a key a values file writes twice in one mapping, in file order.
fn repeated(values: &Values) -> Vec<UnknownValue> {
    let mut out = Vec::new();
    for layer in values.layers() {
        for d in layer.duplicates.iter().take(MAX_LISTED) {
            let source = &layer.source;
            out.push(UnknownValue {
                path: d.path.clone(),
                keys: d.keys.clone().unwrap_or_default(),
                origin: format!("{source} line {}", d.ignored_line),
                span: layer.span_of_line(d.ignored_line, d.keys.as_ref().and_then(|k| k.last())),
                replaced_by: layer
                    .span_of_line(d.replaced_by_line, d.keys.as_ref().and_then(|k| k.last())),
                reason: Reason::Repeated {
                    line: d.ignored_line,
                    ignored: format!("{source}:{}", d.ignored_line),
                    kept: format!("{source}:{}", d.replaced_by_line),
                },
            });
        }
    }
    out
}

fn check_keys(values: &Values, version: CiliumVersion) -> Report {
    let Value::Object(user) = values.user() else {
        return Report::default();
    };
    let Some((defaults, _)) = versions::defaults_indexed(version) else {
        return Report::default();
    };
    let release = Release::new(version, defaults);
    let mut found = Vec::new();
    let mut path = Vec::new();
    release.walk(user, Some(defaults), &mut path, &mut found);
    let more = found.len().saturating_sub(MAX_LISTED);
    let unlisted = found
        .iter()
        .skip(MAX_LISTED)
        .map(|(keys, _)| keys.clone())
        .collect();
    let values = found
        .into_iter()
        .take(MAX_LISTED)
        .map(|(keys, value)| {
            let dotted = keys.join(".");
            UnknownValue {
                origin: values.describe_origin(&dotted),
                span: values.span_of(&dotted),
                replaced_by: None,
                reason: release.explain(&keys, value),
                path: dotted,
                keys,
            }
        })
        .collect();
    Report {
        values,
        more,
        unlisted,
    }
}

/// What a release accepts at one path of a user's values.
enum Verdict {
    /// Not a value of this release.
    Unknown,
    /// Anything, at any depth: the user's own keys (or a value handed on whole).
    Free,
    /// Known; a map there has its keys checked, against these defaults (None: the templates'
    /// keys alone).
    Checked(Option<&'static Value>),
}

/// The values a release knows, as a tree: what the check accepts, laid out for a schema. A key
/// set to null is accepted anywhere (it removes a default), which the tree leaves implicit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Known {
    /// Any keys and values below.
    Free,
    /// A map whose keys are checked: the known ones with what each accepts below it;
    /// `any_key` when other keys are accepted too (a map the templates read whole).
    Map {
        /// The known keys, each with what it accepts below it.
        keys: std::collections::BTreeMap<String, Known>,
        /// Whether keys beyond `keys` are accepted too.
        any_key: bool,
    },
}

/// The known-values tree of a supported release (None for an unsupported one).
pub fn known_tree(version: CiliumVersion) -> Option<Known> {
    let (defaults, _) = versions::defaults_indexed(version)?;
    Some(Release::new(version, defaults).tree(&mut Vec::new(), Some(defaults)))
}

/// The requested release: its defaults, and its template keys once a check needs them.
struct Release {
    version: CiliumVersion,
    defaults: &'static Value,
    keys: OnceCell<&'static [String]>,
    all_paths: OnceCell<Vec<String>>,
}

impl Release {
    fn new(version: CiliumVersion, defaults: &'static Value) -> Release {
        Release {
            version,
            defaults,
            keys: OnceCell::new(),
            all_paths: OnceCell::new(),
        }
    }

    fn keys(&self) -> &'static [String] {
        self.keys
            .get_or_init(|| versions::template_keys(self.version))
    }

    fn reads(&self, dotted: &str) -> bool {
        reads(self.keys(), dotted)
    }

    fn reads_below(&self, dotted: &str) -> bool {
        reads_below(self.keys(), dotted)
    }

    /// Collects the topmost unknown paths under `user`, whose defaults are `defaults` (None
    /// where the defaults do not reach).
    fn walk<'u>(
        &self,
        user: &'u Map<String, Value>,
        defaults: Option<&'static Value>,
        path: &mut Vec<String>,
        found: &mut Vec<(Vec<String>, &'u Value)>,
    ) {
        for (key, value) in user {
            // Removing a default is never a mistake, and `global` is Helm's own.
            if value.is_null() || (path.is_empty() && key == "global") {
                continue;
            }
            let default = defaults.and_then(|d| d.get(key));
            // A value the defaults list is known; unless it is a map there is nothing below it
            // to check (and no need to consult the templates' keys, which costs a parse).
            if default.is_some() && !value.is_object() {
                continue;
            }
            path.push(key.clone());
            match self.classify(path, default) {
                Verdict::Unknown => found.push((path.clone(), value)),
                Verdict::Free => {}
                // Only a map has keys to check; any other value there is the schema's business.
                Verdict::Checked(below) => {
                    if let Value::Object(m) = value {
                        self.walk(m, below, path, found);
                    }
                }
            }
            path.pop();
        }
    }

    /// What this release accepts at `path` (the last key being the user's), whose default is
    /// `default` (None where the defaults do not list it). The one rule both the check and the
    /// editor schema (`tree`) follow.
    fn classify(&self, path: &[String], default: Option<&'static Value>) -> Verdict {
        let key = last(path);
        let dotted = path.join(".");
        if let Some(default) = default {
            if is_pass_through_name(key) {
                return Verdict::Free;
            }
            return match default {
                Value::Array(_) => Verdict::Free,
                Value::Object(m) if m.is_empty() => Verdict::Free,
                Value::Object(_) => Verdict::Checked(Some(default)),
                // A map over a null or a scalar: checked only where the templates read the keys
                // below one by one and not the map whole.
                _ if !self.reads(&dotted) && self.reads_below(&dotted) => Verdict::Checked(None),
                _ => Verdict::Free,
            };
        }
        // A path the defaults do not list: known when a template reads it, or reads the map
        // above it whole and nothing in it one by one.
        if path.len() > 1 && self.takes_any_key(&dotted[..dotted.len() - key.len() - 1]) {
            return Verdict::Free;
        }
        // A key holding dots matches no template path (those are nested keys).
        if key.contains('.') {
            return Verdict::Unknown;
        }
        if self.reads(&dotted) {
            return Verdict::Free;
        }
        if self.reads_below(&dotted) {
            return if is_pass_through_name(key) {
                Verdict::Free
            } else {
                Verdict::Checked(None)
            };
        }
        Verdict::Unknown
    }

    /// Whether a checked map takes keys its defaults do not list: the templates read it whole
    /// and none of its keys one by one.
    fn takes_any_key(&self, dotted: &str) -> bool {
        self.reads(dotted) && !self.reads_below(dotted)
    }

    /// The known keys of the checked map at `path` (defaults `defaults`) as a tree.
    fn tree(&self, path: &mut Vec<String>, defaults: Option<&'static Value>) -> Known {
        let dotted = path.join(".");
        let mut names: Vec<String> = match defaults {
            Some(Value::Object(m)) => m.keys().cloned().collect(),
            _ => Vec::new(),
        };
        let prefix = if path.is_empty() {
            String::new()
        } else {
            format!("{dotted}.")
        };
        let read = self.keys();
        let at = read.partition_point(|k| k.as_str() < prefix.as_str());
        for k in read[at..].iter().take_while(|k| k.starts_with(&prefix)) {
            let rest = &k[prefix.len()..];
            names.push(rest.split('.').next().unwrap_or(rest).to_string());
        }
        names.sort();
        names.dedup();
        let mut keys = std::collections::BTreeMap::new();
        for name in names {
            path.push(name.clone());
            let verdict = self.classify(path, defaults.and_then(|d| d.get(&name)));
            let below = match verdict {
                Verdict::Unknown => None,
                Verdict::Free => Some(Known::Free),
                Verdict::Checked(d) => Some(self.tree(path, d)),
            };
            path.pop();
            if let Some(below) = below {
                keys.insert(name, below);
            }
        }
        if path.is_empty() {
            keys.insert("global".into(), Known::Free);
        }
        Known::Map {
            keys,
            any_key: !path.is_empty() && self.takes_any_key(&dotted),
        }
    }

    /// Whether this release knows a dotted path: its defaults list it or a template reads it.
    fn knows(&self, keys: &[&str]) -> bool {
        lists(self.defaults, keys) || self.reads(&keys.join("."))
    }

    fn explain(&self, keys: &[String], value: &Value) -> Reason {
        let dotted = keys.join(".");
        if keys.len() == 1 && keys[0] == "cilium" && value.is_object() {
            return Reason::Umbrella;
        }
        let last_key = last(keys);
        if last_key.contains('.') {
            let split: Vec<&str> = keys[..keys.len() - 1]
                .iter()
                .map(String::as_str)
                .chain(last_key.split('.'))
                .collect();
            if self.knows(&split) {
                return Reason::DottedKey {
                    nested: split.join("."),
                };
            }
        }
        if let Some((_, hint)) = REMOVED
            .iter()
            .find(|(p, _)| dotted == *p || dotted.starts_with(&format!("{p}.")))
        {
            return Reason::Removed { hint: *hint };
        }
        let known_in = other_releases_knowing(keys, self.version);
        if !known_in.is_empty() {
            return Reason::OtherRelease {
                known_in: describe_releases(&known_in),
                hint: hint(&dotted, self.version),
            };
        }
        Reason::Unknown {
            suggestions: self.suggest(keys),
        }
    }

    /// Up to three known paths close to an unknown one: first the keys beside it (a key that
    /// differs only in case ranks first), else any known path close to the whole path or ending
    /// in it (a key written at the wrong level).
    fn suggest(&self, keys: &[String]) -> Vec<String> {
        let key = last(keys);
        let parent = &keys[..keys.len() - 1];
        let prefix: String = parent.iter().map(|k| format!("{k}.")).collect();
        let mut close: Vec<(usize, String)> = self
            .siblings(parent)
            .into_iter()
            .filter_map(|s| closeness(key, &s).map(|d| (d, format!("{prefix}{s}"))))
            .collect();
        if close.is_empty() {
            let dotted = keys.join(".");
            let tail = format!(".{}", dotted.to_ascii_lowercase());
            let all = self.all_paths();
            let misplaced: Vec<&String> = all
                .iter()
                .filter(|p| p.to_ascii_lowercase().ends_with(&tail))
                .collect();
            // A common key (`enabled`) at the wrong level matches everywhere: no hint then.
            if misplaced.len() <= 3 {
                close.extend(misplaced.into_iter().map(|p| (1, p.clone())));
            }
            close.extend(
                all.iter()
                    .filter_map(|p| closeness(&dotted, p).map(|d| (d, p.clone()))),
            );
        }
        close.sort();
        close.dedup_by(|a, b| a.1 == b.1);
        // Only the nearest ones: a key one edit away makes those three edits away noise.
        let best = close.first().map_or(0, |c| c.0);
        close
            .into_iter()
            .take_while(|c| c.0 <= best + 1)
            .take(3)
            .map(|(_, p)| p)
            .collect()
    }

    /// The keys this release knows directly below `parent`.
    fn siblings(&self, parent: &[String]) -> Vec<String> {
        let mut out = Vec::new();
        let mut node = Some(self.defaults);
        for k in parent {
            node = node.and_then(|n| n.get(k));
        }
        if let Some(Value::Object(m)) = node {
            out.extend(m.keys().cloned());
        }
        let prefix: String = parent.iter().map(|k| format!("{k}.")).collect();
        for k in self.keys() {
            if let Some(rest) = k.strip_prefix(&prefix) {
                out.push(rest.split('.').next().unwrap_or(rest).to_string());
            }
        }
        out.sort();
        out.dedup();
        out
    }

    /// Every path this release knows: each map key of its defaults (not inside lists) and each
    /// path its templates read.
    fn all_paths(&self) -> &[String] {
        self.all_paths.get_or_init(|| self.collect_paths())
    }

    fn collect_paths(&self) -> Vec<String> {
        fn collect(node: &Value, prefix: &str, out: &mut Vec<String>) {
            if let Value::Object(m) = node {
                for (k, v) in m {
                    let p = if prefix.is_empty() {
                        k.clone()
                    } else {
                        format!("{prefix}.{k}")
                    };
                    collect(v, &p, out);
                    out.push(p);
                }
            }
        }
        let mut out = Vec::new();
        collect(self.defaults, "", &mut out);
        out.extend(self.keys().iter().cloned());
        out.sort();
        out.dedup();
        out
    }
}

fn last(keys: &[String]) -> &str {
    keys.last().map_or("", String::as_str)
}

/// Maps that Kubernetes objects take as written (or whose keys name the user's own things).
fn is_pass_through_name(key: &str) -> bool {
    let lower = key.to_ascii_lowercase();
    lower.ends_with("annotations")
        || lower.ends_with("labels")
        || lower.ends_with("selector")
        || lower.ends_with("securitycontext")
        || lower.ends_with("affinity")
        || matches!(
            lower.as_str(),
            "extraconfig" | "resources" | "tolerations" | "updatestrategy"
        )
}

fn reads(keys: &[String], dotted: &str) -> bool {
    keys.binary_search_by(|k| k.as_str().cmp(dotted)).is_ok()
}

fn reads_below(keys: &[String], dotted: &str) -> bool {
    let below = format!("{dotted}.");
    // Sorted: the paths below `dotted` start at the first one not less than `dotted.`.
    let at = keys.partition_point(|k| k.as_str() < below.as_str());
    keys.get(at).is_some_and(|k| k.starts_with(&below))
}

fn lists<S: AsRef<str>>(tree: &Value, path: &[S]) -> bool {
    let mut node = tree;
    for key in path {
        match node.get(key.as_ref()) {
            Some(child) => node = child,
            None => return false,
        }
    }
    true
}

/// The other supported releases whose defaults list `keys` or whose templates read it (or
/// below it). The releases whose files do not even hold the last key are passed over unparsed.
fn other_releases_knowing(keys: &[String], version: CiliumVersion) -> Vec<&'static str> {
    let dotted = keys.join(".");
    let quoted_last = serde_json::to_string(last(keys)).unwrap_or_default();
    let as_key = format!("{quoted_last}:");
    let requested = version.to_string();
    versions::supported()
        .filter(|v| *v != requested)
        .filter(|v| {
            let Ok(other) = versions::parse(v) else {
                return false;
            };
            let in_defaults = versions::defaults_text(v).is_some_and(|t| t.contains(&as_key))
                && versions::defaults_indexed(other).is_some_and(|(tree, _)| lists(tree, keys));
            in_defaults || {
                let keys_text = versions::template_keys_text(v).unwrap_or("");
                keys_text.contains(&dotted) && {
                    let read = versions::template_keys(other);
                    reads(read, &dotted) || reads_below(read, &dotted)
                }
            }
        })
        .collect()
}

/// How close a known key is to the one written, lower is closer: 0 when they differ only in
/// case, else one more than the edit distance; None when too far to be a typo of it.
fn closeness(written: &str, known: &str) -> Option<usize> {
    const LONGEST: usize = 80;
    let (a, b) = (written.to_lowercase(), known.to_lowercase());
    if a == b {
        return Some(0);
    }
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    if a.len() > LONGEST || b.len() > LONGEST {
        return None;
    }
    let allowed = match a.len() {
        0..=3 => 1,
        4..=7 => 2,
        _ => 3,
    };
    if a.len().abs_diff(b.len()) > allowed {
        return None;
    }
    let d = edit_distance(&a, &b);
    (d <= allowed).then_some(d + 1)
}

/// `edit_distance` of two strings, for the other files' did-you-mean (the settings file's keys).
pub fn edit_distance_of(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    edit_distance(&a, &b)
}

/// Edits (insert, delete, replace, swap of neighbours) that turn `a` into `b`.
fn edit_distance(a: &[char], b: &[char]) -> usize {
    let mut rows = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in rows.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in rows[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut d = (rows[i - 1][j] + 1)
                .min(rows[i][j - 1] + 1)
                .min(rows[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d = d.min(rows[i - 2][j - 2] + 1);
            }
            rows[i][j] = d;
        }
    }
    rows[a.len()][b.len()]
}

/// `1.18, 1.19.2–1.19.6`: a minor alone where every supported patch of it is listed.
fn describe_releases(releases: &[&str]) -> String {
    let minor_of = |v: &str| {
        v.rsplit_once('.')
            .map_or(v.to_string(), |(m, _)| m.to_string())
    };
    let mut minors: Vec<String> = releases.iter().map(|v| minor_of(v)).collect();
    minors.dedup();
    minors
        .iter()
        .map(|minor| {
            let all: Vec<&str> = versions::supported()
                .filter(|v| minor_of(v) == *minor)
                .collect();
            let have: Vec<&str> = all
                .iter()
                .copied()
                .filter(|v| releases.contains(v))
                .collect();
            match (have.first(), have.last()) {
                _ if have.len() == all.len() => minor.clone(),
                (Some(a), Some(b)) if a == b => a.to_string(),
                (Some(a), Some(b)) => format!("{a}–{b}"),
                _ => minor.clone(),
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The rename hint for `dotted` (or a map above it), where the requested release is past it.
fn hint(dotted: &str, version: CiliumVersion) -> Option<&'static str> {
    RENAMED.iter().find_map(|value| {
        let path = value.path;
        let applies = dotted == path || dotted.starts_with(&format!("{path}."));
        (applies && value.gone_in(version)).then_some(value.hint)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::values::Layer;

    fn check_yaml(version: &str, text: &str) -> Vec<UnknownValue> {
        let v = versions::parse(version).unwrap();
        let layer = Layer::from_yaml("values.yaml", text).unwrap();
        let values = Values::resolve(versions::defaults(v), vec![layer]);
        let report = check(&values, v);
        assert_eq!(report.more, 0);
        report.values
    }

    fn only(version: &str, text: &str) -> UnknownValue {
        let found = check_yaml(version, text);
        assert_eq!(found.len(), 1, "{found:?}");
        found.into_iter().next().unwrap()
    }

    fn suggestions(u: &UnknownValue) -> Vec<&str> {
        match &u.reason {
            Reason::Unknown { suggestions } => suggestions.iter().map(String::as_str).collect(),
            other => panic!("not a plain unknown value: {other:?}"),
        }
    }

    #[test]
    fn a_typo_names_its_line_and_the_closest_keys_beside_it() {
        let u = only("1.20.0", "hubble:\n  relay:\n    enabeld: true\n");
        assert_eq!(u.path, "hubble.relay.enabeld");
        assert_eq!(u.origin, "values.yaml line 3");
        assert_eq!(suggestions(&u), ["hubble.relay.enabled"]);
        assert_eq!(
            u.to_string(),
            "hubble.relay.enabeld (set in values.yaml line 3): the chart has no such value; did you mean hubble.relay.enabled?"
        );
        let u = only("1.18.0", "kubeProxyReplacment: true\n");
        assert_eq!(suggestions(&u), ["kubeProxyReplacement"]);
        // Only the nearest: k8sServicePort and k8sServiceHostRef are further away.
        let u = only("1.20.0", "k8sServiceHostt: x\n");
        assert_eq!(suggestions(&u), ["k8sServiceHost"]);
        // Far from every key: no suggestion rather than a wild guess.
        let u = only("1.19.6", "operator:\n  zzzzzzzzzzzz: 1\n");
        assert_eq!(suggestions(&u), Vec::<&str>::new());
        assert!(u.to_string().ends_with("the chart has no such value"));
    }

    #[test]
    fn a_key_differing_only_in_case_is_suggested_first() {
        let u = only("1.18.12", "cgroup:\n  automount:\n    enabled: false\n");
        assert_eq!(u.path, "cgroup.automount");
        assert_eq!(u.origin, "values.yaml line 2");
        assert_eq!(suggestions(&u)[0], "cgroup.autoMount");
    }

    #[test]
    fn a_key_at_the_wrong_level_is_found_in_the_whole_tree() {
        let u = only("1.20.0", "relay:\n  enabled: true\n");
        assert!(suggestions(&u).contains(&"hubble.relay"), "{u}");
        // A common key at the wrong level matches everywhere: no suggestion.
        let u = only("1.20.0", "enabled: true\n");
        assert!(suggestions(&u).len() <= 3);
    }

    #[test]
    fn at_most_three_suggestions() {
        let found = check_yaml("1.20.0", "image:\n  tga: x\nhubble:\n  xenabled: true\n");
        for u in &found {
            assert!(suggestions(u).len() <= 3, "{u}");
        }
    }

    #[test]
    fn free_form_maps_and_lists_are_the_users_own() {
        let text = "\
resources: {limits: {cpu: 1, ephemeral-storage: 1Gi}, claims: x}
operator:
  resources: {limits: {cpu: 1}}
  affinity: {nodeAffinity: {x: 1}}
  podAnnotations: {anything: x}
  nodeSelector: {node-role.kubernetes.io/control-plane: \"\"}
  tolerations: [{key: a, weird: b}]
  updateStrategy: {rollingUpdate: {maxSurge: 1, extra: 2}}
  podSecurityContext: {sysctls: []}
  securityContext: {readOnlyRootFilesystem: true}
affinity: {nodeAffinity: {whatever: 1}}
securityContext: {runAsUser: 0, capabilities: {custom: [A]}}
podSecurityContext: {fsGroup: 1}
extraEnv: [{name: A, value: b, weird: c}]
extraConfig: {my-flag: x}
annotations: {a.b/c: d}
podLabels: {team: x}
hubble:
  metrics:
    enabled: [dns, \"httpV2:exemplars=true\"]
  relay:
    affinity: {podAffinity: {x: 1}}
    resources: {requests: {memory: 1Gi}}
cni:
  resources: {limits: {memory: 1Gi}}
global: {anything: 1}
kubeProxyReplacement: true
loadBalancer: {mode: dsr}
devices: [eth0]
tls: {caBundle: {content: x}}
clustermesh: {enableMCSAPISupport: null}
";
        for v in versions::supported() {
            assert_eq!(check_yaml(v, text), vec![], "{v}");
        }
    }

    #[test]
    fn a_value_removed_in_a_later_minor_names_the_minors_file_line_and_new_name() {
        let u = only(
            "1.20.0",
            "cni:\n  iptablesRemoveAWSRules: false\nclustermesh:\n  enableMCSAPISupport: true\n",
        );
        assert_eq!(u.path, "clustermesh.enableMCSAPISupport");
        assert_eq!(u.origin, "values.yaml line 4");
        assert_eq!(
            u.reason,
            Reason::OtherRelease {
                known_in: "1.18, 1.19".into(),
                hint: Some("1.20 renamed it to clustermesh.mcsapi.enabled"),
            }
        );
    }

    #[test]
    fn every_violation_is_reported_at_once_in_one_list() {
        let found = check_yaml(
            "1.19.6",
            "customCalls:\n  enabled: true\nnodePort:\n  enabled: true\nsvcSourceRangeCheck: false\nl2podAnnouncements:\n  interface: eth1\nhubble:\n  enabeld: true\nexternalIPs:\n  enabled: true\n",
        );
        let paths: Vec<&str> = found.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "customCalls",
                "externalIPs",
                "hubble.enabeld",
                "l2podAnnouncements.interface",
                "nodePort.enabled",
                "svcSourceRangeCheck"
            ]
        );
        let known: Vec<String> = found
            .iter()
            .filter_map(|f| match &f.reason {
                Reason::OtherRelease { known_in, .. } => Some(known_in.clone()),
                _ => None,
            })
            .collect();
        assert_eq!(known, ["1.18", "1.18, 1.19.0–1.19.4", "1.18", "1.18"]);
        assert!(found[3].to_string().contains("interfacePattern"));
        // Before 1.19.5 the value exists, so nothing is said about it.
        assert_eq!(
            check_yaml("1.19.4", "l2podAnnouncements:\n  interface: eth1\n"),
            vec![]
        );
    }

    #[test]
    fn a_value_of_a_newer_minor_names_it() {
        let u = only("1.18.12", "clustermesh:\n  mcsapi:\n    enabled: true\n");
        assert_eq!(u.path, "clustermesh.mcsapi");
        assert_eq!(
            u.reason,
            Reason::OtherRelease {
                known_in: "1.19, 1.20".into(),
                hint: None
            }
        );
        // Known to a newer release only through its templates.
        let u = only("1.18.12", "nonIdempotentAnnotations: {a: b}\n");
        assert!(u.is_other_release(), "{u}");
    }

    #[test]
    fn values_the_chart_dropped_long_ago_are_named_dead() {
        let found = check_yaml(
            "1.20.0",
            "externalIPs:\n  enabled: true\nbpf:\n  hostRouting: true\nipam:\n  operator:\n    clusterPoolIPv4PodCIDR: 10.0.0.0/8\n",
        );
        let lines: Vec<String> = found.iter().map(ToString::to_string).collect();
        assert_eq!(lines.len(), 3, "{lines:?}");
        assert!(lines[0].starts_with(
            "bpf.hostRouting (set in values.yaml line 4): removed from the chart; it has no effect"
        ));
        assert!(lines[1].starts_with(
            "externalIPs (set in values.yaml line 1): removed from the chart; it has no effect"
        ));
        assert!(lines[2].contains("use ipam.operator.clusterPoolIPv4PodCIDRList"));
        // Written as one key holding dots: both facts, the key quoted as the user wrote it.
        let found = check_yaml("1.20.0", "externalIPs.enabled: true\n");
        assert_eq!(
            found[0].to_string(),
            "\"externalIPs.enabled\" (set in values.yaml line 1): YAML reads this as one key whose name holds dots, which the chart never reads; as nested maps, externalIPs.enabled: removed from the chart; it has no effect"
        );
    }

    /// The table names only values no supported release knows, else they would be said to have
    /// no effect where they do.
    #[test]
    fn removed_values_are_unknown_to_every_supported_release() {
        for v in versions::supported() {
            let version = versions::parse(v).unwrap();
            let (tree, _) = versions::defaults_indexed(version).unwrap();
            let release = Release::new(version, tree);
            for (path, _) in REMOVED {
                let keys: Vec<&str> = path.split('.').collect();
                assert!(!release.knows(&keys), "{path} is known to {v}");
                // The templates read containerRuntime.integration only to refuse it (as the
                // renderer does); the rest of the old map has no effect.
                if *path != "containerRuntime" {
                    assert!(!release.reads_below(path), "{path} is read in {v}");
                }
            }
        }
    }

    /// A move names a rename the refusal explains, and lands on a path the release knows.
    #[test]
    fn moves_are_renames_to_known_paths() {
        assert_eq!(moves().count(), 4, "the four renames of 1.20");
        for (old, new, gone_in) in moves() {
            let renamed = RENAMED
                .iter()
                .find(|r| r.path == old)
                .unwrap_or_else(|| panic!("{old} is not in RENAMED"));
            assert!(renamed.hint.contains(new), "{old}: {}", renamed.hint);
            let version = versions::parse(gone_in).unwrap();
            let (tree, _) = versions::defaults_indexed(version).unwrap();
            let keys: Vec<&str> = new.split('.').collect();
            assert!(lists(tree, &keys), "{new} is not in {gone_in}'s defaults");
            let old_keys: Vec<String> = old.split('.').map(str::to_string).collect();
            assert_eq!(
                moved_to(&old_keys, version).map(|k| k.join(".")),
                Some(new.to_string())
            );
            let before = versions::parse("1.19.6").unwrap();
            assert_eq!(moved_to(&old_keys, before), None);
        }
    }

    #[test]
    fn values_nested_for_an_umbrella_chart_are_named_so() {
        let u = only("1.19.6", "cilium:\n  ipam:\n    mode: kubernetes\n");
        assert_eq!(u.reason, Reason::Umbrella);
        assert_eq!(
            u.to_string(),
            "cilium (set in values.yaml line 1): the values are nested under `cilium:` as for an umbrella chart; move them to the top level"
        );
    }

    #[test]
    fn a_key_holding_dots_is_told_to_be_nested() {
        let u = only("1.20.0", "hubble.relay.enabled: true\n");
        assert_eq!(
            u.reason,
            Reason::DottedKey {
                nested: "hubble.relay.enabled".into()
            }
        );
        assert!(u
            .to_string()
            .starts_with("\"hubble.relay.enabled\" (set in"));
    }

    #[test]
    fn set_values_are_checked_and_named_as_such() {
        let v = versions::parse("1.20.0").unwrap();
        let set = Layer::from_set(&["hubble.relay.enabeld=true".to_string()]).unwrap();
        let values = Values::resolve(versions::defaults(v), vec![set]);
        let found = check(&values, v).values;
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].origin, "--set");
    }

    #[test]
    fn user_text_in_messages_is_bounded() {
        let key = "k".repeat(1000);
        let u = only("1.20.0", &format!("{key}: 1\n"));
        assert!(u.to_string().len() < 400, "{}", u.to_string().len());
        let u = only("1.20.0", "\"a\\nb\": 1\n");
        assert!(u.to_string().starts_with("\"a\\nb\""), "{u}");
    }

    #[test]
    fn beyond_a_bound_unknown_values_are_only_counted() {
        let text: String = (0..MAX_LISTED + 50)
            .map(|i| format!("typo{i:04}: 1\n"))
            .collect();
        let v = versions::parse("1.20.0").unwrap();
        let layer = Layer::from_yaml("values.yaml", &text).unwrap();
        let report = check(&Values::resolve(versions::defaults(v), vec![layer]), v);
        assert_eq!((report.values.len(), report.more), (MAX_LISTED, 50));
        let lines = report.lines();
        assert_eq!(lines.len(), MAX_LISTED + 1);
        assert!(lines[MAX_LISTED].starts_with("and 50 more values"));
    }

    #[test]
    fn edit_distance_counts_swaps_as_one() {
        let d = |a: &str, b: &str| {
            edit_distance(
                &a.chars().collect::<Vec<_>>(),
                &b.chars().collect::<Vec<_>>(),
            )
        };
        assert_eq!(d("enabeld", "enabled"), 1);
        assert_eq!(d("replica", "replicas"), 1);
        assert_eq!(d("", "abc"), 3);
        assert_eq!(closeness("automount", "autoMount"), Some(0));
        assert_eq!(closeness("mtu", "xyz"), None);
    }

    #[test]
    fn releases_are_described_by_minor_or_range() {
        assert_eq!(
            describe_releases(&["1.19.2", "1.19.3", "1.19.4", "1.19.5", "1.19.6", "1.20.0"]),
            "1.19.2–1.19.6, 1.20"
        );
        assert_eq!(describe_releases(&["1.18.5"]), "1.18.5");
    }
}
