//! Semantic types: what the checker knows about a value after resolving typedefs, generic
//! arguments and widths. Headers, structs and enums are shared behind `Rc` because the same
//! declaration is referenced from many places.

use std::fmt;
use std::rc::Rc;

/// Widest bit string pisa computes on (the IR's `Value` is a `u128`).
pub const MAX_WIDTH: u32 = 128;

/// Widest `bit<W>` type: fields wider than [`MAX_WIDTH`] are carried (extracted, emitted,
/// copied whole, sliced to at most 128 bits), never computed on whole.
pub const MAX_FIELD_WIDTH: u32 = 2048;

/// Width of `error` values (TNA's `parser_err` is `bit<16>`).
pub const ERROR_WIDTH: u16 = 16;

/// A resolved type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ty {
    Bool,
    /// `int`: an arbitrary-precision compile-time integer.
    InfInt,
    Bit(u16),
    Int(u16),
    /// `varbit<N>`: up to N bits, the length set per packet (a header field only).
    Varbit(u16),
    Error,
    MatchKind,
    String,
    Void,
    Enum(Rc<EnumTy>),
    Header(Rc<StructTy>),
    Struct(Rc<StructTy>),
    /// A header stack `elem[size]`.
    Stack(Box<Ty>, u32),
    /// `tuple<...>` or the type of a list expression.
    Tuple(Vec<Ty>),
    /// An extern type with its type arguments bound (`Register<bit<32>, bit<16>>`).
    Extern {
        name: String,
        args: Vec<Ty>,
    },
    /// A parser, control or package type, by declaration name.
    Block(String),
    /// `_` (a type argument the program leaves to inference).
    DontCare,
}

/// A header, struct or header union type. A header union is a `Ty::Struct` whose fields are
/// all headers and whose `union` is set: at most one of them is valid at a time.
#[derive(Debug, PartialEq, Eq)]
pub struct StructTy {
    pub name: String,
    pub fields: Vec<(String, Ty)>,
    /// A `header_union` (P4_16 §7.2.4 and §8.20).
    pub union: bool,
}

impl StructTy {
    /// The type of field `name`, if it exists.
    pub fn field(&self, name: &str) -> Option<(usize, &Ty)> {
        self.fields
            .iter()
            .enumerate()
            .find(|(_, (n, _))| n == name)
            .map(|(i, (_, t))| (i, t))
    }

    /// Field names joined for a `help:` line.
    pub fn field_list(&self) -> String {
        let names: Vec<&str> = self.fields.iter().map(|(n, _)| n.as_str()).collect();
        names.join(", ")
    }
}

/// An enum type; `serializable` enums (`enum bit<8> E {..}`) have the width of their repr and
/// explicit member values, plain enums get the smallest width that numbers their members.
#[derive(Debug, PartialEq, Eq)]
pub struct EnumTy {
    pub name: String,
    pub width: u16,
    pub serializable: bool,
    pub members: Vec<(String, u128)>,
}

impl EnumTy {
    pub fn member(&self, name: &str) -> Option<u128> {
        self.members
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| *v)
    }
}

impl Ty {
    /// Width in bits of a scalar (bit, int, bool, enum, error) value.
    pub fn scalar_width(&self) -> Option<u16> {
        match self {
            Ty::Bool => Some(1),
            Ty::Bit(w) | Ty::Int(w) => Some(*w),
            Ty::Enum(e) => Some(e.width),
            Ty::Error => Some(ERROR_WIDTH),
            _ => None,
        }
    }

    /// Total width of a value of this type when serialized (headers, structs, stacks included).
    pub fn flat_width(&self) -> Option<u32> {
        match self {
            Ty::Header(s) | Ty::Struct(s) => {
                let mut total = 0u32;
                for (_, t) in &s.fields {
                    total += t.flat_width()?;
                }
                Some(total)
            }
            Ty::Stack(elem, n) => Some(elem.flat_width()? * n),
            Ty::Tuple(ts) => {
                let mut total = 0u32;
                for t in ts {
                    total += t.flat_width()?;
                }
                Some(total)
            }
            other => other.scalar_width().map(u32::from),
        }
    }

    /// The bits a header of this type reserves: [`Ty::flat_width`] with each `varbit<N>`
    /// counted at its largest, N.
    pub fn max_flat_width(&self) -> Option<u32> {
        match self {
            Ty::Varbit(n) => Some(u32::from(*n)),
            Ty::Header(s) | Ty::Struct(s) => s.fields.iter().map(|(_, t)| t.max_flat_width()).sum(),
            other => other.flat_width(),
        }
    }

    /// Whether a header or struct of this type holds a `varbit` field.
    pub fn has_varbit(&self) -> bool {
        match self {
            Ty::Varbit(_) => true,
            Ty::Header(s) | Ty::Struct(s) => s.fields.iter().any(|(_, t)| t.has_varbit()),
            Ty::Stack(e, _) => e.has_varbit(),
            _ => false,
        }
    }

    pub fn is_signed(&self) -> bool {
        matches!(self, Ty::Int(_))
    }

    /// True for `bit<W>` and `int<W>`.
    pub fn is_bits(&self) -> bool {
        matches!(self, Ty::Bit(_) | Ty::Int(_))
    }

    /// True for `bit<W>`, `int<W>` and `int`.
    pub fn is_numeric(&self) -> bool {
        matches!(self, Ty::Bit(_) | Ty::Int(_) | Ty::InfInt)
    }

    /// True when the value lives in one PHV field.
    pub fn is_scalar(&self) -> bool {
        self.scalar_width().is_some()
    }

    /// The name of an extern type.
    pub fn extern_name(&self) -> Option<&str> {
        match self {
            Ty::Extern { name, .. } => Some(name),
            _ => None,
        }
    }
}

impl fmt::Display for Ty {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Ty::Bool => f.write_str("bool"),
            Ty::InfInt => f.write_str("int"),
            Ty::Bit(w) => write!(f, "bit<{w}>"),
            Ty::Int(w) => write!(f, "int<{w}>"),
            Ty::Varbit(w) => write!(f, "varbit<{w}>"),
            Ty::Error => f.write_str("error"),
            Ty::MatchKind => f.write_str("match_kind"),
            Ty::String => f.write_str("string"),
            Ty::Void => f.write_str("void"),
            Ty::Enum(e) => f.write_str(&e.name),
            Ty::Header(s) | Ty::Struct(s) => f.write_str(&s.name),
            Ty::Stack(e, n) => write!(f, "{e}[{n}]"),
            Ty::Tuple(ts) => {
                f.write_str("tuple<")?;
                for (i, t) in ts.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{t}")?;
                }
                f.write_str(">")
            }
            Ty::Extern { name, args } => {
                f.write_str(name)?;
                if !args.is_empty() {
                    f.write_str("<")?;
                    for (i, t) in args.iter().enumerate() {
                        if i > 0 {
                            f.write_str(", ")?;
                        }
                        write!(f, "{t}")?;
                    }
                    f.write_str(">")?;
                }
                Ok(())
            }
            Ty::Block(n) => f.write_str(n),
            Ty::DontCare => f.write_str("_"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widths_and_display() {
        let h = Rc::new(StructTy {
            name: "h_t".into(),
            fields: vec![("a".into(), Ty::Bit(4)), ("b".into(), Ty::Int(12))],
            union: false,
        });
        let t = Ty::Header(h.clone());
        assert_eq!(t.flat_width(), Some(16));
        assert_eq!(Ty::Stack(Box::new(t.clone()), 3).flat_width(), Some(48));
        assert_eq!(t.to_string(), "h_t");
        assert_eq!(h.field("b").map(|(i, _)| i), Some(1));
        assert_eq!(Ty::Bool.scalar_width(), Some(1));
        assert_eq!(
            Ty::Extern {
                name: "Register".into(),
                args: vec![Ty::Bit(32), Ty::Bit(16)]
            }
            .to_string(),
            "Register<bit<32>, bit<16>>"
        );
    }
}
