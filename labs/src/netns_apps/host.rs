//! A host application on its own thread inside its namespace: AF_PACKET on `eth0`, wall-clock
//! time since the run started. Each turn hands what arrived to the application, lets it poll,
//! and sends what it produced; a turn that did nothing waits on the socket until a frame
//! arrives or the application's next wake-up is due (at most a millisecond, so that a change
//! made through [`super::NetnsApps`]'s `with_app` is seen soon).
//!
//! The application sits behind a mutex that the thread holds only for a turn, so the driver
//! can read or change it between turns.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use dataplane::{AfPacketPort, FrameBatch, Nanos, Port};

use crate::host::HostApp;

/// An application shared between its thread and the driver.
pub type SharedApp = Arc<Mutex<Box<dyn HostApp + Send>>>;

/// Frames per receive and send batch.
const BATCH: usize = 64;

/// Receive batches per turn at most, so a flood cannot starve the application's timers.
const MAX_RX_BATCHES: usize = 4;

/// The longest idle wait.
const MAX_WAIT: Duration = Duration::from_millis(1);

/// The shortest idle wait when the application says it is due already (a nap, not a spin).
const NAP: Duration = Duration::from_micros(20);

/// Nanoseconds since `start`.
pub fn since(start: Instant) -> Nanos {
    Nanos(start.elapsed().as_nanos() as u64)
}

/// The lab's clock for the switches' runtimes: wall-clock time since the run started (zero
/// until then), so that what the programs stamp and what the applications and agents see
/// agree.
#[derive(Clone, Default)]
pub struct SinceClock(pub Arc<std::sync::OnceLock<Instant>>);

impl dataplane::Clock for SinceClock {
    fn now(&self) -> Nanos {
        self.0.get().map_or(Nanos(0), |s| since(*s))
    }
}

/// A running host thread.
pub struct HostThread {
    pub name: String,
    stop: Arc<AtomicBool>,
    join: Option<JoinHandle<Result<(), String>>>,
}

impl HostThread {
    /// Opens `eth0` in namespace `netns` (open every host's before starting any, so that no
    /// host sends before the others listen).
    pub fn open(netns: &str) -> Result<AfPacketPort, String> {
        dataplane::netns::in_netns(netns, || AfPacketPort::open("eth0"))
            .map_err(|e| e.to_string())?
            .map_err(|e| format!("eth0 in {netns}: {e}"))
    }

    /// Starts `app` on a thread on `port`, its time counted from `start`.
    pub fn start(
        name: &str,
        port: AfPacketPort,
        app: SharedApp,
        start: Instant,
    ) -> Result<HostThread, String> {
        let stop = Arc::new(AtomicBool::new(false));
        let s = stop.clone();
        let join = std::thread::Builder::new()
            .name(format!("host-{name}"))
            .spawn(move || host_loop(port, &app, start, &s).map_err(|e| e.to_string()))
            .map_err(|e| format!("thread of host {name}: {e}"))?;
        Ok(HostThread {
            name: name.to_string(),
            stop,
            join: Some(join),
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
            Some(Ok(r)) => r,
            Some(Err(_)) => Err("the thread panicked".into()),
            None => Ok(()),
        }
    }
}

impl Drop for HostThread {
    fn drop(&mut self) {
        let _ = self.stop();
    }
}

/// The host's turns until `stop`.
fn host_loop(
    mut port: AfPacketPort,
    app: &Mutex<Box<dyn HostApp + Send>>,
    start: Instant,
    stop: &AtomicBool,
) -> Result<(), dataplane::PortError> {
    let mut rx = FrameBatch::new(BATCH);
    let mut tx = FrameBatch::new(BATCH);
    let mut out: Vec<Vec<u8>> = Vec::new();
    while !stop.load(Ordering::Acquire) {
        let now = since(start);
        let mut got = 0;
        let wake = {
            let mut app = app.lock().unwrap_or_else(|p| p.into_inner());
            for _ in 0..MAX_RX_BATCHES {
                rx.clear();
                let n = port.recv_batch(&mut rx, now)?;
                for f in rx.iter() {
                    app.receive(now, &f.data);
                }
                got += n;
                if n < BATCH {
                    break;
                }
            }
            app.poll(now, &mut |f| out.push(f));
            app.next_wakeup()
        };
        let sent = out.len();
        for f in out.drain(..) {
            if let Err(f) = tx.push_owned(f, now) {
                port.send_batch(&mut tx, now)?;
                tx.clear();
                // The batch is empty now: this cannot fail.
                let _ = tx.push_owned(f, now);
            }
        }
        if !tx.is_empty() {
            port.send_batch(&mut tx, now)?;
            tx.clear();
        }
        if got == 0 && sent == 0 {
            let now = since(start);
            let wait = wake.map_or(MAX_WAIT, |w| w.saturating_sub(now).to_duration());
            if wait.is_zero() {
                std::thread::sleep(NAP);
            } else {
                port.wait_readable(wait.min(MAX_WAIT))?;
            }
        }
    }
    Ok(())
}
