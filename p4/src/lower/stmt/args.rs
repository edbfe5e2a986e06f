//! Arguments of nested applies and actions: parameters bound to the arguments' storage.

use std::collections::HashMap;
use std::rc::Rc;

use pipeline::ir::{self, Place};

use super::*;
use crate::ast::{self, DeclKind, Direction, ExprKind};
use crate::check::types::Ty;
use crate::diag::Diagnostic;
use crate::lower::expr::Resolved;
use crate::lower::phv::Loc;
use crate::lower::{Binding, BlockInst, Lowerer, Res, V};
use crate::source::Span;

impl<'a> Lowerer<'a> {
    /// Binds a block's or action's parameters to call arguments (aliasing storage).
    pub fn bind_args(
        &mut self,
        params: &'a [ast::Param],
        args: &'a [ast::Argument],
        span: Span,
    ) -> Res<HashMap<String, Binding<'a>>> {
        let mut frame = HashMap::new();
        if args.len() > params.len() {
            return Err(self.err(
                Diagnostic::error(format!(
                    "{} argument(s) given, {} expected",
                    args.len(),
                    params.len()
                ))
                .with_primary(span, "too many arguments"),
            ));
        }
        let named = args.iter().any(|a| a.name.is_some());
        for (i, p) in params.iter().enumerate() {
            let arg = if named {
                args.iter()
                    .find(|a| a.name.as_ref().is_some_and(|n| n.name == p.name.name))
            } else {
                args.get(i)
            };
            let by_default = matches!(p.direction, Direction::In | Direction::None);
            if let (None, Some(d), true) = (arg, &p.default, by_default) {
                // A parameter with a default value (P4_16 "Parameters with default values").
                let ty = self.resolve_type(&p.ty)?;
                let binding = self.in_binding(p, d, d.span, &ty)?;
                frame.insert(p.name.name.clone(), binding);
                continue;
            }
            let Some(arg) = arg else {
                return Err(self.err(
                    Diagnostic::error(format!("missing argument for parameter `{}`", p.name.name))
                        .with_primary(span, "in this call")
                        .with_secondary(p.span, "parameter declared here"),
                ));
            };
            let ty = self.resolve_type(&p.ty)?;
            let packet = matches!(&ty, Ty::Extern { name, .. } if name == "packet_in" || name == "packet_out");
            let binding = if packet {
                self.packet_binding(p, arg)?
            } else {
                match p.direction {
                    Direction::Out | Direction::InOut => self.out_binding(p, arg, &ty)?,
                    Direction::In | Direction::None => {
                        self.in_binding(p, &arg.value, arg.span, &ty)?
                    }
                }
            };
            frame.insert(p.name.name.clone(), binding);
        }
        Ok(frame)
    }

    /// Inlines a nested control's body.
    pub(super) fn inline_control(
        &mut self,
        b: &Rc<BlockInst<'a>>,
        args: &'a [ast::Argument],
        span: Span,
        out: &mut ir::Block,
    ) -> Res<()> {
        self.check_depth(span)?;
        let DeclKind::Control(c) = &b.decl.kind else {
            return Err(self.err(Diagnostic::error("not a control").with_primary(span, "here")));
        };
        let types = self.infer_types(b.decl, &c.params, args, &b.types)?;
        let mark = self.slice_args.len();
        let body = self.with_types(types.clone(), |l| {
            let frame = l.bind_args(&c.params, args, span)?;
            let path = l.join(&b.name);
            l.apply_instance(b, &c.params, frame, path, &types, span)
        });
        let slices = self.take_slice_args(mark);
        Self::slice_copy_in(&slices, out);
        let mut body = body?;
        let mut copy_out = Vec::new();
        Self::slice_copy_out(&slices, &mut copy_out);
        self.copy_out_on_exit(&mut body, &copy_out, span)?;
        out.extend(body);
        out.extend(copy_out);
        Ok(())
    }

    /// A `packet_in`/`packet_out` parameter: the packet itself.
    fn packet_binding(&mut self, p: &'a ast::Param, arg: &'a ast::Argument) -> Res<Binding<'a>> {
        match self.resolve(&arg.value)? {
            Resolved::Obj(b @ Binding::Packet { .. }) => Ok(b),
            _ => Err(self.err(
                Diagnostic::error(format!("parameter `{}` needs the packet", p.name.name))
                    .with_primary(arg.span, "not a packet"),
            )),
        }
    }

    /// An `out`/`inout` parameter: an alias of the argument's storage (`_` for `out`: a
    /// fresh temporary).
    fn out_binding(
        &mut self,
        p: &'a ast::Param,
        arg: &'a ast::Argument,
        ty: &Ty,
    ) -> Res<Binding<'a>> {
        if matches!(arg.value.kind, ExprKind::DontCare) && p.direction == Direction::Out {
            let loc = self.alloc(&format!("$dontcare{}", self.tmp), ty, arg.span)?;
            self.tmp += 1;
            self.dont_cares.push(loc.clone());
            return Ok(Binding::Val(V::Loc(loc)));
        }
        let loc = match self.dest(&arg.value)? {
            Dest::Agg(l) => l,
            Dest::Scalar(Place::Field(f), t) => Rc::new(Loc::Field { f, ty: t }),
            Dest::Scalar(Place::RegValue(w), t) => Rc::new(Loc::RegWord(w, t)),
            Dest::Scalar(Place::RegOutput, t) => Rc::new(Loc::RegOut(1, t)),
            Dest::Scalar(Place::RegOutputN(k), t) => Rc::new(Loc::RegOut(k, t)),
            Dest::Scalar(place @ Place::FieldSlice { .. }, t) => {
                let inout = p.direction == Direction::InOut;
                self.slice_arg(place, &t, inout, arg.span)?
            }
        };
        if loc.ty() != *ty {
            return Err(self.err(
                Diagnostic::error(format!(
                    "mismatched types: parameter `{}` is `{ty}`, argument is `{}`",
                    p.name.name,
                    loc.ty()
                ))
                .with_primary(arg.span, "wrong type"),
            ));
        }
        Ok(Binding::Val(V::Loc(loc)))
    }

    /// An `in` or directionless parameter: the argument's storage (read-only) or value.
    fn in_binding(
        &mut self,
        p: &'a ast::Param,
        value: &'a ast::Expr,
        span: Span,
        ty: &Ty,
    ) -> Res<Binding<'a>> {
        match self.expr(value, Some(ty))? {
            V::Loc(l) if !l.ty().is_scalar() => {
                if l.ty() != *ty {
                    return Err(self.err(
                        Diagnostic::error(format!(
                            "mismatched types: parameter `{}` is `{ty}`, argument is `{}`",
                            p.name.name,
                            l.ty()
                        ))
                        .with_primary(span, "wrong type"),
                    ));
                }
                Ok(Binding::In(V::Loc(l)))
            }
            v => {
                let (e, t) = self.scalar_of_value(v, Some(ty), span)?;
                Ok(Binding::In(V::Scalar(e, t)))
            }
        }
    }

    /// P4_16 §6.8: an `out` parameter starts uninitialized, its headers invalid (p4c's
    /// copy-in/copy-out gives it a fresh invalid copy). pisa binds `out` parameters to their
    /// argument's storage instead of copying, so the call starts by invalidating the
    /// argument's headers. `copied` names parameters with a temporary of their own (already
    /// invalid). An `out` argument that is also another parameter's argument is warned about:
    /// by reference that parameter sees the invalidation, through p4c's copy it would not.
    pub(in crate::lower) fn invalidate_out_headers(
        &mut self,
        params: &'a [ast::Param],
        frame: &HashMap<String, Binding<'a>>,
        copied: &dyn Fn(&str) -> bool,
        span: Span,
        out: &mut ir::Block,
    ) {
        let storage = |p: &ast::Param| match frame.get(&p.name.name) {
            Some(Binding::Val(V::Loc(l)) | Binding::In(V::Loc(l))) if !copied(&p.name.name) => {
                Some(l.clone())
            }
            _ => None,
        };
        for p in params.iter().filter(|p| p.direction == Direction::Out) {
            let Some(loc) = storage(p) else { continue };
            let mut headers = Vec::new();
            loc.headers(&mut headers);
            if headers.is_empty() {
                continue;
            }
            let shared = params.iter().find(|q| {
                q.name.name != p.name.name
                    && storage(q).is_some_and(|m| crate::lower::shared_apply::overlap(&loc, &m))
            });
            if let Some(q) = shared {
                self.warn(
                    Diagnostic::warning(format!(
                        "the `out` argument of `{}` is also the argument of `{}`: pisa passes both \
                         by reference, so `{}` sees its headers invalid from the start; p4c copies \
                         `{}` in first",
                        p.name.name, q.name.name, q.name.name, q.name.name
                    ))
                    .with_primary(span, "in this call")
                    .with_help("pass distinct storage to the two parameters"),
                );
            }
            out.extend(headers.into_iter().map(|header| ir::Stmt::SetValid {
                header,
                valid: false,
            }));
        }
    }
}
