//! P4CE in network namespaces, in wall-clock time: the same switch program, agent, RDMA
//! endpoint and log as the in-memory lab ([`super::mem`]), on real sockets.
//!
//! - The hosts are the namespaces of a lab file (`deploy/labs/p4ce.yaml`, brought up by
//!   [`dataplane::lab`]); [`LabGuard`] brings one up (and down again) or uses one already up.
//! - The switch: p4ce.p4 as [`dataplane::switch::SwitchPipeline`] on
//!   [`dataplane::switch::SwitchRuntime`] (one pipeline thread, as `pisa run`) with AF_PACKET
//!   ports on the switch-side veths (faults such as loss, and a broken switch path, injected
//!   there by their link model) and a CPU port (a memory pair) to the RDMA CM agent's thread.
//! - `switch`: that thread ([`switch::CmThread`]): it owns the P4CE agent and its CM endpoint,
//!   and runs each CM step on the pipeline thread, moving them there and back.
//! - The per-link model (rate, delay: [`dataplane::LinkPort`]) sits at each host's end, as in
//!   the in-memory lab; the node's loop waits for the frames it holds back, so a held frame
//!   costs no spinning thread (the runtime's threads wait in whole milliseconds).
//! - The nodes: the leader and each replica on its own thread inside its namespace
//!   ([`hosts::p4ce::thread`]), AF_PACKET on its interface, the RoCEv2 endpoint and the
//!   Mu-style log; every connection is set up through RDMA CM (the switch path through the
//!   agent, as in the in-memory lab); fail-over each node on its own
//!   ([`hosts::p4ce::failover`]).
//! - `lab`: [`NetnsLab`]: start it all, append, crash a node, break the switch path, inject
//!   loss, run code on a node or on the agent, stop.
//! - `bench`: [`bench::run`], `pisa consensus bench --lab`: the in-memory bench's report
//!   ([`hosts::p4ce::BenchReport`]) plus where the time went (link use, CPU per thread).
//!
//! Needs root (namespaces, AF_PACKET).

pub mod bench;
pub mod lab;
pub mod switch;

use std::path::{Path as FsPath, PathBuf};

pub use lab::{NetnsConfig, NetnsLab};

/// Something in the namespace lab failed.
#[derive(Debug, thiserror::Error)]
pub enum NetnsError {
    /// Setting up failed.
    #[error("{0}")]
    Setup(String),
    /// A node failed or did not answer.
    #[error("node {0}: {1}")]
    Node(u16, String),
    /// Waiting took too long.
    #[error("timed out: {0}")]
    Timeout(String),
    /// The lab topology.
    #[error(transparent)]
    Topology(#[from] dataplane::LabError),
    /// Entering a namespace or running a command.
    #[error(transparent)]
    Cmd(#[from] dataplane::netns::CmdError),
    /// A port.
    #[error("port: {0}")]
    Port(#[from] dataplane::PortError),
    /// The switch runtime.
    #[error("switch runtime: {0}")]
    Runtime(#[from] dataplane::runtime::RuntimeError),
    /// The switch.
    #[error(transparent)]
    Lab(#[from] super::mem::LabError),
    /// The log.
    #[error("log: {0}")]
    Mu(#[from] hosts::mu::MuError),
    /// A node (its thread, endpoint or log).
    #[error(transparent)]
    Host(#[from] hosts::p4ce::NodeError),
}

/// A lab brought up for a run (taken down again on drop), or one that was already up (left
/// as it is).
pub struct LabGuard {
    /// What the lab consists of.
    pub state: dataplane::LabState,
    dir: PathBuf,
    owned: bool,
}

impl LabGuard {
    /// Uses lab `lab` if it is up (state in `dir`), else brings it up and owns it.
    pub fn up(lab: &dataplane::Lab, dir: &FsPath) -> Result<LabGuard, NetnsError> {
        match dataplane::lab::load_state(dir, &lab.name) {
            Ok(state) if !state.hosts.is_empty() => Ok(LabGuard {
                state,
                dir: dir.to_path_buf(),
                owned: false,
            }),
            _ => {
                let state = dataplane::lab::lab_up_in(lab, dir)?;
                Ok(LabGuard {
                    state,
                    dir: dir.to_path_buf(),
                    owned: true,
                })
            }
        }
    }

    /// Whether this guard brought the lab up (and takes it down).
    pub fn owned(&self) -> bool {
        self.owned
    }

    /// Takes the lab down now if this guard brought it up.
    pub fn down(&mut self) -> Result<(), NetnsError> {
        if self.owned {
            self.owned = false;
            dataplane::lab::lab_down_in(&self.state.name, &self.dir)?;
        }
        Ok(())
    }
}

impl Drop for LabGuard {
    fn drop(&mut self) {
        let _ = self.down();
    }
}
