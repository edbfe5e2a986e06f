//! Fuzzes LEO's message codec over RDMA (`hosts::leo::rdma`): arbitrary received bytes decode
//! to a message that round-trips, or to nothing; never a panic.

/// One input.
pub fn run(data: &[u8]) {
    hosts::leo::rdma::fuzz_decode(data);
}
