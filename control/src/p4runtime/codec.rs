//! P4Runtime values and matches to pisa's and back: byte strings (big-endian; reads answer in
//! the canonical shortest form, writes accept any length whose value fits the width), field
//! matches with the spec's validity rules (a don't-care is an omitted field: a zero mask, a
//! zero prefix or a full range is refused; bits outside a mask or prefix must be zero), the
//! priority mapping (P4Runtime: larger wins; pisa's runtime API: smaller wins), and the error
//! a request gets ([`P4Error`]: a gRPC code and a message).

use pipeline::api::ApiError;
use pipeline::ir::{KeyMatch, MatchKind, Value};
use tonic::Code;

use super::proto::p4::v1::{field_match, FieldMatch};
use super::schema::FieldInfo;

/// Why a request (or one update of a batch) was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct P4Error {
    pub code: Code,
    pub message: String,
}

impl P4Error {
    pub fn new(code: Code, message: impl Into<String>) -> P4Error {
        P4Error {
            code,
            message: message.into(),
        }
    }
    pub fn invalid(message: impl Into<String>) -> P4Error {
        P4Error::new(Code::InvalidArgument, message)
    }
    pub fn not_found(message: impl Into<String>) -> P4Error {
        P4Error::new(Code::NotFound, message)
    }
    pub fn unimplemented(message: impl Into<String>) -> P4Error {
        P4Error::new(Code::Unimplemented, message)
    }
}

impl From<ApiError> for P4Error {
    fn from(e: ApiError) -> P4Error {
        let code = match &e {
            ApiError::DuplicateEntry { .. } => Code::AlreadyExists,
            ApiError::EntryNotFound { .. } | ApiError::Unknown { .. } => Code::NotFound,
            ApiError::TableFull { .. } => Code::ResourceExhausted,
            ApiError::NoDefaultCell { .. } => Code::Unimplemented,
            ApiError::ConstTable { .. } | ApiError::ConstDefault { .. } => Code::PermissionDenied,
            ApiError::Profile { error, .. } => {
                use pipeline::table::profile::ProfileError as P;
                match error {
                    P::NoMember(_) | P::NoGroup(_) => Code::NotFound,
                    P::MembersFull(_) | P::GroupsFull(_) => Code::ResourceExhausted,
                    P::MemberInUse(_)
                    | P::GroupInUse(_)
                    | P::MemberInGroup(..)
                    | P::EmptyGroup(_)
                    | P::EmptyingUsedGroup(_) => Code::FailedPrecondition,
                    _ => Code::InvalidArgument,
                }
            }
            ApiError::Pre(p) => match p {
                pipeline::tm::pre::PreError::GroupExists(_)
                | pipeline::tm::pre::PreError::NodeExists(_) => Code::AlreadyExists,
                pipeline::tm::pre::PreError::GroupNotFound(_)
                | pipeline::tm::pre::PreError::NodeNotFound(_) => Code::NotFound,
                _ => Code::InvalidArgument,
            },
            _ => Code::InvalidArgument,
        };
        P4Error::new(code, e.to_string())
    }
}

/// Bits that fit in `width`.
pub fn mask(width: u16) -> Value {
    if width >= 128 {
        Value::MAX
    } else {
        (1u128 << width) - 1
    }
}

/// A byte string as a value of `width` bits.
pub fn to_value(bytes: &[u8], width: u16, what: &str) -> Result<Value, P4Error> {
    if bytes.is_empty() {
        return Err(P4Error::invalid(format!("{what}: empty byte string")));
    }
    let start = bytes.iter().position(|b| *b != 0).unwrap_or(bytes.len());
    let sig = &bytes[start..];
    if sig.len() > 16 {
        return Err(P4Error::invalid(format!(
            "{what}: value does not fit in {width} bits"
        )));
    }
    let v = sig.iter().fold(0u128, |acc, b| acc << 8 | Value::from(*b));
    if v & !mask(width) != 0 {
        return Err(P4Error::invalid(format!(
            "{what}: value {v:#x} does not fit in {width} bits"
        )));
    }
    Ok(v)
}

/// A value in the canonical byte string form (shortest, at least one byte).
pub fn from_value(v: Value) -> Vec<u8> {
    let bytes = v.to_be_bytes();
    let start = bytes.iter().position(|b| *b != 0).unwrap_or(15);
    bytes[start..].to_vec()
}

/// A P4Runtime field match as pisa's key match for field `f`.
pub fn key_match(f: &FieldInfo, m: &FieldMatch) -> Result<KeyMatch, P4Error> {
    use field_match::FieldMatchType as T;
    let what = |part: &str| format!("match field `{}` ({part})", f.name);
    let wrong = |got: &str| {
        P4Error::invalid(format!(
            "match field `{}` is {}, the request gave a {got} match",
            f.name, f.kind
        ))
    };
    match (&m.field_match_type, f.kind) {
        (Some(T::Exact(e)), MatchKind::Exact) => Ok(KeyMatch::Exact(to_value(
            &e.value,
            f.width,
            &what("value"),
        )?)),
        (Some(T::Ternary(t)), MatchKind::Ternary) => {
            let value = to_value(&t.value, f.width, &what("value"))?;
            let mask = to_value(&t.mask, f.width, &what("mask"))?;
            if mask == 0 {
                return Err(P4Error::invalid(format!(
                    "match field `{}`: a zero mask is a don't-care; omit the field",
                    f.name
                )));
            }
            if value & !mask != 0 {
                return Err(P4Error::invalid(format!(
                    "match field `{}`: value {value:#x} has bits outside mask {mask:#x}",
                    f.name
                )));
            }
            Ok(KeyMatch::Ternary { value, mask })
        }
        (Some(T::Lpm(l)), MatchKind::Lpm) => {
            let value = to_value(&l.value, f.width, &what("value"))?;
            let Ok(prefix_len) = u16::try_from(l.prefix_len) else {
                return Err(P4Error::invalid(format!(
                    "match field `{}`: prefix length {} is negative",
                    f.name, l.prefix_len
                )));
            };
            if prefix_len == 0 || prefix_len > f.width {
                return Err(P4Error::invalid(format!(
                    "match field `{}`: prefix length {prefix_len} is outside 1..={} (omit the field for a don't-care)",
                    f.name, f.width
                )));
            }
            let host = mask(f.width - prefix_len);
            if value & host != 0 {
                return Err(P4Error::invalid(format!(
                    "match field `{}`: value {value:#x} has bits past the /{prefix_len} prefix",
                    f.name
                )));
            }
            Ok(KeyMatch::Lpm { value, prefix_len })
        }
        (Some(T::Range(r)), MatchKind::Range) => {
            let lo = to_value(&r.low, f.width, &what("low"))?;
            let hi = to_value(&r.high, f.width, &what("high"))?;
            if lo > hi {
                return Err(P4Error::invalid(format!(
                    "match field `{}`: low {lo:#x} is above high {hi:#x}",
                    f.name
                )));
            }
            if lo == 0 && hi == mask(f.width) {
                return Err(P4Error::invalid(format!(
                    "match field `{}`: the full range is a don't-care; omit the field",
                    f.name
                )));
            }
            Ok(KeyMatch::Range { lo, hi })
        }
        (Some(T::Exact(_)), _) => Err(wrong("exact")),
        (Some(T::Ternary(_)), _) => Err(wrong("ternary")),
        (Some(T::Lpm(_)), _) => Err(wrong("lpm")),
        (Some(T::Range(_)), _) => Err(wrong("range")),
        (Some(T::Optional(_)), _) => Err(wrong("optional")),
        (Some(T::Other(_)), _) => Err(wrong("architecture-specific")),
        (None, _) => Err(P4Error::invalid(format!(
            "match field `{}` has no match value",
            f.name
        ))),
    }
}

/// pisa's key match as a P4Runtime field match; `None` for a don't-care (omitted in reads).
pub fn field_match(f: &FieldInfo, k: &KeyMatch) -> Option<FieldMatch> {
    use field_match::FieldMatchType as T;
    let t = match *k {
        KeyMatch::Exact(v) => T::Exact(field_match::Exact {
            value: from_value(v),
        }),
        KeyMatch::Ternary { mask: 0, .. } => return None,
        KeyMatch::Ternary { value, mask } => T::Ternary(field_match::Ternary {
            value: from_value(value),
            mask: from_value(mask),
        }),
        KeyMatch::Lpm { prefix_len: 0, .. } => return None,
        KeyMatch::Lpm { value, prefix_len } => T::Lpm(field_match::Lpm {
            value: from_value(value),
            prefix_len: i32::from(prefix_len),
        }),
        KeyMatch::Range { lo, hi } if lo == 0 && hi == mask(f.width) => return None,
        KeyMatch::Range { lo, hi } => T::Range(field_match::Range {
            low: from_value(lo),
            high: from_value(hi),
        }),
    };
    Some(FieldMatch {
        field_id: f.id,
        field_match_type: Some(t),
    })
}

/// A P4Runtime priority (1..=2^31-1, larger wins) as pisa's (smaller wins), mapped as a
/// program's `largest_priority_wins` const entries are, so the two compare alike.
pub fn to_pisa_priority(p: i32) -> Result<u32, P4Error> {
    u32::try_from(p)
        .ok()
        .filter(|p| *p >= 1)
        .and_then(pipeline::table::priority_from_largest_wins)
        .ok_or_else(|| {
            P4Error::invalid(format!(
                "priority {p}: entries of this table need a priority of at least 1"
            ))
        })
}

/// pisa's priority as P4Runtime's.
pub fn from_pisa_priority(p: u32) -> i32 {
    pipeline::table::priority_to_largest_wins(p).max(1) as i32
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(kind: MatchKind, width: u16) -> FieldInfo {
        FieldInfo {
            id: 1,
            name: "f".into(),
            width,
            kind,
        }
    }

    #[test]
    fn byte_strings() {
        assert_eq!(to_value(&[0, 0, 1, 2], 16, "x"), Ok(0x102));
        assert_eq!(from_value(0x102), vec![1, 2]);
        assert_eq!(from_value(0), vec![0]);
        assert_eq!(
            to_value(&[2, 0], 9, "x").unwrap_err().code,
            Code::InvalidArgument
        );
        assert!(to_value(&[], 9, "x").is_err());
        assert!(to_value(&[1; 20], 128, "x").is_err());
    }

    #[test]
    fn matches_follow_the_spec_rules() {
        use field_match::FieldMatchType as T;
        let lpm = field(MatchKind::Lpm, 32);
        let m = |t| FieldMatch {
            field_id: 1,
            field_match_type: Some(t),
        };
        let ok = m(T::Lpm(field_match::Lpm {
            value: vec![10, 0, 1, 0],
            prefix_len: 24,
        }));
        let k = key_match(&lpm, &ok).unwrap();
        assert_eq!(
            k,
            KeyMatch::Lpm {
                value: 0x0a00_0100,
                prefix_len: 24
            }
        );
        assert_eq!(field_match(&lpm, &k), Some(ok));
        let stray = m(T::Lpm(field_match::Lpm {
            value: vec![10, 0, 1, 1],
            prefix_len: 24,
        }));
        assert!(key_match(&lpm, &stray).is_err());
        let zero = m(T::Lpm(field_match::Lpm {
            value: vec![0],
            prefix_len: 0,
        }));
        assert!(key_match(&lpm, &zero).is_err());
        let tern = field(MatchKind::Ternary, 8);
        let dont_care = m(T::Ternary(field_match::Ternary {
            value: vec![0],
            mask: vec![0],
        }));
        assert!(key_match(&tern, &dont_care).is_err());
        assert_eq!(
            field_match(&tern, &KeyMatch::Ternary { value: 0, mask: 0 }),
            None
        );
        let exact = m(T::Exact(field_match::Exact { value: vec![1] }));
        assert_eq!(
            key_match(&tern, &exact).unwrap_err().code,
            Code::InvalidArgument
        );
        let range = field(MatchKind::Range, 16);
        let full = m(T::Range(field_match::Range {
            low: vec![0],
            high: vec![0xff, 0xff],
        }));
        assert!(key_match(&range, &full).is_err());
    }

    #[test]
    fn priorities_invert() {
        let a = to_pisa_priority(10).unwrap();
        let b = to_pisa_priority(20).unwrap();
        assert!(
            b < a,
            "larger P4Runtime priority wins = smaller pisa priority"
        );
        assert_eq!(from_pisa_priority(a), 10);
        assert!(to_pisa_priority(0).is_err());
    }
}
