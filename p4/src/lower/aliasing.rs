//! Copy-in/copy-out where it shows (P4_16 §6.8, "Calling convention: call by copy in/copy
//! out").
//!
//! pisa binds a parameter of an action, a nested control or a sub-parser to its argument's
//! storage (an `in` one to the argument's expression) instead of copying. That is the same
//! thing unless the body reaches the argument's storage through another name: it writes a field
//! an `in` argument reads (`c.apply(hdr.h.k, hdr)` whose body sets `hh.h.k` and then looks a
//! table up on its `in` copy of `k`), or two written parameters share storage (`act(x, x)`).
//! There p4c's copies give other results, so such a parameter gets a temporary of its own,
//! copied in before the body and out after it, as p4c's inliner does (its copies are otherwise
//! removed again by copy propagation, which is why pisa makes only these). Which parameters
//! need one is known only after the body is lowered: the lowering records them and the program
//! is lowered again, the loop of control instances applied with different arguments
//! ([`super::shared_apply`]).
//!
//! An action may also reach its `inout` argument through the enclosing control's name for it
//! (`b(hdr.h.r4)` with `hdr.h.r4 = 1;` in `b`); both lower to the same field, so the names the
//! action's body spells are resolved in the enclosing scope ([`Lowerer::outer_storage`]).

use std::collections::{BTreeSet, HashMap, HashSet};
use std::ops::Range;
use std::rc::Rc;

use pipeline::ir::{self, FieldRef, HeaderId, Place, Stmt, TableBranches};

use super::phv::Loc;
use super::shared_apply::overlap;
use super::{Binding, Lowerer, V};
use crate::ast::{self, Direction};

/// Action bodies expanded deeper than this (actions calling actions, against a malformed IR)
/// are taken to write everything; `if` nesting does not count (the frontend bounds it).
const MAX_DEPTH: u8 = 32;

/// The PHV bits and header validity bits a lowered body writes.
#[derive(Debug, Default)]
pub(in crate::lower) struct Writes {
    bits: Vec<Range<u32>>,
    valid: Vec<HeaderId>,
    /// Too deep to follow: anything may be written.
    all: bool,
}

impl Writes {
    fn field(&mut self, f: FieldRef) {
        self.bits.push(f.offset..f.offset + u32::from(f.width));
    }

    fn place(&mut self, p: &Place) {
        match p {
            Place::Field(f) | Place::FieldSlice { field: f, .. } => self.field(*f),
            Place::RegValue(_) | Place::RegOutput | Place::RegOutputN(_) => {}
        }
    }

    /// Whether a write touches one of `fields` or the validity of one of `headers`.
    fn touches(&self, fields: &[FieldRef], headers: &[HeaderId]) -> bool {
        self.all
            || headers.iter().any(|h| self.valid.contains(h))
            || fields.iter().any(|f| {
                let r = f.offset..f.offset + u32::from(f.width);
                self.bits.iter().any(|w| w.start < r.end && r.start < w.end)
            })
    }
}

/// The fields and validity bits expression `e` reads.
fn expr_reads(e: &ir::Expr, fields: &mut Vec<FieldRef>, headers: &mut Vec<HeaderId>) {
    use ir::Expr;
    match e {
        Expr::Field(f) => fields.push(*f),
        Expr::Valid(h) => headers.push(*h),
        Expr::Slice { arg, .. } | Expr::Unary { arg, .. } | Expr::Cast { arg, .. } => {
            expr_reads(arg, fields, headers)
        }
        Expr::Binary { a, b, .. } => {
            expr_reads(a, fields, headers);
            expr_reads(b, fields, headers);
        }
        Expr::Concat { hi, lo, .. } => {
            expr_reads(hi, fields, headers);
            expr_reads(lo, fields, headers);
        }
        Expr::Ternary {
            cond, then, els, ..
        } => {
            expr_reads(cond, fields, headers);
            expr_reads(then, fields, headers);
            expr_reads(els, fields, headers);
        }
        // Anything else a bound `in` argument can be is a constant, an extern's result or an
        // action parameter: nothing a body can write under another name.
        _ => {}
    }
}

impl Lowerer<'_> {
    /// What `body` writes, following the actions its tables and calls run.
    pub(in crate::lower) fn writes_of(&self, body: &[Stmt]) -> Writes {
        let mut w = Writes::default();
        self.collect_writes(body, &mut w, 0);
        w
    }

    fn collect_writes(&self, body: &[Stmt], w: &mut Writes, depth: u8) {
        if depth > MAX_DEPTH {
            w.all = true;
            return;
        }
        let action = |id: ir::ActionId, w: &mut Writes| match self.pipe.actions.get(id.index()) {
            Some(a) => self.collect_writes(&a.body, w, depth + 1),
            None => w.all = true,
        };
        for s in body {
            match s {
                Stmt::Assign { dst, .. } => w.place(dst),
                Stmt::RegisterExecute { outs, .. } => {
                    outs.iter().flatten().for_each(|p| w.place(p))
                }
                Stmt::SetValid { header, .. } => w.valid.push(*header),
                Stmt::Extract(h) | Stmt::ExtractVarbit { header: h, .. } => {
                    self.header_written(*h, w)
                }
                Stmt::ChecksumDeposit { dst, .. } => w.field(*dst),
                Stmt::CopyHeader { dst, .. } => self.header_written(*dst, w),
                Stmt::StackShift { stack, .. } | Stmt::ExtractNext(stack) => {
                    match self.phv.layout.stacks.get(stack.index()) {
                        Some(info) => {
                            w.field(info.next_index);
                            for h in info.elements.clone() {
                                self.header_written(h, w);
                            }
                        }
                        None => w.all = true,
                    }
                }
                Stmt::If { then, els, .. } => {
                    self.collect_writes(then, w, depth);
                    self.collect_writes(els, w, depth);
                }
                Stmt::CallAction { action: a, .. } => action(*a, w),
                Stmt::ApplyTable { table, branches } => {
                    match self.pipe.tables.get(table.index()) {
                        Some(t) => {
                            for a in t.actions.iter().map(|r| r.action) {
                                action(a, w);
                            }
                            action(t.default_action.action, w);
                        }
                        None => w.all = true,
                    }
                    for arm in branch_arms(branches) {
                        self.collect_writes(arm, w, depth);
                    }
                }
                _ => {}
            }
        }
    }

    /// Header `h` written whole: its bytes and its validity.
    fn header_written(&self, h: HeaderId, w: &mut Writes) {
        match self.phv.layout.headers.get(h.index()) {
            Some(info) => {
                let start = info.byte_offset.saturating_mul(8);
                w.bits.push(
                    start
                        ..info
                            .byte_offset
                            .saturating_add(info.byte_len)
                            .saturating_mul(8),
                );
                w.valid.push(h);
            }
            None => w.all = true,
        }
    }

    /// The directional parameters of one call (`args`: the parameters bound to its arguments)
    /// that need a temporary of their own given what the body writes (`writes`), other than
    /// those in `temps` already: an `in` parameter whose argument reads something written
    /// (never through the parameter itself: an `in` parameter is read-only), and `out`/`inout`
    /// parameters whose arguments share storage with another's when that storage is written.
    /// `outer`: the enclosing scope's storage the body names (an action's; none for a
    /// control, which sees only its parameters).
    pub(in crate::lower) fn aliased_params(
        &self,
        params: &[ast::Param],
        args: &HashMap<String, Binding<'_>>,
        temps: &BTreeSet<String>,
        writes: &Writes,
        outer: &[Rc<Loc>],
    ) -> BTreeSet<String> {
        let mut found = BTreeSet::new();
        let written = |p: &&ast::Param| matches!(p.direction, Direction::Out | Direction::InOut);
        let storage = |p: &ast::Param| match args.get(&p.name.name) {
            Some(Binding::Val(V::Loc(l))) => Some(l.clone()),
            _ => None,
        };
        for p in params.iter().filter(|p| !temps.contains(&p.name.name)) {
            let (mut fields, mut headers) = (Vec::new(), Vec::new());
            match (p.direction, args.get(&p.name.name)) {
                (Direction::In, Some(Binding::In(V::Scalar(e, _)))) => {
                    expr_reads(e, &mut fields, &mut headers)
                }
                (Direction::In, Some(Binding::In(V::Loc(l)))) => {
                    l.field_refs(&mut fields);
                    l.headers(&mut headers);
                }
                (Direction::Out | Direction::InOut, Some(_)) => {
                    let Some(mine) = storage(p) else { continue };
                    let shared = params.iter().filter(written).any(|q| {
                        q.name.name != p.name.name
                            && storage(q).is_some_and(|other| overlap(&mine, &other))
                    }) || outer.iter().any(|o| overlap(&mine, o));
                    if shared {
                        mine.field_refs(&mut fields);
                        mine.headers(&mut headers);
                    }
                }
                _ => {}
            }
            if (!fields.is_empty() || !headers.is_empty()) && writes.touches(&fields, &headers) {
                found.insert(p.name.name.clone());
            }
        }
        found
    }
}

/// The dotted names (`hdr.h.r4`, `meta`) spelled in `text`, comments skipped.
fn dotted_names(text: &str) -> Vec<Vec<&str>> {
    let b = text.as_bytes();
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let (mut out, mut i) = (Vec::new(), 0);
    while i < b.len() {
        if b[i..].starts_with(b"//") {
            i += b[i..]
                .iter()
                .position(|c| *c == b'\n')
                .unwrap_or(b.len() - i);
        } else if b[i..].starts_with(b"/*") {
            i += b[i + 2..]
                .windows(2)
                .position(|w| w == b"*/")
                .map_or(b.len() - i, |p| p + 4);
        } else if ident(b[i]) && !b[i].is_ascii_digit() {
            let mut path = Vec::new();
            loop {
                let start = i;
                while i < b.len() && ident(b[i]) {
                    i += 1;
                }
                path.push(&text[start..i]);
                if i + 1 < b.len() && b[i] == b'.' && ident(b[i + 1]) && !b[i + 1].is_ascii_digit()
                {
                    i += 1;
                } else {
                    break;
                }
            }
            out.push(path);
        } else if b[i].is_ascii_digit() {
            while i < b.len() && ident(b[i]) {
                i += 1;
            }
        } else {
            i += 1;
        }
    }
    out
}

impl<'a> Lowerer<'a> {
    /// The storage of the current (enclosing) scopes that `decl`'s body names other than
    /// through its own parameters: each dotted name resolved as far as its parts are fields
    /// (`hdr.h.setValid()` is `hdr.h`).
    pub(in crate::lower) fn outer_storage(&self, decl: &ast::ActionDecl) -> Vec<Rc<Loc>> {
        let text = self.env.text_of(decl.body.span);
        let mut seen = HashSet::new();
        let mut out = Vec::new();
        for path in dotted_names(&text) {
            if decl.params.iter().any(|p| p.name.name == path[0]) || !seen.insert(path.clone()) {
                continue;
            }
            let mut loc = match self.lookup_scoped(path[0]) {
                Some(Binding::Val(V::Loc(l)) | Binding::In(V::Loc(l))) => l,
                _ => continue,
            };
            for part in &path[1..] {
                match loc.field(part) {
                    Some(f) => loc = f,
                    None => break,
                }
            }
            out.push(loc);
        }
        out
    }
}

/// The blocks a table apply runs after the table (hit/miss or per-action arms).
pub(in crate::lower) fn branch_arms(b: &TableBranches) -> Vec<&ir::Block> {
    match b {
        TableBranches::None => Vec::new(),
        TableBranches::HitMiss { hit, miss } => vec![hit, miss],
        TableBranches::ActionRun { cases, default } => cases
            .iter()
            .map(|(_, b)| b)
            .chain(std::iter::once(default))
            .collect(),
    }
}

/// [`branch_arms`], to change them.
pub(in crate::lower) fn branch_arms_mut(b: &mut TableBranches) -> Vec<&mut ir::Block> {
    match b {
        TableBranches::None => Vec::new(),
        TableBranches::HitMiss { hit, miss } => vec![hit, miss],
        TableBranches::ActionRun { cases, default } => cases
            .iter_mut()
            .map(|(_, b)| b)
            .chain(std::iter::once(default))
            .collect(),
    }
}
