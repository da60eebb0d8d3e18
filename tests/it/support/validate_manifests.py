"""Validates the manifests the project ships (tests/it/manifests.rs): Kubernetes objects against
their schemas (kubernetes-validate), Argo CD Applications against the Application CRD's schema
(application_schema.py) and the plugin settings they need. Arguments: ROOT CRD PLUGIN KUBE."""
import os, sys
try:
    import yaml, jsonschema, kubernetes_validate
    import application_schema
except ImportError as e:
    sys.exit("missing Python package (%s): pip install pyyaml jsonschema kubernetes-validate" % e)

root, crd_path, plugin_name, kube = sys.argv[1:5]
errors = []
checked = []

def fail(where, msg):
    errors.append("%s: %s" % (where, msg))

app_validator = application_schema.validator(crd_path)

def zero_values(v, path):
    # Argo CD drops zero values (false, "", 0, empty lists and maps) when it stores an
    # Application, so an App-of-Apps parent would diff them forever.
    if v is False or v == "" or v == [] or v == {} or v is None or (type(v) in (int, float) and v == 0):
        yield path
    elif isinstance(v, dict):
        for k, x in v.items():
            yield from zero_values(x, path + "." + k)
    elif isinstance(v, list):
        for i, x in enumerate(v):
            yield from zero_values(x, "%s[%d]" % (path, i))

def check_application(where, app):
    for e in app_validator.iter_errors(app):
        fail(where, "Application schema: %s at %s" % (e.message, "/".join(map(str, e.absolute_path))))
    for p in zero_values(app.get("spec"), "spec"):
        fail(where, "%s is a zero value Argo CD normalises away" % p)
    spec = app.get("spec", {})
    auto = spec.get("syncPolicy", {}).get("automated", {})
    if auto.get("prune") is not True or auto.get("selfHeal") is not True:
        fail(where, "syncPolicy.automated needs prune: true and selfHeal: true")
    opts = spec.get("syncPolicy", {}).get("syncOptions", [])
    for o in ("ServerSideApply=true", "PruneLast=true"):
        if o not in opts:
            fail(where, "syncOptions lacks " + o)
    if not any(d.get("group") == "cilium.io" and d.get("kind") == "CiliumIdentity" for d in spec.get("ignoreDifferences", [])):
        fail(where, "ignoreDifferences lacks kind CiliumIdentity of group cilium.io")
    # The source hydrator's Application names the plugin in its dry source (examples/hydrator).
    source = spec.get("source") or spec.get("sourceHydrator", {}).get("drySource", {})
    if source.get("plugin", {}).get("name") != plugin_name:
        fail(where, "source.plugin.name (or sourceHydrator.drySource.plugin.name) is not %s" % plugin_name)
    if not spec.get("destination", {}).get("namespace"):
        fail(where, "destination.namespace is the release namespace and must be set")
    if app.get("metadata", {}).get("finalizers"):
        fail(where, "a resources finalizer would delete the CNI with the Application")

def check_application_set(where, appset):
    # What the git directory generator makes of one folder ({{.path.path}}, {{.path.basename}}
    # in goTemplate mode) must be a shipped-quality Application; and without
    # preserveResourcesOnDeletion the controller puts a resources finalizer on each one.
    import json
    spec = appset.get("spec", {})
    if not spec.get("syncPolicy", {}).get("preserveResourcesOnDeletion"):
        fail(where, "spec.syncPolicy.preserveResourcesOnDeletion must be true, or the generated Applications carry a resources finalizer")
    text = json.dumps(spec.get("template", {})).replace("{{.path.path}}", "clusters/example").replace("{{.path.basename}}", "example")
    if "{{" in text:
        fail(where, "template uses parameters other than .path.path and .path.basename")
    template = json.loads(text)
    app = {"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
           "metadata": dict(template.get("metadata", {}), namespace=appset.get("metadata", {}).get("namespace", "argocd")),
           "spec": template.get("spec", {})}
    check_application(where, app)

def k8s(where, obj):
    try:
        kubernetes_validate.validate(obj, kube, strict=True)
    except Exception as e:
        fail(where, "%s %s: %s" % (obj.get("kind"), obj.get("metadata", {}).get("name"), str(e).splitlines()[0]))

def merge_by_name(base, patch):
    out = {x["name"]: x for x in base}
    order = [x["name"] for x in base]
    for x in patch:
        if x["name"] in out:
            out[x["name"]] = merge(out[x["name"]], x)
        else:
            out[x["name"]] = x
            order.append(x["name"])
    return [out[n] for n in order]

def merge(base, patch):
    # Strategic merge as kustomize applies it to the fields used here: maps merge, lists of
    # named items (containers, volumes, volumeMounts) merge by name, other lists replace.
    if isinstance(base, dict) and isinstance(patch, dict):
        out = dict(base)
        for k, v in patch.items():
            out[k] = merge(base[k], v) if k in base else v
        return out
    if isinstance(base, list) and isinstance(patch, list) and all(isinstance(x, dict) and "name" in x for x in base + patch):
        return merge_by_name(base, patch)
    return patch

def stock_repo_server():
    labels = {"app.kubernetes.io/name": "argocd-repo-server"}
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "argocd-repo-server", "namespace": "argocd"},
            "spec": {"selector": {"matchLabels": labels}, "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "argocd-repo-server", "image": "quay.io/argoproj/argocd:v3.5.6"}],
                         "volumes": [{"name": "var-files", "emptyDir": {}}, {"name": "plugins", "emptyDir": {}}]}}}}

def mounts_resolve(where, pod_spec):
    names = {v["name"] for v in pod_spec.get("volumes", [])}
    for c in pod_spec.get("containers", []):
        for m in c.get("volumeMounts", []):
            if m["name"] not in names:
                fail(where, "container %s mounts the undefined volume %s" % (c["name"], m["name"]))

def helm_values(where, values):
    rs = values["repoServer"]
    # The argo-cd chart provides var-files and plugins itself.
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "argocd-repo-server", "namespace": "argocd"},
           "spec": {"containers": [{"name": "argocd-repo-server", "image": "quay.io/argoproj/argocd:v3.5.6"}] + rs["extraContainers"],
                    "volumes": [{"name": "var-files", "emptyDir": {}}, {"name": "plugins", "emptyDir": {}}] + rs.get("volumes", [])}}
    k8s(where, pod)
    mounts_resolve(where, pod["spec"])

KUSTOMIZATION_KEYS = {"apiVersion", "kind", "namespace", "resources", "patches", "images", "configMapGenerator", "labels", "components"}

def kustomization(where, k, folder):
    # A Kustomization is kustomize.config.k8s.io/v1beta1, a Component v1alpha1
    # (https://kubectl.docs.kubernetes.io/guides/config_management/components/).
    want = {"Kustomization": "kustomize.config.k8s.io/v1beta1", "Component": "kustomize.config.k8s.io/v1alpha1"}[k["kind"]]
    if k.get("apiVersion") != want:
        fail(where, "apiVersion must be " + want)
    for c in k.get("components", []):
        if not os.path.isfile(os.path.join(folder, c, "kustomization.yaml")):
            fail(where, "component %s has no kustomization.yaml" % c)
    for key in k:
        if key not in KUSTOMIZATION_KEYS:
            fail(where, "unexpected key " + key)
    for p in k.get("patches", []):
        if not os.path.isfile(os.path.join(folder, p.get("path", ""))):
            fail(where, "patch %s does not exist" % p.get("path"))
    for r in k.get("resources", []):
        if not isinstance(r, str) or not (r.startswith("https://") or os.path.exists(os.path.join(folder, r))):
            fail(where, "resource %r is neither a URL nor a path here" % r)

for dirpath, dirnames, filenames in os.walk(root):
    # Test fixtures are not shipped (and may be invalid on purpose).
    dirnames[:] = sorted(d for d in dirnames if d not in (".git", "target", "tests", "benches"))
    for name in sorted(filenames):
        if not name.endswith((".yaml", ".yml")):
            continue
        path = os.path.join(dirpath, name)
        rel = os.path.relpath(path, root)
        try:
            docs = [d for d in yaml.safe_load_all(open(path)) if d is not None]
        except yaml.YAMLError as e:
            fail(rel, "not YAML: %s" % e)
            continue
        if rel == os.path.join("sidecar", "helm", "values.yaml"):
            helm_values(rel, docs[0]); checked.append(rel); continue
        for doc in docs:
            if not (isinstance(doc, dict) and "kind" in doc and "apiVersion" in doc):
                continue  # values files and settings: not Kubernetes objects
            kind = doc["kind"]
            if kind == "ConfigManagementPlugin":
                continue  # not a Kubernetes object; tests/it/plugin.rs checks it
            if kind == "Application" and doc["apiVersion"] == "argoproj.io/v1alpha1":
                check_application(rel, doc)
            elif kind == "ApplicationSet" and doc["apiVersion"] == "argoproj.io/v1alpha1":
                check_application_set(rel, doc)
            elif kind in ("Kustomization", "Component"):
                kustomization(rel, doc, dirpath)
            elif name.endswith("-patch.yaml"):
                merged = merge(stock_repo_server(), doc)
                k8s(rel, merged)
                mounts_resolve(rel, merged["spec"]["template"]["spec"])
            else:
                k8s(rel, doc)
            checked.append(rel)

for e in errors:
    print(e)
print("checked: " + " ".join(sorted(set(checked))))
sys.exit(1 if errors else 0)
