//! Helm's merge rules, in one place: how values files and `--set` layers merge over each other
//! (maps deeply, everything else replaced, nulls kept to remove defaults later), how the user's
//! values coalesce over the chart's defaults (a null removes a default), and what one layer
//! changed of another. `values` builds the resolved tree with them and `setexpr` merges a whole
//! `--set-json` object with them; they import neither.

use serde_json::{Map, Value};

/// The coalescence of a user map over a default map, built.
pub(crate) fn merged(d: &Map<String, Value>, u: &Map<String, Value>) -> Value {
    let mut root = Value::Object(d.clone());
    coalesce(&mut root, Value::Object(u.clone()));
    root
}

pub(crate) fn has_nulls_in_maps(v: &Value) -> bool {
    match v {
        Value::Object(m) => m.values().any(|c| c.is_null() || has_nulls_in_maps(c)),
        _ => false,
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

/// Helm's coalescing of user values over chart defaults: a user null deletes the default.
pub(crate) fn coalesce(dst: &mut Value, user: Value) {
    let (Value::Object(d), Value::Object(u)) = (&mut *dst, user) else {
        unreachable!("coalesce is only called on two maps")
    };
    for (k, v) in u {
        if v.is_null() {
            d.remove(&k);
            continue;
        }
        match d.get_mut(&k) {
            Some(existing @ Value::Object(_)) if v.is_object() => coalesce(existing, v),
            _ => {
                d.insert(k, strip_nulls(v));
            }
        }
    }
}

/// Nulls inside a user map that has no default counterpart vanish, as Helm drops them.
pub(crate) fn strip_nulls(v: Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.into_iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k, strip_nulls(v)))
                .collect(),
        ),
        other => other,
    }
}
