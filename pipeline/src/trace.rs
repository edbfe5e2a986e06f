//! Packet traces: what happened to one packet at every step of the pipeline.
//!
//! The executor is generic over a [`Tracer`]. On the fast path it runs with [`NoTrace`], whose
//! `ENABLED` constant is `false`, so every trace point (and the event it would build) compiles
//! away. `pisa trace` runs the same engine with a [`Recorder`], which keeps the events: the
//! flat program records them itself, the native engine runs a variant of its code generated
//! with a call to a trace hook at each trace point. A recorded [`Trace`] renders itself for
//! humans grouped by gress and stage.

use std::fmt;

use crate::ir::{Gress, Value};

/// Receives trace events. Implementations decide whether events are built at all.
pub trait Tracer {
    /// When false, trace points do not even build their event.
    const ENABLED: bool;
    /// Record one event; `make` is called only when [`Tracer::ENABLED`].
    fn record(&mut self, make: impl FnOnce() -> TraceEvent);
    /// This tracer as the fast path's [`NoTrace`], when it is that (the native engine's
    /// generated code runs on contexts of that tracer only).
    fn no_trace(&mut self) -> Option<&mut NoTrace> {
        None
    }
    /// This tracer as a [`Recorder`], when it is one (the native engine's traced code runs on
    /// contexts of that tracer only).
    fn recorder(&mut self) -> Option<&mut Recorder> {
        None
    }
}

/// The fast path's tracer: does nothing, costs nothing.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoTrace;

impl Tracer for NoTrace {
    const ENABLED: bool = false;
    #[inline(always)]
    fn record(&mut self, _make: impl FnOnce() -> TraceEvent) {}
    fn no_trace(&mut self) -> Option<&mut NoTrace> {
        Some(self)
    }
}

/// Keeps every event in order.
#[derive(Debug, Default, Clone)]
pub struct Recorder {
    pub events: Vec<TraceEvent>,
}

impl Tracer for Recorder {
    const ENABLED: bool = true;
    fn record(&mut self, make: impl FnOnce() -> TraceEvent) {
        self.events.push(make());
    }
    fn recorder(&mut self) -> Option<&mut Recorder> {
        Some(self)
    }
}

impl Recorder {
    pub fn new() -> Recorder {
        Recorder::default()
    }
    /// Take the recorded events as a [`Trace`], leaving the recorder empty.
    pub fn take(&mut self) -> Trace {
        Trace {
            events: std::mem::take(&mut self.events),
        }
    }
}

/// A named value in a trace, with its width in bits (so that addresses print as addresses).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceField {
    pub name: String,
    pub value: Value,
    pub width: u16,
}

impl TraceField {
    pub fn new(name: impl Into<String>, value: Value, width: u16) -> TraceField {
        TraceField {
            name: name.into(),
            value,
            width,
        }
    }
}

impl fmt::Display for TraceField {
    /// `name=value`, the value as [`crate::names::value_text`] writes it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}={}",
            self.name,
            crate::names::value_text(self.value, self.width, &self.name)
        )
    }
}

/// One replica chosen by the traffic manager.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceReplica {
    pub port: u16,
    pub rid: u16,
    pub rid_first: bool,
}

/// One thing that happened to a packet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TraceEvent {
    /// A packet (or a copy) enters a gress of a pipe.
    GressStart {
        gress: Gress,
        pipe: u16,
        port: u16,
        len: usize,
        /// Why this pass exists: "packet", "resubmit", "recirculate", "mirror", "replica".
        kind: &'static str,
    },
    ParserState {
        name: String,
    },
    Extract {
        header: String,
        fields: Vec<TraceField>,
    },
    ParserError {
        state: String,
        error: String,
        /// The Tofino PARSER_ERROR_* bit written to `parser_err`.
        bits: u16,
    },
    ParserAccept,
    ParserReject {
        state: String,
    },
    Gateway {
        stage: u8,
        /// The condition as P4 source.
        cond: String,
        result: bool,
    },
    Table {
        stage: u8,
        table: String,
        hit: bool,
        keys: Vec<TraceField>,
        action: String,
        params: Vec<TraceField>,
    },
    Action {
        action: String,
        params: Vec<TraceField>,
    },
    /// The gress's `drop_ctl` intrinsic was written non-zero (by the action running).
    DropMarked {
        field: String,
        value: Value,
    },
    Register {
        register: String,
        action: String,
        index: u32,
        before: (Value, Value),
        after: (Value, Value),
        output: Value,
    },
    Exit,
    Deparsed {
        gress: Gress,
        bytes: Vec<u8>,
    },
    /// Ingress TM decision.
    Unicast {
        port: u16,
    },
    Multicast {
        group: u16,
        replicas: Vec<TraceReplica>,
    },
    CopyToCpu {
        port: u16,
    },
    Mirror {
        gress: Gress,
        session: u16,
        len: usize,
    },
    Resubmit,
    Recirculate {
        port: u16,
    },
    Queue {
        port: u16,
        qdepth: u32,
        delay_ns: u64,
        ecn: bool,
    },
    BypassEgress,
    /// Tofino 2: the traffic manager sent a queue-depth update to a pipe's ghost thread (its
    /// ghost control's events follow).
    Ghost {
        pipe: u16,
        /// The queue's egress port.
        port: u16,
        qid: u16,
        /// Depth in the chip's cells (176 bytes: ghost threads are Tofino 2's).
        qlength: u32,
        ping_pong: bool,
    },
    Digest {
        digest: String,
        values: Vec<Value>,
    },
    Drop {
        gress: Gress,
        reason: String,
    },
    Output {
        port: u16,
        len: usize,
    },
}

impl TraceEvent {
    /// The event's kind: its variant's name.
    pub fn kind(&self) -> &'static str {
        match self {
            TraceEvent::GressStart { .. } => "GressStart",
            TraceEvent::ParserState { .. } => "ParserState",
            TraceEvent::Extract { .. } => "Extract",
            TraceEvent::ParserError { .. } => "ParserError",
            TraceEvent::ParserAccept => "ParserAccept",
            TraceEvent::ParserReject { .. } => "ParserReject",
            TraceEvent::Gateway { .. } => "Gateway",
            TraceEvent::Table { .. } => "Table",
            TraceEvent::Action { .. } => "Action",
            TraceEvent::DropMarked { .. } => "DropMarked",
            TraceEvent::Register { .. } => "Register",
            TraceEvent::Exit => "Exit",
            TraceEvent::Deparsed { .. } => "Deparsed",
            TraceEvent::Unicast { .. } => "Unicast",
            TraceEvent::Multicast { .. } => "Multicast",
            TraceEvent::CopyToCpu { .. } => "CopyToCpu",
            TraceEvent::Mirror { .. } => "Mirror",
            TraceEvent::Resubmit => "Resubmit",
            TraceEvent::Recirculate { .. } => "Recirculate",
            TraceEvent::Queue { .. } => "Queue",
            TraceEvent::Ghost { .. } => "Ghost",
            TraceEvent::BypassEgress => "BypassEgress",
            TraceEvent::Digest { .. } => "Digest",
            TraceEvent::Drop { .. } => "Drop",
            TraceEvent::Output { .. } => "Output",
        }
    }
}

/// A whole recorded trace.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Trace {
    pub events: Vec<TraceEvent>,
}

fn fmt_kv(f: &mut fmt::Formatter<'_>, kv: &[TraceField]) -> fmt::Result {
    for (i, field) in kv.iter().enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        write!(f, "{field}")?;
    }
    Ok(())
}

fn fmt_bytes(f: &mut fmt::Formatter<'_>, bytes: &[u8]) -> fmt::Result {
    for (i, chunk) in bytes.chunks(16).enumerate() {
        write!(f, "      {:04x}:", i * 16)?;
        for b in chunk {
            write!(f, " {b:02x}")?;
        }
        writeln!(f)?;
    }
    Ok(())
}

/// Where an event sits in the match-action part of a gress: `Some(Some(stage))` for events
/// that name their stage, `Some(None)` for events inside the stage of the event before them,
/// `None` outside the match-action stages (parser, traffic manager, deparser).
fn mau_stage(ev: &TraceEvent) -> Option<Option<u8>> {
    match ev {
        TraceEvent::Gateway { stage, .. } if *stage == crate::ir::DEPARSER_STAGE => None,
        TraceEvent::Gateway { stage, .. } | TraceEvent::Table { stage, .. } => Some(Some(*stage)),
        TraceEvent::Action { .. }
        | TraceEvent::Register { .. }
        | TraceEvent::Exit
        | TraceEvent::DropMarked { .. } => Some(None),
        _ => None,
    }
}

impl Trace {
    /// Why the packet was dropped, as a person acts on it: the drop reason and, when the program
    /// asked for the drop, the table and action (or the action and the condition it ran under)
    /// that wrote `drop_ctl`. `None` when nothing was dropped.
    pub fn drop_cause(&self) -> Option<String> {
        let i = self
            .events
            .iter()
            .position(|e| matches!(e, TraceEvent::Drop { .. }))?;
        Some(self.cause_at(i))
    }

    /// The text of the drop at event `i`.
    fn cause_at(&self, i: usize) -> String {
        let TraceEvent::Drop { reason, .. } = &self.events[i] else {
            return String::new();
        };
        match self.marked_by(i) {
            Some(by) => format!("{reason}, set by {by}"),
            None => reason.clone(),
        }
    }

    /// The table/action that last marked the packet for drop in the gress before event `i`.
    fn marked_by(&self, i: usize) -> Option<String> {
        let before = &self.events[..i];
        let start = before
            .iter()
            .rposition(|e| matches!(e, TraceEvent::GressStart { .. }))
            .unwrap_or(0);
        let m = start
            + before[start..]
                .iter()
                .rposition(|e| matches!(e, TraceEvent::DropMarked { .. }))?;
        let (k, by) = before[start..m]
            .iter()
            .enumerate()
            .rev()
            .find_map(|(k, e)| match e {
                TraceEvent::Table {
                    table,
                    action,
                    stage,
                    ..
                } => Some((k, format!("table {table} -> {action} (stage {stage})"))),
                TraceEvent::Action { action, .. } => Some((k, format!("{action}()"))),
                _ => None,
            })?;
        if by.starts_with("table ") {
            return Some(by);
        }
        // A direct action call: name the condition it ran under.
        let gate = before[start..start + k].iter().rev().find_map(|e| match e {
            TraceEvent::Gateway {
                cond,
                result,
                stage,
            } => Some(match *stage {
                crate::ir::DEPARSER_STAGE => format!("if ({cond}) -> {result} (deparser)"),
                st => format!("if ({cond}) -> {result} (stage {st})"),
            }),
            _ => None,
        });
        Some(match gate {
            Some(g) => format!("{by} under {g}"),
            None => by,
        })
    }

    /// Prints event `i` (not its stage heading).
    fn fmt_event(&self, f: &mut fmt::Formatter<'_>, i: usize) -> fmt::Result {
        match &self.events[i] {
            TraceEvent::GressStart {
                gress,
                pipe,
                port,
                len,
                kind,
            } => writeln!(f, "{gress} pipe {pipe} port {port} ({kind}, {len} B):"),
            TraceEvent::ParserState { name } => writeln!(f, "  parser state {name}"),
            TraceEvent::Extract { header, fields } => {
                write!(f, "    extract {header}: ")?;
                fmt_kv(f, fields)?;
                writeln!(f)
            }
            TraceEvent::ParserError { state, error, bits } => {
                writeln!(f, "  parser error {error} in {state} (parser_err |= 0x{bits:04x})")
            }
            TraceEvent::ParserAccept => writeln!(f, "  parser accept"),
            TraceEvent::ParserReject { state } => writeln!(f, "  parser reject in {state}"),
            TraceEvent::Gateway {
                cond,
                result,
                stage: crate::ir::DEPARSER_STAGE,
            } => writeln!(f, "  deparser: if ({cond}) -> {result}"),
            TraceEvent::Gateway { cond, result, .. } => {
                writeln!(f, "    if ({cond}) -> {result}")
            }
            TraceEvent::Table {
                table,
                hit,
                keys,
                action,
                params,
                ..
            } => {
                write!(f, "    table {table} key [")?;
                fmt_kv(f, keys)?;
                write!(f, "] {} -> {action}(", if *hit { "hit" } else { "miss" })?;
                fmt_kv(f, params)?;
                writeln!(f, ")")
            }
            TraceEvent::Action { action, params } => {
                write!(f, "    action {action}(")?;
                fmt_kv(f, params)?;
                writeln!(f, ")")
            }
            TraceEvent::DropMarked { field, value } => {
                writeln!(f, "      {field} = {value} (marked for drop)")
            }
            TraceEvent::Register {
                register,
                action,
                index,
                before,
                after,
                output,
            } => writeln!(
                f,
                "    register {register}[{index}] via {action}: (0x{:x}, 0x{:x}) -> (0x{:x}, 0x{:x}), out 0x{output:x}",
                before.0, before.1, after.0, after.1
            ),
            TraceEvent::Exit => writeln!(f, "    exit"),
            TraceEvent::Deparsed { gress, bytes } => {
                writeln!(f, "  {gress} deparser emitted {} B:", bytes.len())?;
                fmt_bytes(f, bytes)
            }
            TraceEvent::Unicast { port } => writeln!(f, "  tm: unicast to port {port}"),
            TraceEvent::Multicast { group, replicas } => {
                writeln!(f, "  tm: multicast group {group}, {} replicas", replicas.len())?;
                for r in replicas {
                    writeln!(
                        f,
                        "    replica port {} rid {}{}",
                        r.port,
                        r.rid,
                        if r.rid_first { " (first)" } else { "" }
                    )?;
                }
                Ok(())
            }
            TraceEvent::CopyToCpu { port } => writeln!(f, "  tm: copy to cpu port {port}"),
            TraceEvent::Mirror {
                gress,
                session,
                len,
            } => writeln!(f, "  tm: {gress} mirror session {session} ({len} B)"),
            TraceEvent::Resubmit => writeln!(f, "  tm: resubmit"),
            TraceEvent::Recirculate { port } => writeln!(f, "  tm: recirculate via port {port}"),
            TraceEvent::Ghost {
                pipe,
                port,
                qid,
                qlength,
                ping_pong,
            } => writeln!(
                f,
                "ghost pipe {pipe}: queue of port {port} (qid {qid}) is {qlength} cells (ping_pong {})",
                *ping_pong as u8
            ),
            TraceEvent::Queue {
                port,
                qdepth,
                delay_ns,
                ecn,
            } => writeln!(
                f,
                "  tm: queue port {port} depth {qdepth} cells, delay {delay_ns} ns{}",
                if *ecn { ", congestion mark" } else { "" }
            ),
            TraceEvent::BypassEgress => writeln!(f, "  tm: bypass egress"),
            TraceEvent::Digest { digest, values } => {
                writeln!(f, "  digest {digest}: {values:x?}")
            }
            TraceEvent::Drop { gress, .. } => {
                writeln!(f, "  DROP in {gress}: {}", self.cause_at(i))
            }
            TraceEvent::Output { port, len } => writeln!(f, "  output port {port} ({len} B)"),
        }
    }
}

impl fmt::Display for Trace {
    /// Grouped by gress, the match-action events of a gress by stage in stage order (the
    /// allocation puts independent work in any order, so stage order is an order the hardware
    /// could run; events without a stage stay with the event before them).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut i = 0;
        while i < self.events.len() {
            if mau_stage(&self.events[i]).is_none() {
                self.fmt_event(f, i)?;
                i += 1;
                continue;
            }
            let mut run = Vec::new();
            let mut cur = 0u8;
            while let Some(st) = self.events.get(i).and_then(mau_stage) {
                cur = st.unwrap_or(cur);
                run.push((cur, i));
                i += 1;
            }
            run.sort_by_key(|(st, _)| *st);
            let mut heading = None;
            for (st, k) in run {
                if heading != Some(st) {
                    writeln!(f, "  stage {st}:")?;
                    heading = Some(st);
                }
                self.fmt_event(f, k)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_trace_never_builds_events() {
        let mut t = NoTrace;
        t.record(|| panic!("must not be called"));
    }

    #[test]
    fn recorder_renders_grouped_by_stage() {
        let mut r = Recorder::new();
        r.record(|| TraceEvent::GressStart {
            gress: Gress::Ingress,
            pipe: 0,
            port: 1,
            len: 64,
            kind: "packet",
        });
        r.record(|| TraceEvent::Table {
            stage: 0,
            table: "SwitchIngress.forward".into(),
            hit: true,
            keys: vec![TraceField::new("hdr.ethernet.dst_addr", 0x1, 48)],
            action: "SwitchIngress.set_port".into(),
            params: vec![TraceField::new("port", 2, 9)],
        });
        r.record(|| TraceEvent::Gateway {
            stage: 1,
            cond: "hdr.ipv4.ttl <= 1".into(),
            result: false,
        });
        let text = r.take().to_string();
        assert!(
            text.contains("ingress pipe 0 port 1 (packet, 64 B):"),
            "{text}"
        );
        assert!(text.contains("  stage 0:\n    table SwitchIngress.forward key [hdr.ethernet.dst_addr=00:00:00:00:00:01] hit -> SwitchIngress.set_port(port=2)"), "{text}");
        assert!(
            text.contains("  stage 1:\n    if (hdr.ipv4.ttl <= 1) -> false"),
            "{text}"
        );
        assert!(r.events.is_empty());
    }
}
