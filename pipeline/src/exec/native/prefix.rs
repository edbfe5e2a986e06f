//! The intrinsic prefix of a pass written by generated code: a gress's
//! [`PrefixPlan`](crate::exec::prefix::PrefixPlan) (where each of the switch's intrinsics goes
//! in the prefix words) compiled to straight-line code with constant shifts and offsets, each
//! word built in a register and stored once, big-endian. It writes the bytes
//! `PrefixPlan::write` writes (the interpreted plan, which the flat engine runs and which
//! stays the reference: the test below compares the two on random layouts).

use cranelift_codegen::ir::{types, AbiParam, InstBuilder};
use cranelift_codegen::Context;
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_jit::JITModule;
use cranelift_module::{FuncId, Linkage, Module};

use super::gen::mem;
use super::{cg, NativeError};
use crate::exec::prefix::{PrefixPlan, PREFIX_WORDS};

/// A generated prefix writer: `(values, out)` writes all [`PREFIX_WORDS`] words of the
/// prefix of `values` (at least [`PrefixPlan::values`] of them) at `out` (unaligned).
pub(super) type PrefixFn = unsafe extern "C" fn(*const u64, *mut u8);

/// Declares and defines the writer of `plan` as `name` in `module`.
pub(super) fn define(
    module: &mut JITModule,
    ctx: &mut Context,
    fbc: &mut FunctionBuilderContext,
    plan: &PrefixPlan,
    name: &str,
) -> Result<FuncId, NativeError> {
    let mut sig = module.make_signature();
    sig.params.push(AbiParam::new(types::I64));
    sig.params.push(AbiParam::new(types::I64));
    let id = module
        .declare_function(name, Linkage::Local, &sig)
        .map_err(cg)?;
    ctx.func.signature = sig;
    let mut b = FunctionBuilder::new(&mut ctx.func, fbc);
    let entry = b.create_block();
    b.append_block_params_for_function_params(entry);
    b.switch_to_block(entry);
    let (values, out) = (b.block_params(entry)[0], b.block_params(entry)[1]);
    // The caller's buffers: no trap, no alignment assumed.
    let flags = mem();
    let mut words = [None; PREFIX_WORDS];
    for (word, value, rshift, up, down) in plan.pieces() {
        let v = b.ins().load(types::I64, flags, values, (8 * value) as i32);
        let v = b.ins().ushr_imm(v, i64::from(rshift));
        let v = b.ins().ishl_imm(v, i64::from(up));
        let v = b.ins().ushr_imm(v, i64::from(down));
        words[word] = Some(match words[word] {
            Some(acc) => b.ins().bor(acc, v),
            None => v,
        });
    }
    for (i, w) in words.iter().enumerate() {
        let w = match w {
            Some(w) => to_big_endian(&mut b, *w),
            None => b.ins().iconst(types::I64, 0),
        };
        b.ins().store(flags, w, out, (8 * i) as i32);
    }
    b.ins().return_(&[]);
    b.seal_all_blocks();
    b.finalize();
    let r = module.define_function(id, ctx).map_err(cg);
    module.clear_context(ctx);
    r.map(|()| id)
}

/// The word as stored big-endian by a native store of this host.
fn to_big_endian(
    b: &mut FunctionBuilder,
    w: cranelift_codegen::ir::Value,
) -> cranelift_codegen::ir::Value {
    if cfg!(target_endian = "little") {
        b.ins().bswap(w)
    } else {
        w
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::flat::tests::Rng;
    use crate::exec::prefix::tests::{random_plan, random_values};
    use crate::ir::Gress;

    /// The generated writer writes the bytes the interpreted plan writes, all of them
    /// (the buffer starts dirty), for random layouts and values.
    #[test]
    fn generated_prefix_writer_writes_what_the_plan_writes() {
        let mut r = Rng(0x2545_f491_4f6c_dd1d);
        let mut c = super::super::Compiler::new().expect("compiler");
        let mut plans = Vec::new();
        for i in 0..400 {
            let gress = [Gress::Ingress, Gress::Egress][i % 2];
            let (plan, _) = random_plan(&mut r, gress);
            let name = format!("prefix_{i}");
            let id = define(&mut c.module, &mut c.ctx, &mut c.fbc, &plan, &name).expect("code");
            plans.push((gress, plan, id));
        }
        c.module.finalize_definitions().expect("finalized");
        for (gress, plan, id) in &plans {
            // SAFETY: `define` built `id` with `PrefixFn`'s signature; the module lives until
            // the end of the test, after the last call.
            let write: PrefixFn =
                unsafe { std::mem::transmute(c.module.get_finalized_function(*id)) };
            for _ in 0..8 {
                let values = random_values(&mut r, *gress);
                let mut want = [0xa5u8; PREFIX_WORDS * 8 + 3];
                let mut got = want;
                // SAFETY: both buffers have `PREFIX_WORDS * 8` bytes after offset 1, and
                // `values` has every value of the gress's list (≥ `plan.values()`).
                unsafe {
                    plan.write(&values, want.as_mut_ptr().add(1));
                    write(values.as_ptr(), got.as_mut_ptr().add(1));
                }
                assert_eq!(got, want, "{gress:?} {plan:?} {values:x?}");
            }
        }
        // SAFETY: no function of the module runs again.
        unsafe { c.module.free_memory() };
    }
}
