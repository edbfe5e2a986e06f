//! [`AcuerdoError`]: what the protocol and its RDMA binding refuse.

/// An Acuerdo error.
#[derive(Debug, thiserror::Error)]
pub enum AcuerdoError {
    /// A bad setting.
    #[error("bad setting: {0}")]
    Config(String),
    /// A ring record or message that does not decode.
    #[error("malformed message: {0}")]
    Malformed(String),
    /// Only the leader broadcasts.
    #[error("node {0} is not the leader")]
    NotLeader(u32),
    /// The RDMA endpoint refused a verb.
    #[error("RDMA: {0}")]
    Verbs(#[from] rdma::verbs::VerbsError),
}
