//! Expressions: each flat expression node generated in line, with its masks and widths as
//! constants (parser lookaheads too, and hashes: inputs in line, the hasher through
//! [`super::env::shim_hash`]; meters: index and pre-colour in line, the meter through
//! [`super::externs::shim_meter`]); nodes not generated (externs with state, signed saturation,
//! wide shifts) are evaluated by the flat engine through [`super::env::shim_expr`], each
//! recorded ([`super::expr_label`]).

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, InstBuilder, StackSlotData, StackSlotKind, Value};

use super::env::{EnvLayout, MAX_ARGS};
use super::gen::{mem, Gen};
use crate::exec::flat::FExpr;
use crate::ir::{BinOp, Expr};

/// `(offset, width)` of a lookahead the generator reads itself (1..=121 bits: its bytes fit
/// 128 bits at any bit offset).
fn lookahead(e: &Expr) -> Option<(u32, u16)> {
    match e {
        Expr::Lookahead { offset_bits, width } if (1..=121).contains(width) => {
            Some((*offset_bits, *width))
        }
        _ => None,
    }
}

/// Bits needed by `v`.
fn bits(v: u128) -> u32 {
    128 - v.leading_zeros()
}

/// Most bits the value of `e` can have: an expression is an `i128` exactly when this is
/// above 64.
pub fn wbits(e: &FExpr) -> u32 {
    match e {
        FExpr::Const(v) => bits(*v),
        FExpr::Field(f) => u32::from(f.width),
        FExpr::FieldEqConst { .. }
        | FExpr::Valid(_)
        | FExpr::LNot(_)
        | FExpr::LAnd(..)
        | FExpr::LOr(..)
        | FExpr::ChecksumVerify(_) => 1,
        FExpr::Param { mask, .. }
        | FExpr::Not { mask, .. }
        | FExpr::Neg { mask, .. }
        | FExpr::Slice { mask, .. }
        | FExpr::Concat { mask, .. }
        | FExpr::Sext { mask, .. }
        | FExpr::Mask { mask, .. }
        | FExpr::Ternary { mask, .. } => bits(*mask),
        FExpr::Bin { op, width, .. } => match op {
            BinOp::Eq
            | BinOp::Ne
            | BinOp::Lt
            | BinOp::Le
            | BinOp::Gt
            | BinOp::Ge
            | BinOp::LAnd
            | BinOp::LOr => 1,
            _ => u32::from(*width).min(128),
        },
        FExpr::ChecksumGet(_) => 32,
        FExpr::Hash { mask, .. } => bits(*mask),
        FExpr::ChecksumUpdate(_) => 16,
        FExpr::Salu(s) => bits(s.mask & s.out_mask),
        FExpr::RegWord { width, .. } => u32::from(*width).min(64),
        FExpr::Meter { .. } => 8,
        FExpr::Tree(_) => 128,
    }
}

fn wide(e: &FExpr) -> bool {
    wbits(e) > 64
}

impl Gen<'_, '_> {
    /// Generates `e`; the result is typed as [`wbits`] says.
    pub fn expr(&mut self, e: &FExpr) -> Value {
        let v = match e {
            FExpr::Const(v) => self.konst(*v, wide(e)),
            FExpr::Field(f) if self.field_ok(*f) => self.read_field(*f),
            FExpr::FieldEqConst { f, value } if self.field_ok(*f) => {
                let x = self.read_field(*f);
                let w = self.ty(x) == types::I128 || *value > u128::from(u64::MAX);
                let x = self.fit(x, w);
                let c = self.konst(*value, w);
                let eq = self.b.ins().icmp(IntCC::Equal, x, c);
                self.bool64(eq)
            }
            FExpr::Valid(h) => self.is_valid(*h),
            FExpr::Param { index, mask } => self.param(*index, *mask),
            FExpr::Not { a, mask } => {
                let x = self.expr(a);
                let x = self.fit(x, *mask > u128::from(u64::MAX));
                let n = self.b.ins().bnot(x);
                self.mask(n, *mask)
            }
            FExpr::Neg { a, mask } => {
                let x = self.expr(a);
                let x = self.fit(x, *mask > u128::from(u64::MAX));
                let n = self.b.ins().ineg(x);
                self.mask(n, *mask)
            }
            FExpr::LNot(a) => {
                let x = self.expr(a);
                let z = self.b.ins().icmp_imm(IntCC::Equal, x, 0);
                self.bool64(z)
            }
            FExpr::LAnd(a, b) => self.logic(a, b, true),
            FExpr::LOr(a, b) => self.logic(a, b, false),
            FExpr::Bin {
                op,
                a,
                b,
                width,
                ow,
                signed,
            } if self.bin_ok(*op, a, b, *width, *ow, *signed) => {
                let x = self.expr(a);
                let y = self.expr(b);
                self.bin(*op, x, y, *width, *ow, *signed)
            }
            FExpr::Slice { a, lo, mask } => {
                let x = self.expr(a);
                let narrow = self.ty(x) == types::I64;
                if narrow && *lo >= 64 {
                    self.konst(0, *mask > u128::from(u64::MAX))
                } else {
                    let x = if *lo > 0 {
                        self.b.ins().ushr_imm(x, i64::from(*lo))
                    } else {
                        x
                    };
                    self.mask(x, *mask)
                }
            }
            FExpr::Concat {
                hi,
                lo,
                lo_width,
                mask,
            } if *lo_width < 128 => {
                let w = *mask > u128::from(u64::MAX);
                let h = self.expr(hi);
                let l = self.expr(lo);
                let l = self.mask(l, crate::phv::mask(*lo_width as u16));
                let l = self.fit(l, w);
                let h = self.fit(h, w);
                let limit = if w { 128 } else { 64 };
                let h = if *lo_width >= limit {
                    self.konst(0, w)
                } else {
                    self.b.ins().ishl_imm(h, i64::from(*lo_width))
                };
                let r = self.b.ins().bor(h, l);
                self.mask(r, *mask)
            }
            FExpr::Sext { a, from, mask } if (1..=64).contains(from) => {
                let x = self.expr(a);
                let x = self.fit(x, false);
                let sh = i64::from(64 - *from);
                let x = self.b.ins().ishl_imm(x, sh);
                let x = self.b.ins().sshr_imm(x, sh);
                // Sign bits above 64 (an i128 result): extend the i64 sign.
                let x = if *mask > u128::from(u64::MAX) {
                    self.b.ins().sextend(types::I128, x)
                } else {
                    x
                };
                self.mask(x, *mask)
            }
            FExpr::Mask { a, mask } => {
                let x = self.expr(a);
                self.mask(x, *mask)
            }
            FExpr::Ternary {
                cond,
                then,
                els,
                mask,
            } => self.ternary(cond, then, els, *mask),
            FExpr::ChecksumVerify(c) => {
                let acc = self.csum_load(*c);
                let bad = self.b.ins().icmp_imm(IntCC::NotEqual, acc, 0xffff);
                self.bool64(bad)
            }
            FExpr::ChecksumGet(c) => self.csum_load(*c),
            FExpr::ChecksumUpdate(parts) if self.csum_runs_ok(parts) => {
                // The ones' complement of the folded sum of the runs' 16-bit words (as the
                // flat engine's `OnesSum` computes it for whole words with nothing pending).
                let total = self.sum_runs(parts);
                let sum = self.fold16(total);
                let n = self.b.ins().bnot(sum);
                self.b.ins().band_imm(n, 0xffff)
            }
            FExpr::Hash { inputs, mask, .. } => self.hash(e, inputs, *mask),
            FExpr::Salu(s) if self.salu_ok(&s.body) => self.salu(s),
            FExpr::RegWord { word, .. } if self.salu.is_some() => {
                let w = self.salu.expect("guard");
                match word {
                    0 => self.b.use_var(w.lo),
                    1 => self.b.use_var(w.hi),
                    2 => w.mem[0],
                    _ => w.mem[1],
                }
            }
            FExpr::Meter {
                meter,
                index,
                color,
            } if super::externs::meter_ok(e) => {
                self.meter(*meter, index.as_deref(), color.as_deref())
            }
            FExpr::Tree(x) if self.too_short.is_some() && lookahead(x).is_some() => {
                let (off, width) = lookahead(x).expect("guard");
                self.lookahead(off, width)
            }
            _ => {
                self.fallbacks.push(super::expr_label(e));
                self.shim_expr(e)
            }
        };
        self.fit(v, wide(e))
    }

    /// Whether [`Self::expr`] generates all of `e` itself, calling no shim for any node of it
    /// (the guards of its arms): what a RegisterAction body needs, whose words only generated
    /// code sees.
    pub(super) fn native_ok(&self, e: &FExpr) -> bool {
        match e {
            FExpr::Const(_)
            | FExpr::Valid(_)
            | FExpr::Param { .. }
            | FExpr::RegWord { .. }
            | FExpr::ChecksumVerify(_)
            | FExpr::ChecksumGet(_) => true,
            FExpr::Field(f) | FExpr::FieldEqConst { f, .. } => self.field_ok(*f),
            FExpr::Not { a, .. }
            | FExpr::Neg { a, .. }
            | FExpr::LNot(a)
            | FExpr::Slice { a, .. }
            | FExpr::Mask { a, .. } => self.native_ok(a),
            FExpr::Sext { a, from, .. } => (1..=64).contains(from) && self.native_ok(a),
            FExpr::LAnd(a, b) | FExpr::LOr(a, b) => self.native_ok(a) && self.native_ok(b),
            FExpr::Bin {
                op,
                a,
                b,
                width,
                ow,
                signed,
            } => {
                self.bin_ok(*op, a, b, *width, *ow, *signed)
                    && self.native_ok(a)
                    && self.native_ok(b)
            }
            FExpr::Concat {
                hi, lo, lo_width, ..
            } => *lo_width < 128 && self.native_ok(hi) && self.native_ok(lo),
            FExpr::Ternary {
                cond, then, els, ..
            } => self.native_ok(cond) && self.native_ok(then) && self.native_ok(els),
            FExpr::Hash { .. }
            | FExpr::ChecksumUpdate(_)
            | FExpr::Salu(_)
            | FExpr::Meter { .. }
            | FExpr::Tree(_) => false,
        }
    }

    /// `lookahead` of `width` bits (1..=121) at `off` bits past the cursor, in the parser:
    /// past the input's end the packet is too short; else the bytes holding the bits are
    /// read big-endian (each address clamped to the input's last byte: the clamped ones only
    /// feed bits past the value, which are shifted out). Only a parser that is not parsed in
    /// place has lookaheads (`parser_in_place`), so the input is all in its head.
    fn lookahead(&mut self, off: u32, width: u16) -> Value {
        let cur = self.env_load(std::mem::offset_of!(EnvLayout, cursor));
        let start = self.b.ins().iadd_imm(cur, i64::from(off));
        let end = self.b.ins().iadd_imm(start, i64::from(width));
        let limit = self.env_load(std::mem::offset_of!(EnvLayout, input_bits));
        let short = self.b.ins().icmp(IntCC::UnsignedGreaterThan, end, limit);
        let fits = self.b.create_block();
        let too_short = self.too_short.expect("parser");
        self.b.ins().brif(short, too_short, &[], fits, &[]);
        self.b.switch_to_block(fits);
        let nb = (u32::from(width) + 7).div_ceil(8);
        let wide = nb > 8;
        let ty = if wide { types::I128 } else { types::I64 };
        let input = self.env_load(std::mem::offset_of!(EnvLayout, input));
        let last = self.env_load(std::mem::offset_of!(EnvLayout, head_bytes));
        let last = self.b.ins().iadd_imm(last, -1);
        let first = self.b.ins().ushr_imm(start, 3);
        let mut acc = self.konst(0, wide);
        for i in 0..nb {
            let at = self.b.ins().iadd_imm(first, i64::from(i));
            let at = self.b.ins().umin(at, last);
            let addr = self.b.ins().iadd(input, at);
            let byte = self.b.ins().uload8(types::I64, mem(), addr, 0);
            let byte = if wide {
                self.b.ins().uextend(ty, byte)
            } else {
                byte
            };
            let sh = self.b.ins().ishl_imm(acc, 8);
            acc = self.b.ins().bor(sh, byte);
        }
        // `acc` holds bits [first * 8, first * 8 + nb * 8): drop the (start % 8) bits before
        // the value, then those after it.
        let bit = self.b.ins().band_imm(start, 7);
        let bit = if wide {
            self.b.ins().uextend(ty, bit)
        } else {
            bit
        };
        let acc = self.b.ins().ishl(acc, bit);
        let top = ty.bits() - nb * 8;
        let acc = if top > 0 {
            self.b.ins().ishl_imm(acc, i64::from(top))
        } else {
            acc
        };
        self.b
            .ins()
            .ushr_imm(acc, i64::from(ty.bits() - u32::from(width)))
    }

    /// `hash.get`: the inputs generated into a stack buffer, the hasher run by
    /// [`super::env::shim_hash`] (which reads the widths from the node `e`), then masked.
    fn hash(&mut self, e: &FExpr, inputs: &[(FExpr, u16)], mask: u128) -> Value {
        let slot = self.b.create_sized_stack_slot(StackSlotData::new(
            StackSlotKind::ExplicitSlot,
            (inputs.len().max(1) * 16) as u32,
            4,
        ));
        let buf = self.b.ins().stack_addr(types::I64, slot, 0);
        for (i, (x, _)) in inputs.iter().enumerate() {
            let v = self.expr(x);
            self.store_value(buf, i as i32 * 16, v);
        }
        let node = self.iconst(e as *const FExpr as u64);
        let n = self.iconst(inputs.len() as u64);
        let (env, sig, f) = (self.env, self.sigs.node, self.shims.hash);
        let code = self
            .call_shim(sig, f, &[env, node, buf, n])
            .expect("status");
        let ok = self.b.create_block();
        self.b.ins().brif(code, self.fault, &[], ok, &[]);
        self.b.switch_to_block(ok);
        let off = std::mem::offset_of!(EnvLayout, ret) as i32;
        let v = self.b.ins().load(types::I128, mem(), self.env, off);
        self.mask(v, mask)
    }

    /// Evaluates `e` through the flat engine.
    fn shim_expr(&mut self, e: &FExpr) -> Value {
        let node = self.iconst(e as *const FExpr as u64);
        let (p, n) = self.params_or_none();
        let f = self.shims.expr;
        let env = self.env;
        let sig = self.sigs.node;
        let code = self.call_shim(sig, f, &[env, node, p, n]).expect("status");
        let ok = self.b.create_block();
        self.b.ins().brif(code, self.fault, &[], ok, &[]);
        self.b.switch_to_block(ok);
        let off = std::mem::offset_of!(EnvLayout, ret) as i32;
        self.b.ins().load(types::I128, mem(), self.env, off)
    }

    /// Action parameter `index` (0 past the data or outside an action).
    fn param(&mut self, index: u16, mask: u128) -> Value {
        let w = mask > u128::from(u64::MAX);
        let Some((p, n)) = self.params else {
            return self.konst(0, w);
        };
        if usize::from(index) >= MAX_ARGS {
            return self.konst(0, w);
        }
        let ty = if w { types::I128 } else { types::I64 };
        let v = self.b.ins().load(ty, mem(), p, i32::from(index) * 16);
        let inside = self
            .b
            .ins()
            .icmp_imm(IntCC::UnsignedGreaterThan, n, i64::from(index));
        let z = self.konst(0, w);
        let v = self.b.ins().select(inside, v, z);
        self.mask(v, mask)
    }

    /// `a && b` / `a || b`, evaluating `b` only when needed.
    fn logic(&mut self, a: &FExpr, b: &FExpr, and: bool) -> Value {
        let done = self.b.create_block();
        let r = self.b.append_block_param(done, types::I64);
        let rest = self.b.create_block();
        let x = self.expr(a);
        let c = self.nonzero(x);
        let short = self.iconst(u64::from(!and));
        if and {
            self.b.ins().brif(c, rest, &[], done, &[short.into()]);
        } else {
            self.b.ins().brif(c, done, &[short.into()], rest, &[]);
        }
        self.b.switch_to_block(rest);
        let y = self.expr(b);
        let c = self.nonzero(y);
        let y = self.bool64(c);
        self.b.ins().jump(done, &[y.into()]);
        self.b.switch_to_block(done);
        r
    }

    fn ternary(&mut self, cond: &FExpr, then: &FExpr, els: &FExpr, mask: u128) -> Value {
        let w = mask > u128::from(u64::MAX);
        let ty = if w { types::I128 } else { types::I64 };
        let done = self.b.create_block();
        let r = self.b.append_block_param(done, ty);
        let (tb, eb) = (self.b.create_block(), self.b.create_block());
        let c = self.expr(cond);
        let c = self.nonzero(c);
        self.b.ins().brif(c, tb, &[], eb, &[]);
        for (block, e) in [(tb, then), (eb, els)] {
            self.b.switch_to_block(block);
            let v = self.expr(e);
            let v = self.mask(v, mask);
            let v = self.fit(v, w);
            self.b.ins().jump(done, &[v.into()]);
        }
        self.b.switch_to_block(done);
        r
    }

    /// Whether [`Self::bin`] generates this operator (else the flat engine evaluates it).
    fn bin_ok(&self, op: BinOp, a: &FExpr, b: &FExpr, w: u16, ow: u16, signed: bool) -> bool {
        let narrow = w <= 64 && wbits(a) <= 64 && wbits(b) <= 64;
        match op {
            BinOp::And | BinOp::Or | BinOp::Xor | BinOp::Add | BinOp::Sub | BinOp::Mul => w <= 128,
            BinOp::Eq | BinOp::Ne => ow <= 128,
            BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => {
                if signed {
                    (1..=64).contains(&ow)
                } else {
                    ow <= 128
                }
            }
            BinOp::Shl => w <= 64 && wbits(b) <= 64,
            BinOp::Shr => narrow && (!signed || w >= 1),
            BinOp::Div | BinOp::Mod => narrow,
            BinOp::SatAdd | BinOp::SatSub => narrow && !signed,
            BinOp::Min | BinOp::Max => narrow && (!signed || w >= 1),
            BinOp::LAnd | BinOp::LOr => true,
        }
    }

    /// Sign-extends the low `w` bits (1..=64) of an `i64`.
    fn sext64(&mut self, x: Value, w: u16) -> Value {
        let sh = i64::from(64 - w);
        let x = self.b.ins().ishl_imm(x, sh);
        self.b.ins().sshr_imm(x, sh)
    }

    /// A binary operator on generated operands (the cases [`Self::bin_ok`] admits), as
    /// `exec::eval::binop` computes it.
    fn bin(&mut self, op: BinOp, x: Value, y: Value, w: u16, ow: u16, signed: bool) -> Value {
        let m = crate::phv::mask(w);
        let wide = w > 64;
        match op {
            BinOp::And | BinOp::Or | BinOp::Xor | BinOp::Add | BinOp::Sub | BinOp::Mul => {
                let (x, y) = (self.fit(x, wide), self.fit(y, wide));
                let r = match op {
                    BinOp::And => self.b.ins().band(x, y),
                    BinOp::Or => self.b.ins().bor(x, y),
                    BinOp::Xor => self.b.ins().bxor(x, y),
                    BinOp::Add => self.b.ins().iadd(x, y),
                    BinOp::Sub => self.b.ins().isub(x, y),
                    _ => self.b.ins().imul(x, y),
                };
                self.mask(r, m)
            }
            BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => {
                let om = crate::phv::mask(ow);
                let signed = signed && !matches!(op, BinOp::Eq | BinOp::Ne);
                let (x, y) = if signed {
                    let (x, y) = (self.fit(x, false), self.fit(y, false));
                    (self.sext64(x, ow), self.sext64(y, ow))
                } else {
                    (self.mask(x, om), self.mask(y, om))
                };
                let cc = match (op, signed) {
                    (BinOp::Eq, _) => IntCC::Equal,
                    (BinOp::Ne, _) => IntCC::NotEqual,
                    (BinOp::Lt, false) => IntCC::UnsignedLessThan,
                    (BinOp::Le, false) => IntCC::UnsignedLessThanOrEqual,
                    (BinOp::Gt, false) => IntCC::UnsignedGreaterThan,
                    (BinOp::Ge, false) => IntCC::UnsignedGreaterThanOrEqual,
                    (BinOp::Lt, true) => IntCC::SignedLessThan,
                    (BinOp::Le, true) => IntCC::SignedLessThanOrEqual,
                    (BinOp::Gt, true) => IntCC::SignedGreaterThan,
                    _ => IntCC::SignedGreaterThanOrEqual,
                };
                let c = self.b.ins().icmp(cc, x, y);
                self.bool64(c)
            }
            BinOp::LAnd | BinOp::LOr => {
                let (cx, cy) = (self.nonzero(x), self.nonzero(y));
                let r = if op == BinOp::LAnd {
                    self.b.ins().band(cx, cy)
                } else {
                    self.b.ins().bor(cx, cy)
                };
                self.bool64(r)
            }
            _ => self.bin_narrow(op, x, y, w, signed),
        }
    }

    /// Shifts, division, saturation, min/max on `i64` operands of at most 64 bits.
    fn bin_narrow(&mut self, op: BinOp, x: Value, y: Value, w: u16, signed: bool) -> Value {
        let m = crate::phv::mask(w);
        let (x, y) = (self.fit(x, false), self.fit(y, false));
        let zero = self.iconst(0);
        let w64 = i64::from(w);
        match op {
            BinOp::Shl | BinOp::Shr if !(op == BinOp::Shr && signed) => {
                let big = self
                    .b
                    .ins()
                    .icmp_imm(IntCC::UnsignedGreaterThanOrEqual, y, w64);
                let r = if op == BinOp::Shl {
                    self.b.ins().ishl(x, y)
                } else {
                    let x = self.mask(x, m);
                    self.b.ins().ushr(x, y)
                };
                let r = self.b.ins().select(big, zero, r);
                self.mask(r, m)
            }
            BinOp::Shr => {
                let s = self.sext64(x, w);
                let big = self
                    .b
                    .ins()
                    .icmp_imm(IntCC::UnsignedGreaterThanOrEqual, y, w64);
                let top = self.iconst((w - 1).into());
                let sh = self.b.ins().select(big, top, y);
                let r = self.b.ins().sshr(s, sh);
                self.mask(r, m)
            }
            BinOp::Div | BinOp::Mod => {
                let z = self.b.ins().icmp_imm(IntCC::Equal, y, 0);
                let one = self.iconst(1);
                let d = self.b.ins().select(z, one, y);
                let r = if op == BinOp::Div {
                    self.b.ins().udiv(x, d)
                } else {
                    self.b.ins().urem(x, d)
                };
                let r = self.b.ins().select(z, zero, r);
                self.mask(r, m)
            }
            BinOp::SatAdd => {
                // Operands are below 2^64: the true sum passes 2^64 exactly when it wraps.
                let s = self.b.ins().iadd(x, y);
                let wrapped = self.b.ins().icmp(IntCC::UnsignedLessThan, s, x);
                let big = self
                    .b
                    .ins()
                    .icmp_imm(IntCC::UnsignedGreaterThan, s, m as u64 as i64);
                let over = self.b.ins().bor(wrapped, big);
                let mv = self.iconst(m as u64);
                self.b.ins().select(over, mv, s)
            }
            BinOp::SatSub => {
                let under = self.b.ins().icmp(IntCC::UnsignedLessThan, x, y);
                let d = self.b.ins().isub(x, y);
                let r = self.b.ins().select(under, zero, d);
                self.mask(r, m)
            }
            _ => {
                // Min / Max.
                let lt = if signed {
                    let (sx, sy) = (self.sext64(x, w), self.sext64(y, w));
                    self.b.ins().icmp(IntCC::SignedLessThan, sx, sy)
                } else {
                    let (mx, my) = (self.mask(x, m), self.mask(y, m));
                    self.b.ins().icmp(IntCC::UnsignedLessThan, mx, my)
                };
                let r = if op == BinOp::Min {
                    self.b.ins().select(lt, x, y)
                } else {
                    self.b.ins().select(lt, y, x)
                };
                self.mask(r, m)
            }
        }
    }
}
