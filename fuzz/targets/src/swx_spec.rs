//! DPDK SWX `.spec` reader (`dataplane::swx_spec`): any text reads or errors, never panics.

/// One input.
pub fn run(data: &[u8]) {
    if let Ok(text) = std::str::from_utf8(data) {
        if let Ok(stmts) = dataplane::swx_spec::parse(text) {
            let _ = dataplane::swx_spec::check_no_drop(&stmts);
        }
    }
}
