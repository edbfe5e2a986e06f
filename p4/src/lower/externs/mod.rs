//! TNA externs: what an instantiation creates in the pipeline (registers, register actions with
//! their lowered `apply` bodies, hashes, counters, meters, checksums, digests, ...) and what
//! each method call lowers to. Each extern type (or family of them) is one file behind the
//! [`ExternType`] trait; [`EXTERNS`] lists them, and this module dispatches by type name. The
//! architecture header declares the externs; their meaning is given here.

pub(crate) mod byte_count;
mod checksum;
mod counter;
pub(crate) mod deparser_rules;
mod field_validity;
mod filter;
mod hash;
mod math_unit;
mod meter;
mod min_max;
mod packet_io;
mod parser_counter;
mod parser_priority;
mod register;
mod register_action;
mod salu_reads;
mod selector_action;

use std::rc::Rc;

use pipeline::ir::{
    self, ChecksumId, CounterId, CrcSpec, DigestId, HashId, MeterId, RegisterActionId, RegisterId,
    RegisterParamId,
};

use super::expr::path_of;
use super::{Ctx, Lowerer, Res, V};
use crate::ast::{self, DeclKind};
use crate::check::types::Ty;
use crate::diag::Diagnostic;
use crate::source::Span;

/// What an extern instance is.
#[derive(Debug, Clone)]
pub(crate) enum Kind {
    Register {
        id: RegisterId,
        direct: bool,
        value: Ty,
        /// The index type `I` (None: any unsigned bits).
        index: Option<Ty>,
    },
    RegisterAction {
        id: RegisterActionId,
        out: Option<Ty>,
        /// Tofino 2: the types of the extra outputs `rv2..` its `apply` declares.
        more: Vec<Ty>,
        direct: bool,
        /// The index type `I` (None: any unsigned bits).
        index: Option<Ty>,
    },
    RegisterParam {
        id: RegisterParamId,
        ty: Ty,
    },
    Hash {
        id: HashId,
        width: u16,
        /// `@symmetric("a", "b")` pairs: field paths whose values may swap without changing
        /// the hash.
        symmetric: Vec<(String, String, Span)>,
    },
    Random {
        width: u16,
    },
    Counter {
        id: CounterId,
        direct: bool,
        index: Option<Ty>,
    },
    Meter {
        id: MeterId,
        direct: bool,
        index: Option<Ty>,
    },
    Checksum {
        id: ChecksumId,
    },
    /// An `Lpf` / `Wred` (or a direct one).
    Filter {
        id: pipeline::ir::FilterId,
        direct: bool,
        /// The filtered type `T`, and the index type `I` (None: any unsigned bits).
        value: Ty,
        index: Option<Ty>,
    },
    /// A `ParserCounter`: its value lives in a PHV word of the parser.
    ParserCounter {
        value: pipeline::ir::FieldRef,
        /// Tofino 2's stack under the counter (None on Tofino 1).
        stack: Option<parser_counter::Stack>,
    },
    /// A `ParserPriority`: accepted, changes nothing (see `parser_priority`).
    ParserPriority,
    /// `Mirror`, `Resubmit`, with Tofino 2's constructor argument (the table entry) if given.
    Mirror {
        entry: Option<u128>,
    },
    Resubmit {
        entry: Option<u128>,
    },
    /// Tofino 2's `Pktgen` (the deparser trigger of the packet generator).
    Pktgen,
    Digest {
        id: DigestId,
        ty: Ty,
        entry: Option<u128>,
    },
    CrcPoly(CrcSpec),
    /// A configured `MathUnit<T>` (used inside RegisterAction bodies).
    MathUnit {
        unit: Box<pipeline::externs::math_unit::MathUnit>,
        ty: Ty,
    },
    /// An `ActionProfile`, or an `ActionSelector` (the profile it selects from).
    ActionProfile {
        id: pipeline::ir::ActionProfileId,
    },
    /// `Alpm` / `Atcam`: how bf-p4c lays a table out in memory; the table matches the same.
    TableLayout(crate::resources::layout::AtcamLayout),
    /// `this` inside a MinMaxAction's `apply`: its min/max unit over `lane`-bit lanes.
    MinMaxUnit {
        lane: u16,
        /// The action's (first) output type: what `this.address()` / `this.predicate()` give.
        out: Option<Ty>,
    },
    /// `this` inside a RegisterAction's `apply`: its stateful ALU (`predicate` over `conds`
    /// compare units, returning `out`).
    SaluThis {
        out: Option<Ty>,
        conds: usize,
    },
}

/// An extern instance.
#[derive(Debug)]
pub(crate) struct ExternInst {
    pub name: String,
    /// The extern type's name (`Register`, `Hash`, ...).
    pub type_name: String,
    pub kind: Kind,
}

/// Externs TNA declares that pisa does not model, with what they are.
const UNSUPPORTED: &[(&str, &str)] = &[
    (
        "LearnAction",
        "Tofino 2's hardware learning (what its `digest` and `learn` inputs do to the register is not public)",
    ),
    ("LearnAction2", "Tofino 2's hardware learning"),
    ("LearnAction3", "Tofino 2's hardware learning"),
    ("LearnAction4", "Tofino 2's hardware learning"),
    (
        "IdleTimeout",
        "Tofino 2's `IdleTimeout` instance (entry aging is modelled through the table property `idle_timeout = true`, with bf-rt's `$ENTRY_TTL` and `$ENTRY_HIT_STATE`)",
    ),
];

/// What an instantiation gives an extern type: the instance, its resolved type arguments and
/// constructor arguments, and where it is.
pub(crate) struct Ctor<'a> {
    pub tname: String,
    pub name: String,
    pub targs: Vec<Ty>,
    pub args: Vec<&'a ast::Expr>,
    pub decl: &'a ast::Decl,
    pub inst: &'a ast::Instantiation,
    pub gress: pipeline::ir::Gress,
}

impl<'a> Ctor<'a> {
    /// An extern type of a family that the family does not model (yet).
    pub fn unsupported(&self, l: &mut Lowerer<'a>) -> crate::lower::Reported {
        let t = &self.tname;
        l.err(crate::check::unsupported(
            self.inst.ty.span,
            &format!("extern `{t}`"),
            &format!("`{t}`"),
        ))
    }

    /// Constructor argument `k` as an array size (`what`: counter, meter, register): a
    /// constant from 1 to 2^20.
    pub fn size(&self, l: &mut Lowerer<'a>, k: usize, what: &str) -> Res<u32> {
        let e = self.args[k];
        let n = l.const_int(e)?;
        if !(1..=MAX_ARRAY_SIZE).contains(&n) {
            return Err(l.err(
                Diagnostic::error(format!("{what} size {n} out of range"))
                    .with_primary(e.span, "invalid size")
                    .with_help(format!("use 1 to {MAX_ARRAY_SIZE} cells")),
            ));
        }
        Ok(n as u32)
    }

    /// Refuses an instance declared outside a parser (`help`: where it belongs).
    pub fn in_parser(&self, l: &mut Lowerer<'a>, help: &str) -> Res<()> {
        if l.ctx == Ctx::Parser {
            return Ok(());
        }
        Err(l.err(
            Diagnostic::error(format!("a `{}` belongs to a parser", self.tname))
                .with_primary(self.inst.name.span, "declared outside a parser")
                .with_help(help.to_string()),
        ))
    }

    /// Type argument `k`, if given.
    pub fn targ(&self, k: usize) -> Option<Ty> {
        self.targs.get(k).cloned()
    }

    /// Refuses a constructor argument count outside `min..=max`.
    pub fn arity(&self, l: &mut Lowerer<'a>, min: usize, max: usize) -> Res<()> {
        let n = self.args.len();
        if n >= min && n <= max {
            return Ok(());
        }
        let want = if min == max {
            format!("{min}")
        } else {
            format!("{min} to {max}")
        };
        Err(l.err(
            Diagnostic::error(format!(
                "`{}` takes {want} constructor argument(s), {n} given",
                self.tname
            ))
            .with_primary(self.inst.ty.span, "wrong number of arguments"),
        ))
    }
}

/// Most cells of an indexed counter, meter or register.
const MAX_ARRAY_SIZE: i128 = 1 << 20;

/// A method call on an extern instance.
pub(crate) struct Call<'a, 'x> {
    pub x: &'x ExternInst,
    pub m: &'a str,
    /// The instance as the program names it here.
    pub xname: String,
    pub args: &'a [ast::Argument],
    /// The method's type arguments (`mirror.emit<H>(..)`).
    pub type_args: &'a [ast::Type],
    pub member: &'a ast::Ident,
    pub span: Span,
}

/// One TNA extern type, or a family of them: how an instance is made and how its methods lower.
pub(crate) trait ExternType: Sync {
    /// The extern type names it handles.
    fn names(&self) -> &'static [&'static str];
    /// What an instance is (the pipeline objects it creates are added on the way).
    fn instantiate<'a>(&self, l: &mut Lowerer<'a>, c: &Ctor<'a>) -> Res<Kind>;
    /// A method call: a value, or statements appended to `out`.
    fn method<'a>(
        &self,
        l: &mut Lowerer<'a>,
        c: &Call<'a, '_>,
        out: Option<&mut ir::Block>,
    ) -> Res<Option<V>>;
}

/// Every extern type pisa models, besides the action profiles and table layouts
/// (`super::profiles`).
static EXTERNS: &[&dyn ExternType] = &[
    &register::Registers,
    &register_action::RegisterActions,
    &hash::Hashes,
    &counter::Counters,
    &meter::Meters,
    &checksum::Checksums,
    &parser_counter::ParserCounters,
    &parser_priority::ParserPriorities,
    &filter::Filters,
    &packet_io::PacketIo,
    &math_unit::MathUnits,
    &min_max::MinMaxActions,
    &selector_action::SelectorActions,
];

fn family(tname: &str) -> Option<&'static dyn ExternType> {
    EXTERNS.iter().copied().find(|e| e.names().contains(&tname))
}

/// Instantiates an extern declared by `d`.
pub(super) fn instantiate<'a>(
    l: &mut Lowerer<'a>,
    d: &'a ast::Decl,
    i: &'a ast::Instantiation,
) -> Res<Rc<ExternInst>> {
    let ty = l.resolve_type(&i.ty)?;
    let Ty::Extern {
        name: tname,
        args: targs,
    } = ty
    else {
        return Err(l.err(
            Diagnostic::error(format!("`{}` is not an extern type", ty))
                .with_primary(i.ty.span, "cannot be instantiated here"),
        ));
    };
    let name = l.qualify(&d.annotations, &i.name.name);
    if let Some(why) = l
        .ghost
        .is_some()
        .then(|| super::ghost::refused_in_ghost(&tname))
        .flatten()
    {
        return Err(l.err(super::ghost::refusal(i.ty.span, &tname, why)));
    }
    if let Some((_, what)) = UNSUPPORTED.iter().find(|(n, _)| *n == tname) {
        return Err(l.err(crate::check::unsupported(
            i.ty.span,
            &format!("extern `{tname}`"),
            what,
        )));
    }
    let args: Vec<&'a ast::Expr> = i.args.iter().map(|a| &a.value).collect();
    let kind = match tname.as_str() {
        "ActionProfile" => l.instantiate_profile(name.clone(), &args, i.ty.span)?,
        "ActionSelector" => l.instantiate_selector(name.clone(), &args, i.ty.span)?,
        "Alpm" | "Atcam" => Kind::TableLayout(l.table_layout(&tname, &i.args)?),
        other => match family(other) {
            Some(f) => {
                let c = Ctor {
                    tname: tname.clone(),
                    name: name.clone(),
                    targs,
                    args,
                    decl: d,
                    inst: i,
                    gress: l.gress,
                };
                f.instantiate(l, &c)?
            }
            None => {
                return Err(l.err(crate::check::unsupported(
                    i.ty.span,
                    &format!("extern `{other}`"),
                    &format!("`{other}`"),
                )))
            }
        },
    };
    Ok(Rc::new(ExternInst {
        name,
        type_name: tname,
        kind,
    }))
}

fn flat_names(prefix: &str, t: &Ty, out: &mut Vec<(String, u16)>) {
    match t {
        Ty::Struct(s) | Ty::Header(s) => {
            for (n, ft) in &s.fields {
                let p = if prefix.is_empty() {
                    n.clone()
                } else {
                    format!("{prefix}.{n}")
                };
                flat_names(&p, ft, out);
            }
        }
        other => out.push((prefix.to_string(), other.scalar_width().unwrap_or(0))),
    }
}

/// The member name of an enum constant argument of type `enum_name`.
pub(crate) fn enum_member<'a>(
    l: &mut Lowerer<'a>,
    e: &'a ast::Expr,
    enum_name: &str,
) -> Res<String> {
    if let V::Scalar(x, Ty::Enum(en)) = l.expr(e, None)? {
        if en.name == enum_name {
            if let ir::Expr::Const { value, .. } = super::expr::fold(x) {
                if let Some((n, _)) = en.members.iter().find(|(_, v)| *v == value) {
                    return Ok(n.clone());
                }
            }
        }
    }
    Err(l.err(
        Diagnostic::error(format!("expected a `{enum_name}` member"))
            .with_primary(e.span, format!("not a `{enum_name}` value"))
            .with_help(format!("write `{enum_name}.<MEMBER>`")),
    ))
}

/// Flattens `{a, b, hdr}` / a header / a struct into scalar inputs. A varbit field stands
/// for all its N bits (its value, then zeros): what a ones'-complement checksum sums the same
/// (`varbit` true, checksums only); anything else over it is refused, as its result would
/// depend on the padding.
fn flat_inputs(
    v: V,
    out: &mut Vec<ir::Expr>,
    l: &mut Lowerer<'_>,
    span: Span,
    varbit: bool,
) -> Res<()> {
    match v {
        V::List(items) => {
            for (it, sp) in items {
                flat_inputs(it, out, l, sp, varbit)?;
            }
            Ok(())
        }
        V::Loc(loc) if !varbit && loc.ty().has_varbit() => Err(l.err(
            Diagnostic::error(format!(
                "`{}` holds a varbit: only a checksum takes one",
                loc.ty()
            ))
            .with_primary(span, "variable-length input")
            .with_help("list the fixed-size fields instead"),
        )),
        // Aggregates, and fields wider than a value, as their pieces in order.
        V::Loc(loc)
            if !loc.ty().is_scalar()
                || matches!(&*loc, crate::lower::phv::Loc::Field { f, .. } if f.width > ir::MAX_VALUE_WIDTH) =>
        {
            loc.scalars(out);
            Ok(())
        }
        other => {
            let (e, _) = l.scalar_of_value(other, None, span)?;
            out.push(e);
            Ok(())
        }
    }
}

/// [`flat_inputs`] of a value of type `ty`: the items of a list initializing a header or
/// struct take its fields' types (an untyped `0` gets its field's width).
fn flat_inputs_typed(
    v: V,
    ty: Option<&Ty>,
    out: &mut Vec<ir::Expr>,
    l: &mut Lowerer<'_>,
    span: Span,
) -> Res<()> {
    match (v, ty) {
        (V::List(items), Some(Ty::Header(s) | Ty::Struct(s))) if items.len() == s.fields.len() => {
            for ((it, sp), (_, fty)) in items.into_iter().zip(&s.fields) {
                flat_inputs_typed(it, Some(fty), out, l, sp)?;
            }
            Ok(())
        }
        (v @ V::Int(_), Some(t)) if t.is_scalar() => {
            let (e, _) = l.scalar_of_value(v, Some(t), span)?;
            out.push(e);
            Ok(())
        }
        (v, _) => flat_inputs(v, out, l, span, false),
    }
}

impl<'a> Lowerer<'a> {
    fn inputs(&mut self, a: &'a ast::Argument) -> Res<Vec<ir::Expr>> {
        self.inputs_as(a, None)
    }

    /// [`Self::inputs`] of an argument of type `ty` (a method's type argument): a list
    /// expression takes the fields' types, so `{src, 0, port}` gives the `0` its width.
    fn inputs_as(&mut self, a: &'a ast::Argument, ty: Option<&Ty>) -> Res<Vec<ir::Expr>> {
        let v = self.expr(&a.value, ty)?;
        let mut out = Vec::new();
        flat_inputs_typed(v, ty, &mut out, self, a.span)?;
        Ok(out)
    }

    /// [`Self::inputs`] of a checksum: varbit fields allowed.
    fn checksum_inputs(&mut self, a: &'a ast::Argument) -> Res<Vec<ir::Expr>> {
        let v = self.expr(&a.value, None)?;
        let mut out = Vec::new();
        flat_inputs(v, &mut out, self, a.span, true)?;
        Ok(out)
    }

    /// A header the hardware carries in a fixed space (`max_bits`): a longer one is cut by pisa
    /// (the rest reads as zeros), which bf-p4c would not let through; said with a warning.
    fn header_limit(&mut self, header: &[ir::Expr], max_bits: u32, what: &str, span: Span) {
        let bits: u32 = header.iter().map(|e| u32::from(e.width())).sum();
        if bits > max_bits {
            self.warn(
                Diagnostic::warning(format!(
                    "{what} of {} bytes is longer than the {} bytes Tofino carries: pisa cuts it to {} bytes",
                    bits.div_ceil(8),
                    max_bits / 8,
                    max_bits / 8
                ))
                .with_primary(span, "too long"),
            );
        }
    }

    /// A resubmit header longer than the resubmit data the chip carries (phase 0's 8 bytes on
    /// Tofino 1, 16 on Tofino 2) is refused, as bf-p4c's arch translation does
    /// (`ERROR_CHECK(bits <= bitResubmitSize(), "%1% digest limited to %2% bits")`).
    fn resubmit_limit(
        &mut self,
        header: &[ir::Expr],
        ty: Option<&crate::check::Ty>,
        span: Span,
    ) -> Res<()> {
        let bits: u32 = header.iter().map(|e| u32::from(e.width())).sum();
        let max = crate::lower::intrinsics::resubmit_bits(self.target);
        if bits <= max {
            return Ok(());
        }
        let name = match ty {
            Some(t) => t.to_string(),
            None => self.env.text_of(span),
        };
        Err(self.err(
            Diagnostic::error(format!("{name} digest limited to {max} bits"))
                .with_primary(span, format!("{bits} bits of resubmit data"))
                .with_note(format!(
                    "bf-p4c parde/parde_spec.h bitResubmitSize(): {} bytes of resubmit data on {}",
                    max / 8,
                    self.target.name()
                ))
                .with_help("carry at most that much in the resubmit header"),
        ))
    }

    /// Direct externs act on the matched entry: not in an action inlined into a control.
    fn not_inlined(&mut self, xname: &str, span: Span) -> Res<()> {
        if self.inline_action == 0 {
            return Ok(());
        }
        Err(self.err(
            Diagnostic::error(format!(
                "direct extern `{xname}` used in an action called directly"
            ))
            .with_primary(span, "no table entry is matched here")
            .with_help("run the action from the table that owns the direct extern"),
        ))
    }

    fn only_in(&mut self, ctxs: &[Ctx], what: &str, span: Span) -> Res<()> {
        if ctxs.contains(&self.ctx) {
            return Ok(());
        }
        let wh: Vec<&str> = ctxs.iter().map(|c| c.describe()).collect();
        Err(self.err(
            Diagnostic::error(format!(
                "`{what}` is not allowed in {}",
                self.ctx.describe()
            ))
            .with_primary(span, "here")
            .with_help(format!("use it in {}", wh.join(" or "))),
        ))
    }

    /// A method call on an extern instance.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn extern_method(
        &mut self,
        x: &Rc<ExternInst>,
        base: &'a ast::Expr,
        member: &'a ast::Ident,
        type_args: &'a [ast::Type],
        args: &'a [ast::Argument],
        span: Span,
        out: Option<&mut ir::Block>,
    ) -> Res<Option<V>> {
        let xname = path_of(base).unwrap_or_else(|| x.name.clone());
        if let Some(why) = self
            .ghost
            .is_some()
            .then(|| super::ghost::refused_in_ghost(&x.type_name))
            .flatten()
        {
            return Err(self.err(super::ghost::refusal(span, &x.type_name, why)));
        }
        if let Some(control) = self
            .ghost
            .clone()
            .filter(|_| super::ghost::call_refused_in_ghost(&x.type_name))
        {
            let local = x.name.rsplit('.').next().unwrap_or(&x.name);
            return Err(self.err(super::ghost::call_refusal(
                span,
                &x.type_name,
                local,
                &control,
            )));
        }
        let c = Call {
            x,
            m: member.name.as_str(),
            xname,
            args,
            type_args,
            member,
            span,
        };
        match family(&x.type_name) {
            Some(f) => f.method(self, &c, out),
            None => self.no_method_of(&c),
        }
    }

    /// A method the instance's extern type does not have (or pisa does not implement).
    pub(super) fn no_method_of(&mut self, c: &Call<'_, '_>) -> Res<Option<V>> {
        let (x, m, xname, span, member) = (c.x, c.m, &c.xname, c.span, c.member);
        let have = match &x.kind {
            Kind::Register { .. } => "read, write (or a RegisterAction)",
            Kind::RegisterAction { direct: true, .. } => "execute",
            Kind::RegisterAction { .. } => {
                "execute, execute_log (Tofino 2 also enqueue, dequeue, push, pop)"
            }
            Kind::SaluThis { .. } => "predicate",
            Kind::RegisterParam { .. } => "read",
            Kind::Hash { .. } | Kind::Random { .. } => "get",
            Kind::Counter { .. } => "count",
            Kind::Meter { .. } => "execute",
            Kind::Checksum { .. } => "add, subtract, verify, get, update",
            Kind::Filter { .. } => "execute",
            Kind::ParserCounter { stack: None, .. } => {
                "set, increment, decrement, is_zero, is_negative"
            }
            Kind::ParserCounter { .. } => {
                "set, push, pop, increment, decrement, is_zero, is_negative"
            }
            Kind::ParserPriority => "set",
            Kind::Mirror { .. } | Kind::Resubmit { .. } | Kind::Pktgen => "emit",
            Kind::Digest { .. } => "pack",
            Kind::MathUnit { .. } => "execute (in a RegisterAction)",
            Kind::MinMaxUnit { lane: 8, .. } => "min8, max8, address, predicate",
            Kind::MinMaxUnit { .. } => "min16, max16, address, predicate",
            Kind::CrcPoly(_) | Kind::ActionProfile { .. } | Kind::TableLayout(_) => "none",
        };
        // A method the architecture declares but pisa does not implement.
        let declared =
            self.env
                .lookup(&x.type_name)
                .is_some_and(|d| match &d.kind {
                    DeclKind::Extern(e) => e.members.iter().any(|mb| match &mb.kind {
                        ast::ExternMemberKind::Method(f)
                        | ast::ExternMemberKind::AbstractMethod(f) => f.name.name == m,
                        ast::ExternMemberKind::Constructor { .. } => false,
                    }),
                    _ => false,
                });
        if declared {
            return Err(self.err(
                crate::check::unsupported(
                    span,
                    &format!("`{}.{m}`", x.type_name),
                    &format!("`{m}` of `{}`", x.type_name),
                )
                .with_help(format!("supported here: {have}")),
            ));
        }
        let mut d = Diagnostic::error(format!("`{xname}` has no method `{m}`"))
            .with_primary(member.span, "unknown method")
            .with_help(format!("available: {have}"));
        if matches!(x.kind, Kind::Register { .. }) {
            d = d.with_note("other register accesses go through a RegisterAction");
        }
        Err(self.err(d))
    }

    /// An index argument: of the extern's index type `I` when it has one (an `int` constant
    /// adopts it), otherwise any unsigned bits (an `int` constant becomes 32 bits).
    fn index_expr(&mut self, a: &'a ast::Argument, want: Option<&Ty>) -> Res<ir::Expr> {
        if let Some(t) = want {
            return Ok(self.scalar(&a.value, Some(t))?.0);
        }
        match self.expr(&a.value, None)? {
            V::Int(i) if i >= 0 => Ok(ir::Expr::constant(i as u128, 32)),
            v => {
                let (e, t) = self.scalar_of_value(v, None, a.span)?;
                if !matches!(t, Ty::Bit(_)) {
                    return Err(self.err(
                        Diagnostic::error(format!("index has type `{t}`"))
                            .with_primary(a.span, "expected `bit<W>`")
                            .with_help("cast it: `(bit<32>) x`"),
                    ));
                }
                Ok(e)
            }
        }
    }
}
