//! Fuzz target: arbitrary bytes as a P4 source file must never panic the frontend's syntax
//! half (preprocessor, lexer, parser); bad input only ever yields diagnostics.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    p4::fuzz_parse(data);
});
