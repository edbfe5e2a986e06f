//! Externs whose inputs native code computes itself and whose effect stays in Rust: digests
//! (`digest.pack`), mirror requests (`mirror.emit`) and meters (`meter.execute`).
//!
//! Generated code evaluates the field values, the session, the meter index and pre-colour in
//! line (PHV loads with constant offsets and widths), then calls a typed shim here that hands
//! the values to the one `Ctx` function every engine uses (`digest_pack`, `mirror_request`,
//! `meter_with`): what a digest records, a mirror request keeps and a meter decides is defined
//! once, and a traced context records through it exactly as the flat engine does. These
//! shims are no fallbacks (nothing runs through the flat engine).

use cranelift_codegen::ir::{types, InstBuilder, StackSlotData, StackSlotKind, Value as CValue};

use super::env::{params, Env, EnvLayout, FAULT, NEXT};
use super::gen::{mem, Gen};
use crate::exec::flat::{FExpr, Op};
use crate::exec::Fault;
use crate::ir::Value;
use crate::trace::Tracer;

/// [`shim_meter`]'s flags: the index's value is passed; the pre-colour's is (in bits
/// 8..16).
pub const METER_INDEX: u32 = 1;
pub const METER_COLOR: u32 = 2;

/// `digest.pack` for the flat node `op` (an [`Op::Digest`]) with its `n` field values at
/// `vals`. Answers [`NEXT`].
///
/// # Safety
/// `env` is a live [`Env`] used by one thread; `op` points into the flat program of the
/// pass; `vals`/`n` as [`params`] (`n` readable values, or `n` 0).
pub unsafe extern "C" fn shim_digest<T: Tracer>(
    env: *mut Env<T>,
    op: *const Op,
    vals: *const Value,
    n: u64,
) -> u32 {
    // SAFETY: see the function's contract.
    let (_, ctx) = unsafe { Env::sync_in(env) };
    // SAFETY: `op` lives in the flat program; `vals`/`n` by contract.
    let (op, vals) = unsafe { (&*op, params(vals, n)) };
    if let Op::Digest { digest, .. } = op {
        ctx.digest_pack(*digest, vals.to_vec());
    }
    NEXT
}

/// `mirror.emit` for the flat node `op` (an [`Op::Mirror`]: the header values' widths) with
/// the session's value then the `n - 1` header values at `vals`. Answers [`NEXT`].
///
/// # Safety
/// As [`shim_digest`], with `n` ≥ 1.
pub unsafe extern "C" fn shim_mirror<T: Tracer>(
    env: *mut Env<T>,
    op: *const Op,
    vals: *const Value,
    n: u64,
) -> u32 {
    // SAFETY: see the function's contract.
    let (_, ctx) = unsafe { Env::sync_in(env) };
    // SAFETY: `op` lives in the flat program; `vals`/`n` by contract.
    let (op, vals) = unsafe { (&*op, params(vals, n)) };
    if let (Op::Mirror { header, .. }, Some((sid, rest))) = (op, vals.split_first()) {
        let mut both: smallvec::SmallVec<[(Value, u16); 8]> = smallvec::SmallVec::new();
        both.extend(rest.iter().zip(header.iter()).map(|(v, (_, w))| (*v, *w)));
        ctx.mirror_request(*sid, &both);
    }
    NEXT
}

/// `meter.execute` of meter `meter`: `flags` say whether the index (`lo`/`hi`) and the
/// pre-colour (bits 8..16 of `flags`) were evaluated. The colour goes to `env.ret`.
///
/// # Safety
/// As [`shim_digest`].
pub unsafe extern "C" fn shim_meter<T: Tracer>(
    env: *mut Env<T>,
    meter: u32,
    flags: u32,
    lo: u64,
    hi: u64,
) -> u32 {
    // SAFETY: see the function's contract.
    let (env, ctx) = unsafe { Env::sync_in(env) };
    let index = (flags & METER_INDEX != 0)
        .then_some(move |_: &mut _| Ok::<Value, Fault>(Value::from(lo) | (Value::from(hi) << 64)));
    let color = (flags & METER_COLOR != 0)
        .then_some(move |_: &mut _| Ok::<Value, Fault>(Value::from((flags >> 8) & 0xff)));
    match ctx.meter_with(meter as usize, index, color) {
        Ok(v) => {
            env.ret = v;
            NEXT
        }
        Err(f) => {
            env.fault = Some(f);
            FAULT
        }
    }
}

/// Whether evaluating `e` can neither fault nor change anything (no tree node, no hasher
/// lookup): generated code may then evaluate it where the flat engine might not (a direct
/// meter's pre-colour on a miss) or in another order against the meter's index wrap count.
fn side_free(e: &FExpr) -> bool {
    match e {
        FExpr::Tree(_) | FExpr::Hash { .. } | FExpr::Meter { .. } => false,
        FExpr::Not { a, .. }
        | FExpr::Neg { a, .. }
        | FExpr::LNot(a)
        | FExpr::Slice { a, .. }
        | FExpr::Sext { a, .. }
        | FExpr::Mask { a, .. } => side_free(a),
        FExpr::LAnd(a, b)
        | FExpr::LOr(a, b)
        | FExpr::Bin { a, b, .. }
        | FExpr::Concat { hi: a, lo: b, .. } => side_free(a) && side_free(b),
        FExpr::Ternary {
            cond, then, els, ..
        } => side_free(cond) && side_free(then) && side_free(els),
        FExpr::ChecksumUpdate(parts) => parts.iter().all(|p| match p {
            crate::exec::flat::CsPart::Run { .. } => true,
            crate::exec::flat::CsPart::Value { e, .. } => side_free(e),
            crate::exec::flat::CsPart::Tree(_) => false,
        }),
        _ => true,
    }
}

/// Whether the generator generates the meter node `e` (its pre-colour is [`side_free`]).
pub fn meter_ok(e: &FExpr) -> bool {
    match e {
        FExpr::Meter { color, .. } => color.as_deref().is_none_or(side_free),
        _ => false,
    }
}

impl Gen<'_, '_> {
    /// The values of `es` in a fresh 16-byte-aligned stack buffer (16 bytes each, as
    /// `Value`s), generated in order; answers its address.
    fn value_buffer(&mut self, es: &[&FExpr]) -> CValue {
        let slot = self.b.create_sized_stack_slot(StackSlotData::new(
            StackSlotKind::ExplicitSlot,
            (es.len().max(1) * 16) as u32,
            4,
        ));
        let buf = self.b.ins().stack_addr(types::I64, slot, 0);
        for (i, e) in es.iter().enumerate() {
            let v = self.expr(e);
            self.store_value(buf, i as i32 * 16, v);
        }
        buf
    }

    /// `digest.pack`: the fields generated, then [`shim_digest`].
    pub(super) fn digest(&mut self, op: &Op, fields: &[FExpr]) {
        let buf = self.value_buffer(&fields.iter().collect::<Vec<_>>());
        let node = self.iconst(op as *const Op as u64);
        let n = self.iconst(fields.len() as u64);
        let (env, sig, f) = (self.env, self.sigs.node, self.shims.digest);
        self.call_shim(sig, f, &[env, node, buf, n]);
    }

    /// `mirror.emit`: the session then the header values generated, then [`shim_mirror`].
    pub(super) fn mirror(&mut self, op: &Op, session: &FExpr, header: &[(FExpr, u16)]) {
        let all: Vec<&FExpr> = std::iter::once(session)
            .chain(header.iter().map(|(e, _)| e))
            .collect();
        let buf = self.value_buffer(&all);
        let node = self.iconst(op as *const Op as u64);
        let n = self.iconst(header.len() as u64 + 1);
        let (env, sig, f) = (self.env, self.sigs.node, self.shims.mirror);
        self.call_shim(sig, f, &[env, node, buf, n]);
    }

    /// `meter.execute` (a node [`meter_ok`] admits): the index, then the pre-colour
    /// generated, then [`shim_meter`]; the colour as an `i64`.
    pub(super) fn meter(
        &mut self,
        meter: u32,
        index: Option<&FExpr>,
        color: Option<&FExpr>,
    ) -> CValue {
        let mut flags = 0;
        let (lo, hi) = match index {
            Some(e) => {
                flags |= METER_INDEX;
                let v = self.expr(e);
                let v = self.fit(v, true);
                self.b.ins().isplit(v)
            }
            None => {
                let z = self.iconst(0);
                (z, z)
            }
        };
        let mut fl = self.b.ins().iconst(types::I32, 0);
        if let Some(c) = color {
            flags |= METER_COLOR;
            let v = self.expr(c);
            let v = self.fit(v, false);
            let v = self.b.ins().band_imm(v, 0xff);
            let v = self.b.ins().ireduce(types::I32, v);
            fl = self.b.ins().ishl_imm(v, 8);
        }
        let fl = self.b.ins().bor_imm(fl, i64::from(flags));
        let m = self.b.ins().iconst(types::I32, i64::from(meter));
        let (env, sig, f) = (self.env, self.sigs.count, self.shims.meter);
        let code = self
            .call_shim(sig, f, &[env, m, fl, lo, hi])
            .expect("status");
        let ok = self.b.create_block();
        self.b.ins().brif(code, self.fault, &[], ok, &[]);
        self.b.switch_to_block(ok);
        let off = std::mem::offset_of!(EnvLayout, ret) as i32;
        self.b.ins().load(types::I64, mem(), self.env, off)
    }
}
