//! Fuzz target: arbitrary frames, framed transport headers with valid ICRC, time
//! jumps and frame exchange into a pair of endpoints with established RC and UD QPs;
//! nothing may panic or hang.

/// One input.
pub fn run(data: &[u8]) {
    rdma::verbs::fuzzing::fuzz_endpoint(data);
}
