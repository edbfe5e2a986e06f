//! `return;` in the apply block of a control that another control instantiates, as p4c's
//! frontend removes it (`RemoveReturns`, before inlining): the return sets a fresh `bool` flag
//! and what follows it in the apply block runs under `if (!flag)`. bf-p4c sees no return
//! there, so a nested control may return early; a top-level control's return stays (it ends
//! the control, which the model runs as a statement of its own).

use std::collections::HashSet;

use crate::ast::*;

use super::inline_functions::{block, has_return, Dest, Returns};

/// Rewrites the returns of every control applied from another control.
pub fn rewrite(program: &mut Program) {
    let mut nested: HashSet<String> = HashSet::new();
    for d in &program.decls {
        if let DeclKind::Control(c) = &d.kind {
            c.locals.iter().for_each(|l| instantiated(l, &mut nested));
        }
    }
    for d in &mut program.decls {
        let DeclKind::Control(c) = &mut d.kind else {
            continue;
        };
        if !nested.contains(&c.name.name) || !c.apply.stmts.iter().any(has_return) {
            continue;
        }
        let span = c.apply.span;
        let mut r = Returns {
            dest: &Dest::None,
            flag: format!("{}$returned", c.name.name),
            used_flag: false,
        };
        let stmts = r.body(std::mem::take(&mut c.apply.stmts), span);
        c.apply.stmts = vec![block(stmts, span)];
    }
}

/// The control type an instance declaration `T(...) name;` names.
fn instantiated(d: &Decl, out: &mut HashSet<String>) {
    if let DeclKind::Instantiation(i) = &d.kind {
        if let TypeKind::Named(n) | TypeKind::Specialized { base: n, .. } = &i.ty.kind {
            out.insert(n.name.clone());
        }
    }
}
