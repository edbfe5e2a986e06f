//! A per-port egress queue in virtual time: serialization at the port rate, tail drop at a
//! byte capacity, and RED-style ECN marking (the DCQCN congestion point).
//!
//! Model: the port sends one packet after another; a packet enqueued at `now` starts when the
//! previous one has left, `start = max(now, last_departure)`, and is gone at
//! `departure = start + bytes·8 / rate`. The backlog at any instant is the data still to be
//! serialized, `(last_departure − now) · rate / 8` bytes (a partly sent packet counts for its
//! unsent part), which needs no per-packet state. With an infinite rate nothing ever waits.
//!
//! Admission of a `bytes`-long packet arriving with backlog `q` (bytes, before it):
//! - tail drop when `q + bytes > capacity`;
//! - ECN (DCQCN's p(q)): no mark for `q ≤ Kmin`, probability `Pmax·(q−Kmin)/(Kmax−Kmin)` for
//!   `Kmin < q ≤ Kmax`, always for `q > Kmax`; the draw comes from a seeded generator, so
//!   runs repeat. `ecn_mark` says the packet *should* be marked: the caller applies it only to
//!   ECN-capable packets.
//!
//! Queue depths are reported in cells (rounded up), as Tofino's `enq_qdepth` / `deq_qdepth`:
//! 80 bytes on Tofino 1, 176 on Tofino 2 ([`cell_bytes`]). `deq_qdepth` in the admission is
//! the depth when the packet starts to leave
//! counting packets already enqueued, which in FIFO order is the packet's own remainder: 0
//! cells behind it. A caller that runs egress at the dequeue instant gets the true value from
//! [`EgressQueue::depth_cells_at`]. `deq_timedelta` is the wait in ns (`start − now`).

use super::super::externs::random::Random;
use crate::ir::Target;

/// Bytes per queue cell on Tofino 1 (the unit of `enq_qdepth` / `deq_qdepth`).
pub const CELL_BYTES: u64 = 80;

/// Bytes per queue cell on Tofino 2 (bf-drivers `traffic_mgr/init/tm_tof2.h`,
/// `BF_TM_TOF2_CELL_SIZE`).
pub const TOF2_CELL_BYTES: u64 = 176;

/// Bytes per queue cell of `target`, the unit its queue depths are counted in.
pub fn cell_bytes(target: Target) -> u64 {
    match target {
        Target::Tofino1 => CELL_BYTES,
        Target::Tofino2 => TOF2_CELL_BYTES,
    }
}

/// RED-style ECN marking thresholds (bytes) and maximum probability.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EcnConfig {
    pub kmin_bytes: u64,
    pub kmax_bytes: u64,
    pub pmax: f64,
}

impl EcnConfig {
    /// DCQCN settings for 100 Gbit/s as MC-RDMA (seed 001, §VII-C) uses them:
    /// Kmin 50 KB, Kmax 500 KB (KB = 1000 bytes), Pmax 0.01.
    pub const DCQCN_100G: EcnConfig = EcnConfig {
        kmin_bytes: 50_000,
        kmax_bytes: 500_000,
        pmax: 0.01,
    };

    /// Marking probability at backlog `q` bytes.
    pub fn probability(&self, q: u64) -> f64 {
        if q <= self.kmin_bytes {
            0.0
        } else if q > self.kmax_bytes {
            1.0
        } else {
            let span = (self.kmax_bytes - self.kmin_bytes).max(1) as f64;
            self.pmax * (q - self.kmin_bytes) as f64 / span
        }
    }
}

/// One egress queue's configuration.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct QueueConfig {
    /// Port rate in bit/s; `None` = infinitely fast (no queueing).
    pub rate_bps: Option<u64>,
    /// Tail-drop limit in bytes.
    pub capacity_bytes: u64,
    pub ecn: Option<EcnConfig>,
    /// Seed of the marking generator.
    pub seed: u64,
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum QueueError {
    #[error("port rate must be above 0 bit/s")]
    ZeroRate,
    #[error("ECN Kmin {kmin} is above Kmax {kmax}")]
    KminAboveKmax { kmin: u64, kmax: u64 },
    #[error("ECN Pmax {0} is outside 0..=1")]
    BadPmax(f64),
}

/// What happened to one packet at the queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Admission {
    pub accepted: bool,
    pub ecn_mark: bool,
    /// Depth in cells when it arrived (before it), as `enq_qdepth`.
    pub enq_qdepth: u32,
    /// Arrival time (ns), as `enq_tstamp` (the caller truncates it to the field width).
    pub enq_tstamp: u64,
    /// When its last bit leaves the port (ns). For a dropped packet: the arrival time.
    pub departure_ns: u64,
    /// Depth in cells behind it when it starts to leave (see the module doc).
    pub deq_qdepth: u32,
    /// Time waited in the queue (ns), as `deq_timedelta`.
    pub deq_timedelta: u32,
}

/// Counters of one queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct QueueStats {
    pub enqueued: u64,
    pub enqueued_bytes: u64,
    pub dropped: u64,
    pub dropped_bytes: u64,
    pub marked: u64,
    /// Largest backlog seen, including the packet just admitted (bytes).
    pub max_depth_bytes: u64,
}

/// A port's egress queue.
#[derive(Debug, Clone)]
pub struct EgressQueue {
    config: QueueConfig,
    last_departure_ns: u64,
    rng: Random,
    stats: QueueStats,
    /// Bytes per cell of depth ([`cell_bytes`]).
    cell_bytes: u64,
}

impl EgressQueue {
    /// A queue of `target`'s chip (its depths in that chip's cells).
    pub fn for_target(config: QueueConfig, target: Target) -> Result<EgressQueue, QueueError> {
        let mut q = EgressQueue::new(config)?;
        q.cell_bytes = cell_bytes(target);
        Ok(q)
    }

    /// `bytes` in cells, rounded up.
    fn cells(&self, bytes: u64) -> u32 {
        u32::try_from(bytes.div_ceil(self.cell_bytes)).unwrap_or(u32::MAX)
    }

    /// A Tofino 1 queue (80-byte cells).
    pub fn new(config: QueueConfig) -> Result<EgressQueue, QueueError> {
        if config.rate_bps == Some(0) {
            return Err(QueueError::ZeroRate);
        }
        if let Some(e) = config.ecn {
            if e.kmin_bytes > e.kmax_bytes {
                return Err(QueueError::KminAboveKmax {
                    kmin: e.kmin_bytes,
                    kmax: e.kmax_bytes,
                });
            }
            if !(0.0..=1.0).contains(&e.pmax) {
                return Err(QueueError::BadPmax(e.pmax));
            }
        }
        Ok(EgressQueue {
            config,
            last_departure_ns: 0,
            rng: Random::new(config.seed),
            stats: QueueStats::default(),
            cell_bytes: CELL_BYTES,
        })
    }

    pub fn config(&self) -> &QueueConfig {
        &self.config
    }

    pub fn stats(&self) -> &QueueStats {
        &self.stats
    }

    /// Nanoseconds to serialize `bytes` (rounded up); 0 at infinite rate.
    pub fn serialization_ns(&self, bytes: u64) -> u64 {
        match self.config.rate_bps {
            None | Some(0) => 0,
            Some(r) => {
                let ns = (u128::from(bytes) * 8 * 1_000_000_000).div_ceil(u128::from(r));
                u64::try_from(ns).unwrap_or(u64::MAX)
            }
        }
    }

    /// Bytes still to be sent at `now_ns`.
    pub fn depth_bytes_at(&self, now_ns: u64) -> u64 {
        match self.config.rate_bps {
            None | Some(0) => 0,
            Some(r) => {
                let left = u128::from(self.last_departure_ns.saturating_sub(now_ns));
                let b = (left * u128::from(r)).div_ceil(8 * 1_000_000_000);
                u64::try_from(b).unwrap_or(u64::MAX)
            }
        }
    }

    /// Depth in cells at `now_ns`.
    pub fn depth_cells_at(&self, now_ns: u64) -> u32 {
        self.cells(self.depth_bytes_at(now_ns))
    }

    /// Offers a packet of `bytes` at `now_ns` (callers pass non-decreasing times; an earlier
    /// time is treated as arriving behind everything already queued).
    pub fn enqueue(&mut self, now_ns: u64, bytes: u32) -> Admission {
        if self.config.rate_bps.is_none() && self.config.ecn.is_none() {
            return self.enqueue_unpaced(now_ns, bytes);
        }
        let bytes = u64::from(bytes);
        let q = self.depth_bytes_at(now_ns);
        let enq_qdepth = self.cells(q);
        if q.saturating_add(bytes) > self.config.capacity_bytes {
            self.stats.dropped += 1;
            self.stats.dropped_bytes = self.stats.dropped_bytes.saturating_add(bytes);
            return Admission {
                accepted: false,
                ecn_mark: false,
                enq_qdepth,
                enq_tstamp: now_ns,
                departure_ns: now_ns,
                deq_qdepth: 0,
                deq_timedelta: 0,
            };
        }
        let ecn_mark = match self.config.ecn {
            Some(e) => self.rng.chance(e.probability(q)),
            None => false,
        };
        let start = now_ns.max(self.last_departure_ns);
        let departure = start.saturating_add(self.serialization_ns(bytes));
        if self.config.rate_bps.is_some() {
            self.last_departure_ns = departure;
        }
        self.stats.enqueued += 1;
        self.stats.enqueued_bytes = self.stats.enqueued_bytes.saturating_add(bytes);
        if ecn_mark {
            self.stats.marked += 1;
        }
        self.stats.max_depth_bytes = self.stats.max_depth_bytes.max(q.saturating_add(bytes));
        Admission {
            accepted: true,
            ecn_mark,
            enq_qdepth,
            enq_tstamp: now_ns,
            departure_ns: departure,
            deq_qdepth: 0,
            deq_timedelta: u32::try_from(start - now_ns).unwrap_or(u32::MAX),
        }
    }

    /// [`Self::enqueue`] on an infinitely fast port without ECN (the default queue): nothing
    /// is ever queued (no backlog, no wait, no division), the tail drop and counters as there.
    #[inline]
    fn enqueue_unpaced(&mut self, now_ns: u64, bytes: u32) -> Admission {
        let bytes = u64::from(bytes);
        let accepted = bytes <= self.config.capacity_bytes;
        let departure_ns = if accepted {
            self.stats.enqueued += 1;
            self.stats.enqueued_bytes = self.stats.enqueued_bytes.saturating_add(bytes);
            self.stats.max_depth_bytes = self.stats.max_depth_bytes.max(bytes);
            // (`last_departure_ns` only moves on a paced port: 0 here.)
            now_ns.max(self.last_departure_ns)
        } else {
            self.stats.dropped += 1;
            self.stats.dropped_bytes = self.stats.dropped_bytes.saturating_add(bytes);
            now_ns
        };
        Admission {
            accepted,
            ecn_mark: false,
            enq_qdepth: 0,
            enq_tstamp: now_ns,
            departure_ns,
            deq_qdepth: 0,
            deq_timedelta: 0,
        }
    }
}
