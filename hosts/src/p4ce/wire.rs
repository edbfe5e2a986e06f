//! The private data P4CE puts in RDMA CM messages (all integers big-endian), the one format
//! the hosts and the switch's agent (`control::p4ce::cm`) share:
//!
//! - [`GroupRequest`], in the leader's ConnectRequest to the switch (service port
//!   [`P4CE_SERVICE_PORT`] at the switch IP): `'P'`, version 1, group id, f, replica count n
//!   (1..=4), one reserved byte, the leader's endpoint id (u16), then per replica its IPv4
//!   address (4 bytes), its CM service port (u16) and its endpoint id (u16). 8 + 8·n bytes,
//!   within the 56 bytes a REQ leaves after the rdma_cm header.
//! - [`ReplicaOffer`], in a replica's ConnectReply to the agent: `'R'`, version 1, two reserved
//!   bytes, the log's R_key (u32), base VA (u64) and size (u64): 24 bytes.
//! - [`GroupReply`], in the agent's ConnectReply to the leader: `'G'`, version 1, group id, one
//!   reserved byte, the virtual R_key (u32), the virtual VA (u64, always 0) and the virtual
//!   size (u64, the smallest replica log): 24 bytes.

use std::net::Ipv4Addr;

use super::MAX_REPLICAS;

/// The rdma_cm (TCP port space) port the P4CE agent listens on at the switch IP.
pub const P4CE_SERVICE_PORT: u16 = 4791;
const VERSION: u8 = 1;

/// Private data that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    /// Fewer bytes than the format needs.
    #[error("{what}: {len} bytes, {need} needed")]
    Short {
        /// Which message.
        what: &'static str,
        /// Bytes given.
        len: usize,
        /// Bytes needed.
        need: usize,
    },
    /// Wrong magic byte or version.
    #[error("{0}: not P4CE private data (magic or version)")]
    Magic(&'static str),
    /// A field out of range.
    #[error("{what}: {reason}")]
    Bad {
        /// Which message.
        what: &'static str,
        /// What is wrong.
        reason: String,
    },
}

/// A replica as the leader names it in its request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReplicaAddr {
    /// Its IPv4 address.
    pub ip: Ipv4Addr,
    /// The rdma_cm port it listens on.
    pub port: u16,
    /// Its endpoint id (also the RID of its multicast node).
    pub ep: u16,
}

/// The leader's request: which group to build (see the module docs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupRequest {
    /// Group index.
    pub group: u8,
    /// Replica ACKs per commit.
    pub f: u8,
    /// The leader's endpoint id.
    pub leader_ep: u16,
    /// The replicas.
    pub replicas: Vec<ReplicaAddr>,
}

fn u16_at(b: &[u8], i: usize) -> u16 {
    u16::from_be_bytes([b[i], b[i + 1]])
}

fn u32_at(b: &[u8], i: usize) -> u32 {
    u32::from_be_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]])
}

fn u64_at(b: &[u8], i: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[i..i + 8]);
    u64::from_be_bytes(a)
}

fn need(what: &'static str, b: &[u8], n: usize) -> Result<(), WireError> {
    if b.len() < n {
        return Err(WireError::Short {
            what,
            len: b.len(),
            need: n,
        });
    }
    Ok(())
}

impl GroupRequest {
    /// Encoded length.
    pub fn len(&self) -> usize {
        8 + 8 * self.replicas.len()
    }

    /// Whether it names no replica (never valid on the wire).
    pub fn is_empty(&self) -> bool {
        self.replicas.is_empty()
    }

    /// Encodes; refuses more than [`MAX_REPLICAS`] replicas or none.
    pub fn to_bytes(&self) -> Result<Vec<u8>, WireError> {
        let n = self.replicas.len();
        if n == 0 || n > MAX_REPLICAS {
            return Err(WireError::Bad {
                what: "group request",
                reason: format!("{n} replicas (1 to {MAX_REPLICAS})"),
            });
        }
        let mut b = vec![b'P', VERSION, self.group, self.f, n as u8, 0];
        b.extend_from_slice(&self.leader_ep.to_be_bytes());
        for r in &self.replicas {
            b.extend_from_slice(&r.ip.octets());
            b.extend_from_slice(&r.port.to_be_bytes());
            b.extend_from_slice(&r.ep.to_be_bytes());
        }
        Ok(b)
    }

    /// Decodes (trailing bytes, the REQ's zero padding, are ignored).
    pub fn parse(b: &[u8]) -> Result<GroupRequest, WireError> {
        const W: &str = "group request";
        need(W, b, 8)?;
        if b[0] != b'P' || b[1] != VERSION {
            return Err(WireError::Magic(W));
        }
        let n = usize::from(b[4]);
        if n == 0 || n > MAX_REPLICAS {
            return Err(WireError::Bad {
                what: W,
                reason: format!("{n} replicas (1 to {MAX_REPLICAS})"),
            });
        }
        need(W, b, 8 + 8 * n)?;
        let replicas = (0..n)
            .map(|i| {
                let o = 8 + 8 * i;
                ReplicaAddr {
                    ip: Ipv4Addr::new(b[o], b[o + 1], b[o + 2], b[o + 3]),
                    port: u16_at(b, o + 4),
                    ep: u16_at(b, o + 6),
                }
            })
            .collect();
        Ok(GroupRequest {
            group: b[2],
            f: b[3],
            leader_ep: u16_at(b, 6),
            replicas,
        })
    }
}

/// A replica's log as it offers it to the agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReplicaOffer {
    /// The log's R_key.
    pub rkey: u32,
    /// Base address.
    pub va: u64,
    /// Size in bytes.
    pub size: u64,
}

/// Encoded length of [`ReplicaOffer`] and [`GroupReply`].
pub const OFFER_LEN: usize = 24;

impl ReplicaOffer {
    /// Encodes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut b = vec![b'R', VERSION, 0, 0];
        b.extend_from_slice(&self.rkey.to_be_bytes());
        b.extend_from_slice(&self.va.to_be_bytes());
        b.extend_from_slice(&self.size.to_be_bytes());
        b
    }

    /// Decodes.
    pub fn parse(b: &[u8]) -> Result<ReplicaOffer, WireError> {
        const W: &str = "replica offer";
        need(W, b, OFFER_LEN)?;
        if b[0] != b'R' || b[1] != VERSION {
            return Err(WireError::Magic(W));
        }
        Ok(ReplicaOffer {
            rkey: u32_at(b, 4),
            va: u64_at(b, 8),
            size: u64_at(b, 16),
        })
    }
}

/// The agent's answer to the leader: the virtual buffer behind the BCast QP.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GroupReply {
    /// Group index.
    pub group: u8,
    /// The virtual R_key.
    pub vrkey: u32,
    /// The virtual VA (0).
    pub va: u64,
    /// The virtual size.
    pub size: u64,
}

impl GroupReply {
    /// Encodes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut b = vec![b'G', VERSION, self.group, 0];
        b.extend_from_slice(&self.vrkey.to_be_bytes());
        b.extend_from_slice(&self.va.to_be_bytes());
        b.extend_from_slice(&self.size.to_be_bytes());
        b
    }

    /// Decodes.
    pub fn parse(b: &[u8]) -> Result<GroupReply, WireError> {
        const W: &str = "group reply";
        need(W, b, OFFER_LEN)?;
        if b[0] != b'G' || b[1] != VERSION {
            return Err(WireError::Magic(W));
        }
        Ok(GroupReply {
            group: b[2],
            vrkey: u32_at(b, 4),
            va: u64_at(b, 8),
            size: u64_at(b, 16),
        })
    }
}

/// Fuzz entry: arbitrary bytes as each message; whatever parses re-encodes to a message
/// that parses to the same value, and nothing panics.
pub fn fuzz_parse(data: &[u8]) {
    if let Ok(r) = GroupRequest::parse(data) {
        let b = r.to_bytes().expect("a parsed request re-encodes");
        assert_eq!(GroupRequest::parse(&b).as_ref(), Ok(&r));
    }
    if let Ok(o) = ReplicaOffer::parse(data) {
        assert_eq!(ReplicaOffer::parse(&o.to_bytes()), Ok(o));
    }
    if let Ok(g) = GroupReply::parse(data) {
        assert_eq!(GroupReply::parse(&g.to_bytes()), Ok(g));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_round_trip_and_padding_ignored() {
        let r = GroupRequest {
            group: 3,
            f: 2,
            leader_ep: 1,
            replicas: (2..6)
                .map(|i| ReplicaAddr {
                    ip: Ipv4Addr::new(10, 0, 0, i),
                    port: 7000 + u16::from(i),
                    ep: u16::from(i),
                })
                .collect(),
        };
        let mut b = r.to_bytes().unwrap();
        assert_eq!(b.len(), 40);
        b.extend_from_slice(&[0; 16]);
        assert_eq!(GroupRequest::parse(&b).unwrap(), r);
    }

    #[test]
    fn request_refuses_bad_input() {
        assert!(matches!(
            GroupRequest::parse(&[b'P', 1, 1, 1, 2, 0, 0, 1, 10, 0, 0, 2]),
            Err(WireError::Short { need: 24, .. })
        ));
        assert!(matches!(
            GroupRequest::parse(&[b'X', 1, 1, 1, 1, 0, 0, 1]),
            Err(WireError::Magic(_))
        ));
        assert!(matches!(
            GroupRequest::parse(&[b'P', 1, 1, 1, 5, 0, 0, 1]),
            Err(WireError::Bad { .. })
        ));
        let empty = GroupRequest {
            group: 1,
            f: 1,
            leader_ep: 1,
            replicas: vec![],
        };
        assert!(empty.to_bytes().is_err());
    }

    #[test]
    fn fuzz_entry_takes_any_bytes() {
        for n in 0..64u8 {
            let mut b: Vec<u8> = (0..n).map(|i| i.wrapping_mul(37)).collect();
            fuzz_parse(&b);
            if !b.is_empty() {
                b[0] = b'P';
            }
            if b.len() > 4 {
                b[1] = 1;
                b[4] = 2;
            }
            fuzz_parse(&b);
        }
    }

    #[test]
    fn offer_and_reply_round_trip() {
        let o = ReplicaOffer {
            rkey: 0x1234_5678,
            va: 0xdead_beef_0000,
            size: 1 << 20,
        };
        assert_eq!(ReplicaOffer::parse(&o.to_bytes()).unwrap(), o);
        assert!(ReplicaOffer::parse(&o.to_bytes()[..20]).is_err());
        let g = GroupReply {
            group: 7,
            vrkey: 0xcafe,
            va: 0,
            size: 4096,
        };
        assert_eq!(GroupReply::parse(&g.to_bytes()).unwrap(), g);
        assert!(GroupReply::parse(&o.to_bytes()).is_err());
    }
}
