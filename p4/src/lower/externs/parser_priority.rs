//! `ParserPriority`: the priority a parser gives a packet in the ingress buffer, which the
//! hardware uses to pick what to drop when the parser falls behind its input. pisa's parser
//! never falls behind (a packet is parsed whole before the next one is taken), so no packet
//! is ever dropped for its priority: an instance is accepted with a warning that says so, and
//! `set(prio)` is checked (in a parser, one `bit<3>` argument) and changes nothing.

use pipeline::ir;

use super::{Call, Ctor, ExternType, Kind};
use crate::check::types::Ty;
use crate::diag::Diagnostic;
use crate::lower::{Ctx, Lowerer, Res, V};

/// `ParserPriority`.
pub(super) struct ParserPriorities;

impl ExternType for ParserPriorities {
    fn names(&self) -> &'static [&'static str] {
        &["ParserPriority"]
    }

    fn instantiate<'a>(&self, l: &mut Lowerer<'a>, c: &Ctor<'a>) -> Res<Kind> {
        c.arity(l, 0, 0)?;
        c.in_parser(l, "declare it inside the parser that sets the priority")?;
        l.warn(
            Diagnostic::warning(format!(
                "`ParserPriority {}` accepted, not modelled: pisa's parser never falls behind its input, so no packet is dropped for a low priority as the hardware's ingress buffer would under overload",
                c.name
            ))
            .with_primary(c.inst.name.span, "its priorities change nothing in pisa"),
        );
        Ok(Kind::ParserPriority)
    }

    fn method<'a>(
        &self,
        l: &mut Lowerer<'a>,
        c: &Call<'a, '_>,
        out: Option<&mut ir::Block>,
    ) -> Res<Option<V>> {
        let (m, span, nargs) = (c.m, c.span, c.args.len());
        if m != "set" {
            return l.no_method_of(c);
        }
        if l.ctx != Ctx::Parser {
            return Err(l.err(
                Diagnostic::error("`ParserPriority.set` is only allowed in a parser")
                    .with_primary(c.member.span, "here"),
            ));
        }
        let [a] = c.args else {
            return Err(l.arg_count(m, 1, nargs, span));
        };
        // Checked like any argument of type bit<3>; nothing runs.
        l.scalar(&a.value, Some(&Ty::Bit(3)))?;
        l.need_stmt(out, span, m)?;
        Ok(None)
    }
}
