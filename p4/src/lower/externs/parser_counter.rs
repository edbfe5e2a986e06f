//! `ParserCounter`: the parser's 8-bit counter (TLV and option loops), lowered onto a PHV word
//! of the parser. `set` loads an immediate, or a field byte rotated, masked and offset, raising
//! `CounterRange` when the byte is above `max`; `increment`/`decrement` add a constant (wrapping
//! like the hardware's int8); `is_zero`/`is_negative` are select keys only, and read false in
//! the state that loaded the counter from a field (the load lands a cycle later). Tofino 2's
//! `push`/`pop` and the stack under the counter are in [`stack`].

mod stack;

pub(crate) use stack::Stack;

use pipeline::ir::{self, BinOp, Expr, FieldRef, Target};

use super::{Call, Ctor, ExternType, Kind};
use crate::ast;
use crate::check::types::Ty;
use crate::diag::Diagnostic;
use crate::lower::expr::fold;
use crate::lower::phv::Loc;
use crate::lower::{Ctx, Lowerer, Res, V};

/// `ParserCounter`.
pub(super) struct ParserCounters;

impl ExternType for ParserCounters {
    fn names(&self) -> &'static [&'static str] {
        &["ParserCounter"]
    }

    fn instantiate<'a>(&self, l: &mut Lowerer<'a>, c: &Ctor<'a>) -> Res<Kind> {
        c.arity(l, 0, 0)?;
        c.in_parser(l, "declare it inside the parser that uses it")?;
        let value = field(l, &format!("{}.$counter", c.name), 8, c)?;
        let stack = match l.target {
            Target::Tofino1 => None,
            Target::Tofino2 => Some(stack::Stack::alloc(l, c)?),
        };
        Ok(Kind::ParserCounter { value, stack })
    }

    fn method<'a>(
        &self,
        l: &mut Lowerer<'a>,
        c: &Call<'a, '_>,
        out: Option<&mut ir::Block>,
    ) -> Res<Option<V>> {
        let Kind::ParserCounter { value: ctr, stack } = c.x.kind else {
            return Err(crate::lower::Reported);
        };
        let (m, span, nargs) = (c.m, c.span, c.args.len());
        if l.ctx != Ctx::Parser {
            return Err(l.err(
                Diagnostic::error(format!("`ParserCounter.{m}` is only allowed in a parser"))
                    .with_primary(c.member.span, "here"),
            ));
        }
        match m {
            "set" => {
                let (mut stmts, load) = set(l, c, ctr, c.args)?;
                if let Some(s) = &stack {
                    stmts.extend(s.add_load(load));
                }
                l.need_stmt(out, span, m)?.extend(stmts);
                Ok(None)
            }
            "increment" | "decrement" => {
                let [a] = c.args else {
                    return Err(l.arg_count(m, 1, nargs, span));
                };
                let by = constant(l, &a.value, m, 255)?;
                let op = if m == "increment" {
                    BinOp::Add
                } else {
                    BinOp::Sub
                };
                let value = bin(op, Expr::Field(ctr), Expr::constant(by, 8), 8);
                let stmts = l.need_stmt(out, span, m)?;
                stmts.push(assign(ctr, value));
                if let Some(s) = &stack {
                    stmts.extend(s.add(op, by));
                }
                Ok(None)
            }
            "is_zero" | "is_negative" => {
                if nargs != 0 {
                    return Err(l.arg_count(m, 0, nargs, span));
                }
                if !l.in_select {
                    return Err(l.err(
                        Diagnostic::error(format!(
                            "`ParserCounter.{m}()` can only be a `select` key"
                        ))
                        .with_primary(span, "not in a select")
                        .with_help("the parser matches the counter's flags in its select; assign nothing from them"),
                    ));
                }
                let flag = if l.counters_loaded.contains(&ctr) {
                    Expr::constant(0, 1)
                } else if m == "is_zero" {
                    bin(BinOp::Eq, Expr::Field(ctr), Expr::constant(0, 8), 1)
                } else {
                    Expr::Slice {
                        arg: Box::new(Expr::Field(ctr)),
                        hi: 7,
                        lo: 7,
                    }
                };
                Ok(Some(V::Scalar(flag, Ty::Bool)))
            }
            "push" | "pop" => {
                let Some(s) = stack else {
                    return Err(l.err(
                        Diagnostic::error(format!(
                            "`ParserCounter.{m}` needs Tofino 2: a Tofino 1 parser counter has no stack"
                        ))
                        .with_primary(c.member.span, "Tofino 2 only"),
                    ));
                };
                let stmts = if m == "push" {
                    s.push(l, c, ctr)?
                } else if nargs != 0 {
                    return Err(l.arg_count(m, 0, nargs, span));
                } else {
                    l.counters_loaded.retain(|f| *f != ctr);
                    s.pop(ctr)
                };
                l.need_stmt(out, span, m)?.extend(stmts);
                Ok(None)
            }
            _ => Err(l.err(
                Diagnostic::error(format!("`ParserCounter` has no method `{m}`"))
                    .with_primary(c.member.span, "unknown method"),
            )),
        }
    }
}

/// What a load put in the counter: an immediate, or a field through a counter init RAM row.
#[derive(Debug, Clone, Copy)]
enum Load {
    Imm(u128),
    Row(usize),
}

/// A PHV field of the parser, `width` bits, named `name`.
fn field<'a>(l: &mut Lowerer<'a>, name: &str, width: u16, c: &Ctor<'a>) -> Res<FieldRef> {
    let loc = l.alloc(name, &Ty::Bit(width), c.inst.name.span)?;
    let Loc::Field { f, .. } = &*loc else {
        return Err(crate::lower::Reported);
    };
    Ok(*f)
}

/// The load of `set(value)` or `set(field, max, rotate, mask, add)` (`args`; `push` passes
/// its own less `update_with_top`).
fn set<'a>(
    l: &mut Lowerer<'a>,
    c: &Call<'a, '_>,
    ctr: FieldRef,
    args: &'a [ast::Argument],
) -> Res<(Vec<ir::Stmt>, Load)> {
    let (span, nargs, m) = (c.span, args.len(), c.m);
    if nargs != 1 && nargs != 5 {
        return Err(l.err(
            Diagnostic::error(format!(
                "`ParserCounter.{m}` takes 1 or 5 arguments{}, {nargs} given",
                if m == "push" { " and an optional `update_with_top`" } else { "" }
            ))
            .with_primary(span, match m {
                "push" => "push(value[, update_with_top]) or push(field, max, rotate, mask, add[, update_with_top])",
                _ => "set(value) or set(field, max, rotate, mask, add)",
            }),
        ));
    }
    let (v, _) = match l.expr(&args[0].value, None)? {
        // An untyped `int` literal, as in `set(4)`: the counter's 8 bits.
        V::Int(i) if (0..=255).contains(&i) => (Expr::constant(i as u128, 8), Ty::Bit(8)),
        V::Int(i) => {
            return Err(l.err(
                Diagnostic::error(format!(
                    "the counter's value {i} does not fit the 8-bit parser counter"
                ))
                .with_primary(args[0].value.span, "out of range"),
            ))
        }
        v => l.scalar_of_value(v, None, args[0].value.span)?,
    };
    if nargs == 1 {
        if let Expr::Const { value, .. } = fold(v.clone()) {
            let imm = check_byte(l, value, &args[0].value, "the counter's value")?;
            return Ok((vec![assign(ctr, Expr::constant(imm, 8))], Load::Imm(imm)));
        }
    }
    let (max, rotate, mask) = if nargs == 5 {
        let max = constant(l, &args[1].value, "max", 255)?;
        let rotate = constant(l, &args[2].value, "rotate", 7)?;
        let mask = match l.target {
            // Tofino 1 encodes the mask as its width less one: 2^(m+1) - 1.
            Target::Tofino1 => (1u128 << (constant(l, &args[3].value, "mask", 7)? + 1)) - 1,
            Target::Tofino2 => constant(l, &args[3].value, "mask", 255)?,
        };
        (max, rotate, mask)
    } else {
        (255, 0, 255)
    };
    let add = match args.get(4) {
        Some(a) => constant(l, &a.value, "add", 255)?,
        None => 0,
    };
    let row = init_row(l, span, [max, rotate, mask, add])?;
    l.counters_loaded.push(ctr);
    let byte = Expr::Cast {
        arg: Box::new(v),
        width: 8,
        sign_extend: false,
    };
    let mut out = Vec::new();
    if max < 255 {
        out.push(ir::Stmt::CounterRange {
            cond: bin(BinOp::Gt, byte.clone(), Expr::constant(max, 8), 1),
        });
    }
    let rotated = if rotate == 0 {
        byte
    } else {
        let right = bin(BinOp::Shr, byte.clone(), Expr::constant(rotate, 8), 8);
        let left = bin(BinOp::Shl, byte, Expr::constant(8 - rotate, 8), 8);
        bin(BinOp::Or, right, left, 8)
    };
    let masked = match mask {
        255 => rotated,
        _ => bin(BinOp::And, rotated, Expr::constant(mask, 8), 8),
    };
    let loaded = match add {
        0 => masked,
        _ => bin(BinOp::Add, masked, Expr::constant(add, 8), 8),
    };
    out.push(assign(ctr, loaded));
    Ok((out, Load::Row(row)))
}

/// Rows of a gress parser's counter init RAM: every load from a field takes the row of its
/// configuration (bf-asm's `PARSER_CTRINIT_ROWS`).
const COUNTER_INIT_ROWS: usize = 16;

/// A field load configured `[max, rotate, mask, add]` takes a row of this gress's counter
/// init RAM (its number returned); loads configured alike share one. The hardware's row also
/// names the match byte the field is read from, which only the match register allocation
/// knows: loads differing in that alone are counted as one, so what is refused here bf-p4c
/// refuses too.
fn init_row(l: &mut Lowerer<'_>, span: crate::source::Span, cfg: [u128; 4]) -> Res<usize> {
    let gress = l.gress;
    let rows = &mut l.pipe.counter_init_rows;
    let mut ours = rows.iter().filter(|(g, _)| *g == gress).map(|(_, c)| c);
    if let Some(row) = ours.position(|c| *c == cfg) {
        return Ok(row);
    }
    let used = rows.iter().filter(|(g, _)| *g == gress).count();
    if used < COUNTER_INIT_ROWS {
        rows.push((gress, cfg));
        return Ok(used);
    }
    Err(l.err(
        Diagnostic::error(format!(
            "ran out of room in the {gress} parser's counter init RAM ({COUNTER_INIT_ROWS} rows available)"
        ))
        .with_primary(span, "a 17th distinct load from a field")
        .with_note("each `set` from a field with a different (max, rotate, mask, add) takes a row of its own"),
    ))
}

/// A constant argument from 0 to `max` (bf-p4c's limits for the counter's fields).
fn constant<'a>(l: &mut Lowerer<'a>, e: &'a crate::ast::Expr, what: &str, max: u128) -> Res<u128> {
    let value = l.const_int(e)?;
    if !(0..=max as i128).contains(&value) {
        return Err(l.err(
            Diagnostic::error(format!(
                "the parser counter's `{what}` is {value}, at most {max}"
            ))
            .with_primary(e.span, "out of range"),
        ));
    }
    Ok(value as u128)
}

fn check_byte(l: &mut Lowerer<'_>, v: u128, e: &crate::ast::Expr, what: &str) -> Res<u128> {
    if v > 255 {
        return Err(l.err(
            Diagnostic::error(format!("{what} {v} does not fit the 8-bit parser counter"))
                .with_primary(e.span, "out of range"),
        ));
    }
    Ok(v)
}

fn bin(op: BinOp, a: Expr, b: Expr, width: u16) -> Expr {
    Expr::Binary {
        op,
        a: Box::new(a),
        b: Box::new(b),
        width,
        signed: false,
    }
}

fn assign(dst: FieldRef, value: Expr) -> ir::Stmt {
    ir::Stmt::Assign {
        dst: ir::Place::Field(dst),
        value,
    }
}
