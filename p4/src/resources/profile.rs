//! Target profiles: what one MAU stage of a Tofino offers, as numbers the placer checks against.
//!
//! Figures and where they come from (see `shared/notes/tofino.md`; [V] = read in bf-p4c's device
//! specs or Intel's TNA application note, [inf] = our inference or a deliberate simplification):
//! - stages per gress: 12 (Tofino1, `TofinoDevice`), 20 (Tofino2, `JBayDevice`) [V];
//! - 16 logical tables per stage, 8 of them ternary at most [V];
//! - SRAM: 80 blocks of 1024 words × 128 b per stage (8 rows × 10 columns) [V];
//! - TCAM: 24 blocks of 512 entries × 44 b per stage [inf: bf-p4c's spec has 12 × 2 commented];
//! - 4 meter/stateful ALUs and 4 statistics ALUs per stage (`METER_ALUS = 4`) [V];
//! - input crossbar: 8 exact groups × 16 B = 128 B for exact match, hash and SALU inputs [V];
//!   66 B for ternary match (12 groups of 5 B plus 6 shared mid-bytes) [inf, bf-p4c's
//!   ternary crossbar layout];
//! - hashing: 8 hash groups with a 52-bit output each [V]; we budget hash *bits* per stage
//!   (8 × 52) rather than modelling group sharing [inf];
//! - gateways: one per logical table (16) [inf], each matching 4 B of PHV plus 12 hash bits [V];
//! - stateful ALU: see [`SaluProfile`];
//! - PHV: see [`PhvProfile`].
//!
//! Tofino2 keeps Tofino1's per-stage memories and crossbar here [inf: the public specs we read
//! only differ in stage count and the SALU].

use pipeline::ir::Target;

/// What a stateful ALU can do (one per register per stage).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SaluProfile {
    /// Widest single memory word in bits (Tofino1: 32; Tofino2: 64) [V: `MaxSize` / dual].
    pub word_bits: u16,
    /// Register widths the hardware stores (a paired register uses two of them).
    pub widths: &'static [u16],
    /// Compare units (conditions) per RegisterAction: Tofino1 2 (lo/hi), Tofino2 4 [V].
    pub compare_units: u32,
    /// Arithmetic instructions (ALUs) per RegisterAction: two per memory word [V].
    pub instructions: u32,
    /// Arithmetic ALUs per memory word (one for each outcome of the condition) [V].
    pub alus_per_word: u32,
    /// PHV inputs (phv_lo / phv_hi) [V].
    pub phv_inputs: u32,
    /// Inline constants: values in `const_min..=const_max` cost nothing [V: −8..7].
    pub const_min: i128,
    pub const_max: i128,
    /// Larger constants come from a small register file [V: "up to 4 constants"].
    pub const_registers: u32,
    /// 32-bit output words: Tofino1 1, Tofino2 4 [V].
    pub output_words: u32,
    /// Whether division / modulo exist (Tofino2's DivMod) [V].
    pub div_mod: bool,
}

/// Gateway (if/else condition) limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GatewayProfile {
    /// PHV bytes a gateway can compare [V: 4 B on Tofino1; Tofino2 assumed the same, inf].
    pub phv_bytes: u32,
    /// Hash bits a gateway can compare [V: 12 on Tofino1].
    pub hash_bits: u32,
}

/// PHV containers, as bits: what a parser can fill for the MAU and the deparser. Each container
/// belongs to one gress (ingress or egress) for the whole program.
///
/// Tofino 1 [V: `shared/notes/tofino.md`, bf-p4c's `TofinoPhvSpec`]: 64 × 32 b, 96 × 16 b and
/// 64 × 8 b MAU containers (groups of 16; the first group of each size is ingress-only, the
/// second egress-only), plus tagalong containers (32 × 32 b, 48 × 16 b, 32 × 8 b) that the
/// parser and deparser use but the MAU cannot read or write.
///
/// Tofino 2 [V: bf-p4c's `JBayPhvSpec` and `JBayPardeSpec`]: per size, groups of 12 normal,
/// 4 mocha and 4 dark containers (4 groups of 32 b, 6 of 16 b, 4 of 8 b), no tagalong ones and
/// no fixed gress. Dark containers are MAU-only (the parser and deparser have no address for
/// them), so the parser fills at most the 64 × 32 b, 96 × 16 b and 64 × 8 b normal and mocha
/// ones. Header fields the MAU does not touch may instead ride in CLOTs: at most 16 live per
/// packet and gress, 64 B each, all inside the first 384 B of the packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PhvProfile {
    /// Bits of the containers both the parser and the MAU use.
    pub mau_bits: u32,
    /// Bits of tagalong containers (parser and deparser only).
    pub tagalong_bits: u32,
    /// Bits of MAU containers reserved to each gress (unusable by the other one).
    pub reserved_bits: u32,
    /// Most header bits a packet carries in CLOTs instead of containers.
    pub clot_bits: u32,
}

impl PhvProfile {
    /// Every container bit a parser can fill, both gresses together.
    pub fn total_bits(&self) -> u32 {
        self.mau_bits + self.tagalong_bits
    }
}

/// Everything the placer needs to know about a target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Profile {
    pub target: Target,
    /// MAU stages per gress.
    pub stages: u8,
    pub logical_tables: u32,
    pub ternary_tables: u32,
    pub gateways: u32,
    pub sram_blocks: u32,
    pub sram_depth: u32,
    pub sram_width: u32,
    pub tcam_blocks: u32,
    pub tcam_depth: u32,
    pub tcam_width: u32,
    /// Meter / stateful ALUs per stage (registers and meters share them).
    pub stateful_alus: u32,
    /// Statistics ALUs per stage (counters).
    pub stats_alus: u32,
    pub exact_xbar_bytes: u32,
    pub ternary_xbar_bytes: u32,
    pub hash_groups: u32,
    pub hash_group_bits: u32,
    /// Widest PHV container an action ALU works on; wider arithmetic needs container pairs.
    pub alu_container_bits: u16,
    pub salu: SaluProfile,
    pub gateway: GatewayProfile,
    pub phv: PhvProfile,
}

impl Profile {
    /// The profile of a target.
    pub fn of(target: Target) -> Profile {
        match target {
            Target::Tofino1 => TOFINO1,
            Target::Tofino2 => TOFINO2,
        }
    }

    /// Hash bits available per stage.
    pub fn hash_bits(&self) -> u32 {
        self.hash_groups * self.hash_group_bits
    }

    pub fn name(&self) -> &'static str {
        self.target.name()
    }
}

/// Intel Tofino (BFN-T10).
pub const TOFINO1: Profile = Profile {
    target: Target::Tofino1,
    stages: 12,
    logical_tables: 16,
    ternary_tables: 8,
    gateways: 16,
    sram_blocks: 80,
    sram_depth: 1024,
    sram_width: 128,
    tcam_blocks: 24,
    tcam_depth: 512,
    tcam_width: 44,
    stateful_alus: 4,
    stats_alus: 4,
    exact_xbar_bytes: 128,
    ternary_xbar_bytes: 66,
    hash_groups: 8,
    hash_group_bits: 52,
    alu_container_bits: 32,
    salu: SaluProfile {
        word_bits: 32,
        widths: &[1, 8, 16, 32],
        compare_units: 2,
        instructions: 4,
        alus_per_word: 2,
        phv_inputs: 2,
        const_min: -8,
        const_max: 7,
        const_registers: 4,
        output_words: 1,
        div_mod: false,
    },
    gateway: GatewayProfile {
        phv_bytes: 4,
        hash_bits: 12,
    },
    phv: PhvProfile {
        mau_bits: 64 * 32 + 96 * 16 + 64 * 8,
        tagalong_bits: 32 * 32 + 48 * 16 + 32 * 8,
        reserved_bits: 16 * 32 + 16 * 16 + 16 * 8,
        clot_bits: 0,
    },
};

/// Intel Tofino2 (JBay).
pub const TOFINO2: Profile = Profile {
    target: Target::Tofino2,
    stages: 20,
    salu: SaluProfile {
        word_bits: 64,
        widths: &[1, 8, 16, 32, 64],
        compare_units: 4,
        output_words: 4,
        div_mod: true,
        ..TOFINO1.salu
    },
    phv: PhvProfile {
        mau_bits: (48 + 16) * 32 + (72 + 24) * 16 + (48 + 16) * 8,
        tagalong_bits: 0,
        reserved_bits: 0,
        clot_bits: 384 * 8,
    },
    ..TOFINO1
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profiles_agree_with_the_ir_targets() {
        for t in [Target::Tofino1, Target::Tofino2] {
            assert_eq!(Profile::of(t).stages, t.stages());
            assert_eq!(Profile::of(t).target, t);
        }
        assert_eq!(TOFINO1.hash_bits(), 416);
        assert!(!Profile::of(Target::Tofino1).salu.div_mod);
        assert!(Profile::of(Target::Tofino2).salu.div_mod);
        assert_eq!(TOFINO1.phv.total_bits(), 6144);
        assert_eq!(TOFINO2.phv.total_bits(), 4096);
    }
}
