//! Simulated traffic for the in-memory driver and its speed (`pisa lab run`, `pisa bench lab`):
//! every host sends datagrams to every other host in turn, in bursts, and the lab runs each
//! burst to completion. The figure is frames delivered per second of wall-clock time on one
//! core, with the switch pipeline passes behind them, beside the rate of one switch's pipeline
//! on the same kind of frames measured in the same run (what the lab's own scheduling costs).

use std::time::{Duration, Instant};

use dataplane::runtime::Pipeline;
use dataplane::switch::SwitchPipeline;
use dataplane::Nanos;

use crate::ping::datagram;
use crate::MemLab;

/// What a load run did.
#[derive(Debug, Clone, serde::Serialize)]
pub struct LoadReport {
    /// Datagrams the hosts sent.
    pub sent: u64,
    /// Datagrams that reached their host.
    pub delivered: u64,
    /// Frames through switch pipelines (a datagram crossing five switches counts five).
    pub passes: u64,
    /// Wall-clock seconds.
    pub wall_s: f64,
    /// Virtual seconds the traffic took on the modelled links.
    pub virtual_s: f64,
}

impl LoadReport {
    /// Delivered datagrams per wall-clock second.
    pub fn frames_per_s(&self) -> f64 {
        self.delivered as f64 / self.wall_s.max(1e-9)
    }

    /// Pipeline passes per wall-clock second.
    pub fn passes_per_s(&self) -> f64 {
        self.passes as f64 / self.wall_s.max(1e-9)
    }
}

/// Sends `frames` datagrams (all-pairs, round robin) in bursts of `burst` per host, running the
/// lab to idle after each burst.
pub fn run(lab: &mut MemLab, frames: u64, burst: usize) -> LoadReport {
    let topo = lab.topology().clone();
    let n = topo.hosts.len();
    let passes0 = lab.total_passes();
    let t0 = lab.now();
    let start = Instant::now();
    let (mut sent, mut delivered, mut round) = (0u64, 0u64, 0usize);
    if n < 2 {
        return LoadReport {
            sent: 0,
            delivered: 0,
            passes: 0,
            wall_s: 0.0,
            virtual_s: 0.0,
        };
    }
    while sent < frames {
        for _ in 0..burst.max(1) {
            round += 1;
            let shift = 1 + round % (n - 1);
            for a in 0..n {
                if sent >= frames {
                    break;
                }
                lab.send(a, datagram(&topo, a, (a + shift) % n, round as u32));
                sent += 1;
            }
        }
        lab.run_until_idle();
        for h in 0..n {
            delivered += lab.take_received(h).len() as u64;
        }
    }
    LoadReport {
        sent,
        delivered,
        passes: lab.total_passes() - passes0,
        wall_s: start.elapsed().as_secs_f64(),
        virtual_s: Nanos(lab.now().0 - t0.0).as_secs_f64(),
    }
}

/// Pipeline passes per second of one switch of the topology (the first with hosts) on the
/// datagrams its hosts send, without the lab around it: the per-switch rate beside [`run`].
pub fn pipeline_rate(lab: &MemLab, seconds: f64) -> Result<f64, crate::mem::MemLabError> {
    let topo = lab.topology().clone();
    let Some(h) = (0..topo.hosts.len()).find(|&h| topo.host_attachment(h).is_some()) else {
        return Ok(0.0);
    };
    let (s, port) = topo.host_attachment(h).unwrap_or((0, 0));
    let mut switches = crate::build::switches(&topo)?;
    let mut p = SwitchPipeline {
        sw: switches.swap_remove(s),
    };
    let n = topo.hosts.len();
    let frames: Vec<Vec<u8>> = (0..256)
        .map(|i| datagram(&topo, h, (h + 1 + i % (n - 1).max(1)) % n, i as u32))
        .collect();
    let mut done = 0u64;
    let start = Instant::now();
    let limit = Duration::from_secs_f64(seconds.max(0.01));
    while start.elapsed() < limit {
        for f in &frames {
            let mut out = None;
            p.process(port, f, Nanos(done), &mut |_, b| out = Some(b));
            if let Some(b) = out {
                p.recycle(b);
            }
            done += 1;
        }
    }
    Ok(done as f64 / start.elapsed().as_secs_f64())
}
