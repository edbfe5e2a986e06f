//! The parser engine: walks the parser state machine over the prefix + packet bytes, extracting
//! headers into the PHV, evaluating `select` with masks, ranges, value sets and default, and accumulating
//! parser checksums. A state-transition budget stands in for the hardware's parser timeout, so a
//! looping program cannot hang the switch.

use super::eval::ones_add;
use super::{Ctx, ExecResult, Fault, ParserFault, ProgramError};
use crate::ir::FieldRef;
use crate::ir::{KeysetElem, NextState, Parser, Stmt, Transition, Value, ValueSetId};
use crate::phv::read_bits;
use crate::state::ValueSetState;
use crate::trace::{TraceEvent, TraceField, Tracer};

/// Most parser states one parse may run; the next one ends it with `ParserTimeout`
/// (`PARSER_ERROR_TIMEOUT_USER`). Tofino 1 and 2 alike: bf-asm sets the parser's `max_iter` to
/// 128 for both (`parser-tofino-jbay.cpp`), and tofino-model raises its iteration timeout
/// (`kErrTimeoutIter`, 0x0008) before a state once 128 have run (`ParserShared::parse`). A
/// loop bf-p4c keeps as a hardware loop (no stack `.next` in it) counts each iteration.
pub const MAX_PARSER_STEPS: usize = 128;

/// How `extract(stack.next)` on a full stack ends the parse: as `transition reject` does on
/// Tofino, without an error or a drop, the stack full and the rest of the packet payload.
/// bf-p4c unrolls a parser loop over a stack up to the stack's size and makes the transition
/// that would overflow it the end of parsing, as it makes `accept` and `reject`
/// (`parde/extract_parser.cpp`, `GetBackendParser::convertState` at the maximum loop depth,
/// `convertBody` on `stackOutOfBound`). bf-p4c drops the whole state that would overflow: in
/// a parser without loops pisa's frontend resolves that at compile time (`p4/src/lower/
/// parse_paths.rs` makes the transition into such a state the end of the parse); in a parser
/// with loops the check is here, at run time, and statements before the `.next` in that
/// state have run.
pub const STACK_FULL: Fault = Fault::Reject;

/// How a parse ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParseEnd {
    Accept,
    /// `transition reject` (without an error of its own).
    Reject,
    /// A parser error; the state it happened in.
    Error(ParserFault, usize),
}

/// Whether a `select` case's keyset matches the key values `vals` (the tree and flat engines
/// share it): one element per key, or one value set standing for the whole tuple.
#[inline]
pub fn keyset_matches(keyset: &[KeysetElem], vals: &[Value], sets: &[ValueSetState]) -> bool {
    let set =
        |id: ValueSetId, keys: &[Value]| sets.get(id.index()).is_some_and(|s| s.matches(keys));
    if let ([KeysetElem::ValueSet(id)], [_, _, ..]) = (keyset, vals) {
        return set(*id, vals);
    }
    keyset.len() == vals.len()
        && keyset.iter().zip(vals).all(|(ks, v)| match *ks {
            KeysetElem::Mask { value, mask } => v & mask == value & mask,
            KeysetElem::Range { lo, hi } => lo <= *v && *v <= hi,
            KeysetElem::ValueSet(id) => set(id, std::slice::from_ref(v)),
        })
}

impl<T: Tracer> Ctx<'_, T> {
    /// Run `parser` from its start state. The cursor (bits) ends where the payload begins.
    pub fn run_parser(&mut self, parser: &Parser) -> ParseEnd {
        self.in_parser = true;
        self.cursor = 0;
        let ncsum = self.pl.checksums.len();
        self.scratch.zero_csums(ncsum);
        let mut state = parser.start.index();
        let end = 'run: {
            for _ in 0..MAX_PARSER_STEPS {
                let Some(st) = parser.states.get(state) else {
                    break 'run ParseEnd::Error(ParserFault::NoMatch, state);
                };
                self.trace_state(state);
                if let Err(e) = self.exec_block(&st.body, &[]) {
                    break 'run match e {
                        Fault::Parser(p) => ParseEnd::Error(p, state),
                        Fault::Reject => ParseEnd::Reject,
                        // A malformed IR in the parser: treat like the hardware's no-match.
                        Fault::Program(_) => ParseEnd::Error(ParserFault::NoMatch, state),
                    };
                }
                let next = match &st.transition {
                    Transition::Direct(n) => *n,
                    Transition::Select {
                        keys,
                        cases,
                        default,
                    } => match self.select(keys, cases) {
                        Ok(Some(n)) => n,
                        Ok(None) => *default,
                        Err(Fault::Parser(p)) => break 'run ParseEnd::Error(p, state),
                        Err(Fault::Reject | Fault::Program(_)) => {
                            break 'run ParseEnd::Error(ParserFault::NoMatch, state)
                        }
                    },
                };
                match next {
                    NextState::Accept => break 'run ParseEnd::Accept,
                    NextState::Reject => break 'run ParseEnd::Reject,
                    NextState::NoMatch => break 'run ParseEnd::Error(ParserFault::NoMatch, state),
                    NextState::State(s) => state = s.index(),
                }
            }
            ParseEnd::Error(ParserFault::Timeout, state)
        };
        self.in_parser = false;
        self.trace_parse_end(end, state);
        end
    }

    fn select(
        &mut self,
        keys: &[crate::ir::Expr],
        cases: &[crate::ir::SelectCase],
    ) -> ExecResult<Option<NextState>> {
        let mut vals: smallvec::SmallVec<[Value; 4]> = smallvec::SmallVec::new();
        for k in keys {
            vals.push(self.eval(k, &[])?);
        }
        for c in cases {
            if keyset_matches(&c.keyset, &vals, &self.rt.value_sets) {
                return Ok(Some(c.next));
            }
        }
        Ok(None)
    }

    fn extract_header(&mut self, h: usize) -> ExecResult<()> {
        let pl = self.pl;
        let gp = self.pl_gress_static(pl);
        let Some(info) = gp.phv.headers.get(h) else {
            return Err(Fault::program(ProgramError::BadReference("header")));
        };
        let len = info.byte_len as usize;
        let bits = len as u64 * 8;
        if self.cursor + bits > self.input.len() as u64 * 8 {
            return Err(Fault::Parser(ParserFault::PacketTooShort));
        }
        let dst = self.phv.slice_mut(info.byte_offset as usize, len);
        if self.cursor.is_multiple_of(8) {
            let s = (self.cursor / 8) as usize;
            let n = dst.len();
            dst.copy_from_slice(&self.input[s..s + n]);
        } else {
            for (i, b) in dst.iter_mut().enumerate() {
                *b = read_bits(self.input, (self.cursor + i as u64 * 8) as u32, 8) as u8;
            }
        }
        self.cursor += bits;
        self.phv.set_valid(h, true);
        self.trace_extract(h);
        Ok(())
    }

    /// The two-argument extract: the header's fixed bits around `bits` bits of its varbit
    /// field. A length past the field ends the parse as `transition reject` (no error), before
    /// the packet's length is looked at: bf-p4c makes such lengths `reject` branches of a
    /// `select` on the length's variable, taken before any varbit bytes are extracted. A length
    /// of part of a byte (only where the length is evaluated as written) is
    /// `ParserInvalidArgument` (Tofino extracts whole bytes).
    fn extract_varbit(&mut self, h: crate::ir::HeaderId, bits: Value) -> ExecResult<()> {
        let pl = self.pl;
        let gp = self.pl_gress_static(pl);
        let (Some(info), Some(vb)) = (gp.phv.headers.get(h.index()), gp.phv.varbit(h)) else {
            return Err(Fault::program(ProgramError::BadReference("varbit header")));
        };
        let max = u128::from(vb.field.width);
        let start = info.byte_offset * 8;
        let pre = vb.field.offset - start;
        let post = info.byte_len * 8 - pre - u32::from(vb.field.width);
        if bits > max {
            return Err(Fault::Reject);
        }
        if !bits.is_multiple_of(8) {
            return Err(Fault::Parser(ParserFault::InvalidArgument));
        }
        let need = u128::from(pre + post) + bits;
        if u128::from(self.cursor) + need > self.input.len() as u128 * 8 {
            return Err(Fault::Parser(ParserFault::PacketTooShort));
        }
        let n = bits as u32;
        let at = self.cursor as u32;
        self.copy_in(start, at, pre);
        self.copy_in(vb.field.offset, at + pre, n);
        for (piece, _, _) in vb.field.chunks() {
            // Clear what this packet's value leaves of the field (it is left-aligned).
            let lo = piece.offset.max(vb.field.offset + n);
            let end = piece.offset + u32::from(piece.width);
            if lo < end {
                let rest = FieldRef {
                    offset: lo,
                    width: (end - lo) as u16,
                };
                self.phv.set(rest, 0);
            }
        }
        self.copy_in(
            vb.field.offset + u32::from(vb.field.width),
            at + pre + n,
            post,
        );
        self.phv.set(vb.len, bits);
        self.cursor += u64::from(pre + post + n);
        self.phv.set_valid(h.index(), true);
        self.tr.record(|| TraceEvent::Extract {
            header: info.name.clone(),
            fields: vec![TraceField::new(format!("{}.$length", info.name), bits, 32)],
        });
        Ok(())
    }

    /// Copies `n` input bits from bit `from` into the PHV at bit `to`, at most 128 at a time.
    fn copy_in(&mut self, to: u32, from: u32, n: u32) {
        let mut done = 0;
        while done < n {
            let w = (n - done).min(128) as u16;
            let v = read_bits(self.input, from + done, w);
            self.phv.set(
                FieldRef {
                    offset: to + done,
                    width: w,
                },
                v,
            );
            done += u32::from(w);
        }
    }

    /// Writes the residuals marked during the parse (every engine calls it once the parse has
    /// ended): each is its accumulator at the mark minus the parser input bytes from the mark
    /// to where the parse ended, i.e. the header bytes extracted or skipped after it, never the
    /// payload. As the hardware: bf-p4c lowers `subtract_all_and_deposit` and `get()` to one
    /// `ChecksumResidualDeposit` (`parde/extract_parser.cpp`), and tofino-model sums the bytes
    /// from the mark to the parsed header length at the end (`checksum_residual`).
    pub(crate) fn finish_residuals(&mut self) {
        let end = (self.cursor / 8) as usize;
        for i in 0..self.scratch.residuals.len() {
            let r = self.scratch.residuals[i];
            let start = (r.mark / 8) as usize;
            let v = if start < end {
                ones_add(r.acc, !self.input_ones_sum(start, end) & 0xffff)
            } else {
                r.acc
            };
            self.phv.set(r.dst, v as Value);
        }
        self.scratch.residuals.clear();
    }

    /// The ones'-complement sum of parser input bytes `[start, end)` (the head, then the
    /// packet where it is parsed in place), paired from `start`.
    fn input_ones_sum(&self, start: usize, end: usize) -> u32 {
        let byte = |at: usize| match self.input.get(at) {
            Some(b) => *b,
            None => at
                .checked_sub(self.input.len())
                .and_then(|t| self.input_tail.get(t))
                .copied()
                .unwrap_or(0),
        };
        (start..end).step_by(2).fold(0, |s, at| {
            let w = u32::from(byte(at)) << 8
                | if at + 1 < end {
                    u32::from(byte(at + 1))
                } else {
                    0
                };
            ones_add(s, w)
        })
    }

    fn pl_gress_static<'p>(&self, pl: &'p crate::ir::Pipeline) -> &'p crate::ir::GressProgram {
        match self.gress {
            crate::ir::Gress::Ingress => &pl.ingress,
            crate::ir::Gress::Egress => &pl.egress,
        }
    }

    #[inline(never)]
    pub(crate) fn exec_parser_stmt(&mut self, s: &Stmt, params: &[Value]) -> ExecResult<()> {
        match s {
            Stmt::Extract(h) => self.extract_header(h.index())?,
            Stmt::ExtractVarbit { header, bits } => {
                let bits = self.eval(bits, params)?;
                self.extract_varbit(*header, bits)?;
            }
            Stmt::ExtractNext(stack) => {
                let pl = self.pl;
                let gp = self.pl_gress_static(pl);
                let Some(st) = gp.phv.stacks.get(stack.index()) else {
                    return Err(Fault::program(ProgramError::BadReference("stack")));
                };
                let ni = self.phv.get(st.next_index) as usize;
                let Some(h) = st.elements.get(ni) else {
                    return Err(STACK_FULL);
                };
                self.extract_header(h.index())?;
                self.phv.set(st.next_index, (ni + 1) as Value);
            }
            Stmt::Advance(e) => {
                let bits = self.eval(e, params)?;
                let end = (self.cursor as u128).saturating_add(bits);
                if end > self.input.len() as u128 * 8 {
                    return Err(Fault::Parser(ParserFault::PacketTooShort));
                }
                self.cursor = end as u64;
            }
            Stmt::CounterRange { cond } => {
                let above_max = self.eval(cond, params)? != 0;
                if above_max {
                    return Err(Fault::Parser(ParserFault::CounterRange));
                }
            }
            Stmt::ChecksumAdd { checksum, inputs }
            | Stmt::ChecksumSubtract { checksum, inputs } => {
                let mut sum = self.ones_sum_inputs(inputs, params)?;
                if matches!(s, Stmt::ChecksumSubtract { .. }) {
                    sum = !sum & 0xffff;
                }
                if let Some(acc) = self.scratch.csum.get_mut(checksum.index()) {
                    *acc = ones_add(*acc, sum);
                }
            }
            Stmt::ChecksumDeposit { checksum, dst } => {
                // Marks the residual's end: what `update()` needs to rebuild an L4 checksum over
                // new headers is written when the parse ends ([`Ctx::finish_residuals`]).
                if let Some(acc) = self.scratch.csum.get(checksum.index()) {
                    let r = super::Residual {
                        acc: *acc,
                        mark: self.cursor,
                        dst: *dst,
                    };
                    self.scratch.residuals.push(r);
                }
            }
            _ => {}
        }
        Ok(())
    }
}
