//! Results of a benchmark run, computed like perftest's: bandwidth average over the whole
//! run and peak over the best slice, message rate, and latency percentiles from an
//! HdrHistogram.

use hdrhistogram::Histogram;

use super::PerfTest;

/// Latency figures in nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LatencySummary {
    /// Minimum.
    pub min_ns: u64,
    /// Median.
    pub median_ns: u64,
    /// 99th percentile.
    pub p99_ns: u64,
    /// 99.9th percentile.
    pub p999_ns: u64,
    /// Maximum.
    pub max_ns: u64,
    /// Mean.
    pub mean_ns: f64,
}

impl LatencySummary {
    pub(crate) fn from_histogram(h: &Histogram<u64>) -> Option<LatencySummary> {
        if h.is_empty() {
            return None;
        }
        Some(LatencySummary {
            min_ns: h.min(),
            median_ns: h.value_at_quantile(0.5),
            p99_ns: h.value_at_quantile(0.99),
            p999_ns: h.value_at_quantile(0.999),
            max_ns: h.max(),
            mean_ns: h.mean(),
        })
    }
}

/// What one side measured.
#[derive(Debug, Clone, PartialEq)]
pub struct PerfReport {
    /// The test.
    pub test: PerfTest,
    /// Message size in bytes.
    pub size: usize,
    /// Messages completed.
    pub iterations: u64,
    /// Time from the first post to the last completion, in nanoseconds.
    pub elapsed_ns: u64,
    /// Peak bandwidth (best of the run's slices), Gb/s.
    pub bw_peak_gbps: f64,
    /// Average bandwidth, Gb/s.
    pub bw_avg_gbps: f64,
    /// Average bandwidth, MB/s (10^6 bytes per second).
    pub bw_avg_mbps: f64,
    /// Messages per second, in millions.
    pub msg_rate_mpps: f64,
    /// Latency (latency tests only; half round trip for WRITE/SEND ping-pong).
    pub latency: Option<LatencySummary>,
    /// Retransmitted packets on this side.
    pub retransmissions: u64,
    /// ACK timeouts on this side.
    pub timeouts: u64,
}

/// Shortest slice over which a peak bandwidth is measured.
const MIN_SLICE_NS: u64 = 100_000;

/// Accumulates completions into a report.
pub(crate) struct Meter {
    start_ns: u64,
    last_ns: u64,
    count: u64,
    slice: u64,
    slice_start_ns: u64,
    slice_count: u64,
    best_slice_rate: f64,
    pub(crate) hist: Histogram<u64>,
}

impl Meter {
    /// `slice`: completions per peak-bandwidth slice.
    pub(crate) fn new(start_ns: u64, slice: u64) -> Meter {
        Meter {
            start_ns,
            last_ns: start_ns,
            count: 0,
            slice: slice.max(1),
            slice_start_ns: start_ns,
            slice_count: 0,
            best_slice_rate: 0.0,
            hist: Histogram::new_with_bounds(1, 3_600_000_000_000, 3)
                .expect("constant histogram bounds are valid"),
        }
    }

    /// Counts `n` completions at `now_ns`.
    pub(crate) fn complete(&mut self, now_ns: u64, n: u64) {
        self.count += n;
        self.slice_count += n;
        self.last_ns = now_ns;
        let dt = now_ns.saturating_sub(self.slice_start_ns);
        // A slice needs enough completions and enough time: completions drained together
        // in one poll share a timestamp and would otherwise make an infinite peak.
        if self.slice_count >= self.slice && dt >= MIN_SLICE_NS {
            let rate = self.slice_count as f64 / dt as f64;
            if rate > self.best_slice_rate {
                self.best_slice_rate = rate;
            }
            self.slice_start_ns = now_ns;
            self.slice_count = 0;
        }
    }

    /// Records one latency sample.
    pub(crate) fn latency(&mut self, ns: u64) {
        self.hist.saturating_record(ns.max(1));
    }

    pub(crate) fn count(&self) -> u64 {
        self.count
    }

    pub(crate) fn report(
        &self,
        test: PerfTest,
        size: usize,
        stats: &crate::verbs::Stats,
    ) -> PerfReport {
        let elapsed_ns = self.last_ns.saturating_sub(self.start_ns).max(1);
        let per_ns = self.count as f64 / elapsed_ns as f64;
        let bits = size as f64 * 8.0;
        let avg = per_ns * bits;
        let peak = if self.best_slice_rate > 0.0 {
            (self.best_slice_rate * bits).max(avg)
        } else {
            avg
        };
        PerfReport {
            test,
            size,
            iterations: self.count,
            elapsed_ns,
            bw_peak_gbps: peak,
            bw_avg_gbps: avg,
            bw_avg_mbps: per_ns * size as f64 * 1e3,
            msg_rate_mpps: per_ns * 1e3,
            latency: if test.is_latency() {
                LatencySummary::from_histogram(&self.hist)
            } else {
                None
            },
            retransmissions: stats.retransmissions,
            timeouts: stats.timeouts,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bandwidth_and_rate_from_completions() {
        // 1000 messages of 1000 bytes in 1 ms: 8 Gb/s, 1000 MB/s, 1 Mmsg/s.
        let mut m = Meter::new(0, 100);
        for i in 1..=1000u64 {
            m.complete(i * 1000, 1);
        }
        let r = m.report(PerfTest::WriteBw, 1000, &crate::verbs::Stats::default());
        assert_eq!(r.iterations, 1000);
        assert!((r.bw_avg_gbps - 8.0).abs() < 1e-9, "{}", r.bw_avg_gbps);
        assert!((r.bw_avg_mbps - 1000.0).abs() < 1e-6, "{}", r.bw_avg_mbps);
        assert!((r.msg_rate_mpps - 1.0).abs() < 1e-9);
        assert!(r.bw_peak_gbps >= r.bw_avg_gbps);
        assert!(r.latency.is_none());
    }

    #[test]
    fn peak_is_the_best_slice() {
        let mut m = Meter::new(0, 10);
        // 10 completions in 1 ms, then 10 over 100 ms.
        m.complete(1_000_000, 10);
        m.complete(101_000_000, 10);
        let r = m.report(PerfTest::WriteBw, 1000, &crate::verbs::Stats::default());
        assert!((r.bw_peak_gbps - 0.08).abs() < 1e-9, "{}", r.bw_peak_gbps);
        assert!(r.bw_avg_gbps < 0.002, "{}", r.bw_avg_gbps);
        // Many completions at one instant do not make an infinite peak.
        let mut m = Meter::new(0, 10);
        m.complete(5, 100);
        m.complete(1_000_000, 1);
        let r = m.report(PerfTest::WriteBw, 1000, &crate::verbs::Stats::default());
        assert!(r.bw_peak_gbps < 1.0, "{}", r.bw_peak_gbps);
    }

    #[test]
    fn latency_percentiles() {
        let mut m = Meter::new(0, 1);
        for v in 1..=100u64 {
            m.latency(v * 1000);
            m.complete(v, 1);
        }
        let l = m
            .report(PerfTest::ReadLat, 2, &crate::verbs::Stats::default())
            .latency
            .unwrap();
        assert_eq!(l.min_ns, 1000);
        assert!((49_000..=51_000).contains(&l.median_ns), "{}", l.median_ns);
        assert!((98_000..=100_100).contains(&l.p99_ns), "{}", l.p99_ns);
        assert!((99_900..=100_100).contains(&l.max_ns), "{}", l.max_ns);
    }
}
