//! cargo-fuzz's binary for `fuzz_targets::dataplane_portspec`, which fuzz/targets/src/ holds and describes;
//! fuzz/targets/tests/replay.rs runs the same function in the test run.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| fuzz_targets::dataplane_portspec::run(data));
