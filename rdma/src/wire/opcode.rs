//! BTH opcodes: which transport and operation an opcode names, and which extension
//! headers follow the BTH for it (IBA Vol.1 §9.2, RoCEv2 Annex A17 for the CNP).

use super::WireError;

/// Transport service encoded in the top three bits of the opcode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Transport {
    /// Reliable connected (0x00-0x1F).
    Rc,
    /// Unreliable connected (0x20-0x3F).
    Uc,
    /// Unreliable datagram (0x60-0x7F).
    Ud,
    /// Congestion notification packet (0x81).
    Cnp,
}

/// The operation of an opcode, independent of its transport.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum Operation {
    SendFirst,
    SendMiddle,
    SendLast,
    SendLastImm,
    SendOnly,
    SendOnlyImm,
    WriteFirst,
    WriteMiddle,
    WriteLast,
    WriteLastImm,
    WriteOnly,
    WriteOnlyImm,
    ReadRequest,
    ReadResponseFirst,
    ReadResponseMiddle,
    ReadResponseLast,
    ReadResponseOnly,
    Acknowledge,
    AtomicAcknowledge,
    CompareSwap,
    FetchAdd,
    SendLastInv,
    SendOnlyInv,
    Cnp,
}

/// An extension header that may follow the BTH.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ExtHeader {
    /// Datagram extended transport header (UD).
    Deth,
    /// RDMA extended transport header.
    Reth,
    /// Atomic extended transport header.
    AtomicEth,
    /// ACK extended transport header.
    Aeth,
    /// Atomic acknowledge extended transport header.
    AtomicAckEth,
    /// Immediate data.
    ImmDt,
    /// Invalidate extended transport header.
    Ieth,
    /// The 16 reserved bytes of a CNP.
    CnpPad,
}

impl ExtHeader {
    /// Length of the header on the wire.
    pub const fn wire_len(self) -> usize {
        match self {
            ExtHeader::Deth => 8,
            ExtHeader::Reth => 16,
            ExtHeader::AtomicEth => 28,
            ExtHeader::Aeth => 4,
            ExtHeader::AtomicAckEth => 8,
            ExtHeader::ImmDt => 4,
            ExtHeader::Ieth => 4,
            ExtHeader::CnpPad => 16,
        }
    }

    /// Short name for messages.
    pub const fn name(self) -> &'static str {
        match self {
            ExtHeader::Deth => "DETH",
            ExtHeader::Reth => "RETH",
            ExtHeader::AtomicEth => "AtomicETH",
            ExtHeader::Aeth => "AETH",
            ExtHeader::AtomicAckEth => "AtomicAckETH",
            ExtHeader::ImmDt => "ImmDt",
            ExtHeader::Ieth => "IETH",
            ExtHeader::CnpPad => "CNP",
        }
    }
}

/// A valid BTH opcode byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Opcode(u8);

macro_rules! opcode_consts {
    ($($name:ident = $val:expr),* $(,)?) => {
        impl Opcode {
            $(
                #[allow(missing_docs)]
                pub const $name: Opcode = Opcode($val);
            )*
        }
    };
}

opcode_consts! {
    RC_SEND_FIRST = 0x00, RC_SEND_MIDDLE = 0x01, RC_SEND_LAST = 0x02,
    RC_SEND_LAST_WITH_IMMEDIATE = 0x03, RC_SEND_ONLY = 0x04, RC_SEND_ONLY_WITH_IMMEDIATE = 0x05,
    RC_RDMA_WRITE_FIRST = 0x06, RC_RDMA_WRITE_MIDDLE = 0x07, RC_RDMA_WRITE_LAST = 0x08,
    RC_RDMA_WRITE_LAST_WITH_IMMEDIATE = 0x09, RC_RDMA_WRITE_ONLY = 0x0A,
    RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE = 0x0B, RC_RDMA_READ_REQUEST = 0x0C,
    RC_RDMA_READ_RESPONSE_FIRST = 0x0D, RC_RDMA_READ_RESPONSE_MIDDLE = 0x0E,
    RC_RDMA_READ_RESPONSE_LAST = 0x0F, RC_RDMA_READ_RESPONSE_ONLY = 0x10,
    RC_ACKNOWLEDGE = 0x11, RC_ATOMIC_ACKNOWLEDGE = 0x12, RC_COMPARE_SWAP = 0x13,
    RC_FETCH_ADD = 0x14, RC_SEND_LAST_WITH_INVALIDATE = 0x16, RC_SEND_ONLY_WITH_INVALIDATE = 0x17,
    UC_SEND_FIRST = 0x20, UC_SEND_MIDDLE = 0x21, UC_SEND_LAST = 0x22,
    UC_SEND_LAST_WITH_IMMEDIATE = 0x23, UC_SEND_ONLY = 0x24, UC_SEND_ONLY_WITH_IMMEDIATE = 0x25,
    UC_RDMA_WRITE_FIRST = 0x26, UC_RDMA_WRITE_MIDDLE = 0x27, UC_RDMA_WRITE_LAST = 0x28,
    UC_RDMA_WRITE_LAST_WITH_IMMEDIATE = 0x29, UC_RDMA_WRITE_ONLY = 0x2A,
    UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE = 0x2B,
    UD_SEND_ONLY = 0x64, UD_SEND_ONLY_WITH_IMMEDIATE = 0x65,
    CNP = 0x81,
}

const OPS: [Operation; 24] = [
    Operation::SendFirst,
    Operation::SendMiddle,
    Operation::SendLast,
    Operation::SendLastImm,
    Operation::SendOnly,
    Operation::SendOnlyImm,
    Operation::WriteFirst,
    Operation::WriteMiddle,
    Operation::WriteLast,
    Operation::WriteLastImm,
    Operation::WriteOnly,
    Operation::WriteOnlyImm,
    Operation::ReadRequest,
    Operation::ReadResponseFirst,
    Operation::ReadResponseMiddle,
    Operation::ReadResponseLast,
    Operation::ReadResponseOnly,
    Operation::Acknowledge,
    Operation::AtomicAcknowledge,
    Operation::CompareSwap,
    Operation::FetchAdd,
    // 0x15 is reserved; these two sit at 0x16 and 0x17.
    Operation::SendLastInv,
    Operation::SendOnlyInv,
    Operation::Cnp,
];

const OP_NAMES: [&str; 24] = [
    "SEND_FIRST",
    "SEND_MIDDLE",
    "SEND_LAST",
    "SEND_LAST_WITH_IMMEDIATE",
    "SEND_ONLY",
    "SEND_ONLY_WITH_IMMEDIATE",
    "RDMA_WRITE_FIRST",
    "RDMA_WRITE_MIDDLE",
    "RDMA_WRITE_LAST",
    "RDMA_WRITE_LAST_WITH_IMMEDIATE",
    "RDMA_WRITE_ONLY",
    "RDMA_WRITE_ONLY_WITH_IMMEDIATE",
    "RDMA_READ_REQUEST",
    "RDMA_READ_RESPONSE_FIRST",
    "RDMA_READ_RESPONSE_MIDDLE",
    "RDMA_READ_RESPONSE_LAST",
    "RDMA_READ_RESPONSE_ONLY",
    "ACKNOWLEDGE",
    "ATOMIC_ACKNOWLEDGE",
    "COMPARE_SWAP",
    "FETCH_ADD",
    "SEND_LAST_WITH_INVALIDATE",
    "SEND_ONLY_WITH_INVALIDATE",
    "CNP",
];

fn op_index(low5: u8) -> Option<usize> {
    match low5 {
        0x00..=0x14 => Some(low5 as usize),
        0x16 | 0x17 => Some(low5 as usize - 1),
        _ => None,
    }
}

impl Opcode {
    /// Validates an opcode byte: RC, UC, UD and CNP opcodes are accepted; RD, XRC,
    /// manufacturer-specific and reserved values are rejected.
    pub fn new(byte: u8) -> Result<Opcode, WireError> {
        let ok = match byte >> 5 {
            0 => op_index(byte & 0x1F).is_some(),
            1 => (byte & 0x1F) <= 0x0B,
            3 => byte == 0x64 || byte == 0x65,
            _ => byte == 0x81,
        };
        if ok {
            Ok(Opcode(byte))
        } else {
            Err(WireError::UnknownOpcode(byte))
        }
    }

    /// Builds the opcode for an operation on a transport, if that combination exists.
    pub fn from_parts(transport: Transport, op: Operation) -> Option<Opcode> {
        let idx = OPS.iter().position(|o| *o == op)?;
        let low = if (21..=22).contains(&idx) {
            idx as u8 + 1
        } else {
            idx as u8
        };
        let byte = match (transport, op) {
            (Transport::Cnp, Operation::Cnp) => 0x81,
            (Transport::Cnp, _) | (_, Operation::Cnp) => return None,
            (Transport::Rc, _) => low,
            (Transport::Uc, _) => 0x20 | low,
            (Transport::Ud, _) => 0x60 | low,
        };
        Opcode::new(byte).ok()
    }

    /// The raw byte.
    pub const fn value(self) -> u8 {
        self.0
    }

    /// The transport service.
    pub const fn transport(self) -> Transport {
        match self.0 >> 5 {
            0 => Transport::Rc,
            1 => Transport::Uc,
            3 => Transport::Ud,
            _ => Transport::Cnp,
        }
    }

    /// The operation.
    pub fn operation(self) -> Operation {
        if self.0 == 0x81 {
            return Operation::Cnp;
        }
        // `new` guarantees the low five bits index the table.
        op_index(self.0 & 0x1F)
            .map(|i| OPS[i])
            .unwrap_or(Operation::Cnp)
    }

    /// Name as Linux spells it, e.g. `RC_RDMA_WRITE_ONLY`, `UD_SEND_ONLY`, `CNP`.
    pub fn name(self) -> String {
        let op = op_index(self.0 & 0x1F)
            .map(|i| OP_NAMES[i])
            .unwrap_or("CNP");
        match self.transport() {
            Transport::Rc => format!("RC_{op}"),
            Transport::Uc => format!("UC_{op}"),
            Transport::Ud => format!("UD_{op}"),
            Transport::Cnp => "CNP".to_string(),
        }
    }

    /// The extension headers that follow the BTH, in wire order.
    pub fn ext_headers(self) -> &'static [ExtHeader] {
        use ExtHeader::*;
        let ud = self.transport() == Transport::Ud;
        match self.operation() {
            Operation::SendOnly if ud => &[Deth],
            Operation::SendOnlyImm if ud => &[Deth, ImmDt],
            Operation::SendFirst
            | Operation::SendMiddle
            | Operation::SendLast
            | Operation::SendOnly
            | Operation::WriteMiddle
            | Operation::WriteLast
            | Operation::ReadResponseMiddle => &[],
            Operation::SendLastImm | Operation::SendOnlyImm | Operation::WriteLastImm => &[ImmDt],
            Operation::WriteFirst | Operation::WriteOnly | Operation::ReadRequest => &[Reth],
            Operation::WriteOnlyImm => &[Reth, ImmDt],
            Operation::ReadResponseFirst
            | Operation::ReadResponseLast
            | Operation::ReadResponseOnly
            | Operation::Acknowledge => &[Aeth],
            Operation::AtomicAcknowledge => &[Aeth, AtomicAckEth],
            Operation::CompareSwap | Operation::FetchAdd => &[AtomicEth],
            Operation::SendLastInv | Operation::SendOnlyInv => &[Ieth],
            Operation::Cnp => &[CnpPad],
        }
    }

    /// Total length of the extension headers.
    pub fn ext_headers_len(self) -> usize {
        self.ext_headers().iter().map(|h| h.wire_len()).sum()
    }

    /// Whether packets with this opcode carry a data payload.
    pub fn has_payload(self) -> bool {
        !matches!(
            self.operation(),
            Operation::ReadRequest
                | Operation::Acknowledge
                | Operation::AtomicAcknowledge
                | Operation::CompareSwap
                | Operation::FetchAdd
                | Operation::Cnp
        )
    }

    /// First packet of a multi-packet message.
    pub fn is_first(self) -> bool {
        matches!(
            self.operation(),
            Operation::SendFirst | Operation::WriteFirst | Operation::ReadResponseFirst
        )
    }

    /// Middle packet of a multi-packet message.
    pub fn is_middle(self) -> bool {
        matches!(
            self.operation(),
            Operation::SendMiddle | Operation::WriteMiddle | Operation::ReadResponseMiddle
        )
    }

    /// Last packet of a multi-packet message.
    pub fn is_last(self) -> bool {
        matches!(
            self.operation(),
            Operation::SendLast
                | Operation::SendLastImm
                | Operation::SendLastInv
                | Operation::WriteLast
                | Operation::WriteLastImm
                | Operation::ReadResponseLast
        )
    }

    /// Whole message in one packet.
    pub fn is_only(self) -> bool {
        !(self.is_first() || self.is_middle() || self.is_last())
    }

    /// Sent by a requester (as opposed to a responder's ACK / read response / CNP).
    pub fn is_request(self) -> bool {
        !matches!(
            self.operation(),
            Operation::ReadResponseFirst
                | Operation::ReadResponseMiddle
                | Operation::ReadResponseLast
                | Operation::ReadResponseOnly
                | Operation::Acknowledge
                | Operation::AtomicAcknowledge
                | Operation::Cnp
        )
    }
}

impl TryFrom<u8> for Opcode {
    type Error = WireError;
    fn try_from(b: u8) -> Result<Self, WireError> {
        Opcode::new(b)
    }
}

impl std::fmt::Display for Opcode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valid_set_matches_the_table() {
        let valid: Vec<u8> = (0..=255u8).filter(|b| Opcode::new(*b).is_ok()).collect();
        let mut expect: Vec<u8> = (0x00..=0x14).chain([0x16, 0x17]).collect();
        expect.extend(0x20..=0x2B);
        expect.extend([0x64, 0x65, 0x81]);
        assert_eq!(valid, expect);
        assert_eq!(Opcode::new(0x15), Err(WireError::UnknownOpcode(0x15)));
    }

    #[test]
    fn header_sequences_follow_the_notes() {
        use ExtHeader::*;
        assert_eq!(
            Opcode::RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE.ext_headers(),
            &[Reth, ImmDt]
        );
        assert_eq!(
            Opcode::RC_RDMA_WRITE_MIDDLE.ext_headers(),
            &[] as &[ExtHeader]
        );
        assert_eq!(Opcode::RC_RDMA_READ_RESPONSE_LAST.ext_headers(), &[Aeth]);
        assert_eq!(
            Opcode::RC_RDMA_READ_RESPONSE_MIDDLE.ext_headers(),
            &[] as &[ExtHeader]
        );
        assert_eq!(
            Opcode::RC_ATOMIC_ACKNOWLEDGE.ext_headers(),
            &[Aeth, AtomicAckEth]
        );
        assert_eq!(
            Opcode::UD_SEND_ONLY_WITH_IMMEDIATE.ext_headers(),
            &[Deth, ImmDt]
        );
        assert_eq!(Opcode::RC_SEND_ONLY_WITH_INVALIDATE.ext_headers(), &[Ieth]);
        assert_eq!(Opcode::CNP.ext_headers_len(), 16);
        assert_eq!(Opcode::RC_COMPARE_SWAP.ext_headers_len(), 28);
        assert!(!Opcode::RC_RDMA_READ_REQUEST.has_payload());
        assert!(Opcode::RC_RDMA_READ_RESPONSE_MIDDLE.has_payload());
    }

    #[test]
    fn names_and_parts_round_trip() {
        for b in 0..=255u8 {
            if let Ok(op) = Opcode::new(b) {
                assert_eq!(Opcode::from_parts(op.transport(), op.operation()), Some(op));
            }
        }
        assert_eq!(Opcode::RC_RDMA_WRITE_ONLY.name(), "RC_RDMA_WRITE_ONLY");
        assert_eq!(Opcode::UD_SEND_ONLY.name(), "UD_SEND_ONLY");
        assert_eq!(
            Opcode::RC_SEND_LAST_WITH_INVALIDATE.name(),
            "RC_SEND_LAST_WITH_INVALIDATE"
        );
        assert!(Opcode::RC_SEND_FIRST.is_first() && Opcode::RC_SEND_LAST_WITH_IMMEDIATE.is_last());
        assert!(Opcode::RC_ACKNOWLEDGE.is_only() && !Opcode::RC_ACKNOWLEDGE.is_request());
    }
}
