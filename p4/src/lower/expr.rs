//! Expressions: name resolution, typing (with [`crate::check::rules`]) and lowering to
//! [`ir::Expr`], plus constant folding for the places that need a value at compile time
//! (select keysets, table entries, extern constructor arguments, slice bounds).

use std::rc::Rc;

use pipeline::ir::{self, BinOp as IrOp, UnOp as IrUn};

use super::phv::Loc;
use super::{Binding, Lowerer, Res, V};
use crate::ast::{self, BinOp, DeclKind, ExprKind, UnOp};
use crate::check::rules::{self, OpClass};
use crate::check::suggest;
use crate::check::types::{Ty, ERROR_WIDTH};
use crate::diag::Diagnostic;
use crate::source::Span;

/// What an expression names.
#[derive(Clone)]
pub(crate) enum Resolved<'a> {
    V(V),
    Obj(Binding<'a>),
    Type(Ty),
    /// A top-level function or extern function.
    Func(&'a ast::Ident),
}

impl V {
    /// The type of a value, when it has one (`int` constants are `int`).
    pub fn ty(&self) -> Ty {
        match self {
            V::Scalar(_, t) => t.clone(),
            V::Int(_) => Ty::InfInt,
            V::Loc(l) => l.ty(),
            V::List(vs) => Ty::Tuple(vs.iter().map(|(v, _)| v.ty()).collect()),
            V::Str => Ty::String,
        }
    }
}

/// The dotted path of a name/member chain (`hdr.ipv4.ttl`), for key names and messages.
pub(crate) fn path_of(e: &ast::Expr) -> Option<String> {
    match &e.kind {
        ExprKind::Name(id) => Some(id.name.clone()),
        ExprKind::Member { base, member } => Some(format!("{}.{}", path_of(base)?, member.name)),
        ExprKind::Index { base, index } => match &index.kind {
            ExprKind::Int(l) => Some(format!("{}[{}]", path_of(base)?, l.value)),
            _ => None,
        },
        ExprKind::Slice { base, hi, lo } => match (&hi.kind, &lo.kind) {
            (ExprKind::Int(h), ExprKind::Int(l)) => {
                Some(format!("{}[{}:{}]", path_of(base)?, h.value, l.value))
            }
            _ => None,
        },
        _ => None,
    }
}

fn ir_binop(op: BinOp) -> IrOp {
    match op {
        BinOp::Mul => IrOp::Mul,
        BinOp::Div => IrOp::Div,
        BinOp::Mod => IrOp::Mod,
        BinOp::Add => IrOp::Add,
        BinOp::Sub => IrOp::Sub,
        BinOp::AddSat => IrOp::SatAdd,
        BinOp::SubSat => IrOp::SatSub,
        BinOp::Shl => IrOp::Shl,
        BinOp::Shr => IrOp::Shr,
        BinOp::Lt => IrOp::Lt,
        BinOp::Gt => IrOp::Gt,
        BinOp::Le => IrOp::Le,
        BinOp::Ge => IrOp::Ge,
        BinOp::Eq => IrOp::Eq,
        BinOp::Ne => IrOp::Ne,
        BinOp::BitAnd => IrOp::And,
        BinOp::BitXor => IrOp::Xor,
        BinOp::BitOr => IrOp::Or,
        BinOp::And => IrOp::LAnd,
        BinOp::Or => IrOp::LOr,
        // Concatenation has its own IR node; never mapped here.
        BinOp::Concat => IrOp::Or,
    }
}

/// Evaluates `int` arithmetic at compile time.
fn fold_int(op: BinOp, a: i128, b: i128) -> Option<V> {
    let bool_v = |c: bool| V::Scalar(ir::Expr::constant(u128::from(c), 1), Ty::Bool);
    Some(match op {
        BinOp::Add => V::Int(a.checked_add(b)?),
        BinOp::Sub => V::Int(a.checked_sub(b)?),
        BinOp::Mul => V::Int(a.checked_mul(b)?),
        BinOp::Div => V::Int(a.checked_div(b)?),
        BinOp::Mod => V::Int(a.checked_rem(b)?),
        // `checked_shl` only checks the amount: a bit shifted into or past the sign is lost.
        BinOp::Shl if a == 0 && b >= 0 => V::Int(0),
        BinOp::Shl => {
            let r = a.checked_shl(u32::try_from(b).ok()?)?;
            V::Int(if r >> b == a { r } else { return None })
        }
        BinOp::Shr if b >= 128 => V::Int(if a < 0 { -1 } else { 0 }),
        BinOp::Shr => V::Int(a.checked_shr(u32::try_from(b).ok()?)?),
        BinOp::BitAnd => V::Int(a & b),
        BinOp::BitOr => V::Int(a | b),
        BinOp::BitXor => V::Int(a ^ b),
        BinOp::Lt => bool_v(a < b),
        BinOp::Gt => bool_v(a > b),
        BinOp::Le => bool_v(a <= b),
        BinOp::Ge => bool_v(a >= b),
        BinOp::Eq => bool_v(a == b),
        BinOp::Ne => bool_v(a != b),
        _ => return None,
    })
}

/// `{ ... }` or `{ f = ... }`: a value whose type comes from where it is used.
fn is_initializer(e: &ast::Expr) -> bool {
    matches!(e.kind, ExprKind::StructInit(_) | ExprKind::List(_))
}

/// `x |+| y` (`add`) or `x |-| y` on `width`-bit operands, clamped to the type's range.
fn saturate(add: bool, x: u128, y: u128, width: u16, signed: bool) -> u128 {
    use rules::{mask, sign_extend};
    let w = u32::from(width.clamp(1, 128));
    if signed {
        let (sx, sy) = (sign_extend(x, width), sign_extend(y, width));
        let max = if w == 128 {
            i128::MAX
        } else {
            (1i128 << (w - 1)) - 1
        };
        let min = -max - 1;
        let r = if add {
            sx.checked_add(sy)
        } else {
            sx.checked_sub(sy)
        };
        let r = r.unwrap_or(if (sy < 0) == add { min } else { max });
        return mask(r.clamp(min, max) as u128, width);
    }
    let max = mask(u128::MAX, width);
    if add {
        x.checked_add(y).map_or(max, |r| r.min(max))
    } else {
        x.saturating_sub(y)
    }
}

fn cval(e: &ir::Expr) -> Option<u128> {
    match e {
        ir::Expr::Const { value, .. } => Some(*value),
        _ => None,
    }
}

/// Folds an expression whose operands are constants, all the way down.
pub(crate) fn fold(e: ir::Expr) -> ir::Expr {
    fold_with(e, &fold)
}

/// Folds the top of an expression whose operands were built (and so folded) by the lowering:
/// only the node and its direct operands are looked at, so building an n-term chain stays
/// linear (folding the whole subtree at every level made it quadratic).
pub(crate) fn fold_node(e: ir::Expr) -> ir::Expr {
    fold_with(e, &|child| fold_with(child, &|x| x))
}

/// Folds the top node of `e` after `sub` has been applied to its operands.
fn fold_with(e: ir::Expr, sub: &dyn Fn(ir::Expr) -> ir::Expr) -> ir::Expr {
    use rules::{mask, sign_extend};
    let fold = sub;
    match e {
        ir::Expr::Binary {
            op,
            a,
            b,
            width,
            signed,
        } => {
            let a = fold(*a);
            let b = fold(*b);
            let (Some(x), Some(y)) = (cval(&a), cval(&b)) else {
                return ir::Expr::Binary {
                    op,
                    a: Box::new(a),
                    b: Box::new(b),
                    width,
                    signed,
                };
            };
            let aw = a.width();
            let (sx, sy) = (sign_extend(x, aw), sign_extend(y, b.width()));
            let v: Option<u128> = match op {
                IrOp::Add => Some(x.wrapping_add(y)),
                IrOp::Sub => Some(x.wrapping_sub(y)),
                IrOp::Mul => Some(x.wrapping_mul(y)),
                IrOp::And => Some(x & y),
                IrOp::Or => Some(x | y),
                IrOp::Xor => Some(x ^ y),
                IrOp::Shl => Some(if y >= 128 { 0 } else { x << y }),
                IrOp::Shr if !signed => Some(if y >= 128 { 0 } else { x >> y }),
                IrOp::Eq => Some(u128::from(x == y)),
                IrOp::Ne => Some(u128::from(x != y)),
                IrOp::Lt => Some(u128::from(if signed { sx < sy } else { x < y })),
                IrOp::Le => Some(u128::from(if signed { sx <= sy } else { x <= y })),
                IrOp::Gt => Some(u128::from(if signed { sx > sy } else { x > y })),
                IrOp::Ge => Some(u128::from(if signed { sx >= sy } else { x >= y })),
                IrOp::LAnd => Some(u128::from(x != 0 && y != 0)),
                IrOp::LOr => Some(u128::from(x != 0 || y != 0)),
                IrOp::Min if !signed => Some(x.min(y)),
                IrOp::Max if !signed => Some(x.max(y)),
                // Signed `/` and `%` are refused before they get here (P4_16 defines neither).
                IrOp::Div if !signed && y != 0 => Some(x / y),
                IrOp::Mod if !signed && y != 0 => Some(x % y),
                IrOp::SatAdd | IrOp::SatSub => {
                    Some(saturate(op == IrOp::SatAdd, x, y, width, signed))
                }
                _ => None,
            };
            match v {
                Some(v) => ir::Expr::constant(mask(v, width), width),
                None => ir::Expr::Binary {
                    op,
                    a: Box::new(a),
                    b: Box::new(b),
                    width,
                    signed,
                },
            }
        }
        ir::Expr::Ternary {
            cond,
            then,
            els,
            width,
        } => {
            let cond = fold(*cond);
            match cval(&cond) {
                Some(c) => fold(if c != 0 { *then } else { *els }),
                None => ir::Expr::Ternary {
                    cond: Box::new(cond),
                    then: Box::new(fold(*then)),
                    els: Box::new(fold(*els)),
                    width,
                },
            }
        }
        ir::Expr::Unary { op, arg, width } => {
            let arg = fold(*arg);
            match cval(&arg) {
                Some(x) => {
                    let v = match op {
                        IrUn::Not => !x,
                        IrUn::Neg => x.wrapping_neg(),
                        IrUn::LNot => u128::from(x == 0),
                    };
                    ir::Expr::constant(mask(v, width), width)
                }
                None => ir::Expr::Unary {
                    op,
                    arg: Box::new(arg),
                    width,
                },
            }
        }
        ir::Expr::Cast {
            arg,
            width,
            sign_extend: se,
        } => {
            let arg = fold(*arg);
            match cval(&arg) {
                Some(x) => {
                    let v = if se {
                        sign_extend(x, arg.width()) as u128
                    } else {
                        x
                    };
                    ir::Expr::constant(mask(v, width), width)
                }
                None => ir::Expr::Cast {
                    arg: Box::new(arg),
                    width,
                    sign_extend: se,
                },
            }
        }
        ir::Expr::Slice { arg, hi, lo } => {
            let arg = fold(*arg);
            match cval(&arg) {
                Some(x) => ir::Expr::constant(mask(x >> lo, hi - lo + 1), hi - lo + 1),
                None => ir::Expr::Slice {
                    arg: Box::new(arg),
                    hi,
                    lo,
                },
            }
        }
        ir::Expr::Concat { hi, lo, width } => {
            let hi = fold(*hi);
            let lo = fold(*lo);
            match (cval(&hi), cval(&lo)) {
                (Some(h), Some(l)) => {
                    let lw = lo.width();
                    let v = if lw >= 128 { l } else { (h << lw) | l };
                    ir::Expr::constant(mask(v, width), width)
                }
                _ => ir::Expr::Concat {
                    hi: Box::new(hi),
                    lo: Box::new(lo),
                    width,
                },
            }
        }
        other => other,
    }
}

impl<'a> Lowerer<'a> {
    /// What `e` names: storage, a value, an object (extern, table, action, block), a type.
    pub fn resolve(&mut self, e: &'a ast::Expr) -> Res<Resolved<'a>> {
        match &e.kind {
            ExprKind::Name(id) => self.lookup_name(id),
            ExprKind::Member { base, member } => {
                if let Some(r) = self.lookahead_member(e) {
                    return r;
                }
                if let ExprKind::Call { callee, .. } = &base.kind {
                    if matches!(&callee.kind, ExprKind::Member { member: m, .. } if m.name == "apply")
                    {
                        return Err(self.err(
                            crate::check::unsupported(
                                e.span,
                                &format!("`apply().{}` outside an `if` or `switch` condition", member.name),
                                "table results stored in values",
                            )
                            .with_help("write `if (t.apply().hit) { ... }` or `switch (t.apply().action_run) { ... }`"),
                        ));
                    }
                }
                if let ExprKind::Member {
                    base: stack,
                    member: last,
                } = &base.kind
                {
                    if last.name == "last" {
                        if let Resolved::V(V::Loc(l)) = self.resolve(stack)? {
                            if let Loc::Stack { id: Some(_), .. } = &*l {
                                self.parser_only(&last.name, base.span)?;
                                return self.stack_last_field(&l, member, e.span);
                            }
                        }
                    }
                }
                let b = self.resolve(base)?;
                self.member(b, base, member, e.span)
            }
            ExprKind::Index { base, index } => {
                let b = self.resolve(base)?;
                if let Some(v) = self.tuple_element(&b, index)? {
                    return Ok(Resolved::V(v));
                }
                let Resolved::V(V::Loc(loc)) = &b else {
                    return Err(self.err(
                        Diagnostic::error("indexing something that is not a header stack")
                            .with_primary(base.span, "not a stack")
                            .with_help(
                                "only header stacks can be indexed; use `x[hi:lo]` to slice bits",
                            ),
                    ));
                };
                let Loc::Stack { elems, .. } = &**loc else {
                    return Err(self.err(
                        Diagnostic::error(format!("`{}` is not a header stack", loc.ty()))
                            .with_primary(base.span, "cannot be indexed")
                            .with_help("use `x[hi:lo]` to slice bits"),
                    ));
                };
                let n = elems.len();
                let i = self.const_int(index)?;
                match usize::try_from(i).ok().and_then(|i| elems.get(i)) {
                    Some(el) => Ok(Resolved::V(V::Loc(el.clone()))),
                    None => Err(self.err(
                        Diagnostic::error(format!("index {i} out of bounds for a stack of {n}"))
                            .with_primary(index.span, "out of bounds")
                            .with_help(format!("valid indices are 0..={}", n.saturating_sub(1))),
                    )),
                }
            }
            // `this` inside a MinMaxAction's `apply`: the action's min/max unit.
            ExprKind::This => match self.lookup_scoped("this") {
                Some(b @ Binding::Extern(_)) => Ok(Resolved::Obj(b)),
                _ => Ok(Resolved::V(self.expr(e, None)?)),
            },
            _ => Ok(Resolved::V(self.expr(e, None)?)),
        }
    }

    pub fn lookup_name(&mut self, id: &'a ast::Ident) -> Res<Resolved<'a>> {
        if let Some(b) = self.lookup_scoped(&id.name) {
            return Ok(match b {
                Binding::Poison => return Err(super::Reported),
                Binding::Val(v) | Binding::In(v) => Resolved::V(v),
                other => Resolved::Obj(other),
            });
        }
        let Some(decl) = self.env.lookup(&id.name) else {
            return Err(self.unknown_name(id, "value"));
        };
        match &decl.kind {
            DeclKind::Const(c) => Ok(Resolved::V(self.top_const(&id.name, c, id.span)?)),
            DeclKind::Action(a) => {
                let slot = self
                    .top_actions
                    .entry(id.name.clone())
                    .or_insert_with(|| {
                        let name = crate::check::annotations::name_annotation(&decl.annotations)
                            .map(|n| n.trim_start_matches('.').to_string())
                            .unwrap_or_else(|| a.name.name.clone());
                        Rc::new(super::ActionSlot {
                            decl: a,
                            name,
                            id: std::cell::Cell::new(None),
                            failed: std::cell::Cell::new(false),
                            scope_depth: 0,
                        })
                    })
                    .clone();
                Ok(Resolved::Obj(Binding::Action(slot)))
            }
            DeclKind::Typedef(_)
            | DeclKind::Header(_)
            | DeclKind::Struct(_)
            | DeclKind::HeaderUnion(_)
            | DeclKind::Enum(_)
            | DeclKind::Extern(_) => {
                let t = self.resolve_type(&ast::Type {
                    kind: ast::TypeKind::Named(id.clone()),
                    span: id.span,
                })?;
                Ok(Resolved::Type(t))
            }
            DeclKind::Parser(_) | DeclKind::Control(_) => {
                Ok(Resolved::Obj(Binding::Block(Rc::new(super::BlockInst {
                    decl,
                    name: id.name.clone(),
                    span: id.span,
                    ctor: Vec::new(),
                    types: Default::default(),
                }))))
            }
            DeclKind::ExternFunction(_) | DeclKind::Function(_) => Ok(Resolved::Func(id)),
            DeclKind::Instantiation(i) => {
                // A top-level parser or control instance (applied as a sub-block).
                let block = match &i.ty.kind {
                    ast::TypeKind::Named(t) => self
                        .env
                        .lookup(&t.name)
                        .filter(|d| matches!(d.kind, DeclKind::Parser(_) | DeclKind::Control(_))),
                    _ => None,
                };
                if let Some(bd) = block {
                    let ctor = self.ctor_values(bd, &i.args, i.ty.span)?;
                    let targs = match &i.ty.kind {
                        ast::TypeKind::Specialized { args, .. } => args.as_slice(),
                        _ => &[],
                    };
                    let types = self.block_types(bd, targs, i.ty.span)?;
                    return Ok(Resolved::Obj(Binding::Block(Rc::new(super::BlockInst {
                        decl: bd,
                        name: id.name.clone(),
                        span: id.span,
                        ctor,
                        types,
                    }))));
                }
                // Top-level extern instances are created where they are used: fine for
                // stateless ones, wrong for anything holding state.
                let tname = match &i.ty.kind {
                    ast::TypeKind::Named(t) | ast::TypeKind::Specialized { base: t, .. } => {
                        t.name.as_str()
                    }
                    _ => "",
                };
                if matches!(tname, "CRCPolynomial" | "Hash" | "Random") {
                    // Stateless: a fresh unit per use is the same function.
                    let ext = super::externs::instantiate(self, decl, i)?;
                    return Ok(Resolved::Obj(Binding::Extern(ext)));
                }
                self.top_level_instance(decl, i, tname)
                    .map(|ext| Resolved::Obj(Binding::Extern(ext)))
            }
            _ => Err(self.err(
                Diagnostic::error(format!("`{}` cannot be used as a value", id.name))
                    .with_primary(id.span, "used here")
                    .with_secondary(
                        decl.name().map(|n| n.span).unwrap_or(decl.span),
                        "declared here",
                    ),
            )),
        }
    }

    /// A top-level stateful extern instance (a `Register` declared outside every control): one
    /// object per pipeline, made where it is first used and shared by every other use, named
    /// without a control prefix. Tofino keeps state in one gress, so a second gress using it
    /// is refused.
    fn top_level_instance(
        &mut self,
        decl: &'a ast::Decl,
        i: &'a ast::Instantiation,
        tname: &str,
    ) -> Res<Rc<super::externs::ExternInst>> {
        let key = (decl.span.file, decl.span.lo);
        if let Some((ext, g)) = self.pipe.top_externs.get(&key).cloned() {
            if g != self.gress {
                return Err(self.err(
                    Diagnostic::error(format!(
                        "top-level `{tname}` `{}` is used in {g} and in {}: on Tofino its state lives in one gress",
                        i.name.name, self.gress
                    ))
                    .with_primary(i.name.span, "declared here"),
                ));
            }
            return Ok(ext);
        }
        let prefix = std::mem::take(&mut self.prefix);
        let made = super::externs::instantiate(self, decl, i);
        self.prefix = prefix;
        let ext = made?;
        self.pipe.top_externs.insert(key, (ext.clone(), self.gress));
        Ok(ext)
    }

    pub(crate) fn top_const(
        &mut self,
        name: &str,
        c: &'a ast::ConstDecl,
        use_span: Span,
    ) -> Res<V> {
        if let Some(v) = self.consts.get(name) {
            return Ok(v.clone());
        }
        if self.const_failed.contains(name) {
            // Already reported (when it was first evaluated).
            return Err(super::Reported);
        }
        if !self.const_busy.insert(name.to_string()) {
            return Err(self.err(
                Diagnostic::error(format!("constant `{name}` is defined in terms of itself"))
                    .with_primary(use_span, "cycle here")
                    .with_help("give one of the constants a literal value"),
            ));
        }
        let r = self.const_decl_value(c);
        self.const_busy.remove(name);
        if r.is_err() {
            self.const_failed.insert(name.to_string());
        }
        let v = r?;
        self.consts.insert(name.to_string(), v.clone());
        Ok(v)
    }

    /// The value of a `const` declaration (folded to a constant).
    pub fn const_decl_value(&mut self, c: &'a ast::ConstDecl) -> Res<V> {
        let ty = self.resolve_type(&c.ty)?;
        let v = self.expr(&c.value, Some(&ty))?;
        match (&ty, v) {
            (Ty::InfInt, V::Int(i)) => Ok(V::Int(i)),
            (Ty::Tuple(ts), V::List(items)) => self.const_tuple(c, ts, items),
            (_, v) => {
                let (e, t) = self.scalar_of_value(v, Some(&ty), c.value.span)?;
                let e = fold(e);
                if !matches!(e, ir::Expr::Const { .. }) {
                    return Err(self.err(
                        Diagnostic::error(format!(
                            "`{}` is not a compile-time constant",
                            c.name.name
                        ))
                        .with_primary(c.value.span, "not constant")
                        .with_help(
                            "constants are built from literals, other constants and enum members",
                        ),
                    ));
                }
                Ok(V::Scalar(e, t))
            }
        }
    }

    fn member(
        &mut self,
        b: Resolved<'a>,
        base: &'a ast::Expr,
        member: &'a ast::Ident,
        span: Span,
    ) -> Res<Resolved<'a>> {
        match b {
            Resolved::V(V::Loc(loc)) => match &*loc {
                Loc::Header { ty, .. } | Loc::Struct { ty, .. } => match loc.field(&member.name) {
                    Some(f) => Ok(Resolved::V(V::Loc(f))),
                    // Its declaration was refused (and reported) as too wide.
                    None if self.env.is_too_wide(&ty.name) => Err(super::Reported),
                    None => {
                        let kind = if matches!(&*loc, Loc::Header { .. }) {
                            "header"
                        } else {
                            "struct"
                        };
                        let mut d = Diagnostic::error(format!(
                            "no field `{}` in {kind} `{}`",
                            member.name, ty.name
                        ))
                        .with_primary(member.span, "unknown field");
                        d = match suggest::did_you_mean(
                            &member.name,
                            ty.fields.iter().map(|(n, _)| n.as_str()),
                        ) {
                            Some(h) => d.with_help(h),
                            None => d.with_help(format!(
                                "fields of `{}` are: {}",
                                ty.name,
                                ty.field_list()
                            )),
                        };
                        Err(self.err(d))
                    }
                },
                Loc::Stack {
                    elems,
                    next_index,
                    id,
                    ..
                } => match member.name.as_str() {
                    "size" => Ok(Resolved::V(V::Int(elems.len() as i128))),
                    "next" | "last" if id.is_none() => {
                        Err(self.err(super::unions::union_stack_op(span, &member.name)))
                    }
                    "lastIndex" => {
                        self.parser_only(&member.name, span)?;
                        let ni = ir::Expr::Field(*next_index);
                        let w = next_index.width;
                        let sub = ir::Expr::Binary {
                            op: IrOp::Sub,
                            a: Box::new(ni),
                            b: Box::new(ir::Expr::constant(1, w)),
                            width: w,
                            signed: false,
                        };
                        let e = ir::Expr::Cast {
                            arg: Box::new(sub),
                            width: 32,
                            sign_extend: false,
                        };
                        Ok(Resolved::V(V::Scalar(e, Ty::Bit(32))))
                    }
                    "next" | "last" => Err(self.err(
                        crate::check::unsupported(
                            span,
                            &format!("`.{}` of a header stack here", member.name),
                            "run-time stack indexing outside `extract(stack.next)`",
                        )
                        .with_help("index the stack with a constant, e.g. `hdr.vlan[0]`"),
                    )),
                    _ => Err(self.err(
                        Diagnostic::error(format!("no member `{}` on a header stack", member.name))
                            .with_primary(member.span, "unknown member")
                            .with_help(
                                "stacks have `.next` (in extract), `.size`, and constant indices",
                            ),
                    )),
                },
                Loc::RegWord(..) | Loc::RegOut(..) | Loc::Field { .. } | Loc::Varbit { .. } => {
                    Err(self.err(
                        Diagnostic::error(format!("`{}` has no fields", loc.ty()))
                            .with_primary(member.span, "no such member")
                            .with_secondary(base.span, format!("this is a `{}`", loc.ty())),
                    ))
                }
            },
            Resolved::Type(Ty::Enum(en)) => match en.member(&member.name) {
                Some(v) => Ok(Resolved::V(V::Scalar(
                    ir::Expr::constant(v, en.width),
                    Ty::Enum(en.clone()),
                ))),
                None => {
                    let mut d = Diagnostic::error(format!(
                        "no member `{}` in enum `{}`",
                        member.name, en.name
                    ))
                    .with_primary(member.span, "unknown member");
                    let names: Vec<&str> = en.members.iter().map(|(n, _)| n.as_str()).collect();
                    d = match suggest::did_you_mean(&member.name, names.iter().copied()) {
                        Some(h) => d.with_help(h),
                        None => d.with_help(format!("members are: {}", names.join(", "))),
                    };
                    Err(self.err(d))
                }
            },
            Resolved::Type(t) => Err(self.err(
                Diagnostic::error(format!("type `{t}` has no member `{}`", member.name))
                    .with_primary(member.span, "unknown member"),
            )),
            Resolved::V(v) => Err(self.err(
                Diagnostic::error(format!("`{}` has no member `{}`", v.ty(), member.name))
                    .with_primary(member.span, "no such member")
                    .with_secondary(base.span, format!("this is a `{}`", v.ty())),
            )),
            Resolved::Obj(_) | Resolved::Func(_) => Err(self.err(
                Diagnostic::error(format!("`{}` must be called", member.name))
                    .with_primary(span, "a method, not a value")
                    .with_help(format!(
                        "write `{}()`",
                        path_of(base)
                            .map(|p| format!("{p}.{}", member.name))
                            .unwrap_or_else(|| member.name.clone())
                    )),
            )),
        }
    }

    /// `stack.last.field`: the field of the element just below `nextIndex`, as a chain of
    /// conditionals on the hidden counter (the element 0 when nothing was extracted yet).
    fn stack_last_field(
        &mut self,
        stack: &Rc<Loc>,
        field: &'a ast::Ident,
        span: Span,
    ) -> Res<Resolved<'a>> {
        let Loc::Stack {
            elems,
            next_index,
            elem,
            ..
        } = &**stack
        else {
            return Err(self.err(
                Diagnostic::error("`.last` needs a header stack").with_primary(span, "here"),
            ));
        };
        let mut fields = Vec::new();
        for el in elems {
            match el.field(&field.name) {
                Some(f) => fields.push(f),
                None => {
                    let mut d =
                        Diagnostic::error(format!("no field `{}` in header `{elem}`", field.name))
                            .with_primary(field.span, "unknown field");
                    if let Ty::Header(st) = elem {
                        d = d.with_help(format!(
                            "fields of `{}` are: {}",
                            st.name,
                            st.field_list()
                        ));
                    }
                    return Err(self.err(d));
                }
            }
        }
        let Some(Loc::Field { f: f0, ty }) = fields.first().map(|f| &**f) else {
            return Err(self.err(crate::check::unsupported(
                span,
                "`.last` of a non-scalar field",
                "aggregate `.last` reads",
            )));
        };
        let width = ty.scalar_width().unwrap_or(1);
        let mut e = ir::Expr::Field(*f0);
        for (i, f) in fields.iter().enumerate().skip(1) {
            let Loc::Field { f, .. } = &**f else { continue };
            let cond = ir::Expr::Binary {
                op: IrOp::Eq,
                a: Box::new(ir::Expr::Field(*next_index)),
                b: Box::new(ir::Expr::constant(i as u128 + 1, next_index.width)),
                width: 1,
                signed: false,
            };
            e = ir::Expr::Ternary {
                cond: Box::new(cond),
                then: Box::new(ir::Expr::Field(*f)),
                els: Box::new(e),
                width,
            };
        }
        Ok(Resolved::V(V::Scalar(e, ty.clone())))
    }

    /// Lowers an expression to a value. `want` is the type the context expects (it lets `int`
    /// literals adopt a width).
    pub fn expr(&mut self, e: &'a ast::Expr, want: Option<&Ty>) -> Res<V> {
        match &e.kind {
            ExprKind::Int(lit) => {
                // 2^127 and above: whole as an unsigned literal of a width (written, or the
                // `bit<W>` the context wants), as `128w0xffff…` and IPv6 masks are.
                let unsigned_width = match (lit.width, want) {
                    (Some(w), _) if !lit.signed => Some(w),
                    (None, Some(Ty::Bit(w))) => Some(u32::from(*w)),
                    _ => None,
                };
                if let (Err(_), Some(w)) = (i128::try_from(lit.value), unsigned_width) {
                    if (1..=crate::check::types::MAX_WIDTH).contains(&w) {
                        let ty = Ty::Bit(w as u16);
                        if w < 128 && lit.width.is_none() {
                            // An unsized literal too wide for the width the context wants: the
                            // error a smaller one gets (`fit_literal`), not a silent cut.
                            return Err(self.err(
                                Diagnostic::error(format!("{} does not fit in `{ty}`", lit.value))
                                    .with_primary(e.span, "too large")
                                    .with_help(format!("use a value below 2^{w}")),
                            ));
                        }
                        if w < 128 {
                            self.warn(
                                Diagnostic::warning(format!(
                                    "literal {} does not fit in `{ty}`: its low {w} bits are used",
                                    lit.value
                                ))
                                .with_primary(e.span, "too wide for its width")
                                .with_help(format!("use a wider prefix or a value below 2^{w}")),
                            );
                        }
                        let bits = rules::mask(lit.value, w as u16);
                        return Ok(V::Scalar(ir::Expr::constant(bits, w as u16), ty));
                    }
                }
                let v = i128::try_from(lit.value).map_err(|_| {
                    self.err(
                        Diagnostic::error("integer literal wider than 127 bits")
                            .with_primary(e.span, "too large")
                            .with_help("write it with its width, like `128w0xffff…`"),
                    )
                })?;
                match lit.width {
                    None => Ok(V::Int(v)),
                    Some(w) => {
                        if w == 0 || w > crate::check::types::MAX_WIDTH {
                            return Err(self.err(
                                Diagnostic::error(format!("literal width {w} is not supported"))
                                    .with_primary(e.span, "bad width")
                                    .with_help("widths from 1 to 128 bits are supported"),
                            ));
                        }
                        let ty = if lit.signed {
                            Ty::Int(w as u16)
                        } else {
                            Ty::Bit(w as u16)
                        };
                        let fits = if lit.signed {
                            rules::fit_literal(v, &ty).is_ok()
                        } else {
                            w >= 128 || (v as u128) < (1u128 << w)
                        };
                        if !fits {
                            // p4c warns and keeps the low bits; so does pisa, saying so.
                            self.warn(
                                Diagnostic::warning(format!(
                                    "literal {v} does not fit in `{ty}`: its low {w} bits are used"
                                ))
                                .with_primary(e.span, "too wide for its width prefix")
                                .with_help(format!("use a wider prefix or a value below 2^{w}")),
                            );
                        }
                        let bits = rules::mask(v as u128, w as u16);
                        Ok(V::Scalar(ir::Expr::constant(bits, w as u16), ty))
                    }
                }
            }
            ExprKind::Bool(b) => Ok(V::Scalar(ir::Expr::constant(u128::from(*b), 1), Ty::Bool)),
            ExprKind::String(_) => Ok(V::Str),
            ExprKind::ErrorMember(id) => match self.env.error_value(&id.name) {
                Some(v) => Ok(V::Scalar(
                    ir::Expr::constant(u128::from(v), ERROR_WIDTH),
                    Ty::Error,
                )),
                None => {
                    let mut d = Diagnostic::error(format!("no error `{}` declared", id.name))
                        .with_primary(id.span, "unknown error");
                    if let Some(h) =
                        suggest::did_you_mean(&id.name, self.env.errors.iter().map(String::as_str))
                    {
                        d = d.with_help(h);
                    } else {
                        d = d.with_help("declare it with `error { Name }`");
                    }
                    Err(self.err(d))
                }
            },
            ExprKind::Name(_) | ExprKind::Member { .. } | ExprKind::Index { .. } => {
                match self.resolve(e)? {
                    Resolved::V(v) => Ok(v),
                    Resolved::Type(t) => Err(self.err(
                        Diagnostic::error(format!("type `{t}` used as a value"))
                            .with_primary(e.span, "a type, not a value"),
                    )),
                    Resolved::Obj(_) | Resolved::Func(_) => Err(self.err(
                        Diagnostic::error(format!(
                            "`{}` is not a value",
                            path_of(e).unwrap_or_default()
                        ))
                        .with_primary(e.span, "an object, not a value")
                        .with_help("call one of its methods"),
                    )),
                }
            }
            ExprKind::Slice { base, hi, lo } => {
                let v = self.expr(base, None)?;
                if let V::Loc(loc) = &v {
                    if let Loc::Field { f, .. } = &**loc {
                        if f.width > ir::MAX_VALUE_WIDTH {
                            return self.wide_slice(*f, hi, lo, e.span);
                        }
                    }
                }
                let (be, bt) = self.scalar_of_value(v, None, base.span)?;
                let Some(w) = bt.scalar_width().filter(|_| bt.is_bits()) else {
                    return Err(self.err(
                        Diagnostic::error(format!("cannot slice a `{bt}`"))
                            .with_primary(base.span, "not a bit string")
                            .with_help("slices apply to `bit<W>` and `int<W>` values"),
                    ));
                };
                let h = self.const_int(hi)?;
                let l = self.const_int(lo)?;
                if let Some(what) = slice_problem(h, l, w, &bt) {
                    return Err(self.err(
                        Diagnostic::error(what)
                            .with_primary(e.span, "bad slice bounds")
                            .with_help(format!("use [hi:lo] with {} >= hi >= lo >= 0", w - 1)),
                    ));
                }
                let (h, l) = (h as u16, l as u16);
                Ok(V::Scalar(
                    fold_node(ir::Expr::Slice {
                        arg: Box::new(be),
                        hi: h,
                        lo: l,
                    }),
                    Ty::Bit(h - l + 1),
                ))
            }
            ExprKind::Unary { op, operand } => self.unary(e, *op, operand, want),
            ExprKind::Binary { op, lhs, rhs } => self.binary(e.span, *op, lhs, rhs, want),
            ExprKind::Ternary {
                cond,
                then_expr,
                else_expr,
            } => {
                let c = self.cond(cond)?;
                let a = self.expr(then_expr, want)?;
                let b = self.expr(else_expr, want)?;
                let (a, b, ty) =
                    self.unify(a, then_expr.span, b, else_expr.span, want, e.span, "`?:`")?;
                if !ty.is_scalar() {
                    return Err(self.err(
                        Diagnostic::error(format!("`?:` on `{ty}` values"))
                            .with_primary(e.span, "not a scalar")
                            .with_help("use an if statement"),
                    ));
                }
                let width = ty.scalar_width().unwrap_or(1);
                self.check_action_mux(&c, &a, &b, e.span);
                Ok(V::Scalar(
                    ir::Expr::Ternary {
                        cond: Box::new(c),
                        then: Box::new(a),
                        els: Box::new(b),
                        width,
                    },
                    ty,
                ))
            }
            ExprKind::Cast { ty, expr } => {
                let to = self.resolve_type(ty)?;
                // `(S){ f = .. }` / `(S){ a, b }`: the initializer builds an `S` (P4_16
                // "structure-valued expressions").
                if matches!(to, Ty::Struct(_) | Ty::Header(_))
                    && matches!(expr.kind, ExprKind::StructInit(_) | ExprKind::List(_))
                {
                    return self.expr(expr, Some(&to));
                }
                let v = self.expr(expr, None)?;
                self.cast(v, &to, expr.span, e.span)
            }
            ExprKind::Call { .. } => match self.call(e, None)? {
                Some(v) => Ok(v),
                None => Err(self.err(
                    Diagnostic::error("this call does not return a value")
                        .with_primary(e.span, "used as a value here"),
                )),
            },
            ExprKind::List(items) => {
                let want_items: Option<Vec<Ty>> = match want {
                    Some(Ty::Tuple(ts)) if ts.len() == items.len() => Some(ts.clone()),
                    Some(Ty::Struct(s)) | Some(Ty::Header(s)) if s.fields.len() == items.len() => {
                        Some(s.fields.iter().map(|(_, t)| t.clone()).collect())
                    }
                    _ => None,
                };
                let mut vs = Vec::new();
                for (i, it) in items.iter().enumerate() {
                    let w = want_items.as_ref().and_then(|ts| ts.get(i));
                    vs.push((self.expr(it, w)?, it.span));
                }
                Ok(V::List(vs))
            }
            ExprKind::StructInit(fields) => {
                let Some(Ty::Struct(s) | Ty::Header(s)) = want else {
                    return Err(self.err(
                        Diagnostic::error("cannot tell which struct this initializer builds")
                            .with_primary(e.span, "needs a struct type from its context"),
                    ));
                };
                let s = s.clone();
                let dots = fields.iter().any(|f| f.name.name == ast::DEFAULT_REST);
                let mut vs = Vec::new();
                for (fname, fty) in &s.fields {
                    let found = fields.iter().find(|f| f.name.name == *fname);
                    if found.is_none() && dots {
                        vs.push((self.default_value(fty, e.span)?, e.span));
                        continue;
                    }
                    let Some(ne) = found else {
                        return Err(self.err(
                            Diagnostic::error(format!(
                                "field `{fname}` of `{}` is not initialized",
                                s.name
                            ))
                            .with_primary(e.span, "missing field")
                            .with_help(format!(
                                "fields of `{}` are: {}",
                                s.name,
                                s.field_list()
                            )),
                        ));
                    };
                    vs.push((self.expr(&ne.value, Some(fty))?, ne.span));
                }
                if let Some(extra) = fields
                    .iter()
                    .find(|f| f.name.name != ast::DEFAULT_REST && s.field(&f.name.name).is_none())
                {
                    return Err(self.err(
                        Diagnostic::error(format!(
                            "`{}` has no field `{}`",
                            s.name, extra.name.name
                        ))
                        .with_primary(extra.name.span, "unknown field")
                        .with_help(format!(
                            "fields of `{}` are: {}",
                            s.name,
                            s.field_list()
                        )),
                    ));
                }
                Ok(V::List(vs))
            }
            ExprKind::InvalidHeader => Err(self.err(
                Diagnostic::error("`{#}` (the invalid header) is not a value here")
                    .with_primary(e.span, "the invalid header")
                    .with_note(
                        "`{#}` is assigned to, or compared with, a header or header union \
                         (P4_16 \"Invalid header expression\")",
                    )
                    .with_help("write `h.setInvalid();`, `h = {#};` or `h == {#}`"),
            )),
            ExprKind::This => Err(self.err(crate::check::unsupported(
                e.span,
                "`this`",
                "extern self-references",
            ))),
            ExprKind::DontCare => Err(self.err(
                Diagnostic::error("`_` is not a value here")
                    .with_primary(e.span, "don't-care")
                    .with_help("`_` is allowed in keysets and as an `out` argument"),
            )),
            ExprKind::Type(t) => Err(self.err(
                Diagnostic::error("a type is not a value")
                    .with_primary(t.span, "type used as a value"),
            )),
        }
    }

    /// A scalar rvalue of `e`.
    pub fn scalar(&mut self, e: &'a ast::Expr, want: Option<&Ty>) -> Res<(ir::Expr, Ty)> {
        let v = self.expr(e, want)?;
        self.scalar_of_value(v, want, e.span)
    }

    /// A boolean condition.
    pub fn cond(&mut self, e: &'a ast::Expr) -> Res<ir::Expr> {
        let v = self.expr(e, Some(&Ty::Bool))?;
        let t = v.ty();
        if t != Ty::Bool {
            return Err(self.err(
                Diagnostic::error(format!("condition has type `{t}`, not `bool`"))
                    .with_primary(e.span, "expected `bool`")
                    .with_help("compare explicitly, e.g. `x != 0` or `x == 1`"),
            ));
        }
        Ok(self.scalar_of_value(v, Some(&Ty::Bool), e.span)?.0)
    }

    /// Converts a value to a scalar rvalue of type `want` (when given).
    /// A field wider than 128 bits used as a value: refused with what can be done with it.
    pub fn wide_value(&mut self, width: u16, span: Span) -> super::Reported {
        self.err(
            Diagnostic::error(format!(
                "this {width}-bit field is wider than the 128 bits pisa computes on"
            ))
            .with_primary(span, "used as a value")
            .with_help("copy it whole into a field of the same width, slice at most 128 bits of it (`f[127:0]`), or extract and emit it"),
        )
    }

    /// `f[hi:lo]` of a field wider than 128 bits: the bits themselves, as a narrower field.
    fn wide_slice(
        &mut self,
        f: ir::FieldRef,
        hi: &'a ast::Expr,
        lo: &'a ast::Expr,
        span: Span,
    ) -> Res<V> {
        let (h, l) = (self.const_int(hi)?, self.const_int(lo)?);
        let w = i128::from(f.width);
        if !(0 <= l && l <= h && h < w && h - l < i128::from(ir::MAX_VALUE_WIDTH)) {
            return Err(self.err(
                Diagnostic::error(format!("slice [{h}:{l}] of a {w}-bit field"))
                    .with_primary(span, "bad slice bounds")
                    .with_help(format!(
                        "use [hi:lo] with {} >= hi >= lo >= 0 and at most 128 bits",
                        w - 1
                    )),
            ));
        }
        let piece = f.slice(h as u16, l as u16);
        Ok(V::Scalar(ir::Expr::Field(piece), Ty::Bit(piece.width)))
    }

    pub fn scalar_of_value(&mut self, v: V, want: Option<&Ty>, span: Span) -> Res<(ir::Expr, Ty)> {
        let (e, t) = match v {
            V::Scalar(e, t) => (e, t),
            V::Int(i) => {
                let Some(w) = want else {
                    return Err(self.err(
                        Diagnostic::error("the width of this integer cannot be inferred")
                            .with_primary(span, "an `int` constant with no width")
                            .with_help("give it a width (`8w5`) or cast it (`(bit<8>) 5`)"),
                    ));
                };
                if let Ty::Int(width) = w {
                    if rules::fit_literal(i, w).is_err()
                        && rules::fit_literal(i, &Ty::Bit(*width)).is_ok()
                    {
                        // As p4c: warned, and the low bits are used (`int<8> x = 200` is -56).
                        self.warn(
                            Diagnostic::warning(format!(
                                "{i} does not fit in `{w}`: its low {width} bits are used"
                            ))
                            .with_primary(
                                span,
                                format!(
                                    "becomes {}",
                                    rules::sign_extend(rules::mask(i as u128, *width), *width)
                                ),
                            )
                            .with_help(format!(
                                "write the value in the range of `{w}`, or cast explicitly"
                            )),
                        );
                        return Ok((
                            ir::Expr::constant(rules::mask(i as u128, *width), *width),
                            w.clone(),
                        ));
                    }
                }
                return match rules::fit_literal(i, w) {
                    Ok(bits) => {
                        let width = w.scalar_width().unwrap_or(1);
                        Ok((ir::Expr::constant(bits, width), w.clone()))
                    }
                    Err(msg) => Err(self.err(
                        Diagnostic::error(msg)
                            .with_primary(span, format!("expected `{w}`"))
                            .with_help(match w {
                                Ty::Bool => "use `true` or `false`".to_string(),
                                _ => format!("use a value that fits in `{w}`, or cast explicitly"),
                            }),
                    )),
                };
            }
            V::Loc(loc) => match &*loc {
                Loc::Field { f, .. } if f.width > ir::MAX_VALUE_WIDTH => {
                    return Err(self.wide_value(f.width, span))
                }
                Loc::Field { f, ty } => (ir::Expr::Field(*f), ty.clone()),
                Loc::RegWord(w, ty) => (ir::Expr::RegValue(*w), ty.clone()),
                Loc::RegOut(..) => {
                    return Err(self.err(
                        Diagnostic::error("the RegisterAction output cannot be read")
                            .with_primary(span, "`rv` is write-only")
                            .with_help("compute the value into `rv` from `value` and inputs"),
                    ))
                }
                _ => {
                    let t = loc.ty();
                    return Err(self.err(
                        Diagnostic::error(format!("expected a scalar value, found `{t}`"))
                            .with_primary(span, format!("this is a `{t}`"))
                            .with_help("use one of its fields"),
                    ));
                }
            },
            V::List(_) | V::Str => {
                let t = v.ty();
                return Err(self.err(
                    Diagnostic::error(format!("expected a scalar value, found `{t}`"))
                        .with_primary(span, "not a scalar"),
                ));
            }
        };
        if let Some(w) = want {
            if !rules::implicit_ok(&t, w) && *w != Ty::DontCare {
                let help = if rules::cast_allowed(&t, w) {
                    format!("cast it: `({w}) ...`")
                } else {
                    format!("a `{t}` cannot be converted to `{w}`")
                };
                return Err(self.err(
                    Diagnostic::error(format!("mismatched types: expected `{w}`, found `{t}`"))
                        .with_primary(span, format!("this is a `{t}`"))
                        .with_help(help),
                ));
            }
            if let (Ty::Enum(_), Ty::Bit(_) | Ty::Int(_)) = (&t, w) {
                return Ok((e, w.clone()));
            }
        }
        Ok((e, t))
    }

    /// Brings two operands to one type (`int` constants adopt the other side's type).
    #[allow(clippy::too_many_arguments)]
    fn unify(
        &mut self,
        a: V,
        sa: Span,
        b: V,
        sb: Span,
        want: Option<&Ty>,
        whole: Span,
        what: &str,
    ) -> Res<(ir::Expr, ir::Expr, Ty)> {
        let ta = a.ty();
        let tb = b.ty();
        let target = match (&ta, &tb) {
            (Ty::InfInt, Ty::InfInt) => want.cloned().filter(|t| t.is_bits()),
            (Ty::InfInt, t) | (t, Ty::InfInt) => Some(t.clone()),
            (Ty::Enum(e), t) | (t, Ty::Enum(e)) if e.serializable && t.is_bits() => Some(t.clone()),
            _ => Some(ta.clone()),
        };
        let Some(target) = target else {
            return Err(self.err(
                Diagnostic::error(format!("the width of {what} cannot be inferred"))
                    .with_primary(whole, "both operands are `int` constants")
                    .with_help("give one operand a width, e.g. `8w1`"),
            ));
        };
        if ta != target && tb != target && !matches!(ta, Ty::InfInt) {
            // Both typed and different: report below.
        }
        let mismatch = !(rules::implicit_ok(&ta, &target) || ta == Ty::InfInt)
            || !(rules::implicit_ok(&tb, &target) || tb == Ty::InfInt);
        if mismatch {
            return Err(self.err(
                Diagnostic::error(format!("{what} on different types `{ta}` and `{tb}`"))
                    .with_primary(whole, "types differ")
                    .with_secondary(sa, format!("`{ta}`"))
                    .with_secondary(sb, format!("`{tb}`"))
                    .with_help(format!("cast one side, e.g. `({ta}) ...`")),
            ));
        }
        let (ea, _) = self.scalar_of_value(a, Some(&target), sa)?;
        let (eb, _) = self.scalar_of_value(b, Some(&target), sb)?;
        Ok((ea, eb, target))
    }

    fn unary(
        &mut self,
        e: &'a ast::Expr,
        op: UnOp,
        operand: &'a ast::Expr,
        want: Option<&Ty>,
    ) -> Res<V> {
        let v = self.expr(operand, want)?;
        let t = v.ty();
        match (op, v) {
            (UnOp::Plus, v) if t.is_numeric() => Ok(v),
            (UnOp::Neg, V::Int(i)) => i.checked_neg().map(V::Int).ok_or_else(|| {
                self.err(
                    Diagnostic::error("constant overflows").with_primary(e.span, "cannot negate"),
                )
            }),
            (UnOp::BitNot, V::Int(i)) if want.is_some_and(Ty::is_bits) => {
                let w = want.cloned().unwrap_or(Ty::Bit(1));
                let (c, ty) = self.scalar_of_value(V::Int(i), Some(&w), operand.span)?;
                let width = ty.scalar_width().unwrap_or(1);
                Ok(V::Scalar(
                    fold_node(ir::Expr::Unary {
                        op: IrUn::Not,
                        arg: Box::new(c),
                        width,
                    }),
                    ty,
                ))
            }
            (UnOp::Not, v) if t == Ty::Bool => {
                let (x, _) = self.scalar_of_value(v, Some(&Ty::Bool), operand.span)?;
                Ok(V::Scalar(
                    fold_node(ir::Expr::Unary {
                        op: IrUn::LNot,
                        arg: Box::new(x),
                        width: 1,
                    }),
                    Ty::Bool,
                ))
            }
            (UnOp::BitNot | UnOp::Neg, v) if t.is_bits() => {
                let (x, ty) = self.scalar_of_value(v, None, operand.span)?;
                let width = ty.scalar_width().unwrap_or(1);
                let op = if op == UnOp::BitNot {
                    IrUn::Not
                } else {
                    IrUn::Neg
                };
                Ok(V::Scalar(
                    fold_node(ir::Expr::Unary {
                        op,
                        arg: Box::new(x),
                        width,
                    }),
                    ty,
                ))
            }
            _ => {
                let help = match op {
                    UnOp::Not => "`!` negates a `bool`; for bits use `~`",
                    UnOp::BitNot => {
                        "`~` complements a bit string of known width; for `bool` use `!`"
                    }
                    _ => "arithmetic needs `bit<W>` or `int<W>` operands",
                };
                Err(self.err(
                    Diagnostic::error(format!("`{}` cannot be applied to `{t}`", op.as_str()))
                        .with_primary(e.span, format!("operand is `{t}`"))
                        .with_help(help),
                ))
            }
        }
    }

    /// `h == {#}` (`ne`: `h != {#}`): whether header `h` is invalid, or no member of union
    /// `h` is valid (P4_16: two headers are equal when both are invalid, or both valid with
    /// equal fields).
    fn invalid_eq(&mut self, h: &'a ast::Expr, ne: bool, span: Span) -> Res<V> {
        let v = self.expr(h, None)?;
        let ty = v.ty();
        let loc = match v {
            V::Loc(l)
                if matches!(&ty, Ty::Header(_)) || matches!(&ty, Ty::Struct(s) if s.union) =>
            {
                l
            }
            _ => {
                return Err(self.err(
                    Diagnostic::error(format!("`{{#}}` cannot be compared with a `{ty}`"))
                        .with_primary(span, "compared here")
                        .with_help("`{#}` compares with a header or a header union"),
                ))
            }
        };
        let valid = super::unions::union_is_valid(&[loc]);
        let e = if ne {
            valid
        } else {
            ir::Expr::Unary {
                op: IrUn::LNot,
                arg: Box::new(valid),
                width: 1,
            }
        };
        Ok(V::Scalar(e, Ty::Bool))
    }

    pub fn binary(
        &mut self,
        span: Span,
        op: BinOp,
        lhs: &'a ast::Expr,
        rhs: &'a ast::Expr,
        want: Option<&Ty>,
    ) -> Res<V> {
        let class = rules::op_class(op);
        if class == OpClass::Equality {
            match (&lhs.kind, &rhs.kind) {
                (_, ExprKind::InvalidHeader) => return self.invalid_eq(lhs, op == BinOp::Ne, span),
                (ExprKind::InvalidHeader, _) => return self.invalid_eq(rhs, op == BinOp::Ne, span),
                _ => {}
            }
        }
        let sub_want = match class {
            OpClass::Arith => want,
            OpClass::Logic => Some(&Ty::Bool),
            _ => None,
        };
        let (a, b) = if class == OpClass::Equality && is_initializer(lhs) && !is_initializer(rhs) {
            // `{ p = 1 } == s`: the initializer builds the other operand's type.
            let b = self.expr(rhs, None)?;
            (self.expr(lhs, Some(&b.ty()))?, b)
        } else {
            let a = self.expr(lhs, sub_want)?;
            let b_want = match class {
                OpClass::Shift => None,
                OpClass::Equality if is_initializer(rhs) => Some(a.ty()),
                _ => sub_want.cloned(),
            };
            (a, self.expr(rhs, b_want.as_ref())?)
        };
        // Serializable enums cast implicitly to their underlying type for arithmetic, shifts
        // and `++` (P4_16 "Implicit casts").
        let (a, b) = match class {
            OpClass::Arith | OpClass::Shift | OpClass::Concat => (
                self.enum_as_bits(a, lhs.span)?,
                self.enum_as_bits(b, rhs.span)?,
            ),
            _ => (a, b),
        };
        if matches!(op, BinOp::Div | BinOp::Mod) {
            self.check_unsigned_division(op, (&a, lhs.span), (&b, rhs.span), span)?;
        }
        // int op int: fold now.
        if let (V::Int(x), V::Int(y)) = (&a, &b) {
            if let Some(v) = fold_int(op, *x, *y) {
                return Ok(v);
            }
            if matches!(op, BinOp::Div | BinOp::Mod) && *y == 0 {
                return Err(self.err(
                    Diagnostic::error("division by zero")
                        .with_primary(rhs.span, "this is 0")
                        .with_secondary(span, format!("in this `{}`", op.as_str())),
                ));
            }
            if class != OpClass::Logic {
                return Err(self.err(
                    Diagnostic::error(format!(
                        "cannot evaluate `{}` on these constants",
                        op.as_str()
                    ))
                    .with_primary(span, "overflow, a negative shift or an invalid operator")
                    .with_note(
                        "pisa evaluates `int` constants in 128-bit signed arithmetic (P4's `int` \
                         is unbounded); a result outside it is refused, never wrapped",
                    ),
                ));
            }
        }
        if matches!(op, BinOp::Eq | BinOp::Ne)
            && (super::agg_eq::is_aggregate(&a) || super::agg_eq::is_aggregate(&b))
        {
            return self.aggregate_eq(a, b, op == BinOp::Ne, span);
        }
        let sym = op.as_str();
        if class == OpClass::Logic {
            let (ta, tb) = (a.ty(), b.ty());
            if ta != Ty::Bool || tb != Ty::Bool {
                let (bad, bad_span) = if ta != Ty::Bool {
                    (ta, lhs.span)
                } else {
                    (tb, rhs.span)
                };
                return Err(self.err(
                    Diagnostic::error(format!("`{sym}` needs `bool` operands, found `{bad}`"))
                        .with_primary(bad_span, format!("this is a `{bad}`"))
                        .with_help("compare bit values first, e.g. `x != 0`"),
                ));
            }
        }
        match class {
            OpClass::Shift => {
                let (ea, ta) = match a {
                    V::Int(i) => match want.filter(|t| t.is_bits()) {
                        Some(w) => self.scalar_of_value(V::Int(i), Some(w), lhs.span)?,
                        None => {
                            return Err(self.err(
                                Diagnostic::error("the width of this shift cannot be inferred")
                                    .with_primary(lhs.span, "an `int` constant")
                                    .with_help("give it a width, e.g. `32w1 << n`"),
                            ))
                        }
                    },
                    other => self.scalar_of_value(other, None, lhs.span)?,
                };
                let eb = match b {
                    V::Int(i) if i >= 0 => {
                        let w = (128 - (i as u128).leading_zeros()).max(1) as u16;
                        ir::Expr::constant(i as u128, w)
                    }
                    other => {
                        let (eb, tb) = self.scalar_of_value(other, None, rhs.span)?;
                        if let Err(m) = rules::binary_result(op, &ta, &tb) {
                            return Err(self.err(Diagnostic::error(m).with_primary(rhs.span, "bad shift amount").with_help("shift by an unsigned `bit<W>` value or a non-negative constant")));
                        }
                        eb
                    }
                };
                if let Err(m) = rules::binary_result(op, &ta, &Ty::Bit(8)) {
                    return Err(self.err(
                        Diagnostic::error(m)
                            .with_primary(lhs.span, "cannot shift this")
                            .with_help("shifts apply to `bit<W>` and `int<W>`"),
                    ));
                }
                let width = ta.scalar_width().unwrap_or(1);
                let shown = self.env.text_of(span);
                self.check_action_shift(&fold_node(eb.clone()), span, &shown);
                Ok(V::Scalar(
                    fold_node(ir::Expr::Binary {
                        op: ir_binop(op),
                        a: Box::new(ea),
                        b: Box::new(eb),
                        width,
                        signed: ta.is_signed(),
                    }),
                    ta,
                ))
            }
            OpClass::Concat => {
                let (ea, ta) = self.scalar_of_value(a, None, lhs.span)?;
                let (eb, tb) = self.scalar_of_value(b, None, rhs.span)?;
                let rt = rules::binary_result(op, &ta, &tb).map_err(|m| {
                    self.err(
                        Diagnostic::error(m)
                            .with_primary(span, "cannot concatenate")
                            .with_help("both sides of `++` must be `bit<W>`/`int<W>`; cast `bool` to `bit<1>`"),
                    )
                })?;
                let width = rt.scalar_width().unwrap_or(1);
                Ok(V::Scalar(
                    fold_node(ir::Expr::Concat {
                        hi: Box::new(ea),
                        lo: Box::new(eb),
                        width,
                    }),
                    rt,
                ))
            }
            _ => {
                let (ea, eb, t) =
                    self.unify(a, lhs.span, b, rhs.span, want, span, &format!("`{sym}`"))?;
                let rt = rules::binary_result(op, &t, &t).map_err(|m| {
                    let help = match class {
                        OpClass::Logic => {
                            "`&&` and `||` take `bool`; compare bit values first (`x != 0`)"
                        }
                        OpClass::Order => "ordering compares `bit<W>`/`int<W>` values",
                        _ => "arithmetic takes `bit<W>`/`int<W>` of the same width",
                    };
                    self.err(
                        Diagnostic::error(m)
                            .with_primary(span, "invalid operands")
                            .with_help(help),
                    )
                })?;
                let width = rt.scalar_width().unwrap_or(1);
                let signed = t.is_signed();
                if matches!(op, BinOp::Div | BinOp::Mod)
                    && matches!(eb, ir::Expr::Const { value: 0, .. })
                {
                    return Err(self.err(
                        Diagnostic::error("division by zero")
                            .with_primary(rhs.span, "this is 0")
                            .with_secondary(span, format!("in this `{sym}`")),
                    ));
                }
                if matches!(op, BinOp::Div | BinOp::Mod)
                    && !matches!(eb, ir::Expr::Const { value, .. } if value.is_power_of_two())
                    && !matches!(fold(ea.clone()), ir::Expr::Const { .. })
                {
                    return Err(self.err(
                        crate::check::unsupported(
                            span,
                            &format!("`{sym}` by a non-constant or non-power-of-two"),
                            "division hardware",
                        )
                        .with_help("divide by a constant power of two, or shift"),
                    ));
                }
                if matches!(op, BinOp::AddSat | BinOp::SubSat) {
                    self.check_action_saturating(width, span);
                }
                Ok(V::Scalar(
                    fold_node(ir::Expr::Binary {
                        op: ir_binop(op),
                        a: Box::new(ea),
                        b: Box::new(eb),
                        width,
                        signed,
                    }),
                    rt,
                ))
            }
        }
    }

    /// `.last` and `.lastIndex` of a header stack: P4_16 "Header stacks" allows them only in a
    /// parser (where the next index counts the extracted elements).
    fn parser_only(&mut self, member: &str, span: Span) -> Res<()> {
        if self.ctx == super::Ctx::Parser {
            return Ok(());
        }
        Err(self.err(
            Diagnostic::error(format!(
                "`.{member}` of a header stack may only be used in a parser"
            ))
            .with_primary(span, format!("in {}", self.ctx.describe()))
            .with_help("index the stack with a constant, e.g. `hdr.vlan[1]`"),
        ))
    }

    /// A serializable enum's value as its underlying bit string; other values unchanged.
    fn enum_as_bits(&mut self, v: V, span: Span) -> Res<V> {
        match v.ty() {
            Ty::Enum(e) if e.serializable => {
                let (x, _) = self.scalar_of_value(v, None, span)?;
                Ok(V::Scalar(x, Ty::Bit(e.width)))
            }
            _ => Ok(v),
        }
    }

    /// `/` and `%` take unsigned operands only (P4_16: `bit<W>` and non-negative `int`; p4c
    /// refuses signed ones in type checking and negative constants when folding).
    fn check_unsigned_division(
        &mut self,
        op: BinOp,
        a: (&V, Span),
        b: (&V, Span),
        whole: Span,
    ) -> Res<()> {
        let sym = op.as_str();
        for (v, at) in [a, b] {
            let (msg, label) = match v {
                V::Int(i) if *i < 0 => (
                    format!("`{sym}` is not defined on negative numbers"),
                    format!("this is {i}"),
                ),
                v if v.ty().is_signed() => (
                    format!("`{sym}` cannot operate on signed values"),
                    format!("this is an `{}`", v.ty()),
                ),
                _ => continue,
            };
            return Err(self.err(
                Diagnostic::error(msg)
                    .with_primary(at, label)
                    .with_secondary(whole, format!("in this `{sym}`"))
                    .with_note(
                        "P4_16 defines `/` and `%` only on `bit<W>` values and non-negative `int` constants",
                    ),
            ));
        }
        Ok(())
    }

    /// An explicit cast.
    pub fn cast(&mut self, v: V, to: &Ty, span: Span, whole: Span) -> Res<V> {
        if let V::Int(i) = v {
            return match to {
                Ty::Bit(w) | Ty::Int(w) => Ok(V::Scalar(
                    ir::Expr::constant(rules::mask(i as u128, *w), *w),
                    to.clone(),
                )),
                Ty::Bool if i == 0 || i == 1 => {
                    Ok(V::Scalar(ir::Expr::constant(i as u128, 1), Ty::Bool))
                }
                Ty::Enum(en) if en.serializable => Ok(V::Scalar(
                    ir::Expr::constant(rules::mask(i as u128, en.width), en.width),
                    to.clone(),
                )),
                Ty::InfInt => Ok(V::Int(i)),
                _ => Err(self.err(
                    Diagnostic::error(format!("cannot cast an integer to `{to}`"))
                        .with_primary(whole, "invalid cast"),
                )),
            };
        }
        let (e, from) = self.scalar_of_value(v, None, span)?;
        if !rules::cast_allowed(&from, to) {
            let help = match (&from, to) {
                (Ty::Bit(_), Ty::Int(_)) | (Ty::Int(_), Ty::Bit(_)) => {
                    "change the width and the signedness in two casts, e.g. `(int<16>)(bit<16>) x`"
                        .to_string()
                }
                _ => format!("`{from}` converts to bit strings of its own width only"),
            };
            return Err(self.err(
                Diagnostic::error(format!("cannot cast `{from}` to `{to}`"))
                    .with_primary(whole, "invalid cast")
                    .with_help(help),
            ));
        }
        let fw = from.scalar_width().unwrap_or(1);
        let tw = to.scalar_width().unwrap_or(1);
        let e = if fw == tw {
            e
        } else {
            fold_node(ir::Expr::Cast {
                arg: Box::new(e),
                width: tw,
                sign_extend: from.is_signed(),
            })
        };
        Ok(V::Scalar(e, to.clone()))
    }

    /// A compile-time integer (`int` or a typed constant), e.g. sizes and slice bounds.
    pub fn const_int(&mut self, e: &'a ast::Expr) -> Res<i128> {
        match self.expr(e, None)? {
            V::Int(i) => Ok(i),
            V::Scalar(x, t) => match fold(x) {
                ir::Expr::Const { value, width } => Ok(if t.is_signed() {
                    rules::sign_extend(value, width)
                } else {
                    value as i128
                }),
                _ => Err(self.err(
                    Diagnostic::error("expected a compile-time constant")
                        .with_primary(e.span, "computed at run time")
                        .with_help("use a literal or a `const`"),
                )),
            },
            _ => Err(self.err(
                Diagnostic::error("expected an integer constant")
                    .with_primary(e.span, "not an integer"),
            )),
        }
    }

    /// A compile-time value of type `ty` (its bit pattern).
    pub fn const_value(&mut self, e: &'a ast::Expr, ty: &Ty) -> Res<u128> {
        let (x, _) = self.scalar(e, Some(ty))?;
        match fold(x) {
            ir::Expr::Const { value, .. } => Ok(value),
            _ => Err(self.err(
                Diagnostic::error("expected a compile-time constant")
                    .with_primary(e.span, "computed at run time")
                    .with_help("keysets and entries take literals, constants and enum members"),
            )),
        }
    }

    /// The default value of a type (P4_16 "default values"): 0, `false`, a struct of
    /// defaults; other types refused.
    pub(crate) fn default_value(&mut self, ty: &Ty, span: Span) -> Res<V> {
        match ty {
            Ty::Struct(s) => {
                let mut vs = Vec::new();
                for (_, t) in &s.fields {
                    vs.push((self.default_value(t, span)?, span));
                }
                Ok(V::List(vs))
            }
            Ty::Bit(w) | Ty::Int(w) => Ok(V::Scalar(ir::Expr::constant(0, *w), ty.clone())),
            Ty::Bool => Ok(V::Scalar(ir::Expr::constant(0, 1), Ty::Bool)),
            _ => Err(self.err(crate::check::unsupported(
                span,
                &format!("`...` defaulting a field of type `{ty}`"),
                "default values of headers, enums and other non-bit types",
            ))),
        }
    }
}

/// What is wrong with slice `[h:l]` of a `w`-bit value of type `ty`, if anything: a reversed
/// slice (P4 writes the high bit first) is told apart from one out of the value's range.
pub(super) fn slice_problem(
    h: i128,
    l: i128,
    w: u16,
    ty: &dyn std::fmt::Display,
) -> Option<String> {
    let fits = |b: i128| 0 <= b && b < i128::from(w);
    if fits(h) && fits(l) && l > h {
        return Some(format!(
            "slice [{h}:{l}] of `{ty}` is reversed: P4 writes a slice [high:low], here [{l}:{h}]"
        ));
    }
    (!(0 <= l && l <= h && h < i128::from(w)))
        .then(|| format!("slice [{h}:{l}] out of range for `{ty}`"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn int(op: BinOp, a: i128, b: i128) -> Option<i128> {
        match fold_int(op, a, b)? {
            V::Int(i) => Some(i),
            _ => None,
        }
    }

    #[test]
    fn int_shifts_never_wrap() {
        assert_eq!(int(BinOp::Shl, 1, 126), Some(1 << 126));
        assert_eq!(int(BinOp::Shr, 1 << 126, 123), Some(8));
        // 2^127 is past i128: refused (None), not wrapped to -2^127.
        assert_eq!(int(BinOp::Shl, 1, 127), None);
        assert_eq!(int(BinOp::Shl, -1, 127), Some(i128::MIN));
        assert_eq!(int(BinOp::Shl, 3, 126), None);
        assert_eq!(int(BinOp::Shl, 1, 200), None);
        assert_eq!(int(BinOp::Shl, 0, 200), Some(0));
        assert_eq!(int(BinOp::Shl, 1, -1), None);
        assert_eq!(int(BinOp::Shr, 7, 200), Some(0));
        assert_eq!(int(BinOp::Shr, -7, 200), Some(-1));
        assert_eq!(int(BinOp::Shr, -7, 1), Some(-4));
    }

    #[test]
    fn saturating_constants_clamp() {
        assert_eq!(saturate(true, 200, 100, 8, false), 255);
        assert_eq!(saturate(false, 1, 2, 8, false), 0);
        // -100 |-| 100 on int<8>: -128 (0x80); 100 |+| 100: 127.
        assert_eq!(saturate(false, 0x9c, 100, 8, true), 0x80);
        assert_eq!(saturate(true, 100, 100, 8, true), 0x7f);
        assert_eq!(saturate(true, u128::MAX, 1, 128, false), u128::MAX);
        assert_eq!(saturate(true, 1 << 127, 1 << 127, 128, true), 1 << 127);
    }
}
