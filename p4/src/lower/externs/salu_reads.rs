//! What a RegisterAction body reads after it writes the register's word, and which writes the
//! stateful ALU can hold, as bf-p4c compiles the body (p4c `backends/tofino`: the mid-end's
//! `LocalCopyPropagation` with the `skipRegisterActionOutput` policy, then
//! `CreateSaluInstruction`):
//!
//! - After `value = E` on every path, where `E` does not read `value`, later reads of `value`
//!   are `E` (copy propagation): the same as P4's sequential reading.
//! - Otherwise (`value = value + 1`, or a write in one branch of an `if`), a later read of the
//!   word in a condition, in a value written to memory or in a computed output reads the word
//!   from memory: the compare units and ALUs see the RAM word from before the update (the
//!   tofino-model's `cmp_ram_lo` / `ram_lo`). These reads become `Expr::RegInput` and warn.
//! - A plain output copy `rv = value` after a write outputs the ALU result (`alu_lo`: the updated
//!   word, or the memory word where no write ran): pisa's sequential value.
//! - Two assignments of one word or output that can both run (unconditional, or under the same
//!   condition) are refused with bf-p4c's reason (`checkWriteAfterWrite`); an unconditional
//!   first `rv = 0` is exempt, as in bf-p4c. After `if (c) { ..; return; }` the rest of the
//!   body runs under `!c`.

use pipeline::ir::{self, Expr, Place, RegWord, Stmt};

/// Where a rewritten read was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ReadPlace {
    Condition,
    Update,
    Output,
}

/// A read of `word` that now reads memory although the body wrote the word before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LateRead {
    pub word: RegWord,
    pub place: ReadPlace,
}

/// Two assignments of one destination that can both run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DoubleWrite {
    pub dst: Place,
}

/// What the pass found.
#[derive(Debug, Default)]
pub(crate) struct Findings {
    pub late: Vec<LateRead>,
    pub double: Vec<DoubleWrite>,
}

/// Per path: the word values bf-p4c copy-propagates and whether a word may have been written.
#[derive(Clone, Default)]
struct Flow {
    avail: [Option<Expr>; 2],
    written: [bool; 2],
    /// The enclosing conditions with their polarity (bf-p4c's predicate).
    pred: Vec<(Expr, bool)>,
    /// The path has returned: the rest of the body does not run on it.
    returned: bool,
}

struct Pass {
    found: Findings,
    /// Destinations assigned so far, with the predicate each ran under.
    writes: Vec<(Place, Vec<(Expr, bool)>)>,
}

fn word(w: RegWord) -> usize {
    usize::from(w == RegWord::Hi)
}

/// Whether `e` reads `w` (as written so far or from memory).
fn reads(e: &Expr, w: RegWord) -> bool {
    match e {
        Expr::RegValue(x) | Expr::RegInput(x) => *x == w,
        Expr::Unary { arg, .. } | Expr::Slice { arg, .. } | Expr::Cast { arg, .. } => reads(arg, w),
        Expr::Binary { a, b, .. } => reads(a, w) || reads(b, w),
        Expr::Concat { hi, lo, .. } => reads(hi, w) || reads(lo, w),
        Expr::Ternary {
            cond, then, els, ..
        } => reads(cond, w) || reads(then, w) || reads(els, w),
        Expr::MathUnit { input, .. } => reads(input, w),
        Expr::MinMax { value, mask, .. } => reads(value, w) || reads(mask, w),
        Expr::SaluPredicate { conds, .. } => conds.iter().any(|c| reads(c, w)),
        _ => false,
    }
}

/// `rv = value` (through casts and slices): the output copies the ALU result.
fn plain_copy(e: &Expr) -> bool {
    match e {
        Expr::RegValue(_) => true,
        Expr::Cast { arg, .. } | Expr::Slice { arg, .. } => plain_copy(arg),
        _ => false,
    }
}

fn is_zero(e: &Expr) -> bool {
    match e {
        Expr::Const { value, .. } => *value == 0,
        Expr::Cast { arg, .. } => is_zero(arg),
        _ => false,
    }
}

impl Pass {
    fn expr(&mut self, e: &mut Expr, flow: &Flow, place: ReadPlace) {
        match e {
            Expr::RegValue(w) => {
                let i = word(*w);
                if flow.written[i] && flow.avail[i].is_none() {
                    let read = LateRead { word: *w, place };
                    if !self.found.late.contains(&read) {
                        self.found.late.push(read);
                    }
                    *e = Expr::RegInput(*w);
                }
            }
            Expr::Unary { arg, .. } | Expr::Slice { arg, .. } | Expr::Cast { arg, .. } => {
                self.expr(arg, flow, place)
            }
            Expr::Binary { a, b, .. } => {
                self.expr(a, flow, place);
                self.expr(b, flow, place);
            }
            Expr::Concat { hi, lo, .. } => {
                self.expr(hi, flow, place);
                self.expr(lo, flow, place);
            }
            Expr::Ternary {
                cond, then, els, ..
            } => {
                self.expr(cond, flow, ReadPlace::Condition);
                self.expr(then, flow, place);
                self.expr(els, flow, place);
            }
            Expr::MathUnit { input, .. } => self.expr(input, flow, place),
            Expr::MinMax { value, mask, .. } => {
                self.expr(value, flow, place);
                self.expr(mask, flow, place);
            }
            Expr::SaluPredicate { conds, .. } => {
                for c in conds {
                    self.expr(c, flow, ReadPlace::Condition);
                }
            }
            _ => {}
        }
    }

    /// bf-p4c's `checkWriteAfterWrite`: a second assignment of `dst` whose predicate is the
    /// same as an earlier one's, or where either is unconditional.
    fn note_write(&mut self, dst: &Place, value: &Expr, flow: &Flow) {
        let earlier: Vec<&Vec<(Expr, bool)>> = self
            .writes
            .iter()
            .filter(|(d, _)| d == dst)
            .map(|(_, p)| p)
            .collect();
        if earlier.is_empty() && flow.pred.is_empty() && is_zero(value) {
            return;
        }
        let clash = earlier
            .iter()
            .any(|p| p.is_empty() || flow.pred.is_empty() || **p == flow.pred);
        if clash {
            let d = DoubleWrite { dst: *dst };
            if !self.found.double.contains(&d) {
                self.found.double.push(d);
            }
        }
        self.writes.push((*dst, flow.pred.clone()));
    }

    fn block(&mut self, body: &mut [Stmt], flow: &mut Flow) {
        for s in body {
            match s {
                Stmt::Assign { dst, value } => {
                    let output = matches!(dst, Place::RegOutput | Place::RegOutputN(_));
                    if !(output && plain_copy(value)) {
                        let place = if output {
                            ReadPlace::Output
                        } else {
                            ReadPlace::Update
                        };
                        self.expr(value, flow, place);
                    }
                    if matches!(
                        dst,
                        Place::RegValue(_) | Place::RegOutput | Place::RegOutputN(_)
                    ) {
                        self.note_write(dst, value, flow);
                    }
                    if let Place::RegValue(w) = dst {
                        let i = word(*w);
                        for a in flow.avail.iter_mut() {
                            if a.as_ref().is_some_and(|e| reads(e, *w)) {
                                *a = None;
                            }
                        }
                        flow.written[i] = true;
                        flow.avail[i] = (!reads(value, *w)).then(|| value.clone());
                    }
                }
                Stmt::If {
                    cond, then, els, ..
                } => {
                    self.expr(cond, flow, ReadPlace::Condition);
                    let mut t = flow.clone();
                    t.pred.push((cond.clone(), true));
                    self.block(then, &mut t);
                    let mut e = flow.clone();
                    e.pred.push((cond.clone(), false));
                    self.block(els, &mut e);
                    // A branch that returns leaves the rest of the body to the other one.
                    match (t.returned, e.returned) {
                        (true, true) => {
                            flow.returned = true;
                            return;
                        }
                        (true, false) => {
                            *flow = e;
                            continue;
                        }
                        (false, true) => {
                            *flow = t;
                            continue;
                        }
                        (false, false) => {}
                    }
                    for i in 0..2 {
                        flow.written[i] = t.written[i] || e.written[i];
                        flow.avail[i] = if t.avail[i] == e.avail[i] {
                            t.avail[i].take()
                        } else {
                            None
                        };
                    }
                }
                Stmt::Return => {
                    flow.returned = true;
                    return;
                }
                _ => {}
            }
        }
    }
}

/// Rewrites the reads of `body` that the stateful ALU takes from memory, and reports them and
/// the assignments it cannot hold.
pub(crate) fn hardware_reads(body: &mut ir::Block) -> Findings {
    let mut p = Pass {
        found: Findings::default(),
        writes: Vec::new(),
    };
    p.block(body, &mut Flow::default());
    p.found
}
