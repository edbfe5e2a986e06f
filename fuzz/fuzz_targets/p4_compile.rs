//! Fuzz target: arbitrary bytes as a P4 program through the whole frontend (preprocess, parse,
//! check, lower, resource check). It must never panic or hang; errors are fine.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = p4::compile::fuzz_compile(data);
});
