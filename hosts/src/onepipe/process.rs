//! A lib1pipe process, sans I/O: the operations of the paper's Table 1 on a state machine
//! that is handed packets and the (true) time, and hands back packets to send.
//!
//! | Table 1                          | here                                         |
//! |----------------------------------|----------------------------------------------|
//! | `onepipe_init` / `onepipe_exit`  | [`Process::init`] / [`Process::exit`]        |
//! | `onepipe_unreliable_send(scat)`  | [`Process::unreliable_send`]                 |
//! | `onepipe_reliable_send(scat)`    | [`Process::reliable_send`]                   |
//! | `onepipe_recv() -> (ts, src, m)` | [`Process::recv`]                            |
//! | `onepipe_send_fail_callback`     | [`Event::SendFail`] from [`Process::poll_event`] |
//! | `onepipe_proc_fail_callback`     | [`Event::ProcessFail`], after [`Process::process_failed`] |
//! | `onepipe_get_timestamp`          | [`Process::get_timestamp`]                   |
//!
//! Best effort: a scattering's messages share one timestamp; a receiver buffers them and
//! delivers, in (timestamp, source) order, those at or below the best-effort barrier the
//! network brings (every packet's `be`, aggregated by the switches); a message arriving below
//! what was already delivered is refused with a NAK, and a message that is NAKed or not ACKed
//! in time is reported by a send-fail event — never retransmitted.
//!
//! Reliable (two-phase commit, §4.3): messages are retransmitted until ACKed; each packet's
//! commit barrier is what the sender can promise — below its oldest unACKed reliable message
//! and below its clock — and receivers deliver reliable messages at or below the aggregated
//! commit barrier. A retransmission carries a fresh best-effort barrier (the clock), so
//! best-effort receivers' barriers stay lower bounds.
//!
//! Limits: timestamps are ordered as 48-bit serial numbers, but the receive buffers key on the
//! raw value, so a 48-bit wrap (every 78 hours) while messages wait is not handled; messages
//! are one packet each (no fragmentation).

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use super::clock::HostClock;
use super::ts;
use super::wire::{Header, Opcode};

/// A process number in the lab (the paper's process id).
pub type ProcessId = u16;

/// Knobs of a process.
#[derive(Debug, Clone)]
pub struct Config {
    pub id: ProcessId,
    /// Best effort: an unACKed message is reported after this. Reliable: retransmitted.
    pub ack_timeout_ns: u64,
    /// Most unACKed messages a process may have (the send window); a send beyond fails.
    pub window: usize,
}

/// A packet to send: to a process, or (`None`) a beacon to the ToR switch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outgoing {
    pub dst: Option<ProcessId>,
    pub bytes: Vec<u8>,
}

/// A delivered message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivery {
    pub ts: u64,
    pub src: ProcessId,
    pub psn: u32,
    pub reliable: bool,
    pub msg: Vec<u8>,
}

/// The callbacks of Table 1, as events.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// A best-effort message was lost (NAKed, or not ACKed in time), or its destination failed.
    SendFail {
        ts: u64,
        dst: ProcessId,
        msg: Vec<u8>,
    },
    /// The controller declared `process` failed at `failure_ts`: its messages above it were
    /// discarded here.
    ProcessFail { process: ProcessId, failure_ts: u64 },
}

/// Why a send was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SendError {
    #[error("the send window is full ({0} messages unacknowledged)")]
    WindowFull(usize),
    #[error("the process has exited")]
    Exited,
    #[error("process {0} has failed (process-fail callback)")]
    DestinationFailed(ProcessId),
}

#[derive(Debug, Clone)]
struct Pending {
    ts: u64,
    msg: Vec<u8>,
    reliable: bool,
    sent_at: u64,
    /// ReliableData, Data or Recall: what a retransmission sends.
    op: Opcode,
}

type Key = (u64, ProcessId, u32);

/// One lib1pipe process.
#[derive(Debug)]
pub struct Process {
    cfg: Config,
    clock: HostClock,
    psn: BTreeMap<ProcessId, u32>,
    unacked: BTreeMap<(ProcessId, u32), Pending>,
    outbox: VecDeque<Outgoing>,
    be_buf: BTreeMap<Key, Vec<u8>>,
    rel_buf: BTreeMap<Key, Vec<u8>>,
    rel_seen: BTreeSet<(ProcessId, u32)>,
    /// Reliable scatterings with a message still unACKed: timestamp to (destination, PSN).
    scatterings: BTreeMap<u64, Vec<(ProcessId, u32)>>,
    /// Scatterings recalled by their senders (source, timestamp): later copies are dropped.
    recalled: BTreeSet<(ProcessId, u64)>,
    /// The barriers received (48-bit, never decreasing).
    be_barrier: u64,
    commit_barrier: u64,
    ready: VecDeque<Delivery>,
    events: VecDeque<Event>,
    failed: BTreeMap<ProcessId, u64>,
    exited: bool,
}

impl Process {
    /// `onepipe_init`: a process with its clock.
    pub fn init(cfg: Config, clock: HostClock) -> Self {
        Process {
            cfg,
            clock,
            psn: BTreeMap::new(),
            unacked: BTreeMap::new(),
            outbox: VecDeque::new(),
            be_buf: BTreeMap::new(),
            rel_buf: BTreeMap::new(),
            rel_seen: BTreeSet::new(),
            scatterings: BTreeMap::new(),
            recalled: BTreeSet::new(),
            be_barrier: 0,
            commit_barrier: 0,
            ready: VecDeque::new(),
            events: VecDeque::new(),
            failed: BTreeMap::new(),
            exited: false,
        }
    }

    /// `onepipe_exit`: nothing more is sent or delivered.
    pub fn exit(&mut self) {
        self.exited = true;
        self.outbox.clear();
    }

    pub fn id(&self) -> ProcessId {
        self.cfg.id
    }

    /// `onepipe_get_timestamp`: the clock now (later sends carry larger timestamps).
    pub fn get_timestamp(&self, now: u64) -> u64 {
        self.clock.peek(now)
    }

    /// The clock itself (for synchronisation).
    pub fn clock_mut(&mut self) -> &mut HostClock {
        &mut self.clock
    }

    /// The commit barrier this process can promise: below its oldest unACKed reliable message
    /// and below the last clock reading (every later timestamp is above that).
    fn commit_bound(&self) -> u32 {
        let oldest = self.unacked.values().filter(|p| p.reliable).map(|p| p.ts);
        let clock = self.clock.last().wrapping_sub(1) & ts::MASK;
        let b = oldest
            .map(|t| t.wrapping_sub(1) & ts::MASK)
            .fold(clock, |a, t| if ts::lt(t, a) { t } else { a });
        b as u32
    }

    fn send(
        &mut self,
        now: u64,
        scattering: Vec<(ProcessId, Vec<u8>)>,
        reliable: bool,
    ) -> Result<u64, SendError> {
        if self.exited {
            return Err(SendError::Exited);
        }
        if self.unacked.len() + scattering.len() > self.cfg.window {
            return Err(SendError::WindowFull(self.unacked.len()));
        }
        if let Some(&(d, _)) = scattering.iter().find(|(d, _)| self.failed.contains_key(d)) {
            return Err(SendError::DestinationFailed(d));
        }
        let t = self.clock.read(now);
        let commit = self.commit_bound();
        for (dst, msg) in scattering {
            let psn = self.psn.entry(dst).or_insert(0);
            *psn = (*psn + 1) & 0xff_ffff;
            let psn = *psn;
            let op = if reliable {
                Opcode::ReliableData
            } else {
                Opcode::Data
            };
            let h = Header {
                ts: t,
                be: t as u32,
                commit,
                psn,
                opcode: op,
            };
            self.push(Some(dst), h, &msg);
            let p = Pending {
                ts: t,
                msg,
                reliable,
                sent_at: now,
                op,
            };
            self.unacked.insert((dst, psn), p);
            if reliable {
                self.scatterings.entry(t).or_default().push((dst, psn));
            }
        }
        Ok(t)
    }

    /// `onepipe_unreliable_send`: one timestamp for the whole scattering; its timestamp.
    pub fn unreliable_send(
        &mut self,
        now: u64,
        scattering: Vec<(ProcessId, Vec<u8>)>,
    ) -> Result<u64, SendError> {
        self.send(now, scattering, false)
    }

    /// `onepipe_reliable_send`.
    pub fn reliable_send(
        &mut self,
        now: u64,
        scattering: Vec<(ProcessId, Vec<u8>)>,
    ) -> Result<u64, SendError> {
        self.send(now, scattering, true)
    }

    fn push(&mut self, dst: Option<ProcessId>, h: Header, payload: &[u8]) {
        let mut bytes = Vec::with_capacity(super::wire::HEADER_LEN + payload.len());
        h.write(&mut bytes);
        bytes.extend_from_slice(payload);
        self.outbox.push_back(Outgoing { dst, bytes });
    }

    /// A beacon for the ToR: the clock as best-effort barrier, the commit bound.
    pub fn beacon(&mut self, now: u64) {
        if self.exited {
            return;
        }
        let t = self.clock.read(now);
        let commit = self.commit_bound();
        let h = Header {
            ts: t,
            be: t as u32,
            commit,
            psn: 0,
            opcode: Opcode::Beacon,
        };
        self.push(None, h, &[]);
    }

    /// The next packet to send.
    pub fn poll_transmit(&mut self) -> Option<Outgoing> {
        self.outbox.pop_front()
    }

    /// `onepipe_recv`: the next message in delivery order.
    pub fn recv(&mut self) -> Option<Delivery> {
        self.ready.pop_front()
    }

    /// The next callback.
    pub fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }

    /// Messages waiting for their barrier.
    pub fn buffered(&self) -> usize {
        self.be_buf.len() + self.rel_buf.len()
    }

    /// The best-effort barrier received so far.
    pub fn barrier(&self) -> u64 {
        self.be_barrier
    }

    /// Handles a packet from process `src` (a beacon's source does not matter).
    pub fn on_packet(
        &mut self,
        now: u64,
        src: ProcessId,
        bytes: &[u8],
    ) -> Result<(), super::wire::WireError> {
        if self.exited {
            return Ok(());
        }
        let (h, payload) = Header::parse(bytes)?;
        let reference = self.clock.peek(now);
        if self.failed.get(&src).is_some_and(|&f| ts::lt(f, h.ts)) && h.opcode != Opcode::Beacon {
            return Ok(()); // from a failed process, after its failure: discarded
        }
        match h.opcode {
            Opcode::Data => {
                // A best-effort barrier B says no later message has a timestamp below B (the
                // copies of one scattering share theirs): a message at B is on time, one
                // below it late (1Pipe §4.1: delivered are those "smaller than" the barrier).
                if !ts::lt(h.ts, self.be_barrier) {
                    self.be_buf.insert((h.ts, src, h.psn), payload.to_vec());
                    self.reply(now, src, h, Opcode::Ack);
                } else {
                    self.reply(now, src, h, Opcode::Nak);
                }
            }
            Opcode::ReliableData => {
                if self.rel_seen.insert((src, h.psn)) && !self.recalled.contains(&(src, h.ts)) {
                    self.rel_buf.insert((h.ts, src, h.psn), payload.to_vec());
                }
                self.reply(now, src, h, Opcode::Ack);
            }
            Opcode::Recall => {
                if self.rel_seen.insert((src, h.psn)) {
                    self.rel_buf.retain(|&(t, s, _), _| t != h.ts || s != src);
                    self.recalled.insert((src, h.ts));
                }
                self.reply(now, src, h, Opcode::Ack);
            }
            Opcode::Ack => {
                if let Some(p) = self.unacked.remove(&(src, h.psn)) {
                    self.scattering_acked(p.ts);
                }
            }
            Opcode::Nak => {
                if let Some(p) = self.unacked.remove(&(src, h.psn)) {
                    self.events.push_back(Event::SendFail {
                        ts: p.ts,
                        dst: src,
                        msg: p.msg,
                    });
                }
            }
            Opcode::Beacon => {}
        }
        // Acks and naks are not ordered traffic: their barriers are those of their sender.
        let be = ts::extend(h.be, reference);
        if ts::lt(self.be_barrier, be) {
            self.be_barrier = be;
        }
        let commit = ts::extend(h.commit, reference);
        if ts::lt(self.commit_barrier, commit) {
            self.commit_barrier = commit;
        }
        self.deliver();
        Ok(())
    }

    /// An ACK or NAK: it crosses the switches like any 1Pipe packet, so it carries this
    /// process's barriers.
    fn reply(&mut self, now: u64, dst: ProcessId, h: Header, op: Opcode) {
        let t = self.clock.read(now);
        let commit = self.commit_bound();
        let r = Header {
            ts: h.ts,
            be: t as u32,
            commit,
            psn: h.psn,
            opcode: op,
        };
        self.push(Some(dst), r, &[]);
    }

    /// Delivers the best-effort messages below the best-effort barrier (one at it may still
    /// have a copy on its way) and the reliable ones committed (at or below the commit bound).
    fn deliver(&mut self) {
        for (reliable, barrier) in [(false, self.be_barrier), (true, self.commit_barrier)] {
            let buf = if reliable {
                &mut self.rel_buf
            } else {
                &mut self.be_buf
            };
            while let Some(e) = buf.first_entry() {
                let (t, src, psn) = *e.key();
                if ts::lt(barrier, t) || (!reliable && t == barrier) {
                    break;
                }
                let msg = e.remove();
                self.ready.push_back(Delivery {
                    ts: t,
                    src,
                    psn,
                    reliable,
                    msg,
                });
            }
        }
    }

    /// Timers at `now`: unACKed best-effort messages past the timeout are reported, reliable
    /// ones retransmitted (same timestamp and PSN, fresh barriers).
    pub fn on_timer(&mut self, now: u64) {
        if self.exited {
            return;
        }
        let due: Vec<(ProcessId, u32)> = self
            .unacked
            .iter()
            .filter(|(_, p)| now.saturating_sub(p.sent_at) >= self.cfg.ack_timeout_ns)
            .map(|(&k, _)| k)
            .collect();
        for (dst, psn) in due {
            if self.unacked[&(dst, psn)].reliable && !self.failed.contains_key(&dst) {
                let clock = self.clock.read(now);
                let commit = self.commit_bound();
                let p = self.unacked.get_mut(&(dst, psn)).expect("due");
                p.sent_at = now;
                let h = Header {
                    ts: p.ts,
                    be: clock as u32,
                    commit,
                    psn,
                    opcode: p.op,
                };
                let msg = p.msg.clone();
                self.push(Some(dst), h, &msg);
            } else if let Some(p) = self.unacked.remove(&(dst, psn)) {
                self.events.push_back(Event::SendFail {
                    ts: p.ts,
                    dst,
                    msg: p.msg,
                });
            }
        }
    }

    /// Forgets the scattering at `ts` once none of its messages waits for an ACK.
    fn scattering_acked(&mut self, ts: u64) {
        if let Some(ms) = self.scatterings.get(&ts) {
            if ms.iter().all(|k| !self.unacked.contains_key(k)) {
                self.scatterings.remove(&ts);
            }
        }
    }

    /// §5's recall: the reliable scattering at `ts` lost a receiver; its other messages stop
    /// and their receivers are told to discard them (a reliable Recall each, so the commit
    /// bound stays below `ts` until they all ACK). Every message of it is reported failed.
    fn recall(&mut self, now: u64, ts: u64, failed: ProcessId) {
        let Some(ms) = self.scatterings.remove(&ts) else {
            return;
        };
        let clock = self.clock.read(now);
        for (dst, psn) in ms.into_iter().filter(|&(d, _)| d != failed) {
            let msg = self
                .unacked
                .remove(&(dst, psn))
                .map(|p| p.msg)
                .unwrap_or_default();
            self.events.push_back(Event::SendFail { ts, dst, msg });
            if self.failed.contains_key(&dst) {
                continue;
            }
            let psn = self.psn.entry(dst).or_insert(0);
            *psn = (*psn + 1) & 0xff_ffff;
            let psn = *psn;
            let p = Pending {
                ts,
                msg: Vec::new(),
                reliable: true,
                sent_at: now,
                op: Opcode::Recall,
            };
            self.unacked.insert((dst, psn), p);
            let h = Header {
                ts,
                be: clock as u32,
                commit: self.commit_bound(),
                psn,
                opcode: Opcode::Recall,
            };
            self.push(Some(dst), h, &[]);
        }
    }

    /// Whether a recall of this process is still unACKed: its part of §5.2's recovery (Discard,
    /// Recall, Callback) is not complete yet, and the controller must not resume the barriers.
    pub fn recovering(&self) -> bool {
        self.unacked.values().any(|p| p.op == Opcode::Recall)
    }

    /// The controller's failure notice at `now`: `process` failed at `failure_ts`. Its
    /// messages above that are discarded, sends to it fail, scatterings with a message to it
    /// still unACKed are recalled, and the process-fail callback fires.
    pub fn process_failed(&mut self, now: u64, process: ProcessId, failure_ts: u64) {
        self.failed.insert(process, failure_ts);
        for buf in [&mut self.be_buf, &mut self.rel_buf] {
            buf.retain(|&(t, src, _), _| src != process || !ts::lt(failure_ts, t));
        }
        let lost: Vec<(ProcessId, u32)> = self
            .unacked
            .keys()
            .filter(|k| k.0 == process)
            .copied()
            .collect();
        for k in lost {
            let p = self.unacked.remove(&k).expect("listed");
            if p.reliable && p.op == Opcode::ReliableData {
                self.recall(now, p.ts, process);
            }
            self.events.push_back(Event::SendFail {
                ts: p.ts,
                dst: process,
                msg: p.msg,
            });
        }
        self.events.push_back(Event::ProcessFail {
            process,
            failure_ts,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn process(id: ProcessId, skew: i64) -> Process {
        let cfg = Config {
            id,
            ack_timeout_ns: 10_000,
            window: 64,
        };
        Process::init(cfg, HostClock::new(skew, 0.0))
    }

    /// Hands `p`'s packets to their destination as a switch would, with barrier `b`.
    fn carry(from: &mut Process, to: &mut Process, now: u64, be: u32, commit: u32) {
        while let Some(o) = from.poll_transmit() {
            let (mut h, payload) = Header::parse(&o.bytes).unwrap();
            h.be = be;
            h.commit = commit;
            let mut bytes = Vec::new();
            h.write(&mut bytes);
            bytes.extend_from_slice(payload);
            to.on_packet(now, from.id(), &bytes).unwrap();
        }
    }

    #[test]
    fn best_effort_waits_for_the_barrier_and_refuses_late_messages() {
        let (mut a, mut b) = (process(1, 0), process(2, 0));
        let t1 = a.unreliable_send(1_000, vec![(2, b"x".to_vec())]).unwrap();
        let t2 = a.unreliable_send(2_000, vec![(2, b"y".to_vec())]).unwrap();
        assert!(t2 > t1);
        carry(&mut a, &mut b, 3_000, (t1 - 1) as u32, 0);
        assert_eq!(b.recv(), None, "the barrier is below both");
        b.on_packet(3_000, 9, &beacon(t1 as u32)).unwrap();
        assert_eq!(
            b.recv(),
            None,
            "a barrier at t1 may still have t1's copies behind it"
        );
        b.on_packet(3_000, 9, &beacon(t1 as u32 + 1)).unwrap();
        assert_eq!(b.recv().map(|d| d.msg), Some(b"x".to_vec()));
        assert_eq!(b.recv(), None);
        b.on_packet(3_000, 9, &beacon(t2 as u32 + 5)).unwrap();
        assert_eq!(b.recv().map(|d| (d.ts, d.src)), Some((t2, 1)));
        // a message below the delivered barrier is refused, and its sender told
        let mut late = process(3, -2_000);
        let t = late
            .unreliable_send(2_500, vec![(2, b"z".to_vec())])
            .unwrap();
        assert!(t < t2);
        carry(&mut late, &mut b, 4_000, t as u32, 0);
        assert_eq!(b.recv(), None);
        while let Some(o) = b.poll_transmit() {
            if o.dst == Some(3) {
                late.on_packet(4_100, 2, &o.bytes).unwrap();
            }
        }
        assert!(matches!(
            late.poll_event(),
            Some(Event::SendFail { dst: 2, .. })
        ));
    }

    /// The copies of one scattering share a timestamp, so a barrier at it (raised by the first
    /// copies) leaves the last copy on time: accepted, delivered once the barrier passes it
    /// (1Pipe §4.1; audit 10a #5: such copies were refused as late in a loss-free network).
    #[test]
    fn a_copy_at_the_barrier_is_on_time() {
        let (mut a, mut b) = (process(1, 0), process(2, 0));
        let t = a.unreliable_send(1_000, vec![(2, b"x".to_vec())]).unwrap();
        b.on_packet(1_500, 9, &beacon(t as u32)).unwrap();
        carry(&mut a, &mut b, 2_000, t as u32, 0);
        let answers: Vec<Opcode> = std::iter::from_fn(|| b.poll_transmit())
            .map(|o| Header::parse(&o.bytes).unwrap().0.opcode)
            .collect();
        assert_eq!(answers, vec![Opcode::Ack], "accepted, not refused");
        assert_eq!(b.recv(), None, "not yet: the barrier is at its timestamp");
        b.on_packet(2_500, 9, &beacon(t as u32 + 1)).unwrap();
        assert_eq!(b.recv().map(|d| d.ts), Some(t));
    }

    fn beacon(b: u32) -> Vec<u8> {
        let h = Header {
            ts: u64::from(b),
            be: b,
            commit: 0,
            psn: 0,
            opcode: Opcode::Beacon,
        };
        let mut v = Vec::new();
        h.write(&mut v);
        v
    }

    #[test]
    fn reliable_holds_the_commit_barrier_until_acked_and_retransmits() {
        let (mut a, mut b) = (process(1, 0), process(2, 0));
        let t = a.reliable_send(1_000, vec![(2, b"r".to_vec())]).unwrap();
        let lost = a.poll_transmit().unwrap();
        assert_eq!(lost.dst, Some(2));
        a.beacon(2_000);
        let (h, _) = Header::parse(&a.poll_transmit().unwrap().bytes).unwrap();
        assert!(
            u64::from(h.commit) < t,
            "the unACKed message holds the commit barrier"
        );
        assert!(u64::from(h.be) > t, "the best-effort barrier moves on");
        a.on_timer(20_000);
        carry(&mut a, &mut b, 20_100, 0, (t - 1) as u32);
        assert_eq!(b.recv(), None, "commit barrier below it");
        let ack = b.poll_transmit().unwrap();
        a.on_packet(20_200, 2, &ack.bytes).unwrap();
        a.beacon(20_300);
        let (h, _) = Header::parse(&a.poll_transmit().unwrap().bytes).unwrap();
        assert!(
            u64::from(h.commit) >= t,
            "ACKed: the commit barrier passes it"
        );
        b.on_packet(20_400, 1, &beacon_commit(h.commit)).unwrap();
        let d = b.recv().unwrap();
        assert_eq!(
            (d.ts, d.src, d.reliable, d.msg),
            (t, 1, true, b"r".to_vec())
        );
        assert_eq!(a.poll_event(), None, "reliable messages do not fail");
    }

    /// §5's recall: a scattering to 2 and 3 whose receiver 3 failed before ACKing is recalled
    /// at 2 (which had it and ACKed); the commit bound stays below it until 2 ACKs the recall;
    /// 2 never delivers it, not even from a late copy; every message of it is reported failed.
    #[test]
    fn a_scattering_with_a_failed_receiver_is_recalled_everywhere() {
        let (mut a, mut b) = (process(1, 0), process(2, 0));
        let t = a
            .reliable_send(1_000, vec![(2, b"to b".to_vec()), (3, b"to c".to_vec())])
            .unwrap();
        let to_b = a.poll_transmit().unwrap();
        let to_c = a.poll_transmit().unwrap();
        assert_eq!((to_b.dst, to_c.dst), (Some(2), Some(3)));
        b.on_packet(1_100, 1, &to_b.bytes).unwrap();
        let ack = b.poll_transmit().unwrap();
        a.on_packet(1_200, 2, &ack.bytes).unwrap();
        // 3 never ACKs: the commit bound stays below t; the controller declares 3 failed.
        assert!(!a.recovering());
        a.process_failed(50_000, 3, 0);
        assert!(a.recovering(), "its recall is not ACKed yet");
        let recall = a.poll_transmit().unwrap();
        assert_eq!(recall.dst, Some(2));
        assert_eq!(
            Header::parse(&recall.bytes).unwrap().0.opcode,
            Opcode::Recall
        );
        a.beacon(50_100);
        let (h, _) = Header::parse(&a.poll_transmit().unwrap().bytes).unwrap();
        assert!(u64::from(h.commit) < t, "held until the recall is ACKed");
        b.on_packet(50_200, 1, &recall.bytes).unwrap();
        // A late copy (a retransmission that was on its way) is dropped too.
        let mut late = to_b.bytes.clone();
        late[14] ^= 1; // another PSN, as a duplicate would not be
        b.on_packet(50_250, 1, &late).unwrap();
        while let Some(o) = b.poll_transmit() {
            a.on_packet(50_300, 2, &o.bytes).unwrap();
        }
        assert!(!a.recovering(), "recall ACKed: its recovery is complete");
        a.beacon(50_400);
        let (h, _) = Header::parse(&a.poll_transmit().unwrap().bytes).unwrap();
        assert!(
            u64::from(h.commit) >= t,
            "recall ACKed: the commit barrier moves on"
        );
        b.on_packet(50_500, 1, &beacon_commit(h.commit)).unwrap();
        assert_eq!(b.recv(), None, "the recalled message is never delivered");
        let mut failed: Vec<ProcessId> = std::iter::from_fn(|| a.poll_event())
            .filter_map(|e| match e {
                Event::SendFail { ts, dst, .. } if ts == t => Some(dst),
                _ => None,
            })
            .collect();
        failed.sort_unstable();
        assert_eq!(failed, [2, 3]);
        assert_eq!(
            a.reliable_send(60_000, vec![(2, vec![1]), (3, vec![2])]),
            Err(SendError::DestinationFailed(3)),
            "a failed process is no destination"
        );
    }

    fn beacon_commit(c: u32) -> Vec<u8> {
        let h = Header {
            ts: 0,
            be: 0,
            commit: c,
            psn: 0,
            opcode: Opcode::Beacon,
        };
        let mut v = Vec::new();
        h.write(&mut v);
        v
    }

    #[test]
    fn a_failed_process_is_discarded_above_its_failure_timestamp() {
        let (mut a, mut b) = (process(1, 0), process(2, 0));
        let t1 = a.unreliable_send(1_000, vec![(2, b"1".to_vec())]).unwrap();
        let _t2 = a.unreliable_send(5_000, vec![(2, b"2".to_vec())]).unwrap();
        carry(&mut a, &mut b, 6_000, 0, 0);
        b.process_failed(7_000, 1, t1);
        assert_eq!(
            b.poll_event(),
            Some(Event::ProcessFail {
                process: 1,
                failure_ts: t1
            })
        );
        b.on_packet(7_000, 9, &beacon(10_000)).unwrap();
        assert_eq!(b.recv().map(|d| d.msg), Some(b"1".to_vec()));
        assert_eq!(b.recv(), None, "the message after the failure is discarded");
    }
}
