//! Running a gress's generated entry points on a pass's context: a pass builds one [`Env`]
//! for its parser, control and deparser, calls the code, and turns its answers back into the
//! flat engine's results.

use super::env::{Env, EXIT, FAULT, NEXT, RETURN};
use super::gen::Layout;
use super::parser::{fault_of_kind, END_ACCEPT, END_ERROR, END_FAULT, END_REJECT};
use super::prefix::PrefixFn;
use crate::exec::flat::FlatGress;
use crate::exec::gress::Between;
use crate::exec::parser::ParseEnd;
use crate::exec::prefix::PrefixPlan;
use crate::exec::{Ctx, ExecResult, Fault, Flow, ParserFault};
use crate::phv::Phv;
use crate::trace::Tracer;

type ParseFn<T> = unsafe extern "C" fn(*mut Env<T>) -> u64;
type BlockFn<T> = unsafe extern "C" fn(*mut Env<T>) -> u32;

/// One gress's generated entry points, for contexts of tracer `T` (neither `Clone` nor
/// `Copy`: they must not outlive the `NativePipeline` that owns the code).
pub struct NativeGress<T: Tracer> {
    parse: ParseFn<T>,
    control: BlockFn<T>,
    deparse: BlockFn<T>,
    /// The generated writer of the gress's prefix plan and how many values it reads.
    prefix: (PrefixFn, usize),
    in_place: bool,
    /// The PHV layout the code was generated for: a PHV smaller than it (a `GressWork` of
    /// another program) runs the flat engine instead, never the code.
    layout: Layout,
}

impl<T: Tracer> std::fmt::Debug for NativeGress<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NativeGress").finish_non_exhaustive()
    }
}

impl<T: Tracer> NativeGress<T> {
    /// # Safety
    /// The pointers are finalized functions with the signatures of [`ParseFn`] (the first)
    /// and [`BlockFn`], generated for the flat gress they will be run with and calling the
    /// shims of `T` (`Shims::of::<T>`); `prefix` a finalized [`PrefixFn`] reading that many
    /// values, generated from the plan of the `GressEngines` it will be run with; `in_place` only
    /// when the parser reads nothing of its input but through generated extracts/advances;
    /// `layout` the one the code was generated against.
    pub(super) unsafe fn new(
        parse: *const u8,
        control: *const u8,
        deparse: *const u8,
        prefix: (*const u8, usize),
        in_place: bool,
        layout: Layout,
    ) -> Self {
        // SAFETY: by the contract above, each pointer is a function of the transmuted type.
        unsafe {
            NativeGress {
                parse: std::mem::transmute::<*const u8, ParseFn<T>>(parse),
                control: std::mem::transmute::<*const u8, BlockFn<T>>(control),
                deparse: std::mem::transmute::<*const u8, BlockFn<T>>(deparse),
                prefix: (
                    std::mem::transmute::<*const u8, PrefixFn>(prefix.0),
                    prefix.1,
                ),
                in_place,
                layout,
            }
        }
    }

    /// `PrefixPlan::write` of the gress's plan (the one the code was generated from) by the
    /// generated writer: the same bytes at `out`.
    ///
    /// # Safety
    /// `out` is valid for writes of `PREFIX_WORDS * 8` bytes (no alignment needed).
    pub unsafe fn write_prefix(&self, plan: &PrefixPlan, values: &[u64], out: *mut u8) {
        let (write, needs) = self.prefix;
        if values.len() < needs {
            // Fewer values than the plan reads (not what the switch passes): the plan pads.
            // SAFETY: the caller's guarantee.
            return unsafe { plan.write(values, out) };
        }
        // SAFETY: the writer reads `needs` ≤ `values.len()` values and writes
        // `PREFIX_WORDS * 8` bytes at `out`, which the caller guarantees writable.
        unsafe { write(values.as_ptr(), out) }
    }

    /// Whether the parser reads the packet where it lies (`Ctx::input_tail`).
    pub fn parses_in_place(&self) -> bool {
        self.in_place
    }

    /// Whether the code may run on `phv` (every byte and validity word it addresses is there).
    pub fn fits(&self, phv: &Phv) -> bool {
        let (bytes, words) = phv.raw_lens();
        bytes >= self.layout.phv_padded as usize && words * 64 >= self.layout.headers as usize
    }

    /// Runs the parser from its start state, as `Ctx::run_parser_flat` does (with how it
    /// ended traced: generated code traces the states and extracts).
    pub fn parse(&self, ctx: &mut Ctx<'_, T>, fg: &FlatGress) -> ParseEnd {
        if !self.fits(ctx.phv) {
            return ctx.run_parser_flat(fg, &fg.parser);
        }
        Self::begin_parse(ctx);
        self.run_parse(&mut Env::new(ctx, fg))
    }

    /// Runs the control.
    pub fn control(&self, ctx: &mut Ctx<'_, T>, fg: &FlatGress) -> ExecResult {
        if !self.fits(ctx.phv) {
            return ctx.fexec_block(fg, &fg.control, &[]);
        }
        Self::run_block(self.control, &mut Env::new(ctx, fg))
    }

    /// Runs the deparser.
    pub fn deparse(&self, ctx: &mut Ctx<'_, T>, fg: &FlatGress) -> ExecResult {
        if !self.fits(ctx.phv) {
            return ctx.fexec_block(fg, &fg.deparser, &[]);
        }
        Self::run_block(self.deparse, &mut Env::new(ctx, fg))
    }

    /// A whole pass: parser, control, deparser on one environment, with what the pass does
    /// between them in `b` (on a PHV the code does not fit, the flat engine's phases).
    #[inline(always)]
    pub(crate) fn pass(&self, ctx: &mut Ctx<'_, T>, fg: &FlatGress, b: &mut Between<'_>) {
        if !self.fits(ctx.phv) {
            let end = ctx.run_parser_flat(fg, &fg.parser);
            if b.parsed(ctx, end) {
                let control = ctx.fexec_block(fg, &fg.control, &[]);
                if b.controlled(control) {
                    b.deparsed(ctx.fexec_block(fg, &fg.deparser, &[]));
                }
            }
            return;
        }
        Self::begin_parse(ctx);
        let mut env = Env::new(ctx, fg);
        let end = self.run_parse(&mut env);
        if !b.parsed(env.ctx(), end) {
            return;
        }
        env.next_block();
        let control = Self::run_block(self.control, &mut env);
        if b.controlled(control) {
            env.next_block();
            b.deparsed(Self::run_block(self.deparse, &mut env));
        }
    }

    /// The context as the parser starts.
    fn begin_parse(ctx: &mut Ctx<'_, T>) {
        ctx.in_parser = true;
        ctx.cursor = 0;
        let ncsum = ctx.pl.checksums.len();
        ctx.scratch.zero_csums(ncsum);
    }

    /// Runs the generated parser on `env` (made after [`Self::begin_parse`]). In line in
    /// [`Self::pass`]: a call per phase cost its prologue and epilogue on every pass.
    #[inline(always)]
    fn run_parse(&self, env: &mut Env<'_, '_, T>) -> ParseEnd {
        // SAFETY: the code was generated for the pass's flat gress (see `NativeGress::new`;
        // the caller checked that it fits the PHV) and `env` is a live environment of it.
        let r = unsafe { (self.parse)(env) };
        let (ctx, fault) = env.settle();
        ctx.in_parser = false;
        let state = (r >> 32) as usize;
        let end = match r & 0xff {
            END_ACCEPT => ParseEnd::Accept,
            END_REJECT => ParseEnd::Reject,
            END_ERROR => ParseEnd::Error(fault_of_kind((r >> 8) & 0xff_ffff), state),
            END_FAULT => match fault {
                Some(Fault::Parser(p)) => ParseEnd::Error(p, state),
                Some(Fault::Reject) => ParseEnd::Reject,
                _ => ParseEnd::Error(ParserFault::NoMatch, state),
            },
            _ => ParseEnd::Error(ParserFault::NoMatch, state),
        };
        ctx.trace_parse_end(end, state);
        end
    }

    /// Runs `f`, the code generated for a block (control or deparser), on `env` (in line,
    /// as [`Self::run_parse`]).
    #[inline(always)]
    fn run_block(f: BlockFn<T>, env: &mut Env<'_, '_, T>) -> ExecResult {
        // SAFETY: as in `run_parse`.
        let r = unsafe { f(env) };
        let (_, fault) = env.settle();
        match r {
            NEXT => Ok(Flow::Next),
            RETURN => Ok(Flow::Return),
            EXIT => Ok(Flow::Exit),
            FAULT => Err(fault.unwrap_or_else(|| {
                Fault::program(crate::exec::ProgramError::BadReference("native fault"))
            })),
            _ => Err(Fault::program(crate::exec::ProgramError::BadReference(
                "native status",
            ))),
        }
    }
}
