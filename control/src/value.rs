//! Values and match forms as users type them (table files, STF scripts, command lines), read
//! into the pipeline's `u128` values with a check against the field's width.
//!
//! Values: decimal, `0x` hex, `0b` binary, `0o` octal (`_` separators allowed), a MAC address
//! `aa:bb:cc:dd:ee:ff`, an IPv4 dotted quad, an IPv6 address (full or `::` form).
//! Match forms, checked against the key's match kind:
//! - exact `v`;
//! - lpm `v/len` (a plain `v` is a full-length prefix);
//! - ternary `v &&& mask` (a plain `v` is an exact match, `v/len` a prefix mask);
//! - range `lo..hi` (a plain `v` is `v..v`);
//! - STF's don't-care digits: `0x****0101`, `0b1*0*` — for ternary keys each `*` digit is
//!   masked out, and digits left of the literal are don't-care too (as p4c's STF runner does);
//!   for lpm keys the `*` digits must be trailing and shorten the prefix;
//! - `*` alone: match anything (ternary, lpm and range keys).
//!
//! Bits that a ternary mask or an lpm prefix leaves out are cleared from the value.
//!
//! The way back ([`format_value`], [`format_key_match`]) writes values as a user would: a 48-bit
//! field as a MAC, a 32-bit or 128-bit address field as an IPv4 or IPv6 address, other values
//! in decimal (hex above 64 bits); whatever it writes, the readers above take back unchanged.

use std::net::{Ipv4Addr, Ipv6Addr};

use pipeline::ir::{KeyMatch, MatchKind, Value};

/// An IPv4 address as a field value.
pub fn ipv4_value(a: Ipv4Addr) -> Value {
    Value::from(u32::from(a))
}

/// A MAC address as a field value.
pub fn mac_value(m: [u8; 6]) -> Value {
    m.iter().fold(0, |acc, b| (acc << 8) | Value::from(*b))
}

/// What [`parse_value`] accepts, for error messages.
pub const ACCEPTED: &str =
    "decimal, 0x hex, 0b binary, 0o octal, a MAC (aa:bb:cc:dd:ee:ff), an IPv4 (a.b.c.d) or IPv6 address";

/// Why a typed value or match was refused. Each variant carries the offending text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ValueError {
    #[error("empty value; expected {ACCEPTED}")]
    Empty,
    #[error("`{text}` is not a value; expected {ACCEPTED}")]
    Invalid { text: String },
    #[error("`{text}` does not fit in {width} bits")]
    TooWide { text: String, width: u16 },
    #[error("`{text}`: prefix length {prefix_len} is longer than the field ({width} bits)")]
    PrefixTooLong {
        text: String,
        prefix_len: u32,
        width: u16,
    },
    #[error("`{text}`: the range's low end is above its high end")]
    RangeInverted { text: String },
    #[error("`{text}` is {form} match but the key is {kind}; {kind} keys take {accepts}")]
    WrongForm {
        text: String,
        form: &'static str,
        kind: MatchKind,
        accepts: &'static str,
    },
    #[error(
        "`{text}`: don't-care digits `*` only go in 0x/0b/0o literals for ternary or lpm keys \
         (trailing digits for lpm)"
    )]
    DontCare { text: String },
}

/// A literal as read: its value and which bits were given (`*` digits clear their care bits).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Literal {
    value: Value,
    /// Bits the literal cares about; all ones when it has no `*` digits.
    care: Value,
    /// Whether any digit was `*`.
    has_star: bool,
    /// Number of trailing `*` digits times bits per digit (lpm prefixes).
    trailing_star_bits: u32,
    /// Only the trailing digits are stars (no `*` left of a real digit).
    stars_trailing_only: bool,
}

impl Literal {
    fn plain(value: Value) -> Literal {
        Literal {
            value,
            care: Value::MAX,
            has_star: false,
            trailing_star_bits: 0,
            stars_trailing_only: true,
        }
    }
}

/// All-ones mask of `width` bits (128 and above: all bits).
pub fn width_mask(width: u16) -> Value {
    if width >= 128 {
        Value::MAX
    } else {
        (1u128 << width) - 1
    }
}

fn fits(value: Value, width: u16) -> bool {
    value & !width_mask(width) == 0
}

/// Mask of the top `len` bits of a `width`-bit field.
fn prefix_mask(len: u32, width: u16) -> Value {
    let w = u32::from(width.min(128));
    if len == 0 {
        0
    } else {
        width_mask(width) & !width_mask((w - len.min(w)) as u16)
    }
}

fn invalid(text: &str) -> ValueError {
    ValueError::Invalid {
        text: text.to_string(),
    }
}

fn parse_radix(text: &str, digits: &str, bits: u32) -> Result<Literal, ValueError> {
    let mut value: Value = 0;
    let mut care: Value = 0;
    let mut any = false;
    let mut has_star = false;
    let mut trailing_star_bits = 0u32;
    let mut real_after_star = false;
    let digit_mask: Value = (1 << bits) - 1;
    for c in digits.chars() {
        if c == '_' {
            continue;
        }
        let (d, star) = if c == '*' {
            (0, true)
        } else {
            let d = c.to_digit(1 << bits).ok_or_else(|| invalid(text))?;
            (Value::from(d), false)
        };
        any = true;
        if value >> (128 - bits) != 0 {
            return Err(ValueError::TooWide {
                text: text.to_string(),
                width: 128,
            });
        }
        value = (value << bits) | d;
        care = (care << bits) | if star { 0 } else { digit_mask };
        if star {
            has_star = true;
            trailing_star_bits += bits;
        } else {
            if has_star {
                real_after_star = true;
            }
            trailing_star_bits = 0;
        }
    }
    if !any {
        return Err(invalid(text));
    }
    if !has_star {
        care = Value::MAX;
    }
    Ok(Literal {
        value,
        care,
        has_star,
        trailing_star_bits,
        stars_trailing_only: !real_after_star,
    })
}

fn parse_decimal(text: &str) -> Result<Value, ValueError> {
    let mut value: Value = 0;
    let mut any = false;
    for c in text.chars() {
        if c == '_' {
            continue;
        }
        let d = c.to_digit(10).ok_or_else(|| invalid(text))?;
        any = true;
        value = value
            .checked_mul(10)
            .and_then(|v| v.checked_add(Value::from(d)))
            .ok_or_else(|| ValueError::TooWide {
                text: text.to_string(),
                width: 128,
            })?;
    }
    if any {
        Ok(value)
    } else {
        Err(invalid(text))
    }
}

fn parse_mac(text: &str) -> Option<Value> {
    let sep = if text.contains('-') { '-' } else { ':' };
    let mut value: Value = 0;
    let mut n = 0;
    for part in text.split(sep) {
        if part.is_empty() || part.len() > 2 {
            return None;
        }
        let b = u8::from_str_radix(part, 16).ok()?;
        value = (value << 8) | Value::from(b);
        n += 1;
    }
    (n == 6).then_some(value)
}

/// A literal for a `width`-bit field: one too big even for 128 bits is reported against the
/// field's width (a 9-bit parameter's overflow names 9 bits, not the reader's 128).
fn parse_literal(text: &str, width: u16) -> Result<Literal, ValueError> {
    parse_literal_u128(text).map_err(|e| match e {
        ValueError::TooWide { text, width: w } => ValueError::TooWide {
            text,
            width: width.min(w),
        },
        e => e,
    })
}

fn parse_literal_u128(text: &str) -> Result<Literal, ValueError> {
    let t = text.trim();
    if t.is_empty() {
        return Err(ValueError::Empty);
    }
    let lower = t.get(..2).map(str::to_ascii_lowercase);
    match lower.as_deref() {
        Some("0x") => return parse_radix(text, &t[2..], 4),
        Some("0b") => return parse_radix(text, &t[2..], 1),
        Some("0o") => return parse_radix(text, &t[2..], 3),
        _ => {}
    }
    if t.chars().all(|c| c.is_ascii_digit() || c == '_') {
        return parse_decimal(t).map(Literal::plain);
    }
    if t.contains(':') || (t.contains('-') && t.len() == 17) {
        if let Some(mac) = parse_mac(t) {
            return Ok(Literal::plain(mac));
        }
        if let Ok(v6) = t.parse::<Ipv6Addr>() {
            return Ok(Literal::plain(u128::from(v6)));
        }
        return Err(invalid(text));
    }
    if t.contains('.') {
        if let Ok(v4) = t.parse::<Ipv4Addr>() {
            return Ok(Literal::plain(Value::from(u32::from(v4))));
        }
    }
    Err(invalid(text))
}

fn check_width(text: &str, value: Value, width: u16) -> Result<Value, ValueError> {
    if fits(value, width) {
        Ok(value)
    } else {
        Err(ValueError::TooWide {
            text: text.trim().to_string(),
            width,
        })
    }
}

/// Reads one value (no `*` digits) and checks that it fits in `width` bits.
pub fn parse_value(text: &str, width: u16) -> Result<Value, ValueError> {
    let lit = parse_literal(text, width)?;
    if lit.has_star {
        return Err(ValueError::DontCare {
            text: text.trim().to_string(),
        });
    }
    check_width(text, lit.value, width)
}

/// Reads a value that fits in `u128`, whatever the width (indices, ids, ports).
pub fn parse_u128(text: &str) -> Result<Value, ValueError> {
    parse_value(text, 128)
}

/// The match form a piece of text is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Form<'a> {
    Any,
    Plain(&'a str),
    Ternary(&'a str, &'a str),
    Lpm(&'a str, &'a str),
    Range(&'a str, &'a str),
}

impl Form<'_> {
    fn name(&self) -> &'static str {
        match self {
            Form::Any => "a match-anything `*`",
            Form::Plain(_) => "a plain-value",
            Form::Ternary(..) => "a ternary (`v &&& mask`)",
            Form::Lpm(..) => "an lpm (`v/len`)",
            Form::Range(..) => "a range (`lo..hi`)",
        }
    }
}

fn split_form(t: &str) -> Form<'_> {
    if t == "*" {
        Form::Any
    } else if let Some((v, m)) = t.split_once("&&&") {
        Form::Ternary(v, m)
    } else if let Some((lo, hi)) = t.split_once("..") {
        Form::Range(lo, hi)
    } else if let Some((v, len)) = t.split_once('/') {
        Form::Lpm(v, len)
    } else {
        Form::Plain(t)
    }
}

fn accepts(kind: MatchKind) -> &'static str {
    match kind {
        MatchKind::Exact => "a plain value",
        MatchKind::Lpm => "`v/len`, a plain value or a hex literal with trailing `*` digits",
        MatchKind::Ternary => {
            "`v &&& mask`, `v/len`, a plain value, `*` or a literal with `*` digits"
        }
        MatchKind::Range => "`lo..hi`, a plain value or `*`",
        MatchKind::Selector => "no value (a selector key is an input of the selector's hash)",
    }
}

fn prefix_len(text: &str, len: &str, width: u16) -> Result<u32, ValueError> {
    let n = parse_decimal(len.trim()).map_err(|_| invalid(text))?;
    if n > Value::from(width) {
        return Err(ValueError::PrefixTooLong {
            text: text.to_string(),
            prefix_len: u32::try_from(n).unwrap_or(u32::MAX),
            width,
        });
    }
    Ok(n as u32)
}

/// Reads a match for a key of `kind` and `width` bits.
pub fn parse_key_match(text: &str, kind: MatchKind, width: u16) -> Result<KeyMatch, ValueError> {
    let t = text.trim();
    if t.is_empty() {
        return Err(ValueError::Empty);
    }
    let form = split_form(t);
    let wrong = || ValueError::WrongForm {
        text: t.to_string(),
        form: form.name(),
        kind,
        accepts: accepts(kind),
    };
    let all = width_mask(width);
    match (kind, form) {
        (MatchKind::Exact, Form::Plain(v)) => Ok(KeyMatch::Exact(parse_value(v, width)?)),
        (MatchKind::Ternary, Form::Any) => Ok(KeyMatch::Ternary { value: 0, mask: 0 }),
        (MatchKind::Lpm, Form::Any) => Ok(KeyMatch::Lpm {
            value: 0,
            prefix_len: 0,
        }),
        (MatchKind::Range, Form::Any) => Ok(KeyMatch::Range { lo: 0, hi: all }),
        (MatchKind::Ternary, Form::Ternary(v, m)) => {
            let value = parse_value(v, width)?;
            let mask = parse_value(m, width)?;
            Ok(KeyMatch::Ternary {
                value: value & mask,
                mask,
            })
        }
        (MatchKind::Ternary, Form::Lpm(v, len)) => {
            let value = parse_value(v, width)?;
            let mask = prefix_mask(prefix_len(t, len, width)?, width);
            Ok(KeyMatch::Ternary {
                value: value & mask,
                mask,
            })
        }
        (MatchKind::Ternary, Form::Plain(v)) => {
            let lit = parse_literal(v, width)?;
            let mask = lit.care & all;
            let value = check_width(t, lit.value, width)?;
            Ok(KeyMatch::Ternary {
                value: value & mask,
                mask,
            })
        }
        (MatchKind::Lpm, Form::Lpm(v, len)) => {
            let value = parse_value(v, width)?;
            let prefix_len = prefix_len(t, len, width)?;
            Ok(KeyMatch::Lpm {
                value: value & prefix_mask(prefix_len, width),
                prefix_len: prefix_len as u16,
            })
        }
        (MatchKind::Lpm, Form::Plain(v)) => {
            let lit = parse_literal(v, width)?;
            if !lit.stars_trailing_only {
                return Err(ValueError::DontCare {
                    text: t.to_string(),
                });
            }
            let value = check_width(t, lit.value, width)?;
            let len = u32::from(width).saturating_sub(lit.trailing_star_bits);
            Ok(KeyMatch::Lpm {
                value: value & prefix_mask(len, width),
                prefix_len: len as u16,
            })
        }
        (MatchKind::Range, Form::Range(lo, hi)) => {
            let lo = parse_value(lo, width)?;
            let hi = parse_value(hi, width)?;
            if lo > hi {
                return Err(ValueError::RangeInverted {
                    text: t.to_string(),
                });
            }
            Ok(KeyMatch::Range { lo, hi })
        }
        (MatchKind::Range, Form::Plain(v)) => {
            let v = parse_value(v, width)?;
            Ok(KeyMatch::Range { lo: v, hi: v })
        }
        _ => Err(wrong()),
    }
}

/// The match that covers every value of a key: what an omitted ternary, lpm or range key means.
/// `None` for exact keys, which must always be given.
pub fn match_anything(kind: MatchKind, width: u16) -> Option<KeyMatch> {
    match kind {
        MatchKind::Exact => None,
        MatchKind::Ternary => Some(KeyMatch::Ternary { value: 0, mask: 0 }),
        MatchKind::Lpm => Some(KeyMatch::Lpm {
            value: 0,
            prefix_len: 0,
        }),
        MatchKind::Range => Some(KeyMatch::Range {
            lo: 0,
            hi: width_mask(width),
        }),
        MatchKind::Selector => None,
    }
}

/// Writes `v`, a value of a `width`-bit field or parameter named `name`, the way a user would type it.
pub fn format_value(v: Value, width: u16, name: &str) -> String {
    pipeline::names::value_text(v, width, name)
}

/// Writes a key match of a `width`-bit key named `name` in the syntax [`parse_key_match`] reads.
pub fn format_key_match(m: &KeyMatch, width: u16, name: &str) -> String {
    let f = |v| format_value(v, width, name);
    match *m {
        KeyMatch::Exact(v) => f(v),
        KeyMatch::Ternary { value, mask } => format!("{} &&& {}", f(value), f(mask)),
        KeyMatch::Lpm { value, prefix_len } => format!("{}/{prefix_len}", f(value)),
        KeyMatch::Range { lo, hi } => format!("{}..{}", f(lo), f(hi)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_in_every_base() {
        assert_eq!(parse_value("42", 8), Ok(42));
        assert_eq!(parse_value("0x2A", 8), Ok(42));
        assert_eq!(parse_value("0b101010", 8), Ok(42));
        assert_eq!(parse_value("0o52", 8), Ok(42));
        assert_eq!(parse_value(" 1_000 ", 16), Ok(1000));
        assert_eq!(parse_value("0xffff_ffff", 32), Ok(0xffff_ffff));
    }

    #[test]
    fn a_literal_past_128_bits_is_reported_against_the_fields_width() {
        let huge = "99999999999999999999999999999999999999999";
        let e = parse_value(huge, 9).unwrap_err();
        assert_eq!(e.to_string(), format!("`{huge}` does not fit in 9 bits"));
        let e = parse_key_match(&format!("0x1{}", "0".repeat(32)), MatchKind::Ternary, 16);
        assert!(e
            .unwrap_err()
            .to_string()
            .ends_with("does not fit in 16 bits"));
        assert!(parse_u128(huge)
            .unwrap_err()
            .to_string()
            .ends_with("in 128 bits"));
    }

    #[test]
    fn addresses() {
        assert_eq!(parse_value("02:00:00:00:00:fe", 48), Ok(0x0200_0000_00fe));
        assert_eq!(parse_value("AA-BB-CC-DD-EE-FF", 48), Ok(0xaabb_ccdd_eeff));
        assert_eq!(parse_value("10.0.1.254", 32), Ok(0x0a00_01fe));
        assert_eq!(parse_value("::1", 128), Ok(1));
        assert_eq!(
            parse_value("2001:db8::ff00:42:8329", 128),
            Ok(0x2001_0db8_0000_0000_0000_ff00_0042_8329)
        );
        assert_eq!(
            parse_value("2001:0db8:0000:0000:0000:ff00:0042:8329", 128),
            Ok(0x2001_0db8_0000_0000_0000_ff00_0042_8329)
        );
    }

    #[test]
    fn width_is_checked() {
        assert_eq!(
            parse_value("256", 8),
            Err(ValueError::TooWide {
                text: "256".into(),
                width: 8
            })
        );
        assert!(parse_value("10.0.0.1", 16).is_err());
        assert!(parse_value("02:00:00:00:00:01", 32).is_err());
        assert_eq!(parse_value("255", 8), Ok(255));
        assert_eq!(parse_value(&u128::MAX.to_string(), 128), Ok(u128::MAX));
        assert!(parse_value("340282366920938463463374607431768211456", 128).is_err());
        assert!(parse_value("0x1_0000_0000_0000_0000_0000_0000_0000_0000", 128).is_err());
    }

    #[test]
    fn bad_text_names_itself_and_what_is_accepted() {
        let e = parse_value("12ab", 32).unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains("`12ab`"), "{msg}");
        assert!(msg.contains("0x hex"), "{msg}");
        assert!(parse_value("", 8).is_err());
        assert!(parse_value("0x", 8).is_err());
        assert!(parse_value("0xg1", 8).is_err());
        assert!(parse_value("1.2.3", 32).is_err());
        assert!(parse_value("aa:bb:cc", 48).is_err());
        assert!(parse_value("0x1*", 8).is_err());
    }

    #[test]
    fn exact_keys_take_plain_values_only() {
        assert_eq!(
            parse_key_match("5", MatchKind::Exact, 16),
            Ok(KeyMatch::Exact(5))
        );
        let e = parse_key_match("10.0.1.0/24", MatchKind::Exact, 32).unwrap_err();
        assert!(matches!(
            e,
            ValueError::WrongForm {
                kind: MatchKind::Exact,
                ..
            }
        ));
        assert!(e.to_string().contains("lpm"), "{e}");
        assert!(parse_key_match("1 &&& 1", MatchKind::Exact, 8).is_err());
        assert!(parse_key_match("*", MatchKind::Exact, 8).is_err());
    }

    #[test]
    fn lpm_forms() {
        assert_eq!(
            parse_key_match("10.0.1.0/24", MatchKind::Lpm, 32),
            Ok(KeyMatch::Lpm {
                value: 0x0a00_0100,
                prefix_len: 24
            })
        );
        // Host bits past the prefix are cleared.
        assert_eq!(
            parse_key_match("10.0.1.7/24", MatchKind::Lpm, 32),
            Ok(KeyMatch::Lpm {
                value: 0x0a00_0100,
                prefix_len: 24
            })
        );
        assert_eq!(
            parse_key_match("10.0.1.1", MatchKind::Lpm, 32),
            Ok(KeyMatch::Lpm {
                value: 0x0a00_0101,
                prefix_len: 32
            })
        );
        assert_eq!(
            parse_key_match("0x0a00****", MatchKind::Lpm, 32),
            Ok(KeyMatch::Lpm {
                value: 0x0a00_0000,
                prefix_len: 16
            })
        );
        assert_eq!(
            parse_key_match("0.0.0.0/0", MatchKind::Lpm, 32),
            Ok(KeyMatch::Lpm {
                value: 0,
                prefix_len: 0
            })
        );
        assert!(matches!(
            parse_key_match("10.0.0.0/33", MatchKind::Lpm, 32),
            Err(ValueError::PrefixTooLong { prefix_len: 33, .. })
        ));
        assert!(parse_key_match("0x0a**0000", MatchKind::Lpm, 32).is_err());
        assert!(parse_key_match("10.0.0.0/x", MatchKind::Lpm, 32).is_err());
        assert!(parse_key_match("1..2", MatchKind::Lpm, 32).is_err());
    }

    #[test]
    fn ternary_forms() {
        assert_eq!(
            parse_key_match("10.0.3.4 &&& 255.255.255.255", MatchKind::Ternary, 32),
            Ok(KeyMatch::Ternary {
                value: 0x0a00_0304,
                mask: 0xffff_ffff
            })
        );
        assert_eq!(
            parse_key_match("0 &&& 0", MatchKind::Ternary, 9),
            Ok(KeyMatch::Ternary { value: 0, mask: 0 })
        );
        assert_eq!(
            parse_key_match("0x****0101", MatchKind::Ternary, 32),
            Ok(KeyMatch::Ternary {
                value: 0x0101,
                mask: 0x0000_ffff
            })
        );
        assert_eq!(
            parse_key_match("0b1*0*", MatchKind::Ternary, 4),
            Ok(KeyMatch::Ternary {
                value: 0b1000,
                mask: 0b1010
            })
        );
        assert_eq!(
            parse_key_match("7", MatchKind::Ternary, 8),
            Ok(KeyMatch::Ternary {
                value: 7,
                mask: 0xff
            })
        );
        assert_eq!(
            parse_key_match("10.1.2.3/8", MatchKind::Ternary, 32),
            Ok(KeyMatch::Ternary {
                value: 0x0a00_0000,
                mask: 0xff00_0000
            })
        );
        assert_eq!(
            parse_key_match("0xff &&& 0x0f", MatchKind::Ternary, 8),
            Ok(KeyMatch::Ternary {
                value: 0x0f,
                mask: 0x0f
            })
        );
        assert_eq!(
            parse_key_match("*", MatchKind::Ternary, 8),
            Ok(KeyMatch::Ternary { value: 0, mask: 0 })
        );
        assert!(parse_key_match("1 &&& 0x100", MatchKind::Ternary, 8).is_err());
        assert!(parse_key_match("1..2", MatchKind::Ternary, 8).is_err());
    }

    #[test]
    fn range_forms() {
        assert_eq!(
            parse_key_match("23..23", MatchKind::Range, 16),
            Ok(KeyMatch::Range { lo: 23, hi: 23 })
        );
        assert_eq!(
            parse_key_match("1024 .. 0xffff", MatchKind::Range, 16),
            Ok(KeyMatch::Range {
                lo: 1024,
                hi: 0xffff
            })
        );
        assert_eq!(
            parse_key_match("80", MatchKind::Range, 16),
            Ok(KeyMatch::Range { lo: 80, hi: 80 })
        );
        assert_eq!(
            parse_key_match("*", MatchKind::Range, 16),
            Ok(KeyMatch::Range { lo: 0, hi: 0xffff })
        );
        assert!(matches!(
            parse_key_match("5..4", MatchKind::Range, 16),
            Err(ValueError::RangeInverted { .. })
        ));
        assert!(parse_key_match("0..65536", MatchKind::Range, 16).is_err());
        assert!(parse_key_match("1 &&& 1", MatchKind::Range, 16).is_err());
    }

    #[test]
    fn match_anything_per_kind() {
        assert_eq!(match_anything(MatchKind::Exact, 8), None);
        assert_eq!(
            match_anything(MatchKind::Range, 9),
            Some(KeyMatch::Range { lo: 0, hi: 511 })
        );
    }

    proptest::proptest! {
        #[test]
        fn never_panics(s in "\\PC{0,40}", w in 0u16..140) {
            let _ = parse_value(&s, w);
            for k in [MatchKind::Exact, MatchKind::Ternary, MatchKind::Lpm, MatchKind::Range] {
                let _ = parse_key_match(&s, k, w);
            }
        }

        #[test]
        fn hex_round_trips(v: u64, w in 64u16..=128) {
            proptest::prop_assert_eq!(parse_value(&format!("{v:#x}"), w), Ok(Value::from(v)));
            proptest::prop_assert_eq!(parse_value(&v.to_string(), w), Ok(Value::from(v)));
        }
    }

    #[test]
    fn formatted_values_and_matches_read_back_unchanged() {
        assert_eq!(
            format_value(0x0200_0000_00fe, 48, "hdr.ethernet.dst_addr"),
            "02:00:00:00:00:fe"
        );
        assert_eq!(
            format_value(0x0a00_0203, 32, "hdr.ipv4.dst_addr"),
            "10.0.2.3"
        );
        assert_eq!(format_value(0x0a00_0203, 32, "meta.count"), "167772675");
        assert_eq!(format_value(1, 128, "hdr.ipv6.src_addr"), "::1");
        assert_eq!(format_value(5, 9, "port"), "5");
        assert_eq!(format_value(1 << 70, 80, "x"), "0x400000000000000000");
        let cases = [
            (
                KeyMatch::Exact(0x0200_0000_0001),
                MatchKind::Exact,
                48,
                "dst_addr",
            ),
            (
                KeyMatch::Lpm {
                    value: 0x0a00_0200,
                    prefix_len: 24,
                },
                MatchKind::Lpm,
                32,
                "hdr.ipv4.dst_addr",
            ),
            (
                KeyMatch::Ternary {
                    value: 0x17,
                    mask: 0xffff,
                },
                MatchKind::Ternary,
                16,
                "dst_port",
            ),
            (
                KeyMatch::Range { lo: 10, hi: 20 },
                MatchKind::Range,
                16,
                "len",
            ),
        ];
        for (m, kind, width, name) in cases {
            let text = format_key_match(&m, width, name);
            assert_eq!(parse_key_match(&text, kind, width), Ok(m), "{text}");
        }
    }
}
