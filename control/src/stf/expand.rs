//! The Tofino harness's variable expansion, done on each line before it is read: `$NAME` and
//! `${NAME}` become the variable's value (from the environment, or a script's `setenv NAME
//! VALUE`), `${NAME:-w}`, `${NAME:=w}`, `${NAME:+w}` and `${NAME:?w}` as in the shell. An
//! unknown `$NAME` is left as written (names like `hdr.h.$valid$` and `$ENTRY` contain `$`),
//! so is a name an `add ... = NAME` gave an entry (the runner resolves `$NAME` to that entry).
//!
//! `$(command)` is refused: the harness runs the command through a shell and pastes its
//! output, but a test script that can run any program cannot be run safely on someone else's
//! say-so (a script from a test suite or a bug report would execute code on the machine).

use std::collections::{HashMap, HashSet};

/// Characters of a variable name (the harness's set).
fn is_id_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The variables a script sees, and the entry names its `add`s gave.
#[derive(Debug, Clone, Default)]
pub(super) struct Expander {
    vars: HashMap<String, String>,
    entries: HashSet<String>,
}

impl Expander {
    pub(super) fn new(vars: impl IntoIterator<Item = (String, String)>) -> Expander {
        Expander {
            vars: vars.into_iter().collect(),
            entries: HashSet::new(),
        }
    }

    /// `setenv NAME VALUE`.
    pub(super) fn set(&mut self, name: &str, value: &str) {
        self.vars.insert(name.to_string(), value.to_string());
    }

    /// `add ... = NAME`: from now on `$NAME` names that entry.
    pub(super) fn entry_name(&mut self, name: &str) {
        self.entries.insert(name.to_string());
    }

    /// A set, non-empty value.
    fn value(&self, name: &str) -> Option<&str> {
        self.vars
            .get(name)
            .map(String::as_str)
            .filter(|v| !v.is_empty())
    }

    /// `text` with its variables substituted; `Err((byte offset, message))` on `$(`, an
    /// unclosed `${` or a failed `${NAME:?}`.
    pub(super) fn expand(&mut self, text: &str) -> Result<String, (usize, String)> {
        let mut out = String::with_capacity(text.len());
        let mut i = 0;
        while let Some(off) = text[i..].find('$') {
            let at = i + off;
            out.push_str(&text[i..at]);
            let rest = &text[at + 1..];
            i = at + 1;
            if rest.starts_with('(') {
                return Err((
                    at,
                    "`$(...)` runs a shell command in the Tofino harness; pisa does not run \
                     commands named by a test script (the script could run any program): \
                     write the value, or set an environment variable and write `$NAME`"
                        .into(),
                ));
            }
            if let Some(body) = rest.strip_prefix('{') {
                let (value, used) = self.braced(body).map_err(|m| (at, m))?;
                out.push_str(&value);
                i += 1 + used;
                continue;
            }
            let name: String = rest.chars().take_while(|c| is_id_char(*c)).collect();
            i += name.len();
            match self.value(&name) {
                Some(v) if !name.is_empty() && !self.entries.contains(&name) => out.push_str(v),
                _ => {
                    out.push('$');
                    out.push_str(&name);
                }
            }
        }
        out.push_str(&text[i..]);
        Ok(out)
    }

    /// `NAME}` or `NAME:OPword}` after `${`: the value and the bytes read.
    fn braced(&mut self, body: &str) -> Result<(String, usize), String> {
        let name: String = body.chars().take_while(|c| is_id_char(*c)).collect();
        let after = &body[name.len()..];
        if name.is_empty() || !(after.starts_with('}') || after.starts_with(':')) {
            return Err(format!(
                "`${{{}` is not a variable (`${{NAME}}`, `${{NAME:-default}}`)",
                body.chars().take(16).collect::<String>()
            ));
        }
        let value = self.value(&name).map(str::to_string);
        if after.starts_with('}') {
            return Ok((value.unwrap_or_default(), name.len() + 1));
        }
        let spec = &after[1..];
        let close = closing_brace(spec).ok_or_else(|| format!("no `}}` closes `${{{name}:`"))?;
        let (op, word) = match spec.chars().next() {
            Some(c @ ('-' | '=' | '+' | '?')) => (c, &spec[1..close]),
            _ => ('-', &spec[..close]),
        };
        let word = self.expand(word).map_err(|(_, m)| m)?;
        let used = name.len() + 1 + close + 1;
        let v = match (op, value) {
            ('=', None) => {
                self.set(&name, &word);
                word
            }
            ('+', Some(_)) => word,
            ('+', None) => String::new(),
            ('?', None) if word.is_empty() => return Err(format!("${name} is unset")),
            ('?', None) => return Err(word),
            (_, Some(v)) => v,
            (_, None) => word, // `-`
        };
        Ok((v, used))
    }
}

/// The offset of the `}` that closes a `${` whose text after the operator starts `s`.
fn closing_brace(s: &str) -> Option<usize> {
    let mut depth = 0usize;
    for (i, c) in s.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => return Some(i),
            '}' => depth -= 1,
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env() -> Expander {
        Expander::new([("P".to_string(), "3".to_string())])
    }

    #[test]
    fn names_and_braces() {
        let mut e = env();
        assert_eq!(e.expand("expect $P 00 $").unwrap(), "expect 3 00 $");
        assert_eq!(e.expand("x${P}y ${Q}z").unwrap(), "x3y z");
        assert_eq!(
            e.expand("hdr.h.$valid$:1 $Q").unwrap(),
            "hdr.h.$valid$:1 $Q"
        );
        e.set("Q", "7");
        assert_eq!(e.expand("$Q").unwrap(), "7");
        e.entry_name("Q");
        assert_eq!(e.expand("c($Q)").unwrap(), "c($Q)");
    }

    #[test]
    fn shell_like_operators() {
        let mut e = env();
        assert_eq!(e.expand("${X:-5} ${P:-5}").unwrap(), "5 3");
        assert_eq!(e.expand("${X:=6} $X").unwrap(), "6 6");
        assert_eq!(e.expand("${P:+on}|${Y:+on}|").unwrap(), "on||");
        assert_eq!(e.expand("${P:?}").unwrap(), "3");
        assert!(e
            .expand("${Y:?Y is needed}")
            .unwrap_err()
            .1
            .contains("Y is needed"));
        assert!(e.expand("${Y:?}").unwrap_err().1.contains("$Y is unset"));
        assert_eq!(e.expand("${Z:-${P}}").unwrap(), "3");
    }

    #[test]
    fn shell_commands_and_bad_forms_are_refused() {
        let mut e = env();
        let (at, m) = e.expand("packet 0 $(echo 00)").unwrap_err();
        assert_eq!(at, 9);
        assert!(m.contains("shell command"), "{m}");
        assert!(e.expand("${P").is_err());
        assert!(e.expand("${P:-x").is_err());
        assert!(e.expand("${.}").is_err());
    }
}
