//! Which queue of its egress port a packet goes to: the port's queue count and its map from
//! the ingress `qid` (`ig_intr_tm_md.qid`) to one of those queues, which egress reads back as
//! `eg_intr_md.egress_qid`.
//!
//! Sources (Intel's SDE driver, open-p4studio `bf-drivers`):
//! - `include/traffic_mgr/traffic_mgr_q_intf.h`, `bf_tm_port_q_mapping_set`: the map is indexed
//!   by `ig_intr_md.qid` and `q_mapping[qid]` is the port's queue; by default (or with no map)
//!   `queue = qid % q_count`.
//! - `src/traffic_mgr/common/tm_queue.c`: a queue profile fills every one of the port group's
//!   entries (32 on Tofino 1, 128 on Tofino 2) with the given map or `i % q_count`, so any qid
//!   the field can hold maps to a queue the port has.
//! - `traffic_mgr/init/tm_tofino.h` / `tm_tof2.h`: `BF_TM_*_MIN_QUEUES_PER_PORT` 8 (Tofino 1)
//!   and 16 (Tofino 2), the queues the driver carves for every port at start-up.
//! - TNA's `egress_intrinsic_metadata_t.egress_qid`: "Egress (physical) queue id via which this
//!   packet was served".
//!
//! pisa reports the port's queue (`q_mapping[qid]`, 0..count-1). The hardware's queue number
//! inside a port group (base queue of the port plus that) is not modelled, nor are per-queue
//! FIFOs: all queues of a port share its one [`super::queue::EgressQueue`].

use crate::ir::Target;

/// Entries of the map: one per value of the widest `qid` (7 bits, Tofino 2).
pub const QID_SPACE: usize = 128;

/// Why a port's queue configuration was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum QidMapError {
    #[error("queue count {count} is outside 1..={max} ({target})")]
    BadCount {
        count: u16,
        max: u16,
        target: &'static str,
    },
    #[error("queue map has {len} entries, more than the {max} qid values of {target}")]
    MapTooLong {
        len: usize,
        max: usize,
        target: &'static str,
    },
    #[error("queue map entry {qid} names queue {queue}, but the port has {count} queues")]
    BadQueue { qid: usize, queue: u16, count: u16 },
}

/// One port's queues: how many, and the qid → queue map.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PortQueues {
    count: u8,
    map: [u8; QID_SPACE],
}

/// Queues the driver gives each port at start-up, and the most a port may have.
fn limits(target: Target) -> (u16, u16) {
    match target {
        Target::Tofino1 => (8, 32),
        Target::Tofino2 => (16, 128),
    }
}

/// Values `ig_intr_tm_md.qid` can hold on `target` (5 and 7 bits).
fn qid_values(target: Target) -> usize {
    match target {
        Target::Tofino1 => 32,
        Target::Tofino2 => 128,
    }
}

impl PortQueues {
    /// The driver's start-up configuration: 8 (Tofino 1) or 16 (Tofino 2) queues, qid mod count.
    pub fn default_for(target: Target) -> PortQueues {
        let (count, _) = limits(target);
        PortQueues::modulo(count as u8)
    }

    fn modulo(count: u8) -> PortQueues {
        let mut map = [0u8; QID_SPACE];
        for (i, q) in map.iter_mut().enumerate() {
            *q = (i % usize::from(count)) as u8;
        }
        PortQueues { count, map }
    }

    /// `count` queues with `map[qid]` the queue of each qid; qids past the end of `map` (all
    /// of them when it is empty) take `qid % count`, as the driver's default does.
    pub fn new(target: Target, count: u16, map: &[u16]) -> Result<PortQueues, QidMapError> {
        let (_, max) = limits(target);
        if count == 0 || count > max {
            return Err(QidMapError::BadCount {
                count,
                max,
                target: target.name(),
            });
        }
        let values = qid_values(target);
        if map.len() > values {
            return Err(QidMapError::MapTooLong {
                len: map.len(),
                max: values,
                target: target.name(),
            });
        }
        let mut pq = PortQueues::modulo(count as u8);
        for (qid, &queue) in map.iter().enumerate() {
            if queue >= count {
                return Err(QidMapError::BadQueue { qid, queue, count });
            }
            pq.map[qid] = queue as u8;
        }
        Ok(pq)
    }

    /// The queue a packet with ingress `qid` goes to (the qid is already cut to the target's
    /// width by its PHV field).
    #[inline]
    pub fn queue(&self, qid: u8) -> u8 {
        self.map[usize::from(qid) % QID_SPACE]
    }

    /// How many queues the port has.
    pub fn count(&self) -> u8 {
        self.count
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_is_qid_modulo_the_drivers_queue_count() {
        let t1 = PortQueues::default_for(Target::Tofino1);
        assert_eq!(t1.count(), 8);
        assert_eq!(
            (t1.queue(3), t1.queue(7), t1.queue(8), t1.queue(31)),
            (3, 7, 0, 7)
        );
        let t2 = PortQueues::default_for(Target::Tofino2);
        assert_eq!(t2.count(), 16);
        assert_eq!((t2.queue(15), t2.queue(16), t2.queue(127)), (15, 0, 15));
    }

    #[test]
    fn a_map_picks_queues_and_the_rest_wrap() {
        let pq = PortQueues::new(Target::Tofino1, 4, &[3, 3, 0]).unwrap();
        assert_eq!(pq.count(), 4);
        assert_eq!((pq.queue(0), pq.queue(1), pq.queue(2)), (3, 3, 0));
        assert_eq!((pq.queue(3), pq.queue(6)), (3, 2));
    }

    #[test]
    fn bad_configurations_are_refused() {
        let e = PortQueues::new(Target::Tofino1, 0, &[]).unwrap_err();
        assert!(matches!(e, QidMapError::BadCount { count: 0, .. }));
        let e = PortQueues::new(Target::Tofino1, 33, &[]).unwrap_err();
        assert!(matches!(e, QidMapError::BadCount { max: 32, .. }));
        assert!(PortQueues::new(Target::Tofino2, 128, &[]).is_ok());
        let e = PortQueues::new(Target::Tofino1, 8, &[0; 33]).unwrap_err();
        assert!(matches!(e, QidMapError::MapTooLong { len: 33, .. }));
        let e = PortQueues::new(Target::Tofino1, 4, &[0, 4]).unwrap_err();
        assert_eq!(
            e,
            QidMapError::BadQueue {
                qid: 1,
                queue: 4,
                count: 4
            }
        );
    }
}
