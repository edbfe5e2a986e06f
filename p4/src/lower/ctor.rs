//! Constructor parameters of parsers and controls (`control C(...)(bit<8> v)`, instantiated
//! `C(8w7) c;`): each argument is evaluated where the block is instantiated and bound, read
//! only, in the block's body, so the same control instantiated twice with different arguments
//! lowers into two differently specialised copies (as p4c's inlining does).

use crate::ast::{self, DeclKind};
use crate::diag::Diagnostic;
use crate::lower::{Lowerer, Res, V};
use crate::source::Span;

/// The constructor parameters of a parser or control declaration.
pub(crate) fn ctor_params(decl: &ast::Decl) -> &[ast::Param] {
    match &decl.kind {
        DeclKind::Parser(p) => &p.ctor_params,
        DeclKind::Control(c) => &c.ctor_params,
        _ => &[],
    }
}

impl<'a> Lowerer<'a> {
    /// The values of `decl`'s constructor parameters from the instantiation's `args` (by
    /// position or by name, defaults where given), typed as the parameters.
    pub(crate) fn ctor_values(
        &mut self,
        decl: &'a ast::Decl,
        args: &'a [ast::Argument],
        span: Span,
    ) -> Res<Vec<(String, V)>> {
        let params = ctor_params(decl);
        let block = decl.name().map(|n| n.name.clone()).unwrap_or_default();
        if args.len() > params.len() {
            return Err(self.err(
                Diagnostic::error(format!(
                    "`{block}` takes {} constructor argument(s), {} given",
                    params.len(),
                    args.len()
                ))
                .with_primary(span, "too many arguments"),
            ));
        }
        let mut out = Vec::with_capacity(params.len());
        for (k, p) in params.iter().enumerate() {
            let arg = match args
                .iter()
                .find(|a| a.name.as_ref().is_some_and(|n| n.name == p.name.name))
            {
                Some(a) => Some(&a.value),
                None => args.get(k).filter(|a| a.name.is_none()).map(|a| &a.value),
            };
            let Some(value) = arg.or(p.default.as_ref()) else {
                return Err(self.err(
                    Diagnostic::error(format!(
                        "missing constructor argument `{}` of `{block}`",
                        p.name.name
                    ))
                    .with_primary(span, "instantiated here")
                    .with_secondary(p.span, "declared here"),
                ));
            };
            let ty = self.resolve_type(&p.ty)?;
            if ty.scalar_width().is_none() {
                return Err(self.err(crate::check::unsupported(
                    p.span,
                    &format!("a constructor parameter of type `{ty}`"),
                    "constructor parameters that are not bit strings, bools or enums",
                )));
            }
            let v = self.expr(value, Some(&ty))?;
            let (e, t) = self.scalar_of_value(v, Some(&ty), value.span)?;
            out.push((p.name.name.clone(), V::Scalar(e, t)));
        }
        Ok(out)
    }
}
