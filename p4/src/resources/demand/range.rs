//! The TCAM lines a table with `range` keys takes, as bf-p4c counts them
//! (mau/resource_estimate.cpp `RangeEntries`, applied by mau/table_placement.cpp to the
//! table's entries before sizing its TCAMs):
//!
//! - the TCAM matches a range nibble by nibble, so one range entry may need several TCAM lines:
//!   up to 2 × (the PHV nibbles the range key covers) − 1, never more than the 8 lines the
//!   multirange distributor can join; the table's range entries take the most any of its
//!   range keys needs;
//! - how many of the table's entries hold ranges: `@entries_with_ranges(n)` (at most the
//!   table's size), else a quarter of its size;
//! - lines = range entries × lines per range entry + the other entries;
//! - a range key covering more than 5 PHV nibbles is refused (the ternary crossbar's 5-byte
//!   group, `TERNARY_BYTES_PER_GROUP`).

use std::collections::BTreeSet;

use super::super::effects::Loc;

/// The most TCAM lines the multirange distributor joins into one match
/// (`RangeEntries::MULTIRANGE_DISTRIBUTION_LIMIT`).
pub(crate) const MAX_LINES_PER_RANGE: u64 = 8;
/// The share of a table's entries assumed to hold ranges without `@entries_with_ranges`, in
/// percent (`RangeEntries::RANGE_ENTRY_PERCENTAGE`).
pub(crate) const DEFAULT_RANGE_PERCENT: u64 = 25;
/// The most PHV nibbles one range key may cover.
pub(crate) const MAX_RANGE_NIBBLES: u32 = 5;

/// The PHV nibbles the locations of one range key cover (a validity bit or a temporary
/// counts as one).
pub(crate) fn nibbles(locs: &[Loc]) -> u32 {
    let mut seen = BTreeSet::new();
    let mut other = 0;
    for l in locs {
        match *l {
            Loc::Bits { start, end } if end > start => {
                seen.extend(start / 4..=(end - 1) / 4);
            }
            Loc::Bits { .. } => {}
            Loc::Valid(_) | Loc::Temp(_) => other += 1,
        }
    }
    u32::try_from(seen.len())
        .unwrap_or(u32::MAX)
        .saturating_add(other)
}

/// TCAM lines one range entry takes when its widest range key covers `nibbles` nibbles.
pub(crate) fn lines_per_entry(nibbles: u32) -> u64 {
    (2 * u64::from(nibbles))
        .saturating_sub(1)
        .clamp(1, MAX_LINES_PER_RANGE)
}

/// The TCAM lines of a table of `size` entries whose range entries take `per_entry` lines
/// each; `with_ranges`: its `@entries_with_ranges`, if any (more than `size` counts as `size`).
pub(crate) fn tcam_lines(size: u64, per_entry: u64, with_ranges: Option<u32>) -> u64 {
    let ranged = match with_ranges {
        Some(n) => u64::from(n).min(size),
        None => size * DEFAULT_RANGE_PERCENT / 100,
    };
    ranged
        .saturating_mul(per_entry)
        .saturating_add(size - ranged)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bits(start: u32, end: u32) -> Loc {
        Loc::Bits { start, end }
    }

    #[test]
    fn nibbles_follow_the_phv_bits() {
        assert_eq!(nibbles(&[bits(0, 16)]), 4);
        assert_eq!(nibbles(&[bits(8, 16)]), 2);
        // A 9-bit port from bit 7: one bit of a nibble, then two more nibbles and a bit.
        assert_eq!(nibbles(&[bits(7, 16)]), 3);
        assert_eq!(nibbles(&[bits(3, 5)]), 2);
        assert_eq!(nibbles(&[bits(0, 32)]), 8);
    }

    #[test]
    fn lines_per_range_entry() {
        assert_eq!(lines_per_entry(1), 1);
        assert_eq!(lines_per_entry(2), 3);
        assert_eq!(lines_per_entry(4), 7);
        assert_eq!(lines_per_entry(5), 8);
        assert_eq!(lines_per_entry(8), 8);
    }

    #[test]
    fn a_quarter_of_the_entries_hold_ranges_unless_annotated() {
        // 1024 entries, 16-bit range: 256 × 7 + 768.
        assert_eq!(tcam_lines(1024, 7, None), 2560);
        assert_eq!(tcam_lines(1024, 7, Some(16)), 16 * 7 + 1008);
        assert_eq!(tcam_lines(1024, 7, Some(5000)), 1024 * 7);
        assert_eq!(tcam_lines(3, 7, None), 3);
    }
}
