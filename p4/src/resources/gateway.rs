//! Gateway rules: can a Tofino gateway evaluate an `if` condition?
//!
//! After bf-p4c's `CheckGatewayExpr`: conditions are `&&` / `||` / `!` of comparisons; `==` and
//! `!=` may compare two fields; `&`, `|` and the ordering operators (`<`, `>`, `<=`, `>=`) need
//! a constant operand ("condition too complex, one operand of `<` must be constant"); a gateway
//! computes nothing else (no `+`, `-`, …), but an `==`/`!=` wider than 32 bits may compare a
//! concatenation (bf-p4c splits it per slice). Its inputs are 4 bytes of PHV plus 12 hash bits on
//! Tofino1; wider conditions make bf-p4c split the gateway, which pisa only warns about.

use std::collections::BTreeSet;

use pipeline::ir::{BinOp, Expr, UnOp};

use super::effects::Loc;
use super::issue::{IssueKind, ObjectRef, ResourceIssue};
use super::names::{binop_str, Names};
use super::profile::Profile;

fn is_const(e: &Expr) -> bool {
    match e {
        Expr::Const { .. } => true,
        Expr::Cast { arg, .. } | Expr::Slice { arg, .. } | Expr::Unary { arg, .. } => is_const(arg),
        Expr::Binary { a, b, .. } => is_const(a) && is_const(b),
        _ => false,
    }
}

fn is_cmp(op: BinOp) -> bool {
    matches!(
        op,
        BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge
    )
}

struct Check<'a> {
    names: &'a Names<'a>,
    obj: ObjectRef,
    out: Vec<ResourceIssue>,
}

impl Check<'_> {
    fn too_complex(&mut self, msg: String, help: &str) {
        self.out.push(
            ResourceIssue::error(IssueKind::GatewayTooComplex, self.obj, msg)
                .with_note("Tofino evaluates `if` conditions in gateways, which compare but do not compute")
                .with_help(help),
        );
    }

    fn boolean(&mut self, e: &Expr) {
        match e {
            Expr::Binary {
                op: BinOp::LAnd | BinOp::LOr,
                a,
                b,
                ..
            } => {
                self.boolean(a);
                self.boolean(b);
            }
            Expr::Unary {
                op: UnOp::LNot,
                arg,
                ..
            } => self.boolean(arg),
            Expr::Binary { op, a, b, .. } if is_cmp(*op) => self.compare(*op, a, b),
            // A 1-bit test (`if (meta.flag == 1)` written as `if (meta.flag)`), validity,
            // constants and extern results (computed in a table before the gateway).
            Expr::Const { .. }
            | Expr::Valid(_)
            | Expr::Field(_)
            | Expr::Slice { .. }
            | Expr::Cast { .. }
            | Expr::RegisterExecute { .. }
            | Expr::MeterExecute { .. }
            | Expr::FilterExecute { .. }
            | Expr::Random { .. } => self.operand(e),
            other => {
                let shown = self.names.expr(other);
                self.too_complex(
                    format!("condition too complex: a gateway cannot evaluate `{shown}`"),
                    "compute the value into a metadata field in an action, then test that field",
                );
            }
        }
    }

    fn compare(&mut self, op: BinOp, a: &Expr, b: &Expr) {
        let ordering = matches!(op, BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge);
        if ordering && !is_const(a) && !is_const(b) {
            let (sa, sb) = (self.names.expr(a), self.names.expr(b));
            self.too_complex(
                format!("condition too complex, one operand of `{}` must be constant (`{sa} {} {sb}`)", binop_str(op), binop_str(op)),
                &format!("compute `{sa} - {sb}` into a metadata field in an action and test its sign bit in the condition"),
            );
        }
        // bf-p4c `CanonGatewayExpr::postorder(IR::Operation::Relation*)` splits an `==`/`!=`
        // wider than 32 bits into per-slice comparisons, and `MakeSlice` (`common/slice.cpp`)
        // slices through a concatenation, so `(f ++ x) == k` compares `f` and `x` separately.
        let wide_eq = matches!(op, BinOp::Eq | BinOp::Ne) && a.width().max(b.width()) > 32;
        self.compared(a, wide_eq);
        self.compared(b, wide_eq);
    }

    /// An operand of a comparison: a concatenation only where bf-p4c splits the comparison.
    fn compared(&mut self, e: &Expr, wide_eq: bool) {
        match e {
            Expr::Concat { hi, lo, .. } if wide_eq => {
                self.compared(hi, wide_eq);
                self.compared(lo, wide_eq);
            }
            _ => self.operand(e),
        }
    }

    fn operand(&mut self, e: &Expr) {
        match e {
            Expr::Const { .. }
            | Expr::Field(_)
            | Expr::Valid(_)
            | Expr::Param { .. }
            | Expr::Hash { .. }
            | Expr::RegisterExecute { .. }
            | Expr::MeterExecute { .. }
            | Expr::FilterExecute { .. }
            | Expr::Random { .. } => {}
            Expr::Slice { arg, .. } | Expr::Cast { arg, .. } => self.operand(arg),
            Expr::Binary {
                op: op @ (BinOp::And | BinOp::Or),
                a,
                b,
                ..
            } => {
                if !is_const(a) && !is_const(b) {
                    let shown = self.names.expr(e);
                    self.too_complex(
                        format!("condition too complex, one operand of `{}` must be constant (`{shown}`)", binop_str(*op)),
                        "mask with a constant, or combine the fields in an action first",
                    );
                }
                self.operand(a);
                self.operand(b);
            }
            Expr::Binary {
                op: BinOp::Shl | BinOp::Shr,
                a,
                b,
                ..
            } if is_const(b) => self.operand(a),
            _ if is_const(e) => {}
            other => {
                let shown = self.names.expr(other);
                self.too_complex(
                    format!("condition too complex: a gateway cannot compute `{shown}`"),
                    "compute the value into a metadata field in an action, then compare that field",
                );
            }
        }
    }
}

/// PHV fields a condition compares directly (not through a hash or an extern).
fn direct_fields(e: &Expr, out: &mut Vec<Loc>) {
    match e {
        Expr::Field(f) => out.push(Loc::field(*f)),
        Expr::Slice { arg, hi, lo } => match arg.as_ref() {
            Expr::Field(f) => out.push(Loc::slice(*f, *hi, *lo)),
            other => direct_fields(other, out),
        },
        Expr::Unary { arg, .. } | Expr::Cast { arg, .. } => direct_fields(arg, out),
        Expr::Binary { a, b, .. } | Expr::Concat { hi: a, lo: b, .. } => {
            direct_fields(a, out);
            direct_fields(b, out);
        }
        _ => {}
    }
}

/// Checks the condition of gateway `obj`.
pub(crate) fn check(
    cond: &Expr,
    names: &Names<'_>,
    obj: ObjectRef,
    p: &Profile,
) -> Vec<ResourceIssue> {
    let mut c = Check {
        names,
        obj,
        out: Vec::new(),
    };
    c.boolean(cond);
    let mut reads = Vec::new();
    direct_fields(cond, &mut reads);
    let mut bytes = BTreeSet::new();
    for l in &reads {
        if let Loc::Bits { start, end } = l {
            if end > start {
                bytes.extend(start / 8..=(end - 1) / 8);
            }
        }
    }
    let mut hash_bits = 0u32;
    hash_inputs(cond, &mut hash_bits);
    let budget = p.gateway.phv_bytes * 8 + p.gateway.hash_bits;
    let used = bytes.len() as u32 * 8 + hash_bits;
    if c.out.is_empty() && used > budget {
        c.out.push(
            ResourceIssue::warning(
                IssueKind::EmulatorOnly,
                obj,
                format!(
                    "condition `{}` reads {} PHV bytes and {hash_bits} hash bits; a {} gateway matches {} PHV bytes plus {} hash bits",
                    names.expr(cond),
                    bytes.len(),
                    p.name(),
                    p.gateway.phv_bytes,
                    p.gateway.hash_bits
                ),
            )
            .with_note("bf-p4c would split this condition over several gateways or a table; pisa counts it as one gateway"),
        );
    }
    c.out
}

fn hash_inputs(e: &Expr, bits: &mut u32) {
    match e {
        Expr::Hash { width, .. } => *bits += u32::from(*width),
        Expr::Unary { arg, .. } | Expr::Cast { arg, .. } | Expr::Slice { arg, .. } => {
            hash_inputs(arg, bits)
        }
        Expr::Binary { a, b, .. } | Expr::Concat { hi: a, lo: b, .. } => {
            hash_inputs(a, bits);
            hash_inputs(b, bits);
        }
        _ => {}
    }
}
