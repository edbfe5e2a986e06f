//! The parser engine on the flat form: the same walk as `exec::parser` (state bodies, select
//! with masks, ranges, value sets and default, the transition budget standing in for the hardware's
//! timeout), with extract layouts and select keys lowered ahead of time.

use smallvec::SmallVec;

use super::{FExpr, FParser, FTransition, FlatGress};
use crate::exec::parser::{keyset_matches, ParseEnd, MAX_PARSER_STEPS};
use crate::exec::{Ctx, ExecResult, Fault, ParserFault};
use crate::ir::{KeysetElem, NextState, Value};
use crate::phv::read_bits;
use crate::trace::Tracer;

impl<T: Tracer> Ctx<'_, T> {
    /// Runs the lowered parser from its start state. The cursor (bits) ends where the payload
    /// begins.
    pub(crate) fn run_parser_flat(&mut self, fg: &FlatGress, parser: &FParser) -> ParseEnd {
        self.in_parser = true;
        self.cursor = 0;
        let ncsum = self.pl.checksums.len();
        self.scratch.zero_csums(ncsum);
        let mut state = parser.start;
        let end = 'run: {
            for _ in 0..MAX_PARSER_STEPS {
                let Some(st) = parser.states.get(state) else {
                    break 'run ParseEnd::Error(ParserFault::NoMatch, state);
                };
                self.trace_state(state);
                if let Err(e) = self.fexec_block(fg, &st.body, &[]) {
                    break 'run match e {
                        Fault::Parser(p) => ParseEnd::Error(p, state),
                        Fault::Reject => ParseEnd::Reject,
                        // A malformed IR in the parser: treat like the hardware's no-match.
                        Fault::Program(_) => ParseEnd::Error(ParserFault::NoMatch, state),
                    };
                }
                let next = match &st.transition {
                    FTransition::Direct(n) => *n,
                    FTransition::Select {
                        keys,
                        cases,
                        default,
                    } => match self.fselect(keys, cases) {
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

    #[inline]
    fn fselect(
        &mut self,
        keys: &[FExpr],
        cases: &[(Box<[KeysetElem]>, NextState)],
    ) -> ExecResult<Option<NextState>> {
        if let [k] = keys {
            // One key (the usual `select(hdr.ether_type)`): no key vector.
            let v = self.fval(k, &[])?;
            for (keyset, next) in cases {
                let hit = match &keyset[..] {
                    [KeysetElem::Mask { value, mask }] => v & mask == value & mask,
                    [KeysetElem::Range { lo, hi }] => *lo <= v && v <= *hi,
                    [KeysetElem::ValueSet(id)] => self
                        .rt
                        .value_sets
                        .get(id.index())
                        .is_some_and(|s| s.matches(&[v])),
                    _ => false,
                };
                if hit {
                    return Ok(Some(*next));
                }
            }
            return Ok(None);
        }
        let mut vals: SmallVec<[Value; 4]> = SmallVec::new();
        for k in keys {
            vals.push(self.fval(k, &[])?);
        }
        for (keyset, next) in cases {
            if keyset_matches(keyset, &vals, &self.rt.value_sets) {
                return Ok(Some(*next));
            }
        }
        Ok(None)
    }

    /// `extract` of a header at PHV bytes `[offset, offset + len)`.
    #[inline(never)]
    pub(crate) fn fextract(&mut self, header: u32, offset: u32, len: u32) -> ExecResult<()> {
        let len = len as usize;
        let bits = len as u64 * 8;
        if self.cursor + bits > self.input.len() as u64 * 8 {
            return Err(Fault::Parser(ParserFault::PacketTooShort));
        }
        let dst = self.phv.slice_mut(offset as usize, len);
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
        self.phv.set_valid(header as usize, true);
        self.trace_extract(header as usize);
        Ok(())
    }
}
