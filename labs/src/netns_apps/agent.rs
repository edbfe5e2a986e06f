//! A control-plane agent ([`SwitchApp`]) on its own thread at a switch port in namespaces: the
//! port is a memory pair into the switch's runtime (the switch end is one of the runtime's
//! ports, this thread holds the other), and every step of the agent runs against the switch on
//! the pipeline thread ([`dataplane::runtime::RuntimeHandle::call`], between two batches), the
//! agent moved there and back — as the P4CE agent's thread does (`crate::p4ce::netns::switch`).
//! A step is taken when frames arrived or the agent's wake-up is due; otherwise the thread
//! waits on the port.
//!
//! The port is [`agent_pair`]: a memory pair whose agent end also rings a datagram socket
//! after each send, the switch end's descriptor ([`Port::raw_fd`]), so the pipeline thread
//! sleeps in its `ppoll` like on its veths instead of napping in a loop (which it does on a
//! port without a descriptor).

use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::net::UnixDatagram;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use dataplane::runtime::RuntimeHandle;
use dataplane::switch::SwitchPipeline;
use dataplane::{FrameBatch, MemPort, Nanos, Port, PortError, StatsHandle};

use super::host::since;
use crate::host::SwitchApp;

/// An agent shared between its thread and the driver (`None` only while a step runs on the
/// pipeline thread, with the mutex held).
pub type SharedAgent = Arc<Mutex<Option<Box<dyn SwitchApp + Send>>>>;

/// How long one step on the pipeline thread may take.
const CALL_TIMEOUT: Duration = Duration::from_secs(2);

/// The longest idle wait.
const MAX_WAIT: Duration = Duration::from_millis(1);

/// The switch's end of an agent's port: frames from the agent, and the bell it rings.
pub struct SwitchEnd {
    port: MemPort,
    bell: UnixDatagram,
}

/// The agent's end: frames to the switch, each send followed by a ring.
pub struct AgentEnd {
    port: MemPort,
    bell: UnixDatagram,
}

/// A port pair between a switch (its end named `name`) and an agent.
pub fn agent_pair(name: &str) -> std::io::Result<(SwitchEnd, AgentEnd)> {
    let (sw_bell, agent_bell) = UnixDatagram::pair()?;
    sw_bell.set_nonblocking(true)?;
    agent_bell.set_nonblocking(true)?;
    let (a, b) = dataplane::mem::pair(name, "agent");
    Ok((
        SwitchEnd {
            port: a,
            bell: sw_bell,
        },
        AgentEnd {
            port: b,
            bell: agent_bell,
        },
    ))
}

impl Port for SwitchEnd {
    fn name(&self) -> &str {
        self.port.name()
    }

    fn recv_batch(&mut self, batch: &mut FrameBatch, now: Nanos) -> Result<usize, PortError> {
        // Silence the bell first: a frame sent after this rings it again.
        let mut b = [0u8; 16];
        while self.bell.recv(&mut b).is_ok() {}
        self.port.recv_batch(batch, now)
    }

    fn send_batch(&mut self, batch: &mut FrameBatch, now: Nanos) -> Result<usize, PortError> {
        self.port.send_batch(batch, now)
    }

    fn stats_handle(&self) -> StatsHandle {
        self.port.stats_handle()
    }

    fn raw_fd(&self) -> Option<RawFd> {
        Some(self.bell.as_raw_fd())
    }
}

impl AgentEnd {
    fn recv_batch(&mut self, batch: &mut FrameBatch, now: Nanos) -> Result<usize, PortError> {
        self.port.recv_batch(batch, now)
    }

    fn send_batch(&mut self, batch: &mut FrameBatch, now: Nanos) -> Result<usize, PortError> {
        let n = self.port.send_batch(batch, now)?;
        // A full socket means a ring is pending already.
        let _ = self.bell.send(&[1]);
        Ok(n)
    }

    fn wait_readable(&mut self, timeout: Duration) -> Result<bool, PortError> {
        self.port.wait_readable(timeout)
    }
}

/// A running agent thread.
pub struct AgentThread {
    stop: Arc<AtomicBool>,
    join: Option<JoinHandle<Result<AgentEnd, String>>>,
    /// Its end of the port, once stopped (dropped after the switch stopped).
    port: Option<AgentEnd>,
}

impl AgentThread {
    /// Starts `agent` on `port` (the far end of the switch's port), stepping on `handle`.
    pub fn start(
        port: AgentEnd,
        agent: SharedAgent,
        handle: RuntimeHandle<SwitchPipeline>,
        start: Instant,
    ) -> Result<AgentThread, String> {
        let stop = Arc::new(AtomicBool::new(false));
        let s = stop.clone();
        let join = std::thread::Builder::new()
            .name("agent".into())
            .spawn(move || agent_loop(port, &agent, &handle, start, &s))
            .map_err(|e| format!("agent thread: {e}"))?;
        Ok(AgentThread {
            stop,
            join: Some(join),
            port: None,
        })
    }

    /// Whether the thread stopped by itself (on an error).
    pub fn finished(&self) -> bool {
        self.join.as_ref().is_some_and(JoinHandle::is_finished)
    }

    /// Stops the thread; its error, if it had one.
    pub fn stop(&mut self) -> Result<(), String> {
        self.stop.store(true, Ordering::Release);
        match self.join.take().map(JoinHandle::join) {
            Some(Ok(Ok(port))) => {
                self.port = Some(port);
                Ok(())
            }
            Some(Ok(Err(e))) => Err(e),
            Some(Err(_)) => Err("the agent thread panicked".into()),
            None => Ok(()),
        }
    }
}

impl Drop for AgentThread {
    fn drop(&mut self) {
        let _ = self.stop();
    }
}

/// One step: the frames that arrived, then a poll, on the pipeline thread; the frames the
/// agent sends and its next wake-up come back.
fn step(
    agent: &Mutex<Option<Box<dyn SwitchApp + Send>>>,
    handle: &RuntimeHandle<SwitchPipeline>,
    frames: Vec<Vec<u8>>,
    now: dataplane::Nanos,
) -> Result<(Vec<Vec<u8>>, Option<dataplane::Nanos>), String> {
    let mut slot = agent.lock().unwrap_or_else(|p| p.into_inner());
    let mut app = slot.take().ok_or("the agent was lost")?;
    let (app, out, wake) = handle
        .call(CALL_TIMEOUT, move |p: &mut SwitchPipeline| {
            let mut out = Vec::new();
            for f in &frames {
                app.receive(now, f, &mut p.sw);
            }
            app.poll(now, &mut p.sw, &mut |f| out.push(f));
            let wake = app.next_wakeup();
            (app, out, wake)
        })
        .map_err(|e| format!("agent step on the switch: {e}"))?;
    *slot = Some(app);
    Ok((out, wake))
}

fn agent_loop(
    mut port: AgentEnd,
    agent: &Mutex<Option<Box<dyn SwitchApp + Send>>>,
    handle: &RuntimeHandle<SwitchPipeline>,
    start: Instant,
    stop: &AtomicBool,
) -> Result<AgentEnd, String> {
    let mut batch = FrameBatch::new(64);
    // The first step runs at once (the agent may have frames to send from the start).
    let mut wake = Some(dataplane::Nanos(0));
    while !stop.load(Ordering::Acquire) {
        let now = since(start);
        batch.clear();
        port.recv_batch(&mut batch, now)
            .map_err(|e| e.to_string())?;
        let frames: Vec<Vec<u8>> = batch.iter().map(|f| f.data.to_vec()).collect();
        if frames.is_empty() && wake.is_none_or(|w| w > now) {
            let wait = wake.map_or(MAX_WAIT, |w| w.saturating_sub(now).to_duration());
            port.wait_readable(wait.min(MAX_WAIT))
                .map_err(|e| e.to_string())?;
            continue;
        }
        let (out, next) = step(agent, handle, frames, now)?;
        wake = next;
        batch.clear();
        for f in out {
            if !batch.push(&f, now) {
                port.send_batch(&mut batch, now)
                    .map_err(|e| e.to_string())?;
                batch.clear();
                batch.push(&f, now);
            }
        }
        if !batch.is_empty() {
            port.send_batch(&mut batch, now)
                .map_err(|e| e.to_string())?;
        }
    }
    Ok(port)
}
