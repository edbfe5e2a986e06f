//! The namespace driver of applications ([`NetnsApps`], root): the same [`HostApp`]s and
//! [`SwitchApp`] agents that [`crate::MemLab`] runs in virtual time, in network namespaces in
//! wall-clock time, behind the same [`Driver`] trait, so that a system's lab is written once.
//!
//! - Before the run: the switches are built in memory (as [`crate::MemLab`] builds them) and
//!   can be programmed by hand ([`Driver::switch_mut`]); applications and agents are attached.
//! - [`NetnsApps::start`] (or the first [`Driver::run_to`]): the topology's namespaces and
//!   veths come up ([`crate::netns::NetnsLab`]: `pisa-<lab>-<host>`, `eth0`), every switch starts
//!   as a `dataplane::switch::SwitchRuntime` on its veths ([`crate::netns::NetnsSwitches`]) plus
//!   a memory port pair per agent (with a socket to ring, so the pipeline thread sleeps in
//!   `ppoll`); each host application runs on a thread in its namespace ([`host`]) and each
//!   agent on a thread at its port ([`agent`]). Time is the wall clock since then, the same
//!   for the switches' runtimes, applications and agents. A host that runs an application
//!   has its `eth0` addresses flushed: the application is its network stack, and the kernel
//!   would otherwise answer its traffic too.
//! - [`Driver::with_app`] runs a closure on an application between two of its turns.
//! - Dropping the driver stops the threads, then the switches, then takes the namespaces down
//!   (when it brought them up), also when a run fails or panics.

pub mod agent;
pub mod host;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use dataplane::runtime::PortSetup;
use dataplane::switch::SwitchHandle;
use dataplane::{LinkControl, Nanos};
use pipeline::switch::Switch;

use self::agent::{AgentThread, SharedAgent};
use self::host::{since, HostThread, SharedApp};
use crate::driver::{Driver, DriverError};
use crate::host::{HostApp, SwitchApp};
use crate::mem::SwitchCounters;
use crate::netns::{NetnsLab, NetnsSwitches};
use crate::topology::{End, Topology};

/// How long a call on a switch's pipeline thread may take.
const CALL_TIMEOUT: Duration = Duration::from_secs(2);

/// How long [`Driver::run_to`] sleeps between checks of the threads.
const CHECK: Duration = Duration::from_millis(5);

/// An agent and where it is cabled.
struct AgentSpec {
    switch: usize,
    devport: u16,
    app: SharedAgent,
}

/// The running part: agent and host threads, switches, namespaces (stopped in that order).
struct Running {
    start: Instant,
    hosts: Vec<HostThread>,
    agents: Vec<AgentThread>,
    switches: Option<NetnsSwitches>,
    /// The namespaces (taken down on drop when this run brought them up).
    lab: NetnsLab,
}

impl Running {
    /// Stops every thread and switch; the first error.
    fn stop(&mut self) -> Result<(), DriverError> {
        let mut first = None;
        // Agents first: an agent that outlived its hosts would see their links fall silent.
        for a in &mut self.agents {
            if let Err(e) = a.stop() {
                first.get_or_insert(DriverError::Run(format!("agent: {e}")));
            }
        }
        for h in &mut self.hosts {
            if let Err(e) = h.stop() {
                first.get_or_insert(DriverError::Run(format!("host {}: {e}", h.name)));
            }
        }
        if let Some(s) = self.switches.take() {
            if let Err(e) = s.stop() {
                first.get_or_insert(e.into());
            }
        }
        first.map_or(Ok(()), Err)
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Err(e) = self.stop() {
            tracing::warn!(error = %e, "stopping the namespace lab");
        }
    }
}

/// A topology's applications in network namespaces.
pub struct NetnsApps {
    topo: Topology,
    /// The switches until the run starts.
    built: Vec<Switch>,
    apps: Vec<Option<SharedApp>>,
    agents: Vec<AgentSpec>,
    run: Option<Running>,
}

impl NetnsApps {
    /// Builds every switch of `topo`; nothing runs yet.
    pub fn new(topo: Topology) -> Result<NetnsApps, DriverError> {
        let built = crate::build::switches(&topo).map_err(crate::netns::NetnsError::from)?;
        Ok(NetnsApps {
            apps: vec![None; topo.hosts.len()],
            topo,
            built,
            agents: Vec::new(),
            run: None,
        })
    }

    /// Whether the run has started.
    pub fn running(&self) -> bool {
        self.run.is_some()
    }

    /// Brings the namespaces up, starts the switches and every application and agent thread;
    /// the lab's time starts now. Nothing happens when it runs already.
    pub fn start(&mut self) -> Result<(), DriverError> {
        if self.run.is_some() {
            return Ok(());
        }
        if self.built.len() != self.topo.switches.len() {
            return Err(DriverError::Run(
                "this lab has run (or failed to start): build a new one".into(),
            ));
        }
        let lab = NetnsLab::up(&self.topo)?;
        if !lab.owned() {
            // Its switches may run elsewhere (`pisa lab run`): two runtimes on one veth would
            // both forward every frame.
            return Err(DriverError::Run(format!(
                "lab {} is up already: take it down first (pisa lab down {0}); a run in \
                 namespaces brings its own lab up and down",
                self.topo.name
            )));
        }
        let mut extra = Vec::new();
        let mut agent_ends = Vec::new();
        for a in &self.agents {
            let name = format!("{}:{}", self.topo.switches[a.switch].name, a.devport);
            let (sw_end, agent_end) = agent::agent_pair(&name)
                .map_err(|e| DriverError::Run(format!("agent port {name}: {e}")))?;
            let port = PortSetup {
                devport: a.devport,
                port: Box::new(sw_end),
                link: dataplane::LinkConfig::default(),
            };
            extra.push((a.switch, port));
            agent_ends.push(agent_end);
        }
        let built = std::mem::take(&mut self.built);
        let clock = host::SinceClock::default();
        let switches = NetnsSwitches::start_with(
            &self.topo,
            built,
            extra,
            Arc::new(clock.clone()),
            false,
            None,
        )?;
        let handles = switches.handles();
        // From here on a failure stops what started and takes the namespaces down.
        let mut run = Running {
            start: Instant::now(),
            hosts: Vec::new(),
            agents: Vec::new(),
            switches: Some(switches),
            lab,
        };
        let mut ports = Vec::new();
        for (h, app) in self.apps.iter().enumerate() {
            let Some(app) = app else { continue };
            let name = &self.topo.hosts[h].name;
            let ns = run
                .lab
                .state
                .host(name)
                .map_err(crate::netns::NetnsError::from)?;
            // The application is the host's network stack: without addresses the kernel
            // beside it neither answers its traffic (ICMP port unreachable for every datagram
            // to a port no socket has) nor sends its own (IPv6 neighbour discovery).
            dataplane::netns::ip(&["-n", &ns.netns, "addr", "flush", "dev", "eth0"])
                .map_err(|e| DriverError::Run(format!("host {name}: {e}")))?;
            let port = HostThread::open(&ns.netns).map_err(DriverError::Run)?;
            ports.push((name.clone(), port, app.clone()));
        }
        // The lab's time starts now, everything open.
        let start = *clock.0.get_or_init(Instant::now);
        run.start = start;
        for (a, port) in self.agents.iter().zip(agent_ends) {
            let name = &self.topo.switches[a.switch].name;
            let handle = match handles.iter().find(|(n, _)| n == name) {
                Some((_, SwitchHandle::Single(h))) => h.clone(),
                _ => return Err(DriverError::Run(format!("switch {name} has no pipeline"))),
            };
            let t =
                AgentThread::start(port, a.app.clone(), handle, start).map_err(DriverError::Run)?;
            run.agents.push(t);
        }
        for (name, port, app) in ports {
            let t = HostThread::start(&name, port, app, start)
                .map_err(|e| DriverError::Run(format!("host {name}: {e}")))?;
            run.hosts.push(t);
        }
        self.run = Some(run);
        Ok(())
    }

    /// Stops everything and takes the namespaces down (when this driver brought them up); the
    /// applications stay, to read.
    pub fn stop(&mut self) -> Result<(), DriverError> {
        match self.run.take() {
            Some(mut r) => r.stop(),
            None => Ok(()),
        }
    }

    /// An error of a thread that stopped by itself.
    fn check(&mut self) -> Result<(), DriverError> {
        let Some(run) = &mut self.run else {
            return Ok(());
        };
        for h in &mut run.hosts {
            if h.finished() {
                let e = h.stop().err().unwrap_or_else(|| "stopped".into());
                return Err(DriverError::Run(format!("host {}: {e}", h.name)));
            }
        }
        for a in &mut run.agents {
            if a.finished() {
                let e = a.stop().err().unwrap_or_else(|| "stopped".into());
                return Err(DriverError::Run(format!("agent: {e}")));
            }
        }
        Ok(())
    }

    /// The running switch end of link `link` (end `end` or, for a host's end, the switch's).
    fn switch_end(&self, link: usize, end: usize) -> Option<(usize, u16)> {
        let l = self.topo.links.get(link)?;
        let ends = if end == 0 { [l.a, l.b] } else { [l.b, l.a] };
        ends.into_iter().find_map(|e| match e {
            End::Switch { switch, devport } => Some((switch, devport)),
            _ => None,
        })
    }
}

impl Driver for NetnsApps {
    const WALL_CLOCK: bool = true;

    fn build(topo: Topology) -> Result<Self, DriverError> {
        NetnsApps::new(topo)
    }

    fn kind(&self) -> &'static str {
        "namespaces (wall clock)"
    }

    fn topology(&self) -> &Topology {
        &self.topo
    }

    fn now(&self) -> Nanos {
        self.run.as_ref().map_or(Nanos(0), |r| since(r.start))
    }

    fn attach(&mut self, host: usize, app: Box<dyn HostApp + Send>) -> Result<(), DriverError> {
        if self.run.is_some() {
            return Err(DriverError::Run(
                "attach applications before the run starts".into(),
            ));
        }
        let slot = self
            .apps
            .get_mut(host)
            .ok_or_else(|| DriverError::Run(format!("no host {host}")))?;
        *slot = Some(Arc::new(Mutex::new(app)));
        Ok(())
    }

    fn attach_agent(
        &mut self,
        switch: usize,
        devport: u16,
        app: Box<dyn SwitchApp + Send>,
    ) -> Result<usize, DriverError> {
        if self.run.is_some() || switch >= self.topo.switches.len() {
            return Err(DriverError::Run(format!(
                "agent on switch {switch}: attach agents to a switch of the topology before the run"
            )));
        }
        self.agents.push(AgentSpec {
            switch,
            devport,
            app: Arc::new(Mutex::new(Some(app))),
        });
        Ok(self.agents.len() - 1)
    }

    fn with_app<T: HostApp, R>(&mut self, host: usize, f: impl FnOnce(&mut T) -> R) -> Option<R> {
        let app = self.apps.get(host)?.as_ref()?;
        let mut g = app.lock().unwrap_or_else(|p| p.into_inner());
        g.as_any_mut().downcast_mut::<T>().map(f)
    }

    fn with_agent<T: SwitchApp, R>(
        &mut self,
        agent: usize,
        f: impl FnOnce(&mut T) -> R,
    ) -> Option<R> {
        let a = self.agents.get(agent)?;
        let mut g = a.app.lock().unwrap_or_else(|p| p.into_inner());
        g.as_mut()?.as_any_mut().downcast_mut::<T>().map(f)
    }

    fn switch_mut(&mut self, switch: usize) -> Result<&mut Switch, DriverError> {
        if self.run.is_some() {
            return Err(DriverError::Run(format!(
                "switch {}: in namespaces a running switch belongs to its pipeline thread \
                 (program it before the run, or from an agent)",
                self.topo.switches[switch].name
            )));
        }
        self.built
            .get_mut(switch)
            .ok_or_else(|| DriverError::Run(format!("no switch {switch}")))
    }

    fn switches_mut(&mut self) -> Result<Vec<&mut Switch>, DriverError> {
        if self.run.is_some() {
            return Err(DriverError::Run(
                "in namespaces running switches belong to their pipeline threads".into(),
            ));
        }
        Ok(self.built.iter_mut().collect())
    }

    fn with_switch<R: Send + 'static>(
        &mut self,
        switch: usize,
        f: impl FnOnce(&mut Switch) -> R + Send + 'static,
    ) -> Result<R, DriverError> {
        let Some(run) = &self.run else {
            return Ok(f(Driver::switch_mut(self, switch)?));
        };
        let name = &self.topo.switches[switch].name;
        let handles = run.switches.as_ref().map(NetnsSwitches::handles);
        match handles
            .unwrap_or_default()
            .into_iter()
            .find(|(n, _)| n == name)
        {
            Some((_, SwitchHandle::Single(h))) => h
                .call(CALL_TIMEOUT, move |p| f(&mut p.sw))
                .map_err(|e| DriverError::Run(format!("switch {name}: {e}"))),
            _ => Err(DriverError::Run(format!("switch {name} is not running"))),
        }
    }

    fn set_link_up(&mut self, link: usize, up: bool) -> Result<(), DriverError> {
        let l = self
            .topo
            .links
            .get_mut(link)
            .ok_or_else(|| DriverError::Run(format!("no link {link}")))?;
        if self.run.is_none() {
            l.up = up;
            return Ok(());
        }
        let (a, b) = (l.a, l.b);
        for (end, me, far) in [(0, a, b), (1, b, a)] {
            if !matches!(me, End::Switch { .. }) {
                continue;
            }
            let far_is_host = matches!(far, End::Host(_));
            let ctl = self.link_control(link, end)?;
            ctl.update(|c| {
                c.tx.faults.link_down = !up;
                if far_is_host {
                    c.rx.faults.link_down = !up;
                }
            })
            .map_err(|e| DriverError::Run(format!("link {link}: {e}")))?;
        }
        Ok(())
    }

    fn link_control(&self, link: usize, end: usize) -> Result<LinkControl, DriverError> {
        let run = self.run.as_ref().ok_or_else(|| {
            DriverError::Run("link controls exist once the run has started".into())
        })?;
        let (s, devport) = self
            .switch_end(link, end)
            .ok_or_else(|| DriverError::Run(format!("link {link} has no switch end")))?;
        let name = &self.topo.switches[s].name;
        let handles = run.switches.as_ref().map(NetnsSwitches::handles);
        let h = handles
            .unwrap_or_default()
            .into_iter()
            .find(|(n, _)| n == name)
            .map(|(_, h)| h)
            .ok_or_else(|| DriverError::Run(format!("switch {name} is not running")))?;
        h.link(devport)
            .map_err(|e| DriverError::Run(format!("{name}:{devport}: {e}")))
    }

    fn start(&mut self) -> Result<(), DriverError> {
        NetnsApps::start(self)
    }

    fn finish(&mut self) -> Result<(), DriverError> {
        self.stop()
    }

    fn set_link_config(
        &mut self,
        link: usize,
        end: usize,
        config: dataplane::LinkConfig,
    ) -> Result<(), DriverError> {
        let bad = || DriverError::Run(format!("no link {link}"));
        let l = self.topo.links.get_mut(link).ok_or_else(bad)?;
        let host_end = matches!(if end == 0 { l.a } else { l.b }, End::Host(_));
        if self.run.is_none() {
            // Before the run: the topology's settings, which the switches start with.
            if end == 0 {
                l.config.tx = config.tx;
            } else {
                l.config.rx = config.tx;
            }
            return Ok(());
        }
        let ctl = self.link_control(link, end)?;
        ctl.update(|c| {
            if host_end {
                c.rx = config.tx;
            } else {
                c.tx = config.tx;
            }
        })
        .map_err(|e| DriverError::Run(format!("link {link}: {e}")))
    }

    fn run_to(&mut self, until: Nanos) -> Result<(), DriverError> {
        NetnsApps::start(self)?;
        loop {
            self.check()?;
            let now = self.now();
            if now >= until {
                return Ok(());
            }
            std::thread::sleep(until.saturating_sub(now).to_duration().min(CHECK));
        }
    }

    fn quiescent(&self) -> bool {
        false
    }

    fn switch_counters(&self) -> Vec<SwitchCounters> {
        let mut by_name = self
            .run
            .as_ref()
            .and_then(|r| r.switches.as_ref())
            .map(NetnsSwitches::counters)
            .unwrap_or_default();
        self.topo
            .switches
            .iter()
            .map(|s| {
                by_name.remove(&s.name).unwrap_or(SwitchCounters {
                    passes: 0,
                    switch_drops: 0,
                    no_port: 0,
                    ports: Vec::new(),
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::RdmaHost;

    /// Before the run (no root needed): the switches are there to program, applications are
    /// attached and reachable, link settings go into the topology the switches start with.
    #[test]
    fn before_the_run_switches_apps_and_links_are_set_up_in_memory() {
        let topo = crate::acuerdo::topology(2).unwrap();
        let mut lab = NetnsApps::new(topo.clone()).unwrap();
        assert_eq!(lab.kind(), "namespaces (wall clock)");
        assert_eq!(lab.now(), Nanos(0));
        assert!(!lab.running());
        assert_eq!(lab.switches_mut().unwrap().len(), topo.switches.len());
        Driver::switch_mut(&mut lab, 0).unwrap();
        lab.attach(0, Box::new(RdmaHost::new(&topo, 0))).unwrap();
        let ip = lab.with_app(0, |h: &mut RdmaHost| h.endpoint.config().device.ipv4);
        assert_eq!(ip, Some(topo.hosts[0].ip));
        assert!(
            lab.with_app(1, |_: &mut RdmaHost| ()).is_none(),
            "host 1 runs nothing"
        );
        assert!(
            lab.link_control(0, 0).is_err(),
            "no link model before the run"
        );
        let mut c = dataplane::LinkConfig::default();
        c.tx.faults.loss = 0.25;
        lab.set_link_config(0, 1, c).unwrap();
        lab.set_link_up(0, false).unwrap();
        let l = &lab.topology().links[0];
        assert_eq!((l.config.rx.faults.loss, l.up), (0.25, false));
        assert!(lab.attach(9, Box::new(RdmaHost::new(&topo, 1))).is_err());
        assert!(lab.attach_agent(5, 0, Box::new(NoAgent)).is_err());
    }

    /// An agent that does nothing (for the attach check).
    struct NoAgent;

    impl SwitchApp for NoAgent {
        fn receive(&mut self, _: Nanos, _: &[u8], _: &mut Switch) {}
        fn poll(&mut self, _: Nanos, _: &mut Switch, _: &mut dyn FnMut(Vec<u8>)) {}
        fn next_wakeup(&self) -> Option<Nanos> {
            None
        }
        fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
            self
        }
    }
}
