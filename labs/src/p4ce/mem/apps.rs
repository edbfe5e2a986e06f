//! What the in-memory P4CE lab runs on the driver: [`NodeApp`], a P4CE node
//! ([`hosts::p4ce::machine::Node`], the one the namespace lab runs on a thread) as a host
//! application, and [`AgentApp`], the P4CE agent with its RDMA CM endpoint as the control-plane
//! application on the switch's CPU port.

use std::any::Any;
use std::sync::{Arc, Mutex};

use control::p4ce::{Agent, CmAgentEvent, SwitchCm};
use dataplane::Nanos;
use hosts::p4ce::machine::Node;
use hosts::p4ce::GROUP;
use pipeline::switch::Switch;
use rdma::verbs::Instant;

use crate::host::{HostApp, SwitchApp};

/// Turns one poll takes at most while the node keeps finding work; after that it asks to be
/// polled again at the same instant (the driver interleaves the other nodes meanwhile).
const MAX_TURNS: usize = 16;

/// Polls at one instant in a row that find nothing to do although the node asked for them:
/// past this the node's wake-up is wrong, and it is stopped with an error instead of holding
/// virtual time still for good.
const MAX_IDLE_POLLS: u32 = 10_000;

fn instant(t: Nanos) -> Instant {
    Instant::from_nanos(t.as_nanos())
}

/// A P4CE node on a lab host. A crashed or paused host ([`NodeApp::set_alive`]) neither
/// receives (what reaches it is lost), sends nor runs its timers.
pub struct NodeApp {
    /// The node.
    pub node: Node,
    alive: bool,
    busy: bool,
    error: Option<String>,
    idle: (Nanos, u32),
}

impl NodeApp {
    /// Runs `node`.
    pub fn new(node: Node) -> NodeApp {
        NodeApp {
            node,
            alive: true,
            busy: false,
            error: None,
            idle: (Nanos::ZERO, 0),
        }
    }

    /// Whether it runs (not crashed, not paused, not failed).
    pub fn alive(&self) -> bool {
        self.alive
    }

    /// Stops (a crash or a pause) or resumes the node. Resuming does not give back what it
    /// missed; its timers run late, as on a stalled machine.
    pub fn set_alive(&mut self, alive: bool) {
        self.alive = alive && self.error.is_none();
    }

    /// Why the node stopped, if it failed.
    pub fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }

    fn fail(&mut self, e: String) {
        self.error = Some(e);
        self.alive = false;
    }
}

impl HostApp for NodeApp {
    fn receive(&mut self, now: Nanos, frame: &[u8]) {
        if self.alive {
            self.node.handle_frame(now, frame);
        }
    }

    fn poll(&mut self, now: Nanos, out: &mut dyn FnMut(Vec<u8>)) {
        if !self.alive {
            return;
        }
        self.busy = false;
        let mut work = false;
        for i in 0..MAX_TURNS {
            match self.node.poll(now) {
                Ok(t) if t.work => {
                    work = true;
                    self.busy = i + 1 == MAX_TURNS;
                }
                Ok(_) => break,
                Err(e) => return self.fail(e.to_string()),
            }
        }
        while let Some(f) = self.node.poll_transmit(now) {
            out(f);
            work = true;
        }
        if work || self.node.next_wakeup().is_none_or(|t| t > now) {
            self.idle = (now, 0);
        } else if self.idle.0 == now {
            self.idle.1 += 1;
            if self.idle.1 > MAX_IDLE_POLLS {
                self.fail(format!(
                    "node {} wakes up at {now:?} again and again with nothing to do",
                    self.node.id
                ));
            }
        } else {
            self.idle = (now, 1);
        }
    }

    fn next_wakeup(&self) -> Option<Nanos> {
        if !self.alive {
            return None;
        }
        if self.busy {
            return Some(self.node.now);
        }
        self.node.next_wakeup()
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

/// The P4CE agent on the switch's CPU port: its RDMA CM endpoint answers leaders and connects
/// to replicas ([`SwitchCm`]), and the agent ([`Agent`]) programs the switch: the base tables
/// when it first runs, a group when a leader asks for one, a view change when a leader lost a
/// replica ([`AgentApp::lost_replicas`]).
pub struct AgentApp {
    /// The agent (its groups).
    pub agent: Agent,
    /// Its CM endpoint.
    pub cm: SwitchCm,
    /// What the CM agent did, in order.
    pub log: Vec<CmAgentEvent>,
    /// Why installing the base tables failed, if it did.
    pub error: Option<String>,
    base: Option<Vec<([u8; 6], u16)>>,
    lost: Arc<Mutex<Vec<u16>>>,
}

impl AgentApp {
    /// The agent with its CM endpoint; `l2` is where each host's MAC hangs off the switch
    /// (the base tables it installs when it first runs).
    pub fn new(agent: Agent, cm: SwitchCm, l2: Vec<([u8; 6], u16)>) -> AgentApp {
        AgentApp {
            agent,
            cm,
            log: Vec::new(),
            error: None,
            base: Some(l2),
            lost: Arc::new(Mutex::new(Vec::new())),
        }
    }

    /// Where leaders put the ids of replicas they lost: the agent takes each out of the group
    /// the next time it runs (a view change on the switch).
    pub fn lost_replicas(&self) -> Arc<Mutex<Vec<u16>>> {
        self.lost.clone()
    }

    /// Whether a leader lost replicas the agent has not taken out yet.
    pub fn has_work(&self) -> bool {
        self.lost.lock().is_ok_and(|l| !l.is_empty())
    }
}

impl SwitchApp for AgentApp {
    fn receive(&mut self, now: Nanos, frame: &[u8], _sw: &mut Switch) {
        self.cm.endpoint().handle_frame(instant(now), frame);
    }

    fn poll(&mut self, now: Nanos, sw: &mut Switch, out: &mut dyn FnMut(Vec<u8>)) {
        if let Some(l2) = self.base.take() {
            if let Err(e) = self.agent.install_base(sw, &l2) {
                self.error = Some(e.to_string());
            }
        }
        let lost = self
            .lost
            .lock()
            .map(|mut l| std::mem::take(&mut *l))
            .unwrap_or_default();
        for id in lost {
            // Refused when fewer than f would remain: the leader has no quorum then anyway.
            if self.agent.group(GROUP).is_some() {
                let _ = self.agent.remove_replica(sw, GROUP, id);
            }
        }
        let t = instant(now);
        if self
            .cm
            .endpoint_ref()
            .poll_timeout()
            .is_some_and(|d| d <= t)
        {
            self.cm.endpoint().handle_timeout(t);
        }
        self.cm.poll(t, sw, &mut self.agent);
        self.log.extend(self.cm.take_events());
        while let Some(f) = self.cm.endpoint().poll_transmit(t) {
            out(f);
        }
    }

    fn next_wakeup(&self) -> Option<Nanos> {
        self.cm
            .endpoint_ref()
            .poll_timeout()
            .map(|t| Nanos(t.as_nanos()))
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}
