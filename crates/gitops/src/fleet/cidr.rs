//! IP prefixes (`10.1.0.0/16`, `fd00:1::/104`) and whether two of them share an address: the
//! pod CIDRs of meshed clusters must not (Cilium's Cluster Mesh requirements: "PodCIDR ranges in
//! all clusters and all nodes must be non-conflicting and unique IP addresses",
//! <https://docs.cilium.io/en/stable/network/clustermesh/clustermesh/#prerequisites>).

use std::net::IpAddr;

use ipnet::IpNet;

/// A prefix, its host bits cleared (the `ipnet` crate checks the length against the family and
/// does the masking and containment).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cidr(IpNet);

impl Cidr {
    /// Reads `ADDRESS/LENGTH`. Host bits may be set (Go's `net.ParseCIDR`, which Cilium's
    /// operator uses, accepts them and keeps the network): they are masked away. The length is
    /// held to what Go's reader takes, decimal digits only (no sign, at most three), before
    /// `ipnet` sees it.
    pub fn parse(text: &str) -> Option<Cidr> {
        let (addr, len) = text.trim().split_once('/')?;
        if len.is_empty() || !len.bytes().all(|b| b.is_ascii_digit()) || len.len() > 3 {
            return None;
        }
        let len: u8 = len.parse().ok()?;
        let addr: IpAddr = addr.parse().ok()?;
        Some(Cidr(IpNet::new(addr, len).ok()?.trunc()))
    }

    /// The first and last address, each with its family (IPv4 sorts first), left-aligned in
    /// 128 bits so that one comparison orders prefixes of both families.
    pub fn range(&self) -> ((bool, u128), (bool, u128)) {
        let aligned = |a: IpAddr| match a {
            IpAddr::V4(a) => (false, u128::from(u32::from(a)) << 96),
            IpAddr::V6(a) => (true, u128::from(a)),
        };
        let last = match self.0 {
            IpNet::V4(n) => (
                false,
                (u128::from(u32::from(n.broadcast())) << 96) | (u128::MAX >> 32),
            ),
            IpNet::V6(n) => aligned(IpAddr::V6(n.broadcast())),
        };
        (aligned(self.0.network()), last)
    }

    /// True when some address lies in both: the shorter prefix contains the longer one (never
    /// across families).
    pub fn overlaps(&self, other: &Cidr) -> bool {
        self.0.contains(&other.0) || other.0.contains(&self.0)
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
