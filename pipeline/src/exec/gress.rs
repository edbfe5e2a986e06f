//! The gress runner: one packet pass through parser → control → deparser of one gress of one
//! pipe. It builds the parser input (the hardware's prefix of intrinsic metadata, then port
//! metadata / resubmit data or a mirror header, then the packet), decides what a parser error
//! means (ingress drops unless the control reads `parser_err`; egress continues), and re-appends
//! the unparsed payload after the deparser's emits.

use super::flat::FlatGress;
use super::parser::ParseEnd;
use super::{
    Ctx, Effects, Engines, ExecResult, ExecStats, Fault, GressEngines, ParserFault, ProgramError,
    Scratch,
};
use crate::ir::{FieldRef, Gress, GressProgram, Intrinsic, Pipeline, Value};
use crate::phv::Phv;
use crate::state::PipeState;
use crate::trace::{NoTrace, TraceEvent, Tracer};

/// Size of `ingress_intrinsic_metadata_t` in the ingress prefix; the rest of the prefix is port
/// metadata or resubmit data.
pub const IG_INTRINSIC_BYTES: usize = 8;

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
            input: Vec::with_capacity(2048),
            out: Vec::with_capacity(2048),
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

/// What to feed a pass.
#[derive(Debug, Clone, Copy)]
pub struct PassInput<'a> {
    /// Intrinsic values the hardware puts in the prefix (and into the bound PHV fields).
    /// Intrinsics left out are 0 (the prefix and the PHV start zeroed), so callers leave out
    /// those that are always 0: each given one costs a few cycles per pass.
    pub intrinsics: &'a [(Intrinsic, Value)],
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
    ParserReject,
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
fn prefix_fill(
    gp: &GressProgram,
    eng: &GressEngines,
    gress: Gress,
    inp: &PassInput<'_>,
    buf: &mut Vec<u8>,
    in_place: bool,
) -> u64 {
    let n = gp.prefix.bytes as usize;
    // Build the prefix in whole 64-bit words (no partial-overlap stores), then lay them out.
    let mut words = [0u64; PREFIX_WORDS];
    // The words start zeroed and values are only ORed in, so zero values and intrinsics the
    // prefix does not carry (mask 0) need no branch, and each value is ORed into its word by
    // index (`PrefixSlot::word` is below `PREFIX_WORDS`): no branch on the word either (a jump
    // table on it cost an indirect jump per intrinsic, and selecting into four registers
    // without one was vectorized into something slower still).
    //
    // (ORs into four locals through a mask per word, or into four copies of the words merged
    // after, were no faster: about 5 cycles an intrinsic either way. Fewer intrinsics are
    // what helps: callers leave out those that are always 0.)
    let mut direct = 0u64;
    for (which, v) in inp.intrinsics {
        let Some(s) = eng.prefix_slots.get(*which as usize) else {
            continue;
        };
        direct |= 1u64.checked_shl(*which as u32).unwrap_or(0);
        words[usize::from(s.word) % PREFIX_WORDS] |= ((*v as u64) & s.mask()) << s.shift;
        if s.split {
            if let Some(Some(f)) = eng.prefix.get(*which as usize) {
                put_bits(&mut words, f.offset, f.width, *v);
            }
        }
    }
    // Lay the words out on the stack and copy once (prefixes past the word builder are cut).
    let mut bytes = [0u8; PREFIX_WORDS * 8];
    for (chunk, w) in bytes.chunks_exact_mut(8).zip(words.iter()) {
        chunk.copy_from_slice(&w.to_be_bytes());
    }
    buf.clear();
    buf.reserve(n + inp.extra.len() + if in_place { 0 } else { inp.packet.len() });
    // All of `bytes` then cut: a copy of constant size, done in line (a copy of `n` bytes is a
    // `memmove` call).
    buf.extend_from_slice(&bytes);
    buf.truncate(n);
    match gress {
        Gress::Ingress => {
            if n > IG_INTRINSIC_BYTES {
                let room = n - IG_INTRINSIC_BYTES;
                let k = inp.extra.len().min(room);
                buf[IG_INTRINSIC_BYTES..IG_INTRINSIC_BYTES + k].copy_from_slice(&inp.extra[..k]);
            }
        }
        Gress::Egress => buf.extend_from_slice(inp.extra),
    }
    if !in_place {
        buf.extend_from_slice(inp.packet);
    }
    direct & eng.direct
}

/// Where one intrinsic goes in the prefix words: a field inside one word as (word, shift,
/// width), width 0 when the prefix does not carry it (or carries it past the word builder);
/// a field that crosses a word boundary as `split`, written bit by bit from its
/// `GressEngines::prefix` location. Four bytes, so that the slots a pass reads share a cache
/// line or two (they are cold after the table lookups of the previous packet).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PrefixSlot {
    word: u8,
    shift: u8,
    width: u8,
    split: bool,
}

impl PrefixSlot {
    /// The slot of a prefix field (`None`: not in the prefix).
    pub fn new(f: Option<FieldRef>) -> PrefixSlot {
        let Some(f) = f else {
            return PrefixSlot::default();
        };
        let bit = f.offset % 64;
        let word = f.offset / 64;
        let width = u32::from(f.width);
        if width == 0 || word as usize >= PREFIX_WORDS {
            // `put_bits` writes nothing for these.
            return PrefixSlot::default();
        }
        if bit + width <= 64 {
            PrefixSlot {
                word: word as u8,
                shift: (64 - bit - width) as u8,
                width: width as u8,
                split: false,
            }
        } else {
            PrefixSlot {
                split: true,
                ..PrefixSlot::default()
            }
        }
    }

    /// The mask of the field's value (0 when the slot writes no bits itself).
    #[inline]
    fn mask(self) -> u64 {
        u64::MAX
            .checked_shr(64 - u32::from(self.width))
            .unwrap_or(0)
    }
}

/// Longest prefix the word builder handles (bytes / 8); longer prefixes are cut.
const PREFIX_WORDS: usize = 8;

/// OR `width` bits of `v` at bit `offset` (MSB-first) into big-endian words.
#[inline]
fn put_bits(words: &mut [u64; PREFIX_WORDS], offset: u32, width: u16, v: Value) {
    let bit = offset % 64;
    if width > 0 && bit + width as u32 <= 64 {
        // The usual case: the field lies inside one word.
        if let Some(w) = words.get_mut((offset / 64) as usize) {
            let m = u64::MAX >> (64 - width as u32);
            *w |= ((v as u64) & m) << (64 - bit - width as u32);
        }
        return;
    }
    let mut v = v & crate::phv::mask(width);
    let mut end = offset + width as u32; // exclusive
    let mut left = width as u32;
    while left > 0 {
        let wi = ((end - 1) / 64) as usize;
        let low = (64 - end % 64) % 64; // bits after the field end inside this word
        let take = (64 - low).min(left);
        if let Some(w) = words.get_mut(wi) {
            let chunk = (v as u64) & (u64::MAX >> (64 - take));
            *w |= chunk << low;
        }
        v = v.checked_shr(take).unwrap_or(0);
        left -= take;
        end -= take;
    }
}

/// Run one pass of `gress` on `state` (a pipe running `pl`, which `eng` was built from).
///
/// Passes run the native code of `eng` when it has some, else its flat program (or the tree
/// interpreter for [`super::EngineKind::Tree`]). Traced passes ([`Tracer::ENABLED`]) run the
/// same engine recording every event: the native code's traced variant (for a
/// [`crate::trace::Recorder`]), the flat program with its trace points. All give the same result and the same events.
#[allow(clippy::too_many_arguments)]
#[inline]
pub fn run_gress<T: Tracer>(
    pl: &Pipeline,
    eng: &Engines,
    error_names: &[String],
    gress: Gress,
    state: &mut PipeState,
    work: &mut GressWork,
    inp: &PassInput<'_>,
    tr: &mut T,
) -> GressResult {
    if T::ENABLED {
        return run_traced(pl, eng, error_names, gress, state, work, inp, tr);
    }
    #[cfg(feature = "native")]
    if let Some(n) = &eng.native {
        if let Some(nt) = tr.no_trace() {
            let e = n.gress(gress);
            return run_pass(pl, eng, error_names, gress, state, work, inp, nt, e);
        }
    }
    if eng.tree {
        return run_pass(pl, eng, error_names, gress, state, work, inp, tr, Tree);
    }
    run_pass(pl, eng, error_names, gress, state, work, inp, tr, Flat)
}

/// [`run_gress`] for a recording tracer.
#[allow(clippy::too_many_arguments)]
#[inline(never)]
fn run_traced<T: Tracer>(
    pl: &Pipeline,
    eng: &Engines,
    error_names: &[String],
    gress: Gress,
    state: &mut PipeState,
    work: &mut GressWork,
    inp: &PassInput<'_>,
    tr: &mut T,
) -> GressResult {
    if eng.tree {
        return run_pass(pl, eng, error_names, gress, state, work, inp, tr, Tree);
    }
    #[cfg(feature = "native")]
    if let Some(Ok(n)) = eng.native_traced(pl) {
        if let Some(rec) = tr.recorder() {
            let e = n.gress(gress);
            return run_pass(pl, eng, error_names, gress, state, work, inp, rec, e);
        }
    }
    run_pass(pl, eng, error_names, gress, state, work, inp, tr, Flat)
}

/// [`run_gress`] on the tree interpreter whatever the tracer (the reference the flat program is
/// tested against).
#[allow(clippy::too_many_arguments)]
pub fn run_gress_tree<T: Tracer>(
    pl: &Pipeline,
    eng: &Engines,
    error_names: &[String],
    gress: Gress,
    state: &mut PipeState,
    work: &mut GressWork,
    inp: &PassInput<'_>,
    tr: &mut T,
) -> GressResult {
    run_pass(pl, eng, error_names, gress, state, work, inp, tr, Tree)
}

/// [`run_gress`] on the flat program whatever engine `eng` has (the native engine's
/// differential reference).
#[allow(clippy::too_many_arguments)]
pub fn run_gress_flat(
    pl: &Pipeline,
    eng: &Engines,
    error_names: &[String],
    gress: Gress,
    state: &mut PipeState,
    work: &mut GressWork,
    inp: &PassInput<'_>,
) -> GressResult {
    run_pass(
        pl,
        eng,
        error_names,
        gress,
        state,
        work,
        inp,
        &mut NoTrace,
        Flat,
    )
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
    /// After the parser ended with `end`: whether the control runs.
    pub(crate) fn parsed<T: Tracer>(&mut self, ctx: &mut Ctx<'_, T>, end: ParseEnd) -> bool {
        let err_field = match self.gress {
            Gress::Ingress => Intrinsic::IgPrsrParserErr,
            Gress::Egress => Intrinsic::EgPrsrParserErr,
        };
        match end {
            ParseEnd::Accept => {}
            ParseEnd::Reject => {
                if self.gress == Gress::Ingress {
                    self.result.drop = Some(PassDrop::ParserReject);
                }
            }
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
        self.payload_start = (ctx.cursor.div_ceil(8) as usize)
            .max(self.gp.prefix.bytes as usize)
            .min(ctx.input.len() + ctx.input_tail.len());
        self.controlled = self.result.drop.is_none();
        self.controlled
    }

    /// After the control (`exit` and `return` both end it): whether the deparser runs.
    pub(crate) fn controlled(&mut self, r: ExecResult) -> bool {
        if let Err(e) = r {
            self.result.drop = Some(fault_drop(e));
        }
        self.result.drop.is_none()
    }

    /// After the deparser.
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
    fn phases(&self, ctx: &mut Ctx<'_, T>, _: &GressProgram, fg: &FlatGress, b: &mut Between) {
        super::native::NativeGress::pass(self, ctx, fg, b)
    }
}

#[allow(clippy::too_many_arguments)]
fn run_pass<T: Tracer>(
    pl: &Pipeline,
    eng: &Engines,
    error_names: &[String],
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
    let direct = prefix_fill(gp, geng, gress, inp, input, in_place);
    phv.reset();
    effects.clear();
    out.clear();
    // Intrinsics the prefix carries reach the PHV when the parser extracts the prefix (TNA
    // parsers must); the others given (none today) are written directly.
    if direct != 0 {
        for (which, v) in inp.intrinsics {
            if let (Some(Some(f)), Some(None)) = (
                geng.bind.get(*which as usize),
                geng.prefix.get(*which as usize),
            ) {
                phv.set(*f, *v);
            }
        }
    }
    let ts_field = match gress {
        Gress::Ingress => Intrinsic::IgPrsrGlobalTstamp,
        Gress::Egress => Intrinsic::EgPrsrGlobalTstamp,
    };
    if let Some(Some(f)) = geng.bind.get(ts_field as usize) {
        phv.set(*f, inp.now as Value);
    }
    state.rt.epoch += 1;
    let pkt_len = inp.packet.len() as u32;
    let mut ctx = Ctx {
        pl,
        eng,
        gress,
        error_names,
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
        entry: None,
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
    ctx.emit_out
        .extend_from_slice(head.get(payload_start..).unwrap_or(&[]));
    ctx.emit_out
        .extend_from_slice(&tail[payload_start.saturating_sub(head.len()).min(tail.len())..]);
    if !ctx.effects.true_egress.is_empty() {
        let out_len = ctx.emit_out.len() as u32;
        ctx.settle_true_egress(out_len);
    }
    if T::ENABLED {
        let bytes = ctx.emit_out.clone();
        ctx.tr.record(|| TraceEvent::Deparsed { gress, bytes });
    }
    result
}

fn fault_drop(e: Fault) -> PassDrop {
    match e {
        Fault::Parser(p) => PassDrop::ParserError(p),
        Fault::Program(p) => PassDrop::Program(*p),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::phv::{read_bits, write_bits};

    #[test]
    fn prefix_slots_write_what_put_bits_writes() {
        for (offset, width) in [
            (0u32, 1u16),
            (7, 9),
            (55, 9),
            (61, 19),
            (64, 64),
            (100, 48),
            (120, 128),
            (250, 6),
            (500, 12),
            (600, 8),
            (3, 0),
        ] {
            let f = FieldRef { offset, width };
            let v: Value = 0x0123_4567_89ab_cdef_fedc_ba98_7654_3210;
            let mut expect = [0u64; PREFIX_WORDS];
            put_bits(&mut expect, offset, width, v);
            let s = PrefixSlot::new(Some(f));
            let mut got = [0u64; PREFIX_WORDS];
            let bits = ((v as u64) & s.mask()) << s.shift;
            for (k, w) in got.iter_mut().enumerate() {
                *w |= if k == s.word as usize { bits } else { 0 };
            }
            if s.split {
                put_bits(&mut got, f.offset, f.width, v);
            }
            assert_eq!(got, expect, "offset {offset} width {width}");
        }
        assert_eq!(PrefixSlot::new(None).mask(), 0);
        assert_eq!(std::mem::size_of::<PrefixSlot>(), 4);
    }

    #[test]
    fn put_bits_matches_write_bits_inside_and_across_words() {
        for (offset, width) in [
            (0u32, 1u16),
            (7, 9),
            (61, 19),
            (64, 64),
            (100, 48),
            (120, 128),
            (250, 6),
        ] {
            let mut words = [0u64; PREFIX_WORDS];
            let v: Value = 0x0123_4567_89ab_cdef_fedc_ba98_7654_3210;
            put_bits(&mut words, offset, width, v);
            let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_be_bytes()).collect();
            let mut expect = vec![0u8; PREFIX_WORDS * 8];
            write_bits(&mut expect, offset, width, v);
            assert_eq!(bytes, expect, "offset {offset} width {width}");
            assert_eq!(
                read_bits(&bytes, offset, width),
                v & crate::phv::mask(width)
            );
        }
    }
}
