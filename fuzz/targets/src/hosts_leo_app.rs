//! Fuzzes LEO's application-file parser (`hosts::leo::app`): arbitrary bytes as an application
//! YAML give a checked spec or a named error; never a panic.

/// One input.
pub fn run(data: &[u8]) {
    hosts::leo::app::fuzz_parse(data);
}
