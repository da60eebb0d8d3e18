//! A Cilium release's name as it appears in a chart file name (`cilium-<name>.tgz`): a final
//! release `X.Y.Z` or a pre-release `X.Y.Z-PRE` (`1.21.0-pre.1`, `1.20.0-rc.2`). The rules are
//! semver 2.0's for the core and the pre-release tag (no leading zeros in a number,
//! identifiers of `[0-9A-Za-z-]` joined by dots), which is how Helm's index (`pkg/repo`
//! `IndexFile.Get`, through Masterminds/semver) reads chart versions; build metadata (`+...`)
//! is refused because Cilium never uses it and it would let two names mean one release.

/// A checked release name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReleaseName {
    /// The first number of `MAJOR.MINOR.PATCH`.
    pub major: u32,
    /// The second number.
    pub minor: u32,
    /// The third number.
    pub patch: u32,
    /// The pre-release tag without its `-` (`pre.1`, `rc.2`); None for a final release.
    pub pre: Option<String>,
}

impl ReleaseName {
    /// Whether this is a pre-release: such a release is fetched only when named exactly, never
    /// in place of a final one.
    pub fn is_pre_release(&self) -> bool {
        self.pre.is_some()
    }

    /// The file name of its chart archive.
    pub fn archive_name(&self) -> String {
        format!("cilium-{self}.tgz")
    }
}

impl std::fmt::Display for ReleaseName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)?;
        if let Some(pre) = &self.pre {
            write!(f, "-{pre}")?;
        }
        Ok(())
    }
}

/// The longest name accepted (real ones are under 20 characters); keeps file names short.
const MAX_NAME_CHARS: usize = 64;

/// `X.Y.Z` or `X.Y.Z-PRE`, a leading `v` allowed; None for anything else (so nothing else can
/// become part of a file name or a URL).
pub fn release_name(text: &str) -> Option<ReleaseName> {
    if text.len() > MAX_NAME_CHARS {
        return None;
    }
    // `numbers` takes the leading `v` off the core.
    let (core, pre) = match text.split_once('-') {
        Some((core, pre)) => (core, Some(pre)),
        None => (text, None),
    };
    let (major, minor, patch) = crate::versions::numbers(core)?;
    if let Some(pre) = pre {
        let good = pre.split('.').all(|id| {
            !id.is_empty()
                && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
                // semver: a numeric identifier has no leading zero.
                && !(id.len() > 1 && id.starts_with('0') && id.bytes().all(|b| b.is_ascii_digit()))
        });
        if !good {
            return None;
        }
    }
    Some(ReleaseName {
        major,
        minor,
        patch,
        pre: pre.map(str::to_string),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_of_releases_and_pre_releases() {
        let name = |t: &str| release_name(t).map(|n| (n.to_string(), n.is_pre_release()));
        assert_eq!(name("1.20.0"), Some(("1.20.0".into(), false)));
        assert_eq!(name("v1.20.0"), Some(("1.20.0".into(), false)));
        assert_eq!(name("1.21.0-pre.1"), Some(("1.21.0-pre.1".into(), true)));
        assert_eq!(name("v1.20.0-rc.2"), Some(("1.20.0-rc.2".into(), true)));
        assert_eq!(
            name("1.21.0-snapshot-2"),
            Some(("1.21.0-snapshot-2".into(), true))
        );
        assert_eq!(
            release_name("1.21.0-pre.1").unwrap().archive_name(),
            "cilium-1.21.0-pre.1.tgz"
        );
        for bad in [
            "",
            "1.20",
            "1.20.0.1",
            "01.20.0",
            "1.020.0",
            "1.20.00",
            "1.20.0-",
            "1.20.0-rc..1",
            "1.20.0-rc.01",
            "1.20.0+build",
            "1.20.0-rc/1",
            "1.20.0-../x",
            "vv1.20.0",
            "1.20.x",
            " 1.20.0",
            "1.20.0-rc 1",
        ] {
            assert_eq!(release_name(bad), None, "{bad:?} must be refused");
        }
        assert_eq!(release_name(&format!("1.20.0-{}", "a".repeat(80))), None);
    }
}
