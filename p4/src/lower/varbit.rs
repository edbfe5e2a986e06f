//! `varbit<N>` header fields (P4_16 §7.1.6): the two-argument `extract` that sets a varbit's
//! length for this packet, and `sizeInBits`/`sizeInBytes` of a header holding one (its fixed
//! bits plus the current length, computed at run time). Storage is in [`super::phv`] (the N
//! bits reserved in the header, the length in a hidden `$length` field); emit, copies and
//! `setInvalid` need nothing of their own beyond what [`super::stmt`] does for headers.
//! A length bf-p4c can enumerate (one field or slice of at most 10 bits, with constant
//! arithmetic) is checked for every value of that variable as bf-p4c's
//! `midend/desugar_varbit_extract.cpp` does: whole bytes within the field, a value past the
//! field being a `reject` branch (the run time's reject); a constant one likewise, and a
//! constant 0 drops the extract. As there (`CollectVarbitExtract::preorder`), a parser state
//! takes one varbit extract, extracted last, and a length reading two variables (two fields,
//! or two different slices of one) is refused.

use crate::ast;
use crate::check::types::Ty;
use crate::diag::Diagnostic;
use crate::lower::expr::Resolved;
use crate::lower::phv::Loc;
use crate::lower::{Lowerer, Res, V};
use crate::source::Span;
use pipeline::ir::{self, BinOp, FieldRef};

/// The fixed bits of a header with a varbit field, the varbit's length field and its size.
fn varbit_parts(l: &Loc) -> Option<(u32, FieldRef, u32)> {
    let Loc::Header { ty, fields, .. } = l else {
        return None;
    };
    let len = fields.iter().find_map(|f| match &**f {
        Loc::Varbit { len, .. } => Some(*len),
        _ => None,
    })?;
    let all = Ty::Header(ty.clone()).max_flat_width()?;
    let max = ty.fields.iter().find_map(|(_, t)| match t {
        Ty::Varbit(n) => Some(u32::from(*n)),
        _ => None,
    })?;
    Some((all - max, len, max))
}

impl<'a> Lowerer<'a> {
    /// `pkt.extract(hdr, bits)`: a header with a varbit field and its length in bits, a
    /// `bit<32>`.
    pub(super) fn extract_varbit(
        &mut self,
        h: &'a ast::Argument,
        bits: &'a ast::Argument,
        span: Span,
        out: Option<&mut ir::Block>,
    ) -> Res<Option<V>> {
        let header = match self.expr(&h.value, None)? {
            V::Loc(l) => match (&*l, varbit_parts(&l)) {
                (Loc::Header { id, .. }, Some((_, _, max))) => Some((*id, max)),
                _ => None,
            },
            _ => None,
        };
        let Some((header, max)) = header else {
            return Err(self.err(
                Diagnostic::error("two-argument `extract` takes a header with a varbit field")
                    .with_primary(h.span, "no varbit field here")
                    .with_help("extract a fixed-size header with `pkt.extract(hdr.x)`"),
            ));
        };
        self.one_varbit_per_state(span)?;
        let (e, _) = self.scalar(&bits.value, Some(&Ty::Bit(32)))?;
        if let ir::Expr::Const { value, .. } = e {
            if value == 0 {
                // bf-p4c's RemoveZeroVarbitExtract drops `extract(h, 0)`: nothing is extracted.
                self.need_stmt(out, span, "extract")?;
                return Ok(None);
            }
            self.constant_length(value, max, bits.span)?;
        } else if let Some(var) = self.length_var(&e, bits.span)? {
            self.enumerate_length(&e, var, max, bits.span)?;
        } else {
            self.warn(
                Diagnostic::warning(
                    "bf-p4c derives a varbit's length from one extracted field with constant arithmetic; pisa evaluates this length as written",
                )
                .with_primary(bits.span, "length expression")
                .with_note("bf-p4c turns the length into parser states, one per value of that field"),
            );
        }
        let block = self.need_stmt(out, span, "extract")?;
        block.push(ir::Stmt::ExtractVarbit { header, bits: e });
        self.invalidate_union_peers(header, block);
        Ok(None)
    }

    /// `sizeInBits(h)` / `sizeInBytes(h)` (or `h.sizeInBits()`) of a header `h` with a varbit
    /// field: its fixed bits plus the varbit's current length, a `bit<32>`. `None` for any
    /// other argument (sized at compile time by the caller).
    pub(super) fn varbit_size(&mut self, which: &str, args: &'a [ast::Argument]) -> Res<Option<V>> {
        let [a] = args else { return Ok(None) };
        if matches!(a.value.kind, ast::ExprKind::Type(_)) {
            return Ok(None);
        }
        let Ok(Resolved::V(V::Loc(l))) = self.resolve(&a.value) else {
            return Ok(None);
        };
        Ok(varbit_parts(&l)
            .map(|(fixed, len, _)| V::Scalar(size_expr(which, fixed, len), Ty::Bit(32))))
    }
}

impl Lowerer<'_> {
    /// bf-p4c's `ErrorOnUnsupportedVarbitUse` refuses an assignment of a varbit field or of a
    /// header holding one (`ty`, what is assigned); pisa copies it, with a warning.
    pub(super) fn warn_varbit_assign(&mut self, ty: &Ty, span: Span) {
        let what = match ty {
            Ty::Varbit(_) => "cannot assign varbit field",
            Ty::Header(_) if ty.has_varbit() => "cannot assign header that contains a varbit field",
            _ => return,
        };
        self.warn(
            Diagnostic::warning(format!("bf-p4c refuses this: {what}; pisa copies it"))
                .with_primary(span, "assigned here")
                .with_note("bf-p4c (midend/desugar_varbit_extract.cpp) does not support assigning values to varbit fields")
                .with_help("split the header: assign its fixed fields only"),
        );
    }

    /// bf-p4c refuses `setValid()` on a header holding a varbit field (its varbit would be
    /// undefined); pisa makes it valid, with a warning.
    pub(super) fn warn_varbit_set_valid(&mut self, ty: &Ty, span: Span) {
        if !ty.has_varbit() {
            return;
        }
        self.warn(
            Diagnostic::warning(
                "bf-p4c refuses this: cannot set header that contains a varbit field as valid",
            )
            .with_primary(span, "setValid on a header with a varbit field")
            .with_note("bf-p4c (midend/desugar_varbit_extract.cpp) leaves such a header's varbit undefined and refuses it")
            .with_help("split the header: set only a header of fixed fields valid"),
        );
    }
}

/// Whether `e` is constant arithmetic (+, −, ×, shifts, casts, slices) over header fields,
/// the fields collected: what bf-p4c can enumerate into parser states.
fn enumerable(e: &ir::Expr, fields: &mut Vec<FieldRef>) -> bool {
    match e {
        ir::Expr::Const { .. } => true,
        ir::Expr::Field(f) => {
            if !fields.contains(f) {
                fields.push(*f);
            }
            true
        }
        ir::Expr::Cast { arg, .. } | ir::Expr::Slice { arg, .. } => enumerable(arg, fields),
        ir::Expr::Binary { op, a, b, .. } => {
            matches!(
                op,
                BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Shl | BinOp::Shr
            ) && enumerable(a, fields)
                && enumerable(b, fields)
        }
        _ => false,
    }
}

/// Most values of a varbit length's variable bf-p4c makes parser branches for.
const MAX_BRANCHES: u128 = 1024;

/// The variables a varbit length reads, as bf-p4c's `CollectVariables` takes them: each read
/// of a field, or of a slice of a field (a variable of its own), in order; through casts,
/// slices of expressions, and operators. Reads inside anything else are not collected.
fn variables(e: &ir::Expr, out: &mut Vec<ir::Expr>) {
    match e {
        ir::Expr::Field(_) => out.push(e.clone()),
        ir::Expr::Slice { arg, .. } if matches!(**arg, ir::Expr::Field(_)) => out.push(e.clone()),
        ir::Expr::Cast { arg, .. } | ir::Expr::Slice { arg, .. } | ir::Expr::Unary { arg, .. } => {
            variables(arg, out)
        }
        ir::Expr::Binary { a, b, .. } | ir::Expr::Concat { hi: a, lo: b, .. } => {
            variables(a, out);
            variables(b, out);
        }
        ir::Expr::Ternary {
            cond, then, els, ..
        } => {
            for x in [cond, then, els] {
                variables(x, out);
            }
        }
        _ => {}
    }
}

impl Lowerer<'_> {
    /// bf-p4c's `CollectVarbitExtract::preorder`: one varbit extract per parser state (after
    /// `transition select` and sub-parser calls split a state, per split part).
    fn one_varbit_per_state(&mut self, span: Span) -> Res<()> {
        if let Some(first) = self.varbit_extract {
            return Err(self.err(
                Diagnostic::error("multiple varbit fields in a parser state are currently unsupported")
                    .with_primary(span, "a second varbit extract in this state")
                    .with_secondary(first, "the state's first varbit extract")
                    .with_note("bf-p4c turns a varbit extract into parser states of its own, one per parser state")
                    .with_help("extract the second varbit header in a state of its own"),
            ));
        }
        self.varbit_extract = Some(span);
        Ok(())
    }

    /// After a varbit extract in the same state, bf-p4c refuses any other extract.
    pub(super) fn varbit_extracted_last(&mut self, span: Span) -> Res<()> {
        let Some(first) = self.varbit_extract else {
            return Ok(());
        };
        Err(self.err(
            Diagnostic::error("current compiler implementation requires the varbit header to be extracted last in the parser state")
                .with_primary(span, "extracted after a varbit header")
                .with_secondary(first, "the state's varbit extract")
                .with_help("extract this header in the next state"),
        ))
    }

    /// The one variable of an enumerable, non-constant length (a field, or a slice of one) and
    /// its width; `None` for a length bf-p4c cannot enumerate. Two different variables are
    /// refused as bf-p4c's `enumerate_varbit_field_values` does; one read more than once warns
    /// (bf-p4c collects every read, so that written twice in the extract it refuses too).
    fn length_var(&mut self, bits: &ir::Expr, span: Span) -> Res<Option<(ir::Expr, u16)>> {
        let mut reads = Vec::new();
        variables(bits, &mut reads);
        let Some(first) = reads.first().cloned() else {
            return Ok(None);
        };
        if let Some(other) = reads.iter().find(|r| **r != first) {
            let (a, b) = (self.var_name(&first), self.var_name(other));
            return Err(self.err(
                Diagnostic::error("Varbit expression contains more than one variable")
                    .with_primary(span, format!("reads `{a}` and `{b}`"))
                    .with_note(
                        "bf-p4c makes a parser branch for every value of the length's one variable",
                    )
                    .with_help("compute the length from one field or slice, with constants"),
            ));
        }
        let mut fields = Vec::new();
        if !enumerable(bits, &mut fields) {
            return Ok(None);
        }
        if reads.len() > 1 {
            let name = self.var_name(&first);
            self.warn(
                Diagnostic::warning(format!(
                    "this varbit length reads `{name}` {} times; bf-p4c counts each read as a variable",
                    reads.len()
                ))
                .with_primary(span, "length expression")
                .with_note("bf-p4c refuses a length written with more than one read (\"contains more than one variable\"); pisa enumerates its one variable")
                .with_help("read it once: `(bit<32>)f * 16` for `(bit<32>)f * 8 + (bit<32>)f * 8`"),
            );
        }
        let width = match &first {
            ir::Expr::Slice { hi, lo, .. } => hi - lo + 1,
            other => other.width(),
        };
        Ok(Some((first, width)))
    }

    /// A length's variable as the source names it: a field, or a slice of one.
    fn var_name(&self, var: &ir::Expr) -> String {
        let name = |f: &FieldRef| pipeline::names::field_name(&self.phv.layout, *f);
        match var {
            ir::Expr::Slice { arg, hi, lo } => match &**arg {
                ir::Expr::Field(f) => format!("{}[{hi}:{lo}]", name(f)),
                _ => String::from("a slice"),
            },
            ir::Expr::Field(f) => name(f),
            _ => String::from("an expression"),
        }
    }

    /// A constant varbit length (not 0), as bf-p4c's `check_compile_time_constant` takes it:
    /// whole bytes, at most the field's `max` bits.
    fn constant_length(&mut self, bits: u128, max: u32, span: Span) -> Res<()> {
        let what = if !bits.is_multiple_of(8) {
            format!("Varbit field size expression evaluates to non byte-aligned value {bits}")
        } else if bits > u128::from(max) {
            format!("{bits} exceeds varbit field size {max}")
        } else {
            return Ok(());
        };
        Err(self.err(
            Diagnostic::error(what)
                .with_primary(span, "the varbit's length")
                .with_note("bf-p4c refuses a constant varbit length that is not whole bytes or is past the field"),
        ))
    }

    /// bf-p4c's `enumerate_varbit_field_values`: the length `bits` for every value of its
    /// variable `var` (`width` bits); more than 1024 values are refused, and a length within
    /// the field (`max` bits) must be whole bytes (one past the field is a `reject` branch,
    /// what the extract does at run time).
    fn enumerate_length(
        &mut self,
        bits: &ir::Expr,
        (var, width): (ir::Expr, u16),
        max: u32,
        span: Span,
    ) -> Res<()> {
        let values = 1u128 << width.min(100);
        if values > MAX_BRANCHES {
            return Err(self.err(
                Diagnostic::error("Varbit extract requires too many parser branches to implement")
                    .with_primary(span, format!("its variable has {width} bits: {values} values, one parser branch each"))
                    .with_note("bf-p4c makes a parser branch for every value of the length's variable, at most 1024")
                    .with_help("compute the length from a field or slice of at most 10 bits"),
            ));
        }
        for v in 0..values {
            let Some(n) = at_value(bits, &var, v, width) else {
                continue;
            };
            if n <= u128::from(max) && !n.is_multiple_of(8) {
                return Err(self.err(
                    Diagnostic::error(format!(
                        "Varbit field size expression evaluates to non byte-aligned value {n}"
                    ))
                    .with_primary(span, format!("{n} bits when its variable is {v}"))
                    .with_note("bf-p4c computes the length for every value of its variable; Tofino extracts whole bytes")
                    .with_help("make the length a multiple of 8 bits for every value"),
                ));
            }
        }
        Ok(())
    }
}

/// `e` with `var` replaced by `value`, folded: its value where `var` is its only variable.
fn at_value(e: &ir::Expr, var: &ir::Expr, value: u128, width: u16) -> Option<u128> {
    fn subst(e: &mut ir::Expr, var: &ir::Expr, c: &ir::Expr) {
        if e == var {
            *e = c.clone();
            return;
        }
        for ch in super::copy_prop::children(e) {
            subst(ch, var, c);
        }
    }
    let mut e = e.clone();
    subst(&mut e, var, &ir::Expr::constant(value, width));
    match super::expr::fold(e) {
        ir::Expr::Const { value, .. } => Some(value),
        _ => None,
    }
}

/// `fixed + length` bits, or that divided by 8 for `sizeInBytes`, as a `bit<32>`.
fn size_expr(which: &str, fixed: u32, len: FieldRef) -> ir::Expr {
    let bits = ir::Expr::Binary {
        op: BinOp::Add,
        a: Box::new(ir::Expr::constant(u128::from(fixed), 32)),
        b: Box::new(ir::Expr::Cast {
            arg: Box::new(ir::Expr::Field(len)),
            width: 32,
            sign_extend: false,
        }),
        width: 32,
        signed: false,
    };
    if which == "sizeInBytes" {
        ir::Expr::Binary {
            op: BinOp::Shr,
            a: Box::new(bits),
            b: Box::new(ir::Expr::constant(3, 32)),
            width: 32,
            signed: false,
        }
    } else {
        bits
    }
}
