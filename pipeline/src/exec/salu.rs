//! Stateful ALU: `RegisterAction.execute(index)` the way Tofino runs it — read the cell's
//! word(s), run the action body on them (`RegValue` / `RegOutput`), write the words back, return
//! the output (Tofino 2: up to four outputs). One register may be accessed once per packet pass;
//! a second access is a program error. Out-of-range indices wrap like the hardware's address
//! mask and are counted. Tofino 2's `Register.clear` sets every cell.

use super::{Ctx, ExecResult, Fault, ProgramError, RegCtx};
use crate::ir::{Expr, RegisterActionId, RegisterId, Value};
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
        let idx = if reg.direct_table.is_some() {
            match self.entry {
                Some(h) => h.index() as u32,
                // A direct register on a miss has no cell: no access, output 0.
                None => return Ok([0; 4]),
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
}
