//! `Hash<W>.get({inputs})`: the input bit string and the `HashAlgorithm` applied to it.
//!
//! Inputs are concatenated MSB first, each at its own width, into a [`BitWriter`] (a fixed
//! buffer: building a hash input never allocates). The algorithms see that bit string as one
//! big-endian number:
//! - `Identity`: its low `W` bits (zero-extended when shorter);
//! - `Xor8/16/32`: the bit string zero-padded at its tail to a whole number of 8/16/32-bit
//!   words, the words (the first one from the first field's top bits) XORed together, then
//!   fitted to `W` (low bits / zero-extended) — bf-p4c's XOR hash matrix pads after the end of
//!   the message, not in front of it;
//! - `Crc(spec)`: the CRC of its big-endian bytes (a bit count that is not a multiple of 8 is
//!   zero-padded at the front), fitted to `W` by the spec's `msb`/`extended` (see [`super::crc`]);
//! - `Random`: `W` fresh bits from the caller's generator (the input is ignored).
//!
//! The output is `W` bits (`W` up to 128), the low bits of the algorithm's result as on Tofino.

use crate::ir::{HashAlgorithm, Value};

use super::crc::{Crc, CrcError};
use super::random::Random;

/// Largest hash input in bytes. Generous for Tofino (whose hash input is far narrower) so
/// that ICRC-style CRCs over whole short headers fit.
pub const MAX_HASH_INPUT_BYTES: usize = 512;

/// An MSB-first bit string in a fixed buffer.
#[derive(Clone)]
pub struct BitWriter {
    buf: [u8; MAX_HASH_INPUT_BYTES],
    bits: usize,
    overflow: bool,
}

impl Default for BitWriter {
    fn default() -> Self {
        BitWriter::new()
    }
}

impl std::fmt::Debug for BitWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BitWriter")
            .field("bits", &self.bits)
            .field("bytes", &self.raw_bytes())
            .field("overflow", &self.overflow)
            .finish()
    }
}

impl BitWriter {
    pub fn new() -> BitWriter {
        BitWriter {
            buf: [0; MAX_HASH_INPUT_BYTES],
            bits: 0,
            overflow: false,
        }
    }

    /// Empties the writer for reuse.
    pub fn clear(&mut self) {
        let used = self.bits.div_ceil(8);
        self.buf[..used].fill(0);
        self.bits = 0;
        self.overflow = false;
    }

    /// Appends the low `width` bits of `value` (width capped at 128), MSB first. Bits past the
    /// buffer are dropped and [`BitWriter::overflowed`] turns true.
    pub fn push(&mut self, value: Value, width: u16) {
        let width = usize::from(width.min(128));
        if self.bits + width > MAX_HASH_INPUT_BYTES * 8 {
            self.overflow = true;
            return;
        }
        let mut remaining = width;
        while remaining > 0 {
            let free = 8 - (self.bits % 8);
            let take = free.min(remaining);
            let chunk = ((value >> (remaining - take)) & ((1u128 << take) - 1)) as u8;
            self.buf[self.bits / 8] |= chunk << (free - take);
            self.bits += take;
            remaining -= take;
        }
    }

    /// Appends whole bytes.
    pub fn push_bytes(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.push(Value::from(*b), 8);
        }
    }

    pub fn bit_len(&self) -> usize {
        self.bits
    }

    /// True when a push did not fit (the result is then computed on what did).
    pub fn overflowed(&self) -> bool {
        self.overflow
    }

    /// The bits as written, zero-padded at the end to a whole byte (checksum view).
    pub fn raw_bytes(&self) -> &[u8] {
        &self.buf[..self.bits.div_ceil(8)]
    }

    /// The bits as a big-endian number: zero-padded at the front to a whole byte (hash view).
    pub fn padded_bytes(&self) -> impl ExactSizeIterator<Item = u8> + '_ {
        let n = self.bits.div_ceil(8);
        let pad = (n * 8 - self.bits) as u32;
        (0..n).map(move |j| {
            if pad == 0 {
                self.buf[j]
            } else {
                let hi = if j == 0 { 0 } else { self.buf[j - 1] };
                (hi << (8 - pad)) | (self.buf[j] >> pad)
            }
        })
    }

    /// The last `width` bits of the string (all of it when shorter), as a number.
    pub fn low_bits(&self, width: u16) -> Value {
        let n = self.bits.div_ceil(8);
        let skip = n.saturating_sub(16);
        let mut v: Value = 0;
        for b in self.padded_bytes().skip(skip) {
            v = (v << 8) | Value::from(b);
        }
        if width >= 128 {
            v
        } else {
            v & ((1u128 << width) - 1)
        }
    }
}

/// A hash unit ready to run: the algorithm, its output width and, for CRCs, the table.
#[derive(Debug, Clone)]
pub struct Hasher {
    algorithm: HashAlgorithm,
    out_width: u16,
    crc: Option<Crc>,
}

fn fit(v: Value, width: u16) -> Value {
    if width >= 128 {
        v
    } else {
        v & ((1u128 << width) - 1)
    }
}

impl Hasher {
    /// Builds the unit; a CRC spec is checked here (`CrcError` on a bad one).
    pub fn new(algorithm: HashAlgorithm, out_width: u16) -> Result<Hasher, CrcError> {
        let crc = match algorithm {
            HashAlgorithm::Crc(spec) => Some(Crc::new(spec)?),
            _ => None,
        };
        Ok(Hasher {
            algorithm,
            out_width: out_width.min(128),
            crc,
        })
    }

    pub fn out_width(&self) -> u16 {
        self.out_width
    }

    /// The hash of `input`; `rng` is used only by `Random`.
    pub fn get(&self, input: &BitWriter, rng: &mut Random) -> Value {
        let w = self.out_width;
        match self.algorithm {
            HashAlgorithm::Identity => input.low_bits(w),
            HashAlgorithm::Random => rng.bits(w),
            HashAlgorithm::Xor8 => fit(xor_fold(input, 1), w),
            HashAlgorithm::Xor16 => fit(xor_fold(input, 2), w),
            HashAlgorithm::Xor32 => fit(xor_fold(input, 4), w),
            HashAlgorithm::Crc(_) => match &self.crc {
                Some(c) => c.output(c.checksum_iter(input.padded_bytes()), w),
                None => 0,
            },
        }
    }
}

/// XOR of the bit string's `word_bytes`-byte words, cut from its start with the tail
/// zero-padded to a whole word (the string as written, not as a front-padded number).
fn xor_fold(input: &BitWriter, word_bytes: usize) -> Value {
    let mut acc: Value = 0;
    for (j, b) in input.raw_bytes().iter().enumerate() {
        acc ^= Value::from(*b) << (8 * (word_bytes - 1 - j % word_bytes));
    }
    acc
}

#[cfg(test)]
mod tests {
    use super::super::crc::presets;
    use super::*;

    #[test]
    fn bit_writer_packs_msb_first_across_bytes() {
        let mut w = BitWriter::new();
        w.push(0b101, 3);
        w.push(0x1ff, 9);
        w.push(0xA, 4);
        assert_eq!(w.bit_len(), 16);
        assert_eq!(w.raw_bytes(), &[0b1011_1111, 0b1111_1010]);
        w.clear();
        w.push(0x3, 2);
        w.push(0xff, 8);
        // 10 bits 11_1111_1111: raw (end padded) vs big-endian number (front padded).
        assert_eq!(w.raw_bytes(), &[0xff, 0xc0]);
        assert_eq!(w.padded_bytes().collect::<Vec<_>>(), vec![0x03, 0xff]);
        assert_eq!(w.low_bits(128), 0x3ff);
        assert_eq!(w.low_bits(4), 0xf);
    }

    #[test]
    fn bit_writer_overflow_is_flagged_not_panicking() {
        let mut w = BitWriter::new();
        for _ in 0..(MAX_HASH_INPUT_BYTES / 16) {
            w.push(Value::MAX, 128);
        }
        assert!(!w.overflowed());
        w.push(1, 1);
        assert!(w.overflowed());
        assert_eq!(w.bit_len(), MAX_HASH_INPUT_BYTES * 8);
    }

    #[test]
    fn identity_and_xor() {
        let mut rng = Random::new(0);
        let mut w = BitWriter::new();
        w.push(0x1234_5678, 32);
        w.push(0x9a, 8);
        let id = Hasher::new(HashAlgorithm::Identity, 16).unwrap();
        assert_eq!(id.get(&w, &mut rng), 0x789a);
        let id = Hasher::new(HashAlgorithm::Identity, 64).unwrap();
        assert_eq!(id.get(&w, &mut rng), 0x12_3456_789a);
        let x8 = Hasher::new(HashAlgorithm::Xor8, 8).unwrap();
        assert_eq!(x8.get(&w, &mut rng), 0x12 ^ 0x34 ^ 0x56 ^ 0x78 ^ 0x9a);
        let x16 = Hasher::new(HashAlgorithm::Xor16, 16).unwrap();
        // 40 bits 0x12_3456_789a, tail-padded to 48 → words 0x1234, 0x5678, 0x9a00.
        assert_eq!(x16.get(&w, &mut rng), 0x1234 ^ 0x5678 ^ 0x9a00);
        let x32 = Hasher::new(HashAlgorithm::Xor32, 8).unwrap();
        // Words 0x1234_5678, 0x9a00_0000: the low byte is 0x78.
        assert_eq!(x32.get(&w, &mut rng), (0x1234_5678 ^ 0x9a00_0000) & 0xff);
    }

    /// XOR hashes pad the tail of the bit string, whatever its width (bf-p4c's XOR matrix
    /// appends zeros after the message): 12 bits 0xabc in XOR8 are the words 0xab, 0xc0.
    #[test]
    fn xor_pads_the_tail_of_a_ragged_input() {
        let mut rng = Random::new(0);
        let mut w = BitWriter::new();
        w.push(0xabc, 12);
        let x8 = Hasher::new(HashAlgorithm::Xor8, 8).unwrap();
        assert_eq!(x8.get(&w, &mut rng), 0xab ^ 0xc0);
        let x16 = Hasher::new(HashAlgorithm::Xor16, 16).unwrap();
        assert_eq!(x16.get(&w, &mut rng), 0xabc0);
        w.clear();
        w.push(0xabc4_5678, 32);
        w.push(0x9a, 8);
        assert_eq!(x16.get(&w, &mut rng), 0x67bc);
    }

    #[test]
    fn crc32_over_fields_equals_crc32_over_their_bytes() {
        let mut rng = Random::new(0);
        let mut w = BitWriter::new();
        w.push_bytes(b"1234");
        w.push(
            u128::from_be_bytes(*b"56789\0\0\0\0\0\0\0\0\0\0\0") >> 88,
            40,
        );
        let h = Hasher::new(HashAlgorithm::Crc(presets::CRC32), 32).unwrap();
        assert_eq!(h.get(&w, &mut rng), 0xCBF4_3926);
    }

    #[test]
    fn random_uses_the_generator() {
        let mut a = Random::new(5);
        let mut b = Random::new(5);
        let h = Hasher::new(HashAlgorithm::Random, 12).unwrap();
        let w = BitWriter::new();
        assert_eq!(h.get(&w, &mut a), b.bits(12));
    }
}
