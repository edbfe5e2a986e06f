//! IR expressions and PHV locations written back as a person reads them: roughly the P4
//! source (`hdr.ipv4.ttl <= 1`, `acl_counter.execute(..)`). The resource report, the compiler's
//! messages and `pisa trace` share it.

use crate::ir::{BinOp, Expr, FieldRef, HeaderId, PhvLayout, Pipeline, RegWord, UnOp, Value};

/// A value of a `width`-bit field or parameter named `name` as a person writes it (and the
/// control plane reads it back): 48-bit fields as MAC addresses (timestamps aside), 32- and
/// 128-bit address fields (`..addr..`, `..ip..`) as IPv4 / IPv6 addresses, type and checksum
/// fields in hex, other fields up to 64 bits in decimal, wider ones in hex.
pub fn value_text(v: Value, width: u16, name: &str) -> String {
    let leaf = name.rsplit('.').next().unwrap_or(name).to_ascii_lowercase();
    let time = leaf.contains("tstamp") || leaf.contains("time");
    let addr = leaf.contains("addr") || leaf.contains("ip") || leaf.contains("mac");
    let hex = ["type", "checksum", "csum", "crc"]
        .iter()
        .any(|w| leaf.contains(w));
    match width {
        48 if !time => {
            let b = (v as u64).to_be_bytes();
            format!(
                "{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}",
                b[2], b[3], b[4], b[5], b[6], b[7]
            )
        }
        32 if addr => std::net::Ipv4Addr::from(v as u32).to_string(),
        128 if addr => std::net::Ipv6Addr::from(v).to_string(),
        w if hex => format!("0x{v:0n$x}", n = usize::from(w.div_ceil(4))),
        w if w > 64 => format!("{v:#x}"),
        _ => v.to_string(),
    }
}

/// The name of the PHV field of `phv` at bits `start..end` (or the field covering `start`; a
/// bit range when none does).
pub fn phv_bits(phv: &PhvLayout, start: u32, end: u32) -> String {
    let exact = phv
        .fields
        .iter()
        .find(|f| f.field.offset == start && f.field.offset + u32::from(f.field.width) == end);
    let covering = || {
        phv.fields
            .iter()
            .find(|f| f.field.offset <= start && start < f.field.offset + u32::from(f.field.width))
    };
    if let Some(f) = exact {
        return f.name.clone();
    }
    match covering() {
        // Part of a field (one aliased onto its low bits): its bits, LSB-first as in P4.
        Some(f) if end <= f.field.offset + u32::from(f.field.width) => {
            let last = f.field.offset + u32::from(f.field.width) - 1;
            format!("{}[{}:{}]", f.name, last - start, last + 1 - end)
        }
        Some(f) => f.name.clone(),
        None => format!("phv[{start}..{end}]"),
    }
}

/// The name of a field of `phv`.
pub fn field_name(phv: &PhvLayout, f: FieldRef) -> String {
    phv_bits(phv, f.offset, f.offset.saturating_add(u32::from(f.width)))
}

/// Names things of one gress of one pipeline.
#[derive(Clone, Copy)]
pub struct Names<'a> {
    pub pipe: &'a Pipeline,
    pub phv: &'a PhvLayout,
}

impl<'a> Names<'a> {
    pub fn new(pipe: &'a Pipeline, phv: &'a PhvLayout) -> Self {
        Names { pipe, phv }
    }

    /// The name of the PHV field at bits `start..end` (see [`phv_bits`]).
    pub fn bits(&self, start: u32, end: u32) -> String {
        phv_bits(self.phv, start, end)
    }

    /// The name of a field.
    pub fn field(&self, f: FieldRef) -> String {
        field_name(self.phv, f)
    }

    /// `hdr.x.isValid()` for a header.
    pub fn valid(&self, h: HeaderId) -> String {
        match self.phv.headers.get(h.index()) {
            Some(info) => format!("{}.isValid()", info.name),
            None => format!("header#{}.isValid()", h.0),
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
            Expr::Field(f) => self.field(*f),
            Expr::Valid(h) => self.valid(*h),
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
            Expr::RegInput(RegWord::Lo) => "mem(value)".into(),
            Expr::RegInput(RegWord::Hi) => "mem(value.hi)".into(),
            Expr::RegisterParam(p) => match self.pipe.register_params.get(p.index()) {
                Some(rp) => format!("{}.read()", rp.name),
                None => "RegisterParam.read()".into(),
            },
            Expr::RegisterExecute { action, index, .. } => {
                match self.pipe.register_actions.get(action.index()) {
                    Some(ra) => match &**index {
                        Expr::SaluCounter { op, .. } => format!("{}.{}()", ra.name, op.method()),
                        i => format!("{}.execute({})", ra.name, self.expr(i)),
                    },
                    None => format!("RegisterAction#{}.execute(..)", action.0),
                }
            }
            Expr::Hash { hash, .. } => match self.pipe.hashes.get(hash.index()) {
                Some(h) => format!("{}.get(..)", h.name),
                None => "hash.get(..)".into(),
            },
            Expr::Random { .. } => "random.get()".into(),
            Expr::MinMax {
                max,
                lane,
                value,
                mask,
                index,
            } => format!(
                "{}{}{lane}({}, {})",
                if *index { "index_of_" } else { "" },
                if *max { "max" } else { "min" },
                self.expr(value),
                self.expr(mask)
            ),
            Expr::SaluPredicate { conds, .. } => {
                let cs: Vec<String> = conds.iter().map(|c| self.expr(c)).collect();
                format!("this.predicate({})", cs.join(", "))
            }
            Expr::SaluAddress { .. } => "this.address()".into(),
            Expr::SaluCounter { register, op } => match self.pipe.registers.get(register.index()) {
                Some(r) => format!("{}.counter.{}", r.name, op.method()),
                None => format!("register#{}.counter.{}", register.0, op.method()),
            },
            Expr::MathUnit { unit, input, .. } => {
                let table: Vec<String> = unit.table.iter().rev().map(|t| t.to_string()).collect();
                format!(
                    "MathUnit({}, {}, {}, {{{}}}).execute({})",
                    unit.invert,
                    unit.shift,
                    unit.scale,
                    table.join(", "),
                    self.expr(input)
                )
            }
            Expr::MeterExecute { meter, .. } => match self.pipe.meters.get(meter.index()) {
                Some(m) => format!("{}.execute(..)", m.name),
                None => "meter.execute(..)".into(),
            },
            Expr::FilterExecute { filter, value, .. } => {
                match self.pipe.filters.get(filter.index()) {
                    Some(f) => format!("{}.execute({})", f.name, self.expr(value)),
                    None => "filter.execute(..)".into(),
                }
            }
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
pub fn binop_str(op: BinOp) -> &'static str {
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
