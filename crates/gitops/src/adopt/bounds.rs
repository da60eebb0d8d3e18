//! What one `adopt-check` or `diff` run may compare. Both run on untrusted input in CI (a live
//! dump someone attached, a pull request's values), so the work and memory of a comparison must
//! stay linear and small: every figure below is checked before the work it guards, and a refusal
//! names the file, the object, the list, the bound and why.
//!
//! The figures sit far above real use. A Cilium object's longest lists hold a few hundred items
//! (the agent's env and volume mounts, a ClusterRole's rules); a `kubectl get` of the chart's
//! ~60 objects with `managedFields` holds ~60,000 YAML nodes, of which ~15,000 non-empty
//! mappings; the API server keeps at most 10 `Update` entries in an object's managedFields and
//! merges older ones into one (k8s.io/apiserver `pkg/endpoints/handlers/fieldmanager`,
//! `DefaultMaxUpdateManagers`).
//!
//! A parsed YAML tree costs far more than its text: a one-key mapping is a B-tree node of ~640
//! bytes, so the 16 MiB a live dump may take can hold 1.1 million list items that parse into more
//! than 1 GB. `scan` therefore counts what a text would build, on the parser's events alone,
//! before any tree exists.

use std::collections::HashMap;

use saphyr_parser::{Event, Parser};

/// Items of one list (YAML sequence) compared in a render or a live dump.
pub const MAX_LIST_ITEMS: usize = 10_000;
/// List items of one object (its lists together).
pub const MAX_OBJECT_LIST_ITEMS: usize = 50_000;
/// YAML nodes (scalars, mappings, sequences) of the live dumps of one run together, and of one
/// render. At most ~150 MB once parsed.
pub const MAX_NODES: usize = 2_000_000;
/// Non-empty YAML mappings of the live dumps of one run together, and of one render: the
/// costliest node (~640 bytes parsed), so at most ~160 MB. An empty mapping (`{}`, every leaf of
/// `fieldsV1`) allocates nothing and is counted as a node only.
pub const MAX_MAPPINGS: usize = 250_000;
/// Objects of the live dumps of one run (a dump of a busy namespace holds a few thousand).
pub const MAX_LIVE_OBJECTS: usize = 20_000;
/// managedFields entries of one object (at most 10 `Update` entries, see above, plus one per
/// applier and subresource).
pub const MAX_MANAGED_FIELDS_ENTRIES: usize = 64;
/// FieldsV1 nodes of one object's managedFields entries together (`ownership::MAX_NODES` bounds
/// one entry).
pub const MAX_MANAGED_FIELDS_NODES: usize = 200_000;
/// Steps the ownership lookups of one run may take (each one a hash lookup of one path step in
/// one entry): a real run takes a few hundred thousand.
pub const MAX_OWNERSHIP_STEPS: usize = 20_000_000;
/// Differences kept per object and direction; the rest are counted, by the list they are in.
pub const MAX_RECORDED_DIFFERENCES: usize = 1_000;

/// What the texts of one run may still build.
#[derive(Debug, Clone)]
pub struct Budget {
    nodes: usize,
    mappings: usize,
}

impl Default for Budget {
    fn default() -> Self {
        Budget {
            nodes: MAX_NODES,
            mappings: MAX_MAPPINGS,
        }
    }
}

/// One open collection while scanning.
struct Frame {
    is_map: bool,
    /// Entries (mappings: keys and values both count) or items so far.
    count: usize,
    anchor: usize,
    /// Counters when it opened, for what an alias to it would copy.
    nodes_at: usize,
    mappings_at: usize,
    /// The key (mappings) of the entry being read, or the item's position (sequences).
    key: String,
    /// The position where the list opened, for the refusal.
    line: usize,
}

/// Checks the bounds above on a text's YAML events, before it is parsed into a tree, and takes
/// what it would build from `budget`. `Err` is a refusal for people, without the file's name
/// (the caller puts it first). A syntax error ends the scan quietly: the parser that follows
/// reports it with its position.
pub fn scan(text: &str, budget: &mut Budget) -> Result<(), String> {
    let mut s = Scan {
        stack: Vec::new(),
        anchors: HashMap::new(),
        nodes: 0,
        mappings: 0,
        document: 0,
        object_items: 0,
        object: ObjectName::default(),
        pending: None,
    };
    let result = s.run(text, budget);
    budget.nodes = budget.nodes.saturating_sub(s.nodes);
    budget.mappings = budget.mappings.saturating_sub(s.mappings);
    result
}

struct Scan {
    stack: Vec<Frame>,
    /// What an alias copies: the nodes and mappings of its anchored node.
    anchors: HashMap<usize, (usize, usize)>,
    nodes: usize,
    mappings: usize,
    document: usize,
    /// List items of the object being read.
    object_items: usize,
    object: ObjectName,
    /// A bound the object broke, reported once it is read whole (and so named).
    pending: Option<String>,
}

impl Scan {
    fn run(&mut self, text: &str, budget: &Budget) -> Result<(), String> {
        let mut parser = Parser::new_from_str(text);
        loop {
            let (event, span) = match parser.next() {
                Some(Ok(pair)) => pair,
                Some(Err(_)) | None => return Ok(()),
            };
            let starts_node = matches!(
                event,
                Event::Scalar(..)
                    | Event::Alias(_)
                    | Event::SequenceStart(..)
                    | Event::MappingStart(..)
            );
            if starts_node {
                self.nodes += 1;
                self.count_entry();
            }
            match event {
                Event::DocumentStart(_) => {
                    self.document += 1;
                    self.object_items = 0;
                    self.object = ObjectName::default();
                }
                Event::Scalar(text, _, anchor, _) => {
                    let is_key = self
                        .stack
                        .last()
                        .is_some_and(|f| f.is_map && f.count % 2 == 1);
                    if is_key {
                        if let Some(top) = self.stack.last_mut() {
                            top.key.clear();
                            top.key.extend(
                                text.chars().take(cilium_cmp_yaml::limits::MAX_QUOTED_CHARS),
                            );
                        }
                    } else {
                        self.object.note(&self.stack, &text);
                    }
                    if anchor > 0 {
                        self.anchors.insert(anchor, (1, 0));
                    }
                }
                Event::Alias(id) => {
                    let (n, m) = self.anchors.get(&id).copied().unwrap_or((1, 0));
                    self.nodes += n.saturating_sub(1);
                    self.mappings += m;
                }
                Event::SequenceStart(anchor, _) | Event::MappingStart(anchor, _) => {
                    if self.stack.len() == object_depth(&self.stack) {
                        self.object_items = 0;
                        self.object = ObjectName::default();
                    }
                    self.stack.push(Frame {
                        is_map: matches!(event, Event::MappingStart(..)),
                        count: 0,
                        anchor,
                        nodes_at: self.nodes - 1,
                        mappings_at: self.mappings,
                        key: String::new(),
                        line: span.start.line(),
                    });
                }
                Event::SequenceEnd | Event::MappingEnd => {
                    let Some(frame) = self.stack.pop() else {
                        return Ok(());
                    };
                    if frame.is_map && frame.count > 0 {
                        self.mappings += 1;
                    }
                    if frame.anchor > 0 {
                        self.anchors.insert(
                            frame.anchor,
                            (
                                self.nodes - frame.nodes_at,
                                self.mappings - frame.mappings_at,
                            ),
                        );
                    }
                    if self.stack.len() == object_depth(&self.stack) {
                        if let Some(why) = self.pending.take() {
                            return Err(self.refusal(&why));
                        }
                    }
                }
                Event::StreamEnd => return Ok(()),
                _ => {}
            }
            if self.nodes > budget.nodes || self.mappings > budget.mappings {
                if let Some(why) = self.pending.take() {
                    return Err(self.refusal(&why));
                }
                return Err(format!(
                    "document {}{}: the dumps of this run (or this render) hold more than {} YAML \
                     nodes or {} non-empty mappings, more than a comparison may hold in memory \
                     (a dump of the chart's objects with managedFields holds ~60,000 nodes): dump \
                     only the chart's kinds in the release namespace",
                    self.document,
                    self.object.shown(),
                    thousands(MAX_NODES),
                    thousands(MAX_MAPPINGS)
                ));
            }
        }
    }

    /// A node starts: it is an entry (key or value) of the open mapping, or an item of the open
    /// list.
    fn count_entry(&mut self) {
        // The `items` of a `kind: List` are objects, bounded by `MAX_LIVE_OBJECTS`.
        let objects_list = self.stack.len() == 2 && object_depth(&self.stack) == 2;
        let Some(top) = self.stack.last_mut() else {
            return;
        };
        top.count += 1;
        if top.is_map || objects_list {
            return;
        }
        top.key = (top.count - 1).to_string();
        let line = top.line;
        let too_long = top.count > MAX_LIST_ITEMS;
        self.object_items += 1;
        if self.pending.is_some() {
            return;
        }
        if too_long {
            self.pending = Some(format!(
                "{} holds more than {} items (the list starts on line {line})",
                path_of(&self.stack),
                thousands(MAX_LIST_ITEMS)
            ));
        } else if self.object_items > MAX_OBJECT_LIST_ITEMS {
            self.pending = Some(format!(
                "its lists hold more than {} items together",
                thousands(MAX_OBJECT_LIST_ITEMS)
            ));
        }
    }

    fn refusal(&self, why: &str) -> String {
        list_refusal(self.document, &self.object.shown(), why)
    }
}

/// Depth of an object's root mapping: 0 (a document), or 2 below a document whose root has an
/// `items` list (`kind: List`, what `kubectl get -o yaml` prints).
fn object_depth(stack: &[Frame]) -> usize {
    match stack {
        [root, items, ..] if root.is_map && root.key == "items" && !items.is_map => 2,
        [root] if root.is_map && root.key == "items" => 2,
        _ => 0,
    }
}

/// The path of the open collections below the current object, as `spec.template.spec.containers[0].env`.
/// The open list itself (the top frame) is named by the path, not by its item.
fn path_of(stack: &[Frame]) -> String {
    let start = object_depth(stack).min(stack.len());
    let end = stack.len().saturating_sub(1);
    let mut out = String::new();
    for f in stack.iter().take(end).skip(start) {
        if f.is_map {
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(&cilium_cmp_yaml::limits::shown(&f.key));
        } else {
            out.push('[');
            out.push_str(&f.key);
            out.push(']');
        }
    }
    if out.is_empty() {
        "the object".into()
    } else {
        out
    }
}

/// The kind, namespace and name of the object being scanned, as far as they were read.
#[derive(Default)]
struct ObjectName {
    kind: Option<String>,
    namespace: Option<String>,
    name: Option<String>,
}

impl ObjectName {
    fn note(&mut self, stack: &[Frame], text: &str) {
        let base = object_depth(stack);
        let rel = match stack.get(base..) {
            Some(rel) => rel,
            None => return,
        };
        let keys: Vec<&str> = rel.iter().map(|f| f.key.as_str()).collect();
        let slot = match keys.as_slice() {
            ["kind"] => &mut self.kind,
            ["metadata", "name"] => &mut self.name,
            ["metadata", "namespace"] => &mut self.namespace,
            _ => return,
        };
        if rel.iter().all(|f| f.is_map) {
            *slot = Some(cilium_cmp_yaml::limits::shown(text));
        }
    }

    fn shown(&self) -> String {
        match (&self.kind, &self.name) {
            (Some(k), Some(n)) => match &self.namespace {
                Some(ns) => format!(", {k} {ns}/{n}"),
                None => format!(", {k} {n}"),
            },
            (Some(k), None) => format!(", a {k}"),
            _ => String::new(),
        }
    }
}

/// The list bounds of `scan`, on documents that are already trees (the objects a render kept,
/// `output::Keep::Objects`): the comparison that follows is bounded alike whether it reads a
/// stream or gets its objects. The render itself is bounded by the engine's limits, so only
/// the per-list and per-object item counts are checked here. `Err` is the refusal, worded as
/// `scan`'s (without the line, which a tree does not have).
pub fn check_trees(docs: &[serde_json::Value]) -> Result<(), String> {
    use serde_json::Value;
    /// Where a bound was crossed, innermost step first, and why: the path is spelt only for a
    /// refusal, as the walk returns (spelling it at every node was most of a diff's bounds cost).
    struct Crossed<'a> {
        steps: Vec<Result<&'a str, usize>>,
        why: String,
    }
    fn walk<'a>(v: &'a Value, items: &mut usize) -> Result<(), Crossed<'a>> {
        let crossed = |why: String| Crossed {
            steps: Vec::new(),
            why,
        };
        match v {
            Value::Array(list) => {
                if list.len() > MAX_LIST_ITEMS {
                    return Err(crossed(format!(
                        "holds more than {} items",
                        thousands(MAX_LIST_ITEMS)
                    )));
                }
                *items += list.len();
                if *items > MAX_OBJECT_LIST_ITEMS {
                    return Err(crossed(format!(
                        "its lists hold more than {} items together",
                        thousands(MAX_OBJECT_LIST_ITEMS)
                    )));
                }
                for (i, item) in list.iter().enumerate() {
                    walk(item, items).map_err(|mut c| {
                        c.steps.push(Err(i));
                        c
                    })?;
                }
            }
            Value::Object(map) => {
                for (k, item) in map {
                    walk(item, items).map_err(|mut c| {
                        c.steps.push(Ok(k.as_str()));
                        c
                    })?;
                }
            }
            _ => {}
        }
        Ok(())
    }
    // The refusal as `scan` words it: the list's path before "holds ...", the object's count
    // on its own.
    fn worded(crossed: Crossed<'_>) -> String {
        if crossed.why.starts_with("its lists") {
            return crossed.why;
        }
        let mut path = String::new();
        for step in crossed.steps.iter().rev() {
            match step {
                Ok(key) => {
                    if !path.is_empty() {
                        path.push('.');
                    }
                    path.push_str(&cilium_cmp_yaml::limits::shown(key));
                }
                Err(i) => path.push_str(&format!("[{i}]")),
            }
        }
        let shown = if path.is_empty() {
            "the object"
        } else {
            path.as_str()
        };
        format!("{shown} {}", crossed.why)
    }
    for (i, doc) in docs.iter().enumerate() {
        let mut items = 0;
        if let Err(crossed) = walk(doc, &mut items) {
            let why = worded(crossed);
            let field = |p: &str| {
                doc.pointer(p)
                    .and_then(Value::as_str)
                    .map(cilium_cmp_yaml::limits::shown)
            };
            let name = ObjectName {
                kind: field("/kind"),
                namespace: field("/metadata/namespace"),
                name: field("/metadata/name"),
            };
            return Err(list_refusal(i + 1, &name.shown(), &why));
        }
    }
    Ok(())
}

/// A list bound broken in document `document` (`object`: what `ObjectName::shown` gives).
fn list_refusal(document: usize, object: &str, why: &str) -> String {
    format!(
        "document {document}{object}: {why}; cilium-cmp compares at most {} items per list and {} \
         per object (real Cilium objects hold a few hundred)",
        thousands(MAX_LIST_ITEMS),
        thousands(MAX_OBJECT_LIST_ITEMS),
    )
}

/// `12345678` as `12,345,678`.
pub fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(n: usize) -> String {
        let items: Vec<String> = (0..n).map(|i| format!("{{name: e{i}}}")).collect();
        format!(
            "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {{name: cilium, namespace: kube-system}}\n\
             spec: {{template: {{spec: {{containers: [{{name: a, env: [{}]}}]}}}}}}\n",
            items.join(",")
        )
    }

    #[test]
    fn trees_are_held_to_the_list_bounds_of_streams() {
        let env: Vec<serde_json::Value> =
            (0..=MAX_LIST_ITEMS).map(|i| serde_json::json!(i)).collect();
        let ds = serde_json::json!({"kind": "DaemonSet", "metadata": {"name": "cilium", "namespace": "kube-system"},
            "spec": {"template": {"spec": {"containers": [{"env": env}]}}}});
        let why = check_trees(&[serde_json::json!({"kind": "ConfigMap"}), ds]).unwrap_err();
        assert!(
            why.starts_with("document 2, DaemonSet kube-system/cilium: spec.template.spec.containers[0].env holds more than 10,000 items"),
            "{why}"
        );
        let small = serde_json::json!({"kind": "ConfigMap", "data": {"a": [1, 2, 3]}});
        assert!(check_trees(&[small]).is_ok());
    }

    #[test]
    fn a_list_past_the_bound_is_named_with_its_object() {
        assert!(scan(&list(MAX_LIST_ITEMS), &mut Budget::default()).is_ok());
        let err = scan(&list(MAX_LIST_ITEMS + 1), &mut Budget::default()).unwrap_err();
        assert!(
            err.contains("DaemonSet kube-system/cilium")
                && err.contains("spec.template.spec.containers[0].env holds more than 10,000"),
            "{err}"
        );
    }

    #[test]
    fn list_items_of_a_kubectl_list_are_objects() {
        let items: Vec<String> = (0..3)
            .map(|i| {
                let env: Vec<String> = (0..20_000).map(|j| format!("{{name: e{j}}}")).collect();
                format!(
                    "{{kind: ConfigMap, metadata: {{name: c{i}}}, data: {{}}, x: [{}]}}",
                    if i == 2 { env.join(",") } else { String::new() }
                )
            })
            .collect();
        let text = format!("apiVersion: v1\nitems: [{}]\nkind: List\n", items.join(","));
        let err = scan(&text, &mut Budget::default()).unwrap_err();
        assert!(err.contains("ConfigMap c2: x holds more than"), "{err}");
    }

    #[test]
    fn the_budget_is_shared_and_aliases_count() {
        let mut budget = Budget {
            nodes: 100,
            mappings: 10,
        };
        assert!(scan("a: [1, 2, 3]\n", &mut budget).is_ok());
        assert_eq!(budget.nodes, 100 - 6);
        let anchored = "a: &x {b: {c: 1}}\nd: [*x, *x, *x, *x]\n";
        let err = scan(anchored, &mut budget).unwrap_err();
        assert!(err.contains("non-empty mappings"), "{err}");
        assert_eq!(thousands(1_234_567), "1,234,567");
        assert_eq!(thousands(999), "999");
    }
}
