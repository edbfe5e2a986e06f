//! RDMA Extended Transport Header (16 bytes): virtual address, R_Key, DMA length.
//! Carried by RDMA WRITE FIRST/ONLY and RDMA READ requests.

use super::field::{get_u32, get_u64, header_view, set_u32, set_u64};
use super::WireError;

header_view!(
    /// Zero-copy view of a RETH.
    RethPacket,
    16,
    "RETH"
);

impl<T: AsRef<[u8]>> RethPacket<T> {
    /// Remote virtual address.
    pub fn va(&self) -> u64 {
        get_u64(self.buffer.as_ref(), 0)
    }
    /// Remote key.
    pub fn rkey(&self) -> u32 {
        get_u32(self.buffer.as_ref(), 8)
    }
    /// Length of the whole RDMA operation.
    pub fn dma_len(&self) -> u32 {
        get_u32(self.buffer.as_ref(), 12)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> RethPacket<T> {
    /// Sets the virtual address.
    pub fn set_va(&mut self, v: u64) {
        set_u64(self.buffer.as_mut(), 0, v);
    }
    /// Sets the remote key.
    pub fn set_rkey(&mut self, v: u32) {
        set_u32(self.buffer.as_mut(), 8, v);
    }
    /// Sets the DMA length.
    pub fn set_dma_len(&mut self, v: u32) {
        set_u32(self.buffer.as_mut(), 12, v);
    }
}

/// Parsed RETH.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct RethRepr {
    /// Remote virtual address.
    pub va: u64,
    /// Remote key.
    pub rkey: u32,
    /// DMA length of the whole operation.
    pub dma_len: u32,
}

impl RethRepr {
    /// Parses a view.
    pub fn parse<T: AsRef<[u8]>>(p: &RethPacket<T>) -> Result<RethRepr, WireError> {
        p.check_len()?;
        Ok(RethRepr {
            va: p.va(),
            rkey: p.rkey(),
            dma_len: p.dma_len(),
        })
    }
    /// Bytes on the wire.
    pub const fn buffer_len(&self) -> usize {
        16
    }
    /// Writes the header.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(
        &self,
        p: &mut RethPacket<T>,
    ) -> Result<(), WireError> {
        p.check_len()?;
        p.set_va(self.va);
        p.set_rkey(self.rkey);
        p.set_dma_len(self.dma_len);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn layout_matches_the_notes() {
        let r = RethRepr {
            va: 0x7f00_0000_1000,
            rkey: 0xabcd_ef01,
            dma_len: 16,
        };
        let mut b = [0u8; 16];
        r.emit(&mut RethPacket::new_unchecked(&mut b[..])).unwrap();
        assert_eq!(
            b,
            [0, 0, 0x7f, 0, 0, 0, 0x10, 0, 0xab, 0xcd, 0xef, 0x01, 0, 0, 0, 0x10]
        );
    }

    proptest! {
        #[test]
        fn round_trip(va: u64, rkey: u32, len: u32) {
            let r = RethRepr { va, rkey, dma_len: len };
            let mut b = [0u8; 16];
            r.emit(&mut RethPacket::new_unchecked(&mut b[..])).unwrap();
            prop_assert_eq!(RethRepr::parse(&RethPacket::new_checked(&b[..]).unwrap()).unwrap(), r);
        }
    }
}
