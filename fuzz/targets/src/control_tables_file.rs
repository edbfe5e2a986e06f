//! Fuzzes the table-file reader: arbitrary bytes as YAML give a table file or a positioned
//! error, and every key, parameter and register value parses or fails cleanly; never a panic.

/// One input.
pub fn run(data: &[u8]) {
    let _ = control::fuzz::tables_file(data);
}
