//! The host side of MC-RDMA (Huang et al., seed 001): the CMD's QP steps ([`cmd`]) and the
//! replication workload the benchmark runs on every host ([`node`]): MC-RDMA over one
//! multicast connection, and the fanout and chain baselines over plain RC. Senders and
//! receivers are pisa's unmodified RDMA endpoint; everything MC-RDMA adds sits in the switches
//! and in what the CMD configures at connection time.

pub mod cmd;
pub mod node;

pub use cmd::{HandshakeReply, McIdAllocator, RcSettings, ReceiverOffer, MC_ID_BASE};
pub use node::{Hop, Mode, Node, Region, Role, Sender, Target};
