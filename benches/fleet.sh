#!/usr/bin/env bash
# The repository-wide checks on a generated fleet: N application folders (default 500) sharing
# one values file, each with its own cluster name and id. Times, with the release binary:
#   1. `lock` of every folder (sequential, one process each: the setup),
#   2. `lock --check` with no folder (every folder, in parallel),
#   3. `diff --repo-root . --base HEAD` when nothing changed (no folder is rendered),
#   4. the same after one folder's values change (one folder rendered at both revisions),
#   5. the same after the shared values file changes (every folder rendered at both revisions).
# Usage: benches/fleet.sh [N]   (needs git, and the chart archives in $CILIUM_CMP_CHART_DIR)
set -euo pipefail
n=${1:-500}
bin=${CILIUM_CMP_BIN:-$(cd "$(dirname "$0")/.." && pwd)/target/release/cilium-cmp}
export CILIUM_CMP_CHART_DIR=${CILIUM_CMP_CHART_DIR:-$(cd "$(dirname "$0")/../.." && pwd)/shared/charts}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
git init -q
mkdir common
cat > common/values.yaml <<'V'
ipam:
  mode: kubernetes
kubeProxyReplacement: true
k8sServiceHost: localhost
k8sServicePort: 7445
cni:
  iptablesRemoveAWSRules: false
hubble:
  relay:
    enabled: true
  tls:
    auto:
      method: cronJob
operator:
  replicas: 1
V
for i in $(seq 1 "$n"); do
  d=clusters/c$i/cilium
  mkdir -p "$d"
  printf 'ciliumVersion: "1.20.0"\nvaluesFiles:\n  - ../../../common/values.yaml\n  - values.yaml\n' > "$d/cilium-cmp.yaml"
  printf 'cluster:\n  name: c%d\n  id: %d\n' "$i" $(( (i % 255) + 1 )) > "$d/values.yaml"
done
flags=(--namespace kube-system --kube-version 1.35.0)
t() { /usr/bin/time -f "%e s wall, %U s user + %S s sys, %M KB peak RSS  ${*:2:5}" "$@" > /dev/null 2> "$work/time.txt" || true; tail -1 "$work/time.txt"; }
echo "fleet of $n folders, $(nproc) cores, load average $(cut -d" " -f1-3 /proc/loadavg)"
s=$(date +%s.%N)
for i in $(seq 1 "$n"); do "$bin" lock "clusters/c$i/cilium" "${flags[@]}" 2>/dev/null; done
printf '%8.2f s  lock, each folder in its own process (setup)\n' "$(echo "$(date +%s.%N) - $s" | bc)"
git add -A && git -c user.email=b@example.com -c user.name=bench commit -qm fleet
t "$bin" lock --check "${flags[@]}"
t "$bin" diff --base HEAD --output markdown
sed -i 's/name: c1$/name: c1-renamed/' clusters/c1/cilium/values.yaml
t "$bin" diff --base HEAD --output markdown
git checkout -q -- .
printf 'debug:\n  enabled: true\n' >> common/values.yaml
t "$bin" diff --base HEAD --output markdown
