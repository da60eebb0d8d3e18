//! What a test reads of a finished command: its standard error, and whether it refused.

use std::process::Output;

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The command failed with nothing on standard output, and its error names every part of
/// `expect`.
pub fn assert_refused(o: &Output, expect: &[&str]) {
    let e = stderr(o);
    assert!(!o.status.success(), "must fail: {e}");
    assert!(o.stdout.is_empty(), "stdout must stay empty: {e}");
    assert!(e.starts_with("error: "), "{e}");
    for part in expect {
        assert!(e.contains(part), "{e:?} lacks {part:?}");
    }
}
