//! Acuerdo (Izraelevitz et al., ICPP 2022): atomic broadcast over RDMA, built from one-sided
//! WRITEs only. A leader per epoch `(round, leader)` writes each message with its header
//! `(epoch, count)` into every follower's ring buffer; followers accept what they find in
//! batches and tell the leader through a shared state table (SST); a quorum's acceptance
//! commits. Elections are a fixed-point vote that always elects an up-to-date node, whose
//! first message of the epoch is a diff bringing each follower's log in line.
//!
//! - [`types`]: epochs, headers, votes and their encoding (Figure 4, lines 1–7).
//! - [`msg`]: ring messages: payloads and diffs.
//! - [`core`](mod@core): the protocol, Figures 4–7, as an I/O-free state machine ([`Core`]).
//! - [`ring`]: the ring buffers' byte layout (records, wrap markers, credits).
//! - [`node`]: a node on pisa's RDMA endpoint: rings and SSTs in one MR, one RC QP per peer.
//! - [`check`]: the atomic-broadcast checker (integrity, no duplication, total order).
//! - `error`: [`AcuerdoError`].

pub mod check;
pub mod core;
pub mod error;
pub mod msg;
pub mod node;
pub mod ring;
pub mod types;

pub use self::core::{CommitRow, Config, Core, CoreStats, Delivery, Event, Output, Role, Table};
pub use check::{check, Agreement, Entry};
pub use error::AcuerdoError;
pub use msg::{Body, Diff, Message};
pub use types::{Epoch, MsgHdr, Pid, Vote};
