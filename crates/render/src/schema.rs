//! The chart's values schema, which Helm checks before rendering: a value of the wrong type or
//! outside an enumeration makes Helm refuse the values, so it makes this renderer refuse them too,
//! naming the value, the file and line it came from, and what would be valid.
//!
//! The schema uses a small subset of JSON Schema (type, properties, items, anyOf, oneOf, enum),
//! and that subset is what is implemented. Only what the user wrote is checked: the chart's own
//! defaults always satisfy its schema.

use std::sync::OnceLock;

use serde_json::{Map, Value};

use crate::values::{Values, View};
use cilium_cmp_yaml::gofmt::go_json_float;

/// One violation, described for a person.
#[derive(Debug, Clone, PartialEq)]
pub struct Violation {
    /// The dotted path of the value the schema refuses.
    pub path: String,
    /// What the schema asks for there.
    pub message: String,
}

/// A chart's schema, read lazily: only the nodes along the paths the user wrote are split into
/// their members, and only the nodes a value is checked against are parsed whole.
pub struct LazySchema {
    root: LazyNode,
}

/// One schema node: its JSON text, its members and its parsed value, each made when first read.
struct LazyNode {
    text: &'static str,
    /// None when the node is not an object.
    members: OnceLock<Option<Vec<(String, LazyNode)>>>,
    whole: OnceLock<Value>,
}

type Members = Option<Vec<(String, LazyNode)>>;

impl LazyNode {
    fn new(text: &'static str) -> LazyNode {
        LazyNode {
            text,
            members: OnceLock::new(),
            whole: OnceLock::new(),
        }
    }

    fn value(&self) -> &Value {
        self.whole
            .get_or_init(|| crate::data_json::parse(self.text).unwrap_or_default())
    }

    fn is_object(&self) -> bool {
        self.text.starts_with('{')
    }

    fn members(&self) -> &Members {
        self.members.get_or_init(|| {
            // A node's "properties" is split in the same pass: it is what a walk reads next.
            let (members, expanded) = crate::data_json::members_expanding(self.text, "properties")?;
            let mut members: Vec<(String, LazyNode)> = members
                .into_iter()
                .map(|(k, v)| (k, LazyNode::new(v)))
                .collect();
            if let (Some(props), Some(node)) = (
                expanded,
                members.iter_mut().rev().find(|(k, _)| k == "properties"),
            ) {
                let props = props
                    .into_iter()
                    .map(|(k, v)| (k, LazyNode::new(v)))
                    .collect();
                let _ = node.1.members.set(Some(props));
            }
            Some(members)
        })
    }

    /// The member named `key`; the last one if the name repeats, as a JSON object read whole
    /// keeps it.
    fn member(&self, key: &str) -> Option<&LazyNode> {
        self.members()
            .as_ref()?
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, n)| n)
    }
}

impl LazySchema {
    /// Reads a schema document (the chart's values.schema.json).
    pub fn from_json(text: &'static str) -> LazySchema {
        LazySchema {
            root: LazyNode::new(text.trim()),
        }
    }
}

impl std::fmt::Debug for LazySchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "LazySchema({} bytes)", self.root.text.len())
    }
}

/// Checks every user-written value against a lazily read schema, reading only what it needs.
pub fn check_lazy(values: &Values, user: &Value, schema: &LazySchema) -> Vec<Violation> {
    let mut out = Vec::new();
    walk_lazy(values.view(), user, &schema.root, "", &mut out);
    out
}

/// Descends along what the user wrote while the schema describes an object by its properties;
/// anywhere else the whole resolved value is checked at once.
fn walk_lazy(
    resolved: View<'_>,
    user: &Value,
    schema: &LazyNode,
    path: &str,
    out: &mut Vec<Violation>,
) {
    if let (Value::Object(u), Some(props)) =
        (user, schema.member("properties").filter(|p| p.is_object()))
    {
        if resolved.is_object() {
            let types = schema.member("type").map(LazyNode::value);
            if !types_allow(types, &Value::Object(Map::new())) {
                out.push(violation(path, schema.value(), &resolved.to_value()));
                return;
            }
            for (k, uv) in u {
                let Some(rv) = resolved.child(k) else {
                    continue;
                };
                let child = join(path, k);
                if let Some(s) = props.member(k) {
                    walk_lazy(rv, uv, s, &child, out);
                }
            }
            return;
        }
    }
    if path.is_empty() {
        return;
    }
    let resolved = resolved.to_value();
    if !resolved.is_null() && !valid(&resolved, schema.value()) {
        out.push(violation(path, schema.value(), &resolved));
    }
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// Full validation of a value against a schema node.
fn valid(v: &Value, schema: &Value) -> bool {
    let Value::Object(s) = schema else {
        return true;
    };
    if !type_allows(schema, v) {
        return false;
    }
    if let Some(Value::Array(options)) = s.get("enum") {
        if !options.iter().any(|o| same(o, v)) {
            return false;
        }
    }
    if let Some(Value::Array(any)) = s.get("anyOf") {
        if !any.iter().any(|alt| valid(v, alt)) {
            return false;
        }
    }
    if let Some(Value::Array(one)) = s.get("oneOf") {
        if one.iter().filter(|alt| valid(v, alt)).count() != 1 {
            return false;
        }
    }
    if let (Value::Object(m), Some(Value::Object(props))) = (v, s.get("properties")) {
        if !props_valid(m, props) {
            return false;
        }
    }
    if let (Value::Array(items), Some(item_schema)) = (v, s.get("items")) {
        if !items.iter().all(|i| valid(i, item_schema)) {
            return false;
        }
    }
    true
}

fn props_valid(m: &Map<String, Value>, props: &Map<String, Value>) -> bool {
    m.iter()
        .all(|(k, v)| props.get(k).is_none_or(|s| valid(v, s)))
}

fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        _ => a == b,
    }
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.as_f64().is_some_and(|f| f.fract() == 0.0) => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn type_allows(schema: &Value, v: &Value) -> bool {
    types_allow(schema.get("type"), v)
}

/// Whether a schema's `type` keyword (absent: anything) allows the value.
fn types_allow(types: Option<&Value>, v: &Value) -> bool {
    let actual = type_name(v);
    let ok = |t: &str| t == actual || (t == "number" && actual == "integer");
    match types {
        None => true,
        Some(Value::String(t)) => ok(t),
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).any(ok),
        Some(_) => true,
    }
}

fn allowed_types(schema: &Value) -> Vec<String> {
    let mut out = Vec::new();
    match schema.get("type") {
        Some(Value::String(t)) => out.push(t.clone()),
        Some(Value::Array(ts)) => out.extend(ts.iter().filter_map(Value::as_str).map(String::from)),
        _ => {}
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(alts)) = schema.get(key) {
            for alt in alts {
                for t in allowed_types(alt) {
                    if !out.contains(&t) {
                        out.push(t);
                    }
                }
            }
        }
    }
    out
}

fn violation(path: &str, schema: &Value, v: &Value) -> Violation {
    let shown = {
        // A number as the user wrote it: values are read as Helm reads them (a whole number
        // becomes a float), and serde_json would show `1` as `1.0`.
        let s = match v {
            Value::Number(n) => n.as_f64().map_or_else(|| n.to_string(), go_json_float),
            _ => v.to_string(),
        };
        if s.chars().count() > 80 {
            format!("{}…", s.chars().take(80).collect::<String>())
        } else {
            s
        }
    };
    let message = if let Some(Value::Array(options)) = schema.get("enum") {
        let list: Vec<String> = options.iter().map(Value::to_string).collect();
        format!(
            "{shown} is not one of the accepted values: {}",
            list.join(", ")
        )
    } else if type_allows(schema, v) {
        format!(
            "{shown} does not match the shape the chart's schema accepts here ({})",
            describe(schema)
        )
    } else {
        format!(
            "{shown} is {} {}, but the chart's schema accepts {}",
            article(type_name(v)),
            type_name(v),
            describe(schema)
        )
    };
    Violation {
        path: path.to_string(),
        message,
    }
}

fn article(t: &str) -> &'static str {
    if t.starts_with(['a', 'i', 'o']) {
        "an"
    } else {
        "a"
    }
}

fn describe(schema: &Value) -> String {
    let types = allowed_types(schema);
    if types.is_empty() {
        "another form".into()
    } else {
        types.join(" or ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::values::Layer;
    use serde_json::json;

    /// The reference the lazy walk is held to: the same walk over the whole parsed schema.
    fn check(values: &Values, user: &Value, schema: &Value) -> Vec<Violation> {
        let mut out = Vec::new();
        walk(values.view(), user, schema, "", &mut out);
        out
    }

    fn walk(
        resolved: View<'_>,
        user: &Value,
        schema: &Value,
        path: &str,
        out: &mut Vec<Violation>,
    ) {
        // Descend along what the user wrote while the schema describes an object by its properties;
        // anywhere else the whole resolved value is checked at once.
        if let (Value::Object(u), Some(props)) =
            (user, schema.get("properties").and_then(Value::as_object))
        {
            if resolved.is_object() {
                // A map's type is all `type_allows` reads, so the map itself need not be built.
                if !type_allows(schema, &Value::Object(Map::new())) {
                    out.push(violation(path, schema, &resolved.to_value()));
                    return;
                }
                for (k, uv) in u {
                    let Some(rv) = resolved.child(k) else {
                        continue;
                    };
                    let child = join(path, k);
                    if let Some(s) = props.get(k) {
                        walk(rv, uv, s, &child, out);
                    }
                }
                return;
            }
        }
        if path.is_empty() {
            return;
        }
        let resolved = resolved.to_value();
        if !resolved.is_null() && !valid(&resolved, schema) {
            out.push(violation(path, schema, &resolved));
        }
    }

    fn run(defaults: Value, user_yaml: &str, schema: Value) -> Vec<Violation> {
        let layer = Layer::from_yaml("u.yaml", user_yaml).unwrap();
        let user = layer.value.clone();
        let values = Values::resolve(defaults, &[layer]);
        let whole = check(&values, &user, &schema);
        let text: &'static str = Box::leak(schema.to_string().into_boxed_str());
        let lazy = check_lazy(&values, &user, &LazySchema::from_json(text));
        assert_eq!(whole, lazy);
        whole
    }

    #[test]
    fn wrong_types_and_enums_are_named() {
        let schema = json!({"properties": {
            "a": {"type": "object", "properties": {"b": {"type": "boolean"}, "num": {"type": "integer"}}},
            "mode": {"type": "string", "enum": ["x", "w"]},
            "l": {"type": "array", "items": {"type": "string"}},
            "free": {"type": ["null", "object"]}
        }, "type": "object"});
        let defaults = json!({"a": {"b": true, "num": 1.0}, "mode": "x", "l": []});
        assert!(run(
            defaults.clone(),
            "a: {b: false, num: 3}\nmode: w\nl: [p]\nfree: {k: v}\n",
            schema.clone()
        )
        .is_empty());
        let v = run(
            defaults,
            "a: {b: maybe, num: 1.5}\nmode: z\nl: [1]\n",
            schema,
        );
        let paths: Vec<&str> = v.iter().map(|x| x.path.as_str()).collect();
        assert_eq!(paths, ["a.b", "a.num", "l", "mode"]);
        assert!(v[0].message.contains("boolean"), "{}", v[0].message);
        assert!(v[3].message.contains("\"x\", \"w\""), "{}", v[3].message);
    }

    #[test]
    fn a_whole_number_is_shown_as_written() {
        // Read as Helm reads values, `tag: 1` is the float 1; the message must still say `1`.
        let schema = json!({"properties": {"tag": {"type": "string"}}, "type": "object"});
        let v = run(json!({"tag": "v1"}), "tag: 1\n", schema);
        assert_eq!(v.len(), 1);
        assert!(
            v[0].message.starts_with("1 is an integer, but"),
            "{}",
            v[0].message
        );
    }

    #[test]
    fn the_lazy_schema_finds_what_the_whole_one_does_in_the_chart() {
        let cilium = crate::versions::parse("1.18.12").unwrap();
        for text in [
            "hubble:\n  enabled: maybe\n  relay: {enabled: 3, tls: {server: {enabled: x}}}\nipam: {mode: nope}\n",
            "image: {tag: 5}\noperator:\n  replicas: many\n  affinity: 3\nk8sServicePort: [1]\n",
            "debug: {enabled: yes, verbose: 7}\nbpf:\n  masquerade: x\nnodeSelector: {kubernetes.io/os: 1}\n",
            "hubble: 5\ncni: [1]\nextraConfig: {a: 1}\nunknownKey: {a: b}\n",
            "hubble: {tls: {auto: {method: cronJob}}}\nipam: {mode: kubernetes}\n",
        ] {
            let layer = Layer::from_yaml("u.yaml", text).unwrap();
            let user = layer.value.clone();
            let values = Values::resolve(crate::versions::defaults(cilium), &[layer]);
            let whole = check(&values, &user, crate::versions::schema(cilium));
            let lazy = check_lazy(&values, &user, crate::versions::schema_lazy(cilium));
            assert_eq!(whole, lazy, "{text}");
        }
    }

    #[test]
    fn any_of_accepts_either_branch() {
        let schema =
            json!({"properties": {"p": {"anyOf": [{"type": "integer"}, {"type": "string"}]}}});
        assert!(run(json!({}), "p: 5\n", schema.clone()).is_empty());
        assert!(run(json!({}), "p: x\n", schema.clone()).is_empty());
        assert_eq!(run(json!({}), "p: true\n", schema).len(), 1);
    }
}
