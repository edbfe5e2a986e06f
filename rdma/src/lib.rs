//! pisa-rdma: RoCEv2 for a software switch and its test hosts.
//!
//! - [`wire`]: zero-copy views and parse/emit representations of every RoCEv2 header
//!   (BTH and its extension headers, CNP, CM MADs) and of whole Ethernet frames.
//! - [`icrc`]: the RoCEv2 invariant CRC (compute and verify, IPv4 and IPv6).
//! - [`decode`]: one human-readable line per frame, for `pisa rdma decode`.
//! - [`verbs`]: a sans-I/O RoCEv2 endpoint (device, memory regions, RC/UD queue pairs,
//!   completion queues, RDMA CM, DCQCN) that a port loop drives with frames and time.
//!
//! # Example: an RDMA WRITE between two endpoints wired back to back
//!
//! ```
//! use std::net::{IpAddr, Ipv4Addr};
//! use rdma::verbs::*;
//!
//! let ip = |i| Ipv4Addr::new(10, 0, 0, i);
//! let mut eps = [1u8, 2].map(|i| Endpoint::new(EndpointConfig::new([2, 0, 0, 0, 0, i], ip(i))));
//! let mut side = Vec::new();
//! for ep in eps.iter_mut() {
//!     let pd = ep.alloc_pd();
//!     let cq = ep.create_cq(16);
//!     let mr = ep.reg_mr(pd, 4096, AccessFlags::ALL).unwrap();
//!     let attr = QpInitAttr { pd, qp_type: QpType::Rc, send_cq: cq, recv_cq: cq, max_send_wr: 8, max_recv_wr: 8 };
//!     side.push((ep.create_qp(attr).unwrap(), cq, mr));
//! }
//! for i in 0..2 {
//!     let (me, peer) = (side[i].0, side[1 - i].0);
//!     let peer_ip = IpAddr::V4(ip(2 - i as u8));
//!     let ep = &mut eps[i];
//!     ep.modify_qp(me, &QpAttr { state: Some(QpState::Init), access: Some(AccessFlags::REMOTE_WRITE), ..Default::default() }).unwrap();
//!     ep.modify_qp(me, &QpAttr { state: Some(QpState::Rtr), path_mtu: Some(Mtu::M1024), dest_qp_num: Some(peer),
//!                                remote_ip: Some(peer_ip), rq_psn: Some(0), ..Default::default() }).unwrap();
//!     ep.modify_qp(me, &QpAttr { state: Some(QpState::Rts), sq_psn: Some(0), ..Default::default() }).unwrap();
//! }
//! let (qpn, cq, mr) = side[0];
//! let remote = side[1].2;
//! eps[0].mr_bytes_mut(mr.lkey).unwrap()[..5].copy_from_slice(b"hello");
//! let sge = Sge { addr: mr.addr, length: 5, lkey: mr.lkey };
//! eps[0].post_send(qpn, SendWr::new(7, SendOp::Write { remote_addr: remote.addr, rkey: remote.rkey }, sge)).unwrap();
//! // The "port loop": here a wire between the two endpoints (ARP resolves the MACs).
//! let now = Instant::from_nanos(0);
//! for _ in 0..10 {
//!     for i in 0..2 {
//!         while let Some(frame) = eps[i].poll_transmit(now) {
//!             eps[1 - i].handle_frame(now, &frame);
//!         }
//!     }
//! }
//! let wc = eps[0].poll_cq(cq, 1).unwrap();
//! assert_eq!((wc[0].wr_id, wc[0].status), (7, WcStatus::Success));
//! assert_eq!(&eps[1].mr_bytes(remote.lkey).unwrap()[..5], b"hello");
//! ```

pub mod decode;
pub mod host;
pub mod icrc;
pub mod verbs;
pub mod wire;
