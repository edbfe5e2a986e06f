//! The loop both sides of a benchmark run: poll the host, let the test take a step
//! (drain completions, post work), watch CM events and stalls, and wait on the port only
//! when neither the host nor the test did anything.

use std::time::Duration;

use dataplane::{Clock, Nanos};

use super::PerfError;
use crate::host::Host;
use crate::verbs::{CmEvent, CqHandle, Endpoint, WcStatus, WorkCompletion};

/// What a test step reports.
pub(crate) enum Step {
    /// Keep going; `true` when the test made progress (resets the stall timer).
    Continue(bool),
    /// The test is over.
    Done,
}

/// How the loop treats the peer disconnecting.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum OnDisconnect {
    /// It is an error (the client in the middle of a test).
    Fail,
    /// It ends the run (the server).
    Finish,
}

/// Runs `step` until it says done. `stall`: give up after this long without progress.
pub(crate) fn pump(
    host: &mut Host,
    clock: &dyn Clock,
    stall: Duration,
    on_disconnect: OnDisconnect,
    mut step: impl FnMut(&mut Endpoint, Nanos) -> Result<Step, PerfError>,
) -> Result<(), PerfError> {
    let mut last_progress = clock.now();
    loop {
        let now = clock.now();
        let polled = host.poll(now)?;
        while let Some(ev) = host.endpoint_mut().poll_cm_event() {
            if let CmEvent::Disconnected { .. } = ev {
                return match on_disconnect {
                    OnDisconnect::Fail => Err(PerfError::PeerGone),
                    OnDisconnect::Finish => Ok(()),
                };
            }
        }
        let progressed = match step(host.endpoint_mut(), now)? {
            Step::Done => return Ok(()),
            Step::Continue(p) => p,
        };
        if progressed {
            last_progress = now;
        } else if now.saturating_sub(last_progress) > Nanos::from(stall) {
            return Err(PerfError::Stalled(
                stall,
                format!("endpoint counters: {:?}", host.endpoint().stats()),
            ));
        }
        if polled.is_idle() && !progressed {
            host.wait(clock, now + Nanos::from_micros(200))?;
        }
    }
}

/// Takes up to 256 completions; an error completion fails the run.
pub(crate) fn drain_cq(ep: &mut Endpoint, cq: CqHandle) -> Result<Vec<WorkCompletion>, PerfError> {
    let wcs = ep.poll_cq(cq, 256)?;
    if let Some(bad) = wcs.iter().find(|w| w.status != WcStatus::Success) {
        return Err(PerfError::Completion {
            wr_id: bad.wr_id,
            status: bad.status,
        });
    }
    Ok(wcs)
}
