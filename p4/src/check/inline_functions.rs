//! Top-level `function` declarations inlined at their calls, as p4c's frontend does before any
//! backend sees the program (P4_16 "Functions"; copy-in/copy-out calling convention).
//!
//! A call becomes the function's body with its parameters replaced: an `in` parameter that
//! the body never assigns by the argument expression itself (when that has no call in it),
//! otherwise by a fresh local initialised from the argument; an `out`/`inout` parameter by
//! the argument (its storage), or by a fresh local copied in and out when another argument
//! reads the same variable, or when it is an `out` header (which starts invalid: the fresh local
//! is, and is copied out). `return e` writes the call's destination (the assignment's
//! left-hand side, the declared variable, or a fresh temporary for a call inside an
//! expression or whose `out` arguments write the left-hand side: copy-out comes first); a
//! return that is not last sets a flag that guards the rest of the body. The function's own locals get fresh names. A body that is one `return e;` inlines as the
//! expression `e`. A call in the right operand of `&&`/`||` or in an arm of `?:` is inlined
//! under an `if` on the (once evaluated) left operand or condition, so it runs only when P4's
//! short-circuit evaluation reaches it. Runs on the AST after `named_args` (arguments are in
//! parameter order).

use std::collections::{HashMap, HashSet};

use crate::ast::*;
use crate::diag::{Diagnostic, Diagnostics};
use crate::source::Span;

/// Nested inlining deeper than this is refused (P4 has no recursion; this catches it).
const MAX_DEPTH: usize = 32;

/// Function calls inlined in all: depth alone does not bound the work (functions that each
/// call the next three times, twelve deep, are half a million bodies from a kilobyte).
pub const MAX_INLINED_CALLS: usize = 10_000;

/// Inlines every call of a top-level function in actions, controls, parsers and functions.
pub fn inline_functions(program: &mut Program, diags: &mut Diagnostics) {
    let funcs: HashMap<String, FunctionDecl> = program
        .decls
        .iter()
        .filter_map(|d| match &d.kind {
            DeclKind::Function(f) => Some((f.proto.name.name.clone(), f.clone())),
            _ => None,
        })
        .collect();
    if funcs.is_empty() {
        return;
    }
    let mut cx = Inliner {
        funcs,
        with_headers: types_with_headers(program),
        fresh: 0,
        depth: 0,
        inlined: 0,
        chain: Vec::new(),
        diags: Diagnostics::new(),
    };
    for d in &mut program.decls {
        cx.decl(d);
    }
    diags.extend(cx.diags);
}

struct Inliner {
    funcs: HashMap<String, FunctionDecl>,
    /// Named types that are or contain headers (an `out` one starts invalid).
    with_headers: HashSet<String>,
    fresh: usize,
    depth: usize,
    /// Calls inlined so far, against [`MAX_INLINED_CALLS`].
    inlined: usize,
    /// The functions being inlined, outermost first (to tell recursion from a deep chain).
    chain: Vec<String>,
    diags: Diagnostics,
}

/// The names of the program's types that are headers, header unions, or structs (or typedefs)
/// holding one somewhere.
fn types_with_headers(program: &Program) -> HashSet<String> {
    let mut set = HashSet::new();
    loop {
        let before = set.len();
        for d in &program.decls {
            let yes = match &d.kind {
                DeclKind::Header(h) | DeclKind::HeaderUnion(h) => Some(&h.name),
                DeclKind::Struct(s) => s
                    .fields
                    .iter()
                    .any(|f| type_has_header(&f.ty, &set))
                    .then_some(&s.name),
                DeclKind::Typedef(t) => type_has_header(&t.ty, &set).then_some(&t.name),
                _ => None,
            };
            if let Some(n) = yes {
                set.insert(n.name.clone());
            }
        }
        if set.len() == before {
            return set;
        }
    }
}

/// Whether a value of type `t` holds a header (`named`: the named types that do).
fn type_has_header(t: &Type, named: &HashSet<String>) -> bool {
    match &t.kind {
        TypeKind::Named(n) => named.contains(&n.name),
        TypeKind::Specialized { base, .. } => named.contains(&base.name),
        TypeKind::Stack { .. } => true,
        TypeKind::Tuple(ts) => ts.iter().any(|t| type_has_header(t, named)),
        _ => false,
    }
}

pub(super) fn name_expr(name: &str, span: Span) -> Expr {
    Expr {
        kind: ExprKind::Name(Ident::new(name, span)),
        span,
    }
}

fn stmt(kind: StmtKind, span: Span) -> Stmt {
    Stmt {
        annotations: Vec::new(),
        kind,
        span,
    }
}

fn assign(lhs: Expr, rhs: Expr, span: Span) -> Stmt {
    stmt(StmtKind::Assign { lhs, op: None, rhs }, span)
}

pub(super) fn block(stmts: Vec<Stmt>, span: Span) -> Stmt {
    stmt(
        StmtKind::Block(Block {
            annotations: Vec::new(),
            stmts,
            span,
        }),
        span,
    )
}

fn declare(ty: Type, name: &str, init: Option<Expr>, span: Span) -> Stmt {
    stmt(
        StmtKind::Variable(VariableDecl {
            ty,
            name: Ident::new(name, span),
            init,
        }),
        span,
    )
}

/// Whether `e` calls anything (then it must be evaluated once).
fn has_call(e: &Expr) -> bool {
    let mut found = false;
    visit_expr(e, &mut |x| found |= matches!(x.kind, ExprKind::Call { .. }));
    found
}

fn visit_expr(e: &Expr, f: &mut impl FnMut(&Expr)) {
    f(e);
    e.for_each_child(|c| visit_expr(c, f));
}

/// The variable an lvalue writes (`hdr` of `hdr.d.a`).
fn root(e: &Expr) -> Option<&str> {
    match &e.kind {
        ExprKind::Name(n) => Some(&n.name),
        ExprKind::Member { base, .. }
        | ExprKind::Index { base, .. }
        | ExprKind::Slice { base, .. } => root(base),
        _ => None,
    }
}

/// Whether `e` reads the variable `name`.
fn mentions(e: &Expr, name: &str) -> bool {
    let mut found = false;
    visit_expr(e, &mut |x| {
        found |= matches!(&x.kind, ExprKind::Name(n) if n.name == name)
    });
    found
}

/// Whether some statement of `ss` assigns (or passes as a callee's argument) the variable `name`.
fn assigns(ss: &[Stmt], name: &str) -> bool {
    ss.iter().any(|s| match &s.kind {
        StmtKind::Assign { lhs, .. } => root(lhs) == Some(name),
        StmtKind::Call(e) => mentions(e, name),
        StmtKind::If {
            then_branch,
            else_branch,
            ..
        } => {
            assigns(std::slice::from_ref(then_branch), name)
                || else_branch
                    .as_ref()
                    .is_some_and(|e| assigns(std::slice::from_ref(e), name))
        }
        StmtKind::Block(b) => assigns(&b.stmts, name),
        StmtKind::Switch { cases, .. } => cases
            .iter()
            .any(|c| c.body.as_ref().is_some_and(|b| assigns(&b.stmts, name))),
        _ => false,
    })
}

pub(super) fn has_return(s: &Stmt) -> bool {
    match &s.kind {
        StmtKind::Return(_) => true,
        StmtKind::If {
            then_branch,
            else_branch,
            ..
        } => has_return(then_branch) || else_branch.as_ref().is_some_and(|e| has_return(e)),
        StmtKind::Block(b) => b.stmts.iter().any(has_return),
        StmtKind::Switch { cases, .. } => cases.iter().any(|c| {
            c.body
                .as_ref()
                .is_some_and(|b| b.stmts.iter().any(has_return))
        }),
        _ => false,
    }
}

/// Replaces names (parameters, renamed locals) and type parameters in a function body.
struct Subst<'m> {
    names: HashMap<String, Expr>,
    types: &'m HashMap<String, Type>,
}

impl Subst<'_> {
    fn expr(&self, e: &mut Expr) {
        match &mut e.kind {
            ExprKind::Name(n) => {
                if let Some(r) = self.names.get(&n.name) {
                    *e = r.clone();
                }
                return;
            }
            ExprKind::Cast { ty, .. } => self.ty(ty),
            ExprKind::Call { type_args, .. } => type_args.iter_mut().for_each(|t| self.ty(t)),
            ExprKind::Type(t) => self.ty(t),
            _ => {}
        }
        e.for_each_child_mut(|c| self.expr(c));
    }

    fn ty(&self, t: &mut Type) {
        match &mut t.kind {
            TypeKind::Named(n) => {
                if let Some(r) = self.types.get(&n.name) {
                    *t = r.clone();
                }
            }
            TypeKind::Specialized { args, .. } | TypeKind::Tuple(args) => {
                args.iter_mut().for_each(|a| self.ty(a))
            }
            _ => {}
        }
    }

    fn stmts(&mut self, ss: &mut [Stmt], fresh: &mut usize) {
        for s in ss {
            self.stmt(s, fresh);
        }
    }

    fn stmt(&mut self, s: &mut Stmt, fresh: &mut usize) {
        match &mut s.kind {
            StmtKind::Assign { lhs, rhs, .. } => {
                self.expr(lhs);
                self.expr(rhs);
            }
            StmtKind::Call(e) => self.expr(e),
            StmtKind::If {
                cond,
                then_branch,
                else_branch,
            } => {
                self.expr(cond);
                self.stmt(then_branch, fresh);
                if let Some(e) = else_branch {
                    self.stmt(e, fresh);
                }
            }
            StmtKind::Switch { subject, cases } => {
                self.expr(subject);
                for c in cases {
                    if let Some(b) = &mut c.body {
                        self.stmts(&mut b.stmts, fresh);
                    }
                }
            }
            StmtKind::Block(b) => self.stmts(&mut b.stmts, fresh),
            StmtKind::Variable(v) => {
                self.ty(&mut v.ty);
                if let Some(e) = &mut v.init {
                    self.expr(e);
                }
                self.rename(&mut v.name, fresh);
            }
            StmtKind::Const(c) => {
                self.ty(&mut c.ty);
                self.expr(&mut c.value);
                self.rename(&mut c.name, fresh);
            }
            StmtKind::Return(Some(e)) => self.expr(e),
            _ => {}
        }
    }

    /// A local of the body: a fresh name from here on.
    fn rename(&mut self, name: &mut Ident, fresh: &mut usize) {
        *fresh += 1;
        let new = format!("{}$inl{}", name.name, fresh);
        self.names
            .insert(name.name.clone(), name_expr(&new, name.span));
        name.name = new;
    }
}

/// Where a call's result goes.
pub(super) enum Dest {
    /// Discarded (a call statement).
    None,
    /// Written to this lvalue.
    Lvalue(Expr),
}

/// The parts of a call of a top-level function.
struct Call {
    f: FunctionDecl,
    type_args: Vec<Type>,
    args: Vec<Argument>,
    span: Span,
}

impl Inliner {
    fn decl(&mut self, d: &mut Decl) {
        match &mut d.kind {
            DeclKind::Action(a) => self.block(&mut a.body),
            DeclKind::Control(c) => {
                for l in &mut c.locals {
                    self.decl(l);
                }
                self.block(&mut c.apply);
            }
            // A RegisterAction's `apply` (and any other method an initializer implements).
            DeclKind::Instantiation(i) => {
                for d in i.initializer.iter_mut().flatten() {
                    match &mut d.kind {
                        DeclKind::Function(f) => self.block(&mut f.body),
                        _ => self.decl(d),
                    }
                }
            }
            DeclKind::Const(c) => self.in_place(&mut c.value, "a constant's value"),
            DeclKind::Table(t) => {
                for p in &mut t.properties {
                    if let TablePropertyKind::Key(keys) = &mut p.kind {
                        for k in keys {
                            self.in_place(&mut k.expr, "a table key");
                        }
                    }
                }
            }
            DeclKind::Parser(p) => {
                for s in &mut p.states {
                    let mut body = self.stmts(std::mem::take(&mut s.body));
                    if let Some(Transition {
                        kind: TransitionKind::Select { exprs, .. },
                        ..
                    }) = &mut s.transition
                    {
                        exprs.iter_mut().for_each(|e| self.hoist(e, &mut body));
                    }
                    s.body = body;
                }
            }
            _ => {}
        }
    }

    fn block(&mut self, b: &mut Block) {
        b.stmts = self.stmts(std::mem::take(&mut b.stmts));
    }

    fn stmts(&mut self, ss: Vec<Stmt>) -> Vec<Stmt> {
        let mut out = Vec::with_capacity(ss.len());
        for s in ss {
            self.stmt_into(s, &mut out);
        }
        out
    }

    /// One statement: the result as one statement (a block when it became several).
    fn one(&mut self, s: Stmt) -> Stmt {
        let span = s.span;
        let mut v = self.stmts(vec![s]);
        if v.len() == 1 {
            v.pop().expect("one")
        } else {
            block(v, span)
        }
    }

    /// A call of a top-level function, taken out of `e` (which is left as `_`).
    fn take_call(&self, e: &mut Expr) -> Option<Call> {
        let ExprKind::Call { callee, .. } = &e.kind else {
            return None;
        };
        let ExprKind::Name(n) = &callee.kind else {
            return None;
        };
        let f = self.funcs.get(&n.name)?.clone();
        let span = e.span;
        let taken = std::mem::replace(&mut e.kind, ExprKind::DontCare);
        let ExprKind::Call {
            type_args, args, ..
        } = taken
        else {
            return None;
        };
        Some(Call {
            f,
            type_args,
            args,
            span,
        })
    }

    fn stmt_into(&mut self, mut s: Stmt, out: &mut Vec<Stmt>) {
        let span = s.span;
        match &mut s.kind {
            StmtKind::Assign { lhs, op: None, rhs } => {
                if let Some(mut c) = self.take_call(rhs) {
                    self.hoist_args(&mut c, out);
                    self.hoist(lhs, out);
                    if let Some(ret) = self.copied_out_over(&c, lhs) {
                        // `x = f(x, x)` with an `out` x: copy-out first, then the assignment.
                        let v = self.inline_into_temp(c, ret, out);
                        out.push(assign(lhs.clone(), v, span));
                        return;
                    }
                    let dest = Dest::Lvalue(lhs.clone());
                    out.extend(self.inline(c, dest));
                    return;
                }
                self.hoist(lhs, out);
                self.hoist(rhs, out);
            }
            StmtKind::Variable(v) => {
                if let Some(mut c) = v.init.as_mut().and_then(|e| self.take_call(e)) {
                    self.hoist_args(&mut c, out);
                    out.push(declare(v.ty.clone(), &v.name.name, None, span));
                    let dest = Dest::Lvalue(name_expr(&v.name.name, v.name.span));
                    out.extend(self.inline(c, dest));
                    return;
                }
                if let Some(e) = &mut v.init {
                    self.hoist(e, out);
                }
            }
            StmtKind::Call(e) => {
                if let Some(mut c) = self.take_call(e) {
                    self.hoist_args(&mut c, out);
                    out.extend(self.inline(c, Dest::None));
                    return;
                }
                self.hoist(e, out);
            }
            StmtKind::Assign { lhs, rhs, .. } => {
                self.hoist(lhs, out);
                self.hoist(rhs, out);
            }
            StmtKind::If {
                cond,
                then_branch,
                else_branch,
            } => {
                self.hoist(cond, out);
                let t = std::mem::replace(then_branch.as_mut(), stmt(StmtKind::Empty, span));
                **then_branch = self.one(t);
                if let Some(e) = else_branch {
                    let x = std::mem::replace(e.as_mut(), stmt(StmtKind::Empty, span));
                    **e = self.one(x);
                }
            }
            StmtKind::Switch { subject, cases } => {
                self.hoist(subject, out);
                for c in cases {
                    if let Some(b) = &mut c.body {
                        self.block(b);
                    }
                }
            }
            StmtKind::Block(b) => self.block(b),
            StmtKind::Const(c) => self.hoist(&mut c.value, out),
            StmtKind::Return(Some(e)) => self.hoist(e, out),
            _ => {}
        }
        out.push(s);
    }

    /// The return type of `c` when an `out`/`inout` argument of it writes the variable that
    /// `lhs` (its result's destination) writes, so the result must wait in a temporary.
    fn copied_out_over(&self, c: &Call, lhs: &Expr) -> Option<Type> {
        let r = root(lhs)?;
        let clash = c.f.proto.params.iter().zip(&c.args).any(|(p, a)| {
            matches!(p.direction, Direction::Out | Direction::InOut) && mentions(&a.value, r)
        });
        let mut ret = c.f.proto.return_type.clone();
        Subst {
            names: HashMap::new(),
            types: &type_map(c),
        }
        .ty(&mut ret);
        (clash && !matches!(ret.kind, TypeKind::Void) && !generic(&ret, &c.f)).then_some(ret)
    }

    fn hoist_args(&mut self, c: &mut Call, out: &mut Vec<Stmt>) {
        for a in &mut c.args {
            self.hoist(&mut a.value, out);
        }
    }

    /// Replaces every function call in `e` by its value; the statements computing it go to
    /// `out`.
    fn hoist(&mut self, e: &mut Expr, out: &mut Vec<Stmt>) {
        match &mut e.kind {
            ExprKind::Member { base, .. } | ExprKind::Unary { operand: base, .. } => {
                self.hoist(base, out)
            }
            ExprKind::Cast { expr, .. } => self.hoist(expr, out),
            ExprKind::Index { base, index } => {
                self.hoist(base, out);
                self.hoist(index, out);
            }
            ExprKind::Slice { base, hi, lo } => {
                self.hoist(base, out);
                self.hoist(hi, out);
                self.hoist(lo, out);
            }
            ExprKind::Binary {
                op: op @ (BinOp::And | BinOp::Or),
                lhs,
                rhs,
            } => {
                // Short-circuit: the right operand's calls run only when it is evaluated.
                self.hoist(lhs, out);
                let mut right = Vec::new();
                self.hoist(rhs, &mut right);
                if !right.is_empty() {
                    let t = self.bool_temp(lhs, out);
                    let when = if *op == BinOp::And { t } else { not(t) };
                    guarded(when, right, None, out);
                }
            }
            ExprKind::Binary { lhs, rhs, .. } => {
                self.hoist(lhs, out);
                self.hoist(rhs, out);
            }
            ExprKind::Ternary {
                cond,
                then_expr,
                else_expr,
            } => {
                // Only the arm selected runs its calls.
                self.hoist(cond, out);
                let (mut then_s, mut else_s) = (Vec::new(), Vec::new());
                self.hoist(then_expr, &mut then_s);
                self.hoist(else_expr, &mut else_s);
                if !then_s.is_empty() || !else_s.is_empty() {
                    let t = self.bool_temp(cond, out);
                    guarded(t, then_s, Some(else_s), out);
                }
            }
            ExprKind::Call { callee, args, .. } => {
                self.hoist(callee, out);
                args.iter_mut().for_each(|a| self.hoist(&mut a.value, out));
            }
            ExprKind::List(items) => items.iter_mut().for_each(|x| self.hoist(x, out)),
            ExprKind::StructInit(fs) => fs.iter_mut().for_each(|x| self.hoist(&mut x.value, out)),
            _ => {}
        }
        let span = e.span;
        let Some(c) = self.take_call(e) else { return };
        if self.too_deep(&c.f.proto.name.name, span) {
            return;
        }
        if let Some(v) = self.as_expression(&c) {
            *e = v;
            self.enter(&c.f.proto.name.name);
            self.hoist(e, out);
            self.leave();
            return;
        }
        let types = type_map(&c);
        let mut ret = c.f.proto.return_type.clone();
        Subst {
            names: HashMap::new(),
            types: &types,
        }
        .ty(&mut ret);
        if matches!(ret.kind, TypeKind::Void) || generic(&ret, &c.f) {
            self.diags.push(
                Diagnostic::error(format!(
                    "the result of `{}` cannot be used here",
                    c.f.proto.name.name
                ))
                .with_primary(span, "in this expression")
                .with_help("give its type arguments, or assign the call to a variable first"),
            );
            return;
        }
        *e = self.inline_into_temp(c, ret, out);
    }

    /// `c` inlined with its result in a fresh variable of type `ret` (declared in `out`),
    /// which is returned.
    fn inline_into_temp(&mut self, c: Call, ret: Type, out: &mut Vec<Stmt>) -> Expr {
        let span = c.span;
        self.fresh += 1;
        let tmp = format!("{}$ret{}", c.f.proto.name.name, self.fresh);
        out.push(declare(ret, &tmp, None, span));
        let dest = Dest::Lvalue(name_expr(&tmp, span));
        out.extend(self.inline(c, dest));
        name_expr(&tmp, span)
    }

    /// `e` evaluated once into a fresh `bool` (declared in `out`); `e` becomes that variable,
    /// which is returned too.
    fn bool_temp(&mut self, e: &mut Expr, out: &mut Vec<Stmt>) -> Expr {
        let span = e.span;
        self.fresh += 1;
        let tmp = format!("cond$sc{}", self.fresh);
        let ty = Type {
            kind: TypeKind::Bool,
            span,
        };
        let value = std::mem::replace(e, name_expr(&tmp, span));
        out.push(declare(ty, &tmp, Some(value), span));
        name_expr(&tmp, span)
    }

    /// Replaces each call in `e`, where no statement can go (a table key, a constant), by the
    /// function's `return` expression; a function with more of a body than that is refused.
    fn in_place(&mut self, e: &mut Expr, place: &str) {
        e.for_each_child_mut(|c| self.in_place(c, place));
        let Some(c) = self.take_call(e) else {
            return;
        };
        match self.as_expression(&c) {
            Some(mut r) => {
                if self.too_deep(&c.f.proto.name.name, c.span) {
                    return;
                }
                self.enter(&c.f.proto.name.name);
                self.in_place(&mut r, place);
                self.leave();
                *e = r;
            }
            None => self.diags.push(
                Diagnostic::error(format!(
                    "function `{}` cannot be inlined into {place}",
                    c.f.proto.name.name
                ))
                .with_primary(c.span, "called here")
                .with_note("where no statement can go, only a function whose body is a single `return` (and whose parameters are all `in`) can be called")
                .with_help("compute the value into a variable before, and use the variable"),
            ),
        }
    }

    /// A body that is one `return e;` with every argument substituted: `e` itself.
    fn as_expression(&self, c: &Call) -> Option<Expr> {
        let [Stmt {
            kind: StmtKind::Return(Some(r)),
            ..
        }] = c.f.body.stmts.as_slice()
        else {
            return None;
        };
        if c.args.len() != c.f.proto.params.len() {
            return None;
        }
        let mut names = HashMap::new();
        for (p, a) in c.f.proto.params.iter().zip(&c.args) {
            if !matches!(p.direction, Direction::In | Direction::None) || has_call(&a.value) {
                return None;
            }
            names.insert(p.name.name.clone(), a.value.clone());
        }
        let types = type_map(c);
        let mut r = r.clone();
        Subst {
            names,
            types: &types,
        }
        .expr(&mut r);
        Some(r)
    }
}

fn not(e: Expr) -> Expr {
    let span = e.span;
    Expr {
        kind: ExprKind::Unary {
            op: UnOp::Not,
            operand: Box::new(e),
        },
        span,
    }
}

/// `if (cond) { then } else { otherwise }` appended to `out`, where the branches are statements
/// hoisted out of one operand: the temporaries they declare without a value are declared before
/// the `if` (the expression left behind reads them after it).
fn guarded(cond: Expr, then: Vec<Stmt>, otherwise: Option<Vec<Stmt>>, out: &mut Vec<Stmt>) {
    let span = cond.span;
    let mut branch = |ss: Vec<Stmt>| {
        let mut inside = Vec::with_capacity(ss.len());
        for s in ss {
            match &s.kind {
                StmtKind::Variable(v) if v.init.is_none() => out.push(s),
                StmtKind::Variable(v) => {
                    let (name, value) = (v.name.clone(), v.init.clone().expect("init"));
                    out.push(declare(v.ty.clone(), &name.name, None, s.span));
                    inside.push(assign(name_expr(&name.name, name.span), value, s.span));
                }
                _ => inside.push(s),
            }
        }
        block(inside, span)
    };
    let then_branch = Box::new(branch(then));
    let else_branch = otherwise.map(|o| Box::new(branch(o)));
    out.push(stmt(
        StmtKind::If {
            cond,
            then_branch,
            else_branch,
        },
        span,
    ));
}

/// The explicit type arguments of a generic function's call.
fn type_map(c: &Call) -> HashMap<String, Type> {
    let tps = &c.f.proto.type_params;
    if tps.len() != c.type_args.len() {
        return HashMap::new();
    }
    tps.iter()
        .map(|t| t.name.clone())
        .zip(c.type_args.iter().cloned())
        .collect()
}

/// Whether `t` still names one of `f`'s type parameters.
fn generic(t: &Type, f: &FunctionDecl) -> bool {
    match &t.kind {
        TypeKind::Named(n) => f.proto.type_params.iter().any(|p| p.name == n.name),
        TypeKind::Specialized { args, .. } | TypeKind::Tuple(args) => {
            args.iter().any(|a| generic(a, f))
        }
        _ => false,
    }
}

/// How returns are rewritten in one inlined body.
pub(super) struct Returns<'d> {
    pub(super) dest: &'d Dest,
    pub(super) flag: String,
    pub(super) used_flag: bool,
}

impl Returns<'_> {
    /// A whole body rewritten, preceded by its flag's declaration (`false`) when a return
    /// needs it.
    pub(super) fn body(&mut self, ss: Vec<Stmt>, span: Span) -> Vec<Stmt> {
        let body = self.list(ss, true);
        if !self.used_flag {
            return body;
        }
        let ty = Type {
            kind: TypeKind::Bool,
            span,
        };
        let f = Expr {
            kind: ExprKind::Bool(false),
            span,
        };
        let mut out = Vec::with_capacity(body.len() + 1);
        out.push(declare(ty, &self.flag, Some(f), span));
        out.extend(body);
        out
    }

    /// `ss` rewritten; `tail`: nothing of the function runs after it.
    fn list(&mut self, ss: Vec<Stmt>, tail: bool) -> Vec<Stmt> {
        let n = ss.len();
        let mut out = Vec::with_capacity(n);
        let mut it = ss.into_iter().enumerate();
        while let Some((i, s)) = it.next() {
            let last = tail && i + 1 == n;
            let returns = has_return(&s);
            let span = s.span;
            out.push(self.one(s, last));
            if returns && i + 1 < n {
                self.used_flag = true;
                let rest: Vec<Stmt> = it.by_ref().map(|(_, s)| s).collect();
                let rest = self.list(rest, tail);
                let not_done = Expr {
                    kind: ExprKind::Unary {
                        op: UnOp::Not,
                        operand: Box::new(name_expr(&self.flag, span)),
                    },
                    span,
                };
                out.push(stmt(
                    StmtKind::If {
                        cond: not_done,
                        then_branch: Box::new(block(rest, span)),
                        else_branch: None,
                    },
                    span,
                ));
            }
        }
        out
    }

    fn one(&mut self, mut s: Stmt, tail: bool) -> Stmt {
        let span = s.span;
        match &mut s.kind {
            StmtKind::Return(e) => {
                let mut v = Vec::new();
                if let (Some(e), Dest::Lvalue(l)) = (e.take(), self.dest) {
                    v.push(assign(l.clone(), e, span));
                }
                if !tail {
                    self.used_flag = true;
                    let t = Expr {
                        kind: ExprKind::Bool(true),
                        span,
                    };
                    v.push(assign(name_expr(&self.flag, span), t, span));
                }
                return block(v, span);
            }
            StmtKind::If {
                then_branch,
                else_branch,
                ..
            } => {
                let t = std::mem::replace(then_branch.as_mut(), stmt(StmtKind::Empty, span));
                **then_branch = self.one(t, tail);
                if let Some(e) = else_branch {
                    let x = std::mem::replace(e.as_mut(), stmt(StmtKind::Empty, span));
                    **e = self.one(x, tail);
                }
            }
            StmtKind::Block(b) => b.stmts = self.list(std::mem::take(&mut b.stmts), tail),
            StmtKind::Switch { cases, .. } => {
                for c in cases {
                    if let Some(b) = &mut c.body {
                        b.stmts = self.list(std::mem::take(&mut b.stmts), tail);
                    }
                }
            }
            _ => {}
        }
        s
    }
}

impl Inliner {
    /// The statements of one inlined call.
    fn inline(&mut self, c: Call, dest: Dest) -> Vec<Stmt> {
        let (f, span) = (&c.f, c.span);
        let fname = &f.proto.name.name;
        if c.args.len() != f.proto.params.len() {
            self.diags.push(
                Diagnostic::error(format!(
                    "function `{fname}` takes {} argument(s), {} given",
                    f.proto.params.len(),
                    c.args.len()
                ))
                .with_primary(span, "in this call")
                .with_secondary(f.proto.name.span, "declared here"),
            );
            return Vec::new();
        }
        if self.too_deep(fname, span) {
            return Vec::new();
        }
        let types = type_map(&c);
        let mut pre = Vec::new();
        let mut post = Vec::new();
        let mut names = HashMap::new();
        for (k, (p, a)) in f.proto.params.iter().zip(&c.args).enumerate() {
            let value = &a.value;
            let out_dir = matches!(p.direction, Direction::Out | Direction::InOut);
            let mut ty = p.ty.clone();
            Subst {
                names: HashMap::new(),
                types: &types,
            }
            .ty(&mut ty);
            // An `out` header starts invalid (P4_16 §6.8: uninitialized, its validity with it):
            // a fresh local, which is, copied out over the argument.
            let starts_invalid =
                p.direction == Direction::Out && type_has_header(&ty, &self.with_headers);
            let direct = if out_dir {
                let r = root(value);
                !c.args
                    .iter()
                    .enumerate()
                    .any(|(j, b)| j != k && r.is_some_and(|r| mentions(&b.value, r)))
                    && r.is_some()
                    && !starts_invalid
            } else {
                !assigns(&f.body.stmts, &p.name.name) && !has_call(value)
            };
            if direct || matches!(value.kind, ExprKind::DontCare) && !out_dir {
                names.insert(p.name.name.clone(), value.clone());
                continue;
            }
            if generic(&ty, f) {
                self.diags.push(
                    Diagnostic::error(format!(
                        "cannot tell the type of parameter `{}` of `{fname}`",
                        p.name.name
                    ))
                    .with_primary(a.span, "for this argument")
                    .with_help("give the call its type arguments"),
                );
                return Vec::new();
            }
            self.fresh += 1;
            let tmp = format!("{}${}{}", fname, p.name.name, self.fresh);
            let init = (p.direction != Direction::Out).then(|| value.clone());
            pre.push(declare(ty, &tmp, init, a.span));
            if out_dir {
                post.push(assign(value.clone(), name_expr(&tmp, span), span));
            }
            names.insert(p.name.name.clone(), name_expr(&tmp, span));
        }
        let mut body = f.body.stmts.clone();
        Subst {
            names,
            types: &types,
        }
        .stmts(&mut body, &mut self.fresh);
        self.fresh += 1;
        let mut r = Returns {
            dest: &dest,
            flag: format!("{fname}$returned{}", self.fresh),
            used_flag: false,
        };
        pre.extend(r.body(body, span));
        pre.extend(post);
        self.enter(fname);
        let stmts = self.stmts(pre);
        self.leave();
        vec![block(stmts, span)]
    }

    /// Inlining `fname`'s body starts.
    fn enter(&mut self, fname: &str) {
        self.depth += 1;
        self.chain.push(fname.to_string());
    }

    fn leave(&mut self) {
        self.depth -= 1;
        self.chain.pop();
    }

    /// A call of `fname` at `span` that cannot be inlined: recursion (`fname` is being
    /// inlined already; P4 has none), or past the inlining depth.
    fn too_deep(&mut self, fname: &str, span: Span) -> bool {
        let d = match self.chain.iter().position(|f| f == fname) {
            Some(at) => {
                let mut cycle = self.chain[at..].to_vec();
                cycle.push(fname.to_string());
                Diagnostic::error(format!(
                    "function `{fname}` calls itself (recursion: {})",
                    cycle.join(" → ")
                ))
            }
            None if self.depth < MAX_DEPTH => {
                self.inlined += 1;
                match self.inlined.cmp(&(MAX_INLINED_CALLS + 1)) {
                    std::cmp::Ordering::Less => return false,
                    // Reported once; every call after it is left as it is too.
                    std::cmp::Ordering::Greater => return true,
                    std::cmp::Ordering::Equal => Diagnostic::error(format!(
                        "inlining this program's function calls makes more than \
                         {MAX_INLINED_CALLS} bodies (pisa inlines at most {MAX_INLINED_CALLS})"
                    )),
                }
            }
            None => Diagnostic::error(format!(
                "function calls nest deeper than {MAX_DEPTH} levels at `{fname}`: pisa inlines \
                 at most {MAX_DEPTH} nested calls"
            )),
        };
        self.diags.push(d.with_primary(span, "in this call"));
        true
    }
}
