//! The Cilium custom resources the agent's and operator's ClusterRoles name, each row gated by
//! the named changes that brought it in or took it out.
//!
//! The two roles keep their own ordered tables: they name overlapping resources in orders that
//! cannot be merged (the agent lists `ciliumbgpnodeconfigs` before `ciliumbgppeerconfigs`, the
//! operator the other way round), and the output keeps each order. What they share are these
//! gates and the changes behind them (`BgpV1PeeringPoliciesUnread`, `BgpV1CrdUpdateDropped`,
//! `DatapathPluginCrd`).

use crate::changes::Change;
use crate::components::Ctx;

/// When a role names a resource.
pub enum Listed {
    Always,
    /// From the release with this change on.
    Since(Change),
    /// Until the release with this change.
    Until(Change),
    /// From the release with this change on, when the chart installs the MCS-API CRDs.
    McsapiCrds(Change),
}

/// The names of `table` this release's role writes, in the table's order; `mcsapi_crds` says
/// whether the chart installs the MCS-API CRDs.
pub fn listed(ctx: &Ctx, table: &[(&'static str, Listed)], mcsapi_crds: bool) -> Vec<&'static str> {
    let has = |c: Change| ctx.plan.has(c);
    table
        .iter()
        .filter(|(_, listed)| match *listed {
            Listed::Always => true,
            Listed::Since(change) => has(change),
            Listed::Until(change) => !has(change),
            Listed::McsapiCrds(change) => has(change) && mcsapi_crds,
        })
        .map(|(name, _)| *name)
        .collect()
}
