//! 1Pipe timestamps: 48-bit nanosecond counts that wrap, compared by serial arithmetic (PAWS,
//! as the paper does); the switch carries barriers as their low 32 bits, which a host extends
//! back to 48 bits against a 48-bit reference near them (its own clock).

/// The 48 bits of a timestamp.
pub const MASK: u64 = (1 << 48) - 1;

/// `a - b` of two 48-bit timestamps, signed.
pub fn diff(a: u64, b: u64) -> i64 {
    let d = a.wrapping_sub(b) & MASK;
    if d >= 1 << 47 {
        d as i64 - (1 << 48)
    } else {
        d as i64
    }
}

/// `a < b` of two 48-bit timestamps.
pub fn lt(a: u64, b: u64) -> bool {
    diff(a, b) < 0
}

/// The 48-bit timestamp whose low 32 bits are `low` nearest to `reference` (valid while they
/// are less than 2^31 ns apart).
pub fn extend(low: u32, reference: u64) -> u64 {
    let d = low.wrapping_sub(reference as u32) as i32;
    (reference as i64).wrapping_add(i64::from(d)) as u64 & MASK
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_wrap_and_barriers_extend_near_the_clock() {
        assert!(lt(MASK - 5, 3));
        assert_eq!(diff(3, MASK - 5), 9);
        let clock = 0x1234_ffff_fff0;
        assert_eq!(extend(0x0000_0010, clock), 0x1235_0000_0010);
        assert_eq!(extend(0xffff_ff00, clock), 0x1234_ffff_ff00);
        assert_eq!(extend(5, 2), 5);
        assert_eq!(extend(0xffff_fffe, 3), MASK - 1);
    }
}
