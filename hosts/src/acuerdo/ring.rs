//! The RDMA ring buffer's byte layout (§3.2): a sender appends records at its write
//! position in the receiver's incoming buffer with RDMA WRITEs; the receiver polls the
//! record at its read position and takes every complete one it finds (receiver-side
//! batching), zeroes it and reports how far it read, so the sender may reuse the space as
//! soon as the receiver has taken (accepted) a message.
//!
//! ```text
//! record at pos % cap:  | len (4) | seq (4) | body, padded to 8 | seq (4) | !seq (4) |
//! wrap marker:          | 0xffff_ffff (4) | seq (4) |   (the next record starts at 0)
//! ```
//!
//! `seq` counts records (and markers) of one sender–receiver pair from 1. The receiver
//! zeroes what it took, so a slot still holding nothing or an older lap never shows the
//! expected `seq` in both header and trailer: a record whose WRITE is still landing (its
//! packets land in order, header first) is not taken yet.

/// Bytes of a record's header.
pub const HEAD: usize = 8;
/// Bytes of a record's trailer.
pub const TRAIL: usize = 8;
const WRAP: u32 = u32::MAX;

/// Bytes a record with a body of `len` bytes takes.
pub fn record_len(len: usize) -> usize {
    HEAD + len.div_ceil(8) * 8 + TRAIL
}

/// The largest body a ring of `cap` bytes takes (half the ring, so a wrap never blocks).
pub fn max_body(cap: usize) -> usize {
    cap / 2 - HEAD - TRAIL
}

/// A sender's side of one ring: where the next record goes, what the receiver reported
/// taking.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Writer {
    /// Ring capacity (a multiple of 8).
    pub cap: usize,
    /// Bytes written so far (the next record's position, unwrapped).
    pub wpos: u64,
    /// Bytes the receiver reported taking.
    pub credit: u64,
    /// Records (and markers) written.
    pub seq: u32,
}

/// One WRITE a sender posts: `bytes` at offset `at` of the receiver's ring.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Put {
    /// Offset in the ring.
    pub at: usize,
    /// The bytes.
    pub bytes: Vec<u8>,
}

impl Writer {
    /// An empty ring of `cap` bytes.
    pub fn new(cap: usize) -> Writer {
        Writer {
            cap,
            wpos: 0,
            credit: 0,
            seq: 0,
        }
    }

    /// Takes the receiver's report of bytes taken (stale reports are ignored).
    pub fn set_credit(&mut self, taken: u64) {
        if taken <= self.wpos {
            self.credit = self.credit.max(taken);
        }
    }

    fn next_seq(&mut self) -> u32 {
        self.seq = self.seq.wrapping_add(1);
        if self.seq == 0 || self.seq == WRAP {
            self.seq = 1;
        }
        self.seq
    }

    /// The WRITEs that append `body` (a wrap marker first when it does not fit before the
    /// end), or None when the receiver has not freed enough space yet. The caller checked
    /// `body.len() <= max_body(cap)`.
    pub fn append(&mut self, body: &[u8]) -> Option<Vec<Put>> {
        let need = record_len(body.len());
        let off = (self.wpos % self.cap as u64) as usize;
        let wrap = off + need > self.cap;
        let total = need + if wrap { self.cap - off } else { 0 };
        if self.wpos + total as u64 - self.credit > self.cap as u64 {
            return None;
        }
        let mut puts = Vec::with_capacity(2);
        if wrap {
            let s = self.next_seq();
            let mut m = WRAP.to_le_bytes().to_vec();
            m.extend_from_slice(&s.to_le_bytes());
            puts.push(Put { at: off, bytes: m });
            self.wpos += (self.cap - off) as u64;
        }
        let s = self.next_seq();
        let mut r = Vec::with_capacity(need);
        r.extend_from_slice(&(body.len() as u32).to_le_bytes());
        r.extend_from_slice(&s.to_le_bytes());
        r.extend_from_slice(body);
        r.resize(need - TRAIL, 0);
        r.extend_from_slice(&s.to_le_bytes());
        r.extend_from_slice(&(!s).to_le_bytes());
        puts.push(Put {
            at: (self.wpos % self.cap as u64) as usize,
            bytes: r,
        });
        self.wpos += need as u64;
        Some(puts)
    }
}

/// A receiver's side of one ring.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Reader {
    /// Bytes taken so far (unwrapped).
    pub rpos: u64,
    /// Records (and markers) taken.
    pub seq: u32,
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

impl Reader {
    fn expected(&self) -> u32 {
        let s = self.seq.wrapping_add(1);
        if s == 0 || s == WRAP {
            1
        } else {
            s
        }
    }

    /// Takes the next complete record from `ring` (the receiver's incoming buffer), zeroes
    /// it and returns its body; None when nothing complete is there. A header that cannot
    /// be a record of this ring is an error (the bytes are left as they are).
    pub fn take(&mut self, ring: &mut [u8]) -> Result<Option<Vec<u8>>, String> {
        let Some((off, body)) = self.locate(ring)? else {
            return Ok(None);
        };
        let need = record_len(body.len());
        ring[off..off + need].fill(0);
        self.seq = self.expected();
        self.rpos += need as u64;
        Ok(Some(body))
    }

    /// The body of the next complete record, left in the ring (a later [`Reader::take`]
    /// takes it); wrap markers before it are taken. None when nothing complete is there.
    pub fn peek(&mut self, ring: &mut [u8]) -> Result<Option<Vec<u8>>, String> {
        Ok(self.locate(ring)?.map(|(_, body)| body))
    }

    /// Where the next complete record is and its body, past any wrap marker (taken).
    fn locate(&mut self, ring: &mut [u8]) -> Result<Option<(usize, Vec<u8>)>, String> {
        let cap = ring.len();
        loop {
            let off = (self.rpos % cap as u64) as usize;
            let want = self.expected();
            if u32_at(ring, off + 4) != want {
                return Ok(None);
            }
            let len = u32_at(ring, off);
            if len == WRAP {
                ring[off..off + HEAD].fill(0);
                self.seq = want;
                self.rpos += (cap - off) as u64;
                continue;
            }
            let need = record_len(len as usize);
            if off + need > cap {
                return Err(format!(
                    "record of {len} bytes at {off} runs past the ring's end ({cap})"
                ));
            }
            let t = off + need - TRAIL;
            if u32_at(ring, t) != want || u32_at(ring, t + 4) != !want {
                return Ok(None); // still landing
            }
            return Ok(Some((
                off,
                ring[off + HEAD..off + HEAD + len as usize].to_vec(),
            )));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn land(ring: &mut [u8], puts: &[Put]) {
        for p in puts {
            ring[p.at..p.at + p.bytes.len()].copy_from_slice(&p.bytes);
        }
    }

    #[test]
    fn records_wrap_wait_for_credit_and_half_landed_ones_wait() {
        let cap = 256;
        let mut ring = vec![0u8; cap];
        let (mut w, mut r) = (Writer::new(cap), Reader::default());
        let mut sent = 0u32;
        let mut got = Vec::new();
        for round in 0..40 {
            // Fill until the ring refuses, then let the reader take everything.
            while let Some(p) = w.append(&vec![sent as u8; 10 + (sent as usize * 7) % 60]) {
                land(&mut ring, &p);
                sent += 1;
            }
            while let Some(b) = r.take(&mut ring).unwrap() {
                got.push(b);
            }
            w.set_credit(r.rpos);
            assert_eq!(got.len() as u32, sent, "round {round}");
        }
        for (i, b) in got.iter().enumerate() {
            assert_eq!(b.len(), 10 + (i * 7) % 60);
            assert!(b.iter().all(|&x| x == i as u8));
        }
        // A record whose trailer has not landed is not taken.
        let p = w.append(b"later").unwrap();
        let last = p.last().unwrap();
        land(&mut ring, &p[..p.len() - 1]);
        let head = &last.bytes[..last.bytes.len() - TRAIL];
        ring[last.at..last.at + head.len()].copy_from_slice(head);
        assert_eq!(r.take(&mut ring).unwrap(), None);
        land(&mut ring, &p);
        // A peek leaves it for the next take.
        assert_eq!(r.peek(&mut ring).unwrap(), Some(b"later".to_vec()));
        assert_eq!(r.take(&mut ring).unwrap(), Some(b"later".to_vec()));
        assert_eq!(r.peek(&mut ring).unwrap(), None);
    }
}
