//! The intrinsic prefix of a pass: the hardware's intrinsic metadata laid out ahead of the
//! packet, built in whole 64-bit words.
//!
//! Two ways in: a list of (intrinsic, value) pairs, placed by looking each intrinsic up
//! ([`PrefixSlot`], one per `Intrinsic as usize`), or the values of a gress's fixed list
//! ([`pass_intrinsics`], what the switch gives every pass), placed by a [`PrefixPlan`] built
//! once with the engines: the plan's slots are ordered by word and fit two cache lines, and
//! each word is ORed together in a register and stored once (ORs into a word in memory waited
//! on each other through store forwarding, and the per-intrinsic slots spread over several
//! cache lines that the table lookups of the previous packet had evicted).

use crate::ir::{FieldRef, Gress, Intrinsic, Value};

/// Longest prefix the word builder handles (bytes / 8); longer prefixes are cut.
pub const PREFIX_WORDS: usize = 8;

/// The intrinsics the switch gives every pass of `gress`, in the order of the values of
/// [`super::PassIntrinsics::Planned`]. Intrinsics that are always 0 are left out (the prefix
/// and the PHV start zeroed): ingress `packet_version`; egress `app_pool_congest_stat`,
/// `egress_cos`, `deflection_flag`.
pub const fn pass_intrinsics(gress: Gress) -> &'static [Intrinsic] {
    match gress {
        Gress::Ingress => &INGRESS_PASS,
        Gress::Egress => &EGRESS_PASS,
    }
}

const INGRESS_PASS: [Intrinsic; 4] = [
    Intrinsic::IgResubmitFlag,
    Intrinsic::IgIngressPort,
    Intrinsic::IgIngressMacTstamp,
    Intrinsic::GhostPingPong,
];

const EGRESS_PASS: [Intrinsic; 11] = [
    Intrinsic::EgEgressPort,
    Intrinsic::EgEnqQdepth,
    Intrinsic::EgEnqCongestStat,
    Intrinsic::EgEnqTstamp,
    Intrinsic::EgDeqQdepth,
    Intrinsic::EgDeqCongestStat,
    Intrinsic::EgDeqTimedelta,
    Intrinsic::EgEgressRid,
    Intrinsic::EgEgressRidFirst,
    Intrinsic::EgPktLength,
    Intrinsic::EgEgressQid,
];

/// Where one intrinsic goes in the prefix words: a field inside one word as (word, shift,
/// width), width 0 when the prefix does not carry it (or carries it past the word builder);
/// a field that crosses a word boundary as `split`, written bit by bit from its
/// `GressEngines::prefix` location. Four bytes, so that the slots a pass reads share a cache
/// line or two.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PrefixSlot {
    word: u8,
    shift: u8,
    width: u8,
    split: bool,
}

impl PrefixSlot {
    /// The slot of a prefix field (`None`: not in the prefix).
    pub fn new(f: Option<FieldRef>) -> PrefixSlot {
        let Some(f) = f else {
            return PrefixSlot::default();
        };
        let bit = f.offset % 64;
        let word = f.offset / 64;
        let width = u32::from(f.width);
        if width == 0 || word as usize >= PREFIX_WORDS {
            // `put_bits` writes nothing for these.
            return PrefixSlot::default();
        }
        if bit + width <= 64 {
            PrefixSlot {
                word: word as u8,
                shift: (64 - bit - width) as u8,
                width: width as u8,
                split: false,
            }
        } else {
            PrefixSlot {
                split: true,
                ..PrefixSlot::default()
            }
        }
    }

    /// The mask of the field's value (0 when the slot writes no bits itself).
    #[inline]
    fn mask(self) -> u64 {
        u64::MAX
            .checked_shr(64 - u32::from(self.width))
            .unwrap_or(0)
    }
}

/// The prefix words of a list of (intrinsic, value) pairs (`slots` and `fields` indexed by
/// `Intrinsic as usize`: the slot and the prefix location of each intrinsic).
pub(crate) fn listed_words(
    list: &[(Intrinsic, Value)],
    slots: &[PrefixSlot],
    fields: &[Option<FieldRef>],
) -> [u64; PREFIX_WORDS] {
    let mut words = [0u64; PREFIX_WORDS];
    // The words start zeroed and values are only ORed in, so zero values and intrinsics the
    // prefix does not carry (mask 0) need no branch.
    for (which, v) in list {
        let Some(s) = slots.get(*which as usize) else {
            continue;
        };
        words[usize::from(s.word) % PREFIX_WORDS] |= ((*v as u64) & s.mask()) << s.shift;
        if s.split {
            if let Some(Some(f)) = fields.get(*which as usize) {
                put_bits(&mut words, f.offset, f.width, *v);
            }
        }
    }
    words
}

/// Most slots a plan has: a value takes one slot per word its (at most 64) bits touch, two at
/// most.
const PLAN_SLOTS: usize = 2 * EGRESS_PASS.len();
const _: () = assert!(PLAN_SLOTS >= 2 * INGRESS_PASS.len());

/// One value's bits in one prefix word: `((v >> rshift) << up) >> down`, ORed into `word`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct PlanSlot {
    /// Index of the value in the gress's [`pass_intrinsics`].
    value: u8,
    word: u8,
    rshift: u8,
    /// `64 - width` (clears the bits above the field's width)...
    up: u8,
    /// ...and `64 - width - shift` (puts them in place).
    down: u8,
    /// The last slot of its word: the word is stored after it.
    last: bool,
}

/// The prefix of a gress's [`pass_intrinsics`], placed once: slots ordered by word, so each
/// word is built in a register.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrefixPlan {
    slots: [PlanSlot; PLAN_SLOTS],
    len: u8,
    /// One more than the highest value index a slot reads (0 without slots).
    values: u8,
    /// Bits of the gress's `direct` intrinsics among the list: written into the PHV by the pass.
    pub(crate) direct: u64,
    /// The PHV field of the gress's `global_tstamp`, written by every pass.
    pub(crate) tstamp: Option<crate::phv::WordField>,
}

impl PrefixPlan {
    /// The plan of `gress`'s list on a prefix with the fields `prefix` (indexed by
    /// `Intrinsic as usize`); `direct` and `tstamp` as in [`super::GressEngines`].
    pub(crate) fn new(
        gress: Gress,
        prefix: &[Option<FieldRef>],
        direct: u64,
        tstamp: Option<FieldRef>,
    ) -> PrefixPlan {
        let mut slots = Vec::new();
        let mut list_bits = 0u64;
        for (i, which) in pass_intrinsics(gress).iter().enumerate() {
            list_bits |= 1u64.checked_shl(*which as u32).unwrap_or(0);
            let Some(Some(f)) = prefix.get(*which as usize) else {
                continue;
            };
            // Values are at most 64 bits: a wider field gets them in its low 64 bits.
            let width = u32::from(f.width).min(64);
            let mut end = f.offset + u32::from(f.width); // exclusive
            let mut left = width;
            let mut rshift = 0;
            while left > 0 {
                let word = (end - 1) / 64;
                let low = (64 - end % 64) % 64; // bits after the piece inside its word
                let take = (64 - low).min(left);
                if word as usize >= PREFIX_WORDS {
                    // Past the word builder: cut (as the listed path cuts it).
                } else {
                    slots.push(PlanSlot {
                        value: i as u8,
                        word: word as u8,
                        rshift: rshift as u8,
                        up: (64 - take) as u8,
                        down: (64 - take - low) as u8,
                        last: false,
                    });
                }
                rshift += take;
                left -= take;
                end -= take;
            }
        }
        // Two slots a value at most (`PLAN_SLOTS`).
        slots.truncate(PLAN_SLOTS);
        slots.sort_by_key(|s| s.word);
        for k in 0..slots.len() {
            slots[k].last = slots.get(k + 1).is_none_or(|n| n.word != slots[k].word);
        }
        let mut fixed = [PlanSlot::default(); PLAN_SLOTS];
        fixed[..slots.len()].copy_from_slice(&slots);
        PrefixPlan {
            slots: fixed,
            len: slots.len() as u8,
            values: slots.iter().map(|s| s.value + 1).max().unwrap_or(0),
            direct: direct & list_bits,
            tstamp: tstamp.map(crate::phv::WordField::new),
        }
    }

    /// The plan's pieces in word order, as (word, value index, rshift, up, down): word `word`
    /// of the prefix is the OR of `((values[value] >> rshift) << up) >> down` over its pieces
    /// (what [`PrefixPlan::write`] computes; the native engine generates the same with
    /// constant shifts). Every shift is below 64.
    pub(crate) fn pieces(&self) -> impl Iterator<Item = (usize, usize, u8, u8, u8)> + '_ {
        self.slots[..usize::from(self.len).min(PLAN_SLOTS)]
            .iter()
            .map(|s| {
                let word = usize::from(s.word) % PREFIX_WORDS;
                (word, usize::from(s.value), s.rshift, s.up, s.down)
            })
    }

    /// How many values [`PrefixPlan::write`] reads (one more than the highest index a piece
    /// reads); a shorter list is padded with zeros.
    pub(crate) fn values(&self) -> usize {
        usize::from(self.values)
    }

    /// The prefix words of `values` (the gress's [`pass_intrinsics`] in order; missing ones
    /// are 0).
    #[cfg(test)]
    pub(crate) fn words(&self, values: &[u64]) -> [u64; PREFIX_WORDS] {
        let mut bytes = [0u8; PREFIX_WORDS * 8];
        // SAFETY: `bytes` is writable for all the bytes `write` writes.
        unsafe { self.write(values, bytes.as_mut_ptr()) };
        std::array::from_fn(|i| {
            let mut w = [0u8; 8];
            w.copy_from_slice(&bytes[8 * i..8 * i + 8]);
            u64::from_be_bytes(w)
        })
    }

    /// The prefix words of `values` (the gress's [`pass_intrinsics`] in order) written at
    /// `out` big-endian: all [`PREFIX_WORDS`] of them, those without a slot zeroed. Each word is built
    /// in a register and stored straight to `out` after its last slot (no array on the stack
    /// copied afterwards).
    ///
    /// # Safety
    /// `out` is valid for writes of `PREFIX_WORDS * 8` bytes (no alignment needed).
    #[inline]
    pub(crate) unsafe fn write(&self, values: &[u64], out: *mut u8) {
        if values.len() < usize::from(self.values) {
            // Fewer values than the plan reads (not what the switch passes): the missing are 0.
            let mut padded = [0u64; PLAN_SLOTS];
            let n = values.len().min(PLAN_SLOTS);
            padded[..n].copy_from_slice(&values[..n]);
            // SAFETY: the caller's guarantee; `padded` has every value a slot reads.
            return unsafe { self.write(&padded, out) };
        }
        // SAFETY: `out` is writable for these bytes (the caller's guarantee).
        unsafe {
            out.cast::<[u8; PREFIX_WORDS * 8]>()
                .write_unaligned([0; PREFIX_WORDS * 8])
        };
        let mut acc = 0u64;
        for s in &self.slots[..usize::from(self.len).min(PLAN_SLOTS)] {
            // SAFETY: `s.value` < `self.values` ≤ `values.len()` (checked above).
            let v = unsafe { *values.get_unchecked(usize::from(s.value)) };
            acc |= ((v >> s.rshift) << s.up) >> s.down;
            if s.last {
                let at = 8 * (usize::from(s.word) % PREFIX_WORDS);
                // SAFETY: word `at / 8` < PREFIX_WORDS ends inside the bytes the caller gave.
                unsafe {
                    out.add(at)
                        .cast::<[u8; 8]>()
                        .write_unaligned(acc.to_be_bytes())
                };
                acc = 0;
            }
        }
    }
}

/// OR `width` bits of `v` at bit `offset` (MSB-first) into big-endian words.
#[inline]
pub(crate) fn put_bits(words: &mut [u64; PREFIX_WORDS], offset: u32, width: u16, v: Value) {
    let bit = offset % 64;
    if width > 0 && bit + width as u32 <= 64 {
        // The usual case: the field lies inside one word.
        if let Some(w) = words.get_mut((offset / 64) as usize) {
            let m = u64::MAX >> (64 - width as u32);
            *w |= ((v as u64) & m) << (64 - bit - width as u32);
        }
        return;
    }
    let mut v = v & crate::phv::mask(width);
    let mut end = offset + width as u32; // exclusive
    let mut left = width as u32;
    while left > 0 {
        let wi = ((end - 1) / 64) as usize;
        let low = (64 - end % 64) % 64; // bits after the field end inside this word
        let take = (64 - low).min(left);
        if let Some(w) = words.get_mut(wi) {
            let chunk = (v as u64) & (u64::MAX >> (64 - take));
            *w |= chunk << low;
        }
        v = v.checked_shr(take).unwrap_or(0);
        left -= take;
        end -= take;
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::exec::flat::tests::Rng;
    use crate::exec::INTRINSIC_SLOTS;
    use crate::phv::{read_bits, write_bits};

    #[test]
    fn prefix_slots_write_what_put_bits_writes() {
        for (offset, width) in [
            (0u32, 1u16),
            (7, 9),
            (55, 9),
            (61, 19),
            (64, 64),
            (100, 48),
            (120, 128),
            (250, 6),
            (500, 12),
            (600, 8),
            (3, 0),
        ] {
            let f = FieldRef { offset, width };
            let v: Value = 0x0123_4567_89ab_cdef_fedc_ba98_7654_3210;
            let mut expect = [0u64; PREFIX_WORDS];
            put_bits(&mut expect, offset, width, v);
            let s = PrefixSlot::new(Some(f));
            let mut got = [0u64; PREFIX_WORDS];
            let bits = ((v as u64) & s.mask()) << s.shift;
            for (k, w) in got.iter_mut().enumerate() {
                *w |= if k == s.word as usize { bits } else { 0 };
            }
            if s.split {
                put_bits(&mut got, f.offset, f.width, v);
            }
            assert_eq!(got, expect, "offset {offset} width {width}");
        }
        assert_eq!(PrefixSlot::new(None).mask(), 0);
        assert_eq!(std::mem::size_of::<PrefixSlot>(), 4);
    }

    #[test]
    fn put_bits_matches_write_bits_inside_and_across_words() {
        for (offset, width) in [
            (0u32, 1u16),
            (7, 9),
            (61, 19),
            (64, 64),
            (100, 48),
            (120, 128),
            (250, 6),
        ] {
            let mut words = [0u64; PREFIX_WORDS];
            let v: Value = 0x0123_4567_89ab_cdef_fedc_ba98_7654_3210;
            put_bits(&mut words, offset, width, v);
            let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_be_bytes()).collect();
            let mut expect = vec![0u8; PREFIX_WORDS * 8];
            write_bits(&mut expect, offset, width, v);
            assert_eq!(bytes, expect, "offset {offset} width {width}");
            assert_eq!(
                read_bits(&bytes, offset, width),
                v & crate::phv::mask(width)
            );
        }
    }

    /// A random layout of `gress`'s intrinsics: fields of 0 to 133 bits (some crossing words,
    /// some past the word builder, some left out), gaps of 0 to 8 bits; the plan and its fields.
    pub(crate) fn random_plan(
        r: &mut Rng,
        gress: Gress,
    ) -> (PrefixPlan, [Option<FieldRef>; INTRINSIC_SLOTS]) {
        let mut fields = [None; INTRINSIC_SLOTS];
        let mut at = (r.next() % 8) as u32;
        for which in pass_intrinsics(gress) {
            let width = match r.next() % 10 {
                0 => 0,
                1 => 64 + (r.next() % 70) as u16,
                _ => 1 + (r.next() % 64) as u16,
            };
            if !r.next().is_multiple_of(6) {
                fields[*which as usize] = Some(FieldRef { offset: at, width });
            }
            at += u32::from(width) + (r.next() % 9) as u32;
        }
        (PrefixPlan::new(gress, &fields, 0, None), fields)
    }

    /// One random value per intrinsic of `gress`'s list: 0, all ones or any.
    pub(crate) fn random_values(r: &mut Rng, gress: Gress) -> Vec<u64> {
        pass_intrinsics(gress)
            .iter()
            .map(|_| match r.next() % 4 {
                0 => 0,
                1 => u64::MAX,
                _ => r.next(),
            })
            .collect()
    }

    /// The planned words equal the listed words on random layouts (fields inside a word,
    /// across words, wider than 64 bits, past the word builder, missing) and random values.
    #[test]
    fn planned_words_match_listed_words() {
        let mut r = Rng(0x9e37_79b9_7f4a_7c15);
        for round in 0..2000 {
            for gress in [Gress::Ingress, Gress::Egress] {
                let (plan, fields) = random_plan(&mut r, gress);
                let list = pass_intrinsics(gress);
                let slots = fields.map(PrefixSlot::new);
                let values = random_values(&mut r, gress);
                let pairs: Vec<(Intrinsic, Value)> = list
                    .iter()
                    .zip(&values)
                    .map(|(w, v)| (*w, Value::from(*v)))
                    .collect();
                let expect = listed_words(&pairs, &slots, &fields);
                assert_eq!(plan.words(&values), expect, "round {round} {gress:?}");
            }
        }
    }

    /// The TNA egress layout (tofino1_base.p4): two fields cross a word, twelve slots; values
    /// left out are 0.
    #[test]
    fn tna_layouts_are_planned() {
        let mut fields = [None; INTRINSIC_SLOTS];
        let mut put = |w: Intrinsic, offset: u32, width: u16| {
            fields[w as usize] = Some(FieldRef { offset, width });
        };
        put(Intrinsic::EgEgressPort, 7, 9);
        put(Intrinsic::EgEnqQdepth, 21, 19);
        put(Intrinsic::EgEnqCongestStat, 46, 2);
        put(Intrinsic::EgEnqTstamp, 48, 32);
        put(Intrinsic::EgDeqQdepth, 85, 19);
        put(Intrinsic::EgDeqCongestStat, 110, 2);
        put(Intrinsic::EgDeqTimedelta, 120, 32);
        put(Intrinsic::EgEgressRid, 152, 16);
        put(Intrinsic::EgEgressRidFirst, 175, 1);
        put(Intrinsic::EgPktLength, 200, 16);
        let plan = PrefixPlan::new(Gress::Egress, &fields, 0, None);
        assert_eq!(plan.len, 12);
        // Values the caller leaves out are 0, as given zero.
        let values: Vec<u64> = (1..=10u64).map(|i| i * 0x0123_4567_89ab_cdef).collect();
        for k in 0..values.len() {
            let mut zeroed = values.clone();
            zeroed[k..].fill(0);
            assert_eq!(plan.words(&values[..k]), plan.words(&zeroed), "{k} values");
        }
    }
}
