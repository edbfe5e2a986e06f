//! Key and parameter values as the Tofino harness reads them, rewritten into text pisa's
//! value reader ([`crate::value`]) takes the same way:
//! - exact keys of all-exact tables (SRAM tables) and action parameters go through
//!   `strtoull(.., 0)`: a leading `0` is octal (`010` = 8) and `-N` wraps (`-1` = all ones);
//! - a ternary literal with `*` digits narrower than its key is zero-extended (the bits above
//!   the digits written must be 0) unless its first digit is `*`, which extends the wildcard;
//! - `a.b` and `a.b.c` are IPv4 addresses whose last part fills the remaining bytes
//!   (`10.258` = 10.0.1.2).
//!
//! Each rewrite that differs from p4c's reading comes with a note. A prefix length after a
//! value that is not a dotted IPv4 (`0x0b000000/8`) is kept, but noted: the harness drops it.

use pipeline::ir::MatchKind;

/// `text` read as the harness reads an exact key (`sram`: of a table with exact keys only)
/// or an action parameter (`sram` true) of `width` bits; the note says how it differs.
pub(super) fn number_text(width: u16, sram: bool, text: &str) -> Option<(String, String)> {
    if !sram {
        return None;
    }
    let t = text.trim();
    let (neg, digits) = match t.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, t),
    };
    let octal = digits.len() > 1
        && digits.starts_with('0')
        && digits.bytes().all(|b| (b'0'..=b'7').contains(&b));
    let n = if octal {
        u64::from_str_radix(&digits[1..], 8).ok()?
    } else if neg {
        u64::try_from(crate::value::parse_u128(digits).ok()?).ok()?
    } else {
        return None;
    };
    if octal && !neg && digits.parse::<u64>().ok() == Some(n) {
        return None; // `00` to `07`: the same in either base
    }
    let n = u128::from(if neg { n.wrapping_neg() } else { n }) & crate::value::width_mask(width);
    let how = match (octal, neg) {
        (true, false) => "a leading 0 is octal",
        (true, true) => "a leading 0 is octal and a negative value wraps",
        _ => "a negative value wraps",
    };
    let note = format!("`{t}` read as {n:#x} ({how} for the harness's strtoull)");
    Some((format!("{n:#x}"), note))
}

/// `text` for a key of `kind` and `width` bits as the harness reads it (ternary literals
/// extended, short IPv4 forms completed), with a note where p4c reads it otherwise.
pub(super) fn key_text(kind: MatchKind, width: u16, text: &str) -> (String, Option<String>) {
    let t = text.trim();
    let (value, len) = match t.split_once('/') {
        Some((v, l)) => (v, Some(l)),
        None => (t, None),
    };
    let mut note = None;
    let value = match short_ipv4(value) {
        Some(full) => full,
        None if kind == MatchKind::Ternary && len.is_none() => match extend_ternary(width, value) {
            Some((v, zero)) => {
                if zero {
                    note = Some(format!(
                        "`{value}`: the bits above the digits written must be 0 (the harness \
                         zero-extends; p4c's bmv2 runner leaves them don't-care)"
                    ));
                }
                v
            }
            None => value.to_string(),
        },
        None => value.to_string(),
    };
    match len {
        Some(l) => {
            if matches!(kind, MatchKind::Ternary | MatchKind::Lpm) && !value.contains('.') {
                note = Some(format!(
                    "`{t}`: prefix /{l} applied (as p4c does; the Tofino harness drops a \
                     prefix length after a value that is not a dotted IPv4 address)"
                ));
            }
            (format!("{value}/{l}"), note)
        }
        None => (value, note),
    }
}

/// `a.b` or `a.b.c` as a full dotted IPv4 address: the last part fills the remaining bytes.
fn short_ipv4(text: &str) -> Option<String> {
    let parts: Vec<&str> = text.split('.').collect();
    if !(2..=3).contains(&parts.len()) || parts.iter().any(|p| p.is_empty()) {
        return None;
    }
    let nums: Vec<u64> = parts
        .iter()
        .map(|p| {
            p.bytes()
                .all(|b| b.is_ascii_digit())
                .then(|| p.parse().ok())
                .flatten()
        })
        .collect::<Option<_>>()?;
    let (last, head) = nums.split_last()?;
    let rest_bytes = 4 - head.len() as u32;
    if head.iter().any(|b| *b > 255) || *last >= 1u64 << (8 * rest_bytes) {
        return None;
    }
    let mut v: u32 = 0;
    for b in head {
        v = (v << 8) | *b as u32;
    }
    v = (v << (8 * rest_bytes)) | *last as u32;
    Some(std::net::Ipv4Addr::from(v).to_string())
}

/// A `0x`/`0b`/`0o` literal with `*` digits narrower than `width`, padded to the key's width:
/// with `*` when its first digit is `*`, else with `0`. `(text, padded with 0)`.
fn extend_ternary(width: u16, text: &str) -> Option<(String, bool)> {
    let bits = match text.get(..2).map(str::to_ascii_lowercase).as_deref() {
        Some("0x") => 4,
        Some("0b") => 1,
        Some("0o") => 3,
        _ => return None,
    };
    let digits: String = text[2..].chars().filter(|c| *c != '_').collect();
    if !digits.contains('*') {
        return None;
    }
    let need = usize::from(width).div_ceil(bits);
    if digits.len() >= need {
        return None;
    }
    let fill = if digits.starts_with('*') { '*' } else { '0' };
    let pad: String = std::iter::repeat_n(fill, need - digits.len()).collect();
    Some((format!("{}{pad}{digits}", &text[..2]), fill == '0'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn octal_and_negative_numbers_of_sram_fields() {
        assert_eq!(number_text(8, true, "010").unwrap().0, "0x8");
        assert_eq!(number_text(8, true, "-1").unwrap().0, "0xff");
        assert_eq!(number_text(16, true, "-0x2").unwrap().0, "0xfffe");
        assert_eq!(number_text(8, true, "10"), None);
        assert_eq!(number_text(8, true, "0"), None);
        assert_eq!(number_text(8, true, "0x10"), None);
        assert_eq!(number_text(8, true, "09"), None);
        assert_eq!(number_text(8, true, "07"), None);
        assert_eq!(number_text(8, false, "010"), None);
    }

    #[test]
    fn ternary_literals_extend_as_their_first_digit_says() {
        let k = |t| key_text(MatchKind::Ternary, 32, t);
        assert_eq!(k("0x0*").0, "0x0000000*");
        assert!(k("0x0*").1.is_some());
        assert_eq!(k("0x*5"), ("0x*******5".to_string(), None));
        assert_eq!(k("0x02"), ("0x02".to_string(), None));
        assert_eq!(k("0x****0101").0, "0x****0101");
        assert_eq!(key_text(MatchKind::Ternary, 9, "0b1*").0, "0b00000001*");
        assert_eq!(key_text(MatchKind::Exact, 32, "0x0*").0, "0x0*");
    }

    #[test]
    fn short_ipv4_forms_and_prefixes() {
        assert_eq!(key_text(MatchKind::Lpm, 32, "10.258").0, "10.0.1.2");
        assert_eq!(
            key_text(MatchKind::Ternary, 32, "10.1.2/24").0,
            "10.1.0.2/24"
        );
        assert_eq!(key_text(MatchKind::Exact, 32, "0.258").0, "0.0.1.2");
        assert_eq!(key_text(MatchKind::Exact, 32, "1..2").0, "1..2");
        assert_eq!(key_text(MatchKind::Lpm, 32, "10.65536").0, "10.1.0.0");
        assert_eq!(key_text(MatchKind::Lpm, 32, "10.16777216").0, "10.16777216");
        assert_eq!(key_text(MatchKind::Lpm, 32, "10.0.0.0/8").1, None);
        let (v, note) = key_text(MatchKind::Lpm, 32, "0x0b000000/8");
        assert_eq!(v, "0x0b000000/8");
        assert!(note.unwrap().contains("drops"));
    }
}
