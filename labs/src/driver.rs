//! What a system's lab needs from the driver that runs it, so that one lab is written once and
//! runs both in memory in virtual time ([`crate::MemLab`]) and in network namespaces in wall
//! clock time ([`crate::netns_apps::NetnsApps`]): build the topology's switches, program them
//! before the run, attach a [`HostApp`] to each host and [`SwitchApp`] agents to switch ports,
//! run for a while, and read an application back.
//!
//! The differences stay inside the drivers: in memory everything runs on the caller's thread
//! and time only moves in [`Driver::run_to`]; in namespaces each host application runs on its
//! own thread inside its namespace, each agent on its own thread at the switch's port, and
//! time is the wall clock since the run started ([`Driver::run_to`] waits for it).

use dataplane::{LinkControl, Nanos};
use pipeline::switch::Switch;

use crate::host::{HostApp, SwitchApp};
use crate::mem::SwitchCounters;
use crate::topology::Topology;

/// A driver could not do what was asked.
#[derive(Debug, thiserror::Error)]
pub enum DriverError {
    #[error(transparent)]
    Mem(#[from] crate::mem::MemLabError),
    #[error(transparent)]
    Netns(#[from] crate::netns::NetnsError),
    #[error("{0}")]
    Run(String),
}

/// A lab driver: the in-memory one or the namespace one.
pub trait Driver: Sized + 'static {
    /// Whether the lab's time is the wall clock (namespaces) rather than virtual.
    const WALL_CLOCK: bool;
    /// Builds every switch of `topo` (not running yet in namespaces: the namespaces come up,
    /// and the switches start, at the first [`Driver::run_to`]).
    fn build(topo: Topology) -> Result<Self, DriverError>;
    /// Which driver this is, for reports ("memory (virtual time)", "namespaces (wall clock)").
    fn kind(&self) -> &'static str;
    fn topology(&self) -> &Topology;
    /// The lab's time: virtual, or wall-clock time since the run started (zero before).
    fn now(&self) -> Nanos;
    /// Runs `app` on host `host`.
    fn attach(&mut self, host: usize, app: Box<dyn HostApp + Send>) -> Result<(), DriverError>;
    /// Cables agent `app` to device port `devport` of switch `switch`; returns its index.
    fn attach_agent(
        &mut self,
        switch: usize,
        devport: u16,
        app: Box<dyn SwitchApp + Send>,
    ) -> Result<usize, DriverError>;
    /// Runs `f` on host `host`'s application if it is a `T` (between two of its turns), then
    /// lets the application run (it may have been given work).
    fn with_app<T: HostApp, R>(&mut self, host: usize, f: impl FnOnce(&mut T) -> R) -> Option<R>;
    /// Runs `f` on agent `agent` if it is a `T`.
    fn with_agent<T: SwitchApp, R>(
        &mut self,
        agent: usize,
        f: impl FnOnce(&mut T) -> R,
    ) -> Option<R>;
    /// Switch `switch`'s pipeline, to program by hand. In namespaces only before the run
    /// starts (afterwards the switch belongs to its pipeline thread: program it from an agent).
    fn switch_mut(&mut self, switch: usize) -> Result<&mut Switch, DriverError>;
    /// Every switch's pipeline at once, in topology order (as [`Driver::switch_mut`]).
    fn switches_mut(&mut self) -> Result<Vec<&mut Switch>, DriverError>;
    /// Runs `f` on switch `switch` (in namespaces on its pipeline thread between two batches
    /// once it runs).
    fn with_switch<R: Send + 'static>(
        &mut self,
        switch: usize,
        f: impl FnOnce(&mut Switch) -> R + Send + 'static,
    ) -> Result<R, DriverError>;
    /// Takes link `link` down or up (both directions).
    fn set_link_up(&mut self, link: usize, up: bool) -> Result<(), DriverError>;
    /// The link model control of one end of link `link` (0: end `a`, 1: end `b`).
    fn link_control(&self, link: usize, end: usize) -> Result<LinkControl, DriverError>;
    /// Starts the run if it has not started (namespaces up, switches and threads running;
    /// in memory there is nothing to start).
    fn start(&mut self) -> Result<(), DriverError>;
    /// Ends the run: threads and switches stop, namespaces go down (in memory: nothing); the
    /// applications stay, to read.
    fn finish(&mut self) -> Result<(), DriverError>;
    /// Gives the direction leaving end `end` of link `link` the settings of `config.tx`
    /// (faults included). In memory the end's whole link model takes `config`; in namespaces
    /// the switch end of a host's cable models the host's direction on receive.
    fn set_link_config(
        &mut self,
        link: usize,
        end: usize,
        config: dataplane::LinkConfig,
    ) -> Result<(), DriverError>;
    /// Runs until the lab's time reaches `until` (in memory it jumps there once nothing is
    /// left to do).
    fn run_to(&mut self, until: Nanos) -> Result<(), DriverError>;
    /// Whether nothing at all is left to happen (only the in-memory driver can tell).
    fn quiescent(&self) -> bool;
    /// Every switch's counters, in topology order.
    fn switch_counters(&self) -> Vec<SwitchCounters>;
}

impl Driver for crate::MemLab {
    const WALL_CLOCK: bool = false;

    fn build(topo: Topology) -> Result<Self, DriverError> {
        Ok(crate::MemLab::new(topo)?)
    }

    fn kind(&self) -> &'static str {
        "memory (virtual time)"
    }

    fn topology(&self) -> &Topology {
        crate::MemLab::topology(self)
    }

    fn now(&self) -> Nanos {
        crate::MemLab::now(self)
    }

    fn attach(&mut self, host: usize, app: Box<dyn HostApp + Send>) -> Result<(), DriverError> {
        crate::MemLab::attach(self, host, app);
        Ok(())
    }

    fn attach_agent(
        &mut self,
        switch: usize,
        devport: u16,
        app: Box<dyn SwitchApp + Send>,
    ) -> Result<usize, DriverError> {
        Ok(crate::MemLab::attach_agent(self, switch, devport, app))
    }

    fn with_app<T: HostApp, R>(&mut self, host: usize, f: impl FnOnce(&mut T) -> R) -> Option<R> {
        let r = f(self.app_mut::<T>(host)?);
        self.poll_host(host);
        Some(r)
    }

    fn with_agent<T: SwitchApp, R>(
        &mut self,
        agent: usize,
        f: impl FnOnce(&mut T) -> R,
    ) -> Option<R> {
        let r = f(self.agent_mut::<T>(agent)?);
        self.poll_agent(agent);
        Some(r)
    }

    fn switch_mut(&mut self, switch: usize) -> Result<&mut Switch, DriverError> {
        Ok(crate::MemLab::switch_mut(self, switch))
    }

    fn switches_mut(&mut self) -> Result<Vec<&mut Switch>, DriverError> {
        Ok(crate::MemLab::switches_mut(self))
    }

    fn with_switch<R: Send + 'static>(
        &mut self,
        switch: usize,
        f: impl FnOnce(&mut Switch) -> R + Send + 'static,
    ) -> Result<R, DriverError> {
        Ok(f(crate::MemLab::switch_mut(self, switch)))
    }

    fn set_link_up(&mut self, link: usize, up: bool) -> Result<(), DriverError> {
        crate::MemLab::set_link_up(self, link, up);
        Ok(())
    }

    fn link_control(&self, link: usize, end: usize) -> Result<LinkControl, DriverError> {
        Ok(crate::MemLab::link_control(self, link, end))
    }

    fn start(&mut self) -> Result<(), DriverError> {
        Ok(())
    }

    fn finish(&mut self) -> Result<(), DriverError> {
        Ok(())
    }

    fn set_link_config(
        &mut self,
        link: usize,
        end: usize,
        config: dataplane::LinkConfig,
    ) -> Result<(), DriverError> {
        crate::MemLab::link_control(self, link, end)
            .set_config(config)
            .map_err(|e| DriverError::Run(format!("link {link}: {e}")))
    }

    fn run_to(&mut self, until: Nanos) -> Result<(), DriverError> {
        while self.now() < until {
            self.run_until(Some(until));
            if self.next_due().is_none() {
                break;
            }
        }
        self.advance_to(until);
        Ok(())
    }

    fn quiescent(&self) -> bool {
        self.next_due().is_none()
    }

    fn switch_counters(&self) -> Vec<SwitchCounters> {
        crate::MemLab::switch_counters(self)
    }
}
