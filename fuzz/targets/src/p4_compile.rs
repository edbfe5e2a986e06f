//! Fuzz target: arbitrary bytes as a P4 program through the whole frontend (preprocess, parse,
//! check, lower, resource check). It must never panic or hang; errors are fine. An input whose
//! first byte is even is raw text; an odd one drives the structure-aware generator
//! (`p4_gen.rs`: deep nesting and long chains past the frontend's limits).

use arbitrary::Unstructured;

use crate::p4_gen;

/// One input.
pub fn run(data: &[u8]) {
    match data.split_first() {
        Some((first, rest)) if first & 1 == 1 => {
            if let Ok(text) = p4_gen::program(&mut Unstructured::new(rest)) {
                let _ = p4::compile::fuzz_compile(text.as_bytes());
            }
        }
        _ => {
            let _ = p4::compile::fuzz_compile(data);
        }
    }
}
