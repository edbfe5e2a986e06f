//! Fuzzes the control socket's request reader: arbitrary bytes as a request line give a request
//! or a clear error, and every key, parameter and embedded table-file value parses or fails
//! cleanly; never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = control::fuzz::ctl_request(data);
});
