//! Fuzzes the `--late-replica N@TIME` argument parser (`hosts::p4ce::bench::LateReplica`):
//! any text parses to a valid replica or is refused with a message; never a panic.

/// One input.
pub fn run(data: &[u8]) {
    hosts::p4ce::bench::fuzz_late_replica(data);
}
