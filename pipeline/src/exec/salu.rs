//! Stateful ALU: `RegisterAction.execute(index)` the way Tofino runs it — read the cell's
//! word(s), run the action body on them (`RegValue` / `RegOutput`), write the words back, return
//! the output (Tofino 2: up to four outputs). One register may be accessed once per packet pass;
//! a second access is a program error. Tofino 2's FIFO/stack counter ops run the action's
//! `overflow`/`underflow` handler, where it has one, on a full/empty access. Out-of-range indices are masked to the array's
//! power-of-two address space, no modulo (`state::wrap_index`), and counted. Tofino 2's
//! `Register.clear` sets every cell.

use super::{Ctx, ExecResult, Fault, ProgramError, RegCtx};
use crate::ir::{CounterOp, Expr, Register, RegisterAction, RegisterActionId, RegisterId, Value};
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
        let mut body = &ra.body;
        let idx = if reg.direct_table.is_some() {
            match self.direct_cell() {
                Some(i) => i,
                None => return Ok([0; 4]),
            }
        } else if let Expr::SaluCounter {
            op: CounterOp::Sweep,
            ..
        } = index
        {
            return self.register_sweep(ra, reg, params);
        } else if let Expr::SaluCounter { register, op } = index {
            match self.counter_index(*register, reg.size, *op)? {
                Some(i) => i,
                None => match self.flow_handler(ra, reg, *op) {
                    Some((i, handler)) => {
                        body = handler;
                        i
                    }
                    None => {
                        // Full or empty: the access is squashed (still the register's one access).
                        self.claim_register(ra.register)?;
                        return Ok([0; 4]);
                    }
                },
            }
        } else {
            let v = self.eval(index, params)?;
            self.wrap_cell(v, reg.size)
        };
        self.claim_register(ra.register)?;
        self.run_cell(ra, reg, body, idx, params)
    }

    /// `ra.sweep()` (Tofino 2): `apply` on every cell of the register, outputs dropped. The
    /// hardware walks the cells one per cycle after the call (its stateful counter in "clear"
    /// mode, tofino-model `tick_clear_counter`), and meanwhile squashes the register's other
    /// accesses; pisa runs the walk at once, as it does `Register.clear`.
    fn register_sweep(
        &mut self,
        ra: &RegisterAction,
        reg: &Register,
        params: &[Value],
    ) -> ExecResult<[Value; 4]> {
        self.claim_register(ra.register)?;
        let cells = if reg.direct_table.is_some() {
            self.rt
                .registers
                .get(ra.register.index())
                .map_or(0, |st| st.lo.len() as u32)
        } else {
            reg.size
        };
        for idx in 0..cells {
            self.run_cell(ra, reg, &ra.body, idx, params)?;
        }
        Ok([0; 4])
    }

    /// Runs `body` (an action's `apply` or handler) on cell `idx` of `reg`: the outputs.
    fn run_cell(
        &mut self,
        ra: &RegisterAction,
        reg: &Register,
        body: &crate::ir::Block,
        idx: u32,
        params: &[Value],
    ) -> ExecResult<[Value; 4]> {
        let r = ra.register.index();
        let (lo, hi) = match self.rt.registers.get(r) {
            Some(st) => (
                st.lo.get(idx as usize).copied().unwrap_or(0) as Value,
                st.hi.get(idx as usize).copied().unwrap_or(0) as Value,
            ),
            None => return Err(Fault::program(ProgramError::BadReference("register state"))),
        };
        let cell_bits = Value::from(reg.width) << u32::from(reg.paired);
        let addr = Value::from(idx) * cell_bits;
        let saved = self.reg.replace(RegCtx {
            lo,
            hi,
            mem_lo: lo,
            mem_hi: hi,
            out: [0; 4],
            width: reg.width,
            addr,
        });
        let res = self.exec_block(body, params);
        let done = std::mem::replace(&mut self.reg, saved);
        res?;
        let done = done.unwrap_or(RegCtx {
            lo,
            hi,
            mem_lo: lo,
            mem_hi: hi,
            out: [0; 4],
            width: reg.width,
            addr,
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
        let after = (done.lo & m, if reg.paired { done.hi & m } else { 0 });
        self.trace_register(ra, reg, idx, (lo, hi), after, out[0]);
        Ok(out)
    }

    /// The cell index `v` picks in an array of `size` cells, wrapped as the hardware's address
    /// mask wraps it (an out-of-range index is counted in `index_wraps`).
    pub(crate) fn wrap_cell(&mut self, v: Value, size: u32) -> u32 {
        let (i, wrapped) = wrap_index(v, size);
        self.stats.index_wraps += wrapped as u64;
        i
    }

    /// A direct register's cell: the matched entry's. On a miss a direct register has no
    /// cell (`None`): no access, output 0.
    pub(crate) fn direct_cell(&self) -> Option<u32> {
        self.entry.get().map(|h| h.index() as u32)
    }

    /// `TraceEvent::Register`: `ra` ran on cell `index` of `reg`, the words `before` and
    /// `after` (as written back), giving `output` (`rv`).
    pub(crate) fn trace_register(
        &mut self,
        ra: &RegisterAction,
        reg: &Register,
        index: u32,
        before: (Value, Value),
        after: (Value, Value),
        output: Value,
    ) {
        self.tr.record(|| TraceEvent::Register {
            register: reg.name.clone(),
            action: ra.name.clone(),
            index,
            before,
            after,
            output,
        });
    }

    /// A full `enqueue`/`push` or an empty `dequeue`/`pop` of an action with an overflow or
    /// underflow handler: the cell the hardware runs it on and the handler (tofino-model
    /// `MauStatefulCounters`: the counter does not move and its value, less the wrap bit,
    /// addresses the cell with the handler's instruction: the FIFO's tail = head, the stack's
    /// cell 0); `None`: no handler, the access is squashed.
    fn flow_handler<'p>(
        &self,
        ra: &'p RegisterAction,
        reg: &Register,
        op: CounterOp,
    ) -> Option<(u32, &'p crate::ir::Block)> {
        let handler = match op {
            CounterOp::Enqueue | CounterOp::Push => ra.overflow.as_ref()?,
            CounterOp::Dequeue | CounterOp::Pop => ra.underflow.as_ref()?,
            CounterOp::Log { .. } | CounterOp::Sweep => return None,
        };
        let n = u64::from(reg.size.max(1));
        let st = self.rt.registers.get(ra.register.index())?;
        let cell = match op {
            CounterOp::Enqueue => st.log % n,
            CounterOp::Dequeue => st.head % n,
            _ => 0,
        };
        Some((cell as u32, handler))
    }

    /// The cell a counter operation picks, moving the register's counter; `None`: squashed.
    fn counter_index(
        &mut self,
        r: RegisterId,
        size: u32,
        op: CounterOp,
    ) -> ExecResult<Option<u32>> {
        let Some(st) = self.rt.registers.get_mut(r.index()) else {
            return Err(Fault::program(ProgramError::BadReference("register state")));
        };
        Ok(counter_step(
            &mut st.log,
            &mut st.head,
            u64::from(size.max(1)),
            op,
        ))
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
        let word = self.wrap_cell(v, reg.size / n);
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
            mem_lo: lo,
            mem_hi: 0,
            out: [0; 4],
            width: 128,
            addr: Value::from(word) * 128,
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
        self.trace_register(ra, reg, word, (lo, 0), (done.lo, 0), out[0]);
        Ok(out)
    }
}

/// One counter operation on a register of `n` cells with counter `top` (the log's next cell,
/// the stack's top, the FIFO's tail) and FIFO head `head`: the cell it picks, or `None` when
/// squashed (the tofino-model's stateful counters: the log and stack stop when full, the stack
/// pops the cell below its top, the FIFO's pointers wrap with an extra bit to tell full from
/// empty).
pub(crate) fn counter_step(top: &mut u64, head: &mut u64, n: u64, op: CounterOp) -> Option<u32> {
    let cell = |v: u64| (v % n) as u32;
    match op {
        CounterOp::Log { stop_when_full } => {
            let at = *top;
            if at >= n {
                return (!stop_when_full).then_some(cell(n - 1));
            }
            // Tofino 1 saturates on the last cell; Tofino 2 goes on to "full".
            if at + 1 < n || stop_when_full {
                *top = at + 1;
            }
            Some(cell(at))
        }
        CounterOp::Push => {
            let at = *top;
            if at >= n {
                return None;
            }
            *top = at + 1;
            Some(cell(at))
        }
        CounterOp::Pop => {
            if *top == 0 {
                return None;
            }
            *top -= 1;
            Some(cell(*top))
        }
        CounterOp::Enqueue => {
            let (t, h) = (*top % (2 * n), *head % (2 * n));
            if (t + 2 * n - h) % (2 * n) == n {
                return None;
            }
            *top = (t + 1) % (2 * n);
            Some(cell(t))
        }
        CounterOp::Dequeue => {
            let (t, h) = (*top % (2 * n), *head % (2 * n));
            if t == h {
                return None;
            }
            *head = (h + 1) % (2 * n);
            Some(cell(h))
        }
        // A sweep walks every cell (`register_sweep`); it picks none of its own.
        CounterOp::Sweep => None,
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
