//! Fuzz target: arbitrary bytes as the CM private data of a `pisa rdma` benchmark peer;
//! parsing never panics, and whatever parses re-encodes to the same first 20 bytes.

use rdma::host::perf::{Hello, HELLO_LEN};

/// One input.
pub fn run(data: &[u8]) {
    if let Ok(h) = Hello::parse(data) {
        let again = h.to_bytes();
        assert_eq!(Hello::parse(&again).ok(), Some(h));
        assert_eq!(again[..2], data[..2]);
        assert_eq!(again[4..HELLO_LEN], data[4..HELLO_LEN]);
    }
}
