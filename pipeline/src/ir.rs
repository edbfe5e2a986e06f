//! The pipeline IR: a P4_16 TNA program after the frontend has lowered it.
//!
//! This is the contract between `p4` (which produces it) and the executor in this crate (which
//! runs it). Everything is pre-resolved: fields are bit ranges in a per-gress PHV byte buffer,
//! tables/actions/externs are indices into the owning [`Pipeline`], and no string lookup or
//! allocation is needed to run a packet. Names are kept only for the runtime API, traces and
//! reports.
//!
//! Execution model (what the executor promises the lowering):
//! - A packet in a gress owns a PHV: `PhvLayout::bytes` bytes, zeroed when the packet enters the
//!   gress, plus one validity bit per header instance (all invalid at start).
//! - Header instances are stored byte-aligned and in wire order, so `extract` copies
//!   `HeaderInfo::byte_len` bytes from the packet into the PHV at `HeaderInfo::byte_offset`, and
//!   `emit` copies them back. Field bit offsets are from the start of the PHV, MSB first
//!   (bit 0 = the most significant bit of byte 0), as on the wire.
//! - Metadata and control/action locals are ordinary PHV fields too (the lowering allocates them).
//! - Values are `u128`, zero-extended; every operation masks its result to its width. Signed
//!   operations (`int<W>`) interpret the low `W` bits as two's complement.
//! - Statements run in program order. For programs that pass the resource check this equals the
//!   hardware's stage order; `stage` annotations exist only for traces and reports.

use std::fmt;

/// All values in the IR. P4 fields wider than 128 bits are rejected by the frontend.
pub type Value = u128;

/// Which half of a pipe a piece of the program belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Gress {
    Ingress,
    Egress,
}

impl fmt::Display for Gress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Gress::Ingress => "ingress",
            Gress::Egress => "egress",
        })
    }
}

macro_rules! id_type {
    ($($(#[$m:meta])* $name:ident),* $(,)?) => {$(
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(pub u32);
        impl $name {
            /// The index into the owning vector.
            pub fn index(self) -> usize { self.0 as usize }
        }
    )*};
}

id_type!(
    /// Index into [`PhvLayout::headers`].
    HeaderId,
    /// Index into [`PhvLayout::stacks`].
    StackId,
    /// Index into [`Pipeline::tables`].
    TableId,
    /// Index into [`Pipeline::actions`].
    ActionId,
    /// Index into [`Pipeline::registers`].
    RegisterId,
    /// Index into [`Pipeline::register_actions`].
    RegisterActionId,
    /// Index into [`Pipeline::register_params`].
    RegisterParamId,
    /// Index into [`Pipeline::hashes`].
    HashId,
    /// Index into [`Pipeline::counters`].
    CounterId,
    /// Index into [`Pipeline::meters`].
    MeterId,
    /// Index into [`Pipeline::checksums`] (a per-packet accumulator in parsers, a pure function in deparsers).
    ChecksumId,
    /// Index into [`Pipeline::digests`].
    DigestId,
    /// Index into [`Pipeline::action_profiles`].
    ActionProfileId,
    /// Index into [`Pipeline::value_sets`].
    ValueSetId,
    /// Index into [`Pipeline::filters`].
    FilterId,
    /// Index into [`Parser::states`].
    StateId,
);

/// A field of a gress's PHV: `width` bits starting at bit `offset` (MSB-first numbering).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FieldRef {
    pub offset: u32,
    pub width: u16,
}

/// Most bits of a value the executor computes on; wider header fields are copied, sliced,
/// extracted and emitted, never computed on whole.
pub const MAX_VALUE_WIDTH: u16 = 128;

/// The `stage` of a deparser's `if` (traces and reports print it as the deparser's, after the
/// match-action stages).
pub const DEPARSER_STAGE: u8 = u8::MAX;

impl FieldRef {
    /// The field cut MSB-first into pieces of at most [`MAX_VALUE_WIDTH`] bits, each with the
    /// bits `[hi:lo]` of the field it covers (one piece for a field of 128 bits or less).
    pub fn chunks(self) -> impl Iterator<Item = (FieldRef, u16, u16)> {
        let w = self.width;
        (0..w.div_ceil(MAX_VALUE_WIDTH)).map(move |i| {
            let start = i * MAX_VALUE_WIDTH;
            let width = (w - start).min(MAX_VALUE_WIDTH);
            let hi = w - 1 - start;
            let piece = FieldRef {
                offset: self.offset + u32::from(start),
                width,
            };
            (piece, hi, hi + 1 - width)
        })
    }

    /// Bits `[hi:lo]` of the field (in range: `lo <= hi < width`).
    pub fn slice(self, hi: u16, lo: u16) -> FieldRef {
        FieldRef {
            offset: self.offset + u32::from(self.width - 1 - hi),
            width: hi - lo + 1,
        }
    }
}

/// Named field of the PHV (headers' fields, metadata fields, locals).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldInfo {
    /// Full P4 path as a user writes it in a table key or trace, e.g. `hdr.ipv4.ttl`, `meta.nexthop`.
    pub name: String,
    pub field: FieldRef,
    pub signed: bool,
}

/// A header instance stored in the PHV.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeaderInfo {
    /// P4 path, e.g. `hdr.ethernet` or `hdr.vlan[1]`.
    pub name: String,
    /// P4 header type name, e.g. `ethernet_h`.
    pub type_name: String,
    pub byte_offset: u32,
    pub byte_len: u32,
    /// Indices into [`PhvLayout::fields`] of this header's fields, in wire order.
    pub fields: std::ops::Range<u32>,
}

/// A header stack `h[N]`: consecutive header instances plus the hidden `nextIndex` counter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StackInfo {
    pub name: String,
    pub elements: Vec<HeaderId>,
    /// Hidden metadata field holding `nextIndex` (width ≥ bits to count to N).
    pub next_index: FieldRef,
}

/// The PHV of one gress of one pipeline.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PhvLayout {
    /// Total bytes of the PHV buffer (headers + metadata + locals).
    pub bytes: u32,
    pub fields: Vec<FieldInfo>,
    pub headers: Vec<HeaderInfo>,
    pub stacks: Vec<StackInfo>,
    /// The headers with a `varbit<N>` field (at most one each, P4_16 §7.1.6).
    pub varbits: Vec<VarbitInfo>,
}

impl PhvLayout {
    /// The varbit field of header `h`, if it has one.
    pub fn varbit(&self, h: HeaderId) -> Option<&VarbitInfo> {
        self.varbits.iter().find(|v| v.header == h)
    }
}

/// A header's `varbit<N>` field: `field` reserves the N bits (the value left-aligned in it,
/// the rest zero), `len` is a hidden metadata field with its current length in bits, set by
/// the two-argument extract and by assignments, read by emit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VarbitInfo {
    pub header: HeaderId,
    pub field: FieldRef,
    pub len: FieldRef,
}

/// The bytes the hardware puts in front of a packet before a parser sees it
/// (ingress: `ingress_intrinsic_metadata_t` then 64 b of port metadata or resubmit data;
/// egress: `egress_intrinsic_metadata_t`). The layout comes from the architecture header types.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PrefixLayout {
    /// Total prefix length in bytes (ingress on Tofino 1: 8 + 8).
    pub bytes: u32,
    /// Where each intrinsic value goes inside the prefix (offsets relative to the prefix start).
    pub fields: Vec<(Intrinsic, FieldRef)>,
}

/// Intrinsic metadata the executor reads or writes. Names follow TNA (`tofino1_base.p4`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Intrinsic {
    // ingress_intrinsic_metadata_t (prefix)
    IgResubmitFlag,
    IgPacketVersion,
    IgIngressPort,
    IgIngressMacTstamp,
    // ingress_intrinsic_metadata_from_parser_t
    IgPrsrGlobalTstamp,
    IgPrsrGlobalVer,
    IgPrsrParserErr,
    // ingress_intrinsic_metadata_for_tm_t
    TmUcastEgressPort,
    TmBypassEgress,
    TmDeflectOnDrop,
    TmIngressCos,
    TmQid,
    TmIcosForCopyToCpu,
    TmCopyToCpu,
    TmPacketColor,
    TmDisableUcastCutthru,
    TmEnableMcastCutthru,
    TmMcastGrpA,
    TmMcastGrpB,
    TmLevel1McastHash,
    TmLevel2McastHash,
    TmLevel1ExclusionId,
    TmLevel2ExclusionId,
    TmRid,
    // ingress_intrinsic_metadata_for_deparser_t
    IgDprsrDropCtl,
    IgDprsrDigestType,
    IgDprsrResubmitType,
    IgDprsrMirrorType,
    /// Tofino 2: trigger the packet generator (with the header `Pktgen.emit` gave).
    IgDprsrPktgen,
    IgDprsrPktgenAddress,
    IgDprsrPktgenLength,
    /// Tofino 2: which packet an ingress mirror copies (0: as received, 1: as deparsed).
    IgDprsrMirrorIoSelect,
    // egress_intrinsic_metadata_t (prefix)
    EgEgressPort,
    EgEnqQdepth,
    EgEnqCongestStat,
    EgEnqTstamp,
    EgDeqQdepth,
    EgDeqCongestStat,
    EgAppPoolCongestStat,
    EgDeqTimedelta,
    EgEgressRid,
    EgEgressRidFirst,
    EgEgressQid,
    EgEgressCos,
    EgDeflectionFlag,
    EgPktLength,
    // egress_intrinsic_metadata_from_parser_t
    EgPrsrGlobalTstamp,
    EgPrsrGlobalVer,
    EgPrsrParserErr,
    // egress_intrinsic_metadata_for_deparser_t
    EgDprsrDropCtl,
    EgDprsrMirrorType,
    EgDprsrCoalesceFlush,
    EgDprsrCoalesceLength,
    /// Tofino 2: which packet an egress mirror copies (0: as it entered egress, 1: as
    /// deparsed).
    EgDprsrMirrorIoSelect,
    // egress_intrinsic_metadata_for_output_port_t
    EgOportCaptureTstampOnTx,
    EgOportUpdateDelayOnTx,
    // ghost_intrinsic_metadata_t (Tofino 2: the ghost thread's queue update; ingress sees
    // `ping_pong`)
    GhostPingPong,
    GhostQlength,
    GhostQid,
    GhostPipeId,
}

/// PHV locations of the intrinsic metadata structs a gress's controls were bound to by the
/// `Pipeline` package (so the executor can read the TM decision, write timestamps, etc.).
/// An intrinsic the program never names still gets a location (the lowering allocates it).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct IntrinsicBindings {
    pub fields: Vec<(Intrinsic, FieldRef)>,
}

impl IntrinsicBindings {
    pub fn get(&self, which: Intrinsic) -> Option<FieldRef> {
        self.fields
            .iter()
            .find(|(w, _)| *w == which)
            .map(|(_, f)| *f)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnOp {
    /// Bitwise complement `~`.
    Not,
    /// Two's complement negation `-`.
    Neg,
    /// Boolean `!`.
    LNot,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    /// `|+|` saturating add (unsigned or signed per the expression's `signed`).
    SatAdd,
    /// `|-|` saturating subtract.
    SatSub,
    /// Only with a constant power-of-two divisor on hardware; the frontend folds/validates.
    Div,
    Mod,
    And,
    Or,
    Xor,
    Shl,
    Shr,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    LAnd,
    LOr,
    /// `min(a, b)` / `max(a, b)` (TNA helper functions).
    Min,
    Max,
}

/// How a RegisterAction picks its cell through the stateful ALU's counter (one per register;
/// from 0 after reset). A squashed access runs nothing and outputs 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CounterOp {
    /// `execute_log()`: the next cell, then the counter advances. Once every cell is logged,
    /// Tofino 1 stays on the last cell; Tofino 2 (`stop_when_full`) squashes the access.
    Log { stop_when_full: bool },
    /// `enqueue()`: the FIFO's tail cell, then the tail advances (wrapping); full: squashed,
    /// or the action's `overflow` handler runs on the tail cell (= the head's), no move.
    Enqueue,
    /// `dequeue()`: the FIFO's head cell, then the head advances (wrapping); empty: squashed,
    /// or the `underflow` handler runs on the head cell (= the tail's), no move.
    Dequeue,
    /// `push()`: the stack's next free cell, then the top rises; full: squashed, or the
    /// `overflow` handler runs on cell 0 (the full counter's address less its wrap bit).
    Push,
    /// `pop()`: the top falls, then its cell (the last pushed); empty: squashed, or the
    /// `underflow` handler runs on cell 0.
    Pop,
    /// Tofino 2's `sweep()`: `apply` on every cell, no output (the counter in "clear" mode).
    Sweep,
}

impl CounterOp {
    /// The method's name in the architecture files.
    pub fn method(self) -> &'static str {
        match self {
            CounterOp::Log { .. } => "execute_log",
            CounterOp::Enqueue => "enqueue",
            CounterOp::Dequeue => "dequeue",
            CounterOp::Push => "push",
            CounterOp::Pop => "pop",
            CounterOp::Sweep => "sweep",
        }
    }
}

/// Which word of a register cell a RegisterAction body touches (`value` for a scalar register,
/// the first / second struct field for a paired register).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RegWord {
    Lo,
    Hi,
}

/// An expression over PHV fields, action data, constants and extern results.
/// Every variant knows its result width (see [`Expr::width`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expr {
    Const {
        value: Value,
        width: u16,
    },
    Field(FieldRef),
    /// `isValid()` of a header instance (width 1).
    Valid(HeaderId),
    /// Action parameter `index` of the running action (action data or direct-call argument).
    Param {
        index: u16,
        width: u16,
    },
    Unary {
        op: UnOp,
        arg: Box<Expr>,
        width: u16,
    },
    Binary {
        op: BinOp,
        a: Box<Expr>,
        b: Box<Expr>,
        /// Result width (comparisons and logical ops: 1).
        width: u16,
        /// Operands are `int<W>`: signed comparisons, arithmetic shift right, signed saturation.
        signed: bool,
    },
    /// `arg[hi:lo]`.
    Slice {
        arg: Box<Expr>,
        hi: u16,
        lo: u16,
    },
    /// `hi ++ lo`.
    Concat {
        hi: Box<Expr>,
        lo: Box<Expr>,
        width: u16,
    },
    /// Width change: truncation, zero- or (when `sign_extend`) sign-extension from `arg`'s width.
    Cast {
        arg: Box<Expr>,
        width: u16,
        sign_extend: bool,
    },
    Ternary {
        cond: Box<Expr>,
        then: Box<Expr>,
        els: Box<Expr>,
        width: u16,
    },
    /// Parser only: `pkt.lookahead<T>()` — `width` bits at `offset_bits` past the parser cursor,
    /// without advancing (zero-filled past the end of the packet, and `PacketTooShort` is raised).
    Lookahead {
        offset_bits: u32,
        width: u16,
    },
    /// Inside a RegisterAction body: the word as the body has left it so far (scalar register →
    /// `Lo`): the memory word until the body writes it, then the value written.
    RegValue(RegWord),
    /// Inside a RegisterAction body: the word as read from memory, before any write of the body
    /// (what the stateful ALU's compare units and ALUs read after the word has been written).
    RegInput(RegWord),
    /// `RegisterParam.read()`.
    RegisterParam(RegisterParamId),
    /// `ra.execute(index)`: runs the RegisterAction, yields its output (`rv`) truncated/extended to `width`.
    RegisterExecute {
        action: RegisterActionId,
        index: Box<Expr>,
        width: u16,
    },
    /// `hash.get({inputs})`: inputs concatenated MSB-first in order, each at its own width.
    Hash {
        hash: HashId,
        inputs: Vec<Expr>,
        width: u16,
    },
    /// `random.get()`.
    Random {
        width: u16,
    },
    /// Inside a Tofino 2 MinMaxAction body: `min8/max8/min16/max16(value, mask)` over the
    /// `lane`-bit lanes of the 128-bit `value` (lane i = bits `lane*i ..`) whose `mask` bit i is
    /// set: the smallest / largest lane (`index`: false), or its lane number (`index`: true,
    /// 4 bits for 8-bit lanes, 3 for 16-bit ones). Ties go to the lowest lane; no lane enabled
    /// gives 0 (the hardware's choice in either case is not public).
    MinMax {
        max: bool,
        lane: u16,
        value: Box<Expr>,
        mask: Box<Expr>,
        index: bool,
    },
    /// Inside a RegisterAction body: `this.predicate(c0, ..)`, the stateful ALU's predicate
    /// output: one-hot, bit `c0 | c1 << 1 | c2 << 2 | c3 << 3` set (an omitted condition is
    /// false), `width` bits (Tofino 1: two conditions, Tofino 2: four).
    SaluPredicate {
        conds: Vec<Expr>,
        width: u16,
    },
    /// Inside a Tofino 2 RegisterAction body: `this.address()`, the stateful ALU's address
    /// output as the program fixes it: the cell's bit address in the register's RAM words
    /// (index × the cell's bits; a min/max word's: word × 128), `width` bits. The hardware's
    /// bits 17 and up (RAM page, per-flow enable, type) come from bf-p4c's placement: pisa
    /// counts pages from 0 and gives the rest as 0.
    SaluAddress {
        width: u16,
    },
    /// Only as the index of a RegisterExecute: the cell the register's stateful counter picks
    /// (`execute_log`, Tofino 2's `enqueue`/`dequeue`/`push`/`pop`), see [`CounterOp`].
    SaluCounter {
        register: RegisterId,
        op: CounterOp,
    },
    /// Inside a RegisterAction body: `math.execute(input)`, the stateful ALU's math unit.
    MathUnit {
        unit: Box<crate::externs::math_unit::MathUnit>,
        input: Box<Expr>,
        width: u16,
    },
    /// `meter.execute(index[, color])` → `MeterColor_t` (0 green, 1 yellow, 3 red), width 8.
    MeterExecute {
        meter: MeterId,
        index: Option<Box<Expr>>,
        color: Option<Box<Expr>>,
    },
    /// `lpf.execute(value[, index])` (the filtered value, `width` bits) or
    /// `wred.execute(value[, index])` (its drop or no-drop value, width 8). Direct filters
    /// (no index) use the running entry's cell.
    FilterExecute {
        filter: FilterId,
        value: Box<Expr>,
        index: Option<Box<Expr>>,
        width: u16,
    },
    /// Parser checksum: `verify()` (width 1) on the accumulated data.
    ChecksumVerify(ChecksumId),
    /// Parser checksum: `get()` (width 16), the ones'-complement sum of the accumulated data
    /// (`field = ck.get()` lowers to `Stmt::ChecksumDeposit` instead, as bf-p4c lowers it).
    ChecksumGet(ChecksumId),
    /// Deparser checksum: `update({fields})` → 16-bit ones'-complement checksum of the fields.
    ChecksumUpdate {
        checksum: ChecksumId,
        inputs: Vec<Expr>,
    },
}

impl Expr {
    /// Result width in bits.
    pub fn width(&self) -> u16 {
        match self {
            Expr::Const { width, .. }
            | Expr::Param { width, .. }
            | Expr::Unary { width, .. }
            | Expr::Binary { width, .. }
            | Expr::Concat { width, .. }
            | Expr::Cast { width, .. }
            | Expr::Ternary { width, .. }
            | Expr::Lookahead { width, .. }
            | Expr::RegisterExecute { width, .. }
            | Expr::Hash { width, .. }
            | Expr::Random { width }
            | Expr::MathUnit { width, .. }
            | Expr::SaluPredicate { width, .. }
            | Expr::SaluAddress { width } => *width,
            Expr::SaluCounter { .. } => 32,
            Expr::Field(f) => f.width,
            Expr::Valid(_) | Expr::ChecksumVerify(_) => 1,
            Expr::Slice { hi, lo, .. } => hi - lo + 1,
            Expr::RegValue(_) | Expr::RegInput(_) | Expr::RegisterParam(_) => 0, // resolved by the executor from the register's width
            Expr::MeterExecute { .. } => 8,
            Expr::MinMax { lane, index, .. } => match (index, lane) {
                (false, l) => *l,
                (true, 8) => 4,
                (true, _) => 3,
            },
            Expr::FilterExecute { width, .. } => *width,
            Expr::ChecksumGet(_) | Expr::ChecksumUpdate { .. } => 16,
        }
    }

    pub fn constant(value: Value, width: u16) -> Expr {
        Expr::Const { value, width }
    }
}

/// Where an assignment writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    Field(FieldRef),
    /// A slice of a field: `f[hi:lo] = v`.
    FieldSlice {
        field: FieldRef,
        hi: u16,
        lo: u16,
    },
    /// Inside a RegisterAction body: the memory word.
    RegValue(RegWord),
    /// Inside a RegisterAction body: the output (`rv`) returned by `execute`.
    RegOutput,
    /// Inside a Tofino 2 RegisterAction body: the extra output `rvN` (N = 2, 3 or 4), written
    /// to the `out` argument N of `execute` (see [`Stmt::RegisterExecute`]).
    RegOutputN(u8),
}

/// What to run after a table apply, by outcome.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum TableBranches {
    /// Plain `t.apply();`.
    #[default]
    None,
    /// `if (t.apply().hit) {..} else {..}` (`.miss` is lowered by swapping).
    HitMiss { hit: Block, miss: Block },
    /// `switch (t.apply().action_run) { a: {..} default: {..} }`.
    ActionRun {
        cases: Vec<(ActionId, Block)>,
        default: Block,
    },
}

pub type Block = Vec<Stmt>;

/// A statement. Parser-only, deparser-only and register-action-only variants are marked; the
/// frontend never puts a statement where its gress part cannot run it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stmt {
    Assign {
        dst: Place,
        value: Expr,
    },
    /// `hdr.a = hdr.b;` for headers of the same type (copies bytes and validity).
    CopyHeader {
        dst: HeaderId,
        src: HeaderId,
    },
    SetValid {
        header: HeaderId,
        valid: bool,
    },
    /// Header stack `push_front(n)` / `pop_front(n)`.
    StackShift {
        stack: StackId,
        count: u16,
        push: bool,
    },
    If {
        cond: Expr,
        then: Block,
        els: Block,
        /// Stage of the gateway that evaluates `cond` (traces only); [`DEPARSER_STAGE`] for
        /// a deparser's condition, which the deparser evaluates after the last stage.
        stage: u8,
    },
    ApplyTable {
        table: TableId,
        branches: TableBranches,
    },
    /// Direct action call `a(args)` from a control body or another action.
    CallAction {
        action: ActionId,
        args: Vec<Expr>,
    },
    /// `counter.count(index)`.
    Count {
        counter: CounterId,
        index: Expr,
    },
    /// `direct_counter.count()` inside an action of the table that owns it.
    CountDirect {
        counter: CounterId,
    },
    /// Tofino 2 `ra.execute(index, rv2, rv3, rv4)`: runs the RegisterAction, then writes its
    /// outputs `rv1..rv4` to the places given (`None`: that output is dropped).
    RegisterExecute {
        action: RegisterActionId,
        index: Expr,
        outs: [Option<Place>; 4],
    },
    /// Tofino 2 `reg.clear(value[, busy])`: every cell of the register takes `value`
    /// (`lo`, and `hi` for a pair).
    RegisterClear {
        register: RegisterId,
        lo: Value,
        hi: Value,
    },
    /// `exit;` — ends the control (ingress/egress) immediately; deparser still runs.
    Exit,
    /// `return;` — leaves the current action or control body.
    Return,

    // ---- parser only ----
    /// `pkt.extract(hdr.x)`: copy bytes, set valid, advance cursor; `PacketTooShort` if short.
    Extract(HeaderId),
    /// `pkt.extract(hdr.x, bits)` of a header with a `varbit` field: `bits` (a `bit<32>`) of
    /// it are taken. When `bits` is more than the field holds the parse ends as `transition
    /// reject` does (bf-p4c's `reject` branch); else `ParserInvalidArgument` when `bits` is not
    /// whole bytes, `PacketTooShort` when the packet ends first.
    ExtractVarbit {
        header: HeaderId,
        bits: Expr,
    },
    /// `pkt.extract(hdr.stack.next)`: on a full stack the parse ends (`exec::parser::STACK_FULL`).
    ExtractNext(StackId),
    /// `pkt.advance(bits)`.
    Advance(Expr),
    /// A `ParserCounter` load out of range: raise `CounterRange` (PARSER_ERROR_CTR_RANGE)
    /// when `cond` holds (the loaded byte is above the counter's `max`).
    CounterRange {
        cond: Expr,
    },
    /// Parser checksum `add(data)`.
    ChecksumAdd {
        checksum: ChecksumId,
        inputs: Vec<Expr>,
    },
    /// Parser checksum `subtract(data)`.
    ChecksumSubtract {
        checksum: ChecksumId,
        inputs: Vec<Expr>,
    },
    /// Parser checksum `subtract_all_and_deposit(dst)` (and `dst = ck.get()`): marks the
    /// residual's end at the cursor; when the parse ends, `dst` takes the accumulator less the
    /// header bytes parsed after the mark (never the payload), as Tofino's checksum unit.
    ChecksumDeposit {
        checksum: ChecksumId,
        dst: FieldRef,
    },

    // ---- deparser only ----
    /// `pkt.emit(hdr.x)` (no-op when invalid). Emitting a struct lowers to one Emit per header.
    Emit(HeaderId),
    /// `mirror.emit(session[, {fields}])` — the mirror header is the concatenation of `header`.
    MirrorEmit {
        session: Expr,
        header: Vec<Expr>,
    },
    /// `resubmit.emit([{fields}])`.
    ResubmitEmit {
        header: Vec<Expr>,
    },
    /// Tofino 2 `pktgen.emit(hdr)`: the data of the packet generator's deparser trigger (sent
    /// when `ig_intr_md_for_dprsr.pktgen` is 1).
    PktgenEmit {
        header: Vec<Expr>,
    },
    /// `digest.pack({fields})`.
    DigestPack {
        digest: DigestId,
        fields: Vec<Expr>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MatchKind {
    Exact,
    Ternary,
    Lpm,
    Range,
    /// Not matched: an input of the table's action selector hash (`selector` in TNA). The
    /// frontend puts these keys after the matched ones.
    Selector,
}

impl fmt::Display for MatchKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            MatchKind::Exact => "exact",
            MatchKind::Ternary => "ternary",
            MatchKind::Lpm => "lpm",
            MatchKind::Range => "range",
            MatchKind::Selector => "selector",
        })
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableKey {
    /// Name used by the runtime API (the key expression as written, or its `@name`), e.g. `hdr.ipv4.dst_addr`.
    pub name: String,
    pub expr: Expr,
    pub kind: MatchKind,
}

/// One match field of an entry (const entries here; runtime entries use the same type).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KeyMatch {
    Exact(Value),
    Ternary { value: Value, mask: Value },
    Lpm { value: Value, prefix_len: u16 },
    Range { lo: Value, hi: Value },
}

/// An action with its action data, as stored in entries and default actions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActionCall {
    pub action: ActionId,
    pub args: Vec<Value>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConstEntry {
    pub keys: Vec<KeyMatch>,
    /// The entry's priority in pisa's convention (smaller wins), normalised by the frontend from
    /// the program's (`largest_priority_wins`, `priority_delta`); `None` when the program gives
    /// none: the order in `const entries` (first = highest).
    pub priority: Option<u32>,
    pub action: ActionCall,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActionRef {
    pub action: ActionId,
    /// `@defaultonly`: may only be the default action.
    pub default_only: bool,
    /// `@tableonly`: may not be the default action.
    pub table_only: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Table {
    /// Control-qualified name for the runtime API, e.g. `SwitchIngress.ipv4_lpm`.
    pub name: String,
    pub gress: Gress,
    pub keys: Vec<TableKey>,
    pub actions: Vec<ActionRef>,
    /// `default_action`; `NoAction` when the program names none.
    pub default_action: ActionCall,
    /// `const default_action`: the control plane may not change it.
    pub default_action_const: bool,
    pub const_entries: Vec<ConstEntry>,
    /// `const entries` make the table immutable at run time.
    pub entries_const: bool,
    pub size: u32,
    pub direct_counter: Option<CounterId>,
    pub direct_meter: Option<MeterId>,
    /// `idle_timeout = true`: each entry keeps the time of its last hit, and the control
    /// plane gives entries a TTL after which they are reported idle.
    pub idle_timeout: bool,
    /// MAU stage assigned by the resource check (0-based).
    pub stage: u8,
    /// `@hidden`: the program applies it, but the control plane cannot see or name it (p4c's
    /// P4Runtime serializer leaves hidden tables out of P4Info).
    pub hidden: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActionParam {
    pub name: String,
    pub width: u16,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Action {
    /// Control-qualified name, e.g. `SwitchIngress.set_port`; `NoAction` for the core one.
    pub name: String,
    pub params: Vec<ActionParam>,
    pub body: Block,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Register {
    /// Control-qualified name, e.g. `SwitchIngress.num_recv`.
    pub name: String,
    pub gress: Gress,
    pub size: u32,
    /// Width of one word (8, 16, 32; 1 for bit registers; 64 allowed by the emulator for Tofino2-like dual words).
    pub width: u16,
    /// A struct-typed value of two words (`lo` = first field, `hi` = second).
    pub paired: bool,
    /// Names of the two struct fields when paired (for check_register FIELD and traces).
    pub word_names: Option<(String, String)>,
    pub initial_lo: Value,
    pub initial_hi: Value,
    /// A `DirectRegister` bound to this table: indexed by the matched entry.
    pub direct_table: Option<TableId>,
    pub stage: u8,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegisterAction {
    pub name: String,
    pub register: RegisterId,
    /// The `apply` body: `RegValue`/`Place::RegValue` for the memory word(s), `Place::RegOutput` for `rv`.
    /// `Expr::Field` / `Expr::Param` are PHV/action-data inputs.
    pub body: Block,
    /// Output width (the `U` type parameter); 0 when the action returns nothing.
    pub output_width: u16,
    /// A Tofino 2 MinMaxAction: `value` is the 128-bit memory word that holds 128 / width
    /// consecutive cells (cell `index * n + i` in lane i), and `execute`'s index picks the word.
    pub wide: bool,
    /// Tofino 2's `overflow` handler: what runs instead of `body` when `enqueue`/`push` finds
    /// the FIFO or stack full (the hardware's `slog_overflow_instruction`), see
    /// [`CounterOp`]. `None`: the access is squashed.
    pub overflow: Option<Block>,
    /// Tofino 2's `underflow` handler: what runs instead of `body` when `dequeue`/`pop` finds
    /// the FIFO or stack empty (`slog_underflow_instruction`). `None`: squashed.
    pub underflow: Option<Block>,
}

impl RegisterAction {
    /// The stateful-ALU programs of this action: `body`, then its overflow and underflow
    /// handlers where it has them.
    pub fn bodies(&self) -> impl Iterator<Item = &Block> {
        std::iter::once(&self.body)
            .chain(self.overflow.as_ref())
            .chain(self.underflow.as_ref())
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegisterParam {
    pub name: String,
    pub width: u16,
    pub initial: Value,
}

/// A CRC with the parameters of `CRCPolynomial` (TNA app note Table 5 presets use the same shape).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CrcSpec {
    pub width: u16,
    pub poly: u64,
    pub reversed: bool,
    pub msb: bool,
    pub extended: bool,
    pub init: u64,
    pub xor: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HashAlgorithm {
    Identity,
    Random,
    Xor8,
    Xor16,
    Xor32,
    Crc(CrcSpec),
}

/// An `ActionProfile` (and, with `selector`, the `ActionSelector` over it): the action data of
/// the tables in `tables` lives in members (an action and its data, by member id) that entries
/// point at, directly or through a group of members one of which the selector's hash picks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActionProfile {
    /// Control-qualified name of the profile (of the selector when the program names only that).
    pub name: String,
    /// Members it holds.
    pub size: u32,
    /// The tables whose `implementation` it is.
    pub tables: Vec<TableId>,
    pub selector: Option<ActionSelector>,
}

/// An `ActionSelector`: groups of members, one chosen per packet by a hash of the table's
/// `selector` keys.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActionSelector {
    pub name: String,
    /// The hash over the selector keys.
    pub hash: HashId,
    /// Members a group holds at most.
    pub max_group_size: u32,
    /// Groups it holds.
    pub num_groups: u32,
    /// How its ALU picks a member (`mode` argument).
    pub mode: SelectorMode,
    /// Whether its hash goes through the SPS scramblers: bf-p4c's default, off with
    /// `@selector_enable_scramble(0)` on a table it implements.
    pub scramble: bool,
    /// The register of its member-status bits (`bit<1>` cells, see
    /// `table::profile`), when the program names one or runs a `SelectorAction` on it.
    pub status: Option<RegisterId>,
}

/// `SelectorMode_t`: how a selector picks among a group's members (see `table::selector`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SelectorMode {
    #[default]
    Fair,
    Resilient,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HashUnit {
    pub name: String,
    pub algorithm: HashAlgorithm,
    pub width: u16,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CounterKind {
    Packets,
    Bytes,
    PacketsAndBytes,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Counter {
    pub name: String,
    pub kind: CounterKind,
    /// Indexed size; direct counters have the size of their table.
    pub size: u32,
    pub direct_table: Option<TableId>,
    /// Which bytes of a packet it counts.
    pub bytes: ByteAccounting,
}

/// How a counter or meter measures a packet's bytes (TNA's `adjust_byte_count` argument and
/// Tofino 2's `true_egress_accounting`). Lengths include the 4-byte FCS, as the hardware
/// counts it (pisa's frames carry none; the executor adds it).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ByteAccounting {
    /// `adjust_byte_count`: bytes taken off every packet's length (the hardware adds the
    /// negated value, a 14-bit signed field, so 0..=8192); a length below it counts 0.
    pub adjust: u16,
    /// `true_egress_accounting`: an egress counter or meter measures the packet as the egress
    /// deparser sends it, not as egress received it.
    pub true_egress: bool,
}

impl ByteAccounting {
    /// The largest `adjust_byte_count`: the hardware's adjustment is a 14-bit signed field
    /// holding its negation (-8192..=8191).
    pub const MAX_ADJUST: u32 = 8192;

    /// The bytes counted for a packet of `len` bytes.
    #[inline]
    pub fn counted(self, len: u32) -> u32 {
        len.saturating_sub(u32::from(self.adjust))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MeterKind {
    Packets,
    Bytes,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Meter {
    pub name: String,
    pub kind: MeterKind,
    pub size: u32,
    pub direct_table: Option<TableId>,
    /// What `execute` returns for each colour (TNA's `Meter(size, type, red, yellow, green)`).
    pub colors: MeterColors,
    /// Which bytes of a packet a byte meter measures.
    pub bytes: ByteAccounting,
}

/// The values a meter returns for green, yellow and red.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MeterColors {
    pub green: u8,
    pub yellow: u8,
    pub red: u8,
}

impl Default for MeterColors {
    /// TNA's `MeterColor_t`: GREEN 0, YELLOW 1, RED 3.
    fn default() -> Self {
        MeterColors {
            green: 0,
            yellow: 1,
            red: 3,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checksum {
    pub name: String,
    pub gress: Gress,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Digest {
    pub name: String,
    /// The digest's struct type as the program writes it (`learn_t`; a generic struct's
    /// specialisation with its arguments, `pair_t<bit<8>>`): P4Info names the type after it.
    pub type_name: String,
    /// Field names of the digest struct, for the control plane's decoding.
    pub fields: Vec<(String, u16)>,
}

/// One keyset element of a `select` case: matches when `key & mask == value & mask`, or, for a
/// range, `lo <= key <= hi`, or, for a value set, when one of the set's entries matches.
///
/// A case has one element per select key, except that a value set whose element type is a
/// struct may stand alone for the whole tuple of keys (`select(a, b) { vs: next; }`): its
/// fields then pair with the keys in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeysetElem {
    Mask { value: Value, mask: Value },
    Range { lo: Value, hi: Value },
    ValueSet(ValueSetId),
}

/// What a filter is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FilterKind {
    /// `Lpf` / `DirectLpf`: a low-pass filter of its input.
    Lpf,
    /// `Wred` / `DirectWred`: answers `drop_value` or `no_drop_value`.
    Wred { drop_value: u8, no_drop_value: u8 },
}

/// An `Lpf` or `Wred` (or their direct forms, attached to a table with `filters =`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Filter {
    pub name: String,
    pub kind: FilterKind,
    /// Cells (indexed form; a direct filter has one per entry of its table).
    pub size: u32,
    pub direct_table: Option<TableId>,
}

/// A parser value set, `value_set<T>(size)`: select labels the control plane writes at run
/// time, each entry a value and a mask per field (a ternary match; on Tofino each entry takes
/// one of the parser's TCAM rows).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValueSet {
    /// Qualified name, e.g. `SwitchIngressParser.vxlan_ports`.
    pub name: String,
    pub gress: Gress,
    /// Most entries it holds.
    pub size: u32,
    /// The element type's fields in order with their widths: `f1` for a `bit<N>` set (the
    /// name bf-rt gives it), the struct's field names otherwise.
    pub fields: Vec<(String, u16)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NextState {
    Accept,
    Reject,
    /// A `select` none of whose cases matched and which has no `default`: the hardware's
    /// parser TCAM misses and the parse ends with `PARSER_ERROR_NO_MATCH`.
    NoMatch,
    State(StateId),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SelectCase {
    /// One element per select key.
    pub keyset: Vec<KeysetElem>,
    pub next: NextState,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transition {
    Direct(NextState),
    Select {
        keys: Vec<Expr>,
        cases: Vec<SelectCase>,
        /// `default` / `_` case; `Reject` with `NoMatch` when absent.
        default: NextState,
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParserState {
    /// Qualified name, e.g. `SwitchIngressParser.parse_ipv4` (sub-parser states carry their instance path).
    pub name: String,
    pub body: Block,
    pub transition: Transition,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parser {
    pub name: String,
    pub start: StateId,
    pub states: Vec<ParserState>,
}

/// A control (ingress/egress MAU program or a deparser) flattened: nested control instances are inlined.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Control {
    pub name: String,
    pub body: Block,
}

/// The error enum as declared by the program (core errors first), for `parser_err` and traces.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ErrorEnum {
    pub names: Vec<String>,
}

/// One gress of a pipeline: parser → control → deparser over one PHV.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GressProgram {
    pub phv: PhvLayout,
    pub prefix: PrefixLayout,
    pub intrinsics: IntrinsicBindings,
    pub parser: Parser,
    pub control: Control,
    pub deparser: Control,
}

/// One `Pipeline(...)` package instance: both gresses plus every object they own.
/// State (registers, counters, meters, table entries) is instantiated per hardware pipe.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pipeline {
    /// Instance name, e.g. `pipe`.
    pub name: String,
    pub ingress: GressProgram,
    pub egress: GressProgram,
    pub tables: Vec<Table>,
    pub actions: Vec<Action>,
    pub registers: Vec<Register>,
    pub register_actions: Vec<RegisterAction>,
    pub register_params: Vec<RegisterParam>,
    pub hashes: Vec<HashUnit>,
    pub counters: Vec<Counter>,
    pub meters: Vec<Meter>,
    pub checksums: Vec<Checksum>,
    pub digests: Vec<Digest>,
    pub action_profiles: Vec<ActionProfile>,
    pub value_sets: Vec<ValueSet>,
    pub filters: Vec<Filter>,
    /// Tofino 2's ghost thread (`Pipeline(..., Ghost())`): a control run on each queue-depth
    /// update of the traffic manager, with `ghost_intrinsic_metadata_t` bound to
    /// [`Intrinsic::GhostPingPong`].. and nothing else (no parser or deparser). It shares the
    /// ingress's objects (registers, tables): its parser and deparser are empty.
    pub ghost: Option<Box<GressProgram>>,
}

impl Pipeline {
    /// Whether the control plane can name table `t`: every table but an `@hidden` one, which
    /// p4c's P4Runtime serializer leaves out of P4Info (`P4RuntimeAnalyzer::addTable` returns
    /// before it is added) together with the direct counters, meters and registers bound to it
    /// (only that table's `addTableProperties` would add them).
    pub fn table_named(&self, t: usize) -> bool {
        self.tables.get(t).is_some_and(|x| !x.hidden)
    }

    /// Whether the control plane can name an object bound to `direct_table` (an indexed
    /// object, `None`, always; a direct one when its table can be named).
    pub fn direct_named(&self, direct_table: Option<TableId>) -> bool {
        direct_table.is_none_or(|t| self.table_named(t.index()))
    }
}

/// Target profiles pisa knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Target {
    Tofino1,
    Tofino2,
}

impl Target {
    /// MAU stages per gress.
    pub fn stages(self) -> u8 {
        match self {
            Target::Tofino1 => 12,
            Target::Tofino2 => 20,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Target::Tofino1 => "tofino1",
            Target::Tofino2 => "tofino2",
        }
    }
}

/// A whole lowered program: `Switch(pipe0[, pipe1, ...]) main;`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Program {
    pub name: String,
    pub target: Target,
    pub pipelines: Vec<Pipeline>,
    /// Hardware pipe → index into `pipelines` (`Switch(p)` with one argument runs `p` on every pipe).
    pub pipe_map: Vec<usize>,
    pub errors: ErrorEnum,
}
