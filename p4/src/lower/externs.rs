//! TNA externs: what an instantiation creates in the pipeline (registers, register actions with
//! their lowered `apply` bodies, hashes, counters, meters, checksums, digests, ...) and what
//! each method call lowers to. The architecture header declares the externs; their meaning is
//! given here by name.

use std::collections::HashMap;
use std::rc::Rc;

use pipeline::ir::{
    self, ChecksumId, CounterId, CrcSpec, DigestId, HashAlgorithm, HashId, MeterId, RegWord,
    RegisterActionId, RegisterId, RegisterParamId,
};

use super::expr::{path_of, Resolved};
use super::phv::Loc;
use super::{Binding, Ctx, Lowerer, Res, V};
use crate::ast::{self, DeclKind, Direction};
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
    Mirror,
    Resubmit,
    Digest {
        id: DigestId,
        ty: Ty,
    },
    CrcPoly(CrcSpec),
    /// An `ActionProfile`, or an `ActionSelector` (the profile it selects from).
    ActionProfile {
        id: pipeline::ir::ActionProfileId,
    },
    /// `Alpm` / `Atcam`: how bf-p4c lays a table out in memory; the table matches the same.
    TableLayout,
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
    ("ParserCounter", "parser counters"),
    ("ParserPriority", "parser priorities"),
    ("Lpf", "low-pass filters"),
    ("DirectLpf", "low-pass filters"),
    ("Wred", "WRED"),
    ("DirectWred", "WRED"),
    ("SelectorAction", "action selectors"),
    ("MathUnit", "stateful math units"),
    ("Pktgen", "the packet generator"),
    ("Ghost", "ghost threads"),
];

/// The CRCs of `HashAlgorithm_t` as bf-p4c and the driver define them (bf-utils' dynamic
/// hash): CRC-8/SMBUS, CRC-16/ARC, CRC-32/ISO-HDLC and CRC-64/ECMA-182, extended, so a hash
/// wider than the CRC repeats it (a CRC16 into `bit<32>` is `crc ++ crc`) as Tofino does.
fn crc_preset(name: &str) -> Option<CrcSpec> {
    use pipeline::externs::crc::presets;
    Some(match name {
        "CRC8" => presets::CRC8,
        "CRC16" => presets::CRC16,
        "CRC32" => presets::CRC32,
        "CRC64" => presets::CRC64,
        _ => return None,
    })
}

/// A `true_egress_accounting` constructor argument of a counter or meter: Tofino 2 counts the
/// bytes of the packet as it leaves egress; pisa counts the bytes egress received, so `true`
/// is accepted with a warning that says so.
fn true_egress_accounting<'a>(l: &mut Lowerer<'a>, tname: &str, e: &'a ast::Expr) -> Res<()> {
    if l.const_value(e, &Ty::Bool)? != 0 {
        l.warn(
            Diagnostic::warning(format!(
                "`{tname}`'s true_egress_accounting accepted, not modelled: pisa counts the bytes the egress pipeline received, not the bytes it sends"
            ))
            .with_primary(e.span, "true_egress_accounting"),
        );
    }
    Ok(())
}

/// The `@symmetric("a", "b")` annotations of a `Hash` instance.
fn symmetric_pairs(
    l: &mut Lowerer<'_>,
    annos: &[ast::Annotation],
) -> Res<Vec<(String, String, Span)>> {
    let mut out = Vec::new();
    for a in annos.iter().filter(|a| a.name.name == "symmetric") {
        let names: Option<Vec<String>> = match &a.body {
            ast::AnnotationBody::Exprs(es) => es
                .iter()
                .map(|e| match &e.kind {
                    ast::ExprKind::String(s) => Some(s.clone()),
                    _ => None,
                })
                .collect(),
            _ => None,
        };
        match names.as_deref() {
            Some([x, y]) => out.push((x.clone(), y.clone(), a.span)),
            _ => {
                return Err(l.err(
                    Diagnostic::error("`@symmetric` takes two field names")
                        .with_primary(a.span, "malformed")
                        .with_help(
                            "write `@symmetric(\"hdr.ipv4.src_addr\", \"hdr.ipv4.dst_addr\")`",
                        ),
                ))
            }
        }
    }
    Ok(out)
}

/// True when the `@symmetric` name `annot` names the hash input written as `path`: the same
/// text, or (`exact == false`) the annotation, written from an outer control's names, ends with
/// the input's path past its first component (`ig_md.lkp.src` names `lkp_param.src`).
fn symmetric_names(annot: &str, path: &str, exact: bool) -> bool {
    if annot == path {
        return true;
    }
    if exact {
        return false;
    }
    match path.split_once('.') {
        Some((_, rest)) => annot.ends_with(&format!(".{rest}")),
        None => false,
    }
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
    let span = i.name.span;
    if let Some((_, what)) = UNSUPPORTED.iter().find(|(n, _)| *n == tname) {
        return Err(l.err(crate::check::unsupported(
            i.ty.span,
            &format!("extern `{tname}`"),
            what,
        )));
    }
    let args: Vec<&'a ast::Expr> = i.args.iter().map(|a| &a.value).collect();
    let targ = |k: usize| targs.get(k).cloned();
    let arity = |l: &mut Lowerer<'a>, min: usize, max: usize| -> Res<()> {
        if args.len() < min || args.len() > max {
            let want = if min == max {
                format!("{min}")
            } else {
                format!("{min} to {max}")
            };
            return Err(l.err(
                Diagnostic::error(format!(
                    "`{tname}` takes {want} constructor argument(s), {} given",
                    args.len()
                ))
                .with_primary(i.ty.span, "wrong number of arguments"),
            ));
        }
        Ok(())
    };
    let gress = l.gress;
    let kind = match tname.as_str() {
        "ActionProfile" => l.instantiate_profile(name.clone(), &args, i.ty.span)?,
        "Alpm" | "Atcam" => Kind::TableLayout,
        "ActionSelector" => l.instantiate_selector(name.clone(), &args, i.ty.span)?,
        "Register" | "DirectRegister" => {
            let direct = tname == "DirectRegister";
            let Some(vt) = targ(0) else {
                return Err(l.err(
                    Diagnostic::error(format!("`{tname}` needs its value type")).with_primary(
                        i.ty.span,
                        format!(
                            "write `{tname}<bit<32>{}>`",
                            if direct { "" } else { ", bit<16>" }
                        ),
                    ),
                ));
            };
            let (size, init) = if direct {
                arity(l, 0, 1)?;
                (0u32, args.first().copied())
            } else {
                arity(l, 1, 2)?;
                let n = l.const_int(args[0])?;
                if !(1..=(1 << 20)).contains(&n) {
                    return Err(l.err(
                        Diagnostic::error(format!("register size {n} out of range"))
                            .with_primary(args[0].span, "invalid size")
                            .with_help("use 1 to 1048576 cells"),
                    ));
                }
                (n as u32, args.get(1).copied())
            };
            let (width, word_names) = register_layout(l, &vt, i.ty.span)?;
            let (mut lo, mut hi) = (0, 0);
            if let Some(e) = init {
                match (&vt, &word_names) {
                    (Ty::Struct(s), Some(_)) => match l.expr(e, Some(&vt))? {
                        V::List(items) if items.len() == 2 => {
                            let mut vals = Vec::new();
                            for ((v, sp), (_, fty)) in items.into_iter().zip(&s.fields) {
                                let (x, _) = l.scalar_of_value(v, Some(fty), sp)?;
                                match super::expr::fold(x) {
                                    ir::Expr::Const { value, .. } => vals.push(value),
                                    _ => {
                                        return Err(l.err(
                                            Diagnostic::error(
                                                "register initial value must be constant",
                                            )
                                            .with_primary(sp, "not constant"),
                                        ))
                                    }
                                }
                            }
                            lo = vals[0];
                            hi = vals[1];
                        }
                        _ => {
                            return Err(l.err(
                                Diagnostic::error(format!(
                                    "initial value of a `{vt}` register must be a pair"
                                ))
                                .with_primary(e.span, "expected `{lo, hi}`"),
                            ))
                        }
                    },
                    _ => lo = l.const_value(e, &vt)?,
                }
            }
            let id = RegisterId(l.pipe.registers.len() as u32);
            l.pipe.registers.push(ir::Register {
                name: name.clone(),
                gress,
                size,
                width,
                paired: word_names.is_some(),
                word_names,
                initial_lo: lo,
                initial_hi: hi,
                direct_table: None,
                stage: 0,
            });
            l.spans.registers.push(span);
            Kind::Register {
                id,
                direct,
                value: vt,
                index: if direct {
                    None
                } else {
                    targ(1).filter(|t| t.is_bits())
                },
            }
        }
        "RegisterAction" | "DirectRegisterAction" => {
            let direct = tname == "DirectRegisterAction";
            arity(l, 1, 1)?;
            let reg = match l.resolve(args[0])? {
                Resolved::Obj(Binding::Extern(x)) => x,
                _ => {
                    return Err(l.err(
                        Diagnostic::error(format!("`{tname}` needs a register instance"))
                            .with_primary(args[0].span, "not a register"),
                    ))
                }
            };
            let Kind::Register {
                id: rid,
                direct: rdirect,
                value,
                index: rindex,
            } = &reg.kind
            else {
                return Err(l.err(
                    Diagnostic::error(format!("`{}` is not a register", reg.name))
                        .with_primary(args[0].span, "expected a Register instance"),
                ));
            };
            if *rdirect != direct {
                let want = if direct { "DirectRegister" } else { "Register" };
                return Err(l.err(
                    Diagnostic::error(format!("`{tname}` needs a `{want}`")).with_primary(
                        args[0].span,
                        format!("`{}` is the other kind of register", reg.name),
                    ),
                ));
            }
            if let (false, Some(ri), Some(ai)) = (direct, rindex, targ(1).filter(|t| t.is_bits())) {
                if *ri != ai {
                    return Err(l.err(
                        Diagnostic::error(format!(
                            "`{tname}` indexes with `{ai}`, its register `{}` with `{ri}`",
                            reg.name
                        ))
                        .with_primary(i.ty.span, "index types differ")
                        .with_help(format!("declare it as `{tname}<{value}, {ri}, ...>`")),
                    ));
                }
            }
            if let Some(t0) = targ(0) {
                if t0 != *value {
                    return Err(l.err(
                        Diagnostic::error(format!(
                            "`{tname}<{t0}, ...>` on a register of `{value}`"
                        ))
                        .with_primary(i.ty.span, "value types differ")
                        .with_help(format!("declare it as `{tname}<{value}, ...>`")),
                    ));
                }
            }
            let out = if direct { targ(1) } else { targ(2) };
            let body = register_action_body(l, i, value, out.as_ref())?;
            let output_width = out.as_ref().and_then(Ty::scalar_width).unwrap_or(0);
            let id = RegisterActionId(l.pipe.register_actions.len() as u32);
            l.pipe.register_actions.push(ir::RegisterAction {
                name: name.clone(),
                register: *rid,
                body,
                output_width,
            });
            l.spans.register_actions.push(span);
            Kind::RegisterAction {
                id,
                out,
                direct,
                index: if direct {
                    None
                } else {
                    targ(1).filter(|t| t.is_bits())
                },
            }
        }
        "RegisterParam" => {
            arity(l, 1, 1)?;
            let Some(t) = targ(0).filter(Ty::is_scalar) else {
                return Err(l.err(
                    Diagnostic::error("`RegisterParam` needs a `bit<W>` type")
                        .with_primary(i.ty.span, "here"),
                ));
            };
            let v = l.const_value(args[0], &t)?;
            let id = RegisterParamId(l.pipe.register_params.len() as u32);
            l.pipe.register_params.push(ir::RegisterParam {
                name: name.clone(),
                width: t.scalar_width().unwrap_or(1),
                initial: v,
            });
            Kind::RegisterParam { id, ty: t }
        }
        "Hash" => {
            arity(l, 1, 2)?;
            let width = match targ(0) {
                Some(Ty::Bit(w)) => w,
                _ => {
                    return Err(l.err(
                        Diagnostic::error("`Hash` needs its output type")
                            .with_primary(i.ty.span, "write `Hash<bit<16>>(...)`"),
                    ))
                }
            };
            let algo = enum_member(l, args[0], "HashAlgorithm_t")?;
            let algorithm = match algo.as_str() {
                "IDENTITY" => HashAlgorithm::Identity,
                "RANDOM" => HashAlgorithm::Random,
                "XOR8" => HashAlgorithm::Xor8,
                "XOR16" => HashAlgorithm::Xor16,
                "XOR32" => HashAlgorithm::Xor32,
                "CUSTOM" => {
                    let Some(p) = args.get(1) else {
                        return Err(l.err(
                            Diagnostic::error("`HashAlgorithm_t.CUSTOM` needs a `CRCPolynomial`")
                                .with_primary(args[0].span, "custom hash without a polynomial")
                                .with_help("pass a `CRCPolynomial<...>(...)` instance as the second argument"),
                        ));
                    };
                    match l.resolve(p)? {
                        Resolved::Obj(Binding::Extern(x)) => match &x.kind {
                            Kind::CrcPoly(c) => HashAlgorithm::Crc(*c),
                            _ => {
                                return Err(l.err(
                                    Diagnostic::error("expected a `CRCPolynomial` instance")
                                        .with_primary(p.span, "not a CRC polynomial"),
                                ))
                            }
                        },
                        _ => {
                            return Err(l.err(
                                Diagnostic::error("expected a `CRCPolynomial` instance")
                                    .with_primary(p.span, "not a CRC polynomial"),
                            ))
                        }
                    }
                }
                other => match crc_preset(other) {
                    Some(c) => HashAlgorithm::Crc(c),
                    None => {
                        return Err(l.err(crate::check::unsupported(
                            args[0].span,
                            &format!("hash algorithm `{other}`"),
                            &format!("`{other}`"),
                        )))
                    }
                },
            };
            let symmetric = symmetric_pairs(l, &d.annotations)?;
            let id = HashId(l.pipe.hashes.len() as u32);
            l.pipe.hashes.push(ir::HashUnit {
                name: name.clone(),
                algorithm,
                width,
            });
            l.spans.hashes.push(span);
            Kind::Hash {
                id,
                width,
                symmetric,
            }
        }
        "CRCPolynomial" => {
            arity(l, 6, 6)?;
            let Some(t) = targ(0) else {
                return Err(l.err(
                    Diagnostic::error("`CRCPolynomial` needs its width type")
                        .with_primary(i.ty.span, "here"),
                ));
            };
            let Some(width) = t.scalar_width().filter(|w| [8, 16, 32, 64].contains(w)) else {
                return Err(l.err(
                    Diagnostic::error(format!("CRC width `{t}` is not supported"))
                        .with_primary(i.ty.span, "unsupported width")
                        .with_help("use bit<8>, bit<16>, bit<32> or bit<64>"),
                ));
            };
            let poly = l.const_value(args[0], &t)? as u64;
            let reversed = l.const_value(args[1], &Ty::Bool)? != 0;
            let msb = l.const_value(args[2], &Ty::Bool)? != 0;
            let extended = l.const_value(args[3], &Ty::Bool)? != 0;
            let init = l.const_value(args[4], &t)? as u64;
            let xor = l.const_value(args[5], &t)? as u64;
            Kind::CrcPoly(CrcSpec {
                width,
                poly,
                reversed,
                msb,
                extended,
                init,
                xor,
            })
        }
        "Random" => {
            arity(l, 0, 0)?;
            let width = match targ(0) {
                Some(Ty::Bit(w)) => w,
                _ => {
                    return Err(l.err(
                        Diagnostic::error("`Random` needs its output type")
                            .with_primary(i.ty.span, "write `Random<bit<16>>()`"),
                    ))
                }
            };
            Kind::Random { width }
        }
        "Counter" | "DirectCounter" => {
            let direct = tname == "DirectCounter";
            let (size, type_arg) = if direct {
                arity(l, 1, 2)?;
                (0, args[0])
            } else {
                arity(l, 2, 3)?;
                let n = l.const_int(args[0])?;
                if !(1..=(1 << 20)).contains(&n) {
                    return Err(l.err(
                        Diagnostic::error(format!("counter size {n} out of range"))
                            .with_primary(args[0].span, "invalid size"),
                    ));
                }
                (n as u32, args[1])
            };
            if let Some(tea) = args.get(if direct { 1 } else { 2 }) {
                true_egress_accounting(l, &tname, tea)?;
            }
            let kind = match enum_member(l, type_arg, "CounterType_t")?.as_str() {
                "PACKETS" => ir::CounterKind::Packets,
                "BYTES" => ir::CounterKind::Bytes,
                "PACKETS_AND_BYTES" => ir::CounterKind::PacketsAndBytes,
                other => {
                    return Err(l.err(
                        Diagnostic::error(format!("unknown counter type `{other}`"))
                            .with_primary(type_arg.span, "here"),
                    ))
                }
            };
            let id = CounterId(l.pipe.counters.len() as u32);
            l.pipe.counters.push(ir::Counter {
                name: name.clone(),
                kind,
                size,
                direct_table: None,
            });
            l.spans.counters.push(span);
            Kind::Counter {
                id,
                direct,
                index: targ(1).filter(|t| t.is_bits()),
            }
        }
        "Meter" | "DirectMeter" => {
            let direct = tname == "DirectMeter";
            let (size, type_arg) = if direct {
                arity(l, 1, 5)?;
                (0, args[0])
            } else {
                arity(l, 2, 6)?;
                let n = l.const_int(args[0])?;
                if !(1..=(1 << 20)).contains(&n) {
                    return Err(l.err(
                        Diagnostic::error(format!("meter size {n} out of range"))
                            .with_primary(args[0].span, "invalid size"),
                    ));
                }
                (n as u32, args[1])
            };
            let kind = match enum_member(l, type_arg, "MeterType_t")?.as_str() {
                "PACKETS" => ir::MeterKind::Packets,
                "BYTES" => ir::MeterKind::Bytes,
                other => {
                    return Err(l.err(
                        Diagnostic::error(format!("unknown meter type `{other}`"))
                            .with_primary(type_arg.span, "here"),
                    ))
                }
            };
            // After the type: `red, yellow, green` (custom colour values), then the optional
            // `true_egress_accounting`.
            let rest = &args[if direct { 1 } else { 2 }..];
            let (colors, tea) = match rest {
                [r, y, g, tea @ ..] => {
                    let mut c = [0u8; 3];
                    for (slot, e) in c.iter_mut().zip([r, y, g]) {
                        *slot = l.const_value(e, &Ty::Bit(8))? as u8;
                    }
                    (
                        ir::MeterColors {
                            red: c[0],
                            yellow: c[1],
                            green: c[2],
                        },
                        tea.first(),
                    )
                }
                [tea] => (ir::MeterColors::default(), Some(tea)),
                [] => (ir::MeterColors::default(), None),
                [_, extra, ..] => {
                    return Err(l.err(
                        Diagnostic::error(format!(
                            "`{tname}` takes either `red, yellow, green` colour values or `true_egress_accounting` after its type"
                        ))
                        .with_primary(extra.span, "unexpected argument"),
                    ))
                }
            };
            if let Some(tea) = tea {
                true_egress_accounting(l, &tname, tea)?;
            }
            let id = MeterId(l.pipe.meters.len() as u32);
            l.pipe.meters.push(ir::Meter {
                name: name.clone(),
                kind,
                size,
                direct_table: None,
                colors,
            });
            l.spans.meters.push(span);
            Kind::Meter {
                id,
                direct,
                index: targ(0).filter(|t| t.is_bits()),
            }
        }
        "Checksum" => {
            let id = ChecksumId(l.pipe.checksums.len() as u32);
            l.pipe.checksums.push(ir::Checksum {
                name: name.clone(),
                gress,
            });
            Kind::Checksum { id }
        }
        "Mirror" => Kind::Mirror,
        "Resubmit" => Kind::Resubmit,
        "Digest" => {
            let Some(t) = targ(0) else {
                return Err(l.err(
                    Diagnostic::error("`Digest` needs its struct type")
                        .with_primary(i.ty.span, "write `Digest<my_digest_t>()`"),
                ));
            };
            let mut fields = Vec::new();
            flat_names("", &t, &mut fields);
            let id = DigestId(l.pipe.digests.len() as u32);
            l.pipe.digests.push(ir::Digest {
                name: name.clone(),
                fields,
            });
            Kind::Digest { id, ty: t }
        }
        other => {
            return Err(l.err(crate::check::unsupported(
                i.ty.span,
                &format!("extern `{other}`"),
                &format!("`{other}`"),
            )));
        }
    };
    let _ = span;
    Ok(Rc::new(ExternInst {
        name,
        type_name: tname,
        kind,
    }))
}

/// Word width and, for a paired register, the names of its two words.
fn register_layout<'a>(
    l: &mut Lowerer<'a>,
    vt: &Ty,
    span: Span,
) -> Res<(u16, Option<(String, String)>)> {
    let ok_width = |w: u16| [1, 8, 16, 32, 64].contains(&w);
    match vt {
        Ty::Bit(w) | Ty::Int(w) if ok_width(*w) => Ok((*w, None)),
        Ty::Struct(s) if s.fields.len() == 2 => {
            let (a, ta) = &s.fields[0];
            let (b, tb) = &s.fields[1];
            match (ta.scalar_width(), tb.scalar_width()) {
                (Some(x), Some(y)) if x == y && [8, 16, 32].contains(&x) && ta.is_bits() && tb.is_bits() => {
                    Ok((x, Some((a.clone(), b.clone()))))
                }
                _ => Err(l.err(
                    Diagnostic::error(format!("register pair `{}` needs two fields of one width", s.name))
                        .with_primary(span, "unsupported register value type")
                        .with_help("use two bit<8>, bit<16> or bit<32> fields"),
                )),
            }
        }
        other => Err(l.err(
            Diagnostic::error(format!("register value type `{other}` is not supported"))
                .with_primary(span, "unsupported register value type")
                .with_help("registers hold bit<1>, bit<8>, bit<16>, bit<32> (bit<64>), or a struct of two equal-width fields"),
        )),
    }
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
fn enum_member<'a>(l: &mut Lowerer<'a>, e: &'a ast::Expr, enum_name: &str) -> Res<String> {
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

/// Lowers the `apply` body of a RegisterAction initializer.
fn register_action_body<'a>(
    l: &mut Lowerer<'a>,
    i: &'a ast::Instantiation,
    value: &Ty,
    out: Option<&Ty>,
) -> Res<ir::Block> {
    let Some(decls) = &i.initializer else {
        return Err(l.err(
            Diagnostic::error("RegisterAction without a body").with_primary(
                i.name.span,
                "missing `= { void apply(inout T value, ...) { ... } }`",
            ),
        ));
    };
    let mut apply = None;
    for d in decls {
        match &d.kind {
            DeclKind::Function(f) if f.proto.name.name == "apply" => apply = Some(f),
            _ => {
                let span = d.name().map(|n| n.span).unwrap_or(d.span);
                return Err(l.err(crate::check::unsupported(
                    span,
                    "declarations other than `apply` in a RegisterAction",
                    "extra RegisterAction members",
                )));
            }
        }
    }
    let Some(f) = apply else {
        return Err(l.err(
            Diagnostic::error("RegisterAction has no `apply` method")
                .with_primary(i.name.span, "add `void apply(inout T value) { ... }`"),
        ));
    };
    let ps = &f.proto.params;
    if ps.is_empty() || ps.len() > 2 || ps[0].direction != Direction::InOut {
        return Err(l.err(
            Diagnostic::error("RegisterAction `apply` must be `apply(inout T value[, out U rv])`")
                .with_primary(f.proto.name.span, "unexpected signature")
                .with_help("a second output (`out U rv2`) is not modelled"),
        ));
    }
    let pty = l.resolve_type(&ps[0].ty)?;
    if pty != *value {
        return Err(l.err(
            Diagnostic::error(format!(
                "`apply` takes `{pty}`, the register holds `{value}`"
            ))
            .with_primary(ps[0].ty.span, "type differs from the register's"),
        ));
    }
    let value_loc = match value {
        Ty::Struct(s) => Rc::new(Loc::Struct {
            ty: s.clone(),
            fields: vec![
                Rc::new(Loc::RegWord(RegWord::Lo, s.fields[0].1.clone())),
                Rc::new(Loc::RegWord(RegWord::Hi, s.fields[1].1.clone())),
            ],
        }),
        t => Rc::new(Loc::RegWord(RegWord::Lo, t.clone())),
    };
    let mut frame = HashMap::new();
    frame.insert(ps[0].name.name.clone(), Binding::Val(V::Loc(value_loc)));
    if let Some(p) = ps.get(1) {
        if p.direction != Direction::Out {
            return Err(l.err(
                Diagnostic::error("the second `apply` parameter must be `out`")
                    .with_primary(p.span, "here"),
            ));
        }
        let t = l.resolve_type(&p.ty)?;
        if let Some(o) = out {
            if *o != t {
                return Err(l.err(
                    Diagnostic::error(format!(
                        "`apply` outputs `{t}`, the RegisterAction declares `{o}`"
                    ))
                    .with_primary(p.ty.span, "types differ"),
                ));
            }
        }
        frame.insert(
            p.name.name.clone(),
            Binding::Val(V::Loc(Rc::new(Loc::RegOut(t)))),
        );
    }
    let saved_ctx = std::mem::replace(&mut l.ctx, Ctx::RegAction);
    let saved_ifs = std::mem::take(&mut l.ifs);
    l.scopes.push(frame);
    let errs = l.diags.error_count();
    let mut body = Vec::new();
    l.block_stmts(&f.body.stmts, &mut body);
    l.scopes.pop();
    l.ctx = saved_ctx;
    l.ifs = saved_ifs;
    if l.diags.error_count() > errs {
        return Err(super::Reported);
    }
    Ok(body)
}

/// Flattens `{a, b, hdr}` / a header / a struct into scalar inputs.
fn flat_inputs(v: V, out: &mut Vec<ir::Expr>, l: &mut Lowerer<'_>, span: Span) -> Res<()> {
    match v {
        V::List(items) => {
            for (it, sp) in items {
                flat_inputs(it, out, l, sp)?;
            }
            Ok(())
        }
        V::Loc(loc) if !loc.ty().is_scalar() => {
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

impl<'a> Lowerer<'a> {
    fn inputs(&mut self, a: &'a ast::Argument) -> Res<Vec<ir::Expr>> {
        let v = self.expr(&a.value, None)?;
        let mut out = Vec::new();
        flat_inputs(v, &mut out, self, a.span)?;
        Ok(out)
    }

    /// The inputs of `hash.get({...})` on a hash with `@symmetric` pairs. Tofino makes such a
    /// hash symmetric by feeding both fields of a pair into the same hash-matrix inputs, so
    /// the first field's slot carries `a ^ b` and the second's nothing (0): the hash is then
    /// the CRC of that stream, and swapping `a` and `b` cannot change it. [inf: bf-p4c's
    /// hash-matrix allocation; which slot keeps the XOR is not documented.]
    fn symmetric_inputs(
        &mut self,
        a: &'a ast::Argument,
        pairs: &[(String, String, Span)],
    ) -> Res<Vec<ir::Expr>> {
        let ast::ExprKind::List(elems) = &a.value.kind else {
            return self.inputs(a);
        };
        // Each element's path and its range in the flattened inputs.
        let mut out = Vec::new();
        let mut slots: Vec<(Option<String>, std::ops::Range<usize>)> = Vec::new();
        for e in elems {
            let start = out.len();
            let v = self.expr(e, None)?;
            flat_inputs(v, &mut out, self, e.span)?;
            slots.push((path_of(e), start..out.len()));
        }
        let find = |name: &str| -> Option<usize> {
            for exact in [true, false] {
                let hits: Vec<usize> = slots
                    .iter()
                    .enumerate()
                    .filter(|(_, (p, _))| {
                        p.as_deref()
                            .is_some_and(|p| symmetric_names(name, p, exact))
                    })
                    .map(|(k, _)| k)
                    .collect();
                match hits.as_slice() {
                    [k] => return Some(*k),
                    [] => continue,
                    _ => return None,
                }
            }
            None
        };
        for (x, y, sp) in pairs {
            let (Some(i), Some(j)) = (find(x), find(y)) else {
                let missing = if find(x).is_none() { x } else { y };
                self.warn(
                    Diagnostic::warning(format!(
                        "`@symmetric`: `{missing}` is not one input of this `get`; this pair is not made symmetric"
                    ))
                    .with_primary(*sp, "pair ignored")
                    .with_primary(a.span, "the hash inputs"),
                );
                continue;
            };
            let (ri, rj) = (slots[i].1.clone(), slots[j].1.clone());
            let width = |r: &std::ops::Range<usize>, out: &[ir::Expr]| {
                (r.len() == 1).then(|| out[r.start].width())
            };
            match (width(&ri, &out), width(&rj, &out)) {
                (Some(wi), Some(wj)) if wi == wj && i != j => {
                    let b = std::mem::replace(&mut out[rj.start], ir::Expr::constant(0, wj));
                    let av = std::mem::replace(&mut out[ri.start], ir::Expr::constant(0, wi));
                    out[ri.start] = ir::Expr::Binary {
                        op: ir::BinOp::Xor,
                        a: Box::new(av),
                        b: Box::new(b),
                        width: wi,
                        signed: false,
                    };
                }
                _ => {
                    return Err(self.err(
                        Diagnostic::error(format!(
                            "`@symmetric(\"{x}\", \"{y}\")` needs two different fields of the same width"
                        ))
                        .with_primary(*sp, "here"),
                    ))
                }
            }
        }
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

    /// An `adjust_byte_count` argument of `count` / `execute`: accepted with a warning.
    fn adjust_byte_count_ignored(&mut self, xname: &str, span: Span) {
        self.warn(
            Diagnostic::warning(format!(
                "`{xname}`: adjust_byte_count accepted, not modelled: pisa counts and meters the whole packet"
            ))
            .with_primary(span, "adjust_byte_count"),
        );
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
        _type_args: &'a [ast::Type],
        args: &'a [ast::Argument],
        span: Span,
        out: Option<&mut ir::Block>,
    ) -> Res<Option<V>> {
        let m = member.name.as_str();
        let xname = path_of(base).unwrap_or_else(|| x.name.clone());
        let nargs = args.len();
        let value = |e: ir::Expr, t: Ty| Ok(Some(V::Scalar(e, t)));
        match (&x.kind, m) {
            (
                Kind::Register {
                    id,
                    direct,
                    value: vt,
                    index: ity,
                },
                "read" | "write",
            ) => {
                self.only_in(&[Ctx::Control, Ctx::Action], m, span)?;
                let Some(width) = vt.scalar_width() else {
                    return Err(self.err(
                        crate::check::unsupported(span, &format!("`{m}` on a register pair"), "implicit register actions on pairs")
                            .with_help("write a RegisterAction for paired registers"),
                    ));
                };
                let want = if *direct { 0 } else { 1 } + usize::from(m == "write");
                if nargs != want {
                    return Err(self.arg_count(m, want, nargs, span));
                }
                let index = if *direct {
                    ir::Expr::constant(0, 1)
                } else {
                    self.index_expr(&args[0], ity.as_ref())?
                };
                // bf-p4c turns read/write into an implicit RegisterAction; so does pisa.
                let (body, output_width, suffix) = if m == "read" {
                    (
                        vec![ir::Stmt::Assign { dst: ir::Place::RegOutput, value: ir::Expr::RegValue(ir::RegWord::Lo) }],
                        width,
                        "$read",
                    )
                } else {
                    let (v, _) = self.scalar(&args[want - 1].value, Some(vt))?;
                    (
                        vec![ir::Stmt::Assign { dst: ir::Place::RegValue(ir::RegWord::Lo), value: v }],
                        0,
                        "$write",
                    )
                };
                let ra = RegisterActionId(self.pipe.register_actions.len() as u32);
                self.pipe.register_actions.push(ir::RegisterAction {
                    name: format!("{}.{suffix}{}", x.name, ra.0),
                    register: *id,
                    body,
                    output_width,
                });
                self.spans.register_actions.push(span);
                if m == "read" {
                    let e = ir::Expr::RegisterExecute { action: ra, index: Box::new(index), width };
                    return value(e, vt.clone());
                }
                // A write yields nothing: run it for its effect into a scratch bit.
                let tmp = self.temp(1, span)?;
                self.need_stmt(out, span, "write")?.push(ir::Stmt::Assign {
                    dst: ir::Place::Field(tmp),
                    value: ir::Expr::RegisterExecute { action: ra, index: Box::new(index), width: 1 },
                });
                Ok(None)
            }
            (
                Kind::RegisterAction {
                    id,
                    out: ot,
                    direct,
                    index: ity,
                },
                "execute",
            ) => {
                self.only_in(&[Ctx::Control, Ctx::Action], "execute", span)?;
                let index = if *direct {
                    if nargs != 0 {
                        return Err(self.arg_count("execute", 0, nargs, span));
                    }
                    ir::Expr::constant(0, 1)
                } else {
                    let [a] = args else { return Err(self.arg_count("execute", 1, nargs, span)) };
                    self.index_expr(a, ity.as_ref())?
                };
                let t = ot.clone().unwrap_or(Ty::Bit(1));
                let width = t.scalar_width().unwrap_or(1);
                let e = ir::Expr::RegisterExecute { action: *id, index: Box::new(index), width };
                match out {
                    // As a statement: run it for its effect, result to a scratch field.
                    Some(o) => {
                        let tmp = self.temp(width, span)?;
                        o.push(ir::Stmt::Assign { dst: ir::Place::Field(tmp), value: e });
                        Ok(None)
                    }
                    None => {
                        if ot.is_none() {
                            return Err(self.err(
                                Diagnostic::error(format!("`{xname}.execute` returns nothing"))
                                    .with_primary(span, "used as a value")
                                    .with_help("declare the RegisterAction with an output type and an `out` parameter"),
                            ));
                        }
                        value(e, t)
                    }
                }
            }
            (Kind::Hash { id, width, symmetric }, "get") => {
                let [a] = args else { return Err(self.arg_count("get", 1, nargs, span)) };
                let inputs = if symmetric.is_empty() {
                    self.inputs(a)?
                } else {
                    self.symmetric_inputs(a, symmetric)?
                };
                if inputs.is_empty() {
                    // bf-p4c refuses a hash of nothing: no hash unit input to build.
                    return Err(self.err(
                        Diagnostic::error("`get` of a hash over no fields")
                            .with_primary(a.span, "an empty field list")
                            .with_help("hash at least one field, or use a constant"),
                    ));
                }
                value(ir::Expr::Hash { hash: *id, inputs, width: *width }, Ty::Bit(*width))
            }
            (Kind::Random { width }, "get") => {
                if nargs != 0 {
                    return Err(self.arg_count("get", 0, nargs, span));
                }
                value(ir::Expr::Random { width: *width }, Ty::Bit(*width))
            }
            (Kind::RegisterParam { id, ty }, "read") => value(ir::Expr::RegisterParam(*id), ty.clone()),
            (
                Kind::Counter {
                    id,
                    direct: false,
                    index: ity,
                },
                "count",
            ) => {
                self.only_in(&[Ctx::Control, Ctx::Action], "count", span)?;
                let (a, adjust) = match args {
                    [a] => (a, None),
                    [a, adj] => (a, Some(adj)),
                    _ => return Err(self.arg_count("count", 1, nargs, span)),
                };
                if let Some(adj) = adjust {
                    self.adjust_byte_count_ignored(&xname, adj.span);
                }
                let index = self.index_expr(a, ity.as_ref())?;
                self.need_stmt(out, span, "count")?.push(ir::Stmt::Count { counter: *id, index });
                Ok(None)
            }
            (Kind::Counter { id, direct: true, .. }, "count") => {
                self.only_in(&[Ctx::Action], "count", span)?;
                self.not_inlined(&xname, span)?;
                if nargs > 1 {
                    return Err(self.arg_count("count", 0, nargs, span));
                }
                if let Some(adj) = args.first() {
                    self.adjust_byte_count_ignored(&xname, adj.span);
                }
                self.need_stmt(out, span, "count")?.push(ir::Stmt::CountDirect { counter: *id });
                Ok(None)
            }
            (
                Kind::Meter {
                    id,
                    direct,
                    index: ity,
                },
                "execute",
            ) => {
                self.only_in(&[Ctx::Control, Ctx::Action], "execute", span)?;
                let (index, rest) = if *direct {
                    self.only_in(&[Ctx::Action], "execute", span)?;
                    self.not_inlined(&xname, span)?;
                    (None, args)
                } else {
                    let Some(a) = args.first() else { return Err(self.arg_count("execute", 1, nargs, span)) };
                    (Some(Box::new(self.index_expr(a, ity.as_ref())?)), &args[1..])
                };
                // After the index: an optional `MeterColor_t` pre-colour, then an optional
                // `bit<32>` adjust_byte_count (`execute(i, adjust)` has no colour).
                let mut color = None;
                let mut adjust = None;
                for (k, c) in rest.iter().enumerate() {
                    let (e, t) = self.scalar(&c.value, None)?;
                    let is_color = matches!(&t, Ty::Enum(en) if en.name == "MeterColor_t");
                    match (k, is_color) {
                        (0, true) => color = Some(Box::new(e)),
                        (0 | 1, false) if adjust.is_none() => adjust = Some(c.span),
                        _ => return Err(self.arg_count("execute", if *direct { 2 } else { 3 }, nargs, span)),
                    }
                }
                if let Some(sp) = adjust {
                    self.adjust_byte_count_ignored(&xname, sp);
                }
                value(ir::Expr::MeterExecute { meter: *id, index, color }, Ty::Bit(8))
            }
            (Kind::Checksum { id }, "add" | "subtract") if self.ctx == Ctx::Parser => {
                let [a] = args else { return Err(self.arg_count(m, 1, nargs, span)) };
                let inputs = self.inputs(a)?;
                let s = if m == "add" {
                    ir::Stmt::ChecksumAdd { checksum: *id, inputs }
                } else {
                    ir::Stmt::ChecksumSubtract { checksum: *id, inputs }
                };
                self.need_stmt(out, span, m)?.push(s);
                Ok(None)
            }
            (Kind::Checksum { id }, "verify") if self.ctx == Ctx::Parser => value(ir::Expr::ChecksumVerify(*id), Ty::Bool),
            (Kind::Checksum { id }, "get") if self.ctx == Ctx::Parser => value(ir::Expr::ChecksumGet(*id), Ty::Bit(16)),
            (Kind::Checksum { id }, "subtract_all_and_deposit") if self.ctx == Ctx::Parser => {
                let [a] = args else { return Err(self.arg_count(m, 1, nargs, span)) };
                let V::Loc(loc) = self.expr(&a.value, None)? else {
                    return Err(self.err(Diagnostic::error("`subtract_all_and_deposit` needs a field").with_primary(a.span, "not a field")));
                };
                let Loc::Field { f, .. } = &*loc else {
                    return Err(self.err(Diagnostic::error("`subtract_all_and_deposit` needs a field").with_primary(a.span, "not a field")));
                };
                self.need_stmt(out, span, m)?.push(ir::Stmt::ChecksumDeposit { checksum: *id, dst: *f });
                Ok(None)
            }
            (Kind::Checksum { id }, "update") if self.ctx == Ctx::Deparser => {
                let Some(a) = args.first() else { return Err(self.arg_count("update", 1, nargs, span)) };
                if nargs > 2 {
                    return Err(self.arg_count("update", 2, nargs, span));
                }
                let inputs = self.inputs(a)?;
                let sum = ir::Expr::ChecksumUpdate { checksum: *id, inputs };
                // `zeros_as_ones`: the deparser's checksum unit sends a computed 0x0000 as 0xFFFF
                // (UDP's rule). The checksum is a pure function of the fields, so testing it and
                // then using it computes the same value twice.
                let zeros_as_ones = match args.get(1) {
                    Some(z) => super::expr::fold(self.cond(&z.value)?),
                    None => ir::Expr::constant(0, 1),
                };
                let e = match zeros_as_ones {
                    ir::Expr::Const { value: 0, .. } => sum,
                    z => {
                        let is_zero = ir::Expr::Binary {
                            op: ir::BinOp::Eq,
                            a: Box::new(sum.clone()),
                            b: Box::new(ir::Expr::constant(0, 16)),
                            width: 1,
                            signed: false,
                        };
                        let cond = match z {
                            ir::Expr::Const { .. } => is_zero,
                            z => ir::Expr::Binary {
                                op: ir::BinOp::LAnd,
                                a: Box::new(z),
                                b: Box::new(is_zero),
                                width: 1,
                                signed: false,
                            },
                        };
                        ir::Expr::Ternary {
                            cond: Box::new(cond),
                            then: Box::new(ir::Expr::constant(0xffff, 16)),
                            els: Box::new(sum),
                            width: 16,
                        }
                    }
                };
                value(e, Ty::Bit(16))
            }
            (Kind::Checksum { .. }, _) => Err(self.err(
                Diagnostic::error(format!("`Checksum.{m}` is not allowed in {}", self.ctx.describe()))
                    .with_primary(member.span, "here")
                    .with_help("parsers use add/subtract/verify/get/subtract_all_and_deposit; deparsers use update"),
            )),
            (Kind::Mirror, "emit") => {
                self.only_in(&[Ctx::Deparser], "Mirror.emit", span)?;
                let Some(s) = args.first() else { return Err(self.arg_count("emit", 1, nargs, span)) };
                if nargs > 2 {
                    return Err(self.arg_count("emit", 2, nargs, span));
                }
                // The session is a `MirrorId_t` (an int constant adopts its width).
                let sid = self.env.lookup("MirrorId_t").and_then(|d| d.name()).and_then(|n| {
                    self.env
                        .resolve_type(
                            &ast::Type { kind: ast::TypeKind::Named(n.clone()), span: n.span },
                            &Default::default(),
                        )
                        .ok()
                });
                let (session, _) = self.scalar(&s.value, sid.as_ref())?;
                let header = match args.get(1) {
                    Some(h) => self.inputs(h)?,
                    None => Vec::new(),
                };
                if let Some(h) = args.get(1) {
                    // Tofino carries at most 32 bytes of mirror header with a copy.
                    self.header_limit(&header, 32 * 8, "mirror header", h.span);
                }
                self.need_stmt(out, span, "emit")?.push(ir::Stmt::MirrorEmit { session, header });
                Ok(None)
            }
            (Kind::Resubmit, "emit") => {
                self.only_in(&[Ctx::Deparser], "Resubmit.emit", span)?;
                let header = match args.first() {
                    Some(h) => self.inputs(h)?,
                    None => Vec::new(),
                };
                if let Some(h) = args.first() {
                    // Resubmit data takes the place of the port metadata.
                    let bits = super::intrinsics::port_metadata_bits(self.target);
                    self.header_limit(&header, bits, "resubmit header", h.span);
                }
                self.need_stmt(out, span, "emit")?.push(ir::Stmt::ResubmitEmit { header });
                Ok(None)
            }
            (Kind::Digest { id, ty }, "pack") => {
                self.only_in(&[Ctx::Deparser], "Digest.pack", span)?;
                let [a] = args else { return Err(self.arg_count("pack", 1, nargs, span)) };
                let v = self.expr(&a.value, Some(ty))?;
                if let V::Loc(l) = &v {
                    if l.ty() != *ty {
                        return Err(self.err(
                            Diagnostic::error(format!("`pack` takes a `{ty}`, found `{}`", l.ty()))
                                .with_primary(a.span, "wrong type"),
                        ));
                    }
                }
                let mut fields = Vec::new();
                flat_inputs(v, &mut fields, self, a.span)?;
                self.need_stmt(out, span, "pack")?.push(ir::Stmt::DigestPack { digest: *id, fields });
                Ok(None)
            }
            _ => {
                let have = match &x.kind {
                    Kind::Register { .. } => "read, write (or a RegisterAction)",
                    Kind::RegisterAction { .. } => "execute",
                    Kind::RegisterParam { .. } => "read",
                    Kind::Hash { .. } | Kind::Random { .. } => "get",
                    Kind::Counter { .. } => "count",
                    Kind::Meter { .. } => "execute",
                    Kind::Checksum { .. } => "add, subtract, verify, get, update",
                    Kind::Mirror | Kind::Resubmit => "emit",
                    Kind::Digest { .. } => "pack",
                    Kind::CrcPoly(_) | Kind::ActionProfile { .. } | Kind::TableLayout => "none",
                };
                // A method the architecture declares but pisa does not implement.
                let declared = self.env.lookup(&x.type_name).is_some_and(|d| match &d.kind {
                    DeclKind::Extern(e) => e.members.iter().any(|mb| match &mb.kind {
                        ast::ExternMemberKind::Method(f) | ast::ExternMemberKind::AbstractMethod(f) => f.name.name == m,
                        ast::ExternMemberKind::Constructor { .. } => false,
                    }),
                    _ => false,
                });
                if declared {
                    return Err(self.err(
                        crate::check::unsupported(span, &format!("`{}.{m}`", x.type_name), &format!("`{m}` of `{}`", x.type_name))
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
        }
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

#[cfg(test)]
mod tests {
    use super::symmetric_names;

    #[test]
    fn symmetric_names_match_exactly_or_by_the_outer_path() {
        assert!(symmetric_names(
            "hdr.ipv4.src_addr",
            "hdr.ipv4.src_addr",
            true
        ));
        assert!(!symmetric_names("ig_md.lkp.src", "lkp_in.src", true));
        assert!(symmetric_names("ig_md.lkp.src", "lkp_in.src", false));
        assert!(!symmetric_names("ig_md.lkp.src", "lkp_in.dst", false));
        assert!(!symmetric_names("ig_md.lkp.src", "src", false));
    }
}
