#!/usr/bin/env python3
"""Adds the cilium-cmp sidecar to your own values file of the argo-cd Helm chart.

    python3 sidecar/helm/add-sidecar.py my-values.yaml > my-values.new.yaml

Helm merges values files key by key but replaces lists whole, so `-f my-values.yaml -f
sidecar/helm/values.yaml` would drop your own repoServer.extraContainers and repoServer.volumes.
This prints your values with the entries of sidecar/helm/values.yaml appended to those two lists
instead; an entry of the same name (an older cilium-cmp sidecar) is replaced where it stands, so
running it again after an image update changes only that entry. Needs PyYAML; comments of your
file are not kept.
"""
import os
import sys

try:
    import yaml
except ImportError:
    sys.exit("add-sidecar.py needs PyYAML: pip install pyyaml")

HERE = os.path.dirname(os.path.abspath(__file__))
LISTS = ("extraContainers", "volumes")


def append_by_name(mine, ours):
    out = list(mine)
    for entry in ours:
        names = [x.get("name") if isinstance(x, dict) else None for x in out]
        if entry["name"] in names:
            out[names.index(entry["name"])] = entry
        else:
            out.append(entry)
    return out


def main(argv):
    if len(argv) != 2:
        sys.exit("usage: add-sidecar.py VALUES_FILE (prints the values with the sidecar added)")
    path = argv[1]
    try:
        with open(path) as f:
            mine = yaml.safe_load(f) or {}
    except (OSError, yaml.YAMLError) as e:
        sys.exit("%s: %s" % (path, e))
    with open(os.path.join(HERE, "values.yaml")) as f:
        ours = yaml.safe_load(f)
    if not isinstance(mine, dict):
        sys.exit("%s: a values file is a map, found %s" % (path, type(mine).__name__))
    repo = mine.setdefault("repoServer", {})
    if not isinstance(repo, dict):
        sys.exit("%s: repoServer must be a map" % path)
    for key in LISTS:
        have = repo.get(key) or []
        if not isinstance(have, list):
            sys.exit("%s: repoServer.%s must be a list, found %s" % (path, key, type(have).__name__))
        repo[key] = append_by_name(have, ours["repoServer"][key])
    yaml.safe_dump(mine, sys.stdout, sort_keys=False, default_flow_style=False)


if __name__ == "__main__":
    main(sys.argv)
