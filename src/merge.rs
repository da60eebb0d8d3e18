//! Helm's merge rules, in one place: how values files and `--set` layers merge over each other
//! (maps deeply, everything else replaced, nulls kept to remove defaults later), how the user's
//! values coalesce over the chart's defaults (a null removes a default), and what one layer
//! changed of another. `values` builds the resolved tree with them and `setexpr` merges a whole
//! `--set-json` object with them; they import neither.

use serde_json::{Map, Value};

/// The coalescence of a user map over a default map, built, as Helm 4 coalesces values
/// (`pkg/chart/common/util/coalesce.go`: `coalesceValues` at the root, `coalesceTablesFullKey`
/// below it), checked against the Helm the parity tools run:
/// - a user's null removes the default it stands on (`null_removes`) and is kept otherwise;
/// - a user's map over a default map merges key by key; any other user value replaces the
///   default whole, nulls inside it included.
///
/// The chart's own null defaults stay in the tree as they are stored; Helm drops them, so
/// `Values::present` counts them as absent.
pub(crate) fn merged(d: &Map<String, Value>, u: &Map<String, Value>, top: bool) -> Value {
    let mut out = d.clone();
    for (k, uv) in u {
        match (uv, out.get_mut(k)) {
            (Value::Null, dv) if null_removes(dv.as_deref(), top) => {
                out.remove(k);
            }
            (Value::Object(um), Some(Value::Object(dm))) => {
                *dm = match merged(dm, um, false) {
                    Value::Object(m) => m,
                    _ => unreachable!("merged builds a map"),
                };
            }
            _ => {
                out.insert(k.clone(), uv.clone());
            }
        }
    }
    Value::Object(out)
}

/// Whether a user's null on a key removes it, given the chart's default there. At the root of
/// the values any default removes it (Helm's `coalesceValues` deletes every null key the chart
/// has); below it only a default that is not null (`coalesceTablesFullKey` keeps a null where
/// the chart's is null too, so `hasKey` sees it). A key the chart lacks keeps the null.
pub(crate) fn null_removes(default: Option<&Value>, top: bool) -> bool {
    match default {
        None => false,
        Some(Value::Null) => top,
        Some(_) => true,
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
