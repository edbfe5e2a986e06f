//! Expression evaluation with exact P4 semantics: every result is masked to its width; signed
//! (`int<W>`) operands are the low `W` bits in two's complement; saturating ops clamp; shifts by
//! the width or more give 0 (or the sign for an arithmetic right shift).

use super::{Ctx, ExecResult, Fault, ProgramError};
use crate::externs::meter::MeterColor;
use crate::ir::{BinOp, Expr, FieldRef, FilterKind, Pipeline, RegWord, Stmt, UnOp, Value};
use crate::phv::{mask, pack_bits, read_bits};
use crate::state::wrap_index;
use crate::trace::Tracer;

/// Sign-extend the low `width` bits of `v` to an `i128`.
#[inline]
pub fn sext(v: Value, width: u16) -> i128 {
    if width == 0 {
        return 0;
    }
    if width >= 128 {
        return v as i128;
    }
    let shift = 128 - width as u32;
    ((v << shift) as i128) >> shift
}

/// Apply a binary operator to two already-evaluated operands.
/// `w` is the result width, `ow` the operand width (they differ for comparisons).
pub fn binop(op: BinOp, a: Value, b: Value, w: u16, ow: u16, signed: bool) -> Value {
    let m = mask(w);
    match op {
        BinOp::Add => a.wrapping_add(b) & m,
        BinOp::Sub => a.wrapping_sub(b) & m,
        BinOp::Mul => a.wrapping_mul(b) & m,
        BinOp::SatAdd => {
            if signed {
                let (lo, hi) = signed_bounds(w);
                (sext(a, w).saturating_add(sext(b, w)).clamp(lo, hi) as Value) & m
            } else {
                let s = a.saturating_add(b);
                if s > m {
                    m
                } else {
                    s
                }
            }
        }
        BinOp::SatSub => {
            if signed {
                let (lo, hi) = signed_bounds(w);
                (sext(a, w).saturating_sub(sext(b, w)).clamp(lo, hi) as Value) & m
            } else {
                a.saturating_sub(b) & m
            }
        }
        BinOp::Div => a.checked_div(b).unwrap_or(0) & m,
        BinOp::Mod => a.checked_rem(b).unwrap_or(0) & m,
        BinOp::And => a & b & m,
        BinOp::Or => (a | b) & m,
        BinOp::Xor => (a ^ b) & m,
        BinOp::Shl => {
            if b >= w as Value {
                0
            } else {
                (a << b) & m
            }
        }
        BinOp::Shr => {
            if signed {
                let s = sext(a, w);
                let sh = if b >= w as Value {
                    (w.max(1) - 1) as u32
                } else {
                    b as u32
                };
                ((s >> sh) as Value) & m
            } else if b >= w as Value {
                0
            } else {
                (a & m) >> b
            }
        }
        BinOp::Eq => (a & mask(ow) == b & mask(ow)) as Value,
        BinOp::Ne => (a & mask(ow) != b & mask(ow)) as Value,
        BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => {
            let ord = if signed {
                sext(a, ow).cmp(&sext(b, ow))
            } else {
                (a & mask(ow)).cmp(&(b & mask(ow)))
            };
            let r = match op {
                BinOp::Lt => ord.is_lt(),
                BinOp::Le => ord.is_le(),
                BinOp::Gt => ord.is_gt(),
                _ => ord.is_ge(),
            };
            r as Value
        }
        BinOp::LAnd => (a != 0 && b != 0) as Value,
        BinOp::LOr => (a != 0 || b != 0) as Value,
        BinOp::Min | BinOp::Max => {
            let a_lt_b = if signed {
                sext(a, w) < sext(b, w)
            } else {
                (a & m) < (b & m)
            };
            let pick_a = if op == BinOp::Min { a_lt_b } else { !a_lt_b };
            (if pick_a { a } else { b }) & m
        }
    }
}

fn signed_bounds(w: u16) -> (i128, i128) {
    if w == 0 {
        return (0, 0);
    }
    if w >= 128 {
        return (i128::MIN, i128::MAX);
    }
    let hi = (1i128 << (w - 1)) - 1;
    (-hi - 1, hi)
}

/// The ones'-complement 16-bit sum of `bytes` (odd length padded with a zero byte), folded.
pub fn ones_sum(bytes: &[u8]) -> u32 {
    let mut s: u32 = 0;
    for pair in bytes.chunks(2) {
        let w = (pair[0] as u32) << 8 | pair.get(1).copied().unwrap_or(0) as u32;
        s = ones_add(s, w);
    }
    s
}

/// The ones'-complement 16-bit sum of values concatenated MSB-first at their widths (a trailing
/// partial word is zero-padded), without materialising the bytes.
pub fn ones_sum_parts(parts: impl Iterator<Item = (Value, u16)>) -> u32 {
    let mut s = OnesSum::default();
    for (value, width) in parts {
        s.push(value, width);
    }
    s.finish()
}

/// A streaming ones'-complement sum over values concatenated MSB-first at their widths.
///
/// 16-bit words are added into a 64-bit total and folded once at the end: the folded result is
/// the same as folding after every addition (both are the unique value in `1..=0xffff`
/// congruent to the total mod `0xffff`, or 0 when every word is 0).
#[derive(Debug, Default, Clone, Copy)]
pub struct OnesSum {
    /// Bits not yet summed sit in the low `pending` bits (< 16 between pushes); bits above
    /// them are stale and never read again.
    acc: u64,
    pending: u32,
    total: u64,
}

impl OnesSum {
    /// Append the low `width` bits of `value` (widths above 128 count as 128).
    #[inline]
    pub fn push(&mut self, value: Value, width: u16) {
        let width = u32::from(width.min(128));
        if width <= 48 {
            self.push_small(value as u64, width);
        } else {
            let mut left = width;
            while left > 0 {
                let take = left.min(32);
                self.push_small((value >> (left - take)) as u64, take);
                left -= take;
            }
        }
    }

    /// Append whole bytes. With no bits pending and an even byte count this adds the
    /// big-endian 16-bit words straight to the total, eight bytes per step; otherwise it
    /// pushes them one by one.
    #[inline]
    pub fn push_bytes(&mut self, bytes: &[u8]) {
        if self.pending != 0 || !bytes.len().is_multiple_of(2) {
            for b in bytes {
                self.push_small(u64::from(*b), 8);
            }
            return;
        }
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            let x = u64::from_be_bytes(w);
            self.total += (x >> 48) + ((x >> 32) & 0xffff) + ((x >> 16) & 0xffff) + (x & 0xffff);
        }
        for pair in chunks.remainder().chunks_exact(2) {
            self.total += u64::from(u16::from_be_bytes([pair[0], pair[1]]));
        }
    }

    /// `width` ≤ 48, so `pending + width` < 64 and nothing is shifted out unread.
    #[inline(always)]
    fn push_small(&mut self, v: u64, width: u32) {
        if width == 0 {
            return;
        }
        let v = v & (u64::MAX >> (64 - width));
        self.acc = (self.acc << width) | v;
        self.pending += width;
        while self.pending >= 16 {
            self.pending -= 16;
            self.total += (self.acc >> self.pending) & 0xffff;
        }
    }

    /// The folded sum (a trailing partial word is zero-padded).
    #[inline]
    pub fn finish(self) -> u32 {
        let mut t = self.total;
        if self.pending > 0 {
            t += (self.acc << (16 - self.pending)) & 0xffff;
        }
        while t > 0xffff {
            t = (t & 0xffff) + (t >> 16);
        }
        t as u32
    }
}

/// Add two ones'-complement 16-bit sums.
#[inline]
pub fn ones_add(a: u32, b: u32) -> u32 {
    let mut s = a + b;
    while s > 0xffff {
        s = (s & 0xffff) + (s >> 16);
    }
    s
}

/// Does any statement of `body` (or any action, register action it can reach) read `f`?
/// Used once at assembly to learn whether a control inspects `parser_err`.
pub fn reads_field(pl: &Pipeline, body: &[Stmt], f: FieldRef) -> bool {
    let mut seen_actions = vec![false; pl.actions.len()];
    reads_block(pl, body, f, &mut seen_actions)
}

fn overlaps(a: FieldRef, b: FieldRef) -> bool {
    let (a0, a1) = (a.offset, a.offset + a.width as u32);
    let (b0, b1) = (b.offset, b.offset + b.width as u32);
    a0 < b1 && b0 < a1
}

fn reads_block(pl: &Pipeline, body: &[Stmt], f: FieldRef, seen: &mut Vec<bool>) -> bool {
    body.iter().any(|s| reads_stmt(pl, s, f, seen))
}

fn reads_action(pl: &Pipeline, a: crate::ir::ActionId, f: FieldRef, seen: &mut Vec<bool>) -> bool {
    match seen.get(a.index()) {
        Some(false) => {
            seen[a.index()] = true;
            pl.actions
                .get(a.index())
                .is_some_and(|act| reads_block(pl, &act.body, f, seen))
        }
        _ => false,
    }
}

fn reads_stmt(pl: &Pipeline, s: &Stmt, f: FieldRef, seen: &mut Vec<bool>) -> bool {
    use crate::ir::TableBranches;
    let e = |x: &Expr, seen: &mut Vec<bool>| reads_expr(pl, x, f, seen);
    match s {
        Stmt::Assign { value, .. } => e(value, seen),
        Stmt::If {
            cond, then, els, ..
        } => e(cond, seen) || reads_block(pl, then, f, seen) || reads_block(pl, els, f, seen),
        Stmt::ApplyTable { table, branches } => {
            let Some(t) = pl.tables.get(table.index()) else {
                return false;
            };
            t.keys.iter().any(|k| e(&k.expr, seen))
                || t.actions
                    .iter()
                    .any(|a| reads_action(pl, a.action, f, seen))
                || match branches {
                    TableBranches::None => false,
                    TableBranches::HitMiss { hit, miss } => {
                        reads_block(pl, hit, f, seen) || reads_block(pl, miss, f, seen)
                    }
                    TableBranches::ActionRun { cases, default } => {
                        cases.iter().any(|(_, b)| reads_block(pl, b, f, seen))
                            || reads_block(pl, default, f, seen)
                    }
                }
        }
        Stmt::CallAction { action, args } => {
            args.iter().any(|a| e(a, seen)) || reads_action(pl, *action, f, seen)
        }
        Stmt::Count { index, .. } => e(index, seen),
        Stmt::RegisterExecute { action, index, .. } => {
            e(index, seen)
                || pl
                    .register_actions
                    .get(action.index())
                    .is_some_and(|ra| ra.bodies().any(|b| reads_block(pl, b, f, seen)))
        }
        Stmt::Advance(x) => e(x, seen),
        Stmt::CounterRange { cond } => e(cond, seen),
        Stmt::ChecksumAdd { inputs, .. }
        | Stmt::ChecksumSubtract { inputs, .. }
        | Stmt::ResubmitEmit { header: inputs }
        | Stmt::PktgenEmit { header: inputs }
        | Stmt::DigestPack { fields: inputs, .. } => inputs.iter().any(|x| e(x, seen)),
        Stmt::MirrorEmit { session, header } => {
            e(session, seen) || header.iter().any(|x| e(x, seen))
        }
        _ => false,
    }
}

fn reads_expr(pl: &Pipeline, x: &Expr, f: FieldRef, seen: &mut Vec<bool>) -> bool {
    match x {
        Expr::Field(g) => overlaps(*g, f),
        Expr::Unary { arg, .. } | Expr::Slice { arg, .. } | Expr::Cast { arg, .. } => {
            reads_expr(pl, arg, f, seen)
        }
        Expr::Binary { a, b, .. } => reads_expr(pl, a, f, seen) || reads_expr(pl, b, f, seen),
        Expr::Concat { hi, lo, .. } => reads_expr(pl, hi, f, seen) || reads_expr(pl, lo, f, seen),
        Expr::Ternary {
            cond, then, els, ..
        } => {
            reads_expr(pl, cond, f, seen)
                || reads_expr(pl, then, f, seen)
                || reads_expr(pl, els, f, seen)
        }
        Expr::RegisterExecute { action, index, .. } => {
            reads_expr(pl, index, f, seen)
                || pl
                    .register_actions
                    .get(action.index())
                    .is_some_and(|ra| ra.bodies().any(|b| reads_block(pl, b, f, seen)))
        }
        Expr::Hash { inputs, .. } | Expr::ChecksumUpdate { inputs, .. } => {
            inputs.iter().any(|i| reads_expr(pl, i, f, seen))
        }
        Expr::MeterExecute { index, color, .. } => {
            index.as_deref().is_some_and(|i| reads_expr(pl, i, f, seen))
                || color.as_deref().is_some_and(|i| reads_expr(pl, i, f, seen))
        }
        Expr::FilterExecute { value, index, .. } => {
            reads_expr(pl, value, f, seen)
                || index.as_deref().is_some_and(|i| reads_expr(pl, i, f, seen))
        }
        Expr::MathUnit { input, .. } => reads_expr(pl, input, f, seen),
        Expr::SaluPredicate { conds, .. } => conds.iter().any(|c| reads_expr(pl, c, f, seen)),
        Expr::MinMax { value, mask, .. } => {
            reads_expr(pl, value, f, seen) || reads_expr(pl, mask, f, seen)
        }
        _ => false,
    }
}

impl<T: Tracer> Ctx<'_, T> {
    /// Width of `e`, resolving the widths the IR leaves to the executor (register words/params).
    pub fn width_of(&self, e: &Expr) -> u16 {
        match e {
            Expr::RegValue(_) | Expr::RegInput(_) => self.reg.map(|r| r.width).unwrap_or(0),
            Expr::RegisterParam(p) => self
                .pl
                .register_params
                .get(p.index())
                .map(|p| p.width)
                .unwrap_or(0),
            _ => e.width(),
        }
    }

    /// Evaluate `e` with `params` as the running action's data.
    pub fn eval(&mut self, e: &Expr, params: &[Value]) -> ExecResult<Value> {
        Ok(match e {
            Expr::Const { value, width } => value & mask(*width),
            Expr::Field(f) => self.phv.get(*f),
            Expr::Valid(h) => self.phv.is_valid(h.index()) as Value,
            Expr::Param { index, width } => {
                params.get(*index as usize).copied().unwrap_or(0) & mask(*width)
            }
            Expr::Unary { op, arg, width } => {
                let a = self.eval(arg, params)?;
                match op {
                    UnOp::Not => !a & mask(*width),
                    UnOp::Neg => a.wrapping_neg() & mask(*width),
                    UnOp::LNot => (a == 0) as Value,
                }
            }
            Expr::Binary {
                op,
                a,
                b,
                width,
                signed,
            } => {
                let av = self.eval(a, params)?;
                // Short-circuit the logical operators as P4 does.
                match op {
                    BinOp::LAnd if av == 0 => return Ok(0),
                    BinOp::LOr if av != 0 => return Ok(1),
                    _ => {}
                }
                let bv = self.eval(b, params)?;
                let ow = match op {
                    BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => {
                        self.width_of(a).max(self.width_of(b))
                    }
                    _ => *width,
                };
                binop(*op, av, bv, *width, ow, *signed)
            }
            Expr::Slice { arg, hi, lo } => {
                let a = self.eval(arg, params)?;
                if *hi < *lo {
                    0
                } else {
                    (a >> *lo) & mask(hi - lo + 1)
                }
            }
            Expr::Concat { hi, lo, width } => {
                let h = self.eval(hi, params)?;
                let l = self.eval(lo, params)?;
                let lw = self.width_of(lo) as u32;
                (h.checked_shl(lw).unwrap_or(0) | (l & mask(lw as u16))) & mask(*width)
            }
            Expr::Cast {
                arg,
                width,
                sign_extend,
            } => {
                let a = self.eval(arg, params)?;
                let aw = self.width_of(arg);
                if *sign_extend && *width > aw {
                    (sext(a, aw) as Value) & mask(*width)
                } else {
                    a & mask(*width)
                }
            }
            Expr::Ternary {
                cond,
                then,
                els,
                width,
            } => {
                if self.eval(cond, params)? != 0 {
                    self.eval(then, params)? & mask(*width)
                } else {
                    self.eval(els, params)? & mask(*width)
                }
            }
            Expr::Lookahead { offset_bits, width } => {
                if !self.in_parser {
                    return Err(Fault::program(ProgramError::ParserOnly));
                }
                let start = self.cursor + *offset_bits as u64;
                let end = start + *width as u64;
                if end > self.input.len() as u64 * 8 {
                    return Err(Fault::Parser(super::ParserFault::PacketTooShort));
                }
                read_bits(self.input, start as u32, *width)
            }
            Expr::RegValue(word) => match self.reg {
                Some(r) => match word {
                    RegWord::Lo => r.lo,
                    RegWord::Hi => r.hi,
                },
                None => return Err(Fault::program(ProgramError::RegValueOutsideSalu)),
            },
            Expr::RegInput(word) => match self.reg {
                Some(r) => match word {
                    RegWord::Lo => r.mem_lo,
                    RegWord::Hi => r.mem_hi,
                },
                None => return Err(Fault::program(ProgramError::RegValueOutsideSalu)),
            },
            Expr::RegisterParam(p) => self.rt.register_params.get(p.index()).copied().unwrap_or(0),
            Expr::RegisterExecute {
                action,
                index,
                width,
            } => self.register_execute(*action, index, params)? & mask(*width),
            Expr::Hash {
                hash,
                inputs,
                width,
            } => self.hash(hash.index(), inputs, *width, params)?,
            Expr::Random { width } => self.rt.rng.bits(*width) & mask(*width),
            Expr::MinMax {
                max,
                lane,
                value,
                mask: m,
                index,
            } => {
                let v = self.eval(value, params)?;
                let bits = self.eval(m, params)?;
                super::salu::min_max(*max, *lane, v, bits, *index)
            }
            Expr::SaluPredicate { conds, width } => {
                let mut hit = 0u32;
                for (k, c) in conds.iter().enumerate() {
                    if self.eval(c, params)? & 1 != 0 {
                        hit |= 1 << k;
                    }
                }
                super::salu::predicate_output(hit, *width)
            }
            Expr::SaluAddress { width } => self.reg.as_ref().map_or(0, |r| r.addr) & mask(*width),
            Expr::SaluCounter { .. } => {
                return Err(Fault::program(ProgramError::SaluCounterOutsideExecute))
            }
            Expr::MathUnit { unit, input, width } => {
                let x = self.eval(input, params)?;
                unit.execute(x & mask(*width), *width)
            }
            Expr::MeterExecute {
                meter,
                index,
                color,
            } => self.meter_execute(meter.index(), index.as_deref(), color.as_deref(), params)?,
            Expr::FilterExecute {
                filter,
                value,
                index,
                width,
            } => self.filter_execute(filter.index(), value, index.as_deref(), *width, params)?,
            Expr::ChecksumVerify(c) => {
                // Tofino's parser checksum unit reports an error (1) when the ones'-complement
                // sum over the verified data is not all ones.
                let s = self.scratch.csum.get(c.index()).copied().unwrap_or(0);
                (s != 0xffff) as Value
            }
            Expr::ChecksumGet(c) => self.scratch.csum.get(c.index()).copied().unwrap_or(0) as Value,
            Expr::ChecksumUpdate { inputs, .. } => self.checksum_update(inputs, params)?,
        })
    }

    #[inline(never)]
    fn checksum_update(&mut self, inputs: &[Expr], params: &[Value]) -> ExecResult<Value> {
        Ok((!self.ones_sum_inputs(inputs, params)? & 0xffff) as Value)
    }

    /// The ones'-complement sum of `inputs` concatenated at their widths.
    pub(crate) fn ones_sum_inputs(&mut self, inputs: &[Expr], params: &[Value]) -> ExecResult<u32> {
        let mut sum = OnesSum::default();
        // Runs of PHV fields that lie back to back (a header's fields, as `Checksum.add(hdr)`
        // and `update({..})` list them) are read in wide pieces instead of field by field.
        let mut run: Option<(u32, u32)> = None; // (start bit, width in bits)
        for i in inputs {
            // (Fields over 128 bits keep the one-value path, which truncates them to 128.)
            if let Expr::Field(f @ FieldRef { width: 0..=128, .. }) = i {
                match &mut run {
                    Some((start, w)) if *start + *w == f.offset => *w += u32::from(f.width),
                    _ => {
                        if let Some((start, w)) = run {
                            self.sum_run(&mut sum, start, w);
                        }
                        run = Some((f.offset, u32::from(f.width)));
                    }
                }
                continue;
            }
            if let Some((start, w)) = run.take() {
                self.sum_run(&mut sum, start, w);
            }
            let v = self.eval(i, params)?;
            sum.push(v, self.width_of(i));
        }
        if let Some((start, w)) = run {
            self.sum_run(&mut sum, start, w);
        }
        Ok(sum.finish())
    }

    /// Add `width` PHV bits from bit `start` to `sum`, 48 bits at a time.
    #[inline]
    fn sum_run(&self, sum: &mut OnesSum, start: u32, width: u32) {
        let mut off = start;
        let end = start + width;
        while off < end {
            let take = (end - off).min(48) as u16;
            let v = self.phv.get(FieldRef {
                offset: off,
                width: take,
            });
            sum.push(v, take);
            off += u32::from(take);
        }
    }

    /// Evaluate `inputs` and pack them MSB-first into `scratch.bytes`.
    #[inline(never)]
    pub fn pack_inputs(&mut self, inputs: &[Expr], params: &[Value]) -> ExecResult<u32> {
        // Evaluate first (inputs may themselves use the scratch buffer), then pack.
        let mut vals: smallvec::SmallVec<[(Value, u16); 16]> = smallvec::SmallVec::new();
        for i in inputs {
            let v = self.eval(i, params)?;
            vals.push((v, self.width_of(i)));
        }
        self.scratch.bytes.clear();
        Ok(pack_bits(&mut self.scratch.bytes, vals.into_iter()))
    }

    #[inline(never)]
    fn hash(
        &mut self,
        id: usize,
        inputs: &[Expr],
        width: u16,
        params: &[Value],
    ) -> ExecResult<Value> {
        if !matches!(self.eng.hashers.get(id), Some(Some(_))) {
            return Err(Fault::program(ProgramError::BadReference("hash")));
        }
        // Evaluate first (an input may itself hash), then fill the bit string.
        let mut vals: smallvec::SmallVec<[(Value, u16); 16]> = smallvec::SmallVec::new();
        for i in inputs {
            let v = self.eval(i, params)?;
            vals.push((v, self.width_of(i)));
        }
        Ok(self.hash_values(id, &vals)? & mask(width))
    }

    /// Hasher `id` over `vals` (each value at its width, concatenated), unmasked: the tree
    /// interpreter's, the flat engine's and native code's hash.
    pub(crate) fn hash_values(&mut self, id: usize, vals: &[(Value, u16)]) -> ExecResult<Value> {
        let Some(Some(hasher)) = self.eng.hashers.get(id) else {
            return Err(Fault::program(ProgramError::BadReference("hash")));
        };
        let bits = &mut self.scratch.bits;
        bits.clear();
        for &(v, w) in vals {
            bits.push(v, w);
        }
        Ok(hasher.get(bits, &mut self.rt.rng))
    }

    #[inline(never)]
    fn filter_execute(
        &mut self,
        id: usize,
        value: &Expr,
        index: Option<&Expr>,
        width: u16,
        params: &[Value],
    ) -> ExecResult<Value> {
        let pl = self.pl;
        let Some(f) = pl.filters.get(id) else {
            return Err(Fault::program(ProgramError::BadReference("filter")));
        };
        let x = self.eval(value, params)?;
        let idx = match (f.direct_table, index) {
            // A direct filter on a miss (no entry) filters nothing: its input, or no drop.
            (Some(_), _) => self.entry.get().map(|h| h.index() as u32),
            (None, Some(e)) => {
                let v = self.eval(e, params)?;
                let (i, wrapped) = wrap_index(v, f.size);
                self.stats.index_wraps += wrapped as u64;
                Some(i)
            }
            (None, None) => Some(0),
        };
        let now = self.now;
        let rt = &mut *self.rt;
        let cells = rt.filters.get_mut(id);
        Ok(match f.kind {
            FilterKind::Lpf => match (cells, idx) {
                (Some(c), Some(i)) => c.lpf(i, x, now) & mask(width),
                _ => x & mask(width),
            },
            FilterKind::Wred {
                drop_value,
                no_drop_value,
            } => {
                let drop = match (cells, idx) {
                    (Some(c), Some(i)) => c.wred(i, x, now, &mut rt.rng),
                    _ => false,
                };
                Value::from(if drop { drop_value } else { no_drop_value })
            }
        })
    }

    fn meter_execute(
        &mut self,
        id: usize,
        index: Option<&Expr>,
        color: Option<&Expr>,
        params: &[Value],
    ) -> ExecResult<Value> {
        let index = index.map(|e| move |c: &mut Self| c.eval(e, params));
        let color = color.map(|e| move |c: &mut Self| c.eval(e, params));
        self.meter_with(id, index, color)
    }

    /// `meter.execute(index[, color])` of meter `id`, every engine's: `index` gives the
    /// index's value (asked for an indexed meter only; a direct meter uses the running
    /// entry, and on a miss meters nothing: GREEN, `color` not asked), then `color` the
    /// pre-colour's. Answers the colour in the program's encoding.
    pub(crate) fn meter_with<I, C>(
        &mut self,
        id: usize,
        index: Option<I>,
        color: Option<C>,
    ) -> ExecResult<Value>
    where
        I: FnOnce(&mut Self) -> ExecResult<Value>,
        C: FnOnce(&mut Self) -> ExecResult<Value>,
    {
        let pl = self.pl;
        let Some(m) = pl.meters.get(id) else {
            return Err(Fault::program(ProgramError::BadReference("meter")));
        };
        let idx = match (m.direct_table, index) {
            // A direct meter on a miss (no entry) meters nothing: GREEN.
            (Some(_), _) => match self.entry.get() {
                Some(h) => h.index() as u32,
                None => return Ok(Value::from(m.colors.green)),
            },
            (None, Some(e)) => {
                let v = e(self)?;
                let (i, wrapped) = wrap_index(v, m.size);
                self.stats.index_wraps += wrapped as u64;
                i
            }
            (None, None) => 0,
        };
        let pre = match color {
            Some(c) => Some(MeterColor::from_value((c(self)? & 0xff) as u8)),
            None => None,
        };
        // The meter array applies its byte count adjustment (compile-time or set at run time).
        let (now, len) = (self.now, self.pkt_len);
        let true_egress = m.bytes.true_egress && self.gress == crate::ir::Gress::Egress;
        let color = match self.rt.meters.get_mut(id) {
            // True egress accounting: coloured now (by the length egress received), charged
            // with the length the egress deparser sends.
            Some(arr) if true_egress => {
                let color = arr.decide(idx, now, len, pre);
                self.effects.true_egress.push(super::TrueEgress::Meter {
                    meter: id as u32,
                    index: idx,
                    color,
                });
                color
            }
            Some(arr) => arr.execute(idx, now, len, pre),
            None => MeterColor::Green,
        };
        // The program's colour encoding (TNA's defaults unless the constructor gave others).
        let c = m.colors;
        Ok(Value::from(match color {
            MeterColor::Green => c.green,
            MeterColor::Yellow => c.yellow,
            MeterColor::Red => c.red,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_wraps_to_width() {
        assert_eq!(binop(BinOp::Add, 0xff, 1, 8, 8, false), 0);
        assert_eq!(binop(BinOp::Sub, 0, 1, 8, 8, false), 0xff);
        assert_eq!(binop(BinOp::Mul, 0x10, 0x10, 8, 8, false), 0);
    }

    #[test]
    fn saturating_ops_unsigned_and_signed() {
        assert_eq!(binop(BinOp::SatAdd, 250, 10, 8, 8, false), 255);
        assert_eq!(binop(BinOp::SatSub, 5, 10, 8, 8, false), 0);
        // int<8>: 120 + 10 saturates to 127; -120 - 10 to -128.
        assert_eq!(binop(BinOp::SatAdd, 120, 10, 8, 8, true), 127);
        assert_eq!(
            binop(BinOp::SatSub, (-120i8) as u8 as Value, 10, 8, 8, true),
            0x80
        );
        assert_eq!(
            binop(BinOp::SatAdd, (-3i8) as u8 as Value, 1, 8, 8, true),
            0xfe
        );
    }

    #[test]
    fn shifts_at_or_past_width() {
        assert_eq!(binop(BinOp::Shl, 1, 8, 8, 8, false), 0);
        assert_eq!(binop(BinOp::Shl, 1, 7, 8, 8, false), 0x80);
        assert_eq!(binop(BinOp::Shr, 0x80, 9, 8, 8, false), 0);
        assert_eq!(binop(BinOp::Shr, 0x80, 2, 8, 8, true), 0xe0);
        assert_eq!(binop(BinOp::Shr, 0x80, 100, 8, 8, true), 0xff);
        assert_eq!(binop(BinOp::Shr, 0x40, 100, 8, 8, true), 0);
    }

    #[test]
    fn signed_and_unsigned_comparisons() {
        assert_eq!(binop(BinOp::Lt, 0xff, 1, 1, 8, false), 0);
        assert_eq!(binop(BinOp::Lt, 0xff, 1, 1, 8, true), 1);
        assert_eq!(binop(BinOp::Ge, 0x7f, 0x80, 1, 8, true), 1);
        assert_eq!(binop(BinOp::Eq, 0x1ff, 0xff, 1, 8, false), 1);
        assert_eq!(binop(BinOp::Min, 0xff, 1, 8, 8, true), 0xff);
        assert_eq!(binop(BinOp::Max, 0xff, 1, 8, 8, false), 0xff);
    }

    #[test]
    fn division_by_zero_is_zero() {
        assert_eq!(binop(BinOp::Div, 7, 0, 8, 8, false), 0);
        assert_eq!(binop(BinOp::Mod, 7, 0, 8, 8, false), 0);
        assert_eq!(binop(BinOp::Div, 7, 2, 8, 8, false), 3);
    }

    #[test]
    fn ones_complement_sum_folds_carries() {
        assert_eq!(ones_sum(&[0xff, 0xff, 0x00, 0x01]), 0x0001);
        assert_eq!(ones_sum(&[0x12, 0x34, 0x56]), 0x1234 + 0x5600);
        assert_eq!(ones_add(0xffff, 0xffff), 0xffff);
    }

    #[test]
    fn streaming_checksum_matches_packed_bytes() {
        let mut seed = 0x1234_5678_9abc_def0u64;
        for _ in 0..500 {
            let parts: Vec<(Value, u16)> = (0..(seed % 9) as usize)
                .map(|_| {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    let w = (seed % 128) as u16 + 1;
                    ((seed as Value) << 64 | (seed.rotate_left(17) as Value), w)
                })
                .collect();
            let mut bytes = Vec::new();
            pack_bits(&mut bytes, parts.iter().copied());
            assert_eq!(
                ones_sum_parts(parts.iter().copied()),
                ones_sum(&bytes),
                "{parts:?}"
            );
        }
    }

    #[test]
    fn folding_once_at_the_end_keeps_zero_and_all_ones_apart() {
        // All-zero words sum to 0; a nonzero total that is a multiple of 0xffff gives 0xffff.
        assert_eq!(ones_sum_parts([(0, 16u16), (0, 16)].into_iter()), 0);
        assert_eq!(
            ones_sum_parts([(0xffff, 16u16), (0, 16)].into_iter()),
            0xffff
        );
        assert_eq!(
            ones_sum_parts([(0xfffe, 16u16), (1, 16)].into_iter()),
            0xffff
        );
        assert_eq!(ones_sum_parts([(0xffff, 16u16), (1, 16)].into_iter()), 1);
        let many = std::iter::repeat_n((0xffff_ffff_ffffu128, 48u16), 1000);
        assert_eq!(ones_sum_parts(many), 0xffff);
    }

    #[test]
    fn byte_pushes_match_value_pushes() {
        let mut seed = 0x0bad_cafe_1234_5678u64;
        for n in 0..40usize {
            for lead in [0u16, 3, 8, 16] {
                let bytes: Vec<u8> = (0..n)
                    .map(|_| {
                        seed ^= seed << 13;
                        seed ^= seed >> 7;
                        seed ^= seed << 17;
                        seed as u8
                    })
                    .collect();
                let mut a = OnesSum::default();
                let mut b = OnesSum::default();
                a.push(0x5a5a, lead);
                b.push(0x5a5a, lead);
                a.push_bytes(&bytes);
                for x in &bytes {
                    b.push(Value::from(*x), 8);
                }
                assert_eq!(a.finish(), b.finish(), "{n} bytes after {lead} bits");
            }
        }
    }

    #[test]
    fn sign_extension() {
        assert_eq!(sext(0x80, 8), -128);
        assert_eq!(sext(0x7f, 8), 127);
        assert_eq!(sext(1, 1), -1);
    }
}
