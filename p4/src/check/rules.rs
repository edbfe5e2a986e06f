//! Typing rules of the P4_16 subset: which operand types an operator takes and what it yields,
//! which casts are legal, which conversions happen implicitly, and whether a literal fits.
//! Pure functions over [`Ty`]; the lowering calls them and turns a refusal into a diagnostic.

use crate::ast::BinOp;
use crate::check::types::Ty;

/// How a binary operator types its operands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpClass {
    /// `+ - * / % |+| |-| & | ^`: both operands the same `bit<W>`/`int<W>`, result the same.
    Arith,
    /// `<< >>`: result has the left operand's type; the right is an unsigned amount.
    Shift,
    /// `== !=`: operands of the same type, result `bool`.
    Equality,
    /// `< <= > >=`: same numeric type, result `bool`.
    Order,
    /// `&& ||`: `bool` operands.
    Logic,
    /// `++`: bit strings of known width; result width is the sum.
    Concat,
}

pub fn op_class(op: BinOp) -> OpClass {
    match op {
        BinOp::Mul
        | BinOp::Div
        | BinOp::Mod
        | BinOp::Add
        | BinOp::Sub
        | BinOp::AddSat
        | BinOp::SubSat
        | BinOp::BitAnd
        | BinOp::BitXor
        | BinOp::BitOr => OpClass::Arith,
        BinOp::Shl | BinOp::Shr => OpClass::Shift,
        BinOp::Eq | BinOp::Ne => OpClass::Equality,
        BinOp::Lt | BinOp::Gt | BinOp::Le | BinOp::Ge => OpClass::Order,
        BinOp::And | BinOp::Or => OpClass::Logic,
        BinOp::Concat => OpClass::Concat,
    }
}

/// Result type of `a op b` once int literals have adopted the other side's type; `Err` is the
/// "what is wrong" text.
pub fn binary_result(op: BinOp, a: &Ty, b: &Ty) -> Result<Ty, String> {
    let sym = op.as_str();
    match op_class(op) {
        OpClass::Arith => {
            if !a.is_numeric() {
                return Err(format!("`{sym}` needs bit strings, found `{a}`"));
            }
            if !b.is_numeric() {
                return Err(format!("`{sym}` needs bit strings, found `{b}`"));
            }
            if a != b {
                return Err(format!("`{sym}` on different types `{a}` and `{b}`"));
            }
            if *a == Ty::InfInt && matches!(op, BinOp::AddSat | BinOp::SubSat) {
                return Err(format!(
                    "`{sym}` needs a fixed width, both operands are `int`"
                ));
            }
            Ok(a.clone())
        }
        OpClass::Shift => {
            if !a.is_numeric() {
                return Err(format!(
                    "`{sym}` needs a bit string on the left, found `{a}`"
                ));
            }
            if !matches!(b, Ty::Bit(_) | Ty::InfInt) {
                return Err(format!(
                    "`{sym}` needs an unsigned shift amount, found `{b}`"
                ));
            }
            Ok(a.clone())
        }
        OpClass::Equality => {
            if a != b {
                return Err(format!("`{sym}` compares different types `{a}` and `{b}`"));
            }
            if !(a.is_scalar() || *a == Ty::InfInt) {
                return Err(format!("`{sym}` on `{a}` values is not supported"));
            }
            Ok(Ty::Bool)
        }
        OpClass::Order => {
            if !a.is_numeric() || !b.is_numeric() {
                return Err(format!("`{sym}` needs numbers, found `{a}` and `{b}`"));
            }
            if a != b {
                return Err(format!("`{sym}` compares different types `{a}` and `{b}`"));
            }
            Ok(Ty::Bool)
        }
        OpClass::Logic => {
            if *a != Ty::Bool || *b != Ty::Bool {
                return Err(format!(
                    "`{sym}` needs `bool` operands, found `{a}` and `{b}`"
                ));
            }
            Ok(Ty::Bool)
        }
        OpClass::Concat => match (a, b) {
            (Ty::Bit(x) | Ty::Int(x), Ty::Bit(y) | Ty::Int(y)) => {
                let w = u32::from(*x) + u32::from(*y);
                if w > crate::check::types::MAX_WIDTH {
                    return Err(format!("`++` result of {w} bits is wider than 128 bits"));
                }
                Ok(if a.is_signed() {
                    Ty::Int(w as u16)
                } else {
                    Ty::Bit(w as u16)
                })
            }
            _ => Err(format!(
                "`++` needs bit strings of known width, found `{a}` and `{b}`"
            )),
        },
    }
}

/// Whether an explicit cast `(to) e` with `e: from` is legal in P4_16.
pub fn cast_allowed(from: &Ty, to: &Ty) -> bool {
    match (from, to) {
        _ if from == to => true,
        (Ty::InfInt, Ty::Bit(_) | Ty::Int(_)) => true,
        (Ty::Bit(_), Ty::Bit(_)) => true,
        (Ty::Int(_), Ty::Int(_)) => true,
        (Ty::Bit(a), Ty::Int(b)) | (Ty::Int(a), Ty::Bit(b)) => a == b,
        (Ty::Bool, Ty::Bit(1)) | (Ty::Bit(1), Ty::Bool) => true,
        (Ty::InfInt, Ty::Bool) => true,
        (Ty::Enum(e), Ty::Bit(_) | Ty::Int(_)) => e.serializable,
        (Ty::Bit(_) | Ty::Int(_) | Ty::InfInt, Ty::Enum(e)) => e.serializable,
        _ => false,
    }
}

/// Whether a value of type `from` may be used where `to` is expected without a cast (besides
/// `int` literals, which [`fit_literal`] handles).
pub fn implicit_ok(from: &Ty, to: &Ty) -> bool {
    from == to
        || matches!((from, to), (Ty::Enum(e), Ty::Bit(w) | Ty::Int(w)) if e.serializable && e.width == *w)
}

/// The bit pattern of integer constant `v` as a `ty` (`bit<W>`, `int<W>`, `bool` from 0/1),
/// or why it does not fit.
pub fn fit_literal(v: i128, ty: &Ty) -> Result<u128, String> {
    match ty {
        Ty::Bit(w) => {
            let w = u32::from(*w);
            let max: i128 = if w >= 127 {
                i128::MAX
            } else {
                (1i128 << w) - 1
            };
            let min: i128 = if w >= 127 {
                i128::MIN
            } else {
                -(1i128 << w.saturating_sub(1))
            };
            if v > max || v < min {
                return Err(format!("{v} does not fit in `bit<{w}>`"));
            }
            Ok(mask(v as u128, w as u16))
        }
        Ty::Int(w) => {
            let w = u32::from(*w);
            let max: i128 = if w >= 128 {
                i128::MAX
            } else {
                (1i128 << (w - 1)) - 1
            };
            let min: i128 = if w >= 128 {
                i128::MIN
            } else {
                -(1i128 << (w - 1))
            };
            if v > max || v < min {
                return Err(format!("{v} does not fit in `int<{w}>`"));
            }
            Ok(mask(v as u128, w as u16))
        }
        Ty::Enum(e) if e.serializable => fit_literal(v, &Ty::Bit(e.width)),
        _ => Err(format!("an integer cannot be used as `{ty}`")),
    }
}

/// `v` truncated to `width` bits.
pub fn mask(v: u128, width: u16) -> u128 {
    if width >= 128 {
        v
    } else {
        v & ((1u128 << width) - 1)
    }
}

/// `v` (a `width`-bit two's complement pattern) as a signed number.
pub fn sign_extend(v: u128, width: u16) -> i128 {
    if width == 0 || width >= 128 {
        return v as i128;
    }
    let shift = 128 - u32::from(width);
    ((v << shift) as i128) >> shift
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literal_fitting() {
        assert_eq!(fit_literal(255, &Ty::Bit(8)), Ok(255));
        assert!(fit_literal(256, &Ty::Bit(8)).is_err());
        assert_eq!(fit_literal(-1, &Ty::Bit(8)), Ok(255));
        assert_eq!(fit_literal(-128, &Ty::Int(8)), Ok(0x80));
        assert!(fit_literal(128, &Ty::Int(8)).is_err());
        assert_eq!(sign_extend(0x80, 8), -128);
    }

    #[test]
    fn operator_rules() {
        assert_eq!(
            binary_result(BinOp::Add, &Ty::Bit(8), &Ty::Bit(8)),
            Ok(Ty::Bit(8))
        );
        assert!(binary_result(BinOp::Add, &Ty::Bit(8), &Ty::Bit(16)).is_err());
        assert_eq!(
            binary_result(BinOp::Concat, &Ty::Bit(8), &Ty::Bit(4)),
            Ok(Ty::Bit(12))
        );
        assert_eq!(
            binary_result(BinOp::Lt, &Ty::Bit(8), &Ty::Bit(8)),
            Ok(Ty::Bool)
        );
        assert!(binary_result(BinOp::And, &Ty::Bit(1), &Ty::Bool).is_err());
        assert!(cast_allowed(&Ty::Bit(8), &Ty::Bit(16)));
        assert!(!cast_allowed(&Ty::Bit(8), &Ty::Int(16)));
        assert!(cast_allowed(&Ty::Bool, &Ty::Bit(1)));
    }
}
