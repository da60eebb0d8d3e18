//! Text a person pastes into a shell: the commands that errors and reports print, so that a
//! render can be reproduced on a laptop exactly as Argo CD ran it.

/// Quotes an argument for a POSIX shell, leaving plain words as they are.
pub fn shell_quote(arg: &str) -> String {
    let plain = !arg.is_empty()
        && arg
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"@%+=:,./_-".contains(&b));
    if plain {
        arg.to_string()
    } else {
        format!("'{}'", arg.replace('\'', r"'\''"))
    }
}
