//! The stateful ALU's math unit (TNA `MathUnit`): a 16-entry table of 8-bit values indexed by
//! the four bits of the input from its leading one, scaled by a power of two that follows the
//! input's magnitude. It approximates `2^scale · f(x)` for f among x, x², √x, 1/x, 1/x², 1/√x.
//!
//! Hardware behaviour (the Tofino model, as /work/shared/notes/tna-externs.md §6 records it):
//! l is the position of the input's leading one; the exponent e is l (shift 0), 2l (shift 1)
//! or l rounded up to even and halved (shift −1, whose table index is taken at that rounded
//! position); invert negates e; the output is `table[((x << 3) >> l) & 15]` shifted left by
//! `s = e + scale` (right when negative), and 0 when |s| ≥ 32.
//!
//! The constructor forms `(op, factor)` and `(op, A, B)` are filled as bf-p4c fills them
//! (its stateful ALU pass): the largest scale keeping every entry under 256, then entries
//! 8..15 (4..15 for square roots) `rint(f(i/8) · factor · 2^−scale)`, clamped to 0..255.

/// `MathOp_t`: `(invert, shift)` of each named function.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MathOp {
    Mul,
    Sqr,
    Sqrt,
    Div,
    Rsqr,
    Rsqrt,
}

impl MathOp {
    /// The `MathOp_t` member named `name`.
    pub fn from_name(name: &str) -> Option<MathOp> {
        Some(match name {
            "MUL" => MathOp::Mul,
            "SQR" => MathOp::Sqr,
            "SQRT" => MathOp::Sqrt,
            "DIV" => MathOp::Div,
            "RSQR" => MathOp::Rsqr,
            "RSQRT" => MathOp::Rsqrt,
            _ => return None,
        })
    }

    fn invert_shift(self) -> (bool, i8) {
        match self {
            MathOp::Mul => (false, 0),
            MathOp::Sqr => (false, 1),
            MathOp::Sqrt => (false, -1),
            MathOp::Div => (true, 0),
            MathOp::Rsqr => (true, 1),
            MathOp::Rsqrt => (true, -1),
        }
    }

    /// f as bf-p4c tabulates it. Its 1/x² is written `1.0 / x * x`, which is 1: kept, so the
    /// table is the one bf-p4c programs.
    fn f(self, x: f64) -> f64 {
        match self {
            MathOp::Mul => x,
            MathOp::Sqr => x * x,
            MathOp::Sqrt => x.sqrt(),
            MathOp::Div => 1.0 / x,
            MathOp::Rsqr => 1.0 / x * x,
            MathOp::Rsqrt => 1.0 / x.sqrt(),
        }
    }

    /// The largest f over the inputs the table covers (i/8 for i in 4..16 or 8..16).
    fn f_max(self) -> f64 {
        match self {
            MathOp::Mul => 1.875,
            MathOp::Sqr => 3.515625,
            MathOp::Sqrt => 1.369_306_393_762_915_3,
            MathOp::Div | MathOp::Rsqr => 1.0,
            MathOp::Rsqrt => std::f64::consts::SQRT_2,
        }
    }
}

/// One configured math unit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MathUnit {
    pub invert: bool,
    /// −1, 0 or 1.
    pub shift: i8,
    /// −32..=31.
    pub scale: i8,
    /// Entry i (the constructor's tuple lists entry 15 first).
    pub table: [u8; 16],
}

impl MathUnit {
    /// `MathUnit(op, factor)` (`divisor` 1) or `MathUnit(op, A, B)` (`factor` A, `divisor` B),
    /// filled as bf-p4c does; `None` for a zero divisor. The second value says the scale was
    /// capped to its range (bf-p4c warns).
    pub fn from_op(op: MathOp, factor: u64, divisor: u64) -> Option<(MathUnit, bool)> {
        if divisor == 0 {
            return None;
        }
        let (invert, shift) = op.invert_shift();
        let mut val = factor as f64 / divisor as f64;
        let wanted = (val * op.f_max()).log2().floor() - 7.0;
        let scale = wanted.clamp(-32.0, 31.0);
        let capped = scale != wanted;
        val *= (-scale).exp2();
        let mut table = [0u8; 16];
        let first = if shift >= 0 { 8 } else { 4 };
        for (i, t) in table.iter_mut().enumerate().skip(first) {
            *t = (op.f(i as f64 / 8.0) * val)
                .round_ties_even()
                .clamp(0.0, 255.0) as u8;
        }
        Some((
            MathUnit {
                invert,
                shift,
                scale: scale as i8,
                table,
            },
            capped,
        ))
    }

    /// The unit's output for input `x` (the low `width` bits kept).
    pub fn execute(&self, x: u128, width: u16) -> u128 {
        let l = if x == 0 {
            0
        } else {
            127 - x.leading_zeros() as i32
        };
        let at = if self.shift < 0 && l % 2 == 1 {
            l + 1
        } else {
            l
        };
        let index = ((x << 3) >> at) & 15;
        let e = match self.shift {
            0 => l,
            1 => 2 * l,
            _ => at / 2,
        };
        let s = if self.invert { -e } else { e } + i32::from(self.scale);
        if s.abs() >= 32 {
            return 0;
        }
        let v = u128::from(self.table[index as usize]);
        let out = if s >= 0 { v << s } else { v >> -s };
        out & crate::phv::mask(width)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_multiply_by_a_half_is_filled_and_applied_like_bf_p4c() {
        // factor 1/2: max 0.9375 → scale floor(log2 0.9375) − 7 = −8; entry i = rint(i/8 · 128).
        let (u, capped) = MathUnit::from_op(MathOp::Mul, 1, 2).expect("unit");
        assert!(!capped);
        assert_eq!(u.scale, -8);
        assert_eq!(u.table[8..], [128, 144, 160, 176, 192, 208, 224, 240]);
        assert_eq!(u.table[..8], [0; 8]);
        // 100 = 0b1100100: l = 6, index 0b1100 = 12 → 192 << (6 − 8) = 48 (exactly 50 is
        // not representable in the table's four bits: 96..103 all give 48).
        assert_eq!(u.execute(100, 32), 48);
        assert_eq!(u.execute(1 << 20, 32), 1 << 19);
        assert_eq!(u.execute(0, 32), 0);
    }

    #[test]
    fn square_roots_index_at_the_even_position() {
        let (u, _) = MathUnit::from_op(MathOp::Sqrt, 1, 1).expect("unit");
        // max √(15/8) ≈ 1.369 → scale −7; entries from 4: rint(√(i/8) · 128).
        assert_eq!(u.scale, -7);
        assert_eq!(u.table[4], 91);
        assert_eq!(u.table[8], 128);
        // 64 = 2^6: l even, index 8, e = 3 → 128 << (3 − 7) = 8 = √64.
        assert_eq!(u.execute(64, 32), 8);
        // 32 = 2^5: l odd, rounded to 6, index (256 >> 6) = 4, e = 3 → 91 >> 4 = 5 (√32 ≈ 5.66).
        assert_eq!(u.execute(32, 32), 5);
    }

    #[test]
    fn a_division_shrinks_with_the_input_and_a_large_shift_gives_zero() {
        let (u, _) = MathUnit::from_op(MathOp::Div, 1 << 16, 1).expect("unit");
        // 65536/x: max 65536 → scale 16 − 7 = 9; entry 8 = rint(1 · 2^16 · 2^−9) = 128.
        assert_eq!(u.scale, 9);
        assert_eq!(u.execute(1, 32), 128 << 9);
        assert_eq!(u.execute(256, 32), 128 << 1);
        assert_eq!(u.execute(1 << 20, 32), 0, "128 >> 11 is 0");
        assert!(MathUnit::from_op(MathOp::Div, 1, 0).is_none());
        let tiny = MathUnit {
            invert: true,
            shift: 0,
            scale: -1,
            table: [255; 16],
        };
        assert_eq!(tiny.execute(1 << 31, 32), 0, "|s| = 32");
    }
}
