//! Tofino 2's parser counter stack: three entries under the counter (four counters deep with
//! it), each with its `update_with_top` flag, as PHV fields of the parser.
//!
//! Semantics, from the Tofino model (open-p4studio `tofino-model`: `ParserCounterStack`,
//! `ParserShared::counter_handle`, JBay's `counter_ctr_uops`) and bf-asm (`jbay2717_workaround`):
//! - `push(v[, u])` moves the entries down one (a full stack loses its bottom entry, no error),
//!   puts the counter on top with flag `u` (default false), then loads `v` like `set`.
//! - `increment`/`decrement` change the counter and every entry from the top down while the
//!   entries' flags stay set: an entry is updated only if it and all above it have the flag.
//! - `pop()` loads the top entry into the counter and moves the others up; popping an empty
//!   stack loads 0, no error. Nothing pops by itself when the counter reaches zero.
//! - `is_zero`/`is_negative` read the counter only.
//! - The hardware adds every load's amount to the flagged entries too (an immediate's value, a
//!   field load's counter init RAM row number: JBAY-2717). Under a `push` bf-asm cancels that
//!   at the `pop`, so pisa adds nothing there; a plain `set` under flagged entries keeps it.

use pipeline::ir::{self, BinOp, Expr, FieldRef};

use super::{assign, bin, field, set, Load};
use crate::ast;
use crate::check::types::Ty;
use crate::diag::Diagnostic;
use crate::lower::expr::fold;
use crate::lower::externs::{Call, Ctor};
use crate::lower::{Lowerer, Res};

/// `push`'s `update_with_top`: a constant bool (bf-p4c reads a boolean literal).
fn update_with_top<'a>(l: &mut Lowerer<'a>, e: &'a ast::Expr) -> Res<u128> {
    let (x, _) = l.scalar(e, Some(&Ty::Bool))?;
    match fold(x) {
        Expr::Const { value, .. } => Ok(value),
        _ => Err(l.err(
            Diagnostic::error("`update_with_top` must be a compile-time constant")
                .with_primary(e.span, "computed at run time")
                .with_help(
                    "the flag is part of the parser state's configuration: write `true` or `false`",
                ),
        )),
    }
}

/// Entries under the counter (the model's `kParserCounterStackSize` for JBay).
const DEPTH: usize = 3;

/// A counter's stack: entry 0 is the one pushed last.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Stack {
    entries: [FieldRef; DEPTH],
    /// Each entry's `update_with_top` flag (1 bit).
    upd: [FieldRef; DEPTH],
}

impl Stack {
    pub(super) fn alloc<'a>(l: &mut Lowerer<'a>, c: &Ctor<'a>) -> Res<Stack> {
        let mut entries = Vec::with_capacity(DEPTH);
        let mut upd = Vec::with_capacity(DEPTH);
        for i in 0..DEPTH {
            entries.push(field(l, &format!("{}.$stack{i}", c.name), 8, c)?);
            upd.push(field(l, &format!("{}.$stack{i}_upd", c.name), 1, c)?);
        }
        let arr = |v: Vec<FieldRef>| <[FieldRef; DEPTH]>::try_from(v).expect("DEPTH fields");
        Ok(Stack {
            entries: arr(entries),
            upd: arr(upd),
        })
    }

    /// `push(value[, update_with_top])` or `push(field, max, rotate, mask, add[,
    /// update_with_top])`.
    pub(super) fn push<'a>(
        &self,
        l: &mut Lowerer<'a>,
        c: &Call<'a, '_>,
        ctr: FieldRef,
    ) -> Res<Vec<ir::Stmt>> {
        let (load_args, flag) = match c.args.len() {
            2 | 6 => {
                let (last, rest) = c.args.split_last().expect("two or six arguments");
                (rest, update_with_top(l, &last.value)?)
            }
            _ => (c.args, 0),
        };
        let mut out = Vec::new();
        for i in (1..DEPTH).rev() {
            out.push(assign(self.entries[i], Expr::Field(self.entries[i - 1])));
            out.push(assign(self.upd[i], Expr::Field(self.upd[i - 1])));
        }
        out.push(assign(self.entries[0], Expr::Field(ctr)));
        out.push(assign(self.upd[0], Expr::constant(flag, 1)));
        let (load, _) = set(l, c, ctr, load_args)?;
        out.extend(load);
        Ok(out)
    }

    /// `pop()`: the top entry into the counter, the rest up one, zeros at the bottom.
    pub(super) fn pop(&self, ctr: FieldRef) -> Vec<ir::Stmt> {
        let mut out = vec![assign(ctr, Expr::Field(self.entries[0]))];
        for i in 0..DEPTH - 1 {
            out.push(assign(self.entries[i], Expr::Field(self.entries[i + 1])));
            out.push(assign(self.upd[i], Expr::Field(self.upd[i + 1])));
        }
        out.push(assign(self.entries[DEPTH - 1], Expr::constant(0, 8)));
        out.push(assign(self.upd[DEPTH - 1], Expr::constant(0, 1)));
        out
    }

    /// `op by` on the entries whose flag and all flags above are set.
    pub(super) fn add(&self, op: BinOp, by: u128) -> Vec<ir::Stmt> {
        let mut chain = Expr::Field(self.upd[0]);
        let mut out = Vec::with_capacity(DEPTH);
        for i in 0..DEPTH {
            if i > 0 {
                chain = bin(BinOp::And, chain, Expr::Field(self.upd[i]), 1);
            }
            let e = Expr::Field(self.entries[i]);
            out.push(assign(
                self.entries[i],
                Expr::Ternary {
                    cond: Box::new(chain.clone()),
                    then: Box::new(bin(op, e.clone(), Expr::constant(by, 8), 8)),
                    els: Box::new(e),
                    width: 8,
                },
            ));
        }
        out
    }

    /// What a plain `set` adds to the flagged entries (the hardware's JBAY-2717 behaviour,
    /// which no `pop` cancels): the immediate, or the counter init RAM row of a field load.
    pub(super) fn add_load(&self, load: Load) -> Vec<ir::Stmt> {
        match load {
            Load::Imm(0) => Vec::new(),
            Load::Imm(v) => self.add(BinOp::Add, v),
            Load::Row(0) => Vec::new(),
            Load::Row(r) => self.add(BinOp::Add, r as u128),
        }
    }
}
