//! The native code's view of a pass ([`Env`]) and the `extern "C"` shims generated code calls
//! for what it does not do itself: flat ops and expressions it does not generate, table
//! lookups, emits of header bytes, unaligned extracts. Every shim runs the existing flat/tree
//! code on the same [`Ctx`], so a construct not yet generated means the same as in the flat
//! engine.
//!
//! Traced code (generated for a recording tracer) also calls the `hook_*` functions at each
//! trace point; they record through the context's tracer, which the environment reaches.
//!
//! Status codes returned to generated code: [`NEXT`], [`RETURN`], [`EXIT`] (a block's flow) and
//! [`FAULT`] (the fault is in [`Env::fault`]).

use std::marker::PhantomData;
use std::mem::MaybeUninit;

use crate::exec::flat::{FExpr, FlatGress, Op};
use crate::exec::{Ctx, Fault, Flow, ProgramError, RunningEntry};
use crate::ir::{ActionId, Expr, RegisterId, Stmt, TableId, Value};
use crate::table::{EntryHandle, INLINE_ARGS};
use crate::trace::{NoTrace, Recorder, Tracer};

pub const NEXT: u32 = 0;
pub const RETURN: u32 = 1;
pub const EXIT: u32 = 2;
pub const FAULT: u32 = 3;
/// [`shim_salu_claim`]'s answer for a direct register on a miss: no access, output 0.
pub const SALU_MISS: u32 = 1;

/// Most action-data values generated code passes in a buffer (an entry with more runs its
/// action through the flat engine).
pub const MAX_ARGS: usize = 16;
/// Most key fields generated code passes to a lookup (a table with more falls back).
pub const MAX_KEYS: usize = 64;

/// Flag in [`shim_apply`]'s answer: the entry matched.
pub const APPLY_HIT: u64 = 1 << 32;
/// Flag: the shim already ran the action (its data did not fit [`Env::args`]); bits 40..42
/// hold the action's status code.
pub const APPLY_RAN: u64 = 1 << 33;
/// Flag: the lookup faulted (a missing table).
pub const APPLY_FAULT: u64 = 1 << 34;

/// One pass as generated code sees it, on a context of tracer `T`. `#[repr(C)]`: generated
/// code reads the fields below at their `offset_of!` offsets in [`EnvLayout`] (the same for
/// every `T`: only a pointer's target type depends on it).
#[repr(C)]
pub struct Env<'e, 'a, T: Tracer> {
    /// PHV bytes (with the PHV's trailing padding) and header validity words.
    pub phv: *mut u8,
    pub valid: *mut u64,
    /// Parser input: its head (`Ctx::input`: prefix + packet, or only the prefix when the
    /// packet is parsed in place), the head's length in bytes, the tail (`Ctx::input_tail`:
    /// the packet in place, or empty) and the whole input's length in bits.
    pub input: *const u8,
    pub head_bytes: u64,
    pub tail: *const u8,
    pub input_bits: u64,
    /// The parser cursor in bits (kept here while native code parses; copied into the
    /// context around every shim call so fallbacks see it).
    pub cursor: u64,
    /// Watched-field write bits (as `Ctx::written`).
    pub written: u64,
    /// Number of valid values in `args`.
    pub nargs: u64,
    /// The parser checksum accumulators (`Scratch::csum`) and how many there are.
    pub csum: *mut u32,
    pub csum_len: u64,
    /// The deparser's output (`Ctx::emit_out`): its buffer, length and capacity. Generated
    /// code appends bytes below the capacity itself and keeps the length here; the context's
    /// vector gets it around every shim call and after every block, and a shim that may grow
    /// the vector reloads all three ([`Env::sync_out`]).
    pub out: *mut u8,
    pub out_len: u64,
    pub out_cap: u64,
    /// `Ctx::entry` before the running table apply (restored after its action).
    pub saved_entry: RunningEntry,
    pub ctx: *mut Ctx<'a, T>,
    pub fg: *const FlatGress,
    /// The pass's table states (`Ctx::tables`) and how many there are (generated lookups
    /// read the tables' maps: `super::lookup`).
    pub tables: *const crate::state::TableState,
    pub ntables: u64,
    /// The pipe's counter arrays (`PipeRuntime::counters`) and how many there are (generated
    /// counts add to them through their views: `super::counter`).
    pub counters: *const crate::state::CounterState,
    pub ncounters: u64,
    /// A shim-evaluated expression's value.
    pub ret: Value,
    pub fault: Option<Fault>,
    /// The running register access ([`shim_salu_claim`]): its cell's words (lo, hi; a word
    /// the cell lacks is `reg_spare`'s), its index and its words as read (for the trace).
    pub reg_cell: [*mut u64; 2],
    pub reg_spare: [u64; 2],
    pub reg_idx: u64,
    pub reg_before: [u64; 2],
    /// Action data of the entry a lookup matched (the first `nargs` are set; generated code
    /// may load the others but never uses what it loaded).
    ///
    /// The two buffers come last and are never initialized here: a field set to zero right
    /// after them let the compiler zero them too (a 272-byte `memset` per entry point, six
    /// per packet).
    pub args: [MaybeUninit<Value>; MAX_ARGS],
    /// Key values for a lookup (generated code sets them before each lookup).
    pub key: [MaybeUninit<Value>; MAX_KEYS],
    pub _borrow: PhantomData<&'e mut Ctx<'a, T>>,
}

/// The environment whose field offsets generated code uses.
pub type EnvLayout = Env<'static, 'static, NoTrace>;

// Traced code reads a traced context's environment at the same offsets.
const _: () = {
    type Traced = Env<'static, 'static, Recorder>;
    assert!(std::mem::size_of::<Traced>() == std::mem::size_of::<EnvLayout>());
    assert!(std::mem::offset_of!(Traced, ctx) == std::mem::offset_of!(EnvLayout, ctx));
    assert!(std::mem::offset_of!(Traced, fg) == std::mem::offset_of!(EnvLayout, fg));
    assert!(std::mem::offset_of!(Traced, fault) == std::mem::offset_of!(EnvLayout, fault));
};

impl<'e, 'a, T: Tracer> Env<'e, 'a, T> {
    /// The environment of a pass on `ctx` running the lowered gress `fg`.
    pub fn new(ctx: &'e mut Ctx<'a, T>, fg: &'e FlatGress) -> Env<'e, 'a, T> {
        let (phv, valid) = ctx.phv.raw_parts();
        let (out, out_len, out_cap) = out_parts(ctx.emit_out);
        Env {
            phv,
            valid,
            input: ctx.input.as_ptr(),
            head_bytes: ctx.input.len() as u64,
            tail: ctx.input_tail.as_ptr(),
            input_bits: (ctx.input.len() + ctx.input_tail.len()) as u64 * 8,
            cursor: ctx.cursor,
            written: u64::from(ctx.written),
            nargs: 0,
            csum: ctx.scratch.csum.as_mut_ptr(),
            csum_len: ctx.scratch.csum.len() as u64,
            out,
            out_len,
            out_cap,
            saved_entry: RunningEntry::NONE,
            tables: ctx.tables.as_ptr(),
            ntables: ctx.tables.len() as u64,
            counters: ctx.rt.counters.as_ptr(),
            ncounters: ctx.rt.counters.len() as u64,
            ctx,
            fg,
            ret: 0,
            fault: None,
            reg_cell: [std::ptr::null_mut(); 2],
            reg_spare: [0; 2],
            reg_idx: 0,
            reg_before: [0; 2],
            args: [MaybeUninit::uninit(); MAX_ARGS],
            key: [MaybeUninit::uninit(); MAX_KEYS],
            _borrow: PhantomData,
        }
    }

    /// The context this environment borrows, between calls of generated code.
    pub fn ctx(&mut self) -> &mut Ctx<'a, T> {
        // SAFETY: `ctx` points to the context `Env::new` borrowed mutably for `'e`, which
        // outlives `self`; the answer borrows `self` mutably, so no generated code (which
        // only runs inside a call given this environment) and no shim uses the context
        // meanwhile.
        unsafe { &mut *self.ctx }
    }

    /// Makes the environment ready for the next block of the same pass: the cursor and write
    /// bits as the context has them, no running entry, no fault. (The output is as
    /// [`Env::settle`] left it: what runs between blocks emits nothing. Reloading it here
    /// cost a stall per block: a 16-byte load of the vector's pointer and length that
    /// overlaps the 8-byte store of its length just made, which the CPU cannot forward.)
    pub fn next_block(&mut self) {
        let (cursor, written) = {
            let ctx = self.ctx();
            (ctx.cursor, ctx.written)
        };
        self.cursor = cursor;
        self.written = u64::from(written);
        self.nargs = 0;
        self.saved_entry = RunningEntry::NONE;
        self.fault = None;
    }

    /// After generated code returned: the context as it left it (cursor, write bits, output
    /// length), and the fault it reported, if any.
    pub fn settle(&mut self) -> (&mut Ctx<'a, T>, Option<Fault>) {
        let fault = self.fault.take();
        let (cursor, written, out_len) = (self.cursor, self.written, self.out_len);
        let ctx = self.ctx();
        ctx.cursor = cursor;
        ctx.written = written as u8;
        // SAFETY: see `set_out_len`.
        unsafe { set_out_len(ctx.emit_out, out_len) };
        (ctx, fault)
    }

    /// The context, with the cursor and write bits generated code keeps here copied in.
    ///
    /// # Safety
    /// `env` must point to a live `Env` made by [`Env::new`], used by one thread.
    pub(super) unsafe fn sync_in<'x>(
        env: *mut Env<'e, 'a, T>,
    ) -> (&'x mut Env<'e, 'a, T>, &'x mut Ctx<'a, T>) {
        // SAFETY: the caller upholds `unsynced`'s contract, which is this function's.
        let (env, ctx) = unsafe { Self::unsynced(env) };
        Self::sync_ctx(env, ctx);
        (env, ctx)
    }

    /// The environment and its context as [`Env::sync_in`] gives them, without copying the
    /// cursor, write bits and output length into the context: for shims that read none of
    /// them (a lookup, a count), which saves the stores on every call.
    ///
    /// # Safety
    /// As [`Env::sync_in`].
    pub(super) unsafe fn unsynced<'x>(
        env: *mut Env<'e, 'a, T>,
    ) -> (&'x mut Env<'e, 'a, T>, &'x mut Ctx<'a, T>) {
        // SAFETY: the caller passes the Env it made; `ctx` points to the context that Env
        // borrows mutably for its whole life, and generated code holds no Rust reference to it.
        let env = unsafe { &mut *env };
        // SAFETY: as above: `ctx` outlives `env` and nothing else uses it during the shim.
        let ctx = unsafe { &mut *env.ctx };
        (env, ctx)
    }

    /// What [`Env::sync_in`] copies into the context, for a shim that got it
    /// [`Env::unsynced`] and then runs flat code after all.
    fn sync_ctx(env: &Env<'e, 'a, T>, ctx: &mut Ctx<'a, T>) {
        ctx.cursor = env.cursor;
        ctx.written = env.written as u8;
        // SAFETY: see `set_out_len`: `env` is live and its output fields describe `emit_out`.
        unsafe { set_out_len(ctx.emit_out, env.out_len) };
    }

    /// Copies what a fallback changed back to where generated code reads it (the output
    /// vector too: the fallback may have grown it).
    fn sync_out(&mut self, ctx: &mut Ctx<'a, T>) {
        self.cursor = ctx.cursor;
        self.written = u64::from(ctx.written);
        (self.out, self.out_len, self.out_cap) = out_parts(ctx.emit_out);
    }

    /// Turns a flat result into a status code, keeping the fault.
    fn status(&mut self, r: Result<Flow, Fault>) -> u32 {
        match r {
            Ok(Flow::Next) => NEXT,
            Ok(Flow::Return) => RETURN,
            Ok(Flow::Exit) => EXIT,
            Err(f) => {
                self.fault = Some(f);
                FAULT
            }
        }
    }
}

/// Buffer, length and capacity of an output vector, as [`Env`] keeps them.
fn out_parts(out: &mut Vec<u8>) -> (*mut u8, u64, u64) {
    (out.as_mut_ptr(), out.len() as u64, out.capacity() as u64)
}

/// Gives the output vector the length generated code kept in [`Env::out_len`].
///
/// # Safety
/// `len` is the `out_len` of a live [`Env`] whose `out`/`out_cap` were taken from `out`
/// ([`out_parts`]) after its last change: generated code only appends below that capacity
/// (it checks), so `len` ≤ the capacity and bytes `[0, len)` are initialized (the vector's
/// own, then what generated code wrote after them).
unsafe fn set_out_len(out: &mut Vec<u8>, len: u64) {
    debug_assert!(len as usize <= out.capacity());
    // SAFETY: by the function's contract.
    unsafe { out.set_len(len as usize) }
}

/// The action data a generated function was passed (or the values a shim is handed).
///
/// # Safety
/// `params` points to `n` readable values (or `n` is 0).
pub(super) unsafe fn params<'p>(params: *const Value, n: u64) -> &'p [Value] {
    if n == 0 {
        return &[];
    }
    // SAFETY: guaranteed by the caller (generated code passes `Env::args` with `nargs`, or a
    // stack buffer it filled with `n` values).
    unsafe { std::slice::from_raw_parts(params, n as usize) }
}

/// Runs one flat op the generator left to the flat engine.
///
/// # Safety
/// `env` is a live [`Env`]; `op` points into the flat program `env.fg` belongs to (or one
/// that outlives the pass); `p`/`n` as [`params`].
pub unsafe extern "C" fn shim_op<T: Tracer>(
    env: *mut Env<T>,
    op: *const Op,
    p: *const Value,
    n: u64,
) -> u32 {
    // SAFETY: see the function's contract.
    let (env, ctx) = unsafe { Env::sync_in(env) };
    // SAFETY: `fg` is the lowered gress of this pass; `op` lives in the same flat program.
    let (fg, op, params) = unsafe { (&*env.fg, &*op, params(p, n)) };
    let r = ctx.fexec(fg, op, params);
    env.sync_out(ctx);
    env.status(r)
}

/// Evaluates one flat expression into `env.ret`.
///
/// # Safety
/// As [`shim_op`], with `e` an expression of the flat program.
pub unsafe extern "C" fn shim_expr<T: Tracer>(
    env: *mut Env<T>,
    e: *const FExpr,
    p: *const Value,
    n: u64,
) -> u32 {
    // SAFETY: see the function's contract.
    let (env, ctx) = unsafe { Env::sync_in(env) };
    // SAFETY: `e` lives in the flat program; `p`/`n` by contract.
    let (e, params) = unsafe { (&*e, params(p, n)) };
    let r = ctx.feval(e, params);
    env.sync_out(ctx);
    match r {
        Ok(v) => {
            env.ret = v;
            NEXT
        }
        Err(f) => {
            env.fault = Some(f);
            FAULT
        }
    }
}

/// `hash.get` of the `n` input values at `vals` for the flat node `e` (an `FExpr::Hash`: its
/// hasher and input widths) into `env.ret`, unmasked.
///
/// # Safety
/// As [`shim_op`], with `e` an expression of the flat program and `vals` `n` values.
pub unsafe extern "C" fn shim_hash<T: Tracer>(
    env: *mut Env<T>,
    e: *const FExpr,
    vals: *const Value,
    n: u64,
) -> u32 {
    // SAFETY: see the function's contract (what `Env::sync_in` copies is not read here).
    let (env, ctx) = unsafe { Env::unsynced(env) };
    // SAFETY: `e` lives in the flat program; `vals`/`n` by contract.
    let (e, vals) = unsafe { (&*e, params(vals, n)) };
    let FExpr::Hash { hash, inputs, .. } = e else {
        env.fault = Some(Fault::program(ProgramError::BadReference("hash")));
        return FAULT;
    };
    let mut both: smallvec::SmallVec<[(Value, u16); 16]> = smallvec::SmallVec::new();
    both.extend(vals.iter().zip(inputs.iter()).map(|(v, (_, w))| (*v, *w)));
    match ctx.hash_values(*hash as usize, &both) {
        Ok(v) => {
            env.ret = v;
            NEXT
        }
        Err(f) => {
            env.fault = Some(f);
            FAULT
        }
    }
}

/// Looks table `table` up with the first `nkeys` of `env.key`, counts the hit or miss, makes
/// the entry the running one (the previous one saved in `env.saved_entry`) and puts the
/// action data in `env.args`. Answers the action id with the `APPLY_*` flags.
///
/// # Safety
/// As [`shim_op`]; `nkeys` ≤ [`MAX_KEYS`].
pub unsafe extern "C" fn shim_apply<T: Tracer>(env: *mut Env<T>, table: u32, nkeys: u32) -> u64 {
    // SAFETY: see the function's contract. A lookup reads none of what `Env::sync_in` copies
    // into the context (cursor, write bits, output length): only an action run here does,
    // which syncs first.
    let (env, ctx) = unsafe { Env::unsynced(env) };
    let tables = ctx.tables;
    let Some(ts) = tables.get(table as usize) else {
        env.fault = Some(Fault::program(ProgramError::BadReference("table")));
        return APPLY_FAULT;
    };
    let n = (nkeys as usize).min(MAX_KEYS);
    // SAFETY: generated code stored all `nkeys` key values before calling.
    let key: &[Value] = unsafe { std::slice::from_raw_parts(env.key.as_ptr().cast(), n) };
    match ts.table.lookup_inline(key) {
        Some(found) if found.is_some() || ts.default().args.len() <= MAX_ARGS => {
            return apply_inline(env, ctx, ts, table, key, found);
        }
        _ => {}
    }
    let mut data = [0; INLINE_ARGS];
    let (hit, action, args) = match ts.table.lookup_call(key, &mut data, &ctx.rt.registers) {
        Some((h, action, args)) => (Some(h), action, args),
        None => (None, ts.default().action, &ts.default().args[..]),
    };
    note_apply(ctx, ts, table, key, hit, action, args);
    let flags = if hit.is_some() { APPLY_HIT } else { 0 };
    if args.len() > MAX_ARGS {
        // Too much data for the buffer: run the action here, on the context as generated
        // code left it.
        Env::sync_ctx(env, ctx);
        let saved = ctx.entry;
        ctx.entry = RunningEntry::of(hit);
        // SAFETY: `fg` is the lowered gress of this pass.
        let fg = unsafe { &*env.fg };
        let r = ctx.frun_action(fg, action, args);
        ctx.entry = saved;
        env.sync_out(ctx);
        let code = u64::from(env.status(r));
        return u64::from(action.0) | flags | APPLY_RAN | (code << 40);
    }
    for (slot, v) in env.args.iter_mut().zip(args) {
        slot.write(*v);
    }
    hand_over(env, ctx, hit, action, args.len())
}

/// The rest of [`shim_apply`] for a lookup [`crate::table::MatchTable::lookup_inline`]
/// answered (`found`: the hit's handle, action and inline data, or a miss): the same
/// counting, trace, running entry and action data, with the hit's data widened straight into
/// `env.args` (at most `INLINE_ARGS` ≤ [`MAX_ARGS`] values; on a miss the caller checked
/// that the default's data fits: no action runs here). `ts` is table `table`'s state.
#[inline]
fn apply_inline<T: Tracer>(
    env: &mut Env<'_, '_, T>,
    ctx: &mut Ctx<'_, T>,
    ts: &crate::state::TableState,
    table: u32,
    key: &[Value],
    found: Option<(EntryHandle, ActionId, &[u64])>,
) -> u64 {
    const _: () = assert!(INLINE_ARGS <= MAX_ARGS);
    let (hit, action, n) = match found {
        Some((h, action, data)) => {
            for (slot, v) in env.args.iter_mut().zip(data) {
                slot.write(Value::from(*v));
            }
            (Some(h), action, data.len())
        }
        None => {
            let d = ts.default();
            for (slot, v) in env.args.iter_mut().zip(d.args.iter()) {
                slot.write(*v);
            }
            (None, d.action, d.args.len().min(MAX_ARGS))
        }
    };
    // SAFETY: the first `n` values of `env.args` were written just above.
    let args: &[Value] = unsafe { std::slice::from_raw_parts(env.args.as_ptr().cast(), n) };
    note_apply(ctx, ts, table, key, hit, action, args);
    hand_over(env, ctx, hit, action, n)
}

/// What both ways of [`shim_apply`] do with a lookup's answer first: count the hit or miss
/// and trace it (`args`: the action's data).
#[inline]
fn note_apply<T: Tracer>(
    ctx: &mut Ctx<'_, T>,
    ts: &crate::state::TableState,
    table: u32,
    key: &[Value],
    hit: Option<EntryHandle>,
    action: ActionId,
    args: &[Value],
) {
    ts.record(hit, ctx.now);
    ctx.trace_table(TableId(table), key, hit.is_some(), action, args);
}

/// Hands `action` to the generated code, its `n` values of data already in `env.args`: the
/// entry becomes the running one (the previous one saved). Answers the action id and flags.
#[inline]
fn hand_over<T: Tracer>(
    env: &mut Env<'_, '_, T>,
    ctx: &mut Ctx<'_, T>,
    hit: Option<EntryHandle>,
    action: ActionId,
    n: usize,
) -> u64 {
    env.nargs = n as u64;
    env.saved_entry = ctx.entry;
    ctx.entry = RunningEntry::of(hit);
    u64::from(action.0) | if hit.is_some() { APPLY_HIT } else { 0 }
}

/// [`shim_tcam`]'s answer when the table's index cannot search a packed key (the apply shim
/// must answer); otherwise it answers the hit's handle + 1, or 0 for a miss.
pub const TCAM_SHIM: u64 = u64::MAX;

/// The TCAM search of the table whose state is at `ts` for the key generated code packed
/// (`lo`, `hi`: the low and high words of the `u128` `table::tcam_packing` describes), as
/// `MatchTable::lookup_tcam_packed` answers it: the hit's handle + 1, 0 for a miss, or
/// [`TCAM_SHIM`]. Counts nothing and reads no context: generated code takes the hit or
/// the miss as it takes those of the lookups it does itself (`super::lookup`).
///
/// # Safety
/// `ts` points to a live table state that nothing writes during the call (the pass's own
/// `Ctx::tables`, generated code bounds-checks the index first).
pub unsafe extern "C" fn shim_tcam(ts: *const crate::state::TableState, lo: u64, hi: u64) -> u64 {
    // SAFETY: see the function's contract.
    let ts = unsafe { &*ts };
    let packed = Value::from(lo) | (Value::from(hi) << 64);
    match ts.table.lookup_tcam_packed(packed) {
        Some(Some(h)) => u64::from(h.0) + 1,
        Some(None) => 0,
        None => TCAM_SHIM,
    }
}

/// Whether the first `nkeys` of `env.key` match an entry of parser value set `set` (1) or
/// not (0).
///
/// # Safety
/// As [`shim_op`]; `nkeys` ≤ [`MAX_KEYS`].
pub unsafe extern "C" fn shim_value_set<T: Tracer>(env: *mut Env<T>, set: u32, nkeys: u32) -> u64 {
    // SAFETY: see the function's contract (what `Env::sync_in` copies is not read here).
    let (env, ctx) = unsafe { Env::unsynced(env) };
    let n = (nkeys as usize).min(MAX_KEYS);
    // SAFETY: generated code stored all `nkeys` key values before calling.
    let key: &[Value] = unsafe { std::slice::from_raw_parts(env.key.as_ptr().cast(), n) };
    let hit = ctx
        .rt
        .value_sets
        .get(set as usize)
        .is_some_and(|s| s.matches(key));
    u64::from(hit)
}

/// Ends a table apply: the running entry is the one before it again.
///
/// # Safety
/// As [`shim_op`].
pub unsafe extern "C" fn shim_apply_end<T: Tracer>(env: *mut Env<T>) {
    // SAFETY: see the function's contract.
    let (env, ctx) = unsafe { Env::sync_in(env) };
    ctx.entry = env.saved_entry;
}

/// Runs action `action` through the flat engine (an action the generator did not compile).
///
/// # Safety
/// As [`shim_op`].
pub unsafe extern "C" fn shim_action<T: Tracer>(
    env: *mut Env<T>,
    action: u32,
    p: *const Value,
    n: u64,
) -> u32 {
    // SAFETY: see the function's contract.
    let (env, ctx) = unsafe { Env::sync_in(env) };
    // SAFETY: `fg` is the lowered gress of this pass; `p`/`n` by contract.
    let (fg, params) = unsafe { (&*env.fg, params(p, n)) };
    let r = ctx.frun_action(fg, ActionId(action), params);
    env.sync_out(ctx);
    env.status(r)
}

/// `count(index)` on counter `counter` (`has_index` 0: a direct counter, `count()`), the
/// index's value in `lo`/`hi`.
///
/// # Safety
/// As [`shim_op`].
pub unsafe extern "C" fn shim_count<T: Tracer>(
    env: *mut Env<T>,
    counter: u32,
    has_index: u32,
    lo: u64,
    hi: u64,
) -> u32 {
    // SAFETY: see the function's contract. Counting reads none of what `Env::sync_in`
    // copies into the context.
    let (env, ctx) = unsafe { Env::unsynced(env) };
    let index = (has_index != 0).then_some(Value::from(lo) | (Value::from(hi) << 64));
    let r = ctx.count(counter as usize, index).map(|()| Flow::Next);
    env.status(r)
}

/// The cell of a register access generated code runs (a scalar RegisterAction on register
/// `register`): for a direct register (`direct` 1) the matched entry's, else the index
/// `lo`/`hi` wrapped (and counted) as the tree interpreter wraps it; then the register is
/// claimed for this pass (a second access faults, as in `Ctx::register_run`). Points
/// `env.reg_cell` at the cell's words and answers [`NEXT`], or [`SALU_MISS`] (a direct
/// register on a miss), or [`FAULT`].
///
/// # Safety
/// As [`shim_op`].
pub unsafe extern "C" fn shim_salu_claim<T: Tracer>(
    env: *mut Env<T>,
    register: u32,
    direct: u32,
    lo: u64,
    hi: u64,
) -> u32 {
    // SAFETY: see the function's contract (what `Env::sync_in` copies is not read here).
    let (env, ctx) = unsafe { Env::unsynced(env) };
    let r = register as usize;
    let Some(size) = ctx.pl.registers.get(r).map(|g| g.size) else {
        env.fault = Some(Fault::program(ProgramError::BadReference("register")));
        return FAULT;
    };
    let idx = if direct != 0 {
        match ctx.direct_cell() {
            Some(i) => i,
            None => return SALU_MISS,
        }
    } else {
        ctx.wrap_cell(Value::from(lo) | (Value::from(hi) << 64), size)
    };
    if let Err(f) = ctx.claim_register(RegisterId(register)) {
        env.fault = Some(f);
        return FAULT;
    }
    let Some(st) = ctx.rt.registers.get_mut(r) else {
        env.fault = Some(Fault::program(ProgramError::BadReference("register state")));
        return FAULT;
    };
    env.reg_spare = [0; 2];
    let i = idx as usize;
    let spare = std::ptr::addr_of_mut!(env.reg_spare).cast::<u64>();
    let lo_cell = st.lo.get_mut(i).map_or(spare, |c| c as *mut u64);
    // SAFETY: `spare` points to a two-word array: its second word is in bounds.
    let hi_spare = unsafe { spare.add(1) };
    let hi_cell = st.hi.get_mut(i).map_or(hi_spare, |c| c as *mut u64);
    env.reg_cell = [lo_cell, hi_cell];
    env.reg_idx = u64::from(idx);
    if T::ENABLED {
        // SAFETY: both pointers were just made from live cells or the environment's spare
        // words, which nothing has touched since.
        env.reg_before = unsafe { [*lo_cell, *hi_cell] };
    }
    NEXT
}

/// `extract` of a header whose bytes start in the input's head and end in its tail (the packet
/// parsed in place): `len` bytes from the byte-aligned cursor (in bounds, checked by the
/// caller) into PHV bytes `[offset, offset + len)`.
///
/// # Safety
/// As [`shim_op`].
pub unsafe extern "C" fn shim_extract_split<T: Tracer>(
    env: *mut Env<T>,
    header: u32,
    offset: u32,
    len: u32,
) {
    // SAFETY: see the function's contract.
    let (env, ctx) = unsafe { Env::sync_in(env) };
    let (head, tail) = (ctx.input, ctx.input_tail);
    let start = (env.cursor / 8) as usize;
    let dst = ctx.phv.slice_mut(offset as usize, len as usize);
    for (i, b) in dst.iter_mut().enumerate() {
        let at = start + i;
        *b = match head.get(at) {
            Some(x) => *x,
            None => tail.get(at - head.len()).copied().unwrap_or(0),
        };
    }
    ctx.phv.set_valid(header as usize, true);
    env.cursor += u64::from(len) * 8;
    ctx.trace_extract(header as usize);
}

/// Appends PHV bytes `[offset, offset + len)` to the deparser's output (generated code calls
/// it when they do not fit the output's capacity).
///
/// # Safety
/// As [`shim_op`].
pub unsafe extern "C" fn shim_emit<T: Tracer>(env: *mut Env<T>, offset: u32, len: u32) {
    // SAFETY: see the function's contract.
    let (env, ctx) = unsafe { Env::sync_in(env) };
    let bytes = ctx.phv.slice(offset as usize, len as usize);
    ctx.emit_out.extend_from_slice(bytes);
    env.sync_out(ctx);
}

/// `ParserState`: the parser entered state `state` (traced code only).
///
/// # Safety
/// As [`shim_op`].
pub unsafe extern "C" fn hook_state<T: Tracer>(env: *mut Env<T>, state: u32, _: u32) {
    // SAFETY: see the function's contract.
    let (_, ctx) = unsafe { Env::sync_in(env) };
    ctx.trace_state(state as usize);
}

/// `Extract` of header `header`, which generated code just extracted (traced code only).
///
/// # Safety
/// As [`shim_op`].
pub unsafe extern "C" fn hook_extract<T: Tracer>(env: *mut Env<T>, header: u32, _: u32) {
    // SAFETY: see the function's contract.
    let (_, ctx) = unsafe { Env::sync_in(env) };
    ctx.trace_extract(header as usize);
}

/// `Gateway`: the `if` with gate `gate` (an index of `FlatGress::gates`) went `result`
/// (traced code only).
///
/// # Safety
/// As [`shim_op`].
pub unsafe extern "C" fn hook_gate<T: Tracer>(env: *mut Env<T>, gate: u32, result: u32) {
    // SAFETY: see the function's contract.
    let (env, ctx) = unsafe { Env::sync_in(env) };
    // SAFETY: `fg` is the lowered gress of this pass.
    let fg = unsafe { &*env.fg };
    if let Some(g) = fg.gates.get(gate as usize) {
        ctx.trace_gate(g.stage, &g.cond, result != 0);
    }
}

/// `Gateway` of an `if` of RegisterAction `action`'s body: bits 1.. of `at` its place among
/// the body's `if`s (source order), bit 0 its result (traced code only).
///
/// # Safety
/// As [`shim_op`].
pub unsafe extern "C" fn hook_salu_gate<T: Tracer>(env: *mut Env<T>, action: u32, at: u32) {
    // SAFETY: see the function's contract.
    let (_, ctx) = unsafe { Env::sync_in(env) };
    let Some(ra) = ctx.pl.register_actions.get(action as usize) else {
        return;
    };
    let mut n = at >> 1;
    if let Some((stage, cond)) = nth_if(&ra.body, &mut n) {
        ctx.trace_gate(stage, cond, at & 1 != 0);
    }
}

/// The `n`-th `if` of a block (source order, nested ones counted where they begin).
fn nth_if<'b>(b: &'b [Stmt], n: &mut u32) -> Option<(u8, &'b Expr)> {
    for s in b {
        if let Stmt::If {
            cond,
            then,
            els,
            stage,
        } = s
        {
            if *n == 0 {
                return Some((*stage, cond));
            }
            *n -= 1;
            if let Some(x) = nth_if(then, n).or_else(|| nth_if(els, n)) {
                return Some(x);
            }
        }
    }
    None
}

/// `Register`: RegisterAction `action` ran on the cell [`shim_salu_claim`] chose, whose words
/// generated code just wrote back; `env.ret` holds its output (traced code only).
///
/// # Safety
/// As [`shim_op`], right after the write-back of an access whose claim answered [`NEXT`].
pub unsafe extern "C" fn hook_register<T: Tracer>(env: *mut Env<T>, action: u32, _: u32) {
    // SAFETY: see the function's contract.
    let (env, ctx) = unsafe { Env::sync_in(env) };
    let pl = ctx.pl;
    let Some(ra) = pl.register_actions.get(action as usize) else {
        return;
    };
    let Some(reg) = pl.registers.get(ra.register.index()) else {
        return;
    };
    // SAFETY: the claim of this access pointed `reg_cell` at the cell's words (or the
    // environment's spare words); between it and this hook only generated code and trace
    // hooks ran, which neither resize a register nor move the environment.
    let (lo, hi) = unsafe { (*env.reg_cell[0], *env.reg_cell[1]) };
    let before = (
        Value::from(env.reg_before[0]),
        Value::from(env.reg_before[1]),
    );
    let after = (
        Value::from(lo),
        if reg.paired { Value::from(hi) } else { 0 },
    );
    ctx.trace_register(ra, reg, env.reg_idx as u32, before, after, env.ret);
}

/// `Exit` (traced code only).
///
/// # Safety
/// As [`shim_op`].
pub unsafe extern "C" fn hook_exit<T: Tracer>(env: *mut Env<T>, _: u32, _: u32) {
    // SAFETY: see the function's contract.
    let (_, ctx) = unsafe { Env::sync_in(env) };
    ctx.trace_exit();
}

/// `Action`: a direct call of `action` with the `n` values at `p` (traced code only).
/// Answers [`NEXT`].
///
/// # Safety
/// As [`shim_op`].
pub unsafe extern "C" fn hook_action<T: Tracer>(
    env: *mut Env<T>,
    action: u32,
    p: *const Value,
    n: u64,
) -> u32 {
    // SAFETY: see the function's contract.
    let (_, ctx) = unsafe { Env::sync_in(env) };
    // SAFETY: `p`/`n` by contract.
    let args = unsafe { params(p, n) };
    ctx.trace_action(ActionId(action), args);
    NEXT
}

/// `DropMarked`: the value `lo`/`hi` was assigned to the gress's `drop_ctl` (traced code
/// only; recorded when not zero). Answers [`NEXT`].
///
/// # Safety
/// As [`shim_op`].
pub unsafe extern "C" fn hook_drop<T: Tracer>(
    env: *mut Env<T>,
    _: u32,
    _: u32,
    lo: u64,
    hi: u64,
) -> u32 {
    // SAFETY: see the function's contract.
    let (_, ctx) = unsafe { Env::sync_in(env) };
    if let Some(f) = ctx.drop_ctl() {
        ctx.trace_drop_mark(f, Value::from(lo) | (Value::from(hi) << 64));
    }
    NEXT
}

/// The addresses of the shims generated code calls, instantiated for contexts of one tracer
/// type, and where `Ctx::entry` lies in such a context.
#[derive(Debug, Clone, Copy)]
pub struct Shims {
    pub op: usize,
    pub expr: usize,
    pub hash: usize,
    pub apply: usize,
    /// [`shim_tcam`] (the same for every tracer: it reads no context).
    pub tcam: usize,
    pub value_set: usize,
    pub action: usize,
    pub count: usize,
    pub salu_claim: usize,
    pub extract_split: usize,
    pub emit: usize,
    /// Digests, mirror requests, meters (`super::externs`).
    pub digest: usize,
    pub mirror: usize,
    pub meter: usize,
    pub entry_off: i32,
    /// Where `Ctx::pkt_len` (a `u32`) lies in such a context.
    pub pkt_len_off: i32,
    /// The trace hooks (`None`: untraced code, which calls none).
    pub trace: Option<TraceHooks>,
}

/// The trace hooks of traced code (see `hook_*`).
#[derive(Debug, Clone, Copy)]
pub struct TraceHooks {
    pub state: usize,
    pub extract: usize,
    pub gate: usize,
    pub exit: usize,
    pub action: usize,
    pub drop: usize,
    pub salu_gate: usize,
    pub register: usize,
}

impl Shims {
    /// The shims for contexts of tracer `T`; with trace hooks when `T` records.
    pub fn of<T: Tracer>() -> Shims {
        Shims {
            op: shim_op::<T> as *const () as usize,
            expr: shim_expr::<T> as *const () as usize,
            hash: shim_hash::<T> as *const () as usize,
            apply: shim_apply::<T> as *const () as usize,
            tcam: shim_tcam as *const () as usize,
            value_set: shim_value_set::<T> as *const () as usize,
            action: shim_action::<T> as *const () as usize,
            count: shim_count::<T> as *const () as usize,
            salu_claim: shim_salu_claim::<T> as *const () as usize,
            extract_split: shim_extract_split::<T> as *const () as usize,
            emit: shim_emit::<T> as *const () as usize,
            digest: super::externs::shim_digest::<T> as *const () as usize,
            mirror: super::externs::shim_mirror::<T> as *const () as usize,
            meter: super::externs::shim_meter::<T> as *const () as usize,
            entry_off: std::mem::offset_of!(Ctx<'static, T>, entry) as i32,
            pkt_len_off: std::mem::offset_of!(Ctx<'static, T>, pkt_len) as i32,
            trace: T::ENABLED.then_some(TraceHooks {
                state: hook_state::<T> as *const () as usize,
                extract: hook_extract::<T> as *const () as usize,
                gate: hook_gate::<T> as *const () as usize,
                exit: hook_exit::<T> as *const () as usize,
                action: hook_action::<T> as *const () as usize,
                drop: hook_drop::<T> as *const () as usize,
                salu_gate: hook_salu_gate::<T> as *const () as usize,
                register: hook_register::<T> as *const () as usize,
            }),
        }
    }
}
