//! The selector ALU: which member of a selector group a packet's hash picks, as Tofino picks it.
//!
//! A group lives in 120-bit selector RAM words, one bit per member position (the driver fills
//! positions in the order members are added, see [`super::profile`]). A packet's selector hash
//! is the `ActionSelector`'s hash algorithm over the table's `selector` keys, 66 bits of it
//! (bf-p4c asks for 14 bits in FAIR mode and 51 in RESILIENT mode; the bits above are the
//! word choice of groups larger than one word).
//!
//! - Three 14-bit buckets: hash bits 0..14, 14..28, 28..42, each put through the SPS-14
//!   scrambler when the selector scrambles (bf-p4c's default; `@selector_enable_scramble(0)` on
//!   the match table turns it off).
//! - FAIR: member position = the `(bucket0 mod active)`-th active position.
//! - RESILIENT: up to three tries, position `bucket_k mod members`, the first active one wins;
//!   if none is active, "plan B": an 18-bit hash (bits 42..51 above bits 5..14, SPS-18
//!   scrambled) permutes the word's active bits, a circular priority search picks one, and the
//!   permutation is undone.
//! - No active position: the ALU's output is invalid, and the chip does not miss. The row
//!   replaces the address bits of the entry's action address (`Address::kActionAddrAddrMask`;
//!   the entry's other bits stay) with its `selector_action_adr_fallback` register
//!   (tofino-model `mau-logical-row.cpp` `selector_addr_index`), and the entry's instruction
//!   runs unless its logical table enables the fallback instruction (`mau-instr-store.cpp`
//!   `instr_fallback`). The driver writes that register only for a fallback member
//!   (`pipe_mgr_sel_fallback_mbr_set`, a PD-only API: bf-rt and P4Runtime have none) and
//!   writes 0 when the member is cleared (`pipe_mgr_select_tbl.c`
//!   `pipe_mgr_sel_process_fallback_mbr_deactivate`, `pipe_mgr_sel_write_fallback_reg`); the
//!   model's reset value is 0 too. So on a Tofino whose control plane set no fallback member,
//!   such a packet runs the entry's instruction with the action data at address 0 of the
//!   selector's action data RAM: whatever the driver's action-data placement put there.
//!   pisa does not model that placement, so it cannot give that data: the lookup gets no
//!   member and the table runs as on a miss, a documented difference (README feature table).
//!   The driver's own `_get_member` answers "not found" for such a group
//!   (`rmt_sel_grp_mbr_get_from_hash`), as pisa's does. An entry on a group with no member,
//!   and emptying a group entries use, stay refused at configuration time, as the driver
//!   refuses them (see `super::profile`); only the member-status bits (`SelectorAction`,
//!   the runtime API) reach this case.
//! - A group of more than one word: word `((h & 0x3ff) mod (words >> s)) << s | (h >> 10)`'s
//!   low `s` bits, `h` = hash bits 51..66 (SPS-15 scrambled), `s` the smallest shift that
//!   leaves at most 31 words.
//!
//! Sources (semantics only): tofino-model `mau-selector-alu.cpp` (`get_hash_buckets`,
//! `get_fair_hash_selection_index`, `get_resilient_selection_index`,
//! `get_planB_resilient_selection_index`, `run_alu_with_phv`) and `mau-sbox.cpp` (the S-boxes
//! and SPS permutations); the driver's `pipe_mgr_select_tbl.c` `rmt_sel_grp_mbr_get_from_hash`
//! (the same pick from the control plane, and the word choice); bf-p4c `mau/asm_output.cpp`
//! (`mode: fair <bucket>` / `resilient 7`, `non_linear`) and `extract_maupipe.cpp` (scramble on
//! unless the pragma says 0; `handle_assign.cpp` `ValidateSelectors::ValidateKey` asks the
//! selector's hash algorithm for bits 0..14 in FAIR mode, 0..51 in RESILIENT mode). FAIR mode's bucket is wherever bf-p4c's allocation puts
//! those 14 bits (`selector_fair_hash_select`), so it reads the hash's bits 0..14 either way.
//! Where the word bits of a group wider than 120 sit is pisa's inference (bits 51..66, as the
//! driver's `_get_member` reads them).

use crate::ir::SelectorMode;

/// Member positions in one selector RAM word.
pub const WORD_MEMBERS: usize = 120;

/// Hash bits a selector uses: 51 for the member pick, 15 more for the word of a wide group.
pub const HASH_BITS: u16 = 66;

/// The 3-bit and 4-bit S-boxes (tofino-model `MauSbox::sbox3x3` / `sbox4x4`).
const SBOX3: [u8; 8] = [1, 4, 7, 5, 2, 0, 3, 6];
const SBOX4: [u8; 16] = [8, 0, 6, 1, 15, 13, 14, 11, 2, 12, 3, 7, 5, 4, 9, 10];

/// A substitution-permutation scrambler: S-boxes over fields of `boxes` bits from bit 0 up,
/// then output bit `i` = bit `first[i]`; S-boxes again, then output bit `i` = bit `second[i]`.
struct Sps {
    boxes: &'static [u32],
    first: &'static [u32],
    second: &'static [u32],
}

const SPS14: Sps = Sps {
    boxes: &[3, 3, 4, 4],
    first: &[2, 9, 10, 3, 6, 11, 0, 4, 7, 12, 1, 5, 8, 13],
    second: &[6, 10, 0, 3, 7, 11, 1, 4, 8, 12, 2, 5, 9, 13],
};

const SPS15: Sps = Sps {
    boxes: &[3, 4, 4, 4],
    first: &[5, 10, 11, 2, 6, 7, 12, 0, 3, 8, 13, 1, 4, 9, 14],
    second: &[3, 7, 11, 0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14],
};

const SPS18: Sps = Sps {
    boxes: &[3, 3, 4, 4, 4],
    first: &[6, 13, 14, 0, 5, 7, 10, 15, 1, 3, 8, 11, 16, 2, 4, 9, 12, 17],
    second: &[6, 10, 14, 0, 3, 7, 11, 15, 1, 4, 8, 12, 16, 2, 5, 9, 13, 17],
};

impl Sps {
    // `const fn`s (loops, no iterators) so that SPS-14, on every selector lookup, is a table
    // built at compile time from the same definition.
    const fn substitute(&self, x: u32) -> u32 {
        let mut out = 0;
        let mut at = 0;
        let mut k = 0;
        while k < self.boxes.len() {
            let w = self.boxes[k];
            let field = ((x >> at) & ((1 << w) - 1)) as usize;
            let s = if w == 3 { SBOX3[field] } else { SBOX4[field] };
            out |= (s as u32) << at;
            at += w;
            k += 1;
        }
        out
    }

    const fn permute(x: u32, from: &[u32]) -> u32 {
        let mut out = 0;
        let mut i = 0;
        while i < from.len() {
            out |= ((x >> from[i]) & 1) << i;
            i += 1;
        }
        out
    }

    const fn scramble(&self, x: u32) -> u32 {
        let one = Sps::permute(self.substitute(x), self.first);
        Sps::permute(self.substitute(one), self.second)
    }
}

/// SPS-14 of every 14-bit value (32 KiB, built at compile time): a FAIR or RESILIENT pick
/// scrambles a bucket per lookup, and the two rounds of S-boxes and bit permutations cost
/// a couple of hundred instructions a packet.
static SPS14_TABLE: [u16; 1 << 14] = {
    let mut t = [0u16; 1 << 14];
    let mut x = 0;
    while x < (1 << 14) {
        t[x] = SPS14.scramble(x as u32) as u16;
        x += 1;
    }
    t
};

/// `width` bits of `hash` from bit `at`.
fn bits(hash: u128, at: u32, width: u32) -> u32 {
    ((hash >> at) & ((1u128 << width) - 1)) as u32
}

/// How a selector picks: its mode and whether it scrambles its hash.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SelectorAlu {
    pub mode: SelectorMode,
    pub scramble: bool,
}

impl SelectorAlu {
    /// The 14-bit bucket `k` (0, 1 or 2) of `hash`.
    fn bucket(&self, hash: u128, k: u32) -> usize {
        let b = bits(hash, 14 * k, 14);
        if self.scramble {
            usize::from(SPS14_TABLE[b as usize])
        } else {
            b as usize
        }
    }

    /// The position the ALU picks in a word of `members` positions (at most
    /// [`WORD_MEMBERS`]), `active(i)` saying whether position `i` is active; `None` when no
    /// position is active.
    pub fn pick(
        &self,
        hash: u128,
        members: usize,
        active: &dyn Fn(usize) -> bool,
    ) -> Option<usize> {
        let members = members.min(WORD_MEMBERS);
        let live = (0..members).filter(|&i| active(i)).count();
        if live == 0 {
            return None;
        }
        match self.mode {
            SelectorMode::Fair => {
                let n = self.bucket(hash, 0) % live;
                (0..members).filter(|&i| active(i)).nth(n)
            }
            SelectorMode::Resilient => (0..3)
                .map(|k| self.bucket(hash, k) % members)
                .find(|&i| active(i))
                .or_else(|| self.plan_b(hash, members, active)),
        }
    }

    /// RESILIENT mode's fallback after three tries at inactive positions.
    fn plan_b(&self, hash: u128, members: usize, active: &dyn Fn(usize) -> bool) -> Option<usize> {
        let raw = (bits(hash, 42, 9) << 9) | bits(hash, 5, 9);
        let h = if self.scramble {
            SPS18.scramble(raw)
        } else {
            raw
        };
        // Odd positions move by one 6-bit hash field, even ones by another (both even, so a
        // position keeps its parity), within a 128-bit word.
        let xor = |p: usize| -> usize {
            let field = if p & 1 == 1 {
                (h >> 6) & 0x3f
            } else {
                h & 0x3f
            };
            p ^ ((field as usize) << 1)
        };
        let permuted = (0..members)
            .filter(|&i| active(i))
            .fold(0u128, |acc, i| acc | (1u128 << xor(i)));
        if permuted == 0 {
            return None;
        }
        // The first set bit from `head` down to 0, else the highest set bit.
        let head = ((h >> 12) & 0x3f) as usize;
        let below = permuted & ((1u128 << (head + 1)) - 1);
        let hit = if below != 0 { below } else { permuted };
        let found = 127 - hit.leading_zeros() as usize;
        Some(xor(found))
    }
}

/// The word of a group of `words` selector RAM words a packet's `hash` picks (the driver's
/// `rmt_sel_grp_mbr_get_from_hash`).
pub fn word_index(hash: u128, words: usize, scramble: bool) -> usize {
    if words <= 1 {
        return 0;
    }
    let raw = bits(hash, 51, 15);
    let h = (if scramble { SPS15.scramble(raw) } else { raw }) as usize;
    let mut shift = 0;
    while (words >> shift) > 31 {
        shift += 1;
    }
    (((h & 0x3ff) % (words >> shift)) << shift) | ((h >> 10) & ((1 << shift) - 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The S-box tables are the tofino-model's; the driver writes the 3x3 box as boolean
    /// equations (`calc_sbox_3x3`): Q0 = ~i2·i1 + ~i2·~i0 + i1·~i0, Q1 = i2·i1 + i2·~i0 +
    /// i1·~i0, Q2 = ~i2·i1 + ~i2·i0 + i1·i0. Both sources agree.
    #[test]
    #[allow(clippy::nonminimal_bool)] // the sums of products as the driver writes them
    fn sbox3_matches_the_driver_equations() {
        for x in 0u8..8 {
            let (i0, i1, i2) = (x & 1 == 1, x & 2 == 2, x & 4 == 4);
            let q0 = (!i2 && i1) || (!i2 && !i0) || (i1 && !i0);
            let q1 = (i2 && i1) || (i2 && !i0) || (i1 && !i0);
            let q2 = (!i2 && i1) || (!i2 && i0) || (i1 && i0);
            let want = u8::from(q0) | (u8::from(q1) << 1) | (u8::from(q2) << 2);
            assert_eq!(SBOX3[x as usize], want, "input {x}");
        }
    }

    fn all(_: usize) -> bool {
        true
    }

    /// FAIR with scrambling: bucket 0 of hash 0 through SPS-14 (tofino-model `mau-sbox.cpp`
    /// `MauSbox::sps14`), by hand: S-boxes 3x3(0)=1, 3x3(0)=1, 4x4(0)=8, 4x4(0)=8 give bits
    /// {0,3,9,13}; the first permutation moves them to {6,3,1,13}; S-boxes again (fields 2, 1,
    /// 1, 8 -> 7, 4, 0, 2) give {0,1,2,5,11}; the second permutation gives {2,10,6,11,5} =
    /// 3172. `get_fair_hash_selection_index`: 3172 mod 3 active = 1, the second position.
    /// The compile-time table is SPS-14 itself, value for value.
    #[test]
    fn sps14_table_is_the_scrambler() {
        for x in 0..(1u32 << 14) {
            assert_eq!(u32::from(SPS14_TABLE[x as usize]), SPS14.scramble(x), "{x}");
        }
    }

    #[test]
    fn fair_scrambled_bucket() {
        assert_eq!(SPS14.scramble(0), 3172);
        let alu = SelectorAlu {
            mode: SelectorMode::Fair,
            scramble: true,
        };
        assert_eq!(alu.pick(0, 3, &all), Some(1));
        // With position 1 inactive: 3172 mod 2 = 0, the first active (position 0); then
        // with only position 2 active, that one.
        assert_eq!(alu.pick(0, 3, &|i| i != 1), Some(0));
        assert_eq!(alu.pick(0, 3, &|i| i == 2), Some(2));
        assert_eq!(alu.pick(0, 3, &|_| false), None);
    }

    /// RESILIENT without scrambling (`get_resilient_selection_index`): bucket 0 = 7 tries
    /// 7 mod 5 = 2 (inactive), bucket 1 = 8 tries 8 mod 5 = 3 (active): position 3.
    #[test]
    fn resilient_second_try() {
        let alu = SelectorAlu {
            mode: SelectorMode::Resilient,
            scramble: false,
        };
        let hash = 7 | (8 << 14);
        assert_eq!(alu.pick(hash, 5, &|i| i != 2), Some(3));
        // All active: the first try wins.
        assert_eq!(alu.pick(hash, 5, &all), Some(2));
    }

    /// RESILIENT plan B without scrambling (`get_planB_resilient_selection_index`). All
    /// buckets 0, position 0 inactive: three failed tries. Hash bits 42..51 = v, bits 5..14 = 0
    /// give the 18-bit input v << 9: even positions xor 0, odd ones xor ((v & 7) << 3) << 1,
    /// head = v >> 3. Active {1,2,3} with v = 9 (odd xor 16, head 1) permute to {17,2,19};
    /// nothing at or below bit 1, so the highest, 19, back to 19 ^ 16 = 3. With v = 25 (head
    /// 3), bit 2 is found at or below the head: position 2.
    #[test]
    fn resilient_plan_b() {
        let alu = SelectorAlu {
            mode: SelectorMode::Resilient,
            scramble: false,
        };
        assert_eq!(alu.pick(9u128 << 42, 4, &|i| i != 0), Some(3));
        assert_eq!(alu.pick(25u128 << 42, 4, &|i| i != 0), Some(2));
        assert_eq!(alu.pick(25u128 << 42, 4, &|_| false), None);
    }

    /// The word of a wide group (`rmt_sel_grp_mbr_get_from_hash`): 64 words shift by 2 (64 and
    /// 32 are over 31); h = 0x3ff | 2 << 10 gives ((1023 mod 16) << 2) | 2 = 62.
    #[test]
    fn wide_group_word() {
        let h: u128 = 0x3ff | (2 << 10);
        assert_eq!(word_index(h << 51, 64, false), 62);
        assert_eq!(word_index(h << 51, 1, false), 0);
        assert_eq!(word_index(3 << 51, 2, false), 1);
    }

    /// Each scrambler is a bijection on its width (the S-boxes and permutations are).
    #[test]
    fn scramblers_are_permutations() {
        for (sps, w) in [(&SPS14, 14), (&SPS15, 15), (&SPS18, 18)] {
            let mut seen = vec![false; 1 << w];
            for x in 0..(1u32 << w) {
                let y = sps.scramble(x) as usize;
                assert!(!seen[y], "width {w}: {y} twice");
                seen[y] = true;
            }
        }
    }
}
