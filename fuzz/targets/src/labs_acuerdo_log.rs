//! Fuzzes the reader of Acuerdo's delivery logs (`labs::acuerdo::bench::parse_log_line`,
//! behind `pisa acuerdo check`): arbitrary text as a line parses or is refused; never a
//! panic.

/// One input.
pub fn run(data: &[u8]) {
    labs::acuerdo::bench::fuzz_log_line(data);
}
