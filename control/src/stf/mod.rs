//! STF ("simple test framework"), the packet-test dialect of p4c's and bf-p4c's test suites:
//! a script of table writes, packets in, expected packets out and counter/register checks.
//!
//! [`parse`] reads a script into [`StfStmt`]s (one statement per line or several separated by
//! `;`, `#` comments, keywords in any case, names optionally in double quotes, errors with line
//! and column; [`decode`] reads a file's bytes lossily); [`run_stf`] / [`run_stf_on`] drive a
//! switch through it and return an [`StfReport`] (see `run.rs` for the matching rules).
//!
//! ```text
//! add ingress.t1 10 hdr.h.f1:0x****0101 hdr.h.f2:10.0.0.0/8 set_port(port:2) = A
//! add t1 priority:0x10 f1:1, set_port port:2   # the harness's looser operand forms
//! add ap 3 set_port(port:2)                    # member 3 of action profile `ap`
//! add ap_t hdr.h.b:7 set_port(3)               # an entry pointing at member 3
//! selector sel(1) add 3, 4                     # selector group 1: members 3 and 4
//! add sel_t hdr.h.b:8 $SELECTOR_GROUP_ID:1     # an entry pointing at group 1
//! setdefault t1 drop()
//! setenv PORT 2                                # `$PORT`, `${PORT}`, `${X:-1}` from here on
//! packet 0 0000 0000 0001 ...          # hex, groups may be split
//! expect $PORT 0000 **** 0001 ... $    # `*` any nibble, `$` nothing more (the rest unread)
//! expect 2 00 .0000**01                # the harness's byte written bit by bit
//! expect 3                             # port 3 may send any number of packets from now on
//! no_packet
//! wait; sleep 1                        # settle; settle after 1 s of virtual time
//! check_counter ingress.cnt(1) packets == 2
//! check_counter 0:ingress.acl_hits($A) bytes[15:0] > 0
//! check_counter ingress.cnt(2)         # no comparison: the value is printed
//! check_register ingress.r(3) hi & 0xff = 7
//! mirroring_add 5 3 / mirroring_add_mc 5 1
//! mc_mgrp_create 1 / mc_node_create 0 1 2 3 | 1 / mc_node_associate 1 0
//! wire 5 -> 6                          # what leaves port 5 comes back in on port 6
//! register_write ingress.r 3 7 / register_reset ingress.r / register_read ingress.r 3
//! remove all
//! ```
//!
//! The dialect is p4c's (tools/stf) and, where they differ, the Tofino model's STF harness's,
//! which bf-p4c's STF tests for TNA run on: `=` as well as `==`, a `PIPE:` prefix, `[hi:lo]`
//! and `& MASK` in checks, a counter or register read in the first pipe running it;
//! `expect PORT` without data; an omitted exact key matches 0 and an
//! omitted action parameter is 0 (noted); a ternary priority is a TCAM address (a second
//! entry at one with the same exact fields replaces the first); packets go in and come out
//! as written, with no MAC padding runts ([`StfOptions::min_frame`]); validity keys as `hdr.h.$valid$`, `hdr.h.$valid`,
//! `hdr.h.valid`, `hdr.h` or a lone `valid`, and key names with `.`/`$` written `_`;
//! `$NAME` expansion from the environment and `setenv` (`expand.rs`; `$(command)` is
//! refused: pisa runs no program a script names); a leading `0` octal and `-N` wrapping in
//! exact keys of all-exact tables and in action parameters, a ternary literal with `*`
//! zero-extended unless it starts with `*`, `a.b` / `a.b.c` IPv4 forms (`harness_values.rs`).
//! Where pisa keeps p4c's reading, a note says how the harness differs: an lpm priority
//! (the harness ranks lpm entries by it, pisa by prefix length, `run/lpm.rs`) and a prefix
//! after a value that is not a dotted IPv4 (`0x0b000000/8`: the harness drops it). `source FILE`
//! includes another script ([`parse_file`], `source.rs`); table and action names may be any
//! end of the full name, as the harness finds them (`crate::resolve`). Not read: `ghost` (an
//! error that says why: what it sets is not public),
//! `tcam_2bit_mode`, `write_raw_*`, `load`, `check_counter ... = VAR`; bmv2's `counter_*`,
//! `meter_*`, `mirroring_delete/get`, `mc_node_update`; `*` inside an lpm value
//! (`0x0a**0102`, not a prefix: refused).
//!
//! Beyond both, values may be any form [`crate::value`] reads (MAC and IP addresses,
//! `lo..hi` ranges, `v &&& mask`), and `mc_prune_set XID PORT...` programs the PRE's L2
//! exclusion table (Tofino's `$pre.prune`, which bmv2 lacks).

mod cursor;
mod entries;
mod expand;
mod expect;
mod harness_values;
mod lines;
mod parse;
mod parse_check;
mod parse_write;
mod report;
mod run;
mod source;

pub use cursor::StfParseError;
pub use expect::{ExpectPattern, Nibble};
pub use lines::decode;
pub use parse::{parse, parse_file, parse_file_with_env, parse_with_env};
pub use report::{Check, CheckKind, CheckOutcome, Note, StfReport, StmtError, Unexpected};
pub use run::{run_stf, run_stf_on, StfOptions};
pub use source::{read_script, MAX_SCRIPT_BYTES, MAX_SOURCES, MAX_SOURCE_DEPTH};

/// A value as written in the script, with the column it starts at (1-based) for error messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Arg {
    /// Key field path or action parameter name.
    pub name: String,
    /// The value text, unparsed: its width is only known once the program is at hand.
    pub value: String,
    pub column: usize,
}

/// `NAME(ARG:VALUE, ...)`, or the harness's `NAME ARG:VALUE ...` without parentheses.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ActionSpec {
    pub name: String,
    pub args: Vec<Arg>,
    /// `NAME(ADDR ...)` or `$ACTION_MEMBER_ID:ADDR`: the action-data address (an action
    /// profile's member) the entry uses.
    pub member: Option<u32>,
    /// `$SELECTOR_GROUP_ID:G` (BfRt's field name): the selector group the entry uses.
    pub group: Option<u32>,
}

/// The cell a `check_counter` / `check_register` reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CellRef {
    Index(u32),
    /// `$NAME` or `NAME`: the entry an `add ... = NAME` named (direct counters and registers).
    Entry(String),
}

/// Which count of a counter `check_counter` compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CountKind {
    Packets,
    Bytes,
}

/// What `check_counter` / `check_register` do with the value they read: `[hi:lo]` keeps
/// bits hi..lo, `& MASK` masks, then the comparison; no comparison prints the value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ValueTest {
    pub slice: Option<(u32, u32)>,
    pub mask: Option<u128>,
    pub cmp: Option<(CmpOp, u128)>,
}

impl ValueTest {
    /// The read value with the slice and the mask applied.
    pub fn select(&self, got: u128) -> u128 {
        let mut v = got;
        if let Some((hi, lo)) = self.slice {
            let width = hi.saturating_sub(lo) + 1;
            v = v.checked_shr(lo).unwrap_or(0);
            if width < 128 {
                v &= (1u128 << width) - 1;
            }
        }
        self.mask.map_or(v, |m| v & m)
    }

    /// The text after the field (` [7:0] & 0xf == 3`), for reports.
    pub fn text(&self) -> String {
        let mut s = String::new();
        if let Some((hi, lo)) = self.slice {
            s.push_str(&format!("[{hi}:{lo}]"));
        }
        if let Some(m) = self.mask {
            s.push_str(&format!(" & {m:#x}"));
        }
        if let Some((op, v)) = self.cmp {
            s.push_str(&format!(" {} {v}", op.symbol()));
        }
        s
    }
}

/// Comparison operators of `check_counter`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CmpOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl CmpOp {
    pub fn holds(self, got: u128, want: u128) -> bool {
        match self {
            CmpOp::Eq => got == want,
            CmpOp::Ne => got != want,
            CmpOp::Lt => got < want,
            CmpOp::Le => got <= want,
            CmpOp::Gt => got > want,
            CmpOp::Ge => got >= want,
        }
    }

    pub fn symbol(self) -> &'static str {
        match self {
            CmpOp::Eq => "==",
            CmpOp::Ne => "!=",
            CmpOp::Lt => "<",
            CmpOp::Le => "<=",
            CmpOp::Gt => ">",
            CmpOp::Ge => ">=",
        }
    }
}

/// One statement of a script.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stmt {
    /// `add TABLE [PRIORITY] KEY:VALUE ... ACTION(ARGS) [= NAME]`. STF priorities: a larger
    /// number wins (p4c's bmv2 runner turns them around for simple_switch, whose smaller wins).
    Add {
        table: String,
        priority: Option<u32>,
        keys: Vec<Arg>,
        action: ActionSpec,
        name: Option<String>,
    },
    /// `setdefault TABLE ACTION(ARGS)`.
    SetDefault { table: String, action: ActionSpec },
    /// `remove all`: every entry the script added, from every table.
    RemoveAll,
    /// `packet PORT HEX...`.
    Packet { port: u16, data: Vec<u8> },
    /// `expect PORT [HEX...] [$]`; `pattern: None` (the harness's `expect PORT`): from now on
    /// the port may send any number of packets beyond those expected with data.
    Expect {
        port: u16,
        pattern: Option<ExpectPattern>,
    },
    /// `no_packet`: no packet may leave the switch unexpected before the next `wait`.
    NoPacket,
    /// `wait`: in-flight packets drain; expectations so far are settled.
    Wait,
    /// `sleep SECONDS` (the harness's): a `wait` that lets this much virtual time pass.
    Sleep { ns: u64 },
    /// `check_counter [PIPE:]NAME(INDEX) [packets|bytes][[hi:lo]] [& MASK] [OP VALUE]`.
    CheckCounter {
        counter: String,
        pipe: Option<u16>,
        cell: CellRef,
        kind: CountKind,
        test: ValueTest,
    },
    /// `check_register [PIPE:]NAME(INDEX) [FIELD][[hi:lo]] [& MASK] [OP VALUE]`.
    CheckRegister {
        register: String,
        pipe: Option<u16>,
        cell: CellRef,
        field: Option<String>,
        test: ValueTest,
    },
    /// `register_write NAME INDEX VALUE` (bmv2's CLI form): the cell's (low) word.
    RegisterWrite {
        register: String,
        index: u32,
        value: u128,
    },
    /// `register_reset NAME`: every cell back to the register's initial value.
    RegisterReset { register: String },
    /// `wire FROM -> TO` (the harness's): packets out of FROM come back in on TO, and FROM
    /// may send any number of packets unexpected (as after `expect FROM`).
    Wire { from: u16, to: u16 },
    /// `mirroring_add SESSION PORT`.
    MirroringAdd { session: u16, port: u16 },
    /// `mirroring_add_mc SESSION MGID`.
    MirroringAddMc { session: u16, mgid: u16 },
    /// `selector [PIPE:]NAME(GROUP) add|remove MEMBER[, MEMBER]...` (the harness's): members
    /// join or leave a selector group (created on first use).
    Selector {
        selector: String,
        pipe: Option<u16>,
        group: u32,
        remove: bool,
        members: Vec<u32>,
    },
    /// `mc_mgrp_create MGID`.
    McMgrpCreate { mgid: u16 },
    /// `mc_node_create RID PORT... [| LAG...]`: the node gets the next handle (0, 1, 2, ... as
    /// in bmv2); LAG ids after `|` (simple_switch_CLI's form).
    McNodeCreate {
        rid: u16,
        ports: Vec<u16>,
        lags: Vec<u8>,
    },
    /// `mc_node_associate MGID HANDLE`.
    McNodeAssociate { mgid: u16, node: u32 },
    /// `mc_prune_set XID PORT...` (a pisa extension, BfRt's `$pre.prune`): copies of a packet
    /// whose `level2_exclusion_id` is XID skip these ports.
    McPruneSet { xid: u16, ports: Vec<u16> },
}

/// A statement with the line it was read from (1-based).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StfStmt {
    pub line: usize,
    pub stmt: Stmt,
}
