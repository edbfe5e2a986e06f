//! [`Lab`]: the P4CE topology on the in-memory driver, its setup, and what tests, the bench
//! and the fail-over measurements do to it (see the module docs of [`super`]).

use std::net::Ipv4Addr;
use std::path::Path as FsPath;
use std::sync::Arc;
use std::time::Duration;

use control::p4ce::{Agent, CmAgentEvent, P4ceError};
use dataplane::link::DirectionConfig;
use dataplane::{FaultConfig, LinkConfig, Nanos, PortError};
use hosts::mu::{Leader, LeaderConfig, LeaderEvent, LogGeometry, MuError, Path};
use hosts::p4ce::failover::{FailoverEvent, FailoverSetup};
use hosts::p4ce::machine::{LeaderSetup, LostHook, Node, NodeConfig, NodeFailover};
use hosts::p4ce::node::{host_ip, NodeSpec};
use hosts::p4ce::{NodeError, GROUP, MAX_REPLICAS, SWITCH_IP};
use pipeline::ir::Program;
use pipeline::switch::{Switch, SwitchError};
use rdma::verbs::{Instant, VerbsError};

use super::apps::{AgentApp, NodeApp};
use super::switch::P4ceSwitch;
use crate::mem::{MemLab, MemLabError};
use crate::p4ce::CPU_PORT;
use crate::topology::TopologyError;

/// ACK timeout code of the lab's QPs: 4.096 µs × 2^8 ≈ 1 ms.
const ACK_TIMEOUT: u8 = 8;

/// How long the RDMA CM of the nodes and of the agent waits for an answer before resending.
pub(crate) const CM_RESPONSE_TIMEOUT: Duration = Duration::from_millis(2);

/// How long [`Lab::new`] waits (virtual time) for the connections and heartbeats.
const SETUP_TIMEOUT: Nanos = Nanos::from_millis(50);

/// A lab could not be built or driven.
#[derive(Debug, thiserror::Error)]
pub enum LabError {
    /// p4ce.p4 did not compile.
    #[error("p4ce.p4: {0}")]
    Compile(String),
    /// The switch refused the program.
    #[error("switch: {0}")]
    Switch(#[from] SwitchError),
    /// The agent refused the group.
    #[error("P4CE agent: {0}")]
    Agent(#[from] P4ceError),
    /// An endpoint refused a verb.
    #[error("RDMA: {0}")]
    Verbs(#[from] VerbsError),
    /// The log refused an operation.
    #[error("log: {0}")]
    Mu(#[from] MuError),
    /// A port failed.
    #[error("port: {0}")]
    Port(#[from] PortError),
    /// A node's host side refused.
    #[error(transparent)]
    Node(#[from] NodeError),
    /// The topology.
    #[error(transparent)]
    Topology(#[from] TopologyError),
    /// The in-memory driver.
    #[error(transparent)]
    Mem(#[from] MemLabError),
    /// A bad setting.
    #[error("bad lab setting: {0}")]
    Config(String),
}

/// Compiles `p4ce.p4` for Tofino 1.
pub fn compile_p4ce(path: &FsPath) -> Result<Arc<Program>, LabError> {
    crate::build::compile(path, pipeline::ir::Target::Tofino1).map_err(LabError::Compile)
}

/// Where the group's hosts and the P4CE switch sit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Fabric {
    /// Every host on its own port of the P4CE switch, one L2 segment
    /// ([`crate::p4ce::topology`], `deploy/labs/p4ce-switch.yaml`).
    #[default]
    Switch,
    /// Across a leaf-spine of `fabric.p4` switches, the P4CE switch one-armed off `leaf1`
    /// ([`crate::p4ce::leaf_spine_topology`], `deploy/labs/p4ce-leaf-spine.yaml`): the leader
    /// under `leaf1`, the replicas under `leaf2..leaf4`, everything routed by IP (in memory
    /// only).
    LeafSpine,
}

/// Lab settings (both labs take them; times are virtual in memory, wall-clock in
/// namespaces).
#[derive(Debug, Clone)]
pub struct LabConfig {
    /// Replicas (1..=4).
    pub replicas: usize,
    /// Replica ACKs per commit.
    pub f: usize,
    /// Start on the switch path (P4CE) or unicast only (Mu).
    pub mode: Path,
    /// Largest value.
    pub max_value: usize,
    /// Log slots.
    pub slots: usize,
    /// Entries in flight.
    pub outstanding: usize,
    /// Rate of every host link, each direction, bit/s (0 = unlimited).
    pub link_rate_bps: u64,
    /// Propagation delay of every host link, ns.
    pub link_delay_ns: u64,
    /// Loss probability on every host link, each direction (taken with [`LabConfig::faults`]).
    pub loss: f64,
    /// Faults on every host link, each direction, besides `loss` (duplication, reordering,
    /// ...: the link model's [`FaultConfig`]).
    pub faults: FaultConfig,
    /// Per host (index 0 the leader): a link setting that replaces rate, delay and faults
    /// above for that host's cable, seen from the switch's port (`tx` towards the host, the
    /// syntax of a lab file's `link:` line); a seed of 0 takes the lab's.
    pub host_links: Vec<Option<LinkConfig>>,
    /// Seed (PSNs, link faults).
    pub seed: u64,
    /// Switch path timeout of the leader.
    pub switch_timeout: Duration,
    /// Delay before the leader tries the switch path again.
    pub switch_retry: Duration,
    /// Keep every applied value (tests); off for benchmarks.
    pub record: bool,
    /// How often the leader reads the replicas' status words.
    pub probe_every: Duration,
    /// Leader fail-over: heartbeats every tenth of this, a node silent this long is dead,
    /// the lowest live id leads (None: off, the leader never changes).
    pub leader_timeout: Option<Duration>,
    /// The topology: every host on the P4CE switch, or across a leaf-spine.
    pub fabric: Fabric,
    /// The `deploy/labs/` the generated topology is read from (its program references
    /// resolve there): [`crate::p4ce::repo_labs_dir`] by default.
    pub topology_dir: std::path::PathBuf,
}

impl LabConfig {
    /// Defaults: 10 Gb/s links with 1 µs delay, no loss, 64 slots.
    pub fn new(mode: Path, replicas: usize) -> LabConfig {
        LabConfig {
            replicas,
            f: replicas.div_ceil(2).max(1),
            mode,
            max_value: 4096,
            slots: 64,
            outstanding: 8,
            link_rate_bps: 10_000_000_000,
            link_delay_ns: 1_000,
            loss: 0.0,
            faults: FaultConfig::default(),
            host_links: Vec::new(),
            seed: 1,
            switch_timeout: Duration::from_micros(500),
            switch_retry: Duration::from_millis(5),
            record: true,
            probe_every: Duration::from_millis(1),
            leader_timeout: None,
            fabric: Fabric::Switch,
            topology_dir: crate::p4ce::repo_labs_dir(),
        }
    }

    /// The faults on every host link without a setting of its own: [`LabConfig::faults`]
    /// with [`LabConfig::loss`] when that is set.
    pub fn link_faults(&self) -> FaultConfig {
        let mut f = self.faults.clone();
        if self.loss > 0.0 {
            f.loss = self.loss;
        }
        f
    }

    /// The cable of host `host` seen from the switch's port (`tx` towards the host): its own
    /// setting if it has one, else every host link's rate, delay and faults; `seed` when the
    /// setting names none.
    pub fn host_link(&self, host: usize, seed: u64) -> LinkConfig {
        match self.host_links.get(host).cloned().flatten() {
            Some(mut c) => {
                if c.seed == 0 {
                    c.seed = seed;
                }
                c
            }
            None => {
                let dir = DirectionConfig {
                    rate_bps: self.link_rate_bps,
                    delay_ns: self.link_delay_ns,
                    faults: self.link_faults(),
                    ..Default::default()
                };
                LinkConfig {
                    tx: dir.clone(),
                    rx: dir,
                    seed,
                }
            }
        }
    }

    /// The leader's log settings.
    pub fn leader_config(&self) -> LeaderConfig {
        LeaderConfig {
            f: self.f,
            geometry: LogGeometry::for_values(self.max_value, self.slots),
            max_outstanding: self.outstanding,
            switch_timeout: self.switch_timeout,
            switch_retry: self.switch_retry,
            probe_every: self.probe_every,
        }
    }
}

/// The P4CE lab in memory (see the module docs of [`super`]). Host `i` runs node id `i + 1`;
/// host 0 leads first.
pub struct Lab {
    cfg: LabConfig,
    mem: MemLab,
    agent: usize,
    /// The P4CE switch's index in the topology.
    p4ce: usize,
    hosts: usize,
    /// Per host: its fail-over events collected so far.
    seen: Vec<usize>,
    failover: Vec<(usize, FailoverEvent)>,
}

impl Lab {
    /// Builds the lab: the switch with `program` (p4ce.p4) and the agent on its CPU port,
    /// the hosts and their links, the nodes; then waits (in virtual time) until the leader's
    /// connections are up through RDMA CM (in P4CE mode its switch path through the agent
    /// too; a replica that does not answer is left to join later when f did) and, with
    /// fail-over on, the heartbeats of the replicas it has are armed.
    pub fn new(program: Arc<Program>, cfg: LabConfig) -> Result<Lab, LabError> {
        if cfg.replicas == 0 || cfg.replicas > MAX_REPLICAS {
            return Err(LabError::Config(format!(
                "{} replicas (1 to 4)",
                cfg.replicas
            )));
        }
        let lcfg = cfg.leader_config();
        lcfg.geometry.validate()?;
        let n = cfg.replicas + 1;
        let mut topo = match cfg.fabric {
            Fabric::Switch => crate::p4ce::topology(n, &cfg.topology_dir)?,
            Fabric::LeafSpine => crate::p4ce::leaf_spine_topology(n, &cfg.topology_dir)?,
        };
        for h in 0..n {
            let i = topo.hosts[h].link;
            let c = cfg.host_link(h, cfg.seed.wrapping_mul(31).wrapping_add(i as u64 + 1));
            c.validate()
                .map_err(|e| LabError::Config(format!("host {h}'s link: {e}")))?;
            // A topology link's `tx` leaves its end `a`, the host.
            topo.links[i].config = LinkConfig {
                tx: c.rx,
                rx: c.tx,
                seed: c.seed,
            };
        }
        let ids: Vec<u16> = (1..=n as u16).collect();
        let P4ceSwitch {
            mut mem,
            agent,
            p4ce,
            gateways,
            lost,
        } = P4ceSwitch::build(program, topo, &ids, cfg.seed)?;
        // View change on the switch: a leader's lost replica goes to the agent.
        let lost_hook = || -> LostHook {
            let lost = lost.clone();
            Box::new(move |rid: u16| {
                if let Ok(mut l) = lost.lock() {
                    l.push(rid);
                }
            })
        };
        let fo = cfg.leader_timeout.is_some();
        let node_failover = || {
            cfg.leader_timeout.map(|timeout| NodeFailover {
                setup: FailoverSetup {
                    timeout,
                    leader: lcfg,
                },
                mode: cfg.mode,
                on_lost: Some(lost_hook()),
            })
        };
        let spec = |i: usize| NodeSpec {
            id: ids[i],
            ids: ids.clone(),
            leader: i == 0,
            geometry: lcfg.geometry,
            replicas: cfg.replicas,
            seed: cfg.seed,
            listen: i > 0,
            mesh: if i > 0 && fo { cfg.replicas - 1 } else { 0 },
            ack_timeout: ACK_TIMEOUT,
            cm_response_timeout: CM_RESPONSE_TIMEOUT,
            gateway: gateways[i],
        };
        // Replicas first (listening), then the leader.
        let now = mem.now();
        for i in (1..n).chain([0]) {
            let leader = (i == 0).then(|| LeaderSetup {
                cfg: lcfg,
                mode: cfg.mode,
                replicas: ids[1..].iter().map(|id| (host_ip(*id), *id)).collect(),
                on_lost: Some(lost_hook()),
            });
            let node = Node::new(
                NodeConfig {
                    spec: spec(i),
                    leader,
                    record: cfg.record,
                    failover: node_failover(),
                },
                now,
            )?;
            mem.attach(i, Box::new(NodeApp::new(node)));
        }
        let mut lab = Lab {
            cfg,
            mem,
            agent,
            p4ce,
            hosts: n,
            seen: vec![0; n],
            failover: Vec::new(),
        };
        let deadline = lab.now() + SETUP_TIMEOUT.as_nanos();
        while lab.now() < deadline {
            if lab.node(0).status.ready && (!fo || lab.heartbeats_armed()) {
                return Ok(lab);
            }
            lab.advance(deadline)?;
        }
        let st = lab.node(0).status.clone();
        let refusals = lab
            .node(0)
            .leader_ref()
            .map(|l| l.switch_refusals.clone())
            .unwrap_or_default();
        Err(LabError::Config(format!(
            "not set up within {SETUP_TIMEOUT:?} of virtual time: leader {st:?}, switch refusals {refusals:?}, CM agent {:?}",
            lab.cm_log()
        )))
    }

    /// With fail-over on: whether every replica the leader replicates to judges
    /// heartbeats, watching the leader and every other such replica. A replica cut off
    /// before the start is not waited for (f of them are a quorum); it arms when it joins.
    fn heartbeats_armed(&mut self) -> bool {
        let live = match self.node(0).leader_ref().and_then(|l| l.leader.as_ref()) {
            Some(l) => l.live_replicas(),
            None => return false,
        };
        (1..self.hosts).all(|h| {
            let n = self.node(h);
            !live.contains(&n.id)
                || n.failover.as_ref().is_some_and(|fo| {
                    fo.armed() && live.iter().all(|r| *r == n.id || fo.watches(*r))
                })
        })
    }

    /// The settings.
    pub fn config(&self) -> &LabConfig {
        &self.cfg
    }

    /// The in-memory driver underneath (counters, captures, link control).
    pub fn mem(&mut self) -> &mut MemLab {
        &mut self.mem
    }

    fn app(&mut self, host: usize) -> &mut NodeApp {
        self.mem
            .app_mut::<NodeApp>(host)
            .expect("every lab host runs a P4CE node")
    }

    fn agent_app(&mut self) -> &mut AgentApp {
        self.mem
            .agent_mut::<AgentApp>(self.agent)
            .expect("the CPU port runs the P4CE agent")
    }

    /// The node on host `host`, to read or change (after a change that gives it something
    /// to send, [`Lab::poll_host`]; or use [`Lab::with_node`]).
    pub fn node(&mut self, host: usize) -> &mut Node {
        &mut self.app(host).node
    }

    /// Runs `f` on the node of host `host` now, then lets it send what `f` gave it to send.
    pub fn with_node<R>(&mut self, host: usize, f: impl FnOnce(&mut Node) -> R) -> R {
        let now = self.mem.now();
        let node = self.node(host);
        node.now = now;
        let r = f(node);
        self.mem.poll_host(host);
        r
    }

    /// Lets host `host` run now.
    pub fn poll_host(&mut self, host: usize) {
        self.mem.poll_host(host);
    }

    /// Number of hosts (the leader and the replicas).
    pub fn hosts(&self) -> usize {
        self.hosts
    }

    /// Virtual time now, ns.
    pub fn now(&self) -> u64 {
        self.mem.now().as_nanos()
    }

    /// The host that leads now: the live one that says it leads with the highest id (a
    /// deposed leader has the lower one), else the one that led last.
    pub fn leader_host(&mut self) -> usize {
        let mut dead = None;
        for h in (0..self.hosts).rev() {
            let app = self.app(h);
            if app.node.leading() {
                if app.alive() {
                    return h;
                }
                dead.get_or_insert(h);
            }
        }
        dead.unwrap_or(0)
    }

    /// The current leader's log.
    pub fn leader(&mut self) -> &Leader {
        let h = self.leader_host();
        self.node(h)
            .leader_ref()
            .and_then(|l| l.leader.as_ref())
            .expect("the leader's log is up once the lab is")
    }

    /// What host `host` holds of the log: a replica what it applied, a leader what it
    /// appended (a new leader's starts with what it applied as a replica).
    pub fn applied(&mut self, host: usize) -> &[Vec<u8>] {
        match &self.app(host).node.role {
            hosts::p4ce::machine::Role::Leader(l) => &l.appended,
            hosts::p4ce::machine::Role::Replica(r) => &r.applied,
        }
    }

    /// What the current leader's log holds (recorded values), by index.
    pub fn appended(&mut self) -> &[Vec<u8>] {
        let h = self.leader_host();
        self.applied(h)
    }

    /// The switch (counters, registers).
    pub fn switch(&self) -> &Switch {
        self.mem.switch(self.p4ce)
    }

    /// The switch and the agent, to reconfigure by hand.
    pub fn switch_and_agent(&mut self) -> (&mut Switch, &mut Agent) {
        let (app, sw) = self
            .mem
            .agent_with_switch::<AgentApp>(self.agent)
            .expect("the CPU port runs the P4CE agent");
        (sw, &mut app.agent)
    }

    /// What the CM agent did so far.
    pub fn cm_log(&mut self) -> &[CmAgentEvent] {
        &self.agent_app().log
    }

    /// Frames the switch sent to the CPU port (the agent).
    pub fn to_cpu(&self) -> u64 {
        self.mem.switch_counters()[self.p4ce]
            .ports
            .iter()
            .filter(|p| p.devport == CPU_PORT)
            .map(|p| p.tx)
            .sum()
    }

    /// When the current leader's switch path last came up through the agent.
    pub fn switch_up_at(&mut self) -> Option<u64> {
        let h = self.leader_host();
        self.node(h)
            .leader_ref()
            .and_then(|l| l.switch_up_at)
            .map(|t| t.as_nanos())
    }

    /// The group's virtual R_key, BCast QP and the switch IP (R_key 0 while there is no
    /// group).
    pub fn group_addresses(&mut self) -> (u32, u32, Ipv4Addr) {
        let (bcast, _, _) = control::p4ce::cm::group_qps(GROUP);
        match self.agent_app().agent.group(GROUP) {
            Some(g) => (g.vrkey, g.bcast_qp, SWITCH_IP),
            None => (0, bcast, SWITCH_IP),
        }
    }

    /// The current leader's events since the last call (commits left out).
    pub fn take_events(&mut self) -> Vec<LeaderEvent> {
        let h = self.leader_host();
        self.node(h)
            .leader()
            .map(|l| std::mem::take(&mut l.events))
            .unwrap_or_default()
    }

    /// What fail-over did on every node, `(host, event)`, in virtual-time order.
    pub fn failover_events(&self) -> &[(usize, FailoverEvent)] {
        &self.failover
    }

    /// Crashes host `host`: it stops sending, receiving and applying, for good.
    pub fn crash_host(&mut self, host: usize) {
        if host < self.hosts {
            self.app(host).set_alive(false);
        }
    }

    /// Pauses (or resumes) host `host`: while paused it neither sends nor receives (what
    /// reaches it is lost, as on a stalled machine); resuming does not restore what it missed.
    pub fn set_host_paused(&mut self, host: usize, paused: bool) {
        if host < self.hosts {
            self.app(host).set_alive(!paused);
            if !paused {
                self.mem.poll_host(host);
            }
        }
    }

    /// Whether host `host` runs (not crashed, paused or failed).
    pub fn host_alive(&mut self, host: usize) -> bool {
        self.app(host).alive()
    }

    /// Takes host `host`'s cable down or up (both directions; what crosses it while down is
    /// lost). A replica cut off this way at the start joins the running log once it is up.
    pub fn set_host_link_up(&mut self, host: usize, up: bool) {
        if host < self.hosts {
            self.mem.set_link_up(self.host_link(host), up);
        }
    }

    /// The cable of host `host` (index of its topology link; end 0 is the host's).
    fn host_link(&self, host: usize) -> usize {
        self.mem.topology().hosts[host].link
    }

    /// Breaks (or heals) the switch's P4CE path: frames to the switch's IP are lost on their
    /// way from the hosts into the switch (the link model's match-based drop on the hosts'
    /// sending side, [`FaultConfig::drop_ipv4_dst`], counted as loss); plain L2 forwarding
    /// between hosts keeps working (the "other route").
    pub fn set_switch_path_broken(&mut self, broken: bool) {
        let dst = broken.then_some(SWITCH_IP);
        for h in 0..self.hosts {
            let l = self.host_link(h);
            // Cannot fail: no probability changes.
            let _ = self
                .mem
                .link_control(l, 0)
                .update(|c| c.tx.faults.drop_ipv4_dst = dst);
        }
    }

    /// Frames lost on their way into the switch by the hosts' links' faults (a broken switch
    /// path).
    pub fn switch_rx_lost(&self) -> u64 {
        (0..self.hosts)
            .map(|h| self.mem.link_control(self.host_link(h), 0).tx_stats().lost)
            .sum()
    }

    /// The leader closes its CM connection to the switch (the agent tears the group down).
    pub fn disconnect_switch_cm(&mut self) -> Result<(), LabError> {
        let h = self.leader_host();
        let t = Instant::from_nanos(self.now());
        self.with_node(h, |n| {
            let conn = n.leader().and_then(|l| l.take_switch_conn());
            match conn {
                Some(c) => n.ep().disconnect(t, c),
                None => Ok(()),
            }
        })?;
        Ok(())
    }

    /// Appends a value if the leader's window allows; returns its index.
    pub fn append(&mut self, value: &[u8]) -> Result<Option<u64>, LabError> {
        let h = self.leader_host();
        let now = self.mem.now();
        let app = self.app(h);
        if !app.alive() {
            return Ok(None);
        }
        let i = app.node.try_append(now, value)?;
        if i.is_some() {
            self.mem.poll_host(h);
        }
        Ok(i)
    }

    /// After the driver ran: the agent takes out the replicas leaders lost, a node that
    /// failed is an error, and fail-over events are collected.
    fn sync(&mut self) -> Result<(), LabError> {
        if self.agent_app().has_work() {
            self.mem.poll_agent(self.agent);
        }
        for h in 0..self.hosts {
            let seen = self.seen[h];
            let app = self.app(h);
            if let Some(e) = app.error() {
                return Err(LabError::Node(NodeError::Node(app.node.id, e.to_string())));
            }
            let evs = app
                .node
                .failover
                .as_ref()
                .map_or(&[][..], |f| &f.events[..]);
            let new: Vec<FailoverEvent> = evs.get(seen..).unwrap_or_default().to_vec();
            self.seen[h] += new.len();
            self.failover.extend(new.into_iter().map(|e| (h, e)));
        }
        Ok(())
    }

    /// Runs everything due at the current time (time does not move).
    pub fn settle(&mut self) -> Result<(), LabError> {
        let now = self.mem.now();
        self.mem.run_until(Some(now));
        self.sync()
    }

    /// Runs the next instant at which something is due if it is at most `until` (and
    /// everything due now first); otherwise moves time to `until`. Returns false when
    /// nothing is left to do before `until`.
    pub fn advance(&mut self, until: u64) -> Result<bool, LabError> {
        match self.mem.next_due() {
            Some(t) if t.as_nanos() <= until => {
                self.mem.run_until(Some(t));
                self.sync()?;
                Ok(true)
            }
            _ => {
                self.mem.advance_to(Nanos(until));
                Ok(false)
            }
        }
    }

    /// Drives the lab until virtual time `until` (ns), with no new appends.
    pub fn run_until(&mut self, until: u64) -> Result<(), LabError> {
        while self.advance(until)? {}
        Ok(())
    }

    /// Appends `values` as fast as the window allows and drives the lab until all are
    /// committed or `deadline` (ns) passes. Returns how many were committed.
    pub fn replicate_all(&mut self, values: &[Vec<u8>], deadline: u64) -> Result<u64, LabError> {
        let start = self.leader().committed();
        let target = self.leader().next_index() + values.len() as u64;
        let mut next = 0;
        while self.now() < deadline && self.leader().committed() < target {
            while next < values.len() {
                match self.append(&values[next])? {
                    Some(_) => next += 1,
                    None => break,
                }
            }
            if !self.advance(deadline)? {
                break;
            }
        }
        // Let the replicas catch up on what is in flight.
        let settle = self.now() + 200_000;
        self.run_until(settle.min(deadline.max(self.now())))?;
        Ok(self.leader().committed() - start)
    }
}
