//! JCT monitoring (§III-B2): the six timestamps of Fig. 6 and the 4-byte response header of
//! Fig. 7 that carries the responder's share (`t4 - t3`) back to the requester.
//!
//! Header layout (big-endian): request type (u8), path (u8), responder delay in units of
//! 16 ns (u16, saturating at 65535 ≈ 1.05 ms).

/// Timestamps of one request, ns. t1: enqueued to its path (requester CPU); t2: enqueued to
/// the NIC; t3: the responder's CQE; t4: the response enqueued to the responder's NIC; t5:
/// the response's receive timestamp at the requester's NIC; t6: dequeued by the requester.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Timestamps {
    /// Requester enqueues on the path.
    pub t1: u64,
    /// Requester enqueues to the NIC.
    pub t2: u64,
    /// Responder's completion.
    pub t3: u64,
    /// Responder enqueues the response.
    pub t4: u64,
    /// Requester NIC receives the response.
    pub t5: u64,
    /// Requester dequeues it.
    pub t6: u64,
}

impl Timestamps {
    /// Intra-host JCT: the requester's two shares plus the responder's, network excluded.
    /// `responder_ns` is `t4 - t3` as the header carried it.
    pub fn intra_ns(&self, responder_ns: u64) -> u64 {
        self.t2.saturating_sub(self.t1) + responder_ns + self.t6.saturating_sub(self.t5)
    }
    /// End-to-end JCT, network included.
    pub fn e2e_ns(&self) -> u64 {
        self.t6.saturating_sub(self.t1)
    }
}

/// Header size, bytes.
pub const HEADER_LEN: usize = 4;
/// Resolution of the delay field, ns.
pub const DELAY_UNIT_NS: u64 = 16;

/// The response header of Fig. 7.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// Request type index.
    pub request: u8,
    /// Path index.
    pub path: u8,
    /// `t4 - t3`, ns (rounded down to [`DELAY_UNIT_NS`], saturating).
    pub responder_ns: u64,
}

impl Header {
    /// Encodes the header.
    pub fn encode(&self) -> [u8; HEADER_LEN] {
        let d = (self.responder_ns / DELAY_UNIT_NS).min(u16::MAX as u64) as u16;
        let [a, b] = d.to_be_bytes();
        [self.request, self.path, a, b]
    }
    /// Decodes a header from the start of `buf`; `None` when it is too short.
    pub fn decode(buf: &[u8]) -> Option<Header> {
        let b: [u8; HEADER_LEN] = buf.get(..HEADER_LEN)?.try_into().ok()?;
        Some(Header {
            request: b[0],
            path: b[1],
            responder_ns: u16::from_be_bytes([b[2], b[3]]) as u64 * DELAY_UNIT_NS,
        })
    }
}

/// Decodes arbitrary bytes (the fuzz target's entry): re-encoding a decoded header gives the
/// same bytes.
pub fn fuzz_decode(data: &[u8]) {
    if let Some(h) = Header::decode(data) {
        assert_eq!(&h.encode()[..], &data[..HEADER_LEN]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jct_from_timestamps() {
        let t = Timestamps {
            t1: 100,
            t2: 350,
            t3: 5_000,
            t4: 5_400,
            t5: 9_000,
            t6: 9_120,
        };
        let h = Header {
            request: 1,
            path: 2,
            responder_ns: t.t4 - t.t3,
        };
        let back = Header::decode(&h.encode()).unwrap();
        assert_eq!(back, h);
        assert_eq!(t.intra_ns(back.responder_ns), 250 + 400 + 120);
        assert_eq!(t.e2e_ns(), 9_020);
        assert_eq!(Header::decode(&[1, 2, 3]), None);
        let big = Header {
            responder_ns: u64::MAX,
            ..h
        };
        assert_eq!(
            Header::decode(&big.encode()).unwrap().responder_ns,
            65535 * 16
        );
    }
}
