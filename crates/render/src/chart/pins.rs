//! The sha256 of the official chart archive of every supported release. There is one list,
//! `sidecar/charts.sha256`: the sidecar image's build checks its downloads against it, and it is
//! compiled into the binary here, so `chart fetch` and the archive store accept exactly those
//! bytes and no list can drift from the other.

const PINS: &str = include_str!("../../../../sidecar/charts.sha256");

/// `(version, sha256 as lowercase hex)` of every pinned archive, oldest release first.
pub fn pins() -> impl Iterator<Item = (&'static str, &'static str)> {
    PINS.lines()
        .filter(|line| !line.starts_with('#') && !line.trim().is_empty())
        .filter_map(|line| {
            // sha256sum's format: the hash, two spaces, the file name.
            let (sum, file) = line.split_once("  ")?;
            let version = file.strip_prefix("cilium-")?.strip_suffix(".tgz")?;
            Some((version, sum))
        })
}

/// The pinned sha256 of `cilium-VERSION.tgz` (VERSION as `versions::parse` prints it).
pub fn sha256_of(version: &str) -> Option<&'static str> {
    pins().find(|(v, _)| *v == version).map(|(_, sum)| sum)
}

/// Lowercase hex, the form the pins are written in.
pub fn hex(digest: &[u8]) -> String {
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_line_is_a_pin_of_a_supported_release() {
        let lines = PINS
            .lines()
            .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
            .count();
        assert_eq!(
            pins().count(),
            lines,
            "a line of charts.sha256 does not parse"
        );
        let pinned: Vec<&str> = pins().map(|(v, _)| v).collect();
        let supported: Vec<&str> = crate::versions::supported().collect();
        assert_eq!(pinned, supported, "one pin per supported release, in order");
        for (_, sum) in pins() {
            assert!(
                sum.len() == 64
                    && sum
                        .bytes()
                        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
            );
        }
    }

    #[test]
    fn lookups() {
        assert_eq!(
            sha256_of("1.20.0"),
            Some("c5f013912360d1a334f44ef25f36da59ba3414cdb48f466ee12d0c4fdff27883")
        );
        assert_eq!(sha256_of("1.17.0"), None);
        assert_eq!(hex(&[0, 15, 255]), "000fff");
    }
}
