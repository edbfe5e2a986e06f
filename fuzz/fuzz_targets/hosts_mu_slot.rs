//! Fuzzes the replicated log's slot decoder (`hosts::mu::slot`): arbitrary log memory, as a
//! remote writer could leave it, decodes to a complete entry or to nothing; never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    hosts::mu::slot::fuzz_decode(data);
});
