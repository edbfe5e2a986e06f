//! Fuzzes the STF reader: arbitrary bytes as a script give statements or a parse error with
//! line and column, and every value in them parses or fails cleanly; never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = control::fuzz::stf(data);
});
