//! Extern math the executor calls: CRCs and hash algorithms, the Internet checksum and the
//! parser checksum accumulator, the trTCM meter, the LPF and WRED filters, the stateful ALU's
//! math unit, and the seeded
//! random generator.
//! Everything here takes packet or control-plane data and never panics on it.

pub mod checksum;
pub mod crc;
pub mod filter;
pub mod hash;
pub mod lpf;
pub mod math_unit;
pub mod meter;
pub mod random;
pub mod red;
