//! Fuzzes the ZooKeeper reply parsing of the Figure 9 baseline (`labs::baselines::jute`):
//! arbitrary bytes as a server's frames parse or are refused; never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    labs::baselines::jute::fuzz_replies(data);
});
