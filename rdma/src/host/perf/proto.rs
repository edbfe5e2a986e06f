//! The private data the two sides of a benchmark exchange in the CM REQ and REP: a magic
//! byte and version, the test, the message size and the sender's target buffer (address
//! and rkey). Both are fixed-size, big-endian, and fit the REQ's 56 bytes after the
//! rdma_cm IP header.

use super::{PerfError, PerfTest};

const MAGIC: u8 = b'P';
const VERSION: u8 = 1;
/// Encoded length of a [`Hello`].
pub const HELLO_LEN: usize = 20;
const LEN: usize = HELLO_LEN;

/// What one side tells the other in its CM private data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hello {
    /// The test the sender runs.
    pub test: PerfTest,
    /// Message size in bytes.
    pub size: u32,
    /// Where the peer may WRITE (latency tests) or READ (read tests).
    pub addr: u64,
    /// The rkey of that buffer.
    pub rkey: u32,
}

impl Hello {
    /// Encodes it.
    pub fn to_bytes(self) -> [u8; LEN] {
        let mut b = [0u8; LEN];
        b[0] = MAGIC;
        b[1] = VERSION;
        b[2] = self.test.code();
        b[4..8].copy_from_slice(&self.size.to_be_bytes());
        b[8..16].copy_from_slice(&self.addr.to_be_bytes());
        b[16..20].copy_from_slice(&self.rkey.to_be_bytes());
        b
    }

    /// Parses the start of a private-data block (CM pads private data with zeros).
    pub fn parse(b: &[u8]) -> Result<Hello, PerfError> {
        let b: &[u8; LEN] = b
            .get(..LEN)
            .and_then(|s| s.try_into().ok())
            .ok_or_else(|| PerfError::Protocol(format!("private data of {} bytes", b.len())))?;
        if b[0] != MAGIC {
            return Err(PerfError::Protocol(
                "private data is not from pisa rdma (bad magic)".into(),
            ));
        }
        if b[1] != VERSION {
            return Err(PerfError::Protocol(format!(
                "peer speaks version {}, we speak {VERSION}",
                b[1]
            )));
        }
        let test = PerfTest::from_code(b[2])
            .ok_or_else(|| PerfError::Protocol(format!("unknown test code {}", b[2])))?;
        let u32_at = |i: usize| u32::from_be_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
        let mut addr = [0u8; 8];
        addr.copy_from_slice(&b[8..16]);
        Ok(Hello {
            test,
            size: u32_at(4),
            addr: u64::from_be_bytes(addr),
            rkey: u32_at(16),
        })
    }
}

/// Reject private data: a short reason the client prints.
pub(crate) fn reject_reason(msg: &str) -> Vec<u8> {
    let mut v = b"pisa:".to_vec();
    v.extend(msg.bytes().take(100));
    v
}

/// Reads what `reject_reason` wrote.
pub(crate) fn read_reject(data: &[u8]) -> String {
    match data.strip_prefix(b"pisa:") {
        Some(rest) => {
            let end = rest.iter().position(|&c| c == 0).unwrap_or(rest.len());
            String::from_utf8_lossy(&rest[..end]).into_owned()
        }
        None => "no reason given".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hello_round_trips_with_padding() {
        let h = Hello {
            test: PerfTest::ReadLat,
            size: 4096,
            addr: 0x1234_5678_9abc,
            rkey: 0xdead_beef,
        };
        let mut padded = h.to_bytes().to_vec();
        padded.resize(56, 0);
        assert_eq!(Hello::parse(&padded).unwrap(), h);
    }

    #[test]
    fn bad_hello_is_an_error() {
        let h = Hello {
            test: PerfTest::WriteBw,
            size: 1,
            addr: 0,
            rkey: 0,
        };
        let mut b = h.to_bytes();
        assert!(Hello::parse(&b[..10]).is_err());
        b[0] = b'X';
        assert!(Hello::parse(&b).is_err());
        b[0] = MAGIC;
        b[2] = 99;
        assert!(Hello::parse(&b).is_err());
        b[2] = 1;
        b[1] = 7;
        assert!(Hello::parse(&b).is_err());
    }

    #[test]
    fn reject_reason_round_trips() {
        let mut r = reject_reason("test mismatch");
        r.resize(148, 0);
        assert_eq!(read_reject(&r), "test mismatch");
        assert_eq!(read_reject(&[0; 10]), "no reason given");
    }
}
