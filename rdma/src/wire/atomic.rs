//! Atomic headers: AtomicETH (28 bytes: VA, R_Key, swap/add, compare — kernel field
//! order) in CMP_SWAP / FETCH_ADD requests, and AtomicAckETH (8 bytes: the original
//! remote value) in ATOMIC_ACKNOWLEDGE.

use super::field::{get_u32, get_u64, header_view, set_u32, set_u64};
use super::WireError;

header_view!(
    /// Zero-copy view of an AtomicETH.
    AtomicEthPacket,
    28,
    "AtomicETH"
);

header_view!(
    /// Zero-copy view of an AtomicAckETH.
    AtomicAckEthPacket,
    8,
    "AtomicAckETH"
);

impl<T: AsRef<[u8]>> AtomicEthPacket<T> {
    /// Remote virtual address (8-byte aligned on real NICs).
    pub fn va(&self) -> u64 {
        get_u64(self.buffer.as_ref(), 0)
    }
    /// Remote key.
    pub fn rkey(&self) -> u32 {
        get_u32(self.buffer.as_ref(), 8)
    }
    /// Swap value (CMP_SWAP) or addend (FETCH_ADD).
    pub fn swap_add(&self) -> u64 {
        get_u64(self.buffer.as_ref(), 12)
    }
    /// Compare value (CMP_SWAP only).
    pub fn compare(&self) -> u64 {
        get_u64(self.buffer.as_ref(), 20)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> AtomicEthPacket<T> {
    /// Sets the virtual address.
    pub fn set_va(&mut self, v: u64) {
        set_u64(self.buffer.as_mut(), 0, v);
    }
    /// Sets the remote key.
    pub fn set_rkey(&mut self, v: u32) {
        set_u32(self.buffer.as_mut(), 8, v);
    }
    /// Sets the swap/add value.
    pub fn set_swap_add(&mut self, v: u64) {
        set_u64(self.buffer.as_mut(), 12, v);
    }
    /// Sets the compare value.
    pub fn set_compare(&mut self, v: u64) {
        set_u64(self.buffer.as_mut(), 20, v);
    }
}

impl<T: AsRef<[u8]>> AtomicAckEthPacket<T> {
    /// The remote value before the atomic operation.
    pub fn orig(&self) -> u64 {
        get_u64(self.buffer.as_ref(), 0)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> AtomicAckEthPacket<T> {
    /// Sets the original value.
    pub fn set_orig(&mut self, v: u64) {
        set_u64(self.buffer.as_mut(), 0, v);
    }
}

/// Parsed AtomicETH.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct AtomicEthRepr {
    /// Remote virtual address.
    pub va: u64,
    /// Remote key.
    pub rkey: u32,
    /// Swap value or addend.
    pub swap_add: u64,
    /// Compare value.
    pub compare: u64,
}

impl AtomicEthRepr {
    /// Parses a view.
    pub fn parse<T: AsRef<[u8]>>(p: &AtomicEthPacket<T>) -> Result<AtomicEthRepr, WireError> {
        p.check_len()?;
        Ok(AtomicEthRepr {
            va: p.va(),
            rkey: p.rkey(),
            swap_add: p.swap_add(),
            compare: p.compare(),
        })
    }
    /// Bytes on the wire.
    pub const fn buffer_len(&self) -> usize {
        28
    }
    /// Writes the header.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(
        &self,
        p: &mut AtomicEthPacket<T>,
    ) -> Result<(), WireError> {
        p.check_len()?;
        p.set_va(self.va);
        p.set_rkey(self.rkey);
        p.set_swap_add(self.swap_add);
        p.set_compare(self.compare);
        Ok(())
    }
}

/// Parsed AtomicAckETH.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct AtomicAckEthRepr {
    /// Original remote value.
    pub orig: u64,
}

impl AtomicAckEthRepr {
    /// Parses a view.
    pub fn parse<T: AsRef<[u8]>>(p: &AtomicAckEthPacket<T>) -> Result<AtomicAckEthRepr, WireError> {
        p.check_len()?;
        Ok(AtomicAckEthRepr { orig: p.orig() })
    }
    /// Bytes on the wire.
    pub const fn buffer_len(&self) -> usize {
        8
    }
    /// Writes the header.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(
        &self,
        p: &mut AtomicAckEthPacket<T>,
    ) -> Result<(), WireError> {
        p.check_len()?;
        p.set_orig(self.orig);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn swap_precedes_compare() {
        let r = AtomicEthRepr {
            va: 1,
            rkey: 2,
            swap_add: 3,
            compare: 4,
        };
        let mut b = [0u8; 28];
        r.emit(&mut AtomicEthPacket::new_unchecked(&mut b[..]))
            .unwrap();
        assert_eq!(b[19], 3);
        assert_eq!(b[27], 4);
        assert_eq!(b[11], 2);
    }

    proptest! {
        #[test]
        fn round_trip(va: u64, rkey: u32, s: u64, c: u64) {
            let r = AtomicEthRepr { va, rkey, swap_add: s, compare: c };
            let mut b = [0u8; 28];
            r.emit(&mut AtomicEthPacket::new_unchecked(&mut b[..])).unwrap();
            prop_assert_eq!(AtomicEthRepr::parse(&AtomicEthPacket::new_checked(&b[..]).unwrap()).unwrap(), r);
            let a = AtomicAckEthRepr { orig: s };
            let mut b = [0u8; 8];
            a.emit(&mut AtomicAckEthPacket::new_unchecked(&mut b[..])).unwrap();
            prop_assert_eq!(AtomicAckEthRepr::parse(&AtomicAckEthPacket::new_checked(&b[..]).unwrap()).unwrap(), a);
        }
    }
}
