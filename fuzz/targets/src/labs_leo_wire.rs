//! Fuzzes the LEO KVS message decoder (`labs::leo::wire`): arbitrary frames decode to a
//! message that round-trips, or to nothing; never a panic.

/// One input.
pub fn run(data: &[u8]) {
    labs::leo::wire::fuzz_decode(data);
}
