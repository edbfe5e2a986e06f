//! Control instances (MAU controls and deparsers, nested ones inlined) and the local
//! declarations shared with parsers: constants, variables, extern and block instances,
//! actions and tables.

use std::cell::Cell;
use std::collections::HashMap;
use std::rc::Rc;

use pipeline::ir;

use super::{Binding, BlockInst, Lowerer, Res, V};
use crate::ast::{self, DeclKind};
use crate::check::types::Ty;
use crate::diag::Diagnostic;

/// Lowers a control instance's locals and apply block with `frame` binding its parameters.
pub(super) fn lower_control_inst<'a>(
    l: &mut Lowerer<'a>,
    inst: &BlockInst<'a>,
    frame: HashMap<String, Binding<'a>>,
    prefix: String,
) -> Res<ir::Block> {
    l.check_depth(inst.span)?;
    let DeclKind::Control(c) = &inst.decl.kind else {
        return Err(l.err(
            Diagnostic::error(format!("`{}` is not a control", inst.name))
                .with_primary(inst.span, "here"),
        ));
    };
    let mut frame = frame;
    bind_ctor(l, inst, &mut frame)?;
    l.lowered_blocks
        .insert((inst.decl.span.file, inst.decl.span.lo));
    let errs = l.diags.error_count();
    l.control_annos.push(&inst.decl.annotations);
    let body = l.with_scope(frame, Some(prefix), |l| {
        let mut body = Vec::new();
        for d in &c.locals {
            l.local_decl_or_poison(d, &mut body);
        }
        l.block_stmts(&c.apply.stmts, &mut body);
        l.check_unused_actions();
        body
    });
    l.control_annos.pop();
    if l.diags.error_count() > errs {
        return Err(super::Reported);
    }
    Ok(body)
}

impl<'a> Lowerer<'a> {
    /// Reports `n` when the innermost scope already declares it (the first declaration stays).
    pub fn redeclared(&mut self, n: &ast::Ident) -> bool {
        let dup = self.scopes.last().is_some_and(|f| {
            f.get(&n.name)
                .is_some_and(|b| !matches!(b, Binding::Poison))
        });
        if dup {
            self.err(
                Diagnostic::error(format!("`{}` is declared twice in this scope", n.name))
                    .with_primary(n.span, "declared again here")
                    .with_help("rename one of them"),
            );
        }
        dup
    }

    /// Type-checks the actions of the current control that no table or call used, then drops
    /// what that produced (bf-p4c does not keep unused actions either).
    fn check_unused_actions(&mut self) {
        let unused: Vec<Rc<super::ActionSlot<'a>>> = self
            .scopes
            .first()
            .map(|f| {
                let mut v: Vec<_> = f
                    .values()
                    .filter_map(|b| match b {
                        // Actions with directional parameters are inlined where called.
                        Binding::Action(s)
                            if s.id.get().is_none()
                                && !s.failed.get()
                                && s.decl
                                    .params
                                    .iter()
                                    .all(|p| p.direction == ast::Direction::None) =>
                        {
                            Some(s.clone())
                        }
                        _ => None,
                    })
                    .collect();
                v.sort_by_key(|s| (s.decl.name.span.file, s.decl.name.span.lo));
                v
            })
            .unwrap_or_default();
        let (na, ns) = (self.pipe.actions.len(), self.spans.actions.len());
        let (nra, nras) = (
            self.pipe.register_actions.len(),
            self.spans.register_actions.len(),
        );
        for slot in &unused {
            let _ = self.lower_action(slot);
        }
        self.pipe.actions.truncate(na);
        self.spans.actions.truncate(ns);
        // Implicit register actions of `Register.read/write` in those bodies go too.
        self.pipe.register_actions.truncate(nra);
        self.spans.register_actions.truncate(nras);
        // Forget ids of everything lowered only for checking (callees included).
        let frames: Vec<Rc<super::ActionSlot<'a>>> = self
            .scopes
            .iter()
            .flat_map(|f| f.values())
            .filter_map(|b| match b {
                Binding::Action(s) => Some(s.clone()),
                _ => None,
            })
            .chain(self.top_actions.values().cloned())
            .collect();
        for s in frames {
            if s.id.get().is_some_and(|id| id.index() >= na) {
                s.id.set(None);
            }
        }
    }

    /// [`Self::local_decl`], binding the name to [`Binding::Poison`] when it fails.
    pub fn local_decl_or_poison(&mut self, d: &'a ast::Decl, init: &mut ir::Block) {
        if self.local_decl(d, init).is_err() {
            if let Some(n) = d.name() {
                self.bind(&n.name, Binding::Poison);
            }
        }
    }

    /// A local declaration of a parser or control. Variable initializers go to `init`.
    pub fn local_decl(&mut self, d: &'a ast::Decl, init: &mut ir::Block) -> Res<()> {
        if let Some(n) = d.name() {
            if self.redeclared(n) {
                return Ok(());
            }
        }
        match &d.kind {
            DeclKind::Const(c) => {
                let v = self.const_decl_value(c)?;
                self.bind(&c.name.name, Binding::Val(v));
                Ok(())
            }
            DeclKind::Variable(v) => {
                let ty = self.resolve_type(&v.ty)?;
                let name = self.join(&v.name.name);
                let loc = self.alloc(&name, &ty, v.name.span)?;
                self.note_local(&loc);
                self.bind(&v.name.name, Binding::Val(V::Loc(loc.clone())));
                if let Some(e) = &v.init {
                    if let Some(w) = ty.scalar_width() {
                        let (x, _) = self.scalar(e, Some(&ty))?;
                        if let super::phv::Loc::Field { f, .. } = &*loc {
                            let _ = w;
                            init.push(ir::Stmt::Assign {
                                dst: ir::Place::Field(*f),
                                value: x,
                            });
                        }
                    } else {
                        return Err(self.err(
                            crate::check::unsupported(
                                e.span,
                                "initializers of aggregate locals",
                                "aggregate initialization",
                            )
                            .with_help("assign the fields in the apply block"),
                        ));
                    }
                }
                Ok(())
            }
            DeclKind::Instantiation(i) => {
                let ty = self.resolve_type(&i.ty)?;
                match ty {
                    Ty::Block(name) => {
                        let Some(decl) = self.env.lookup(&name) else {
                            return Err(self.err(
                                Diagnostic::error(format!("unknown block `{name}`"))
                                    .with_primary(i.ty.span, "here"),
                            ));
                        };
                        if !matches!(decl.kind, DeclKind::Parser(_) | DeclKind::Control(_)) {
                            return Err(self.err(
                                Diagnostic::error(format!("`{name}` cannot be instantiated here"))
                                    .with_primary(i.ty.span, "not a parser or control"),
                            ));
                        }
                        let ctor = self.ctor_values(decl, &i.args, i.ty.span)?;
                        let targs = match &i.ty.kind {
                            ast::TypeKind::Specialized { args, .. } => args.as_slice(),
                            _ => &[],
                        };
                        let types = self.block_types(decl, targs, i.ty.span)?;
                        self.bind(
                            &i.name.name,
                            Binding::Block(Rc::new(BlockInst {
                                decl,
                                name: i.name.name.clone(),
                                span: i.name.span,
                                ctor,
                                types,
                            })),
                        );
                        Ok(())
                    }
                    Ty::Extern { .. } => {
                        let x = super::externs::instantiate(self, d, i)?;
                        self.bind(&i.name.name, Binding::Extern(x));
                        Ok(())
                    }
                    other => Err(self.err(
                        Diagnostic::error(format!("`{other}` cannot be instantiated"))
                            .with_primary(i.ty.span, "not an extern, parser or control"),
                    )),
                }
            }
            DeclKind::Action(a) => {
                let name = self.qualify(&d.annotations, &a.name.name);
                let scope_depth = self.scopes.len();
                self.bind(
                    &a.name.name,
                    Binding::Action(Rc::new(super::ActionSlot {
                        decl: a,
                        name,
                        id: Cell::new(None),
                        failed: Cell::new(false),
                        scope_depth,
                    })),
                );
                Ok(())
            }
            DeclKind::Table(t) => {
                let slot = self.lower_table(d, t)?;
                self.bind(&t.name.name, Binding::Table(Rc::new(slot)));
                Ok(())
            }
            DeclKind::ValueSet(v) => {
                let id = self.lower_value_set(d, v)?;
                self.bind(&v.name.name, Binding::ValueSet(id));
                Ok(())
            }
            DeclKind::Unsupported { what } => {
                Err(self.err(crate::check::unsupported(d.span, what, what)))
            }
            _ => {
                let span = d.name().map(|n| n.span).unwrap_or(d.span);
                Err(self.err(
                    Diagnostic::error("this declaration is not allowed inside a parser or control")
                        .with_primary(span, "declared here")
                        .with_help("move it to the top level"),
                ))
            }
        }
    }
}

/// Binds an instance's constructor arguments in the frame of its body; an instance made
/// without them (a block named where an instance is expected) is refused with the reason.
pub(super) fn bind_ctor<'a>(
    l: &mut Lowerer<'a>,
    inst: &BlockInst<'a>,
    frame: &mut HashMap<String, Binding<'a>>,
) -> Res<()> {
    let params = super::ctor::ctor_params(inst.decl);
    if inst.ctor.len() != params.len() {
        return Err(l.err(
            Diagnostic::error(format!(
                "`{}` needs its {} constructor argument(s)",
                inst.name,
                params.len()
            ))
            .with_primary(
                inst.span,
                "instantiate it with arguments: `Block(args) name;`",
            ),
        ));
    }
    for (name, v) in &inst.ctor {
        frame.insert(name.clone(), Binding::In(v.clone()));
    }
    Ok(())
}
