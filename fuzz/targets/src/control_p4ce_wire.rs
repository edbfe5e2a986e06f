//! Fuzzes the P4CE CM private-data formats (`hosts::p4ce::wire`, which the switch agent in
//! `control::p4ce` parses too): the leader's group request, a replica's offer and the agent's
//! reply parse or fail cleanly, and what parses re-encodes to the same value.

/// One input.
pub fn run(data: &[u8]) {
    hosts::p4ce::wire::fuzz_parse(data);
}
