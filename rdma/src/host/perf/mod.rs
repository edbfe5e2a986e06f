//! perftest-style benchmarks between two [`Host`](super::Host)s, the engine behind
//! `pisa rdma write-bw | write-lat | read-bw | read-lat | send-bw | send-lat`.
//!
//! Like perftest, the server runs first and waits for one connection; the client connects
//! through RDMA CM, runs the test and disconnects. The client's REQ private data carries
//! the test, the message size and its receive buffer; the server's REP private data carries
//! the server's buffer. Bandwidth tests keep `tx_depth` requests in flight; latency tests
//! run one message at a time (WRITE and SEND latency are ping-pongs reported as half the
//! round trip, as perftest does; READ latency is the full round trip).

mod client;
mod loopback;
mod proto;
mod pump;
mod server;
mod summary;

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

pub use client::run_client;
pub use loopback::{run_loopback, LOOPBACK_CLIENT, LOOPBACK_SERVER};
pub use proto::{Hello, HELLO_LEN};
pub use server::run_server;
pub use summary::{LatencySummary, PerfReport};

use super::HostError;
use crate::verbs::{Mtu, VerbsError, WcStatus};

/// The default RDMA CM port (perftest's default TCP port).
pub const DEFAULT_CM_PORT: u16 = 18515;

/// Which benchmark.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PerfTest {
    /// RDMA WRITE bandwidth.
    WriteBw,
    /// RDMA WRITE ping-pong latency.
    WriteLat,
    /// RDMA READ bandwidth.
    ReadBw,
    /// RDMA READ latency.
    ReadLat,
    /// SEND bandwidth.
    SendBw,
    /// SEND ping-pong latency.
    SendLat,
}

impl PerfTest {
    /// All tests.
    pub const ALL: [PerfTest; 6] = [
        PerfTest::WriteBw,
        PerfTest::WriteLat,
        PerfTest::ReadBw,
        PerfTest::ReadLat,
        PerfTest::SendBw,
        PerfTest::SendLat,
    ];

    /// The command name (`write-bw`, ...).
    pub fn name(self) -> &'static str {
        match self {
            PerfTest::WriteBw => "write-bw",
            PerfTest::WriteLat => "write-lat",
            PerfTest::ReadBw => "read-bw",
            PerfTest::ReadLat => "read-lat",
            PerfTest::SendBw => "send-bw",
            PerfTest::SendLat => "send-lat",
        }
    }

    /// Whether this is a latency test.
    pub fn is_latency(self) -> bool {
        matches!(
            self,
            PerfTest::WriteLat | PerfTest::ReadLat | PerfTest::SendLat
        )
    }

    fn code(self) -> u8 {
        match self {
            PerfTest::WriteBw => 1,
            PerfTest::WriteLat => 2,
            PerfTest::ReadBw => 3,
            PerfTest::ReadLat => 4,
            PerfTest::SendBw => 5,
            PerfTest::SendLat => 6,
        }
    }

    fn from_code(c: u8) -> Option<PerfTest> {
        PerfTest::ALL.into_iter().find(|t| t.code() == c)
    }
}

impl fmt::Display for PerfTest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for PerfTest {
    type Err = String;
    fn from_str(s: &str) -> Result<PerfTest, String> {
        PerfTest::ALL
            .into_iter()
            .find(|t| t.name() == s)
            .ok_or_else(|| format!("unknown test {s:?}"))
    }
}

/// Options of a run (perftest's names in brackets).
#[derive(Debug, Clone, PartialEq)]
pub struct PerfConfig {
    /// The test.
    pub test: PerfTest,
    /// Message size in bytes (`-s`).
    pub size: usize,
    /// Iterations (`-n`); ignored when `duration` is set.
    pub iterations: u64,
    /// Requests in flight for bandwidth tests (`--tx-depth`).
    pub tx_depth: usize,
    /// Run for this long instead of a number of iterations (`-D`).
    pub duration: Option<Duration>,
    /// RDMA CM port the server listens on (`-p`).
    pub cm_port: u16,
    /// Give up when nothing completes for this long.
    pub stall_timeout: Duration,
}

impl PerfConfig {
    /// perftest's defaults for `test`: 65536-byte messages for bandwidth, 2 bytes for
    /// latency; 5000 / 1000 iterations; tx depth 128.
    pub fn new(test: PerfTest) -> PerfConfig {
        PerfConfig {
            test,
            size: if test.is_latency() { 2 } else { 65536 },
            iterations: if test.is_latency() { 1000 } else { 5000 },
            tx_depth: 128,
            duration: None,
            cm_port: DEFAULT_CM_PORT,
            stall_timeout: Duration::from_secs(5),
        }
    }

    /// Checks the options against what the endpoint supports.
    pub fn validate(&self) -> Result<(), PerfError> {
        if self.size == 0 || self.size > MAX_SIZE {
            return Err(PerfError::Config(format!(
                "message size {} out of range 1..={MAX_SIZE}",
                self.size
            )));
        }
        if self.tx_depth == 0 || self.tx_depth > MAX_TX_DEPTH {
            return Err(PerfError::Config(format!(
                "tx depth {} out of range 1..={MAX_TX_DEPTH}",
                self.tx_depth
            )));
        }
        if self.duration.is_none() && self.iterations == 0 {
            return Err(PerfError::Config("iterations must be at least 1".into()));
        }
        Ok(())
    }
}

/// Largest message size (the endpoint's MRs are plain byte vectors).
pub const MAX_SIZE: usize = 1 << 26;
/// Largest tx depth.
pub const MAX_TX_DEPTH: usize = 4096;

/// Why a benchmark failed.
#[derive(Debug, thiserror::Error)]
pub enum PerfError {
    /// Bad options.
    #[error("{0}")]
    Config(String),
    /// The port loop failed.
    #[error(transparent)]
    Host(#[from] HostError),
    /// A verbs call failed.
    #[error("verbs: {0}")]
    Verbs(#[from] VerbsError),
    /// The server refused the connection.
    #[error("the server rejected the connection (reason {reason}): {detail}")]
    Rejected {
        /// IBA reject reason.
        reason: u16,
        /// Our reading of the private data.
        detail: String,
    },
    /// The server did not answer.
    #[error("no answer from {0} (is the server running, and on the same link?)")]
    Unreachable(std::net::IpAddr),
    /// A work request completed with an error.
    #[error("work request {wr_id} completed with {status:?}")]
    Completion {
        /// The request.
        wr_id: u64,
        /// Its status.
        status: WcStatus,
    },
    /// Nothing completed for the stall timeout.
    #[error("no progress for {0:?}: {1}")]
    Stalled(Duration, String),
    /// The peer disconnected in the middle of the test.
    #[error("the peer disconnected during the test")]
    PeerGone,
    /// The peer sent something this version does not understand.
    #[error("protocol: {0}")]
    Protocol(String),
}

/// Parses an MTU in bytes (256, 512, 1024, 2048, 4096).
pub fn parse_mtu(bytes: usize) -> Option<Mtu> {
    [Mtu::M256, Mtu::M512, Mtu::M1024, Mtu::M2048, Mtu::M4096]
        .into_iter()
        .find(|m| m.bytes() == bytes)
}
