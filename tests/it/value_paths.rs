//! The facts compiled into the binary (`data/VERSION/`: the chart's defaults, its values schema
//! and the value paths its templates read, which the known-keys check and the schema use) are
//! what `import-chart` makes of each official archive, so a change to the importer is followed by
//! regenerating them.

use crate::support::harness;

use std::path::{Path, PathBuf};

pub fn tests() -> Vec<harness::Trial> {
    harness::group(
        file!(),
        vec![harness::test(
            "data_is_what_import_chart_makes_of_each_archive",
            data_is_what_import_chart_makes_of_each_archive,
        )
        .shared("charts")],
    )
}

/// The data files are what `import-chart` makes of the official archives today (so a change to
/// the importer is followed by regenerating them). Checked where the archives are at hand.
fn data_is_what_import_chart_makes_of_each_archive() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let charts = std::env::var_os("CILIUM_CMP_CHART_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("../shared/charts"));
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("import-check");
    let mut compared = 0;
    for v in cilium_cmp_render::versions::supported() {
        let archive = charts.join(format!("cilium-{v}.tgz"));
        if !archive.is_file() {
            continue;
        }
        assert_eq!(
            cilium_cmp_render::chart::import::import(&archive, &out).unwrap(),
            v
        );
        for file in cilium_cmp_render::chart::import::DATA_FILES {
            let made = std::fs::read(out.join(v).join(file)).unwrap();
            let kept = std::fs::read(root.join("data").join(v).join(file)).unwrap();
            assert!(made == kept, "data/{v}/{file} differs from what import-chart makes: run `cilium-cmp import-chart {}`", archive.display());
        }
        compared += 1;
    }
    let all = cilium_cmp_render::versions::supported().count();
    assert_eq!(
        compared,
        all,
        "every release's archive is compared ({})",
        charts.display()
    );
}
