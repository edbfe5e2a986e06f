//! Calls: methods of packets, externs, tables, controls and headers, and actions.

use std::rc::Rc;

use pipeline::ir::{self};

use crate::ast::{self, DeclKind, ExprKind};
use crate::check::types::Ty;
use crate::diag::Diagnostic;
use crate::lower::expr::Resolved;
use crate::lower::phv::Loc;
use crate::lower::{Binding, BlockInst, Ctx, Lowerer, Res, V};
use crate::source::Span;

impl<'a> Lowerer<'a> {
    /// A call. In statement position `out` receives the statements; in an expression it is
    /// `None` and the call must yield a value.
    pub fn call(&mut self, e: &'a ast::Expr, out: Option<&mut ir::Block>) -> Res<Option<V>> {
        let ExprKind::Call {
            callee,
            type_args,
            args,
        } = &e.kind
        else {
            return Err(self.err(Diagnostic::error("expected a call").with_primary(e.span, "here")));
        };
        match &callee.kind {
            ExprKind::Member { base, member } => {
                self.method_call(base, member, type_args, args, e.span, out)
            }
            ExprKind::Name(id) => match self.lookup_name(id)? {
                Resolved::Obj(Binding::Action(slot)) => {
                    if !matches!(self.ctx, Ctx::Control | Ctx::Action) {
                        return Err(self.err(
                            Diagnostic::error(format!(
                                "actions cannot be called in {}",
                                self.ctx.describe()
                            ))
                            .with_primary(e.span, "here"),
                        ));
                    }
                    let o = self.need_stmt(out, e.span, &id.name)?;
                    self.call_action(&slot, args, e.span, o)?;
                    Ok(None)
                }
                Resolved::Func(f) => self.builtin_fn(f, type_args, args, e.span, out),
                _ => Err(self.err(
                    Diagnostic::error(format!("`{}` is not a function or action", id.name))
                        .with_primary(callee.span, "cannot be called"),
                )),
            },
            _ => Err(self.err(
                Diagnostic::error("this expression cannot be called")
                    .with_primary(callee.span, "not callable"),
            )),
        }
    }

    /// `base.member(args)`: by what `base` is.
    fn method_call(
        &mut self,
        base: &'a ast::Expr,
        member: &'a ast::Ident,
        type_args: &'a [ast::Type],
        args: &'a [ast::Argument],
        span: Span,
        out: Option<&mut ir::Block>,
    ) -> Res<Option<V>> {
        match self.resolve(base)? {
            Resolved::Obj(Binding::Packet { out: false }) => {
                self.packet_in_call(member, type_args, args, span, out)
            }
            Resolved::Obj(Binding::Packet { out: true }) => self.emit(member, args, span, out),
            Resolved::Obj(Binding::Extern(x)) => {
                self.extern_method(&x, base, member, type_args, args, span, out)
            }
            Resolved::Obj(Binding::Table(t)) => {
                if member.name != "apply" {
                    return Err(self.no_method("table", member, "apply"));
                }
                if self.ctx != Ctx::Control {
                    return Err(self.err(
                        Diagnostic::error(format!(
                            "tables cannot be applied in {}",
                            self.ctx.describe()
                        ))
                        .with_primary(span, "here")
                        .with_help("apply tables in the apply block of a control"),
                    ));
                }
                let o = self.need_stmt(out, span, "apply")?;
                o.push(ir::Stmt::ApplyTable {
                    table: t.id,
                    branches: ir::TableBranches::None,
                });
                Ok(None)
            }
            Resolved::Obj(Binding::Block(b)) => self.block_apply(&b, member, args, span, out),
            Resolved::V(V::Loc(loc)) => self.loc_method(&loc, member, args, span, out),
            Resolved::Type(t) => Err(self.err(
                Diagnostic::error(format!("type `{t}` has no method `{}`", member.name))
                    .with_primary(member.span, "unknown method"),
            )),
            _ => Err(self.err(
                Diagnostic::error(format!("no method `{}` here", member.name))
                    .with_primary(member.span, "unknown method"),
            )),
        }
    }

    /// `pkt.emit(h)` in a deparser: every header of `h`, in order.
    fn emit(
        &mut self,
        member: &'a ast::Ident,
        args: &'a [ast::Argument],
        span: Span,
        out: Option<&mut ir::Block>,
    ) -> Res<Option<V>> {
        if member.name != "emit" {
            return Err(self.no_method("packet_out", member, "emit"));
        }
        if self.ctx != Ctx::Deparser {
            return Err(self.err(
                Diagnostic::error(format!("`emit` is not allowed in {}", self.ctx.describe()))
                    .with_primary(span, "here")
                    .with_help("headers are emitted in the deparser"),
            ));
        }
        let [a] = args else {
            return Err(self.arg_count("emit", 1, args.len(), span));
        };
        if let Some(cond) = self.deparser_conds.last() {
            return Err(self.err(
                Diagnostic::error("Conditional emit not supported")
                    .with_primary(span, "under an `if`")
                    .with_secondary(cond.span, "the condition")
                    .with_note("bf-p4c (`ExtractDeparser::postorder`) refuses a `packet_out.emit` under an `if`: the deparser emits every header listed, each only when it is valid")
                    .with_help("emit unconditionally: an invalid header is not emitted (set its validity in the control instead)"),
            ));
        }
        let v = self.expr(&a.value, None)?;
        let V::Loc(loc) = v else {
            return Err(self.err(
                Diagnostic::error("`emit` takes a header, a header stack or a struct of headers")
                    .with_primary(a.span, "not a header"),
            ));
        };
        let mut hs = Vec::new();
        loc.headers(&mut hs);
        let o = self.need_stmt(out, span, "emit")?;
        o.extend(hs.into_iter().map(ir::Stmt::Emit));
        Ok(None)
    }

    /// `c.apply(args)` of a control instance (inlined) in a control or deparser.
    fn block_apply(
        &mut self,
        b: &Rc<BlockInst<'a>>,
        member: &'a ast::Ident,
        args: &'a [ast::Argument],
        span: Span,
        out: Option<&mut ir::Block>,
    ) -> Res<Option<V>> {
        if member.name != "apply" {
            return Err(self.no_method("control", member, "apply"));
        }
        match &b.decl.kind {
            DeclKind::Control(_) if self.ctx == Ctx::Control || self.ctx == Ctx::Deparser => {
                let o = self.need_stmt(out, span, "apply")?;
                let mut body = Vec::new();
                self.inline_control(b, args, span, &mut body)?;
                o.extend(body);
                Ok(None)
            }
            DeclKind::Parser(_) => Err(self.err(
                Diagnostic::error("a sub-parser can only be applied in a parser state")
                    .with_primary(span, "here"),
            )),
            _ => Err(self.err(
                Diagnostic::error(format!(
                    "`{}` cannot be applied in {}",
                    b.name,
                    self.ctx.describe()
                ))
                .with_primary(span, "here"),
            )),
        }
    }

    pub fn need_stmt<'o>(
        &mut self,
        out: Option<&'o mut ir::Block>,
        span: Span,
        what: &str,
    ) -> Res<&'o mut ir::Block> {
        match out {
            Some(o) => Ok(o),
            None => Err(self.err(
                Diagnostic::error(format!("`{what}` does not return a value"))
                    .with_primary(span, "used as a value")
                    .with_help("call it as a statement"),
            )),
        }
    }

    pub fn no_method(&mut self, what: &str, m: &ast::Ident, have: &str) -> crate::lower::Reported {
        self.err(
            Diagnostic::error(format!("{what} has no method `{}`", m.name))
                .with_primary(m.span, "unknown method")
                .with_help(format!("available: {have}")),
        )
    }

    pub fn arg_count(
        &mut self,
        what: &str,
        want: usize,
        got: usize,
        span: Span,
    ) -> crate::lower::Reported {
        self.err(
            Diagnostic::error(format!("`{what}` takes {want} argument(s), {got} given"))
                .with_primary(span, "wrong number of arguments"),
        )
    }

    pub(super) fn loc_method(
        &mut self,
        loc: &Rc<Loc>,
        member: &'a ast::Ident,
        args: &'a [ast::Argument],
        span: Span,
        out: Option<&mut ir::Block>,
    ) -> Res<Option<V>> {
        if let "minSizeInBits" | "minSizeInBytes" | "maxSizeInBits" | "maxSizeInBytes" =
            member.name.as_str()
        {
            let max = member.name.starts_with("max");
            let bits = crate::lower::unions::size_in_bits(&loc.ty(), max);
            let v = if member.name.ends_with("Bytes") {
                bits.div_ceil(8)
            } else {
                bits
            };
            return Ok(Some(V::Int(i128::from(v))));
        }
        match &**loc {
            Loc::Header { id, .. } => match member.name.as_str() {
                "isValid" => Ok(Some(V::Scalar(ir::Expr::Valid(*id), Ty::Bool))),
                "setValid" | "setInvalid" => {
                    if self.ctx == Ctx::RegAction {
                        return Err(self.err(
                            Diagnostic::error("headers cannot be changed in a RegisterAction")
                                .with_primary(span, "here"),
                        ));
                    }
                    let valid = member.name == "setValid";
                    if valid {
                        self.warn_varbit_set_valid(&loc.ty(), span);
                    }
                    let block = self.need_stmt(out, span, &member.name)?;
                    block.push(ir::Stmt::SetValid { header: *id, valid });
                    self.invalidate_union_peers(*id, block);
                    Ok(None)
                }
                _ => Err(self.no_method("a header", member, "isValid, setValid, setInvalid")),
            },
            Loc::Stack { id, elems, .. } => match member.name.as_str() {
                "push_front" | "pop_front" => {
                    let Some(id) = id else {
                        return Err(
                            self.err(crate::lower::unions::union_stack_op(span, &member.name))
                        );
                    };
                    self.stack_shift(*id, elems.len(), member, args, span, out)
                }
                _ => Err(self.no_method("a header stack", member, "push_front, pop_front")),
            },
            Loc::Struct { ty, fields } if ty.union && member.name == "isValid" => Ok(Some(
                V::Scalar(crate::lower::unions::union_is_valid(fields), Ty::Bool),
            )),
            Loc::Struct { .. } if member.name == "isValid" => Err(self.err(
                Diagnostic::error("`isValid` on a struct")
                    .with_primary(span, "structs have no validity")
                    .with_help("call `isValid()` on a header"),
            )),
            _ => Err(self.err(
                Diagnostic::error(format!("`{}` has no method `{}`", loc.ty(), member.name))
                    .with_primary(member.span, "unknown method"),
            )),
        }
    }

    /// `stack.push_front(n)` / `stack.pop_front(n)` on a stack of `len` elements.
    fn stack_shift(
        &mut self,
        id: ir::StackId,
        len: usize,
        member: &'a ast::Ident,
        args: &'a [ast::Argument],
        span: Span,
        out: Option<&mut ir::Block>,
    ) -> Res<Option<V>> {
        let [a] = args else {
            return Err(self.arg_count(&member.name, 1, args.len(), span));
        };
        let n = self.const_int(&a.value)?;
        if n < 0 {
            return Err(self.err(
                Diagnostic::error(format!("cannot shift a stack by {n}"))
                    .with_primary(a.span, "negative"),
            ));
        }
        // Shifting by the size or more leaves every element invalid (P4_16 "Header stacks").
        let count = n.min(len as i128) as u16;
        let push = member.name == "push_front";
        self.need_stmt(out, span, &member.name)?
            .push(ir::Stmt::StackShift {
                stack: id,
                count,
                push,
            });
        Ok(None)
    }
}
