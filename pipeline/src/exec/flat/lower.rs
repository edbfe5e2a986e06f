//! Lowering: IR statements and expressions of one gress into the flat form of [`super`].
//!
//! Every rule here mirrors what the tree interpreter (`exec::eval`, `exec::stmt`,
//! `exec::parser`) does with the same node, with the per-packet decisions taken now: widths,
//! masks, operand widths of comparisons, watched-field bits, header byte ranges, checksum runs.
//! Nodes whose meaning depends on something only known while running (a register word's width,
//! a reference to a missing IR object, a parser statement outside the parser) are kept as
//! [`FExpr::Tree`] / [`Op::Tree`] so the tree interpreter gives exactly its usual answer or
//! error.

use std::cell::{Cell, RefCell};

use super::{
    CsPart, FApply, FBranches, FExpr, FParser, FSalu, FState, FTransition, FlatGress, Gate, Op, SOp,
};
use crate::ir::{
    BinOp, Block, Expr, FieldRef, Gress, GressProgram, Pipeline, Place, RegWord, RegisterActionId,
    Stmt, TableBranches, Transition, UnOp,
};
use crate::phv::mask;

/// Lowers the statements of one gress.
pub struct Lowerer<'a> {
    pl: &'a Pipeline,
    gp: &'a GressProgram,
    /// Watched traffic-manager fields (bit i = `watch[i]`).
    watch: [Option<FieldRef>; 3],
    /// The `if`s lowered so far (their `Op::If::gate` indexes this).
    gates: RefCell<Vec<Gate>>,
    /// While a RegisterAction body is lowered: its register's word width (what `RegValue`
    /// reads have), and whether anything in it was left to the tree interpreter.
    reg_width: Cell<Option<u16>>,
    salu_tree: Cell<bool>,
}

impl<'a> Lowerer<'a> {
    pub fn new(pl: &'a Pipeline, gress: Gress, watch: [Option<FieldRef>; 3]) -> Lowerer<'a> {
        let gp = match gress {
            Gress::Ingress => &pl.ingress,
            Gress::Egress => &pl.egress,
        };
        Lowerer {
            pl,
            gp,
            watch,
            gates: RefCell::new(Vec::new()),
            reg_width: Cell::new(None),
            salu_tree: Cell::new(false),
        }
    }

    /// The whole gress: parser, control, deparser and every action.
    pub fn gress(&self) -> FlatGress {
        FlatGress {
            parser: self.parser(),
            control: self.block(&self.gp.control.body, false),
            deparser: self.block(&self.gp.deparser.body, false),
            actions: self
                .pl
                .actions
                .iter()
                .map(|a| self.block(&a.body, false))
                .collect(),
            // Last: the blocks above fill it.
            gates: self.gates.take().into_boxed_slice(),
        }
    }

    fn parser(&self) -> FParser {
        let p = &self.gp.parser;
        FParser {
            start: p.start.index(),
            states: p
                .states
                .iter()
                .map(|st| FState {
                    body: self.block(&st.body, true),
                    transition: match &st.transition {
                        Transition::Direct(n) => FTransition::Direct(*n),
                        Transition::Select {
                            keys,
                            cases,
                            default,
                        } => FTransition::Select {
                            keys: keys.iter().map(|k| self.expr(k)).collect(),
                            cases: cases
                                .iter()
                                .map(|c| (c.keyset.clone().into_boxed_slice(), c.next))
                                .collect(),
                            default: *default,
                        },
                    },
                })
                .collect(),
        }
    }

    fn watch_bits(&self, f: FieldRef) -> u8 {
        let mut bits = 0;
        for (i, w) in self.watch.iter().enumerate() {
            if w.is_some_and(|w| w.offset == f.offset) {
                bits |= 1 << i;
            }
        }
        bits
    }

    /// Lowers a block; `parser` allows the parser-only statements to be lowered (elsewhere
    /// they stay tree statements, which fail with `ParserOnly` as the tree does).
    pub fn block(&self, body: &[Stmt], parser: bool) -> Box<[Op]> {
        fuse_emits(body.iter().map(|s| self.stmt(s, parser)).collect())
    }

    fn tree(s: &Stmt) -> Op {
        Op::Tree(Box::new(s.clone()))
    }

    fn stmt(&self, s: &Stmt, parser: bool) -> Op {
        let pl = self.pl;
        match s {
            Stmt::Assign {
                dst: Place::Field(f),
                value,
            } => {
                let watch = self.watch_bits(*f);
                match value {
                    Expr::Const { value, width } => Op::SetConst {
                        f: *f,
                        value: value & mask(*width),
                        watch,
                    },
                    Expr::Param { index, width } => Op::SetParam {
                        f: *f,
                        index: *index,
                        mask: mask(*width),
                        watch,
                    },
                    _ => Op::Set {
                        f: *f,
                        e: self.expr(value),
                        watch,
                    },
                }
            }
            Stmt::Assign {
                dst: Place::FieldSlice { field, hi, lo },
                value,
            } if hi >= lo && *hi < field.width => Op::SetSlice {
                f: *field,
                e: self.expr(value),
                lo: *lo,
                mask: mask(hi - lo + 1),
                watch: self.watch_bits(*field),
            },
            Stmt::CopyHeader { dst, src } => {
                let hs = &self.gp.phv.headers;
                match (hs.get(dst.index()), hs.get(src.index())) {
                    (Some(d), Some(sr)) => Op::CopyHeader {
                        dst: dst.0,
                        src: src.0,
                        dst_off: d.byte_offset,
                        src_off: sr.byte_offset,
                        len: d.byte_len.min(sr.byte_len),
                    },
                    _ => Self::tree(s),
                }
            }
            Stmt::SetValid { header, valid } => Op::SetValid {
                header: header.0,
                valid: *valid,
            },
            Stmt::If {
                cond,
                then,
                els,
                stage,
            } => {
                let gate = {
                    let mut gates = self.gates.borrow_mut();
                    gates.push(Gate {
                        stage: *stage,
                        cond: cond.clone(),
                    });
                    gates.len() as u32 - 1
                };
                Op::If {
                    cond: self.expr(cond),
                    then: self.block(then, parser),
                    els: self.block(els, parser),
                    gate,
                }
            }
            Stmt::ApplyTable { table, branches } if pl.tables.get(table.index()).is_some() => {
                let t = &pl.tables[table.index()];
                let branches = match branches {
                    TableBranches::None => FBranches::None,
                    TableBranches::HitMiss { hit, miss } => FBranches::HitMiss {
                        hit: self.block(hit, parser),
                        miss: self.block(miss, parser),
                    },
                    TableBranches::ActionRun { cases, default } => FBranches::ActionRun {
                        cases: cases
                            .iter()
                            .map(|(a, b)| (*a, self.block(b, parser)))
                            .collect(),
                        default: self.block(default, parser),
                    },
                };
                Op::Apply(Box::new(FApply {
                    table: table.0,
                    keys: t.keys.iter().map(|k| self.expr(&k.expr)).collect(),
                    branches,
                }))
            }
            Stmt::CallAction { action, args } if pl.actions.get(action.index()).is_some() => {
                Op::Call {
                    action: *action,
                    args: args.iter().map(|a| self.expr(a)).collect(),
                }
            }
            Stmt::Count { counter, index } if pl.counters.get(counter.index()).is_some() => {
                Op::Count {
                    counter: counter.0,
                    index: self.expr(index),
                }
            }
            Stmt::CountDirect { counter } if pl.counters.get(counter.index()).is_some() => {
                Op::CountDirect { counter: counter.0 }
            }
            Stmt::Exit => Op::Exit,
            Stmt::Return => Op::Return,
            Stmt::DigestPack { digest, fields } => Op::Digest {
                digest: digest.0,
                fields: fields.iter().map(|f| self.expr(f)).collect(),
            },
            Stmt::MirrorEmit { session, header } => {
                let mut parts = Vec::with_capacity(header.len());
                for e in header {
                    match self.width(e) {
                        Some(w) => parts.push((self.expr(e), w)),
                        None => return Self::tree(s),
                    }
                }
                Op::Mirror {
                    session: self.expr(session),
                    header: parts.into_boxed_slice(),
                }
            }
            // A header with a varbit field emits its current length: the tree interpreter's.
            Stmt::Emit(h) if self.gp.phv.varbit(*h).is_some() => Self::tree(s),
            Stmt::Emit(h) => match self.gp.phv.headers.get(h.index()) {
                Some(info) => Op::Emit {
                    header: h.0,
                    offset: info.byte_offset,
                    len: info.byte_len,
                },
                None => Self::tree(s),
            },
            Stmt::Extract(h) if parser => match self.gp.phv.headers.get(h.index()) {
                Some(info) => Op::Extract {
                    header: h.0,
                    offset: info.byte_offset,
                    len: info.byte_len,
                },
                None => Self::tree(s),
            },
            Stmt::ExtractNext(stack) if parser => {
                let Some(st) = self.gp.phv.stacks.get(stack.index()) else {
                    return Self::tree(s);
                };
                let mut elements = Vec::with_capacity(st.elements.len());
                for h in &st.elements {
                    match self.gp.phv.headers.get(h.index()) {
                        Some(info) => elements.push(Op::Extract {
                            header: h.0,
                            offset: info.byte_offset,
                            len: info.byte_len,
                        }),
                        None => return Self::tree(s),
                    }
                }
                Op::ExtractNext {
                    next_index: st.next_index,
                    elements: elements.into_boxed_slice(),
                }
            }
            Stmt::Advance(Expr::Const { value, width }) if parser => {
                match u64::try_from(value & mask(*width)) {
                    Ok(bits) => Op::AdvanceConst(bits),
                    Err(_) => Self::tree(s),
                }
            }
            Stmt::ChecksumAdd { checksum, inputs } if parser => Op::ChecksumAdd {
                checksum: checksum.0,
                parts: self.cs_parts(inputs),
                subtract: false,
            },
            Stmt::ChecksumSubtract { checksum, inputs } if parser => Op::ChecksumAdd {
                checksum: checksum.0,
                parts: self.cs_parts(inputs),
                subtract: true,
            },
            _ => Self::tree(s),
        }
    }

    /// The width the tree interpreter's `width_of` gives, when it is known before running
    /// (a register word's width is only known inside its RegisterAction).
    fn width(&self, e: &Expr) -> Option<u16> {
        match e {
            Expr::RegValue(_) | Expr::RegInput(_) => self.reg_width.get(),
            Expr::RegisterParam(p) => Some(
                self.pl
                    .register_params
                    .get(p.index())
                    .map(|p| p.width)
                    .unwrap_or(0),
            ),
            _ => Some(e.width()),
        }
    }

    /// Checksum inputs grouped as `ones_sum_inputs` groups them while running: runs of PHV
    /// fields (each ≤ 128 bits) lying back to back, then single values at their widths.
    fn cs_parts(&self, inputs: &[Expr]) -> Box<[CsPart]> {
        let mut parts = Vec::new();
        let mut run: Option<(u32, u32)> = None;
        for i in inputs {
            if let Expr::Field(f @ FieldRef { width: 0..=128, .. }) = i {
                match &mut run {
                    Some((start, w)) if *start + *w == f.offset => *w += u32::from(f.width),
                    _ => {
                        if let Some((start, width)) = run {
                            parts.push(CsPart::Run { start, width });
                        }
                        run = Some((f.offset, u32::from(f.width)));
                    }
                }
                continue;
            }
            if let Some((start, width)) = run.take() {
                parts.push(CsPart::Run { start, width });
            }
            parts.push(match self.width(i) {
                Some(width) => CsPart::Value {
                    e: self.expr(i),
                    width,
                },
                None => CsPart::Tree(Box::new(i.clone())),
            });
        }
        if let Some((start, width)) = run {
            parts.push(CsPart::Run { start, width });
        }
        parts.into_boxed_slice()
    }

    fn tree_expr(&self, e: &Expr) -> FExpr {
        self.salu_tree.set(true);
        FExpr::Tree(Box::new(e.clone()))
    }

    /// `ra.execute(index)` lowered for the native generator, when the action is a scalar one
    /// (not a MinMaxAction, no stateful counter as index) on words of at most 64 bits and
    /// its body lowers whole (see [`FSalu`]); else `None` (the node stays a tree node).
    fn salu(&self, e: &Expr, action: RegisterActionId, index: &Expr, width: u16) -> Option<FSalu> {
        let ra = self.pl.register_actions.get(action.index())?;
        let reg = self.pl.registers.get(ra.register.index())?;
        let scalar = !ra.wide && !matches!(index, Expr::SaluCounter { .. });
        if !scalar || reg.width > 64 || ra.output_width > 64 || self.reg_width.get().is_some() {
            return None;
        }
        let index = self.expr(index);
        self.reg_width.set(Some(reg.width));
        self.salu_tree.set(false);
        let mut nth = 0;
        let body = self.salu_block(&ra.body, &mut nth);
        let whole = !self.salu_tree.get();
        self.reg_width.set(None);
        Some(FSalu {
            tree: e.clone(),
            action: action.0,
            register: ra.register.0,
            direct: reg.direct_table.is_some(),
            paired: reg.paired,
            word_mask: mask(reg.width),
            out_mask: mask(ra.output_width),
            mask: mask(width),
            index,
            body: body.filter(|_| whole)?,
        })
    }

    /// A RegisterAction body (assignments to the words and outputs, `if`s), or `None`.
    fn salu_block(&self, b: &Block, nth: &mut u32) -> Option<Box<[SOp]>> {
        let mut out = Vec::with_capacity(b.len());
        for s in b {
            out.push(match s {
                Stmt::Assign { dst, value } => SOp::Set {
                    word: match dst {
                        Place::RegValue(RegWord::Lo) => 0,
                        Place::RegValue(RegWord::Hi) => 1,
                        Place::RegOutput => 2,
                        Place::RegOutputN(_) => 3,
                        _ => return None,
                    },
                    e: self.expr(value),
                },
                Stmt::If {
                    cond, then, els, ..
                } => {
                    let at = *nth;
                    *nth += 1;
                    SOp::If {
                        cond: self.expr(cond),
                        then: self.salu_block(then, nth)?,
                        els: self.salu_block(els, nth)?,
                        nth: at,
                    }
                }
                _ => return None,
            });
        }
        Some(out.into_boxed_slice())
    }

    fn sub(&self, e: &Expr) -> Box<FExpr> {
        Box::new(self.expr(e))
    }

    /// Lowers an expression (see `Ctx::eval` for the meaning of every node).
    pub fn expr(&self, e: &Expr) -> FExpr {
        match e {
            Expr::Const { value, width } => FExpr::Const(value & mask(*width)),
            Expr::Field(f) => FExpr::Field(*f),
            Expr::Valid(h) => FExpr::Valid(h.0),
            Expr::Param { index, width } => FExpr::Param {
                index: *index,
                mask: mask(*width),
            },
            Expr::Unary { op, arg, width } => match op {
                UnOp::Not => FExpr::Not {
                    a: self.sub(arg),
                    mask: mask(*width),
                },
                UnOp::Neg => FExpr::Neg {
                    a: self.sub(arg),
                    mask: mask(*width),
                },
                UnOp::LNot => FExpr::LNot(self.sub(arg)),
            },
            Expr::Binary {
                op,
                a,
                b,
                width,
                signed,
            } => match op {
                BinOp::LAnd => FExpr::LAnd(self.sub(a), self.sub(b)),
                BinOp::LOr => FExpr::LOr(self.sub(a), self.sub(b)),
                _ => {
                    let ow = match op {
                        BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => {
                            match (self.width(a), self.width(b)) {
                                (Some(x), Some(y)) => x.max(y),
                                _ => return self.tree_expr(e),
                            }
                        }
                        _ => *width,
                    };
                    if let (BinOp::Eq, Expr::Field(f), Expr::Const { value, width: cw }) =
                        (op, &**a, &**b)
                    {
                        if f.width <= ow {
                            return FExpr::FieldEqConst {
                                f: *f,
                                value: value & mask(*cw) & mask(ow),
                            };
                        }
                    }
                    FExpr::Bin {
                        op: *op,
                        a: self.sub(a),
                        b: self.sub(b),
                        width: *width,
                        ow,
                        signed: *signed,
                    }
                }
            },
            Expr::Slice { arg, hi, lo } if hi >= lo && *lo < 128 => FExpr::Slice {
                a: self.sub(arg),
                lo: *lo,
                mask: mask(hi - lo + 1),
            },
            Expr::Concat { hi, lo, width } => match self.width(lo) {
                Some(lw) => FExpr::Concat {
                    hi: self.sub(hi),
                    lo: self.sub(lo),
                    lo_width: u32::from(lw),
                    mask: mask(*width),
                },
                None => self.tree_expr(e),
            },
            Expr::Cast {
                arg,
                width,
                sign_extend,
            } => match self.width(arg) {
                Some(aw) if *sign_extend && *width > aw => FExpr::Sext {
                    a: self.sub(arg),
                    from: aw,
                    mask: mask(*width),
                },
                Some(_) => FExpr::Mask {
                    a: self.sub(arg),
                    mask: mask(*width),
                },
                None => self.tree_expr(e),
            },
            Expr::Ternary {
                cond,
                then,
                els,
                width,
            } => FExpr::Ternary {
                cond: self.sub(cond),
                then: self.sub(then),
                els: self.sub(els),
                mask: mask(*width),
            },
            Expr::ChecksumVerify(c) => FExpr::ChecksumVerify(c.0),
            Expr::ChecksumGet(c) => FExpr::ChecksumGet(c.0),
            Expr::ChecksumUpdate { inputs, .. } => FExpr::ChecksumUpdate(self.cs_parts(inputs)),
            Expr::Hash {
                hash,
                inputs,
                width,
            } => {
                let mut parts = Vec::with_capacity(inputs.len());
                for i in inputs {
                    match self.width(i) {
                        Some(w) => parts.push((self.expr(i), w)),
                        None => return self.tree_expr(e),
                    }
                }
                FExpr::Hash {
                    hash: hash.0,
                    inputs: parts.into_boxed_slice(),
                    mask: mask(*width),
                }
            }
            Expr::RegValue(w) | Expr::RegInput(w) if self.reg_width.get().is_some() => {
                let word = match w {
                    RegWord::Lo => 0,
                    RegWord::Hi => 1,
                } + if matches!(e, Expr::RegInput(_)) { 2 } else { 0 };
                FExpr::RegWord {
                    word,
                    width: self.reg_width.get().unwrap_or(0),
                }
            }
            Expr::RegisterExecute {
                action,
                index,
                width,
            } => match self.salu(e, *action, index, *width) {
                Some(s) => FExpr::Salu(Box::new(s)),
                None => self.tree_expr(e),
            },
            Expr::MeterExecute {
                meter,
                index,
                color,
            } => match self.pl.meters.get(meter.index()) {
                Some(m) => FExpr::Meter {
                    meter: meter.0,
                    // A direct meter's index is never evaluated.
                    index: match m.direct_table {
                        Some(_) => None,
                        None => index.as_deref().map(|i| self.sub(i)),
                    },
                    color: color.as_deref().map(|c| self.sub(c)),
                },
                None => self.tree_expr(e),
            },
            _ => self.tree_expr(e),
        }
    }
}

/// Merges runs of `Emit`s whose headers lie back to back in the PHV into `EmitRun`s.
fn fuse_emits(ops: Vec<Op>) -> Box<[Op]> {
    let mut out: Vec<Op> = Vec::with_capacity(ops.len());
    let mut run: Vec<(u32, u32, u32)> = Vec::new();
    let flush = |run: &mut Vec<(u32, u32, u32)>, out: &mut Vec<Op>| match run.len() {
        0 => {}
        1 => {
            let (header, offset, len) = run[0];
            out.push(Op::Emit {
                header,
                offset,
                len,
            });
            run.clear();
        }
        _ => {
            let offset = run[0].1;
            let len = run.iter().map(|p| p.2).sum();
            out.push(Op::EmitRun {
                parts: std::mem::take(run).into_boxed_slice(),
                offset,
                len,
            });
        }
    };
    for op in ops {
        if let Op::Emit {
            header,
            offset,
            len,
        } = op
        {
            let follows = run.last().is_some_and(|&(_, o, l)| o + l == offset);
            if !follows {
                flush(&mut run, &mut out);
            }
            run.push((header, offset, len));
            continue;
        }
        flush(&mut run, &mut out);
        out.push(op);
    }
    flush(&mut run, &mut out);
    out.into_boxed_slice()
}
