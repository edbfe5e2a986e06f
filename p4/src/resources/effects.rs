//! What a piece of the MAU program touches: PHV locations it reads (through the input crossbar
//! at match time, or as action operands) and writes, and the externs it runs. The dependency
//! analysis and the resource demand are both computed from these [`Effects`].

use pipeline::ir::{
    ActionId, CounterId, Expr, FieldRef, FilterId, HashId, HeaderId, MeterId, PhvLayout, Pipeline,
    Place, RegisterActionId, Stmt,
};

/// A PHV location: a bit range (MSB-first numbering, `end` exclusive), a header's validity bit,
/// or a temporary holding an extern's result inside one gress (our own numbering).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Loc {
    Bits { start: u32, end: u32 },
    Valid(HeaderId),
    Temp(u32),
}

impl Loc {
    pub fn field(f: FieldRef) -> Loc {
        Loc::Bits {
            start: f.offset,
            end: f.offset.saturating_add(u32::from(f.width)),
        }
    }

    /// Bits `hi..=lo` (LSB numbering, as in P4 slices) of `f`; the whole field if out of range.
    pub fn slice(f: FieldRef, hi: u16, lo: u16) -> Loc {
        if hi < lo || hi >= f.width {
            return Loc::field(f);
        }
        let w = u32::from(f.width);
        Loc::Bits {
            start: f.offset.saturating_add(w - 1 - u32::from(hi)),
            end: f.offset.saturating_add(w - u32::from(lo)),
        }
    }

    pub fn overlaps(&self, other: &Loc) -> bool {
        match (self, other) {
            (Loc::Bits { start: a, end: b }, Loc::Bits { start: c, end: d }) => a < d && c < b,
            (x, y) => x == y,
        }
    }
}

/// The first location of `a` that overlaps any location of `b`.
pub(crate) fn overlap(a: &[Loc], b: &[Loc]) -> Option<Loc> {
    a.iter().copied().find(|x| b.iter().any(|y| x.overlaps(y)))
}

/// Reads, writes and externs of a table, gateway or group of statements.
#[derive(Debug, Clone, Default)]
pub(crate) struct Effects {
    /// Read at match time through the input crossbar: keys, gateway conditions, hash inputs,
    /// stateful-ALU PHV inputs, extern indices.
    pub match_reads: Vec<Loc>,
    /// Read as action operands.
    pub action_reads: Vec<Loc>,
    pub writes: Vec<Loc>,
    /// Crossbar inputs other than table keys (they ride the exact-match crossbar).
    pub xbar: Vec<Loc>,
    pub register_actions: Vec<RegisterActionId>,
    pub counters: Vec<CounterId>,
    pub meters: Vec<MeterId>,
    /// LPF and WRED filters (they run on the meter ALUs).
    pub filters: Vec<FilterId>,
    pub hashes: Vec<(HashId, u16)>,
    /// Parameters of the outermost action read by its body (by index): its action data.
    pub params: Vec<u16>,
    /// Ids that point nowhere (a frontend bug), reported instead of panicking.
    pub malformed: Vec<String>,
}

impl Effects {
    pub fn merge(&mut self, o: Effects) {
        self.match_reads.extend(o.match_reads);
        self.action_reads.extend(o.action_reads);
        self.writes.extend(o.writes);
        self.xbar.extend(o.xbar);
        self.register_actions.extend(o.register_actions);
        self.counters.extend(o.counters);
        self.meters.extend(o.meters);
        self.filters.extend(o.filters);
        self.hashes.extend(o.hashes);
        self.params.extend(o.params);
        self.malformed.extend(o.malformed);
    }

    /// Every location read, at match time or as an operand.
    pub fn all_reads(&self) -> Vec<Loc> {
        let mut v = self.match_reads.clone();
        v.extend_from_slice(&self.action_reads);
        v
    }
}

/// How an expression's fields are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// As action operands.
    Action,
    /// Through the crossbar (keys, conditions).
    Match,
}

/// Action nesting deeper than this is treated as malformed.
const MAX_CALL_DEPTH: u32 = 32;

/// Action / RegisterAction bodies one collector expands at most (malformed IR where actions
/// call each other many times over must not make the check run for ever).
const MAX_EXPANSIONS: u32 = 200_000;

/// Walks IR statements and expressions of one gress, collecting [`Effects`].
pub(crate) struct Collector<'a> {
    pub pipe: &'a Pipeline,
    pub phv: &'a PhvLayout,
    depth: u32,
    expansions: u32,
    /// Actions and RegisterActions being expanded (a call back into one is a cycle).
    active: Vec<(bool, u32)>,
}

impl<'a> Collector<'a> {
    pub fn new(pipe: &'a Pipeline, phv: &'a PhvLayout) -> Self {
        Collector {
            pipe,
            phv,
            depth: 0,
            expansions: 0,
            active: Vec::new(),
        }
    }

    fn header_bits(&self, h: HeaderId, fx: &mut Effects) -> Option<Loc> {
        match self.phv.headers.get(h.index()) {
            Some(info) => Some(Loc::Bits {
                start: info.byte_offset.saturating_mul(8),
                end: info
                    .byte_offset
                    .saturating_add(info.byte_len)
                    .saturating_mul(8),
            }),
            None => {
                fx.malformed.push(format!("header id {} out of range", h.0));
                None
            }
        }
    }

    fn push_read(fx: &mut Effects, loc: Loc, mode: Mode) {
        match mode {
            Mode::Action => fx.action_reads.push(loc),
            Mode::Match => {
                fx.match_reads.push(loc);
                fx.xbar.push(loc);
            }
        }
    }

    /// Reads of `e`. Externs are recorded; their inputs are always crossbar reads.
    pub fn expr(&mut self, e: &Expr, fx: &mut Effects, mode: Mode) {
        match e {
            Expr::Field(f) => Self::push_read(fx, Loc::field(*f), mode),
            Expr::Valid(h) => Self::push_read(fx, Loc::Valid(*h), mode),
            Expr::Slice { arg, hi, lo } => match arg.as_ref() {
                Expr::Field(f) => Self::push_read(fx, Loc::slice(*f, *hi, *lo), mode),
                other => self.expr(other, fx, mode),
            },
            Expr::Unary { arg, .. } | Expr::Cast { arg, .. } => self.expr(arg, fx, mode),
            Expr::Binary { a, b, .. } => {
                self.expr(a, fx, mode);
                self.expr(b, fx, mode);
            }
            Expr::Concat { hi, lo, .. } => {
                self.expr(hi, fx, mode);
                self.expr(lo, fx, mode);
            }
            Expr::Ternary {
                cond, then, els, ..
            } => {
                self.expr(cond, fx, mode);
                self.expr(then, fx, mode);
                self.expr(els, fx, mode);
            }
            Expr::RegisterExecute { action, index, .. } => {
                self.register_execute(*action, index, fx)
            }
            Expr::Hash {
                hash,
                inputs,
                width,
            } => {
                fx.hashes.push((*hash, *width));
                for i in inputs {
                    self.expr(i, fx, Mode::Match);
                }
            }
            Expr::MeterExecute {
                meter,
                index,
                color,
            } => {
                fx.meters.push(*meter);
                for x in [index, color].into_iter().flatten() {
                    self.expr(x, fx, Mode::Match);
                }
            }
            Expr::FilterExecute {
                filter,
                value,
                index,
                ..
            } => {
                fx.filters.push(*filter);
                self.expr(value, fx, Mode::Match);
                if let Some(i) = index {
                    self.expr(i, fx, Mode::Match);
                }
            }
            Expr::MathUnit { input, .. } => self.expr(input, fx, mode),
            Expr::MinMax { value, mask, .. } => {
                self.expr(value, fx, mode);
                self.expr(mask, fx, mode);
            }
            Expr::SaluPredicate { conds, .. } => {
                for c in conds {
                    self.expr(c, fx, mode);
                }
            }
            // A parameter of a nested action call is one of the caller's arguments, which the
            // caller's own reads already record.
            Expr::Param { index, .. } => {
                if self.depth <= 1 {
                    fx.params.push(*index);
                }
            }
            Expr::Const { .. }
            | Expr::SaluCounter { .. }
            | Expr::SaluAddress { .. }
            | Expr::Lookahead { .. }
            | Expr::RegValue(_)
            | Expr::RegInput(_)
            | Expr::RegisterParam(_)
            | Expr::Random { .. }
            | Expr::ChecksumVerify(_)
            | Expr::ChecksumGet(_) => {}
            Expr::ChecksumUpdate { inputs, .. } => {
                for i in inputs {
                    self.expr(i, fx, mode);
                }
            }
        }
    }

    /// A RegisterAction run: its index and PHV inputs are read through the crossbar.
    fn register_execute(&mut self, action: RegisterActionId, index: &Expr, fx: &mut Effects) {
        fx.register_actions.push(action);
        self.expr(index, fx, Mode::Match);
        match self.pipe.register_actions.get(action.index()) {
            Some(ra) => {
                if !self.enter((true, action.0), fx) {
                    return;
                }
                // The SALU's PHV inputs come through the crossbar too.
                let mut inner = Effects::default();
                for s in ra.bodies().flatten() {
                    self.stmt(s, &mut inner);
                }
                self.leave();
                for l in inner.all_reads() {
                    Self::push_read(fx, l, Mode::Match);
                }
                fx.malformed.extend(inner.malformed);
            }
            None => fx
                .malformed
                .push(format!("register action id {} out of range", action.0)),
        }
    }

    fn place(&mut self, p: &Place, fx: &mut Effects) {
        match p {
            Place::Field(f) => fx.writes.push(Loc::field(*f)),
            Place::FieldSlice { field, hi, lo } => fx.writes.push(Loc::slice(*field, *hi, *lo)),
            Place::RegValue(_) | Place::RegOutput | Place::RegOutputN(_) => {}
        }
    }

    /// Effects of one statement run inside an action (or as a standalone control statement).
    pub fn stmt(&mut self, s: &Stmt, fx: &mut Effects) {
        match s {
            Stmt::Assign { dst, value } => {
                self.expr(value, fx, Mode::Action);
                self.place(dst, fx);
            }
            Stmt::CopyHeader { dst, src } => {
                if let Some(l) = self.header_bits(*src, fx) {
                    fx.action_reads.push(l);
                }
                fx.action_reads.push(Loc::Valid(*src));
                if let Some(l) = self.header_bits(*dst, fx) {
                    fx.writes.push(l);
                }
                fx.writes.push(Loc::Valid(*dst));
            }
            Stmt::SetValid { header, .. } => fx.writes.push(Loc::Valid(*header)),
            Stmt::StackShift { stack, .. } => match self.phv.stacks.get(stack.index()) {
                Some(info) => {
                    fx.action_reads.push(Loc::field(info.next_index));
                    fx.writes.push(Loc::field(info.next_index));
                    for h in info.elements.clone() {
                        if let Some(l) = self.header_bits(h, fx) {
                            fx.action_reads.push(l);
                            fx.writes.push(l);
                        }
                        fx.action_reads.push(Loc::Valid(h));
                        fx.writes.push(Loc::Valid(h));
                    }
                }
                None => fx
                    .malformed
                    .push(format!("header stack id {} out of range", stack.0)),
            },
            Stmt::If {
                cond, then, els, ..
            } => {
                self.expr(cond, fx, Mode::Action);
                self.block(then, fx);
                self.block(els, fx);
            }
            Stmt::CallAction { action, args } => {
                for a in args {
                    self.expr(a, fx, Mode::Action);
                }
                self.action(*action, fx);
            }
            Stmt::Count { counter, index } => {
                fx.counters.push(*counter);
                self.expr(index, fx, Mode::Match);
            }
            Stmt::CountDirect { counter } => fx.counters.push(*counter),
            Stmt::RegisterExecute {
                action,
                index,
                outs,
            } => {
                self.register_execute(*action, index, fx);
                for o in outs.iter().flatten() {
                    self.place(o, fx);
                }
            }
            // A clear runs in the background on the register's memory: no PHV access.
            Stmt::RegisterClear { .. } => {}
            // Tables are units of their own; the unit builder never hands them here.
            Stmt::ApplyTable { .. } | Stmt::Exit | Stmt::Return => {}
            // Parser / deparser statements do not run in the MAU.
            Stmt::Extract(_)
            | Stmt::ExtractVarbit { .. }
            | Stmt::ExtractNext(_)
            | Stmt::Advance(_)
            | Stmt::CounterRange { .. }
            | Stmt::ChecksumAdd { .. }
            | Stmt::ChecksumSubtract { .. }
            | Stmt::ChecksumDeposit { .. }
            | Stmt::Emit(_)
            | Stmt::MirrorEmit { .. }
            | Stmt::ResubmitEmit { .. }
            | Stmt::PktgenEmit { .. }
            | Stmt::DigestPack { .. } => {}
        }
    }

    pub fn block(&mut self, b: &[Stmt], fx: &mut Effects) {
        for s in b {
            self.stmt(s, fx);
        }
    }

    /// Starts expanding a body; false (and a malformed note) on a cycle or past the limits.
    fn enter(&mut self, what: (bool, u32), fx: &mut Effects) -> bool {
        let kind = if what.0 { "RegisterAction" } else { "action" };
        if self.active.contains(&what) {
            fx.malformed
                .push(format!("{kind} id {} calls itself", what.1));
            return false;
        }
        if self.depth >= MAX_CALL_DEPTH || self.expansions >= MAX_EXPANSIONS {
            fx.malformed.push(format!(
                "action calls nest deeper than {MAX_CALL_DEPTH} or expand more than {MAX_EXPANSIONS} bodies"
            ));
            return false;
        }
        self.depth += 1;
        self.expansions += 1;
        self.active.push(what);
        true
    }

    fn leave(&mut self) {
        self.depth -= 1;
        self.active.pop();
    }

    /// Effects of running action `id`'s body.
    pub fn action(&mut self, id: ActionId, fx: &mut Effects) {
        let Some(action) = self.pipe.actions.get(id.index()) else {
            fx.malformed
                .push(format!("action id {} out of range", id.0));
            return;
        };
        if !self.enter((false, id.0), fx) {
            return;
        }
        self.block(&action.body, fx);
        self.leave();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slices_are_numbered_from_the_lsb() {
        let f = FieldRef {
            offset: 16,
            width: 8,
        };
        // bits 7..4 of the field are its first four bits on the wire.
        assert_eq!(Loc::slice(f, 7, 4), Loc::Bits { start: 16, end: 20 });
        assert_eq!(Loc::slice(f, 3, 0), Loc::Bits { start: 20, end: 24 });
        assert_eq!(Loc::slice(f, 9, 0), Loc::field(f));
        assert!(!Loc::slice(f, 7, 4).overlaps(&Loc::slice(f, 3, 0)));
        assert!(Loc::field(f).overlaps(&Loc::slice(f, 3, 0)));
    }
}
