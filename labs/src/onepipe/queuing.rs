//! Fig. 12 of the 1Pipe paper in shape: delivery latency against queuing delay. Every host
//! sends background traffic (1500-byte UDP frames across the core) at a share of its link
//! while 16 processes broadcast lightly (a tenth of a host link); the queues the background
//! builds delay 1Pipe's messages and its barriers alike. Links and the beacon interval are
//! scaled as in [`super::scaling`] so the model can fill the links.

use super::bench::{report, BenchReport};
use super::lab::{run, LabConfig, LabError};
use super::scaling::{INTERVAL_NS, RATE_BPS};

/// The lab at background share `load` on `topology` for `duration_ns`.
pub fn config(topology: std::path::PathBuf, load: f64, duration_ns: u64) -> LabConfig {
    let mut c = LabConfig::new(topology);
    c.rate_bps = Some(RATE_BPS);
    c.beacon_interval_ns = INTERVAL_NS;
    c.link_timeout_ns = 10 * INTERVAL_NS;
    // 15 messages of ~160 wire bytes per broadcast: a tenth of the host link.
    c.send_every_ns = (15.0 * 161.0 * 8.0 / (0.1 * RATE_BPS as f64) * 1e9) as u64;
    c.messages = duration_ns / c.send_every_ns + 1;
    c.duration_ns = duration_ns;
    c.background = load;
    c
}

/// One best-effort run per background share in `loads`.
pub fn queuing(
    topology: &std::path::Path,
    loads: &[f64],
    duration_ns: u64,
) -> Result<Vec<(f64, BenchReport)>, LabError> {
    loads
        .iter()
        .map(|&load| {
            let cfg = config(topology.to_path_buf(), load, duration_ns);
            Ok((load, report(&cfg, &run(&cfg)?)))
        })
        .collect()
}
