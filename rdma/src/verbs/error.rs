//! Errors returned by the verbs API (synchronous misuse: unknown handles, wrong QP
//! state, bad attributes). Transport failures are reported as work completions instead.

use thiserror::Error;

use super::QpState;

/// A verbs call was rejected.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum VerbsError {
    /// No such protection domain.
    #[error("unknown protection domain {0}")]
    UnknownPd(u32),
    /// No such memory region (by lkey).
    #[error("unknown memory region lkey {0:#x}")]
    UnknownMr(u32),
    /// No such completion queue.
    #[error("unknown completion queue {0}")]
    UnknownCq(u32),
    /// No such queue pair.
    #[error("unknown queue pair {0:#x}")]
    UnknownQp(u32),
    /// The QP cannot do this in its current state.
    #[error("QP {qpn:#x} is in state {state:?}, cannot {what}")]
    BadState {
        /// Queue pair number.
        qpn: u32,
        /// Its state.
        state: QpState,
        /// What was attempted.
        what: &'static str,
    },
    /// `modify_qp` requested a transition IBA does not allow.
    #[error("QP {qpn:#x}: transition {from:?} -> {to:?} is not allowed")]
    BadTransition {
        /// Queue pair number.
        qpn: u32,
        /// Current state.
        from: QpState,
        /// Requested state.
        to: QpState,
    },
    /// A required attribute was not supplied.
    #[error("missing QP attribute {0}")]
    MissingAttr(&'static str),
    /// An attribute value is out of range.
    #[error("invalid value for {0}")]
    InvalidAttr(&'static str),
    /// The send or receive queue is full.
    #[error("queue full on QP {0:#x}")]
    QueueFull(u32),
    /// A scatter/gather entry is outside its memory region or lacks access rights.
    #[error("local protection error: {0}")]
    LocalProtection(&'static str),
    /// The work request does not fit this QP type.
    #[error("work request not supported here: {0}")]
    Unsupported(&'static str),
    /// The message is too large for its transport (UD larger than the MTU).
    #[error("message of {len} bytes exceeds the limit of {max}")]
    TooLong {
        /// Message length.
        len: usize,
        /// Maximum.
        max: usize,
    },
    /// No such CM connection.
    #[error("unknown CM connection {0:#x}")]
    UnknownConn(u32),
    /// The CM connection is not in a state that allows this.
    #[error("CM connection {0:#x} cannot {1} now")]
    ConnState(u32, &'static str),
    /// A port is already being listened on.
    #[error("port {0} already has a listener")]
    PortInUse(u16),
    /// Private data longer than the CM message allows.
    #[error("private data of {len} bytes exceeds {max}")]
    PrivateDataTooLong {
        /// Length given.
        len: usize,
        /// Maximum.
        max: usize,
    },
    /// The endpoint has no address of that family.
    #[error("no local address of this IP family")]
    NoLocalAddress,
}
