//! The 1Pipe header as `p4/programs/onepipe.p4` reads it, behind UDP destination port
//! [`UDP_PORT`]: message timestamp (48 bits), best-effort and commit barriers (the low 32 bits
//! of 48-bit timestamps, serial arithmetic), PSN (24 bits), opcode (8 bits) — 18 bytes.

use thiserror::Error;

/// The UDP destination port of 1Pipe packets.
pub const UDP_PORT: u16 = 20304;
/// Bytes of the 1Pipe header.
pub const HEADER_LEN: usize = 18;

/// What a 1Pipe packet is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Opcode {
    /// A message (or a fragment of one) best effort.
    Data = 1,
    /// The end-to-end acknowledgement of a PSN.
    Ack = 2,
    /// A message of reliable 1Pipe (delivered once the commit barrier passes it).
    ReliableData = 3,
    /// Barriers only, hop by hop.
    Beacon = 4,
    /// A receiver refused a message below its delivered barrier.
    Nak = 5,
    /// §5's recall: the sender aborts its scattering at this timestamp (a receiver of it
    /// failed); receivers discard it and ACK (reliable, retransmitted like a message).
    Recall = 6,
}

impl Opcode {
    fn from_u8(v: u8) -> Option<Opcode> {
        Some(match v {
            1 => Opcode::Data,
            2 => Opcode::Ack,
            3 => Opcode::ReliableData,
            4 => Opcode::Beacon,
            5 => Opcode::Nak,
            6 => Opcode::Recall,
            _ => return None,
        })
    }
}

/// A 1Pipe header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// The message timestamp, 48 bits.
    pub ts: u64,
    /// The best-effort barrier, low 32 bits.
    pub be: u32,
    /// The commit barrier, low 32 bits.
    pub commit: u32,
    /// Packet sequence number per (source, destination), 24 bits.
    pub psn: u32,
    pub opcode: Opcode,
}

/// A packet that is not a 1Pipe header.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum WireError {
    #[error("1Pipe header truncated: {0} bytes, need {HEADER_LEN}")]
    Truncated(usize),
    #[error("1Pipe header: unknown opcode {0}")]
    Opcode(u8),
}

impl Header {
    /// Reads a header; the rest of `bytes` is the payload.
    pub fn parse(bytes: &[u8]) -> Result<(Header, &[u8]), WireError> {
        if bytes.len() < HEADER_LEN {
            return Err(WireError::Truncated(bytes.len()));
        }
        let be48 = |b: &[u8]| b.iter().fold(0u64, |a, &x| a << 8 | u64::from(x));
        let opcode = Opcode::from_u8(bytes[17]).ok_or(WireError::Opcode(bytes[17]))?;
        let h = Header {
            ts: be48(&bytes[0..6]),
            be: be48(&bytes[6..10]) as u32,
            commit: be48(&bytes[10..14]) as u32,
            psn: be48(&bytes[14..17]) as u32,
            opcode,
        };
        Ok((h, &bytes[HEADER_LEN..]))
    }

    /// Appends the header to `out`.
    pub fn write(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&(self.ts & super::ts::MASK).to_be_bytes()[2..]);
        out.extend_from_slice(&self.be.to_be_bytes());
        out.extend_from_slice(&self.commit.to_be_bytes());
        out.extend_from_slice(&(self.psn & 0xff_ffff).to_be_bytes()[1..]);
        out.push(self.opcode as u8);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_header_round_trips_and_bad_ones_are_refused() {
        let h = Header {
            ts: 0xabcd_0123_4567,
            be: 0x0123_4567,
            commit: 7,
            psn: 0x12_3456,
            opcode: Opcode::ReliableData,
        };
        let mut b = Vec::new();
        h.write(&mut b);
        b.extend_from_slice(b"hi");
        assert_eq!(b.len(), HEADER_LEN + 2);
        assert_eq!(Header::parse(&b).unwrap(), (h, &b"hi"[..]));
        assert_eq!(Header::parse(&b[..17]), Err(WireError::Truncated(17)));
        b[17] = 9;
        assert_eq!(Header::parse(&b), Err(WireError::Opcode(9)));
    }
}
