//! The total-order broadcast baselines of the 1Pipe paper's Fig. 8, sans I/O, on the same
//! hosts as lib1pipe: a switch sequencer (the stamping is `p4/programs/onepipe.p4`'s table
//! `sequencer`; here only the hosts' side), a token ring and Lamport timestamps.
//!
//! Every packet starts with the 4-byte sequencer header the switch parses behind UDP port
//! [`UDP_PORT`] (the global sequence number the sequencer stamps, big endian), then `kind`,
//! the source process, a 64-bit order key, a 64-bit auxiliary word and the message. With the
//! sequencer a scattering is one packet (every message with its destination) that the
//! sequencer numbers and multicasts to every host, each taking its own message: a scattering
//! keeps one position, and every host sees every number (a gap is a loss). A [`Member`] orders deliveries by a key that is the same at every receiver: the
//! global sequence number (sequencer, token) or the Lamport timestamp with the source
//! breaking ties.

use std::collections::{BTreeMap, VecDeque};

use super::process::ProcessId;

/// The UDP port of baseline packets (onepipe.p4 parses the sequencer header behind it).
pub const UDP_PORT: u16 = 20305;

const HEADER: usize = 4 + 1 + 2 + 8 + 8;
const DATA: u8 = 1;
const TOKEN: u8 = 2;
const CLOCK: u8 = 3;

/// A packet could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BaselineError {
    #[error("baseline packet of {0} bytes, shorter than its {HEADER}-byte header")]
    Short(usize),
    #[error("baseline packet of unknown kind {0}")]
    Kind(u8),
    #[error("token of {0} bytes does not hold {1} counters")]
    Token(usize, usize),
    #[error("sequenced scattering cut short at byte {0}")]
    Scattering(usize),
}

/// Which baseline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheme {
    /// A switch numbers each scattering and multicasts it to every host.
    Sequencer,
    /// One process at a time sends, `batch` scatterings per turn, then passes the token on.
    Token { batch: usize },
    /// Lamport timestamps; a process idle for `exchange_ns` broadcasts its clock.
    Lamport { exchange_ns: u64 },
}

/// A packet to send: to `dst`, or through the sequencer switch to everyone when
/// `via_sequencer`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outgoing {
    pub dst: ProcessId,
    pub via_sequencer: bool,
    pub bytes: Vec<u8>,
}

/// A delivered message: its order key (the same at every receiver), source and contents.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivery {
    pub key: (u64, ProcessId),
    pub src: ProcessId,
    pub msg: Vec<u8>,
}

/// A parsed packet.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Packet<'a> {
    gseq: u32,
    kind: u8,
    src: ProcessId,
    key: u64,
    aux: u64,
    body: &'a [u8],
}

fn encode(kind: u8, src: ProcessId, key: u64, aux: u64, body: &[u8]) -> Vec<u8> {
    let mut b = Vec::with_capacity(HEADER + body.len());
    b.extend_from_slice(&[0; 4]);
    b.push(kind);
    b.extend_from_slice(&src.to_be_bytes());
    b.extend_from_slice(&key.to_be_bytes());
    b.extend_from_slice(&aux.to_be_bytes());
    b.extend_from_slice(body);
    b
}

fn parse(b: &[u8]) -> Result<Packet<'_>, BaselineError> {
    if b.len() < HEADER {
        return Err(BaselineError::Short(b.len()));
    }
    let u32_at = |i: usize| u32::from_be_bytes(b[i..i + 4].try_into().expect("4 bytes"));
    let u64_at = |i: usize| u64::from_be_bytes(b[i..i + 8].try_into().expect("8 bytes"));
    let kind = b[4];
    if !(DATA..=CLOCK).contains(&kind) {
        return Err(BaselineError::Kind(kind));
    }
    Ok(Packet {
        gseq: u32_at(0),
        kind,
        src: u16::from_be_bytes([b[5], b[6]]),
        key: u64_at(7),
        aux: u64_at(15),
        body: &b[HEADER..],
    })
}

/// This process's message in a sequenced scattering's body, if any.
fn mine(mut body: &[u8], me: ProcessId) -> Result<Option<Vec<u8>>, BaselineError> {
    let total = body.len();
    while !body.is_empty() {
        let at = total - body.len();
        if body.len() < 4 {
            return Err(BaselineError::Scattering(at));
        }
        let dst = u16::from_be_bytes([body[0], body[1]]);
        let len = usize::from(u16::from_be_bytes([body[2], body[3]]));
        let msg = body.get(4..4 + len).ok_or(BaselineError::Scattering(at))?;
        if dst == me {
            return Ok(Some(msg.to_vec()));
        }
        body = &body[4 + len..];
    }
    Ok(None)
}

/// One process of a baseline.
pub struct Member {
    me: ProcessId,
    members: Vec<ProcessId>,
    scheme: Scheme,
    out: VecDeque<Outgoing>,
    delivered: VecDeque<Delivery>,
    /// Sequencer: the next number; scatterings buffered by theirs (none: not for here).
    next_gseq: u32,
    by_gseq: BTreeMap<u32, Option<Delivery>>,
    /// Token: scatterings waiting for the token; the last number delivered here; buffered by
    /// the number of the message before it to this destination.
    queue: VecDeque<Vec<(ProcessId, Vec<u8>)>>,
    last_key: u64,
    by_prev: BTreeMap<u64, (u64, Delivery)>,
    /// Lamport: the clock, the latest timestamp heard from each member, buffered messages,
    /// when this process last sent to everyone.
    clock: u64,
    heard: BTreeMap<ProcessId, u64>,
    pending: BTreeMap<(u64, ProcessId), Delivery>,
    last_broadcast: u64,
}

impl Member {
    /// Process `me` of `members` (ids in ring order). With a token, `members[0]` starts with it.
    pub fn new(me: ProcessId, members: Vec<ProcessId>, scheme: Scheme) -> Self {
        let heard = members
            .iter()
            .filter(|&&m| m != me)
            .map(|&m| (m, 0))
            .collect();
        let mut m = Member {
            me,
            members,
            scheme,
            out: VecDeque::new(),
            delivered: VecDeque::new(),
            next_gseq: 1,
            by_gseq: BTreeMap::new(),
            queue: VecDeque::new(),
            last_key: 0,
            by_prev: BTreeMap::new(),
            clock: 0,
            heard,
            pending: BTreeMap::new(),
            last_broadcast: 0,
        };
        if matches!(scheme, Scheme::Token { .. }) && m.members.first() == Some(&me) {
            let n = m.members.len();
            m.take_token(0, vec![0; n]);
        }
        m
    }

    /// Sends a scattering (queued until the token comes, with a token).
    pub fn send(&mut self, now: u64, scattering: Vec<(ProcessId, Vec<u8>)>) {
        match self.scheme {
            Scheme::Sequencer => {
                let mut body = Vec::new();
                for (dst, msg) in scattering {
                    body.extend_from_slice(&dst.to_be_bytes());
                    body.extend_from_slice(&(msg.len() as u16).to_be_bytes());
                    body.extend_from_slice(&msg);
                }
                let bytes = encode(DATA, self.me, 0, 0, &body);
                self.out.push_back(Outgoing {
                    dst: self.me,
                    via_sequencer: true,
                    bytes,
                });
            }
            Scheme::Token { .. } => self.queue.push_back(scattering),
            Scheme::Lamport { .. } => {
                self.clock = self.clock.saturating_add(1);
                if scattering.len() + 1 >= self.members.len() {
                    self.last_broadcast = now;
                }
                for (dst, msg) in scattering {
                    self.push(dst, DATA, self.clock, 0, &msg);
                }
            }
        }
    }

    fn push(&mut self, dst: ProcessId, kind: u8, key: u64, aux: u64, body: &[u8]) {
        let bytes = encode(kind, self.me, key, aux, body);
        self.out.push_back(Outgoing {
            dst,
            via_sequencer: false,
            bytes,
        });
    }

    /// Token: sends up to a batch of scatterings numbered from `gseq`, then passes it on.
    fn take_token(&mut self, mut gseq: u64, mut last_to: Vec<u64>) {
        let Scheme::Token { batch } = self.scheme else {
            return;
        };
        for _ in 0..batch {
            let Some(s) = self.queue.pop_front() else {
                break;
            };
            gseq = gseq.wrapping_add(1);
            for (dst, msg) in s {
                let Some(slot) = self.members.iter().position(|&m| m == dst) else {
                    continue;
                };
                self.push(dst, DATA, gseq, last_to[slot], &msg);
                last_to[slot] = gseq;
            }
        }
        let at = self.members.iter().position(|&m| m == self.me).unwrap_or(0);
        let next = self.members[(at + 1) % self.members.len()];
        let body: Vec<u8> = last_to.iter().flat_map(|v| v.to_be_bytes()).collect();
        self.push(next, TOKEN, gseq, 0, &body);
    }

    /// A packet from the network.
    pub fn on_packet(&mut self, bytes: &[u8]) -> Result<(), BaselineError> {
        let p = parse(bytes)?;
        let d = Delivery {
            key: (0, p.src),
            src: p.src,
            msg: p.body.to_vec(),
        };
        match (self.scheme, p.kind) {
            (Scheme::Sequencer, DATA) => {
                let mine = mine(p.body, self.me)?.map(|msg| Delivery {
                    key: (u64::from(p.gseq), p.src),
                    src: p.src,
                    msg,
                });
                self.by_gseq.insert(p.gseq, mine);
                while let Some(d) = self.by_gseq.remove(&self.next_gseq) {
                    self.delivered.extend(d);
                    self.next_gseq = self.next_gseq.wrapping_add(1);
                }
            }
            (Scheme::Token { .. }, DATA) => {
                let d = Delivery {
                    key: (p.key, p.src),
                    ..d
                };
                self.by_prev.insert(p.aux, (p.key, d));
                while let Some((k, d)) = self.by_prev.remove(&self.last_key) {
                    self.delivered.push_back(d);
                    self.last_key = k;
                }
            }
            (Scheme::Token { .. }, TOKEN) => {
                let n = self.members.len();
                if p.body.len() != n * 8 {
                    return Err(BaselineError::Token(p.body.len(), n));
                }
                let last_to = p
                    .body
                    .chunks(8)
                    .map(|c| u64::from_be_bytes(c.try_into().expect("8 bytes")))
                    .collect();
                self.take_token(p.key, last_to);
            }
            (Scheme::Lamport { .. }, DATA | CLOCK) => {
                self.clock = self.clock.max(p.key);
                if let Some(h) = self.heard.get_mut(&p.src) {
                    *h = (*h).max(p.key);
                }
                if p.kind == DATA {
                    let d = Delivery {
                        key: (p.key, p.src),
                        ..d
                    };
                    self.pending.insert(d.key, d);
                }
                self.deliver_lamport();
            }
            (_, k) => return Err(BaselineError::Kind(k)),
        }
        Ok(())
    }

    /// Lamport: a message is delivered once every other member has been heard at its
    /// timestamp or later (their later messages carry larger ones: channels are FIFO).
    fn deliver_lamport(&mut self) {
        let floor = self.heard.values().copied().min().unwrap_or(u64::MAX);
        while let Some(e) = self.pending.first_entry() {
            if e.key().0 > floor {
                break;
            }
            self.delivered.push_back(e.remove());
        }
    }

    /// The time passes: Lamport's clock exchange.
    pub fn on_timer(&mut self, now: u64) {
        if let Scheme::Lamport { exchange_ns } = self.scheme {
            if now >= self.last_broadcast + exchange_ns {
                self.last_broadcast = now;
                let others: Vec<ProcessId> = self.heard.keys().copied().collect();
                for q in others {
                    self.push(q, CLOCK, self.clock, 0, &[]);
                }
            }
        }
    }

    /// When [`Member::on_timer`] wants to run next.
    pub fn next_timer(&self) -> Option<u64> {
        match self.scheme {
            Scheme::Lamport { exchange_ns } => Some(self.last_broadcast + exchange_ns),
            _ => None,
        }
    }

    pub fn poll_transmit(&mut self) -> Option<Outgoing> {
        self.out.pop_front()
    }

    pub fn recv(&mut self) -> Option<Delivery> {
        self.delivered.pop_front()
    }

    /// Messages received but not yet deliverable, and scatterings waiting for the token.
    pub fn backlog(&self) -> usize {
        self.by_gseq.len() + self.by_prev.len() + self.pending.len() + self.queue.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Moves packets to their destinations for a few rounds (a token never stops), the
    /// sequencer's stamps made up in `stamp`.
    fn exchange(ms: &mut [Member], stamp: &mut dyn FnMut(&mut Vec<u8>)) -> usize {
        let mut moved = 0;
        for _ in 0..16 {
            let mut any = false;
            for i in 0..ms.len() {
                while let Some(mut o) = ms[i].poll_transmit() {
                    if o.via_sequencer {
                        stamp(&mut o.bytes);
                        for m in ms.iter_mut() {
                            m.on_packet(&o.bytes).unwrap();
                        }
                    } else {
                        ms[usize::from(o.dst)].on_packet(&o.bytes).unwrap();
                    }
                    any = true;
                    moved += 1;
                }
            }
            if !any {
                break;
            }
        }
        moved
    }

    fn all_to_all(scheme: Scheme) -> Vec<Vec<Delivery>> {
        let ids: Vec<ProcessId> = (0..4).collect();
        let mut ms: Vec<Member> = ids
            .iter()
            .map(|&i| Member::new(i, ids.clone(), scheme))
            .collect();
        let mut g = 0u32;
        let mut stamp = |b: &mut Vec<u8>| {
            g += 1;
            b[0..4].copy_from_slice(&g.to_be_bytes());
        };
        for round in 0..3u64 {
            for i in 0..4 {
                let s = ids
                    .iter()
                    .filter(|&&d| d != i)
                    .map(|&d| (d, vec![i as u8, round as u8]))
                    .collect();
                ms[usize::from(i)].send(round * 10, s);
            }
            for (i, m) in ms.iter_mut().enumerate() {
                m.on_timer(round * 10 + 100 * i as u64 + 1000);
            }
            // A token goes round a few times.
            for _ in 0..8 {
                exchange(&mut ms, &mut stamp);
            }
        }
        for m in &mut ms {
            m.on_timer(1 << 40);
        }
        exchange(&mut ms, &mut stamp);
        ms.iter_mut()
            .map(|m| std::iter::from_fn(|| m.recv()).collect())
            .collect()
    }

    fn check(ds: &[Vec<Delivery>]) {
        for (r, d) in ds.iter().enumerate() {
            assert_eq!(d.len(), 9, "process {r} delivered every message for it");
            assert!(d.windows(2).all(|w| w[0].key < w[1].key), "{r}: {d:?}");
        }
        let key_of: std::collections::HashMap<Vec<u8>, (u64, u16)> =
            ds[0].iter().map(|d| (d.msg.clone(), d.key)).collect();
        for d in ds.iter().flatten() {
            if let Some(k) = key_of.get(&d.msg) {
                assert_eq!(*k, d.key, "one key for a message at every receiver");
            }
        }
    }

    #[test]
    fn sequencer_delivers_in_stamped_order() {
        check(&all_to_all(Scheme::Sequencer));
    }

    #[test]
    fn token_delivers_one_total_order() {
        check(&all_to_all(Scheme::Token { batch: 1 }));
    }

    #[test]
    fn lamport_delivers_one_total_order() {
        check(&all_to_all(Scheme::Lamport { exchange_ns: 50 }));
    }

    #[test]
    fn bad_packets_are_errors() {
        let mut m = Member::new(0, vec![0, 1], Scheme::Token { batch: 1 });
        assert_eq!(m.on_packet(&[0; 5]), Err(BaselineError::Short(5)));
        let mut b = encode(9, 1, 0, 0, &[]);
        assert_eq!(m.on_packet(&b), Err(BaselineError::Kind(9)));
        b[4] = TOKEN;
        assert_eq!(m.on_packet(&b), Err(BaselineError::Token(0, 2)));
        let mut s = Member::new(0, vec![0, 1], Scheme::Sequencer);
        let cut = encode(DATA, 1, 0, 0, &[0, 0, 0, 9, 1]);
        assert_eq!(s.on_packet(&cut), Err(BaselineError::Scattering(0)));
    }
}
