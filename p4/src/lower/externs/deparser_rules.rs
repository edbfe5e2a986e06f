//! bf-p4c's rules for the deparser's learning digests and Tofino 2's `Pktgen.emit`, which
//! decide what the chip's deparser tables can hold (bf-p4c `parde/extract_deparser.cpp`,
//! `ExtractDeparser::postorder` / `getDigestIndex` / `generateDigest`, and
//! `phv/parde_phv_constraints.cpp`, `PardePhvConstraints::preorder(IR::BFN::Digest*)`):
//!
//! - a `Digest.pack` / `Pktgen.emit` outside any `if` is refused ("Unsupported unconditional
//!   ... .emit"): the `if` names the learning selector and the table entry;
//! - the entry (the digest index) is the constant the innermost `if` compares with
//!   (`if (dm.digest_type == 2)` is entry 2; `if (flag)` on a `bool` is entry 0); any other
//!   condition is refused, as bf-p4c refuses it ("Unsupported condition"); a `pack` in an
//!   `else` branch takes its `if`'s entry too (bf-p4c looks up the enclosing `if`, whichever
//!   branch);
//! - a second `pack` for an entry already taken is dropped: bf-p4c's `generateDigest` returns
//!   without a word when an earlier field list has the same index, so the chip sends the
//!   first one only; pisa warns;
//! - a non-zero constant in the field list is refused (on every chip: `generateDigest` checks
//!   it without a device test, "... is not supported on tofino");
//! - the learn quantum (the selector rounded up to bytes, plus each field rounded up to whole
//!   bytes) may hold at most 48 bytes (`Device::maxDigestSizeInBytes()`, Tofino 1 and 2);
//! - a learning digest in the egress deparser is refused: the chip learns in ingress only
//!   (bf-asm registers the `learning` digest for `INGRESS` alone, `tofino/deparser.cpp`
//!   `TOFINO_DIGEST(INGRESS, learning, ...)`, so the assembler stops on the egress one with
//!   "Unknown deparser tag learning"; tofino-model's `DeparseEgress` builds no learn quantum).
//!
//! The learning selector is the compared field itself, whatever it is (`getDigestIndex`
//! returns it as `select`; `if (md.m == 1)` selects on `md.m`, and tofino-model reads the
//! selector from that field's PHV word): only a `pack` selected by `digest_type` waits for
//! that field to be written (see `dprsr_select`); one selected by another field is sent when
//! its `if` holds. Not modelled: the chip's invalid (never written) selector word, which
//! sends nothing even where the `if` compares it with 0.
//!
//! The same rules hold for the deparser's mirror and resubmit tables (`Mirror.emit`,
//! `Resubmit.emit`, with or without a header) and the pktgen table: an instance made without a
//! constructor argument is emitted under an `if` naming its entry (refused unconditional, or
//! under another condition, with bf-p4c's messages), a second emit of an entry is dropped.
//! Tofino 2's `Mirror(type)`, `Resubmit(type)` and `Digest(type)` take the entry from the
//! constructor and are selected by the deparser metadata's `mirror_type`, `resubmit_type` or
//! `digest_type` (`processMirrorEmit` / `processResubmitEmit` / `processDigestPack`): emitted
//! anywhere, they are sent when that field holds the entry. All of one table's entries in a
//! deparser must be selected by one field: bf-p4c refuses two (`generateDigest`:
//! "Inconsistent learning selectors, a and b", likewise `mirror`, `resubmit`, `pktgen`).
//! A `packet_out.emit` under an `if` is refused ("Conditional emit not supported",
//! `stmt::call`); an `if` on a constant does not count for any of these rules: p4c's frontend
//! folds it away first (`stmt::branch`).

use pipeline::ir;

use crate::ast::{self, BinOp, ExprKind};
use crate::diag::Diagnostic;
use crate::lower::expr::fold;
use crate::lower::{Lowerer, Res, V};
use crate::source::Span;

/// Bytes a learn quantum may hold (bf-p4c `Device::maxDigestSizeInBytes()`, both chips).
const MAX_DIGEST_BYTES: u32 = 48;

/// Bytes of the learning selector (`digest_type`, 3 bits, rounded up to a byte).
const SELECTOR_BYTES: u32 = 1;

/// A deparser table whose entries a field selects (bf-p4c `generateDigest`'s `name`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum DeparserTable {
    Learning,
    Mirror,
    Resubmit,
    Pktgen,
}

impl DeparserTable {
    /// bf-p4c's name of the table.
    fn name(self) -> &'static str {
        match self {
            DeparserTable::Learning => "learning",
            DeparserTable::Mirror => "mirror",
            DeparserTable::Resubmit => "resubmit",
            DeparserTable::Pktgen => "pktgen",
        }
    }

    /// The deparser metadata field a program usually selects the table's entries by.
    fn example_field(self) -> &'static str {
        match self {
            DeparserTable::Learning => "digest_type",
            DeparserTable::Mirror => "mirror_type",
            DeparserTable::Resubmit => "resubmit_type",
            DeparserTable::Pktgen => "pktgen",
        }
    }

    /// The deparser metadata field selecting an instance made with a constructor argument,
    /// and its name in the intrinsic metadata.
    fn type_field(self, gress: ir::Gress) -> Option<(ir::Intrinsic, &'static str)> {
        use ir::Intrinsic as I;
        match (self, gress) {
            (DeparserTable::Learning, _) => {
                Some((I::IgDprsrDigestType, "ig_intr_md_for_dprsr.digest_type"))
            }
            (DeparserTable::Resubmit, _) => {
                Some((I::IgDprsrResubmitType, "ig_intr_md_for_dprsr.resubmit_type"))
            }
            (DeparserTable::Mirror, ir::Gress::Egress) => {
                Some((I::EgDprsrMirrorType, "eg_intr_md_for_dprsr.mirror_type"))
            }
            (DeparserTable::Mirror, _) => {
                Some((I::IgDprsrMirrorType, "ig_intr_md_for_dprsr.mirror_type"))
            }
            (DeparserTable::Pktgen, _) => None,
        }
    }
}

/// The field selecting a deparser table's entries: comparable (the fields it reads once
/// lowered, or its text where it is no field) and as the program writes it.
#[derive(Clone, Debug)]
pub(crate) struct Selector {
    table: DeparserTable,
    fields: Result<Vec<ir::FieldRef>, String>,
    text: String,
    span: Span,
}

/// Where an emit's entry comes from.
pub(crate) enum EntrySource<'a> {
    /// The innermost deparser `if`: the side it compares with the constant.
    Cond(&'a ast::Expr),
    /// A constructor argument (`Mirror(type)`): the deparser metadata field selecting it
    /// (None where the gress does not bind it), and that field's name.
    Ctor(Option<ir::FieldRef>, &'static str),
}

impl<'a> Lowerer<'a> {
    /// The table entry of a deparser `Digest.pack` / `Pktgen.emit` (`what`, as the program
    /// names it): the constant its innermost `if` compares with. Refuses one under no `if`
    /// and one whose `if` compares nothing with a constant, as bf-p4c does.
    fn deparser_entry(
        &mut self,
        table: DeparserTable,
        what: &str,
        span: Span,
    ) -> Res<(u128, EntrySource<'a>)> {
        let Some(cond) = self.deparser_conds.last().copied() else {
            return Err(self.err(
                Diagnostic::error(format!("unsupported unconditional `{what}`"))
                    .with_primary(span, "not under an `if`")
                    .with_note("bf-p4c (`ExtractDeparser`): \"Unsupported unconditional emit\"; the `if` names the deparser table entry")
                    .with_help(format!("write it under `if (<select field> == <entry>)`, e.g. `if (ig_dprsr_md.{} == 1)`", table.example_field())),
            ));
        };
        match &cond.kind {
            ExprKind::Binary {
                op: BinOp::Eq,
                lhs,
                rhs,
            } => {
                if let Some(k) = self.entry_const(rhs) {
                    return Ok((k, EntrySource::Cond(lhs)));
                }
                if let Some(k) = self.entry_const(lhs) {
                    return Ok((k, EntrySource::Cond(rhs)));
                }
            }
            ExprKind::Member { .. } | ExprKind::Name(_) => return Ok((0, EntrySource::Cond(cond))),
            _ => {}
        }
        Err(self.err(
            Diagnostic::error(format!("unsupported condition in `{what}`"))
                .with_primary(cond.span, "compares no field with a constant")
                .with_note("bf-p4c (`ExtractDeparser::getDigestIndex`) takes the table entry from an `==` with a constant, or a `bool` field")
                .with_help("write `if (<select field> == <entry>)`"),
        ))
    }

    /// Whether the innermost deparser `if` selects on intrinsic field `which` (compares it
    /// with a constant): bf-p4c's learning selector is the compared field
    /// (`ExtractDeparser::getDigestIndex`).
    pub(crate) fn selects_on(&mut self, which: ir::Intrinsic) -> bool {
        let Some(field) = self
            .written_flags
            .iter()
            .find(|w| w.which == Some(which))
            .map(|w| w.field)
        else {
            return false;
        };
        let Some(cond) = self.deparser_conds.last().copied() else {
            return false;
        };
        let ExprKind::Binary {
            op: BinOp::Eq,
            lhs,
            rhs,
        } = &cond.kind
        else {
            return false;
        };
        [lhs, rhs]
            .into_iter()
            .any(|side| match self.expr(side, None) {
                Ok(V::Scalar(ir::Expr::Field(f), _)) => f == field,
                Ok(V::Loc(loc)) => {
                    let mut fs = Vec::new();
                    loc.field_refs(&mut fs);
                    fs == [field]
                }
                _ => false,
            })
    }

    /// The value of `e` when it is a constant (a `bool` literal counts as entry 0).
    fn entry_const(&mut self, e: &'a ast::Expr) -> Option<u128> {
        if let ExprKind::Bool(_) = e.kind {
            return Some(0);
        }
        if !matches!(e.kind, ExprKind::Int(_) | ExprKind::Name(_)) {
            return None;
        }
        match self.expr(e, None).ok()? {
            V::Int(i) => u128::try_from(i).ok(),
            V::Scalar(x, _) => match fold(x) {
                ir::Expr::Const { value, .. } => Some(value),
                _ => None,
            },
            _ => None,
        }
    }

    /// The entry of an emit into deparser table `table` (`what`: the call as the program
    /// names it) by an instance made with constructor argument `ctor`, if any; checked as
    /// bf-p4c checks it: under an `if` naming the entry unless made with one, and selected by
    /// the same field as the table's other entries in this deparser.
    pub(crate) fn deparser_table_entry(
        &mut self,
        table: DeparserTable,
        ctor: Option<u128>,
        what: &str,
        span: Span,
    ) -> Res<(u128, EntrySource<'a>)> {
        let (entry, source) = match (ctor, table.type_field(self.gress)) {
            (Some(k), Some((which, name))) => {
                let field = self
                    .dprsr_type_fields
                    .iter()
                    .find(|(w, _)| *w == which)
                    .map(|(_, f)| *f);
                (k, EntrySource::Ctor(field, name))
            }
            _ => self.deparser_entry(table, what, span)?,
        };
        let sel = self.selector(table, &source, span);
        let Some(first) = self.deparser_selectors.iter().find(|s| s.table == table) else {
            self.deparser_selectors.push(sel);
            return Ok((entry, source));
        };
        if first.fields == sel.fields {
            return Ok((entry, source));
        }
        let first = first.clone();
        Err(self.err(
            Diagnostic::error(format!(
                "Inconsistent {} selectors, {} and {}",
                table.name(),
                sel.text,
                first.text
            ))
            .with_primary(sel.span, format!("selected by `{}`", sel.text))
            .with_secondary(first.span, format!("selected by `{}`", first.text))
            .with_note("bf-p4c (`ExtractDeparser::generateDigest`): one field selects all the entries of a deparser table")
            .with_help(format!("select this entry by `{}` too", first.text)),
        ))
    }

    /// The selector of an entry taken from `source`.
    fn selector(&mut self, table: DeparserTable, source: &EntrySource<'a>, span: Span) -> Selector {
        let (fields, text) = match source {
            EntrySource::Cond(e) => {
                let text = e.to_string();
                let fields = match self.expr(e, None) {
                    Ok(V::Scalar(ir::Expr::Field(f), _)) => Ok(vec![f]),
                    Ok(V::Loc(loc)) => {
                        let mut fs = Vec::new();
                        loc.field_refs(&mut fs);
                        Ok(fs)
                    }
                    _ => Err(text.clone()),
                };
                (fields, text)
            }
            EntrySource::Ctor(field, name) => (
                field.map(|f| vec![f]).ok_or_else(|| name.to_string()),
                name.to_string(),
            ),
        };
        Selector {
            table,
            fields,
            text,
            span,
        }
    }

    /// `stmt` sent only while the selecting field holds `entry`, for an instance made with a
    /// constructor argument (the chip picks the table entry by that field's value); `stmt`
    /// as it is for one under an `if`, which already says so. `span`: the emit's, recorded
    /// for the `if` made (the deparser's conditions are recorded with their spans).
    pub(crate) fn selected_by_ctor(
        &mut self,
        source: &EntrySource<'a>,
        entry: u128,
        stmt: ir::Stmt,
        span: Span,
    ) -> ir::Stmt {
        let EntrySource::Ctor(Some(f), _) = source else {
            return stmt;
        };
        self.ifs.push(span);
        let cond = ir::Expr::Binary {
            op: ir::BinOp::Eq,
            a: Box::new(ir::Expr::Field(*f)),
            b: Box::new(ir::Expr::Const {
                value: entry,
                width: f.width,
            }),
            width: 1,
            signed: false,
        };
        ir::Stmt::If {
            cond,
            then: vec![stmt],
            els: Vec::new(),
            stage: 0,
        }
    }

    /// Whether an emit for `entry` of deparser table `table` is the first of its entry in
    /// this deparser; a later one is dropped, as bf-p4c drops it, with a warning.
    pub(crate) fn first_of_entry(
        &mut self,
        table: DeparserTable,
        entry: u128,
        what: &str,
        span: Span,
    ) -> bool {
        let (verb, noun) = match table {
            DeparserTable::Learning => ("pack", "digest"),
            _ => ("emit", table.name()),
        };
        if let Some(&(_, _, first)) = self
            .digest_entries
            .iter()
            .find(|(t, e, _)| *t == table && *e == entry)
        {
            self.warn(
                Diagnostic::warning(format!(
                    "`{what}` dropped: an earlier `{verb}` has {noun} entry {entry}"
                ))
                .with_primary(span, "never sent")
                .with_secondary(first, "this one is sent")
                .with_note("bf-p4c (`ExtractDeparser::generateDigest`) keeps the first field list of each digest index and drops the others without a word"),
            );
            return false;
        }
        self.digest_entries.push((table, entry, span));
        true
    }

    /// Refuses a learning digest in the egress deparser.
    pub(crate) fn digest_in_egress(&mut self, span: Span) -> Res<()> {
        if self.gress == ir::Gress::Ingress {
            return Ok(());
        }
        Err(self.err(
            Diagnostic::error("`Digest.pack` in the egress deparser: the chip learns in ingress only")
                .with_primary(span, "egress deparser")
                .with_note("bf-p4c's assembler knows the `learning` digest in the ingress deparser only (\"Unknown deparser tag learning\"), and the egress deparser has no `digest_type`")
                .with_help("pack the digest in the ingress deparser (bridge the fields it needs)"),
        ))
    }

    /// Refuses a field list with a non-zero constant, or whose learn quantum exceeds 48 bytes.
    pub(crate) fn digest_fields_ok(&mut self, fields: &[ir::Expr], span: Span) -> Res<()> {
        if let Some(value) = fields.iter().find_map(|f| match fold(f.clone()) {
            ir::Expr::Const { value, .. } if value != 0 => Some(value),
            _ => None,
        }) {
            return Err(self.err(
                Diagnostic::error(format!(
                    "non-zero constant value {value} in digest field list is not supported"
                ))
                .with_primary(span, "constant field")
                .with_note("bf-p4c (`ExtractDeparser::generateDigest`) refuses it on Tofino 1 and 2; a zero is allowed (deparsed as zeros)")
                .with_help("pass the value in a metadata field"),
            ));
        }
        let bytes: u32 = SELECTOR_BYTES
            + fields
                .iter()
                .map(|f| u32::from(f.width()).div_ceil(8))
                .sum::<u32>();
        if bytes > MAX_DIGEST_BYTES {
            return Err(self.err(
                Diagnostic::error(format!(
                    "Learning quanta requires {bytes} bytes, which is greater than the maximum permissible {MAX_DIGEST_BYTES} bytes"
                ))
                .with_primary(span, "digest too large")
                .with_note("bf-p4c (`PardePhvConstraints`): the selector byte plus each field rounded up to whole bytes"),
            ));
        }
        Ok(())
    }
}
