//! Stateful ALU: `RegisterAction.execute(index)` the way Tofino runs it — read the cell's
//! word(s), run the action body on them (`RegValue` / `RegOutput`), write the words back, return
//! the output (Tofino 2: up to four outputs). One register may be accessed once per packet pass;
//! a second access is a program error. Out-of-range indices wrap like the hardware's address
//! mask and are counted. Tofino 2's `Register.clear` sets every cell.

use super::{Ctx, ExecResult, Fault, ProgramError, RegCtx};
use crate::ir::{Expr, Register, RegisterAction, RegisterActionId, RegisterId, Value};
use crate::phv::mask;
use crate::state::wrap_index;
use crate::trace::{TraceEvent, Tracer};

impl<T: Tracer> Ctx<'_, T> {
    /// `execute` as a value: the action's first output.
    pub(crate) fn register_execute(
        &mut self,
        ra_id: RegisterActionId,
        index: &Expr,
        params: &[Value],
    ) -> ExecResult<Value> {
        Ok(self.register_run(ra_id, index, params)?[0])
    }

    /// `reg.clear(value)`: every cell takes `value` (the whole array at once: pisa does not
    /// model the time the hardware's clear takes).
    pub(crate) fn register_clear(&mut self, r: RegisterId, lo: Value, hi: Value) -> ExecResult<()> {
        let Some(reg) = self.pl.registers.get(r.index()) else {
            return Err(Fault::program(ProgramError::BadReference("register")));
        };
        let m = mask(reg.width);
        let Some(st) = self.rt.registers.get_mut(r.index()) else {
            return Err(Fault::program(ProgramError::BadReference("register state")));
        };
        st.lo.fill((lo & m) as u64);
        st.hi.fill((hi & m) as u64);
        Ok(())
    }

    /// Runs a RegisterAction on its cell: the outputs `rv1..rv4`.
    #[inline(never)]
    pub(crate) fn register_run(
        &mut self,
        ra_id: RegisterActionId,
        index: &Expr,
        params: &[Value],
    ) -> ExecResult<[Value; 4]> {
        let pl = self.pl;
        let Some(ra) = pl.register_actions.get(ra_id.index()) else {
            return Err(Fault::program(ProgramError::BadReference(
                "register action",
            )));
        };
        let Some(reg) = pl.registers.get(ra.register.index()) else {
            return Err(Fault::program(ProgramError::BadReference("register")));
        };
        if ra.wide {
            return self.wide_run(ra, reg, index, params);
        }
        let idx = if reg.direct_table.is_some() {
            match self.entry {
                Some(h) => h.index() as u32,
                // A direct register on a miss has no cell: no access, output 0.
                None => return Ok([0; 4]),
            }
        } else if let Expr::StatefulLog {
            register,
            stop_when_full,
        } = index
        {
            match self.log_index(*register, reg.size, *stop_when_full)? {
                Some(i) => i,
                None => {
                    // Tofino 2, every cell logged: the access is squashed (still one access).
                    self.claim_register(ra.register)?;
                    return Ok([0; 4]);
                }
            }
        } else {
            let v = self.eval(index, params)?;
            let (i, wrapped) = wrap_index(v, reg.size);
            self.stats.index_wraps += wrapped as u64;
            i
        };
        self.claim_register(ra.register)?;
        let r = ra.register.index();
        let (lo, hi) = match self.rt.registers.get(r) {
            Some(st) => (
                st.lo.get(idx as usize).copied().unwrap_or(0) as Value,
                st.hi.get(idx as usize).copied().unwrap_or(0) as Value,
            ),
            None => return Err(Fault::program(ProgramError::BadReference("register state"))),
        };
        let saved = self.reg.replace(RegCtx {
            lo,
            hi,
            out: [0; 4],
            width: reg.width,
        });
        let res = self.exec_block(&ra.body, params);
        let done = std::mem::replace(&mut self.reg, saved);
        res?;
        let done = done.unwrap_or(RegCtx {
            lo,
            hi,
            out: [0; 4],
            width: reg.width,
        });
        let m = mask(reg.width);
        if let Some(st) = self.rt.registers.get_mut(r) {
            if let Some(c) = st.lo.get_mut(idx as usize) {
                *c = (done.lo & m) as u64;
            }
            if let Some(c) = st.hi.get_mut(idx as usize) {
                *c = (done.hi & m) as u64;
            }
        }
        let mut out = done.out;
        out[0] &= mask(ra.output_width);
        self.tr.record(|| TraceEvent::Register {
            register: reg.name.clone(),
            action: ra.name.clone(),
            index: idx,
            before: (lo, hi),
            after: (done.lo & m, if reg.paired { done.hi & m } else { 0 }),
            output: out[0],
        });
        Ok(out)
    }

    /// `execute_log()`: the cell the register's log counter points at, advancing the counter.
    /// Full (every cell logged): Tofino 1 keeps logging into the last cell, Tofino 2
    /// (`stop_when_full`) gives `None` (the access is squashed).
    fn log_index(
        &mut self,
        r: RegisterId,
        size: u32,
        stop_when_full: bool,
    ) -> ExecResult<Option<u32>> {
        let Some(st) = self.rt.registers.get_mut(r.index()) else {
            return Err(Fault::program(ProgramError::BadReference("register state")));
        };
        let last = u64::from(size.max(1)) - 1;
        let at = st.log;
        if at > last {
            return Ok((!stop_when_full).then_some(last as u32));
        }
        st.log = if at == last && !stop_when_full {
            last
        } else {
            at + 1
        };
        Ok(Some(at as u32))
    }

    /// A MinMaxAction: the body sees the 128-bit word of `128 / width` cells that `index`
    /// picks (cell `index * n + i` in lane i), and writes the lanes back.
    fn wide_run(
        &mut self,
        ra: &RegisterAction,
        reg: &Register,
        index: &Expr,
        params: &[Value],
    ) -> ExecResult<[Value; 4]> {
        let n = match (reg.width, reg.paired) {
            (8, false) => 16u32,
            (16, false) => 8,
            _ => {
                return Err(Fault::program(ProgramError::BadReference(
                    "128-bit word of a register without 8- or 16-bit cells",
                )))
            }
        };
        let v = self.eval(index, params)?;
        let (word, wrapped) = wrap_index(v, reg.size / n);
        self.stats.index_wraps += wrapped as u64;
        self.claim_register(ra.register)?;
        let r = ra.register.index();
        let Some(st) = self.rt.registers.get(r) else {
            return Err(Fault::program(ProgramError::BadReference("register state")));
        };
        let base = (word * n) as usize;
        let lane = u32::from(reg.width);
        let mut lo: Value = 0;
        for i in 0..n {
            let c = st.lo.get(base + i as usize).copied().unwrap_or(0) as Value;
            lo |= (c & mask(reg.width)) << (lane * i);
        }
        let ctx = RegCtx {
            lo,
            hi: 0,
            out: [0; 4],
            width: 128,
        };
        let saved = self.reg.replace(ctx);
        let res = self.exec_block(&ra.body, params);
        let done = std::mem::replace(&mut self.reg, saved).unwrap_or(ctx);
        res?;
        if let Some(st) = self.rt.registers.get_mut(r) {
            for i in 0..n {
                if let Some(c) = st.lo.get_mut(base + i as usize) {
                    *c = ((done.lo >> (lane * i)) & mask(reg.width)) as u64;
                }
            }
        }
        let mut out = done.out;
        out[0] &= mask(ra.output_width);
        self.tr.record(|| TraceEvent::Register {
            register: reg.name.clone(),
            action: ra.name.clone(),
            index: word,
            before: (lo, 0),
            after: (done.lo, 0),
            output: out[0],
        });
        Ok(out)
    }
}

/// `this.predicate(..)`: the one-hot predicate output, bit `hit` (the conditions that held, as
/// bits `cmp0..cmp3`) set, cut to `width` bits.
pub(crate) fn predicate_output(hit: u32, width: u16) -> Value {
    (1 as Value).checked_shl(hit).unwrap_or(0) & mask(width)
}

/// `min8/max8/min16/max16(value, mask)`: the chosen lane's value, or its number (`index`).
pub(crate) fn min_max(max: bool, lane: u16, value: Value, mask_bits: Value, index: bool) -> Value {
    let n = 128 / u32::from(lane.max(1));
    let mut best: Option<(u32, Value)> = None;
    for i in 0..n {
        if (mask_bits >> i) & 1 == 0 {
            continue;
        }
        let v = (value >> (u32::from(lane) * i)) & mask(lane);
        let better = match best {
            None => true,
            Some((_, b)) => (max && v > b) || (!max && v < b),
        };
        if better {
            best = Some((i, v));
        }
    }
    match (best, index) {
        (Some((i, _)), true) => Value::from(i),
        (Some((_, v)), false) => v,
        (None, _) => 0,
    }
}
