//! Fuzzes the replicated log's slot decoder (`hosts::mu::slot`): arbitrary log memory, as a
//! remote writer could leave it, decodes to a complete entry or to nothing; never a panic.

/// One input.
pub fn run(data: &[u8]) {
    hosts::mu::slot::fuzz_decode(data);
}
