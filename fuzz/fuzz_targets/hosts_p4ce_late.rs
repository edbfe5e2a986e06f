//! Fuzzes the `--late-replica N@TIME` argument parser (`hosts::p4ce::bench::LateReplica`):
//! any text parses to a valid replica or is refused with a message; never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    hosts::p4ce::bench::fuzz_late_replica(data);
});
