//! The packet header vector: one gress's per-packet byte buffer plus header validity bits.
//!
//! Fields are `FieldRef` bit ranges numbered MSB-first from the start of the buffer, exactly as
//! they would lie on the wire, so header extract/emit is a plain byte copy. The accessors here are
//! the innermost loop of the executor: no allocation, no bounds panics on in-layout fields, and a
//! fast path for fields that fit in one 64-bit big-endian window.

use crate::ir::{FieldRef, Value};

/// Extra zero bytes after the layout so the word accessors always have two whole words to load.
const PAD: usize = 16;

#[inline(always)]
fn load_be(buf: &[u8], i: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&buf[i..i + 8]);
    u64::from_be_bytes(w)
}

#[inline(always)]
fn store_be(buf: &mut [u8], i: usize, v: u64) {
    buf[i..i + 8].copy_from_slice(&v.to_be_bytes());
}

/// Read through 8-byte words at multiples of 8 (the PHV's layout): a later access to the same
/// word is served by store forwarding instead of stalling on a partly overlapping store.
#[inline(always)]
fn read_aligned(buf: &[u8], offset: u32, width: u16) -> Value {
    let w = (offset / 64) as usize * 8;
    let bit = offset % 64;
    let end = bit + width as u32;
    if width == 0 || w + 16 > buf.len() || end > 128 {
        return read_aligned_wide(buf, offset, width);
    }
    if end <= 64 {
        ((load_be(buf, w) << bit) >> (64 - width as u32)) as Value
    } else {
        // Straddles two words (a 48-bit MAC address, say): one 128-bit window.
        let x = (load_be(buf, w) as u128) << 64 | load_be(buf, w + 8) as u128;
        (x << bit) >> (128 - width as u32)
    }
}

/// [`read_aligned`] for fields that straddle a word, are empty or reach the padding.
#[inline(never)]
fn read_aligned_wide(buf: &[u8], offset: u32, width: u16) -> Value {
    let w = (offset / 64) as usize * 8;
    let bit = offset % 64;
    let end = bit + width as u32;
    if width == 0 || w + 16 > buf.len() {
        return read_bits(buf, offset, width);
    }
    if end <= 64 {
        ((load_be(buf, w) << bit) >> (64 - width as u32)) as Value
    } else if end <= 128 {
        let x = (load_be(buf, w) as u128) << 64 | load_be(buf, w + 8) as u128;
        (x << bit) >> (128 - width as u32)
    } else {
        read_bits_slow(buf, offset, width)
    }
}

/// The write counterpart of [`read_aligned`]: fields inside one or two words inline, the
/// rest out of line.
#[inline(always)]
fn write_aligned(buf: &mut [u8], offset: u32, width: u16, value: Value) {
    let w = (offset / 64) as usize * 8;
    let bit = offset % 64;
    let end = bit + width as u32;
    if width == 0 || w + 16 > buf.len() || end > 128 {
        return write_aligned_wide(buf, offset, width, value);
    }
    if end <= 64 {
        let low = 64 - end;
        let m = (u64::MAX >> (64 - width as u32)) << low;
        let old = load_be(buf, w);
        store_be(buf, w, (old & !m) | (((value as u64) << low) & m));
    } else {
        // Straddles two words: one 128-bit window.
        let low = 128 - end;
        let m = mask(width) << low;
        let x = (load_be(buf, w) as u128) << 64 | load_be(buf, w + 8) as u128;
        let x = (x & !m) | ((value << low) & m);
        store_be(buf, w, (x >> 64) as u64);
        store_be(buf, w + 8, x as u64);
    }
}

/// [`write_aligned`] for fields that straddle a word, are empty or reach the padding.
#[inline(never)]
fn write_aligned_wide(buf: &mut [u8], offset: u32, width: u16, value: Value) {
    let w = (offset / 64) as usize * 8;
    let bit = offset % 64;
    let end = bit + width as u32;
    if width == 0 || w + 16 > buf.len() {
        return write_bits(buf, offset, width, value);
    }
    if end <= 64 {
        let low = 64 - end;
        let m = (u64::MAX >> (64 - width as u32)) << low;
        let old = load_be(buf, w);
        store_be(buf, w, (old & !m) | (((value as u64) << low) & m));
    } else if end <= 128 {
        let low = 128 - end;
        let m = mask(width) << low;
        let x = (load_be(buf, w) as u128) << 64 | load_be(buf, w + 8) as u128;
        let x = (x & !m) | ((value << low) & m);
        store_be(buf, w, (x >> 64) as u64);
        store_be(buf, w + 8, x as u64);
    } else {
        write_bits_slow(buf, offset, width, value)
    }
}

/// Mask with the low `width` bits set (`width` ≥ 128 gives all ones).
#[inline]
pub fn mask(width: u16) -> Value {
    if width >= 128 {
        Value::MAX
    } else {
        (1u128 << width) - 1
    }
}

/// Read `width` bits at bit `offset` (MSB-first) from `buf`. Bits past the end read as zero.
#[inline]
pub fn read_bits(buf: &[u8], offset: u32, width: u16) -> Value {
    if width == 0 {
        return 0;
    }
    let start = (offset / 8) as usize;
    let shift = offset % 8;
    let end_bit = shift + width as u32;
    if end_bit <= 64 && start + 8 <= buf.len() {
        let mut w = [0u8; 8];
        w.copy_from_slice(&buf[start..start + 8]);
        let v = u64::from_be_bytes(w);
        let v = (v << shift) >> (64 - width as u32);
        return v as Value;
    }
    read_bits_slow(buf, offset, width)
}

fn read_bits_slow(buf: &[u8], offset: u32, width: u16) -> Value {
    let start = (offset / 8) as usize;
    let shift = offset % 8;
    let total = shift + width as u32; // bits from the start of the first byte
    let nbytes = total.div_ceil(8) as usize;
    let mut acc: Value = 0;
    for i in 0..nbytes {
        let byte = buf.get(start + i).copied().unwrap_or(0);
        let is_last = i + 1 == nbytes;
        let take = if is_last { total - 8 * i as u32 } else { 8 };
        let bits = (byte >> (8 - take)) as Value;
        // Overflowing the top drops only the leading `shift` bits that are not part of the field.
        acc = acc.checked_shl(take).unwrap_or(0) | bits;
    }
    acc & mask(width)
}

/// Write the low `width` bits of `value` at bit `offset` (MSB-first). Bits past the end of the
/// buffer are not written.
#[inline]
pub fn write_bits(buf: &mut [u8], offset: u32, width: u16, value: Value) {
    if width == 0 {
        return;
    }
    let start = (offset / 8) as usize;
    let shift = offset % 8;
    let end_bit = shift + width as u32;
    if end_bit <= 64 && start + 8 <= buf.len() {
        let mut w = [0u8; 8];
        w.copy_from_slice(&buf[start..start + 8]);
        let old = u64::from_be_bytes(w);
        let low = 64 - end_bit; // bits after the field inside the window
        let m: u64 = if width >= 64 {
            u64::MAX
        } else {
            ((1u64 << width) - 1) << low
        };
        let v = ((value as u64) << low) & m;
        let new = (old & !m) | v;
        buf[start..start + 8].copy_from_slice(&new.to_be_bytes());
        return;
    }
    write_bits_slow(buf, offset, width, value)
}

/// [`write_bits`] one byte at a time: slower for wide fields, but it never loads a word that
/// overlaps a store just made, so a burst of small writes (a packet's intrinsic metadata into a
/// freshly cleared buffer) does not stall on store forwarding.
pub fn write_bits_bytewise(buf: &mut [u8], offset: u32, width: u16, value: Value) {
    write_bits_slow(buf, offset, width, value)
}

fn write_bits_slow(buf: &mut [u8], offset: u32, width: u16, value: Value) {
    let value = value & mask(width);
    // Walk the field from its last bit backwards, one byte-fragment at a time.
    let mut remaining = width as u32;
    let mut v = value;
    let mut bit_end = offset + width as u32; // exclusive
    while remaining > 0 {
        let byte_idx = ((bit_end - 1) / 8) as usize;
        let bits_in_byte_after = (8 - bit_end % 8) % 8; // bits of the byte after the field end
        let avail = 8 - bits_in_byte_after; // bits of this byte up to the field end
        let take = avail.min(remaining);
        let frag_mask: u8 = (((1u16 << take) - 1) as u8) << bits_in_byte_after;
        let frag = ((v as u8) << bits_in_byte_after) & frag_mask;
        if let Some(b) = buf.get_mut(byte_idx) {
            *b = (*b & !frag_mask) | frag;
        }
        v = v.checked_shr(take).unwrap_or(0);
        remaining -= take;
        bit_end -= take;
    }
}

/// Pack values MSB-first into `out` (appending), each at its own width; a trailing partial byte is
/// zero-padded. Returns the number of bits written.
pub fn pack_bits(out: &mut Vec<u8>, parts: impl Iterator<Item = (Value, u16)>) -> u32 {
    // Bits not yet flushed sit in the low `pending` bits of `acc` (always < 8 between parts).
    let mut acc: u128 = 0;
    let mut pending: u32 = 0;
    let mut total: u32 = 0;
    for (value, width) in parts {
        let width = width.min(128);
        let v = value & mask(width);
        total += width as u32;
        // Feed at most 64 bits at a time so `acc` never overflows (7 + 64 < 128).
        let mut left = width as u32;
        while left > 0 {
            let take = left.min(64);
            let chunk = (v >> (left - take)) & mask(take as u16);
            acc = (acc << take) | chunk;
            pending += take;
            left -= take;
            while pending >= 8 {
                pending -= 8;
                out.push((acc >> pending) as u8);
            }
            acc &= mask(pending as u16);
        }
    }
    if pending > 0 {
        out.push((acc << (8 - pending)) as u8);
    }
    total
}

/// A packet's PHV for one gress: field bytes and one validity bit per header instance.
#[derive(Debug, Clone)]
pub struct Phv {
    bytes: Vec<u8>,
    /// Validity bits, 64 headers per word (one word for every program seen so far, so
    /// resetting it is a store, not a call).
    valid: Vec<u64>,
    headers: usize,
    len: usize,
}

/// A field placed once for writes of 64-bit values by 64-bit word operations only (no
/// 128-bit window): one masked store, or two for a field across two words. Wider fields, and
/// those of no bits, are written by [`Phv::set`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WordField {
    field: FieldRef,
    /// Byte offset of the (first) word.
    word: u32,
    /// One word: the left shift. Two: the right shift into the first word.
    s0: u32,
    /// Two words: the left shift into the second.
    s1: u32,
    m0: u64,
    m1: u64,
    words: u8,
}

impl WordField {
    /// How to write `field`.
    pub fn new(field: FieldRef) -> WordField {
        let width = u32::from(field.width);
        let bit = field.offset % 64;
        let end = bit + width;
        let word = field.offset / 64 * 8;
        let mut f = WordField {
            field,
            word,
            s0: 0,
            s1: 0,
            m0: 0,
            m1: 0,
            words: 0,
        };
        if !(1..=64).contains(&width) {
            return f;
        }
        if end <= 64 {
            f.s0 = 64 - end;
            f.m0 = (u64::MAX >> (64 - width)) << f.s0;
            f.words = 1;
        } else {
            f.s0 = end - 64;
            f.m0 = u64::MAX >> bit;
            f.s1 = 128 - end;
            f.m1 = u64::MAX << f.s1;
            f.words = 2;
        }
        f
    }
}

impl Phv {
    /// [`Phv::set`] of a field placed by [`WordField::new`] to the 64-bit value `v` (in line
    /// at every use: it is a store or two, and a call cost as much again on every pass).
    #[inline(always)]
    pub fn set_word_field(&mut self, f: &WordField, v: u64) {
        let w = f.word as usize;
        match f.words {
            1 if w + 8 <= self.bytes.len() => {
                let old = load_be(&self.bytes, w);
                store_be(&mut self.bytes, w, (old & !f.m0) | ((v << f.s0) & f.m0));
            }
            2 if w + 16 <= self.bytes.len() => {
                let old = load_be(&self.bytes, w);
                store_be(&mut self.bytes, w, (old & !f.m0) | ((v >> f.s0) & f.m0));
                let old = load_be(&self.bytes, w + 8);
                store_be(&mut self.bytes, w + 8, (old & !f.m1) | ((v << f.s1) & f.m1));
            }
            _ => self.set(f.field, Value::from(v)),
        }
    }
}

impl Phv {
    /// A zeroed PHV of `bytes` bytes with `headers` validity flags.
    pub fn new(bytes: usize, headers: usize) -> Phv {
        Phv {
            bytes: vec![0; bytes.div_ceil(8) * 8 + PAD],
            valid: vec![0; headers.div_ceil(64)],
            headers,
            len: bytes,
        }
    }

    /// Zero every field and invalidate every header (a packet entering the gress).
    #[inline]
    pub fn reset(&mut self) {
        self.bytes.fill(0);
        for w in self.valid.iter_mut() {
            *w = 0;
        }
    }

    /// The 8 bytes from byte `i` on, big-endian (any `i` below the layout's length: the
    /// padding holds the rest; past it, 0).
    #[inline]
    pub fn word_at(&self, i: usize) -> u64 {
        match self.bytes.get(i..i + 8) {
            Some(b) => u64::from_be_bytes(b.try_into().unwrap_or_default()),
            None => 0,
        }
    }

    /// Bytes of the layout (without padding).
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when the layout has no bytes.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline]
    pub fn get(&self, f: FieldRef) -> Value {
        read_aligned(&self.bytes, f.offset, f.width)
    }

    #[inline]
    pub fn set(&mut self, f: FieldRef, value: Value) {
        write_aligned(&mut self.bytes, f.offset, f.width, value)
    }

    /// Header validity (out-of-range ids read as invalid).
    #[inline]
    pub fn is_valid(&self, header: usize) -> bool {
        header < self.headers
            && self
                .valid
                .get(header / 64)
                .is_some_and(|w| (w >> (header % 64)) & 1 != 0)
    }

    #[inline]
    pub fn set_valid(&mut self, header: usize, valid: bool) {
        if header >= self.headers {
            return;
        }
        if let Some(w) = self.valid.get_mut(header / 64) {
            let bit = 1u64 << (header % 64);
            if valid {
                *w |= bit;
            } else {
                *w &= !bit;
            }
        }
    }

    /// The header bytes `[offset, offset + len)` (clamped to the layout).
    #[inline]
    pub fn slice(&self, offset: usize, len: usize) -> &[u8] {
        let end = (offset + len).min(self.len);
        let start = offset.min(end);
        &self.bytes[start..end]
    }

    /// Mutable header bytes `[offset, offset + len)` (clamped to the layout).
    #[inline]
    pub fn slice_mut(&mut self, offset: usize, len: usize) -> &mut [u8] {
        let end = (offset + len).min(self.len);
        let start = offset.min(end);
        &mut self.bytes[start..end]
    }

    /// Copy `len` bytes inside the PHV from `src` to `dst` (header-to-header assignment).
    pub fn copy_within(&mut self, src: usize, dst: usize, len: usize) {
        if src + len <= self.len && dst + len <= self.len {
            self.bytes.copy_within(src..src + len, dst);
        }
    }

    #[cfg_attr(not(feature = "native"), allow(dead_code))]
    /// Raw pointers to the field bytes (padding included) and the validity words, for code
    /// generated at load time ([`crate::exec::native`]); valid until the PHV is dropped.
    pub(crate) fn raw_parts(&mut self) -> (*mut u8, *mut u64) {
        (self.bytes.as_mut_ptr(), self.valid.as_mut_ptr())
    }

    #[cfg_attr(not(feature = "native"), allow(dead_code))]
    /// Lengths of what [`Self::raw_parts`] points to: bytes, validity words.
    pub(crate) fn raw_lens(&self) -> (usize, usize) {
        (self.bytes.len(), self.valid.len())
    }

    #[cfg_attr(not(feature = "native"), allow(dead_code))]
    /// Bytes a PHV of a `bytes`-byte layout holds, padding included (what generated code may
    /// load from without a bounds check).
    pub(crate) fn padded_len(bytes: usize) -> usize {
        bytes.div_ceil(8) * 8 + PAD
    }

    /// The whole layout's bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes[..self.len]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A write through a [`WordField`] leaves the PHV as [`Phv::set`] leaves it: every offset
    /// (in one word, across two), every width up to 70 bits (the wider through `set`), among
    /// random bytes, with values wider than the field.
    #[test]
    fn word_field_writes_equal_set() {
        let mut r = crate::exec::flat::tests::Rng(0x2545_f491_4f6c_dd1d);
        let len = 24;
        let bits = 8 * len as u32;
        for offset in 0..bits {
            for width in 0..=(bits - offset).min(70) as u16 {
                let field = FieldRef { offset, width };
                let mut a = Phv::new(len, 1);
                for k in 0..len / 8 {
                    let word = FieldRef {
                        offset: 64 * k as u32,
                        width: 64,
                    };
                    a.set(word, Value::from(r.next()));
                }
                let mut b = a.clone();
                let v = r.next();
                a.set_word_field(&WordField::new(field), v);
                b.set(field, Value::from(v));
                assert_eq!(a.bytes, b.bytes, "{field:?} := {v:#x}");
            }
        }
    }

    /// Reference bit-by-bit implementation.
    fn ref_read(buf: &[u8], offset: u32, width: u16) -> Value {
        let mut v: Value = 0;
        for i in 0..width as u32 {
            let bit = offset + i;
            let b = buf.get((bit / 8) as usize).copied().unwrap_or(0);
            v = (v << 1) | ((b >> (7 - bit % 8)) & 1) as Value;
        }
        v
    }

    fn pseudo(seed: &mut u64) -> u64 {
        *seed ^= *seed << 13;
        *seed ^= *seed >> 7;
        *seed ^= *seed << 17;
        *seed
    }

    #[test]
    fn read_matches_reference_for_all_offsets_and_widths() {
        let mut s = 0x1234_5678_9abc_def1u64;
        let buf: Vec<u8> = (0..40).map(|_| pseudo(&mut s) as u8).collect();
        for offset in 0..24u32 {
            for width in 1..=128u16 {
                assert_eq!(
                    read_bits(&buf, offset, width),
                    ref_read(&buf, offset, width),
                    "offset {offset} width {width}"
                );
            }
        }
    }

    #[test]
    fn write_then_read_roundtrip_and_neighbours_untouched() {
        let mut s = 0xdead_beef_cafe_f00du64;
        for offset in 0..20u32 {
            for width in 1..=128u16 {
                let mut buf: Vec<u8> = (0..40).map(|_| pseudo(&mut s) as u8).collect();
                let before = buf.clone();
                let v = ((pseudo(&mut s) as u128) << 64 | pseudo(&mut s) as u128) & mask(width);
                write_bits(&mut buf, offset, width, v | !mask(width));
                assert_eq!(
                    read_bits(&buf, offset, width),
                    v,
                    "offset {offset} width {width}"
                );
                // Bits before and after the field are unchanged.
                assert_eq!(
                    ref_read(&buf, 0, offset as u16),
                    ref_read(&before, 0, offset as u16)
                );
                let after = offset + width as u32;
                let rest = (40 * 8 - after) as u16;
                for chunk in (0..rest).step_by(100) {
                    let w = (rest - chunk).min(100);
                    assert_eq!(
                        ref_read(&buf, after + chunk as u32, w),
                        ref_read(&before, after + chunk as u32, w)
                    );
                }
            }
        }
    }

    #[test]
    fn aligned_word_access_matches_reference() {
        let mut s = 0x0bad_5eed_1234_4321u64;
        for offset in (0..200u32).step_by(3) {
            for width in 1..=128u16 {
                let mut buf: Vec<u8> = (0..64).map(|_| pseudo(&mut s) as u8).collect();
                assert_eq!(
                    read_aligned(&buf, offset, width),
                    ref_read(&buf, offset, width)
                );
                let before = buf.clone();
                let v = ((pseudo(&mut s) as u128) << 64 | pseudo(&mut s) as u128) & mask(width);
                write_aligned(&mut buf, offset, width, v);
                assert_eq!(
                    ref_read(&buf, offset, width),
                    v,
                    "offset {offset} width {width}"
                );
                assert_eq!(
                    ref_read(&buf, 0, offset as u16),
                    ref_read(&before, 0, offset as u16)
                );
                let after = offset + width as u32;
                assert_eq!(ref_read(&buf, after, 64), ref_read(&before, after, 64));
            }
        }
    }

    #[test]
    fn short_buffers_read_zero_and_ignore_writes_past_end() {
        let mut buf = vec![0xffu8; 3];
        assert_eq!(read_bits(&buf, 20, 8), 0xf0);
        write_bits(&mut buf, 20, 8, 0);
        assert_eq!(buf, vec![0xff, 0xff, 0xf0]);
    }

    #[test]
    fn pack_bits_is_msb_first() {
        let mut out = Vec::new();
        let n = pack_bits(
            &mut out,
            [(0x5, 3u16), (0x1, 1), (0xab, 8), (0x3, 2)].into_iter(),
        );
        assert_eq!(n, 14);
        assert_eq!(out, vec![0b1011_1010, 0b1011_1100]);
    }

    #[test]
    fn phv_validity_and_reset() {
        let mut p = Phv::new(10, 3);
        p.set(
            FieldRef {
                offset: 13,
                width: 9,
            },
            0x1ff,
        );
        p.set_valid(2, true);
        p.set_valid(3, true); // out of range: ignored
        assert!(p.is_valid(2));
        assert!(!p.is_valid(3));
        assert!(!p.is_valid(7));
        let mut many = Phv::new(4, 130);
        for h in [0, 63, 64, 129] {
            many.set_valid(h, true);
            assert!(many.is_valid(h));
        }
        many.set_valid(64, false);
        assert!(!many.is_valid(64) && many.is_valid(63) && many.is_valid(129));
        assert!(!many.is_valid(130));
        many.reset();
        assert!(!many.is_valid(129));
        assert_eq!(
            p.get(FieldRef {
                offset: 13,
                width: 9
            }),
            0x1ff
        );
        p.reset();
        assert!(!p.is_valid(2));
        assert_eq!(p.bytes(), &[0u8; 10]);
    }
}
