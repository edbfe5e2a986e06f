//! Register actions generated in line (`ra.execute(index)` of a scalar RegisterAction, as
//! [`crate::exec::flat::FSalu`] has it lowered): the index evaluated by generated code, the
//! cell chosen and the register claimed by [`super::env::shim_salu_claim`] (the wrap of an
//! out-of-range index and its count, the direct register's entry, the one-access-per-pass
//! check: `Ctx`'s own helpers, so a second access faults exactly as in the tree
//! interpreter), then the cell's words loaded, the body run on locals (its `if`s and
//! assignments to the words and `rv`), the words written back masked to the register's width
//! and `rv` returned. Traced code also records the body's gateways and the access
//! (`hook_salu_gate`, `hook_register`) as `Ctx::register_run` does.

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, InstBuilder, Value};
use cranelift_frontend::Variable;

use super::env::{EnvLayout, FAULT, SALU_MISS};
use super::gen::{mem, Gen};
use crate::exec::flat::{FSalu, SOp};

/// The running access's words as generated code keeps them: the value so far (`RegValue`)
/// as variables, the words as read (`RegInput`), and `rv`.
#[derive(Clone, Copy)]
pub struct SaluWords {
    pub lo: Variable,
    pub hi: Variable,
    pub mem: [Value; 2],
    pub out: Variable,
}

impl Gen<'_, '_> {
    /// `ra.execute(index)`: `rv` masked to the action's output width and the expression's.
    pub(super) fn salu(&mut self, s: &FSalu) -> Value {
        let (lo, hi) = if s.direct {
            let z = self.iconst(0);
            (z, z)
        } else {
            let v = self.expr(&s.index);
            let v = self.fit(v, true);
            self.b.ins().isplit(v)
        };
        let reg = self.b.ins().iconst(types::I32, i64::from(s.register));
        let direct = self.b.ins().iconst(types::I32, i64::from(s.direct));
        let (env, sig, f) = (self.env, self.sigs.count, self.shims.salu_claim);
        let code = self
            .call_shim(sig, f, &[env, reg, direct, lo, hi])
            .expect("status");
        let (ok, access, done) = (
            self.b.create_block(),
            self.b.create_block(),
            self.b.create_block(),
        );
        let r = self.b.append_block_param(done, types::I64);
        let fault = self.b.ins().icmp_imm(IntCC::Equal, code, i64::from(FAULT));
        self.b.ins().brif(fault, self.fault, &[], ok, &[]);
        self.b.switch_to_block(ok);
        let miss = self
            .b
            .ins()
            .icmp_imm(IntCC::Equal, code, i64::from(SALU_MISS));
        let zero = self.iconst(0);
        self.b.ins().brif(miss, done, &[zero.into()], access, &[]);
        self.b.switch_to_block(access);
        let at = std::mem::offset_of!(EnvLayout, reg_cell);
        let cells = [self.env_load(at), self.env_load(at + 8)];
        let read = cells.map(|c| self.b.ins().load(types::I64, mem(), c, 0));
        let [lo, hi, out] = [(); 3].map(|_| self.b.declare_var(types::I64));
        self.b.def_var(lo, read[0]);
        self.b.def_var(hi, read[1]);
        self.b.def_var(out, zero);
        let words = SaluWords {
            lo,
            hi,
            mem: read,
            out,
        };
        let saved = self.salu.replace(words);
        self.salu_ops(&s.body, s);
        self.salu = saved;
        for (c, var) in cells.into_iter().zip([lo, hi]) {
            let v = self.b.use_var(var);
            let v = self.mask(v, s.word_mask);
            self.b.ins().store(mem(), v, c, 0);
        }
        let rv = self.b.use_var(out);
        let rv = self.mask(rv, s.out_mask);
        if self.traced() {
            let off = std::mem::offset_of!(EnvLayout, ret) as i32;
            let env = self.env;
            self.store_value(env, off, rv);
            self.hook(|h| h.register, s.action, None);
        }
        let rv = self.mask(rv, s.mask);
        let rv = self.fit(rv, false);
        self.b.ins().jump(done, &[rv.into()]);
        self.b.switch_to_block(done);
        r
    }

    /// Whether [`Self::salu`] generates this body whole (every expression in it, see
    /// [`Self::native_ok`]); else the access runs through the flat engine.
    pub(super) fn salu_ok(&self, ops: &[SOp]) -> bool {
        ops.iter().all(|op| match op {
            SOp::Set { e, .. } => self.native_ok(e),
            SOp::If {
                cond, then, els, ..
            } => self.native_ok(cond) && self.salu_ok(then) && self.salu_ok(els),
        })
    }

    /// A RegisterAction body on the words of [`Self::salu`].
    fn salu_ops(&mut self, ops: &[SOp], s: &FSalu) {
        let Some(w) = self.salu else {
            return;
        };
        for op in ops {
            match op {
                SOp::Set { word, e } => {
                    let v = self.expr(e);
                    match word {
                        0 | 1 => {
                            let v = self.mask(v, s.word_mask);
                            self.b.def_var(if *word == 0 { w.lo } else { w.hi }, v);
                        }
                        2 => {
                            // `rv` is cut to the output width (at most 64 bits) at the end.
                            let v = self.fit(v, false);
                            self.b.def_var(w.out, v);
                        }
                        // An extra output: an expression returns `rv` only.
                        _ => {}
                    }
                }
                SOp::If {
                    cond,
                    then,
                    els,
                    nth,
                } => {
                    let c = self.expr(cond);
                    let c = self.nonzero(c);
                    if self.traced() {
                        let r = self.b.ins().uextend(types::I32, c);
                        let at = self.b.ins().bor_imm(r, i64::from(*nth) << 1);
                        self.hook(|h| h.salu_gate, s.action, Some(at));
                    }
                    let (tb, eb, join) = (
                        self.b.create_block(),
                        self.b.create_block(),
                        self.b.create_block(),
                    );
                    self.b.ins().brif(c, tb, &[], eb, &[]);
                    for (block, body) in [(tb, then), (eb, els)] {
                        self.b.switch_to_block(block);
                        self.salu_ops(body, s);
                        self.b.ins().jump(join, &[]);
                    }
                    self.b.switch_to_block(join);
                }
            }
        }
    }
}
