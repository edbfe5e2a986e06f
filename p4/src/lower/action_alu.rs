//! Action code bf-p4c's instruction selection refuses (`mau/instruction_selection.cpp`,
//! `DoInstructionSelection`): shifts by a non-constant count, saturating arithmetic wider than
//! the widest PHV container, and conditions in an action (the midend's `Predication` turns an
//! action `if` into `?:`) that are not an action-data parameter, or whose action data sits on
//! the false branch. The checks run while an action body is lowered, where the source spans are.

use pipeline::ir;

use crate::diag::Diagnostic;
use crate::lower::{Ctx, Lowerer};
use crate::source::Span;

/// The widest PHV container (Tofino 1 and 2): bf-p4c's `limitWidth` bound.
const MAX_CONTAINER_BITS: u16 = 32;

const SOURCE: &str = "bf-p4c mau/instruction_selection.cpp DoInstructionSelection";

/// Whether `e` is made of action data (parameters) and constants only.
fn action_data_only(e: &ir::Expr) -> bool {
    match e {
        ir::Expr::Const { .. } | ir::Expr::Param { .. } => true,
        ir::Expr::Unary { arg, .. } | ir::Expr::Cast { arg, .. } | ir::Expr::Slice { arg, .. } => {
            action_data_only(arg)
        }
        ir::Expr::Binary { a, b, .. } => action_data_only(a) && action_data_only(b),
        ir::Expr::Concat { hi, lo, .. } => action_data_only(hi) && action_data_only(lo),
        ir::Expr::Ternary {
            cond, then, els, ..
        } => action_data_only(cond) && action_data_only(then) && action_data_only(els),
        _ => false,
    }
}

/// bf-p4c's `checkActionBus`: a value the action data bus carries (a constant or a parameter,
/// possibly sliced or cast).
fn on_action_bus(e: &ir::Expr) -> bool {
    match e {
        ir::Expr::Const { .. } | ir::Expr::Param { .. } => true,
        ir::Expr::Cast { arg, .. } | ir::Expr::Slice { arg, .. } => on_action_bus(arg),
        _ => false,
    }
}

/// bf-p4c's `checkPHV`: a field (a PHV container), possibly cast.
fn in_phv(e: &ir::Expr) -> bool {
    match e {
        ir::Expr::Field(_) => true,
        ir::Expr::Cast { arg, .. } => in_phv(arg),
        _ => false,
    }
}

/// `a < b ? a : b` and its relatives, which bf-p4c selects as a `min`/`max` instruction.
fn is_min_max(cond: &ir::Expr, then: &ir::Expr, els: &ir::Expr) -> bool {
    let ir::Expr::Binary { op, a, b, .. } = cond else {
        return false;
    };
    matches!(
        op,
        ir::BinOp::Lt | ir::BinOp::Le | ir::BinOp::Gt | ir::BinOp::Ge
    ) && ((**a == *then && **b == *els) || (**a == *els && **b == *then))
}

impl Lowerer<'_> {
    /// True while lowering the body of an action that stays an action (not one inlined into
    /// control code, whose `if`s pisa treats as gateways).
    fn in_table_action(&self) -> bool {
        self.ctx == Ctx::Action && self.inline_action == 0
    }

    fn alu_refusal(&mut self, span: Span, msg: &str, label: &str, help: &str) {
        let d = Diagnostic::error(msg.to_string())
            .with_primary(span, label)
            .with_note(format!("as {SOURCE}"))
            .with_help(help.to_string());
        self.err(d);
    }

    /// A shift in an action: the ALU's shift amount is an immediate.
    pub(super) fn check_action_shift(&mut self, count: &ir::Expr, span: Span, shown: &str) {
        if self.ctx == Ctx::Action && !matches!(count, ir::Expr::Const { .. }) {
            self.alu_refusal(
                span,
                &format!("shift count must be a constant in `{shown}`"),
                "the shift amount of an action instruction is an immediate",
                "shift by a constant, or select the shift with a table",
            );
        }
    }

    /// Saturating `|+|`/`|-|` in an action: bf-p4c's `limitWidth`.
    pub(super) fn check_action_saturating(&mut self, width: u16, span: Span) {
        if self.ctx == Ctx::Action && width > MAX_CONTAINER_BITS {
            self.alu_refusal(
                span,
                &format!(
                    "Saturating arithmetic operators may not exceed maximum PHV container width ({MAX_CONTAINER_BITS}b)"
                ),
                &format!("{width}-bit saturating arithmetic"),
                "saturate a value of at most 32 bits",
            );
        }
    }

    /// The condition of an `if` in an action (a `?:` after bf-p4c's predication): it must be
    /// action data.
    pub(super) fn check_action_condition(&mut self, cond: &ir::Expr, span: Span) {
        if self.in_table_action() && !action_data_only(cond) {
            self.alu_refusal(
                span,
                "Conditions in an action must be simple comparisons of an action data parameter",
                "this condition reads the packet or metadata",
                "move the test out of the action and into a control apply block, or make it part of the table key",
            );
        }
    }

    /// A `c ? t : e` in an action: a condition on action data (min/max aside) and the action
    /// data on the true branch.
    pub(super) fn check_action_mux(
        &mut self,
        c: &ir::Expr,
        t: &ir::Expr,
        e: &ir::Expr,
        span: Span,
    ) {
        if !self.in_table_action() || is_min_max(c, t, e) {
            return;
        }
        if !action_data_only(c) {
            self.check_action_condition(c, span);
        } else if on_action_bus(e) && in_phv(t) {
            self.reversed_refusal(span);
        }
    }

    /// An `if` in an action whose false branch alone sets a field from action data: after
    /// predication `dst = c ? dst : v`, the reversed conditional set.
    pub(super) fn check_action_if_branches(
        &mut self,
        cond: &ir::Expr,
        then: &[ir::Stmt],
        els: &[ir::Stmt],
        span: Span,
    ) {
        if !self.in_table_action() || !action_data_only(cond) {
            return;
        }
        let reversed = els.iter().any(|s| match s {
            ir::Stmt::Assign { dst, value } if on_action_bus(value) => {
                !then.iter().any(|t| match t {
                    ir::Stmt::Assign { dst: d, value: v } => d == dst && !in_phv(v),
                    _ => false,
                })
            }
            _ => false,
        });
        if reversed {
            self.reversed_refusal(span);
        }
    }

    fn reversed_refusal(&mut self, span: Span) {
        self.alu_refusal(
            span,
            "Conditional assignment must be reversed, as the non PHV parameter must be on the true branch for support in the driver",
            "the action data is on the false branch",
            "swap the branches and negate the condition: `c ? v : f`",
        );
    }
}
