//! Datagram Extended Transport Header (8 bytes): Q_Key and source QP, carried by every
//! UD packet (CM MADs on QP1 included).

use super::field::{check_bits, get_u24, get_u32, header_view, set_u24, set_u32};
use super::WireError;

header_view!(
    /// Zero-copy view of a DETH.
    DethPacket,
    8,
    "DETH"
);

impl<T: AsRef<[u8]>> DethPacket<T> {
    /// Queue key.
    pub fn qkey(&self) -> u32 {
        get_u32(self.buffer.as_ref(), 0)
    }
    /// Source QP (24 bits).
    pub fn src_qp(&self) -> u32 {
        get_u24(self.buffer.as_ref(), 5)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> DethPacket<T> {
    /// Sets the queue key.
    pub fn set_qkey(&mut self, v: u32) {
        set_u32(self.buffer.as_mut(), 0, v);
    }
    /// Sets the source QP and clears the reserved byte.
    pub fn set_src_qp(&mut self, v: u32) {
        self.buffer.as_mut()[4] = 0;
        set_u24(self.buffer.as_mut(), 5, v);
    }
}

/// Parsed DETH.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct DethRepr {
    /// Queue key.
    pub qkey: u32,
    /// Source QP.
    pub src_qp: u32,
}

impl DethRepr {
    /// Parses a view.
    pub fn parse<T: AsRef<[u8]>>(p: &DethPacket<T>) -> Result<DethRepr, WireError> {
        p.check_len()?;
        Ok(DethRepr {
            qkey: p.qkey(),
            src_qp: p.src_qp(),
        })
    }
    /// Bytes on the wire.
    pub const fn buffer_len(&self) -> usize {
        8
    }
    /// Writes the header.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(
        &self,
        p: &mut DethPacket<T>,
    ) -> Result<(), WireError> {
        p.check_len()?;
        check_bits("DETH.src_qp", self.src_qp.into(), 24)?;
        p.set_qkey(self.qkey);
        p.set_src_qp(self.src_qp);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn gsi_layout() {
        let mut b = [0xFFu8; 8];
        DethRepr {
            qkey: 0x8001_0000,
            src_qp: 1,
        }
        .emit(&mut DethPacket::new_unchecked(&mut b[..]))
        .unwrap();
        assert_eq!(b, [0x80, 0x01, 0, 0, 0, 0, 0, 1]);
    }

    proptest! {
        #[test]
        fn round_trip(q: u32, qp in 0u32..1 << 24) {
            let r = DethRepr { qkey: q, src_qp: qp };
            let mut b = [0u8; 8];
            r.emit(&mut DethPacket::new_unchecked(&mut b[..])).unwrap();
            prop_assert_eq!(DethRepr::parse(&DethPacket::new_checked(&b[..]).unwrap()).unwrap(), r);
        }
    }
}
