//! Helpers the chart shares between components (its `_helpers.tpl`), one file per concern;
//! everything is re-exported here, so components name them as `common::x`.

mod bundled;
mod clusters;
mod containers;
mod crds;
mod etcd;
mod images;
mod labels;
mod monitoring;
mod pods;
mod tls;
mod values;

pub use bundled::*;
pub use clusters::*;
pub use containers::*;
pub use crds::*;
pub use etcd::*;
pub use images::*;
pub use labels::*;
pub use monitoring::*;
pub use pods::*;
pub use tls::*;
pub use values::*;

#[cfg(test)]
pub(crate) mod tests {
    use crate::components::Ctx;

    /// Runs `f` on a context with the given values over the 1.18.12 defaults.
    pub(crate) fn with_ctx<T>(values: &str, kube: &str, f: impl FnOnce(&Ctx) -> T) -> T {
        with_release("1.18.12", values, kube, f)
    }

    /// Runs `f` on a context with the given values over one release's defaults, without a
    /// chart archive (for unit tests of any component).
    pub(crate) fn with_release<T>(
        version: &str,
        values: &str,
        kube: &str,
        f: impl FnOnce(&Ctx) -> T,
    ) -> T {
        let cilium = crate::versions::parse(version).expect("supported version");
        let layer = crate::values::Layer::from_yaml("test.yaml", values).expect("valid YAML");
        let values = crate::values::Values::resolve(crate::versions::defaults(cilium), &[layer]);
        let plan = crate::plan::Plan::new(
            cilium,
            "kube-system",
            crate::plan::KubeVersion::parse(kube).expect("valid"),
            Default::default(),
            &values,
        );
        f(&Ctx::new(&values, &plan, None))
    }
}
