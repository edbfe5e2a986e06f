//! The parser as one function: a block per state (its body, then its transition), selects as
//! compare-and-branch chains on the generated key values, the transition budget as a counter.
//! It answers how the parse ended, encoded as [`end_code`] describes.

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, Block, InstBuilder, Value};

use super::env::{EnvLayout, MAX_KEYS};
use super::gen::Gen;
use crate::exec::flat::{FParser, FTransition};
use crate::exec::parser::MAX_PARSER_STEPS;
use crate::exec::ParserFault;
use crate::ir::{KeysetElem, NextState};

/// Parse ends: accept, reject, an error the generated code found (fault kind in bits 8..16: 0 too short, 1 no match,
/// 2 timeout), or a fault a fallback left in `Env::fault`. The state's index is in the high 32
/// bits.
pub const END_ACCEPT: u64 = 0;
pub const END_REJECT: u64 = 1;
pub const END_ERROR: u64 = 2;
pub const END_FAULT: u64 = 3;

/// The generated code's fault kinds (bits 8..16 of an `END_ERROR`); no other kind is
/// generated.
pub fn fault_of_kind(kind: u64) -> ParserFault {
    match kind & 0xff {
        0 => ParserFault::PacketTooShort,
        1 => ParserFault::NoMatch,
        _ => ParserFault::Timeout,
    }
}

/// Layout of a parse end code (see the constants above).
pub const fn end_code(end: u64, kind: u64) -> u64 {
    end | (kind << 8)
}

impl Gen<'_, '_> {
    /// Ends the parse as `transition reject` does, in the running state.
    pub fn parse_reject(&mut self) {
        self.ret_with_state(END_REJECT);
        self.fresh();
    }

    /// Returns `code` with the running state's index in the high bits.
    fn ret_with_state(&mut self, code: u64) {
        let var = self.state_var.expect("parser");
        let s = self.b.use_var(var);
        let s = self.b.ins().ishl_imm(s, 32);
        let r = self.b.ins().bor_imm(s, code as i64);
        self.b.ins().return_(&[r]);
    }

    /// The whole parser; `self.fault` must be the function's fault block (still empty).
    pub fn parser(&mut self, p: &FParser) {
        // A parse that can enter no state twice takes at most one step per state (and one
        // into a missing state): it never reaches the step limit, so it counts no steps.
        let bounded = p.states.len() < MAX_PARSER_STEPS && acyclic(p);
        self.count_steps = !bounded;
        let steps = self.b.declare_var(types::I64);
        let state = self.b.declare_var(types::I64);
        self.state_var = Some(state);
        let zero = self.iconst(0);
        self.b.def_var(steps, zero);
        let start = self.iconst(p.start as u64);
        self.b.def_var(state, start);
        let n = p.states.len();
        let bodies: Vec<Block> = (0..n).map(|_| self.b.create_block()).collect();
        let trans: Vec<Block> = (0..n).map(|_| self.b.create_block()).collect();
        let accept = self.b.create_block();
        let reject = self.b.create_block();
        let no_match = self.b.create_block();
        let too_short = self.b.create_block();
        let fault = self.fault;
        self.too_short = Some(too_short);
        let mut targets = Targets {
            bodies,
            accept,
            reject,
            no_match,
            missing: Vec::new(),
        };
        let first = targets.of(self, NextState::State(crate::ir::StateId(p.start as u32)));
        self.b.ins().jump(first, &[]);
        for (i, st) in p.states.iter().enumerate() {
            self.b.switch_to_block(targets.bodies[i]);
            self.enter_state(steps, state, i as u64, true);
            self.flow_exit = Some(trans[i]);
            self.block(&st.body);
            self.b.ins().jump(trans[i], &[]);
            self.flow_exit = None;
            self.b.switch_to_block(trans[i]);
            self.transition(&st.transition, &mut targets);
        }
        for (s, block) in std::mem::take(&mut targets.missing) {
            self.b.switch_to_block(block);
            self.enter_state(steps, state, s, false);
            self.ret_with_state(end_code(END_ERROR, 1));
        }
        for (block, code) in [
            (accept, END_ACCEPT),
            (reject, END_REJECT),
            (no_match, end_code(END_ERROR, 1)),
            (too_short, end_code(END_ERROR, 0)),
            (fault, END_FAULT),
        ] {
            self.b.switch_to_block(block);
            self.ret_with_state(code);
        }
        self.fresh();
    }

    /// A state's entry: its index recorded, then one step of the budget taken (an exhausted
    /// budget ends the parse with a timeout in this state), then, in traced code and for a
    /// state that exists (`trace`), the state traced.
    fn enter_state(
        &mut self,
        steps: cranelift_frontend::Variable,
        state: cranelift_frontend::Variable,
        i: u64,
        trace: bool,
    ) {
        let s = self.iconst(i);
        self.b.def_var(state, s);
        if !self.count_steps {
            if trace {
                self.hook(|h| h.state, i as u32, None);
            }
            return;
        }
        let k = self.b.use_var(steps);
        let out = self.b.ins().icmp_imm(
            IntCC::UnsignedGreaterThanOrEqual,
            k,
            MAX_PARSER_STEPS as i64,
        );
        let (timeout, go) = (self.b.create_block(), self.b.create_block());
        self.b.ins().brif(out, timeout, &[], go, &[]);
        self.b.switch_to_block(timeout);
        self.ret_with_state(end_code(END_ERROR, 2));
        self.b.switch_to_block(go);
        let k = self.b.ins().iadd_imm(k, 1);
        self.b.def_var(steps, k);
        if trace {
            self.hook(|h| h.state, i as u32, None);
        }
    }

    fn transition(&mut self, t: &FTransition, targets: &mut Targets) {
        match t {
            FTransition::Direct(n) => {
                let b = targets.of(self, *n);
                self.b.ins().jump(b, &[]);
            }
            FTransition::Select {
                keys,
                cases,
                default,
            } => {
                let vals: Vec<Value> = keys.iter().map(|k| self.expr(k)).collect();
                for (keyset, next) in cases.iter() {
                    let all = match &keyset[..] {
                        // A value set standing for the whole tuple of keys.
                        [KeysetElem::ValueSet(id)] if vals.len() > 1 => {
                            self.value_set_match(id.0, &vals)
                        }
                        _ if keyset.len() != vals.len() => continue,
                        _ => {
                            let mut all = self.b.ins().iconst(types::I8, 1);
                            for (ks, v) in keyset.iter().zip(&vals) {
                                let c = self.keyset_match(*ks, *v);
                                all = self.b.ins().band(all, c);
                            }
                            all
                        }
                    };
                    let yes = targets.of(self, *next);
                    let no = self.b.create_block();
                    self.b.ins().brif(all, yes, &[], no, &[]);
                    self.b.switch_to_block(no);
                }
                let d = targets.of(self, *default);
                self.b.ins().jump(d, &[]);
            }
        }
    }

    /// Keys against value set `set` (run-time entries: matched by [`env::shim_value_set`]),
    /// an `i8` 0/1.
    fn value_set_match(&mut self, set: u32, vals: &[Value]) -> Value {
        let key_off = std::mem::offset_of!(EnvLayout, key) as i32;
        for (i, v) in vals.iter().take(MAX_KEYS).enumerate() {
            let env = self.env;
            self.store_key(env, key_off + i as i32 * 16, *v);
        }
        let set = self.b.ins().iconst(types::I32, i64::from(set));
        let n = self
            .b
            .ins()
            .iconst(types::I32, vals.len().min(MAX_KEYS) as i64);
        let (env, sig) = (self.env, self.sigs.apply);
        let r = self
            .call_shim(sig, self.shims.value_set, &[env, set, n])
            .expect("answer");
        self.b.ins().icmp_imm(IntCC::NotEqual, r, 0)
    }

    /// One keyset element against a key value (an `i8` 0/1).
    fn keyset_match(&mut self, ks: KeysetElem, v: Value) -> Value {
        let limit = u128::from(u64::MAX);
        match ks {
            KeysetElem::Mask { value, mask } => {
                let w = self.ty(v) == types::I128 || mask > limit;
                let v = self.fit(v, w);
                let v = self.mask(v, mask);
                let v = self.fit(v, w);
                let c = self.konst(value & mask, w);
                self.b.ins().icmp(IntCC::Equal, v, c)
            }
            KeysetElem::ValueSet(id) => self.value_set_match(id.0, &[v]),
            KeysetElem::Range { lo, hi } => {
                let w = self.ty(v) == types::I128 || hi > limit || lo > limit;
                let v = self.fit(v, w);
                let (l, h) = (self.konst(lo, w), self.konst(hi, w));
                let a = self.b.ins().icmp(IntCC::UnsignedGreaterThanOrEqual, v, l);
                let b = self.b.ins().icmp(IntCC::UnsignedLessThanOrEqual, v, h);
                self.b.ins().band(a, b)
            }
        }
    }
}

/// Whether no parse of `p` can enter a state twice: its transitions between states form no
/// cycle.
pub(crate) fn acyclic(p: &FParser) -> bool {
    let n = p.states.len();
    let next = |i: usize| -> Vec<usize> {
        let mut v = Vec::new();
        let mut add = |t: &NextState| {
            if let NextState::State(s) = t {
                if s.index() < n {
                    v.push(s.index());
                }
            }
        };
        match &p.states[i].transition {
            FTransition::Direct(t) => add(t),
            FTransition::Select { cases, default, .. } => {
                cases.iter().for_each(|(_, t)| add(t));
                add(default);
            }
        }
        v
    };
    // 0: not seen, 1: on the current path, 2: done (no cycle through it).
    let mut mark = vec![0u8; n];
    for root in 0..n {
        if mark[root] != 0 {
            continue;
        }
        let mut stack = vec![(root, next(root), 0usize)];
        mark[root] = 1;
        while let Some((s, succ, k)) = stack.last_mut() {
            match succ.get(*k).copied() {
                Some(t) => {
                    *k += 1;
                    match mark[t] {
                        1 => return false,
                        0 => {
                            mark[t] = 1;
                            let nt = next(t);
                            stack.push((t, nt, 0));
                        }
                        _ => {}
                    }
                }
                None => {
                    mark[*s] = 2;
                    stack.pop();
                }
            }
        }
    }
    true
}

/// Where transitions go.
struct Targets {
    bodies: Vec<Block>,
    accept: Block,
    reject: Block,
    /// A `select` without a default that matched no case: a no-match error in this state.
    no_match: Block,
    /// Blocks for transitions to states the parser lacks (they end with no match).
    missing: Vec<(u64, Block)>,
}

impl Targets {
    fn of(&mut self, g: &mut Gen, n: NextState) -> Block {
        match n {
            NextState::Accept => self.accept,
            NextState::Reject => self.reject,
            NextState::NoMatch => self.no_match,
            NextState::State(s) => match self.bodies.get(s.index()) {
                Some(b) => *b,
                None => {
                    let b = g.b.create_block();
                    self.missing.push((s.index() as u64, b));
                    b
                }
            },
        }
    }
}
