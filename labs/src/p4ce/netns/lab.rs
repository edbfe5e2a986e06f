//! [`NetnsLab`]: the switch, the CM agent, the leader and the replicas of one P4CE group on
//! a lab's namespaces (see the module docs of [`super`]), and what tests and the bench do to
//! it while it runs.

use std::collections::BTreeMap;
use std::net::Ipv4Addr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use control::p4ce::{Agent, AgentConfig, Attachment, CmAgentEvent};
use dataplane::link::DirectionConfig;
use dataplane::runtime::{PortSetup, RuntimeConfig, RuntimeHandle, RuntimeStats, ThreadRole};
use dataplane::switch::{SwitchHandle, SwitchPipeline, SwitchRuntime};
use dataplane::{AfPacketPort, Clock, FaultConfig, LabState, LinkConfig, WallClock};
use hosts::mu::{LeaderConfig, LeaderEvent, LogGeometry};
use hosts::p4ce::cpu::ThreadCpu;
use hosts::p4ce::failover::{FailoverEvent, FailoverSetup};
use hosts::p4ce::machine::{LeaderSetup, LostHook, Node, NodeConfig, NodeFailover, NodeStatus};
use hosts::p4ce::node::{host_ip, host_mac, NodeSpec};
use hosts::p4ce::thread::{NodeHandle, NodeSetup};
use hosts::p4ce::{GROUP, MAX_REPLICAS, SWITCH_IP};
use pipeline::api::PipeSel;
use pipeline::ir::Program;
use pipeline::switch::{Switch, SwitchConfig};

use super::switch::{CmJobs, CmThread, CALL_TIMEOUT};
use super::NetnsError;
use crate::p4ce::mem::{LabConfig, LabError};
use crate::p4ce::CPU_PORT;

/// The namespace lab takes the in-memory lab's settings ([`LabConfig`]); every connection goes
/// through RDMA CM, as in memory. With `leader_timeout` every node runs
/// heartbeats and fail-over ([`hosts::p4ce::failover`]). Times are wall-clock.
pub type NetnsConfig = LabConfig;

/// ACK timeout code of the namespace lab's QPs: 4.096 µs × 2^14 ≈ 67 ms (seven retries: half
/// a second before a peer is given up). A round trip
/// crosses seven threads (host, switch rx, pipeline, tx, host, ...); on a loaded 2-core
/// machine each may wait a time slice, so shorter timeouts (the in-memory lab's 1 ms, even
/// 4 ms) fire on ACKs that are merely late and the go-back-N resends swamp the links.
const ACK_TIMEOUT: u8 = 14;

/// CPU time of every thread of the lab, by name, ns.
pub type CpuSnapshot = Vec<(String, u64)>;

/// A running P4CE group in network namespaces.
pub struct NetnsLab {
    cfg: NetnsConfig,
    runtime: Option<SwitchRuntime>,
    handle: RuntimeHandle<SwitchPipeline>,
    cm: Option<CmThread>,
    /// Index 0 is the leader, then the replicas.
    nodes: Vec<NodeHandle>,
    /// Switch device port of each node.
    devports: Vec<u16>,
    runtime_cpu: Arc<Mutex<Vec<(String, ThreadCpu)>>>,
    clock: WallClock,
}

/// What is left when the lab stops.
pub struct NetnsOutcome {
    /// The nodes' final states (None for a node that crashed or failed), index 0 the leader.
    pub nodes: Vec<Option<Node>>,
    /// The switch's final statistics.
    pub runtime: RuntimeStats,
    /// What the CM agent did.
    pub cm_log: Vec<CmAgentEvent>,
}

fn role_name(r: ThreadRole) -> String {
    match r {
        ThreadRole::Pipeline => "switch pipeline".into(),
        ThreadRole::Rx(p) => format!("switch rx{p}"),
        ThreadRole::Tx(p) => format!("switch tx{p}"),
        #[allow(unreachable_patterns)]
        _ => format!("switch {r:?}"),
    }
}

impl NetnsLab {
    /// Starts everything on the hosts of `state` (the first `cfg.replicas + 1` by switch
    /// port: the leader first) and waits until the leader is ready (unicast connections up
    /// and, in P4CE mode, the switch path up through the agent) or `ready_timeout` passes.
    pub fn start(
        program: Arc<Program>,
        cfg: NetnsConfig,
        state: &LabState,
        ready_timeout: Duration,
    ) -> Result<NetnsLab, NetnsError> {
        if cfg.fabric != crate::p4ce::mem::Fabric::Switch {
            return Err(NetnsError::Setup(
                "the namespace lab runs the single-switch topology only".into(),
            ));
        }
        if cfg.replicas == 0 || cfg.replicas > MAX_REPLICAS {
            return Err(NetnsError::Setup(format!(
                "{} replicas (1 to 4)",
                cfg.replicas
            )));
        }
        let n = cfg.replicas + 1;
        let mut hosts = state.hosts.clone();
        hosts.sort_by_key(|h| h.port);
        if hosts.len() < n {
            return Err(NetnsError::Setup(format!(
                "lab {} has {} hosts; {n} needed for {} replicas",
                state.name,
                hosts.len(),
                cfg.replicas
            )));
        }
        hosts.truncate(n);
        if hosts.iter().any(|h| h.port >= CPU_PORT) {
            return Err(NetnsError::Setup(format!(
                "host ports must be below the CPU port {CPU_PORT}"
            )));
        }
        let ids: Vec<u16> = (1..=n as u16).collect();
        let devports: Vec<u16> = hosts.iter().map(|h| h.port).collect();
        let geometry = LogGeometry::for_values(cfg.max_value, cfg.slots);
        geometry.validate()?;
        let clock = WallClock::new();

        // The switch, and the agent's base tables on it.
        let mut sw = Switch::new(program, SwitchConfig::new(1).with_cpu_port(CPU_PORT))
            .map_err(LabError::from)?;
        let l2: Vec<([u8; 6], u16)> = ids
            .iter()
            .zip(&devports)
            .map(|(id, p)| (host_mac(*id), *p))
            .collect();
        let mut agent = Agent::new(AgentConfig {
            switch_ip: SWITCH_IP,
            cpu_port: CPU_PORT,
        });
        agent
            .install_base(&mut sw, &l2)
            .map_err(|e| NetnsError::Setup(format!("P4CE agent: {e}")))?;
        // Each host's cable ([`LabConfig::host_link`]: the lab's rate, delay and faults, or
        // the host's own setting). Rate, delay and queue are modelled at the hosts' ends (see
        // `host_link`); the switch's ports only inject the faults (loss, duplication,
        // reordering, a broken switch path), each direction once.
        let mut ports = Vec::new();
        let mut cables = Vec::new();
        for (i, (h, id)) in hosts.iter().zip(&ids).enumerate() {
            let c = cfg.host_link(i, cfg.seed.wrapping_mul(31).wrapping_add(u64::from(*id)));
            c.validate()
                .map_err(|e| NetnsError::Setup(format!("host {}'s link: {e}", h.name)))?;
            let port = AfPacketPort::open(&h.switch_if)?;
            let faults = |d: &DirectionConfig| DirectionConfig {
                faults: d.faults.clone(),
                ..Default::default()
            };
            ports.push(PortSetup {
                devport: h.port,
                port: Box::new(port),
                link: LinkConfig {
                    tx: faults(&c.tx),
                    rx: faults(&c.rx),
                    seed: c.seed,
                },
            });
            cables.push(c);
        }
        // The host's end: `tx` is what the host sends (the switch port's `rx`).
        let host_link = |i: usize, id: u16| {
            let c = &cables[i];
            let d = |d: &DirectionConfig| DirectionConfig {
                faults: FaultConfig::default(),
                ..d.clone()
            };
            LinkConfig {
                tx: d(&c.rx),
                rx: d(&c.tx),
                seed: cfg.seed.wrapping_mul(37).wrapping_add(u64::from(id)),
            }
        };
        let (cpu_end, cm_end) = dataplane::mem::pair("cpu", "p4ce-cm");
        ports.push(PortSetup {
            devport: CPU_PORT,
            port: Box::new(cpu_end),
            link: LinkConfig::default(),
        });
        let runtime_cpu: Arc<Mutex<Vec<(String, ThreadCpu)>>> = Arc::new(Mutex::new(Vec::new()));
        let rc = runtime_cpu.clone();
        let rcfg = RuntimeConfig {
            idle_wait: Duration::from_millis(5),
            thread_hook: Some(Arc::new(move |role| {
                if let (Some(t), Ok(mut g)) = (ThreadCpu::current(), rc.lock()) {
                    g.push((role_name(role), t));
                }
            })),
            ..RuntimeConfig::default()
        };
        let clk: Arc<dyn Clock> = Arc::new(clock.clone());
        let runtime = SwitchRuntime::start(vec![sw], false, &[], ports, clk.clone(), rcfg)?;
        let SwitchHandle::Single(handle) = runtime.handle() else {
            return Err(NetnsError::Setup(
                "the switch runs one pipeline thread".into(),
            ));
        };
        let at: BTreeMap<Ipv4Addr, Attachment> = ids
            .iter()
            .zip(&devports)
            .map(|(id, p)| {
                (
                    host_ip(*id),
                    Attachment {
                        mac: host_mac(*id),
                        port: *p,
                    },
                )
            })
            .collect();
        let cm = CmThread::start(cm_end, at, agent, handle.clone(), clk, cfg.seed)?;
        let cm_jobs = cm.jobs();
        let mut lab = NetnsLab {
            cfg: cfg.clone(),
            runtime: Some(runtime),
            handle,
            cm: Some(cm),
            nodes: Vec::new(),
            devports,
            runtime_cpu,
            clock: clock.clone(),
        };

        // The nodes: replicas first (listening), then the leader.
        let fo = cfg.leader_timeout.is_some();
        let lcfg = LeaderConfig {
            f: cfg.f,
            geometry,
            max_outstanding: cfg.outstanding,
            switch_timeout: cfg.switch_timeout,
            switch_retry: cfg.switch_retry,
            probe_every: cfg.probe_every,
        };
        // View change on the switch: it stops replicating to a lost replica (refused when
        // fewer than f would remain; the leader has no quorum then anyway). The agent's
        // thread does it on the switch.
        let lost_hook = |jobs: CmJobs| -> LostHook {
            Box::new(move |rid: u16| {
                let _ = jobs.exec(CALL_TIMEOUT, move |ctx| {
                    ctx.on_switch(move |sw, agent| {
                        if agent.group(GROUP).is_some() {
                            let _ = agent.remove_replica(sw, GROUP, rid);
                        }
                    })
                });
            })
        };
        let node_failover = |jobs: &CmJobs| {
            cfg.leader_timeout.map(|timeout| NodeFailover {
                setup: FailoverSetup {
                    timeout,
                    leader: lcfg,
                },
                mode: cfg.mode,
                on_lost: Some(lost_hook(jobs.clone())),
            })
        };
        let spec = |i: usize| NodeSpec {
            id: ids[i],
            ids: ids.clone(),
            leader: i == 0,
            geometry,
            replicas: cfg.replicas,
            seed: cfg.seed,
            listen: i > 0,
            mesh: if i > 0 && fo { cfg.replicas - 1 } else { 0 },
            ack_timeout: ACK_TIMEOUT,
            cm_response_timeout: Duration::from_millis(20),
            gateway: None,
        };
        let mut replicas = Vec::new();
        for (i, h) in hosts.iter().enumerate().skip(1) {
            replicas.push(NodeHandle::start(
                NodeSetup {
                    node: NodeConfig {
                        spec: spec(i),
                        leader: None,
                        record: cfg.record,
                        failover: node_failover(&cm_jobs),
                    },
                    netns: h.netns.clone(),
                    ifname: h.host_if.clone(),
                    link: host_link(i, ids[i]),
                },
                clock.clone(),
            )?);
        }
        let on_lost = lost_hook(cm_jobs.clone());
        let leader = NodeHandle::start(
            NodeSetup {
                node: NodeConfig {
                    spec: spec(0),
                    leader: Some(LeaderSetup {
                        cfg: lcfg,
                        mode: cfg.mode,
                        replicas: ids[1..].iter().map(|id| (host_ip(*id), *id)).collect(),
                        on_lost: Some(on_lost),
                    }),
                    record: cfg.record,
                    failover: node_failover(&cm_jobs),
                },
                netns: hosts[0].netns.clone(),
                ifname: hosts[0].host_if.clone(),
                link: host_link(0, ids[0]),
            },
            clock.clone(),
        )?;
        lab.nodes.push(leader);
        lab.nodes.extend(replicas);
        lab.wait_for(ready_timeout, "the leader to be ready", |l| {
            l.nodes[0].status().ready
        })?;
        if fo {
            // The replicas the leader has (one cut off before the start is not waited for:
            // it arms when it joins).
            let live = lab.nodes[0].exec(CALL_TIMEOUT, |ctx| {
                ctx.leader()
                    .and_then(|l| l.leader.as_ref())
                    .map(|l| l.live_replicas())
                    .unwrap_or_default()
            })?;
            lab.wait_for(ready_timeout, "the replicas' heartbeats", |l| {
                l.nodes.iter().all(|n| {
                    let live = live.clone();
                    let id = n.id;
                    !live.contains(&id)
                        || n.exec(CALL_TIMEOUT, move |ctx| {
                            // Armed, and watching every other replica the leader has.
                            ctx.failover.as_ref().is_some_and(|f| {
                                f.armed() && live.iter().all(|r| *r == id || f.watches(*r))
                            })
                        })
                        .unwrap_or(false)
                })
            })?;
        }
        Ok(lab)
    }

    /// Polls `cond` every millisecond until it holds; fails when `timeout` passes or a node
    /// thread failed.
    pub fn wait_for(
        &self,
        timeout: Duration,
        what: &str,
        mut cond: impl FnMut(&NetnsLab) -> bool,
    ) -> Result<(), NetnsError> {
        let start = std::time::Instant::now();
        loop {
            if cond(self) {
                return Ok(());
            }
            for n in &self.nodes {
                if let Some(e) = n.status().error {
                    return Err(NetnsError::Node(n.id, e));
                }
            }
            if start.elapsed() > timeout {
                let cm = self
                    .cm
                    .as_ref()
                    .and_then(|c| c.log.lock().ok().map(|l| format!("{l:?}")))
                    .unwrap_or_default();
                return Err(NetnsError::Timeout(format!(
                    "waiting {timeout:?} for {what} (leader: {:?}; CM agent: {cm})",
                    self.nodes[self.lead()].status()
                )));
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// The settings.
    pub fn config(&self) -> &NetnsConfig {
        &self.cfg
    }

    /// Node `i` (0: the leader).
    pub fn node(&self, i: usize) -> &NodeHandle {
        &self.nodes[i]
    }

    /// Index of the node that leads now: the running node that says it leads with the
    /// highest id (a deposed leader that still runs has the lower one), else the first
    /// leader (0).
    pub fn lead(&self) -> usize {
        self.nodes
            .iter()
            .enumerate()
            .filter(|(_, n)| n.running() && n.status().leading)
            .map(|(i, _)| i)
            .next_back()
            .unwrap_or(0)
    }

    /// Waits until a running node other than `old` leads and is ready (its switch path up
    /// in P4CE mode); returns its index.
    pub fn wait_new_leader(&self, old: usize, timeout: Duration) -> Result<usize, NetnsError> {
        self.wait_for(timeout, "a new leader", |l| {
            let i = l.lead();
            i != old && l.nodes[i].running() && l.nodes[i].status().ready
        })?;
        Ok(self.lead())
    }

    /// What fail-over did on node `i` so far.
    pub fn failover_events(&self, i: usize) -> Result<Vec<FailoverEvent>, NetnsError> {
        Ok(self.nodes[i].exec(CALL_TIMEOUT, |ctx| {
            ctx.failover
                .as_ref()
                .map(|f| f.events.clone())
                .unwrap_or_default()
        })?)
    }

    /// The leader's status.
    pub fn leader_status(&self) -> NodeStatus {
        self.nodes[self.lead()].status()
    }

    /// The switch device port of node `i`.
    pub fn devport(&self, i: usize) -> u16 {
        self.devports[i]
    }

    /// The switch runtime (statistics, link control, control calls).
    pub fn switch(&self) -> &RuntimeHandle<SwitchPipeline> {
        &self.handle
    }

    /// The wall clock every thread reads.
    pub fn clock(&self) -> &WallClock {
        &self.clock
    }

    /// Hands `values` to the leader to append in order.
    pub fn append(&self, values: Vec<Vec<u8>>) -> Result<(), NetnsError> {
        Ok(self.nodes[self.lead()].exec(CALL_TIMEOUT, move |ctx| {
            if let Some(l) = ctx.leader() {
                l.queue.extend(values);
            }
        })?)
    }

    /// Waits until the leader has committed `target` entries; returns how many it has.
    pub fn wait_committed(&self, target: u64, timeout: Duration) -> Result<u64, NetnsError> {
        self.wait_for(timeout, &format!("{target} commits"), |l| {
            l.nodes[l.lead()].status().committed >= target
        })?;
        Ok(self.leader_status().committed)
    }

    /// Waits until every running replica has applied `target` entries.
    pub fn wait_applied(&self, target: u64, timeout: Duration) -> Result<(), NetnsError> {
        self.wait_for(timeout, &format!("replicas applying {target}"), |l| {
            l.nodes
                .iter()
                .skip(1)
                .filter(|n| n.running() && !n.status().leading)
                .all(|n| n.status().applied >= target)
        })
    }

    /// The leader's events so far (commits left out).
    pub fn leader_events(&self) -> Result<Vec<LeaderEvent>, NetnsError> {
        Ok(self.nodes[self.lead()].exec(CALL_TIMEOUT, |ctx| {
            ctx.leader().map(|l| l.events.clone()).unwrap_or_default()
        })?)
    }

    /// Crashes node `i`: its thread stops at once (no goodbye to anyone).
    pub fn crash(&mut self, i: usize) {
        if let Some(n) = self.nodes.get_mut(i) {
            drop(n.stop());
        }
    }

    /// Breaks (or heals) the switch's P4CE path: frames to the switch's IP are lost on the
    /// switch's host-facing ports (the dataplane's match-based drop on their receive side,
    /// [`FaultConfig::drop_ipv4_dst`], counted as loss in the port's fault counters); plain L2
    /// forwarding between hosts goes on.
    pub fn set_switch_path_broken(&self, broken: bool) -> Result<(), NetnsError> {
        let dst = broken.then_some(SWITCH_IP);
        for d in &self.devports {
            self.handle
                .link(*d)?
                .update(|c| c.rx.faults.drop_ipv4_dst = dst)
                .map_err(|e| NetnsError::Setup(e.to_string()))?;
        }
        Ok(())
    }

    /// Takes node `i`'s cable down or up: the switch port's link model drops everything in
    /// both directions while it is down (the fault a lab file's `link: down` sets from the
    /// start). A replica cut off before the start joins the running log once it is up.
    pub fn set_host_link_up(&self, i: usize, up: bool) -> Result<(), NetnsError> {
        let d = *self
            .devports
            .get(i)
            .ok_or_else(|| NetnsError::Setup(format!("no node {i}")))?;
        self.handle.link(d)?.set_link_up(up);
        Ok(())
    }

    /// Runs `f` on the P4CE agent (on the agent's thread) and returns its result.
    pub fn agent<R: Send + 'static>(
        &self,
        f: impl FnOnce(&Agent) -> R + Send + 'static,
    ) -> Result<R, NetnsError> {
        let cm = self
            .cm
            .as_ref()
            .ok_or_else(|| NetnsError::Setup("the CM agent has stopped".into()))?;
        cm.exec(CALL_TIMEOUT, move |ctx| {
            ctx.agent()
                .map(f)
                .ok_or_else(|| NetnsError::Setup("the P4CE agent is gone".into()))
        })
    }

    /// Sets the loss probability of every host link, both directions.
    pub fn set_loss(&self, p: f64) -> Result<(), NetnsError> {
        for d in &self.devports {
            self.handle
                .link(*d)?
                .set_loss(p)
                .map_err(|e| NetnsError::Setup(e.to_string()))?;
        }
        Ok(())
    }

    /// Packets in cell `index` of the switch's indexed counter `name`, over every pipe.
    pub fn switch_counter(&self, name: &str, index: u32) -> Result<u64, NetnsError> {
        let name = name.to_string();
        let r = self
            .handle
            .call(CALL_TIMEOUT, move |p: &mut SwitchPipeline| {
                p.sw.counter_read(PipeSel::All, &name, index)
                    .map(|v| v.iter().map(|c| c.packets).sum::<u64>())
                    .map_err(|e| e.to_string())
            })?;
        r.map_err(NetnsError::Setup)
    }

    /// CPU time of every thread so far: the switch's runtime threads, the CM agent and the
    /// nodes (running ones).
    pub fn cpu(&self) -> CpuSnapshot {
        let mut v = Vec::new();
        if let Ok(g) = self.runtime_cpu.lock() {
            for (name, t) in g.iter() {
                v.push((name.clone(), t.cpu_ns().unwrap_or(0)));
            }
        }
        if let Some(c) = &self.cm {
            if let Some(t) = c.cpu.lock().ok().and_then(|g| g.clone()) {
                v.push(("CM agent".into(), t.cpu_ns().unwrap_or(0)));
            }
        }
        for (i, n) in self.nodes.iter().enumerate() {
            if let Some(t) = n.cpu.lock().ok().and_then(|g| g.clone()) {
                let name = if i == 0 {
                    "leader".to_string()
                } else {
                    format!("replica {}", n.id)
                };
                v.push((name, t.cpu_ns().unwrap_or(0)));
            }
        }
        v
    }

    /// Stops the nodes (leader first), the CM agent and the switch.
    pub fn stop(mut self) -> Result<NetnsOutcome, NetnsError> {
        let nodes = self.nodes.iter_mut().map(NodeHandle::stop).collect();
        // The agent's end of the CPU port lives until the switch has stopped.
        let (cm_log, cm_port) = match self.cm.take() {
            Some(mut c) => {
                let port = c.stop()?;
                (c.log.lock().map(|l| l.clone()).unwrap_or_default(), port)
            }
            None => (Vec::new(), None),
        };
        let runtime = match self.runtime.take() {
            Some(r) => r.stop()?.1,
            None => RuntimeStats::default(),
        };
        drop(cm_port);
        Ok(NetnsOutcome {
            nodes,
            runtime,
            cm_log,
        })
    }
}

impl Drop for NetnsLab {
    fn drop(&mut self) {
        for n in &mut self.nodes {
            drop(n.stop());
        }
        let cm_port = self.cm.take().and_then(|mut c| c.stop().ok().flatten());
        if let Some(r) = self.runtime.take() {
            let _ = r.stop();
        }
        drop(cm_port);
    }
}
