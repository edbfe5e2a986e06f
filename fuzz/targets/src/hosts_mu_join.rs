//! Fuzzes what a replica joining the running log parses of a leader's bytes: the join word
//! (`hosts::mu::join`) and the snapshot it then READs (`hosts::p4ce::snapshot`); never a
//! panic, and what decodes re-encodes to the same bytes.

/// One input.
pub fn run(data: &[u8]) {
    hosts::mu::join::fuzz_join_word(data);
    hosts::p4ce::snapshot::fuzz_decode(data);
}
