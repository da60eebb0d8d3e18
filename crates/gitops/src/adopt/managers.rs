//! Who a `managedFields` manager is: a tool that deploys what someone wrote (its fields are the
//! old configuration, and one the render lacks is left behind), or a controller running in the
//! cluster (its fields are the cluster's own state, which no sync should take away).
//!
//! The manager name is what the writer sends as `fieldManager`, or, when it sends none, the
//! program name at the start of its user agent (Kubernetes "Server-Side Apply", section
//! "Managers"; k8s.io/apiserver `pkg/endpoints/handlers/rest.go`, `managerOrUserAgent`). The names
//! below come from each tool's source or documentation:
//!
//! Deploy tools:
//! - `helm`: Helm 3's Updates (the binary's name in its user agent) and Helm 4's server-side
//!   applies (helm/helm `pkg/kube/client.go`, `getManagedFieldsManager`).
//! - `kubectl` (server-side apply's default), `kubectl-client-side-apply` (client-side
//!   `kubectl apply`), and the other commands' `kubectl-<command>` (`kubectl-edit`,
//!   `kubectl-patch`, `kubectl-label`, ...: kubernetes/kubectl, each command's `--field-manager`
//!   default). `kubectl-rollout` is a person's restart stamp, judged on its own (`rules`).
//! - `argocd-controller`: Argo CD's syncs, client-side and server-side (argoproj/argo-cd
//!   `common/common.go`, `ArgoCDSSAManager`).
//! - `talos`: Talos' bootstrap manifests (siderolabs/talos creates them with
//!   `FieldManager: "talos"`).
//! - Flux: `kustomize-controller` and `helm-controller` (fluxcd/kustomize-controller and
//!   fluxcd/helm-controller apply with their own names as field manager). Their names end in
//!   "controller", but what they write is the user's configuration.
//! - `pulumi-kubernetes*` (pulumi/pulumi-kubernetes#2271), and any other name: a tool that
//!   applies what its users wrote.
//!
//! Controllers (the cluster's own state):
//! - `kube-controller-manager` (the service controller's `service.kubernetes.io/load-balancer-cleanup`
//!   finalizer, a Deployment's revision, ...), `cloud-controller-manager` and the cloud load
//!   balancer controllers, `kube-scheduler`, `kubelet`, `kube-apiserver`;
//! - Cilium's own: `cilium-operator-*` (`cilium-operator-generic`, `-aws`, `-azure`, ...), the
//!   agent (`cilium-agent`, `cilium`);
//! - cert-manager (`cert-manager-*`, its cainjector), the metrics and autoscaling controllers
//!   (`vpa-*`, `cluster-autoscaler`, `karpenter`).
//!
//! A name in neither list is taken for a deploy tool: its field stays and is reported as left
//! behind (exit 3), so an unknown writer is never silently accepted.

/// What kind of writer a manager is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Writes what a person configured: a field only it owns is the old configuration.
    DeployTool,
    /// A controller running in the cluster: its fields are the cluster's state, kept by design.
    Controller,
}

/// Exact names of controllers.
const CONTROLLERS: &[&str] = &[
    "kube-controller-manager",
    "cloud-controller-manager",
    "kube-scheduler",
    "kubelet",
    "kube-apiserver",
    "cilium",
    "cilium-agent",
    "cluster-autoscaler",
    "karpenter",
    "aws-load-balancer-controller",
    "cainjector",
];

/// Prefixes of controllers' names: a family of controllers that name themselves per component.
const CONTROLLER_PREFIXES: &[&str] = &[
    "cilium-operator",
    "cert-manager",
    "vpa-",
    "gke-",
    "azure-cloud-",
];

/// Deploy tools whose names would otherwise read as controllers.
const DEPLOY_TOOLS: &[&str] = &[
    "kustomize-controller",
    "helm-controller",
    "argocd-controller",
];

/// The role of the manager named `manager`.
pub fn role(manager: &str) -> Role {
    if DEPLOY_TOOLS.contains(&manager) {
        return Role::DeployTool;
    }
    if CONTROLLERS.contains(&manager) || CONTROLLER_PREFIXES.iter().any(|p| manager.starts_with(p))
    {
        return Role::Controller;
    }
    Role::DeployTool
}

/// The managers Argo CD's client-side-apply migration can take over (an `Update` entry's): the
/// Application annotation that names it makes the first server-side sync own, and then drop,
/// that manager's fields the render lacks (argoproj/argo-cd `docs/user-guide/sync-options.md`,
/// "Client-Side Apply Migration").
pub fn migration_fix(manager: &str) -> Option<String> {
    match manager {
        "argocd-controller" | "helm" | "kubectl-client-side-apply" => Some(format!(
            "set the Application annotation argocd.argoproj.io/client-side-apply-migration-manager: \
             {manager} (with the sync option ServerSideApply=true): the first sync takes {manager}'s \
             fields over and removes those the render lacks"
        )),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deploy_tools_and_controllers_are_told_apart() {
        for tool in [
            "helm",
            "kubectl",
            "kubectl-client-side-apply",
            "argocd-controller",
            "talos",
            "kustomize-controller",
            "helm-controller",
            "some-script",
        ] {
            assert_eq!(role(tool), Role::DeployTool, "{tool}");
        }
        for controller in [
            "kube-controller-manager",
            "cloud-controller-manager",
            "cilium-operator-generic",
            "cilium-operator-aws",
            "cert-manager-certificates-issuing",
            "kubelet",
        ] {
            assert_eq!(role(controller), Role::Controller, "{controller}");
        }
    }

    #[test]
    fn only_update_managers_argo_cd_migrates_get_a_fix() {
        assert!(migration_fix("argocd-controller")
            .unwrap()
            .contains("client-side-apply-migration-manager: argocd-controller"));
        assert!(migration_fix("talos").is_none());
    }
}
