//! cargo-fuzz's binary for `fuzz_targets::labs_leo_wire`, which fuzz/targets/src/ holds and describes;
//! fuzz/targets/tests/replay.rs runs the same function in the test run.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| fuzz_targets::labs_leo_wire::run(data));
