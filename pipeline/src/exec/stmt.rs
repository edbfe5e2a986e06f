//! Statement execution: assignments, header operations, gateways (`if`), table applies with
//! their hit/miss and action_run branches, action calls, counters, `exit` and `return`, and the
//! parser/deparser statements (delegated to [`super::parser`] and [`super::deparser`]).

use smallvec::SmallVec;

use super::{Ctx, ExecResult, Fault, Flow, ProgramError};
use crate::ir::{ActionId, Block, Place, RegWord, Stmt, TableBranches, TableId, Value};
use crate::phv::mask;
use crate::state::wrap_index;
use crate::trace::Tracer;

/// Action data of a direct call (kept on the stack for the usual handful of parameters).
type Args = SmallVec<[Value; 8]>;

impl<T: Tracer> Ctx<'_, T> {
    /// Run a block; stops at `return`/`exit`.
    pub fn exec_block(&mut self, block: &[Stmt], params: &[Value]) -> ExecResult {
        for s in block {
            match self.exec_stmt(s, params)? {
                Flow::Next => {}
                other => return Ok(other),
            }
        }
        Ok(Flow::Next)
    }

    fn assign(&mut self, dst: &Place, v: Value) {
        match *dst {
            Place::Field(f) => {
                self.phv.set(f, v);
                self.note_write(f.offset);
                self.trace_drop_mark(f, v);
            }
            Place::FieldSlice { field, hi, lo } => {
                if hi >= lo && hi < field.width {
                    let w = hi - lo + 1;
                    let m = mask(w) << lo;
                    let old = self.phv.get(field);
                    self.phv.set(field, (old & !m) | ((v << lo) & m));
                    self.note_write(field.offset);
                }
            }
            Place::RegValue(word) => {
                if let Some(r) = self.reg.as_mut() {
                    let m = mask(r.width);
                    match word {
                        RegWord::Lo => r.lo = v & m,
                        RegWord::Hi => r.hi = v & m,
                    }
                }
            }
            Place::RegOutput => {
                if let Some(r) = self.reg.as_mut() {
                    r.out[0] = v;
                }
            }
            Place::RegOutputN(n) => {
                if let (Some(r), 2..=4) = (self.reg.as_mut(), n) {
                    r.out[usize::from(n - 1)] = v;
                }
            }
        }
    }

    fn note_write(&mut self, offset: u32) {
        let watch = &self.eng.gress(self.gress).watch;
        for (i, w) in watch.iter().enumerate() {
            if let Some(w) = w {
                if w.offset == offset {
                    self.written |= 1 << i;
                }
            }
        }
    }

    pub fn exec_stmt(&mut self, s: &Stmt, params: &[Value]) -> ExecResult {
        match s {
            Stmt::Assign { dst, value } => {
                let v = self.eval(value, params)?;
                self.assign(dst, v);
            }
            Stmt::CopyHeader { dst, src } => self.copy_header(dst.index(), src.index()),
            Stmt::SetValid { header, valid } => self.phv.set_valid(header.index(), *valid),
            Stmt::StackShift { stack, count, push } => {
                self.stack_shift(stack.index(), *count, *push)
            }
            Stmt::If {
                cond,
                then,
                els,
                stage,
            } => {
                let c = self.eval(cond, params)? != 0;
                self.trace_gate(*stage, cond, c);
                return if c {
                    self.exec_block(then, params)
                } else {
                    self.exec_block(els, params)
                };
            }
            Stmt::ApplyTable { table, branches } => {
                return self.apply_table(*table, branches, params)
            }
            Stmt::CallAction { action, args } => return self.call_action(*action, args, params),
            Stmt::Count { counter, index } => self.count_indexed(counter.index(), index, params)?,
            Stmt::CountDirect { counter } => self.count(counter.index(), None)?,
            Stmt::RegisterExecute {
                action,
                index,
                outs,
            } => {
                let vals = self.register_run(*action, index, params)?;
                for (o, v) in outs.iter().zip(vals) {
                    if let Some(p) = o {
                        self.assign(p, v);
                    }
                }
            }
            Stmt::RegisterClear { register, lo, hi } => self.register_clear(*register, *lo, *hi)?,
            Stmt::Exit => {
                self.trace_exit();
                return Ok(Flow::Exit);
            }
            Stmt::Return => return Ok(Flow::Return),
            Stmt::Emit(h) => {
                // Emitted bytes go straight to the output, in program order.
                if self.phv.is_valid(h.index()) {
                    self.scratch_emit(h.index())?;
                }
            }
            Stmt::Extract(_)
            | Stmt::ExtractVarbit { .. }
            | Stmt::ExtractNext(_)
            | Stmt::Advance(_)
            | Stmt::CounterRange { .. }
            | Stmt::ChecksumAdd { .. }
            | Stmt::ChecksumSubtract { .. }
            | Stmt::ChecksumDeposit { .. } => {
                if !self.in_parser {
                    return Err(Fault::program(ProgramError::ParserOnly));
                }
                self.exec_parser_stmt(s, params)?;
            }
            Stmt::MirrorEmit { .. }
            | Stmt::ResubmitEmit { .. }
            | Stmt::PktgenEmit { .. }
            | Stmt::DigestPack { .. } => {
                self.exec_deparser_stmt(s, params)?;
            }
        }
        Ok(Flow::Next)
    }

    /// `Stmt::Count` with an index expression (kept out of `exec_stmt`'s frame).
    #[inline(never)]
    fn count_indexed(
        &mut self,
        counter: usize,
        index: &crate::ir::Expr,
        params: &[Value],
    ) -> ExecResult<()> {
        let i = self.eval(index, params)?;
        self.count(counter, Some(i))
    }

    /// A direct action call: evaluate the arguments, then run the action.
    #[inline(never)]
    fn call_action(
        &mut self,
        action: ActionId,
        args: &[crate::ir::Expr],
        params: &[Value],
    ) -> ExecResult {
        let mut a = Args::new();
        for e in args {
            a.push(self.eval(e, params)?);
        }
        // Table-invoked actions are traced with their table; direct calls here.
        self.trace_action(action, &a);
        self.run_action(action, &a)
    }

    /// Header-to-header assignment: bytes and validity.
    #[inline(never)]
    fn copy_header(&mut self, dst: usize, src: usize) {
        let hs = &self.pl_gress().phv.headers;
        if let (Some(d), Some(sr)) = (hs.get(dst), hs.get(src)) {
            let len = d.byte_len.min(sr.byte_len) as usize;
            self.phv
                .copy_within(sr.byte_offset as usize, d.byte_offset as usize, len);
            let v = self.phv.is_valid(src);
            self.phv.set_valid(dst, v);
        }
    }

    pub(crate) fn pl_gress(&self) -> &crate::ir::GressProgram {
        match self.gress {
            crate::ir::Gress::Ingress => &self.pl.ingress,
            crate::ir::Gress::Egress => &self.pl.egress,
        }
    }

    #[inline(never)]
    fn stack_shift(&mut self, stack: usize, count: u16, push: bool) {
        let pl = self.pl;
        let gp = match self.gress {
            crate::ir::Gress::Ingress => &pl.ingress,
            crate::ir::Gress::Egress => &pl.egress,
        };
        let Some(st) = gp.phv.stacks.get(stack) else {
            return;
        };
        let n = st.elements.len();
        let c = (count as usize).min(n);
        let hdr = |i: usize| &gp.phv.headers[st.elements[i].index()];
        if push {
            for i in (c..n).rev() {
                let (d, s) = (hdr(i), hdr(i - c));
                self.phv.copy_within(
                    s.byte_offset as usize,
                    d.byte_offset as usize,
                    d.byte_len as usize,
                );
                let v = self.phv.is_valid(st.elements[i - c].index());
                self.phv.set_valid(st.elements[i].index(), v);
            }
            for i in 0..c {
                self.phv.set_valid(st.elements[i].index(), false);
            }
            let ni = self.phv.get(st.next_index) as usize;
            self.phv.set(st.next_index, (ni + c).min(n) as Value);
        } else {
            for i in 0..n.saturating_sub(c) {
                let (d, s) = (hdr(i), hdr(i + c));
                self.phv.copy_within(
                    s.byte_offset as usize,
                    d.byte_offset as usize,
                    d.byte_len as usize,
                );
                let v = self.phv.is_valid(st.elements[i + c].index());
                self.phv.set_valid(st.elements[i].index(), v);
            }
            for i in n - c..n {
                self.phv.set_valid(st.elements[i].index(), false);
            }
            let ni = self.phv.get(st.next_index) as usize;
            self.phv.set(st.next_index, ni.saturating_sub(c) as Value);
        }
    }

    pub(crate) fn count(&mut self, counter: usize, index: Option<Value>) -> ExecResult<()> {
        let pl = self.pl;
        let Some(c) = pl.counters.get(counter) else {
            return Err(Fault::program(ProgramError::BadReference("counter")));
        };
        let idx = match (c.direct_table, index) {
            // A direct counter counts the matched entry's cell; the default action on a miss
            // counts the default entry's cell, after the entries'.
            (Some(t), _) => match self.entry.get() {
                Some(h) => h.index(),
                None => match pl.tables.get(t.index()) {
                    Some(t) => crate::state::default_entry_cell(t),
                    None => return Ok(()),
                },
            },
            (None, Some(i)) => {
                let (i, wrapped) = wrap_index(i, c.size);
                self.stats.index_wraps += wrapped as u64;
                i as usize
            }
            (None, None) => 0,
        };
        if c.bytes.true_egress && self.gress == crate::ir::Gress::Egress {
            self.effects.true_egress.push(super::TrueEgress::Count {
                counter: counter as u32,
                index: idx as u32,
            });
            return Ok(());
        }
        let len = c.bytes.counted(self.pkt_len);
        self.rt.add_count(counter, idx, len);
        Ok(())
    }

    /// Applies the pass's true-egress-accounting counts and meter charges with the length of
    /// the packet the egress deparser built (`out_len` bytes).
    pub(crate) fn settle_true_egress(&mut self, out_len: u32) {
        let pl = self.pl;
        for u in std::mem::take(&mut self.effects.true_egress) {
            match u {
                super::TrueEgress::Count { counter, index } => {
                    let Some(c) = pl.counters.get(counter as usize) else {
                        continue;
                    };
                    let len = c.bytes.counted(out_len);
                    self.rt.add_count(counter as usize, index as usize, len);
                }
                super::TrueEgress::Meter {
                    meter,
                    index,
                    color,
                } => {
                    // The meter array applies its byte count adjustment.
                    if let Some(arr) = self.rt.meters.get_mut(meter as usize) {
                        arr.charge(index, color, out_len);
                    }
                }
            }
        }
    }

    /// Run action `a` with action data `args` (direct call, entry or default action).
    pub fn run_action(&mut self, a: ActionId, args: &[Value]) -> ExecResult {
        let pl = self.pl;
        let Some(act) = pl.actions.get(a.index()) else {
            return Err(Fault::program(ProgramError::BadReference("action")));
        };
        match self.exec_block(&act.body, args)? {
            Flow::Exit => Ok(Flow::Exit),
            _ => Ok(Flow::Next),
        }
    }

    #[inline(never)]
    fn apply_table(
        &mut self,
        tid: TableId,
        branches: &TableBranches,
        params: &[Value],
    ) -> ExecResult {
        let pl = self.pl;
        let tables = self.tables;
        let (Some(t), Some(ts)) = (pl.tables.get(tid.index()), tables.get(tid.index())) else {
            return Err(Fault::program(ProgramError::BadReference("table")));
        };
        let mut key = std::mem::take(&mut self.scratch.key);
        key.clear();
        for k in &t.keys {
            // Plain field keys (the usual case) skip the expression evaluator.
            if let crate::ir::Expr::Field(f) = &k.expr {
                key.push(self.phv.get(*f));
                continue;
            }
            match self.eval(&k.expr, params) {
                Ok(v) => key.push(v),
                Err(e) => {
                    self.scratch.key = key;
                    return Err(e);
                }
            }
        }
        let hit = ts.table.lookup_in(&key, &self.rt.registers);
        ts.record(hit, self.now);
        let call = match hit {
            Some(h) => ts.table.hit_action(h, &key, &self.rt.registers),
            None => ts.default(),
        };
        self.trace_table(tid, &key, hit.is_some(), call.action, &call.args);
        self.scratch.key = key;
        let saved = self.entry;
        self.entry = super::RunningEntry::of(hit);
        let flow = self.run_action(call.action, &call.args);
        self.entry = saved;
        if flow? == Flow::Exit {
            return Ok(Flow::Exit);
        }
        match branches {
            TableBranches::None => Ok(Flow::Next),
            TableBranches::HitMiss { hit: h, miss } => {
                if hit.is_some() {
                    self.exec_block(h, params)
                } else {
                    self.exec_block(miss, params)
                }
            }
            TableBranches::ActionRun { cases, default } => {
                let block: &Block = cases
                    .iter()
                    .find(|(a, _)| *a == call.action)
                    .map(|(_, b)| b)
                    .unwrap_or(default);
                self.exec_block(block, params)
            }
        }
    }
}
