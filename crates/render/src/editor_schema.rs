//! A JSON Schema of a release's values for editors (yaml-language-server and others): the
//! chart's own types, with the keys limited to those the unknown-values check accepts
//! (`known_keys::known_tree`), so an editor underlines a typo while it is typed instead of the
//! render refusing it later.
//!
//! Draft-07, because yaml-language-server implements draft-07 and older, and the chart's own
//! schema is draft-07. Two places differ from the check on purpose, both harmless:
//! - an unknown key set to null is accepted by the check (it removes nothing) but underlined
//!   here: `additionalProperties: false` makes editors say "not allowed", which is the message
//!   that helps;
//! - types are the chart's, checked by the render on the merged values; here every typed value
//!   may also be null, because null is how a values file removes a default.

use serde_json::{json, Map, Value};

use crate::known_keys::{known_tree, Known};
use crate::versions::{self, CiliumVersion};

/// The schema of `version`'s values, or None for an unsupported release.
pub fn values_schema(version: CiliumVersion) -> Option<Value> {
    let tree = known_tree(version)?;
    let chart: Value = serde_json::from_str(versions::schema_text(version)?).ok()?;
    let mut root = match node(&tree, Some(&chart)) {
        Value::Object(m) => m,
        _ => Map::new(),
    };
    root.insert(
        "$schema".into(),
        json!("http://json-schema.org/draft-07/schema#"),
    );
    root.insert(
        "title".into(),
        json!(format!("Cilium {version} values (cilium-cmp)")),
    );
    root.insert(
        "description".into(),
        json!(format!(
            "The values cilium-cmp accepts for Cilium {version}: the chart's types, and only the keys the chart knows. Made by `cilium-cmp schema --cilium-version {version}`."
        )),
    );
    Some(Value::Object(root))
}

/// The schema of one value: the chart's schema for it (if any), with, where the check looks at
/// the keys, exactly the known ones.
fn node(known: &Known, chart: Option<&Value>) -> Value {
    let mut out = match chart {
        Some(Value::Object(m)) => m.clone(),
        _ => Map::new(),
    };
    if let Known::Map { keys, any_key } = known {
        let chart_props = out.remove("properties");
        let props: Map<String, Value> = keys
            .iter()
            .map(|(k, below)| {
                let chart_child = chart_props.as_ref().and_then(|p| p.get(k));
                (k.clone(), nullable(node(below, chart_child)))
            })
            .collect();
        out.insert("properties".into(), Value::Object(props));
        if !any_key {
            out.insert("additionalProperties".into(), Value::Bool(false));
        }
    }
    Value::Object(out)
}

/// The same schema, also allowing null (a values file's way to remove a default).
fn nullable(schema: Value) -> Value {
    let Value::Object(mut m) = schema else {
        return schema;
    };
    if m.contains_key("anyOf") || m.contains_key("oneOf") {
        return json!({"anyOf": [{"type": "null"}, Value::Object(m)]});
    }
    match m.get_mut("type") {
        Some(Value::String(t)) if t != "null" => {
            let t = t.clone();
            m.insert("type".into(), json!([t, "null"]));
        }
        Some(Value::Array(ts)) if !ts.iter().any(|t| t == "null") => ts.push(json!("null")),
        _ => {}
    }
    if let Some(Value::Array(options)) = m.get_mut("enum") {
        if !options.contains(&Value::Null) {
            options.push(Value::Null);
        }
    }
    Value::Object(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schema(v: &str) -> Value {
        values_schema(versions::parse(v).unwrap()).unwrap()
    }

    #[test]
    fn known_maps_refuse_other_keys_and_free_maps_take_any() {
        let s = schema("1.20.0");
        let cgroup = &s["properties"]["cgroup"];
        assert_eq!(cgroup["additionalProperties"], json!(false));
        assert!(cgroup["properties"]["autoMount"].is_object());
        assert!(cgroup["properties"].get("automount").is_none());
        // Free-form: labels and annotations take any key.
        let ann = &s["properties"]["podAnnotations"];
        assert!(ann.get("additionalProperties").is_none(), "{ann}");
        assert!(s["properties"]["global"].is_object());
        assert_eq!(s["additionalProperties"], json!(false));
    }

    #[test]
    fn types_come_from_the_chart_and_allow_null() {
        let s = schema("1.20.0");
        assert_eq!(s["properties"]["MTU"]["type"], json!(["integer", "null"]));
    }
}
