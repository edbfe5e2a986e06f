//! The transport headers of one RoCEv2 packet as a unit: the BTH plus whichever
//! extension headers its opcode requires, parsed and emitted in wire order.

use super::{
    AethPacket, AethRepr, AtomicAckEthPacket, AtomicAckEthRepr, AtomicEthPacket, AtomicEthRepr,
    BthPacket, BthRepr, CnpPacket, DethPacket, DethRepr, ExtHeader, IethPacket, ImmDtPacket,
    Opcode, RethPacket, RethRepr, WireError,
};

/// BTH and extension headers of one packet. Only the headers the opcode lists are used
/// on emit; a missing required header is an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RoceHeaders {
    /// Base transport header.
    pub bth: BthRepr,
    /// DETH (UD).
    pub deth: Option<DethRepr>,
    /// RETH.
    pub reth: Option<RethRepr>,
    /// AtomicETH.
    pub atomic_eth: Option<AtomicEthRepr>,
    /// AETH.
    pub aeth: Option<AethRepr>,
    /// AtomicAckETH.
    pub atomic_ack: Option<AtomicAckEthRepr>,
    /// Immediate data.
    pub imm: Option<u32>,
    /// R_Key to invalidate.
    pub ieth: Option<u32>,
}

impl RoceHeaders {
    /// Headers with only a BTH filled in.
    pub fn new(bth: BthRepr) -> RoceHeaders {
        RoceHeaders {
            bth,
            deth: None,
            reth: None,
            atomic_eth: None,
            aeth: None,
            atomic_ack: None,
            imm: None,
            ieth: None,
        }
    }

    /// The opcode.
    pub fn opcode(&self) -> Opcode {
        self.bth.opcode
    }

    /// Parses the BTH and its extension headers from the start of `buf`; returns them and
    /// the number of bytes they occupy.
    pub fn parse(buf: &[u8]) -> Result<(RoceHeaders, usize), WireError> {
        let bth = BthRepr::parse(&BthPacket::new_checked(buf)?)?;
        let mut h = RoceHeaders::new(bth);
        let mut off = BthPacket::<&[u8]>::LEN;
        for ext in bth.opcode.ext_headers() {
            let rest = &buf[off..];
            match ext {
                ExtHeader::Deth => h.deth = Some(DethRepr::parse(&DethPacket::new_checked(rest)?)?),
                ExtHeader::Reth => h.reth = Some(RethRepr::parse(&RethPacket::new_checked(rest)?)?),
                ExtHeader::AtomicEth => {
                    h.atomic_eth = Some(AtomicEthRepr::parse(&AtomicEthPacket::new_checked(rest)?)?)
                }
                ExtHeader::Aeth => h.aeth = Some(AethRepr::parse(&AethPacket::new_checked(rest)?)?),
                ExtHeader::AtomicAckEth => {
                    h.atomic_ack = Some(AtomicAckEthRepr::parse(&AtomicAckEthPacket::new_checked(
                        rest,
                    )?)?)
                }
                ExtHeader::ImmDt => h.imm = Some(ImmDtPacket::new_checked(rest)?.imm()),
                ExtHeader::Ieth => h.ieth = Some(IethPacket::new_checked(rest)?.rkey()),
                ExtHeader::CnpPad => {
                    CnpPacket::new_checked(rest)?;
                }
            }
            off += ext.wire_len();
        }
        Ok((h, off))
    }

    /// Bytes on the wire.
    pub fn buffer_len(&self) -> usize {
        BthPacket::<&[u8]>::LEN + self.bth.opcode.ext_headers_len()
    }

    /// Writes the headers to the start of `buf`.
    pub fn emit(&self, buf: &mut [u8]) -> Result<(), WireError> {
        let need = self.buffer_len();
        if buf.len() < need {
            return Err(WireError::BufferTooSmall {
                need,
                have: buf.len(),
            });
        }
        let opcode = self.bth.opcode;
        let missing = |header: &'static str| WireError::MissingHeader {
            opcode: opcode.value(),
            header,
        };
        self.bth
            .emit(&mut BthPacket::new_unchecked(&mut buf[..12]))?;
        let mut off = 12;
        for ext in opcode.ext_headers() {
            let rest = &mut buf[off..off + ext.wire_len()];
            match ext {
                ExtHeader::Deth => self
                    .deth
                    .ok_or(missing("DETH"))?
                    .emit(&mut DethPacket::new_unchecked(rest))?,
                ExtHeader::Reth => self
                    .reth
                    .ok_or(missing("RETH"))?
                    .emit(&mut RethPacket::new_unchecked(rest))?,
                ExtHeader::AtomicEth => self
                    .atomic_eth
                    .ok_or(missing("AtomicETH"))?
                    .emit(&mut AtomicEthPacket::new_unchecked(rest))?,
                ExtHeader::Aeth => self
                    .aeth
                    .ok_or(missing("AETH"))?
                    .emit(&mut AethPacket::new_unchecked(rest))?,
                ExtHeader::AtomicAckEth => self
                    .atomic_ack
                    .ok_or(missing("AtomicAckETH"))?
                    .emit(&mut AtomicAckEthPacket::new_unchecked(rest))?,
                ExtHeader::ImmDt => {
                    ImmDtPacket::new_unchecked(rest).set_imm(self.imm.ok_or(missing("ImmDt"))?)
                }
                ExtHeader::Ieth => {
                    IethPacket::new_unchecked(rest).set_rkey(self.ieth.ok_or(missing("IETH"))?)
                }
                ExtHeader::CnpPad => rest.fill(0),
            }
            off += ext.wire_len();
        }
        Ok(())
    }
}
