//! The STF runner: drives a [`Switch`] through a script and collects a [`StfReport`].
//!
//! Semantics (p4c's bmv2 runner is the reference where STF is silent):
//! - Statements run in order. Each `packet` is processed at once, at a virtual time that
//!   advances by [`StfOptions::packet_gap_ns`] per packet; what leaves is queued per port.
//! - Expectations are matched per port in order: the n-th `expect` on a port is compared with
//!   the n-th packet out of that port, whether it was written before or after the `packet`.
//!   A pattern is a prefix unless it ends in `$`. `expect PORT` alone (the Tofino harness's
//!   form) takes no packet: from then on, packets on PORT beyond those expected with data are
//!   let through (noted, not failed), any number of them, zero included.
//! - `wait`, `sleep N` (and the end of the script) settle: expectations with no packet fail as missing,
//!   packets with no expectation are reported as unexpected, and every `no_packet` since the
//!   previous `wait` fails if there were any.
//! - `add` priorities follow STF: a larger number wins; entries without one rank below every
//!   entry with one, in insertion order. (The switch's `$MATCH_PRIORITY` is the reverse.)
//!   Priorities given for tables that take none are ignored, as p4c's runner does. On a
//!   table that takes one, the priority is the harness's TCAM address: an `add` at a priority
//!   another entry of the script holds replaces that entry.
//! - `add` as the harness reads it: an omitted exact key matches 0, an omitted parameter is
//!   0, a value wider than its key or parameter keeps its low bits (each noted, see
//!   `entries.rs`). `add PROFILE ADDR ACT(...)` sets member ADDR of an action profile;
//!   `add T KEYS ACT(ADDR)` (or `$ACTION_MEMBER_ID:ADDR`) points an entry at that member,
//!   `add T KEYS $SELECTOR_GROUP_ID:G` at selector group G, whose members the harness's
//!   `selector SEL(G) add|remove MEMBER...` sets (see `run/profiles.rs`).
//! - `check_counter` and `check_register` read the lowest pipe running the counter or
//!   register (the harness's "first pipe where it is present"); a `PIPE:` prefix reads that
//!   pipe. Without a comparison the
//!   value is noted, never checked.
//! - `wire FROM -> TO` (the harness's): packets out of FROM come back in on TO (and FROM lets
//!   any number through, as after `expect FROM`); bmv2's `register_write NAME INDEX VALUE`,
//!   `register_reset NAME` and `register_read NAME INDEX` (printed) work on TNA registers.
//! - `mc_node_create` numbers nodes 0, 1, 2, ... in script order, like bmv2's handles.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::Arc;

use pipeline::api::{PipeSel, TableEntry};
use pipeline::ir::{KeyMatch, Program};
use pipeline::switch::{InFrame, Switch, SwitchConfig, DEFAULT_CPU_PORT};
use pipeline::tm::mirror::{MirrorDest, MirrorDirection, MirrorSession};

use super::report::{Check, CheckKind, CheckOutcome, Note, StfReport, StmtError, Unexpected};
use super::{
    entries, ActionSpec, Arg, CellRef, CountKind, ExpectPattern, StfStmt, Stmt, ValueTest,
};
use crate::resolve::{self, ResolveError};
use pipeline::table::profile::EntryRef;

mod lpm;
mod profiles;

/// How to run a script.
#[derive(Debug, Clone)]
pub struct StfOptions {
    /// The switch [`run_stf`] builds: by default one pipe with the CPU port `pisa run` has
    /// ([`DEFAULT_CPU_PORT`]), so a script can `expect` a `copy_to_cpu` copy there (and an
    /// unexpected one is reported like any other packet).
    pub config: SwitchConfig,
    /// Virtual time of the first packet, in ns.
    pub start_ns: u64,
    /// Virtual time between two packets, in ns.
    pub packet_gap_ns: u64,
    /// Virtual time a `wait` lets pass, in ns.
    pub wait_ns: u64,
    /// The switch's minimum frame while the script runs (`None`: as configured). By default 0:
    /// the runners of p4c and bf-p4c (bmv2, the Tofino model's harness) put a script's packets
    /// into the pipeline as written and compare what comes out unpadded, with no MAC between.
    pub min_frame: Option<usize>,
}

impl Default for StfOptions {
    fn default() -> StfOptions {
        StfOptions {
            config: SwitchConfig::default().with_cpu_port(DEFAULT_CPU_PORT),
            start_ns: 0,
            packet_gap_ns: 1_000,
            wait_ns: 1_000_000,
            min_frame: Some(0),
        }
    }
}

/// Builds a switch for `program` with `opts.config` and runs the script on it.
pub fn run_stf(program: Arc<Program>, stf: &[StfStmt], opts: &StfOptions) -> StfReport {
    match Switch::new(program, opts.config.clone()) {
        Ok(mut sw) => run_stf_on(&mut sw, stf, opts),
        Err(e) => StfReport {
            errors: vec![StmtError {
                line: 0,
                column: None,
                message: format!("the switch could not be built: {e}"),
            }],
            ..StfReport::default()
        },
    }
}

/// Runs the script on a switch that already exists (e.g. one a table file has programmed).
pub fn run_stf_on(sw: &mut Switch, stf: &[StfStmt], opts: &StfOptions) -> StfReport {
    if let Some(bytes) = opts.min_frame {
        sw.set_min_frame(bytes);
    }
    attach_watched_ports(sw, stf);
    let mut r = Runner {
        prog: sw.program().clone(),
        sw,
        now: opts.start_ns,
        gap: opts.packet_gap_ns,
        report: StfReport::default(),
        expects: BTreeMap::new(),
        outputs: BTreeMap::new(),
        no_packet: Vec::new(),
        added: Vec::new(),
        named: HashMap::new(),
        next_node: 0,
        any_ports: BTreeMap::new(),
        wires: BTreeMap::new(),
    };
    for s in stf {
        r.statement(s);
        match s.stmt {
            Stmt::Wait => r.now = r.now.saturating_add(opts.wait_ns),
            Stmt::Sleep { ns } => r.now = r.now.saturating_add(ns),
            _ => {}
        }
    }
    r.settle();
    let mut report = r.report;
    report.checks.sort_by_key(|c| c.line);
    report
}

/// The ports a script watches (`expect PORT`, `wire FROM -> ...`) are the harness's ports, with
/// a MAC behind them: front-panel ports, also where the target would loop them back by
/// default (Tofino 2's ports 0–7 of each pipe, Tofino 1's 68–71), as on a model or chip the
/// harness adds them before sending. A port the script only recirculates through stays a
/// loopback port.
fn attach_watched_ports(sw: &mut Switch, stf: &[StfStmt]) {
    let target = sw.program().target;
    for s in stf {
        let port = match s.stmt {
            Stmt::Expect { port, .. } | Stmt::Wire { from: port, .. } => port,
            _ => continue,
        };
        if sw.config().is_loopback(target, port) {
            sw.set_front_panel(port);
        }
    }
}

/// An entry the script added, to delete on `remove all` or to name in `check_counter`.
#[derive(Debug, Clone)]
struct Added {
    table: String,
    entry: TableEntry,
    /// The priority the script gave (on an lpm table, where the switch ignores it).
    stf_priority: Option<u32>,
    line: usize,
}

struct Runner<'a> {
    sw: &'a mut Switch,
    prog: Arc<Program>,
    now: u64,
    gap: u64,
    report: StfReport,
    expects: BTreeMap<u16, VecDeque<(usize, Option<ExpectPattern>)>>,
    /// Packets out per port, with the line of the `packet` that caused them.
    outputs: BTreeMap<u16, VecDeque<(Vec<u8>, usize)>>,
    no_packet: Vec<usize>,
    added: Vec<Added>,
    named: HashMap<String, Added>,
    next_node: u32,
    /// Ports an `expect PORT` without data opened to any number of packets, with its line.
    any_ports: BTreeMap<u16, usize>,
    /// `wire FROM -> TO`.
    wires: BTreeMap<u16, u16>,
}

/// Passes of one `packet` through wired ports before the loop is cut.
const MAX_WIRE_PASSES: usize = 64;

/// Key fields by name, borrowed as the switch API takes them.
fn key_refs(keys: &[(String, KeyMatch)]) -> Vec<(&str, KeyMatch)> {
    keys.iter().map(|(k, m)| (k.as_str(), *m)).collect()
}

fn pairs(args: &[Arg]) -> impl Iterator<Item = (&str, &str)> {
    args.iter().map(|a| (a.name.as_str(), a.value.as_str()))
}

fn pipe_text(p: PipeSel) -> String {
    match p {
        PipeSel::All => String::new(),
        PipeSel::Pipe(n) => format!("{n}:"),
    }
}

fn cell_text(c: &CellRef) -> String {
    match c {
        CellRef::Index(i) => i.to_string(),
        CellRef::Entry(n) => format!("${n}"),
    }
}

impl Runner<'_> {
    fn error(&mut self, line: usize, column: Option<usize>, message: String) {
        self.report.errors.push(StmtError {
            line,
            column,
            message,
        });
    }

    fn statement(&mut self, s: &StfStmt) {
        let line = s.line;
        let res: Result<(), (Option<usize>, String)> = match &s.stmt {
            Stmt::Add {
                table,
                priority,
                keys,
                action,
                name,
            } => self.add(line, table, *priority, keys, action, name.as_deref()),
            Stmt::SetDefault { table, action } => self.set_default(table, action),
            other => self.control(other, line).map_err(|m| (None, m)),
        };
        if let Err((column, message)) = res {
            self.error(line, column, message);
        }
    }

    /// Statements other than table writes.
    fn control(&mut self, stmt: &Stmt, line: usize) -> Result<(), String> {
        match stmt {
            Stmt::RemoveAll => {
                self.remove_all();
                Ok(())
            }
            Stmt::Packet { port, data } => {
                // A frame on a port the switch lacks never arrives: say so at its line rather
                // than let it vanish (`pisa run --in` refuses such a port the same way).
                self.sw
                    .check_port(*port)
                    .map_err(|e| format!("packet on ingress port {port}: {e}"))?;
                // No port carries a longer frame (`pisa run` drops one, counted as too long):
                // refused at its line rather than queued, dropped by the TM, and forgotten.
                let max = dataplane::port::MAX_FRAME_LEN;
                if data.len() > max {
                    return Err(format!(
                        "packet of {} bytes on port {port}: longer than the largest frame a \
                         port carries ({max} bytes: a 9,216-byte jumbo payload, Ethernet header \
                         and two VLAN tags)",
                        data.len()
                    ));
                }
                self.packet(line, *port, data);
                Ok(())
            }
            Stmt::Expect {
                port,
                pattern: None,
            } => {
                self.any_ports.insert(*port, line);
                Ok(())
            }
            Stmt::Expect { port, pattern } => {
                self.expects
                    .entry(*port)
                    .or_default()
                    .push_back((line, pattern.clone()));
                self.pair();
                Ok(())
            }
            Stmt::NoPacket => {
                self.no_packet.push(line);
                Ok(())
            }
            Stmt::Wait | Stmt::Sleep { .. } => {
                self.settle();
                Ok(())
            }
            Stmt::CheckCounter {
                counter,
                pipe,
                cell,
                kind,
                test,
            } => {
                let pipes = pipe.map_or(PipeSel::All, PipeSel::Pipe);
                self.check_counter(line, counter, pipes, cell, *kind, test);
                Ok(())
            }
            Stmt::CheckRegister {
                register,
                pipe,
                cell,
                field,
                test,
            } => {
                let pipes = pipe.map_or(PipeSel::All, PipeSel::Pipe);
                self.check_register(line, register, pipes, cell, field.as_deref(), test);
                Ok(())
            }
            Stmt::MirroringAdd { session, port } => self.mirror(*session, MirrorDest::Port(*port)),
            Stmt::MirroringAddMc { session, mgid } => self.mirror(
                *session,
                MirrorDest::Multicast {
                    mcast_grp_a: Some(*mgid),
                    mcast_grp_b: None,
                    level1_exclusion_id: 0,
                    level2_exclusion_id: 0,
                    rid: 0,
                    level1_mcast_hash: 0,
                    level2_mcast_hash: 0,
                },
            ),
            Stmt::McMgrpCreate { mgid } => self
                .sw
                .mc_group_create(*mgid)
                .map_err(|e| format!("mc_mgrp_create {mgid}: {e}")),
            Stmt::McNodeCreate { rid, ports, lags } => {
                let node = self.next_node;
                self.next_node += 1;
                self.sw
                    .mc_node_create(node, *rid, ports, lags)
                    .map_err(|e| format!("mc_node_create (node {node}): {e}"))
            }
            Stmt::McNodeAssociate { mgid, node } => self
                .sw
                .mc_group_add_node(*mgid, *node, None)
                .map_err(|e| format!("mc_node_associate {mgid} {node}: {e}")),
            Stmt::RegisterWrite {
                register,
                index,
                value,
            } => self
                .sw
                .register_write(PipeSel::All, register, *index, *value, None)
                .map_err(|e| format!("register_write {register}: {e}")),
            Stmt::RegisterReset { register } => self
                .sw
                .register_reset(PipeSel::All, register)
                .map_err(|e| format!("register_reset {register}: {e}")),
            Stmt::Wire { from, to } => {
                self.sw
                    .check_port(*to)
                    .map_err(|e| format!("wire {from} -> {to}: {e}"))?;
                self.wires.insert(*from, *to);
                self.any_ports.insert(*from, line);
                Ok(())
            }
            Stmt::Selector {
                selector,
                pipe,
                group,
                remove,
                members,
            } => {
                let pipes = pipe.map_or(PipeSel::All, PipeSel::Pipe);
                self.selector(selector, pipes, *group, *remove, members)
            }
            Stmt::McPruneSet { xid, ports } => self
                .sw
                .mc_prune_set(*xid, ports)
                .map_err(|e| format!("mc_prune_set {xid}: {e}")),
            Stmt::Add { .. } | Stmt::SetDefault { .. } => Ok(()),
        }
    }

    /// The column of the key or argument an `add` failed on, when one value is to blame.
    fn culprit(&self, table: &str, keys: &[Arg], action: &ActionSpec) -> Option<usize> {
        let t = resolve::find_table(&self.prog, table).ok()?;
        let pl = &self.prog.pipelines[t.pipeline];
        let ir_table = resolve::table(&self.prog, t)?;
        for a in keys {
            match resolve::build_key(ir_table, [(a.name.as_str(), a.value.as_str())]) {
                Ok(_) | Err(ResolveError::MissingKey { .. }) => {}
                Err(_) => return Some(a.column),
            }
        }
        let usage = resolve::ActionUse::Entry;
        match resolve::build_action(pl, ir_table, &action.name, [], usage) {
            Ok(_) | Err(ResolveError::MissingParam { .. }) => {}
            Err(_) => return None,
        }
        action.args.iter().find_map(|a| {
            match resolve::build_action(
                pl,
                ir_table,
                &action.name,
                [(a.name.as_str(), a.value.as_str())],
                usage,
            ) {
                Ok(_) | Err(ResolveError::MissingParam { .. }) => None,
                Err(_) => Some(a.column),
            }
        })
    }

    fn note(&mut self, line: usize, message: String) {
        self.report.notes.push(Note { line, message });
    }

    #[allow(clippy::too_many_arguments)]
    fn add(
        &mut self,
        line: usize,
        table: &str,
        priority: Option<u32>,
        keys: &[Arg],
        action: &ActionSpec,
        name: Option<&str>,
    ) -> Result<(), (Option<usize>, String)> {
        let fail = |e: &dyn std::fmt::Display| (None, format!("add {table}: {e}"));
        let t = match resolve::find_table(&self.prog, table) {
            // `add PROFILE ADDR ACTION(...)`: the harness's action-data entry, a member.
            Err(_) if resolve::find_profile(&self.prog, table).is_ok() => {
                return self
                    .add_member(table, priority, action)
                    .map_err(|e| fail(&e))
            }
            other => other.map_err(|e| fail(&e))?,
        };
        let prog = self.prog.clone();
        let ir_table = resolve::table(&prog, t).ok_or_else(|| fail(&"table vanished"))?;
        let stf_priority = priority;
        // STF: larger wins, absent = lowest; the switch: smaller wins.
        let priority = resolve::needs_priority(ir_table).then(|| u32::MAX - priority.unwrap_or(0));
        let mut notes = Vec::new();
        let mut keys = entries::fit_keys(ir_table, keys, &mut notes);
        let mut args = entries::fit_args(&self.prog, table, &action.name, &action.args, &mut notes);
        let target = profiles::entry_ref(action);
        let (full, entry) = loop {
            let res = match target {
                Some(x) => self.resolve_ref(table, &keys, priority, x),
                None => resolve::resolve_entry(
                    &self.prog,
                    table,
                    pairs(&keys),
                    priority,
                    &action.name,
                    pairs(&args),
                ),
            };
            match res {
                Ok(x) => break x,
                Err(e) if entries::fill_missing(&e, &mut keys, &mut args, &mut notes) => {}
                Err(e) => return Err((self.culprit(table, &keys, action), fail(&e).1)),
            }
        };
        for n in notes {
            self.note(line, format!("add {table}: {n}"));
        }
        if let (Some(stf), Some(_)) = (stf_priority, priority) {
            self.replace_same_priority(line, &full, &entry, stf);
        }
        if let (Some(stf), None) = (stf_priority, priority) {
            self.lpm_priority_note(line, ir_table, &full, &entry, stf);
        }
        self.insert(&full, &entry, target).map_err(|e| fail(&e))?;
        let added = Added {
            table: full,
            entry,
            stf_priority,
            line,
        };
        if let Some(n) = name {
            self.named.insert(n.to_string(), added.clone());
        }
        self.added.push(added);
        Ok(())
    }

    /// Writes an entry; an `add` of a key already there modifies it (as p4c's runners do).
    fn insert(
        &mut self,
        full: &str,
        entry: &TableEntry,
        target: Option<EntryRef>,
    ) -> Result<(), pipeline::api::ApiError> {
        use pipeline::api::ApiError::DuplicateEntry;
        let k = key_refs(&entry.keys);
        let prio = entry.priority;
        if let Some(x) = target {
            match self.sw.table_add_ref(PipeSel::All, full, &k, prio, x) {
                Err(DuplicateEntry { .. }) => {
                    self.sw.table_modify_ref(PipeSel::All, full, &k, prio, x)?
                }
                other => other?,
            }
        } else {
            match self.sw.table_add_entry(PipeSel::All, full, entry) {
                Err(DuplicateEntry { .. }) => {
                    let p: Vec<(&str, u128)> =
                        entry.params.iter().map(|(n, v)| (n.as_str(), *v)).collect();
                    self.sw
                        .table_modify(PipeSel::All, full, &k, prio, &entry.action, &p)?;
                }
                other => other?,
            }
        }
        // A modified entry is recorded once.
        self.added.retain(|a| {
            !(a.table == full && a.entry.keys == entry.keys && a.entry.priority == entry.priority)
        });
        Ok(())
    }

    /// The harness's priority is a TCAM address: an entry the script put at the same one
    /// (with another key) is replaced, deleted here before the new one goes in. Entries whose
    /// exact fields differ (an ATCAM's partition index) sit in different TCAMs and stay.
    fn replace_same_priority(&mut self, line: usize, full: &str, entry: &TableEntry, stf: u32) {
        let exact = |keys: &[(String, KeyMatch)]| -> Vec<(String, KeyMatch)> {
            let mut v: Vec<_> = keys
                .iter()
                .filter(|(_, m)| matches!(m, KeyMatch::Exact(_)))
                .cloned()
                .collect();
            v.sort_by(|a, b| a.0.cmp(&b.0));
            v
        };
        let mine = exact(&entry.keys);
        let same = |a: &Added| {
            a.table == full
                && a.entry.priority == entry.priority
                && a.entry.keys != entry.keys
                && exact(&a.entry.keys) == mine
        };
        let old: Vec<Added> = self.added.iter().filter(|a| same(a)).cloned().collect();
        for a in old {
            let keys = key_refs(&a.entry.keys);
            let _ = self
                .sw
                .table_delete(PipeSel::All, &a.table, &keys, a.entry.priority);
            self.note(
                line,
                format!(
                    "add {full}: replaces the entry at priority {stf} (the harness's TCAM address)"
                ),
            );
        }
        self.added.retain(|a| !same(a));
        self.named.retain(|_, a| !same(a));
    }

    fn set_default(
        &mut self,
        table: &str,
        action: &ActionSpec,
    ) -> Result<(), (Option<usize>, String)> {
        let fail = |e: &dyn std::fmt::Display| (None, format!("setdefault {table}: {e}"));
        let def = resolve::resolve_default(&self.prog, table, &action.name, pairs(&action.args))
            .map_err(|e| fail(&e))?;
        let params: Vec<(&str, u128)> = def.params.iter().map(|(k, v)| (k.as_str(), *v)).collect();
        self.sw
            .table_set_default(PipeSel::All, &def.table, &def.action, &params)
            .map_err(|e| fail(&e))
    }

    fn remove_all(&mut self) {
        for a in std::mem::take(&mut self.added) {
            let keys = key_refs(&a.entry.keys);
            // An entry already gone is fine: the goal is an empty table.
            let _ = self
                .sw
                .table_delete(PipeSel::All, &a.table, &keys, a.entry.priority);
        }
        self.named.clear();
    }

    fn mirror(&mut self, session: u16, dest: MirrorDest) -> Result<(), String> {
        self.sw
            .mirror_session_set(
                session,
                MirrorSession {
                    direction: MirrorDirection::Both,
                    dest,
                    max_len: None,
                    enabled: true,
                },
            )
            .map_err(|e| format!("mirroring session {session}: {e}"))
    }

    /// Sends a packet; what leaves a `wire`d port comes back in on its other end (at most
    /// [`MAX_WIRE_PASSES`] passes per `packet`, noted when cut).
    fn packet(&mut self, line: usize, port: u16, data: &[u8]) {
        let mut queue = VecDeque::from([(port, data.to_vec())]);
        let mut passes = 0;
        while let Some((port, bytes)) = queue.pop_front() {
            if passes == MAX_WIRE_PASSES {
                let msg = format!("wired ports looped {MAX_WIRE_PASSES} times: stopped");
                self.note(line, msg);
                break;
            }
            passes += 1;
            let ts = self.now;
            self.now = self.now.saturating_add(self.gap);
            let (outputs, wires) = (&mut self.outputs, &self.wires);
            let frame = InFrame {
                port,
                bytes: &bytes,
                ts,
            };
            self.sw.process(frame, &mut |o| {
                if let Some(&to) = wires.get(&o.port) {
                    queue.push_back((to, o.bytes.clone()));
                }
                outputs
                    .entry(o.port)
                    .or_default()
                    .push_back((o.bytes, line));
            });
        }
        self.pair();
    }

    /// Matches waiting expectations with packets, per port, in order.
    fn pair(&mut self) {
        for (port, exp) in self.expects.iter_mut() {
            let Some(out) = self.outputs.get_mut(port) else {
                continue;
            };
            while !exp.is_empty() && !out.is_empty() {
                let (Some((line, pattern)), Some((mut got, packet_line))) =
                    (exp.pop_front(), out.pop_front())
                else {
                    break;
                };
                // An exact expectation shorter than Ethernet's minimum frame describes the
                // frame before the MAC padded it (STF files, like scapy, write packets
                // unpadded): zeros the switch's MAC added past it are padding, not a mismatch.
                if let Some(p) = pattern.as_ref().filter(|p| p.exact) {
                    let (want, min) = (p.byte_len(), self.sw.config().min_frame);
                    if want < min && got.len() == min && got[want..].iter().all(|b| *b == 0) {
                        got.truncate(want);
                    }
                }
                let ok = pattern.as_ref().is_none_or(|p| p.matches(&got));
                self.report.checks.push(Check {
                    line,
                    kind: CheckKind::Packet {
                        port: *port,
                        pattern,
                    },
                    outcome: if ok {
                        CheckOutcome::Passed
                    } else {
                        CheckOutcome::Mismatch { got, packet_line }
                    },
                });
            }
        }
    }

    /// Ends a `wait` segment: what is still unmatched fails or is unexpected.
    fn settle(&mut self) {
        self.pair();
        for (port, exp) in std::mem::take(&mut self.expects) {
            for (line, pattern) in exp {
                self.report.checks.push(Check {
                    line,
                    kind: CheckKind::Packet { port, pattern },
                    outcome: CheckOutcome::Missing,
                });
            }
        }
        let mut count = 0;
        for (port, out) in std::mem::take(&mut self.outputs) {
            if let Some(&line) = self.any_ports.get(&port) {
                let n = out.len();
                let msg =
                    format!("{n} more packets out of port {port}, let through by `expect {port}`");
                self.note(line, msg);
                continue;
            }
            for (bytes, packet_line) in out {
                count += 1;
                self.report.unexpected.push(Unexpected {
                    port,
                    bytes,
                    packet_line,
                });
            }
        }
        for line in std::mem::take(&mut self.no_packet) {
            self.report.checks.push(Check {
                line,
                kind: CheckKind::NoPacket,
                outcome: if count == 0 {
                    CheckOutcome::Passed
                } else {
                    CheckOutcome::UnexpectedPackets { count }
                },
            });
        }
    }

    /// Records a counter or register check: compared when the test has a comparison, else
    /// noted with the value read (the harness prints it).
    fn value_check(
        &mut self,
        line: usize,
        what: String,
        test: &ValueTest,
        read: Result<u128, String>,
    ) {
        let outcome = match (read, test.cmp) {
            (Err(message), _) => CheckOutcome::Error { message },
            (Ok(got), None) => {
                let v = test.select(got);
                self.note(line, format!("{what}: {v} ({v:#x})"));
                return;
            }
            (Ok(got), Some((op, want))) => {
                let v = test.select(got);
                if op.holds(v, want) {
                    CheckOutcome::Passed
                } else {
                    CheckOutcome::ValueMismatch { got: v }
                }
            }
        };
        self.report.checks.push(Check {
            line,
            kind: CheckKind::Value { what },
            outcome,
        });
    }

    fn check_counter(
        &mut self,
        line: usize,
        counter: &str,
        pipes: PipeSel,
        cell: &CellRef,
        kind: CountKind,
        test: &ValueTest,
    ) {
        let what = format!(
            "check_counter {}{counter}({}) {}{}",
            pipe_text(pipes),
            cell_text(cell),
            match kind {
                CountKind::Packets => "packets",
                CountKind::Bytes => "bytes",
            },
            test.text()
        );
        let read = match cell {
            CellRef::Index(i) => self
                .sw
                .counter_read(pipes, counter, *i)
                .map_err(|e| e.to_string()),
            CellRef::Entry(n) => match self.named.get(n) {
                None => Err(format!(
                    "no entry named `{n}` (name one with `add ... = {n}`)"
                )),
                Some(a) => self.direct_counter_of(counter, pipes, n, a),
            },
        };
        // The first pipe running the counter (the only one a `PIPE:` prefix selects), as the
        // harness reads it.
        let read = read.and_then(|cells| {
            let c = cells
                .first()
                .ok_or_else(|| format!("no pipe runs counter {counter}"))?;
            Ok(u128::from(match kind {
                CountKind::Packets => c.packets,
                CountKind::Bytes => c.bytes,
            }))
        });
        self.value_check(line, what, test, read);
    }

    /// Reads the direct counter `counter` for the named entry `a`, checking that the counter
    /// belongs to the entry's table.
    fn direct_counter_of(
        &self,
        counter: &str,
        pipes: PipeSel,
        entry_name: &str,
        a: &Added,
    ) -> Result<Vec<pipeline::api::CounterValue>, String> {
        let c = resolve::find_counter(&self.prog, counter).map_err(|e| e.to_string())?;
        let pl = &self.prog.pipelines[c.pipeline];
        let ctr = &pl.counters[c.index];
        let owner = ctr
            .direct_table
            .and_then(|t| pl.tables.get(t.index()))
            .map(|t| t.name.as_str());
        if owner != Some(a.table.as_str()) {
            return Err(format!(
                "counter {} is not the direct counter of table {} (the table of entry `{entry_name}`)",
                ctr.name, a.table
            ));
        }
        let keys = key_refs(&a.entry.keys);
        self.sw
            .direct_counter_read(pipes, &a.table, &keys, a.entry.priority)
            .map_err(|e| e.to_string())
    }

    fn check_register(
        &mut self,
        line: usize,
        register: &str,
        pipes: PipeSel,
        cell: &CellRef,
        field: Option<&str>,
        test: &ValueTest,
    ) {
        let what = format!(
            "check_register {}{register}({}){}{}",
            pipe_text(pipes),
            cell_text(cell),
            field.map(|f| format!(" {f}")).unwrap_or_default(),
            test.text()
        );
        let read = self.read_register(register, pipes, cell, field);
        self.value_check(line, what, test, read);
    }

    fn read_register(
        &self,
        register: &str,
        pipes: PipeSel,
        cell: &CellRef,
        field: Option<&str>,
    ) -> Result<u128, String> {
        let r = resolve::find_register(&self.prog, register).map_err(|e| e.to_string())?;
        let reg = &self.prog.pipelines[r.pipeline].registers[r.index];
        let hi = match field {
            None | Some("lo") | Some("value") => false,
            Some("hi") => true,
            Some(f) => match &reg.word_names {
                Some((a, _)) if a == f => false,
                Some((_, b)) if b == f => true,
                _ => {
                    return Err(format!(
                        "register {} has no field `{f}` (fields: lo, hi{})",
                        reg.name,
                        reg.word_names
                            .as_ref()
                            .map(|(a, b)| format!(", {a}, {b}"))
                            .unwrap_or_default()
                    ))
                }
            },
        };
        if hi && !reg.paired {
            return Err(format!("register {} has a single word: no `hi`", reg.name));
        }
        let cells = match cell {
            CellRef::Index(index) => self.sw.register_read(pipes, &reg.name, *index),
            // A direct register's cell is its entry's: `add ... = NAME`, then `$NAME`.
            CellRef::Entry(n) => {
                let a = self.named.get(n).ok_or_else(|| {
                    format!("no entry named `{n}` (name one with `add ... = {n}`)")
                })?;
                let keys = key_refs(&a.entry.keys);
                self.sw
                    .direct_register_read(pipes, &reg.name, &a.table, &keys, a.entry.priority)
            }
        }
        .map_err(|e| e.to_string())?;
        let first = cells
            .first()
            .ok_or_else(|| format!("no pipe runs register {}", reg.name))?;
        Ok(if hi { first.hi } else { first.lo })
    }
}
