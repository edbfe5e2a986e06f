//! Host-side protocols of the seed systems, built on the userspace RDMA endpoint. They reach a
//! switch over the wire only (this crate depends on `pisa-rdma` and on `pisa-dataplane` for
//! ports, never on the pipeline, the P4 frontend or the control plane); the labs that wire them
//! to switches are in `pisa-labs`.
//!
//! - [`mcrdma`]: the host side of MC-RDMA (the CMD's QP steps) and the replication workload
//!   of its benchmark (MC-RDMA, fanout and chain replication over RC).
//! - [`mu`]: a Mu-style replicated log (leader appends with one RDMA WRITE per entry, to the
//!   P4CE switch's BCast QP or to every replica; replicas apply in order), sans I/O.
//! - [`acuerdo`]: Acuerdo (ICPP 2022), atomic broadcast over one-sided RDMA WRITEs: ring
//!   buffers, shared state tables, up-to-date leader election, sans I/O.
//! - [`leo`]: LEO, message-level in-network computing communication: paths, hardware models,
//!   application YAML, the k-step LP and the online heuristic, JCT monitoring, sans I/O.
//! - [`onepipe`]: lib1pipe (1Pipe's host library: the Table 1 API, host clocks, barriers and
//!   the receive reorder buffer, best effort and reliable), sans I/O.
//! - [`p4ce`]: the host side of P4CE: the CM private data shared with the switch agent
//!   ([`p4ce::wire`]), a node's endpoint and RDMA CM steps ([`p4ce::node`]), the node as an
//!   I/O-free state machine both labs run ([`p4ce::machine`]), the same node on its own thread
//!   in wall-clock time ([`p4ce::thread`]), per-node leader fail-over ([`p4ce::failover`]) and the
//!   consensus benchmark's figures ([`p4ce::bench`]).

pub mod acuerdo;
pub mod leo;
pub mod mcrdma;
pub mod mu;
pub mod onepipe;
pub mod p4ce;
