#!/usr/bin/env python3
"""Renders the parity suite's missing references with real Helm, all in this one process.

usage: helm_render.py SHARED_TOOLS_DIR JOBS.json
JOBS.json is a list of {"chart": ARCHIVE, "scenario": SCENARIO.yaml, "out": PATH}. Each job writes
PATH.yaml (the stream, as ../shared/tools/gen_reference.py writes it) or PATH.error (Helm refused the
values). Files appear whole (written aside, then renamed), so an interrupted run leaves no half file.
Anything other than Helm refusing the values ends the run with a non-zero exit.
"""
import json, os, sys, time

sys.path.insert(0, sys.argv[1])
import yaml
from helm_python import errors
from helm_ref import render, stream

REFUSALS = (errors.HelmRenderError, errors.HelmValuesError)


def write(path, text):
    with open(path + ".part", "w") as f:
        f.write(text)
    os.replace(path + ".part", path)


jobs = json.load(open(sys.argv[2]))
start = time.time()
for i, job in enumerate(jobs, 1):
    with open(job["scenario"]) as f:
        s = yaml.safe_load(f)
    args = (job["chart"], s["values"], s.get("kubeVersion", "1.35.0"), s.get("apiVersions", []),
            "cilium", s.get("namespace", "kube-system"))
    try:
        write(job["out"] + ".yaml", stream(render(*args)))
    except REFUSALS as e:
        write(job["out"] + ".error", str(e) + "\n")
    if i % 50 == 0 or i == len(jobs):
        print("  helm: %d/%d references rendered (%.0f s)" % (i, len(jobs), time.time() - start),
              file=sys.stderr, flush=True)
