//! Extern math the executor calls: CRCs and hash algorithms, the Internet checksum and the
//! parser checksum accumulator, the trTCM meter, the LPF and WRED filters, and the seeded
//! random generator.
//! Everything here takes packet or control-plane data and never panics on it.

pub mod checksum;
pub mod crc;
pub mod filter;
pub mod hash;
pub mod meter;
pub mod random;
