//! Fuzzes the STF reader: arbitrary bytes as a script give statements or a parse error with
//! line and column, and every value in them parses or fails cleanly; never a panic.

/// One input.
pub fn run(data: &[u8]) {
    let _ = control::fuzz::stf(data);
}
