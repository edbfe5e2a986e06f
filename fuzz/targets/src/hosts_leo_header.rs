//! Fuzzes LEO's response header (`hosts::leo::jct`, Fig. 7): arbitrary response bytes decode
//! to a header that re-encodes to the same bytes, or to nothing; never a panic.

/// One input.
pub fn run(data: &[u8]) {
    hosts::leo::jct::fuzz_decode(data);
}
