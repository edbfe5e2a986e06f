//! Fuzzes Acuerdo's ring reader and message decoder (`hosts::acuerdo`): arbitrary ring
//! memory, as a remote writer could leave it, yields records or nothing, and arbitrary
//! messages decode or are refused, the core counting them; never a panic.

/// One input.
pub fn run(data: &[u8]) {
    hosts::acuerdo::fuzz_input(data);
}
