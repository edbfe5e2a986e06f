//! A P4CE lab in memory, in virtual time: the P4CE topology ([`crate::p4ce::topology`]: one
//! switch running `p4ce.p4`, the leader and 1..=4 replicas on their own cables) on the
//! in-memory driver ([`crate::MemLab`]: the switch as `pisa run` forwards with, every cable
//! with the link model, each direction at the end it leaves). Each host runs a P4CE node
//! ([`hosts::p4ce::machine::Node`], the same one the namespace lab runs on a thread) as a
//! host application; the P4CE agent ([`control::p4ce::Agent`]) with its RDMA CM endpoint
//! ([`control::p4ce::SwitchCm`]) runs on the switch's CPU port, installs the switch's base
//! tables when attached and programs the group the leader asks for through RDMA CM. Fail-over
//! is each node's own ([`hosts::p4ce::failover`]): heartbeats READ over RDMA, the lowest live
//! id leads, write permissions follow the leader, a new leader recovers the log and asks the
//! agent for the group again.
//!
//! - [`lab`]: [`Lab`], [`LabConfig`], fault switches (crash or pause a host, break the switch
//!   path), access to each node.
//! - [`apps`]: the node and the agent as applications of the driver.
//! - [`switch`]: the P4CE switch and its agent on the driver ([`switch::P4ceSwitch`]), which
//!   the Acuerdo lab's switch mode builds too.
//! - [`failtime`]: fail-over times (replica, leader, switch crashes) in virtual time.
//! - [`bench`](mod@bench): the consensus benchmark ([`bench::run`]) behind `pisa consensus bench`,
//!   faults on the host links included, each run ending with the log-integrity check
//!   ([`bench::drain_and_check`]).

pub mod apps;
pub mod bench;
pub mod failtime;
pub mod lab;
pub mod switch;

pub use bench::{BenchConfig, BenchReport};
pub use hosts::p4ce::failover::FailoverEvent;
pub use lab::{compile_p4ce, Fabric, Lab, LabConfig, LabError};
pub use switch::P4ceSwitch;
