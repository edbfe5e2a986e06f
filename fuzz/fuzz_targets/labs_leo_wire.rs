//! Fuzzes the LEO KVS message decoder (`labs::leo::wire`): arbitrary frames decode to a
//! message that round-trips, or to nothing; never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    labs::leo::wire::fuzz_decode(data);
});
