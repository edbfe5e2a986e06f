//! MC-RDMA in a lab (seed 001): the ToRs of a topology run `p4/programs/mcrdma.p4`, the
//! control plane (`control::mcrdma`) sees the lab through [`fabric::LabFabric`], and
//! [`lab::McLab`] connects a sender and its receivers (pisa's RDMA endpoint, unmodified RC) in
//! MC-RDMA, fanout or chain mode and runs the replication workload, in memory in virtual time or
//! in network namespaces in wall-clock time (one lab over [`crate::Driver`]).

pub mod bench;
pub mod fabric;
pub mod lab;

pub use bench::{BenchConfig, BenchReport, Regions};
pub use fabric::LabFabric;
pub use lab::{LabConfig, McHost, McLab, McLabError};

#[cfg(test)]
mod tests;
