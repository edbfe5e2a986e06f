//! The outcome of an STF run: one [`Check`] per expectation (`expect`, `no_packet`,
//! `check_counter`, `check_register`), the packets nobody expected, and the statements that
//! could not be carried out. `Display` prints a one-line summary and then only what went wrong
//! (`{:#}` lists the passed checks too).

use std::fmt;

use super::ExpectPattern;

/// What a check looked at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CheckKind {
    /// `expect PORT [DATA]`.
    Packet {
        port: u16,
        pattern: Option<ExpectPattern>,
    },
    /// `no_packet`.
    NoPacket,
    /// `check_counter` / `check_register`, as written (normalised spacing).
    Value { what: String },
}

/// How a check went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CheckOutcome {
    Passed,
    /// No packet left on the port for this expectation before the next `wait` (or the end).
    Missing,
    /// The packet that came out (sent by the `packet` at `packet_line`) differs.
    Mismatch {
        got: Vec<u8>,
        packet_line: usize,
    },
    /// `no_packet`: this many packets left the switch unexpected.
    UnexpectedPackets {
        count: usize,
    },
    /// A counter or register check read this value.
    ValueMismatch {
        got: u128,
    },
    /// The check could not be carried out (unknown counter, ...).
    Error {
        message: String,
    },
}

/// One expectation and its outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Check {
    pub line: usize,
    pub kind: CheckKind,
    pub outcome: CheckOutcome,
}

impl Check {
    pub fn passed(&self) -> bool {
        self.outcome == CheckOutcome::Passed
    }
}

/// A packet that left the switch with no expectation waiting for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unexpected {
    pub port: u16,
    pub bytes: Vec<u8>,
    /// Line of the `packet` statement that sent the packet it came from.
    pub packet_line: usize,
}

/// A statement that could not be carried out (a table write the API refused, ...).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StmtError {
    pub line: usize,
    /// The value the error is about, when it is one value of the statement (1-based).
    pub column: Option<usize>,
    pub message: String,
}

/// What a statement printed without failing: a `check_counter` / `check_register` without a
/// comparison (the value read), a warning about a value pisa filled in or cut, packets an
/// `expect PORT` without data let through.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Note {
    pub line: usize,
    pub message: String,
}

/// Everything an STF run found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StfReport {
    /// In script order.
    pub checks: Vec<Check>,
    pub unexpected: Vec<Unexpected>,
    pub errors: Vec<StmtError>,
    /// In script order; they never fail the run.
    pub notes: Vec<Note>,
}

impl StfReport {
    /// No failed check, no unexpected packet, no statement error.
    pub fn all_passed(&self) -> bool {
        self.errors.is_empty()
            && self.unexpected.is_empty()
            && self.checks.iter().all(Check::passed)
    }

    pub fn failed_checks(&self) -> impl Iterator<Item = &Check> {
        self.checks.iter().filter(|c| !c.passed())
    }
}

fn hex(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() * 2 + bytes.len() / 4);
    for (i, b) in bytes.iter().enumerate() {
        if i > 0 && i % 4 == 0 {
            s.push(' ');
        }
        s.push_str(&format!("{b:02x}"));
    }
    s
}

impl fmt::Display for CheckKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CheckKind::Packet {
                port,
                pattern: None,
            } => write!(f, "expect {port} (any packet)"),
            CheckKind::Packet {
                port,
                pattern: Some(p),
            } => write!(
                f,
                "expect {port} ({} bytes{})",
                p.byte_len(),
                if p.exact { ", exact" } else { "" }
            ),
            CheckKind::NoPacket => f.write_str("no_packet"),
            CheckKind::Value { what } => f.write_str(what),
        }
    }
}

/// Errors, failed checks, unexpected packets and notes printed, each (the rest counted): a
/// script adding 100,000 entries to a full table, or 100,000 `expect`s with no packet, must not
/// print 100,000 lines.
const MAX_SHOWN: usize = 100;
/// Lines of one packet's difference printed (a 5 MB packet must not print 15 MB).
const MAX_DIFF_LINES: usize = 48;

impl fmt::Display for StfReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let failed = self.failed_checks().count();
        writeln!(
            f,
            "{}: {} checks, {} passed, {} failed; {} unexpected packets; {} errors",
            if self.all_passed() { "PASS" } else { "FAIL" },
            self.checks.len(),
            self.checks.len() - failed,
            failed,
            self.unexpected.len(),
            self.errors.len()
        )?;
        for e in self.errors.iter().take(MAX_SHOWN) {
            match e.column {
                Some(c) => writeln!(f, "error   line {}, column {c}: {}", e.line, e.message)?,
                None => writeln!(f, "error   line {}: {}", e.line, e.message)?,
            }
        }
        if self.errors.len() > MAX_SHOWN {
            writeln!(
                f,
                "error   ... and {} more errors, not shown",
                self.errors.len() - MAX_SHOWN
            )?;
        }
        let mut shown = 0;
        for c in &self.checks {
            if c.passed() {
                if f.alternate() {
                    writeln!(f, "ok      line {}: {}", c.line, c.kind)?;
                }
            } else if shown < MAX_SHOWN {
                shown += 1;
                write_failed(f, c)?;
            }
        }
        if failed > MAX_SHOWN {
            let more = failed - MAX_SHOWN;
            writeln!(f, "FAIL    ... and {more} more failed checks, not shown")?;
        }
        for u in self.unexpected.iter().take(MAX_SHOWN) {
            writeln!(
                f,
                "UNEXPECTED port {}: {} bytes from the packet on line {}: {}",
                u.port,
                u.bytes.len(),
                u.packet_line,
                hex(&u.bytes)
            )?;
        }
        if self.unexpected.len() > MAX_SHOWN {
            let more = self.unexpected.len() - MAX_SHOWN;
            writeln!(
                f,
                "UNEXPECTED ... and {more} more unexpected packets, not shown"
            )?;
        }
        for n in self.notes.iter().take(MAX_SHOWN) {
            writeln!(f, "note    line {}: {}", n.line, n.message)?;
        }
        if self.notes.len() > MAX_SHOWN {
            let more = self.notes.len() - MAX_SHOWN;
            writeln!(f, "note    ... and {more} more notes, not shown")?;
        }
        Ok(())
    }
}

/// The lines of one failed check.
fn write_failed(f: &mut fmt::Formatter<'_>, c: &Check) -> fmt::Result {
    match &c.outcome {
        CheckOutcome::Passed => {}
        CheckOutcome::Missing => {
            writeln!(f, "FAIL    line {}: {}: no packet came out", c.line, c.kind)?;
            if let CheckKind::Packet {
                pattern: Some(p), ..
            } = &c.kind
            {
                writeln!(f, "        expected {}", p4::diag::bounded(&p.to_string()))?;
            }
        }
        CheckOutcome::Mismatch { got, packet_line } => {
            writeln!(
                f,
                "FAIL    line {}: {}: the packet from line {packet_line} differs ({} bytes)",
                c.line,
                c.kind,
                got.len()
            )?;
            if let CheckKind::Packet {
                pattern: Some(p), ..
            } = &c.kind
            {
                let diff = p.diff(got);
                let lines = diff.lines().count();
                for l in diff.lines().take(MAX_DIFF_LINES) {
                    writeln!(f, "        {l}")?;
                }
                if lines > MAX_DIFF_LINES {
                    let more = lines - MAX_DIFF_LINES;
                    writeln!(f, "        ... and {more} more lines of the difference")?;
                }
            }
        }
        CheckOutcome::UnexpectedPackets { count } => {
            writeln!(
                f,
                "FAIL    line {}: no_packet: {count} packets came out",
                c.line
            )?;
        }
        CheckOutcome::ValueMismatch { got } => {
            writeln!(
                f,
                "FAIL    line {}: {}: got {got} ({got:#x})",
                c.line, c.kind
            )?;
        }
        CheckOutcome::Error { message } => {
            writeln!(f, "FAIL    line {}: {}: {message}", c.line, c.kind)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::Nibble;
    use super::*;

    fn report() -> StfReport {
        StfReport {
            checks: vec![
                Check {
                    line: 3,
                    kind: CheckKind::Packet {
                        port: 1,
                        pattern: Some(ExpectPattern {
                            nibbles: vec![Nibble::Hex(0), Nibble::Hex(1), Nibble::Any, Nibble::Any],
                            exact: true,
                        }),
                    },
                    outcome: CheckOutcome::Passed,
                },
                Check {
                    line: 5,
                    kind: CheckKind::Packet {
                        port: 2,
                        pattern: Some(ExpectPattern {
                            nibbles: vec![
                                Nibble::Hex(0),
                                Nibble::Hex(1),
                                Nibble::Hex(0),
                                Nibble::Hex(2),
                            ],
                            exact: false,
                        }),
                    },
                    outcome: CheckOutcome::Mismatch {
                        got: vec![0x01, 0x03],
                        packet_line: 4,
                    },
                },
                Check {
                    line: 7,
                    kind: CheckKind::Value {
                        what: "check_counter c(1) packets == 2".into(),
                    },
                    outcome: CheckOutcome::ValueMismatch { got: 1 },
                },
            ],
            unexpected: vec![Unexpected {
                port: 9,
                bytes: vec![0xde, 0xad, 0xbe, 0xef, 0x01],
                packet_line: 4,
            }],
            errors: vec![StmtError {
                line: 1,
                column: None,
                message: "no table named `t`".into(),
            }],
            notes: vec![Note {
                line: 8,
                message: "check_counter c(2) packets: 5".into(),
            }],
        }
    }

    #[test]
    fn summary_and_failures_only() {
        let r = report();
        assert!(!r.all_passed());
        let text = r.to_string();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            "FAIL: 3 checks, 1 passed, 2 failed; 1 unexpected packets; 1 errors"
        );
        assert_eq!(lines[1], "error   line 1: no table named `t`");
        assert_eq!(
            lines[2],
            "FAIL    line 5: expect 2 (2 bytes): the packet from line 4 differs (2 bytes)"
        );
        assert_eq!(lines[3], "        0000  expected 01 02");
        assert_eq!(lines[4], "              got      01 03");
        assert_eq!(lines[5], "                          ^^");
        assert_eq!(
            lines[6],
            "FAIL    line 7: check_counter c(1) packets == 2: got 1 (0x1)"
        );
        assert_eq!(
            lines[7],
            "UNEXPECTED port 9: 5 bytes from the packet on line 4: deadbeef 01"
        );
        assert_eq!(lines[8], "note    line 8: check_counter c(2) packets: 5");
        assert!(!text.contains("line 3"));
        assert!(format!("{r:#}").contains("ok      line 3: expect 1 (2 bytes, exact)"));
    }

    /// Past 100 errors the rest is counted, not printed.
    #[test]
    fn errors_past_the_first_hundred_are_counted() {
        let mut r = report();
        let e = r.errors[0].clone();
        r.errors = vec![e; 1000];
        let text = r.to_string();
        assert_eq!(text.matches("no table named").count(), 100, "{text}");
        assert!(
            text.contains("... and 900 more errors, not shown"),
            "{text}"
        );
        assert!(text.starts_with("FAIL: 3 checks"), "{text}");
    }

    /// A mismatch on a large packet prints a bounded difference, and a missing one a bounded
    /// pattern.
    #[test]
    fn large_packets_print_bounded_differences() {
        let mut r = report();
        let big = ExpectPattern {
            nibbles: vec![Nibble::Hex(1); 200_000],
            exact: true,
        };
        r.checks[1].kind = CheckKind::Packet {
            port: 2,
            pattern: Some(big.clone()),
        };
        r.checks[1].outcome = CheckOutcome::Mismatch {
            got: vec![0; 100_000],
            packet_line: 4,
        };
        r.checks[0].kind = CheckKind::Packet {
            port: 1,
            pattern: Some(big),
        };
        r.checks[0].outcome = CheckOutcome::Missing;
        let text = r.to_string();
        assert!(text.len() < 20_000, "{} bytes", text.len());
        assert!(
            text.contains("more lines of the difference"),
            "{}",
            &text[..2000]
        );
    }

    #[test]
    fn failed_checks_and_unexpected_packets_are_capped() {
        let mut r = report();
        r.errors.clear();
        let missing = Check {
            line: 9,
            kind: CheckKind::Packet {
                port: 1,
                pattern: None,
            },
            outcome: CheckOutcome::Missing,
        };
        r.checks = vec![missing; 1000];
        r.unexpected = vec![r.unexpected[0].clone(); 1000];
        let text = r.to_string();
        assert!(text.starts_with("FAIL: 1000 checks, 0 passed, 1000 failed; 1000 unexpected"));
        assert_eq!(text.matches("FAIL    line 9").count(), 100, "{text}");
        assert!(text.contains("FAIL    ... and 900 more failed checks, not shown"));
        assert_eq!(text.matches("UNEXPECTED port").count(), 100, "{text}");
        assert!(text.contains("UNEXPECTED ... and 900 more unexpected packets, not shown"));
    }

    #[test]
    fn all_passed_needs_everything_clean() {
        let mut r = report();
        r.errors.clear();
        r.unexpected.clear();
        r.checks.retain(|c| c.passed());
        assert!(r.all_passed());
        assert!(r.to_string().starts_with("PASS: 1 checks, 1 passed"));
        r.unexpected.push(Unexpected {
            port: 0,
            bytes: vec![],
            packet_line: 1,
        });
        assert!(!r.all_passed());
    }
}
