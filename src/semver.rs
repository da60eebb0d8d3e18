//! Versions as Helm's `semverCompare` reads them (Masterminds semver, loose form): the chart
//! compares `upgradeCompatibility` and a few image tags with it. The plan parses
//! `upgradeCompatibility` once and components compare tags, so it sits below both.

/// Masterminds semver's loose form: `v?MAJOR(.MINOR(.PATCH)?)?(-PRE)?(+BUILD)?`; returns
/// (major, minor), or (0, 0) for a pre-release.
pub fn parse_semver(text: &str) -> Option<(u64, u64)> {
    semver(text).map(|((major, minor, _), pre)| if pre { (0, 0) } else { (major, minor) })
}

/// Masterminds semver's loose form (`v?1`, `1.2`, `1.2.3`, optional pre-release and build):
/// the core numbers and whether a pre-release is present.
pub fn semver(s: &str) -> Option<((u64, u64, u64), bool)> {
    let s = s.strip_prefix('v').unwrap_or(s);
    let (s, build) = match s.split_once('+') {
        Some((a, b)) => (a, Some(b)),
        None => (s, None),
    };
    let (core, pre) = match s.split_once('-') {
        Some((a, b)) => (a, Some(b)),
        None => (s, None),
    };
    let ident_ok = |x: &str| {
        x.split('.')
            .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'))
    };
    if !pre.is_none_or(ident_ok) || !build.is_none_or(ident_ok) {
        return None;
    }
    let parts: Vec<&str> = core.split('.').collect();
    if parts.is_empty() || parts.len() > 3 {
        return None;
    }
    let mut nums = [0u64; 3];
    for (i, p) in parts.iter().enumerate() {
        if p.is_empty() || !p.chars().all(|c| c.is_ascii_digit()) {
            return None;
        }
        nums[i] = p.parse().ok()?;
    }
    Some(((nums[0], nums[1], nums[2]), pre.is_some()))
}
