//! Helm's values: the chart's defaults for one Cilium version, the user's files and `--set`
//! flags merged over them with Helm's rules, and where each user value was written.
//!
//! Merge rules (the only place they live): maps merge deeply, anything else replaces, a later
//! file wins over an earlier one, `--set` wins over files, and a null removes a default.

use crate::merge::{changed, coalesce_maps, merge_user, ChartNulls};
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};

use serde_json::{Map, Value};

use cilium_cmp_yaml::diagnostic::Span;
use cilium_cmp_yaml::yaml;

/// Where a user value came from, for error messages: the layer and line, and the entry's span
/// in the file (for the excerpt) when the layer is a file that holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    /// The file's name as the user gave it, or the flag (`--set`).
    pub source: String,
    /// The 1-based line, when the value came from a file.
    pub line: Option<usize>,
    /// The entry in the file, for the excerpt (none for a flag).
    pub span: Option<Span>,
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.line {
            Some(l) => write!(f, "{} line {}", self.source, l),
            None => f.write_str(&self.source),
        }
    }
}

/// One input layer, as the user wrote it: a values file or the `--set` flags.
#[derive(Debug, Clone)]
pub struct Layer {
    /// The name errors give it.
    pub source: String,
    /// The layer's values as a JSON tree.
    pub value: Value,
    /// The file's text (none for `--set`): lines are found in it again when an error or a
    /// check asks where a value was written, so a render does not record them.
    text: Option<String>,
    lines: OnceLock<BTreeMap<String, usize>>,
    /// Keys the file writes twice in one mapping: Helm keeps the last, so the earlier values do
    /// nothing (`known_keys::check` reports them).
    pub duplicates: Vec<yaml::read::Duplicate>,
}

#[derive(Debug, thiserror::Error)]
/// Why the user's values could not be read.
pub enum ValuesError {
    /// Shown as `FILE:LINE:COLUMN: message`.
    #[error("{}:{}:{}: {message}", span.source, span.line, span.column)]
    Parse {
        /// Where the reader stopped.
        span: Box<Span>,
        /// Why.
        message: String,
    },
    /// `expr` starts with the flag (`--set`, `--set-json`, ...).
    #[error("{expr}: {message}")]
    Set {
        /// The flag and its argument, as given.
        expr: String,
        /// What is wrong with it.
        message: crate::setexpr::SetExprError,
    },
}

impl Layer {
    /// Parses a values file's text; `source` names it in errors.
    pub fn from_yaml(source: &str, text: &str) -> Result<Layer, ValuesError> {
        let (value, duplicates) =
            yaml::read::parse_value_as_helm(text).map_err(|e| ValuesError::Parse {
                span: Box::new(e.span_in(source, text)),
                message: e.message().to_string(),
            })?;
        match value {
            Value::Object(_) => Ok(Layer {
                source: source.to_string(),
                value,
                text: Some(text.to_string()),
                lines: OnceLock::new(),
                duplicates,
            }),
            Value::Null => Ok(Layer {
                source: source.to_string(),
                value: Value::Object(Map::new()),
                text: None,
                lines: OnceLock::new(),
                duplicates: Vec::new(),
            }),
            _ => {
                // Read again, with positions, only to point at the offending document.
                let (line, column) =
                    yaml::read::parse_values_as_helm(text).map_or((1, 1), |doc| doc.start);
                Err(ValuesError::Parse {
                    span: Box::new(Span::at(source, text, line, column)),
                    message:
                        "a values file must be a YAML mapping at its top level, `key: value` lines"
                            .into(),
                })
            }
        }
    }

    /// Builds the layer of all `--set PATH=VALUE` expressions, applied in order.
    pub fn from_set(exprs: &[String]) -> Result<Layer, ValuesError> {
        let mut root = Value::Object(Map::new());
        crate::setexpr::apply_all(&mut root, exprs).map_err(|(expr, message)| {
            ValuesError::Set {
                expr: format!("--set {}", cilium_cmp_yaml::limits::quoted(&expr)),
                message,
            }
        })?;
        Ok(Layer {
            source: "--set".into(),
            value: root,
            text: None,
            lines: OnceLock::new(),
            duplicates: Vec::new(),
        })
    }

    /// The layer of every `--set`-like flag (`--set-json`, `--set`, `--set-string`,
    /// `--set-file`), applied in Helm's order into one tree, as Helm applies them; the layer over the values files `files`. Helm applies `--set` to the files'
    /// merged tree itself, so `--set l[1]=x` changes one item of a list a file wrote (and keeps
    /// the others); this layer holds what the flags changed in that tree, whole lists included,
    /// so that laying it over the files gives exactly Helm's tree.
    pub fn from_set_args_over(
        args: &crate::setexpr::SetArgs,
        files: &[Layer],
    ) -> Result<Layer, ValuesError> {
        let mut merged = Value::Object(Map::new());
        for layer in files {
            merge_user(&mut merged, &layer.value);
        }
        let mut root = merged.clone();
        args.apply(&mut root)
            .map_err(|(kind, expr, message)| ValuesError::Set {
                expr: format!("{} {}", kind.flag(), cilium_cmp_yaml::limits::quoted(&expr)),
                message,
            })?;
        Ok(Layer {
            source: args.source_name(),
            value: changed(&merged, root),
            text: None,
            lines: OnceLock::new(),
            duplicates: Vec::new(),
        })
    }

    /// The line `path` was written on, when this layer is a file that holds it.
    pub fn line(&self, path: &str) -> Option<usize> {
        let text = self.text.as_deref()?;
        self.lines
            .get_or_init(|| {
                yaml::read::parse_values_as_helm(text)
                    .map(|doc| doc.lines)
                    .unwrap_or_default()
            })
            .get(path)
            .copied()
    }

    /// The entry on `line` of this layer's file (`key` on it, when given).
    pub fn span_of_line(&self, line: usize, key: Option<&String>) -> Option<Span> {
        Span::of_entry(
            &self.source,
            self.text.as_deref()?,
            line,
            key.map(String::as_str),
        )
    }

    /// The entry `path` is written as in this layer's file: its key on its line.
    pub fn span(&self, path: &str) -> Option<Span> {
        let line = self.line(path)?;
        let key = path.rsplit('.').next().filter(|k| !k.ends_with(']'));
        Span::of_entry(&self.source, self.text.as_deref()?, line, key)
    }
}

/// The resolved values a renderer reads: defaults with every layer merged in.
///
/// The merged tree is never built as a whole: the chart's defaults are shared between renders
/// and only read, the user's values lie over them, and a lookup walks both at once with Helm's
/// coalescing rules. Only a node where both sides hold a map (or a user map with nulls to drop)
/// is built, once, the first time someone asks for it as a whole.
#[derive(Debug, Clone)]
pub struct Values {
    /// The chart's defaults (always a map).
    defaults: Defaults,
    /// What lies over the defaults: the user's layers merged (nulls kept, to delete defaults),
    /// plus the few values this renderer sets itself (see `root_mut`). Always a map.
    overlay: Value,
    /// Only what the user wrote, all layers merged (nulls kept): what the schema check reads.
    user: Value,
    /// The layers as written, for `origin` (only errors and a few checks ask, so nothing is
    /// indexed ahead of them).
    layers: Vec<Layer>,
    /// The nodes that must be built to be returned whole, by path; built on first use.
    built: OnceLock<Built>,
}

/// Built nodes: the whole merged tree (only if asked for) and the merged subtrees by path.
#[derive(Debug, Clone, Default)]
struct Built {
    root: OnceLock<Value>,
    /// Sorted by path; paths whose keys contain a dot are left out (no dotted lookup reaches
    /// them), so each path names exactly one node.
    nodes: Vec<(String, OnceLock<Value>)>,
    /// A one-word Bloom filter of the overlay's top-level keys: most lookups concern values
    /// the user did not touch, and this tells so without searching the overlay.
    top_keys: TopKeys,
}

/// A 512-bit Bloom filter (two bits a key) of the overlay's top-level keys: with the few dozen
/// a values file has, it turns away all but a few percent of the lookups under keys the user
/// did not write (a 64-bit one with one bit a key let through about a quarter).
#[derive(Debug, Clone, Default)]
struct TopKeys([u64; 8]);

impl TopKeys {
    fn all() -> TopKeys {
        TopKeys([u64::MAX; 8])
    }

    fn bits(key: &[u8]) -> [(usize, u64); 2] {
        let h = key.iter().fold(0x811c_9dc5u32, |h, &c| {
            (h ^ c as u32).wrapping_mul(0x0100_0193)
        });
        [
            ((h >> 29) as usize, 1 << ((h >> 23) & 63)),
            (((h >> 14) & 7) as usize, 1 << ((h >> 8) & 63)),
        ]
    }

    fn insert(&mut self, key: &[u8]) {
        for (word, bit) in TopKeys::bits(key) {
            self.0[word] |= bit;
        }
    }

    fn may_hold(&self, key: &[u8]) -> bool {
        TopKeys::bits(key)
            .iter()
            .all(|&(word, bit)| self.0[word] & bit != 0)
    }
}

static NULL: Value = Value::Null;

#[derive(Debug, Clone)]
enum Defaults {
    Shared(Arc<Value>),
    /// Read once per process, with an index of every node by path.
    Indexed(&'static Value, &'static PathIndex),
}

impl Defaults {
    fn tree(&self) -> &Value {
        match self {
            Defaults::Shared(t) => t,
            Defaults::Indexed(t, _) => t,
        }
    }
}

/// Every node of a tree reachable by a dotted path (all keys dot-free), by that path: one hash
/// lookup instead of a string search per level of the tree.
pub struct PathIndex {
    /// Every path, end to end.
    paths: String,
    /// (start, length) in `paths`, and the node.
    entries: Vec<(u32, u32, &'static Value)>,
    /// Open addressing: 0 is empty, n is `entries[n - 1]`.
    slots: Vec<u32>,
    bits: u32,
}

impl std::fmt::Debug for PathIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PathIndex({} paths)", self.entries.len())
    }
}

impl PathIndex {
    /// Indexes every node of `root` by its dotted path.
    pub fn new(root: &'static Value) -> PathIndex {
        let mut index = PathIndex {
            paths: String::new(),
            entries: Vec::new(),
            slots: Vec::new(),
            bits: 0,
        };
        index.collect(root, &mut String::new());
        let wanted = (index.entries.len() * 2).next_power_of_two().max(16);
        index.bits = wanted.trailing_zeros();
        index.slots = vec![0; wanted];
        for n in 0..index.entries.len() {
            let (start, len, _) = index.entries[n];
            let path = &index.paths.as_bytes()[start as usize..(start + len) as usize];
            let mut slot = index.slot_of(path);
            while index.slots[slot] != 0 {
                slot = (slot + 1) & (wanted - 1);
            }
            index.slots[slot] = n as u32 + 1;
        }
        index
    }

    fn collect(&mut self, node: &'static Value, path: &mut String) {
        let Value::Object(m) = node else { return };
        for (k, child) in m {
            if k.contains('.') {
                continue;
            }
            let len = path.len();
            if len > 0 {
                path.push('.');
            }
            path.push_str(k);
            self.entries
                .push((self.paths.len() as u32, path.len() as u32, child));
            self.paths.push_str(path);
            self.collect(child, path);
            path.truncate(len);
        }
    }

    fn slot_of(&self, path: &[u8]) -> usize {
        // FxHash's mixing, eight bytes at a time; the top bits pick the slot.
        const K: u64 = 0x51_7c_c1_b7_27_22_0a_95;
        let mut h = path.len() as u64;
        let mut chunks = path.chunks_exact(8);
        for c in &mut chunks {
            let word = u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
            h = (h.rotate_left(5) ^ word).wrapping_mul(K);
        }
        let tail = chunks
            .remainder()
            .iter()
            .rev()
            .fold(0u64, |w, &b| (w << 8) | b as u64);
        h = (h.rotate_left(5) ^ tail).wrapping_mul(K);
        (h >> (64 - self.bits)) as usize
    }

    /// The node at `path`, as `lookup` finds it (None where it finds nothing).
    pub fn get(&self, path: &str) -> Option<&'static Value> {
        let path = path.as_bytes();
        let mask = self.slots.len() - 1;
        let mut slot = self.slot_of(path);
        loop {
            let n = *self.slots.get(slot)?;
            let (start, len, node) = *self.entries.get(n.checked_sub(1)? as usize)?;
            if self
                .paths
                .as_bytes()
                .get(start as usize..(start + len) as usize)
                == Some(path)
            {
                return Some(node);
            }
            slot = (slot + 1) & mask;
        }
    }
}

/// A node of the merged tree, seen without building it.
#[derive(Debug, Clone, Copy)]
pub(crate) enum View<'a> {
    /// Both the defaults and the overlay hold a map here: their coalescence. The flag marks the
    /// root of the values, where Helm treats a user's null differently (see `merge::merged`).
    Merged(&'a Map<String, Value>, &'a Map<String, Value>, bool),
    /// Only the chart's default is here (a null default counts as absent).
    Default(&'a Value),
    /// Only the user's value is here, which replaces the default whole, nulls included.
    User(&'a Value),
}

impl<'a> View<'a> {
    /// The child under `key`, as the merged tree has it (None when absent or deleted).
    pub(crate) fn child(self, key: &str) -> Option<View<'a>> {
        match self {
            View::Merged(d, u, top) => match u.get(key) {
                Some(Value::Null) if crate::merge::null_removes(d.get(key), top) => None,
                Some(Value::Null) => Some(View::User(&NULL)),
                Some(uv) => match (uv, d.get(key)) {
                    (Value::Object(um), Some(Value::Object(dm))) => {
                        Some(View::Merged(dm, um, false))
                    }
                    _ => Some(View::User(uv)),
                },
                None => d.get(key).map(View::Default),
            },
            View::Default(v) => match v {
                Value::Object(m) => m.get(key).map(View::Default),
                _ => None,
            },
            View::User(v) => match v {
                Value::Object(m) => m.get(key).map(View::User),
                _ => None,
            },
        }
    }

    pub(crate) fn is_object(self) -> bool {
        match self {
            View::Merged(..) => true,
            View::Default(v) | View::User(v) => v.is_object(),
        }
    }

    /// Whether the merged tree holds this node at all: Helm drops the chart's null defaults,
    /// and keeps the user's nulls that `child` keeps.
    fn is_present(self) -> bool {
        !matches!(self, View::Default(Value::Null))
    }

    /// The value the merged tree has here, built only when it differs from what is stored.
    pub(crate) fn to_value(self) -> Cow<'a, Value> {
        match self {
            View::Merged(d, u, top) => Cow::Owned(coalesce_maps(d, u, top, ChartNulls::Kept)),
            View::Default(v) | View::User(v) => Cow::Borrowed(v),
        }
    }

    /// True when the node must be built to be returned whole.
    fn needs_building(self) -> bool {
        matches!(self, View::Merged(..))
    }
}

impl Values {
    /// Merges user layers (in order) over the chart's defaults.
    pub fn resolve(defaults: Value, layers: impl Into<Vec<Layer>>) -> Values {
        Values::resolve_shared(Arc::new(defaults), layers)
    }

    /// As `resolve`, over defaults read once per process and indexed (never copied).
    pub fn resolve_indexed(
        defaults: &'static Value,
        index: &'static PathIndex,
        layers: impl Into<Vec<Layer>>,
    ) -> Values {
        let defaults = if defaults.is_object() {
            Defaults::Indexed(defaults, index)
        } else {
            Defaults::Shared(Arc::new(Value::Object(Map::new())))
        };
        Values::over(defaults, layers)
    }

    /// As `resolve`, over defaults shared with other renders (never copied).
    pub fn resolve_shared(defaults: Arc<Value>, layers: impl Into<Vec<Layer>>) -> Values {
        let defaults = if defaults.is_object() {
            defaults
        } else {
            Arc::new(Value::Object(Map::new()))
        };
        Values::over(Defaults::Shared(defaults), layers)
    }

    fn over(defaults: Defaults, layers: impl Into<Vec<Layer>>) -> Values {
        let layers = layers.into();
        let mut user = Value::Object(Map::new());
        for layer in &layers {
            merge_user(&mut user, &layer.value);
        }
        Values {
            defaults,
            overlay: user.clone(),
            user,
            layers,
            built: OnceLock::new(),
        }
    }

    /// The merged tree's root, seen without building it.
    pub(crate) fn view(&self) -> View<'_> {
        match (self.defaults.tree(), &self.overlay) {
            (Value::Object(d), Value::Object(u)) => View::Merged(d, u, true),
            // Both are maps by construction; an overlay replaced through `root_mut` wins whole.
            (_, u) => View::User(u),
        }
    }

    fn built(&self) -> &Built {
        self.built.get_or_init(|| {
            let mut nodes = Vec::new();
            collect_built(self.view(), &mut String::new(), &mut nodes);
            nodes.sort();
            let top_keys = match &self.overlay {
                Value::Object(m) => m.keys().fold(TopKeys::default(), |mut f, k| {
                    f.insert(k.as_bytes());
                    f
                }),
                _ => TopKeys::all(),
            };
            Built {
                root: OnceLock::new(),
                nodes: nodes.into_iter().map(|p| (p, OnceLock::new())).collect(),
                top_keys,
            }
        })
    }

    /// The whole tree. Building it costs a copy of every default: components read single
    /// values with `get` instead.
    pub fn root(&self) -> &Value {
        self.built()
            .root
            .get_or_init(|| self.view().to_value().into_owned())
    }

    /// Helm's `hasKey` on the parent map of `path`: whether the merged tree holds the key, even
    /// with a null value (a user's null on a value whose default is null or absent is kept, and
    /// the chart's `hasKey` tests then pass: `debug.verbose: ~` renders `debug-verbose: ""`).
    pub fn present(&self, path: &str) -> bool {
        let mut node = self.view();
        for key in path.split('.') {
            match node.child(key) {
                Some(c) => node = c,
                None => return false,
            }
        }
        node.is_present()
    }

    /// What lies over the chart's defaults: the user's values, every layer merged with their
    /// nulls, and this renderer's own defaults (`determinism::apply_defaults`). What Helm
    /// coalesces over the chart's `values.yaml`.
    pub fn overlay(&self) -> &Value {
        &self.overlay
    }

    /// The user's values alone, every layer merged.
    pub fn user(&self) -> &Value {
        &self.user
    }

    /// Mutable access to what lies over the chart's defaults (the user's values and this
    /// renderer's own settings), for the few defaults this renderer deliberately changes (see
    /// `plan`): a value set here wins over the default as a user's value would, and a map set
    /// here merges with the default map.
    pub fn root_mut(&mut self) -> &mut Value {
        self.built = OnceLock::new();
        &mut self.overlay
    }

    /// The value at a dotted path (`hubble.relay.enabled`), or null when absent, as Helm's
    /// `.Values.a.b` gives nil.
    pub fn get(&self, path: &str) -> &Value {
        match (&self.defaults, &self.overlay) {
            (Defaults::Indexed(_, index), Value::Object(overlay)) => {
                self.get_indexed(index, overlay, path)
            }
            _ => self.get_walked(path),
        }
    }

    fn get_walked(&self, path: &str) -> &Value {
        let mut node = self.view();
        for key in path.split('.') {
            match node.child(key) {
                Some(c) => node = c,
                None => return &NULL,
            }
        }
        self.finish_lookup(path, node)
    }

    /// `get` where the defaults are indexed: walks the user's (small) maps while they cover the
    /// path, and finds anything below them that only the defaults hold in one index lookup.
    fn get_indexed<'s>(
        &'s self,
        index: &'static PathIndex,
        overlay: &'s Map<String, Value>,
        path: &str,
    ) -> &'s Value {
        let b = path.as_bytes();
        let next_dot = |from: usize| {
            let mut i = from;
            while i < b.len() && b[i] != b'.' {
                i += 1;
            }
            i
        };
        let first = next_dot(0);
        if !self.built().top_keys.may_hold(&b[..first]) {
            return index.get(path).unwrap_or(&NULL);
        }
        let mut over = overlay;
        let mut start = 0;
        let mut end = first;
        loop {
            if start > 0 {
                end = next_dot(start);
            }
            let uv = match over.get(&path[start..end]) {
                // Nothing of the user's here: the rest of the path is the defaults'.
                None => return index.get(path).unwrap_or(&NULL),
                Some(Value::Null) => return &NULL,
                Some(uv) => uv,
            };
            if let Value::Object(um) = uv {
                // Further down, whatever the user's map lacks is the defaults' (and where the
                // default is no map, the index has nothing below it): no need to look the
                // default up on the way.
                if end < path.len() {
                    over = um;
                    start = end + 1;
                    continue;
                }
                if let Some(Value::Object(dm)) = index.get(path) {
                    return self.built_node(path, View::Merged(dm, um, false));
                }
            }
            // The user's value replaces the default here, whole.
            let mut node = View::User(uv);
            if end < path.len() {
                for key in path[end + 1..].split('.') {
                    match node.child(key) {
                        Some(c) => node = c,
                        None => return &NULL,
                    }
                }
            }
            return self.finish_lookup(path, node);
        }
    }

    fn finish_lookup<'s>(&'s self, path: &str, node: View<'s>) -> &'s Value {
        match node {
            View::Default(v) => v,
            View::User(v) => v,
            View::Merged(..) => self.built_node(path, node),
        }
    }

    /// The built form of a node reached by `path` (which has no dotted keys, so it has a slot).
    fn built_node(&self, path: &str, node: View<'_>) -> &Value {
        let nodes = &self.built().nodes;
        match nodes.binary_search_by(|(p, _)| p.as_str().cmp(path)) {
            Ok(i) => nodes[i].1.get_or_init(|| node.to_value().into_owned()),
            // Unreachable: every node that needs building and has a dot-free path is listed.
            Err(_) => &NULL,
        }
    }

    /// Go-template truth of the value at `path`.
    pub fn on(&self, path: &str) -> bool {
        crate::tmpl::truthy(self.get(path))
    }

    /// The value at `path` as a template prints it (empty for null).
    pub fn text(&self, path: &str) -> String {
        crate::tmpl::quote(self.get(path))
    }

    /// True when the user wrote this path in a file or `--set`.
    pub fn user_set(&self, path: &str) -> bool {
        self.layers.iter().any(|l| contains_path(&l.value, path))
    }

    /// Where the user wrote `path`, if they did.
    pub fn origin(&self, path: &str) -> Option<Origin> {
        let (layer, written) = self
            .layers
            .iter()
            .rev()
            .find_map(|l| Some((l, deciding_prefix(&l.value, path)?)))?;
        Some(Origin {
            source: layer.source.clone(),
            line: layer.line(&path[..written]),
            span: layer.span(&path[..written]),
        })
    }

    /// Where the user wrote item `index` of the list at `path`: as `origin`, with the item's own
    /// line when the deciding file wrote the list whole (else the line that decides it).
    pub fn origin_of_item(&self, path: &str, index: usize) -> Option<Origin> {
        let (layer, written) = self
            .layers
            .iter()
            .rev()
            .find_map(|l| Some((l, deciding_prefix(&l.value, path)?)))?;
        let item = format!("{path}[{index}]");
        let at = match written == path.len() {
            true if layer.line(&item).is_some() => item.as_str(),
            true => path,
            false => &path[..written],
        };
        Some(Origin {
            source: layer.source.clone(),
            line: layer.line(at),
            span: layer.span(at),
        })
    }

    /// The user's layers, as written.
    pub fn layers(&self) -> &[Layer] {
        &self.layers
    }

    /// The entry `path` was written as, in the layer that decides it (for an excerpt).
    pub fn span_of(&self, path: &str) -> Option<Span> {
        self.origin(path)?.span
    }

    /// Describes where `path` comes from: the user's file and line, or the chart's default.
    pub fn describe_origin(&self, path: &str) -> String {
        match self.origin(path) {
            Some(o) => o.to_string(),
            None => "the chart's default".into(),
        }
    }
}

/// Lists (by dotted path) every node below the root that must be built to be returned whole.
fn collect_built(node: View<'_>, path: &mut String, out: &mut Vec<String>) {
    let keys: Box<dyn Iterator<Item = &String>> = match node {
        View::Merged(_, u, _) => Box::new(u.keys()),
        View::User(Value::Object(m)) => Box::new(m.keys()),
        _ => return,
    };
    for key in keys {
        if key.contains('.') {
            continue;
        }
        let Some(child) = node.child(key) else {
            continue;
        };
        if !child.needs_building() {
            continue;
        }
        let len = path.len();
        if len > 0 {
            path.push('.');
        }
        path.push_str(key);
        out.push(path.clone());
        collect_built(child, path, out);
        path.truncate(len);
    }
}

/// Looks up a dotted path in a tree; keys themselves may not contain dots.
pub fn lookup<'a>(root: &'a Value, path: &str) -> &'a Value {
    let mut node = root;
    for key in path.split('.') {
        match node {
            Value::Object(m) => match m.get(key) {
                Some(v) => node = v,
                None => return &NULL,
            },
            _ => return &NULL,
        }
    }
    node
}

/// Whether a map tree holds `path`, its keys joined with dots (keys that contain dots
/// themselves included, so every path written can be found).
/// How much of `path` (in bytes) a layer writes that decides the value at `path`: all of it,
/// or a shorter prefix whose value is no map (`cluster: null` decides `cluster.name`).
fn deciding_prefix(v: &Value, path: &str) -> Option<usize> {
    let Value::Object(m) = v else {
        return None;
    };
    m.iter().find_map(|(k, child)| {
        let rest = path.strip_prefix(k.as_str())?;
        if rest.is_empty() {
            return Some(k.len());
        }
        let rest = rest.strip_prefix('.')?;
        if !child.is_object() {
            return Some(k.len());
        }
        deciding_prefix(child, rest).map(|n| k.len() + 1 + n)
    })
}

fn contains_path(v: &Value, path: &str) -> bool {
    let Value::Object(m) = v else {
        return false;
    };
    m.iter()
        .any(|(k, child)| match path.strip_prefix(k.as_str()) {
            Some("") => true,
            Some(rest) => rest
                .strip_prefix('.')
                .is_some_and(|rest| contains_path(child, rest)),
            None => false,
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn helm_merge_rules() {
        let defaults = json!({"a": {"b": 1, "c": 2, "l": [1, 2]}, "d": "x", "e": {"f": 1}});
        let l1 = Layer::from_yaml("one.yaml", "a:\n  b: 5\n  l: [9]\nd: null\n").unwrap();
        let l2 = Layer::from_yaml("two.yaml", "a:\n  c: 7\ne: {g: 2}\n").unwrap();
        let v = Values::resolve(defaults, &[l1, l2]);
        assert_eq!(v.get("a"), &json!({"b": 5.0, "c": 7.0, "l": [9.0]}));
        assert_eq!(v.get("d"), &Value::Null);
        assert_eq!(v.get("e"), &json!({"f": 1, "g": 2.0}));
        assert_eq!(v.origin("a.c").unwrap().to_string(), "two.yaml line 2");
        assert_eq!(v.describe_origin("e.g"), "two.yaml line 3");
        assert_eq!(v.describe_origin("e.f"), "the chart's default");
        assert_eq!(v.describe_origin("zzz"), "the chart's default");
    }

    /// The last layer that wrote a path names it, whatever it wrote (null too), and keys that
    /// hold dots are found as written.
    #[test]
    fn origins_name_the_last_layer_that_wrote_the_path() {
        let l1 = Layer::from_yaml("one.yaml", "a:\n  b: 5\n  c: 1\nx.y: {z: 1}\n").unwrap();
        let l2 = Layer::from_yaml("two.yaml", "a:\n  c: null\n").unwrap();
        let set = Layer::from_set(&["a.b=6".to_string()]).unwrap();
        let v = Values::resolve(json!({}), vec![l1, l2, set]);
        assert_eq!(v.describe_origin("a.b"), "--set");
        assert_eq!(v.describe_origin("a.c"), "two.yaml line 2");
        assert_eq!(v.describe_origin("a"), "--set");
        assert_eq!(v.describe_origin("x.y.z"), "one.yaml line 4");
        assert!(v.user_set("x.y"));
        assert!(!v.user_set("a.b.c") && !v.user_set("a.bb") && !v.user_set("x"));
        // A null (or any non-map) higher up decides everything beneath it.
        let l1 = Layer::from_yaml("one.yaml", "cluster:\n  name: x\n").unwrap();
        let set = Layer::from_set(&["cluster=null".to_string()]).unwrap();
        let v = Values::resolve(json!({}), vec![l1, set]);
        assert_eq!(v.describe_origin("cluster.name"), "--set");
    }

    #[test]
    fn list_items_are_found_on_their_own_lines() {
        let one = Layer::from_yaml("one.yaml", "l:\n  - a\n  - b\n").unwrap();
        let two = Layer::from_yaml("two.yaml", "m:\n  k: [x]\n").unwrap();
        let v = Values::resolve(serde_json::json!({}), vec![one, two]);
        assert_eq!(
            v.origin_of_item("l", 1).unwrap().to_string(),
            "one.yaml line 3"
        );
        assert_eq!(
            v.origin_of_item("m.k", 0).unwrap().to_string(),
            "two.yaml line 2"
        );
        // An index the file does not hold names the list.
        assert_eq!(
            v.origin_of_item("l", 5).unwrap().to_string(),
            "one.yaml line 1"
        );
        assert!(v.origin_of_item("z", 0).is_none());
    }

    #[test]
    fn top_keys_present_as_helms_has_key_sees_them() {
        let defaults = json!({"a": {"b": 1}, "d": "x", "n": null, "k": 1});
        let l1 = Layer::from_yaml("one.yaml", "d: null\nu: 1\nz: null\nk: 2\n").unwrap();
        let v = Values::resolve(defaults, &[l1]);
        // As Helm's `hasKey .Values key` sees them: a null default is dropped, a user's null on
        // a key the chart has removes it, a user's null on a key the chart lacks is kept.
        for (key, present) in [
            ("a", true),
            ("d", false),
            ("n", false),
            ("k", true),
            ("u", true),
            ("z", true),
            ("missing", false),
        ] {
            assert_eq!(v.present(key), present, "{key}");
        }
    }

    /// Checked against Helm 4 (the parity tools' `helm_ref.py`) with a chart whose values hold
    /// each case: which of the user's nulls `hasKey` still sees.
    #[test]
    fn nulls_kept_and_removed_as_helm_coalesces_them() {
        let defaults = json!({
            "topnil": null, "topval": 1,
            "m": {"a": 1, "nil": null, "sub": {"x": 1}},
            "scalar": 5, "empty": {},
        });
        let l1 = Layer::from_yaml(
            "one.yaml",
            "topnil: ~\ntopval: ~\nuseronly: ~\nm: {a: ~, nil: ~, new: ~, sub: ~, newmap: {q: ~}}\nscalar: {k: ~}\nempty: {z: ~}\n",
        )
        .unwrap();
        let v = Values::resolve(defaults, &[l1]);
        for (path, present) in [
            ("topnil", false),
            ("topval", false),
            ("useronly", true),
            ("m.a", false),
            ("m.nil", true),
            ("m.new", true),
            ("m.sub", false),
            ("m.newmap.q", true),
            ("scalar.k", true),
            ("empty.z", true),
        ] {
            assert_eq!(v.present(path), present, "{path}");
            assert!(v.get(path).is_null(), "{path}");
        }
        // A null default the user did not write is absent, even beside a value they did.
        let l2 = Layer::from_yaml("two.yaml", "m: {a: 2}\n").unwrap();
        let v = Values::resolve(json!({"m": {"a": 1, "nil": null}}), &[l2]);
        assert!(!v.present("m.nil") && v.present("m.a"));
    }

    /// Helm's coalescing done the plain way: the whole tree copied, then the user's merged in.
    fn eager(defaults: &Value, layers: &[Layer]) -> Value {
        let mut user = Value::Object(Map::new());
        for layer in layers {
            merge_user(&mut user, &layer.value);
        }
        let empty = Map::new();
        let d = defaults.as_object().unwrap_or(&empty);
        coalesce_maps(d, user.as_object().unwrap(), true, ChartNulls::Kept)
    }

    /// Every dotted path into either tree, plus a few that lead nowhere.
    fn paths(v: &Value, prefix: &str, out: &mut Vec<String>) {
        if let Value::Object(m) = v {
            for (k, c) in m {
                let p = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                out.push(format!("{p}.zz"));
                out.push(format!("{p}."));
                paths(c, &p, out);
                out.push(p);
            }
        }
    }

    fn assert_same_as_eager(defaults: Value, files: &[&str]) {
        let layers: Vec<Layer> = files
            .iter()
            .enumerate()
            .map(|(i, t)| Layer::from_yaml(&format!("{i}.yaml"), t).unwrap())
            .collect();
        let want = eager(&defaults, &layers);
        let mut all = vec![String::new(), ".".into(), "nope".into()];
        paths(&want, "", &mut all);
        paths(&defaults, "", &mut all);
        for layer in &layers {
            paths(&layer.value, "", &mut all);
        }
        let shared = Arc::new(defaults.clone());
        // Leaked: an index needs defaults that live as long as the process, as the chart's do.
        let leaked: &'static Value = Box::leak(Box::new(defaults.clone()));
        let index: &'static PathIndex = Box::leak(Box::new(PathIndex::new(leaked)));
        for v in [
            Values::resolve(defaults.clone(), layers.clone()),
            Values::resolve_shared(shared, layers.clone()),
            Values::resolve_indexed(leaked, index, layers.clone()),
        ] {
            for p in &all {
                assert_eq!(v.get(p), lookup(&want, p), "{p}");
            }
            assert_eq!(v.root(), &want);
            // Asked again, the built nodes are reused and still right.
            for p in &all {
                assert_eq!(v.get(p), lookup(&want, p), "{p}");
            }
        }
    }

    #[test]
    fn lookups_see_what_eager_coalescing_builds() {
        let defaults = json!({
            "a": {"b": {"c": 1, "d": [1, {"e": null}]}, "f": "x", "g": {}},
            "n": null, "s": "str", "l": [1, 2],
            "sel": {"kubernetes.io/os": "linux", "x": {"y.z": 1}},
            "deep": {"one": {"two": {"three": {"four": 4}}}},
        });
        assert_same_as_eager(
            defaults.clone(),
            &[
                "a:\n  b: {c: 2, new: {k: null, m: {n: null, o: 1}}}\n  g: {h: null, i: {j: null}}\nn: {p: 1, q: null}\ns: null\nl: {r: [1, {t: null}]}\n",
                "sel: {kubernetes.io/os: null, w: 1, x: {y.z: null}}\ndeep: {one: {two: null}}\nfresh: {u: {v: null}, w: 2}\n",
                "a: {f: {from: map}}\ndeep: {one: {two: {three: {}}}}\n",
            ],
        );
        assert_same_as_eager(defaults.clone(), &[]);
        assert_same_as_eager(defaults, &["a: null\ndeep: 5\n"]);
        assert_same_as_eager(json!(null), &["a: {b: null, c: {d: null}}\n"]);
    }

    #[test]
    fn lookups_match_eager_coalescing_on_the_chart_defaults() {
        let cilium = crate::versions::parse("1.18.12").unwrap();
        assert_same_as_eager(
            crate::versions::defaults(cilium),
            &[
                "hubble:\n  relay: {enabled: true, tls: null}\n  tls: {auto: {method: cronJob}}\nnodeSelector: {kubernetes.io/os: null, disk: ssd}\n",
                "operator: {replicas: 1, affinity: null}\nextraConfig: {a: '1', b: null}\nipam: {operator: {clusterPoolIPv4PodCIDRList: [10.0.0.0/8]}}\n",
            ],
        );
    }

    #[test]
    fn a_value_set_over_the_defaults_wins_as_a_users_would() {
        let defaults = json!({"h": {"tls": {"auto": {"method": "helm", "on": true}}}});
        let mut v = Values::resolve(defaults, &[]);
        assert_eq!(v.get("h.tls.auto"), &json!({"method": "helm", "on": true}));
        crate::setexpr::apply(v.root_mut(), "h.tls.auto.method=cronJob").unwrap();
        assert_eq!(v.get("h.tls.auto.method"), "cronJob");
        assert_eq!(
            v.get("h.tls.auto"),
            &json!({"method": "cronJob", "on": true})
        );
        assert!(v.user().as_object().unwrap().is_empty());
    }
}
