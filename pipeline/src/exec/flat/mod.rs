//! The flat program: the IR of one pipeline lowered once, at engine construction, into
//! pre-resolved operations the packet path runs without re-deciding anything per packet.
//!
//! What lowering settles ahead of time (see [`lower`]):
//! - expressions become [`FExpr`] nodes with every width, mask and operand width computed, and
//!   fused forms for the shapes programs use most (`field == const`, `isValid()`, params);
//! - assignments become [`Op`]s that already know their destination field and whether it is a
//!   watched traffic-manager field (no per-write scan of the watch list);
//! - table applies carry their key expressions and branches; actions are pre-lowered op lists
//!   indexed by action id, so running an entry's action is one slice lookup;
//! - parser states carry extract layouts (PHV byte offset and length of each header) and select
//!   keys; checksum inputs are grouped into runs of adjacent PHV bits once instead of per packet;
//! - deparser emits carry the header's PHV byte range, and runs of emits of headers that lie
//!   back to back in the PHV become one copy.
//!
//! Statements and expressions whose cost is dominated by their own work (register actions,
//! hashes, resubmit requests, header stacks) keep their IR form and run through the tree
//! interpreter ([`Op::Tree`], [`FExpr::Tree`]) on the same [`super::Ctx`], so both paths share
//! one definition of those semantics. A scalar RegisterAction's `execute` is also lowered whole
//! ([`FExpr::Salu`]: index, body, masks) for the native generator, while the flat engine keeps
//! running its tree form. Meters, digests and mirror requests are lowered ([`FExpr::Meter`],
//! [`Op::Digest`], [`Op::Mirror`]): their inputs are flat expressions, and what they do with the
//! values is the one `Ctx` function every engine calls (`meter_with`, `digest_pack`,
//! `mirror_request`). The executor for the flat form is in
//! [`run`] (control, actions, deparser) and [`parse`] (the parser engine).
//!
//! With a recording tracer the flat form records the same trace events as the tree
//! interpreter (each `if` keeps its stage and condition for that: [`FlatGress::gates`]). Both
//! compute the same packet, bit for bit, and the same events (the differential tests in
//! [`tests`] check it).

pub mod lower;
pub mod parse;
pub mod run;
#[cfg(test)]
pub(crate) mod tests;

use crate::ir::{ActionId, BinOp, Expr, FieldRef, KeysetElem, NextState, Stmt, Value};

/// A lowered expression. Every node's result is already masked to its width.
#[derive(Debug, Clone)]
pub enum FExpr {
    Const(Value),
    Field(FieldRef),
    /// `field == value` (both masked to the operand width at lowering time).
    FieldEqConst {
        f: FieldRef,
        value: Value,
    },
    Valid(u32),
    Param {
        index: u16,
        mask: Value,
    },
    Not {
        a: Box<FExpr>,
        mask: Value,
    },
    Neg {
        a: Box<FExpr>,
        mask: Value,
    },
    LNot(Box<FExpr>),
    LAnd(Box<FExpr>, Box<FExpr>),
    LOr(Box<FExpr>, Box<FExpr>),
    Bin {
        op: BinOp,
        a: Box<FExpr>,
        b: Box<FExpr>,
        width: u16,
        /// Operand width (comparisons), else the result width.
        ow: u16,
        signed: bool,
    },
    Slice {
        a: Box<FExpr>,
        lo: u16,
        mask: Value,
    },
    Concat {
        hi: Box<FExpr>,
        lo: Box<FExpr>,
        lo_width: u32,
        mask: Value,
    },
    /// Sign extension from `from` bits, then masked.
    Sext {
        a: Box<FExpr>,
        from: u16,
        mask: Value,
    },
    /// Truncation or zero extension.
    Mask {
        a: Box<FExpr>,
        mask: Value,
    },
    Ternary {
        cond: Box<FExpr>,
        then: Box<FExpr>,
        els: Box<FExpr>,
        mask: Value,
    },
    ChecksumVerify(u32),
    ChecksumGet(u32),
    /// Deparser `update({..})`: 16-bit ones'-complement checksum of the parts.
    ChecksumUpdate(Box<[CsPart]>),
    /// `hash.get({..})` of hasher `hash`: each input at its width, the result masked.
    Hash {
        hash: u32,
        inputs: Box<[(FExpr, u16)]>,
        mask: Value,
    },
    /// `ra.execute(index)` of a scalar RegisterAction, lowered for the native generator (the
    /// flat engine evaluates [`FSalu::tree`] through the tree interpreter, as before).
    Salu(Box<FSalu>),
    /// Inside a lowered RegisterAction body ([`FSalu::body`]): a word of the running cell,
    /// `word` 0/1 the value so far (`RegValue` lo/hi), 2/3 as read (`RegInput` lo/hi).
    RegWord {
        word: u8,
        width: u16,
    },
    /// `meter.execute(index[, color])` of meter `meter` (which exists): `index` for an
    /// indexed meter (a direct meter has none: it meters the running entry), `color` the
    /// pre-colour (see `Ctx::meter_with`). Width 8.
    Meter {
        meter: u32,
        index: Option<Box<FExpr>>,
        color: Option<Box<FExpr>>,
    },
    /// Evaluated by the tree interpreter (externs with state, parser lookahead, register words).
    Tree(Box<Expr>),
}

/// A RegisterAction run as an expression (`ra.execute(index)`), lowered: a scalar register
/// (one or two words of at most 64 bits), an index expression or a direct register's matched
/// entry, and a body of assignments and `if`s whose every expression is lowered (no
/// [`FExpr::Tree`] in it).
#[derive(Debug, Clone)]
pub struct FSalu {
    /// The expression as the IR has it: what the flat engine runs.
    pub tree: Expr,
    pub action: u32,
    pub register: u32,
    /// A direct register (its cell is the matched entry's; a miss accesses nothing).
    pub direct: bool,
    pub paired: bool,
    /// The register word's mask (its width).
    pub word_mask: Value,
    /// `rv`'s mask (the action's output width) and the expression's result mask.
    pub out_mask: Value,
    pub mask: Value,
    pub index: FExpr,
    pub body: Box<[SOp]>,
}

/// A statement of a lowered RegisterAction body.
#[derive(Debug, Clone)]
pub enum SOp {
    /// `value.lo/hi = e` (`word` 0/1), `rv = e` (2) or an extra output `rvN` (3: only its
    /// evaluation matters to an expression, which returns `rv`).
    Set { word: u8, e: FExpr },
    /// `if`; `nth` is its place among the body's `if`s in source order (what a trace hook
    /// finds it by).
    If {
        cond: FExpr,
        then: Box<[SOp]>,
        els: Box<[SOp]>,
        nth: u32,
    },
}

/// One piece of a checksum's input: a run of adjacent PHV bits, or one expression at its width.
#[derive(Debug, Clone)]
pub enum CsPart {
    Run {
        start: u32,
        width: u32,
    },
    Value {
        e: FExpr,
        width: u16,
    },
    /// An input whose width is only known while running (the tree interpreter decides).
    Tree(Box<Expr>),
}

/// What a table apply runs after the action, by outcome.
#[derive(Debug, Clone)]
pub enum FBranches {
    None,
    HitMiss {
        hit: Box<[Op]>,
        miss: Box<[Op]>,
    },
    ActionRun {
        cases: Box<[(ActionId, Box<[Op]>)]>,
        default: Box<[Op]>,
    },
}

/// A lowered table apply.
#[derive(Debug, Clone)]
pub struct FApply {
    pub table: u32,
    pub keys: Box<[FExpr]>,
    pub branches: FBranches,
}

/// A lowered statement.
#[derive(Debug, Clone)]
pub enum Op {
    /// `field = value`; `watch` has the bits of the watched TM fields this write sets.
    Set {
        f: FieldRef,
        e: FExpr,
        watch: u8,
    },
    SetConst {
        f: FieldRef,
        value: Value,
        watch: u8,
    },
    SetParam {
        f: FieldRef,
        index: u16,
        mask: Value,
        watch: u8,
    },
    /// `field[hi:lo] = value` (in range; out-of-range slices lower to nothing, as the tree does).
    SetSlice {
        f: FieldRef,
        e: FExpr,
        lo: u16,
        mask: Value,
        watch: u8,
    },
    SetValid {
        header: u32,
        valid: bool,
    },
    /// `dst = src` of two headers: PHV bytes `[src_off, src_off + len)` copied to `dst_off`
    /// (`len` the shorter header's), then `dst` valid exactly when `src` is.
    CopyHeader {
        dst: u32,
        src: u32,
        dst_off: u32,
        src_off: u32,
        len: u32,
    },
    /// `if`; `gate` indexes [`FlatGress::gates`] (what a trace shows of it).
    If {
        cond: FExpr,
        then: Box<[Op]>,
        els: Box<[Op]>,
        gate: u32,
    },
    Apply(Box<FApply>),
    Call {
        action: ActionId,
        args: Box<[FExpr]>,
    },
    Count {
        counter: u32,
        index: FExpr,
    },
    CountDirect {
        counter: u32,
    },
    Exit,
    Return,
    /// Deparser `emit` of a header at PHV bytes `[offset, offset + len)`.
    Emit {
        header: u32,
        offset: u32,
        len: u32,
    },
    /// Back-to-back `emit`s of headers lying one after another in the PHV (each part is
    /// header, offset, length): one copy when all are valid, else one per valid header.
    EmitRun {
        parts: Box<[(u32, u32, u32)]>,
        offset: u32,
        len: u32,
    },
    /// Parser `extract` into PHV bytes `[offset, offset + len)`.
    Extract {
        header: u32,
        offset: u32,
        len: u32,
    },
    /// Parser `extract(stack.next)`: element `next_index` of `elements` (each an
    /// [`Op::Extract`]), then `next_index` + 1; past the last element the parse ends
    /// ([`crate::exec::parser::STACK_FULL`]).
    ExtractNext {
        next_index: FieldRef,
        elements: Box<[Op]>,
    },
    AdvanceConst(u64),
    ChecksumAdd {
        checksum: u32,
        parts: Box<[CsPart]>,
        subtract: bool,
    },
    /// `digest.pack({fields})` of digest `digest` (see `Ctx::digest_pack`).
    Digest {
        digest: u32,
        fields: Box<[FExpr]>,
    },
    /// `mirror.emit(session, {header})`: each header value with its width (see
    /// `Ctx::mirror_request`).
    Mirror {
        session: FExpr,
        header: Box<[(FExpr, u16)]>,
    },
    /// Run by the tree interpreter.
    Tree(Box<Stmt>),
}

/// A lowered parser state transition.
#[derive(Debug, Clone)]
pub enum FTransition {
    Direct(NextState),
    Select {
        keys: Box<[FExpr]>,
        cases: Box<[(Box<[KeysetElem]>, NextState)]>,
        default: NextState,
    },
}

/// A lowered parser state.
#[derive(Debug, Clone)]
pub struct FState {
    pub body: Box<[Op]>,
    pub transition: FTransition,
}

/// A lowered parser.
#[derive(Debug, Clone)]
pub struct FParser {
    pub start: usize,
    pub states: Box<[FState]>,
}

/// One gress lowered: parser, control, deparser, and every action lowered against this
/// gress's watch list (indexed by action id).
#[derive(Debug, Clone)]
pub struct FlatGress {
    pub parser: FParser,
    pub control: Box<[Op]>,
    pub deparser: Box<[Op]>,
    pub actions: Box<[Box<[Op]>]>,
    /// Every `if` of the gress as the IR has it, by [`Op::If`]'s `gate`.
    pub gates: Box<[Gate]>,
}

/// What a trace shows of an `if`: its stage and its condition as written.
#[derive(Debug, Clone)]
pub struct Gate {
    pub stage: u8,
    pub cond: Expr,
}

/// A pipeline lowered: both gresses.
#[derive(Debug, Clone)]
pub struct FlatPipeline {
    pub ingress: FlatGress,
    pub egress: FlatGress,
}
