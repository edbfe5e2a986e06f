//! The CNP body (RoCEv2 Annex A17.9.3): 16 reserved bytes after a BTH with opcode 0x81
//! and BECN set. Receivers ignore the reserved bytes; we emit zeros.

use super::field::header_view;
use super::WireError;

header_view!(
    /// Zero-copy view of the 16 reserved bytes of a CNP.
    CnpPacket,
    16,
    "CNP"
);

impl<T: AsRef<[u8]>> CnpPacket<T> {
    /// The reserved bytes as received.
    pub fn reserved(&self) -> &[u8] {
        &self.buffer.as_ref()[..16]
    }
}

/// Parsed CNP body (no fields: the reserved bytes are ignored).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct CnpRepr;

impl CnpRepr {
    /// Parses a view (any reserved content is accepted).
    pub fn parse<T: AsRef<[u8]>>(p: &CnpPacket<T>) -> Result<CnpRepr, WireError> {
        p.check_len()?;
        Ok(CnpRepr)
    }
    /// Bytes on the wire.
    pub const fn buffer_len(&self) -> usize {
        16
    }
    /// Writes 16 zero bytes.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(
        &self,
        p: &mut CnpPacket<T>,
    ) -> Result<(), WireError> {
        p.check_len()?;
        p.buffer.as_mut()[..16].fill(0);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn emits_zeros_and_checks_length() {
        let mut b = [0xAAu8; 17];
        CnpRepr
            .emit(&mut CnpPacket::new_unchecked(&mut b[..]))
            .unwrap();
        assert_eq!(&b[..16], &[0u8; 16]);
        assert_eq!(b[16], 0xAA);
        assert!(CnpPacket::new_checked(&b[..15]).is_err());
    }
}
