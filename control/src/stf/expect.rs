//! Expected packet contents of an STF `expect` line: hex nibbles with `*` don't-cares (and the
//! harness's `.bbbbbbbb` bytes, bit by bit `0`, `1` or `*`), matched
//! against a frame as p4c's runner does (the frame may be longer than the pattern unless the
//! pattern ends in `$`), and the byte diff shown when they differ.

use std::fmt::Write as _;

/// One hex digit of an expected packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Nibble {
    Hex(u8),
    /// `*`: any value.
    Any,
    /// Half of a `.bbbbbbbb` byte: the bits set in `care` must equal those of `value`.
    Bits {
        value: u8,
        care: u8,
    },
}

impl Nibble {
    /// Whether the frame's nibble `got` satisfies this one.
    fn accepts(self, got: Option<u8>) -> bool {
        match self {
            Nibble::Any => true,
            Nibble::Hex(h) => got == Some(h),
            Nibble::Bits { value, care } => got.is_some_and(|g| g & care == value & care),
        }
    }

    /// As the diff and the report show it: the hex digit, `*`, or `?` for partly masked bits.
    fn symbol(self) -> char {
        match self {
            Nibble::Hex(h) => char::from_digit(u32::from(h), 16).unwrap_or('?'),
            Nibble::Any => '*',
            Nibble::Bits { value, care: 0xf } => {
                char::from_digit(u32::from(value), 16).unwrap_or('?')
            }
            Nibble::Bits { care: 0, .. } => '*',
            Nibble::Bits { .. } => '?',
        }
    }
}

/// The data of an `expect` line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExpectPattern {
    pub nibbles: Vec<Nibble>,
    /// A trailing `$`: the frame must end where the pattern ends.
    pub exact: bool,
}

fn nibble_of(bytes: &[u8], i: usize) -> Option<u8> {
    let b = *bytes.get(i / 2)?;
    Some(if i.is_multiple_of(2) { b >> 4 } else { b & 0xf })
}

impl ExpectPattern {
    /// Whether `frame` satisfies the pattern.
    pub fn matches(&self, frame: &[u8]) -> bool {
        let frame_nibbles = frame.len() * 2;
        if frame_nibbles < self.nibbles.len() {
            return false;
        }
        if self.exact && frame_nibbles != self.nibbles.len().div_ceil(2) * 2 {
            return false;
        }
        self.nibbles
            .iter()
            .enumerate()
            .all(|(i, n)| n.accepts(nibble_of(frame, i)))
    }

    /// Bytes the pattern covers (a trailing odd nibble counts as a byte).
    pub fn byte_len(&self) -> usize {
        self.nibbles.len().div_ceil(2)
    }

    /// Whether byte `i` of `frame` disagrees with the pattern (or is missing / extra).
    fn byte_differs(&self, frame: &[u8], i: usize) -> bool {
        if i >= self.byte_len() {
            return self.exact && i < frame.len();
        }
        if i >= frame.len() {
            return true;
        }
        (2 * i..2 * i + 2).any(|k| {
            self.nibbles
                .get(k)
                .is_some_and(|n| !n.accepts(nibble_of(frame, k)))
        })
    }

    /// The expected byte `i` as two characters (`*` for don't-care nibbles, blank past the end).
    fn expected_byte(&self, i: usize) -> String {
        (2 * i..2 * i + 2)
            .map(|k| self.nibbles.get(k).map_or(' ', |n| n.symbol()))
            .collect()
    }

    /// A side-by-side hex diff of the pattern against `frame`, 16 bytes a row, with `^^` under
    /// each byte that differs. Rows that agree entirely are folded into one `...` line.
    pub fn diff(&self, frame: &[u8]) -> String {
        let rows = self.byte_len().max(frame.len()).div_ceil(16);
        let mut out = String::new();
        let mut folded = false;
        for row in 0..rows {
            let range = row * 16..(row * 16 + 16);
            let bad: Vec<bool> = range.clone().map(|i| self.byte_differs(frame, i)).collect();
            if !bad.iter().any(|b| *b) {
                if !folded {
                    out.push_str("      ...\n");
                    folded = true;
                }
                continue;
            }
            folded = false;
            let mut exp = format!("{:04x}  expected ", row * 16);
            let mut got = String::from("      got      ");
            let mut marks = String::from("               ");
            for (i, b) in range.zip(&bad) {
                exp.push_str(&self.expected_byte(i));
                exp.push(' ');
                match frame.get(i) {
                    Some(v) => {
                        let _ = write!(got, "{v:02x} ");
                    }
                    None => got.push_str("   "),
                }
                marks.push_str(if *b { "^^ " } else { "   " });
            }
            for l in [exp, got, marks] {
                out.push_str(l.trim_end());
                out.push('\n');
            }
        }
        out
    }
}

impl std::fmt::Display for ExpectPattern {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, n) in self.nibbles.iter().enumerate() {
            if i > 0 && i % 2 == 0 {
                f.write_str(" ")?;
            }
            f.write_char(n.symbol())?;
        }
        if self.exact {
            f.write_str(" $")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pat(s: &str, exact: bool) -> ExpectPattern {
        ExpectPattern {
            nibbles: s
                .chars()
                .map(|c| match c {
                    '*' => Nibble::Any,
                    c => Nibble::Hex(c.to_digit(16).unwrap() as u8),
                })
                .collect(),
            exact,
        }
    }

    /// The harness's `.bbbbbbbb` byte: bit-level don't-cares.
    #[test]
    fn bit_masked_bytes() {
        let p = ExpectPattern {
            nibbles: vec![
                Nibble::Bits {
                    value: 0x0,
                    care: 0xc,
                },
                Nibble::Bits {
                    value: 0x0,
                    care: 0xd,
                },
            ],
            exact: false,
        };
        assert!(p.matches(&[0x32]));
        assert!(!p.matches(&[0x42]));
        assert!(!p.matches(&[0x3a]));
        assert_eq!(p.to_string(), "??");
    }

    #[test]
    fn prefix_match_unless_exact() {
        let frame = [0x01, 0x02, 0x03, 0x04];
        assert!(pat("0102", false).matches(&frame));
        assert!(!pat("0102", true).matches(&frame));
        assert!(pat("01020304", true).matches(&frame));
        assert!(pat("0*0*03**", false).matches(&frame));
        assert!(!pat("0103", false).matches(&frame));
        assert!(!pat("0102030405", false).matches(&frame));
        assert!(pat("", false).matches(&frame));
    }

    #[test]
    fn odd_nibble_count() {
        assert!(pat("010", false).matches(&[0x01, 0x0f]));
        assert!(!pat("011", false).matches(&[0x01, 0x0f]));
        assert!(pat("010", true).matches(&[0x01, 0x0f]));
    }

    #[test]
    fn diff_marks_differing_bytes() {
        let p = pat("0102**04", true);
        let d = p.diff(&[0x01, 0x09, 0x55, 0x04, 0x07]);
        let lines: Vec<&str> = d.lines().collect();
        assert_eq!(lines[0], "0000  expected 01 02 ** 04");
        assert_eq!(lines[1], "      got      01 09 55 04 07");
        assert_eq!(lines[2], "                  ^^       ^^");
    }

    #[test]
    fn diff_folds_equal_rows() {
        let mut frame = vec![0u8; 40];
        let p = pat(&"00".repeat(40), false);
        frame[35] = 1;
        let d = p.diff(&frame);
        assert!(d.starts_with("      ...\n0020  expected"), "{d}");
    }
}
