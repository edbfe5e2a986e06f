//! Big-endian field accessors on byte slices and the macro that declares the
//! fixed-size zero-copy header views (`new_unchecked`, `new_checked`, `check_len`, …).
//!
//! The readers index directly: every view calls them only after `check_len` succeeded
//! (or documents that `new_unchecked` getters panic on short buffers, as smoltcp does).

pub(crate) fn get_u16(b: &[u8], off: usize) -> u16 {
    u16::from_be_bytes([b[off], b[off + 1]])
}

pub(crate) fn get_u24(b: &[u8], off: usize) -> u32 {
    u32::from_be_bytes([0, b[off], b[off + 1], b[off + 2]])
}

pub(crate) fn get_u32(b: &[u8], off: usize) -> u32 {
    u32::from_be_bytes([b[off], b[off + 1], b[off + 2], b[off + 3]])
}

pub(crate) fn get_u64(b: &[u8], off: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[off..off + 8]);
    u64::from_be_bytes(a)
}

pub(crate) fn set_u16(b: &mut [u8], off: usize, v: u16) {
    b[off..off + 2].copy_from_slice(&v.to_be_bytes());
}

/// Writes the low 24 bits of `v`.
pub(crate) fn set_u24(b: &mut [u8], off: usize, v: u32) {
    b[off..off + 3].copy_from_slice(&v.to_be_bytes()[1..]);
}

pub(crate) fn set_u32(b: &mut [u8], off: usize, v: u32) {
    b[off..off + 4].copy_from_slice(&v.to_be_bytes());
}

pub(crate) fn set_u64(b: &mut [u8], off: usize, v: u64) {
    b[off..off + 8].copy_from_slice(&v.to_be_bytes());
}

/// Checks that a value fits in `bits` bits, for emit-time validation of narrow fields.
pub(crate) fn check_bits(
    field: &'static str,
    value: u64,
    bits: u32,
) -> Result<(), super::WireError> {
    if bits < 64 && value >> bits != 0 {
        Err(super::WireError::FieldRange { field, value })
    } else {
        Ok(())
    }
}

/// Declares a zero-copy view over a header of fixed length `$len`.
macro_rules! header_view {
    ($(#[$meta:meta])* $name:ident, $len:expr, $label:expr) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub struct $name<T: AsRef<[u8]>> {
            buffer: T,
        }

        impl<T: AsRef<[u8]>> $name<T> {
            /// Length of the header on the wire.
            pub const LEN: usize = $len;

            /// Wraps a buffer without checking its length; getters panic if it is too short.
            pub const fn new_unchecked(buffer: T) -> Self {
                Self { buffer }
            }

            /// Wraps a buffer after checking it holds the whole header.
            pub fn new_checked(buffer: T) -> Result<Self, $crate::wire::WireError> {
                let view = Self::new_unchecked(buffer);
                view.check_len()?;
                Ok(view)
            }

            /// Ensures that no getter or setter will index out of bounds.
            pub fn check_len(&self) -> Result<(), $crate::wire::WireError> {
                let have = self.buffer.as_ref().len();
                if have < Self::LEN {
                    Err($crate::wire::WireError::Truncated {
                        header: $label,
                        need: Self::LEN,
                        have,
                    })
                } else {
                    Ok(())
                }
            }

            /// Returns the wrapped buffer.
            pub fn into_inner(self) -> T {
                self.buffer
            }

            /// The bytes after this header.
            pub fn payload(&self) -> &[u8] {
                &self.buffer.as_ref()[Self::LEN..]
            }
        }
    };
}

pub(crate) use header_view;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn u24_round_trip_keeps_neighbours() {
        let mut b = [0xAAu8; 5];
        set_u24(&mut b, 1, 0x12_3456);
        assert_eq!(b, [0xAA, 0x12, 0x34, 0x56, 0xAA]);
        assert_eq!(get_u24(&b, 1), 0x12_3456);
    }

    #[test]
    fn check_bits_rejects_wide_values() {
        assert!(check_bits("qpn", 0xFF_FFFF, 24).is_ok());
        assert!(check_bits("qpn", 0x100_0000, 24).is_err());
    }
}
