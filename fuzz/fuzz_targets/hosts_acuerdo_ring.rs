//! Fuzzes Acuerdo's ring reader and message decoder (`hosts::acuerdo`): arbitrary ring
//! memory, as a remote writer could leave it, yields records or nothing, and arbitrary
//! messages decode or are refused, the core counting them; never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    hosts::acuerdo::fuzz_input(data);
});
