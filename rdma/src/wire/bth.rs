//! Base Transport Header (12 bytes): opcode, flags, P_Key, FECN/BECN, DestQP, AckReq, PSN.

use super::field::{check_bits, get_u16, get_u24, header_view, set_u16, set_u24};
use super::{Opcode, WireError};

header_view!(
    /// Zero-copy view of a BTH.
    BthPacket,
    12,
    "BTH"
);

mod off {
    pub const OPCODE: usize = 0;
    pub const FLAGS: usize = 1;
    pub const PKEY: usize = 2;
    pub const ECN: usize = 4;
    pub const DQPN: usize = 5;
    pub const ACK: usize = 8;
    pub const PSN: usize = 9;
}

impl<T: AsRef<[u8]>> BthPacket<T> {
    fn b(&self) -> &[u8] {
        self.buffer.as_ref()
    }
    /// Raw opcode byte.
    pub fn opcode_byte(&self) -> u8 {
        self.b()[off::OPCODE]
    }
    /// Solicited event bit.
    pub fn solicited(&self) -> bool {
        self.b()[off::FLAGS] & 0x80 != 0
    }
    /// Migration request bit.
    pub fn mig_req(&self) -> bool {
        self.b()[off::FLAGS] & 0x40 != 0
    }
    /// Pad count (0-3).
    pub fn pad_count(&self) -> u8 {
        (self.b()[off::FLAGS] >> 4) & 0x3
    }
    /// Transport header version.
    pub fn tver(&self) -> u8 {
        self.b()[off::FLAGS] & 0x0F
    }
    /// Partition key.
    pub fn pkey(&self) -> u16 {
        get_u16(self.b(), off::PKEY)
    }
    /// Forward ECN bit.
    pub fn fecn(&self) -> bool {
        self.b()[off::ECN] & 0x80 != 0
    }
    /// Backward ECN bit (set on CNPs).
    pub fn becn(&self) -> bool {
        self.b()[off::ECN] & 0x40 != 0
    }
    /// Destination queue pair number (24 bits).
    pub fn dest_qp(&self) -> u32 {
        get_u24(self.b(), off::DQPN)
    }
    /// Acknowledge request bit.
    pub fn ack_req(&self) -> bool {
        self.b()[off::ACK] & 0x80 != 0
    }
    /// Packet sequence number (24 bits).
    pub fn psn(&self) -> u32 {
        get_u24(self.b(), off::PSN)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> BthPacket<T> {
    fn bm(&mut self) -> &mut [u8] {
        self.buffer.as_mut()
    }
    /// Sets the opcode byte.
    pub fn set_opcode_byte(&mut self, v: u8) {
        self.bm()[off::OPCODE] = v;
    }
    /// Sets byte 1 from its four fields (low bits of each value are used).
    pub fn set_flags(&mut self, solicited: bool, mig_req: bool, pad_count: u8, tver: u8) {
        self.bm()[off::FLAGS] = (u8::from(solicited) << 7)
            | (u8::from(mig_req) << 6)
            | ((pad_count & 3) << 4)
            | (tver & 0x0F);
    }
    /// Sets the pad count, keeping the other bits of byte 1.
    pub fn set_pad_count(&mut self, pad: u8) {
        let b = &mut self.bm()[off::FLAGS];
        *b = (*b & !0x30) | ((pad & 3) << 4);
    }
    /// Sets the partition key.
    pub fn set_pkey(&mut self, v: u16) {
        set_u16(self.bm(), off::PKEY, v);
    }
    /// Sets FECN/BECN, clearing the reserved bits of byte 4.
    pub fn set_ecn_bits(&mut self, fecn: bool, becn: bool) {
        self.bm()[off::ECN] = (u8::from(fecn) << 7) | (u8::from(becn) << 6);
    }
    /// Sets the destination QP (low 24 bits of `v`).
    pub fn set_dest_qp(&mut self, v: u32) {
        set_u24(self.bm(), off::DQPN, v);
    }
    /// Sets the AckReq bit, clearing the reserved bits of byte 8.
    pub fn set_ack_req(&mut self, v: bool) {
        self.bm()[off::ACK] = u8::from(v) << 7;
    }
    /// Sets the PSN (low 24 bits of `v`).
    pub fn set_psn(&mut self, v: u32) {
        set_u24(self.bm(), off::PSN, v);
    }
}

/// Parsed BTH.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BthRepr {
    /// Opcode.
    pub opcode: Opcode,
    /// Solicited event.
    pub solicited: bool,
    /// Migration request.
    pub mig_req: bool,
    /// Pad count (0-3). Frame emission recomputes it from the payload length.
    pub pad_count: u8,
    /// Transport header version (0).
    pub tver: u8,
    /// Partition key (0xFFFF by default).
    pub pkey: u16,
    /// Forward ECN.
    pub fecn: bool,
    /// Backward ECN.
    pub becn: bool,
    /// Destination QP (24 bits).
    pub dest_qp: u32,
    /// AckReq.
    pub ack_req: bool,
    /// PSN (24 bits).
    pub psn: u32,
}

impl BthRepr {
    /// A BTH with default P_Key 0xFFFF and all flags clear.
    pub fn new(opcode: Opcode, dest_qp: u32, psn: u32) -> BthRepr {
        BthRepr {
            opcode,
            solicited: false,
            mig_req: false,
            pad_count: 0,
            tver: 0,
            pkey: 0xFFFF,
            fecn: false,
            becn: false,
            dest_qp,
            ack_req: false,
            psn,
        }
    }

    /// Parses a checked view.
    pub fn parse<T: AsRef<[u8]>>(p: &BthPacket<T>) -> Result<BthRepr, WireError> {
        p.check_len()?;
        Ok(BthRepr {
            opcode: Opcode::new(p.opcode_byte())?,
            solicited: p.solicited(),
            mig_req: p.mig_req(),
            pad_count: p.pad_count(),
            tver: p.tver(),
            pkey: p.pkey(),
            fecn: p.fecn(),
            becn: p.becn(),
            dest_qp: p.dest_qp(),
            ack_req: p.ack_req(),
            psn: p.psn(),
        })
    }

    /// Bytes on the wire.
    pub const fn buffer_len(&self) -> usize {
        12
    }

    /// Writes the header; fails if a field does not fit or the buffer is short.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(
        &self,
        p: &mut BthPacket<T>,
    ) -> Result<(), WireError> {
        p.check_len()?;
        check_bits("BTH.dest_qp", self.dest_qp.into(), 24)?;
        check_bits("BTH.psn", self.psn.into(), 24)?;
        check_bits("BTH.pad_count", self.pad_count.into(), 2)?;
        check_bits("BTH.tver", self.tver.into(), 4)?;
        p.set_opcode_byte(self.opcode.value());
        p.set_flags(self.solicited, self.mig_req, self.pad_count, self.tver);
        p.set_pkey(self.pkey);
        p.set_ecn_bits(self.fecn, self.becn);
        p.set_dest_qp(self.dest_qp);
        p.set_ack_req(self.ack_req);
        p.set_psn(self.psn);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn parses_the_write_only_vector() {
        // BTH of the RC RDMA_WRITE_ONLY vector in rocev2.md.
        let b = [0x0a, 0x00, 0xff, 0xff, 0, 0, 0, 0x12, 0x80, 0, 0x01, 0x00];
        let r = BthRepr::parse(&BthPacket::new_checked(&b[..]).unwrap()).unwrap();
        assert_eq!(r.opcode, Opcode::RC_RDMA_WRITE_ONLY);
        assert_eq!(
            (r.dest_qp, r.psn, r.ack_req, r.pkey),
            (0x12, 0x100, true, 0xFFFF)
        );
        let mut out = [0u8; 12];
        r.emit(&mut BthPacket::new_unchecked(&mut out[..])).unwrap();
        assert_eq!(out, b);
    }

    #[test]
    fn short_buffer_and_wide_fields_are_errors() {
        assert!(matches!(
            BthPacket::new_checked(&[0u8; 11][..]),
            Err(WireError::Truncated {
                need: 12,
                have: 11,
                ..
            })
        ));
        let mut out = [0u8; 12];
        let r = BthRepr::new(Opcode::RC_SEND_ONLY, 1 << 24, 0);
        assert!(r.emit(&mut BthPacket::new_unchecked(&mut out[..])).is_err());
    }

    pub(crate) fn any_opcode() -> impl Strategy<Value = Opcode> {
        any::<u8>().prop_filter_map("valid opcode", |b| Opcode::new(b).ok())
    }

    proptest! {
        #[test]
        fn round_trip(op in any_opcode(), se: bool, m: bool, pad in 0u8..4, tver in 0u8..16,
                      pkey: u16, f: bool, b: bool, qp in 0u32..1 << 24, a: bool, psn in 0u32..1 << 24) {
            let r = BthRepr { opcode: op, solicited: se, mig_req: m, pad_count: pad, tver, pkey,
                              fecn: f, becn: b, dest_qp: qp, ack_req: a, psn };
            let mut buf = [0u8; 12];
            r.emit(&mut BthPacket::new_unchecked(&mut buf[..])).unwrap();
            prop_assert_eq!(BthRepr::parse(&BthPacket::new_checked(&buf[..]).unwrap()).unwrap(), r);
        }
    }
}
