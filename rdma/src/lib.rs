//! pisa-rdma: RoCEv2 for a software switch and its test hosts.
//!
//! - [`wire`]: zero-copy views and parse/emit representations of every RoCEv2 header
//!   (BTH and its extension headers, CNP, CM MADs) and of whole Ethernet frames.
//! - [`icrc`]: the RoCEv2 invariant CRC (compute and verify, IPv4 and IPv6).
//! - [`decode`]: one human-readable line per frame, for `pisa rdma decode`.
//! - [`verbs`]: a sans-I/O RoCEv2 endpoint (device, memory regions, RC/UD queue pairs,
//!   completion queues, RDMA CM, DCQCN) that a port loop drives with frames and time.

pub mod decode;
pub mod icrc;
pub mod verbs;
pub mod wire;
