//! Drop accounting: every packet or copy the switch discards gets a [`DropReason`], a counter
//! per reason in [`SwitchStats`] and (optionally) a [`DropRecord`] in the drop log.

use std::fmt;

use crate::exec::ParserFault;
use crate::ir::Gress;

/// Why a packet (or one copy of it) was dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum DropReason {
    /// Ingress port on a pipe the switch does not have.
    BadIngressPort,
    ParserPacketTooShort,
    ParserNoMatch,
    /// A `ParserCounter` loaded with a value above its `max`.
    ParserCounterRange,
    ParserTimeout,
    /// A varbit length of part of a byte (evaluated as written; see
    /// [`ParserFault::InvalidArgument`]).
    ParserInvalidArgument,
    /// The program did something the hardware cannot (double register access, ...).
    ProgramError,
    /// Ingress `drop_ctl` bit 0.
    IngressDropCtl,
    /// Egress `drop_ctl` bit 0.
    EgressDropCtl,
    /// Ingress chose no unicast port, no multicast group and no copy to CPU.
    NoDestination,
    /// A multicast group produced no copies (unknown group or everything pruned).
    EmptyMulticast,
    /// A resubmitted packet asked for a second resubmit.
    ResubmitLimit,
    /// Too many recirculation / mirror passes.
    PassLimit,
    /// Mirror to a session that is not configured.
    MirrorSessionMissing,
    /// The egress queue was full (tail drop).
    QueueFull,
    /// Egress port on a pipe the switch does not have.
    BadEgressPort,
    /// `copy_to_cpu` without a CPU port configured.
    NoCpuPort,
    /// A mirror the pass asked for, suppressed by its `drop_ctl` bit 2 ("no mirror").
    MirrorDropCtl,
    /// A copy (unicast, replica, mirror, copy to CPU) to port 72–127 of a pipe: each pipe has
    /// ports 0–71 only and the TM drops the rest (tofino-model `Queueing::enqueue`); a unicast
    /// port there is cleared by the ingress deparser, the packet going on as multicast only
    /// when it has a group ([`crate::devport::is_port`]).
    NoSuchPort,
}

impl DropReason {
    pub const COUNT: usize = 19;
    pub const ALL: [DropReason; DropReason::COUNT] = [
        DropReason::BadIngressPort,
        DropReason::ParserPacketTooShort,
        DropReason::ParserNoMatch,
        DropReason::ParserCounterRange,
        DropReason::ParserTimeout,
        DropReason::ParserInvalidArgument,
        DropReason::ProgramError,
        DropReason::IngressDropCtl,
        DropReason::EgressDropCtl,
        DropReason::NoDestination,
        DropReason::EmptyMulticast,
        DropReason::ResubmitLimit,
        DropReason::PassLimit,
        DropReason::MirrorSessionMissing,
        DropReason::QueueFull,
        DropReason::BadEgressPort,
        DropReason::NoCpuPort,
        DropReason::MirrorDropCtl,
        DropReason::NoSuchPort,
    ];

    pub fn name(self) -> &'static str {
        match self {
            DropReason::BadIngressPort => "bad_ingress_port",
            DropReason::ParserPacketTooShort => "parser_packet_too_short",
            DropReason::ParserNoMatch => "parser_no_match",
            DropReason::ParserCounterRange => "parser_counter_range",
            DropReason::ParserTimeout => "parser_timeout",
            DropReason::ParserInvalidArgument => "parser_invalid_argument",
            DropReason::ProgramError => "program_error",
            DropReason::IngressDropCtl => "ingress_drop_ctl",
            DropReason::EgressDropCtl => "egress_drop_ctl",
            DropReason::NoDestination => "no_destination",
            DropReason::EmptyMulticast => "empty_multicast",
            DropReason::ResubmitLimit => "resubmit_limit",
            DropReason::PassLimit => "pass_limit",
            DropReason::MirrorSessionMissing => "mirror_session_missing",
            DropReason::QueueFull => "queue_full",
            DropReason::BadEgressPort => "bad_egress_port",
            DropReason::NoCpuPort => "no_cpu_port",
            DropReason::MirrorDropCtl => "mirror_drop_ctl",
            DropReason::NoSuchPort => "no_such_port",
        }
    }

    pub(crate) fn from_parser(f: ParserFault) -> DropReason {
        match f {
            ParserFault::PacketTooShort => DropReason::ParserPacketTooShort,
            ParserFault::NoMatch => DropReason::ParserNoMatch,
            ParserFault::CounterRange => DropReason::ParserCounterRange,
            ParserFault::Timeout => DropReason::ParserTimeout,
            ParserFault::InvalidArgument => DropReason::ParserInvalidArgument,
        }
    }
}

impl fmt::Display for DropReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One dropped packet or copy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DropRecord {
    pub ts: u64,
    /// Ingress port (ingress drops) or egress port (TM / egress drops).
    pub port: u16,
    pub gress: Gress,
    pub reason: DropReason,
    /// What exactly (the register, the session, the parser error) when there is more to say.
    pub detail: Option<String>,
}

/// Switch-wide counters.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SwitchStats {
    pub rx_packets: u64,
    pub rx_bytes: u64,
    pub tx_packets: u64,
    pub tx_bytes: u64,
    pub resubmits: u64,
    pub recirculations: u64,
    pub mirrors: u64,
    pub digests: u64,
    pub digest_overflow: u64,
    /// Tofino 2 deparser triggers for the packet generator, and those not kept (the queue
    /// holds [`super::SwitchConfig::digest_capacity`]).
    pub pktgen_triggers: u64,
    pub pktgen_trigger_overflow: u64,
    pub drop_log_overflow: u64,
    /// Drops by [`DropReason`] (index with `reason as usize`).
    pub drops: [u64; DropReason::COUNT],
}

impl SwitchStats {
    /// Drops counted for `reason`.
    pub fn dropped(&self, reason: DropReason) -> u64 {
        self.drops[reason as usize]
    }
    /// All drops.
    pub fn total_drops(&self) -> u64 {
        self.drops.iter().sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_lists_every_reason_in_discriminant_order() {
        for (i, r) in DropReason::ALL.iter().enumerate() {
            assert_eq!(*r as usize, i, "{r}");
        }
    }
}
