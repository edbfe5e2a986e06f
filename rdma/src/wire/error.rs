//! The one error type of the wire layer: every malformed or unsupported input maps to a
//! variant here, so callers can count drops by reason instead of panicking.

use thiserror::Error;

/// Why a frame or header could not be parsed or emitted.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum WireError {
    /// The buffer is shorter than the header (or the header's fixed part) requires.
    #[error("{header}: truncated, need {need} bytes, have {have}")]
    Truncated {
        /// Which header was being read or written.
        header: &'static str,
        /// Bytes required.
        need: usize,
        /// Bytes available.
        have: usize,
    },
    /// The BTH opcode is reserved or belongs to a transport we do not implement (RD, XRC).
    #[error("unknown or unsupported BTH opcode {0:#04x}")]
    UnknownOpcode(u8),
    /// Ethernet/IP/UDP framing error reported by the lower-layer parser.
    #[error("ethernet/ip/udp framing: {0}")]
    Framing(String),
    /// The frame is neither IPv4 nor IPv6.
    #[error("not an IP frame")]
    NotIp,
    /// The IP payload is not UDP (or IPv6 extension headers precede UDP).
    #[error("IP protocol {0} is not UDP")]
    NotUdp(u8),
    /// The UDP destination port is not 4791.
    #[error("UDP destination port {0} is not RoCEv2 (4791)")]
    NotRoce(u16),
    /// The IP packet is a fragment; RoCEv2 is never fragmented.
    #[error("IP fragment (RoCEv2 must not be fragmented)")]
    Fragmented,
    /// The BTH pad count is larger than the payload that carries it.
    #[error("BTH pad count {pad} exceeds the {len}-byte payload")]
    BadPad {
        /// Pad count from the BTH.
        pad: u8,
        /// Bytes of payload plus pad available.
        len: usize,
    },
    /// The opcode carries no payload but bytes remain between the headers and the ICRC.
    #[error("opcode {opcode:#04x} carries no payload but {len} bytes follow its headers")]
    UnexpectedPayload {
        /// The opcode.
        opcode: u8,
        /// Extra bytes.
        len: usize,
    },
    /// A field value does not fit the wire field (for example a QPN above 2^24).
    #[error("{field} = {value:#x} does not fit its wire field")]
    FieldRange {
        /// Field name.
        field: &'static str,
        /// Offending value.
        value: u64,
    },
    /// A MAD that is not a CM message we understand.
    #[error("MAD: {0}")]
    BadMad(&'static str),
    /// The repr needs a header that was not supplied (e.g. RETH for RDMA_WRITE_ONLY).
    #[error("opcode {opcode:#04x} needs the {header} header")]
    MissingHeader {
        /// The opcode.
        opcode: u8,
        /// The missing extension header.
        header: &'static str,
    },
    /// The frame would exceed the maximum IP packet length.
    #[error("frame too long: {0} bytes of IP payload")]
    TooLong(usize),
    /// The output buffer is too small for the frame.
    #[error("output buffer too small: need {need}, have {have}")]
    BufferTooSmall {
        /// Bytes required.
        need: usize,
        /// Bytes available.
        have: usize,
    },
}
