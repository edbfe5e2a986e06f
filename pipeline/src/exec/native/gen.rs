//! The function generator's state and its building blocks: PHV field loads and stores with
//! offsets and widths as constants, validity bit tests, constants, calls into the shims, and
//! the control flow after a call that may end the block.
//!
//! Values: an expression whose result can exceed 64 bits is an `i128`, every other an `i64`
//! ([`super::expr::wbits`] decides, and every generator keeps to it).

use std::collections::HashMap;

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, Block, FuncRef, InstBuilder, MemFlags, SigRef, Type, Value};
use cranelift_frontend::{FunctionBuilder, Variable};
use cranelift_jit::JITModule;
use cranelift_module::{FuncId, Module};

use super::env::{EnvLayout, Shims, TraceHooks, FAULT, NEXT};
use crate::ir::FieldRef;

/// Facts about the gress every generated function uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    /// PHV bytes of the layout, and with padding (loads below that need no check).
    pub phv_len: u32,
    pub phv_padded: u32,
    pub headers: u32,
}

/// Signatures of the shims, imported into the function being built.
#[derive(Clone, Copy)]
pub struct Sigs {
    /// `(env, node, params, nparams) -> status` (ops, expressions, actions).
    pub node: SigRef,
    /// `(env, table, nkeys) -> answer`.
    pub apply: SigRef,
    /// `(env, a, b)` (emits).
    pub emit: SigRef,
    /// `(env, action, params, nparams) -> status`.
    pub action: SigRef,
    /// `(env, counter, has_index, lo, hi) -> status`.
    pub count: SigRef,
    /// `(env, header, offset, len)`.
    pub extract: SigRef,
    /// `(table state, lo, hi) -> answer` (`env::shim_tcam`).
    pub tcam: SigRef,
}

/// A field of at most 128 bits lying across three aligned 8-byte words (a 128-bit address
/// not on a word boundary), as its high part (to the end of its second word: more than 64
/// bits) and its low part (in the third word).
fn split3(f: FieldRef) -> Option<(FieldRef, FieldRef)> {
    let (bit, width) = (f.offset % 64, u32::from(f.width));
    if width > 128 || bit + width <= 128 {
        return None;
    }
    let a = 128 - bit;
    let hi = FieldRef {
        offset: f.offset,
        width: a as u16,
    };
    let lo = FieldRef {
        offset: f.offset + a,
        width: (width - a) as u16,
    };
    Some((hi, lo))
}

/// Memory flags for PHV, input and environment accesses (in bounds by construction).
pub fn mem() -> MemFlags {
    MemFlags::new().with_notrap()
}

/// Builds one function.
pub struct Gen<'a, 'b> {
    pub b: FunctionBuilder<'b>,
    pub module: &'a mut JITModule,
    pub layout: Layout,
    pub sigs: Sigs,
    /// Generated actions (by action id) and their references in this function.
    pub actions: &'a HashMap<u32, FuncId>,
    pub action_refs: HashMap<u32, FuncRef>,
    /// Action ids each table's entries and default may run (by table id).
    pub table_action_ids: &'a [Vec<u32>],
    /// The tables generated code looks up itself.
    pub inline: &'a super::lookup::InlineTables,
    pub env: Value,
    pub phv: Value,
    pub valid: Value,
    /// Action data (`None` outside an action: parameters read as 0).
    pub params: Option<(Value, Value)>,
    /// Where a fault goes.
    pub fault: Block,
    /// In the parser: where `return`/`exit` go (the state's transition), and where a packet
    /// too short for an extract goes.
    pub flow_exit: Option<Block>,
    pub too_short: Option<Block>,
    /// The parser state running (for error codes).
    pub state_var: Option<Variable>,
    /// The parser counts its steps against `MAX_PARSER_STEPS` (not when no state can be
    /// entered twice: `parser::acyclic`).
    pub count_steps: bool,
    /// The shims this code calls (for contexts of the tracer it is generated for); with trace
    /// hooks, the code calls them at every trace point.
    pub shims: Shims,
    /// The gress's `drop_ctl` field (writes to it are traced).
    pub drop_ctl: Option<FieldRef>,
    /// Trace hook calls generated in this function.
    pub trace_points: usize,
    /// What this function leaves to the flat engine, one label per node (see
    /// [`super::fallback_label`]).
    pub fallbacks: Vec<String>,
    /// Inside a register action's body: its words (see [`super::salu`]).
    pub salu: Option<super::salu::SaluWords>,
}

impl Gen<'_, '_> {
    pub fn iconst(&mut self, v: u64) -> Value {
        self.b.ins().iconst(types::I64, v as i64)
    }

    /// A constant as an `i64` when `wide` is false (its low 64 bits), else an `i128`.
    pub fn konst(&mut self, v: u128, wide: bool) -> Value {
        let lo = self.iconst(v as u64);
        if !wide {
            return lo;
        }
        let hi = self.iconst((v >> 64) as u64);
        self.b.ins().iconcat(lo, hi)
    }

    pub fn ty(&self, v: Value) -> Type {
        self.b.func.dfg.value_type(v)
    }

    /// `v` as an `i64` (its low bits) or an `i128` (zero-extended).
    pub fn fit(&mut self, v: Value, wide: bool) -> Value {
        match (self.ty(v) == types::I128, wide) {
            (true, false) => self.b.ins().ireduce(types::I64, v),
            (false, true) => self.b.ins().uextend(types::I128, v),
            _ => v,
        }
    }

    /// `v & mask`, typed by the mask's width.
    pub fn mask(&mut self, v: Value, mask: u128) -> Value {
        if mask <= u128::from(u64::MAX) {
            let v = self.fit(v, false);
            if mask == u128::from(u64::MAX) {
                return v;
            }
            return self.b.ins().band_imm(v, mask as u64 as i64);
        }
        let v = self.fit(v, true);
        if mask == u128::MAX {
            return v;
        }
        let m = self.konst(mask, true);
        self.b.ins().band(v, m)
    }

    /// A 0/1 `i64` from a comparison result.
    pub fn bool64(&mut self, c: Value) -> Value {
        self.b.ins().uextend(types::I64, c)
    }

    /// `v != 0` as a branch condition.
    pub fn nonzero(&mut self, v: Value) -> Value {
        self.b.ins().icmp_imm(IntCC::NotEqual, v, 0)
    }

    fn load_be(&mut self, byte: u32) -> Value {
        let x = self.b.ins().load(types::I64, mem(), self.phv, byte as i32);
        self.b.ins().bswap(x)
    }

    fn store_be(&mut self, byte: u32, v: Value) {
        let x = self.b.ins().bswap(v);
        self.b.ins().store(mem(), x, self.phv, byte as i32);
    }

    /// Whether [`Self::read_field`] / [`Self::write_field`] handle `f` (inside two aligned
    /// words of the padded PHV, or split in two such parts by [`split3`]).
    pub fn field_ok(&self, f: FieldRef) -> bool {
        if let Some((h, l)) = split3(f) {
            return self.field_ok(h) && self.field_ok(l);
        }
        let w = f.offset / 64 * 8;
        f.width <= 128
            && (f.offset % 64) + u32::from(f.width) <= 128
            && w + 16 <= self.layout.phv_padded
    }

    /// Loads field `f` (as the PHV's aligned reads do: through the 8-byte words holding it).
    pub fn read_field(&mut self, f: FieldRef) -> Value {
        if let Some((h, l)) = split3(f) {
            let hi = self.read_field(h);
            let lo = self.read_field(l);
            let (hi, lo) = (self.fit(hi, true), self.fit(lo, true));
            let hi = self.b.ins().ishl_imm(hi, i64::from(l.width));
            return self.b.ins().bor(hi, lo);
        }
        let (w, bit, width) = (f.offset / 64 * 8, f.offset % 64, u32::from(f.width));
        if width == 0 {
            return self.iconst(0);
        }
        if bit + width <= 64 {
            let x = self.load_be(w);
            let x = if bit > 0 {
                self.b.ins().ishl_imm(x, i64::from(bit))
            } else {
                x
            };
            return if width < 64 {
                self.b.ins().ushr_imm(x, i64::from(64 - width))
            } else {
                x
            };
        }
        let hi = self.load_be(w);
        let lo = self.load_be(w + 8);
        let x = self.b.ins().iconcat(lo, hi);
        let x = if bit > 0 {
            self.b.ins().ishl_imm(x, i64::from(bit))
        } else {
            x
        };
        let x = self.b.ins().ushr_imm(x, i64::from(128 - width));
        self.fit(x, width > 64)
    }

    /// Stores the low `f.width` bits of `v` into field `f`.
    pub fn write_field(&mut self, f: FieldRef, v: Value) {
        if let Some((h, l)) = split3(f) {
            let v = self.fit(v, true);
            let hi = self.b.ins().ushr_imm(v, i64::from(l.width));
            self.write_field(h, hi);
            self.write_field(l, v);
            return;
        }
        let (w, bit, width) = (f.offset / 64 * 8, f.offset % 64, u32::from(f.width));
        if width == 0 {
            return;
        }
        if bit + width <= 64 {
            let low = 64 - bit - width;
            let m = (u64::MAX >> (64 - width)) << low;
            let v = self.fit(v, false);
            let old = self.load_be(w);
            let keep = self.b.ins().band_imm(old, !m as i64);
            let v = if low > 0 {
                self.b.ins().ishl_imm(v, i64::from(low))
            } else {
                v
            };
            let v = self.b.ins().band_imm(v, m as i64);
            let new = self.b.ins().bor(keep, v);
            self.store_be(w, new);
            return;
        }
        let low = 128 - bit - width;
        let m = crate::phv::mask(width as u16) << low;
        let v = self.fit(v, true);
        let hi = self.load_be(w);
        let lo = self.load_be(w + 8);
        let old = self.b.ins().iconcat(lo, hi);
        let not_m = self.konst(!m, true);
        let keep = self.b.ins().band(old, not_m);
        let v = if low > 0 {
            self.b.ins().ishl_imm(v, i64::from(low))
        } else {
            v
        };
        let mv = self.konst(m, true);
        let v = self.b.ins().band(v, mv);
        let new = self.b.ins().bor(keep, v);
        let (lo, hi) = self.b.ins().isplit(new);
        self.store_be(w, hi);
        self.store_be(w + 8, lo);
    }

    /// Header `h`'s validity word and bit (`None`: no such header, always invalid).
    fn valid_word(&mut self, h: u32) -> Option<(Value, i32, u64)> {
        if h >= self.layout.headers {
            return None;
        }
        let off = (h / 64 * 8) as i32;
        let word = self.b.ins().load(types::I64, mem(), self.valid, off);
        Some((word, off, 1u64 << (h % 64)))
    }

    /// Header `h`'s validity as a 0/1 `i64`.
    pub fn is_valid(&mut self, h: u32) -> Value {
        let Some((word, _, bit)) = self.valid_word(h) else {
            return self.iconst(0);
        };
        let x = self.b.ins().ushr_imm(word, i64::from(bit.trailing_zeros()));
        self.b.ins().band_imm(x, 1)
    }

    pub fn set_valid(&mut self, h: u32, valid: bool) {
        let Some((word, off, bit)) = self.valid_word(h) else {
            return;
        };
        let new = if valid {
            self.b.ins().bor_imm(word, bit as i64)
        } else {
            self.b.ins().band_imm(word, !bit as i64)
        };
        self.b.ins().store(mem(), new, self.valid, off);
    }

    /// Header `h` valid exactly when the 0/1 `i64` `v` is 1.
    pub fn set_valid_to(&mut self, h: u32, v: Value) {
        let Some((word, off, bit)) = self.valid_word(h) else {
            return;
        };
        let keep = self.b.ins().band_imm(word, !bit as i64);
        let v = self.b.ins().ishl_imm(v, i64::from(bit.trailing_zeros()));
        let new = self.b.ins().bor(keep, v);
        self.b.ins().store(mem(), new, self.valid, off);
    }

    /// Parser checksum accumulator `c` as an `i64` (0 when there is no such accumulator, as
    /// `Scratch::csum.get(c)` reads).
    pub fn csum_load(&mut self, c: u32) -> Value {
        let (yes, done) = (self.b.create_block(), self.b.create_block());
        let r = self.b.append_block_param(done, types::I64);
        let len = self.env_load(std::mem::offset_of!(EnvLayout, csum_len));
        let inside = self
            .b
            .ins()
            .icmp_imm(IntCC::UnsignedGreaterThan, len, i64::from(c));
        let zero = self.iconst(0);
        self.b.ins().brif(inside, yes, &[], done, &[zero.into()]);
        self.b.switch_to_block(yes);
        let base = self.env_load(std::mem::offset_of!(EnvLayout, csum));
        let v = self.b.ins().load(types::I32, mem(), base, (c * 4) as i32);
        let v = self.b.ins().uextend(types::I64, v);
        self.b.ins().jump(done, &[v.into()]);
        self.b.switch_to_block(done);
        r
    }

    /// Folds a ones'-complement sum below 2^32 to 16 bits.
    pub fn fold16(&mut self, t: Value) -> Value {
        let mut t = t;
        for _ in 0..2 {
            let lo = self.b.ins().band_imm(t, 0xffff);
            let hi = self.b.ins().ushr_imm(t, 16);
            t = self.b.ins().iadd(lo, hi);
        }
        t
    }

    /// Loads a `u64` field of the environment.
    pub fn env_load(&mut self, off: usize) -> Value {
        self.b.ins().load(types::I64, mem(), self.env, off as i32)
    }

    pub fn env_store(&mut self, off: usize, v: Value) {
        self.b.ins().store(mem(), v, self.env, off as i32);
    }

    /// Stores a value as a 16-byte little-endian `u128` at `base + off`.
    pub fn store_value(&mut self, base: Value, off: i32, v: Value) {
        let v = self.fit(v, true);
        self.b.ins().store(mem(), v, base, off);
    }

    /// Stores `v` as a whole 128-bit value with one 16-byte store: a key the shim reads as a
    /// `u128` right after (a 16-byte load waits until two 8-byte stores under it have left
    /// the store buffer; one 16-byte store forwards to it).
    pub fn store_key(&mut self, base: Value, off: i32, v: Value) {
        let v = self.fit(v, true);
        let flags = MemFlags::new().with_endianness(cranelift_codegen::ir::Endianness::Little);
        let x = self.b.ins().bitcast(types::I64X2, flags, v);
        self.b.ins().store(mem(), x, base, off);
    }

    /// ORs watched-field bits into `Env::written`.
    pub fn mark_written(&mut self, watch: u8) {
        if watch == 0 {
            return;
        }
        let off = std::mem::offset_of!(EnvLayout, written);
        let w = self.env_load(off);
        let w = self.b.ins().bor_imm(w, i64::from(watch));
        self.env_store(off, w);
    }

    /// Calls a shim at `f` with signature `sig`.
    pub fn call_shim(&mut self, sig: SigRef, f: usize, args: &[Value]) -> Option<Value> {
        let callee = self.iconst(f as u64);
        let call = self.b.ins().call_indirect(sig, callee, args);
        self.b.inst_results(call).first().copied()
    }

    /// Whether this is traced code (it calls the trace hooks).
    pub fn traced(&self) -> bool {
        self.shims.trace.is_some()
    }

    /// In traced code, calls the trace hook `pick` chooses with `(env, a, b)` (`b` 0 when
    /// `None`); in untraced code, nothing.
    pub fn hook(&mut self, pick: fn(&TraceHooks) -> usize, a: u32, b: Option<Value>) {
        let Some(h) = self.shims.trace else {
            return;
        };
        self.trace_points += 1;
        let a = self.b.ins().iconst(types::I32, i64::from(a));
        let b = b.unwrap_or_else(|| self.b.ins().iconst(types::I32, 0));
        let (env, sig) = (self.env, self.sigs.emit);
        self.call_shim(sig, pick(&h), &[env, a, b]);
    }

    /// In traced code, after `v` was assigned to field `f`: the `drop_ctl` hook when `f` is
    /// the gress's `drop_ctl`.
    pub fn trace_write(&mut self, f: FieldRef, v: Value) {
        let Some(h) = self.shims.trace else {
            return;
        };
        if self.drop_ctl != Some(f) {
            return;
        }
        self.trace_points += 1;
        let v = self.fit(v, true);
        let (lo, hi) = self.b.ins().isplit(v);
        let z = self.b.ins().iconst(types::I32, 0);
        let (env, sig) = (self.env, self.sigs.count);
        self.call_shim(sig, h.drop, &[env, z, z, lo, hi]);
    }

    /// Action data pointer and count (a null pointer and 0 outside actions).
    pub fn params_or_none(&mut self) -> (Value, Value) {
        match self.params {
            Some(p) => p,
            None => {
                let z = self.iconst(0);
                (z, z)
            }
        }
    }

    /// Continues in a fresh block (after a terminator).
    pub fn fresh(&mut self) {
        let next = self.b.create_block();
        self.b.switch_to_block(next);
    }

    /// Leaves the block with status `code` (`RETURN`, `EXIT` or `FAULT`): faults to the fault
    /// block; in the parser `return`/`exit` go to the state's transition, elsewhere the
    /// function returns the code.
    pub fn leave(&mut self, code: Value) {
        match self.flow_exit {
            Some(exit) => {
                let is_fault = self.b.ins().icmp_imm(IntCC::Equal, code, i64::from(FAULT));
                self.b.ins().brif(is_fault, self.fault, &[], exit, &[]);
            }
            None => {
                self.b.ins().return_(&[code]);
            }
        }
    }

    /// After a call answering a status: go on when it is at most `keep` (`NEXT`, or `RETURN`
    /// for an action whose `return` ends only itself), else leave with it.
    pub fn check_status(&mut self, code: Value, keep: u32) {
        let out = self.b.create_block();
        let cont = self.b.create_block();
        let bad = if keep == NEXT {
            self.nonzero(code)
        } else {
            self.b
                .ins()
                .icmp_imm(IntCC::UnsignedGreaterThan, code, i64::from(keep))
        };
        self.b.ins().brif(bad, out, &[], cont, &[]);
        self.b.switch_to_block(out);
        self.leave(code);
        self.b.switch_to_block(cont);
    }

    /// The reference to generated action `a` in this function, if it was generated.
    pub fn action_ref(&mut self, a: u32) -> Option<FuncRef> {
        if let Some(r) = self.action_refs.get(&a) {
            return Some(*r);
        }
        let id = *self.actions.get(&a)?;
        let r = self.module.declare_func_in_func(id, self.b.func);
        self.action_refs.insert(a, r);
        Some(r)
    }
}
