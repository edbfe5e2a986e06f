//! Generic parsers and controls (`parser P<H, M>(packet_in pkt, out H hdr, ...)`): their type
//! parameters are bound per instance — from explicit type arguments (`P<headers_t, meta_t>()`),
//! from the arguments they are applied to, or, for the blocks of a `Pipeline`, from the
//! concrete header and metadata types of the other blocks of the same gress — and every type
//! written inside the block resolves through that binding while it is lowered.

use crate::ast::{self, DeclKind, TypeKind};
use crate::check::env::TypeParams;
use crate::check::types::Ty;
use crate::diag::Diagnostic;
use crate::lower::expr::Resolved;
use crate::lower::{Lowerer, Res, V};
use crate::source::Span;

/// The type parameters a parser or control declares.
pub(crate) fn type_params(decl: &ast::Decl) -> &[ast::Ident] {
    match &decl.kind {
        DeclKind::Parser(p) => &p.type_params,
        DeclKind::Control(c) => &c.type_params,
        _ => &[],
    }
}

/// The type parameter a parameter's written type is, if it is one of `decl`'s.
pub(crate) fn param_type_var<'d>(decl: &'d ast::Decl, p: &ast::Param) -> Option<&'d str> {
    let TypeKind::Named(n) = &p.ty.kind else {
        return None;
    };
    type_params(decl)
        .iter()
        .find(|t| t.name == n.name)
        .map(|t| t.name.as_str())
}

impl<'a> Lowerer<'a> {
    /// Explicit type arguments of an instance of `decl` (none given: an empty binding, the
    /// parameters then inferred where the block is used).
    pub(crate) fn block_types(
        &mut self,
        decl: &ast::Decl,
        args: &[ast::Type],
        span: Span,
    ) -> Res<TypeParams> {
        let params = type_params(decl);
        if args.is_empty() {
            return Ok(TypeParams::new());
        }
        if args.len() != params.len() {
            return Err(self.err(
                Diagnostic::error(format!(
                    "`{}` takes {} type argument(s), {} given",
                    decl.name().map_or("?", |n| n.name.as_str()),
                    params.len(),
                    args.len()
                ))
                .with_primary(span, "wrong number of type arguments"),
            ));
        }
        let mut out = TypeParams::new();
        for (p, a) in params.iter().zip(args) {
            let t = self.resolve_type(a)?;
            out.insert(p.name.clone(), t);
        }
        Ok(out)
    }

    /// The binding of a generic block applied to `args` (positional): its explicit type
    /// arguments, then each parameter typed by a type variable takes its argument's type.
    pub(crate) fn infer_types(
        &mut self,
        decl: &'a ast::Decl,
        params: &'a [ast::Param],
        args: &'a [ast::Argument],
        explicit: &TypeParams,
    ) -> Res<TypeParams> {
        let mut out = explicit.clone();
        for (p, a) in params.iter().zip(args) {
            let Some(var) = param_type_var(decl, p) else {
                continue;
            };
            if out.contains_key(var) {
                continue;
            }
            let ty = match self.resolve(&a.value)? {
                Resolved::V(V::Loc(l)) => l.ty(),
                Resolved::V(V::Scalar(_, t)) => t,
                _ => {
                    return Err(self.err(
                        Diagnostic::error(format!(
                            "cannot tell the type `{var}` of `{}` from this argument",
                            p.name.name
                        ))
                        .with_primary(a.span, "give the type arguments explicitly"),
                    ))
                }
            };
            out.insert(var.to_string(), ty);
        }
        Ok(out)
    }

    /// Runs `f` with `types` bound (the type parameters of the block being lowered).
    pub(crate) fn with_types<T>(
        &mut self,
        types: TypeParams,
        f: impl FnOnce(&mut Lowerer<'a>) -> T,
    ) -> T {
        self.type_args.push(types);
        let r = f(self);
        self.type_args.pop();
        r
    }
}

/// The binding of a `Pipeline` block: its explicit types, then the type variables of its user
/// parameters (header and metadata, by position) bound to the gress's concrete types.
pub(crate) fn pipeline_block_types(
    decl: &ast::Decl,
    user: &[&ast::Param],
    concrete: &[Option<Ty>],
    explicit: &TypeParams,
) -> TypeParams {
    let mut out = explicit.clone();
    for (p, t) in user.iter().zip(concrete) {
        if let (Some(var), Some(t)) = (param_type_var(decl, p), t) {
            out.entry(var.to_string()).or_insert_with(|| t.clone());
        }
    }
    out
}
