//! Running the flat form: expressions, control and action ops, table applies and deparser
//! emits, on the same [`Ctx`] the tree interpreter uses (so tree fallbacks see one state).
//!
//! Semantics are those of `exec::eval` / `exec::stmt` node for node; only the decisions the
//! lowering already took (widths, masks, watched fields, header ranges) are gone. With a
//! recording tracer it records the tree interpreter's events (built in `exec::trace_points`),
//! which is also how native code's fallbacks to it are traced.

use smallvec::SmallVec;

use super::{CsPart, FApply, FBranches, FExpr, FlatGress, Op};
use crate::exec::eval::{binop, sext, OnesSum};
use crate::exec::{Ctx, ExecResult, Fault, Flow, ProgramError};
use crate::ir::{ActionId, FieldRef, Value};
use crate::trace::Tracer;

/// Key values of one lookup (on the stack for the usual handful of key fields).
type Key = SmallVec<[Value; 8]>;

impl<T: Tracer> Ctx<'_, T> {
    /// Evaluates a lowered expression: leaves (most nodes) in line at the call site, the
    /// rest through [`Self::feval`].
    #[inline(always)]
    pub(crate) fn fval(&mut self, e: &FExpr, params: &[Value]) -> ExecResult<Value> {
        match e {
            FExpr::Const(v) => Ok(*v),
            FExpr::Field(f) => Ok(self.phv.get(*f)),
            FExpr::Param { index, mask } => {
                Ok(params.get(*index as usize).copied().unwrap_or(0) & mask)
            }
            FExpr::Valid(h) => Ok(self.phv.is_valid(*h as usize) as Value),
            FExpr::FieldEqConst { f, value } => Ok((self.phv.get(*f) == *value) as Value),
            _ => self.feval(e, params),
        }
    }

    /// Evaluates a lowered expression with `params` as the running action's data.
    pub(crate) fn feval(&mut self, e: &FExpr, params: &[Value]) -> ExecResult<Value> {
        Ok(match e {
            FExpr::Const(v) => *v,
            FExpr::Field(f) => self.phv.get(*f),
            FExpr::FieldEqConst { f, value } => (self.phv.get(*f) == *value) as Value,
            FExpr::Valid(h) => self.phv.is_valid(*h as usize) as Value,
            FExpr::Param { index, mask } => {
                params.get(*index as usize).copied().unwrap_or(0) & mask
            }
            FExpr::Not { a, mask } => !self.fval(a, params)? & mask,
            FExpr::Neg { a, mask } => self.fval(a, params)?.wrapping_neg() & mask,
            FExpr::LNot(a) => (self.fval(a, params)? == 0) as Value,
            FExpr::LAnd(a, b) => {
                if self.fval(a, params)? == 0 {
                    0
                } else {
                    (self.fval(b, params)? != 0) as Value
                }
            }
            FExpr::LOr(a, b) => {
                if self.fval(a, params)? != 0 {
                    1
                } else {
                    (self.fval(b, params)? != 0) as Value
                }
            }
            FExpr::Bin {
                op,
                a,
                b,
                width,
                ow,
                signed,
            } => {
                let av = self.fval(a, params)?;
                let bv = self.fval(b, params)?;
                binop(*op, av, bv, *width, *ow, *signed)
            }
            FExpr::Slice { a, lo, mask } => (self.fval(a, params)? >> *lo) & mask,
            FExpr::Concat {
                hi,
                lo,
                lo_width,
                mask,
            } => {
                let h = self.fval(hi, params)?;
                let l = self.fval(lo, params)?;
                (h.checked_shl(*lo_width).unwrap_or(0) | (l & crate::phv::mask(*lo_width as u16)))
                    & mask
            }
            FExpr::Sext { a, from, mask } => (sext(self.fval(a, params)?, *from) as Value) & mask,
            FExpr::Mask { a, mask } => self.fval(a, params)? & mask,
            FExpr::Ternary {
                cond,
                then,
                els,
                mask,
            } => {
                if self.fval(cond, params)? != 0 {
                    self.fval(then, params)? & mask
                } else {
                    self.fval(els, params)? & mask
                }
            }
            FExpr::ChecksumVerify(c) => {
                let s = self.scratch.csum.get(*c as usize).copied().unwrap_or(0);
                (s != 0xffff) as Value
            }
            FExpr::ChecksumGet(c) => {
                self.scratch.csum.get(*c as usize).copied().unwrap_or(0) as Value
            }
            FExpr::ChecksumUpdate(parts) => {
                (!self.ones_sum_parts(parts, params)? & 0xffff) as Value
            }
            FExpr::Hash { hash, inputs, mask } => {
                if !matches!(self.eng.hashers.get(*hash as usize), Some(Some(_))) {
                    return Err(Fault::program(ProgramError::BadReference("hash")));
                }
                let mut vals: smallvec::SmallVec<[(Value, u16); 16]> = smallvec::SmallVec::new();
                for (i, w) in inputs.iter() {
                    vals.push((self.fval(i, params)?, *w));
                }
                self.hash_values(*hash as usize, &vals)? & mask
            }
            FExpr::Salu(s) => self.eval(&s.tree, params)?,
            FExpr::RegWord { word, .. } => match (self.reg, word) {
                (Some(r), 0) => r.lo,
                (Some(r), 1) => r.hi,
                (Some(r), 2) => r.mem_lo,
                (Some(r), _) => r.mem_hi,
                (None, _) => return Err(Fault::program(ProgramError::RegValueOutsideSalu)),
            },
            FExpr::Meter {
                meter,
                index,
                color,
            } => {
                let index = index
                    .as_deref()
                    .map(|e| move |c: &mut Self| c.fval(e, params));
                let color = color
                    .as_deref()
                    .map(|e| move |c: &mut Self| c.fval(e, params));
                self.meter_with(*meter as usize, index, color)?
            }
            FExpr::Tree(e) => self.eval(e, params)?,
        })
    }

    /// The ones'-complement sum of lowered checksum parts.
    #[inline(never)]
    pub(crate) fn ones_sum_parts(&mut self, parts: &[CsPart], params: &[Value]) -> ExecResult<u32> {
        let mut sum = OnesSum::default();
        for p in parts {
            match p {
                CsPart::Run { start, width } => self.sum_phv_run(&mut sum, *start, *width),
                CsPart::Value { e, width } => {
                    let v = self.fval(e, params)?;
                    sum.push(v, *width);
                }
                CsPart::Tree(e) => {
                    let v = self.eval(e, params)?;
                    sum.push(v, self.width_of(e));
                }
            }
        }
        Ok(sum.finish())
    }

    /// Adds `width` PHV bits from bit `start` to `sum`: whole bytes straight from the PHV
    /// when the run is byte-aligned (a header's fields), else 48 bits at a time.
    #[inline]
    fn sum_phv_run(&self, sum: &mut OnesSum, start: u32, width: u32) {
        let (first, len) = ((start / 8) as usize, (width / 8) as usize);
        if start.is_multiple_of(8) && width.is_multiple_of(8) && first + len <= self.phv.len() {
            sum.push_bytes(self.phv.slice(first, len));
            return;
        }
        let mut off = start;
        let end = start + width;
        while off < end {
            let take = (end - off).min(48) as u16;
            sum.push(
                self.phv.get(FieldRef {
                    offset: off,
                    width: take,
                }),
                take,
            );
            off += u32::from(take);
        }
    }

    /// Runs a lowered block; stops at `return`/`exit`.
    pub(crate) fn fexec_block(
        &mut self,
        fg: &FlatGress,
        ops: &[Op],
        params: &[Value],
    ) -> ExecResult {
        for op in ops {
            match self.fexec(fg, op, params)? {
                Flow::Next => {}
                other => return Ok(other),
            }
        }
        Ok(Flow::Next)
    }

    #[inline]
    fn fset(&mut self, f: FieldRef, v: Value, watch: u8) {
        self.phv.set(f, v);
        self.written |= watch;
    }

    pub(crate) fn fexec(&mut self, fg: &FlatGress, op: &Op, params: &[Value]) -> ExecResult {
        match op {
            Op::SetConst { f, value, watch } => {
                self.fset(*f, *value, *watch);
                if T::ENABLED {
                    self.trace_drop_mark(*f, *value);
                }
            }
            Op::SetParam {
                f,
                index,
                mask,
                watch,
            } => {
                let v = params.get(*index as usize).copied().unwrap_or(0) & mask;
                self.fset(*f, v, *watch);
                if T::ENABLED {
                    self.trace_drop_mark(*f, v);
                }
            }
            Op::Set { f, e, watch } => {
                let v = self.fval(e, params)?;
                self.fset(*f, v, *watch);
                if T::ENABLED {
                    self.trace_drop_mark(*f, v);
                }
            }
            Op::SetSlice {
                f,
                e,
                lo,
                mask,
                watch,
            } => {
                let v = self.fval(e, params)?;
                let m = mask << lo;
                let old = self.phv.get(*f);
                self.fset(*f, (old & !m) | ((v << lo) & m), *watch);
            }
            Op::SetValid { header, valid } => self.phv.set_valid(*header as usize, *valid),
            Op::CopyHeader {
                dst,
                src,
                dst_off,
                src_off,
                len,
            } => {
                let (s, d) = (*src_off as usize, *dst_off as usize);
                self.phv.copy_within(s, d, *len as usize);
                let v = self.phv.is_valid(*src as usize);
                self.phv.set_valid(*dst as usize, v);
            }
            Op::If {
                cond,
                then,
                els,
                gate,
            } => {
                let c = self.fval(cond, params)? != 0;
                if T::ENABLED {
                    if let Some(g) = fg.gates.get(*gate as usize) {
                        self.trace_gate(g.stage, &g.cond, c);
                    }
                }
                return if c {
                    self.fexec_block(fg, then, params)
                } else {
                    self.fexec_block(fg, els, params)
                };
            }
            Op::Apply(a) => return self.fapply(fg, a, params),
            Op::Call { action, args } => return self.fcall(fg, *action, args, params),
            Op::Count { counter, index } => self.fcount(*counter, Some(index), params)?,
            Op::CountDirect { counter } => self.fcount(*counter, None, params)?,
            Op::Exit => {
                if T::ENABLED {
                    self.trace_exit();
                }
                return Ok(Flow::Exit);
            }
            Op::Return => return Ok(Flow::Return),
            Op::Emit {
                header,
                offset,
                len,
            } => self.femit(&[(*header, *offset, *len)], *offset, *len),
            Op::EmitRun { parts, offset, len } => self.femit(parts, *offset, *len),
            Op::Extract {
                header,
                offset,
                len,
            } => self.fextract(*header, *offset, *len)?,
            Op::ExtractNext {
                next_index,
                elements,
            } => {
                let ni = self.phv.get(*next_index);
                let Some(e) = usize::try_from(ni).ok().and_then(|i| elements.get(i)) else {
                    return Err(crate::exec::parser::STACK_FULL);
                };
                self.fexec(fg, e, params)?;
                self.phv.set(*next_index, ni + 1);
            }
            Op::AdvanceConst(bits) => {
                let end = self.cursor.saturating_add(*bits);
                if u128::from(end) > self.input.len() as u128 * 8 {
                    return Err(Fault::Parser(crate::exec::ParserFault::PacketTooShort));
                }
                self.cursor = end;
            }
            Op::ChecksumAdd {
                checksum,
                parts,
                subtract,
            } => {
                let mut sum = self.ones_sum_parts(parts, params)?;
                if *subtract {
                    sum = !sum & 0xffff;
                }
                if let Some(acc) = self.scratch.csum.get_mut(*checksum as usize) {
                    *acc = crate::exec::eval::ones_add(*acc, sum);
                }
            }
            Op::Digest { digest, fields } => {
                let mut vals = Vec::with_capacity(fields.len());
                for e in fields.iter() {
                    vals.push(self.fval(e, params)?);
                }
                self.digest_pack(*digest, vals);
            }
            Op::Mirror { session, header } => {
                let sid = self.fval(session, params)?;
                let mut vals: SmallVec<[(Value, u16); 8]> = SmallVec::new();
                for (e, w) in header.iter() {
                    vals.push((self.fval(e, params)?, *w));
                }
                self.mirror_request(sid, &vals);
            }
            Op::Tree(s) => return self.exec_stmt(s, params),
        }
        Ok(Flow::Next)
    }

    /// `emit` of headers lying back to back at PHV bytes `[offset, offset + len)`: one copy
    /// when all are valid, else one per valid header.
    #[inline(never)]
    fn femit(&mut self, parts: &[(u32, u32, u32)], offset: u32, len: u32) {
        if parts.iter().all(|p| self.phv.is_valid(p.0 as usize)) {
            let bytes = self.phv.slice(offset as usize, len as usize);
            self.emit_out.extend_from_slice(bytes);
        } else {
            for &(h, offset, len) in parts {
                if self.phv.is_valid(h as usize) {
                    let bytes = self.phv.slice(offset as usize, len as usize);
                    self.emit_out.extend_from_slice(bytes);
                }
            }
        }
    }

    /// `count(index)` (indexed counter) or `count()` (direct counter).
    #[inline(never)]
    fn fcount(&mut self, counter: u32, index: Option<&FExpr>, params: &[Value]) -> ExecResult<()> {
        let i = match index {
            Some(e) => Some(self.fval(e, params)?),
            None => None,
        };
        self.count(counter as usize, i)
    }

    /// A direct action call: evaluate the arguments, then run the lowered action.
    #[inline(never)]
    fn fcall(
        &mut self,
        fg: &FlatGress,
        action: ActionId,
        args: &[FExpr],
        params: &[Value],
    ) -> ExecResult {
        let mut a: SmallVec<[Value; 8]> = SmallVec::new();
        for e in args {
            a.push(self.fval(e, params)?);
        }
        self.trace_action(action, &a);
        self.frun_action(fg, action, &a)
    }

    /// Runs action `a` with action data `args` (`exit` ends the control, `return` the action).
    #[inline]
    pub(crate) fn frun_action(
        &mut self,
        fg: &FlatGress,
        a: ActionId,
        args: &[Value],
    ) -> ExecResult {
        let Some(body) = fg.actions.get(a.index()) else {
            return Err(Fault::program(ProgramError::BadReference("action")));
        };
        match self.fexec_block(fg, body, args)? {
            Flow::Exit => Ok(Flow::Exit),
            _ => Ok(Flow::Next),
        }
    }

    #[inline(never)]
    fn fapply(&mut self, fg: &FlatGress, a: &FApply, params: &[Value]) -> ExecResult {
        let tables = self.tables;
        let Some(ts) = tables.get(a.table as usize) else {
            return Err(Fault::program(ProgramError::BadReference("table")));
        };
        let mut key = Key::new();
        for k in a.keys.iter() {
            key.push(match k {
                FExpr::Field(f) => self.phv.get(*f),
                other => self.fval(other, params)?,
            });
        }
        let mut data = [0; crate::table::INLINE_ARGS];
        let (hit, action, args) = match ts.table.lookup_call(&key, &mut data, &self.rt.registers) {
            Some((h, action, args)) => (Some(h), action, args),
            None => (None, ts.default().action, &ts.default().args[..]),
        };
        ts.record(hit, self.now);
        if T::ENABLED {
            let t = crate::ir::TableId(a.table);
            self.trace_table(t, &key, hit.is_some(), action, args);
        }
        let saved = self.entry;
        self.entry = super::super::RunningEntry::of(hit);
        let flow = self.frun_action(fg, action, args);
        self.entry = saved;
        if flow? == Flow::Exit {
            return Ok(Flow::Exit);
        }
        match &a.branches {
            FBranches::None => Ok(Flow::Next),
            FBranches::HitMiss { hit: h, miss } => {
                if hit.is_some() {
                    self.fexec_block(fg, h, params)
                } else {
                    self.fexec_block(fg, miss, params)
                }
            }
            FBranches::ActionRun { cases, default } => {
                let block = cases
                    .iter()
                    .find(|(act, _)| *act == action)
                    .map(|(_, b)| b)
                    .unwrap_or(default);
                self.fexec_block(fg, block, params)
            }
        }
    }
}
