//! Fuzz target: arbitrary bytes as a P4 source file must never panic the frontend's syntax
//! half (preprocessor, lexer, parser); bad input only ever yields diagnostics. An input whose
//! first byte is even is raw text; an odd one drives the structure-aware generator
//! (`p4_gen.rs`: deep nesting and long chains past the frontend's limits).

use arbitrary::Unstructured;

use crate::p4_gen;

/// One input.
pub fn run(data: &[u8]) {
    match data.split_first() {
        Some((first, rest)) if first & 1 == 1 => {
            if let Ok(text) = p4_gen::program(&mut Unstructured::new(rest)) {
                p4::fuzz_parse(text.as_bytes());
            }
        }
        _ => {
            p4::fuzz_parse(data);
        }
    }
}
