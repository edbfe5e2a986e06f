//! Host-side protocols of the seed systems, built on the userspace RDMA endpoint.
//!
//! - [`mu`]: a Mu-style replicated log (leader appends with one RDMA WRITE per entry, to the
//!   P4CE switch's BCast QP or to every replica; replicas apply in order), sans I/O.
//! - [`p4ce_cm`]: the RDMA CM half of the P4CE agent (an endpoint on the switch CPU port).
//! - [`p4ce_lab`]: a leader and replicas on in-memory links around a [`pipeline::switch::Switch`]
//!   running `p4ce.p4`, driven in virtual time; the consensus benchmark runs on it.
//! - [`p4ce_netns`]: the same group in network namespaces over AF_PACKET, the switch on the
//!   dataplane runtime, in wall-clock time (root).

pub mod mu;
pub mod p4ce_cm;
pub mod p4ce_lab;
pub mod p4ce_netns;
