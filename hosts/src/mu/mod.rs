//! A Mu-style replicated log (Aguilera et al., OSDI 2020) with P4CE's in-network replication
//! (Dulong et al., ICDCS 2024), sans I/O: the types here act on an [`rdma::verbs::Endpoint`]
//! the caller drives (frames in and out, time), like quinn-proto on a UDP socket.
//!
//! - [`slot`]: the log layout: fixed-size slots holding a length-prefixed entry between its
//!   index and an index canary, so a replica knows an entry arrived whole.
//! - [`leader`]: [`Leader`]: appends entries with one RDMA WRITE to the switch's BCast QP (P4CE
//!   mode) or one WRITE per replica (unicast, exactly Mu), commits on f acknowledgements,
//!   falls back from the switch to unicast on an error or a timeout and can take a new switch
//!   path later.
//! - [`replica`]: [`Replica`]: applies entries in order; grants write permission to the current
//!   leader's QPs only.
//! - [`join`]: a replica joining the running log (absent at the start, or back after a
//!   partition): the leader re-WRITEs what its ring still holds and offers a snapshot of the
//!   rest, which the replica READs.
//! - [`liveness`]: heartbeats and the "lowest live id is the leader" rule.
//! - `error`: [`MuError`], what the log refuses.

pub mod error;
pub mod join;
pub mod leader;
pub mod liveness;
pub mod replica;
pub mod slot;

pub use error::MuError;
pub use join::JoinOffer;
pub use leader::{Leader, LeaderConfig, LeaderEvent, LeaderStats, Path, ReplicaPath, SwitchPath};
pub use liveness::{recovery_source, Liveness};
pub use replica::Replica;
pub use slot::LogGeometry;
