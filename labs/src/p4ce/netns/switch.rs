//! The P4CE agent's thread in the namespace lab. The switch itself is p4ce.p4 as
//! [`dataplane::switch::SwitchPipeline`] on the runtime (one pipeline thread); its CPU port is
//! a [`dataplane::mem::pair`] whose other end is the RDMA CM agent's endpoint
//! ([`control::p4ce::SwitchCm`]) on this thread.
//!
//! The thread owns the agent ([`control::p4ce::Agent`]) and its CM endpoint. Every table, PRE
//! and register change must run on the pipeline thread between two frames
//! ([`dataplane::runtime::RuntimeHandle::call`]): for each CM step the thread moves the CM
//! endpoint and the agent there, the step runs against the switch, and both come back. Others
//! reach the agent through the thread ([`CmThread::exec`]): a leader's lost replica (a view
//! change on the switch), a test reading the group.

use std::collections::BTreeMap;
use std::net::Ipv4Addr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use control::p4ce::{Agent, Attachment, CmAgentEvent, SwitchCm};
use dataplane::runtime::RuntimeHandle;
use dataplane::switch::SwitchPipeline;
use dataplane::{Clock, FrameBatch, MemPort, Port};
use hosts::p4ce::cpu::ThreadCpu;
use hosts::p4ce::{SWITCH_IP, SWITCH_MAC};
use pipeline::switch::Switch;
use rdma::verbs::{EndpointConfig, Instant};

use super::NetnsError;

/// How long a control call to the pipeline thread may take.
pub(super) const CALL_TIMEOUT: Duration = Duration::from_secs(2);

/// What the agent's thread holds; jobs run on it ([`CmThread::exec`]).
pub struct CmCtx {
    /// The agent (tables, PRE, registers). `None` only while it is on the pipeline thread.
    agent: Option<Agent>,
    /// The pipeline thread, where the agent's changes run.
    handle: RuntimeHandle<SwitchPipeline>,
}

impl CmCtx {
    /// The agent, to read.
    pub fn agent(&self) -> Option<&Agent> {
        self.agent.as_ref()
    }

    /// Runs `f` with the switch and the agent on the pipeline thread (the agent moves there
    /// and back). An agent that does not come back (the call timed out, the switch stopped)
    /// is lost: the thread stops.
    pub fn on_switch<R: Send + 'static>(
        &mut self,
        f: impl FnOnce(&mut Switch, &mut Agent) -> R + Send + 'static,
    ) -> Result<R, NetnsError> {
        let Some(mut agent) = self.agent.take() else {
            return Err(NetnsError::Setup("the P4CE agent is gone".into()));
        };
        let (agent, r) = self
            .handle
            .call(CALL_TIMEOUT, move |p: &mut SwitchPipeline| {
                let r = f(&mut p.sw, &mut agent);
                (agent, r)
            })?;
        self.agent = Some(agent);
        Ok(r)
    }
}

/// A closure run on the agent's thread.
type CmJob = Box<dyn FnOnce(&mut CmCtx) -> Result<(), NetnsError> + Send>;

/// The CM agent's thread: its endpoint on the CPU port's host end, and the agent.
pub struct CmThread {
    stop: Arc<AtomicBool>,
    join: Option<JoinHandle<Result<MemPort, NetnsError>>>,
    jobs: Sender<CmJob>,
    /// What the agent did.
    pub log: Arc<Mutex<Vec<CmAgentEvent>>>,
    /// Its CPU time.
    pub cpu: Arc<Mutex<Option<ThreadCpu>>>,
}

impl CmThread {
    /// Starts the agent: `port` is the CPU port's far end, `hosts` where each host hangs off
    /// the switch, `agent` the P4CE agent (its base tables installed), `handle` the switch's
    /// pipeline thread.
    pub fn start(
        port: MemPort,
        hosts: BTreeMap<Ipv4Addr, Attachment>,
        agent: Agent,
        handle: RuntimeHandle<SwitchPipeline>,
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
        let (jobs, rx) = channel::<CmJob>();
        let (s, l, c) = (stop.clone(), log.clone(), cpu.clone());
        let ctx = CmCtx {
            agent: Some(agent),
            handle,
        };
        let join = std::thread::Builder::new()
            .name("p4ce-cm".into())
            .spawn(move || {
                if let Ok(mut g) = c.lock() {
                    *g = ThreadCpu::current();
                }
                cm_loop(cm, ctx, port, &*clock, &s, &l, &rx)
            })
            .map_err(|e| NetnsError::Setup(format!("CM thread: {e}")))?;
        Ok(CmThread {
            stop,
            join: Some(join),
            jobs,
            log,
            cpu,
        })
    }

    /// A handle that runs closures on the agent's thread (cloneable, for other threads).
    pub fn jobs(&self) -> CmJobs {
        CmJobs(self.jobs.clone())
    }

    /// Runs `f` on the agent's thread between two CM steps and returns its result (waiting
    /// at most `timeout`).
    pub fn exec<R: Send + 'static>(
        &self,
        timeout: Duration,
        f: impl FnOnce(&mut CmCtx) -> Result<R, NetnsError> + Send + 'static,
    ) -> Result<R, NetnsError> {
        self.jobs().exec(timeout, f)
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

/// Sends closures to the agent's thread ([`CmThread::jobs`]).
#[derive(Clone)]
pub struct CmJobs(Sender<CmJob>);

impl CmJobs {
    /// Queues `f` without waiting for it.
    pub fn post(&self, f: impl FnOnce(&mut CmCtx) -> Result<(), NetnsError> + Send + 'static) {
        let _ = self.0.send(Box::new(f));
    }

    /// Runs `f` on the agent's thread and returns its result (waiting at most `timeout`).
    pub fn exec<R: Send + 'static>(
        &self,
        timeout: Duration,
        f: impl FnOnce(&mut CmCtx) -> Result<R, NetnsError> + Send + 'static,
    ) -> Result<R, NetnsError> {
        let (tx, rx) = channel();
        self.post(move |ctx| {
            let r = f(ctx);
            let _ = tx.send(r);
            Ok(())
        });
        rx.recv_timeout(timeout).map_err(|_| {
            NetnsError::Setup(format!("the CM agent did not answer within {timeout:?}"))
        })?
    }
}

fn cm_loop(
    mut cm: SwitchCm,
    mut ctx: CmCtx,
    mut port: MemPort,
    clock: &dyn Clock,
    stop: &AtomicBool,
    log: &Mutex<Vec<CmAgentEvent>>,
    jobs: &Receiver<CmJob>,
) -> Result<MemPort, NetnsError> {
    let mut batch = FrameBatch::new(64);
    while !stop.load(Ordering::Acquire) {
        let mut work = false;
        while let Ok(job) = jobs.try_recv() {
            job(&mut ctx)?;
            work = true;
        }
        let now = clock.now();
        let t = Instant::from_nanos(now.as_nanos());
        let mut step = false;
        batch.clear();
        let got = port.recv_batch(&mut batch, now)?;
        for f in batch.iter() {
            cm.endpoint().handle_frame(t, &f.data);
        }
        step |= got > 0;
        if cm.endpoint_ref().poll_timeout().is_some_and(|d| d <= t) {
            cm.endpoint().handle_timeout(t);
            step = true;
        }
        if step {
            // The CM step may program the switch: it runs on the pipeline thread, the CM
            // endpoint and the agent moved there and back.
            cm = ctx.on_switch(move |sw, agent| {
                cm.poll(t, sw, agent);
                cm
            })?;
            let evs = cm.take_events();
            if !evs.is_empty() {
                if let Ok(mut l) = log.lock() {
                    l.extend(evs);
                }
            }
            work = true;
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
