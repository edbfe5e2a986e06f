//! Named call arguments (P4_16 "Calling convention": a named argument binds to the parameter
//! of that name). Runs on the AST before checking, like p4c's frontend `CheckNamedArgs`
//! (either all or none of a call's arguments are named, no name twice) and `OrderArguments`
//! (named arguments put in parameter order), so every later pass may bind by position.
//!
//! Callees resolved: actions (calls, table action lists, `default_action`, entries), top-level
//! and extern functions, extern methods and constructors, and `apply` of control/parser
//! instances. Named arguments of a callee it cannot resolve keep their names and order (the
//! lowering's own binders match names where they meet them).

use std::collections::HashMap;

use crate::ast::*;
use crate::diag::{Diagnostic, Diagnostics};

/// Parameter names of each overload.
type Overloads = Vec<Vec<String>>;

/// What the pass knows of the declarations: parameter names per callee.
#[derive(Default)]
struct Sigs {
    /// Top-level actions, functions and extern functions.
    funcs: HashMap<String, Overloads>,
    /// Extern type → method (the constructor under the extern's name) → overloads.
    externs: HashMap<String, HashMap<String, Overloads>>,
    /// Control/parser (and their types, packages) → (apply params, constructor params).
    blocks: HashMap<String, (Vec<String>, Vec<String>)>,
    /// Top-level instances → their type's name.
    instances: HashMap<String, String>,
}

/// The names declared inside one control or parser.
#[derive(Default, Clone)]
struct Local {
    actions: HashMap<String, Overloads>,
    instances: HashMap<String, String>,
}

fn names(params: &[Param]) -> Vec<String> {
    params.iter().map(|p| p.name.name.clone()).collect()
}

fn type_name(t: &Type) -> Option<String> {
    match &t.kind {
        TypeKind::Named(n) | TypeKind::Specialized { base: n, .. } => Some(n.name.clone()),
        _ => None,
    }
}

impl Sigs {
    fn collect(program: &Program) -> Sigs {
        let mut s = Sigs::default();
        for d in &program.decls {
            match &d.kind {
                DeclKind::Action(a) => push(&mut s.funcs, &a.name.name, names(&a.params)),
                DeclKind::Function(f) => {
                    push(&mut s.funcs, &f.proto.name.name, names(&f.proto.params))
                }
                DeclKind::ExternFunction(f) => push(&mut s.funcs, &f.name.name, names(&f.params)),
                DeclKind::Extern(e) => {
                    let m = s.externs.entry(e.name.name.clone()).or_default();
                    for member in &e.members {
                        let (n, p) = match &member.kind {
                            ExternMemberKind::Constructor { name, params } => (name, params),
                            ExternMemberKind::Method(f) | ExternMemberKind::AbstractMethod(f) => {
                                (&f.name, &f.params)
                            }
                        };
                        push(m, &n.name, names(p));
                    }
                }
                DeclKind::Control(c) => {
                    s.blocks.insert(
                        c.name.name.clone(),
                        (names(&c.params), names(&c.ctor_params)),
                    );
                }
                DeclKind::Parser(p) => {
                    s.blocks.insert(
                        p.name.name.clone(),
                        (names(&p.params), names(&p.ctor_params)),
                    );
                }
                DeclKind::ParserType(b) | DeclKind::ControlType(b) => {
                    s.blocks
                        .insert(b.name.name.clone(), (names(&b.params), Vec::new()));
                }
                DeclKind::Package(p) => {
                    s.blocks
                        .insert(p.name.name.clone(), (Vec::new(), names(&p.params)));
                }
                DeclKind::Instantiation(i) => {
                    if let Some(t) = type_name(&i.ty) {
                        s.instances.insert(i.name.name.clone(), t);
                    }
                }
                _ => {}
            }
        }
        s
    }

    /// The overloads of a constructor of type `ty`.
    fn ctor(&self, ty: &str) -> Option<Overloads> {
        if let Some(m) = self.externs.get(ty) {
            return m.get(ty).cloned();
        }
        self.blocks.get(ty).map(|(_, c)| vec![c.clone()])
    }
}

fn push(m: &mut HashMap<String, Overloads>, name: &str, params: Vec<String>) {
    m.entry(name.to_string()).or_default().push(params);
}

fn local_of(locals: &[Decl]) -> Local {
    let mut l = Local::default();
    for d in locals {
        match &d.kind {
            DeclKind::Action(a) => push(&mut l.actions, &a.name.name, names(&a.params)),
            DeclKind::Instantiation(i) => {
                if let Some(t) = type_name(&i.ty) {
                    l.instances.insert(i.name.name.clone(), t);
                }
            }
            _ => {}
        }
    }
    l
}

/// The walker: signatures, the enclosing block's names, the diagnostics.
struct Pass<'s> {
    sigs: &'s Sigs,
    local: Local,
    diags: Diagnostics,
}

/// Checks and orders the named arguments of every call in `program`; errors go to `diags`.
pub fn order_arguments(program: &mut Program, diags: &mut Diagnostics) {
    let sigs = Sigs::collect(program);
    let mut pass = Pass {
        sigs: &sigs,
        local: Local::default(),
        diags: Diagnostics::new(),
    };
    for d in &mut program.decls {
        pass.decl(d);
    }
    diags.extend(pass.diags);
}

impl Pass<'_> {
    fn decl(&mut self, d: &mut Decl) {
        match &mut d.kind {
            DeclKind::Const(c) => self.expr(&mut c.value),
            DeclKind::Variable(v) => {
                if let Some(e) = &mut v.init {
                    self.expr(e);
                }
            }
            DeclKind::Function(f) => self.block(&mut f.body),
            DeclKind::Action(a) => self.block(&mut a.body),
            DeclKind::Instantiation(i) => self.instantiation(i),
            DeclKind::Table(t) => self.table(t),
            DeclKind::Control(c) => {
                let saved = std::mem::replace(&mut self.local, local_of(&c.locals));
                for l in &mut c.locals {
                    self.decl(l);
                }
                self.block(&mut c.apply);
                self.local = saved;
            }
            DeclKind::Parser(p) => {
                let saved = std::mem::replace(&mut self.local, local_of(&p.locals));
                for l in &mut p.locals {
                    self.decl(l);
                }
                for s in &mut p.states {
                    self.stmts(&mut s.body);
                    if let Some(Transition {
                        kind: TransitionKind::Select { exprs, .. },
                        ..
                    }) = &mut s.transition
                    {
                        exprs.iter_mut().for_each(|e| self.expr(e));
                    }
                }
                self.local = saved;
            }
            _ => {}
        }
    }

    fn instantiation(&mut self, i: &mut Instantiation) {
        for a in &mut i.args {
            self.expr(&mut a.value);
        }
        let ctor = type_name(&i.ty).and_then(|t| self.sigs.ctor(&t));
        self.order(&mut i.args, ctor, i.ty.span);
        if let Some(init) = &mut i.initializer {
            for d in init {
                self.decl(d);
            }
        }
    }

    fn table(&mut self, t: &mut TableDecl) {
        for p in &mut t.properties {
            match &mut p.kind {
                TablePropertyKind::Actions(refs) => {
                    refs.iter_mut().for_each(|r| self.action_ref(r))
                }
                TablePropertyKind::DefaultAction(r) => self.action_ref(r),
                TablePropertyKind::Entries(es) => {
                    es.iter_mut().for_each(|e| self.action_ref(&mut e.action))
                }
                TablePropertyKind::Key(ks) => ks.iter_mut().for_each(|k| self.expr(&mut k.expr)),
                TablePropertyKind::Size(e) | TablePropertyKind::Other { value: e, .. } => {
                    self.expr(e)
                }
            }
        }
    }

    fn action_ref(&mut self, r: &mut ActionRef) {
        let Some(args) = &mut r.args else { return };
        for a in args.iter_mut() {
            self.expr(&mut a.value);
        }
        let sig = self.function(&r.name.name);
        self.order(args, sig, r.span);
    }

    fn block(&mut self, b: &mut Block) {
        self.stmts(&mut b.stmts);
    }

    fn stmts(&mut self, ss: &mut [Stmt]) {
        ss.iter_mut().for_each(|s| self.stmt(s));
    }

    fn stmt(&mut self, s: &mut Stmt) {
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
                self.stmt(then_branch);
                if let Some(e) = else_branch {
                    self.stmt(e);
                }
            }
            StmtKind::Switch { subject, cases } => {
                self.expr(subject);
                for c in cases {
                    if let Some(b) = &mut c.body {
                        self.block(b);
                    }
                }
            }
            StmtKind::Block(b) => self.block(b),
            StmtKind::Variable(v) => {
                if let Some(e) = &mut v.init {
                    self.expr(e);
                }
            }
            StmtKind::Const(c) => self.expr(&mut c.value),
            StmtKind::Return(Some(e)) => self.expr(e),
            _ => {}
        }
    }

    fn expr(&mut self, e: &mut Expr) {
        e.for_each_child_mut(|c| self.expr(c));
        if let ExprKind::Call { callee, args, .. } = &mut e.kind {
            let sig = self.callee(callee);
            self.order(args, sig, e.span);
        }
    }

    /// An action or function by name: the enclosing block's actions first.
    fn function(&self, name: &str) -> Option<Overloads> {
        self.local
            .actions
            .get(name)
            .or_else(|| self.sigs.funcs.get(name))
            .cloned()
    }

    /// The parameter lists a call's callee may have.
    fn callee(&self, callee: &Expr) -> Option<Overloads> {
        match &callee.kind {
            ExprKind::Name(n) => self.function(&n.name),
            ExprKind::Member { base, member } => {
                let ExprKind::Name(inst) = &base.kind else {
                    return None;
                };
                let ty = self
                    .local
                    .instances
                    .get(&inst.name)
                    .or_else(|| self.sigs.instances.get(&inst.name))?;
                if let Some(m) = self.sigs.externs.get(ty) {
                    return m.get(&member.name).cloned();
                }
                let (apply, _) = self.sigs.blocks.get(ty)?;
                (member.name == "apply").then(|| vec![apply.clone()])
            }
            _ => None,
        }
    }

    /// `CheckNamedArgs` on `args`, then `OrderArguments` against `sig` when it is known.
    fn order(&mut self, args: &mut [Argument], sig: Option<Overloads>, span: crate::source::Span) {
        let named = args.iter().filter(|a| a.name.is_some()).count();
        if named == 0 {
            return;
        }
        if named != args.len() {
            let first = args
                .iter()
                .find(|a| a.name.is_none())
                .map_or(span, |a| a.span);
            self.diags.push(
                Diagnostic::error("either all or none of the arguments of a call must be named")
                    .with_primary(first, "positional argument")
                    .with_secondary(span, "in this call"),
            );
            return;
        }
        for (k, a) in args.iter().enumerate() {
            let n = a.name.as_ref().expect("all named");
            if let Some(b) = args[..k]
                .iter()
                .find(|b| b.name.as_ref().is_some_and(|m| m.name == n.name))
            {
                self.diags.push(
                    Diagnostic::error(format!("argument `{}` given twice", n.name))
                        .with_primary(a.span, "again here")
                        .with_secondary(b.span, "first here"),
                );
                return;
            }
        }
        let Some(overloads) = sig else { return };
        let fits = |ps: &Vec<String>| {
            args.iter()
                .all(|a| a.name.as_ref().is_some_and(|n| ps.contains(&n.name)))
        };
        let Some(params) = overloads.iter().find(|ps| fits(ps)) else {
            self.unknown_name(args, &overloads, span);
            return;
        };
        args.sort_by_key(|a| {
            let n = &a.name.as_ref().expect("all named").name;
            params.iter().position(|p| p == n)
        });
    }

    /// No overload has a parameter for every name: point at the first name the first overload
    /// lacks.
    fn unknown_name(
        &mut self,
        args: &[Argument],
        overloads: &Overloads,
        span: crate::source::Span,
    ) {
        let ps = overloads.first().cloned().unwrap_or_default();
        let bad = args
            .iter()
            .filter_map(|a| a.name.as_ref())
            .find(|n| !ps.contains(&n.name));
        let (name, at) = bad.map_or((String::new(), span), |n| (n.name.clone(), n.span));
        self.diags.push(
            Diagnostic::error(format!("no parameter named `{name}`"))
                .with_primary(at, "unknown argument name")
                .with_secondary(span, "in this call")
                .with_note(format!("the parameters are: {}", ps.join(", "))),
        );
    }
}
