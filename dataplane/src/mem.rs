//! In-memory links: [`pair`] returns two connected [`MemPort`]s, and [`MemHub`] hands out the
//! two ends of named links (the `mem:NAME` port spec). Used by tests and `pisa demo`.
//!
//! Each direction is a crossbeam channel of frame buffers holding at most the link's capacity.
//! Buffers move across the link rather than being copied, and the receiver returns spare
//! buffers to the sender through a second channel, so steady-state traffic allocates nothing.
//! A full direction is a counted drop (`QueueFull`), never a block.
//!
//! The channels are crossbeam's list-based (unbounded) ones with the capacity checked by the
//! sender (each direction has one sender, so the check cannot be overtaken): a bounded
//! crossbeam channel preallocates and initialises every slot, which made each cabled port of a
//! large lab cost about 1 MB before any frame flowed; a list channel grows in blocks of 31
//! slots as frames are in flight and frees them as they drain.

use std::collections::HashMap;
use std::time::Duration;

use crossbeam_channel::{unbounded, Receiver, RecvTimeoutError, SendError, Sender, TryRecvError};

use crate::port::{DropReason, FrameBatch, Port, PortError, StatsHandle, MAX_FRAME_LEN};
use crate::time::Nanos;

/// Default frames in flight per direction.
pub const DEFAULT_CAPACITY: usize = 1024;

/// One end of an in-memory link.
#[derive(Debug)]
pub struct MemPort {
    name: String,
    tx: Sender<Vec<u8>>,
    rx: Receiver<Vec<u8>>,
    /// Spare buffers to the peer (it sends with them).
    recycle_tx: Sender<Vec<u8>>,
    /// Spare buffers from the peer.
    recycle_rx: Receiver<Vec<u8>>,
    /// A frame taken off the channel by `wait_readable`, delivered by the next receive.
    pending: Option<Vec<u8>>,
    stats: StatsHandle,
    max_frame_len: usize,
    /// Frames (and spare buffers) in flight per direction.
    capacity: usize,
}

/// Two connected ports with [`DEFAULT_CAPACITY`] frames of buffering each way.
pub fn pair(name_a: &str, name_b: &str) -> (MemPort, MemPort) {
    pair_with_capacity(name_a, name_b, DEFAULT_CAPACITY)
}

/// Two connected ports with `capacity` frames (at least 1) of buffering each way.
pub fn pair_with_capacity(name_a: &str, name_b: &str, capacity: usize) -> (MemPort, MemPort) {
    let capacity = capacity.max(1);
    let (a_tx, b_rx) = unbounded();
    let (b_tx, a_rx) = unbounded();
    // Buffers flow back opposite to the frames: B returns A's buffers to A and vice versa.
    let (a_recycle_tx, b_recycle_rx) = unbounded();
    let (b_recycle_tx, a_recycle_rx) = unbounded();
    let a = MemPort {
        name: name_a.to_string(),
        tx: a_tx,
        rx: a_rx,
        recycle_tx: a_recycle_tx,
        recycle_rx: a_recycle_rx,
        pending: None,
        stats: StatsHandle::new(),
        max_frame_len: MAX_FRAME_LEN,
        capacity,
    };
    let b = MemPort {
        name: name_b.to_string(),
        tx: b_tx,
        rx: b_rx,
        recycle_tx: b_recycle_tx,
        recycle_rx: b_recycle_rx,
        pending: None,
        stats: StatsHandle::new(),
        max_frame_len: MAX_FRAME_LEN,
        capacity,
    };
    (a, b)
}

impl MemPort {
    /// Sets the largest frame this end sends; longer frames are dropped (`TooLong`).
    pub fn set_max_frame_len(&mut self, len: usize) {
        self.max_frame_len = len;
    }

    fn deliver(&mut self, batch: &mut FrameBatch, buf: Vec<u8>, now: Nanos) -> bool {
        let len = buf.len() as u64;
        match batch.push_owned(buf, now) {
            Ok(spare) => {
                self.stats.counters().add_rx(1, len);
                if let Some(spare) = spare {
                    // Dropped when the peer is gone or already has plenty of spares.
                    if self.recycle_tx.len() < self.capacity {
                        let _ = self.recycle_tx.send(spare);
                    }
                }
                true
            }
            Err(buf) => {
                self.pending = Some(buf);
                false
            }
        }
    }
}

impl Port for MemPort {
    fn name(&self) -> &str {
        &self.name
    }

    fn recv_batch(&mut self, batch: &mut FrameBatch, now: Nanos) -> Result<usize, PortError> {
        let mut n = 0;
        if let Some(buf) = self.pending.take() {
            if !self.deliver(batch, buf, now) {
                return Ok(0);
            }
            n += 1;
        }
        while !batch.is_full() {
            match self.rx.try_recv() {
                Ok(buf) => {
                    self.deliver(batch, buf, now);
                    n += 1;
                }
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => {
                    if n == 0 {
                        return Err(PortError::Disconnected(self.name.clone()));
                    }
                    break;
                }
            }
        }
        Ok(n)
    }

    fn send_batch(&mut self, batch: &mut FrameBatch, _now: Nanos) -> Result<usize, PortError> {
        let mut sent = 0;
        let mut gone = false;
        let counters = self.stats.counters();
        for i in 0..batch.len() {
            let len = batch.frames()[i].data.len();
            if len > self.max_frame_len {
                counters.tx_drop(DropReason::TooLong, 1);
                continue;
            }
            let Some(buf) = batch.take_data(i) else { break };
            if self.tx.len() >= self.capacity {
                counters.tx_drop(DropReason::QueueFull, 1);
                batch.give_buffer(buf);
                continue;
            }
            match self.tx.send(buf) {
                Ok(()) => {
                    counters.add_tx(1, len as u64);
                    sent += 1;
                    if let Ok(spare) = self.recycle_rx.try_recv() {
                        batch.give_buffer(spare);
                    }
                }
                Err(SendError(buf)) => {
                    counters.tx_drop(DropReason::LinkDown, 1);
                    batch.give_buffer(buf);
                    gone = true;
                }
            }
        }
        batch.clear();
        if gone {
            return Err(PortError::Disconnected(self.name.clone()));
        }
        Ok(sent)
    }

    fn stats_handle(&self) -> StatsHandle {
        self.stats.clone()
    }

    fn wait_readable(&mut self, timeout: Duration) -> Result<bool, PortError> {
        if self.pending.is_some() || !self.rx.is_empty() {
            return Ok(true);
        }
        match self.rx.recv_timeout(timeout) {
            Ok(buf) => {
                self.pending = Some(buf);
                Ok(true)
            }
            Err(RecvTimeoutError::Timeout) => Ok(false),
            Err(RecvTimeoutError::Disconnected) => Err(PortError::Disconnected(self.name.clone())),
        }
    }

    fn max_frame_len(&self) -> usize {
        self.max_frame_len
    }
}

/// Named in-memory links: the switch takes one end of link `NAME` (the `mem:NAME` spec), a
/// simulated host or test takes the other. Each end can be taken once.
#[derive(Debug)]
pub struct MemHub {
    capacity: usize,
    links: HashMap<String, (Option<MemPort>, Option<MemPort>)>,
}

impl Default for MemHub {
    fn default() -> Self {
        MemHub::new(DEFAULT_CAPACITY)
    }
}

impl MemHub {
    /// A hub whose links buffer `capacity` frames each way.
    pub fn new(capacity: usize) -> MemHub {
        MemHub {
            capacity,
            links: HashMap::new(),
        }
    }

    fn link(&mut self, name: &str) -> &mut (Option<MemPort>, Option<MemPort>) {
        let cap = self.capacity;
        self.links.entry(name.to_string()).or_insert_with(|| {
            let (s, h) = pair_with_capacity(name, &format!("{name}.host"), cap);
            (Some(s), Some(h))
        })
    }

    /// The switch end of link `name` (port name `name`).
    pub fn switch_end(&mut self, name: &str) -> Result<MemPort, PortError> {
        self.link(name).0.take().ok_or_else(|| PortError::Config {
            port: name.to_string(),
            reason: "the switch end of this in-memory link is already in use".into(),
        })
    }

    /// The host end of link `name` (port name `NAME.host`).
    pub fn host_end(&mut self, name: &str) -> Result<MemPort, PortError> {
        self.link(name).1.take().ok_or_else(|| PortError::Config {
            port: name.to_string(),
            reason: "the host end of this in-memory link is already in use".into(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(i: u8) -> Vec<u8> {
        let mut f = vec![0xff; 14];
        f.push(i);
        f
    }

    #[test]
    fn frames_cross_in_order_both_ways() {
        let (mut a, mut b) = pair("a", "b");
        let mut batch = FrameBatch::new(8);
        for i in 0..5 {
            batch.push(&frame(i), Nanos(1));
        }
        assert_eq!(a.send_batch(&mut batch, Nanos(1)).unwrap(), 5);
        assert!(batch.is_empty());
        let mut rx = FrameBatch::new(8);
        assert_eq!(b.recv_batch(&mut rx, Nanos(2)).unwrap(), 5);
        let got: Vec<u8> = rx.iter().map(|f| f.data[14]).collect();
        assert_eq!(got, vec![0, 1, 2, 3, 4]);
        assert!(rx.iter().all(|f| f.ts == Nanos(2)));
        rx.clear();
        batch.push(&frame(9), Nanos(3));
        b.send_batch(&mut batch, Nanos(3)).unwrap();
        assert_eq!(a.recv_batch(&mut rx, Nanos(3)).unwrap(), 1);
        assert_eq!(rx.frames()[0].data, frame(9));
        assert_eq!(a.stats().tx_packets, 5);
        assert_eq!(b.stats().rx_packets, 5);
        assert_eq!(b.stats().rx_bytes, 75);
    }

    #[test]
    fn full_link_counts_drops_and_never_blocks() {
        let (mut a, mut b) = pair_with_capacity("a", "b", 3);
        let mut batch = FrameBatch::new(10);
        for i in 0..10 {
            batch.push(&frame(i), Nanos(0));
        }
        assert_eq!(a.send_batch(&mut batch, Nanos(0)).unwrap(), 3);
        assert_eq!(a.stats().tx_dropped(DropReason::QueueFull), 7);
        let mut rx = FrameBatch::new(10);
        assert_eq!(b.recv_batch(&mut rx, Nanos(0)).unwrap(), 3);
    }

    #[test]
    fn small_receive_batch_takes_the_rest_later() {
        let (mut a, mut b) = pair("a", "b");
        let mut batch = FrameBatch::new(10);
        for i in 0..5 {
            batch.push(&frame(i), Nanos(0));
        }
        a.send_batch(&mut batch, Nanos(0)).unwrap();
        let mut rx = FrameBatch::new(2);
        assert!(b.wait_readable(Duration::from_millis(1)).unwrap());
        let mut got = Vec::new();
        loop {
            let n = b.recv_batch(&mut rx, Nanos(0)).unwrap();
            if n == 0 {
                break;
            }
            got.extend(rx.iter().map(|f| f.data[14]));
            rx.clear();
        }
        assert_eq!(got, vec![0, 1, 2, 3, 4]);
        assert!(!b.wait_readable(Duration::from_millis(1)).unwrap());
    }

    #[test]
    fn buffers_are_recycled_not_reallocated() {
        let (mut a, mut b) = pair("a", "b");
        let mut tx = FrameBatch::with_buffers(4, 64);
        let mut rx = FrameBatch::with_buffers(4, 64);
        let mut seen = std::collections::HashSet::new();
        for round in 0..20 {
            for i in 0..4 {
                tx.push(&frame(i), Nanos(round));
            }
            a.send_batch(&mut tx, Nanos(round)).unwrap();
            b.recv_batch(&mut rx, Nanos(round)).unwrap();
            assert_eq!(rx.len(), 4);
            let ptrs: Vec<usize> = rx.iter().map(|f| f.data.as_ptr() as usize).collect();
            if round < 4 {
                seen.extend(ptrs);
            } else {
                // After warm-up, buffers circulate between the two batches instead of being
                // allocated afresh for each frame.
                assert!(
                    ptrs.iter().all(|p| seen.contains(p)),
                    "round {round}: a frame arrived in a freshly allocated buffer"
                );
            }
            rx.clear();
        }
        assert!(seen.len() <= 16, "{} distinct buffers", seen.len());
    }

    #[test]
    fn oversize_frames_are_dropped() {
        let (mut a, _b) = pair("a", "b");
        a.set_max_frame_len(20);
        let mut batch = FrameBatch::new(2);
        batch.push(&[0u8; 21], Nanos(0));
        batch.push(&[0u8; 20], Nanos(0));
        assert_eq!(a.send_batch(&mut batch, Nanos(0)).unwrap(), 1);
        assert_eq!(a.stats().tx_dropped(DropReason::TooLong), 1);
    }

    #[test]
    fn disconnected_peer_is_an_error() {
        let (mut a, b) = pair("a", "b");
        drop(b);
        let mut batch = FrameBatch::new(2);
        batch.push(&frame(0), Nanos(0));
        assert!(matches!(
            a.send_batch(&mut batch, Nanos(0)),
            Err(PortError::Disconnected(_))
        ));
        assert_eq!(a.stats().tx_dropped(DropReason::LinkDown), 1);
        assert!(matches!(
            a.recv_batch(&mut batch, Nanos(0)),
            Err(PortError::Disconnected(_))
        ));
    }

    #[test]
    fn hub_hands_out_each_end_once() {
        let mut hub = MemHub::default();
        let mut s = hub.switch_end("p0").unwrap();
        let mut h = hub.host_end("p0").unwrap();
        assert!(hub.switch_end("p0").is_err());
        assert_eq!(h.name(), "p0.host");
        let mut batch = FrameBatch::new(1);
        batch.push(&frame(1), Nanos(0));
        h.send_batch(&mut batch, Nanos(0)).unwrap();
        assert_eq!(s.recv_batch(&mut batch, Nanos(0)).unwrap(), 1);
    }
}
