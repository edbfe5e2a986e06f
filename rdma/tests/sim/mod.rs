//! A tiny simulated link between two endpoints for tests: virtual clock, latency,
//! seeded loss, duplication, reordering and ECN CE marking.

#![allow(dead_code)]

use std::net::{IpAddr, Ipv4Addr};
use std::time::Duration;

use rdma::verbs::*;

/// Deterministic test RNG (xorshift64*).
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub fn chance(&mut self, p: f64) -> bool {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64 <= p && p > 0.0
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// Link impairments.
#[derive(Clone, Copy, Default)]
pub struct Faults {
    pub loss: f64,
    pub dup: f64,
    pub reorder: f64,
    pub ce_mark: f64,
    /// Drop everything (peer gone).
    pub cut: bool,
}

pub struct Pair {
    pub ep: [Endpoint; 2],
    pub now: Instant,
    pub latency: Duration,
    pub faults: Faults,
    in_flight: Vec<(Instant, usize, Vec<u8>)>,
    pub rng: Rng,
    pub delivered: [u64; 2],
    pub dropped: u64,
    /// Frames each side sent, for inspection.
    pub log: Vec<(usize, Vec<u8>)>,
    pub keep_log: bool,
    /// Consecutive steps in which neither time nor frames moved.
    idle_steps: u32,
    /// Link rate in bits per second per direction (0: unlimited). With a rate, an endpoint
    /// sends its next frame only when the previous one is on the wire, as a NIC does.
    pub rate_bps: u64,
    /// When each side's transmitter is free again.
    busy_until: [Instant; 2],
}

pub fn mac(i: u8) -> [u8; 6] {
    [2, 0, 0, 0, 0, i]
}

pub fn ip(i: u8) -> Ipv4Addr {
    Ipv4Addr::new(10, 0, 0, i)
}

impl Pair {
    pub fn new(seed: u64) -> Pair {
        Pair::with_config(seed, |_| {})
    }

    pub fn with_config(seed: u64, f: impl Fn(&mut EndpointConfig)) -> Pair {
        let mut a = EndpointConfig::new(mac(1), ip(1));
        let mut b = EndpointConfig::new(mac(2), ip(2));
        f(&mut a);
        f(&mut b);
        Pair {
            ep: [Endpoint::new(a), Endpoint::new(b)],
            now: Instant::from_nanos(1_000_000),
            latency: Duration::from_micros(2),
            faults: Faults::default(),
            in_flight: Vec::new(),
            rng: Rng(seed | 1),
            delivered: [0, 0],
            dropped: 0,
            log: Vec::new(),
            keep_log: false,
            idle_steps: 0,
            rate_bps: 0,
            busy_until: [Instant::from_nanos(0); 2],
        }
    }

    /// Moves frames and time forward by one event. Returns false when nothing is left
    /// to happen (no frames in flight, no timers).
    pub fn step(&mut self) -> bool {
        for side in 0..2 {
            while self.busy_until[side] <= self.now {
                let Some(mut f) = self.ep[side].poll_transmit(self.now) else {
                    break;
                };
                if self.rate_bps > 0 {
                    // Preamble, FCS and inter-frame gap: 24 bytes beside the frame.
                    let bits = (f.len() as u64 + 24) * 8;
                    let ns = (bits * 1_000_000_000).div_ceil(self.rate_bps);
                    self.busy_until[side] = self.now + Duration::from_nanos(ns);
                }
                if self.keep_log {
                    self.log.push((side, f.clone()));
                }
                if self.faults.cut || self.rng.chance(self.faults.loss) {
                    self.dropped += 1;
                    continue;
                }
                if self.rng.chance(self.faults.ce_mark) && f.len() > 15 && f[12] == 8 && f[13] == 0
                {
                    // IPv4 ECN -> CE, fix the header checksum (the ICRC does not cover ECN).
                    f[15] |= 3;
                    f[24] = 0;
                    f[25] = 0;
                    let mut sum = 0u32;
                    for i in (14..34).step_by(2) {
                        sum += u32::from(u16::from_be_bytes([f[i], f[i + 1]]));
                    }
                    while sum > 0xFFFF {
                        sum = (sum & 0xFFFF) + (sum >> 16);
                    }
                    let c = !(sum as u16);
                    f[24..26].copy_from_slice(&c.to_be_bytes());
                }
                let mut at = self.now + self.latency;
                if self.rng.chance(self.faults.reorder) {
                    at = at + Duration::from_nanos(self.rng.below(20_000));
                }
                if self.rng.chance(self.faults.dup) {
                    let later = at + Duration::from_nanos(self.rng.below(5_000));
                    self.in_flight.push((later, 1 - side, f.clone()));
                }
                self.in_flight.push((at, 1 - side, f));
            }
        }
        // Next event time.
        let next_frame = self.in_flight.iter().map(|x| x.0).min();
        let next_timer = [self.ep[0].poll_timeout(), self.ep[1].poll_timeout()]
            .into_iter()
            .flatten()
            .min();
        // A busy transmitter frees up: the endpoint may have more to send then.
        let next_tx = self
            .busy_until
            .iter()
            .copied()
            .filter(|t| *t > self.now)
            .min();
        let Some(next) = [next_frame, next_timer, next_tx]
            .into_iter()
            .flatten()
            .min()
        else {
            return false;
        };
        if next > self.now {
            self.now = next;
            self.idle_steps = 0;
        } else {
            // A timer that is due must be consumed by handle_timeout; if time never
            // moves and no frame flows, an endpoint is spinning.
            self.idle_steps += 1;
            assert!(
                self.idle_steps < 10_000,
                "endpoint timers spin at {:?}",
                self.now
            );
        }

        // Deliver due frames in time order (stable for equal times).
        self.in_flight.sort_by_key(|x| x.0);
        let due = self
            .in_flight
            .iter()
            .take_while(|x| x.0 <= self.now)
            .count();
        let frames: Vec<_> = self.in_flight.drain(..due).collect();
        for (_, to, f) in frames {
            self.delivered[to] += 1;
            self.ep[to].handle_frame(self.now, &f);
        }
        for e in &mut self.ep {
            if e.poll_timeout().is_some_and(|t| t <= self.now) {
                e.handle_timeout(self.now);
            }
        }
        true
    }

    /// Steps until `done` holds or `limit` of virtual time passes.
    pub fn run_until(&mut self, limit: Duration, mut done: impl FnMut(&mut Pair) -> bool) -> bool {
        let end = self.now + limit;
        loop {
            if done(self) {
                return true;
            }
            if self.now >= end {
                return false;
            }
            if !self.step() {
                return done(self);
            }
        }
    }

    /// Steps until nothing more happens (or the limit passes).
    pub fn settle(&mut self, limit: Duration) -> bool {
        let end = self.now + limit;
        while self.now < end {
            if !self.step() {
                return true;
            }
        }
        false
    }
}

/// One side's verbs objects for an RC connection.
pub struct Side {
    pub pd: PdHandle,
    pub cq: CqHandle,
    pub qpn: u32,
    pub mr: MrInfo,
}

pub fn setup_side(ep: &mut Endpoint, mr_len: usize, qp_type: QpType) -> Side {
    let pd = ep.alloc_pd();
    let cq = ep.create_cq(1 << 16);
    let mr = ep.reg_mr(pd, mr_len, AccessFlags::ALL).unwrap();
    let qpn = ep
        .create_qp(QpInitAttr {
            pd,
            qp_type,
            send_cq: cq,
            recv_cq: cq,
            max_send_wr: 4096,
            max_recv_wr: 4096,
        })
        .unwrap();
    Side { pd, cq, qpn, mr }
}

/// Connects two RC QPs by hand (no CM): static neighbours, INIT → RTR → RTS.
pub fn connect_rc(
    p: &mut Pair,
    mr_len: usize,
    mtu: Mtu,
    timeout: u8,
    retry: u8,
    rnr: u8,
) -> [Side; 2] {
    let a = setup_side(&mut p.ep[0], mr_len, QpType::Rc);
    let b = setup_side(&mut p.ep[1], mr_len, QpType::Rc);
    p.ep[0].add_neighbour(IpAddr::V4(ip(2)), mac(2));
    p.ep[1].add_neighbour(IpAddr::V4(ip(1)), mac(1));
    let psns = [0xFF_FFF0u32, 0x12_3456u32]; // a's rq psn, b's rq psn (one wraps soon)
    for (i, (me, peer)) in [(&a, &b), (&b, &a)].into_iter().enumerate() {
        let ep = &mut p.ep[i];
        ep.modify_qp(
            me.qpn,
            &QpAttr {
                state: Some(QpState::Init),
                access: Some(
                    AccessFlags::REMOTE_READ
                        | AccessFlags::REMOTE_WRITE
                        | AccessFlags::REMOTE_ATOMIC,
                ),
                ..Default::default()
            },
        )
        .unwrap();
        ep.modify_qp(
            me.qpn,
            &QpAttr {
                state: Some(QpState::Rtr),
                path_mtu: Some(mtu),
                dest_qp_num: Some(peer.qpn),
                remote_ip: Some(IpAddr::V4(ip(2 - i as u8))),
                rq_psn: Some(psns[i]),
                min_rnr_timer: Some(1),
                ..Default::default()
            },
        )
        .unwrap();
        ep.modify_qp(
            me.qpn,
            &QpAttr {
                state: Some(QpState::Rts),
                sq_psn: Some(psns[1 - i]),
                timeout: Some(timeout),
                retry_cnt: Some(retry),
                rnr_retry: Some(rnr),
                ..Default::default()
            },
        )
        .unwrap();
    }
    [a, b]
}

pub fn sge(mr: &MrInfo, off: u64, len: u32) -> Sge {
    Sge {
        addr: mr.addr + off,
        length: len,
        lkey: mr.lkey,
    }
}

pub fn drain_cq(ep: &mut Endpoint, cq: CqHandle) -> Vec<WorkCompletion> {
    ep.poll_cq(cq, usize::MAX).unwrap()
}
