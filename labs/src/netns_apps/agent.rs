//! A control-plane agent ([`SwitchApp`]) on its own thread at a switch port in namespaces: the
//! port is a memory pair into the switch's runtime (the switch end is one of the runtime's
//! ports, this thread holds the other), and every step of the agent runs against the switch on
//! the pipeline thread ([`dataplane::runtime::RuntimeHandle::call`], between two batches), the
//! agent moved there and back — as the P4CE agent's thread does (`crate::p4ce::netns::switch`).
//! A step is taken when frames arrived or the agent's wake-up is due; otherwise the thread
//! waits on the port.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use dataplane::runtime::RuntimeHandle;
use dataplane::switch::SwitchPipeline;
use dataplane::{FrameBatch, MemPort, Port};

use super::host::since;
use crate::host::SwitchApp;

/// An agent shared between its thread and the driver (`None` only while a step runs on the
/// pipeline thread, with the mutex held).
pub type SharedAgent = Arc<Mutex<Option<Box<dyn SwitchApp + Send>>>>;

/// How long one step on the pipeline thread may take.
const CALL_TIMEOUT: Duration = Duration::from_secs(2);

/// The longest idle wait.
const MAX_WAIT: Duration = Duration::from_millis(1);

/// A running agent thread.
pub struct AgentThread {
    stop: Arc<AtomicBool>,
    join: Option<JoinHandle<Result<MemPort, String>>>,
    /// Its end of the port, once stopped (dropped after the switch stopped).
    port: Option<MemPort>,
}

impl AgentThread {
    /// Starts `agent` on `port` (the far end of the switch's port), stepping on `handle`.
    pub fn start(
        port: MemPort,
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
    mut port: MemPort,
    agent: &Mutex<Option<Box<dyn SwitchApp + Send>>>,
    handle: &RuntimeHandle<SwitchPipeline>,
    start: Instant,
    stop: &AtomicBool,
) -> Result<MemPort, String> {
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
