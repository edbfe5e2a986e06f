//! A sans-I/O RoCEv2 endpoint, the stand-in for a ConnectX NIC: no sockets, threads or
//! clock of its own. A port loop feeds it frames (`handle_frame`), drains frames
//! (`poll_transmit`) and drives time (`poll_timeout` / `handle_timeout`); applications
//! use verbs-like calls (`reg_mr`, `create_qp`, `modify_qp`, `post_send`, `post_recv`,
//! `poll_cq`) and RDMA CM (`listen`, `connect`, `accept`, `reject`, `disconnect`).
//!
//! Binding an endpoint to a port is a thin loop:
//!
//! ```text
//! loop {
//!     let now = clock();                       // Instant::from_nanos(...)
//!     for frame in port.recv_batch() { ep.handle_frame(now, &frame); }
//!     while let Some(frame) = ep.poll_transmit(now) { port.send(frame); }
//!     if ep.poll_timeout().is_some_and(|t| t <= now) { ep.handle_timeout(now); }
//!     // sleep/poll the port until min(next frame, ep.poll_timeout())
//! }
//! ```
//!
//! Memory semantics: MRs are endpoint-owned byte vectors; SEND/WRITE data is gathered
//! when the WR is posted (retransmissions resend that copy); atomics treat remote
//! memory as little-endian `u64` and write the old value little-endian locally.

mod cm_agent;
mod cq;
mod dcqcn;
mod device;
mod endpoint;
mod error;
#[doc(hidden)]
pub mod fuzzing;
mod mr;
mod qp;
mod requester;
mod responder;
mod stats;
mod time;
mod ud;

pub use cm_agent::{CmConfig, CmConnInfo, CmEvent, ConnId};
pub use cq::{CqHandle, WcOpcode, WcStatus, WorkCompletion};
pub use dcqcn::{Dcqcn, DcqcnConfig};
pub use device::DeviceConfig;
pub use endpoint::{Endpoint, EndpointConfig};
pub use error::VerbsError;
pub use mr::{AccessFlags, MrInfo, PdHandle, Sge, MAX_MR_LEN};
pub use qp::{
    Mtu, QpAttr, QpInitAttr, QpState, QpType, RecvWr, SendOp, SendWr, TransportConfig, UdDest,
};
pub use stats::Stats;
pub use time::{ack_timeout, Instant};
pub use ud::GRH_LEN;
