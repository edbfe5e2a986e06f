//! Statement rules p4c enforces before any lowering, checked on the AST before functions are
//! inlined (inlining would hide whose body a statement came from):
//! - `switch` labels: at most one `default`, and it comes last; no label twice (P4_16
//!   "Switch statement").
//! - function bodies (P4_16 "Functions", "Exit statement", "Return statement"): no `exit`; no
//!   `return e;` in a `void` function and no bare `return;` in one that has a result; a
//!   function with a result returns on every path; its `in` parameters are not written.

use std::collections::HashMap;

use crate::ast::*;
use crate::diag::{Diagnostic, Diagnostics};
use crate::source::Span;

/// Checks every switch of the program and every top-level function's body.
pub fn check(program: &Program, diags: &mut Diagnostics) {
    for d in &program.decls {
        decl(d, diags);
    }
}

fn decl(d: &Decl, diags: &mut Diagnostics) {
    match &d.kind {
        DeclKind::Action(a) => stmts(&a.body.stmts, None, diags),
        DeclKind::Control(c) => {
            c.locals.iter().for_each(|l| decl(l, diags));
            stmts(&c.apply.stmts, None, diags);
        }
        DeclKind::Parser(p) => p.states.iter().for_each(|s| stmts(&s.body, None, diags)),
        DeclKind::Function(f) => function(f, diags),
        _ => {}
    }
}

fn function(f: &FunctionDecl, diags: &mut Diagnostics) {
    stmts(&f.body.stmts, Some(f), diags);
    let void = matches!(f.proto.return_type.kind, TypeKind::Void);
    if !void && !always_returns(&f.body.stmts) {
        diags.push(
            Diagnostic::error(format!(
                "function `{}` does not return a value on every path",
                f.proto.name.name
            ))
            .with_primary(f.body.span, "the end of this body can be reached")
            .with_secondary(f.proto.return_type.span, "it returns this type")
            .with_note(
                "P4_16 \"Functions\": a function with a result ends with `return e;` on every path",
            ),
        );
    }
}

/// Whether running `ss` always ends in a `return`.
fn always_returns(ss: &[Stmt]) -> bool {
    ss.iter().any(returns)
}

fn returns(s: &Stmt) -> bool {
    match &s.kind {
        StmtKind::Return(_) => true,
        StmtKind::Block(b) => always_returns(&b.stmts),
        StmtKind::If {
            then_branch,
            else_branch,
            ..
        } => returns(then_branch) && else_branch.as_ref().is_some_and(|e| returns(e)),
        StmtKind::Switch { cases, .. } => {
            cases.iter().any(|c| c.label == SwitchLabel::Default)
                && cases
                    .iter()
                    .filter_map(|c| c.body.as_ref())
                    .all(|b| always_returns(&b.stmts))
        }
        _ => false,
    }
}

/// The statements of a body; `func`: the function they belong to, if any.
fn stmts(ss: &[Stmt], func: Option<&FunctionDecl>, diags: &mut Diagnostics) {
    for s in ss {
        stmt(s, func, diags);
    }
}

fn stmt(s: &Stmt, func: Option<&FunctionDecl>, diags: &mut Diagnostics) {
    match &s.kind {
        StmtKind::If {
            then_branch,
            else_branch,
            ..
        } => {
            stmt(then_branch, func, diags);
            if let Some(e) = else_branch {
                stmt(e, func, diags);
            }
        }
        StmtKind::Block(b) => stmts(&b.stmts, func, diags),
        StmtKind::Switch { cases, .. } => {
            switch_labels(cases, diags);
            for c in cases.iter().filter_map(|c| c.body.as_ref()) {
                stmts(&c.stmts, func, diags);
            }
        }
        StmtKind::Exit => {
            if let Some(f) = func {
                diags.push(
                    Diagnostic::error(format!(
                        "`exit` in function `{}`: exit statements are not allowed within functions",
                        f.proto.name.name
                    ))
                    .with_primary(s.span, "not allowed here")
                    .with_note("P4_16 \"Exit statement\": `exit` is not allowed within parsers or functions"),
                );
            }
        }
        StmtKind::Return(value) => {
            if let Some(f) = func {
                return_value(f, value.as_ref(), s.span, diags);
            }
        }
        StmtKind::Assign { lhs, .. } => {
            if let Some(f) = func {
                in_param_write(f, lhs, diags);
            }
        }
        _ => {}
    }
}

/// `return e;` in a `void` function, or `return;` in one with a result.
fn return_value(f: &FunctionDecl, value: Option<&Expr>, span: Span, diags: &mut Diagnostics) {
    let void = matches!(f.proto.return_type.kind, TypeKind::Void);
    let name = &f.proto.name.name;
    let msg = match (void, value) {
        (true, Some(_)) => format!("`return` with a value in `void` function `{name}`"),
        (false, None) => {
            format!("`return` without a value in function `{name}`, which has a result")
        }
        _ => return,
    };
    diags.push(
        Diagnostic::error(msg)
            .with_primary(span, "this return")
            .with_secondary(f.proto.return_type.span, "the function's return type"),
    );
}

/// An assignment to (a part of) an `in` parameter of a function.
fn in_param_write(f: &FunctionDecl, lhs: &Expr, diags: &mut Diagnostics) {
    let mut e = lhs;
    while let ExprKind::Member { base, .. }
    | ExprKind::Index { base, .. }
    | ExprKind::Slice { base, .. } = &e.kind
    {
        e = base;
    }
    let ExprKind::Name(n) = &e.kind else { return };
    let Some(p) = f.proto.params.iter().find(|p| p.name.name == n.name) else {
        return;
    };
    if matches!(p.direction, Direction::In | Direction::None) {
        diags.push(
            Diagnostic::error(format!(
                "`{}` is an `in` parameter of function `{}`: it cannot be assigned",
                n.name, f.proto.name.name
            ))
            .with_primary(lhs.span, "written here")
            .with_secondary(p.span, "declared `in` here")
            .with_help("copy it into a local variable, or make the parameter `inout`"),
        );
    }
}

/// A label's identity for duplicate detection: the path it names, or the number it is.
fn label_key(e: &Expr) -> Option<String> {
    match &e.kind {
        ExprKind::Name(n) => Some(n.name.clone()),
        ExprKind::Member { base, member } => Some(format!("{}.{}", label_key(base)?, member.name)),
        ExprKind::Int(i) => Some(format!("{}:{:?}", i.value, i.width)),
        ExprKind::ErrorMember(n) => Some(format!("error.{}", n.name)),
        _ => None,
    }
}

fn switch_labels(cases: &[SwitchCase], diags: &mut Diagnostics) {
    let mut seen: HashMap<String, Span> = HashMap::new();
    let mut default: Option<Span> = None;
    for (i, c) in cases.iter().enumerate() {
        match &c.label {
            SwitchLabel::Default => {
                if let Some(first) = default {
                    diags.push(
                        Diagnostic::error("a switch statement with two `default` labels")
                            .with_primary(c.span, "second `default`")
                            .with_secondary(first, "first `default`"),
                    );
                } else if cases[i + 1..]
                    .iter()
                    .any(|c| c.label != SwitchLabel::Default)
                {
                    diags.push(
                        Diagnostic::error("`default` must be the last label of a switch statement")
                            .with_primary(c.span, "labels follow this `default`")
                            .with_note("P4_16 \"Switch statement\": a `default` label, if present, must be the last one"),
                    );
                }
                default.get_or_insert(c.span);
            }
            SwitchLabel::Expr(e) => {
                let Some(k) = label_key(e) else { continue };
                if let Some(first) = seen.get(&k) {
                    diags.push(
                        Diagnostic::error("a switch statement with the same label twice")
                            .with_primary(e.span, "repeated label")
                            .with_secondary(*first, "first here")
                            .with_note("P4_16 \"Switch statement\": no two labels may be equal"),
                    );
                } else {
                    seen.insert(k, e.span);
                }
            }
        }
    }
}
