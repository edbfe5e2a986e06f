//! The interpreter that runs a lowered program ([`crate::ir`]) on one packet pass through one
//! gress of one pipe: parser engine ([`parser`]), MAU control (statements in [`stmt`],
//! expressions in [`eval`], stateful ALUs in [`salu`]), deparser ([`deparser`]), glued together
//! by the gress runner ([`gress`]).
//!
//! [`Engines::new`] lowers the IR once into flat, pre-resolved operations ([`flat`]) and, with
//! the `native` feature, compiles those to machine code ([`native`]); passes run the native
//! code, else the flat program, traced or not (traced native code is a variant generated with
//! trace hooks; the events are built in `trace_points`, one definition for every engine). The
//! tree interpreter (`stmt`, `eval`, `parser`, `deparser`) walks the IR directly: it is the
//! reference the other engines are tested against ([`EngineKind::Tree`], [`run_gress_tree`]),
//! and the flat form falls back to it for the rare heavy statements. None needs string
//! lookups and, in steady state, none allocates untraced — every buffer lives in a reusable
//! [`GressWork`].

pub mod deparser;
pub mod eval;
pub mod flat;
pub mod ghost;
pub mod gress;
#[cfg(feature = "native")]
pub mod native;
pub mod parser;
pub mod prefix;
pub mod salu;
pub mod stmt;
pub mod tm_reads;
mod trace_points;

use thiserror::Error;

use crate::externs::hash::{BitWriter, Hasher};
use crate::ir::{FieldRef, Gress, GressProgram, Intrinsic, Pipeline, RegisterId, Value};
use crate::phv::Phv;
use crate::state::{PipeRuntime, TableState};
use crate::table::EntryHandle;
use crate::trace::Tracer;

pub use gress::{
    run_gress, run_gress_flat, run_gress_tree, GressResult, GressWork, PassDrop, PassInput,
    PassIntrinsics,
};
pub use prefix::pass_intrinsics;

/// Tofino `PARSER_ERROR_*` bits (tofino1_base.p4) the parser engine writes into `parser_err`.
pub mod parser_error_bits {
    pub const NO_MATCH: u16 = 0x0001;
    pub const PARTIAL_HDR: u16 = 0x0002;
    pub const CTR_RANGE: u16 = 0x0004;
    pub const TIMEOUT_USER: u16 = 0x0008;
    pub const TIMEOUT_HW: u16 = 0x0010;
}

/// Why the parser stopped early.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Error)]
pub enum ParserFault {
    #[error("PacketTooShort")]
    PacketTooShort,
    #[error("NoMatch")]
    NoMatch,
    /// More states than the hardware's parser runs for one packet (a loop): its iteration
    /// timeout, `PARSER_ERROR_TIMEOUT_USER` (tofino-model's `kErrTimeoutIter` is 0x0008 and
    /// maps to the same `parser_err` bit; 0x0010 is the cycle timeout, which pisa has no clock
    /// for).
    #[error("ParserTimeout")]
    Timeout,
    /// A varbit extract of a length that is not whole bytes (`error.ParserInvalidArgument`),
    /// from a length pisa evaluates as written (one bf-p4c cannot enumerate; an enumerable one
    /// is refused at compile time).
    #[error("ParserInvalidArgument")]
    InvalidArgument,
    /// A `ParserCounter` loaded with a value above its `max`.
    #[error("CounterRange")]
    CounterRange,
}

impl ParserFault {
    /// The `PARSER_ERROR_*` bit. Errors the hardware has no bit for (an unaligned varbit
    /// length) use `PARSER_ERROR_TIMEOUT_USER`, the bit Tofino reserves for user-visible parser
    /// errors.
    pub fn bits(self) -> u16 {
        use parser_error_bits::*;
        match self {
            ParserFault::PacketTooShort => PARTIAL_HDR,
            ParserFault::NoMatch => NO_MATCH,
            ParserFault::CounterRange => CTR_RANGE,
            ParserFault::Timeout => TIMEOUT_USER,
            ParserFault::InvalidArgument => TIMEOUT_USER,
        }
    }
}

/// A program doing something the hardware cannot do (the packet is dropped and the error counted).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Error)]
pub enum ProgramError {
    #[error("register {register} accessed twice in one pass (one stateful-ALU access per register per packet)")]
    DoubleRegisterAccess { register: String },
    #[error("register value used outside a RegisterAction")]
    RegValueOutsideSalu,
    #[error("stateful-ALU counter used other than as the index of a RegisterAction")]
    SaluCounterOutsideExecute,
    #[error("parser statement used outside the parser")]
    ParserOnly,
    #[error("reference to a missing IR object ({0})")]
    BadReference(&'static str),
}

/// A pass stopped abnormally.
///
/// The program error is boxed so that a `Result<Flow, Fault>` fits in two registers on the
/// statement hot path; the box is only made on the (rare, counted-drop) error path.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Fault {
    Parser(ParserFault),
    /// A parser statement ended the parse as `transition reject` does (no parser error, no
    /// drop): a varbit length past the field, or a false `verify` on that length, which bf-p4c
    /// turns into `reject` branches of the extract's state.
    Reject,
    Program(Box<ProgramError>),
}

impl Fault {
    /// A program fault (boxed, off the hot path).
    #[cold]
    #[inline(never)]
    pub fn program(e: ProgramError) -> Fault {
        Fault::Program(Box::new(e))
    }
}

/// How a block finished.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    Next,
    Return,
    Exit,
}

pub type ExecResult<T = Flow> = Result<T, Fault>;

/// Program-wide precomputed helpers for one pipeline (built once at switch assembly).
#[derive(Debug)]
pub struct Engines {
    /// One hash unit per `Pipeline::hashes` entry (`None` when its CRC spec is invalid).
    pub hashers: Vec<Option<Hasher>>,
    pub ingress: GressEngines,
    pub egress: GressEngines,
    /// The program lowered into flat operations (what untraced passes run without native
    /// code).
    pub flat: flat::FlatPipeline,
    /// The program compiled to machine code (what passes run when present).
    #[cfg(feature = "native")]
    pub native: Option<native::NativePipeline>,
    /// The same code generated with trace hooks (what traced passes run when `native` is
    /// there), generated at the first traced pass: most switches are never traced, and
    /// generating it at load would double every switch's load time and code memory.
    #[cfg(feature = "native")]
    native_traced:
        std::sync::OnceLock<Result<native::NativePipeline<crate::trace::Recorder>, String>>,
    /// Why the native engine was asked for and is not there.
    pub native_error: Option<String>,
    /// Every pass runs the tree interpreter ([`EngineKind::Tree`]).
    tree: bool,
    /// Tofino 2's ghost thread, when the pipeline has a ghost control ([`ghost`]).
    pub ghost: Option<Box<ghost::GhostEngines>>,
}

/// Which engine runs the passes, traced (`pisa trace`) or not: what is traced is what
/// forwards.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EngineKind {
    /// Generated machine code ([`native`]), falling back to the flat engine where the
    /// pipeline cannot be compiled.
    Native,
    /// The flat interpreter ([`flat`]).
    Flat,
    /// The tree interpreter, walking the IR: the reference the others are tested against.
    Tree,
}

impl Default for EngineKind {
    /// Native where this build has the code generator.
    fn default() -> EngineKind {
        if cfg!(feature = "native") {
            EngineKind::Native
        } else {
            EngineKind::Flat
        }
    }
}

impl std::str::FromStr for EngineKind {
    type Err = String;
    fn from_str(s: &str) -> Result<EngineKind, String> {
        match s {
            "native" => Ok(EngineKind::Native),
            "flat" => Ok(EngineKind::Flat),
            "tree" => Ok(EngineKind::Tree),
            other => Err(format!("unknown engine `{other}` (native, flat or tree)")),
        }
    }
}

impl std::fmt::Display for EngineKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            EngineKind::Native => "native",
            EngineKind::Flat => "flat",
            EngineKind::Tree => "tree",
        })
    }
}

/// Slots in the per-intrinsic lookup arrays (more than `Intrinsic` has variants).
pub const INTRINSIC_SLOTS: usize = 64;

/// The entry whose action is running ([`Ctx::entry`]): its handle, or none. A plain `u64`
/// (the handle, or `u64::MAX` for none) rather than an `Option<EntryHandle>`, whose layout
/// Rust leaves open, so that native code reads and writes it.
#[repr(transparent)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunningEntry(u64);

impl RunningEntry {
    /// No entry (a miss, or no table action running).
    pub const NONE: RunningEntry = RunningEntry(u64::MAX);

    pub fn of(h: Option<EntryHandle>) -> RunningEntry {
        h.map_or(RunningEntry::NONE, |h| RunningEntry(u64::from(h.0)))
    }

    pub fn get(self) -> Option<EntryHandle> {
        u32::try_from(self.0).ok().map(EntryHandle)
    }

    /// The 8 bytes native code stores (`exec::native`).
    pub(crate) const fn raw(self) -> u64 {
        self.0
    }
}

/// Per-gress precomputed facts.
#[derive(Debug, Clone)]
pub struct GressEngines {
    /// PHV location of each intrinsic (`Intrinsic as usize`), from the bindings.
    pub bind: [Option<FieldRef>; INTRINSIC_SLOTS],
    /// Prefix location of each intrinsic, from the prefix layout.
    pub prefix: [Option<FieldRef>; INTRINSIC_SLOTS],
    /// The same locations as prefix-word slots (what building a prefix from a list runs on).
    pub prefix_slots: [prefix::PrefixSlot; INTRINSIC_SLOTS],
    /// The prefix of the switch's intrinsics ([`pass_intrinsics`]), placed once.
    pub plan: prefix::PrefixPlan,
    /// Bound intrinsics the prefix does not carry, one bit per `Intrinsic as usize`: given to
    /// a pass, they are written into the PHV directly (output metadata such as `drop_ctl` is
    /// bound and never in the prefix, but never given either, so a pass checks what it is
    /// given against these bits instead of walking its intrinsics for every packet).
    pub direct: u64,
    /// The control reads `parser_err`: a parser error does not drop the packet (ingress).
    pub parser_err_used: bool,
    /// Intrinsic fields whose writes are tracked (destination validity): ucast, mcast a, mcast b.
    pub watch: [Option<FieldRef>; 3],
    /// The output metadata the traffic manager reads after each pass.
    pub tm: tm_reads::TmReads,
}

impl Engines {
    /// The engines of `pl` with the default engine ([`EngineKind::default`]).
    pub fn new(pl: &Pipeline) -> Engines {
        Engines::with_engine(pl, EngineKind::default())
    }

    /// The engines of `pl`, untraced passes running on `kind`.
    pub fn with_engine(pl: &Pipeline, kind: EngineKind) -> Engines {
        let hashers = pl
            .hashes
            .iter()
            .map(|h| Hasher::new(h.algorithm, h.width).ok())
            .collect();
        let ingress = GressEngines::new(&pl.ingress, Gress::Ingress, pl);
        let egress = GressEngines::new(&pl.egress, Gress::Egress, pl);
        let flat = flat::FlatPipeline {
            ingress: flat::lower::Lowerer::new(pl, Gress::Ingress, ingress.watch).gress(),
            egress: flat::lower::Lowerer::new(pl, Gress::Egress, egress.watch).gress(),
        };
        #[cfg(feature = "native")]
        let (native, native_error) = match kind {
            EngineKind::Native => {
                let drop = [
                    ingress.drop_ctl(Gress::Ingress),
                    egress.drop_ctl(Gress::Egress),
                ];
                match native::NativePipeline::compile(
                    pl,
                    &flat,
                    drop,
                    [&ingress.plan, &egress.plan],
                ) {
                    Ok(n) => (Some(n), None),
                    Err(e) => (None, Some(e.to_string())),
                }
            }
            EngineKind::Flat | EngineKind::Tree => (None, None),
        };
        #[cfg(not(feature = "native"))]
        let native_error =
            (kind == EngineKind::Native).then(|| "built without the `native` feature".to_string());
        Engines {
            hashers,
            ingress,
            egress,
            flat,
            #[cfg(feature = "native")]
            native,
            #[cfg(feature = "native")]
            native_traced: std::sync::OnceLock::new(),
            native_error,
            tree: kind == EngineKind::Tree,
            ghost: ghost::GhostEngines::new(pl, kind),
        }
    }

    /// The engine passes run on.
    pub fn engine(&self) -> EngineKind {
        #[cfg(feature = "native")]
        if self.native.is_some() {
            return EngineKind::Native;
        }
        if self.tree {
            return EngineKind::Tree;
        }
        EngineKind::Flat
    }

    /// The traced variant of the native code, generated now if this is its first use (`pl`
    /// is the pipeline these engines were built from); `None` without native code. An error
    /// (never seen: the untraced code of the same program was generated) leaves traced
    /// passes on the flat program, which records the same events.
    #[cfg(feature = "native")]
    pub fn native_traced(
        &self,
        pl: &Pipeline,
    ) -> Option<&Result<native::NativePipeline<crate::trace::Recorder>, String>> {
        self.native.as_ref()?;
        Some(self.native_traced.get_or_init(|| {
            let drop = [
                self.ingress.drop_ctl(Gress::Ingress),
                self.egress.drop_ctl(Gress::Egress),
            ];
            let plans = [&self.ingress.plan, &self.egress.plan];
            native::NativePipeline::compile(pl, &self.flat, drop, plans).map_err(|e| e.to_string())
        }))
    }

    /// The engine traced passes run on (generating the native traced code if needed): the
    /// engine of untraced passes, except the flat one where traced native code could not be
    /// generated.
    pub fn traced_engine(&self, pl: &Pipeline) -> EngineKind {
        #[cfg(feature = "native")]
        if let Some(r) = self.native_traced(pl) {
            return if r.is_ok() {
                EngineKind::Native
            } else {
                EngineKind::Flat
            };
        }
        let _ = pl;
        self.engine()
    }

    pub fn gress(&self, g: Gress) -> &GressEngines {
        match g {
            Gress::Ingress => &self.ingress,
            Gress::Egress => &self.egress,
        }
    }
}

impl GressEngines {
    /// The PHV field of `gress`'s `drop_ctl` intrinsic (these engines' gress), if bound.
    pub fn drop_ctl(&self, gress: Gress) -> Option<FieldRef> {
        trace_points::drop_ctl_field(self, gress)
    }

    fn new(gp: &GressProgram, gress: Gress, pl: &Pipeline) -> GressEngines {
        let err = match gress {
            Gress::Ingress => gp.intrinsics.get(Intrinsic::IgPrsrParserErr),
            Gress::Egress => gp.intrinsics.get(Intrinsic::EgPrsrParserErr),
        };
        let parser_err_used = err.is_some_and(|f| eval::reads_field(pl, &gp.control.body, f));
        let watch = match gress {
            Gress::Ingress => [
                gp.intrinsics.get(Intrinsic::TmUcastEgressPort),
                gp.intrinsics.get(Intrinsic::TmMcastGrpA),
                gp.intrinsics.get(Intrinsic::TmMcastGrpB),
            ],
            Gress::Egress => [None; 3],
        };
        let mut bind = [None; INTRINSIC_SLOTS];
        for (w, f) in &gp.intrinsics.fields {
            if let Some(slot) = bind.get_mut(*w as usize) {
                slot.get_or_insert(*f);
            }
        }
        let mut prefix = [None; INTRINSIC_SLOTS];
        for (w, f) in &gp.prefix.fields {
            if let Some(slot) = prefix.get_mut(*w as usize) {
                slot.get_or_insert(*f);
            }
        }
        let direct = bind
            .iter()
            .zip(prefix.iter())
            .enumerate()
            .filter(|(_, (b, p))| b.is_some() && p.is_none())
            .fold(0u64, |m, (i, _)| {
                m | 1u64.checked_shl(i as u32).unwrap_or(0)
            });
        let prefix_slots = prefix.map(prefix::PrefixSlot::new);
        let tstamp = bind
            .get(match gress {
                Gress::Ingress => Intrinsic::IgPrsrGlobalTstamp,
                Gress::Egress => Intrinsic::EgPrsrGlobalTstamp,
            } as usize)
            .copied()
            .flatten();
        GressEngines {
            plan: prefix::PrefixPlan::new(gress, &prefix, direct, tstamp),
            tm: tm_reads::TmReads::new(gress, &bind),
            prefix_slots,
            direct,
            bind,
            prefix,
            parser_err_used,
            watch,
        }
    }
}

/// What a deparser asked the traffic manager for, besides the packet itself.
#[derive(Debug, Default, Clone)]
pub struct Effects {
    /// `mirror.emit(session, hdr)`: session id and the mirror header bytes.
    pub mirror: Option<u16>,
    pub mirror_header: Vec<u8>,
    /// `resubmit.emit(hdr)`: the resubmit data (≤ 8 bytes on Tofino 1).
    pub resubmit: bool,
    pub resubmit_data: Vec<u8>,
    /// `digest.pack(..)` calls: (digest, values).
    pub digests: Vec<(u32, Vec<Value>)>,
    /// Counts and meter charges of true-egress-accounting externs, waiting for the length of
    /// the packet the egress deparser sends.
    pub true_egress: Vec<TrueEgress>,
    /// Tofino 2 `pktgen.emit(hdr)`: the header's first 16 bytes (empty when not called).
    pub pktgen_data: Vec<u8>,
}

/// A true-egress-accounting update the egress pipeline made, applied with the packet's final
/// length when the deparser has built it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrueEgress {
    /// Counter `counter`, cell `index`.
    Count { counter: u32, index: u32 },
    /// Meter `meter`, cell `index`, which coloured the packet `color`.
    Meter {
        meter: u32,
        index: u32,
        color: crate::externs::meter::MeterColor,
    },
}

impl Effects {
    fn clear(&mut self) {
        self.mirror = None;
        self.mirror_header.clear();
        self.resubmit = false;
        self.resubmit_data.clear();
        self.digests.clear();
        self.true_egress.clear();
        self.pktgen_data.clear();
    }
}

/// Counts of non-fatal anomalies seen while executing (per pipe).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ExecStats {
    /// Register/counter/meter indices that were out of range and wrapped.
    pub index_wraps: u64,
    /// Digests dropped because the digest queue was full.
    pub digest_overflow: u64,
}

/// The running RegisterAction's words and output.
#[derive(Debug, Clone, Copy)]
pub struct RegCtx {
    /// The words as the body has left them so far (written back at the end).
    pub lo: Value,
    pub hi: Value,
    /// The words as read from memory (`Expr::RegInput`).
    pub mem_lo: Value,
    pub mem_hi: Value,
    /// `rv1..rv4` (Tofino 1 has `rv1` only).
    pub out: [Value; 4],
    pub width: u16,
    /// The cell's bit address (`Expr::SaluAddress`).
    pub addr: Value,
}

/// Reusable buffers for expression and table evaluation.
#[derive(Debug, Default)]
pub struct Scratch {
    pub key: Vec<Value>,
    pub bytes: Vec<u8>,
    /// Hash input bit string.
    pub bits: BitWriter,
    /// Parser checksum accumulators (ones'-complement 16-bit sums), per `ChecksumId`.
    pub csum: Vec<u32>,
    /// Residual deposits waiting for the end of the parse (`Stmt::ChecksumDeposit`).
    pub residuals: Vec<Residual>,
}

/// A parser residual checksum marked by `subtract_all_and_deposit` (or `get()` assigned to a
/// field): the hardware's checksum unit keeps summing the header bytes the parser goes past
/// after the mark and writes the residual when parsing ends (tofino-model
/// `ChecksumEngineShared::checksum_residual` / `stop_checksum`, bytes up to the parsed header
/// length; the payload is never summed).
#[derive(Debug, Clone, Copy)]
pub struct Residual {
    /// The accumulator at the mark (ones'-complement sum of what was added and subtracted).
    pub acc: u32,
    /// Parser input bit where the automatic subtraction starts.
    pub mark: u64,
    pub dst: crate::ir::FieldRef,
}

impl Scratch {
    /// `n` parser checksum accumulators, all zero, and no residual pending. The vector's length is stored only when it
    /// changes: the native engine reads its pointer and length together (one 16-byte load)
    /// right after, which an 8-byte store of the length just before cannot forward to (the
    /// load waited for the store to leave the store buffer, on every pass).
    ///
    /// No `fill` of an empty vector: it is a `memset` call of 0 bytes at the vector's dangling
    /// pointer, which glibc's AVX-512 `memset` does as a masked store with an empty mask to
    /// that unmapped page — measured at twice the whole pass's cost on wire.p4 (no
    /// checksums): 10.5 → 4.7 Mpps.
    /// One or two accumulators (the usual programs) are zeroed by plain stores, not a
    /// `memset` call.
    pub fn zero_csums(&mut self, n: usize) {
        self.residuals.clear();
        if self.csum.len() != n {
            self.csum.clear();
            self.csum.resize(n, 0);
            return;
        }
        match self.csum.as_mut_slice() {
            [] => {}
            [a] => *a = 0,
            [a, b] => (*a, *b) = (0, 0),
            all => all.fill(0),
        }
    }
}

/// Everything one pass needs while running statements.
pub struct Ctx<'a, T: Tracer> {
    pub pl: &'a Pipeline,
    pub eng: &'a Engines,
    pub gress: Gress,
    pub tables: &'a [TableState],
    pub rt: &'a mut PipeRuntime,
    pub phv: &'a mut Phv,
    pub scratch: &'a mut Scratch,
    pub effects: &'a mut Effects,
    /// Deparser output (emitted headers; the gress runner appends the payload).
    pub emit_out: &'a mut Vec<u8>,
    pub stats: &'a mut ExecStats,
    pub tr: &'a mut T,
    /// Virtual time of the pass (ns).
    pub now: u64,
    /// Packet length for counters/meters (bytes as received by this gress).
    pub pkt_len: u32,
    /// Parser input (prefix + packet) and cursor in bits.
    pub input: &'a [u8],
    /// The rest of the parser input after `input`: the packet when the parser reads it in
    /// place (native code only; `input` then holds the prefix), else empty.
    pub input_tail: &'a [u8],
    pub cursor: u64,
    pub in_parser: bool,
    /// Running RegisterAction, if any.
    pub reg: Option<RegCtx>,
    /// Entry whose action is running (direct counters/meters/registers).
    pub entry: RunningEntry,
    /// Write tracking for `watch` fields (bit i = `watch[i]` written).
    pub written: u8,
}

impl<'a, T: Tracer> Ctx<'a, T> {
    /// Mark a register as accessed in this pass; a second access is a program error.
    pub fn claim_register(&mut self, r: RegisterId) -> ExecResult<()> {
        let epoch = self.rt.epoch;
        match self.rt.reg_stamp.get_mut(r.index()) {
            Some(s) if *s == epoch => Err(Fault::program(ProgramError::DoubleRegisterAccess {
                register: self
                    .pl
                    .registers
                    .get(r.index())
                    .map(|r| r.name.clone())
                    .unwrap_or_default(),
            })),
            Some(s) => {
                *s = epoch;
                Ok(())
            }
            None => Err(Fault::program(ProgramError::BadReference("register"))),
        }
    }
}
