//! A release Helm 3 rendered: the nulls of the values whose render differs between Helm 3 and
//! Helm 4.
//!
//! cilium-cmp renders as Helm 4 does (Argo CD 3.5's Helm). Helm 3 (the helm CLI 3.x, Argo CD 3.4
//! and older) coalesces the values the same way except for the chart's own nulls: it keeps them
//! where Helm 4 drops them (`merge::coalesce_as_helm3` cites both sources; argoproj/argo-cd#29068).
//! A template that asks `hasKey` or prints such a value then renders differently: on Cilium,
//! `debug.verbose: ~` gives cilium-config `debug-verbose: ""` under Helm 3 and nothing under
//! Helm 4 (sholdee/drydock#157 saw the same keys on a live fleet). The first sync of the
//! cilium-cmp render then changes those objects although neither chart nor values changed.
//!
//! Each null responsible is found by rendering: the Helm 4 values with that null put back must
//! render what Helm 3 renders for it. The nulls are tested in halves (a group that renders as
//! Helm 4 holds none), so a render with one or two such nulls among ~130 takes some twenty
//! renders, not one per null.

use std::collections::BTreeMap;

use serde_json::Value;

use super::compare::{self, Path, Step};
use super::live::{self, ObjectKey};
use cilium_cmp_render::error::RenderError;
use cilium_cmp_render::render::{render_coalesced, Inputs};

/// One null of the values whose render differs, and what differs.
#[derive(Debug, Clone, PartialEq)]
pub struct NullEffect {
    /// The value's dotted path (`debug.verbose`), or several joined with `+` when only together
    /// they change the render.
    pub value: String,
    /// What differs, a few.
    pub differences: Vec<RenderDifference>,
}

/// One place where the Helm 3 and Helm 4 renders differ.
#[derive(Debug, Clone, PartialEq)]
pub struct RenderDifference {
    /// The object that renders differently.
    pub object: ObjectKey,
    /// None: the whole object is on one side only.
    pub path: Option<Path>,
    /// What Helm 3 renders there (the whole object when `path` is None); None: nothing.
    pub helm3: Option<Value>,
    /// What Helm 4 (cilium-cmp) renders there, likewise.
    pub helm4: Option<Value>,
}

impl std::fmt::Display for RenderDifference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let shown = |v: Option<&Value>| {
            v.map_or("nothing".to_string(), |v| {
                let mut whole = v.clone();
                super::zero::integers_as_integers(&mut whole);
                whole.to_string()
            })
        };
        match &self.path {
            None if self.helm3.is_some() => write!(f, "{}: only Helm 3 renders it", self.object),
            None => write!(f, "{}: only Helm 4 renders it", self.object),
            Some(p) => write!(
                f,
                "{}: {p}: Helm 3 renders {}, Helm 4 {}",
                self.object,
                shown(self.helm3.as_ref()),
                shown(self.helm4.as_ref())
            ),
        }
    }
}

/// A live release Helm 3 rendered, and the nulls whose render differs under Helm 4.
#[derive(Debug, Clone, PartialEq)]
pub struct Helm3Install {
    /// Why the live objects are taken for a Helm 3 render.
    pub evidence: String,
    /// The nulls responsible, never empty: the first sync changes what each of them rendered.
    pub nulls: Vec<NullEffect>,
}

/// For the dumps `dumps` of a release in `namespace`: when the live objects look like a Helm 3
/// render and the render `helm4` of `inputs` differs from Helm 3's, the nulls responsible.
pub fn assess(
    inputs: &Inputs,
    helm4: &str,
    dumps: &[(String, String)],
    namespace: &str,
) -> Result<Option<Helm3Install>, RenderError> {
    let nulls = differing_nulls(inputs, helm4)?;
    if nulls.is_empty() {
        return Ok(None);
    }
    let mut live_objects = Vec::new();
    for (shown, text) in dumps {
        if let Ok(objects) = live::objects_of(shown, text, namespace) {
            live_objects.extend(objects);
        }
    }
    let refs: Vec<&live::Object> = live_objects.iter().collect();
    Ok(evidence(&refs, &nulls).map(|evidence| Helm3Install { evidence, nulls }))
}

/// Differences listed per null.
const MAX_DIFFERENCES: usize = 5;

/// The nulls whose Helm 3 render differs from the Helm 4 render `helm4` of `inputs`; empty when
/// the two renders are the same.
pub fn differing_nulls(inputs: &Inputs, helm4: &str) -> Result<Vec<NullEffect>, RenderError> {
    let base = objects(helm4);
    let candidates = std::cell::RefCell::new(Vec::new());
    let helm3 = render_coalesced(inputs, &|chart, user| {
        let kept = cilium_cmp_render::merge::coalesce_as_helm3(chart, user);
        let dropped = cilium_cmp_render::merge::coalesce(chart, user);
        let mut found = Vec::new();
        nulls_only_in(&kept, &dropped, &mut Vec::new(), &mut found);
        *candidates.borrow_mut() = found;
        kept
    })?;
    if differences(&base, &objects(&helm3)).is_empty() {
        return Ok(Vec::new());
    }
    let candidates = candidates.into_inner();
    let mut out = Vec::new();
    let mut renders = 0usize;
    find(inputs, &base, &candidates, &mut out, &mut renders)?;
    Ok(out)
}

/// Splits `group` until each null that changes the render alone is found (`out`); a group that
/// changes it while neither half does is reported together.
fn find(
    inputs: &Inputs,
    base: &BTreeMap<ObjectKey, Value>,
    group: &[Vec<String>],
    out: &mut Vec<NullEffect>,
    renders: &mut usize,
) -> Result<(), RenderError> {
    if group.is_empty() {
        return Ok(());
    }
    let found = differences(base, &objects(&with_nulls(inputs, group)?));
    *renders += 1;
    if found.is_empty() {
        return Ok(());
    }
    if group.len() > 1 {
        let before = out.len();
        let (a, b) = group.split_at(group.len() / 2);
        find(inputs, base, a, out, renders)?;
        find(inputs, base, b, out, renders)?;
        if out.len() > before {
            return Ok(());
        }
    }
    out.push(NullEffect {
        value: group
            .iter()
            .map(|p| p.join("."))
            .collect::<Vec<_>>()
            .join(" + "),
        differences: found.into_iter().take(MAX_DIFFERENCES).collect(),
    });
    Ok(())
}

/// The render with Helm 4's values plus the chart's nulls at `paths`, as Helm 3 keeps them.
fn with_nulls(inputs: &Inputs, paths: &[Vec<String>]) -> Result<String, RenderError> {
    render_coalesced(inputs, &|chart, user| {
        let mut v = cilium_cmp_render::merge::coalesce(chart, user);
        for p in paths {
            put_null(&mut v, p);
        }
        v
    })
}

fn put_null(v: &mut Value, path: &[String]) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let mut at = v;
    for k in parents {
        match at.get_mut(k) {
            Some(next @ Value::Object(_)) => at = next,
            _ => return,
        }
    }
    if let Value::Object(m) = at {
        m.entry(last.clone()).or_insert(Value::Null);
    }
}

/// The paths of nulls in `kept` that `dropped` lacks.
fn nulls_only_in(kept: &Value, dropped: &Value, at: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    let Value::Object(k) = kept else {
        return;
    };
    for (key, v) in k {
        at.push(key.clone());
        match (v, dropped.get(key)) {
            (Value::Null, None) => out.push(at.clone()),
            (Value::Object(_), Some(d)) => nulls_only_in(v, d, at, out),
            (Value::Object(_), None) => nulls_only_in(v, &Value::Null, at, out),
            _ => {}
        }
        at.pop();
    }
}

/// A render's objects by identity, without cilium-cmp's own content hash (it differs whenever
/// anything does).
fn objects(text: &str) -> BTreeMap<ObjectKey, Value> {
    let Ok(parsed) = live::objects_of("the render", text, "") else {
        return BTreeMap::new();
    };
    parsed
        .into_iter()
        .map(|mut o| {
            if let Some(Value::Object(a)) = o.value.pointer_mut("/metadata/annotations") {
                a.remove(cilium_cmp_render::output::CONTENT_HASH_ANNOTATION);
            }
            (o.key, o.value)
        })
        .collect()
}

/// Each difference between two renders.
fn differences(
    helm4: &BTreeMap<ObjectKey, Value>,
    helm3: &BTreeMap<ObjectKey, Value>,
) -> Vec<RenderDifference> {
    let mut out = Vec::new();
    for (key, h3) in helm3 {
        let Some(h4) = helm4.get(key) else {
            out.push(RenderDifference {
                object: key.clone(),
                path: None,
                helm3: Some(h3.clone()),
                helm4: None,
            });
            continue;
        };
        let mut seen: Vec<(Path, Option<Value>, Option<Value>)> = Vec::new();
        for d in compare::differences(h3, h4) {
            seen.push((d.path, d.render, d.live));
        }
        for d in compare::differences(h4, h3) {
            if d.live.is_none() && !seen.iter().any(|(p, _, _)| *p == d.path) {
                seen.push((d.path, d.live, d.render));
            }
        }
        for (path, h3v, h4v) in seen {
            if matches!(path.0.last(), Some(Step::More(_))) {
                continue;
            }
            out.push(RenderDifference {
                object: key.clone(),
                path: Some(path),
                helm3: h3v,
                helm4: h4v,
            });
        }
    }
    for (key, h4) in helm4.iter().filter(|(k, _)| !helm3.contains_key(*k)) {
        out.push(RenderDifference {
            object: key.clone(),
            path: None,
            helm3: None,
            helm4: Some(h4.clone()),
        });
    }
    out
}

/// Why the live objects look like a Helm 3 render, if they do: Helm 3 writes with an `Update`
/// under the manager `helm` (Helm 4 applies server-side: helm/helm v4 `pkg/kube/client.go`), and
/// only a Helm 3 render holds the Helm 3 side of a null's difference.
pub fn evidence(live: &[&live::Object], effects: &[NullEffect]) -> Option<String> {
    let helm_update = live.iter().any(|o| {
        o.value
            .pointer("/metadata/managedFields")
            .and_then(Value::as_array)
            .is_some_and(|entries| {
                entries.iter().any(|e| {
                    e.get("manager").and_then(Value::as_str) == Some("helm")
                        && e.get("operation").and_then(Value::as_str) == Some("Update")
                })
            })
    });
    if helm_update {
        return Some(
            "managedFields show the manager helm writing with Update, as Helm 3 does (Helm 4 \
             applies server-side)"
                .into(),
        );
    }
    // What only Helm 3 renders, found live.
    for d in effects.iter().flat_map(|e| &e.differences) {
        let (Some(path), Some(h3)) = (&d.path, &d.helm3) else {
            continue;
        };
        let Some(o) = live.iter().find(|o| o.key == d.object) else {
            continue;
        };
        if value_at(&o.value, path).is_some_and(|v| {
            compare::differences(h3, v).is_empty() && compare::differences(v, h3).is_empty()
        }) {
            return Some(format!(
                "the live {} holds {path} = {h3}, which only Helm 3 renders",
                d.object
            ));
        }
    }
    None
}

/// The value at a map-keyed `path` of `v` (list steps are not followed).
fn value_at<'a>(v: &'a Value, path: &Path) -> Option<&'a Value> {
    let mut at = v;
    for s in &path.0 {
        match s {
            Step::Key(k) => at = at.get(k)?,
            _ => return None,
        }
    }
    Some(at)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn nulls_only_helm_3_keeps_are_found() {
        let chart = json!({"debug": {"enabled": false, "verbose": null}, "apiRateLimit": null,
            "image": {"override": null, "tag": "v1"}});
        let user = json!({"image": {"tag": "v2"}});
        let kept = cilium_cmp_render::merge::coalesce_as_helm3(&chart, &user);
        let dropped = cilium_cmp_render::merge::coalesce(&chart, &user);
        let mut found = Vec::new();
        nulls_only_in(&kept, &dropped, &mut Vec::new(), &mut found);
        found.sort();
        assert_eq!(
            found,
            [
                vec!["apiRateLimit".to_string()],
                vec!["debug".into(), "verbose".into()],
                vec!["image".into(), "override".into()],
            ]
        );
        let mut v = dropped.clone();
        put_null(&mut v, &["debug".into(), "verbose".into()]);
        assert_eq!(v["debug"], json!({"enabled": false, "verbose": null}));
    }
}
