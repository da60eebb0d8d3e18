//! `verify`: a render's stamped content hash against its content, or of each inline manifest
//! of a Talos machine-config patch.

use std::path::Path;
use std::process::ExitCode;

use cilium_cmp_yaml::escape;

use cilium_cmp_gitops::refusal::VerifyError;

use super::io::{self as cli_io, write_stdout};

/// `verify FILE` (`-` for standard input).
pub fn run(file: &Path) -> anyhow::Result<ExitCode> {
    let text = if file.as_os_str() == "-" {
        cilium_cmp_yaml::limits::read_stdin(cli_io::STDIN_NAME)?
    } else {
        cilium_cmp_yaml::limits::read_text(file, &file.display().to_string())?
    };
    // A Talos patch (`talos-patch`) holds the render in its inline manifests: each is checked
    // as the stream it is.
    if let Some(manifests) = cilium_cmp_render::talos::inline_manifests(&text) {
        inline_manifests(&manifests)?;
        return Ok(ExitCode::SUCCESS);
    }
    let shown = if file.as_os_str() == "-" {
        cli_io::STDIN_NAME.to_string()
    } else {
        file.display().to_string()
    };
    let (stamped, computed) =
        cilium_cmp_render::output::verify(&text).map_err(|e| VerifyError::NotYaml {
            message: e.to_string(),
            span: Some(Box::new(e.span_in(&shown, &text))),
        })?;
    match stamped {
        Some(s) if s == computed => write_stdout(&format!("ok sha256:{computed}\n"))?,
        Some(s) => {
            return Err(VerifyError::Mismatch(format!(
                "content hash mismatch: stamped sha256:{s}, content is sha256:{computed}"
            ))
            .into())
        }
        None => {
            return Err(VerifyError::Unstamped(format!(
            "no cilium-cmp.io/content-hash annotation in the stream (content is sha256:{computed})"
        ))
            .into())
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Checks every inline manifest's stamped hash against its content; one `ok` line each, or the
/// first that fails. A manifest without the stamp is not cilium-cmp's render and fails.
fn inline_manifests(manifests: &[(String, String)]) -> anyhow::Result<()> {
    let mut out = String::new();
    for (name, contents) in manifests {
        let shown = escape::text(name);
        let (stamped, computed) =
            cilium_cmp_render::output::verify(contents).map_err(|e| VerifyError::NotYaml {
                message: format!("inline manifest {shown}: {e}"),
                span: None,
            })?;
        match stamped {
            Some(s) if s == computed => {
                out.push_str(&format!("ok sha256:{computed} (inline manifest {shown})\n"))
            }
            Some(s) => return Err(VerifyError::Mismatch(format!(
                "inline manifest {shown}: content hash mismatch: stamped sha256:{s}, content is sha256:{computed}"
            )).into()),
            None => return Err(VerifyError::Unstamped(format!(
                "inline manifest {shown} has no cilium-cmp.io/content-hash annotation (content is sha256:{computed}); it is not a render of cilium-cmp"
            )).into()),
        }
    }
    write_stdout(&out)
}
