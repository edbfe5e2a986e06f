//! The in-memory driver: every switch of a topology on one thread in virtual time, cabled by
//! in-memory links with the link model. Deterministic (same topology, same traffic, same
//! output), no root, no threads; the default for tests, demos and benches.
//!
//! Each switch is the same [`SwitchPipeline`] `pisa run` forwards with; each link end is a
//! [`LinkPort`] over a [`MemPort`] whose transmit direction carries the link's settings (rate,
//! delay, loss, duplication, reordering, up/down), so each direction of a cable is modelled
//! where it leaves. Hosts are frame endpoints: a lab, a test or a host protocol sends from a
//! host with [`MemLab::send`] and reads what reached it with [`MemLab::take_received`].
//!
//! Scheduling is event driven: a node runs when a frame may be waiting for it (after its peer
//! sent) and a link end is flushed when its model holds a frame that falls due; when nothing is
//! ready, virtual time jumps to the earliest due frame. [`MemLab::run_until_idle`] runs until
//! no frame is in flight.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::path::Path;

use dataplane::runtime::Pipeline;
use dataplane::switch::SwitchPipeline;
use dataplane::{FrameBatch, LinkControl, LinkPort, MemPort, Nanos, Port, PortStats};
use pipeline::switch::Switch;

use crate::host::{HostApp, SwitchApp};
use crate::topology::{End, Topology};

/// Frames per receive or transmit batch.
const BATCH: usize = 64;

/// Frames in flight per link direction before the in-memory link drops (counted).
const LINK_CAPACITY: usize = 1 << 14;

/// A driver error.
#[derive(Debug, thiserror::Error)]
pub enum MemLabError {
    #[error(transparent)]
    Build(#[from] crate::build::BuildError),
    #[error("link settings: {0}")]
    Link(String),
    #[error("port {0}: {1}")]
    Port(String, dataplane::PortError),
    #[error("no host {0:?}")]
    NoHost(String),
    #[error("no link {0:?} (write A~B, or one end's name)")]
    NoLink(String),
    #[error("capture {0}: {1}")]
    Capture(String, String),
}

/// Frames a tapped link carried: arrival time and bytes.
type Capture = Vec<(Nanos, Vec<u8>)>;

/// A node: a switch, a host, or a switch's control-plane agent on one of its ports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Node {
    Switch(usize),
    Host(usize),
    Agent(usize),
}

/// What a timer on the heap wakes: a link end's model, a host's or an agent's application.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Timer {
    Port(usize),
    Host(usize),
    Agent(usize),
}

/// The link end of an agent: it is cabled to no topology link.
const NO_LINK: usize = usize::MAX;

/// Timer-driven polls in a row after which an application is still due, from which on its
/// wake-ups are moved 1 ns past `now`. An application whose `next_wakeup` stays at or before
/// `now` would otherwise be polled forever with virtual time standing still (a hang with no
/// error); this way time creeps on and a run with a deadline ends. Counted in
/// [`MemLab::stalled_wakeups`] and logged once.
const STILL_DUE_POLLS: u32 = 1024;

/// An application's timer-driven polls in a row that left it still due.
#[derive(Default)]
struct Spin {
    polls: u32,
}

impl Spin {
    /// Counts a timer-driven poll.
    fn timer_poll(&mut self) {
        self.polls = self.polls.saturating_add(1);
    }

    /// When to wake an application that asked for `wake` after a poll at `now`, and whether
    /// that was moved because it stays due.
    fn due(&mut self, wake: Nanos, now: Nanos) -> (Nanos, bool) {
        if wake > now {
            self.polls = 0;
            (wake, false)
        } else if self.polls >= STILL_DUE_POLLS {
            (Nanos(now.0 + 1), true)
        } else {
            (now, false)
        }
    }
}

struct SimAgent {
    switch: usize,
    port: usize,
    app: Option<Box<dyn SwitchApp>>,
    scheduled: Option<Nanos>,
    spin: Spin,
}

struct SimSwitch {
    pipeline: SwitchPipeline,
    /// Device port → index into `ports`.
    port_of: Vec<u32>,
    ports: Vec<usize>,
    /// Frames sent to device ports with nothing cabled.
    no_port: u64,
    /// Frames through the pipeline.
    passes: u64,
}

struct SimHost {
    port: usize,
    inbox: Vec<(Nanos, Vec<u8>)>,
    /// What runs on the host; none: arrivals go to `inbox`.
    app: Option<Box<dyn HostApp>>,
    /// The app's wake-up on the timer heap.
    scheduled: Option<Nanos>,
    spin: Spin,
}

struct SimPort {
    node: Node,
    devport: u16,
    link: usize,
    lp: LinkPort<MemPort>,
    peer: usize,
    tx: FrameBatch,
    /// The due time this port has in the timer heap (entries for other times are stale).
    scheduled: Option<Nanos>,
}

/// A topology running in memory.
pub struct MemLab {
    topo: Topology,
    now: Nanos,
    switches: Vec<SimSwitch>,
    hosts: Vec<SimHost>,
    ports: Vec<SimPort>,
    timers: BinaryHeap<Reverse<(Nanos, Timer)>>,
    agents: Vec<SimAgent>,
    ready: Vec<Node>,
    ready_flag: Vec<bool>,
    /// Scratch of `receive` (taken while it runs).
    rx: Option<FrameBatch>,
    /// Scratch of a switch step: what its pipeline sent, and the ports it sent on.
    out: Vec<(u16, Vec<u8>)>,
    touched: Vec<usize>,
    /// Scratch of an application's poll: the frames it sends.
    app_out: Vec<Vec<u8>>,
    taps: Vec<Option<Capture>>,
    /// Wake-ups moved on because an application stayed due at one instant ([`Spin`]).
    stalled: u64,
}

/// One port's counters.
#[derive(Debug, Clone, serde::Serialize)]
pub struct PortCounters {
    pub devport: u16,
    /// The far end, as the topology names it.
    pub peer: String,
    pub rx: u64,
    pub tx: u64,
    pub rx_bytes: u64,
    pub tx_bytes: u64,
    /// Frames the port or its link model dropped (queue full, loss, link down, ...).
    pub drops: u64,
}

/// One switch's counters.
#[derive(Debug, Clone, serde::Serialize)]
pub struct SwitchCounters {
    pub passes: u64,
    pub switch_drops: u64,
    pub no_port: u64,
    pub ports: Vec<PortCounters>,
}

impl MemLab {
    /// Builds every switch and link of `topo`.
    pub fn new(topo: Topology) -> Result<MemLab, MemLabError> {
        let switches = crate::build::switches(&topo)?;
        MemLab::with_switches(topo, switches)
    }

    /// Runs `topo` with switches built elsewhere (one per topology switch, in order).
    pub fn with_switches(topo: Topology, built: Vec<Switch>) -> Result<MemLab, MemLabError> {
        let mut switches: Vec<SimSwitch> = built
            .into_iter()
            .map(|sw| SimSwitch {
                pipeline: SwitchPipeline { sw },
                port_of: vec![u32::MAX; pipeline::devport::NUM_DEVPORTS],
                ports: Vec::new(),
                no_port: 0,
                passes: 0,
            })
            .collect();
        let mut hosts: Vec<SimHost> = (0..topo.hosts.len())
            .map(|_| SimHost {
                port: usize::MAX,
                inbox: Vec::new(),
                app: None,
                scheduled: None,
                spin: Spin::default(),
            })
            .collect();
        let mut ports = Vec::new();
        for (i, l) in topo.links.iter().enumerate() {
            let name = topo.link_name(i);
            let (a, b) = dataplane::mem::pair_with_capacity(
                &format!("{name}/a"),
                &format!("{name}/b"),
                LINK_CAPACITY,
            );
            let base = ports.len();
            for (k, (end, port)) in [(l.a, a), (l.b, b)].into_iter().enumerate() {
                // End `a` sends with the link's `tx` settings (a → b), end `b` with its `rx`
                // settings (b → a); a setting without a `tx.`/`rx.` prefix is in both.
                let mut cfg = dataplane::LinkConfig {
                    tx: if k == 0 {
                        l.config.tx.clone()
                    } else {
                        l.config.rx.clone()
                    },
                    seed: l.end_seed(i, k),
                    ..dataplane::LinkConfig::default()
                };
                cfg.tx.faults.link_down |= !l.up;
                let lp = LinkPort::new(port, cfg).map_err(|e| MemLabError::Link(e.to_string()))?;
                let (node, devport) = match end {
                    End::Host(h) => {
                        hosts[h].port = base + k;
                        (Node::Host(h), 0)
                    }
                    End::Switch { switch, devport } => {
                        // A cabled port is a front-panel port, also in the recirculation quad.
                        switches[switch].pipeline.sw.set_front_panel(devport);
                        switches[switch].port_of[devport as usize] = (base + k) as u32;
                        switches[switch].ports.push(base + k);
                        (Node::Switch(switch), devport)
                    }
                };
                ports.push(SimPort {
                    node,
                    devport,
                    link: i,
                    lp,
                    peer: base + 1 - k,
                    tx: FrameBatch::new(BATCH),
                    scheduled: None,
                });
            }
        }
        let nodes = switches.len() + hosts.len();
        let links = topo.links.len();
        Ok(MemLab {
            topo,
            now: Nanos::ZERO,
            switches,
            hosts,
            ports,
            timers: BinaryHeap::new(),
            agents: Vec::new(),
            ready: Vec::new(),
            ready_flag: vec![false; nodes],
            rx: Some(FrameBatch::new(BATCH)),
            touched: Vec::new(),
            app_out: Vec::new(),
            out: Vec::with_capacity(BATCH * 4),
            taps: vec![None; links],
            stalled: 0,
        })
    }

    /// The topology.
    pub fn topology(&self) -> &Topology {
        &self.topo
    }

    /// Virtual time now.
    pub fn now(&self) -> Nanos {
        self.now
    }

    /// Moves virtual time forward (never back).
    pub fn advance_to(&mut self, t: Nanos) {
        self.now = self.now.max(t);
    }

    fn node_id(&self, n: Node) -> usize {
        match n {
            Node::Switch(s) => s,
            Node::Host(h) => self.switches.len() + h,
            Node::Agent(a) => self.switches.len() + self.hosts.len() + a,
        }
    }

    /// The earliest virtual time at which something is due (now, when frames wait), or None
    /// when nothing is in flight and no application waits for a time.
    pub fn next_due(&self) -> Option<Nanos> {
        if !self.ready.is_empty() {
            return Some(self.now);
        }
        self.timers.peek().map(|Reverse((t, _))| (*t).max(self.now))
    }

    /// Cables a control-plane agent to device port `devport` of switch `switch` (its CPU port,
    /// say): frames the switch sends there reach the agent, the agent's frames enter the
    /// switch there, and the agent may program the switch whenever it runs. Returns its index.
    pub fn attach_agent(&mut self, switch: usize, devport: u16, app: Box<dyn SwitchApp>) -> usize {
        let a = self.agents.len();
        let (sw_end, agent_end) = dataplane::mem::pair_with_capacity(
            &format!("{}:{devport}/agent", self.topo.switches[switch].name),
            "agent",
            LINK_CAPACITY,
        );
        if let Some(s) = self.switches.get_mut(switch) {
            s.pipeline.sw.set_front_panel(devport);
        }
        let base = self.ports.len();
        for (k, (node, dp, port)) in [
            (Node::Switch(switch), devport, sw_end),
            (Node::Agent(a), 0, agent_end),
        ]
        .into_iter()
        .enumerate()
        {
            let lp = LinkPort::new(port, dataplane::LinkConfig::default())
                .expect("default link settings are valid");
            self.ports.push(SimPort {
                node,
                devport: dp,
                link: NO_LINK,
                lp,
                peer: base + 1 - k,
                tx: FrameBatch::new(BATCH),
                scheduled: None,
            });
        }
        self.switches[switch].port_of[devport as usize & 0x1ff] = base as u32;
        self.switches[switch].ports.push(base);
        self.agents.push(SimAgent {
            switch,
            port: base + 1,
            app: Some(app),
            scheduled: None,
            spin: Spin::default(),
        });
        self.ready_flag.push(false);
        self.poll_agent(a);
        a
    }

    /// The agent `agent`, if it is a `T`.
    pub fn agent_mut<T: SwitchApp>(&mut self, agent: usize) -> Option<&mut T> {
        self.agents[agent]
            .app
            .as_mut()
            .and_then(|a| a.as_any_mut().downcast_mut::<T>())
    }

    /// The agent `agent`, if it is a `T`, with the switch it is cabled to (to change both
    /// by hand, as the agent itself would).
    pub fn agent_with_switch<T: SwitchApp>(
        &mut self,
        agent: usize,
    ) -> Option<(&mut T, &mut Switch)> {
        let s = self.agents[agent].switch;
        let app = self.agents[agent]
            .app
            .as_mut()
            .and_then(|a| a.as_any_mut().downcast_mut::<T>())?;
        Some((app, &mut self.switches[s].pipeline.sw))
    }

    /// Lets agent `agent` run now (after the caller gave it work).
    pub fn poll_agent(&mut self, agent: usize) {
        let now = self.now;
        let (s, p) = (self.agents[agent].switch, self.agents[agent].port);
        let Some(mut app) = self.agents[agent].app.take() else {
            return;
        };
        let mut out = std::mem::take(&mut self.app_out);
        app.poll(now, &mut self.switches[s].pipeline.sw, &mut |f| out.push(f));
        let wake = app.next_wakeup();
        self.agents[agent].app = Some(app);
        self.send_all(p, &mut out);
        self.app_out = out;
        if let Some(t) = wake {
            let (t, moved) = self.agents[agent].spin.due(t, now);
            self.note_stall(moved, "agent", agent);
            let slot = &mut self.agents[agent].scheduled;
            if slot.is_none_or(|s| t < s) {
                *slot = Some(t);
                self.timers.push(Reverse((t, Timer::Agent(agent))));
            }
        }
    }

    /// Sends `frames` (drained) from the node end of port `p` now.
    fn send_all(&mut self, p: usize, frames: &mut Vec<Vec<u8>>) {
        if frames.is_empty() {
            return;
        }
        for f in frames.drain(..) {
            self.queue_tx(p, f);
        }
        self.flush_tx(p);
    }

    /// Queues `frame` on port `p`'s transmit batch (sending the batch first when it is full);
    /// returns the spare buffer the batch gave back.
    fn queue_tx(&mut self, p: usize, frame: Vec<u8>) -> Option<Vec<u8>> {
        let now = self.now;
        match self.ports[p].tx.push_owned(frame, now) {
            Ok(spare) => spare,
            Err(frame) => {
                self.flush_tx(p);
                // The batch is empty now: this cannot fail.
                self.ports[p].tx.push_owned(frame, now).ok().flatten()
            }
        }
    }

    fn wake(&mut self, n: Node) {
        let id = self.node_id(n);
        if !self.ready_flag[id] {
            self.ready_flag[id] = true;
            self.ready.push(n);
        }
    }

    /// Sends a frame from host `host` (index) into its link now.
    pub fn send(&mut self, host: usize, frame: Vec<u8>) {
        let p = self.hosts[host].port;
        self.queue_tx(p, frame);
        self.flush_tx(p);
    }

    /// Runs `app` on host `host` from now on: arrivals go to it, its frames leave on the
    /// host's link, its wake-ups are kept in virtual time.
    pub fn attach(&mut self, host: usize, app: Box<dyn HostApp>) {
        self.hosts[host].app = Some(app);
        self.poll_host(host);
    }

    /// Attaches pisa's RoCEv2 endpoint ([`crate::host::RdmaHost`]) to every host the topology
    /// marks `rdma: true` (ping-all runs without: its datagrams are not RoCEv2).
    pub fn attach_rdma_hosts(&mut self) {
        for h in 0..self.topo.hosts.len() {
            if self.topo.hosts[h].rdma {
                let app = crate::host::RdmaHost::new(&self.topo, h);
                self.attach(h, Box::new(app));
            }
        }
    }

    /// The application on host `host`, if it is a `T`.
    pub fn app_mut<T: HostApp>(&mut self, host: usize) -> Option<&mut T> {
        self.hosts[host]
            .app
            .as_mut()
            .and_then(|a| a.as_any_mut().downcast_mut::<T>())
    }

    /// Lets host `host`'s application run now (after the caller gave it work, e.g. posted a
    /// send): its frames go out and its next wake-up is scheduled.
    pub fn poll_host(&mut self, host: usize) {
        let now = self.now;
        let p = self.hosts[host].port;
        let Some(mut app) = self.hosts[host].app.take() else {
            return;
        };
        let mut out = std::mem::take(&mut self.app_out);
        app.poll(now, &mut |f| out.push(f));
        let wake = app.next_wakeup();
        self.hosts[host].app = Some(app);
        self.send_all(p, &mut out);
        self.app_out = out;
        if let Some(t) = wake {
            let (t, moved) = self.hosts[host].spin.due(t, now);
            self.note_stall(moved, "host", host);
            let slot = &mut self.hosts[host].scheduled;
            if slot.is_none_or(|s| t < s) {
                *slot = Some(t);
                self.timers.push(Reverse((t, Timer::Host(host))));
            }
        }
    }

    /// Frames that reached host `host` since the last call, with their arrival times.
    pub fn take_received(&mut self, host: usize) -> Vec<(Nanos, Vec<u8>)> {
        std::mem::take(&mut self.hosts[host].inbox)
    }

    /// A switch's pipeline, to read (counters, registers, tables).
    pub fn switch(&self, switch: usize) -> &Switch {
        &self.switches[switch].pipeline.sw
    }

    /// A switch's pipeline (for control-plane writes and reads through the runtime API).
    pub fn switch_mut(&mut self, switch: usize) -> &mut Switch {
        &mut self.switches[switch].pipeline.sw
    }

    /// Every switch's pipeline, in topology order.
    pub fn switches_mut(&mut self) -> Vec<&mut Switch> {
        self.switches
            .iter_mut()
            .map(|s| &mut s.pipeline.sw)
            .collect()
    }

    /// The link model control of one end of link `link` (0: end `a`, 1: end `b`): the settings
    /// of the direction leaving that end, faults included, changeable while running.
    pub fn link_control(&self, link: usize, end: usize) -> LinkControl {
        self.ports[2 * link + end.min(1)].lp.control()
    }

    /// Takes link `link` down or up (both directions).
    pub fn set_link_up(&self, link: usize, up: bool) {
        for e in 0..2 {
            self.link_control(link, e).set_link_up(up);
        }
    }

    /// Starts recording the frames that cross link `name` (both directions).
    pub fn tap(&mut self, name: &str) -> Result<usize, MemLabError> {
        let l = self
            .topo
            .find_link(name)
            .ok_or_else(|| MemLabError::NoLink(name.into()))?;
        self.taps[l].get_or_insert_with(Vec::new);
        Ok(l)
    }

    /// The frames link `link` carried since [`MemLab::tap`] (or the last call), with their
    /// times of arrival at the far end; the tap stays on.
    pub fn take_tapped(&mut self, link: usize) -> Vec<(Nanos, Vec<u8>)> {
        self.taps
            .get_mut(link)
            .and_then(|t| t.as_mut())
            .map(std::mem::take)
            .unwrap_or_default()
    }

    /// Writes what link `link` carried since [`MemLab::tap`] to a pcap file (nanosecond
    /// timestamps of arrival at the far end); returns the frame count.
    pub fn write_capture(&mut self, link: usize, path: &Path) -> Result<usize, MemLabError> {
        let frames = self.taps[link].take().unwrap_or_default();
        crate::capture::write_pcap(path, &frames)
            .map_err(|e| MemLabError::Capture(path.display().to_string(), e))
    }

    /// Puts port `p`'s next due frame on the timer heap, unless that time is there already.
    fn schedule(&mut self, p: usize) {
        let port = &mut self.ports[p];
        if let Some(t) = port.lp.poll_timeout() {
            if port.scheduled.is_none_or(|s| t < s) {
                port.scheduled = Some(t);
                self.timers.push(Reverse((t, Timer::Port(p))));
            }
        }
    }

    fn flush_tx(&mut self, p: usize) {
        let now = self.now;
        let port = &mut self.ports[p];
        if !port.tx.is_empty() {
            // Drops are counted by the port and the link model; a disconnected peer cannot
            // happen (the lab owns both ends).
            let _ = port.lp.send_batch(&mut port.tx, now);
            port.tx.clear();
        }
        self.schedule(p);
        let peer = self.ports[p].peer;
        let n = self.ports[peer].node;
        self.wake(n);
    }

    /// Runs until no frame is in flight, or until virtual time would pass `deadline`.
    /// Returns the number of node steps taken.
    pub fn run_until(&mut self, deadline: Option<Nanos>) -> u64 {
        let mut steps = 0;
        loop {
            while let Some(n) = self.ready.pop() {
                let id = self.node_id(n);
                self.ready_flag[id] = false;
                self.step(n);
                steps += 1;
            }
            let Some(&Reverse((t, _))) = self.timers.peek() else {
                return steps;
            };
            if deadline.is_some_and(|d| t > d) {
                self.now = self.now.max(deadline.unwrap_or(t));
                return steps;
            }
            self.now = self.now.max(t);
            while let Some(&Reverse((t, which))) = self.timers.peek() {
                if t > self.now {
                    break;
                }
                self.timers.pop();
                let p = match which {
                    Timer::Host(h) => {
                        if self.hosts[h].scheduled == Some(t) {
                            self.hosts[h].scheduled = None;
                            self.hosts[h].spin.timer_poll();
                            self.poll_host(h);
                        }
                        continue;
                    }
                    Timer::Agent(a) => {
                        if self.agents[a].scheduled == Some(t) {
                            self.agents[a].scheduled = None;
                            self.agents[a].spin.timer_poll();
                            self.poll_agent(a);
                        }
                        continue;
                    }
                    Timer::Port(p) => p,
                };
                if self.ports[p].scheduled != Some(t) {
                    continue; // superseded by an earlier time, already served
                }
                self.ports[p].scheduled = None;
                let _ = self.ports[p].lp.flush(self.now);
                if self.ports[p]
                    .lp
                    .poll_timeout()
                    .is_some_and(|t| t <= self.now)
                {
                    // Frames held by a model of the receive direction are due: only the
                    // port's own node takes them (its receive reschedules the port).
                    // Rescheduling here would pop the same timer forever.
                    let (own, peer) = (self.ports[p].node, self.ports[p].peer);
                    let peer = self.ports[peer].node;
                    self.wake(own);
                    self.wake(peer);
                    continue;
                }
                self.flush_tx(p);
            }
        }
    }

    /// Counts (and logs the first) wake-up moved on by [`Spin`].
    fn note_stall(&mut self, moved: bool, what: &str, index: usize) {
        if !moved {
            return;
        }
        if self.stalled == 0 {
            tracing::warn!(
                what,
                index,
                now_ns = self.now.0,
                "an application stays due at one instant; moving its wake-ups 1 ns on"
            );
        }
        self.stalled += 1;
    }

    /// Wake-ups moved 1 ns on because an application asked to run again at the instant it
    /// had just run, over and over (a bug in that application; see [`STILL_DUE_POLLS`]).
    pub fn stalled_wakeups(&self) -> u64 {
        self.stalled
    }

    /// Runs until nothing is in flight.
    pub fn run_until_idle(&mut self) -> u64 {
        self.run_until(None)
    }

    fn step(&mut self, n: Node) {
        match n {
            Node::Host(h) => {
                let p = self.hosts[h].port;
                self.receive(p, |lab, _, f, now| match &mut lab.hosts[h].app {
                    Some(app) => app.receive(now, &f),
                    None => lab.hosts[h].inbox.push((now, f)),
                });
                if self.hosts[h].app.is_some() {
                    self.poll_host(h);
                }
            }
            Node::Agent(a) => {
                let (s, p) = (self.agents[a].switch, self.agents[a].port);
                self.receive(p, |lab, _, f, now| {
                    if let Some(app) = lab.agents[a].app.as_mut() {
                        app.receive(now, &f, &mut lab.switches[s].pipeline.sw);
                    }
                });
                self.poll_agent(a);
            }
            Node::Switch(s) => {
                let ports = std::mem::take(&mut self.switches[s].ports);
                for &p in &ports {
                    self.receive(p, |lab, devport, f, now| {
                        let sw = &mut lab.switches[s];
                        sw.passes += 1;
                        let out = &mut lab.out;
                        sw.pipeline
                            .process(devport, &f, now, &mut |o, bytes| out.push((o, bytes)));
                        sw.pipeline.recycle(f);
                    });
                }
                self.switches[s].ports = ports;
                self.dispatch(s);
            }
        }
    }

    /// Receives everything waiting on port `p` and hands each frame to `f`.
    fn receive(&mut self, p: usize, mut f: impl FnMut(&mut MemLab, u16, Vec<u8>, Nanos)) {
        let now = self.now;
        let mut rx = self.rx.take().unwrap_or_else(|| FrameBatch::new(BATCH));
        loop {
            rx.clear();
            let n = self.ports[p].lp.recv_batch(&mut rx, now).unwrap_or(0);
            if n == 0 {
                break;
            }
            let (devport, link) = (self.ports[p].devport, self.ports[p].link);
            for i in 0..n {
                let Some(data) = rx.take_data(i) else { break };
                if let Some(Some(tap)) = self.taps.get_mut(link) {
                    tap.push((now, data.clone()));
                }
                f(self, devport, data, now);
            }
        }
        self.schedule(p);
        self.rx = Some(rx);
    }

    /// Sends a switch's output frames on their ports.
    fn dispatch(&mut self, s: usize) {
        let mut out = std::mem::take(&mut self.out);
        let mut touched = std::mem::take(&mut self.touched);
        for (o, bytes) in out.drain(..) {
            let idx = self.switches[s].port_of[o as usize & 0x1ff];
            if idx == u32::MAX {
                self.switches[s].no_port += 1;
                self.switches[s].pipeline.recycle(bytes);
                continue;
            }
            let p = idx as usize;
            if let Some(spare) = self.queue_tx(p, bytes) {
                self.switches[s].pipeline.recycle(spare);
            }
            if !touched.contains(&p) {
                touched.push(p);
            }
        }
        self.out = out;
        for &p in &touched {
            self.flush_tx(p);
        }
        touched.clear();
        self.touched = touched;
    }

    /// Counters of every switch, in topology order.
    pub fn switch_counters(&self) -> Vec<SwitchCounters> {
        self.switches
            .iter()
            .map(|s| {
                let mut ports: Vec<PortCounters> = s
                    .ports
                    .iter()
                    .map(|&p| {
                        let port = &self.ports[p];
                        let st: PortStats = port.lp.stats_handle().snapshot();
                        let f = port.lp.control().tx_stats();
                        let peer = match (port.link, port.node) {
                            (NO_LINK, _) | (_, Node::Agent(_)) => "agent".to_string(),
                            (l, Node::Switch(sw)) => {
                                self.topo.end_name(self.topo.links[l].peer(End::Switch {
                                    switch: sw,
                                    devport: port.devport,
                                }))
                            }
                            (l, Node::Host(h)) => {
                                self.topo.end_name(self.topo.links[l].peer(End::Host(h)))
                            }
                        };
                        PortCounters {
                            devport: port.devport,
                            peer,
                            rx: st.rx_packets,
                            tx: st.tx_packets,
                            rx_bytes: st.rx_bytes,
                            tx_bytes: st.tx_bytes,
                            drops: st.total_drops() + f.lost + f.down_dropped + f.queue_dropped,
                        }
                    })
                    .collect();
                ports.sort_by_key(|p| p.devport);
                SwitchCounters {
                    passes: s.passes,
                    switch_drops: s.pipeline.sw.stats().total_drops(),
                    no_port: s.no_port,
                    ports,
                }
            })
            .collect()
    }

    /// Frames through every switch pipeline so far.
    pub fn total_passes(&self) -> u64 {
        self.switches.iter().map(|s| s.passes).sum()
    }
}

#[cfg(test)]
mod tests;
