//! `x = t.apply().hit;` (or `.miss`, or `bool x = ...;`) outside a condition, rewritten into
//! `if (t.apply().hit) { x = true; } else { x = false; }` as p4c's `P4::TableHit` does (bf-p4c
//! runs it in its midend), so the lowering meets table results only in conditions.

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
        StmtKind::Assign { lhs, op: None, rhs } if is_hit(rhs) => {
            let (lhs, rhs) = (lhs.clone(), rhs.clone());
            out.push(branch(lhs, rhs, span));
            return;
        }
        StmtKind::Variable(v) if v.init.as_ref().is_some_and(is_hit) => {
            let cond = v.init.take().expect("checked");
            let lhs = Expr {
                kind: ExprKind::Name(v.name.clone()),
                span: v.name.span,
            };
            out.push(s);
            out.push(branch(lhs, cond, span));
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
