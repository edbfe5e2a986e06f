//! Packet traces: what happened to one packet at every step of the pipeline.
//!
//! The executor is generic over a [`Tracer`]. On the fast path it runs with [`NoTrace`], whose
//! `ENABLED` constant is `false`, so every trace point (and the event it would build) compiles
//! away. `pisa trace` runs the same code with a [`Recorder`], which keeps the events; a recorded
//! [`Trace`] renders itself for humans grouped by gress and stage.

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
        fields: Vec<(String, Value)>,
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
        result: bool,
    },
    Table {
        stage: u8,
        table: String,
        hit: bool,
        keys: Vec<(String, Value)>,
        action: String,
        params: Vec<(String, Value)>,
    },
    Action {
        action: String,
        params: Vec<(String, Value)>,
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

/// A whole recorded trace.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Trace {
    pub events: Vec<TraceEvent>,
}

fn fmt_kv(f: &mut fmt::Formatter<'_>, kv: &[(String, Value)]) -> fmt::Result {
    for (i, (k, v)) in kv.iter().enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        write!(f, "{k}=0x{v:x}")?;
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

impl fmt::Display for Trace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut stage: Option<u8> = None;
        for ev in &self.events {
            // Stage headings: a new heading whenever the MAU stage changes inside a gress.
            let ev_stage = match ev {
                TraceEvent::Gateway { stage, .. } | TraceEvent::Table { stage, .. } => Some(*stage),
                _ => None,
            };
            if let Some(s) = ev_stage {
                if stage != Some(s) {
                    writeln!(f, "  stage {s}:")?;
                    stage = Some(s);
                }
            }
            match ev {
                TraceEvent::GressStart {
                    gress,
                    pipe,
                    port,
                    len,
                    kind,
                } => {
                    stage = None;
                    writeln!(f, "{gress} pipe {pipe} port {port} ({kind}, {len} B):")?;
                }
                TraceEvent::ParserState { name } => writeln!(f, "  parser state {name}")?,
                TraceEvent::Extract { header, fields } => {
                    write!(f, "    extract {header}: ")?;
                    fmt_kv(f, fields)?;
                    writeln!(f)?;
                }
                TraceEvent::ParserError { state, error, bits } => {
                    writeln!(f, "  parser error {error} in {state} (parser_err |= 0x{bits:04x})")?
                }
                TraceEvent::ParserAccept => writeln!(f, "  parser accept")?,
                TraceEvent::ParserReject { state } => writeln!(f, "  parser reject in {state}")?,
                TraceEvent::Gateway { result, .. } => writeln!(f, "    condition -> {result}")?,
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
                    writeln!(f, ")")?;
                }
                TraceEvent::Action { action, params } => {
                    write!(f, "    action {action}(")?;
                    fmt_kv(f, params)?;
                    writeln!(f, ")")?;
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
                )?,
                TraceEvent::Exit => writeln!(f, "    exit")?,
                TraceEvent::Deparsed { gress, bytes } => {
                    writeln!(f, "  {gress} deparser emitted {} B:", bytes.len())?;
                    fmt_bytes(f, bytes)?;
                }
                TraceEvent::Unicast { port } => writeln!(f, "  tm: unicast to port {port}")?,
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
                }
                TraceEvent::CopyToCpu { port } => writeln!(f, "  tm: copy to cpu port {port}")?,
                TraceEvent::Mirror {
                    gress,
                    session,
                    len,
                } => writeln!(f, "  tm: {gress} mirror session {session} ({len} B)")?,
                TraceEvent::Resubmit => writeln!(f, "  tm: resubmit")?,
                TraceEvent::Recirculate { port } => writeln!(f, "  tm: recirculate via port {port}")?,
                TraceEvent::Queue {
                    port,
                    qdepth,
                    delay_ns,
                    ecn,
                } => writeln!(
                    f,
                    "  tm: queue port {port} depth {qdepth} cells, delay {delay_ns} ns{}",
                    if *ecn { ", congestion mark" } else { "" }
                )?,
                TraceEvent::BypassEgress => writeln!(f, "  tm: bypass egress")?,
                TraceEvent::Digest { digest, values } => {
                    writeln!(f, "  digest {digest}: {values:x?}")?
                }
                TraceEvent::Drop { gress, reason } => writeln!(f, "  DROP in {gress}: {reason}")?,
                TraceEvent::Output { port, len } => writeln!(f, "  output port {port} ({len} B)")?,
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
            keys: vec![("hdr.ethernet.dst_addr".into(), 0x1)],
            action: "SwitchIngress.set_port".into(),
            params: vec![("port".into(), 2)],
        });
        r.record(|| TraceEvent::Gateway {
            stage: 1,
            result: false,
        });
        let text = r.take().to_string();
        assert!(
            text.contains("ingress pipe 0 port 1 (packet, 64 B):"),
            "{text}"
        );
        assert!(text.contains("  stage 0:\n    table SwitchIngress.forward key [hdr.ethernet.dst_addr=0x1] hit -> SwitchIngress.set_port(port=0x2)"), "{text}");
        assert!(
            text.contains("  stage 1:\n    condition -> false"),
            "{text}"
        );
        assert!(r.events.is_empty());
    }
}
