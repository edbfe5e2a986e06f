//! Key checking and normalisation for match entries, plus the bit-mask helpers the index
//! structures share.
//!
//! Normalisation rules (so that one entry has exactly one stored form, which `get`, `iter`,
//! `modify` and `delete` all see):
//! - ternary value bits outside the mask are cleared (`value &= mask`), as the TCAM stores them;
//! - LPM value bits past the prefix are cleared;
//! - shorthand accepted for non-exact keys: `Exact(v)` on a ternary key means mask = all ones,
//!   on an LPM key prefix = full width, on a range key `[v, v]`; it is stored in the long form.
//!
//! Values, masks and bounds wider than the key are refused (`ValueTooWide` / `MaskTooWide`),
//! never silently truncated.

use crate::ir::{KeyMatch, MatchKind, Value};

use super::TableError;

/// All ones in the low `width` bits (`width >= 128` gives all ones).
#[inline]
pub fn width_mask(width: u16) -> Value {
    if width >= 128 {
        Value::MAX
    } else {
        (1u128 << width) - 1
    }
}

/// The top `prefix_len` bits of a `width`-bit field.
#[inline]
pub fn prefix_mask(prefix_len: u16, width: u16) -> Value {
    let width = width.min(128);
    let prefix_len = prefix_len.min(width);
    width_mask(width) & !width_mask(width - prefix_len)
}

/// `x << by`, zero when `by >= 128` (no overflow panic).
#[inline]
pub fn shl(x: Value, by: u32) -> Value {
    x.checked_shl(by).unwrap_or(0)
}

/// `x >> by`, 0 when `by` ≥ 128.
#[inline]
pub fn shr(x: Value, by: u32) -> Value {
    x.checked_shr(by).unwrap_or(0)
}

/// Which match kind a `KeyMatch` literally is.
pub fn kind_of(m: &KeyMatch) -> MatchKind {
    match m {
        KeyMatch::Exact(_) => MatchKind::Exact,
        KeyMatch::Ternary { .. } => MatchKind::Ternary,
        KeyMatch::Lpm { .. } => MatchKind::Lpm,
        KeyMatch::Range { .. } => MatchKind::Range,
    }
}

fn fits(field: usize, value: Value, width: u16) -> Result<(), TableError> {
    if value & !width_mask(width) != 0 {
        Err(TableError::ValueTooWide {
            field,
            value,
            width,
        })
    } else {
        Ok(())
    }
}

/// Checks one field of an entry against its key's kind and width and returns the stored form.
pub fn normalize(
    field: usize,
    kind: MatchKind,
    width: u16,
    m: &KeyMatch,
) -> Result<KeyMatch, TableError> {
    match (kind, *m) {
        (MatchKind::Exact, KeyMatch::Exact(v)) => {
            fits(field, v, width)?;
            Ok(KeyMatch::Exact(v))
        }
        (MatchKind::Ternary, KeyMatch::Exact(v)) => {
            fits(field, v, width)?;
            Ok(KeyMatch::Ternary {
                value: v,
                mask: width_mask(width),
            })
        }
        (MatchKind::Ternary, KeyMatch::Ternary { value, mask }) => {
            fits(field, value, width)?;
            if mask & !width_mask(width) != 0 {
                return Err(TableError::MaskTooWide { field, mask, width });
            }
            Ok(KeyMatch::Ternary {
                value: value & mask,
                mask,
            })
        }
        (MatchKind::Lpm, KeyMatch::Exact(v)) => {
            fits(field, v, width)?;
            Ok(KeyMatch::Lpm {
                value: v,
                prefix_len: width.min(128),
            })
        }
        (MatchKind::Lpm, KeyMatch::Lpm { value, prefix_len }) => {
            fits(field, value, width)?;
            if prefix_len > width.min(128) {
                return Err(TableError::PrefixTooLong {
                    field,
                    prefix_len,
                    width,
                });
            }
            Ok(KeyMatch::Lpm {
                value: value & prefix_mask(prefix_len, width),
                prefix_len,
            })
        }
        (MatchKind::Range, KeyMatch::Exact(v)) => {
            fits(field, v, width)?;
            Ok(KeyMatch::Range { lo: v, hi: v })
        }
        (MatchKind::Range, KeyMatch::Range { lo, hi }) => {
            fits(field, lo, width)?;
            fits(field, hi, width)?;
            if lo > hi {
                return Err(TableError::RangeInverted { field, lo, hi });
            }
            Ok(KeyMatch::Range { lo, hi })
        }
        (expected, got) => Err(TableError::KindMismatch {
            field,
            expected,
            got: kind_of(&got),
        }),
    }
}

/// One field of a TCAM row: every normalised `KeyMatch` becomes a value/mask or a range test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldTest {
    Mask { value: Value, mask: Value },
    Range { lo: Value, hi: Value },
}

impl FieldTest {
    /// The test for a normalised field of a `width`-bit key.
    pub fn from_match(m: &KeyMatch, width: u16) -> FieldTest {
        match *m {
            KeyMatch::Exact(v) => FieldTest::Mask {
                value: v,
                mask: width_mask(width),
            },
            KeyMatch::Ternary { value, mask } => FieldTest::Mask { value, mask },
            KeyMatch::Lpm { value, prefix_len } => FieldTest::Mask {
                value,
                mask: prefix_mask(prefix_len, width),
            },
            KeyMatch::Range { lo, hi } => FieldTest::Range { lo, hi },
        }
    }

    #[inline]
    pub fn matches(&self, key: Value) -> bool {
        match *self {
            FieldTest::Mask { value, mask } => key & mask == value,
            FieldTest::Range { lo, hi } => lo <= key && key <= hi,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks() {
        assert_eq!(width_mask(0), 0);
        assert_eq!(width_mask(8), 0xff);
        assert_eq!(width_mask(128), Value::MAX);
        assert_eq!(prefix_mask(24, 32), 0xffff_ff00);
        assert_eq!(prefix_mask(0, 32), 0);
        assert_eq!(prefix_mask(32, 32), 0xffff_ffff);
        assert_eq!(prefix_mask(1, 128), 1u128 << 127);
        assert_eq!(shl(1, 128), 0);
    }

    #[test]
    fn ternary_value_outside_mask_is_cleared() {
        let m = normalize(
            0,
            MatchKind::Ternary,
            16,
            &KeyMatch::Ternary {
                value: 0x1234,
                mask: 0xff00,
            },
        )
        .unwrap();
        assert_eq!(
            m,
            KeyMatch::Ternary {
                value: 0x1200,
                mask: 0xff00
            }
        );
    }

    #[test]
    fn errors_name_the_field() {
        assert_eq!(
            normalize(2, MatchKind::Exact, 8, &KeyMatch::Exact(0x100)),
            Err(TableError::ValueTooWide {
                field: 2,
                value: 0x100,
                width: 8
            })
        );
        assert_eq!(
            normalize(
                1,
                MatchKind::Exact,
                8,
                &KeyMatch::Lpm {
                    value: 0,
                    prefix_len: 1
                }
            ),
            Err(TableError::KindMismatch {
                field: 1,
                expected: MatchKind::Exact,
                got: MatchKind::Lpm
            })
        );
        assert_eq!(
            normalize(
                0,
                MatchKind::Lpm,
                32,
                &KeyMatch::Lpm {
                    value: 0,
                    prefix_len: 33
                }
            ),
            Err(TableError::PrefixTooLong {
                field: 0,
                prefix_len: 33,
                width: 32
            })
        );
        assert_eq!(
            normalize(0, MatchKind::Range, 16, &KeyMatch::Range { lo: 5, hi: 4 }),
            Err(TableError::RangeInverted {
                field: 0,
                lo: 5,
                hi: 4
            })
        );
        assert_eq!(
            normalize(
                0,
                MatchKind::Ternary,
                4,
                &KeyMatch::Ternary {
                    value: 0,
                    mask: 0x10
                }
            ),
            Err(TableError::MaskTooWide {
                field: 0,
                mask: 0x10,
                width: 4
            })
        );
    }
}
