//! Cilium's official chart archive and everything this project does with it: reading the files
//! bundled in it (`archive`), its pinned digests (`pins`), the folder archives are stored in and
//! found from (`store`), downloading one (`fetch`), turning a release's archive into the facts
//! under `data/` (`import`, the `import-chart` command), and reading a release this binary does
//! not list from its archive (`unlisted`).

pub mod archive;
pub mod compiled;
pub mod fetch;
pub mod import;
pub(crate) mod index;
pub mod obtain;
pub mod pins;
pub mod shared;
pub mod store;
pub mod unlisted;

pub use archive::{ChartError, ChartFiles};
