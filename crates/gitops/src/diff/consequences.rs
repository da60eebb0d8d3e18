//! What the differences between two renders do once Argo CD syncs them: which workloads roll and
//! how, which Jobs run again, what is pruned, which images change, which permissions each
//! ServiceAccount gains or loses, and the CRD-ordering hazard. Each consequence names its reason.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::engine::{Change, FieldChange, ObjectDiff, Renders};
use crate::adopt::live::{Object, ObjectKey};
use crate::adopt::rules;
use cilium_cmp_yaml::escape::Prose;

/// The kinds of consequence, each with its id in `--output json`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    /// A workload's pods are replaced.
    Rolls,
    /// A Job is replaced and runs again, or a new Job runs.
    RunsAgain,
    /// A CronJob's next run uses the new template; nothing running restarts.
    NextRun,
    /// Argo CD deletes an object the new render no longer has.
    Pruned,
    /// A ServiceAccount loses permissions.
    RbacRemoved,
    /// A ServiceAccount gains permissions.
    RbacAdded,
    /// A container image changes.
    Image,
    /// Agents would wait for CRDs the operator has not registered yet.
    CrdOrder,
    /// CRDs of other projects the cluster must serve before the sync (`prerequisites`).
    CrdPrerequisite,
    /// Configuration that running pods read only at start changes and nothing restarts them.
    ReadAtStart,
    /// A value the user sets that the new release renamed or removed.
    RenamedValue,
    /// A chart default that changes because the user's values do not set it.
    DefaultChanged,
    /// A default the new release changes only for new installations (`upgradeCompatibility`).
    UpgradeCompatibility,
    /// The release's upgrade notes.
    UpgradeNotes,
}

impl Kind {
    /// Its name in `--output json` (`kind`).
    pub fn id(self) -> &'static str {
        match self {
            Kind::Rolls => "rolls",
            Kind::RunsAgain => "runs-again",
            Kind::NextRun => "next-run",
            Kind::Pruned => "pruned",
            Kind::RbacRemoved => "rbac-removed",
            Kind::RbacAdded => "rbac-added",
            Kind::Image => "image",
            Kind::CrdOrder => "crd-order",
            Kind::CrdPrerequisite => "crd-prerequisite",
            Kind::ReadAtStart => "read-at-start",
            Kind::RenamedValue => "renamed-value",
            Kind::DefaultChanged => "default-changed",
            Kind::UpgradeCompatibility => "upgrade-compatibility",
            Kind::UpgradeNotes => "upgrade-notes",
        }
    }

    /// Whether it makes the change one "with consequences" (exit status 3): something restarts,
    /// is deleted, loses a permission, may hang, or a value the user wrote stops working.
    pub fn disruptive(self) -> bool {
        matches!(
            self,
            Kind::Rolls
                | Kind::RunsAgain
                | Kind::Pruned
                | Kind::RbacRemoved
                | Kind::CrdOrder
                | Kind::RenamedValue
        )
    }

    /// A heading for people.
    pub fn title(self) -> &'static str {
        match self {
            Kind::Rolls => "Pods that restart",
            Kind::RunsAgain => "Jobs that run",
            Kind::NextRun => "CronJobs changed for their next run",
            Kind::Pruned => "Objects Argo CD prunes",
            Kind::RbacRemoved => "Permissions removed",
            Kind::RbacAdded => "Permissions added",
            Kind::Image => "Images",
            Kind::CrdOrder => "Sync order",
            Kind::CrdPrerequisite => "CRDs the cluster must have",
            Kind::ReadAtStart => "Configuration read only at start",
            Kind::RenamedValue => "Values the new release renamed or removed",
            Kind::DefaultChanged => "Defaults that change under these values",
            Kind::UpgradeCompatibility => "What upgradeCompatibility would keep",
            Kind::UpgradeNotes => "Upgrade notes",
        }
    }
}

/// One consequence: what it concerns, what happens, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Consequence {
    /// Which kind it is: where the reports list it, and whether it is disruptive.
    pub kind: Kind,
    /// The object, ServiceAccount or value it concerns (a name from the renders or the values:
    /// every report escapes it whole).
    pub subject: String,
    /// What happens, in words of the program with the renders' and values' strings kept apart as
    /// names (`Prose`), which each report escapes for its medium.
    pub what: Prose,
    /// Why it happens, often with the address of the documentation that says so; escaped by each
    /// report as `what` is.
    pub why: Prose,
}

/// Consequences of the object differences alone (the upgrade's own are in `upgrade`).
pub fn of_objects(objects: &[ObjectDiff], r: &Renders) -> Vec<Consequence> {
    let mut out = Vec::new();
    for o in objects {
        match o.change {
            Change::Deleted => out.push(Consequence {
                kind: Kind::Pruned,
                subject: o.key.to_string(),
                what: "deleted by the sync".into(),
                why: "the new render no longer has it; Argo CD deletes it when pruning is on (automated sync with `prune: true`, or a manual sync with prune), otherwise it stays, shown out of sync (https://argo-cd.readthedocs.io/en/stable/user-guide/auto_sync/#automatic-pruning)".into(),
            }),
            Change::Created => {
                if o.key.kind == "Job" {
                    out.push(Consequence {
                        kind: Kind::RunsAgain,
                        subject: o.key.to_string(),
                        what: "a new Job: it runs once after the sync".into(),
                        why: "the new render has a Job the old one did not (Cilium's certgen Jobs carry a hash of their spec in their name, so any change to them is a new Job)".into(),
                    });
                }
                if let Some(new) = r.new.get(&o.key) {
                    out.extend(images(&o.key, None, Some(new)));
                }
            }
            Change::Changed => {
                out.extend(workload(o, r));
                out.extend(images(&o.key, r.old.get(&o.key), r.new.get(&o.key)));
            }
        }
    }
    out.extend(read_at_start(objects, r));
    out.extend(rbac(r));
    out.extend(crd_order(objects, r));
    out
}

/// Changed ConfigMaps whose readers take them only at start and are not rolled by the render
/// (the rule is `adopt::startup`'s, shared with adopt-check).
fn read_at_start(objects: &[ObjectDiff], r: &Renders) -> Vec<Consequence> {
    // Workloads whose pod template changes, for `rolls_anyway`: one set, not a scan per reader.
    let rolling: BTreeSet<&ObjectKey> = objects
        .iter()
        .filter(|w| w.fields.iter().any(|f| f.in_pod_template))
        .map(|w| &w.key)
        .collect();
    let mut out = Vec::new();
    for o in objects {
        if o.key.kind != "ConfigMap"
            || o.change != Change::Changed
            || o.fields.iter().all(|f| f.inert)
        {
            continue;
        }
        for reader in crate::adopt::startup::readers(&o.key, r.new.values()) {
            // A workload that rolls for another reason in this change (a new image) reads the
            // new configuration when it restarts.
            let rolls_anyway = rolling.contains(&reader.workload);
            if reader.takes_effect == crate::adopt::startup::TakesEffect::RolledByChecksum
                || rolls_anyway
            {
                continue;
            }
            out.push(Consequence {
                kind: Kind::ReadAtStart,
                subject: format!("{} ← {}", reader.workload, o.key),
                // The sentence is adopt::startup's, with the ConfigMap's name in it: a name whole.
                what: reader.consequence(&o.key.name).into(),
                why: changed_keys(o).words(
                    " and the workload's pod template does not: nothing restarts at the sync",
                ),
            });
        }
    }
    out
}

/// Keys of a ConfigMap's data named as what changed; the rest are counted.
const LISTED_KEYS: usize = 8;

/// What changed in a ConfigMap, by key: `the ConfigMap's keys a, b (and 3 more) change`.
fn changed_keys(o: &ObjectDiff) -> Prose {
    let keys: BTreeSet<String> = o
        .fields
        .iter()
        .filter(|f| !f.inert)
        .map(|f| match (f.path.key_at(0), f.path.key_at(1)) {
            (Some("data" | "binaryData"), Some(k)) => k.to_string(),
            _ => f.path.to_string(),
        })
        .collect();
    let mut why = Prose::new().words(if keys.len() == 1 {
        "the ConfigMap's key "
    } else {
        "the ConfigMap's keys "
    });
    for (i, k) in keys.iter().take(LISTED_KEYS).enumerate() {
        if i > 0 {
            why = why.words(", ");
        }
        why = why.name(k);
    }
    if keys.len() > LISTED_KEYS {
        why = why.words(&format!(" and {} more", keys.len() - LISTED_KEYS));
    }
    why.words(if keys.len() == 1 {
        " changes"
    } else {
        " change"
    })
}

/// Field paths listed as the reason a pod template changed; the rest are counted.
const LISTED_REASONS: usize = 4;

fn template_reason(fields: &[&FieldChange]) -> Prose {
    let listed: Vec<String> = fields
        .iter()
        .take(LISTED_REASONS)
        .map(|f| f.path.to_string())
        .collect();
    // A path's display quotes its keys through the text escaper already.
    let mut why = Prose::new().words("its pod template changes: ");
    for (i, path) in listed.iter().enumerate() {
        if i > 0 {
            why = why.words(", ");
        }
        why = why.shown(path);
    }
    if fields.len() > LISTED_REASONS {
        why.words(&format!(", {} more", fields.len() - LISTED_REASONS))
    } else {
        why
    }
}

/// A count or percentage of the render as the program's words (it forms no Markdown), anything
/// else the values put there as a name.
fn number_or_name(p: Prose, s: &str) -> Prose {
    if !s.is_empty() && s.chars().all(|c| c.is_ascii_digit() || c == '%') {
        p.words(s)
    } else {
        p.name(s)
    }
}

/// How a Deployment's pods are replaced, from its spec (Kubernetes' defaults where unset:
/// https://kubernetes.io/docs/concepts/workloads/controllers/deployment/#strategy, RollingUpdate
/// with maxUnavailable 25% and maxSurge 25%, one replica).
fn deployment_rollout(new: &Value) -> Prose {
    let replicas = shown_int_or_percent(text_at(new, "/spec/replicas"), "1");
    let strategy = text_at(new, "/spec/strategy/type")
        .and_then(Value::as_str)
        .unwrap_or("RollingUpdate");
    if strategy == "Recreate" {
        return if replicas == "1" {
            Prose::new().words("strategy Recreate: the pod stops before the new one starts")
        } else {
            number_or_name(Prose::new().words("strategy Recreate: all "), &replicas)
                .words(" pods stop before the new ones start")
        };
    }
    let unavailable = shown_int_or_percent(
        text_at(new, "/spec/strategy/rollingUpdate/maxUnavailable"),
        "25%",
    );
    let surge = shown_int_or_percent(text_at(new, "/spec/strategy/rollingUpdate/maxSurge"), "25%");
    let noun = if replicas == "1" {
        " replica"
    } else {
        " replicas"
    };
    let what = number_or_name(Prose::new().words("rolling update of "), &replicas);
    let what = number_or_name(what.words(noun).words(" (maxUnavailable "), &unavailable);
    number_or_name(what.words(", maxSurge "), &surge).words(")")
}

fn text_at<'a>(v: &'a Value, pointer: &str) -> Option<&'a Value> {
    v.pointer(pointer)
}

fn shown_int_or_percent(v: Option<&Value>, default: &str) -> String {
    match v {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) => match n.as_f64() {
            Some(f) if f.fract() == 0.0 => format!("{}", f as i64),
            _ => n.to_string(),
        },
        _ => default.to_string(),
    }
}

/// How a changed workload's pods are replaced, from its update strategy in the new render.
fn workload(o: &ObjectDiff, r: &Renders) -> Option<Consequence> {
    let template: Vec<&FieldChange> = o.fields.iter().filter(|f| f.in_pod_template).collect();
    if template.is_empty() {
        return None;
    }
    let new = &r.new.get(&o.key)?.value;
    let why = template_reason(&template);
    let (kind, what) = match o.key.kind.as_str() {
        // Defaults: https://kubernetes.io/docs/tasks/manage-daemon/update-daemon-set/
        // (RollingUpdate, maxUnavailable 1, maxSurge 0).
        "DaemonSet" => {
            let strategy = text_at(new, "/spec/updateStrategy/type")
                .and_then(Value::as_str)
                .unwrap_or("RollingUpdate");
            if strategy == "OnDelete" {
                (Kind::Rolls, "updateStrategy OnDelete: nothing restarts at the sync; each node's pod takes the new template only when it is deleted (by hand or a node drain)".into())
            } else {
                let unavailable = shown_int_or_percent(
                    text_at(new, "/spec/updateStrategy/rollingUpdate/maxUnavailable"),
                    "1",
                );
                let surge = shown_int_or_percent(
                    text_at(new, "/spec/updateStrategy/rollingUpdate/maxSurge"),
                    "0",
                );
                // The strategy's numbers are the render's (the values'): names.
                let what = Prose::new().words("rolling update on every node it runs on, ");
                let what = if unavailable == "1" {
                    what.words("one node at a time")
                } else {
                    number_or_name(what, &unavailable).words(" nodes at a time")
                };
                let what = number_or_name(what.words(" (maxUnavailable "), &unavailable).words("); ");
                let what = if surge == "0" {
                    what.words("each old pod stops before its replacement starts")
                } else {
                    number_or_name(what.words("maxSurge "), &surge)
                        .words(": a replacement starts before the old pod stops")
                };
                (Kind::Rolls, what)
            }
        }
        // Defaults: https://kubernetes.io/docs/concepts/workloads/controllers/deployment/#strategy
        // (RollingUpdate, maxUnavailable 25%, maxSurge 25%).
        "Deployment" => (Kind::Rolls, deployment_rollout(new)),
        // A Job's pod template cannot be updated:
        // https://kubernetes.io/docs/concepts/workloads/controllers/job/#job-termination-and-cleanup
        // ("the Job's pod template is immutable"); an apply of it is refused.
        "Job" => (
            Kind::RunsAgain,
            "a Job's pod template is immutable, so the apply is refused until the Job is deleted (Argo CD sync option Replace=true, or delete it); re-created, it runs again".into(),
        ),
        "CronJob" => (
            Kind::NextRun,
            "nothing running restarts; the next scheduled run uses the new template".into(),
        ),
        other => (Kind::Rolls, Prose::new().words(rules::restart_effect(other))),
    };
    Some(Consequence {
        kind,
        subject: o.key.to_string(),
        what,
        why,
    })
}

/// Container name to image, of every container and init container in an object's pod template.
fn container_images(o: &Object) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let Some(template) = rules::pod_template(&o.key.kind) else {
        return out;
    };
    let mut spec = &o.value;
    for k in template {
        spec = &spec[*k];
    }
    for list in ["initContainers", "containers"] {
        if let Some(Value::Array(items)) = spec.pointer(&format!("/spec/{list}")) {
            for c in items {
                if let (Some(name), Some(image)) = (
                    c.get("name").and_then(Value::as_str),
                    c.get("image").and_then(Value::as_str),
                ) {
                    out.insert(name.to_string(), image.to_string());
                }
            }
        }
    }
    out
}

/// One line per image change of an object, the containers that share it named together: the
/// agent's init containers all run the agent's image, and seven equal lines hide the one that
/// differs.
fn images(key: &ObjectKey, old: Option<&Object>, new: Option<&Object>) -> Vec<Consequence> {
    let before = old.map(container_images).unwrap_or_default();
    let after = new.map(container_images).unwrap_or_default();
    // (old image, new image) to the containers with that change, in container-name order.
    let mut changes: BTreeMap<(Option<&String>, &String), Vec<&String>> = BTreeMap::new();
    for (name, image) in &after {
        let was = before.get(name);
        if was == Some(image) {
            continue;
        }
        changes.entry((was, image)).or_default().push(name);
    }
    changes
        .into_iter()
        .map(|((was, image), names)| {
            let what = match was {
                Some(b) => Prose::of_name(b).words(" → ").name(image),
                None => Prose::new().words("new container: ").name(image),
            };
            let containers = names
                .iter()
                .map(|n| n.as_str())
                .collect::<Vec<_>>()
                .join(", ");
            let noun = if names.len() == 1 {
                "container"
            } else {
                "containers"
            };
            Consequence {
                kind: Kind::Image,
                subject: format!("{key}, {noun} {containers}"),
                what,
                why: "the image the pod template names".into(),
            }
        })
        .collect()
}

/// One permission: where it applies, and one verb on one resource (or non-resource URL).
type Permission = (String, String, String);

fn strings(v: Option<&Value>) -> Vec<String> {
    match v {
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect(),
        _ => Vec::new(),
    }
}

/// The permissions a list of RBAC rules grants, one entry per (scope, target, verb).
fn permissions(rules: &Value, scope: &str) -> BTreeSet<Permission> {
    let mut out = BTreeSet::new();
    let Some(rules) = rules.as_array() else {
        return out;
    };
    for rule in rules {
        let verbs = strings(rule.get("verbs"));
        let groups = strings(rule.get("apiGroups"));
        let resources = strings(rule.get("resources"));
        let names = strings(rule.get("resourceNames"));
        for url in strings(rule.get("nonResourceURLs")) {
            for verb in &verbs {
                out.insert(("cluster-wide".into(), url.clone(), verb.clone()));
            }
        }
        for g in &groups {
            for res in &resources {
                let target = if g.is_empty() {
                    res.clone()
                } else {
                    format!("{g}/{res}")
                };
                let targets: Vec<String> = if names.is_empty() {
                    vec![target]
                } else {
                    names.iter().map(|n| format!("{target} {n}")).collect()
                };
                for t in targets {
                    for verb in &verbs {
                        out.insert((scope.to_string(), t.clone(), verb.clone()));
                    }
                }
            }
        }
    }
    out
}

/// Every ServiceAccount's permissions in one render, through its bindings
/// (https://kubernetes.io/docs/reference/access-authn-authz/rbac/#rolebinding-and-clusterrolebinding:
/// a RoleBinding grants its role's rules in its own namespace, a ClusterRoleBinding cluster-wide).
fn service_account_permissions(
    objects: &BTreeMap<ObjectKey, Object>,
) -> BTreeMap<String, BTreeSet<Permission>> {
    // Roles by kind, namespace and name (any API group), the first in key order as a scan
    // would find it: one lookup per binding.
    let mut roles: BTreeMap<(&str, Option<&str>, &str), &Object> = BTreeMap::new();
    for (k, o) in objects {
        if k.kind == "ClusterRole" || k.kind == "Role" {
            roles
                .entry((k.kind.as_str(), k.namespace.as_deref(), k.name.as_str()))
                .or_insert(o);
        }
    }
    let find = |kind: &str, ns: Option<&str>, name: &str| {
        roles
            .get(&(kind, ns, name))
            .map(|o| o.value.get("rules").cloned().unwrap_or(Value::Null))
    };
    let mut out: BTreeMap<String, BTreeSet<Permission>> = BTreeMap::new();
    for (key, o) in objects {
        if key.kind != "ClusterRoleBinding" && key.kind != "RoleBinding" {
            continue;
        }
        let role_kind = o.value.pointer("/roleRef/kind").and_then(Value::as_str);
        let role_name = o
            .value
            .pointer("/roleRef/name")
            .and_then(Value::as_str)
            .unwrap_or("");
        let (rules, scope) = match (key.kind.as_str(), role_kind) {
            ("ClusterRoleBinding", _) => (
                find("ClusterRole", None, role_name),
                "cluster-wide".to_string(),
            ),
            (_, Some("ClusterRole")) => (
                find("ClusterRole", None, role_name),
                format!("in namespace {}", key.namespace.as_deref().unwrap_or("")),
            ),
            _ => (
                find("Role", key.namespace.as_deref(), role_name),
                format!("in namespace {}", key.namespace.as_deref().unwrap_or("")),
            ),
        };
        let Some(rules) = rules else { continue };
        let granted = permissions(&rules, &scope);
        if let Some(Value::Array(subjects)) = o.value.get("subjects") {
            for s in subjects {
                if s.get("kind").and_then(Value::as_str) != Some("ServiceAccount") {
                    continue;
                }
                let ns = s
                    .get("namespace")
                    .and_then(Value::as_str)
                    .or(key.namespace.as_deref())
                    .unwrap_or("");
                let name = s.get("name").and_then(Value::as_str).unwrap_or("");
                out.entry(format!("ServiceAccount {ns}/{name}"))
                    .or_default()
                    .extend(granted.iter().cloned());
            }
        }
    }
    out
}

/// Permissions grouped for reading: "get, list on cilium.io/ciliumnodes (cluster-wide)".
fn grouped(perms: &BTreeSet<&Permission>) -> Vec<String> {
    let mut by_target: BTreeMap<(&str, &str), Vec<&str>> = BTreeMap::new();
    for (scope, target, verb) in perms {
        by_target
            .entry((scope.as_str(), target.as_str()))
            .or_default()
            .push(verb.as_str());
    }
    by_target
        .into_iter()
        .map(|((scope, target), verbs)| format!("{} on {target} ({scope})", verbs.join(", ")))
        .collect()
}

fn rbac(r: &Renders) -> Vec<Consequence> {
    let before = service_account_permissions(&r.old);
    let after = service_account_permissions(&r.new);
    let empty = BTreeSet::new();
    let mut out = Vec::new();
    let subjects: BTreeSet<&String> = before.keys().chain(after.keys()).collect();
    for sa in subjects {
        let b = before.get(sa).unwrap_or(&empty);
        let a = after.get(sa).unwrap_or(&empty);
        let removed: BTreeSet<&Permission> = b.difference(a).collect();
        let added: BTreeSet<&Permission> = a.difference(b).collect();
        // A ServiceAccount the new render drops loses everything, but nothing runs as it any more.
        let still_used = r
            .new
            .keys()
            .any(|k| k.kind == "ServiceAccount" && sa.ends_with(&format!("/{}", k.name)));
        if !removed.is_empty() && still_used {
            out.push(Consequence {
                kind: Kind::RbacRemoved,
                subject: sa.clone(),
                what: Prose::new().names(&grouped(&removed), "; "),
                why: "no binding of the new render grants these any more; a Cilium component that still needs one fails its requests (an agent losing one is an outage)".into(),
            });
        }
        if !added.is_empty() {
            out.push(Consequence {
                kind: Kind::RbacAdded,
                subject: sa.clone(),
                what: Prose::new().names(&grouped(&added), "; "),
                why: "granted by the new render's bindings".into(),
            });
        }
    }
    out
}

/// cilium-config keys that make the agent wait for CRDs only the operator registers, and those
/// CRDs. From cilium/cilium#48534 (`agentCRDResourceNames` in pkg/k8s/synced/crd.go adds the
/// Envoy config CRDs when enable-envoy-config is on, and the operator registers only the CRDs its
/// own configuration asks for).
const CRD_GATES: &[(&str, &str)] = &[(
    "enable-envoy-config",
    "ciliumenvoyconfigs.cilium.io and ciliumclusterwideenvoyconfigs.cilium.io",
)];

fn rolls(objects: &[ObjectDiff], kind: &str, name: &str) -> bool {
    objects.iter().any(|o| {
        o.key.kind == kind
            && o.key.name == name
            && (o.change == Change::Created || o.fields.iter().any(|f| f.in_pod_template))
    })
}

/// The CRD-ordering hazard of cilium/cilium#48534: agents that start with a configuration asking
/// for CRDs only the operator registers block until it has, and an operator that does not
/// restart never does. Argo CD applies lower sync waves first and waits for them to be healthy
/// (https://argo-cd.readthedocs.io/en/stable/user-guide/sync-waves/), so putting the agent's
/// objects in a later wave lets the operator roll first.
fn crd_order(objects: &[ObjectDiff], r: &Renders) -> Vec<Consequence> {
    let config = |side: &BTreeMap<ObjectKey, Object>, key: &str| {
        side.iter()
            .find(|(k, _)| k.kind == "ConfigMap" && k.name == "cilium-config")
            .and_then(|(_, o)| o.value.pointer(&format!("/data/{key}")).cloned())
    };
    let operator_rolls = rolls(objects, "Deployment", "cilium-operator");
    let mut out = Vec::new();
    for (key, crds) in CRD_GATES {
        let on = |v: Option<Value>| v.and_then(|v| v.as_str().map(|s| s == "true")) == Some(true);
        if on(config(&r.new, key)) && !on(config(&r.old, key)) && !operator_rolls {
            out.push(Consequence {
                kind: Kind::CrdOrder,
                subject: "ConfigMap cilium-config".into(),
                // The key and the CRDs are this module's constants.
                what: Prose::new().words(&format!("{key} turns on: agents that start with it wait for {crds}, which only the operator registers, and the operator does not restart under these values, so restarted agents block at start and their nodes lose pod networking")),
                why: "cilium/cilium#48534. Set operator.rollOutPods: true so the operator restarts with the new configuration, and sync the agent after it: annotations: {argocd.argoproj.io/sync-wave: \"1\"} puts the agent's objects in a later Argo CD sync wave".into(),
            });
        }
    }
    out
}

/// In an upgrade that rolls both the agent and the operator in one sync: the new agents wait at
/// start until the CRDs carry the schema version they expect, which the new operator registers
/// (cilium/cilium#31416 made agents wait for the expected CRD version; cilium/cilium#48534 shows
/// agents that start before the operator blocking and failing their startup probes).
pub fn upgrade_order(objects: &[ObjectDiff]) -> Option<Consequence> {
    if !(rolls(objects, "DaemonSet", "cilium") && rolls(objects, "Deployment", "cilium-operator")) {
        return None;
    }
    Some(Consequence {
        kind: Kind::CrdOrder,
        subject: "DaemonSet cilium and Deployment cilium-operator".into(),
        what: "both roll in one sync: each new agent waits at start for the CRD versions the new operator registers, so agents restarted before the new operator runs block (their nodes lose pod networking meanwhile)".into(),
        why: "cilium/cilium#31416, cilium/cilium#48534. Order the sync: annotations: {argocd.argoproj.io/sync-wave: \"1\"} puts the agent's objects in a wave after the operator's, and Argo CD waits for the operator Deployment to be healthy before the next wave (https://argo-cd.readthedocs.io/en/stable/user-guide/sync-waves/)".into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_deployment_of_one_replica_is_named_in_the_singular() {
        let one = json!({"spec": {"replicas": 1.0}});
        assert_eq!(
            deployment_rollout(&one).as_str(),
            "rolling update of 1 replica (maxUnavailable 25%, maxSurge 25%)"
        );
        let two = json!({"spec": {"replicas": 2.0, "strategy": {"rollingUpdate": {"maxUnavailable": 1.0}}}});
        assert_eq!(
            deployment_rollout(&two).as_str(),
            "rolling update of 2 replicas (maxUnavailable 1, maxSurge 25%)"
        );
        let recreate = json!({"spec": {"strategy": {"type": "Recreate"}}});
        assert_eq!(
            deployment_rollout(&recreate).as_str(),
            "strategy Recreate: the pod stops before the new one starts"
        );
    }

    #[test]
    fn permissions_expand_per_verb_and_resource() {
        let rules = json!([{"apiGroups": ["", "cilium.io"], "resources": ["pods"], "verbs": ["get", "list"]},
            {"nonResourceURLs": ["/healthz"], "verbs": ["get"]}]);
        let p = permissions(&rules, "cluster-wide");
        assert_eq!(p.len(), 5);
        let all: BTreeSet<&Permission> = p.iter().collect();
        assert_eq!(
            grouped(&all),
            [
                "get on /healthz (cluster-wide)",
                "get, list on cilium.io/pods (cluster-wide)",
                "get, list on pods (cluster-wide)"
            ]
        );
    }
}
