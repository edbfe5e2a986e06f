//! Action code bf-p4c's instruction selection refuses (`mau/instruction_selection.cpp`,
//! `DoInstructionSelection`): shifts by a non-constant count, saturating arithmetic wider than
//! the widest PHV container, and conditions in an action (the midend's `Predication` turns an
//! action `if` into `?:`) that are not an action-data parameter itself (a field, or a
//! comparison of a parameter: `if (p == 5)`), or whose action data sits on
//! the false branch, and conditional sets it cannot make one `conditionally-set` of (two fields,
//! two action-data values, an expression or a nested `?:` on the sides). The checks run while
//! an action body is lowered, where the source spans are.

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

/// bf-p4c's condition of a `conditionally-set`: an action data parameter itself (`mux->e0`
/// an `ActionArg`, a 1-bit `bool`), not a comparison or other expression over parameters.
fn is_condition_arg(e: &ir::Expr) -> bool {
    matches!(e, ir::Expr::Param { width: 1, .. })
}

/// `!c`'s `c`: p4c's strength reduction turns `!c ? a : b` into `c ? b : a` before bf-p4c
/// selects instructions (`DoStrengthReduction::postorder(IR::Mux*)`), so a negated condition
/// is its operand with the branches swapped.
fn negated(cond: &ir::Expr) -> Option<&ir::Expr> {
    match cond {
        ir::Expr::Unary {
            op: ir::UnOp::LNot,
            arg,
            ..
        } => Some(arg),
        _ => None,
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

/// bf-p4c's `checkPHV`: a field (a PHV container) or a slice of one, possibly cast.
fn in_phv(e: &ir::Expr) -> bool {
    match e {
        ir::Expr::Field(_) => true,
        ir::Expr::Cast { arg, .. } => in_phv(arg),
        ir::Expr::Slice { arg, .. } => matches!(**arg, ir::Expr::Field(_)),
        _ => false,
    }
}

/// What bf-p4c's `DoInstructionSelection` makes of `dst = c ? e1 : e2` (`postorder` of a
/// `modify_field` primitive whose source is a `Mux`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CondSet {
    /// `conditionally-set`: action data on the true branch, a field on the false one.
    Accepted,
    /// Action data on the false branch, a field on the true one: "must be reversed".
    Reversed,
    /// Anything else (two fields, two action data values, an expression, a nested `?:`):
    /// "too complicated to support in a single operation".
    TooComplicated,
}

/// One side of a predicated assignment: a value, or `None` for a nested `?:` (an assignment
/// inside a nested `if`).
fn cond_set(e1: Option<&ir::Expr>, e2: Option<&ir::Expr>) -> CondSet {
    match (e1, e2) {
        (Some(a), Some(b)) if on_action_bus(a) && in_phv(b) => CondSet::Accepted,
        (Some(a), Some(b)) if on_action_bus(b) && in_phv(a) => CondSet::Reversed,
        _ => CondSet::TooComplicated,
    }
}

/// A branch's assignments to fields as p4c's `Predication` sees them: the last value given to
/// each field (or slice), `None` for one assigned inside a nested `if` (a nested `?:`).
fn branch_values(block: &[ir::Stmt]) -> Vec<(ir::Expr, Option<&ir::Expr>)> {
    fn set<'b>(
        out: &mut Vec<(ir::Expr, Option<&'b ir::Expr>)>,
        d: ir::Expr,
        v: Option<&'b ir::Expr>,
    ) {
        out.retain(|(x, _)| *x != d);
        out.push((d, v));
    }
    let mut out = Vec::new();
    for s in block {
        match s {
            ir::Stmt::Assign { dst, value } => {
                if let Some(d) = place_expr(dst) {
                    set(&mut out, d, Some(value));
                }
            }
            ir::Stmt::If { then, els, .. } => {
                for (d, _) in branch_values(then).into_iter().chain(branch_values(els)) {
                    set(&mut out, d, None);
                }
            }
            _ => {}
        }
    }
    out
}

/// A field (or a slice of one) as the expression that reads it; other places (register
/// words, outputs) are not predicated assignments of a table action.
fn place_expr(p: &ir::Place) -> Option<ir::Expr> {
    match p {
        ir::Place::Field(f) => Some(ir::Expr::Field(*f)),
        ir::Place::FieldSlice { field, hi, lo } => Some(ir::Expr::Slice {
            arg: Box::new(ir::Expr::Field(*field)),
            hi: *hi,
            lo: *lo,
        }),
        _ => None,
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
        if let Some(c) = negated(c) {
            return self.check_action_mux(c, e, t, span);
        }
        if !self.in_table_action() || is_min_max(c, t, e) {
            return;
        }
        if !action_data_only(c) {
            self.check_action_condition(c, span);
        } else if !is_condition_arg(c) {
            self.compared_arg_refusal(span);
        } else if on_action_bus(e) && in_phv(t) {
            self.reversed_refusal(span);
        }
    }

    /// An `if` in an action on action data: p4c's `Predication` makes each field it assigns
    /// `dst = c ? then_value : else_value` (an unassigned side keeps `dst`, an assignment in a
    /// nested `if` a nested `?:`), which bf-p4c then accepts, refuses as reversed, or refuses
    /// as too complicated ([`cond_set`]).
    pub(super) fn check_action_if_branches(
        &mut self,
        cond: &ir::Expr,
        then: &[ir::Stmt],
        els: &[ir::Stmt],
        span: Span,
    ) {
        if let Some(c) = negated(cond) {
            return self.check_action_if_branches(c, els, then, span);
        }
        if !self.in_table_action() || !action_data_only(cond) {
            return;
        }
        let (t, e) = (branch_values(then), branch_values(els));
        let mut dsts: Vec<&ir::Expr> = t.iter().map(|x| &x.0).collect();
        dsts.extend(
            e.iter()
                .map(|x| &x.0)
                .filter(|d| !t.iter().any(|x| x.0 == **d)),
        );
        let side = |vals: &[(ir::Expr, Option<&ir::Expr>)], d: &ir::Expr| -> Option<ir::Expr> {
            match vals.iter().find(|x| x.0 == *d) {
                Some((_, v)) => v.cloned(),
                None => Some(d.clone()),
            }
        };
        let sides: Vec<(Option<ir::Expr>, Option<ir::Expr>)> =
            dsts.iter().map(|d| (side(&t, d), side(&e, d))).collect();
        // Each field's `?:` needs the bare parameter as its condition, unless it is a min/max.
        let compared = !is_condition_arg(cond)
            && sides.iter().any(|s| match s {
                (Some(a), Some(b)) => !is_min_max(cond, a, b),
                _ => true,
            });
        if compared {
            self.compared_arg_refusal(span);
            return;
        }
        let verdicts: Vec<CondSet> = sides
            .iter()
            .map(|(a, b)| cond_set(a.as_ref(), b.as_ref()))
            .collect();
        if verdicts.contains(&CondSet::TooComplicated) {
            self.too_complicated_refusal(
                span,
                "after predication, a field's two sides are not action data over a field",
            );
        } else if verdicts.contains(&CondSet::Reversed) {
            self.reversed_refusal(span);
        }
    }

    /// `dst = c ? a : b` written in a table action (min/max aside): refused when bf-p4c
    /// cannot make one `conditionally-set` of it. The reversed form is reported by
    /// [`Lowerer::check_action_mux`].
    pub(super) fn check_action_assign(&mut self, dst: &ir::Place, value: &ir::Expr, span: Span) {
        let ir::Expr::Ternary {
            cond, then, els, ..
        } = value
        else {
            return;
        };
        if !self.in_table_action()
            || place_expr(dst).is_none()
            || !action_data_only(cond)
            || is_min_max(cond, then, els)
        {
            return;
        }
        let (then, els) = match negated(cond) {
            Some(_) => (els, then),
            None => (then, els),
        };
        if cond_set(Some(then), Some(els)) == CondSet::TooComplicated {
            self.too_complicated_refusal(span, "neither side alone is action data over a field");
        }
    }

    fn too_complicated_refusal(&mut self, span: Span, label: &str) {
        self.alu_refusal(
            span,
            "Conditional assignment is too complicated to support in a single operation",
            label,
            "move the test out of the action and into a control apply block, or make it part of the table key",
        );
    }

    fn compared_arg_refusal(&mut self, span: Span) {
        self.alu_refusal(
            span,
            "Conditions in an action must be simple comparisons of an action data parameter",
            "not a parameter by itself: the `conditionally-set` tests one action data bit",
            "pass the outcome as a `bool` parameter (`if (flag)`), or move the test into a control apply block or the table key",
        );
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
