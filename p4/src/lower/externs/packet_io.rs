//! `Mirror`, `Resubmit`, `Digest` and Tofino 2's `Pktgen`: what a deparser sends besides the
//! packet.

use pipeline::ir::{self, DigestId};

use super::deparser_rules::{DeparserTable, EntrySource};
use super::{flat_inputs_typed, flat_names, Call, Ctor, ExternType, Kind};
use crate::ast::{self};
use crate::diag::Diagnostic;
use crate::lower::{Ctx, Lowerer, Res, V};

/// `Mirror`, `Resubmit`, `Digest`, `Pktgen`.
pub(super) struct PacketIo;

/// Bits of a `Pktgen.emit` header the packet generator's deparser trigger matches.
const PKTGEN_MATCH_BITS: u32 = 128;

impl ExternType for PacketIo {
    fn names(&self) -> &'static [&'static str] {
        &["Mirror", "Resubmit", "Digest", "Pktgen"]
    }

    fn instantiate<'a>(&self, l: &mut Lowerer<'a>, c: &Ctor<'a>) -> Res<Kind> {
        let tname = &c.tname;
        let i = c.inst;
        let name = &c.name;
        let kind = match tname.as_str() {
            "Mirror" => Kind::Mirror {
                entry: ctor_entry(l, c)?,
            },
            "Resubmit" => Kind::Resubmit {
                entry: ctor_entry(l, c)?,
            },
            "Pktgen" => {
                l.warn(
                    Diagnostic::warning(
                        "`Pktgen` accepted: the header it emits goes with a deparser trigger to the pipe's packet generator (apps match its first 128 bits); `pktgen_address` and `pktgen_length` go with it but pisa's apps do not read their template from them (not modelled)",
                    )
                    .with_primary(i.ty.span, "deparser trigger"),
                );
                Kind::Pktgen
            }
            "Digest" => {
                let Some(t) = c.targ(0) else {
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
                    type_name: t.to_string(),
                    fields,
                });
                Kind::Digest {
                    id,
                    ty: t,
                    entry: ctor_entry(l, c)?,
                }
            }
            _ => return Err(c.unsupported(l)),
        };
        Ok(kind)
    }

    fn method<'a>(
        &self,
        l: &mut Lowerer<'a>,
        c: &Call<'a, '_>,
        out: Option<&mut ir::Block>,
    ) -> Res<Option<V>> {
        let (x, m) = (c.x, c.m);
        let args = c.args;
        let span = c.span;
        let nargs = c.args.len();
        match (&x.kind, m) {
            (Kind::Mirror { entry }, "emit") => {
                l.only_in(&[Ctx::Deparser], "Mirror.emit", span)?;
                let Some(s) = args.first() else {
                    return Err(l.arg_count("emit", 1, nargs, span));
                };
                if nargs > 2 {
                    return Err(l.arg_count("emit", 2, nargs, span));
                }
                // The session is a `MirrorId_t` (an int constant adopts its width).
                let sid = l
                    .env
                    .lookup("MirrorId_t")
                    .and_then(|d| d.name())
                    .and_then(|n| {
                        l.env
                            .resolve_type(
                                &ast::Type {
                                    kind: ast::TypeKind::Named(n.clone()),
                                    span: n.span,
                                },
                                &Default::default(),
                            )
                            .ok()
                    });
                let (session, _) = l.scalar(&s.value, sid.as_ref())?;
                let header_ty = match c.type_args {
                    [t] => Some(l.resolve_type(t)?),
                    _ => None,
                };
                let header = match args.get(1) {
                    Some(h) => l.inputs_as(h, header_ty.as_ref())?,
                    None => Vec::new(),
                };
                if let Some(h) = args.get(1) {
                    // Tofino carries at most 32 bytes of mirror header with a copy.
                    l.header_limit(&header, 32 * 8, "mirror header", h.span);
                }
                let emit = ir::Stmt::MirrorEmit { session, header };
                let table = (DeparserTable::Mirror, *entry);
                let written = pipeline::ir::Intrinsic::EgDprsrMirrorType;
                if let Some(emit) = l.table_emit(table, &c.xname, emit, written, span)? {
                    l.need_stmt(out, span, "emit")?.push(emit);
                }
                Ok(None)
            }
            (Kind::Resubmit { entry }, "emit") => {
                l.only_in(&[Ctx::Deparser], "Resubmit.emit", span)?;
                let header_ty = match c.type_args {
                    [t] => Some(l.resolve_type(t)?),
                    _ => None,
                };
                let header = match args.first() {
                    Some(h) => l.inputs_as(h, header_ty.as_ref())?,
                    None => Vec::new(),
                };
                if let Some(h) = args.first() {
                    l.resubmit_limit(&header, header_ty.as_ref(), h.span)?;
                }
                let emit = ir::Stmt::ResubmitEmit { header };
                let table = (DeparserTable::Resubmit, *entry);
                let written = pipeline::ir::Intrinsic::IgDprsrResubmitType;
                if let Some(emit) = l.table_emit(table, &c.xname, emit, written, span)? {
                    l.need_stmt(out, span, "emit")?.push(emit);
                }
                Ok(None)
            }
            (Kind::Pktgen, "emit") => {
                l.only_in(&[Ctx::Deparser], "Pktgen.emit", span)?;
                if l.gress != pipeline::ir::Gress::Ingress {
                    return Err(l.err(
                        Diagnostic::error("`Pktgen.emit` belongs in the ingress deparser")
                            .with_primary(span, "in the egress deparser")
                            .with_help(
                                "the deparser trigger comes with `ig_intr_md_for_dprsr.pktgen`",
                            ),
                    ));
                }
                let [h] = args else {
                    return Err(l.arg_count("emit", 1, nargs, span));
                };
                // bf-p4c `ExtractDeparser::postorder` (Pktgen): refused outside an `if`; the
                // pktgen table has one entry, so the compared constant does not matter (its
                // selector does: one field for all of them).
                let what = format!("{}.emit", c.xname);
                l.deparser_table_entry(DeparserTable::Pktgen, None, &what, span)?;
                let header = l.inputs(h)?;
                let bits: u32 = header.iter().map(|e| u32::from(e.width())).sum();
                if bits > PKTGEN_MATCH_BITS {
                    l.warn(
                        Diagnostic::warning(format!(
                            "pktgen header of {} bytes: pisa passes its first 16 bytes, the 128 bits the generator's apps match, and drops the rest",
                            bits.div_ceil(8)
                        ))
                        .with_primary(h.span, "longer than 16 bytes"),
                    );
                }
                l.need_stmt(out, span, "emit")?
                    .push(ir::Stmt::PktgenEmit { header });
                Ok(None)
            }
            (Kind::Digest { id, ty, entry }, "pack") => {
                l.only_in(&[Ctx::Deparser], "Digest.pack", span)?;
                let [a] = args else {
                    return Err(l.arg_count("pack", 1, nargs, span));
                };
                // bf-p4c's digest rules (see `deparser_rules`): ingress only, under an `if`
                // naming the entry, the first `pack` of each entry kept.
                let what = format!("{}.pack", c.xname);
                l.digest_in_egress(span)?;
                let (entry, source) =
                    l.deparser_table_entry(DeparserTable::Learning, *entry, &what, span)?;
                if !l.first_of_entry(DeparserTable::Learning, entry, &what, span) {
                    return Ok(None);
                }
                let v = l.expr(&a.value, Some(ty))?;
                if let V::Loc(loc) = &v {
                    if loc.ty() != *ty {
                        return Err(l.err(
                            Diagnostic::error(format!(
                                "`pack` takes a `{ty}`, found `{}`",
                                loc.ty()
                            ))
                            .with_primary(a.span, "wrong type"),
                        ));
                    }
                }
                let mut fields = Vec::new();
                flat_inputs_typed(v, Some(ty), &mut fields, l, a.span)?;
                l.digest_fields_ok(&fields, a.span)?;
                let pack = ir::Stmt::DigestPack {
                    digest: *id,
                    fields,
                };
                // Selected by `digest_type`: only once that field was written; selected by
                // another field: whenever the `if` holds (see `deparser_rules`).
                let by_type = pipeline::ir::Intrinsic::IgDprsrDigestType;
                let by_ctor = matches!(source, EntrySource::Ctor(..));
                let pack = l.selected_by_ctor(&source, entry, pack, span);
                let pack = if by_ctor || l.selects_on(by_type) {
                    l.when_written(by_type, pack, span)?
                } else {
                    pack
                };
                l.need_stmt(out, span, "pack")?.push(pack);
                Ok(None)
            }
            _ => l.no_method_of(c),
        }
    }
}

/// The table entry given to a `Mirror`, `Resubmit` or `Digest` constructor (Tofino 2's
/// `Mirror(mirror_type)` and the like): a constant.
fn ctor_entry<'a>(l: &mut Lowerer<'a>, c: &Ctor<'a>) -> Res<Option<u128>> {
    c.arity(l, 0, 1)?;
    let Some(e) = c.args.first() else {
        warn_deprecated_ctor(l, c);
        return Ok(None);
    };
    let k = l.const_int(e)?;
    u128::try_from(k).map(Some).map_err(|_| {
        l.err(
            Diagnostic::error(format!("`{}` type {k} is negative", c.tname))
                .with_primary(e.span, "not a table entry"),
        )
    })
}

/// The argument-less `Mirror()`, `Resubmit()` and `Digest()` are `@deprecated` in Intel's
/// `tofino.p4` ("... must be specified with the value of the ..._type instrinsic metadata");
/// p4c's frontend warns at each use, in its words.
fn warn_deprecated_ctor(l: &mut Lowerer<'_>, c: &Ctor<'_>) {
    let field = match c.tname.as_str() {
        "Mirror" => "mirror_type",
        "Resubmit" => "resubmit_type",
        "Digest" => "digest_type",
        _ => return,
    };
    let t = &c.tname;
    l.warn(
        Diagnostic::warning(format!(
            "{t}: Using deprecated feature {t}. {t} must be specified with the value of the \
             {field} instrinsic metadata"
        ))
        .with_primary(
            c.inst.ty.span,
            "argument-less constructor (`@deprecated` in tna.p4)",
        )
        .with_help(format!("pass the {field} value this instance's emits use")),
    );
}

impl<'a> Lowerer<'a> {
    /// A mirror or resubmit `emit` (`stmt`) of instance `xname` made with constructor entry
    /// `ctor` (`(table, ctor)`), checked by bf-p4c's deparser table rules (see
    /// `deparser_rules`) and run only where intrinsic `written` (its type field) was written:
    /// None when an earlier emit has its entry (dropped, warned).
    fn table_emit(
        &mut self,
        (table, ctor): (DeparserTable, Option<u128>),
        xname: &str,
        stmt: ir::Stmt,
        written: pipeline::ir::Intrinsic,
        span: crate::source::Span,
    ) -> Res<Option<ir::Stmt>> {
        let what = format!("{xname}.emit");
        let (entry, source) = self.deparser_table_entry(table, ctor, &what, span)?;
        if !self.first_of_entry(table, entry, &what, span) {
            return Ok(None);
        }
        let stmt = self.selected_by_ctor(&source, entry, stmt, span);
        self.when_written(written, stmt, span).map(Some)
    }
}
