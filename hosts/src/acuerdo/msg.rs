//! Messages on the ring buffers (Figure 4, line 5; Figure 7, lines 119–125): a header and
//! either a client payload (count ≥ 1) or, as the first message of an epoch (count 0), a
//! diff: the log entries the receiver may be missing, from its last committed header on.
//!
//! ```text
//! payload message: | hdr (12) | payload ...                                            |
//! diff message:    | hdr (12) | has_from (1) | from (12) | n (4) | n × (hdr, len (4), bytes) |
//! ```

use super::error::AcuerdoError;
use super::types::{MsgHdr, HDR_LEN};

/// A diff: the leader's log entries from `from` (the receiver's last committed header, when
/// the leader knew it) up to the leader's last accepted one.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Diff {
    /// The receiver's last committed header the diff starts at (inclusive), if known.
    pub from: Option<MsgHdr>,
    /// Entries in header order.
    pub entries: Vec<(MsgHdr, Vec<u8>)>,
}

/// What a message carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Body {
    /// A client payload.
    Payload(Vec<u8>),
    /// A new leader's diff.
    Diff(Diff),
}

/// A message: header and body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    /// Header.
    pub hdr: MsgHdr,
    /// Body.
    pub body: Body,
}

impl Message {
    /// The encoding.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(HDR_LEN + self.body_len());
        self.hdr.put(&mut out);
        match &self.body {
            Body::Payload(p) => out.extend_from_slice(p),
            Body::Diff(d) => {
                out.push(u8::from(d.from.is_some()));
                d.from.unwrap_or_default().put(&mut out);
                out.extend_from_slice(&(d.entries.len() as u32).to_le_bytes());
                for (h, b) in &d.entries {
                    h.put(&mut out);
                    out.extend_from_slice(&(b.len() as u32).to_le_bytes());
                    out.extend_from_slice(b);
                }
            }
        }
        out
    }

    fn body_len(&self) -> usize {
        match &self.body {
            Body::Payload(p) => p.len(),
            Body::Diff(d) => 17 + d.entries.iter().map(|(_, b)| 16 + b.len()).sum::<usize>(),
        }
    }

    /// Decodes a message (count 0: a diff).
    pub fn decode(b: &[u8]) -> Result<Message, AcuerdoError> {
        let short = |what: &str| AcuerdoError::Malformed(format!("{what} cut short"));
        if b.len() < HDR_LEN {
            return Err(short("header"));
        }
        let hdr = MsgHdr::get(b);
        let rest = &b[HDR_LEN..];
        if hdr.cnt != 0 {
            return Ok(Message {
                hdr,
                body: Body::Payload(rest.to_vec()),
            });
        }
        if rest.len() < 17 {
            return Err(short("diff header"));
        }
        let from = match rest[0] {
            0 => None,
            1 => Some(MsgHdr::get(&rest[1..])),
            x => return Err(AcuerdoError::Malformed(format!("diff flag {x}"))),
        };
        let n = u32::from_le_bytes([rest[13], rest[14], rest[15], rest[16]]) as usize;
        let mut at = 17;
        let mut entries = Vec::with_capacity(n.min(rest.len() / 16));
        for i in 0..n {
            if rest.len() < at + 16 {
                return Err(short(&format!("diff entry {i}")));
            }
            let h = MsgHdr::get(&rest[at..]);
            let len =
                u32::from_le_bytes([rest[at + 12], rest[at + 13], rest[at + 14], rest[at + 15]])
                    as usize;
            at += 16;
            if rest.len() < at + len {
                return Err(short(&format!("diff entry {i}'s payload")));
            }
            entries.push((h, rest[at..at + len].to_vec()));
            at += len;
        }
        if at != rest.len() {
            return Err(AcuerdoError::Malformed(format!(
                "{} bytes after the diff",
                rest.len() - at
            )));
        }
        Ok(Message {
            hdr,
            body: Body::Diff(Diff { from, entries }),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::acuerdo::types::Epoch;

    #[test]
    fn messages_and_diffs_round_trip_and_cut_ones_are_refused() {
        let e = Epoch { round: 2, ldr: 1 };
        let m = Message {
            hdr: MsgHdr { e, cnt: 7 },
            body: Body::Payload(b"hello".to_vec()),
        };
        assert_eq!(Message::decode(&m.encode()).unwrap(), m);
        let d = Message {
            hdr: MsgHdr { e, cnt: 0 },
            body: Body::Diff(Diff {
                from: Some(MsgHdr { e, cnt: 3 }),
                entries: vec![
                    (MsgHdr { e, cnt: 4 }, vec![1, 2, 3]),
                    (MsgHdr { e, cnt: 5 }, vec![]),
                ],
            }),
        };
        let b = d.encode();
        assert_eq!(Message::decode(&b).unwrap(), d);
        for cut in [5, 20, b.len() - 1] {
            assert!(Message::decode(&b[..cut]).is_err(), "cut at {cut}");
        }
    }
}
