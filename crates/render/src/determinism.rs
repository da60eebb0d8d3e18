//! What keeps a render deterministic on top of the chart's own templates: the defaults layer
//! that replaces the chart's certificate minting by Cilium's certgen CronJob, and the
//! explanation of a render the engine stopped because the values led a template to a function
//! that mints random data or reads the live cluster (`engine::ErrorKind::NonDeterministic`).
//!
//! The engine never evaluates such a function (see `engine` for the list); the error it returns
//! names the template line only. A user needs the value that led there and what to write
//! instead, so the known routes of the chart are named here, each from the template that takes
//! it (chart 1.18.0 to 1.20.x alike):
//! - `hubble/tls-helm/*.yaml` and `clustermesh-apiserver/tls-helm/*.yaml` with `_helpers.tpl`'s
//!   `cilium.ca.setup` (`genCA`, `genSignedCert`, and a `lookup` of the existing Secret): the
//!   `helm` method of `hubble.tls.auto` and `clustermesh.apiserver.tls.auto`;
//! - `_helpers.tpl`'s `k8sServiceHost`/`k8sServicePort` helpers (`lookup` of the kubeadm
//!   `kube-public/cluster-info` ConfigMap): `k8sServiceHost: auto`.

use crate::engine::helm::EngineError;
use crate::engine::ErrorKind;
use crate::error::RenderError;
use crate::values::Values;

/// A TLS block whose `auto.method: helm` makes the chart mint keys.
struct MintingMethod {
    path: &'static str,
    /// The values that must all be on for it to mint (the `if` around each `tls-helm` template).
    gates: &'static [&'static str],
    /// The folder of the templates that mint with it.
    templates: &'static str,
}

const MINTING_METHODS: [MintingMethod; 2] = [
    MintingMethod {
        path: "hubble.tls.auto.method",
        gates: &[
            "hubble.enabled",
            "hubble.tls.enabled",
            "hubble.tls.auto.enabled",
        ],
        templates: "/hubble/tls-helm/",
    },
    MintingMethod {
        path: "clustermesh.apiserver.tls.auto.method",
        gates: &[
            "clustermesh.useAPIServer",
            "clustermesh.apiserver.tls.auto.enabled",
        ],
        templates: "/clustermesh-apiserver/tls-helm/",
    },
];

const HELM_METHOD: &str = "\"helm\" makes the chart generate random TLS keys on every render, so Argo CD would never be in sync; use \"cronJob\" (Cilium's certgen CronJob creates the certificates in the cluster; the default here), \"certmanager\" (cert-manager issues them), or set auto.enabled: false and provide the certificates in values";

const SERVICE_HOST_AUTO: &str = "\"auto\" makes the chart look the API server up in the live cluster (kube-public/cluster-info), which a deterministic render cannot do; write the API server's host name or address (and k8sServicePort) instead";

/// The defaults layer over the chart's: where the chart's default TLS method would mint random
/// keys (`helm`), the method is `cronJob`; an explicit `helm` where it would mint is refused with
/// the alternatives (a `helm` that mints nothing, its block being off, is left as written).
pub fn apply_defaults(values: &mut Values) -> Result<(), RenderError> {
    for MintingMethod { path, gates, .. } in MINTING_METHODS {
        let method = values.get(path).as_str().unwrap_or_default().to_string();
        if method != "helm" {
            continue;
        }
        let would_mint = gates.iter().all(|g| values.on(g));
        if values.user_set(path) {
            if !would_mint {
                continue;
            }
            return Err(value_error(values, path, HELM_METHOD));
        }
        // A plain path and word: `--set` syntax sets it exactly as a user's `--set` would.
        crate::setexpr::apply(values.root_mut(), &format!("{path}=cronJob"))
            .map_err(|e| value_error(values, path, &e.to_string()))?;
    }
    Ok(())
}

/// The render error for an engine error: a refused function is explained by the value that led
/// the chart there, when it is one of the known routes; everything else keeps the template's
/// file and line.
pub fn explain(e: EngineError, values: &Values) -> RenderError {
    if let EngineError::Template(t) = &e {
        if let ErrorKind::NonDeterministic { function } = &t.kind {
            let file = t.file.as_str();
            let certs = function.starts_with("gen") || function == "lookup";
            for m in MINTING_METHODS {
                let helm = values.get(m.path).as_str() == Some("helm");
                // The minting templates, or `_helpers.tpl`'s CA helper they call.
                let there = file.contains(m.templates) || file.ends_with("/_helpers.tpl");
                if certs && helm && there {
                    return value_error(values, m.path, HELM_METHOD);
                }
            }
            if function == "lookup" && values.get("k8sServiceHost").as_str() == Some("auto") {
                return value_error(values, "k8sServiceHost", SERVICE_HOST_AUTO);
            }
        }
    }
    RenderError::from_engine(e)
}

fn value_error(values: &Values, path: &str, message: &str) -> RenderError {
    RenderError::Value {
        path: path.to_string(),
        origin: values.describe_origin(path),
        span: values.span_of(path).map(Box::new),
        message: message.to_string(),
    }
}
