//! Management datagram (MAD) common header (24 bytes) as carried in the payload of UD
//! SEND_ONLY packets to QP1. A MAD is always 256 bytes: this header plus 232 data bytes.

use super::field::{get_u16, get_u32, get_u64, header_view, set_u16, set_u32, set_u64};
use super::WireError;

/// Size of a whole MAD.
pub const MAD_LEN: usize = 256;
/// Size of the MAD data after the common header.
pub const MAD_DATA_LEN: usize = 232;
/// Management class of the communication manager.
pub const MGMT_CLASS_CM: u8 = 0x07;
/// CM class version used by Linux.
pub const CM_CLASS_VERSION: u8 = 2;
/// Method "Send", used for every CM message.
pub const METHOD_SEND: u8 = 0x03;

header_view!(
    /// Zero-copy view of a MAD common header (and the data after it).
    MadPacket,
    24,
    "MAD header"
);

impl<T: AsRef<[u8]>> MadPacket<T> {
    fn b(&self) -> &[u8] {
        self.buffer.as_ref()
    }
    /// Base version (1).
    pub fn base_version(&self) -> u8 {
        self.b()[0]
    }
    /// Management class.
    pub fn mgmt_class(&self) -> u8 {
        self.b()[1]
    }
    /// Class version.
    pub fn class_version(&self) -> u8 {
        self.b()[2]
    }
    /// Method.
    pub fn method(&self) -> u8 {
        self.b()[3]
    }
    /// Status.
    pub fn status(&self) -> u16 {
        get_u16(self.b(), 4)
    }
    /// Class-specific word.
    pub fn class_specific(&self) -> u16 {
        get_u16(self.b(), 6)
    }
    /// Transaction ID.
    pub fn tid(&self) -> u64 {
        get_u64(self.b(), 8)
    }
    /// Attribute ID.
    pub fn attr_id(&self) -> u16 {
        get_u16(self.b(), 16)
    }
    /// Attribute modifier.
    pub fn attr_mod(&self) -> u32 {
        get_u32(self.b(), 20)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> MadPacket<T> {
    fn bm(&mut self) -> &mut [u8] {
        self.buffer.as_mut()
    }
    /// Sets the first four bytes.
    pub fn set_versions(&mut self, base: u8, class: u8, class_version: u8, method: u8) {
        self.bm()[..4].copy_from_slice(&[base, class, class_version, method]);
    }
    /// Sets the status.
    pub fn set_status(&mut self, v: u16) {
        set_u16(self.bm(), 4, v);
    }
    /// Sets the class-specific word.
    pub fn set_class_specific(&mut self, v: u16) {
        set_u16(self.bm(), 6, v);
    }
    /// Sets the transaction ID.
    pub fn set_tid(&mut self, v: u64) {
        set_u64(self.bm(), 8, v);
    }
    /// Sets the attribute ID and clears the reserved word.
    pub fn set_attr_id(&mut self, v: u16) {
        set_u16(self.bm(), 16, v);
        set_u16(self.bm(), 18, 0);
    }
    /// Sets the attribute modifier.
    pub fn set_attr_mod(&mut self, v: u32) {
        set_u32(self.bm(), 20, v);
    }
    /// The data after the header, mutable.
    pub fn payload_mut(&mut self) -> &mut [u8] {
        &mut self.buffer.as_mut()[24..]
    }
}

/// Parsed MAD common header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MadRepr {
    /// Base version.
    pub base_version: u8,
    /// Management class.
    pub mgmt_class: u8,
    /// Class version.
    pub class_version: u8,
    /// Method.
    pub method: u8,
    /// Status.
    pub status: u16,
    /// Class-specific.
    pub class_specific: u16,
    /// Transaction ID.
    pub tid: u64,
    /// Attribute ID.
    pub attr_id: u16,
    /// Attribute modifier.
    pub attr_mod: u32,
}

impl MadRepr {
    /// A CM "Send" MAD header for an attribute.
    pub fn cm(attr_id: u16, tid: u64) -> MadRepr {
        MadRepr {
            base_version: 1,
            mgmt_class: MGMT_CLASS_CM,
            class_version: CM_CLASS_VERSION,
            method: METHOD_SEND,
            status: 0,
            class_specific: 0,
            tid,
            attr_id,
            attr_mod: 0,
        }
    }
    /// Parses a view.
    pub fn parse<T: AsRef<[u8]>>(p: &MadPacket<T>) -> Result<MadRepr, WireError> {
        p.check_len()?;
        Ok(MadRepr {
            base_version: p.base_version(),
            mgmt_class: p.mgmt_class(),
            class_version: p.class_version(),
            method: p.method(),
            status: p.status(),
            class_specific: p.class_specific(),
            tid: p.tid(),
            attr_id: p.attr_id(),
            attr_mod: p.attr_mod(),
        })
    }
    /// Bytes on the wire (header only).
    pub const fn buffer_len(&self) -> usize {
        24
    }
    /// Writes the header.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(
        &self,
        p: &mut MadPacket<T>,
    ) -> Result<(), WireError> {
        p.check_len()?;
        p.set_versions(
            self.base_version,
            self.mgmt_class,
            self.class_version,
            self.method,
        );
        p.set_status(self.status);
        p.set_class_specific(self.class_specific);
        p.set_tid(self.tid);
        p.set_attr_id(self.attr_id);
        p.set_attr_mod(self.attr_mod);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn round_trip(b in any::<[u8; 4]>(), st: u16, cs: u16, tid: u64, attr: u16, am: u32) {
            let r = MadRepr { base_version: b[0], mgmt_class: b[1], class_version: b[2], method: b[3],
                              status: st, class_specific: cs, tid, attr_id: attr, attr_mod: am };
            let mut buf = [0u8; 24];
            r.emit(&mut MadPacket::new_unchecked(&mut buf[..])).unwrap();
            prop_assert_eq!(MadRepr::parse(&MadPacket::new_checked(&buf[..]).unwrap()).unwrap(), r);
        }
    }
}
