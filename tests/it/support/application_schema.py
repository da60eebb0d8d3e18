"""Argo CD's Application schema from its CRD, strict: an object with properties takes no other
fields (the API server prunes unknown fields, so a misspelt one would silently do nothing)."""
import copy
import jsonschema
import yaml


def strict(s):
    if isinstance(s, dict):
        if s.get("type") == "object" and "properties" in s and "additionalProperties" not in s \
                and not s.get("x-kubernetes-preserve-unknown-fields"):
            s["additionalProperties"] = False
        for k, v in s.items():
            if k == "properties":
                for p in v.values():
                    strict(p)
            elif isinstance(v, (dict, list)):
                strict(v)
    elif isinstance(s, list):
        for v in s:
            strict(v)


def validator(crd_path):
    crd = yaml.safe_load(open(crd_path))
    schema = next(v for v in crd["spec"]["versions"] if v["name"] == "v1alpha1")["schema"]["openAPIV3Schema"]
    schema = copy.deepcopy(schema)
    strict(schema)
    return jsonschema.Draft7Validator(schema)
