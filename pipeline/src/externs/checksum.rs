//! The 16-bit ones'-complement Internet checksum (RFC 1071) and TNA's `Checksum` extern.
//!
//! Data is summed as big-endian 16-bit words; an odd trailing byte is padded with a zero byte
//! on the right (RFC 1071), and a bit string that is not whole bytes is padded with zero bits
//! at the end (the `BitWriter::raw_bytes` view). Each `add`/`subtract` call is padded on its
//! own, so a call should carry whole 16-bit words, as bf-p4c requires of checksum fields.
//!
//! Parser accumulator semantics ([`ChecksumAccumulator`]):
//! - `add(data)` adds the words, `subtract(data)` adds their ones' complement (subtracts);
//! - `get()` is the folded ones'-complement sum of what was accumulated (not inverted);
//! - `verify()` is true when that sum is `0xFFFF` (negative zero), i.e. a header including
//!   its correct checksum field was added;
//! - `subtract_all_and_deposit()` returns the same sum (the residual a later deparser
//!   `update` adds back) — see the TNA incremental-checksum pattern.
//!
//! Deparser `update(data)` is the pure function [`update`]: `!sum(data)`.

use super::hash::BitWriter;

/// Adds big-endian 16-bit words of `bytes` into a wide accumulator (not folded).
fn add_words(acc: u64, bytes: &[u8], complement: bool) -> u64 {
    let mut acc = acc;
    let mut chunks = bytes.chunks_exact(2);
    for c in &mut chunks {
        let w = u16::from_be_bytes([c[0], c[1]]);
        acc += u64::from(if complement { !w } else { w });
    }
    if let [last] = chunks.remainder() {
        let w = u16::from_be_bytes([*last, 0]);
        acc += u64::from(if complement { !w } else { w });
    }
    acc
}

fn fold(mut acc: u64) -> u16 {
    while acc >> 16 != 0 {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    acc as u16
}

/// Folded ones'-complement sum of `bytes` (not inverted).
pub fn ones_complement_sum(bytes: &[u8]) -> u16 {
    fold(add_words(0, bytes, false))
}

/// The Internet checksum of `bytes`: the inverted ones'-complement sum.
pub fn internet_checksum(bytes: &[u8]) -> u16 {
    !ones_complement_sum(bytes)
}

/// Deparser `Checksum.update(data)`: the checksum to write into a header.
pub fn update(data: &BitWriter) -> u16 {
    internet_checksum(data.raw_bytes())
}

/// `update(data, zeros_as_ones = true)`: a computed 0 is sent as 0xFFFF (UDP's rule).
pub fn update_zeros_as_ones(data: &BitWriter) -> u16 {
    match update(data) {
        0 => 0xFFFF,
        c => c,
    }
}

/// The parser-side `Checksum` extern state of one packet.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ChecksumAccumulator {
    acc: u64,
}

impl ChecksumAccumulator {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn add_bytes(&mut self, bytes: &[u8]) {
        self.acc = u64::from(fold(add_words(self.acc, bytes, false)));
    }

    pub fn subtract_bytes(&mut self, bytes: &[u8]) {
        self.acc = u64::from(fold(add_words(self.acc, bytes, true)));
    }

    pub fn add(&mut self, data: &BitWriter) {
        self.add_bytes(data.raw_bytes());
    }

    pub fn subtract(&mut self, data: &BitWriter) {
        self.subtract_bytes(data.raw_bytes());
    }

    /// The folded ones'-complement sum so far.
    pub fn get(&self) -> u16 {
        fold(self.acc)
    }

    /// True when the accumulated data checks (sum is 0xFFFF).
    pub fn verify(&self) -> bool {
        self.get() == 0xFFFF
    }

    /// The residual to deposit into a metadata field.
    pub fn subtract_all_and_deposit(&self) -> u16 {
        self.get()
    }

    pub fn clear(&mut self) {
        self.acc = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc1071_example() {
        // RFC 1071 §3: bytes 00 01 f2 03 f4 f5 f6 f7 sum to 0xddf2.
        let data = [0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7];
        assert_eq!(ones_complement_sum(&data), 0xddf2);
        assert_eq!(internet_checksum(&data), !0xddf2);
    }

    #[test]
    fn ipv4_header_checksum() {
        // A well-known IPv4 header whose checksum field is 0xb861.
        let mut h = [
            0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0x00, 0x00, 0xc0, 0xa8,
            0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7,
        ];
        assert_eq!(internet_checksum(&h), 0xb861);
        h[10] = 0xb8;
        h[11] = 0x61;
        let mut acc = ChecksumAccumulator::new();
        acc.add_bytes(&h);
        assert!(acc.verify());
        h[8] = 0x3f; // TTL changed: no longer verifies
        let mut acc = ChecksumAccumulator::new();
        acc.add_bytes(&h);
        assert!(!acc.verify());
    }

    #[test]
    fn odd_length_pads_on_the_right() {
        assert_eq!(ones_complement_sum(&[0x12, 0x34, 0x56]), 0x1234 + 0x5600);
    }

    #[test]
    fn incremental_update_pattern() {
        // Parser: subtract the old field and the old checksum; deparser: add the new field
        // and the residual. Must equal a full recomputation.
        let payload = [0x11u8, 0x22, 0x33, 0x44, 0x55, 0x66];
        let old_field = [0x0a, 0x00, 0x00, 0x01];
        let new_field = [0xc0, 0xa8, 0x01, 0x02];
        let mut whole = old_field.to_vec();
        whole.extend_from_slice(&payload);
        let old_ck = internet_checksum(&whole);

        let mut acc = ChecksumAccumulator::new();
        acc.subtract_bytes(&old_field);
        acc.subtract_bytes(&old_ck.to_be_bytes());
        let residual = acc.subtract_all_and_deposit();

        let mut w = BitWriter::new();
        w.push_bytes(&new_field);
        w.push(u128::from(residual), 16);
        let mut expect = new_field.to_vec();
        expect.extend_from_slice(&payload);
        assert_eq!(update(&w), internet_checksum(&expect));
    }

    #[test]
    fn zeros_as_ones() {
        let mut w = BitWriter::new();
        w.push(0xffff, 16);
        assert_eq!(update(&w), 0);
        assert_eq!(update_zeros_as_ones(&w), 0xffff);
    }
}
