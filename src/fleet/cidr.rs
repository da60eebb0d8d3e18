//! IP prefixes (`10.1.0.0/16`, `fd00:1::/104`) and whether two of them share an address: the
//! pod CIDRs of meshed clusters must not (Cilium's Cluster Mesh requirements: "PodCIDR ranges in
//! all clusters and all nodes must be non-conflicting and unique IP addresses",
//! https://docs.cilium.io/en/stable/network/clustermesh/clustermesh/#prerequisites).

use std::net::IpAddr;

/// A prefix; the address is kept left-aligned in 128 bits so one comparison serves both families.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cidr {
    v6: bool,
    bits: u128,
    len: u8,
}

impl Cidr {
    /// Reads `ADDRESS/LENGTH`. Host bits may be set (Go's `net.ParseCIDR`, which Cilium's
    /// operator uses, accepts them and keeps the network): they are masked away.
    pub fn parse(text: &str) -> Option<Cidr> {
        let (addr, len) = text.trim().split_once('/')?;
        if len.is_empty() || !len.bytes().all(|b| b.is_ascii_digit()) || len.len() > 3 {
            return None;
        }
        let len: u8 = len.parse().ok()?;
        let (v6, bits, max) = match addr.parse::<IpAddr>().ok()? {
            IpAddr::V4(a) => (false, (u32::from(a) as u128) << 96, 32),
            IpAddr::V6(a) => (true, u128::from(a), 128),
        };
        if len > max {
            return None;
        }
        Some(Cidr {
            v6,
            bits: bits & mask(len),
            len,
        })
    }

    /// The first and last address, each with its family (IPv4 sorts first), left-aligned.
    pub fn range(&self) -> ((bool, u128), (bool, u128)) {
        ((self.v6, self.bits), (self.v6, self.bits | !mask(self.len)))
    }

    /// True when some address lies in both: the shorter prefix contains the longer one.
    pub fn overlaps(&self, other: &Cidr) -> bool {
        let len = self.len.min(other.len);
        self.v6 == other.v6 && (self.bits & mask(len)) == (other.bits & mask(len))
    }
}

fn mask(len: u8) -> u128 {
    match len {
        0 => 0,
        l => u128::MAX << (128 - l as u32),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(s: &str) -> Cidr {
        Cidr::parse(s).unwrap_or_else(|| panic!("{s}"))
    }

    #[test]
    fn prefixes_that_share_an_address_overlap() {
        assert!(c("10.0.0.0/8").overlaps(&c("10.20.0.0/16")));
        assert!(c("10.20.0.0/16").overlaps(&c("10.0.0.0/8")));
        assert!(!c("10.1.0.0/16").overlaps(&c("10.2.0.0/16")));
        assert!(c("10.1.0.0/16").overlaps(&c("10.1.255.0/24")));
        assert!(!c("10.1.0.0/17").overlaps(&c("10.1.128.0/17")));
        assert!(c("0.0.0.0/0").overlaps(&c("192.168.0.0/24")));
        assert!(c("fd00::/104").overlaps(&c("fd00::/104")));
        assert!(!c("fd00:1::/104").overlaps(&c("fd00:2::/104")));
        assert!(c("fd00::/8").overlaps(&c("fd12:3456::/48")));
    }

    #[test]
    fn families_never_overlap() {
        // ::/0 and 0.0.0.0/0 both hold "everything", but of different families.
        assert!(!c("::/0").overlaps(&c("0.0.0.0/0")));
        assert!(!c("::a00:0/104").overlaps(&c("10.0.0.0/8")));
    }

    #[test]
    fn host_bits_are_masked_and_nonsense_is_refused() {
        assert_eq!(c("10.1.2.3/16"), c("10.1.0.0/16"));
        for bad in [
            "10.0.0.0",
            "10.0.0.0/33",
            "10.0.0/8",
            "fd00::/129",
            "x/8",
            "10.0.0.0/",
            "/8",
            "10.0.0.0/-1",
            "10.0.0.0/+8",
            "10.0.0.0/0008",
        ] {
            assert!(Cidr::parse(bad).is_none(), "{bad}");
        }
    }
}
