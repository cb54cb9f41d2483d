//! IPv4 CIDR blocks of cell VPCs: parsing, overlap, the next free block of the repository's
//! pool (each cell's recorded block is read in `cell_cidr.rs`).

use std::fmt;
use std::net::Ipv4Addr;

use ipnet::Ipv4Net;

/// An IPv4 block, always its network address (no host bits): `ipnet` does the arithmetic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Cidr(Ipv4Net);

impl Cidr {
    /// `a.b.c.d/n` with no host bits set (what AWS accepts as a VPC CIDR block).
    pub fn parse(text: &str) -> Result<Cidr, String> {
        let not_a_cidr = || format!("`{text}` is not an IPv4 CIDR block like 10.1.0.0/16");
        // Split and parsed here, not by `Ipv4Net::from_str`: its prefix parser accepts forms
        // (`+16`, `016`) the message promises to refuse.
        let (addr, prefix) = text.trim().split_once('/').ok_or_else(not_a_cidr)?;
        let addr: Ipv4Addr = addr.parse().map_err(|_| not_a_cidr())?;
        let prefix: u8 = prefix
            .parse()
            .ok()
            .filter(|p| *p <= 32)
            .ok_or_else(not_a_cidr)?;
        let net = Ipv4Net::new(addr, prefix).map_err(|_| not_a_cidr())?;
        if net.network() != addr {
            return Err(format!(
                "`{text}` has host bits set; the block is {}",
                net.trunc()
            ));
        }
        Ok(Cidr(net))
    }

    /// The block of `prefix` bits holding `addr` (its host bits dropped).
    fn of(addr: Ipv4Addr, prefix: u8) -> Cidr {
        Cidr(
            Ipv4Net::new(addr, prefix.min(32))
                .expect("prefix <= 32")
                .trunc(),
        )
    }

    pub fn prefix(&self) -> u8 {
        self.0.prefix_len()
    }

    fn network(&self) -> Ipv4Addr {
        self.0.network()
    }

    fn first(&self) -> u64 {
        u64::from(u32::from(self.0.network()))
    }

    fn last(&self) -> u64 {
        u64::from(u32::from(self.0.broadcast()))
    }

    /// Two aligned blocks overlap exactly when one holds the other.
    pub fn overlaps(&self, other: &Cidr) -> bool {
        self.0.contains(&other.0) || other.0.contains(&self.0)
    }

    pub fn contains(&self, other: &Cidr) -> bool {
        self.0.contains(&other.0)
    }
}

impl fmt::Display for Cidr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// For each block of `blocks`, the indexes of the others overlapping it, ascending. Found by
/// sorting, not by comparing every pair (the VPC check runs on every cell of the repository):
/// aligned blocks are disjoint or nested, so a block is overlapped by those starting inside it
/// and by the at most `prefix` blocks containing it, each of which starts at its own address
/// with a shorter prefix.
pub fn overlapping(blocks: &[Option<Cidr>]) -> Vec<Vec<usize>> {
    let mut by_start: Vec<(Cidr, usize)> = blocks
        .iter()
        .enumerate()
        .filter_map(|(i, b)| b.map(|b| (b, i)))
        .collect();
    // Cidr orders by network address, then prefix.
    by_start.sort_unstable();
    let mut out = vec![Vec::new(); blocks.len()];
    for (i, block) in blocks.iter().enumerate() {
        let Some(block) = block else { continue };
        let found = &mut out[i];
        let from = by_start.partition_point(|(b, _)| b.first() < block.first());
        let to = by_start.partition_point(|(b, _)| b.first() <= block.last());
        found.extend(by_start[from..to].iter().map(|&(_, j)| j));
        for prefix in 0..block.prefix() {
            let around = Cidr::of(block.network(), prefix);
            // One starting at this block's own address was found above.
            if around.network() == block.network() {
                continue;
            }
            let from = by_start.partition_point(|(b, _)| *b < around);
            found.extend(
                by_start[from..]
                    .iter()
                    .take_while(|(b, _)| *b == around)
                    .map(|&(_, j)| j),
            );
        }
        found.retain(|&j| j != i);
        found.sort_unstable();
    }
    out
}

/// The lowest `/prefix` block of `pool` that overlaps none of `taken`.
pub fn next_free(pool: Cidr, prefix: u8, taken: &[Cidr]) -> Option<Cidr> {
    if prefix < pool.prefix() || prefix > 32 {
        return None;
    }
    let size = 1u64 << (32 - prefix);
    let mut start = pool.first();
    while start + size - 1 <= pool.last() {
        let candidate = Cidr::of(Ipv4Addr::from(start as u32), prefix);
        match taken
            .iter()
            .filter(|t| t.overlaps(&candidate))
            .map(Cidr::last)
            .max()
        {
            // Jump past the block in the way, to the next aligned start.
            Some(end) => start = (end + 1).div_ceil(size) * size,
            None => return Some(candidate),
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cidr(s: &str) -> Cidr {
        Cidr::parse(s).unwrap()
    }

    #[test]
    fn parses_and_rejects() {
        assert_eq!(cidr("10.1.0.0/16").to_string(), "10.1.0.0/16");
        assert!(
            Cidr::parse("10.1.0.1/16")
                .unwrap_err()
                .contains("10.1.0.0/16")
        );
        for bad in ["10.1.0.0", "10.1.0.0/33", "10.1.0/16", "x/16", ""] {
            assert!(Cidr::parse(bad).is_err(), "{bad} accepted");
        }
    }

    #[test]
    fn overlap_and_containment() {
        assert!(cidr("10.0.0.0/8").overlaps(&cidr("10.3.0.0/16")));
        assert!(cidr("10.3.0.0/16").overlaps(&cidr("10.0.0.0/8")));
        assert!(!cidr("10.3.0.0/16").overlaps(&cidr("10.4.0.0/16")));
        assert!(cidr("10.0.0.0/8").contains(&cidr("10.3.0.0/16")));
        assert!(!cidr("10.3.0.0/16").contains(&cidr("10.0.0.0/8")));
    }

    /// `overlapping` against every pair compared.
    #[test]
    fn overlapping_finds_what_comparing_every_pair_does() {
        // Nested, equal, adjacent and disjoint blocks of many sizes, and a gap (None).
        let mut blocks: Vec<Option<Cidr>> = vec![None];
        let mut seed = 7u64;
        for _ in 0..400 {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let prefix = [0, 1, 8, 12, 15, 16, 16, 20, 24, 32][(seed >> 60) as usize % 10];
            let addr = ((seed >> 16) as u32 & 0x0fff_ffff) | 0x0a00_0000;
            blocks.push(Some(Cidr::of(Ipv4Addr::from(addr), prefix)));
            if seed.is_multiple_of(5) {
                blocks.push(None);
            }
        }
        let found = overlapping(&blocks);
        for (i, a) in blocks.iter().enumerate() {
            let pairwise: Vec<usize> = blocks
                .iter()
                .enumerate()
                .filter(|(j, b)| *j != i && matches!((a, b), (Some(a), Some(b)) if a.overlaps(b)))
                .map(|(j, _)| j)
                .collect();
            assert_eq!(found[i], pairwise, "{a:?}");
        }
        assert!(found.iter().map(Vec::len).sum::<usize>() > blocks.len());
    }

    #[test]
    fn next_free_skips_taken_blocks_of_any_size() {
        let pool = cidr("10.0.0.0/8");
        assert_eq!(next_free(pool, 16, &[]), Some(cidr("10.0.0.0/16")));
        let taken = [
            cidr("10.0.0.0/16"),
            cidr("10.1.128.0/17"),
            cidr("10.3.0.0/16"),
        ];
        assert_eq!(next_free(pool, 16, &taken), Some(cidr("10.2.0.0/16")));
        // A block outside the pool does not matter; one covering the start does.
        assert_eq!(
            next_free(pool, 16, &[cidr("172.16.0.0/12"), cidr("10.0.0.0/15")]),
            Some(cidr("10.2.0.0/16"))
        );
        assert_eq!(
            next_free(cidr("10.0.0.0/15"), 16, &[cidr("10.0.0.0/15")]),
            None
        );
        assert_eq!(next_free(cidr("10.0.0.0/16"), 15, &[]), None);
    }
}
