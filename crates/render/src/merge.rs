//! Helm's merge rules, in one place: how values files and `--set` layers merge over each other
//! (maps deeply, everything else replaced, nulls kept to remove defaults later), how the user's
//! values coalesce over the chart's defaults (a null removes a default), and what one layer
//! changed of another. `values` and the engine's render coalesce with them and `setexpr` merges
//! a whole `--set-json` object with them; they import neither.

use serde_json::{Map, Value};

/// Helm 4's coalescing of the user's values over the chart's (`pkg/chart/common/util/coalesce.go`:
/// `coalesceValues` at the root, `coalesceTablesFullKey` below it, merge off), checked against
/// the Helm the parity tools run:
/// - a user's null removes the chart's value it stands on (`null_removes`), and stays where the
///   chart has none or, below the root, a null one (so `hasKey` sees it);
/// - a user's map over a chart map merges key by key; any other user value replaces the chart's
///   whole;
/// - the chart's own nulls are dropped (`cleanNilValues`).
///
/// The one implementation: the engine coalesces a render's values with it, and `values` builds
/// with it the nodes its lazy lookups must return whole.
pub fn coalesce(chart: &Value, user: &Value) -> Value {
    coalesce_as::<Value>(chart, user)
}

/// `coalesce` into any `Tree`: the engine builds its `.Values` with it.
pub fn coalesce_as<T: Tree>(chart: &Value, user: &Value) -> T {
    let empty = Map::new();
    let user = user.as_object().unwrap_or(&empty);
    match chart {
        Value::Object(chart) => coalesce_into(chart, user, true, ChartNulls::Dropped),
        _ => T::whole(&Value::Object(user.clone())),
    }
}

/// Helm 3's coalescing, for telling what a release Helm 3 rendered holds: the same rules except
/// that the chart's own nulls stay in the values (helm/helm v3.21.4 `pkg/chartutil/coalesce.go`
/// copies a default the user lacks as it is; Helm 4 skips it and cleans nested ones,
/// `cleanNilValues` in v4.2.3 `pkg/chart/common/util/coalesce.go`), so `hasKey` finds them and
/// a template prints them as empty (argoproj/argo-cd#29068).
pub fn coalesce_as_helm3(chart: &Value, user: &Value) -> Value {
    let empty = Map::new();
    let user = user.as_object().unwrap_or(&empty);
    match chart {
        Value::Object(chart) => coalesce_maps(chart, user, true, ChartNulls::Kept),
        _ => Value::Object(user.clone()),
    }
}

/// What becomes of the chart's own null defaults: Helm drops them (`Dropped`); `values` keeps
/// them (`Kept`) in the nodes it builds, as the default subtrees it returns unbuilt hold them,
/// and counts them absent where `hasKey` is asked (`Values::present`).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum ChartNulls {
    Dropped,
    Kept,
}

/// A tree that coalescing can build: the JSON of the values (`values`, Helm 3's coalescing for
/// adopt-check) or the engine's own values, which a render coalesces into directly so that the
/// chart's defaults are not first copied into JSON and then converted again (a third of the cost
/// of a render's values; see ARCHITECTURE.md). One rule, `coalesce_into`, builds both.
pub trait Tree: Sized {
    /// A value taken whole: the user's, or one of the chart's kept as it is.
    fn whole(v: &Value) -> Self;
    /// A map made of the entries coalescing chose, in key order.
    fn entries(m: Vec<(String, Self)>) -> Self;
}

impl Tree for Value {
    fn whole(v: &Value) -> Self {
        v.clone()
    }
    fn entries(m: Vec<(String, Self)>) -> Self {
        Value::Object(m.into_iter().collect())
    }
}

/// `coalesce` of a user map over a chart map, at the root of the values (`top`) or below it.
pub(crate) fn coalesce_maps(
    chart: &Map<String, Value>,
    user: &Map<String, Value>,
    top: bool,
    nulls: ChartNulls,
) -> Value {
    coalesce_into(chart, user, top, nulls)
}

/// `coalesce_maps` into any `Tree`; both maps are walked once, in key order (serde_json's map is
/// a `BTreeMap` here: the workspace never turns on its `preserve_order` feature).
pub(crate) fn coalesce_into<T: Tree>(
    chart: &Map<String, Value>,
    user: &Map<String, Value>,
    top: bool,
    nulls: ChartNulls,
) -> T {
    let mut out = Vec::with_capacity(chart.len().max(user.len()));
    let mut c = chart.iter().peekable();
    let mut u = user.iter().peekable();
    loop {
        let order = match (c.peek(), u.peek()) {
            (None, None) => break,
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (Some((ck, _)), Some((uk, _))) => ck.cmp(uk),
        };
        match order {
            // Only the chart has the key.
            std::cmp::Ordering::Less => {
                let (key, val) = c.next().expect("peeked");
                match nulls {
                    ChartNulls::Dropped if val.is_null() => {}
                    ChartNulls::Dropped => out.push((key.clone(), without_nulls(val))),
                    ChartNulls::Kept => out.push((key.clone(), T::whole(val))),
                }
            }
            // Only the user has it: kept whole, a null too (so `hasKey` sees it).
            std::cmp::Ordering::Greater => {
                let (key, val) = u.next().expect("peeked");
                out.push((key.clone(), T::whole(val)));
            }
            std::cmp::Ordering::Equal => {
                let (key, cv) = c.next().expect("peeked");
                let (_, uv) = u.next().expect("peeked");
                match (uv, cv) {
                    (Value::Null, _) if null_removes(Some(cv), top) => {}
                    (Value::Object(um), Value::Object(cm)) => {
                        out.push((key.clone(), coalesce_into(cm, um, false, nulls)))
                    }
                    _ => out.push((key.clone(), T::whole(uv))),
                }
            }
        }
    }
    T::entries(out)
}

/// A chart value without its null entries (`cleanNilValues`).
fn without_nulls<T: Tree>(v: &Value) -> T {
    match v {
        Value::Object(m) => T::entries(
            m.iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k.clone(), without_nulls(v)))
                .collect(),
        ),
        other => T::whole(other),
    }
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
