//! Release day, rehearsed: a new chart archive made from an official one, as a Cilium patch
//! release that this binary does not list would look (another version number, new image tags,
//! and optionally one template edited). Deterministic bytes (no times, fixed modes), so a Helm
//! render of it can be cached by its content.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

/// The name of the ConfigMap an edited template adds.
pub const EDIT_MARK: &str = "release-day-edit";

/// The newest supported release of each minor line, and the unlisted version made from it.
pub const FROM: [(&str, &str); 3] = [
    ("1.18.12", "1.18.99"),
    ("1.19.6", "1.19.99"),
    ("1.20.0", "1.20.99"),
];

/// The files of a `.tgz` chart archive, by their full path in it (`cilium/Chart.yaml`).
fn unpack(archive: &Path) -> BTreeMap<String, Vec<u8>> {
    let file =
        std::fs::File::open(archive).unwrap_or_else(|e| panic!("{}: {e}", archive.display()));
    let mut tar = tar::Archive::new(flate2::read::GzDecoder::new(file));
    let mut out = BTreeMap::new();
    for entry in tar.entries().unwrap() {
        let mut entry = entry.unwrap();
        if !entry.header().entry_type().is_file() {
            continue;
        }
        let name = entry.path().unwrap().to_string_lossy().into_owned();
        let mut data = Vec::new();
        entry.read_to_end(&mut data).unwrap();
        out.insert(name, data);
    }
    out
}

/// Writes `cilium-TO.tgz` into `dir`: the archive `from` (Cilium `old`) as release `to`, with
/// Chart.yaml's version and appVersion and every `vOLD` image tag in values.yaml changed; `edit`
/// names a file (below `cilium/`) whose text gets one more line. Returns the new archive's path.
pub fn repack(from: &Path, old: &str, to: &str, dir: &Path, edit: Option<&str>) -> PathBuf {
    let mut files = unpack(from);
    let text = |files: &BTreeMap<String, Vec<u8>>, name: &str| {
        String::from_utf8(files[name].clone()).unwrap()
    };
    let chart = text(&files, "cilium/Chart.yaml")
        .replace(&format!("version: {old}\n"), &format!("version: {to}\n"))
        .replace(
            &format!("appVersion: {old}\n"),
            &format!("appVersion: {to}\n"),
        );
    assert!(
        chart.contains(&format!("\nversion: {to}\n")),
        "Chart.yaml of {old} has no version line"
    );
    files.insert("cilium/Chart.yaml".into(), chart.into_bytes());
    let values =
        text(&files, "cilium/values.yaml").replace(&format!("\"v{old}\""), &format!("\"v{to}\""));
    assert!(
        values.contains(&format!("\"v{to}\"")),
        "values.yaml of {old} has no image tag v{old}"
    );
    files.insert("cilium/values.yaml".into(), values.into_bytes());
    if let Some(name) = edit {
        let key = format!("cilium/{name}");
        let mut t = text(&files, &key);
        // An object of its own: a render that shows it evaluated this archive's templates.
        t.push_str(&format!(
            "\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {EDIT_MARK}\n  namespace: {{{{ .Release.Namespace }}}}\n"
        ));
        files.insert(key, t.into_bytes());
    }
    std::fs::create_dir_all(dir).unwrap();
    let path = dir.join(format!("cilium-{to}.tgz"));
    let mut gz = flate2::GzBuilder::new()
        .mtime(0)
        .write(Vec::new(), flate2::Compression::default());
    {
        let mut tar = tar::Builder::new(&mut gz);
        for (name, data) in &files {
            let mut header = tar::Header::new_gnu();
            header.set_size(data.len() as u64);
            header.set_mode(0o644);
            header.set_mtime(0);
            header.set_cksum();
            tar.append_data(&mut header, name, data.as_slice()).unwrap();
        }
        tar.finish().unwrap();
    }
    let bytes = gz.finish().unwrap();
    // Written aside, then renamed: parallel test processes may make the same file.
    let part = dir.join(format!("cilium-{to}.tgz.{}.part", std::process::id()));
    std::fs::write(&part, bytes).unwrap();
    std::fs::rename(&part, &path).unwrap();
    path
}
