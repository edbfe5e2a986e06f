//! Human-readable names for PHV locations (the analysis's [`Loc`]s) and IR expressions, for
//! the messages and the report: the IR's own printer ([`pipeline::names`]) plus locations.

use pipeline::ir::{Expr, PhvLayout, Pipeline};

use super::effects::Loc;

pub(crate) use pipeline::names::binop_str;

/// Names things of one gress of one pipeline.
pub(crate) struct Names<'a> {
    inner: pipeline::names::Names<'a>,
}

impl<'a> Names<'a> {
    pub fn new(pipe: &'a Pipeline, phv: &'a PhvLayout) -> Self {
        Names {
            inner: pipeline::names::Names::new(pipe, phv),
        }
    }

    /// The name of the PHV field covering `loc` (or a bit range when none does).
    pub fn loc(&self, loc: Loc) -> String {
        match loc {
            Loc::Valid(h) => self.inner.valid(h),
            Loc::Temp(n) => format!("(extern result #{n})"),
            Loc::Bits { start, end } => self.inner.bits(start, end),
        }
    }

    /// Renders an expression roughly as P4 source.
    pub fn expr(&self, e: &Expr) -> String {
        self.inner.expr(e)
    }
}
