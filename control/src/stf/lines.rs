//! An STF script's statements as text: bytes decoded, comments cut, `\` continuations joined,
//! several statements on one line split at `;` (the harness's separator), each with its line.

use std::borrow::Cow;

/// A script file's bytes as text. A byte that is not UTF-8 (a Latin-1 `é` in a comment) becomes
/// U+FFFD instead of refusing the whole file: the harness reads bytes, and such a byte only
/// matters where a statement needs it, which then names its line.
pub fn decode(bytes: &[u8]) -> Cow<'_, str> {
    // A UTF-8 byte order mark (some editors start files with one) is not text of the script.
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    String::from_utf8_lossy(bytes)
}

/// `raw` up to a `#` that is not inside double quotes.
fn cut_comment(raw: &str) -> &str {
    let mut quoted = false;
    for (i, c) in raw.char_indices() {
        match c {
            '"' => quoted = !quoted,
            '#' if !quoted => return &raw[..i],
            _ => {}
        }
    }
    raw
}

/// One statement of a line: its text, and the column (0-based, in characters) it starts at in
/// the line as written, so errors point into the line.
pub(super) struct Statement<'a> {
    pub(super) column0: usize,
    pub(super) text: &'a str,
}

/// The statements of one logical line, split at `;` outside quotes, in one pass: linear in the
/// line (a long line of `;`-separated statements is as cheap as the same statements one per line).
pub(super) fn split_statements(text: &str) -> Vec<Statement<'_>> {
    let mut out = Vec::new();
    let mut quoted = false;
    let (mut start, mut start_col) = (0, 0);
    for (col, (i, c)) in text.char_indices().enumerate() {
        match c {
            '"' => quoted = !quoted,
            ';' if !quoted => {
                out.push(Statement {
                    column0: start_col,
                    text: text[start..i].trim_end(),
                });
                (start, start_col) = (i + 1, col + 1);
            }
            _ => {}
        }
    }
    out.push(Statement {
        column0: start_col,
        text: text[start..].trim_end(),
    });
    out
}

/// The script's lines: comments cut, a `\\` at the end of a line joining the next one
/// (numbered as the first). Each is then expanded (`expand.rs`) and split at `;`
/// ([`split_statements`]).
pub(super) fn joined_lines(text: &str) -> Vec<(usize, String)> {
    let mut out: Vec<(usize, String)> = Vec::new();
    let mut pending: Option<(usize, String)> = None;
    // A lone CR ends a line too (old Mac files), as in the P4 frontend: otherwise a whole
    // script starting with a comment would be one comment line, and pass checking nothing.
    let text = p4::source::normalize_lone_cr(text.to_string());
    for (i, raw) in text.lines().enumerate() {
        let body = cut_comment(raw);
        let (acc_line, mut acc) = pending.take().unwrap_or((i + 1, String::new()));
        if let Some(head) = body.trim_end().strip_suffix('\\') {
            acc.push_str(head);
            acc.push(' ');
            pending = Some((acc_line, acc));
            continue;
        }
        acc.push_str(body);
        out.push((acc_line, acc));
    }
    out.extend(pending);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (line, first column, text) of each statement.
    fn logical_lines(text: &str) -> Vec<(usize, usize, String)> {
        let mut out = Vec::new();
        for (line, t) in joined_lines(text) {
            for s in split_statements(&t) {
                out.push((line, s.column0, s.text.to_string()));
            }
        }
        out
    }

    #[test]
    fn semicolons_split_statements_and_keep_columns() {
        let v = logical_lines("packet 0 00; expect 1 00;\nwait # a; comment\n");
        let texts: Vec<&str> = v.iter().map(|(_, _, t)| t.trim()).collect();
        assert_eq!(texts, ["packet 0 00", "expect 1 00", "", "wait"]);
        assert_eq!(v[1].0, 1);
        assert_eq!(v[1].1 + v[1].2.find('e').unwrap(), 13);
        assert_eq!(v[3].0, 2);
    }

    #[test]
    fn quotes_hide_separators_and_comment_marks() {
        let v = logical_lines("add \"a;b#c\" k:1 x");
        assert_eq!(v.len(), 1);
        assert!(v[0].2.ends_with("k:1 x"));
    }

    #[test]
    fn many_statements_on_one_line_split_in_linear_time() {
        // 50,000 statements: the old splitter blanked each one's prefix (quadratic: ~2.5e9
        // bytes here); now each statement is a slice with its starting column.
        let line = "wait;".repeat(50_000);
        let v = split_statements(&line);
        assert_eq!(v.len(), 50_001);
        assert_eq!((v[49_999].column0, v[49_999].text), (249_995, "wait"));
        assert_eq!(v[50_000].text, "");
    }

    #[test]
    fn non_utf8_bytes_are_read_lossily() {
        assert_eq!(decode(b"# caf\xe9\nwait\n"), "# caf\u{fffd}\nwait\n");
    }
}
