//! How counters and meters measure bytes: the `true_egress_accounting` constructor argument
//! (Tofino 2, egress only, byte counting only) and the `adjust_byte_count` argument of
//! `count` / `execute` (one constant per object, at most 8192), checked as bf-p4c checks them.

use pipeline::ir::{self, ByteAccounting};

use crate::ast;
use crate::check::types::Ty;
use crate::diag::Diagnostic;
use crate::lower::expr::fold;
use crate::lower::{Lowerer, Res};

/// The counter or meter an accounting argument belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Measured {
    Counter(ir::CounterId),
    Meter(ir::MeterId),
}

/// A `true_egress_accounting` constructor argument of `tname` (an instance made in
/// `l.gress`); `counts_bytes` whether the object counts bytes. Refused as bf-p4c refuses it:
/// outside egress, and on a packet counter or meter.
pub(super) fn true_egress_accounting<'a>(
    l: &mut Lowerer<'a>,
    tname: &str,
    e: &'a ast::Expr,
    counts_bytes: bool,
) -> Res<bool> {
    if !declares_true_egress(l, tname) {
        return Err(l.err(
            Diagnostic::error(format!(
                "`{tname}` has no true_egress_accounting argument in tna.p4 (Tofino 1's externs)"
            ))
            .with_primary(e.span, "unexpected argument")
            .with_help("true egress accounting is Tofino 2's: include <t2na.p4> and compile with --target tofino2"),
        ));
    }
    if l.const_value(e, &Ty::Bool)? == 0 {
        return Ok(false);
    }
    if l.gress != ir::Gress::Egress {
        return Err(l.err(
            Diagnostic::error(format!(
                "`{tname}`: true egress accounting is only available on egress"
            ))
            .with_primary(e.span, format!("this {tname} is used in {}", l.gress)),
        ));
    }
    if !counts_bytes {
        return Err(l.err(
            Diagnostic::error(format!(
                "`{tname}`: true egress accounting is only valid for counting bytes"
            ))
            .with_primary(e.span, "on a packets-only object"),
        ));
    }
    Ok(true)
}

impl<'a> Lowerer<'a> {
    /// The `adjust_byte_count` argument `e` of a `count` / `execute` call on `obj` (named
    /// `xname`): a compile-time constant, the same on every call of the object (the hardware
    /// holds one adjustment per counter or meter), and at most
    /// [`ByteAccounting::MAX_ADJUST`] (the hardware adds its negation, a 14-bit signed field).
    pub(super) fn adjust_byte_count(
        &mut self,
        obj: Measured,
        xname: &str,
        e: &'a ast::Expr,
    ) -> Res<()> {
        let (x, _) = self.scalar(e, Some(&Ty::Bit(32)))?;
        let ir::Expr::Const { value, .. } = fold(x) else {
            return Err(self.err(
                Diagnostic::error(format!(
                    "`{xname}`: adjust_byte_count does not resolve to a constant value"
                ))
                .with_primary(e.span, "computed at run time")
                .with_help("the hardware holds one byte adjustment per counter or meter"),
            ));
        };
        let value = value as u32;
        if let Some(&(first, at)) = self.pipe.byte_adjusts.get(&obj) {
            if first != value {
                return Err(self.err(
                    Diagnostic::error(format!(
                        "not every call on `{xname}` has the same adjust_byte_count ({first} and {value})"
                    ))
                    .with_primary(e.span, format!("{value} here"))
                    .with_secondary(at, format!("{first} here")),
                ));
            }
            return Ok(());
        }
        if value > ByteAccounting::MAX_ADJUST {
            return Err(self.err(
                Diagnostic::error(format!(
                    "`{xname}`: the byte count adjustment of -{value} does not fit the 14 bits the hardware holds (-8192 to 8191)"
                ))
                .with_primary(e.span, "adjust_byte_count")
                .with_help(format!(
                    "adjust_byte_count is subtracted from the packet's length: at most {}",
                    ByteAccounting::MAX_ADJUST
                )),
            ));
        }
        self.pipe.byte_adjusts.insert(obj, (value, e.span));
        let acc = match obj {
            Measured::Counter(id) => self.pipe.counters.get_mut(id.index()).map(|c| &mut c.bytes),
            Measured::Meter(id) => self.pipe.meters.get_mut(id.index()).map(|m| &mut m.bytes),
        };
        if let Some(acc) = acc {
            acc.adjust = value as u16;
        }
        Ok(())
    }
}

/// Whether the architecture's `tname` takes a `true_egress_accounting` constructor argument
/// (t2na.p4 declares it, tna.p4 does not).
fn declares_true_egress(l: &Lowerer<'_>, tname: &str) -> bool {
    l.env.lookup(tname).is_some_and(|d| match &d.kind {
        ast::DeclKind::Extern(x) => x.members.iter().any(|m| {
            matches!(&m.kind, ast::ExternMemberKind::Constructor { params, .. }
                if params.iter().any(|p| p.name.name == "true_egress_accounting"))
        }),
        _ => false,
    })
}
