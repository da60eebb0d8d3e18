//! Mirrors the chart's templates: cilium-gateway-api-validating-admission-policy.yaml

use serde_json::Value;

use super::common::{common_labels, metadata};
use super::Ctx;
use crate::changes::Change;
use crate::error::RenderError;

const NAME: &str = "gateway.cilium.io";

/// Cilium's Envoy takes one certificate per terminating TLS listener, so the API server
/// refuses cilium Gateways that give more or fewer.
const ONE_CERTIFICATE_PER_TERMINATING_LISTENER: &str = "object.spec.gatewayClassName != 'cilium' || (has(object.spec.listeners)) && object.spec.listeners.filter(e, has(e.tls) && has(e.tls.mode) && e.tls.mode == 'Terminate').all(e, e.tls.certificateRefs.size() == 1)";

pub fn render(ctx: &Ctx) -> Result<Vec<Value>, RenderError> {
    if !ctx.plan.has(Change::GatewayAdmissionPolicy) || !super::ingress::creates_gateway_class(ctx)
    {
        return Ok(Vec::new());
    }
    Ok(vec![policy(ctx), binding(ctx)])
}

/// The Gateway writes the policy applies to.
fn gateway_rule() -> Value {
    tree!({
        "apiGroups": ["gateway.networking.k8s.io"],
        "apiVersions": ["v1"],
        "operations": ["CREATE", "UPDATE"],
        "resources": ["gateways"],
    })
}

fn policy(ctx: &Ctx) -> Value {
    tree!({
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicy",
        "metadata": metadata(NAME, None, common_labels(ctx), None),
        "spec": {
            "failurePolicy": "Fail",
            "matchConstraints": {"resourceRules": [gateway_rule()]},
            "validations": [{
                "expression": ONE_CERTIFICATE_PER_TERMINATING_LISTENER,
                "message": "cilium GatewayClass requires exactly one certificateRef per listener when tls.mode is Terminate.",
                "reason": "Invalid",
            }],
        },
    })
}

fn binding(ctx: &Ctx) -> Value {
    tree!({
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": metadata(NAME, None, common_labels(ctx), None),
        "spec": {
            "policyName": NAME,
            "validationActions": ["Deny"],
            "matchResources": {"resourceRules": [gateway_rule()]},
        },
    })
}
