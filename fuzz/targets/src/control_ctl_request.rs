//! Fuzzes the control socket's request reader: arbitrary bytes as a request line give a request
//! or a clear error, and every key, parameter and embedded table-file value parses or fails
//! cleanly; never a panic.

/// One input.
pub fn run(data: &[u8]) {
    let _ = control::fuzz::ctl_request(data);
}
