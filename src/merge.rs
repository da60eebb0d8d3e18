//! Helm's merge rules, in one place: how values files and `--set` layers merge over each other
//! (maps deeply, everything else replaced, nulls kept to remove defaults later), how the user's
//! values coalesce over the chart's defaults (a null removes a default), and what one layer
//! changed of another. `values` and the engine's render coalesce with them and `setexpr` merges
//! a whole `--set-json` object with them; they import neither.

use serde_json::{Map, Value};

/// Helm 4's coalescing of the user's values over the chart's (`pkg/chart/common/util/coalesce.go`:
/// `coalesceValues` at the root, `coalesceTablesFullKey` below it, merge off), checked against
/// the Helm the parity tools run:
/// - a user's null removes the chart's value it stands on, and stays where the chart has none
///   or, below the root, a null one (so `hasKey` sees it);
/// - a user's map over a chart map merges key by key; any other user value replaces the chart's
///   whole;
/// - the chart's own nulls are dropped (`cleanNilValues`).
pub fn coalesce(chart: &Value, user: &Value) -> Value {
    let mut dest = match user {
        Value::Object(m) => m.clone(),
        _ => Map::new(),
    };
    if let Value::Object(chart) = chart {
        for (key, val) in chart {
            match dest.get_mut(key) {
                Some(Value::Null) => {
                    dest.remove(key);
                }
                Some(Value::Object(d)) => {
                    if let Value::Object(src) = val {
                        let mut src = src.clone();
                        clean_nil(&mut src);
                        coalesce_tables(d, &src);
                    }
                }
                Some(_) => {}
                None => {
                    if val.is_null() {
                        continue;
                    }
                    let mut v = val.clone();
                    if let Value::Object(m) = &mut v {
                        clean_nil(m);
                    }
                    dest.insert(key.clone(), v);
                }
            }
        }
    }
    Value::Object(dest)
}

fn clean_nil(m: &mut Map<String, Value>) {
    m.retain(|_, v| !v.is_null());
    for v in m.values_mut() {
        if let Value::Object(sub) = v {
            clean_nil(sub);
        }
    }
}

/// `coalesceTablesFullKey` with merge off, `src` already free of nulls.
fn coalesce_tables(dst: &mut Map<String, Value>, src: &Map<String, Value>) {
    for (key, val) in src {
        match dst.get_mut(key) {
            Some(Value::Null) => {
                dst.remove(key);
            }
            None => {
                dst.insert(key.clone(), val.clone());
            }
            Some(Value::Object(d)) => {
                if let Value::Object(s) = val {
                    coalesce_tables(d, s);
                }
            }
            Some(_) => {}
        }
    }
}

/// What `after` changed of `before`, as a layer to merge over it: the keys of maps whose values
/// differ (maps compared key by key), any other value whole.
pub(crate) fn changed(before: &Value, after: Value) -> Value {
    match (before, after) {
        (Value::Object(b), Value::Object(a)) => Value::Object(
            a.into_iter()
                .filter(|(k, v)| b.get(k) != Some(v))
                .map(|(k, v)| {
                    let v = match b.get(&k) {
                        Some(old @ Value::Object(_)) if v.is_object() => changed(old, v),
                        _ => v,
                    };
                    (k, v)
                })
                .collect(),
        ),
        (_, after) => after,
    }
}

/// Merges one user layer over the previous ones: maps merge deeply, the rest replaces; nulls
/// are kept so they can remove chart defaults later.
/// Helm's `MergeMaps`, as `--set-json` with a whole object uses it.
pub(crate) fn merge_into(dst: &mut Value, src: Value) {
    merge_user(dst, &src)
}

pub(crate) fn merge_user(dst: &mut Value, src: &Value) {
    match (dst, src) {
        (Value::Object(d), Value::Object(s)) => {
            for (k, v) in s {
                match d.get_mut(k) {
                    Some(existing @ Value::Object(_)) if v.is_object() => merge_user(existing, v),
                    _ => {
                        d.insert(k.clone(), v.clone());
                    }
                }
            }
        }
        (dst, src) => *dst = src.clone(),
    }
}
