#!/usr/bin/env python3
"""The tests' own differ of two Helm renders: what syncing NEW over OLD must do, computed without
cilium-cmp (tests/it/diff.rs holds `cilium-cmp diff` to it).

usage: render_diff.py PAIRS.json   (PAIRS: a list of [OLD.yaml, NEW.yaml]; prints a JSON list with
one object per pair, in order)

Both streams are read with PyYAML (YAML 1.1, as Kubernetes and Argo CD read them). Objects are
keyed "Kind namespace/name". What is stored is what the API server keeps: a map of strings
(ConfigMap data, labels, annotations, nodeSelector) keeps "", a typed field does not keep "",
null, an empty map or list, nor 0 / false where the Go field is a plain omitempty one (probe
counts, hostNetwork, hostPID, hostIPC, a volume mount's readOnly, stdin, tty: k8s.io/api
core/v1/types.go).

Output:
  created, deleted   keys only one side has
  config             {key: [old, new]} for each data key of ConfigMap cilium-config that differs
                     (null where a side has no such key)
  rolls              DaemonSets, Deployments and StatefulSets on both sides whose stored pod
                     template differs
  images             "KEY, container(s) A, B: OLD → NEW" (or "new container: NEW"), one line per
                     image change of the objects with a pod template, the containers sharing one
                     change together
  foreign            "Kind (apiVersion)" of each kind created that neither Kubernetes nor Cilium
                     serves: the core group, apps, batch, policy, autoscaling and the *.k8s.io
                     groups are Kubernetes' own (but gateway.networking.k8s.io, a CRD), *cilium.io
                     is Cilium's
"""
import json, sys

import yaml

STRING_MAPS = {"labels", "annotations", "nodeSelector"}
PLAIN_ZERO = {"initialDelaySeconds", "timeoutSeconds", "periodSeconds", "successThreshold",
              "failureThreshold", "hostNetwork", "hostPID", "hostIPC", "readOnly", "stdin", "tty"}


def objects(path):
    out = {}
    with open(path) as f:
        for doc in yaml.safe_load_all(f):
            if not isinstance(doc, dict) or "kind" not in doc:
                continue
            meta = doc.get("metadata") or {}
            ns = meta.get("namespace")
            key = "%s %s/%s" % (doc["kind"], ns, meta["name"]) if ns else "%s %s" % (doc["kind"], meta["name"])
            annotations = meta.get("annotations") or {}
            annotations.pop("cilium-cmp.io/content-hash", None)
            out[key] = doc
    return out


def stored(v, field=None, in_string_map=False):
    """The value as the API server stores it, or None where it stores nothing."""
    if isinstance(v, dict):
        m = {}
        for k, x in v.items():
            s = stored(x, k, k in STRING_MAPS)
            if in_string_map and x == "":
                s = ""
            if s is not None:
                m[k] = s
        return m or None
    if isinstance(v, list):
        items = [stored(x, field) for x in v]
        items = [x for x in items if x is not None]
        return items or None
    if v is None or v == "":
        return None
    if field in PLAIN_ZERO and v in (0, False) and not isinstance(v, str):
        return None
    return v


def template(kind, doc):
    spec = doc.get("spec") or {}
    if kind == "CronJob":
        spec = (spec.get("jobTemplate") or {}).get("spec") or {}
    return spec.get("template")


def images(doc):
    t = template(doc["kind"], doc)
    if not t:
        return {}
    spec = t.get("spec") or {}
    out = {}
    for c in (spec.get("initContainers") or []) + (spec.get("containers") or []):
        if c.get("name") and c.get("image"):
            out[c["name"]] = c["image"]
    return out


def compare(old_path, new_path):
    old, new = objects(old_path), objects(new_path)
    result = {
        "created": sorted(k for k in new if k not in old),
        "deleted": sorted(k for k in old if k not in new),
        "config": {}, "rolls": [], "images": [], "foreign": set(),
    }
    for key, n in new.items():
        o = old.get(key)
        if key.startswith("ConfigMap ") and key.endswith("/cilium-config") and o:
            a, b = o.get("data") or {}, n.get("data") or {}
            for k in sorted(set(a) | set(b)):
                if a.get(k) != b.get(k) or (k in a) != (k in b):
                    result["config"][k] = [a.get(k), b.get(k)]
        if o and n["kind"] in ("DaemonSet", "Deployment", "StatefulSet"):
            if stored(template(n["kind"], o)) != stored(template(n["kind"], n)):
                result["rolls"].append(key)
        before, after = (images(o) if o else {}), images(n)
        changes = {}
        for name, image in sorted(after.items()):
            if before.get(name) != image:
                changes.setdefault((before.get(name), image), []).append(name)
        for (was, image), names in changes.items():
            noun = "container" if len(names) == 1 else "containers"
            what = "%s → %s" % (was, image) if was else "new container: %s" % image
            result["images"].append("%s, %s %s: %s" % (key, noun, ", ".join(names), what))
    for key in result["created"]:
        api = new[key]["apiVersion"]
        group = api.split("/")[0] if "/" in api else ""
        kubernetes = group in ("", "apps", "batch", "policy", "autoscaling") or (
            group.endswith(".k8s.io") and group != "gateway.networking.k8s.io")
        if not kubernetes and not group.endswith("cilium.io"):
            result["foreign"].add("%s (%s)" % (new[key]["kind"], api))
    result["foreign"] = sorted(result["foreign"])
    result["rolls"].sort()
    result["images"].sort()
    return result


with open(sys.argv[1]) as f:
    pairs = json.load(f)
json.dump([compare(old, new) for old, new in pairs], sys.stdout, ensure_ascii=False)
