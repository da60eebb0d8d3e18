#!/usr/bin/env python3
"""Renders the conformance suite's small charts with real Helm, all in this one process.

usage: helm_conformance.py SHARED_TOOLS_DIR CHARTS_DIR OUT.json API_VERSIONS
Every folder of CHARTS_DIR holding a Chart.yaml is rendered with its own values.yaml, as
tests/it/engine_conformance.rs renders it with the engine (release "cilium" in "kube-system",
Kubernetes 1.35.0, API_VERSIONS (comma-separated) added to Helm's own).
OUT.json maps each folder name to {"templates": {NAME: TEXT}} or {"error": MESSAGE} (Helm
refused the chart). Anything other than Helm refusing a chart ends the run with a non-zero exit.
"""
import json, os, sys

sys.path.insert(0, sys.argv[1])
from helm_python import errors
from helm_ref import render

REFUSALS = (errors.HelmRenderError, errors.HelmValuesError)

root, out_path = sys.argv[2], sys.argv[3]
apis = [a for a in sys.argv[4].split(",") if a]
out = {}
for name in sorted(os.listdir(root)):
    chart = os.path.join(root, name)
    if not os.path.isfile(os.path.join(chart, "Chart.yaml")):
        continue
    try:
        # The chart's own values.yaml is the only values source; no user values.
        out[name] = {"templates": render(chart, {}, "1.35.0", apis, "cilium", "kube-system")}
    except REFUSALS as e:
        out[name] = {"error": str(e)}
with open(out_path + ".part", "w") as f:
    json.dump(out, f)
os.replace(out_path + ".part", out_path)
