//! Fuzzes the ZooKeeper reply parsing of the Figure 9 baseline (`labs::baselines::jute`):
//! arbitrary bytes as a server's frames parse or are refused; never a panic.

/// One input.
pub fn run(data: &[u8]) {
    labs::baselines::jute::fuzz_replies(data);
}
