//! [`Host`]: one endpoint on one port, and the loop that moves frames and time between
//! them.

use std::time::Duration;

use dataplane::{Clock, FrameBatch, Nanos, Port, PortStats};

use super::{instant, nanos, HostError};
use crate::verbs::Endpoint;

/// Frames per receive and per send batch.
pub const HOST_BATCH: usize = 64;

/// The most frames one `poll` sends, so receiving (ACKs, credits) is never starved.
const MAX_TX_PER_POLL: usize = 4 * HOST_BATCH;

/// Receive batches one `poll` takes at most.
const MAX_RX_BATCHES_PER_POLL: usize = 4;

/// Longest sleep of `run_until` between polls when nothing is due.
const MAX_WAIT: Duration = Duration::from_millis(1);

/// What one [`Host::poll`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Progress {
    /// Frames received from the port and fed to the endpoint.
    pub rx_frames: usize,
    /// Frames the endpoint produced and the port accepted.
    pub tx_frames: usize,
    /// Frames the endpoint produced that the port dropped (full queue, too long, ...).
    pub tx_dropped: usize,
    /// Whether endpoint timers were due and ran.
    pub timers_ran: bool,
}

impl Progress {
    /// Whether nothing at all happened.
    pub fn is_idle(&self) -> bool {
        self.rx_frames == 0 && self.tx_frames == 0 && self.tx_dropped == 0 && !self.timers_ran
    }
}

/// An endpoint bound to a port.
pub struct Host {
    endpoint: Endpoint,
    port: Box<dyn Port>,
    rx: FrameBatch,
    tx: FrameBatch,
}

impl Host {
    /// Binds `endpoint` to `port`.
    pub fn new(endpoint: Endpoint, port: Box<dyn Port>) -> Host {
        Host {
            endpoint,
            port,
            rx: FrameBatch::new(HOST_BATCH),
            tx: FrameBatch::new(HOST_BATCH),
        }
    }

    /// The endpoint (verbs, CM, completions).
    pub fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    /// The endpoint, mutable.
    pub fn endpoint_mut(&mut self) -> &mut Endpoint {
        &mut self.endpoint
    }

    /// The port's counters.
    pub fn port_stats(&self) -> PortStats {
        self.port.stats()
    }

    /// The port's name.
    pub fn port_name(&self) -> &str {
        self.port.name()
    }

    /// Takes the host apart.
    pub fn into_parts(self) -> (Endpoint, Box<dyn Port>) {
        (self.endpoint, self.port)
    }

    /// The earliest time at which only time can make progress (an endpoint timer or a frame
    /// the port holds back), or `None`.
    pub fn next_wakeup(&self) -> Option<Nanos> {
        let ep = self.endpoint.poll_timeout().map(nanos);
        let port = self.port.poll_timeout();
        match (ep, port) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// One turn of the loop at time `now`: receive what is ready, run due timers, send what
    /// the endpoint has to send. Never blocks.
    pub fn poll(&mut self, now: Nanos) -> Result<Progress, HostError> {
        let mut progress = Progress::default();
        let t = instant(now);
        if self.port.poll_timeout().is_some_and(|d| d <= now) {
            self.port.flush(now)?;
        }
        // At most a few batches per turn, so a flood cannot starve timers and sending.
        for _ in 0..MAX_RX_BATCHES_PER_POLL {
            self.rx.clear();
            let n = self.port.recv_batch(&mut self.rx, now)?;
            for f in self.rx.iter() {
                self.endpoint.handle_frame(t, &f.data);
            }
            progress.rx_frames += n;
            if n < HOST_BATCH {
                break;
            }
        }
        self.rx.clear();
        if self.endpoint.poll_timeout().is_some_and(|d| d <= t) {
            self.endpoint.handle_timeout(t);
            progress.timers_ran = true;
        }
        let mut produced = 0;
        while produced < MAX_TX_PER_POLL {
            let Some(frame) = self.endpoint.poll_transmit(t) else {
                break;
            };
            produced += 1;
            if let Err(frame) = self.tx.push_owned(frame, now) {
                self.flush_tx(now, &mut progress)?;
                // The batch is empty now, so this cannot fail; count it as a drop if it did.
                if self.tx.push_owned(frame, now).is_err() {
                    progress.tx_dropped += 1;
                }
            }
            if self.tx.is_full() {
                self.flush_tx(now, &mut progress)?;
            }
        }
        self.flush_tx(now, &mut progress)?;
        Ok(progress)
    }

    fn flush_tx(&mut self, now: Nanos, progress: &mut Progress) -> Result<(), HostError> {
        if self.tx.is_empty() {
            return Ok(());
        }
        let queued = self.tx.len();
        let sent = self.port.send_batch(&mut self.tx, now)?;
        self.tx.clear();
        progress.tx_frames += sent;
        progress.tx_dropped += queued.saturating_sub(sent);
        Ok(())
    }

    /// Polls until `done(endpoint)` holds, reading time from `clock` (a [`dataplane::WallClock`]
    /// in production). Between idle polls it waits on the port for at most the time to the
    /// next timer (and at most 1 ms). Returns [`HostError::Deadline`] when `deadline` passes
    /// first.
    ///
    /// With a [`dataplane::VirtualClock`] nobody advances time here; drive several hosts with
    /// [`super::VirtualNet`] instead.
    pub fn run_until(
        &mut self,
        clock: &dyn Clock,
        deadline: Nanos,
        mut done: impl FnMut(&mut Endpoint) -> bool,
    ) -> Result<(), HostError> {
        let start = clock.now();
        loop {
            let now = clock.now();
            let progress = self.poll(now)?;
            if done(&mut self.endpoint) {
                return Ok(());
            }
            if now >= deadline {
                return Err(HostError::Deadline {
                    waited_ns: now.saturating_sub(start).as_nanos(),
                });
            }
            if progress.is_idle() {
                self.wait(clock, deadline)?;
            }
        }
    }

    /// Waits on the port until a frame may have arrived, the next timer is due, `until`
    /// passes, or 1 ms has gone by, whichever is first. Call it after an idle `poll`.
    pub fn wait(&mut self, clock: &dyn Clock, until: Nanos) -> Result<(), HostError> {
        let until = self.next_wakeup().unwrap_or(until).min(until);
        let wait = until
            .saturating_sub(clock.now())
            .to_duration()
            .min(MAX_WAIT);
        if !wait.is_zero() {
            self.port.wait_readable(wait)?;
        }
        Ok(())
    }
}
