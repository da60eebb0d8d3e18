//! Files bundled in the chart that the chart runs through `tpl` and embeds in a YAML block
//! (`| nindent N` below a `|` key): read from the official archive, evaluated by `tmpl_eval`,
//! and read back as the YAML block holds them.

use crate::components::Ctx;
use crate::error::RenderError;
use crate::tmpl_eval::{self, Scope, TplError};

/// The bundled template `file` as the string its YAML block holds. `enabled` is the value that
/// makes the chart embed it and `alternative` the setting that avoids it, for the errors.
pub fn bundled_script(
    ctx: &Ctx,
    enabled: &str,
    file: &str,
    alternative: &str,
) -> Result<String, RenderError> {
    let text = ctx.bundled(enabled, file, alternative)?;
    let namespace = ctx.namespace();
    let scope = Scope {
        values: ctx.values.root(),
        namespace: &namespace,
    };
    let evaluated = tmpl_eval::evaluate(file, &text, &scope).map_err(|e| match &e {
        TplError::Failed {
            path: Some(path), ..
        } => ctx.invalid(path, e.to_string()),
        _ => ctx.invalid(
            enabled,
            format!("the chart archive's {e}; set {enabled} to {alternative}, or render this release with Helm"),
        ),
    })?;
    block_literal(&evaluated).map_err(|message| {
        ctx.invalid(
            enabled,
            format!("the chart's {file}, evaluated with these values, does not read back as a YAML block ({message}); check the scripts given in the values"),
        )
    })
}

/// What YAML reads from a `|` block whose lines are `text`'s, each indented as `nindent`
/// indents them: the lines themselves, trailing empty lines cut to one final newline.
fn block_literal(text: &str) -> Result<String, String> {
    let pad = "  ";
    let doc = format!("v: |\n{pad}{}\n", text.replace('\n', &format!("\n{pad}")));
    let value = crate::yaml::read::parse_value(&doc).map_err(|e| e.to_string())?;
    match &value["v"] {
        serde_json::Value::String(s) => Ok(s.clone()),
        serde_json::Value::Null => Ok(String::new()),
        other => Err(format!("it reads as {other}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_block_keeps_inner_blank_lines_and_ends_in_one_newline() {
        assert_eq!(block_literal("a\n\n  b\n\n\n").unwrap(), "a\n\n  b\n");
        assert_eq!(block_literal("a\tb").unwrap(), "a\tb\n");
        assert_eq!(block_literal("").unwrap(), "");
    }
}
