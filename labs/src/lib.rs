//! Labs: topologies of pisa switches, hosts and links from one YAML file, and the two drivers
//! that run them — in memory with virtual time ([`mem`]; deterministic, no root: tests, demos,
//! benches) and in network namespaces with veth pairs and wall-clock time ([`netns`]; root).
//! Both build their switches the same way ([`build`]) and run them as the same
//! `dataplane::switch::SwitchPipeline`; this is the one place where switches and hosts are wired
//! together.
//!
//! - [`topology`]: the file format, checked with file:line errors;
//! - [`generate`]: fat tree, leaf-spine and MC-RDMA testbed generators (the shipped files);
//! - [`routes`]: every switch's routes and ECMP groups for `p4/programs/fabric.p4`;
//! - [`ping`]: ping-all, the reachability check of any topology;
//! - [`host`]: applications on in-memory hosts, pisa's RoCEv2 endpoint among them;
//! - [`mcrdma`]: the MC-RDMA lab (mcrdma.p4 on the ToRs, its control plane, the replication
//!   workload in MC-RDMA, fanout and chain modes);
//! - [`load`]: simulated traffic and the driver's speed;
//! - [`driver`]: what a system's lab needs from a driver ([`Driver`]), implemented by
//!   [`MemLab`] and by [`NetnsApps`] (the same host applications and switch agents on threads
//!   in namespaces, wall-clock time), so that one lab runs on both.

pub mod acuerdo;
pub mod baselines;
pub mod build;
pub mod capture;
pub mod driver;
pub mod generate;
pub mod host;
pub mod leo;
pub mod load;
pub mod mcrdma;
pub mod mem;
pub mod netns;
pub mod netns_apps;
pub mod onepipe;
pub mod p4ce;
pub mod ping;
pub mod routes;
pub mod topology;

pub use driver::{Driver, DriverError};
pub use mem::MemLab;
pub use netns_apps::NetnsApps;
pub use topology::{End, Topology, TopologyError};
