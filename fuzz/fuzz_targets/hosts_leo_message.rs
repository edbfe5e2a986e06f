//! Fuzzes LEO's message codec over RDMA (`hosts::leo::rdma`): arbitrary received bytes decode
//! to a message that round-trips, or to nothing; never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    hosts::leo::rdma::fuzz_decode(data);
});
