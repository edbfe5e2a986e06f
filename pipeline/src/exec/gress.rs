//! The gress runner: one packet pass through parser → control → deparser of one gress of one
//! pipe. It builds the parser input (the hardware's prefix of intrinsic metadata, then port
//! metadata / resubmit data or a mirror header, then the packet), decides what a parser error
//! means (ingress drops unless the control reads `parser_err`; egress continues), and re-appends
//! the unparsed payload after the deparser's emits.

use super::flat::FlatGress;
use super::parser::ParseEnd;
use super::prefix::{self, pass_intrinsics, PREFIX_WORDS};
use super::{
    Ctx, Effects, Engines, ExecResult, ExecStats, Fault, GressEngines, ParserFault, ProgramError,
    Scratch,
};
use crate::ir::{Gress, GressProgram, Intrinsic, Pipeline, Value};
use crate::phv::Phv;
use crate::state::PipeState;
use crate::switch::FCS_LEN;
use crate::trace::{NoTrace, TraceEvent, Tracer};

/// Size of `ingress_intrinsic_metadata_t` in the ingress prefix; the rest of the prefix is port
/// metadata or resubmit data.
pub const IG_INTRINSIC_BYTES: usize = 8;

/// Capacity of a pass's buffers and of the switch's frame buffers: room for any frame, so a
/// pass does not grow them.
pub const FRAME_CAPACITY: usize = 2048;

/// Reusable buffers of one gress of one pipeline.
#[derive(Debug)]
pub struct GressWork {
    pub phv: Phv,
    pub scratch: Scratch,
    pub effects: Effects,
    /// Parser input: prefix + extra + packet.
    pub input: Vec<u8>,
    /// Deparsed packet.
    pub out: Vec<u8>,
    pub stats: ExecStats,
}

impl GressWork {
    pub fn new(gp: &GressProgram) -> GressWork {
        GressWork {
            phv: Phv::new(gp.phv.bytes as usize, gp.phv.headers.len()),
            scratch: Scratch::default(),
            effects: Effects::default(),
            input: Vec::with_capacity(FRAME_CAPACITY),
            out: Vec::with_capacity(FRAME_CAPACITY),
            stats: ExecStats::default(),
        }
    }

    /// Read an intrinsic metadata value from the PHV after a pass (0 when the program has none).
    #[inline]
    pub fn intrinsic(&self, eng: &GressEngines, which: Intrinsic) -> Value {
        match eng.bind.get(which as usize) {
            Some(Some(f)) => self.phv.get(*f),
            _ => 0,
        }
    }
}

/// Intrinsic values the hardware puts in the prefix (and into the bound PHV fields).
/// Intrinsics left out are 0 (the prefix and the PHV start zeroed).
#[derive(Debug, Clone, Copy)]
pub enum PassIntrinsics<'a> {
    /// Any intrinsics, each placed by looking it up.
    Listed(&'a [(Intrinsic, Value)]),
    /// The values of the gress's [`pass_intrinsics`], in order (what the switch gives every
    /// pass), placed by the plan built with the engines ([`prefix::PrefixPlan`]).
    Planned(&'a [u64]),
}

/// What to feed a pass.
#[derive(Debug, Clone, Copy)]
pub struct PassInput<'a> {
    pub intrinsics: PassIntrinsics<'a>,
    /// Ingress: port metadata or resubmit data (placed after the intrinsic metadata). Egress: the
    /// mirror header of a mirrored copy (placed after the prefix). Empty otherwise.
    pub extra: &'a [u8],
    pub packet: &'a [u8],
    pub now: u64,
}

/// Why a pass dropped its packet.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum PassDrop {
    ParserError(ParserFault),
    Program(ProgramError),
}

/// Result of one pass; the deparsed bytes are in [`GressWork::out`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GressResult {
    pub drop: Option<PassDrop>,
    /// Parser error bits written to `parser_err`.
    pub parser_err: u16,
    /// Destination fields the control wrote (bit 0 ucast, 1 mcast_grp_a, 2 mcast_grp_b).
    pub written: u8,
}

/// Builds the parser input's head (prefix, then port metadata / resubmit data or the mirror
/// header) in `buf`, and appends the packet unless `in_place` (the parser then reads the packet
/// where it lies). Answers the bits of [`GressEngines::direct`] among `inp`'s intrinsics (those
/// the pass must write into the PHV itself).
fn prefix_fill<T: Tracer>(
    engine: &impl PassEngine<T>,
    gp: &GressProgram,
    eng: &GressEngines,
    gress: Gress,
    inp: &PassInput<'_>,
    buf: &mut Vec<u8>,
    in_place: bool,
) -> u64 {
    let n = gp.prefix.bytes as usize;
    let more = inp.extra.len() + if in_place { 0 } else { inp.packet.len() };
    let direct = match inp.intrinsics {
        PassIntrinsics::Planned(values) => {
            let base = start_head(buf, n, more);
            // SAFETY: `start_head` reserved the prefix's whole word builder at `base`.
            unsafe { engine.write_prefix(&eng.plan, values, base) };
            eng.plan.direct
        }
        PassIntrinsics::Listed(list) => {
            let given = list.iter().fold(0u64, |m, (w, _)| {
                m | 1u64.checked_shl(*w as u32).unwrap_or(0)
            });
            let words = prefix::listed_words(list, &eng.prefix_slots, &eng.prefix);
            put_words(start_head(buf, n, more), &words);
            given & eng.direct
        }
    };
    // SAFETY: the prefix's `n` bytes (cut to the word builder) are within the capacity
    // `start_head` reserved and were all written just above.
    unsafe { buf.set_len(n.min(PREFIX_WORDS * 8)) };
    match gress {
        Gress::Ingress => {
            if n > IG_INTRINSIC_BYTES {
                let room = n - IG_INTRINSIC_BYTES;
                let k = inp.extra.len().min(room);
                let at = IG_INTRINSIC_BYTES;
                if k == PORT_MD_BYTES {
                    // The usual case (port metadata under a TNA prefix): a copy of constant
                    // size, done in line (a copy of `k` bytes is a `memmove` call).
                    buf[at..at + PORT_MD_BYTES].copy_from_slice(&inp.extra[..PORT_MD_BYTES]);
                } else {
                    buf[at..at + k].copy_from_slice(&inp.extra[..k]);
                }
            }
        }
        Gress::Egress => buf.extend_from_slice(inp.extra),
    }
    if !in_place {
        buf.extend_from_slice(inp.packet);
    }
    direct
}

/// Bytes of the port metadata (or resubmit data) after the ingress intrinsics.
const PORT_MD_BYTES: usize = 8;

/// Empties `buf` and reserves room for the prefix's word builder (all [`PREFIX_WORDS`]
/// words, whatever the prefix's `n` bytes) and `more` bytes after the prefix; answers where
/// the words go. The caller writes all the words and then sets the length to `n` (cut to the
/// word builder): a constant amount of work, no `memmove` call of `n` bytes.
#[inline]
fn start_head(buf: &mut Vec<u8>, n: usize, more: usize) -> *mut u8 {
    const ALL: usize = PREFIX_WORDS * 8;
    buf.clear();
    buf.reserve(ALL.max(n.min(ALL) + more));
    buf.as_mut_ptr()
}

/// Stores the prefix `words` at `base` (from [`start_head`]), one 8-byte big-endian store
/// each. An array laid out on the stack and then copied was read back with wide loads just
/// after its 8-byte stores, which cannot forward to them (the copy waited for the stores to
/// leave the store buffer, on every pass).
#[inline]
fn put_words(base: *mut u8, words: &[u64; PREFIX_WORDS]) {
    for (i, w) in words.iter().enumerate() {
        // SAFETY: `start_head` reserved `PREFIX_WORDS * 8` bytes at `base` and word `i` ends
        // at `8 * (i + 1)` ≤ that; an unaligned write of a byte array needs no alignment.
        unsafe {
            base.add(8 * i)
                .cast::<[u8; 8]>()
                .write_unaligned(w.to_be_bytes())
        };
    }
}

/// Run one pass of `gress` on `state` (a pipe running `pl`, which `eng` was built from).
///
/// Passes run the native code of `eng` when it has some, else its flat program (or the tree
/// interpreter for [`super::EngineKind::Tree`]). Traced passes ([`Tracer::ENABLED`]) run the
/// same engine recording every event: the native code's traced variant (for a
/// [`crate::trace::Recorder`]), the flat program with its trace points. All give the same result and the same events.
///
/// The untraced native pass is put in line here (and this in line in the switch's ingress and
/// egress, so the gress is a constant there): a call, its arguments and the copy of the pass's
/// result cost ~40 instructions per pass. The other engines run out of line.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub fn run_gress<T: Tracer>(
    pl: &Pipeline,
    eng: &Engines,
    gress: Gress,
    state: &mut PipeState,
    work: &mut GressWork,
    inp: &PassInput<'_>,
    tr: &mut T,
) -> GressResult {
    if T::ENABLED {
        return run_traced(pl, eng, gress, state, work, inp, tr);
    }
    #[cfg(feature = "native")]
    if let Some(n) = &eng.native {
        if let Some(nt) = tr.no_trace() {
            let e = n.gress(gress);
            return run_pass(pl, eng, gress, state, work, inp, nt, e);
        }
    }
    if eng.tree {
        return run_pass_outlined(pl, eng, gress, state, work, inp, tr, Tree);
    }
    run_pass_outlined(pl, eng, gress, state, work, inp, tr, Flat)
}

/// [`run_gress`] for a recording tracer.
#[allow(clippy::too_many_arguments)]
#[inline(never)]
fn run_traced<T: Tracer>(
    pl: &Pipeline,
    eng: &Engines,
    gress: Gress,
    state: &mut PipeState,
    work: &mut GressWork,
    inp: &PassInput<'_>,
    tr: &mut T,
) -> GressResult {
    if eng.tree {
        return run_pass_outlined(pl, eng, gress, state, work, inp, tr, Tree);
    }
    #[cfg(feature = "native")]
    if let Some(Ok(n)) = eng.native_traced(pl) {
        if let Some(rec) = tr.recorder() {
            let e = n.gress(gress);
            return run_pass_outlined(pl, eng, gress, state, work, inp, rec, e);
        }
    }
    run_pass_outlined(pl, eng, gress, state, work, inp, tr, Flat)
}

/// [`run_gress`] on the tree interpreter whatever the tracer (the reference the flat program is
/// tested against).
#[allow(clippy::too_many_arguments)]
pub fn run_gress_tree<T: Tracer>(
    pl: &Pipeline,
    eng: &Engines,
    gress: Gress,
    state: &mut PipeState,
    work: &mut GressWork,
    inp: &PassInput<'_>,
    tr: &mut T,
) -> GressResult {
    run_pass_outlined(pl, eng, gress, state, work, inp, tr, Tree)
}

/// [`run_gress`] on the flat program whatever engine `eng` has (the native engine's
/// differential reference).
#[allow(clippy::too_many_arguments)]
pub fn run_gress_flat(
    pl: &Pipeline,
    eng: &Engines,
    gress: Gress,
    state: &mut PipeState,
    work: &mut GressWork,
    inp: &PassInput<'_>,
) -> GressResult {
    run_pass_outlined(pl, eng, gress, state, work, inp, &mut NoTrace, Flat)
}

/// The three phases of a pass on one engine.
trait PassEngine<T: Tracer> {
    fn parse(&self, ctx: &mut Ctx<'_, T>, gp: &GressProgram, fg: &FlatGress) -> ParseEnd;
    fn control(&self, ctx: &mut Ctx<'_, T>, gp: &GressProgram, fg: &FlatGress) -> ExecResult;
    fn deparse(&self, ctx: &mut Ctx<'_, T>, gp: &GressProgram, fg: &FlatGress) -> ExecResult;
    /// The parser reads the packet where it lies (`Ctx::input_tail`) instead of a copy after
    /// the prefix, with `phv` as the pass's PHV.
    fn in_place(&self, _phv: &Phv) -> bool {
        false
    }
    /// Writes the prefix words of the switch's intrinsics `values` at `out` as `plan` places
    /// them ([`prefix::PrefixPlan::write`], which this runs unless the engine has its own
    /// writer of the same plan).
    ///
    /// # Safety
    /// `out` is valid for writes of `PREFIX_WORDS * 8` bytes (no alignment needed).
    unsafe fn write_prefix(&self, plan: &prefix::PrefixPlan, values: &[u64], out: *mut u8) {
        // SAFETY: the caller's guarantee.
        unsafe { plan.write(values, out) }
    }
    /// The three phases with what the pass does between them (`b`).
    fn phases(&self, ctx: &mut Ctx<'_, T>, gp: &GressProgram, fg: &FlatGress, b: &mut Between) {
        let end = self.parse(ctx, gp, fg);
        if !b.parsed(ctx, end) {
            return;
        }
        let control = self.control(ctx, gp, fg);
        if b.controlled(control) {
            let deparsed = self.deparse(ctx, gp, fg);
            b.deparsed(deparsed);
        }
    }
}

/// What a pass does between its phases, whatever engine runs them: how the parser ended
/// decides whether the pass goes on (and sets `parser_err`), a fault of the control or the
/// deparser drops the packet.
pub(crate) struct Between<'g> {
    gp: &'g GressProgram,
    geng: &'g GressEngines,
    gress: Gress,
    result: GressResult,
    /// Where the payload starts in the parser input (set after the parser).
    payload_start: usize,
    /// The parser let the packet through to the control.
    controlled: bool,
}

impl Between<'_> {
    /// After the parser ended with `end`: whether the control runs. (This and the two below
    /// are in line in the engines' `phases`: a call each cost a prologue per pass.)
    #[inline(always)]
    pub(crate) fn parsed<T: Tracer>(&mut self, ctx: &mut Ctx<'_, T>, end: ParseEnd) -> bool {
        if !ctx.scratch.residuals.is_empty() {
            ctx.finish_residuals();
        }
        let err_field = match self.gress {
            Gress::Ingress => Intrinsic::IgPrsrParserErr,
            Gress::Egress => Intrinsic::EgPrsrParserErr,
        };
        match end {
            // Tofino's parser has no reject: an explicit `transition reject` ends the parse
            // like `accept`, without an error or a drop, in both gresses (bf-p4c's
            // `GetBackendParser::convertState` lowers both to the end of parsing; p4testgen's
            // Tofino model continues after a reject and drops only on errors). Only parser
            // errors (below) can drop a packet.
            ParseEnd::Accept | ParseEnd::Reject => {}
            ParseEnd::Error(fault, _) => {
                self.result.parser_err = fault.bits();
                if let Some(Some(f)) = self.geng.bind.get(err_field as usize) {
                    let old = ctx.phv.get(*f);
                    ctx.phv.set(*f, old | fault.bits() as Value);
                }
                if self.gress == Gress::Ingress && !self.geng.parser_err_used {
                    self.result.drop = Some(PassDrop::ParserError(fault));
                }
            }
        }
        // The hardware strips the intrinsic prefix (ingress: intrinsic + port metadata;
        // egress: the egress intrinsic metadata) whatever the parser extracted: the
        // deparser's output replaces max(0, parsed - prefix) bytes of the packet, so a parser
        // that skips or ignores the prefix never puts it on the wire.
        let all = ctx.input.len() + ctx.input_tail.len();
        self.payload_start = if matches!(end, ParseEnd::Error(ParserFault::PacketTooShort, _)) {
            // A partial header: Tofino 1 and 2 mark the entire packet as header (tofino-model
            // `ParserShared::parse`, `set_orig_hdr_len(pkt_avail_len)` unless on a later chip),
            // so the deparser's emits replace all of it and no payload follows.
            all
        } else {
            (ctx.cursor.div_ceil(8) as usize)
                .max(self.gp.prefix.bytes as usize)
                .min(all)
        };
        self.controlled = self.result.drop.is_none();
        self.controlled
    }

    /// After the control (`exit` and `return` both end it): whether the deparser runs.
    #[inline(always)]
    pub(crate) fn controlled(&mut self, r: ExecResult) -> bool {
        if let Err(e) = r {
            self.result.drop = Some(fault_drop(e));
        }
        self.result.drop.is_none()
    }

    /// After the deparser.
    #[inline(always)]
    pub(crate) fn deparsed(&mut self, r: ExecResult) {
        if let Err(e) = r {
            self.result.drop = Some(fault_drop(e));
        }
    }
}

/// The tree interpreter (the reference).
struct Tree;
/// The flat program.
struct Flat;

impl<T: Tracer> PassEngine<T> for Tree {
    fn parse(&self, ctx: &mut Ctx<'_, T>, gp: &GressProgram, _: &FlatGress) -> ParseEnd {
        ctx.run_parser(&gp.parser)
    }
    fn control(&self, ctx: &mut Ctx<'_, T>, gp: &GressProgram, _: &FlatGress) -> ExecResult {
        ctx.exec_block(&gp.control.body, &[])
    }
    fn deparse(&self, ctx: &mut Ctx<'_, T>, gp: &GressProgram, _: &FlatGress) -> ExecResult {
        ctx.exec_block(&gp.deparser.body, &[])
    }
}

impl<T: Tracer> PassEngine<T> for Flat {
    fn parse(&self, ctx: &mut Ctx<'_, T>, _: &GressProgram, fg: &FlatGress) -> ParseEnd {
        ctx.run_parser_flat(fg, &fg.parser)
    }
    fn control(&self, ctx: &mut Ctx<'_, T>, _: &GressProgram, fg: &FlatGress) -> ExecResult {
        ctx.fexec_block(fg, &fg.control, &[])
    }
    fn deparse(&self, ctx: &mut Ctx<'_, T>, _: &GressProgram, fg: &FlatGress) -> ExecResult {
        ctx.fexec_block(fg, &fg.deparser, &[])
    }
}

#[cfg(feature = "native")]
impl<T: Tracer> PassEngine<T> for &super::native::NativeGress<T> {
    fn parse(&self, ctx: &mut Ctx<'_, T>, _: &GressProgram, fg: &FlatGress) -> ParseEnd {
        super::native::NativeGress::parse(self, ctx, fg)
    }
    fn control(&self, ctx: &mut Ctx<'_, T>, _: &GressProgram, fg: &FlatGress) -> ExecResult {
        super::native::NativeGress::control(self, ctx, fg)
    }
    fn deparse(&self, ctx: &mut Ctx<'_, T>, _: &GressProgram, fg: &FlatGress) -> ExecResult {
        super::native::NativeGress::deparse(self, ctx, fg)
    }
    fn in_place(&self, phv: &Phv) -> bool {
        self.parses_in_place() && self.fits(phv)
    }
    unsafe fn write_prefix(&self, plan: &prefix::PrefixPlan, values: &[u64], out: *mut u8) {
        // SAFETY: the caller's guarantee; the engines' plan is the one the code was
        // generated from (`Engines::with_engine`, `Engines::native_traced`).
        unsafe { super::native::NativeGress::write_prefix(self, plan, values, out) }
    }
    #[inline(always)]
    fn phases(&self, ctx: &mut Ctx<'_, T>, _: &GressProgram, fg: &FlatGress, b: &mut Between) {
        super::native::NativeGress::pass(self, ctx, fg, b)
    }
}

/// [`run_pass`] out of line: every engine but untraced native code (see [`run_gress`]).
#[allow(clippy::too_many_arguments)]
#[inline(never)]
fn run_pass_outlined<T: Tracer>(
    pl: &Pipeline,
    eng: &Engines,
    gress: Gress,
    state: &mut PipeState,
    work: &mut GressWork,
    inp: &PassInput<'_>,
    tr: &mut T,
    engine: impl PassEngine<T>,
) -> GressResult {
    run_pass(pl, eng, gress, state, work, inp, tr, engine)
}

#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn run_pass<T: Tracer>(
    pl: &Pipeline,
    eng: &Engines,
    gress: Gress,
    state: &mut PipeState,
    work: &mut GressWork,
    inp: &PassInput<'_>,
    tr: &mut T,
    engine: impl PassEngine<T>,
) -> GressResult {
    let gp = match gress {
        Gress::Ingress => &pl.ingress,
        Gress::Egress => &pl.egress,
    };
    let geng = eng.gress(gress);
    let GressWork {
        phv,
        scratch,
        effects,
        input,
        out,
        stats,
    } = work;
    let in_place = engine.in_place(phv);
    let direct = prefix_fill(&engine, gp, geng, gress, inp, input, in_place);
    phv.reset();
    effects.clear();
    out.clear();
    // Intrinsics the prefix carries reach the PHV when the parser extracts the prefix (TNA
    // parsers must); the others given (a ghost program's `ping_pong` in ingress) are written
    // directly.
    if direct != 0 {
        write_direct(geng, gress, inp.intrinsics, phv);
    }
    if let Some(f) = &geng.plan.tstamp {
        phv.set_word_field(f, inp.now);
    }
    state.rt.epoch += 1;
    // The length counters and byte meters see, plus the 4-byte FCS the hardware counts (the
    // SDE's tna_counter expects n·(len + 4) bytes at ingress): in ingress the frame as
    // received; in egress the packet as the traffic manager stored it (tofino-model's egress
    // EOP length is the queued length, `Queueing::add_to_queue` / `Pipe::set_pktlen_eopinfo`),
    // i.e. what the ingress deparser sent, bridged header included, or a mirror copy with its
    // mirror header (`extra`). The FCS at egress is inferred (counted as at ingress).
    let stored = match gress {
        Gress::Ingress => inp.packet.len(),
        Gress::Egress => inp.extra.len() + inp.packet.len(),
    };
    let pkt_len = (stored + FCS_LEN) as u32;
    let mut ctx = Ctx {
        pl,
        eng,
        gress,
        tables: &state.tables,
        rt: &mut state.rt,
        phv,
        scratch,
        effects,
        emit_out: out,
        stats,
        tr,
        now: inp.now,
        pkt_len,
        input: input.as_slice(),
        input_tail: if in_place { inp.packet } else { &[] },
        cursor: 0,
        in_parser: false,
        reg: None,
        entry: super::RunningEntry::NONE,
        written: 0,
    };
    let fg = match gress {
        Gress::Ingress => &eng.flat.ingress,
        Gress::Egress => &eng.flat.egress,
    };
    let mut between = Between {
        gp,
        geng,
        gress,
        result: GressResult {
            drop: None,
            parser_err: 0,
            written: 0,
        },
        payload_start: 0,
        controlled: false,
    };
    engine.phases(&mut ctx, gp, fg, &mut between);
    let Between {
        mut result,
        payload_start,
        controlled,
        ..
    } = between;
    if !controlled {
        // Dropped by the parser.
        return result;
    }
    result.written = ctx.written;
    if result.drop.is_some() {
        return result;
    }
    // The payload: what the parser left of the head, then of the packet (empty unless the
    // packet was parsed in place).
    let (head, tail) = (ctx.input, ctx.input_tail);
    if payload_start < head.len() {
        // (Only when parsing a copy: in place, the head is the prefix alone.)
        ctx.emit_out.extend_from_slice(&head[payload_start..]);
    }
    ctx.emit_out
        .extend_from_slice(&tail[payload_start.saturating_sub(head.len()).min(tail.len())..]);
    if !ctx.effects.true_egress.is_empty() {
        // The deparsed frame plus its FCS, as the ingress length above.
        let out_len = (ctx.emit_out.len() + FCS_LEN) as u32;
        ctx.settle_true_egress(out_len);
    }
    if T::ENABLED {
        let bytes = ctx.emit_out.clone();
        ctx.tr.record(|| TraceEvent::Deparsed { gress, bytes });
    }
    result
}

/// Writes the given intrinsics that the prefix does not carry into the PHV.
#[cold]
fn write_direct(geng: &GressEngines, gress: Gress, given: PassIntrinsics<'_>, phv: &mut Phv) {
    let mut put = |which: Intrinsic, v: Value| {
        if let (Some(Some(f)), Some(None)) = (
            geng.bind.get(which as usize),
            geng.prefix.get(which as usize),
        ) {
            phv.set(*f, v);
        }
    };
    match given {
        PassIntrinsics::Listed(list) => list.iter().for_each(|(w, v)| put(*w, *v)),
        PassIntrinsics::Planned(values) => pass_intrinsics(gress)
            .iter()
            .zip(values)
            .for_each(|(w, v)| put(*w, Value::from(*v))),
    }
}

fn fault_drop(e: Fault) -> PassDrop {
    match e {
        Fault::Parser(p) => PassDrop::ParserError(p),
        // Only parser statements end a parse as a reject; elsewhere they are refused.
        Fault::Reject => PassDrop::Program(ProgramError::ParserOnly),
        Fault::Program(p) => PassDrop::Program(*p),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The head is the words' big-endian bytes cut to the prefix (to the word builder's 64
    /// bytes at most), whatever the buffer held before, with room for what follows.
    #[test]
    fn put_words_cuts_big_endian_words() {
        let words: [u64; PREFIX_WORDS] =
            std::array::from_fn(|i| 0x0102_0304_0506_0708u64.wrapping_mul(i as u64 + 1));
        let all: Vec<u8> = words.iter().flat_map(|w| w.to_be_bytes()).collect();
        let mut buf = vec![0xee; 3];
        for (n, more) in [(0, 0), (5, 60), (16, 8), (17, 1500), (64, 0), (80, 3)] {
            let base = start_head(&mut buf, n, more);
            put_words(base, &words);
            let len = n.min(PREFIX_WORDS * 8);
            // SAFETY: as in `prefix_fill`.
            unsafe { buf.set_len(len) };
            assert_eq!(buf, all[..len], "prefix of {n} bytes");
            assert!(buf.capacity() >= (len + more).max(PREFIX_WORDS * 8));
        }
    }
}
