//! The two opaque 4-byte extension headers: ImmDt (immediate data) and IETH
//! (R_Key to invalidate). Both are a single big-endian 32-bit word.

use super::field::{get_u32, header_view, set_u32};
use super::WireError;

header_view!(
    /// Zero-copy view of an ImmDt header.
    ImmDtPacket,
    4,
    "ImmDt"
);

header_view!(
    /// Zero-copy view of an IETH.
    IethPacket,
    4,
    "IETH"
);

impl<T: AsRef<[u8]>> ImmDtPacket<T> {
    /// The immediate data, as the big-endian word on the wire.
    pub fn imm(&self) -> u32 {
        get_u32(self.buffer.as_ref(), 0)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> ImmDtPacket<T> {
    /// Sets the immediate data.
    pub fn set_imm(&mut self, v: u32) {
        set_u32(self.buffer.as_mut(), 0, v);
    }
}

impl<T: AsRef<[u8]>> IethPacket<T> {
    /// The R_Key to invalidate.
    pub fn rkey(&self) -> u32 {
        get_u32(self.buffer.as_ref(), 0)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> IethPacket<T> {
    /// Sets the R_Key to invalidate.
    pub fn set_rkey(&mut self, v: u32) {
        set_u32(self.buffer.as_mut(), 0, v);
    }
}

/// Parsed ImmDt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct ImmDtRepr {
    /// Immediate data.
    pub imm: u32,
}

impl ImmDtRepr {
    /// Parses a view.
    pub fn parse<T: AsRef<[u8]>>(p: &ImmDtPacket<T>) -> Result<ImmDtRepr, WireError> {
        p.check_len()?;
        Ok(ImmDtRepr { imm: p.imm() })
    }
    /// Bytes on the wire.
    pub const fn buffer_len(&self) -> usize {
        4
    }
    /// Writes the header.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(
        &self,
        p: &mut ImmDtPacket<T>,
    ) -> Result<(), WireError> {
        p.check_len()?;
        p.set_imm(self.imm);
        Ok(())
    }
}

/// Parsed IETH.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct IethRepr {
    /// R_Key to invalidate.
    pub rkey: u32,
}

impl IethRepr {
    /// Parses a view.
    pub fn parse<T: AsRef<[u8]>>(p: &IethPacket<T>) -> Result<IethRepr, WireError> {
        p.check_len()?;
        Ok(IethRepr { rkey: p.rkey() })
    }
    /// Bytes on the wire.
    pub const fn buffer_len(&self) -> usize {
        4
    }
    /// Writes the header.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(
        &self,
        p: &mut IethPacket<T>,
    ) -> Result<(), WireError> {
        p.check_len()?;
        p.set_rkey(self.rkey);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn round_trip(v: u32) {
            let mut b = [0u8; 4];
            ImmDtRepr { imm: v }.emit(&mut ImmDtPacket::new_unchecked(&mut b[..])).unwrap();
            prop_assert_eq!(b, v.to_be_bytes());
            prop_assert_eq!(ImmDtRepr::parse(&ImmDtPacket::new_checked(&b[..]).unwrap()).unwrap().imm, v);
            IethRepr { rkey: v }.emit(&mut IethPacket::new_unchecked(&mut b[..])).unwrap();
            prop_assert_eq!(IethRepr::parse(&IethPacket::new_checked(&b[..]).unwrap()).unwrap().rkey, v);
        }
    }

    #[test]
    fn short_is_error() {
        assert!(ImmDtPacket::new_checked(&[1u8, 2, 3][..]).is_err());
        assert!(IethPacket::new_checked(&[][..]).is_err());
    }
}
