//! Errors of the replicated log.

use rdma::verbs::VerbsError;

/// A refused log operation.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MuError {
    /// The endpoint refused a verb.
    #[error("RDMA: {0}")]
    Verbs(#[from] VerbsError),
    /// The value does not fit in a log slot.
    #[error("value of {len} bytes does not fit a slot (at most {max})")]
    ValueTooLarge {
        /// Value length.
        len: usize,
        /// Largest value a slot holds.
        max: usize,
    },
    /// As many entries are in flight as allowed.
    #[error("{0} entries already in flight")]
    WindowFull(usize),
    /// Fewer than f replicas are reachable: nothing can commit.
    #[error("only {live} replicas reachable, f = {f}")]
    NoQuorum {
        /// Reachable replicas.
        live: usize,
        /// Needed.
        f: usize,
    },
    /// A bad log geometry or configuration.
    #[error("bad configuration: {0}")]
    Config(String),
}
