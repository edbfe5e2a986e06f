//! Counters the running switch keeps besides the ports' own: frames dropped between threads
//! (a full bounded channel, an egress port nobody attached), receive batch sizes, and the
//! per pipeline thread frames, batches and copies crossing between pipe threads, and the
//! snapshot types ([`RuntimeStats`], [`PortReport`], [`PipeThreadStats`]) that reports and
//! metrics are built from.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::fault::FaultStats;
use crate::port::PortStats;

/// Buckets of the receive batch-size histogram: sizes 1, 2–3, 4–7, …, 64 and more.
pub const BATCH_BUCKETS: usize = 7;

/// The upper bound (inclusive) of each batch-size bucket, for labels; the last is open.
pub const BATCH_BUCKET_LE: [&str; BATCH_BUCKETS] = ["1", "3", "7", "15", "31", "63", "+Inf"];

fn bucket(n: usize) -> usize {
    let b = usize::BITS - n.max(1).leading_zeros() - 1;
    (b as usize).min(BATCH_BUCKETS - 1)
}

/// Live runtime counters of one port. Several threads add to them (relaxed atomics).
#[derive(Debug, Default)]
pub struct PortRuntimeCounters {
    /// Frames received but dropped because the channel to the pipeline thread was full.
    pub ingress_full: AtomicU64,
    /// Frames the pipeline sent to this port but dropped because its transmit channel was full.
    pub egress_full: AtomicU64,
    /// Receive batches handed to the pipeline thread.
    pub rx_batches: AtomicU64,
    /// Receive batch sizes (see [`BATCH_BUCKETS`]).
    pub batch_sizes: [AtomicU64; BATCH_BUCKETS],
    /// Transmit batches handed to the port.
    pub tx_batches: AtomicU64,
    /// I/O errors the port reported (the loop keeps going).
    pub io_errors: AtomicU64,
}

impl PortRuntimeCounters {
    /// Counts one receive batch of `n` frames.
    pub fn rx_batch(&self, n: usize) {
        self.rx_batches.fetch_add(1, Ordering::Relaxed);
        self.batch_sizes[bucket(n)].fetch_add(1, Ordering::Relaxed);
    }

    fn snapshot(&self) -> PortRuntimeStats {
        let ld = |a: &AtomicU64| a.load(Ordering::Relaxed);
        PortRuntimeStats {
            ingress_full: ld(&self.ingress_full),
            egress_full: ld(&self.egress_full),
            rx_batches: ld(&self.rx_batches),
            batch_sizes: std::array::from_fn(|i| ld(&self.batch_sizes[i])),
            tx_batches: ld(&self.tx_batches),
            io_errors: ld(&self.io_errors),
        }
    }
}

/// A snapshot of [`PortRuntimeCounters`].
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct PortRuntimeStats {
    /// See [`PortRuntimeCounters::ingress_full`].
    pub ingress_full: u64,
    /// See [`PortRuntimeCounters::egress_full`].
    pub egress_full: u64,
    /// Receive batches.
    pub rx_batches: u64,
    /// Receive batch-size histogram.
    pub batch_sizes: [u64; BATCH_BUCKETS],
    /// Transmit batches.
    pub tx_batches: u64,
    /// I/O errors.
    pub io_errors: u64,
}

/// Everything known about one port at one moment.
#[derive(Clone, Debug, PartialEq)]
pub struct PortReport {
    /// Device port number.
    pub devport: u16,
    /// The port's name (its spec or interface).
    pub name: String,
    /// The backend's counters.
    pub port: PortStats,
    /// The runtime's counters.
    pub runtime: PortRuntimeStats,
    /// Faults injected on the send side (towards the wire).
    pub faults_tx: FaultStats,
    /// Faults injected on the receive side.
    pub faults_rx: FaultStats,
}

impl PortReport {
    /// Every frame this port lost, whatever the reason: backend drops, runtime channel drops
    /// and injected faults.
    pub fn total_drops(&self) -> u64 {
        let f = |s: &FaultStats| s.lost + s.down_dropped + s.queue_dropped + s.stop_dropped;
        self.port.total_drops()
            + self.runtime.ingress_full
            + self.runtime.egress_full
            + f(&self.faults_tx)
            + f(&self.faults_rx)
    }
}

/// A snapshot of the whole runtime.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RuntimeStats {
    /// Per port, by device port.
    pub ports: Vec<PortReport>,
    /// Frames the pipeline sent to a device port with no port attached.
    pub no_port: u64,
    /// Frames the pipeline thread(s) processed.
    pub processed: u64,
    /// Per pipeline thread, in thread order.
    pub threads: Vec<PipeThreadStats>,
}

impl RuntimeStats {
    /// Copies dropped because another pipe thread's channel was full, over all threads.
    pub fn cross_full(&self) -> u64 {
        self.threads.iter().map(|t| t.cross_full).sum()
    }
}

/// Live counters of one pipeline thread (it alone adds to them; others read).
#[derive(Debug, Default)]
pub(crate) struct PipeThreadCounters {
    pub(crate) batches: AtomicU64,
    pub(crate) frames: AtomicU64,
    pub(crate) copies_in: AtomicU64,
    pub(crate) copies_out: AtomicU64,
    pub(crate) cross_full: AtomicU64,
}

impl PipeThreadCounters {
    pub(crate) fn snapshot(&self, pipe: Option<u16>) -> PipeThreadStats {
        let ld = |a: &AtomicU64| a.load(Ordering::Relaxed);
        PipeThreadStats {
            pipe,
            batches: ld(&self.batches),
            frames: ld(&self.frames),
            copies_in: ld(&self.copies_in),
            copies_out: ld(&self.copies_out),
            cross_full: ld(&self.cross_full),
        }
    }
}

/// What one pipeline thread did.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct PipeThreadStats {
    /// The pipe it runs; `None` for the single whole-switch thread.
    pub pipe: Option<u16>,
    /// Receive batches it ran through ingress.
    pub batches: u64,
    /// Frames it ran through ingress.
    pub frames: u64,
    /// Copies other pipe threads sent it (egressed here).
    pub copies_in: u64,
    /// Copies it sent to other pipe threads.
    pub copies_out: u64,
    /// Copies for another pipe dropped because that thread's channel was full.
    pub cross_full: u64,
}

/// Switch-wide runtime counters.
#[derive(Debug, Default)]
pub(crate) struct GlobalCounters {
    pub(crate) no_port: AtomicU64,
    pub(crate) processed: AtomicU64,
}

pub(crate) fn snapshot_port(
    devport: u16,
    name: &str,
    port: PortStats,
    rt: &PortRuntimeCounters,
    faults: (FaultStats, FaultStats),
) -> PortReport {
    PortReport {
        devport,
        name: name.to_string(),
        port,
        runtime: rt.snapshot(),
        faults_tx: faults.0,
        faults_rx: faults.1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batch_buckets_are_powers_of_two() {
        assert_eq!(bucket(0), 0);
        assert_eq!(bucket(1), 0);
        assert_eq!(bucket(2), 1);
        assert_eq!(bucket(3), 1);
        assert_eq!(bucket(4), 2);
        assert_eq!(bucket(63), 5);
        assert_eq!(bucket(64), 6);
        assert_eq!(bucket(1000), 6);
        let c = PortRuntimeCounters::default();
        c.rx_batch(5);
        c.rx_batch(64);
        let s = c.snapshot();
        assert_eq!(s.rx_batches, 2);
        assert_eq!(s.batch_sizes[2], 1);
        assert_eq!(s.batch_sizes[6], 1);
    }
}
