#!/usr/bin/env bash
# The Python environment the tests run their helpers in: a venv under DIR (default target/python)
# holding the packages below, made once and reused while this list and the Python stay the same.
# Prints the venv's python. Safe to run from several test processes at once (one makes it, the
# others wait for it).
#
#   PyYAML              Argo CD's cmp_emulator.py, the manifest checks, helm_ref.py
#   jsonschema, kubernetes-validate
#                       schemas of every shipped Kubernetes YAML (tests/it/manifests.rs)
#   helm-python-sdk     real Helm (v4 SDK), which renders the parity suite's references
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-$root/target/python}
requirements=('PyYAML>=6,<7' 'jsonschema>=4.20,<5' 'kubernetes-validate==1.37.0' 'helm-python-sdk==0.2.2')

python=$(command -v python3) || { echo "python3 is not installed" >&2; exit 1; }
# Copies, not symlinks, of the interpreter: the plugin tests run Argo CD's out-of-bounds symlink
# check over the working tree, target/ included.
venv_args=(--copies)
key=$(printf '%s\n' "${requirements[@]}" "${venv_args[@]}" "$("$python" --version 2>&1)" "$python" | sha256sum | cut -c1-16)
venv=$dir/venv-$key

if [ ! -e "$venv/.complete" ]; then
    mkdir -p "$dir"
    exec 9>"$dir/.lock"
    flock 9
    if [ ! -e "$venv/.complete" ]; then
        echo "setting up the tests' Python environment in $venv" >&2
        rm -rf "$venv"
        "$python" -m venv "${venv_args[@]}" "$venv" >&2
        "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "${requirements[@]}" >&2
        touch "$venv/.complete"
        # Environments made for another list or Python are of no more use.
        for old in "$dir"/venv-*; do
            if [ "$old" != "$venv" ]; then rm -rf "$old"; fi
        done
    fi
fi
echo "$venv/bin/python"
