//! The cursor the STF parser reads one statement with, and its error type (line and column,
//! both 1-based).

/// A script that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}, column {column}: {message}")]
pub struct StfParseError {
    pub line: usize,
    pub column: usize,
    pub message: String,
}

pub(super) struct Cursor<'a> {
    pub(super) text: &'a str,
    pub(super) pos: usize,
    pub(super) line: usize,
    /// The column (0-based, in characters) `text` starts at in its line (after a `;`).
    pub(super) column0: usize,
}

pub(super) fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '$' | '[' | ']')
}

impl<'a> Cursor<'a> {
    pub(super) fn column(&self) -> usize {
        self.column0 + self.text[..self.pos].chars().count() + 1
    }

    pub(super) fn error(&self, message: impl Into<String>) -> StfParseError {
        StfParseError {
            line: self.line,
            column: self.column(),
            message: message.into(),
        }
    }

    pub(super) fn error_at(&self, pos: usize, message: impl Into<String>) -> StfParseError {
        StfParseError {
            line: self.line,
            column: self.column0 + self.text[..pos].chars().count() + 1,
            message: message.into(),
        }
    }

    pub(super) fn rest(&self) -> &'a str {
        &self.text[self.pos..]
    }

    pub(super) fn at_end(&self) -> bool {
        self.pos >= self.text.len()
    }

    pub(super) fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    pub(super) fn skip_ws(&mut self) {
        while let Some(c) = self.peek() {
            if c.is_whitespace() {
                self.pos += c.len_utf8();
            } else {
                break;
            }
        }
    }

    /// Takes characters while `f` holds.
    pub(super) fn take_while(&mut self, f: impl Fn(char) -> bool) -> &'a str {
        let start = self.pos;
        while let Some(c) = self.peek() {
            if f(c) {
                self.pos += c.len_utf8();
            } else {
                break;
            }
        }
        &self.text[start..self.pos]
    }

    pub(super) fn eat(&mut self, s: &str) -> bool {
        if self.rest().starts_with(s) {
            self.pos += s.len();
            true
        } else {
            false
        }
    }

    pub(super) fn expect_char(&mut self, c: char, what: &str) -> Result<(), StfParseError> {
        self.skip_ws();
        if self.peek() == Some(c) {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.error(format!("expected `{c}` {what}")))
        }
    }

    /// A (qualified) name: letters, digits, `_`, `.`, `$`, `[`, `]`; or any text in double
    /// quotes (`"Ingress.t"`, as p4c's lexer and the harness read it), quotes dropped.
    pub(super) fn name(&mut self, what: &str) -> Result<String, StfParseError> {
        self.skip_ws();
        if self.peek() == Some('"') {
            let open = self.pos;
            self.pos += 1;
            let s = self.take_while(|c| c != '"');
            if !self.eat("\"") || s.is_empty() {
                return Err(
                    self.error_at(open, format!("expected {what} in closed, non-empty quotes"))
                );
            }
            return Ok(s.to_string());
        }
        let s = self.take_while(is_name_char);
        if s.is_empty() {
            return Err(self.error(format!("expected {what}")));
        }
        Ok(s.to_string())
    }

    /// A decimal or `0x`/`0b`/`0o` number that fits in `u128`.
    pub(super) fn number(&mut self, what: &str) -> Result<u128, StfParseError> {
        self.skip_ws();
        let start = self.pos;
        let s = self.take_while(|c| c.is_ascii_alphanumeric() || c == '_');
        if s.is_empty() {
            return Err(self.error(format!("expected {what}")));
        }
        crate::value::parse_u128(s).map_err(|e| self.error_at(start, format!("{what}: {e}")))
    }

    /// Skips white space and commas (the harness's optional punctuation).
    pub(super) fn skip_punct(&mut self) {
        while let Some(c) = self.peek() {
            if c.is_whitespace() || c == ',' {
                self.pos += c.len_utf8();
            } else {
                break;
            }
        }
    }

    /// An address or priority as the harness reads it (`strtol(.., 0)`): decimal, `0x` hex,
    /// a leading `0` octal (and pisa's `0b`/`0o`).
    pub(super) fn address(&mut self, what: &str) -> Result<u32, StfParseError> {
        self.skip_ws();
        let start = self.pos;
        let s = self.take_while(|c| c.is_ascii_alphanumeric() || c == '_');
        let n = match s.strip_prefix('0') {
            Some(oct) if !oct.is_empty() && oct.bytes().all(|b| b.is_ascii_digit()) => {
                u128::from_str_radix(oct, 8).map_err(|e| e.to_string())
            }
            _ if s.is_empty() => Err("missing".to_string()),
            _ => crate::value::parse_u128(s).map_err(|e| e.to_string()),
        };
        let n = n.map_err(|e| self.error_at(start, format!("{what}: {e}")))?;
        u32::try_from(n).map_err(|_| {
            let max = u32::MAX;
            self.error_at(start, format!("{what} {n} is out of range (at most {max})"))
        })
    }

    pub(super) fn number_as<T: TryFrom<u128>>(&mut self, what: &str) -> Result<T, StfParseError> {
        self.skip_ws();
        let start = self.pos;
        let n = self.number(what)?;
        T::try_from(n).map_err(|_| self.error_at(start, format!("{what} {n} is out of range")))
    }

    /// A value token of a key or an action argument: everything up to white space, `,` or `)`.
    pub(super) fn value_token(&mut self, what: &str) -> Result<(String, usize), StfParseError> {
        self.skip_ws();
        let column = self.column();
        let s = self.take_while(|c| !c.is_whitespace() && c != ',' && c != ')' && c != '(');
        if s.is_empty() {
            return Err(self.error(format!("expected a value for {what}")));
        }
        Ok((s.to_string(), column))
    }
}
