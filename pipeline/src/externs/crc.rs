//! Table-driven CRC for any [`CrcSpec`] of width 8..=64, plus the `HashAlgorithm_t` presets.
//!
//! Parameter meaning (TNA `CRCPolynomial(coeff, reversed, msb, extended, init, xor)`, read
//! against bf-utils' dynamic-hash code that the driver and bf-p4c share):
//! - `poly`: the polynomial without its top term (normal form, e.g. `0x04C11DB7`);
//! - `reversed`: reflected algorithm — input bytes LSB first and the result reflected, i.e.
//!   the catalogue's `refin = refout = reversed`;
//! - `init`: the starting register in the catalogue's (unreflected) convention, so a
//!   reflected spec starts from `reflect(init)`, as in the reveng catalogue and the `crc`
//!   crate. bf-utils loads `init` unreflected; the two agree for every init that reads the
//!   same both ways (0, all ones — all of the presets);
//! - `xor`: XORed into the final value;
//! - `msb`: when the hash output is *narrower* than the CRC, take its most significant bits
//!   instead of the least significant ones;
//! - `extended`: when the hash output is *wider* than the CRC, repeat the CRC to fill it
//!   instead of zero-extending (bf-p4c turns this on by default for CRC algorithms).
//!
//! Input that is not a whole number of bytes is zero-padded at the front (most significant
//! end), i.e. the CRC runs over the big-endian bytes of the concatenated value; see
//! `hash::BitWriter::padded_bytes`.

use crate::ir::{CrcSpec, Value};

/// Why a CRC spec cannot be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CrcError {
    #[error("CRC width {0} is outside 8..=64")]
    Width(u16),
    #[error("CRC polynomial {poly:#x} does not fit in {width} bits")]
    PolyTooWide { poly: u64, width: u16 },
    #[error("CRC polynomial {0:#x} is even (its x^0 term must be set)")]
    EvenPolynomial(u64),
    #[error("CRC init value {value:#x} does not fit in {width} bits")]
    InitTooWide { value: u64, width: u16 },
    #[error("CRC final xor {value:#x} does not fit in {width} bits")]
    XorTooWide { value: u64, width: u16 },
}

/// The presets of `HashAlgorithm_t` (bf-p4c maps CRC8/16/32/64 to these standard CRCs:
/// CRC-8/SMBUS, CRC-16/ARC, CRC-32/ISO-HDLC, CRC-64/ECMA-182), LSB output, extended.
pub mod presets {
    use crate::ir::CrcSpec;

    pub const CRC8: CrcSpec = CrcSpec {
        width: 8,
        poly: 0x07,
        reversed: false,
        msb: false,
        extended: true,
        init: 0,
        xor: 0,
    };
    pub const CRC16: CrcSpec = CrcSpec {
        width: 16,
        poly: 0x8005,
        reversed: true,
        msb: false,
        extended: true,
        init: 0,
        xor: 0,
    };
    pub const CRC32: CrcSpec = CrcSpec {
        width: 32,
        poly: 0x04C1_1DB7,
        reversed: true,
        msb: false,
        extended: true,
        init: 0xFFFF_FFFF,
        xor: 0xFFFF_FFFF,
    };
    pub const CRC64: CrcSpec = CrcSpec {
        width: 64,
        poly: 0x42F0_E1EB_A9EA_3693,
        reversed: false,
        msb: false,
        extended: true,
        init: 0,
        xor: 0,
    };
}

fn reflect(mut v: u64, width: u32) -> u64 {
    let mut r = 0u64;
    for _ in 0..width {
        r = (r << 1) | (v & 1);
        v >>= 1;
    }
    r
}

fn mask_of(width: u32) -> u64 {
    if width >= 64 {
        u64::MAX
    } else {
        (1u64 << width) - 1
    }
}

/// A ready-to-run CRC: the spec plus its 256-entry table.
#[derive(Debug, Clone)]
pub struct Crc {
    spec: CrcSpec,
    width: u32,
    mask: u64,
    start: u64,
    table: Box<[u64; 256]>,
}

impl Crc {
    pub fn new(spec: CrcSpec) -> Result<Crc, CrcError> {
        if !(8..=64).contains(&spec.width) {
            return Err(CrcError::Width(spec.width));
        }
        let width = u32::from(spec.width);
        let mask = mask_of(width);
        if spec.poly & !mask != 0 {
            return Err(CrcError::PolyTooWide {
                poly: spec.poly,
                width: spec.width,
            });
        }
        if spec.poly & 1 == 0 {
            return Err(CrcError::EvenPolynomial(spec.poly));
        }
        if spec.init & !mask != 0 {
            return Err(CrcError::InitTooWide {
                value: spec.init,
                width: spec.width,
            });
        }
        if spec.xor & !mask != 0 {
            return Err(CrcError::XorTooWide {
                value: spec.xor,
                width: spec.width,
            });
        }
        let mut table = Box::new([0u64; 256]);
        if spec.reversed {
            let rpoly = reflect(spec.poly, width);
            for (i, slot) in table.iter_mut().enumerate() {
                let mut r = i as u64;
                for _ in 0..8 {
                    r = if r & 1 != 0 { (r >> 1) ^ rpoly } else { r >> 1 };
                }
                *slot = r;
            }
        } else {
            let top = 1u64 << (width - 1);
            for (i, slot) in table.iter_mut().enumerate() {
                let mut r = (i as u64) << (width - 8);
                for _ in 0..8 {
                    r = if r & top != 0 {
                        (r << 1) ^ spec.poly
                    } else {
                        r << 1
                    };
                }
                *slot = r & mask;
            }
        }
        let start = if spec.reversed {
            reflect(spec.init, width)
        } else {
            spec.init
        };
        Ok(Crc {
            spec,
            width,
            mask,
            start,
            table,
        })
    }

    pub fn spec(&self) -> &CrcSpec {
        &self.spec
    }

    /// The CRC of a byte sequence (init, reflection and final xor applied).
    #[inline]
    pub fn checksum_iter(&self, bytes: impl IntoIterator<Item = u8>) -> u64 {
        let mut reg = self.start;
        if self.spec.reversed {
            for b in bytes {
                reg = (reg >> 8) ^ self.table[((reg ^ u64::from(b)) & 0xff) as usize];
            }
        } else {
            let sh = self.width - 8;
            for b in bytes {
                let idx = ((reg >> sh) ^ u64::from(b)) & 0xff;
                reg = ((reg << 8) ^ self.table[idx as usize]) & self.mask;
            }
        }
        (reg ^ self.spec.xor) & self.mask
    }

    /// The CRC of a byte slice.
    pub fn checksum(&self, bytes: &[u8]) -> u64 {
        self.checksum_iter(bytes.iter().copied())
    }

    /// Fits a CRC value to a hash output of `out_width` bits (0..=128) per `msb`/`extended`.
    pub fn output(&self, crc: u64, out_width: u16) -> Value {
        let out = u32::from(out_width.min(128));
        let w = self.width;
        let crc = u128::from(crc & self.mask);
        if out == 0 {
            return 0;
        }
        if out <= w {
            let v = if self.spec.msb { crc >> (w - out) } else { crc };
            return v & ((1u128 << out) - 1);
        }
        if !self.spec.extended {
            return crc;
        }
        let mut v = 0u128;
        let mut at = 0u32;
        while at < out {
            v |= crc << at;
            at += w;
        }
        if out >= 128 {
            v
        } else {
            v & ((1u128 << out) - 1)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CHECK: &[u8] = b"123456789";

    #[test]
    fn presets_match_their_catalogue_check_values() {
        let cases = [
            (presets::CRC8, 0xF4u64),
            (presets::CRC16, 0xBB3D),
            (presets::CRC32, 0xCBF4_3926),
            (presets::CRC64, 0x6C40_DF5F_0B49_7347),
        ];
        for (spec, check) in cases {
            assert_eq!(Crc::new(spec).unwrap().checksum(CHECK), check, "{spec:?}");
        }
    }

    #[test]
    fn bad_specs_are_refused() {
        let mut s = presets::CRC16;
        s.width = 7;
        assert_eq!(Crc::new(s).unwrap_err(), CrcError::Width(7));
        let mut s = presets::CRC16;
        s.poly = 0x1_8005;
        assert!(matches!(Crc::new(s), Err(CrcError::PolyTooWide { .. })));
        let mut s = presets::CRC16;
        s.poly = 0x8004;
        assert_eq!(Crc::new(s).unwrap_err(), CrcError::EvenPolynomial(0x8004));
        let mut s = presets::CRC16;
        s.init = 0x1_0000;
        assert!(matches!(Crc::new(s), Err(CrcError::InitTooWide { .. })));
        let mut s = presets::CRC16;
        s.xor = 0x1_0000;
        assert!(matches!(Crc::new(s), Err(CrcError::XorTooWide { .. })));
    }

    #[test]
    fn output_truncates_or_extends() {
        let c = Crc::new(presets::CRC16).unwrap();
        assert_eq!(c.output(0xBB3D, 8), 0x3D);
        assert_eq!(c.output(0xBB3D, 32), 0xBB3D_BB3D);
        assert_eq!(c.output(0xBB3D, 40), 0x3D_BB3D_BB3D);
        assert_eq!(c.output(0xBB3D, 0), 0);
        let mut s = presets::CRC16;
        s.msb = true;
        s.extended = false;
        let c = Crc::new(s).unwrap();
        assert_eq!(c.output(0xBB3D, 8), 0xBB);
        assert_eq!(c.output(0xBB3D, 32), 0xBB3D);
        assert_eq!(c.output(0xBB3D, 128), 0xBB3D);
    }

    /// Every catalogue CRC of width 8..=64 with refin == refout, against the `crc` crate:
    /// the catalogue check value and random inputs.
    #[test]
    fn matches_the_crc_crate_catalogue() {
        macro_rules! check_all {
            ($t:ty: $($alg:ident),* $(,)?) => {$(
                let a: &crc::Algorithm<$t> = &crc::$alg;
                assert_eq!(a.refin, a.refout);
                let spec = CrcSpec {
                    width: u16::from(a.width),
                    poly: a.poly as u64,
                    reversed: a.refin,
                    msb: false,
                    extended: false,
                    init: a.init as u64,
                    xor: a.xorout as u64,
                };
                let ours = Crc::new(spec).unwrap();
                assert_eq!(ours.checksum(CHECK), a.check as u64, stringify!($alg));
                let theirs = crc::Crc::<$t>::new(a);
                let mut seed = 0x1234_5678_9abc_def0u64;
                for len in [0usize, 1, 2, 7, 64, 300] {
                    let data: Vec<u8> = (0..len)
                        .map(|_| {
                            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
                            (seed >> 56) as u8
                        })
                        .collect();
                    assert_eq!(ours.checksum(&data), theirs.checksum(&data) as u64, stringify!($alg));
                }
            )*};
        }
        check_all!(u8: CRC_8_SMBUS, CRC_8_MAXIM_DOW, CRC_8_ROHC, CRC_8_DARC, CRC_8_I_CODE,
            CRC_8_WCDMA, CRC_8_AUTOSAR, CRC_8_BLUETOOTH);
        check_all!(u16: CRC_10_ATM, CRC_11_FLEXRAY, CRC_12_DECT, CRC_13_BBC, CRC_14_DARC,
            CRC_15_CAN, CRC_16_ARC, CRC_16_IBM_3740, CRC_16_KERMIT, CRC_16_XMODEM, CRC_16_MODBUS,
            CRC_16_USB, CRC_16_RIELLO, CRC_16_DNP, CRC_16_GENIBUS, CRC_16_T10_DIF, CRC_16_IBM_SDLC);
        check_all!(u32: CRC_17_CAN_FD, CRC_21_CAN_FD, CRC_24_OPENPGP, CRC_24_BLE, CRC_30_CDMA,
            CRC_31_PHILIPS, CRC_32_ISO_HDLC, CRC_32_ISCSI, CRC_32_BZIP2, CRC_32_MPEG_2,
            CRC_32_CKSUM, CRC_32_JAMCRC, CRC_32_XFER, CRC_32_AIXM);
        check_all!(u64: CRC_40_GSM, CRC_64_ECMA_182, CRC_64_GO_ISO, CRC_64_WE, CRC_64_XZ,
            CRC_64_REDIS);
    }
}
