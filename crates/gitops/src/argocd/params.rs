//! The Application's inputs as Argo CD passes them: plugin parameters (`ARGOCD_APP_PARAMETERS`,
//! or the `PARAM_*` variables derived from it) and plugin env (`ARGOCD_ENV_*`).

use std::collections::BTreeMap;

use serde_json::Value;

use super::GenerateError;

const CILIUM_VERSION: &str = "cilium-version";
const VALUES_FILES: &str = "values-files";
const SET: &str = "set";
const NAMES: &[&str] = &[CILIUM_VERSION, VALUES_FILES, SET];

const ENV_PREFIX: &str = "ARGOCD_ENV_";
const ENV_CILIUM_VERSION: &str = "ARGOCD_ENV_CILIUM_VERSION";
const ENV_VALUES_FILES: &str = "ARGOCD_ENV_VALUES_FILES";
const ENV_SET: &str = "ARGOCD_ENV_SET";
const ENV_NAMES: &[&str] = &[ENV_CILIUM_VERSION, ENV_VALUES_FILES, ENV_SET];

/// One layer of inputs over the settings file: plugin env, or parameters.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Overrides {
    /// The Cilium release to render (`1.20.0`), over the layers below; None: not given here.
    pub cilium_version: Option<String>,
    /// Relative to the application folder; merged after the folder's own files.
    pub values_files: Vec<String>,
    /// `--set` expressions, applied in order.
    pub set: Vec<String>,
}

fn non_empty(s: &str) -> Option<String> {
    let t = s.trim();
    (!t.is_empty()).then(|| t.to_string())
}

/// `plugin.env` entries of the Application. All `ARGOCD_ENV_*` variables are meant for this
/// plugin, so an unknown one is a typo and is refused rather than ignored.
pub fn plugin_env(env: &BTreeMap<String, String>) -> Result<Overrides, GenerateError> {
    let mut out = Overrides::default();
    for (k, v) in env.range(ENV_PREFIX.to_string()..) {
        if !k.starts_with(ENV_PREFIX) {
            break;
        }
        match k.as_str() {
            ENV_CILIUM_VERSION => out.cilium_version = non_empty(v),
            ENV_VALUES_FILES => {
                out.values_files = v.split(',').filter_map(non_empty).collect();
            }
            ENV_SET => out.set = non_empty(v).into_iter().collect(),
            _ => {
                return Err(GenerateError::Env {
                    var: k.clone(),
                    value: v.clone(),
                    message: format!(
                        "unknown plugin env `{}`; cilium-cmp reads only {}",
                        &k[ENV_PREFIX.len()..],
                        ENV_NAMES
                            .iter()
                            .map(|n| &n[ENV_PREFIX.len()..])
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                })
            }
        }
    }
    Ok(out)
}

fn param_error(name: &str, message: impl Into<String>) -> GenerateError {
    GenerateError::Parameter {
        name: name.to_string(),
        message: message.into(),
    }
}

fn unknown(name: &str) -> GenerateError {
    param_error(
        name,
        format!("unknown parameter; valid parameters: {}", NAMES.join(", ")),
    )
}

/// The Application's plugin parameters. `ARGOCD_APP_PARAMETERS` is authoritative (it keeps
/// names and order exactly); the `PARAM_*` variables are read only when it is absent, as when a
/// user reproduces a render by hand.
pub fn parameters(env: &BTreeMap<String, String>) -> Result<Overrides, GenerateError> {
    match env.get("ARGOCD_APP_PARAMETERS") {
        Some(json) => from_json(json),
        None => from_param_vars(env),
    }
}

fn from_json(json: &str) -> Result<Overrides, GenerateError> {
    let bad = |message: String| GenerateError::Env {
        var: "ARGOCD_APP_PARAMETERS".into(),
        value: json.to_string(),
        message,
    };
    let list = match serde_json::from_str::<Value>(json) {
        Ok(Value::Null) => return Ok(Overrides::default()),
        Ok(Value::Array(list)) => list,
        Ok(_) => return Err(bad("expected a JSON list of parameters".into())),
        Err(e) => return Err(bad(format!("not JSON ({e})"))),
    };
    let mut out = Overrides::default();
    for item in &list {
        let name = item["name"]
            .as_str()
            .ok_or_else(|| bad("a parameter has no name".into()))?;
        let string = item.get("string");
        let array = item.get("array");
        let map = item.get("map");
        if map.is_some_and(|m| !m.is_null()) {
            return Err(param_error(
                name,
                "was given as a map; cilium-cmp's parameters take a string (cilium-version) or a list (values-files, set)",
            ));
        }
        let strings = |what: &str| -> Result<Vec<String>, GenerateError> {
            match (array, string) {
                (Some(Value::Array(a)), _) => a
                    .iter()
                    .map(|v| {
                        v.as_str().map(str::to_string).ok_or_else(|| {
                            param_error(name, format!("every item must be a string ({what})"))
                        })
                    })
                    .collect(),
                (Some(Value::Null), None) | (None, None) => Ok(Vec::new()),
                _ => Err(param_error(name, format!("must be a list ({what})"))),
            }
        };
        match name {
            CILIUM_VERSION => match (string, array) {
                (Some(Value::String(s)), None) => out.cilium_version = non_empty(s),
                (None, None) => {}
                _ => {
                    return Err(param_error(
                        name,
                        "must be a string such as \"1.20.0\" (see `cilium-cmp versions`)",
                    ))
                }
            },
            VALUES_FILES => out.values_files.extend(
                strings("paths relative to the application folder")?
                    .into_iter()
                    .filter_map(|s| non_empty(&s)),
            ),
            SET => out.set.extend(
                strings("PATH=VALUE expressions as for --set")?
                    .into_iter()
                    .filter_map(|s| non_empty(&s)),
            ),
            other => return Err(unknown(other)),
        }
    }
    Ok(out)
}

fn from_param_vars(env: &BTreeMap<String, String>) -> Result<Overrides, GenerateError> {
    let mut out = Overrides::default();
    let mut values: BTreeMap<u64, String> = BTreeMap::new();
    let mut set: BTreeMap<u64, String> = BTreeMap::new();
    for (k, v) in env.range("PARAM_".to_string()..) {
        let Some(rest) = k.strip_prefix("PARAM_") else {
            break;
        };
        let indexed = |prefix: &str| -> Option<u64> { rest.strip_prefix(prefix)?.parse().ok() };
        if rest == "CILIUM_VERSION" {
            out.cilium_version = non_empty(v);
        } else if let Some(i) = indexed("VALUES_FILES_") {
            values.insert(i, v.clone());
        } else if let Some(i) = indexed("SET_") {
            set.insert(i, v.clone());
        } else {
            return Err(GenerateError::Env {
                var: k.clone(),
                value: v.clone(),
                message: "unknown parameter variable; cilium-cmp reads PARAM_CILIUM_VERSION, PARAM_VALUES_FILES_<n> and PARAM_SET_<n> (or ARGOCD_APP_PARAMETERS)".into(),
            });
        }
    }
    // Indices order the items as Argo CD numbered them; gaps do not matter.
    out.values_files = values.into_values().filter_map(|s| non_empty(&s)).collect();
    out.set = set.into_values().filter_map(|s| non_empty(&s)).collect();
    Ok(out)
}

/// `ARGOCD_APP_PARAMETERS` as Argo CD would send it for these parameters (used by the commands
/// that reproduce a render outside Argo CD, so they run the very same code path).
pub fn to_json(over: &Overrides) -> String {
    let mut list = Vec::new();
    if let Some(v) = &over.cilium_version {
        list.push(serde_json::json!({"name": CILIUM_VERSION, "string": v}));
    }
    if !over.values_files.is_empty() {
        list.push(serde_json::json!({"name": VALUES_FILES, "array": over.values_files}));
    }
    if !over.set.is_empty() {
        list.push(serde_json::json!({"name": SET, "array": over.set}));
    }
    if list.is_empty() {
        "null".into()
    } else {
        Value::Array(list).to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn parameters_from_json_keep_order() {
        let e = env(&[
            (
                "ARGOCD_APP_PARAMETERS",
                r#"[{"name":"set","array":["a=1","b=2"]},{"name":"cilium-version","string":"1.18.3"},{"array":["x.yaml"],"name":"values-files"}]"#,
            ),
            ("PARAM_SET_0", "ignored"),
        ]);
        let p = parameters(&e).unwrap();
        assert_eq!(p.set, ["a=1", "b=2"]);
        assert_eq!(p.cilium_version.as_deref(), Some("1.18.3"));
        assert_eq!(p.values_files, ["x.yaml"]);
        assert_eq!(
            parameters(&env(&[("ARGOCD_APP_PARAMETERS", "null")])).unwrap(),
            Overrides::default()
        );
    }

    #[test]
    fn parameters_from_param_vars_when_json_is_absent() {
        let e = env(&[
            ("PARAM_SET_10", "c=3"),
            ("PARAM_SET_2", "b=2"),
            ("PARAM_VALUES_FILES_0", "v.yaml"),
            ("PARAM_CILIUM_VERSION", "1.18.0"),
        ]);
        let p = parameters(&e).unwrap();
        assert_eq!(p.set, ["b=2", "c=3"]);
        assert_eq!(p.values_files, ["v.yaml"]);
        assert_eq!(p.cilium_version.as_deref(), Some("1.18.0"));
        assert!(parameters(&env(&[("PARAM_SET_HUBBLE", "x")])).is_err());
    }

    #[test]
    fn wrong_parameters_are_named() {
        for json in [
            r#"[{"name":"cilium-versions","string":"1.18.3"}]"#,
            r#"[{"name":"cilium-version","array":["1.18.3"]}]"#,
            r#"[{"name":"set","map":{"a":"1"}}]"#,
            r#"[{"name":"values-files","string":"x.yaml"}]"#,
            r#"{"name":"set"}"#,
            "[",
        ] {
            let err = parameters(&env(&[("ARGOCD_APP_PARAMETERS", json)]))
                .unwrap_err()
                .to_string();
            assert!(
                err.contains("cilium-version")
                    || err.contains("ARGOCD_APP_PARAMETERS")
                    || err.contains("set")
                    || err.contains("values-files"),
                "{err}"
            );
        }
    }

    #[test]
    fn plugin_env_is_read_and_typos_are_refused() {
        let e = env(&[
            ("ARGOCD_ENV_CILIUM_VERSION", "1.18.1"),
            ("ARGOCD_ENV_VALUES_FILES", "a.yaml, ../b.yaml,"),
            ("ARGOCD_ENV_SET", "x=1,y=2"),
        ]);
        let o = plugin_env(&e).unwrap();
        assert_eq!(o.values_files, ["a.yaml", "../b.yaml"]);
        assert_eq!(o.set, ["x=1,y=2"]);
        let err = plugin_env(&env(&[("ARGOCD_ENV_CILIUM_VERSON", "1")])).unwrap_err();
        assert!(err.to_string().contains("CILIUM_VERSON"), "{err}");
    }

    #[test]
    fn json_round_trip() {
        let o = Overrides {
            cilium_version: Some("1.18.2".into()),
            values_files: vec!["a.yaml".into()],
            set: vec!["x=<1>".into()],
        };
        let e = env(&[("ARGOCD_APP_PARAMETERS", &to_json(&o))]);
        assert_eq!(parameters(&e).unwrap(), o);
        assert_eq!(to_json(&Overrides::default()), "null");
    }
}
