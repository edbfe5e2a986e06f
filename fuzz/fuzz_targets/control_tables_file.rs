//! Fuzzes the table-file reader: arbitrary bytes as YAML give a table file or a positioned
//! error, and every key, parameter and register value parses or fails cleanly; never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = control::fuzz::tables_file(data);
});
