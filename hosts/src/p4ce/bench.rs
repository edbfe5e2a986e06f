//! The consensus benchmark's settings and figures: a leader keeps `outstanding` entries of
//! `value_size` bytes in flight for a duration, on the P4CE path or by unicast (Mu); the report
//! says consensus/s, goodput, commit latency percentiles (hdrhistogram, measured by [`Meter`]
//! on the leader) and the leader's packets per consensus. The runs themselves are the labs'
//! (`labs::p4ce::mem::bench` in virtual time, `labs::p4ce::netns::bench` in namespaces); the
//! report ([`report`]) and the table formats ([`curve`], [`side_by_side`]) are shared.

use std::collections::VecDeque;

use hdrhistogram::Histogram;
use serde::Serialize;

use super::integrity::Integrity;
use super::NodeError;
use crate::mu::Path;

/// What to run.
#[derive(Debug, Clone)]
pub struct BenchConfig {
    /// P4CE or unicast.
    pub mode: Path,
    /// Replicas (1..=4).
    pub replicas: usize,
    /// Value size in bytes.
    pub value_size: usize,
    /// Entries in flight.
    pub outstanding: usize,
    /// Virtual duration, ns.
    pub duration_ns: u64,
    /// Link rate, bit/s.
    pub link_rate_bps: u64,
    /// Link propagation delay, ns.
    pub link_delay_ns: u64,
    /// Faults on every host link, both directions (loss, duplication, reordering: the link
    /// model's, [`dataplane::FaultConfig`]).
    pub faults: dataplane::FaultConfig,
    /// Per host (index 0 the leader): a link setting that replaces the one above for that
    /// host's cable (a lab file's `link:` line), seen from the switch's port (`tx` towards
    /// the host).
    pub host_links: Vec<Option<dataplane::LinkConfig>>,
    /// A replica whose cable is down for the first part of the run (it joins the running
    /// log when it comes up; both labs).
    pub late_replica: Option<LateReplica>,
}

/// A replica cut off for the first part of a run: `N@T` (`--late-replica`), replica `N`
/// (1 to the replica count: host `N`) with its cable down from the start until `T` into
/// the measured run (a duration: `200us`, `2ms`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct LateReplica {
    /// Which replica (1-based; its host index).
    pub replica: usize,
    /// When its cable comes up, ns after the measured run starts.
    pub up_after_ns: u64,
}

impl std::str::FromStr for LateReplica {
    type Err = String;

    fn from_str(s: &str) -> Result<LateReplica, String> {
        let (n, t) = s
            .split_once('@')
            .ok_or_else(|| format!("{s:?}: expected N@TIME, e.g. 1@2ms"))?;
        let replica = n
            .trim()
            .parse::<usize>()
            .ok()
            .filter(|n| (1..=super::MAX_REPLICAS).contains(n))
            .ok_or_else(|| format!("{s:?}: replica {n:?} is not 1 to {}", super::MAX_REPLICAS))?;
        let up_after_ns = dataplane::link::parse_duration(t)
            .ok_or_else(|| format!("{s:?}: {t:?} is not a duration (e.g. 2ms)"))?;
        Ok(LateReplica {
            replica,
            up_after_ns,
        })
    }
}

/// Fuzz entry: any `--late-replica` argument parses or is refused with a message; a parsed
/// one names a valid replica.
pub fn fuzz_late_replica(data: &[u8]) {
    if let Ok(l) = String::from_utf8_lossy(data).parse::<LateReplica>() {
        assert!((1..=super::MAX_REPLICAS).contains(&l.replica));
    }
}

/// What a late replica did (`--late-replica`), in the run's time (virtual in memory,
/// wall-clock in namespaces).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LateJoin {
    /// Its id.
    pub id: u16,
    /// When its cable came up, s into the measured run.
    pub up_at_s: f64,
    /// Entries the leader had committed then (what it missed).
    pub missed: u64,
    /// From cable up to the leader counting it live again (it joined), s.
    pub joined_after_s: Option<f64>,
    /// From cable up to it holding every entry committed before (caught up), s.
    pub caught_up_after_s: Option<f64>,
    /// Snapshots the leader offered (it was more than a lap of the ring behind).
    pub snapshots: u64,
}

impl std::fmt::Display for LateJoin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ms = |v: Option<f64>| v.map_or("never".to_string(), |v| format!("{:.3} ms", v * 1e3));
        write!(
            f,
            "replica {} up at {:.3} ms having missed {} entries: joined after {}, caught up after {} ({} snapshot{})",
            self.id,
            self.up_at_s * 1e3,
            self.missed,
            ms(self.joined_after_s),
            ms(self.caught_up_after_s),
            self.snapshots,
            if self.snapshots == 1 { "" } else { "s" }
        )
    }
}

impl BenchConfig {
    /// The rate of the leader's link, bit/s: its own setting's (`host_links[0]`) if it has
    /// one, else every link's.
    pub fn leader_rate_bps(&self) -> u64 {
        match self.host_links.first() {
            Some(Some(c)) => c.tx.rate_bps,
            _ => self.link_rate_bps,
        }
    }
}

/// The result (also the `--report json` document).
#[derive(Debug, Clone, Serialize)]
pub struct BenchReport {
    /// "p4ce" or "unicast".
    pub mode: String,
    /// Replicas.
    pub replicas: usize,
    /// f.
    pub f: usize,
    /// Value size, bytes.
    pub value_size: usize,
    /// Entries in flight.
    pub outstanding: usize,
    /// Link rate, bit/s.
    pub link_rate_bps: u64,
    /// Virtual time measured, s.
    pub duration_s: f64,
    /// Entries committed.
    pub committed: u64,
    /// Consensus per second (virtual time).
    pub consensus_per_s: f64,
    /// Value bytes committed per second.
    pub goodput_bytes_per_s: f64,
    /// Commit latency percentiles, ns.
    pub latency_p50_ns: u64,
    /// 99th percentile.
    pub latency_p99_ns: u64,
    /// 99.9th percentile.
    pub latency_p999_ns: u64,
    /// Frames the leader sent per consensus.
    pub leader_tx_per_consensus: f64,
    /// Frames the leader received per consensus.
    pub leader_rx_per_consensus: f64,
    /// Fallbacks to unicast during the run.
    pub fallbacks: u64,
    /// Wall-clock seconds the run took.
    pub wall_s: f64,
    /// Where it ran: "memory" (in-memory links, virtual time) or "netns" (network
    /// namespaces, AF_PACKET, wall-clock time).
    pub lab: String,
    /// What limited the run, as far as the measurements say.
    pub bottleneck: String,
    /// The log-integrity check at the end of the run ([`crate::p4ce::integrity`]).
    pub integrity: Integrity,
    /// The late replica's join (`--late-replica`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub late_replica: Option<LateJoin>,
}

/// Commit latencies of a run: when each entry was appended, and when the leader's commit
/// count passed it (entries commit in order). Both labs measure with it.
pub struct Meter {
    hist: Histogram<u64>,
    started: VecDeque<u64>,
    seen: u64,
}

impl Meter {
    /// An empty meter; `committed_before` entries were committed before it started.
    pub fn new(committed_before: u64) -> Result<Meter, NodeError> {
        Ok(Meter {
            hist: Histogram::<u64>::new_with_bounds(1, 60_000_000_000, 3)
                .map_err(|e| NodeError::Config(e.to_string()))?,
            started: VecDeque::new(),
            seen: committed_before,
        })
    }

    /// An entry was appended at `now_ns`.
    pub fn appended(&mut self, now_ns: u64) {
        self.started.push_back(now_ns);
    }

    /// The leader's commit count is `committed` at `now_ns`.
    pub fn committed(&mut self, committed: u64, now_ns: u64) {
        while self.seen < committed {
            if let Some(t0) = self.started.pop_front() {
                let _ = self.hist.record(now_ns.saturating_sub(t0).max(1));
            }
            self.seen += 1;
        }
    }

    /// Latency percentiles p50, p99, p999, ns.
    pub fn percentiles(&self) -> (u64, u64, u64) {
        (
            self.hist.value_at_quantile(0.5),
            self.hist.value_at_quantile(0.99),
            self.hist.value_at_quantile(0.999),
        )
    }
}

/// The raw figures of one run, turned into a [`BenchReport`] by [`report`].
#[derive(Debug, Clone, Default)]
pub struct RunFigures {
    /// f.
    pub f: usize,
    /// Entries committed in the measured interval.
    pub committed: u64,
    /// The measured interval, s.
    pub secs: f64,
    /// Frames the leader sent in the interval.
    pub leader_tx_frames: u64,
    /// Frames the leader received in the interval.
    pub leader_rx_frames: u64,
    /// Fallbacks to unicast.
    pub fallbacks: u64,
    /// Wall-clock seconds the run took.
    pub wall_s: f64,
    /// "memory" or "netns".
    pub lab: String,
    /// What limited the run.
    pub bottleneck: String,
    /// The log-integrity check.
    pub integrity: Integrity,
}

/// Builds the report of a run of `cfg`.
pub fn report(cfg: &BenchConfig, fig: RunFigures, meter: &Meter) -> BenchReport {
    let per = |x: u64| {
        if fig.committed == 0 {
            0.0
        } else {
            x as f64 / fig.committed as f64
        }
    };
    let (p50, p99, p999) = meter.percentiles();
    let secs = fig.secs.max(1e-9);
    BenchReport {
        mode: match cfg.mode {
            Path::Switch => "p4ce".into(),
            Path::Unicast => "unicast".into(),
        },
        replicas: cfg.replicas,
        f: fig.f,
        value_size: cfg.value_size,
        outstanding: cfg.outstanding,
        link_rate_bps: cfg.leader_rate_bps(),
        duration_s: fig.secs,
        committed: fig.committed,
        consensus_per_s: fig.committed as f64 / secs,
        goodput_bytes_per_s: fig.committed as f64 * cfg.value_size as f64 / secs,
        latency_p50_ns: p50,
        latency_p99_ns: p99,
        latency_p999_ns: p999,
        leader_tx_per_consensus: per(fig.leader_tx_frames),
        leader_rx_per_consensus: per(fig.leader_rx_frames),
        fallbacks: fig.fallbacks,
        wall_s: fig.wall_s,
        lab: fig.lab,
        bottleneck: fig.bottleneck,
        integrity: fig.integrity,
        late_replica: None,
    }
}

/// Checks the settings every bench takes.
pub fn check(cfg: &BenchConfig) -> Result<(), NodeError> {
    if cfg.value_size == 0 || cfg.outstanding == 0 || cfg.duration_ns == 0 {
        return Err(NodeError::Config(
            "value size, outstanding and duration must be positive".into(),
        ));
    }
    if let Some(l) = cfg.late_replica {
        if l.replica == 0 || l.replica > cfg.replicas {
            return Err(NodeError::Config(format!(
                "late replica {} of {} replicas",
                l.replica, cfg.replicas
            )));
        }
    }
    Ok(())
}

/// The leader's switch-path timeout for a bench: long values take long on the wire, so it
/// must exceed a full window on the leader's link.
pub fn switch_timeout(cfg: &BenchConfig) -> std::time::Duration {
    let window_bits = cfg.outstanding as u64
        * (cfg.value_size as u64 + 200)
        * 8
        * 1_000_000_000
        * cfg.replicas as u64;
    let window_ns = window_bits.checked_div(cfg.leader_rate_bps()).unwrap_or(0);
    std::time::Duration::from_nanos((window_ns * 4).max(500_000))
}

/// Log slots for a bench with `outstanding` entries in flight.
pub fn slots(outstanding: usize) -> usize {
    (outstanding * 8).max(64)
}

/// Formats reports as one row per run: the latency-throughput curve of `pisa consensus bench
/// --outstanding 1,2,4,...`.
pub fn curve(reports: &[BenchReport]) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{:>7} {:>8} {:>6} {:>11} {:>12} {:>9} {:>9} {:>9} {:>9} {:>6}  bottleneck",
        "mode",
        "replicas",
        "value",
        "outstanding",
        "consensus/s",
        "Gbit/s",
        "p50 us",
        "p99 us",
        "p999 us",
        "tx+rx"
    );
    for r in reports {
        let _ = writeln!(
            s,
            "{:>7} {:>8} {:>6} {:>11} {:>12.0} {:>9.3} {:>9.1} {:>9.1} {:>9.1} {:>6.2}  {}",
            r.mode,
            r.replicas,
            r.value_size,
            r.outstanding,
            r.consensus_per_s,
            r.goodput_bytes_per_s * 8.0 / 1e9,
            r.latency_p50_ns as f64 / 1e3,
            r.latency_p99_ns as f64 / 1e3,
            r.latency_p999_ns as f64 / 1e3,
            r.leader_tx_per_consensus + r.leader_rx_per_consensus,
            r.bottleneck
        );
    }
    s
}

/// Formats reports as the side-by-side table of `pisa demo p4ce`: one row per (replicas,
/// value size), P4CE and unicast columns and their goodput ratio.
pub fn side_by_side(reports: &[BenchReport]) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{:>8} {:>7} | {:>12} {:>10} {:>9} {:>9} {:>7} | {:>12} {:>10} {:>9} {:>9} {:>7} | {:>6}",
        "replicas",
        "value",
        "p4ce cons/s",
        "Gbit/s",
        "p50 us",
        "p99 us",
        "tx+rx",
        "mu cons/s",
        "Gbit/s",
        "p50 us",
        "p99 us",
        "tx+rx",
        "ratio"
    );
    let find = |mode: &str, r: usize, v: usize| {
        reports
            .iter()
            .find(|x| x.mode == mode && x.replicas == r && x.value_size == v)
    };
    let mut keys: Vec<(usize, usize)> =
        reports.iter().map(|r| (r.replicas, r.value_size)).collect();
    keys.sort_unstable();
    keys.dedup();
    for (r, v) in keys {
        let (Some(p), Some(u)) = (find("p4ce", r, v), find("unicast", r, v)) else {
            continue;
        };
        let col = |x: &BenchReport| {
            format!(
                "{:>12.0} {:>10.2} {:>9.1} {:>9.1} {:>7.2}",
                x.consensus_per_s,
                x.goodput_bytes_per_s * 8.0 / 1e9,
                x.latency_p50_ns as f64 / 1e3,
                x.latency_p99_ns as f64 / 1e3,
                x.leader_tx_per_consensus + x.leader_rx_per_consensus
            )
        };
        let ratio = if u.goodput_bytes_per_s > 0.0 {
            p.goodput_bytes_per_s / u.goodput_bytes_per_s
        } else {
            0.0
        };
        let _ = writeln!(s, "{r:>8} {v:>7} | {} | {} | {ratio:>5.2}x", col(p), col(u));
    }
    s
}

#[cfg(test)]
mod late_tests {
    use super::*;

    #[test]
    fn late_replica_specs_parse_or_say_why_not() {
        let l: LateReplica = "2@1.5ms".parse().unwrap();
        assert_eq!((l.replica, l.up_after_ns), (2, 1_500_000));
        for bad in ["2", "0@1ms", "5@1ms", "x@1ms", "1@", "1@soon"] {
            assert!(bad.parse::<LateReplica>().is_err(), "{bad}");
        }
        fuzz_late_replica(b"1@2us");
        fuzz_late_replica(&[0xff, b'@', 0]);
    }
}
