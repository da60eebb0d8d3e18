//! `verify` of a Talos machine-config patch: the content hash of each inline manifest.

use cilium_cmp::escape;

use super::io::write_stdout;

/// Checks every inline manifest's stamped hash against its content; one `ok` line each, or the
/// first that fails. A manifest without the stamp is not cilium-cmp's render and fails.
pub fn inline_manifests(manifests: &[(String, String)]) -> anyhow::Result<()> {
    let mut out = String::new();
    for (name, contents) in manifests {
        let shown = escape::text(name);
        let (stamped, computed) = cilium_cmp::output::verify(contents)
            .map_err(|e| anyhow::anyhow!("inline manifest {shown}: {e}"))?;
        match stamped {
            Some(s) if s == computed => {
                out.push_str(&format!("ok sha256:{computed} (inline manifest {shown})\n"))
            }
            Some(s) => anyhow::bail!(
                "inline manifest {shown}: content hash mismatch: stamped sha256:{s}, content is sha256:{computed}"
            ),
            None => anyhow::bail!(
                "inline manifest {shown} has no cilium-cmp.io/content-hash annotation (content is sha256:{computed}); it is not a render of cilium-cmp"
            ),
        }
    }
    write_stdout(&out)
}
