//! The LEO KVS message on the wire (what leo_kvs.p4 parses): Ethernet, IPv4 (the request's
//! sequence number in the identification field), UDP to port 9191, the 4-byte LEO header of
//! Fig. 7 (`hosts::leo::jct::Header`: op, path, responder delay) and the key and value.

use hosts::leo::jct::{Header, HEADER_LEN};

/// UDP port of LEO messages.
pub const LEO_PORT: u16 = 9191;
/// Ops (the header's first byte).
pub const OP_GET: u8 = 1;
/// A PUT.
pub const OP_PUT: u8 = 2;
/// A reply.
pub const OP_REPLY: u8 = 3;
/// Path byte of a reply made in the switch.
pub const PATH_IN_NETWORK: u8 = 0xfe;
/// Frame length.
pub const FRAME_LEN: usize = 14 + 20 + 8 + HEADER_LEN + 16;

/// One message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Msg {
    /// Source and destination MACs.
    pub mac: ([u8; 6], [u8; 6]),
    /// Source and destination IPv4 addresses.
    pub ip: ([u8; 4], [u8; 4]),
    /// Source and destination UDP ports.
    pub port: (u16, u16),
    /// Sequence number (IPv4 identification).
    pub seq: u16,
    /// The LEO header.
    pub hdr: Header,
    /// Key.
    pub key: u64,
    /// Value.
    pub value: u64,
}

fn ipv4_checksum(h: &[u8]) -> u16 {
    let mut sum: u32 = h
        .chunks(2)
        .map(|w| u32::from(u16::from_be_bytes([w[0], w[1]])))
        .sum();
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

impl Msg {
    /// The frame.
    pub fn encode(&self) -> Vec<u8> {
        let mut f = Vec::with_capacity(FRAME_LEN);
        f.extend_from_slice(&self.mac.1);
        f.extend_from_slice(&self.mac.0);
        f.extend_from_slice(&0x0800u16.to_be_bytes());
        let ip_len = (FRAME_LEN - 14) as u16;
        let mut ip = [0u8; 20];
        ip[0] = 0x45;
        ip[2..4].copy_from_slice(&ip_len.to_be_bytes());
        ip[4..6].copy_from_slice(&self.seq.to_be_bytes());
        ip[8] = 64;
        ip[9] = 17;
        ip[12..16].copy_from_slice(&self.ip.0);
        ip[16..20].copy_from_slice(&self.ip.1);
        let c = ipv4_checksum(&ip);
        ip[10..12].copy_from_slice(&c.to_be_bytes());
        f.extend_from_slice(&ip);
        f.extend_from_slice(&self.port.0.to_be_bytes());
        f.extend_from_slice(&self.port.1.to_be_bytes());
        f.extend_from_slice(&(ip_len - 20).to_be_bytes());
        f.extend_from_slice(&[0, 0]);
        f.extend_from_slice(&self.hdr.encode());
        f.extend_from_slice(&self.key.to_be_bytes());
        f.extend_from_slice(&self.value.to_be_bytes());
        f
    }

    /// Parses a frame; `None` for anything that is not an intact LEO message.
    pub fn decode(f: &[u8]) -> Option<Msg> {
        if f.len() < FRAME_LEN || f[12..14] != [0x08, 0x00] || f[14] != 0x45 || f[23] != 17 {
            return None;
        }
        if ipv4_checksum(&f[14..34]) != 0 {
            return None;
        }
        let u16_at = |i: usize| u16::from_be_bytes([f[i], f[i + 1]]);
        let u64_at = |i: usize| u64::from_be_bytes(f[i..i + 8].try_into().unwrap_or([0; 8]));
        let port = (u16_at(34), u16_at(36));
        if port.0 != LEO_PORT && port.1 != LEO_PORT {
            return None;
        }
        Some(Msg {
            mac: (f[6..12].try_into().ok()?, f[0..6].try_into().ok()?),
            ip: (f[26..30].try_into().ok()?, f[30..34].try_into().ok()?),
            port,
            seq: u16_at(18),
            hdr: Header::decode(&f[42..])?,
            key: u64_at(42 + HEADER_LEN),
            value: u64_at(50 + HEADER_LEN),
        })
    }
}

/// Decodes arbitrary bytes as a frame (the fuzz target's entry): a decoded message re-encodes
/// to a frame that decodes to the same message; never a panic.
pub fn fuzz_decode(data: &[u8]) {
    if let Some(m) = Msg::decode(data) {
        assert_eq!(Msg::decode(&m.encode()), Some(m));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_refusals() {
        let m = Msg {
            mac: ([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2]),
            ip: ([10, 0, 1, 1], [10, 0, 1, 2]),
            port: (40000, LEO_PORT),
            seq: 7,
            hdr: Header {
                request: OP_GET,
                path: 1,
                responder_ns: 0,
            },
            key: 42,
            value: 0,
        };
        let f = m.encode();
        assert_eq!(f.len(), FRAME_LEN);
        assert_eq!(Msg::decode(&f), Some(m));
        let mut bad = f.clone();
        bad[20] ^= 1;
        assert_eq!(Msg::decode(&bad), None, "IPv4 checksum");
        assert_eq!(Msg::decode(&f[..40]), None);
    }
}
