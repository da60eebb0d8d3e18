"""Real Helm against a candidate render, for tests that make their own values: merge values as
Helm merges `-f` files and --set layers, render with Helm, compare with the referee parity.py.
The caller puts ../shared/tools on sys.path first (helm_ref lives there)."""
import subprocess
import sys

from helm_ref import render, stream


def merge(a, b):
    """Helm's MergeValues: maps merge key by key, anything else replaces."""
    out = dict(a)
    for k, v in b.items():
        out[k] = merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def differs(tools, chart, values, reference, candidate):
    """Renders `values` with Helm into `reference` and compares `candidate` with it: None when
    identical, else the end of parity.py's report."""
    with open(reference, "w") as f:
        f.write(stream(render(chart, values, "1.35.0", [], "cilium", "kube-system")))
    r = subprocess.run([sys.executable, tools + "/parity.py", reference, candidate],
                       capture_output=True, text=True)
    return None if r.returncode == 0 else r.stdout[-3000:]
