//! The switch of the namespace lab: p4ce.p4 in a [`pipeline::switch::Switch`] run by
//! [`dataplane::runtime::Runtime`] (one pipeline thread) on AF_PACKET ports at the switch-side
//! veths, plus a CPU port ([`dataplane::mem::pair`]) whose other end is the RDMA CM agent's
//! endpoint ([`crate::p4ce_cm::SwitchCm`]) on its own thread.
//!
//! The P4CE agent ([`control::p4ce::Agent`]) lives with the switch inside the pipeline
//! ([`P4ceSwitch`]), so every table, PRE and register change runs on the pipeline thread
//! between two frames ([`dataplane::runtime::RuntimeHandle::call`]): the CM thread hands its
//! agent over for each CM step and gets it back.

use std::collections::BTreeMap;
use std::net::Ipv4Addr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use control::p4ce::{Agent, AgentConfig};
use dataplane::runtime::{Pipeline, RuntimeHandle};
use dataplane::{Clock, FrameBatch, MemPort, Nanos, Port};
use pipeline::switch::{InFrame, Switch};
use rdma::verbs::{EndpointConfig, Instant};

use super::cpu::ThreadCpu;
use super::NetnsError;
use crate::p4ce_cm::{Attachment, CmAgentEvent, SwitchCm};
use crate::p4ce_lab::lab::{to_switch_ip, CPU_PORT, SWITCH_IP, SWITCH_MAC};

/// How long a control call to the pipeline thread may take.
pub(super) const CALL_TIMEOUT: Duration = Duration::from_secs(2);

/// p4ce.p4's switch and its P4CE agent, as the runtime's pipeline.
pub struct P4ceSwitch {
    /// The switch.
    pub sw: Switch,
    /// The P4CE agent (tables, PRE, registers).
    pub agent: Agent,
    /// While set, frames addressed to the switch's IP are lost in the switch (the P4CE path
    /// is broken; plain L2 forwarding between hosts goes on), as the in-memory lab's
    /// `set_switch_path_broken`.
    pub broken: bool,
    /// Frames lost that way.
    pub broken_drops: u64,
}

impl P4ceSwitch {
    /// The switch with the agent's base tables: `l2` maps each host MAC to its port.
    pub fn new(sw: Switch, l2: &[([u8; 6], u16)]) -> Result<P4ceSwitch, NetnsError> {
        let mut sw = sw;
        let mut agent = Agent::new(AgentConfig {
            switch_ip: SWITCH_IP,
            cpu_port: CPU_PORT,
        });
        agent
            .install_base(&mut sw, l2)
            .map_err(|e| NetnsError::Setup(format!("P4CE agent: {e}")))?;
        Ok(P4ceSwitch {
            sw,
            agent,
            broken: false,
            broken_drops: 0,
        })
    }
}

impl Pipeline for P4ceSwitch {
    fn process(&mut self, port: u16, data: &[u8], ts: Nanos, out: &mut dyn FnMut(u16, Vec<u8>)) {
        if self.broken && port != CPU_PORT && to_switch_ip(data) {
            self.broken_drops += 1;
            return;
        }
        self.sw.process(
            InFrame {
                port,
                bytes: data,
                ts: ts.0,
            },
            &mut |o| out(o.port, o.bytes),
        );
    }

    fn recycle(&mut self, buf: Vec<u8>) {
        self.sw.recycle(buf);
    }
}

/// The CM agent's thread: its endpoint on the CPU port's host end.
pub(super) struct CmThread {
    stop: Arc<AtomicBool>,
    join: Option<JoinHandle<Result<MemPort, NetnsError>>>,
    /// What the agent did.
    pub log: Arc<Mutex<Vec<CmAgentEvent>>>,
    /// Its CPU time.
    pub cpu: Arc<Mutex<Option<ThreadCpu>>>,
}

impl CmThread {
    /// Starts the agent: `port` is the CPU port's far end, `hosts` where each host hangs off
    /// the switch.
    pub fn start(
        port: MemPort,
        hosts: BTreeMap<Ipv4Addr, Attachment>,
        handle: RuntimeHandle<P4ceSwitch>,
        clock: Arc<dyn Clock>,
        seed: u64,
    ) -> Result<CmThread, NetnsError> {
        let mut ecfg = EndpointConfig::new(SWITCH_MAC, SWITCH_IP);
        ecfg.seed ^= seed.rotate_left(7);
        ecfg.cm.response_timeout = Duration::from_millis(20);
        let cm = SwitchCm::new(ecfg, hosts).map_err(|e| NetnsError::Setup(e.to_string()))?;
        let stop = Arc::new(AtomicBool::new(false));
        let log = Arc::new(Mutex::new(Vec::new()));
        let cpu = Arc::new(Mutex::new(None));
        let (s, l, c) = (stop.clone(), log.clone(), cpu.clone());
        let join = std::thread::Builder::new()
            .name("p4ce-cm".into())
            .spawn(move || {
                if let Ok(mut g) = c.lock() {
                    *g = ThreadCpu::current();
                }
                cm_loop(cm, port, &handle, &*clock, &s, &l)
            })
            .map_err(|e| NetnsError::Setup(format!("CM thread: {e}")))?;
        Ok(CmThread {
            stop,
            join: Some(join),
            log,
            cpu,
        })
    }

    /// Stops the agent's thread and hands back its end of the CPU port (drop it once the
    /// switch has stopped, so that the switch never sees the CPU port vanish).
    pub fn stop(&mut self) -> Result<Option<MemPort>, NetnsError> {
        self.stop.store(true, Ordering::Release);
        match self.join.take().map(JoinHandle::join) {
            Some(Ok(r)) => r.map(Some),
            Some(Err(_)) => Err(NetnsError::Setup("the CM thread panicked".into())),
            None => Ok(None),
        }
    }
}

impl Drop for CmThread {
    fn drop(&mut self) {
        let _ = self.stop();
    }
}

fn cm_loop(
    mut cm: SwitchCm,
    mut port: MemPort,
    handle: &RuntimeHandle<P4ceSwitch>,
    clock: &dyn Clock,
    stop: &AtomicBool,
    log: &Mutex<Vec<CmAgentEvent>>,
) -> Result<MemPort, NetnsError> {
    let mut batch = FrameBatch::new(64);
    while !stop.load(Ordering::Acquire) {
        let now = clock.now();
        let t = Instant::from_nanos(now.as_nanos());
        let mut work = false;
        batch.clear();
        let got = port.recv_batch(&mut batch, now)?;
        for f in batch.iter() {
            cm.endpoint().handle_frame(t, &f.data);
        }
        work |= got > 0;
        if cm.endpoint_ref().poll_timeout().is_some_and(|d| d <= t) {
            cm.endpoint().handle_timeout(t);
            work = true;
        }
        if work {
            // The CM step may program the switch: run it on the pipeline thread.
            cm = handle.call(CALL_TIMEOUT, move |p: &mut P4ceSwitch| {
                cm.poll(t, &mut p.sw, &mut p.agent);
                cm
            })?;
            let evs = cm.take_events();
            if !evs.is_empty() {
                if let Ok(mut l) = log.lock() {
                    l.extend(evs);
                }
            }
        }
        batch.clear();
        while let Some(f) = cm.endpoint().poll_transmit(t) {
            if !batch.push(&f, now) {
                port.send_batch(&mut batch, now)?;
                batch.clear();
                batch.push(&f, now);
            }
            work = true;
        }
        if !batch.is_empty() {
            port.send_batch(&mut batch, now)?;
        }
        if !work {
            std::thread::sleep(Duration::from_millis(1));
        }
    }
    Ok(port)
}
