//! Human-readable names for PHV locations and IR expressions, for the messages and the report.

use pipeline::ir::{BinOp, Expr, PhvLayout, Pipeline, RegWord, UnOp};

use super::effects::Loc;

/// Names things of one gress of one pipeline.
pub(crate) struct Names<'a> {
    pub pipe: &'a Pipeline,
    pub phv: &'a PhvLayout,
}

impl<'a> Names<'a> {
    pub fn new(pipe: &'a Pipeline, phv: &'a PhvLayout) -> Self {
        Names { pipe, phv }
    }

    /// The name of the PHV field covering `loc` (or a bit range when none does).
    pub fn loc(&self, loc: Loc) -> String {
        match loc {
            Loc::Valid(h) => match self.phv.headers.get(h.index()) {
                Some(info) => format!("{}.isValid()", info.name),
                None => format!("header#{}.isValid()", h.0),
            },
            Loc::Temp(n) => format!("(extern result #{n})"),
            Loc::Bits { start, end } => {
                let exact = self.phv.fields.iter().find(|f| {
                    f.field.offset == start && f.field.offset + u32::from(f.field.width) == end
                });
                let covering = || {
                    self.phv.fields.iter().find(|f| {
                        f.field.offset <= start && start < f.field.offset + u32::from(f.field.width)
                    })
                };
                match exact.or_else(covering) {
                    Some(f) => f.name.clone(),
                    None => format!("phv[{start}..{end}]"),
                }
            }
        }
    }

    /// Renders an expression roughly as P4 source.
    pub fn expr(&self, e: &Expr) -> String {
        match e {
            Expr::Const { value, .. } => {
                if *value > 255 {
                    format!("0x{value:x}")
                } else {
                    value.to_string()
                }
            }
            Expr::Field(f) => self.loc(Loc::field(*f)),
            Expr::Valid(h) => self.loc(Loc::Valid(*h)),
            Expr::Param { index, .. } => format!("param{index}"),
            Expr::Unary { op, arg, .. } => {
                let o = match op {
                    UnOp::Not => "~",
                    UnOp::Neg => "-",
                    UnOp::LNot => "!",
                };
                format!("{o}{}", self.paren(arg))
            }
            Expr::Binary { op, a, b, .. } => match op {
                BinOp::Min | BinOp::Max => {
                    let f = if *op == BinOp::Min { "min" } else { "max" };
                    format!("{f}({}, {})", self.expr(a), self.expr(b))
                }
                _ => format!("{} {} {}", self.paren(a), binop_str(*op), self.paren(b)),
            },
            Expr::Slice { arg, hi, lo } => format!("{}[{hi}:{lo}]", self.paren(arg)),
            Expr::Concat { hi, lo, .. } => format!("{} ++ {}", self.paren(hi), self.paren(lo)),
            Expr::Cast { arg, width, .. } => format!("(bit<{width}>){}", self.paren(arg)),
            Expr::Ternary {
                cond, then, els, ..
            } => format!(
                "{} ? {} : {}",
                self.paren(cond),
                self.paren(then),
                self.paren(els)
            ),
            Expr::Lookahead { width, .. } => format!("lookahead<bit<{width}>>()"),
            Expr::RegValue(RegWord::Lo) => "value".into(),
            Expr::RegValue(RegWord::Hi) => "value.hi".into(),
            Expr::RegisterParam(p) => match self.pipe.register_params.get(p.index()) {
                Some(rp) => format!("{}.read()", rp.name),
                None => "RegisterParam.read()".into(),
            },
            Expr::RegisterExecute { action, index, .. } => {
                match self.pipe.register_actions.get(action.index()) {
                    Some(ra) => format!("{}.execute({})", ra.name, self.expr(index)),
                    None => format!("RegisterAction#{}.execute(..)", action.0),
                }
            }
            Expr::Hash { hash, .. } => match self.pipe.hashes.get(hash.index()) {
                Some(h) => format!("{}.get(..)", h.name),
                None => "hash.get(..)".into(),
            },
            Expr::Random { .. } => "random.get()".into(),
            Expr::MeterExecute { meter, .. } => match self.pipe.meters.get(meter.index()) {
                Some(m) => format!("{}.execute(..)", m.name),
                None => "meter.execute(..)".into(),
            },
            Expr::ChecksumVerify(_) => "checksum.verify()".into(),
            Expr::ChecksumGet(_) => "checksum.get()".into(),
            Expr::ChecksumUpdate { .. } => "checksum.update(..)".into(),
        }
    }

    fn paren(&self, e: &Expr) -> String {
        match e {
            Expr::Binary { op, .. } if !matches!(op, BinOp::Min | BinOp::Max) => {
                format!("({})", self.expr(e))
            }
            Expr::Ternary { .. } => format!("({})", self.expr(e)),
            _ => self.expr(e),
        }
    }
}

/// The P4 spelling of a binary operator.
pub(crate) fn binop_str(op: BinOp) -> &'static str {
    match op {
        BinOp::Add => "+",
        BinOp::Sub => "-",
        BinOp::Mul => "*",
        BinOp::SatAdd => "|+|",
        BinOp::SatSub => "|-|",
        BinOp::Div => "/",
        BinOp::Mod => "%",
        BinOp::And => "&",
        BinOp::Or => "|",
        BinOp::Xor => "^",
        BinOp::Shl => "<<",
        BinOp::Shr => ">>",
        BinOp::Eq => "==",
        BinOp::Ne => "!=",
        BinOp::Lt => "<",
        BinOp::Le => "<=",
        BinOp::Gt => ">",
        BinOp::Ge => ">=",
        BinOp::LAnd => "&&",
        BinOp::LOr => "||",
        BinOp::Min => "min",
        BinOp::Max => "max",
    }
}
