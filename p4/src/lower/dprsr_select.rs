//! The deparser's select fields that the architecture leaves invalid until written: on
//! Tofino, `ig_intr_md_for_dprsr.resubmit_type`, `.digest_type` and
//! `eg_intr_md_for_dprsr.mirror_type` start a pass invalid (bf-p4c's hardware-constrained
//! fields: "invalidate from arch"), and the deparser resubmits, learns or mirrors only when
//! the match-action stage wrote the field, whatever its value. A program may thus use 0 as a
//! type (`if (resubmit_type == 0) resubmit.emit(..)`), and a packet whose pass never set the
//! field is neither resubmitted nor learnt. (`ig_intr_md_for_dprsr.mirror_type` is different:
//! the architecture initialises it to 0, valid.)
//!
//! pisa keeps a hidden one-bit "written" flag per such field (named after the field as the
//! program binds it, `ig_dprsr_md.digest_type written`, which is how IR dumps and `pisa trace`
//! show it: `deparser: if (ig_dprsr_md.digest_type written) -> true`) and guards the deparser's
//! `Resubmit.emit` / `Digest.pack` / egress `Mirror.emit` with it. The flag is set after every
//! statement of the lowered gress (parser states, control body, its actions) that writes the
//! field, whatever wrote it: a field or slice assignment, a copy of the whole metadata struct
//! (lowered field by field), an action's or control's `out`/`inout` copy-out, an extern's or
//! a RegisterAction's result. Marking the lowered IR rather than the source keeps every write
//! path covered, as the hardware's container validity does (any write validates it).

use pipeline::ir::{self, Block, Expr, FieldRef, Intrinsic, Place, Stmt, TableBranches};

use super::{Lowerer, Res};
use crate::diag::Diagnostic;
use crate::source::Span;

/// The select fields that start invalid, with their architecture names (for the flag's name
/// when the program's own name of the field is unknown).
const INVALID_UNTIL_WRITTEN: [(Intrinsic, &str); 3] = [
    (
        Intrinsic::IgDprsrResubmitType,
        "ig_intr_md_for_dprsr.resubmit_type",
    ),
    (
        Intrinsic::IgDprsrDigestType,
        "ig_intr_md_for_dprsr.digest_type",
    ),
    (
        Intrinsic::EgDprsrMirrorType,
        "eg_intr_md_for_dprsr.mirror_type",
    ),
];

/// One select field and its flag (allocated when the program first writes the field or
/// guards a request with it, so a program without either gets no extra PHV). `which` is
/// `None` for a field that `invalidate` / `is_validated` track (`externs::field_validity`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct WrittenFlag {
    pub which: Option<Intrinsic>,
    pub name: &'static str,
    pub field: FieldRef,
    pub flag: Option<FieldRef>,
}

impl Lowerer<'_> {
    /// Notes the select fields this gress binds (before its blocks lower).
    pub(crate) fn bind_written_flags(&mut self, bindings: &ir::IntrinsicBindings) {
        self.written_flags.clear();
        for (which, name) in INVALID_UNTIL_WRITTEN {
            if let Some(field) = bindings.get(which) {
                self.written_flags.push(WrittenFlag {
                    which: Some(which),
                    name,
                    field,
                    flag: None,
                });
            }
        }
    }

    /// The flag of entry `i`, allocated on first use.
    pub(crate) fn written_flag(&mut self, i: usize, span: Span) -> Res<FieldRef> {
        if let Some(f) = self.written_flags[i].flag {
            return Ok(f);
        }
        let w = self.written_flags[i];
        let field = self.phv.layout.fields.iter().find(|x| x.field == w.field);
        let name = format!("{} written", field.map_or(w.name, |x| x.name.as_str()));
        let f = self
            .phv
            .hidden(&name, 1)
            .map_err(|m| self.err(Diagnostic::error(m).with_primary(span, "here")))?;
        self.written_flags[i].flag = Some(f);
        Ok(f)
    }

    /// `stmt` (a deparser resubmit, digest or mirror request) guarded by its select field's
    /// flag, when that field starts invalid; `stmt` itself otherwise.
    pub(crate) fn when_written(&mut self, which: Intrinsic, stmt: Stmt, span: Span) -> Res<Stmt> {
        let Some(i) = self
            .written_flags
            .iter()
            .position(|w| w.which == Some(which))
        else {
            return Ok(stmt);
        };
        let cond = Expr::Field(self.written_flag(i, span)?);
        // The deparser's conditions are recorded with their spans, in program order.
        self.ifs.push(span);
        Ok(Stmt::If {
            cond,
            then: vec![stmt],
            els: Vec::new(),
            stage: 0,
        })
    }
}

impl Lowerer<'_> {
    /// Marks every write of a guarded select field in this gress's lowered parser, control
    /// body and actions (`actions`: the first action lowered for this gress). Only fields
    /// whose flag a deparser request allocated need it: an unguarded flag is never read.
    pub(crate) fn mark_written(
        &mut self,
        parser: &mut ir::Parser,
        control: &mut Block,
        actions: usize,
    ) {
        let marks: Vec<(FieldRef, FieldRef)> = self
            .written_flags
            .iter()
            .filter_map(|w| Some((w.field, w.flag?)))
            .collect();
        if marks.is_empty() {
            return;
        }
        let m = Marker {
            marks: &marks,
            tables: &self.pipe.tables,
            actions: &self.pipe.actions,
            headers: &self.phv.layout.headers,
        };
        for st in &mut parser.states {
            m.block(&mut st.body, &mut Vec::new());
        }
        m.block(control, &mut Vec::new());
        let mut bodies: Vec<Block> = self.pipe.actions[actions..]
            .iter()
            .map(|a| a.body.clone())
            .collect();
        for b in &mut bodies {
            m.block(b, &mut Vec::new());
        }
        for (a, b) in self.pipe.actions[actions..].iter_mut().zip(bodies) {
            a.body = b;
        }
    }
}

/// A copy `t = f` (or `t = u` of another shadow `u` of `f`) of a select field `f` still
/// unchanged in `t`: copying `t` back into `f`
/// (a struct copied out and back, a control's `inout` copy-in/copy-out through a temporary)
/// moves `f`'s own value, which bf-p4c elides, so it does not mark `f` written.
#[derive(Clone, Copy)]
struct Shadow {
    copy: FieldRef,
    of: FieldRef,
}

/// The marking walk: the select fields with their flags, and the gress's tables and actions
/// (to see what a nested apply or call writes).
struct Marker<'m> {
    marks: &'m [(FieldRef, FieldRef)],
    tables: &'m [ir::Table],
    actions: &'m [ir::Action],
    /// The gress's headers: an extract or a header copy writes every field of its header.
    headers: &'m [ir::HeaderInfo],
}

impl Marker<'_> {
    /// Inserts `flag = 1` after each statement of `b` (and of its nested blocks) that writes
    /// a select field, except a copy back of the field's unchanged shadow.
    fn block(&self, b: &mut Block, shadows: &mut Vec<Shadow>) {
        let mut i = 0;
        while i < b.len() {
            self.nested(&mut b[i], shadows);
            let set: Vec<Stmt> = self
                .marks
                .iter()
                .filter(|(f, _)| {
                    (writes(&b[i], *f) || self.fills(&b[i], *f)) && !copies_back(&b[i], *f, shadows)
                })
                .map(|(_, flag)| Stmt::Assign {
                    dst: Place::Field(*flag),
                    value: Expr::Const { value: 1, width: 1 },
                })
                .collect();
            self.track(&b[i], shadows);
            let n = set.len();
            b.splice(i + 1..i + 1, set);
            i += 1 + n;
        }
    }

    fn nested(&self, s: &mut Stmt, shadows: &[Shadow]) {
        let inner = |b: &mut Block| self.block(b, &mut shadows.to_vec());
        match s {
            Stmt::If { then, els, .. } => {
                inner(then);
                inner(els);
            }
            Stmt::ApplyTable { branches, .. } => match branches {
                TableBranches::None => {}
                TableBranches::HitMiss { hit, miss } => {
                    inner(hit);
                    inner(miss);
                }
                TableBranches::ActionRun { cases, default } => {
                    for (_, c) in cases {
                        inner(c);
                    }
                    inner(default);
                }
            },
            _ => {}
        }
    }

    /// Updates the shadows after `s`: a plain copy of a select field starts one; any write of
    /// a shadow (or of its field) ends it; a statement that moves headers ends them all.
    fn track(&self, s: &Stmt, shadows: &mut Vec<Shadow>) {
        if matches!(
            s,
            Stmt::CopyHeader { .. }
                | Stmt::Extract(_)
                | Stmt::ExtractVarbit { .. }
                | Stmt::ExtractNext(_)
                | Stmt::StackShift { .. }
        ) {
            shadows.clear();
            return;
        }
        shadows.retain(|sh| {
            !self.writes_deep(s, sh.copy, 0) && !self.writes_deep(s, sh.of, 0) || {
                // `f = t` of the shadow itself leaves both equal: keep it.
                copies_back(s, sh.of, std::slice::from_ref(sh))
            }
        });
        if let Stmt::Assign {
            dst: Place::Field(copy),
            value: Expr::Field(of),
        } = s
        {
            // A copy of the field, or of a shadow of it (copies chain through temporaries).
            let field = match self.marks.iter().find(|(f, _)| f == of) {
                Some((f, _)) => Some(*f),
                None => shadows.iter().find(|sh| sh.copy == *of).map(|sh| sh.of),
            };
            if let Some(f) = field {
                shadows.retain(|sh| !overlaps(sh.copy, *copy));
                shadows.push(Shadow { copy: *copy, of: f });
            }
        }
    }

    /// Whether `s` writes a whole header holding bits of `f` (an extract, a header copy).
    fn fills(&self, s: &Stmt, f: FieldRef) -> bool {
        let h = match s {
            Stmt::Extract(h) | Stmt::ExtractVarbit { header: h, .. } => *h,
            Stmt::CopyHeader { dst, .. } => *dst,
            _ => return false,
        };
        self.headers.get(h.index()).is_some_and(|h| {
            let whole = FieldRef {
                offset: h.byte_offset * 8,
                width: u16::try_from(h.byte_len * 8).unwrap_or(u16::MAX),
            };
            overlaps(whole, f)
        })
    }

    /// Whether `s` or anything it runs (nested blocks, applied tables' actions, called
    /// actions) writes bits of `f` (depth-bounded against a malformed IR).
    fn writes_deep(&self, s: &Stmt, f: FieldRef, depth: u8) -> bool {
        if depth > 16 {
            return true;
        }
        let any = |b: &Block| b.iter().any(|s| self.writes_deep(s, f, depth + 1));
        let action = |a: ir::ActionId| self.actions.get(a.index()).is_none_or(|a| any(&a.body));
        writes(s, f)
            || match s {
                Stmt::If { then, els, .. } => any(then) || any(els),
                Stmt::CallAction { action: a, .. } => action(*a),
                Stmt::ApplyTable { table, branches } => {
                    let t = self.tables.get(table.index());
                    t.is_none_or(|t| {
                        t.actions.iter().any(|r| action(r.action))
                            || action(t.default_action.action)
                    }) || match branches {
                        TableBranches::None => false,
                        TableBranches::HitMiss { hit, miss } => any(hit) || any(miss),
                        TableBranches::ActionRun { cases, default } => {
                            cases.iter().any(|(_, c)| any(c)) || any(default)
                        }
                    }
                }
                _ => false,
            }
    }
}

/// Whether `s` is `f = t` (or `f = f`) with `t` an unchanged shadow of `f`.
fn copies_back(s: &Stmt, f: FieldRef, shadows: &[Shadow]) -> bool {
    match s {
        Stmt::Assign {
            dst: Place::Field(d),
            value: Expr::Field(v),
        } if *d == f => *v == f || shadows.iter().any(|sh| sh.of == f && sh.copy == *v),
        _ => false,
    }
}

/// Whether `s` itself (not a nested block) writes bits of `f`.
fn writes(s: &Stmt, f: FieldRef) -> bool {
    let hits = |p: &Place| match p {
        Place::Field(d) | Place::FieldSlice { field: d, .. } => overlaps(*d, f),
        _ => false,
    };
    match s {
        Stmt::Assign { dst, .. } => hits(dst),
        Stmt::RegisterExecute { outs, .. } => outs.iter().flatten().any(hits),
        Stmt::ChecksumDeposit { dst, .. } => overlaps(*dst, f),
        _ => false,
    }
}

fn overlaps(a: FieldRef, b: FieldRef) -> bool {
    a.offset < b.offset + u32::from(b.width) && b.offset < a.offset + u32::from(a.width)
}
