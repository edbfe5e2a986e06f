//! Copy-out on `exit` (P4_16 "Exit statement": "Any copy-out behavior due to direction `out`
//! or `inout` parameters of the enclosing action or control, and all of its callers, are still
//! performed after the execution of the exit statement").
//!
//! A call whose parameters are copied out after its body (temporaries, slices) runs those copies
//! before each `exit` of the body as well. An `exit` in an action that a table (or a call of a
//! data-only action) runs inside such a body cannot tell which call it is in — one control
//! instance may be applied from several places with different arguments — so the action sets a
//! flag of its own and leaves (`return`), and the body tests the flag where the action ends:
//! at the start of each arm of the table's branches, or right after the apply. There it copies
//! out and exits, an `exit` the outer calls then see as one of their body's own. Gateway spans
//! (`Lowerer::ifs`, one per `if` in pre-order) get the call's span for each test added.

use pipeline::ir::{self, FieldRef, Stmt, TableBranches};

use super::aliasing::{branch_arms, branch_arms_mut};
use super::{Lowerer, Res};
use crate::diag::Diagnostic;
use crate::source::Span;

/// The `if`s of `b` (with those of its nested blocks and table arms), as gateways count them.
fn count_ifs(b: &[Stmt]) -> usize {
    b.iter()
        .map(|s| match s {
            Stmt::If { then, els, .. } => 1 + count_ifs(then) + count_ifs(els),
            Stmt::ApplyTable { branches, .. } => branch_arms(branches)
                .into_iter()
                .map(|a| count_ifs(a))
                .sum(),
            _ => 0,
        })
        .sum()
}

/// Whether `s` is the flag test of one of `flags` (put there by an inner call already).
fn is_check(s: Option<&Stmt>, flags: &[FieldRef]) -> bool {
    matches!(s, Some(Stmt::If { cond: ir::Expr::Field(f), .. }) if flags.contains(f))
}

/// Whether `b` exits directly (in its own statements or their nested `if`s).
fn exits(b: &[Stmt]) -> bool {
    b.iter().any(|s| match s {
        Stmt::Exit => true,
        Stmt::If { then, els, .. } => exits(then) || exits(els),
        _ => false,
    })
}

/// `b` with each `exit` replaced by `flag = 1; return;`.
fn exit_to_flag(b: &mut ir::Block, flag: FieldRef) {
    let mut i = 0;
    while i < b.len() {
        match &mut b[i] {
            Stmt::Exit => {
                b[i] = Stmt::Assign {
                    dst: ir::Place::Field(flag),
                    value: ir::Expr::Const { value: 1, width: 1 },
                };
                b.insert(i + 1, Stmt::Return);
                i += 1;
            }
            Stmt::If { then, els, .. } => {
                exit_to_flag(then, flag);
                exit_to_flag(els, flag);
            }
            _ => {}
        }
        i += 1;
    }
}

/// A walk over one body inserting copy-outs; `at` is the pre-order index of the next `if`.
struct Walk<'c> {
    copy_out: &'c [Stmt],
    span: Span,
    at: usize,
}

impl Lowerer<'_> {
    /// Makes `body` (just lowered: its `if`s' spans are the last of [`Lowerer::ifs`]) run
    /// `copy_out` before each way it exits (see the module doc). With no copies it still adds
    /// the tests after tables whose actions an inner call turned to flags.
    pub(in crate::lower) fn copy_out_on_exit(
        &mut self,
        body: &mut ir::Block,
        copy_out: &[Stmt],
        span: Span,
    ) -> Res<()> {
        let at = self.ifs.len().saturating_sub(count_ifs(body));
        let mut w = Walk { copy_out, span, at };
        self.walk_exits(body, &mut w)
    }

    fn walk_exits(&mut self, b: &mut ir::Block, w: &mut Walk<'_>) -> Res<()> {
        let mut i = 0;
        while i < b.len() {
            let mut after: Option<Vec<FieldRef>> = None;
            match &mut b[i] {
                Stmt::Exit => {
                    let copy_out = w.copy_out;
                    self.note_ifs(w, copy_out);
                    let n = copy_out.len();
                    b.splice(i..i, copy_out.iter().cloned());
                    i += n + 1;
                    continue;
                }
                Stmt::If { then, els, .. } => {
                    w.at += 1;
                    self.walk_exits(then, w)?;
                    self.walk_exits(els, w)?;
                }
                Stmt::ApplyTable { table, branches } => {
                    let actions = match self.pipe.tables.get(table.index()) {
                        Some(t) => t
                            .actions
                            .iter()
                            .map(|r| r.action)
                            .chain(std::iter::once(t.default_action.action))
                            .collect(),
                        None => Vec::new(),
                    };
                    let flags = self.exit_flags(&actions, w)?;
                    if matches!(branches, TableBranches::None) {
                        after = Some(flags);
                    } else {
                        for arm in branch_arms_mut(branches) {
                            if !flags.is_empty() && !is_check(arm.first(), &flags) {
                                let check = self.exit_check(&flags, w);
                                arm.insert(0, check);
                            }
                            self.walk_exits(arm, w)?;
                        }
                    }
                }
                Stmt::CallAction { action, .. } => {
                    let a = *action;
                    after = Some(self.exit_flags(&[a], w)?);
                }
                _ => {}
            }
            if let Some(flags) = after.filter(|f| !f.is_empty()) {
                if !is_check(b.get(i + 1), &flags) {
                    let check = self.exit_check(&flags, w);
                    b.insert(i + 1, check);
                }
                // The test (new or an inner call's) is walked next: its `exit` gets the copies.
            }
            i += 1;
        }
        Ok(())
    }

    /// `if (flag) { copy-out; exit; }` for each of `flags` (one test: any of them), its `if`s'
    /// spans recorded at the walk's place.
    fn exit_check(&mut self, flags: &[FieldRef], w: &mut Walk<'_>) -> Stmt {
        let cond = flags
            .iter()
            .map(|f| ir::Expr::Field(*f))
            .reduce(|a, b| ir::Expr::Binary {
                op: ir::BinOp::Or,
                a: Box::new(a),
                b: Box::new(b),
                width: 1,
                signed: false,
            })
            .unwrap_or(ir::Expr::Const { value: 0, width: 1 });
        // The test itself: its copies and `exit` are inserted when the walk reaches it.
        self.ifs.insert(w.at.min(self.ifs.len()), w.span);
        Stmt::If {
            cond,
            then: vec![Stmt::Exit],
            els: Vec::new(),
            stage: 0,
        }
    }

    /// Records spans for the `if`s of statements inserted at the walk's place.
    fn note_ifs(&mut self, w: &mut Walk<'_>, inserted: &[Stmt]) {
        for _ in 0..count_ifs(inserted) {
            self.ifs.insert(w.at.min(self.ifs.len()), w.span);
            w.at += 1;
        }
    }

    /// The flags of those of `actions` that exit: made (the action's `exit`s turned into
    /// `flag = 1; return;`) when the walk copies out, else only those made before.
    fn exit_flags(&mut self, actions: &[ir::ActionId], w: &Walk<'_>) -> Res<Vec<FieldRef>> {
        let span = w.span;
        let mut flags = Vec::new();
        for a in actions {
            if let Some(f) = self.pipe.exit_flags.get(a) {
                if !flags.contains(f) {
                    flags.push(*f);
                }
                continue;
            }
            let Some(action) = self.pipe.actions.get(a.index()) else {
                continue;
            };
            if w.copy_out.is_empty() || !exits(&action.body) {
                continue;
            }
            let name = format!("$exited.{}", action.name);
            let flag = self
                .phv
                .hidden(&name, 1)
                .map_err(|m| self.err(Diagnostic::error(m).with_primary(span, "here")))?;
            exit_to_flag(&mut self.pipe.actions[a.index()].body, flag);
            self.pipe.exit_flags.insert(*a, flag);
            flags.push(flag);
        }
        Ok(flags)
    }
}
