//! Switch assembly parameters: how many pipes, which ports loop back (recirculation), the CPU
//! port, per-port queue settings and port metadata, the random seed and safety limits.

use std::collections::BTreeMap;

use thiserror::Error;

use super::{port_pipe, NUM_DEVPORTS};
use crate::exec::EngineKind;
use crate::ir::{Program, Target};
use crate::table::TableError;
use crate::tm::queue::{QueueConfig, QueueError};

/// The queue of a port nobody configured: infinitely fast (no queueing), 1 MiB tail drop, no ECN.
/// Bytes of the ingress parser's phase-0 word, the port metadata `port_metadata_unpack` reads
/// (bf-p4c `PardeSpec::bytePhase0Size()`, `parde/parde_spec.h`): 8 on Tofino 1, 16 on Tofino 2.
pub fn phase0_bytes(target: Target) -> usize {
    match target {
        Target::Tofino1 => 8,
        Target::Tofino2 => 16,
    }
}

/// The longest phase-0 word of any chip ([`phase0_bytes`]).
pub const PORT_MD_MAX: usize = 16;

pub const DEFAULT_QUEUE: QueueConfig = QueueConfig {
    rate_bps: None,
    capacity_bytes: 1 << 20,
    ecn: None,
    seed: 0,
};

/// Per-port settings.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PortConfig {
    /// Loopback (recirculation) port: frames sent here re-enter ingress on the same port.
    /// `None`: the target's default ([`crate::devport::recirculates_by_default`]: Tofino 1's
    /// recirculation quad, Tofino 2's ports 0–7 of each pipe loop back); `Some(false)`: a
    /// front-panel port.
    pub loopback: Option<bool>,
    /// Queue settings; [`SwitchConfig::default_queue`] when `None`.
    pub queue: Option<QueueConfig>,
    /// The 64 bits of port metadata the ingress parser sees after the intrinsic metadata.
    pub port_metadata: Option<[u8; 8]>,
}

/// How to assemble a [`super::Switch`].
#[derive(Debug, Clone, PartialEq)]
pub struct SwitchConfig {
    /// Hardware pipes (1..=4). Device port `p` belongs to pipe `p >> 7`.
    pub pipes: u16,
    /// Where `copy_to_cpu` copies go (Tofino 1 CPU Ethernet port: 64).
    pub cpu_port: Option<u16>,
    pub ports: BTreeMap<u16, PortConfig>,
    pub default_queue: QueueConfig,
    /// Seed of every pipe's random generator (pipes derive their own streams from it).
    pub seed: u64,
    /// Most passes one packet may take (recirculations and egress-to-egress mirrors); beyond
    /// it the copy is dropped with [`super::DropReason::PassLimit`].
    pub max_passes: u8,
    /// Drop records kept for [`super::Switch::drain_drops`] (0: count only).
    pub drop_log: usize,
    /// Digest messages kept until drained (more are counted and dropped).
    pub digest_capacity: usize,
    /// Ethernet's minimum frame size without the FCS ([`MIN_FRAME`], 64 B on the wire). A
    /// shorter frame is padded with zeros to it on arrival (on a wire the sending MAC pads, so
    /// the Tofino never sees a runt: a short frame from a veth or pcap is what that sender's
    /// NIC would have put on the wire) and on transmission (the Tofino MAC pads what egress
    /// made shorter). 0 turns both off (a pisa-only setting).
    pub min_frame: usize,
    /// The engine passes run on, traced or not (native code where it compiles, by default).
    pub engine: EngineKind,
}

/// The CPU port `pisa run`, `pisa trace` and `pisa stf` give a switch unless told otherwise
/// (`--cpu-port`): Tofino 1's CPU Ethernet port, on either target.
pub const DEFAULT_CPU_PORT: u16 = 64;

/// Ethernet's minimum frame, 64 bytes with the FCS, 60 without.
pub const MIN_FRAME: usize = 60;

impl Default for SwitchConfig {
    fn default() -> SwitchConfig {
        SwitchConfig {
            pipes: 1,
            cpu_port: None,
            ports: BTreeMap::new(),
            default_queue: DEFAULT_QUEUE,
            seed: 0,
            max_passes: 16,
            drop_log: 4096,
            digest_capacity: 4096,
            min_frame: MIN_FRAME,
            engine: EngineKind::default(),
        }
    }
}

/// Device ports that loop back, one bit each: [`SwitchConfig::is_loopback`] of every port
/// ([`SwitchConfig::loopback_ports`]), kept by the switch beside its configuration and
/// updated where that changes, so the packet path tests a bit instead of searching the
/// configuration's port map.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LoopbackPorts([u64; NUM_DEVPORTS / 64]);

impl LoopbackPorts {
    /// Whether `port` loops back (a port past the device ports never does).
    #[inline]
    pub(crate) fn get(&self, port: u16) -> bool {
        let p = usize::from(port);
        self.0.get(p / 64).is_some_and(|w| w >> (p % 64) & 1 != 0)
    }

    pub(crate) fn set(&mut self, port: u16, on: bool) {
        let p = usize::from(port);
        if let Some(w) = self.0.get_mut(p / 64) {
            let bit = 1u64 << (p % 64);
            *w = if on { *w | bit } else { *w & !bit };
        }
    }
}

/// A switch could not be assembled.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum SwitchError {
    #[error("{0} pipes requested; Tofino has 1 to 4")]
    PipeCount(u16),
    #[error("port {port} is on pipe {pipe}, but the switch has {pipes} pipes")]
    PortOutOfRange { port: u16, pipe: u16, pipes: u16 },
    #[error("port {port} does not exist: each pipe has ports 0-71 (72-127 are not ports)")]
    NoSuchPort { port: u16 },
    #[error("the program has no pipelines")]
    NoPipeline,
    #[error(transparent)]
    InvalidIr(#[from] crate::ir_verify::VerifyError),
    #[error("pipe {pipe} is mapped to pipeline {pipeline}, but the program has {count}")]
    BadPipeMap {
        pipe: u16,
        pipeline: usize,
        count: usize,
    },
    #[error("queue of port {port}: {error}")]
    Queue { port: u16, error: QueueError },
    #[error("const entry of a table on pipe {pipe} was refused: {error}")]
    ConstEntry { pipe: u16, error: TableError },
}

impl SwitchConfig {
    /// A configuration with `pipes` pipes and defaults for everything else.
    pub fn new(pipes: u16) -> SwitchConfig {
        SwitchConfig {
            pipes,
            ..SwitchConfig::default()
        }
    }

    /// Run passes on `engine`.
    pub fn with_engine(mut self, engine: EngineKind) -> SwitchConfig {
        self.engine = engine;
        self
    }

    /// Pad frames shorter than `bytes` (0: never; see [`SwitchConfig::min_frame`]).
    pub fn with_min_frame(mut self, bytes: usize) -> SwitchConfig {
        self.min_frame = bytes;
        self
    }

    pub fn with_cpu_port(mut self, port: u16) -> SwitchConfig {
        self.cpu_port = Some(port);
        self
    }

    /// Make `port` a loopback (recirculation) port.
    pub fn with_loopback(mut self, port: u16) -> SwitchConfig {
        self.ports.entry(port).or_default().loopback = Some(true);
        self
    }

    /// Make `port` a front-panel port (one a link or host is attached to), also where the
    /// target would loop it back by default (Tofino 1's recirculation quad, 68–71 per pipe;
    /// Tofino 2's ports 0–7 of each pipe).
    pub fn with_front_panel(mut self, port: u16) -> SwitchConfig {
        self.set_front_panel(port);
        self
    }

    /// As [`SwitchConfig::with_front_panel`], in place.
    pub fn set_front_panel(&mut self, port: u16) {
        self.ports.entry(port).or_default().loopback = Some(false);
    }

    pub fn with_queue(mut self, port: u16, q: QueueConfig) -> SwitchConfig {
        self.ports.entry(port).or_default().queue = Some(q);
        self
    }

    pub fn with_port_metadata(mut self, port: u16, md: [u8; 8]) -> SwitchConfig {
        self.ports.entry(port).or_default().port_metadata = Some(md);
        self
    }

    pub fn with_seed(mut self, seed: u64) -> SwitchConfig {
        self.seed = seed;
        self
    }

    /// Is `port` a loopback port on `target`: as configured, else the target's default; the
    /// CPU port is not one (on Tofino 2 the CPU ports of pipe 0, 0 and 2–5, are among the
    /// recirculation ports until the driver sets them up as CPU ports).
    pub fn is_loopback(&self, target: crate::ir::Target, port: u16) -> bool {
        match self.ports.get(&port).and_then(|p| p.loopback) {
            Some(l) => l,
            None if self.cpu_port == Some(port) => false,
            None => crate::devport::recirculates_by_default(target, port),
        }
    }

    /// Which device ports loop back on `target` ([`SwitchConfig::is_loopback`] of each), as
    /// the bitmap the packet path reads.
    pub(crate) fn loopback_ports(&self, target: crate::ir::Target) -> LoopbackPorts {
        let mut m = LoopbackPorts([0; NUM_DEVPORTS / 64]);
        for p in 0..NUM_DEVPORTS as u16 {
            m.set(p, self.is_loopback(target, p));
        }
        m
    }

    /// The queue settings of `port`.
    pub fn queue_config(&self, port: u16) -> QueueConfig {
        self.ports
            .get(&port)
            .and_then(|p| p.queue)
            .unwrap_or(self.default_queue)
    }

    pub(crate) fn validate(&self, prog: &Program) -> Result<(), SwitchError> {
        if !(1..=4).contains(&self.pipes) {
            return Err(SwitchError::PipeCount(self.pipes));
        }
        if prog.pipelines.is_empty() {
            return Err(SwitchError::NoPipeline);
        }
        for p in 0..self.pipes {
            let pipeline = prog.pipe_map.get(p as usize).copied().unwrap_or(0);
            if pipeline >= prog.pipelines.len() {
                return Err(SwitchError::BadPipeMap {
                    pipe: p,
                    pipeline,
                    count: prog.pipelines.len(),
                });
            }
        }
        let check = |port: u16| {
            let pipe = port_pipe(port);
            if port as usize >= NUM_DEVPORTS || pipe >= self.pipes {
                Err(SwitchError::PortOutOfRange {
                    port,
                    pipe,
                    pipes: self.pipes,
                })
            } else if !crate::devport::is_port(port) {
                Err(SwitchError::NoSuchPort { port })
            } else {
                Ok(())
            }
        };
        if let Some(c) = self.cpu_port {
            check(c)?;
        }
        for port in self.ports.keys() {
            check(*port)?;
        }
        Ok(())
    }
}
