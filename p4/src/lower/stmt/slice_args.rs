//! A slice passed to an `out` or `inout` parameter (`f(hdr.x.y[7:0])`): copy-in/copy-out
//! through a temporary, as p4c does for every directional argument. `bind_args` binds the
//! parameter to a fresh temporary and records it here; the call copies the slice into it
//! before the body (`inout` only: an `out` parameter starts uninitialized) and writes it back
//! to the slice after the body.

use std::rc::Rc;

use pipeline::ir::{self, Place};

use crate::lower::phv::Loc;
use crate::lower::{Lowerer, Res};
use crate::source::Span;

/// One slice argument: its place and the temporary the parameter is bound to.
#[derive(Clone, Debug)]
pub(crate) struct SliceArg {
    place: Place,
    temp: ir::FieldRef,
    inout: bool,
}

impl<'a> Lowerer<'a> {
    /// The temporary for a slice argument (`place` is a `FieldSlice`), recorded for the call.
    pub(super) fn slice_arg(
        &mut self,
        place: Place,
        ty: &crate::check::types::Ty,
        inout: bool,
        span: Span,
    ) -> Res<Rc<Loc>> {
        let loc = self.alloc(&format!("$slice_arg{}", self.tmp), ty, span)?;
        self.tmp += 1;
        if let Loc::Field { f, .. } = &*loc {
            self.slice_args.push(SliceArg {
                place,
                temp: *f,
                inout,
            });
        }
        Ok(loc)
    }

    /// The slice arguments recorded since `mark` (the length before `bind_args`).
    pub(in crate::lower) fn take_slice_args(&mut self, mark: usize) -> Vec<SliceArg> {
        self.slice_args.split_off(mark.min(self.slice_args.len()))
    }

    /// Before the body: each `inout` slice into its temporary.
    pub(in crate::lower) fn slice_copy_in(args: &[SliceArg], out: &mut ir::Block) {
        for a in args.iter().filter(|a| a.inout) {
            if let Place::FieldSlice { field, hi, lo } = a.place {
                out.push(ir::Stmt::Assign {
                    dst: Place::Field(a.temp),
                    value: ir::Expr::Slice {
                        arg: Box::new(ir::Expr::Field(field)),
                        hi,
                        lo,
                    },
                });
            }
        }
    }

    /// After the body: each temporary back into its slice, in argument order.
    pub(in crate::lower) fn slice_copy_out(args: &[SliceArg], out: &mut ir::Block) {
        for a in args {
            out.push(ir::Stmt::Assign {
                dst: a.place,
                value: ir::Expr::Field(a.temp),
            });
        }
    }
}
