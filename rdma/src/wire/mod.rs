//! RoCEv2 wire formats, smoltcp style: for each header a zero-copy `XxxPacket<T>` view
//! (`new_checked` verifies the length, getters, setters on mutable buffers) and an
//! `XxxRepr` with `parse`, `emit` and `buffer_len`; plus whole frames in [`RocePacketRepr`].

mod aeth;
mod atomic;
mod bth;
pub mod cm;
mod cnp;
mod deth;
mod error;
mod field;
mod frame;
mod headers;
mod immdt;
pub mod mad;
mod opcode;
mod reth;

pub use aeth::{
    credit_code_for, credits_for_code, rnr_timer_ns, AethPacket, AethRepr, NakCode, Syndrome,
    CREDITS_UNLIMITED, CREDIT_TABLE, RNR_TIMER_US,
};
pub use atomic::{AtomicAckEthPacket, AtomicAckEthRepr, AtomicEthPacket, AtomicEthRepr};
pub use bth::{BthPacket, BthRepr};
pub use cm::{CmMad, CmMessage, CmaIpHeader};
pub use cnp::{CnpPacket, CnpRepr};
pub use deth::{DethPacket, DethRepr};
pub use error::WireError;
pub use frame::{
    locate, EthRepr, IpFields, Ipv4Fields, Ipv6Fields, RoceFrame, RoceOffsets, RocePacketRepr,
    MIN_FRAME_LEN, ROCE_UDP_PORT,
};
pub use headers::RoceHeaders;
pub use immdt::{IethPacket, IethRepr, ImmDtPacket, ImmDtRepr};
pub use mad::{MadPacket, MadRepr};
pub use opcode::{ExtHeader, Opcode, Operation, Transport};
pub use reth::{RethPacket, RethRepr};

/// Q_Key of the general services interface (QP1), used by CM MADs.
pub const GSI_QKEY: u32 = 0x8001_0000;

/// 24-bit PSN arithmetic.
pub mod psn {
    /// PSN modulus mask.
    pub const MASK: u32 = 0x00FF_FFFF;

    /// `a + n` modulo 2^24.
    pub fn add(a: u32, n: u32) -> u32 {
        a.wrapping_add(n) & MASK
    }

    /// Signed distance `a - b` in the ±2^23 window: > 0 when `a` is ahead of `b`.
    pub fn diff(a: u32, b: u32) -> i32 {
        (a.wrapping_sub(b) << 8) as i32 >> 8
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn wraps_and_compares() {
            assert_eq!(add(0xFF_FFFF, 1), 0);
            assert_eq!(diff(0, 0xFF_FFFF), 1);
            assert_eq!(diff(0xFF_FFFF, 0), -1);
            assert_eq!(diff(5, 5), 0);
            assert_eq!(diff(0x40_0000, 0), 0x40_0000);
            assert!(diff(0x90_0000, 0) < 0);
        }
    }
}

#[cfg(test)]
mod frame_tests;
