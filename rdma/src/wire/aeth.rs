//! ACK Extended Transport Header (4 bytes): syndrome and MSN, plus the syndrome's
//! decoding (ACK with credit count, RNR NAK with timer, NAK codes) and the credit and
//! RNR-timer tables of IBA (as rdmavt/rxe encode them).

use super::field::{check_bits, get_u24, header_view, set_u24};
use super::WireError;

header_view!(
    /// Zero-copy view of an AETH.
    AethPacket,
    4,
    "AETH"
);

impl<T: AsRef<[u8]>> AethPacket<T> {
    /// Raw syndrome byte.
    pub fn syndrome_byte(&self) -> u8 {
        self.buffer.as_ref()[0]
    }
    /// Message sequence number (24 bits).
    pub fn msn(&self) -> u32 {
        get_u24(self.buffer.as_ref(), 1)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> AethPacket<T> {
    /// Sets the raw syndrome byte.
    pub fn set_syndrome_byte(&mut self, v: u8) {
        self.buffer.as_mut()[0] = v;
    }
    /// Sets the MSN (low 24 bits).
    pub fn set_msn(&mut self, v: u32) {
        set_u24(self.buffer.as_mut(), 1, v);
    }
}

/// Credits advertised by ACK credit codes 0..=30 (code 31 = no credit limit).
pub const CREDIT_TABLE: [u32; 31] = [
    0, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536,
    2048, 3072, 4096, 6144, 8192, 12288, 16384, 24576, 32768,
];

/// Credit code meaning "no end-to-end credit limit".
pub const CREDITS_UNLIMITED: u8 = 0x1F;

/// Minimum RNR NAK timer per 5-bit code, in microseconds (code 0 is the longest).
pub const RNR_TIMER_US: [u32; 32] = [
    655_360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960, 1280, 1920, 2560, 3840,
    5120, 7680, 10240, 15360, 20480, 30720, 40960, 61440, 81920, 122_880, 163_840, 245_760,
    327_680, 491_520,
];

/// Credits for a code; `None` means unlimited (code 31).
pub fn credits_for_code(code: u8) -> Option<u32> {
    CREDIT_TABLE.get(usize::from(code & 0x1F)).copied()
}

/// The largest credit code whose credits do not exceed `available` receive WQEs.
pub fn credit_code_for(available: u32) -> u8 {
    let n = CREDIT_TABLE.partition_point(|&c| c <= available);
    // n >= 1 because CREDIT_TABLE[0] == 0 <= anything.
    (n.saturating_sub(1)) as u8
}

/// RNR timer of a code in nanoseconds.
pub fn rnr_timer_ns(code: u8) -> u64 {
    u64::from(RNR_TIMER_US[usize::from(code & 0x1F)]) * 1000
}

/// NAK codes (syndrome 0b011x_xxxx).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NakCode {
    /// PSN sequence error (0).
    PsnSequenceError,
    /// Invalid request (1).
    InvalidRequest,
    /// Remote access error (2).
    RemoteAccessError,
    /// Remote operational error (3).
    RemoteOperationalError,
    /// Invalid RD request (4).
    InvalidRdRequest,
    /// Reserved codes 5..=31.
    Reserved(u8),
}

impl NakCode {
    fn from_bits(v: u8) -> NakCode {
        match v {
            0 => NakCode::PsnSequenceError,
            1 => NakCode::InvalidRequest,
            2 => NakCode::RemoteAccessError,
            3 => NakCode::RemoteOperationalError,
            4 => NakCode::InvalidRdRequest,
            v => NakCode::Reserved(v & 0x1F),
        }
    }
    fn bits(self) -> u8 {
        match self {
            NakCode::PsnSequenceError => 0,
            NakCode::InvalidRequest => 1,
            NakCode::RemoteAccessError => 2,
            NakCode::RemoteOperationalError => 3,
            NakCode::InvalidRdRequest => 4,
            NakCode::Reserved(v) => v & 0x1F,
        }
    }
}

/// A decoded AETH syndrome.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Syndrome {
    /// Positive ACK with a credit code (31 = unlimited).
    Ack {
        /// Credit code 0..=31.
        credit_code: u8,
    },
    /// Receiver not ready; retry after the timer of `timer_code`.
    RnrNak {
        /// RNR timer code 0..=31.
        timer_code: u8,
    },
    /// Negative acknowledgement.
    Nak(NakCode),
    /// Type 0b10 or bit 7 set: reserved, kept raw.
    Reserved(u8),
}

impl Syndrome {
    /// Decodes a syndrome byte.
    pub fn from_byte(b: u8) -> Syndrome {
        if b & 0x80 != 0 {
            return Syndrome::Reserved(b);
        }
        let v = b & 0x1F;
        match (b >> 5) & 0x3 {
            0 => Syndrome::Ack { credit_code: v },
            1 => Syndrome::RnrNak { timer_code: v },
            3 => Syndrome::Nak(NakCode::from_bits(v)),
            _ => Syndrome::Reserved(b),
        }
    }

    /// Encodes the syndrome byte.
    pub fn to_byte(self) -> u8 {
        match self {
            Syndrome::Ack { credit_code } => credit_code & 0x1F,
            Syndrome::RnrNak { timer_code } => 0x20 | (timer_code & 0x1F),
            Syndrome::Nak(c) => 0x60 | c.bits(),
            Syndrome::Reserved(b) => b,
        }
    }

    /// Whether this is a positive ACK.
    pub fn is_ack(self) -> bool {
        matches!(self, Syndrome::Ack { .. })
    }
}

impl std::fmt::Display for Syndrome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Syndrome::Ack { credit_code } => match credits_for_code(*credit_code) {
                Some(c) => write!(f, "ACK credits={c}"),
                None => write!(f, "ACK credits=unlimited"),
            },
            Syndrome::RnrNak { timer_code } => write!(
                f,
                "RNR-NAK timer={}us",
                RNR_TIMER_US[usize::from(*timer_code & 0x1F)]
            ),
            Syndrome::Nak(NakCode::PsnSequenceError) => f.write_str("NAK psn-seq-error"),
            Syndrome::Nak(NakCode::InvalidRequest) => f.write_str("NAK invalid-request"),
            Syndrome::Nak(NakCode::RemoteAccessError) => f.write_str("NAK remote-access-error"),
            Syndrome::Nak(NakCode::RemoteOperationalError) => {
                f.write_str("NAK remote-operational-error")
            }
            Syndrome::Nak(NakCode::InvalidRdRequest) => f.write_str("NAK invalid-rd-request"),
            Syndrome::Nak(NakCode::Reserved(v)) => write!(f, "NAK reserved({v})"),
            Syndrome::Reserved(b) => write!(f, "reserved-syndrome({b:#04x})"),
        }
    }
}

/// Parsed AETH.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct AethRepr {
    /// Syndrome.
    pub syndrome: Syndrome,
    /// Message sequence number (24 bits).
    pub msn: u32,
}

impl AethRepr {
    /// Parses a view.
    pub fn parse<T: AsRef<[u8]>>(p: &AethPacket<T>) -> Result<AethRepr, WireError> {
        p.check_len()?;
        Ok(AethRepr {
            syndrome: Syndrome::from_byte(p.syndrome_byte()),
            msn: p.msn(),
        })
    }
    /// Bytes on the wire.
    pub const fn buffer_len(&self) -> usize {
        4
    }
    /// Writes the header.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(
        &self,
        p: &mut AethPacket<T>,
    ) -> Result<(), WireError> {
        p.check_len()?;
        check_bits("AETH.msn", self.msn.into(), 24)?;
        p.set_syndrome_byte(self.syndrome.to_byte());
        p.set_msn(self.msn);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn syndromes_decode_per_the_notes() {
        assert_eq!(Syndrome::from_byte(0x1F), Syndrome::Ack { credit_code: 31 });
        assert_eq!(Syndrome::from_byte(0x06), Syndrome::Ack { credit_code: 6 });
        assert_eq!(
            Syndrome::from_byte(0x2E),
            Syndrome::RnrNak { timer_code: 14 }
        );
        assert_eq!(
            Syndrome::from_byte(0x60),
            Syndrome::Nak(NakCode::PsnSequenceError)
        );
        assert_eq!(
            Syndrome::from_byte(0x61),
            Syndrome::Nak(NakCode::InvalidRequest)
        );
        assert_eq!(
            Syndrome::from_byte(0x62),
            Syndrome::Nak(NakCode::RemoteAccessError)
        );
        assert_eq!(
            Syndrome::from_byte(0x63),
            Syndrome::Nak(NakCode::RemoteOperationalError)
        );
        assert_eq!(Syndrome::from_byte(0x40), Syndrome::Reserved(0x40));
        assert_eq!(credits_for_code(6), Some(8));
        assert_eq!(credits_for_code(31), None);
        assert_eq!(rnr_timer_ns(14), 1_280_000);
        assert_eq!(rnr_timer_ns(0), 655_360_000);
    }

    #[test]
    fn credit_code_picks_largest_entry_not_above() {
        assert_eq!(credit_code_for(0), 0);
        assert_eq!(credit_code_for(5), 4);
        assert_eq!(credit_code_for(6), 5);
        assert_eq!(credit_code_for(7), 5);
        assert_eq!(credit_code_for(100_000), 30);
    }

    proptest! {
        #[test]
        fn syndrome_byte_round_trips(b: u8) {
            prop_assert_eq!(Syndrome::from_byte(b).to_byte(), b);
        }

        #[test]
        fn round_trip(b: u8, msn in 0u32..1 << 24) {
            let r = AethRepr { syndrome: Syndrome::from_byte(b), msn };
            let mut buf = [0u8; 4];
            r.emit(&mut AethPacket::new_unchecked(&mut buf[..])).unwrap();
            prop_assert_eq!(AethRepr::parse(&AethPacket::new_checked(&buf[..]).unwrap()).unwrap(), r);
        }

        #[test]
        fn credit_code_is_tight(n in 0u32..100_000) {
            let c = credit_code_for(n);
            let credits = credits_for_code(c).unwrap();
            prop_assert!(credits <= n);
            if c < 30 { prop_assert!(CREDIT_TABLE[usize::from(c) + 1] > n); }
        }
    }
}
