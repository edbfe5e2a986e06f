//! Checks a [`Program`] before a switch runs it: every id names an object that exists, every
//! field lies inside its gress's PHV, every header, stack and parser state reference is in
//! range. A frontend bug (or a hand-built IR) is reported with the place it was found, instead
//! of an executor falling back at run time.

use crate::ir::{
    Block, Expr, FieldRef, Gress, GressProgram, KeysetElem, NextState, Pipeline, Place, Program,
    RegisterActionId, Stmt, TableBranches, Transition,
};

/// What is wrong with an IR, and where.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid IR in {place}: {what}")]
pub struct VerifyError {
    pub place: String,
    pub what: String,
}

struct Check<'a> {
    pl: &'a Pipeline,
    g: &'a GressProgram,
    place: String,
}

impl Check<'_> {
    fn gress(&self) -> Gress {
        if std::ptr::eq(self.g, &self.pl.egress) {
            Gress::Egress
        } else {
            Gress::Ingress
        }
    }

    fn fail(&self, what: String) -> Result<(), VerifyError> {
        Err(VerifyError {
            place: self.place.clone(),
            what,
        })
    }

    fn in_range(&self, kind: &str, i: usize, len: usize) -> Result<(), VerifyError> {
        if i < len {
            Ok(())
        } else {
            self.fail(format!("{kind} #{i} does not exist ({len} of them)"))
        }
    }

    /// A case's keyset: one element per key, or one value set with a field per key; value
    /// sets exist, belong to this gress and have as many fields as the keys they cover.
    fn keyset(&self, ks: &[KeysetElem], keys: usize) -> Result<(), VerifyError> {
        let whole = matches!(ks, [KeysetElem::ValueSet(_)]) && keys > 1;
        if ks.len() != keys && !whole {
            return self.fail(format!(
                "a keyset has {} elements for {keys} keys",
                ks.len()
            ));
        }
        for k in ks {
            if let KeysetElem::ValueSet(id) = k {
                self.in_range("value set", id.index(), self.pl.value_sets.len())?;
                let vs = &self.pl.value_sets[id.index()];
                let covered = if whole { keys } else { 1 };
                if vs.fields.len() != covered || vs.gress != self.gress() {
                    return self.fail(format!(
                        "value set {} ({} fields, {:?}) used for {covered} key(s) in the {:?} parser",
                        vs.name,
                        vs.fields.len(),
                        vs.gress,
                        self.gress()
                    ));
                }
            }
        }
        Ok(())
    }

    fn field(&self, f: FieldRef) -> Result<(), VerifyError> {
        let end = u64::from(f.offset) + u64::from(f.width);
        if f.width == 0 || end > u64::from(self.g.phv.bytes) * 8 {
            return self.fail(format!(
                "field at bit {} ({} bits) is outside the {}-byte PHV",
                f.offset, f.width, self.g.phv.bytes
            ));
        }
        Ok(())
    }

    /// The index of a RegisterExecute: an expression, or the log counter of the action's own
    /// register (`execute_log`). `action` is in range.
    fn execute_index(&self, action: RegisterActionId, index: &Expr) -> Result<(), VerifyError> {
        let Expr::SaluCounter { register, .. } = index else {
            return self.expr(index);
        };
        let own = self.pl.register_actions[action.index()].register;
        if *register != own {
            return self.fail(format!(
                "RegisterAction {} counts through register {} but runs on register {}",
                action.0, register.0, own.0
            ));
        }
        Ok(())
    }

    fn expr(&self, e: &Expr) -> Result<(), VerifyError> {
        let pl = self.pl;
        match e {
            Expr::Field(f) => self.field(*f),
            Expr::Valid(h) => self.in_range("header", h.index(), self.g.phv.headers.len()),
            Expr::Unary { arg, .. } | Expr::Slice { arg, .. } | Expr::Cast { arg, .. } => {
                self.expr(arg)
            }
            Expr::Binary { a, b, .. } | Expr::Concat { hi: a, lo: b, .. } => {
                self.expr(a)?;
                self.expr(b)
            }
            Expr::Ternary {
                cond, then, els, ..
            } => {
                self.expr(cond)?;
                self.expr(then)?;
                self.expr(els)
            }
            Expr::RegisterParam(p) => {
                self.in_range("register param", p.index(), pl.register_params.len())
            }
            Expr::RegisterExecute { action, index, .. } => {
                self.in_range("register action", action.index(), pl.register_actions.len())?;
                self.execute_index(*action, index)
            }
            Expr::MathUnit { input, .. } => self.expr(input),
            Expr::SaluPredicate { conds, .. } => {
                if conds.len() > 4 {
                    return self.fail(format!(
                        "a stateful-ALU predicate of {} conditions (at most 4)",
                        conds.len()
                    ));
                }
                conds.iter().try_for_each(|c| self.expr(c))
            }
            Expr::SaluCounter { .. } => {
                self.fail("a stateful-ALU counter outside a RegisterAction's index".to_string())
            }
            Expr::MinMax { value, mask, .. } => {
                self.expr(value)?;
                self.expr(mask)
            }
            Expr::Hash { hash, inputs, .. } => {
                self.in_range("hash", hash.index(), pl.hashes.len())?;
                inputs.iter().try_for_each(|i| self.expr(i))
            }
            Expr::MeterExecute {
                meter,
                index,
                color,
            } => {
                self.in_range("meter", meter.index(), pl.meters.len())?;
                index
                    .iter()
                    .chain(color.iter())
                    .try_for_each(|x| self.expr(x))
            }
            Expr::FilterExecute {
                filter,
                value,
                index,
                ..
            } => {
                self.in_range("filter", filter.index(), pl.filters.len())?;
                self.expr(value)?;
                index.iter().try_for_each(|x| self.expr(x))
            }
            Expr::ChecksumVerify(c) | Expr::ChecksumGet(c) => {
                self.in_range("checksum", c.index(), pl.checksums.len())
            }
            Expr::ChecksumUpdate { checksum, inputs } => {
                self.in_range("checksum", checksum.index(), pl.checksums.len())?;
                inputs.iter().try_for_each(|i| self.expr(i))
            }
            _ => Ok(()),
        }
    }

    fn block(&self, b: &Block) -> Result<(), VerifyError> {
        b.iter().try_for_each(|s| self.stmt(s))
    }

    fn stmt(&self, s: &Stmt) -> Result<(), VerifyError> {
        let pl = self.pl;
        let headers = self.g.phv.headers.len();
        match s {
            Stmt::Assign { dst, value } => {
                match dst {
                    Place::Field(f) | Place::FieldSlice { field: f, .. } => self.field(*f)?,
                    _ => {}
                }
                self.expr(value)
            }
            Stmt::CopyHeader { dst, src } => {
                self.in_range("header", dst.index(), headers)?;
                self.in_range("header", src.index(), headers)
            }
            Stmt::SetValid { header, .. } | Stmt::Extract(header) | Stmt::Emit(header) => {
                self.in_range("header", header.index(), headers)
            }
            Stmt::ExtractVarbit { header, bits } => {
                self.in_range("header", header.index(), headers)?;
                if self.g.phv.varbit(*header).is_none() {
                    return self.fail(format!("header #{} has no varbit field", header.0));
                }
                self.expr(bits)
            }
            Stmt::StackShift { stack, .. } | Stmt::ExtractNext(stack) => {
                self.in_range("stack", stack.index(), self.g.phv.stacks.len())
            }
            Stmt::If {
                cond, then, els, ..
            } => {
                self.expr(cond)?;
                self.block(then)?;
                self.block(els)
            }
            Stmt::ApplyTable { table, branches } => {
                self.in_range("table", table.index(), pl.tables.len())?;
                self.branches(branches)
            }
            Stmt::CallAction { action, args } => {
                self.in_range("action", action.index(), pl.actions.len())?;
                args.iter().try_for_each(|a| self.expr(a))
            }
            Stmt::Count { counter, index } => {
                self.in_range("counter", counter.index(), pl.counters.len())?;
                self.expr(index)
            }
            Stmt::CountDirect { counter } => {
                self.in_range("counter", counter.index(), pl.counters.len())
            }
            Stmt::RegisterExecute {
                action,
                index,
                outs,
            } => {
                self.in_range("register action", action.index(), pl.register_actions.len())?;
                for o in outs.iter().flatten() {
                    if let Place::Field(f) | Place::FieldSlice { field: f, .. } = o {
                        self.field(*f)?;
                    }
                }
                self.execute_index(*action, index)
            }
            Stmt::RegisterClear { register, .. } => {
                self.in_range("register", register.index(), pl.registers.len())
            }
            Stmt::Advance(e) | Stmt::CounterRange { cond: e } => self.expr(e),
            Stmt::ChecksumAdd { checksum, inputs }
            | Stmt::ChecksumSubtract { checksum, inputs } => {
                self.in_range("checksum", checksum.index(), pl.checksums.len())?;
                inputs.iter().try_for_each(|i| self.expr(i))
            }
            Stmt::ChecksumDeposit { checksum, dst } => {
                self.in_range("checksum", checksum.index(), pl.checksums.len())?;
                self.field(*dst)
            }
            Stmt::MirrorEmit { session, header } => {
                self.expr(session)?;
                header.iter().try_for_each(|e| self.expr(e))
            }
            Stmt::ResubmitEmit { header } | Stmt::PktgenEmit { header } => {
                header.iter().try_for_each(|e| self.expr(e))
            }
            Stmt::DigestPack { digest, fields } => {
                self.in_range("digest", digest.index(), pl.digests.len())?;
                fields.iter().try_for_each(|e| self.expr(e))
            }
            Stmt::Exit | Stmt::Return => Ok(()),
        }
    }

    fn branches(&self, b: &TableBranches) -> Result<(), VerifyError> {
        match b {
            TableBranches::None => Ok(()),
            TableBranches::HitMiss { hit, miss } => {
                self.block(hit)?;
                self.block(miss)
            }
            TableBranches::ActionRun { cases, default } => {
                for (a, blk) in cases {
                    self.in_range("action", a.index(), self.pl.actions.len())?;
                    self.block(blk)?;
                }
                self.block(default)
            }
        }
    }

    /// Each varbit field lies inside its header, its length field in the PHV.
    fn varbits(&self) -> Result<(), VerifyError> {
        for v in &self.g.phv.varbits {
            let Some(h) = self.g.phv.headers.get(v.header.index()) else {
                return self.in_range("header", v.header.index(), self.g.phv.headers.len());
            };
            self.field(v.field)?;
            self.field(v.len)?;
            let (start, end) = (h.byte_offset * 8, (h.byte_offset + h.byte_len) * 8);
            if v.field.offset < start || v.field.offset + u32::from(v.field.width) > end {
                return self.fail(format!("varbit field of {} lies outside it", h.name));
            }
        }
        Ok(())
    }

    fn next(&self, n: &NextState) -> Result<(), VerifyError> {
        match n {
            NextState::State(s) => {
                self.in_range("parser state", s.index(), self.g.parser.states.len())
            }
            _ => Ok(()),
        }
    }
}

/// Verifies every pipeline of `p`.
pub fn verify(p: &Program) -> Result<(), VerifyError> {
    for pl in &p.pipelines {
        let ghost = pl.ghost.as_deref().map(|g| ("ghost", g));
        for (gname, g) in [("ingress", &pl.ingress), ("egress", &pl.egress)]
            .into_iter()
            .chain(ghost)
        {
            let mut c = Check {
                pl,
                g,
                place: format!("{} {gname} parser", pl.name),
            };
            c.varbits()?;
            c.in_range(
                "parser start state",
                g.parser.start.index(),
                g.parser.states.len(),
            )?;
            for st in &g.parser.states {
                c.place = format!("{} parser state {}", pl.name, st.name);
                c.block(&st.body)?;
                match &st.transition {
                    Transition::Direct(n) => c.next(n)?,
                    Transition::Select {
                        keys,
                        cases,
                        default,
                    } => {
                        keys.iter().try_for_each(|k| c.expr(k))?;
                        cases.iter().try_for_each(|x| c.next(&x.next))?;
                        cases
                            .iter()
                            .try_for_each(|x| c.keyset(&x.keyset, keys.len()))?;
                        c.next(default)?;
                    }
                }
            }
            c.place = format!("{} {gname} control {}", pl.name, g.control.name);
            c.block(&g.control.body)?;
            c.place = format!("{} {gname} deparser {}", pl.name, g.deparser.name);
            c.block(&g.deparser.body)?;
        }
        verify_objects(pl)?;
    }
    Ok(())
}

/// Tables' keys and actions, and action bodies (checked against the gress of their table).
fn verify_objects(pl: &Pipeline) -> Result<(), VerifyError> {
    let mut in_ghost = vec![false; pl.tables.len()];
    if let Some(g) = &pl.ghost {
        applied_tables(&g.control.body, &mut in_ghost);
    }
    for (t, ghost) in pl.tables.iter().zip(in_ghost) {
        let g = match (t.gress, pl.ghost.as_deref()) {
            (_, Some(g)) if ghost => g,
            (crate::ir::Gress::Ingress, _) => &pl.ingress,
            (crate::ir::Gress::Egress, _) => &pl.egress,
        };
        let c = Check {
            pl,
            g,
            place: format!("{} table {}", pl.name, t.name),
        };
        t.keys.iter().try_for_each(|k| c.expr(&k.expr))?;
        for a in t
            .actions
            .iter()
            .map(|a| a.action)
            .chain([t.default_action.action])
        {
            c.in_range("action", a.index(), pl.actions.len())?;
        }
    }
    for ap in &pl.action_profiles {
        let Some(r) = ap.selector.as_ref().and_then(|s| s.status) else {
            continue;
        };
        match pl.registers.get(r.index()) {
            Some(reg) if reg.width == 1 => {}
            _ => {
                return Err(VerifyError {
                    place: format!("{} action profile {}", pl.name, ap.name),
                    what: "the selector's member-status register is not a register of bits"
                        .to_string(),
                })
            }
        }
    }
    Ok(())
}

/// Marks the tables `body` applies (the ghost control's tables key on its own PHV).
fn applied_tables(body: &[crate::ir::Stmt], out: &mut [bool]) {
    use crate::ir::{Stmt, TableBranches};
    for st in body {
        match st {
            Stmt::ApplyTable { table, branches } => {
                if let Some(x) = out.get_mut(table.index()) {
                    *x = true;
                }
                match branches {
                    TableBranches::None => {}
                    TableBranches::HitMiss { hit, miss } => {
                        applied_tables(hit, out);
                        applied_tables(miss, out);
                    }
                    TableBranches::ActionRun { cases, default } => {
                        cases.iter().for_each(|(_, b)| applied_tables(b, out));
                        applied_tables(default, out);
                    }
                }
            }
            Stmt::If { then, els, .. } => {
                applied_tables(then, out);
                applied_tables(els, out);
            }
            _ => {}
        }
    }
}
