//! `x = t.apply().hit;` (or `.miss`, or `bool x = ...;`) outside a condition, rewritten into
//! `if (t.apply().hit) { x = true; } else { x = false; }` as p4c's `P4::TableHit` does (bf-p4c
//! runs it in its midend), so the lowering meets table results only in conditions. The same
//! for a boolean combination of them (`!t.apply().hit && y`: the `if` lowers it with
//! short-circuit evaluation, the table applied first and its result tested after, as p4c's
//! `SideEffectOrdering` orders it), which is also what the function inliner makes of
//! `!t.apply().hit && f()` (the left operand into a `bool` before the call), and for
//! `x = c ? a : b;` with such a `c` (`if (c) { x = a; } else { x = b; }`).

use crate::ast::*;

/// Rewrites every such assignment in the controls of `program`.
pub fn rewrite(program: &mut Program) {
    for d in &mut program.decls {
        if let DeclKind::Control(c) = &mut d.kind {
            for l in &mut c.locals {
                if let DeclKind::Action(a) = &mut l.kind {
                    block(&mut a.body);
                }
            }
            block(&mut c.apply);
        }
    }
}

fn block(b: &mut Block) {
    let old = std::mem::take(&mut b.stmts);
    for s in old {
        stmt_into(s, &mut b.stmts);
    }
}

/// Whether `e` is `t.apply().hit` / `t.apply().miss`.
fn is_hit(e: &Expr) -> bool {
    let ExprKind::Member { base, member } = &e.kind else {
        return false;
    };
    let ExprKind::Call { callee, .. } = &base.kind else {
        return false;
    };
    matches!(member.name.as_str(), "hit" | "miss")
        && matches!(&callee.kind, ExprKind::Member { member, .. } if member.name == "apply")
}

/// Whether `e` is a table result (`t.apply().hit`/`.miss`) or a `!`/`&&`/`||` of one with
/// anything: what an `if` condition lowers with the table applied first.
fn hit_bool(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Unary {
            op: UnOp::Not,
            operand,
        } => hit_bool(operand),
        ExprKind::Binary {
            op: BinOp::And | BinOp::Or,
            lhs,
            rhs,
        } => hit_bool(lhs) || hit_bool(rhs),
        _ => is_hit(e),
    }
}

/// Whether a value `e` stored is rewritten: a table result or a `?:` selecting on one.
fn rewritten(e: &Expr) -> bool {
    hit_bool(e) || matches!(&e.kind, ExprKind::Ternary { cond, .. } if hit_bool(cond))
}

/// `lhs = c ? a : b` with a table result in `c`: `if (c) { lhs = a; } else { lhs = b; }`.
fn hit_select(lhs: &Expr, rhs: &Expr, span: crate::source::Span) -> Option<Stmt> {
    let ExprKind::Ternary {
        cond,
        then_expr,
        else_expr,
    } = &rhs.kind
    else {
        return None;
    };
    if !hit_bool(cond) {
        return None;
    }
    let arm = |v: &Expr| {
        Box::new(Stmt {
            annotations: Vec::new(),
            kind: StmtKind::Assign {
                lhs: lhs.clone(),
                op: None,
                rhs: v.clone(),
            },
            span,
        })
    };
    Some(Stmt {
        annotations: Vec::new(),
        kind: StmtKind::If {
            cond: (**cond).clone(),
            then_branch: arm(then_expr),
            else_branch: Some(arm(else_expr)),
        },
        span,
    })
}

fn boolean(v: bool, span: crate::source::Span) -> Expr {
    Expr {
        kind: ExprKind::Bool(v),
        span,
    }
}

fn set(lhs: &Expr, v: bool, span: crate::source::Span) -> Box<Stmt> {
    Box::new(Stmt {
        annotations: Vec::new(),
        kind: StmtKind::Assign {
            lhs: lhs.clone(),
            op: None,
            rhs: boolean(v, span),
        },
        span,
    })
}

/// `if (cond) { lhs = true; } else { lhs = false; }`
fn branch(lhs: Expr, cond: Expr, span: crate::source::Span) -> Stmt {
    Stmt {
        annotations: Vec::new(),
        kind: StmtKind::If {
            cond,
            then_branch: set(&lhs, true, span),
            else_branch: Some(set(&lhs, false, span)),
        },
        span,
    }
}

fn stmt_into(mut s: Stmt, out: &mut Vec<Stmt>) {
    let span = s.span;
    match &mut s.kind {
        StmtKind::Assign { lhs, op: None, rhs } if hit_bool(rhs) => {
            let (lhs, rhs) = (lhs.clone(), rhs.clone());
            out.push(branch(lhs, rhs, span));
            return;
        }
        StmtKind::Assign { lhs, op: None, rhs } => {
            if let Some(b) = hit_select(lhs, rhs, span) {
                out.push(b);
                return;
            }
        }
        StmtKind::Variable(v) if v.init.as_ref().is_some_and(rewritten) => {
            let init = v.init.take().expect("checked");
            let lhs = Expr {
                kind: ExprKind::Name(v.name.clone()),
                span: v.name.span,
            };
            out.push(s);
            out.push(hit_select(&lhs, &init, span).unwrap_or_else(|| branch(lhs, init, span)));
            return;
        }
        StmtKind::If {
            then_branch,
            else_branch,
            ..
        } => {
            one(then_branch);
            if let Some(e) = else_branch {
                one(e);
            }
        }
        StmtKind::Block(b) => block(b),
        StmtKind::Switch { cases, .. } => {
            for c in cases {
                if let Some(b) = &mut c.body {
                    block(b);
                }
            }
        }
        _ => {}
    }
    out.push(s);
}

/// A branch statement rewritten in place (a block when it became two).
fn one(s: &mut Box<Stmt>) {
    let span = s.span;
    let taken = std::mem::replace(
        s.as_mut(),
        Stmt {
            annotations: Vec::new(),
            kind: StmtKind::Empty,
            span,
        },
    );
    let mut v = Vec::new();
    stmt_into(taken, &mut v);
    **s = if v.len() == 1 {
        v.pop().expect("one")
    } else {
        Stmt {
            annotations: Vec::new(),
            kind: StmtKind::Block(Block {
                annotations: Vec::new(),
                stmts: v,
                span,
            }),
            span,
        }
    };
}
