//! `type T N;` introduces a new type (P4_16 "Introducing new types"): unlike `typedef T N;`,
//! which is another name for `T`, a value of `N` does not mix with a `T` (or another type)
//! without a cast, as p4c's type checker enforces:
//! - arithmetic, bitwise, shift and concatenation operators and `-`/`~` are not defined on
//!   it (`+: cannot be applied to expression 'p' with type 'N'`), nor `<`, `>`, `<=`, `>=`;
//! - `==`/`!=` compare it only with a value of the same new type;
//! - an assignment, an initialiser, a `return` or an argument of an action or function does
//!   not cast it implicitly to another type, nor another type (other than an integer literal)
//!   to it.
//!
//! A cast (`(T) n`, `(N) t`) converts either way. Checked on the AST before functions are
//! inlined, with the types the program declares (fields, parameters, variables, constants,
//! function results); an expression whose type this pass does not follow is not judged, so it
//! refuses only what it is sure of. The lowering itself treats `N` as `T`.

use std::collections::HashMap;

use crate::ast::*;
use crate::diag::{Diagnostic, Diagnostics};
use crate::source::Span;

/// The type of an expression, as far as this check needs it.
#[derive(Clone, Debug, PartialEq)]
enum K {
    /// A `type` declared new type, by its name, with its underlying type's text.
    New(String, String),
    /// A type that is not a new type (`bit<9>`, `bool`, a typedef of one), by its text.
    Other(String),
    /// A struct, header or header union type, by name.
    Agg(String),
    /// A header stack of elements of this type.
    Stack(Box<K>),
    /// An integer literal without a width (`int`).
    Int,
    /// Not followed.
    Unknown,
}

impl K {
    fn text(&self) -> String {
        match self {
            K::New(n, _) | K::Other(n) | K::Agg(n) => n.clone(),
            K::Stack(e) => format!("{}[]", e.text()),
            K::Int => "int".to_string(),
            K::Unknown => "?".to_string(),
        }
    }
}

/// Checks every body of the program.
pub fn check(program: &Program, diags: &mut Diagnostics) {
    let mut cx = Cx {
        decls: HashMap::new(),
        counts: HashMap::new(),
        local_actions: HashMap::new(),
        globals: HashMap::new(),
        scopes: Vec::new(),
        ret: None,
        tparams: Vec::new(),
        diags: Diagnostics::new(),
    };
    for d in &program.decls {
        if let Some(n) = d.name() {
            cx.decls.entry(n.name.clone()).or_insert(d);
            *cx.counts.entry(n.name.clone()).or_default() += 1;
        }
    }
    if !cx
        .decls
        .values()
        .any(|d| matches!(&d.kind, DeclKind::Typedef(t) if t.is_new_type))
    {
        return;
    }
    for d in &program.decls {
        if let DeclKind::Const(c) = &d.kind {
            let k = cx.classify(&c.ty, 0);
            cx.globals.insert(c.name.name.clone(), k);
        }
    }
    for d in &program.decls {
        cx.decl(d);
    }
    diags.extend(cx.diags);
}

struct Cx<'p> {
    /// Top-level declarations by name (the first of a name).
    decls: HashMap<String, &'p Decl>,
    /// How many top-level declarations have each name (overloads are not judged).
    counts: HashMap<String, usize>,
    /// The actions of the control being checked (`None`: a name declared twice).
    local_actions: HashMap<String, Option<Sig<'p>>>,
    /// Top-level constants' types.
    globals: HashMap<String, K>,
    /// Parameters, variables and constants of the bodies entered, innermost last.
    scopes: Vec<HashMap<String, K>>,
    /// The result type of the function being checked.
    ret: Option<K>,
    /// Type parameters of the generic blocks entered (not followed).
    tparams: Vec<String>,
    diags: Diagnostics,
}

/// A callee's parameters and result type (`None`: an action).
type Sig<'p> = (&'p [Param], Option<&'p Type>);

/// Typedef chains deeper than this are not followed (a cycle is refused elsewhere).
const MAX_CHAIN: u8 = 16;

impl<'p> Cx<'p> {
    fn classify(&self, t: &Type, depth: u8) -> K {
        match &t.kind {
            TypeKind::Bool => K::Other("bool".into()),
            TypeKind::Bit(w) => K::Other(format!("bit<{}>", width_text(w))),
            TypeKind::Int(w) => K::Other(format!("int<{}>", width_text(w))),
            TypeKind::Stack { elem, .. } => K::Stack(Box::new(self.classify(elem, depth))),
            TypeKind::Named(id) if depth < MAX_CHAIN && !self.tparams.contains(&id.name) => {
                self.named(&id.name, depth)
            }
            _ => K::Unknown,
        }
    }

    fn named(&self, name: &str, depth: u8) -> K {
        match self.decls.get(name).map(|d| &d.kind) {
            Some(DeclKind::Typedef(t)) if t.is_new_type => {
                K::New(name.to_string(), self.classify(&t.ty, depth + 1).text())
            }
            Some(DeclKind::Typedef(t)) => self.classify(&t.ty, depth + 1),
            Some(DeclKind::Header(_) | DeclKind::HeaderUnion(_) | DeclKind::Struct(_)) => {
                K::Agg(name.to_string())
            }
            _ => K::Unknown,
        }
    }

    fn lookup(&self, name: &str) -> K {
        self.scopes
            .iter()
            .rev()
            .find_map(|s| s.get(name))
            .or_else(|| self.globals.get(name))
            .cloned()
            .unwrap_or(K::Unknown)
    }

    fn declare(&mut self, name: &str, k: K) {
        if let Some(s) = self.scopes.last_mut() {
            s.insert(name.to_string(), k);
        }
    }

    fn params(&mut self, ps: &[Param]) {
        for p in ps {
            let k = self.classify(&p.ty, 0);
            self.declare(&p.name.name, k);
        }
    }

    /// Enters a body with type parameters `tps`; returns what [`Self::leave`] restores.
    fn enter(&mut self, tps: &[Ident]) -> usize {
        self.scopes.push(HashMap::new());
        let mark = self.tparams.len();
        self.tparams.extend(tps.iter().map(|t| t.name.clone()));
        mark
    }

    fn leave(&mut self, mark: usize) {
        self.tparams.truncate(mark);
        self.scopes.pop();
    }

    fn decl(&mut self, d: &'p Decl) {
        match &d.kind {
            DeclKind::Action(a) => {
                self.scopes.push(HashMap::new());
                self.params(&a.params);
                self.stmts(&a.body.stmts);
                self.scopes.pop();
            }
            DeclKind::Function(f) => {
                let mark = self.enter(&f.proto.type_params);
                self.params(&f.proto.params);
                self.ret = Some(self.classify(&f.proto.return_type, 0));
                self.stmts(&f.body.stmts);
                self.ret = None;
                self.leave(mark);
            }
            DeclKind::Control(c) => {
                let mark = self.enter(&c.type_params);
                self.params(&c.params);
                self.params(&c.ctor_params);
                for l in &c.locals {
                    if let DeclKind::Action(a) = &l.kind {
                        let sig = Some((&a.params[..], None));
                        let slot = self.local_actions.entry(a.name.name.clone());
                        slot.and_modify(|s| *s = None).or_insert(sig);
                    }
                }
                c.locals.iter().for_each(|l| self.decl(l));
                self.stmts(&c.apply.stmts);
                self.local_actions.clear();
                self.leave(mark);
            }
            DeclKind::Parser(p) => {
                let mark = self.enter(&p.type_params);
                self.params(&p.params);
                self.params(&p.ctor_params);
                p.locals.iter().for_each(|l| self.decl(l));
                for s in &p.states {
                    self.scopes.push(HashMap::new());
                    self.stmts(&s.body);
                    self.scopes.pop();
                }
                self.leave(mark);
            }
            DeclKind::Variable(v) => self.variable(&v.ty, &v.name, v.init.as_ref()),
            DeclKind::Const(c) if !self.scopes.is_empty() => {
                self.variable(&c.ty, &c.name, Some(&c.value))
            }
            _ => {}
        }
    }

    fn variable(&mut self, ty: &Type, name: &Ident, init: Option<&Expr>) {
        let k = self.classify(ty, 0);
        if let Some(e) = init {
            let v = self.expr(e);
            self.assignable(&k, &v, e);
        }
        self.declare(&name.name, k);
    }

    fn stmts(&mut self, ss: &[Stmt]) {
        ss.iter().for_each(|s| self.stmt(s));
    }

    fn block(&mut self, s: &Stmt) {
        self.scopes.push(HashMap::new());
        self.stmt(s);
        self.scopes.pop();
    }

    fn stmt(&mut self, s: &Stmt) {
        match &s.kind {
            StmtKind::Assign { lhs, op, rhs } => {
                let l = self.expr(lhs);
                let r = self.expr(rhs);
                match op {
                    None => self.assignable(&l, &r, rhs),
                    Some(op) => {
                        self.operands(*op, (&l, lhs), (&r, rhs), s.span);
                    }
                }
            }
            StmtKind::Call(e) => {
                self.expr(e);
            }
            StmtKind::If {
                cond,
                then_branch,
                else_branch,
            } => {
                self.expr(cond);
                self.block(then_branch);
                if let Some(e) = else_branch {
                    self.block(e);
                }
            }
            StmtKind::Switch { subject, cases } => {
                self.expr(subject);
                for b in cases.iter().filter_map(|c| c.body.as_ref()) {
                    self.scopes.push(HashMap::new());
                    self.stmts(&b.stmts);
                    self.scopes.pop();
                }
            }
            StmtKind::Block(b) => {
                self.scopes.push(HashMap::new());
                self.stmts(&b.stmts);
                self.scopes.pop();
            }
            StmtKind::Variable(v) => self.variable(&v.ty, &v.name, v.init.as_ref()),
            StmtKind::Const(c) => self.variable(&c.ty, &c.name, Some(&c.value)),
            StmtKind::Return(Some(e)) => {
                let v = self.expr(e);
                if let Some(r) = self.ret.clone() {
                    self.assignable(&r, &v, e);
                }
            }
            _ => {}
        }
    }

    /// The type of `e`, reporting the operators on new types inside it.
    fn expr(&mut self, e: &Expr) -> K {
        match &e.kind {
            ExprKind::Int(l) => match l.width {
                None => K::Int,
                Some(w) => K::Other(format!("{}<{w}>", if l.signed { "int" } else { "bit" })),
            },
            ExprKind::Bool(_) => K::Other("bool".into()),
            ExprKind::Name(id) => self.lookup(&id.name),
            ExprKind::Member { base, member } => {
                let b = self.expr(base);
                self.field(&b, &member.name)
            }
            ExprKind::Index { base, index } => {
                self.expr(index);
                match self.expr(base) {
                    K::Stack(elem) => *elem,
                    _ => K::Unknown,
                }
            }
            ExprKind::Cast { ty, expr } => {
                self.expr(expr);
                self.classify(ty, 0)
            }
            ExprKind::Unary { op, operand } => {
                let k = self.expr(operand);
                match op {
                    UnOp::Not => K::Other("bool".into()),
                    UnOp::Neg | UnOp::BitNot | UnOp::Plus => {
                        if let K::New(..) = k {
                            self.refuse_unary(*op, operand, &k, e);
                            return K::Unknown;
                        }
                        k
                    }
                }
            }
            ExprKind::Binary { op, lhs, rhs } => {
                let l = self.expr(lhs);
                let r = self.expr(rhs);
                self.operands(*op, (&l, lhs), (&r, rhs), e.span)
            }
            ExprKind::Ternary {
                cond,
                then_expr,
                else_expr,
            } => {
                self.expr(cond);
                let t = self.expr(then_expr);
                let f = self.expr(else_expr);
                if t == f {
                    t
                } else {
                    K::Unknown
                }
            }
            ExprKind::Call { callee, args, .. } => {
                if let ExprKind::Member { base, .. } = &callee.kind {
                    self.expr(base);
                }
                let sig = match &callee.kind {
                    ExprKind::Name(id) => self.callee(&id.name),
                    _ => None,
                };
                let Some((params, ret)) = sig else {
                    for a in args {
                        self.expr(&a.value);
                    }
                    return K::Unknown;
                };
                for (i, a) in args.iter().enumerate() {
                    let p = match &a.name {
                        Some(n) => params.iter().find(|p| p.name.name == n.name),
                        None => params.get(i),
                    };
                    if let Some(p) = p {
                        let (want, got) = (self.classify(&p.ty, 0), self.expr(&a.value));
                        self.assignable(&want, &got, &a.value);
                    }
                }
                ret.map_or(K::Unknown, |t| self.classify(t, 0))
            }
            _ => {
                e.for_each_child(|c| {
                    self.expr(c);
                });
                K::Unknown
            }
        }
    }

    /// The parameters and result type of the action or function `name` calls, when it is
    /// one declaration (not generic, not overloaded): the enclosing control's actions first.
    fn callee(&self, name: &str) -> Option<Sig<'p>> {
        if let Some(found) = self.local_actions.get(name) {
            return *found;
        }
        if self.counts.get(name) != Some(&1) {
            return None;
        }
        match self.decls.get(name).map(|d| &d.kind) {
            Some(DeclKind::Function(f)) if f.proto.type_params.is_empty() => {
                Some((&f.proto.params, Some(&f.proto.return_type)))
            }
            Some(DeclKind::Action(a)) => Some((&a.params, None)),
            _ => None,
        }
    }

    /// The type of field `name` of a value of type `base`.
    fn field(&self, base: &K, name: &str) -> K {
        let K::Agg(t) = base else { return K::Unknown };
        match self.decls.get(t).map(|d| &d.kind) {
            Some(DeclKind::Header(s) | DeclKind::HeaderUnion(s) | DeclKind::Struct(s))
                if s.type_params.is_empty() =>
            {
                s.fields
                    .iter()
                    .find(|f| f.name.name == name)
                    .map_or(K::Unknown, |f| self.classify(&f.ty, 0))
            }
            _ => K::Unknown,
        }
    }

    /// The result of `l op r`, refusing an operator not defined on a new type operand.
    fn operands(&mut self, op: BinOp, (l, le): (&K, &Expr), (r, re): (&K, &Expr), at: Span) -> K {
        use BinOp::*;
        match op {
            And | Or => K::Other("bool".into()),
            Eq | Ne => {
                let known = |k: &K| !matches!(k, K::Unknown | K::Agg(_) | K::Stack(_));
                let new = matches!(l, K::New(..)) || matches!(r, K::New(..));
                if new && known(l) && known(r) && l != r {
                    self.diags.push(
                        Diagnostic::error(format!(
                            "`{}` of type `{}` cannot be compared to `{}` of type `{}`",
                            text(le),
                            l.text(),
                            text(re),
                            r.text()
                        ))
                        .with_primary(at, "compared here")
                        .with_note(note(l, r))
                        .with_help(cast_help(l, r, le, re)),
                    );
                }
                K::Other("bool".into())
            }
            _ => {
                // A shift's amount may be of any unsigned type; its left operand may not be new.
                let checked: &[(&K, &Expr)] = if matches!(op, Shl | Shr) {
                    &[(l, le)]
                } else {
                    &[(l, le), (r, re)]
                };
                let bad = checked.iter().find(|(k, _)| matches!(k, K::New(..)));
                if let Some(&(k, x)) = bad {
                    let K::New(_, under) = k else {
                        return K::Unknown;
                    };
                    let what = if matches!(op, Lt | Gt | Le | Ge) {
                        "is not defined on"
                    } else {
                        "cannot be applied to"
                    };
                    self.diags.push(
                        Diagnostic::error(format!(
                            "`{}` {what} `{}` of type `{}`",
                            op.as_str(),
                            text(x),
                            k.text()
                        ))
                        .with_primary(x.span, format!("of type `{}`", k.text()))
                        .with_secondary(at, "in this operation")
                        .with_note(note(k, &K::Other(under.clone())))
                        .with_help(format!("cast it first: `({under}) {}`", text(x))),
                    );
                    return K::Unknown;
                }
                match op {
                    Lt | Gt | Le | Ge => K::Other("bool".into()),
                    Concat => K::Unknown,
                    _ if *l == K::Int => r.clone(),
                    _ => l.clone(),
                }
            }
        }
    }

    fn refuse_unary(&mut self, op: UnOp, x: &Expr, k: &K, at: &Expr) {
        let K::New(_, under) = k else { return };
        let sym = op.as_str();
        self.diags.push(
            Diagnostic::error(format!(
                "`{sym}` cannot be applied to `{}` of type `{}`",
                text(x),
                k.text()
            ))
            .with_primary(at.span, "in this operation")
            .with_note(note(k, &K::Other(under.clone())))
            .with_help(format!("cast it first: `({under}) {}`", text(x))),
        );
    }

    /// Refuses storing a value of type `v` (expression `e`) where type `dst` is expected,
    /// when one of them is a new type and the other is not the same one.
    fn assignable(&mut self, dst: &K, v: &K, e: &Expr) {
        let known = |k: &K| matches!(k, K::New(..) | K::Other(_));
        let new = matches!(dst, K::New(..)) || matches!(v, K::New(..));
        if !new || !known(dst) || !known(v) || dst == v {
            return;
        }
        self.diags.push(
            Diagnostic::error(format!(
                "cannot cast `{}` of type `{}` implicitly to type `{}`",
                text(e),
                v.text(),
                dst.text()
            ))
            .with_primary(e.span, format!("of type `{}`", v.text()))
            .with_note(note(dst, v))
            .with_help(format!("cast it: `({}) {}`", dst.text(), text(e))),
        );
    }
}

/// Why: the new type of the two (`a` or `b`) and what it is not.
fn note(a: &K, b: &K) -> String {
    let (n, under) = match (a, b) {
        (K::New(n, u), _) | (_, K::New(n, u)) => (n, u),
        _ => return String::new(),
    };
    format!(
        "`{n}` is declared with `type`: a new type, distinct from its underlying `{under}` \
         (a `typedef` would be another name for it); p4c refuses this too"
    )
}

fn cast_help(l: &K, r: &K, le: &Expr, re: &Expr) -> String {
    match (l, r) {
        (K::New(n, _), _) => format!("cast the other side: `({n}) {}`", text(re)),
        (_, K::New(n, _)) => format!("cast the other side: `({n}) {}`", text(le)),
        _ => String::new(),
    }
}

/// `e` as P4 text, for messages (names and members; other expressions as `expression`).
fn text(e: &Expr) -> String {
    match &e.kind {
        ExprKind::Name(id) => id.name.clone(),
        ExprKind::Member { base, member } => format!("{}.{}", text(base), member.name),
        ExprKind::Index { base, index } => format!("{}[{}]", text(base), text(index)),
        ExprKind::Int(l) => match l.width {
            Some(w) => format!("{w}{}{}", if l.signed { "s" } else { "w" }, l.value),
            None => l.value.to_string(),
        },
        ExprKind::Cast { expr, .. } => format!("(...) {}", text(expr)),
        _ => "the expression".to_string(),
    }
}

fn width_text(w: &Expr) -> String {
    match &w.kind {
        ExprKind::Int(l) => l.value.to_string(),
        ExprKind::Name(id) => id.name.clone(),
        _ => "...".to_string(),
    }
}
