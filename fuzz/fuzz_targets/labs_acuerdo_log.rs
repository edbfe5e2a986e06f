//! Fuzzes the reader of Acuerdo's delivery logs (`labs::acuerdo::bench::parse_log_line`,
//! behind `pisa acuerdo check`): arbitrary text as a line parses or is refused; never a
//! panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    labs::acuerdo::bench::fuzz_log_line(data);
});
